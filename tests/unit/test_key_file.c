/* SPDX-License-Identifier: Apache-2.0 */
/* The typed key-file form (core/key_file.h): round trips, one reason per
 * refusal, and no seed ever accepted where a public key is read. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/key_file.h"
#include "core/keyset.h"
#include "helpers.h"

#define PUB_T EG_KEY_TYPE_ED25519_PUBLIC
#define SEC_T EG_KEY_TYPE_ED25519_SECRET

static char *dir;

static void make_dir(void)
{
	dir = test_tmpdir();
}

static void remove_dir(void)
{
	test_rmtree(dir);
	free(dir);
}

static void hex64(const uint8_t b[32], char out[65])
{
	sodium_bin2hex(out, 65, b, 32);
}

static enum eg_key_err decode_pub(const char *text, uint8_t out[32])
{
	return eg_key_file_decode(text, strlen(text), EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, out,
				  32);
}

static enum eg_key_err decode_sec(const char *text, uint8_t out[32])
{
	return eg_key_file_decode(text, strlen(text), EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, out,
				  32);
}

Test(key_file, type_names_carry_algorithm_kind_and_version)
{
	cr_assert_str_eq(eg_key_type_name(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC),
			 "execgate-ed25519-public-v1");
	cr_assert_str_eq(eg_key_type_name(EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET),
			 "execgate-ed25519-secret-v1");
	cr_assert_null(eg_key_type_name((enum eg_key_alg)7, EG_KEY_KIND_PUBLIC));
}

Test(key_file, encode_decode_round_trip)
{
	uint8_t key[32], back[32];
	char line[EG_KEY_FILE_LINE_MAX], want[EG_KEY_FILE_LINE_MAX], hex[65];

	for (int i = 0; i < 200; i++) {
		enum eg_key_kind kind = i % 2 ? EG_KEY_KIND_SECRET : EG_KEY_KIND_PUBLIC;
		int n;

		randombytes_buf(key, sizeof(key));
		n = eg_key_file_encode(EG_KEY_ALG_ED25519, kind, key, 32, line, sizeof(line));
		hex64(key, hex);
		snprintf(want, sizeof(want), "%s %s\n", i % 2 ? SEC_T : PUB_T, hex);
		cr_assert_eq(n, (int)strlen(want));
		cr_assert_eq(n, 92);
		cr_assert_str_eq(line, want);
		memset(back, 0, sizeof(back));
		cr_assert_eq(
		    eg_key_file_decode(line, (size_t)n, EG_KEY_ALG_ED25519, kind, back, 32),
		    EG_KEY_OK);
		cr_assert_arr_eq(back, key, 32);
		/* Without the newline: the same key. */
		memset(back, 0, sizeof(back));
		cr_assert_eq(
		    eg_key_file_decode(line, (size_t)n - 1, EG_KEY_ALG_ED25519, kind, back, 32),
		    EG_KEY_OK);
		cr_assert_arr_eq(back, key, 32);
	}
}

Test(key_file, encode_refuses_wrong_length_and_short_buffer)
{
	uint8_t key[32] = {1};
	char line[EG_KEY_FILE_LINE_MAX];

	cr_assert_eq(
	    eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, key, 31, line, sizeof(line)),
	    -EINVAL);
	cr_assert_eq(
	    eg_key_file_encode((enum eg_key_alg)9, EG_KEY_KIND_PUBLIC, key, 32, line, sizeof(line)),
	    -EINVAL);
	cr_assert_eq(eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, key, 32, line, 92),
		     -ENOSPC);
	cr_assert_eq(eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, key, 32, line, 93),
		     92);
}

