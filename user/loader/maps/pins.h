/* SPDX-License-Identifier: Apache-2.0 */
/* The pin directory: where the maps and links live on bpffs, so that
 * enforcement outlives the loader process. Layout (docs/operators.md):
 *   <pin-dir>/<map name>        every map of bpf/execgate_maps.bpf.h
 *   <pin-dir>/links/<program>   one link per attached program */
#ifndef EXECGATE_LOADER_PINS_H
#define EXECGATE_LOADER_PINS_H

#include <stdbool.h>
#include <stddef.h>

#define EG_DEFAULT_PIN_DIR   "/sys/fs/bpf/execgate"
#define EG_DEFAULT_STATE_DIR "/var/lib/execgate"
#define EG_BPFFS_MOUNT	     "/sys/fs/bpf"
#define EG_PIN_PATH_MAX	     512

/* links/<name> of the Unix stream revoker's iterator (revoke_unix.c): made
 * by the first revocation, removed with the maps. */
#define EG_PIN_REVOKE_UNIX_ITER "revoke_unix_iter"
#define EG_PIN_CLOCK_RESUME	"clock_resume" /* loader/tiers/clock.h */
#define EG_PIN_TASK_START	"task_start"   /* loader/process/task_start.h */

/* Makes pin_dir and pin_dir/links exist on bpffs. When the nearest existing
 * ancestor is not bpffs and is the standard mount point /sys/fs/bpf, mounts
 * bpffs there first. -EINVAL (err says why) when pin_dir cannot be on
 * bpffs: the operator's mistake, not the kernel's lack. */
int eg_pins_prepare(const char *pin_dir, char *err, size_t err_size);
/* Its path rule alone, changing nothing (load runs it before probing):
 * absolute, and its nearest existing ancestor on bpffs or the standard
 * mount point. 0 or -EINVAL. */
int eg_pins_check(const char *pin_dir, char *err, size_t err_size);

/* true iff pin_dir exists on bpffs and holds the records map. */
bool eg_pins_loaded(const char *pin_dir);

/* <pin_dir>/<name>, <pin_dir>/links/<name>. -ENAMETOOLONG on overflow. */
int eg_pin_path(char *out, size_t size, const char *pin_dir, const char *name);
int eg_link_pin_path(char *out, size_t size, const char *pin_dir, const char *name);

/* Removes the map pins this build knows, the revoker's iterator link, the
 * grant clock's link, the task iterator's link, the links directory and
 * pin_dir itself when empty. Missing pins are fine. */
int eg_pins_remove_maps(const char *pin_dir);

#endif
