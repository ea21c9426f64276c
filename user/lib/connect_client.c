// SPDX-License-Identifier: Apache-2.0
/* eg_connect_check_client: does the process behind a bridge's accepted
 * socket hold a live grant? The kernel makes this check at connect() for
 * sockets made in the attached cgroup (or everywhere on the LSM tier); a
 * bridge repeats it so that a client outside that reach is refused too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "core/ids.h"
#include "core/peer_check.h"
#include "lib/connect_int.h"
#include "loader/maps/maps.h"
#include "loader/records/runtime.h"
#include "loader/maps/view.h"

int eg_connect_check_client(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], int client_fd,
			    struct eg_process *client, char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	struct eg_exec_record rec;
	struct eg_grant_key key;
	struct eg_proc_id id;
	struct eg_grant g;
	char s[EG_UUID_TEXT_LEN], who[96];
	int pidfd = -1, rc;
	bool via;

	eg_uuid_format(sandbox, s);
	/* The record and the grant from one set of maps. */
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_cn_record_locked(w, sandbox, "client", &rec, err, err_size);
	if (!rc)
		rc = eg_cn_peer(client_fd, "client", &pidfd, &id, &via, err, err_size);
	if (rc) {
		eg_wk_maps_exit(w);
		return rc;
	}
	eg_peer_id_text(&id, who, sizeof(who));
	memset(&key, 0, sizeof(key));
	key.proc = id;
	memcpy(key.sandbox, sandbox, EG_ID_BYTES);
	rc = eg_grant_read(&w->rt.maps, &key, &g);
	eg_wk_maps_exit(w);
	if (rc == -ENOENT) {
		snprintf(err, err_size, "client %s: no grant for sandbox %s", who, s);
		rc = -EPERM;
	} else if (rc) {
		snprintf(err, err_size, "client %s: reading eg_grants: %s", who, strerror(-rc));
	} else if (g.epoch != rec.epoch) {
		snprintf(err, err_size,
			 "client %s: grant for sandbox %s is of epoch %llu, not %llu", who, s,
			 (unsigned long long)g.epoch, (unsigned long long)rec.epoch);
		rc = -EPERM;
	} else if (g.expiry_ns <= eg_boottime_ns()) {
		snprintf(err, err_size, "client %s: grant for sandbox %s has expired", who, s);
		rc = -EPERM;
	} else if (eg_cn_pidfd_alive(pidfd)) {
		snprintf(err, err_size, "client %s: exited while it was checked", who);
		rc = -ESRCH;
	}
	close(pidfd);
	if (!rc && client)
		eg_process_of(&id, client);
	return rc;
}
