// SPDX-License-Identifier: Apache-2.0
/* The calls of execgate/text.h that the core and the loader do not already
 * define under the same name: the public forms take plain C types, these
 * hand them to the internal ones. */
#include <errno.h>
#include <string.h>
#include <execgate/execgate.h>
#include <execgate/text.h>
#include "core/peer_check.h"
#include "core/vsock_cid.h"
#include "loader/endpoints/inet.h"
#include "loader/maps/kreason.h"

int eg_inet_parse(const char *text, uint32_t *family, uint8_t addr[16])
{
	struct eg_inet_key k;
	int rc = eg_inet_key_parse(text, &k);

	if (rc)
		return rc;
	*family = k.family;
	memcpy(addr, k.addr, sizeof(k.addr));
	return 0;
}

const char *eg_inet_format(uint32_t family, const uint8_t addr[16], char buf[EG_INET_TEXT_MAX])
{
	struct eg_inet_key k = {.family = family};

	memcpy(k.addr, addr, sizeof(k.addr));
	return eg_inet_key_format(&k, buf);
}

int eg_vsock_cid_is_guest(uint32_t cid)
{
	return !eg_vsock_cid_never_guest(cid);
}

int eg_process_text(const struct eg_process *p, char *out, size_t size)
{
	struct eg_proc_id id = {
	    .tgid = p->tgid,
	    .exe_dev = p->exe_dev,
	    .start_boottime_ns = p->start_boottime_ns,
	    .exe_ino = p->exe_ino,
	};

	return eg_peer_id_text(&id, out, size);
}

_Static_assert(EG_K_REASON_COUNT <= EG_KREASON_MAX, "room for every kernel reason");
_Static_assert(EG_K_EVENT_DROPPED == EG_KREASON_EVENT_DROPPED, "the public number");
