/* SPDX-License-Identifier: Apache-2.0 */
/* execgated's routes (docs/api.md, "Routes"), one row each:
 * ROUTE(method, pattern, handler, role, maps). "{}" in a pattern matches one
 * non-empty segment. maps is EGD_MAPS for a route that reads or writes the
 * pinned maps: after `execgate unload` it answers 503 `not loaded` before
 * its handler runs (pins_gate.c); EGD_NO_MAPS routes always reach their
 * handler (status and audit say "not loaded" themselves). A table of
 * macro rows, so that http.c builds its dispatch table from it and
 * tests/daemon/test_route_gate.c walks the same rows over the socket. */
#ifndef EXECGATE_DAEMON_ROUTES_H
#define EXECGATE_DAEMON_ROUTES_H

enum egd_route_maps {
	EGD_NO_MAPS,
	EGD_MAPS,
};

/* clang-format off */
#define EGD_ROUTES(ROUTE)                                                                  \
	ROUTE("POST", "/v1/admit", egd_h_admit, EGD_ROLE_ADMIT, EGD_MAPS)                   \
	ROUTE("POST", "/v1/check", egd_h_check, EGD_ROLE_ADMIT, EGD_MAPS)                   \
	ROUTE("GET", "/v1/sandboxes", egd_h_sandbox_list, EGD_ROLE_ADMIT, EGD_MAPS)         \
	ROUTE("GET", "/v1/sandboxes/{}", egd_h_sandbox_show, EGD_ROLE_ADMIT, EGD_MAPS)      \
	ROUTE("PUT", "/v1/sandboxes/{}", egd_h_sandbox_install, EGD_ROLE_ADMIN, EGD_MAPS)   \
	ROUTE("DELETE", "/v1/sandboxes/{}", egd_h_sandbox_forget, EGD_ROLE_ADMIN, EGD_MAPS) \
	ROUTE("POST", "/v1/sandboxes/{}/retire", egd_h_sandbox_retire, EGD_ROLE_ADMIN,      \
	      EGD_MAPS)                                                                     \
	ROUTE("POST", "/v1/sandboxes/{}/revoke", egd_h_sandbox_revoke, EGD_ROLE_ADMIN,      \
	      EGD_MAPS)                                                                     \
	ROUTE("GET", "/v1/node-key", egd_h_node_key, EGD_ROLE_ADMIT, EGD_NO_MAPS)           \
	ROUTE("GET", "/v1/keys", egd_h_keys_list, EGD_ROLE_ADMIT, EGD_NO_MAPS)              \
	ROUTE("PUT", "/v1/keys/{}", egd_h_key_put, EGD_ROLE_ADMIN, EGD_NO_MAPS)             \
	ROUTE("DELETE", "/v1/keys/{}", egd_h_key_delete, EGD_ROLE_ADMIN, EGD_NO_MAPS)       \
	ROUTE("GET", "/v1/status", egd_h_status, EGD_ROLE_ADMIT, EGD_NO_MAPS)               \
	ROUTE("GET", "/v1/live", egd_h_live, EGD_ROLE_ADMIT, EGD_NO_MAPS)                   \
	ROUTE("GET", "/v1/ready", egd_h_ready, EGD_ROLE_ADMIT, EGD_NO_MAPS)                 \
	ROUTE("GET", "/v1/events", egd_h_events, EGD_ROLE_ADMIT, EGD_NO_MAPS)               \
	ROUTE("PUT", "/v1/mode", egd_h_mode_put, EGD_ROLE_ADMIN, EGD_MAPS)                  \
	ROUTE("GET", "/v1/audit", egd_h_audit, EGD_ROLE_ADMIT, EGD_NO_MAPS)                 \
	ROUTE("GET", "/metrics", egd_h_metrics, EGD_ROLE_ADMIT, EGD_NO_MAPS)
/* clang-format on */

#endif
