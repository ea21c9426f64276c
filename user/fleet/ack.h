/* SPDX-License-Identifier: Apache-2.0 */
/* The ack a worker writes at <prefix>/acks/<worker>/<sandbox> (its format
 * in docs/fleet.md, "Acks"), read strictly, and the fence rule over it:
 * whether the worker can no longer admit an execution below generation G
 * of the sandbox. Pure: no I/O. */
#ifndef EXECGATE_FLEET_ACK_H
#define EXECGATE_FLEET_ACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EG_ACK_SCHEMA_VERSION 2
#define EG_ACK_MAX_LEN	      1024 /* a longer value is refused */
#define EG_ACK_UUID_LEN	      36

enum eg_ack_state { EG_ACK_ACTIVE, EG_ACK_RETIRED, EG_ACK_ABSENT, EG_ACK_PENDING };

struct eg_ack {
	char worker[EG_ACK_UUID_LEN + 1], sandbox[EG_ACK_UUID_LEN + 1];
	struct {
		char worker[EG_ACK_UUID_LEN + 1];
		uint64_t generation, revision;
		uint32_t activation;
	} selection;
	enum eg_ack_state state;
	bool has_record; /* generation, activation, epoch are numbers, not null */
	uint64_t generation, epoch;
	uint32_t activation;
	uint64_t revision, acked_at;
};

/* Parses one ack value. 0, or -EINVAL with err naming the member and the
 * reason: not one JSON object, an unknown, missing or duplicated member, a
 * member of the wrong type or out of range, a UUID not in the lowercase
 * 8-4-4-4-12 form, a state that contradicts its numbers (active or retired
 * without a record, absent with one). */
int eg_ack_parse(const char *text, size_t len, struct eg_ack *a, char *err, size_t err_size);

/* The fence rule: the ack names worker and sandbox, its selection
 * generation is >= generation, and it is retired, absent or pending, or
 * active with a generation >= generation. */
bool eg_ack_fenced(const struct eg_ack *a, const char *worker, const char *sandbox,
		   uint64_t generation);

const char *eg_ack_state_name(enum eg_ack_state s);
/* A lowercase 8-4-4-4-12 UUID, exactly. */
bool eg_ack_uuid_ok(const char *s);

#endif
