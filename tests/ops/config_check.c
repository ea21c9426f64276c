/* SPDX-License-Identifier: Apache-2.0 */
/* Reads an execgated.conf with the daemon's own parser (user/daemon/config.c,
 * config_load.c) and prints what it understood, one key=value a line, so that
 * tests/ops/test_kubernetes.py can check that the config the Kubernetes
 * entrypoint renders is accepted, and read as meant, by execgated itself.
 * Exit 0, or 1 with the parser's message. */
#include <stdio.h>
#include "daemon/config.h"

int main(int argc, char **argv)
{
	struct egd_config cfg;
	char err[EG_ERR_MAX];

	if (argc != 2) {
		fprintf(stderr, "usage: ops-config-check FILE\n");
		return 2;
	}
	if (egd_config_load(argv[1], &cfg, err, sizeof(err))) {
		fprintf(stderr, "ops-config-check: %s\n", err);
		return 1;
	}
	printf("pin_dir=%s\n", cfg.pin_dir);
	printf("state_dir=%s\n", cfg.state_dir);
	printf("cgroup=%s\n", cfg.cgroup);
	printf("require=%s\n", cfg.require);
	printf("endpoint_kinds=%s\n", cfg.endpoint_kinds);
	printf("socket=%s\n", cfg.socket);
	if (cfg.admin_group.set)
		printf("admin_group=%u\n", (unsigned)cfg.admin_group.gid);
	if (cfg.admit_group.set)
		printf("admit_group=%u\n", (unsigned)cfg.admit_group.gid);
	printf("worker_id=%s\n", cfg.worker_id_text);
	return 0;
}