/* Each malformed public key file, and the one reason it gets. */
Test(key_file, each_refusal_has_its_own_reason)
{
	struct test_key k;
	char hex[65], upper[65], buf[512];
	uint8_t out[32];

	test_key(&k, 1);
	hex64(k.pk, hex);
	for (int i = 0; i < 64; i++)
		upper[i] = (hex[i] >= 'a' && hex[i] <= 'f') ? (char)(hex[i] - 32) : hex[i];
	upper[64] = '\0';

	const struct {
		const char *fmt; /* %s: the type, then the hex */
		const char *type;
		enum eg_key_err want;
	} cases[] = {
	    {"%s %s\n", PUB_T, EG_KEY_OK},
	    {"%s %s", PUB_T, EG_KEY_OK},
	    {"", NULL, EG_KEY_FILE_EMPTY},
	    {"\n", NULL, EG_KEY_FILE_EMPTY},
	    {"%s %s\r\n", PUB_T, EG_KEY_FILE_CRLF},
	    {"%s %s\r", PUB_T, EG_KEY_FILE_CRLF},
	    {"%s\r%s\n", PUB_T, EG_KEY_FILE_CRLF},
	    {"%s %s\n\n", PUB_T, EG_KEY_FILE_TRAILING},
	    {"%s %s\n%s\n", PUB_T, EG_KEY_FILE_TRAILING}, /* hex fills the 3rd %s */
	    {"%s %s ", PUB_T, EG_KEY_FILE_TRAILING},
	    {"%s %s # comment\n", PUB_T, EG_KEY_FILE_TRAILING},
	    {"%s %s00\n", PUB_T, EG_KEY_FILE_WRONG_LENGTH},
	    {"%s %.62s\n", PUB_T, EG_KEY_FILE_WRONG_LENGTH},
	    {"%s %.63s\n", PUB_T, EG_KEY_FILE_WRONG_LENGTH},
	    {"%s \n", PUB_T, EG_KEY_FILE_WRONG_LENGTH},
	    {"%s\n", PUB_T, EG_KEY_FILE_WRONG_LENGTH},
	    {"%s  %s\n", PUB_T, EG_KEY_FILE_NOT_HEX},	   /* two spaces */
	    {"%s\t%s\n", PUB_T, EG_KEY_FILE_UNKNOWN_TYPE}, /* tab: no separator */
	    {"%s 0x%.62s\n", PUB_T, EG_KEY_FILE_NOT_HEX},
	    {"%s %.10sg%s\n", PUB_T, EG_KEY_FILE_NOT_HEX},
	    {"%s\n", NULL, EG_KEY_FILE_UNTYPED}, /* the old form: bare hex */
	    {"%s", NULL, EG_KEY_FILE_UNTYPED},
	    {"%.63s\n", NULL, EG_KEY_FILE_UNTYPED},
	    {" %s\n", NULL, EG_KEY_FILE_UNKNOWN_TYPE},
	    {"0x%s\n", NULL, EG_KEY_FILE_UNKNOWN_TYPE},
	    {"execgate-ed25519-public-v2 %s\n", NULL, EG_KEY_FILE_UNKNOWN_TYPE},
	    {"execgate-ed25519-public %s\n", NULL, EG_KEY_FILE_UNKNOWN_TYPE},
	    {"EXECGATE-ED25519-PUBLIC-V1 %s\n", NULL, EG_KEY_FILE_UNKNOWN_TYPE},
	    {"ssh-ed25519 %s\n", NULL, EG_KEY_FILE_UNKNOWN_TYPE},
	    {"%s %s\n", SEC_T, EG_KEY_FILE_SECRET},
	    {"%s %s", SEC_T, EG_KEY_FILE_SECRET},
	    /* A malformed secret is still named as a secret. */
	    {"%s %s\r\n", SEC_T, EG_KEY_FILE_SECRET},
	    {"%s %.10s\n", SEC_T, EG_KEY_FILE_SECRET},
	    {"%s\n", SEC_T, EG_KEY_FILE_SECRET},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].type)
			snprintf(buf, sizeof(buf), cases[i].fmt, cases[i].type, hex, hex);
		else
			snprintf(buf, sizeof(buf), cases[i].fmt, hex);
		memset(out, 0xa5, sizeof(out));
		cr_assert_eq(decode_pub(buf, out), cases[i].want, "case %zu [%s]: got %s, want %s",
			     i, buf, eg_key_err_name(decode_pub(buf, out)),
			     eg_key_err_name(cases[i].want));
		if (cases[i].want == EG_KEY_OK) {
			cr_assert_arr_eq(out, k.pk, 32);
		} else {
			/* out is written only on success. */
			for (size_t j = 0; j < sizeof(out); j++)
				cr_assert_eq(out[j], 0xa5, "case %zu: out written", i);
		}
	}
	/* Uppercase hex is not the canonical form. */
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T, upper);
	cr_assert_eq(decode_pub(buf, out), EG_KEY_FILE_NOT_HEX);
	/* Uppercase bare hex was accepted by the old reader: named untyped. */
	snprintf(buf, sizeof(buf), "%s\n", upper);
	cr_assert_eq(decode_pub(buf, out), EG_KEY_FILE_UNTYPED);
	/* A NUL inside the key. */
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T, hex);
	buf[strlen(PUB_T) + 5] = '\0';
	cr_assert_eq(eg_key_file_decode(buf, 92, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, out, 32),
		     EG_KEY_FILE_NOT_HEX);
	/* Asked for a secret, given a public key. */
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T, hex);
	cr_assert_eq(decode_sec(buf, out), EG_KEY_FILE_PUBLIC);
	snprintf(buf, sizeof(buf), "%s %s\n", SEC_T, hex);
	cr_assert_eq(decode_sec(buf, out), EG_KEY_OK);
	/* A wrong out_len for the type is refused, not truncated. */
	cr_assert_eq(
	    eg_key_file_decode(buf, strlen(buf), EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, out, 31),
	    EG_KEY_FILE_UNKNOWN_TYPE);
}

