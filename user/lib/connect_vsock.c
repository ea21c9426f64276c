// SPDX-License-Identifier: Apache-2.0
/* eg_connect_vsock: AF_VSOCK to a guest (vhost-vsock VMMs), allowed only
 * to a (CID, port) that install registered for the sandbox. The peer of an
 * AF_VSOCK connection lives in the guest, so there is no host process to
 * compare: the binding is the registered address and the record's epoch. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>
#include "core/ids.h"
#include "core/vsock_cid.h"
#include "lib/connect_int.h"
#include "loader/maps/maps.h"
#include "loader/maps/view.h"

int eg_connect_vsock(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], uint32_t cid,
		     uint32_t port, int timeout_ms, struct eg_conn **out, char *err,
		     size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	struct eg_vsock_key key = {.cid = cid, .port = port};
	struct sockaddr_vm svm;
	struct eg_exec_record rec, again;
	struct eg_endpoint ep;
	struct timeval tv;
	struct eg_conn *c;
	char what[64], s[EG_UUID_TEXT_LEN], o[EG_UUID_TEXT_LEN];
	int fd, rc;

	*out = NULL;
	snprintf(what, sizeof(what), "connect vsock %u:%u", cid, port);
	eg_uuid_format(sandbox, s);
	/* Never a guest: the hypervisor, the host itself, the wildcard. A
	 * host-side bridge has no business there, whatever a record says. */
	if (eg_vsock_cid_never_guest(cid)) {
		snprintf(err, err_size, "%s: CID %u is not a guest (0, 2 and %u never are)", what,
			 cid, VMADDR_CID_ANY);
		return -EINVAL;
	}
	rc = eg_cn_record(w, sandbox, what, &rec, err, err_size);
	if (rc)
		return rc;
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_endpoint_read(&w->rt.maps, EG_MAP_VSOCK_ENDPOINTS, &key, &ep);
	eg_wk_maps_exit(w);
	if (rc == -ENOENT) {
		snprintf(err, err_size,
			 "%s: not a VSOCK endpoint of sandbox %s (the record's CID and port are "
			 "what install registered)",
			 what, s);
		return -EPERM;
	}
	if (rc) {
		snprintf(err, err_size, "%s: reading eg_vsock_endpoints: %s", what, strerror(-rc));
		return rc;
	}
	if (memcmp(ep.sandbox, sandbox, EG_ID_BYTES) || ep.role != EG_ROLE_VMM) {
		eg_uuid_format(ep.sandbox, o);
		snprintf(err, err_size, "%s: an endpoint of sandbox %s, not of sandbox %s", what, o,
			 s);
		return -EPERM;
	}

	fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "%s: socket: %s", what, strerror(errno));
		return rc;
	}
	if (timeout_ms <= 0)
		timeout_ms = EG_CONNECT_DEFAULT_TIMEOUT_MS;
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_CONNECT_TIMEOUT, &tv, sizeof(tv));
	memset(&svm, 0, sizeof(svm));
	svm.svm_family = AF_VSOCK;
	svm.svm_cid = cid;
	svm.svm_port = port;
	if (connect(fd, (struct sockaddr *)&svm, sizeof(svm))) {
		rc = -errno;
		snprintf(err, err_size, "%s: %s%s%s", what,
			 rc == -EPERM || rc == -EACCES ? "refused by the kernel (" : "",
			 strerror(errno), rc == -EPERM || rc == -EACCES ? ")" : "");
		close(fd);
		return rc;
	}
	rc = eg_cn_record(w, sandbox, what, &again, err, err_size);
	if (!rc && again.epoch != rec.epoch) {
		snprintf(err, err_size,
			 "%s: sandbox %s: record replaced while connecting (epoch %llu -> %llu)",
			 what, s, (unsigned long long)rec.epoch, (unsigned long long)again.epoch);
		rc = -ESTALE;
	}
	if (rc) {
		close(fd);
		return rc;
	}
	c = eg_cn_new(fd, -1, what);
	if (!c) {
		snprintf(err, err_size, "%s: out of memory", what);
		return -ENOMEM;
	}
	eg_runtime_record_of(&rec, &c->info.record);
	c->info.cid = cid;
	c->info.port = port;
	*out = c;
	return 0;
}
