// SPDX-License-Identifier: Apache-2.0
#include "loader/maps/kreason.h"

static const char *const reason_names[EG_K_REASON_COUNT] = {
    [EG_K_ALLOW_UNREGISTERED] = "allow-unregistered",
    [EG_K_ALLOW_BRIDGE] = "allow-bridge",
    [EG_K_ALLOW_GRANT] = "allow-grant",
    [EG_K_DENY_NO_RECORD] = "deny-no-record",
    [EG_K_DENY_INCONSISTENT] = "deny-inconsistent",
    [EG_K_DENY_RETIRED] = "deny-retired",
    [EG_K_DENY_NOT_BRIDGE] = "deny-not-bridge",
    [EG_K_DENY_NO_GRANT] = "deny-no-grant",
    [EG_K_DENY_GRANT_EPOCH] = "deny-grant-epoch",
    [EG_K_DENY_GRANT_EXPIRED] = "deny-grant-expired",
    [EG_K_DENY_LISTENER] = "deny-listener",
    [EG_K_DENY_STREAM_EPOCH] = "deny-stream-epoch",
    [EG_K_DENY_NO_TASK] = "deny-no-task",
    [EG_K_EVENT_DROPPED] = "event-dropped",
    [EG_K_DENY_NO_TAG] = "deny-no-tag",
};

const char *eg_kreason_name(__u32 reason)
{
	return reason < EG_K_REASON_COUNT && reason_names[reason] ? reason_names[reason]
								  : "unknown";
}

const char *eg_hook_name(__u32 hook)
{
	switch (hook) {
	case EG_HOOK_CONNECT_UNIX:
		return "connect_unix";
	case EG_HOOK_LSM_SOCKET_CONNECT:
		return "lsm/socket_connect";
	case EG_HOOK_LSM_UNIX_STREAM_CONNECT:
		return "lsm/unix_stream_connect";
	case EG_HOOK_LSM_SENDMSG:
		return "lsm/socket_sendmsg";
	case EG_HOOK_LSM_RECVMSG:
		return "lsm/socket_recvmsg";
	case EG_HOOK_CONNECT4:
		return "connect4";
	case EG_HOOK_CONNECT6:
		return "connect6";
	case EG_HOOK_SENDMSG4:
		return "sendmsg4";
	case EG_HOOK_SENDMSG6:
		return "sendmsg6";
	}
	return "unknown";
}