/* The point checks follow the format checks: a typed public line of a bad
 * point is refused for the point. */
Test(key_file, pubkey_parse_applies_the_key_rules)
{
	struct test_key k;
	char hex[65], buf[200];
	uint8_t pk[32], zero[32] = {0};

	test_key(&k, 2);
	hex64(k.pk, hex);
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T, hex);
	cr_assert_eq(eg_pubkey_parse(buf, strlen(buf), pk), EG_KEY_OK);
	cr_assert_arr_eq(pk, k.pk, 32);

	hex64(zero, hex);
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T, hex);
	memset(pk, 0xa5, sizeof(pk));
	cr_assert_eq(eg_pubkey_parse(buf, strlen(buf), pk), EG_KEY_ZERO);
	cr_assert_eq(pk[0], 0xa5);
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T,
		 "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05");
	cr_assert_eq(eg_pubkey_parse(buf, strlen(buf), pk), EG_KEY_SMALL_ORDER);
	cr_assert_eq(pk[0], 0xa5);
	/* y = 2: no x on the curve. */
	snprintf(buf, sizeof(buf), "%s %s\n", PUB_T,
		 "0200000000000000000000000000000000000000000000000000000000000000");
	cr_assert_eq(eg_pubkey_parse(buf, strlen(buf), pk), EG_KEY_INVALID);
	cr_assert_eq(pk[0], 0xa5);
}

/* The issue-7 bug: about one random seed in 16 is a valid public key, so
 * the old reader took a seed file given to `keys add`. A seed in the typed
 * form is refused as a secret every time, and its old form as untyped. */
Test(key_file, no_keygen_seed_is_ever_accepted_as_public)
{
	uint8_t seed[32], pk[32];
	char line[EG_KEY_FILE_LINE_MAX], hex[65], old[70];
	unsigned valid_points = 0;

	for (int i = 0; i < 2000; i++) {
		int n;

		randombytes_buf(seed, sizeof(seed));
		/* Exactly what keygen writes to <kid>.seed. */
		n = eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, 32, line,
				       sizeof(line));
		cr_assert_eq(n, 92);
		memset(pk, 0, sizeof(pk));
		cr_assert_eq(eg_pubkey_parse(line, (size_t)n, pk), EG_KEY_FILE_SECRET, "seed %d",
			     i);
		cr_assert(sodium_is_zero(pk, sizeof(pk)), "seed %d: bytes decoded", i);
		/* The old untyped seed file. */
		hex64(seed, hex);
		snprintf(old, sizeof(old), "%s\n", hex);
		cr_assert_eq(eg_pubkey_parse(old, strlen(old), pk), EG_KEY_FILE_UNTYPED, "seed %d",
			     i);
		if (eg_key_check(seed) == EG_KEY_OK)
			valid_points++;
	}
	/* Proof that the loop has teeth: the old reader would have accepted
	 * these (expected ~2000/16; 0 has probability ~e^-129). */
	cr_log_info("old reader: %u of 2000 seeds were valid public keys", valid_points);
	cr_assert_gt(valid_points, 0);
}

