/* SPDX-License-Identifier: Apache-2.0 */
/* Peer identity comparison and the refusal text (core/peer_check.h). */
#include <criterion/criterion.h>
#include <string.h>
#include "core/peer_check.h"

static const struct eg_proc_id vmm = {
    .tgid = 4243, .exe_dev = (8u << 20) | 1, .start_boottime_ns = 123400, .exe_ino = 99};

Test(peer_check, each_field_counts)
{
	struct eg_proc_id f = vmm;

	cr_assert_eq(eg_peer_diff(&vmm, &f), EG_PEER_SAME);
	f.tgid = 4242;
	cr_assert_eq(eg_peer_diff(&vmm, &f), EG_PEER_OTHER_PID);
	f = vmm;
	f.start_boottime_ns++;
	cr_assert_eq(eg_peer_diff(&vmm, &f), EG_PEER_OTHER_START);
	f = vmm;
	f.exe_ino = 100;
	cr_assert_eq(eg_peer_diff(&vmm, &f), EG_PEER_OTHER_EXE);
	f = vmm;
	f.exe_dev = (8u << 20) | 2;
	cr_assert_eq(eg_peer_diff(&vmm, &f), EG_PEER_OTHER_EXE);
	f.tgid = 1;
	f.start_boottime_ns = 1;
	cr_assert_eq(eg_peer_diff(&vmm, &f),
		     EG_PEER_OTHER_PID | EG_PEER_OTHER_START | EG_PEER_OTHER_EXE);
}

Test(peer_check, reasons)
{
	cr_assert_str_eq(eg_peer_diff_reason(EG_PEER_OTHER_PID | EG_PEER_OTHER_EXE),
			 "another process");
	cr_assert_str_eq(eg_peer_diff_reason(EG_PEER_OTHER_START | EG_PEER_OTHER_EXE),
			 "pid reused (another start time)");
	cr_assert_str_eq(eg_peer_diff_reason(EG_PEER_OTHER_EXE), "replaced executable");
	cr_assert_str_eq(eg_peer_role_name(EG_ROLE_BRIDGE), "bridge");
	cr_assert_str_eq(eg_peer_role_name(EG_ROLE_VMM), "VMM");
	cr_assert_str_eq(eg_peer_role_name(0), "endpoint");
}

Test(peer_check, refusal_names_both_identities)
{
	struct eg_proc_id found = {
	    .tgid = 4242, .exe_dev = (259u << 20) | 3, .start_boottime_ns = 123456, .exe_ino = 77};
	char text[512], id[96];

	cr_assert_eq(eg_peer_id_text(&vmm, id, sizeof(id)), 35);
	cr_assert_str_eq(id, "pid 4243 (start 123400, exe 8:1/99)");
	eg_peer_mismatch_text("connect /run/sbx/S/v.sock", EG_ROLE_VMM,
			      "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7", &vmm, &found, text,
			      sizeof(text));
	cr_assert_str_eq(text, "connect /run/sbx/S/v.sock: listener is pid 4242 (start 123456, exe "
			       "259:3/77), expected the VMM of sandbox "
			       "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 (pid 4243 (start 123400, exe "
			       "8:1/99)): another process");
	/* Truncation keeps a NUL-terminated prefix. */
	eg_peer_mismatch_text("connect /x", EG_ROLE_BRIDGE, "s", &vmm, &found, text, 20);
	cr_assert_str_eq(text, "connect /x: listene");
}
