/* SPDX-License-Identifier: Apache-2.0 */
/* The ack a worker writes at <prefix>/acks/<worker>/<sandbox> (its format
 * in docs/fleet.md, "Acks"), signed by the worker's node key and read
 * strictly, and the fence rule over it: whether the worker can no longer
 * admit an execution below generation G of the sandbox. Pure: no I/O.
 *
 * The signed form is the unsigned ack's exact bytes, one JSON object,
 * with its closing '}' replaced by ,"signature":"SIG"} where SIG is the
 * Ed25519 signature (unpadded base64url, 86 characters) over
 *   "execgate ack v1\0" || the unsigned ack's bytes.
 * Verifying takes the bytes apart again: nothing is re-serialised, so what
 * was signed is exactly what is read. */
#ifndef EXECGATE_FLEET_ACK_H
#define EXECGATE_FLEET_ACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EG_ACK_SCHEMA_VERSION 3
#define EG_ACK_MAX_LEN	      1024 /* a longer value is refused */
#define EG_ACK_UUID_LEN	      36
/* The domain-separation context, signed with its terminating NUL
 * (docs/fleet.md, "Why sign what travels"). */
#define EG_ACK_SIGN_CONTEXT "execgate ack v1"
#define EG_ACK_SIG_TEXT_LEN 86 /* 64 bytes, unpadded base64url */
#define EG_ACK_SIG_TAIL_LEN (sizeof(",\"signature\":\"") - 1 + EG_ACK_SIG_TEXT_LEN + 2)

enum eg_ack_state { EG_ACK_ACTIVE, EG_ACK_RETIRED, EG_ACK_ABSENT, EG_ACK_PENDING };
/* The sandbox's effective mode on the worker: its own, else the global. */
enum eg_ack_mode { EG_ACK_ENFORCE, EG_ACK_AUDIT };

/* Why a signature was refused (eg_ack_verify). */
enum eg_ack_sig_err {
	EG_ACK_SIG_OK = 0,
	EG_ACK_SIG_UNSIGNED,	  /* no ,"signature":"..."} at the end */
	EG_ACK_SIG_BAD_TEXT,	  /* not 86 characters of exact base64url */
	EG_ACK_SIG_BAD_SIGNATURE, /* does not verify under the key */
	EG_ACK_SIG__COUNT,
};

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
	enum eg_ack_mode mode;
	uint64_t revision, acked_at;
};

/* Parses one ack value, signed form. 0, or -EINVAL with err naming the
 * member and the reason: not one JSON object, an unknown, missing or
 * duplicated member, a member of the wrong type or out of range, a UUID not
 * in the lowercase 8-4-4-4-12 form, a state that contradicts its numbers
 * (active or retired without a record, absent with one), a signature member
 * that is not the last or not 86 characters. It does not check the
 * signature: eg_ack_verify() does, against the writer's node key. */
int eg_ack_parse(const char *text, size_t len, struct eg_ack *a, char *err, size_t err_size);

/* Signs an unsigned ack (one JSON object, its last byte '}') with a
 * libsodium Ed25519 secret key (64 bytes): *out (malloc'ed, NUL-ended) is
 * the signed form. 0, -EINVAL (not ending in '}', or the signed form would
 * be longer than EG_ACK_MAX_LEN) or -ENOMEM. */
int eg_ack_sign(const char *unsigned_ack, size_t len, const uint8_t sk[64], char **out);

/* Checks the signature of a signed ack under the writer's Ed25519 public
 * key (32 bytes); the framing only, not the members (eg_ack_parse). */
enum eg_ack_sig_err eg_ack_verify(const char *text, size_t len, const uint8_t pk[32]);
const char *eg_ack_sig_err_name(enum eg_ack_sig_err e);

/* The fence rule on the record's state: the ack names worker and sandbox,
 * its selection generation is >= generation, and it is retired, absent or
 * pending, or active with a generation >= generation. Whatever the mode. */
bool eg_ack_fenced_state(const struct eg_ack *a, const char *worker, const char *sandbox,
			 uint64_t generation);
/* The fence rule: eg_ack_fenced_state() in enforce mode. A worker in audit
 * admits what enforce would refuse, so it is never fenced here. */
bool eg_ack_fenced(const struct eg_ack *a, const char *worker, const char *sandbox,
		   uint64_t generation);

const char *eg_ack_state_name(enum eg_ack_state s);
const char *eg_ack_mode_name(enum eg_ack_mode m);
/* A lowercase 8-4-4-4-12 UUID, exactly. */
bool eg_ack_uuid_ok(const char *s);

#endif