/* Every single-byte change of a valid public line: whatever is accepted is
 * a canonical public line (so one key has one file), and nothing that
 * names a secret type is. */
Test(key_file, every_one_byte_change_is_refused_or_canonical)
{
	struct test_key k;
	char line[EG_KEY_FILE_LINE_MAX], mut[EG_KEY_FILE_LINE_MAX], again[EG_KEY_FILE_LINE_MAX];
	uint8_t pk[32];
	int n;

	test_key(&k, 3);
	n = eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, k.pk, 32, line,
			       sizeof(line));
	for (int pos = 0; pos < n; pos++) {
		for (int v = 0; v < 256; v++) {
			memcpy(mut, line, (size_t)n);
			mut[pos] = (char)v;
			if (eg_key_file_decode(mut, (size_t)n, EG_KEY_ALG_ED25519,
					       EG_KEY_KIND_PUBLIC, pk, 32) != EG_KEY_OK)
				continue;
			cr_assert_eq(eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk,
							32, again, sizeof(again)),
				     n);
			cr_assert_eq(memcmp(again, mut, (size_t)n), 0, "pos %d = 0x%02x", pos, v);
		}
	}
	/* Every truncation but the one dropping the LF is refused. */
	for (int len = 0; len < n - 1; len++)
		cr_assert_neq(eg_key_file_decode(line, (size_t)len, EG_KEY_ALG_ED25519,
						 EG_KEY_KIND_PUBLIC, pk, 32),
			      EG_KEY_OK, "length %d", len);
}

Test(key_file, read_names_missing_unreadable_and_not_regular, .init = make_dir, .fini = remove_dir)
{
	char path[4096], buf[EG_KEY_FILE_MAX];
	struct test_key k;
	uint8_t pk[32];
	mode_t mode;
	size_t len;

	snprintf(path, sizeof(path), "%s/missing.pub", dir);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_MISSING);
	cr_assert_eq(eg_key_file_read(path, buf, sizeof(buf), &len, NULL), EG_KEY_FILE_MISSING);

	/* A file used as a directory: ENOTDIR, not ENOENT. */
	test_write_file(dir, "f", "x");
	snprintf(path, sizeof(path), "%s/f/k.pub", dir);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_UNREADABLE);

	snprintf(path, sizeof(path), "%s/d.pub", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_NOT_REGULAR);
	/* A FIFO with no writer must not hang the reader. */
	snprintf(path, sizeof(path), "%s/p.pub", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_NOT_REGULAR);
	unlink(path);

	snprintf(path, sizeof(path), "%s/e.pub", dir);
	test_write_file(dir, "e.pub", "");
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_EMPTY);

	test_key(&k, 4);
	cr_assert_eq(
	    eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, k.pk, 32, buf, sizeof(buf)),
	    92);
	test_write_file(dir, "k.pub", buf);
	snprintf(path, sizeof(path), "%s/k.pub", dir);
	cr_assert_eq(chmod(path, 0640), 0);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_OK);
	cr_assert_arr_eq(pk, k.pk, 32);
	cr_assert_eq(eg_key_file_read(path, buf, sizeof(buf), &len, &mode), EG_KEY_OK);
	cr_assert_eq(len, 92);
	cr_assert_eq(mode & 07777, 0640);
}

/* A file longer than any valid one is refused whatever its tail, even when
 * it starts with a whole valid line. */
