/* SPDX-License-Identifier: Apache-2.0 */
/* Test-only crash points. With EXECGATE_TEST_FAULT set to a point's name,
 * the process calls _exit(EG_FAULT_EXIT) when it reaches that point, as a
 * SIGKILL there would end it: the kernel tests use it to stop a writer at an
 * exact step (tests/kernel/test_revoke_crash.c). It can only make the caller
 * die early; it never skips a check or changes what is written. Unset (the
 * only setting in production), a point costs one getenv(). Set to
 * "stall:" and a point's name, the process sleeps EG_FAULT_STALL_S seconds
 * there instead: a slow step (a stream cut of many sockets), for the
 * tests that others are not held meanwhile (tests/daemon/test_fleet.c).
 * Points:
 *   "epoch-moved": install or retire has written the record with its new
 *                  epoch (and the intent to cut, loader/revokers/cut_intent.h), and
 *                  has not cut the old execution's streams yet. */
#ifndef EXECGATE_LOADER_FAULT_H
#define EXECGATE_LOADER_FAULT_H

#define EG_FAULT_ENV	 "EXECGATE_TEST_FAULT"
#define EG_FAULT_EXIT	 86
#define EG_FAULT_STALL	 "stall:"
#define EG_FAULT_STALL_S 6

void eg_fault_point(const char *name);

#endif
