/* SPDX-License-Identifier: Apache-2.0 */
/* The grant clock (abi.h, struct eg_clock_word): the program that keeps
 * eg_clock's boot offset across suspend and resume, pinned at
 * links/clock_resume, and what status says of it. */
#ifndef EXECGATE_LOADER_CLOCK_H
#define EXECGATE_LOADER_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include "loader/maps/maps.h"
#include "loader/maps/pins.h"

/* At load, after the tiers (eg_clock is pinned by then): attaches
 * bpf/clock_resume.bpf.c to the suspend_resume tracepoint and pins the link,
 * or adopts the pinned one when it keeps this pin dir's eg_clock, then runs
 * the program once so that the word holds the offset. 0 when the word is
 * kept. On failure the word is cleared, so the hooks read CLOCK_BOOTTIME
 * itself, and err says why: the load goes on, only slower. */
int eg_clock_keep(const char *pin_dir, char *err, size_t err_size);

/* What the hooks read now, for status. */
struct eg_clock_state {
	bool read;			 /* the word could be read (the maps are pinned) */
	bool kept;			 /* EG_CLOCK_KEPT is set */
	bool attached;			 /* links/clock_resume keeps this eg_clock */
	__u64 offset_ns;		 /* when kept */
	char why[EG_PIN_PATH_MAX + 128]; /* when not kept, or kept by nothing */
};
void eg_clock_state_read(const struct eg_maps *m, const char *pin_dir, struct eg_clock_state *st);

/* The word itself: one 8-byte read or write. */
int eg_clock_word_read(const struct eg_maps *m, __u64 *word);
int eg_clock_word_write(const struct eg_maps *m, __u64 word);

#endif