Test(key_file, oversized_files_are_refused, .init = make_dir, .fini = remove_dir)
{
	char path[4096], line[EG_KEY_FILE_LINE_MAX], *big;
	struct test_key k;
	uint8_t pk[32];
	size_t n = 1 << 16;

	test_key(&k, 5);
	eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, k.pk, 32, line, sizeof(line));
	big = malloc(n + 1);
	cr_assert_not_null(big);
	snprintf(path, sizeof(path), "%s/big.pub", dir);

	/* A valid line, then 64 KiB of spaces. */
	memset(big, ' ', n);
	memcpy(big, line, 91);
	big[n] = '\0';
	test_write_file(dir, "big.pub", big);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_TRAILING);
	/* The valid line and its LF, then a second line. */
	memcpy(big, line, 92);
	test_write_file(dir, "big.pub", big);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_TRAILING);
	/* The type, then 64 KiB of hex. */
	memset(big, 'a', n);
	memcpy(big, line, 27);
	test_write_file(dir, "big.pub", big);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_WRONG_LENGTH);
	free(big);
}

Test(key_file, load_reads_secret_and_refuses_public, .init = make_dir, .fini = remove_dir)
{
	char path[4096], line[EG_KEY_FILE_LINE_MAX];
	uint8_t seed[32] = {9, 8, 7}, out[32];
	mode_t mode = 0;

	eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, 32, line, sizeof(line));
	test_write_file(dir, "k.seed", line);
	snprintf(path, sizeof(path), "%s/k.seed", dir);
	cr_assert_eq(eg_key_file_load(path, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, out, 32, &mode),
		     EG_KEY_OK);
	cr_assert_arr_eq(out, seed, 32);
	cr_assert(S_ISREG(mode));
	cr_assert_eq(eg_key_file_load(path, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, out, 32, NULL),
		     EG_KEY_FILE_SECRET);
	cr_assert_eq(eg_pubkey_read(path, out), EG_KEY_FILE_SECRET);
}

Test(key_file, error_names_and_details)
{
	static const struct {
		enum eg_key_err err;
		const char *name;
	} names[] = {
	    {EG_KEY_FILE_MISSING, "key-file-missing"},
	    {EG_KEY_FILE_UNREADABLE, "key-file-unreadable"},
	    {EG_KEY_FILE_NOT_REGULAR, "key-file-not-regular"},
	    {EG_KEY_FILE_EMPTY, "key-file-empty"},
	    {EG_KEY_FILE_CRLF, "key-file-crlf"},
	    {EG_KEY_FILE_TRAILING, "key-file-trailing-data"},
	    {EG_KEY_FILE_UNTYPED, "key-file-untyped"},
	    {EG_KEY_FILE_UNKNOWN_TYPE, "key-file-unknown-type"},
	    {EG_KEY_FILE_WRONG_LENGTH, "key-wrong-length"},
	    {EG_KEY_FILE_NOT_HEX, "key-not-hex"},
	    {EG_KEY_FILE_SECRET, "key-file-holds-secret"},
	    {EG_KEY_FILE_PUBLIC, "key-file-holds-public"},
	    {EG_KEY_NO_MEMORY, "out-of-memory"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_str_eq(eg_key_err_name(names[i].err), names[i].name);
	/* Every value up to the last has a name and a detail, all distinct. */
	for (int a = 0; a <= EG_KEY_NO_MEMORY; a++) {
		cr_assert_str_neq(eg_key_err_name((enum eg_key_err)a), "unknown", "%d", a);
		cr_assert_str_neq(eg_key_err_detail((enum eg_key_err)a), "unknown key error", "%d",
				  a);
		for (int b = 0; b < a; b++) {
			cr_assert_str_neq(eg_key_err_name((enum eg_key_err)a),
					  eg_key_err_name((enum eg_key_err)b));
			cr_assert_str_neq(eg_key_err_detail((enum eg_key_err)a),
					  eg_key_err_detail((enum eg_key_err)b));
		}
	}
	cr_assert_str_eq(eg_key_err_detail(EG_KEY_FILE_SECRET),
			 "holds a secret key: refusing it; give the .pub file");
	cr_assert_not_null(
	    strstr(eg_key_err_detail(EG_KEY_FILE_UNTYPED), "execgate-issue pubkey --seed"));
	cr_assert_str_eq(eg_key_err_detail((enum eg_key_err)99), "unknown key error");
}
