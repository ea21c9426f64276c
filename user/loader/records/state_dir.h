/* SPDX-License-Identifier: Apache-2.0 */
/* The mode every writer creates the state dir (default /var/lib/execgate)
 * and its keys/ directory with: 0755, the unit's StateDirectoryMode=, so
 * that a hand-run execgated or execgate load makes what systemd makes.
 * What is secret in it is a file of its own (node.seed, 0600); the public
 * keys, the probe record and node.pub are for readers without root (a
 * member of admit_group running execgate status). */
#ifndef EXECGATE_LOADER_STATE_DIR_H
#define EXECGATE_LOADER_STATE_DIR_H

#define EG_STATE_DIR_MODE 0755

#endif
