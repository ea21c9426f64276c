/* SPDX-License-Identifier: Apache-2.0 */
/* Key ids, load-time key rules, run-time add/remove, key files. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/key_file.h"
#include "core/keyset.h"
#include "helpers.h"

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

#define LINE_MAX_ EG_KEY_FILE_LINE_MAX

/* What keygen writes to <kid>.pub. */
static void pub_line(const uint8_t pk[32], char out[LINE_MAX_])
{
	cr_assert_eq(
	    eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk, 32, out, LINE_MAX_), 92);
}

Test(keyset, key_id_is_blake2b_256_prefix)
{
	struct test_key k;
	uint8_t h[32], kid[EG_KEY_ID_LEN];

	test_key(&k, 1);
	crypto_generichash(h, sizeof(h), k.pk, 32, NULL, 0);
	eg_key_id(k.pk, kid);
	cr_assert_arr_eq(kid, h, EG_KEY_ID_LEN);
}

/* y for the points of order 1, 2, 4 and 8, canonical and not. */
static const char *const small_order_hex[] = {
    "0000000000000000000000000000000000000000000000000000000000000080",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
};

Test(keyset, refuses_zero_small_order_and_invalid_keys)
{
	uint8_t zero[32] = {0}, pk[32];
	struct test_key k;
	struct eg_keyset ks;

	eg_keyset_init(&ks);
	cr_assert_eq(eg_key_check(zero), EG_KEY_ZERO);
	cr_assert_eq(eg_keyset_add(&ks, zero, NULL), EG_KEY_ZERO);
	for (size_t i = 0; i < sizeof(small_order_hex) / sizeof(small_order_hex[0]); i++) {
		size_t n;
		uint8_t *b = test_unhex(small_order_hex[i], &n);

		cr_assert_eq(eg_key_check(b), EG_KEY_SMALL_ORDER, "%s", small_order_hex[i]);
		cr_assert_eq(eg_keyset_add(&ks, b, NULL), EG_KEY_SMALL_ORDER);
		free(b);
	}

	/* A good key plus a point of order 8: on the curve, not of small
	 * order, but outside the prime-order subgroup. */
	size_t n;
	uint8_t *t = test_unhex(small_order_hex[3], &n);

	test_key(&k, 1);
	cr_assert_eq(eg_key_check(k.pk), EG_KEY_OK);
	cr_assert_eq(crypto_core_ed25519_add(pk, k.pk, t), 0);
	cr_assert_eq(crypto_core_ed25519_is_valid_point(pk), 0);
	cr_assert_eq(eg_key_check(pk), EG_KEY_SMALL_ORDER);
	free(t);

	/* Not on the curve: find a y with no x (about half of all y). */
	memset(pk, 0, sizeof(pk));
	for (pk[0] = 2;; pk[0]++) {
		uint8_t sum[32];

		if (crypto_core_ed25519_add(sum, pk, pk) != 0)
			break;
	}
	cr_assert_eq(eg_key_check(pk), EG_KEY_INVALID);
	/* Non-canonical: y = p + 2 .. p + 18 (y = p, p + 1 are small order). */
	memset(pk, 0xff, sizeof(pk));
	pk[31] = 0x7f;
	for (int lo = 0xef; lo <= 0xff; lo++) {
		pk[0] = (uint8_t)lo;
		cr_assert_neq(eg_key_check(pk), EG_KEY_OK, "y = 0x%02x..7f", lo);
	}
	cr_assert_eq(ks.n, 0);
	cr_assert_eq(ks.generation, 0);
}

Test(keyset, add_remove_bump_generation)
{
	struct eg_keyset ks;
	struct test_key a, b;
	uint8_t kid[EG_KEY_ID_LEN];

	test_key(&a, 1);
	test_key(&b, 2);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, a.pk, kid), EG_KEY_OK);
	cr_assert_arr_eq(kid, a.kid, EG_KEY_ID_LEN);
	cr_assert_eq(ks.generation, 1);
	cr_assert_eq(eg_keyset_add(&ks, a.pk, NULL), EG_KEY_DUPLICATE);
	cr_assert_eq(ks.generation, 1);
	cr_assert_eq(eg_keyset_add(&ks, b.pk, NULL), EG_KEY_OK);
	cr_assert_eq(ks.generation, 2);
	cr_assert_not_null(eg_keyset_find(&ks, a.kid));
	cr_assert_arr_eq(eg_keyset_find(&ks, b.kid)->pk, b.pk, 32);
	cr_assert_eq(eg_keyset_remove(&ks, a.kid), EG_KEY_OK);
	cr_assert_eq(ks.generation, 3);
	cr_assert_null(eg_keyset_find(&ks, a.kid));
	cr_assert_not_null(eg_keyset_find(&ks, b.kid));
	cr_assert_eq(eg_keyset_remove(&ks, a.kid), EG_KEY_NOT_FOUND);
	cr_assert_eq(ks.generation, 3);
	cr_assert_eq(ks.n, 1);
}

/* What the daemon's directory watcher asks before it flushes the token
 * cache: the same keys in any order and generation, nothing else. */
Test(keyset, same_keys_ignores_order_and_generation)
{
	struct eg_keyset x, y;
	struct test_key a, b, c;

	test_key(&a, 1);
	test_key(&b, 2);
	test_key(&c, 3);
	eg_keyset_init(&x);
	eg_keyset_init(&y);
	cr_assert(eg_keyset_same_keys(&x, &y), "two empty sets");
	cr_assert_eq(eg_keyset_add(&x, a.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&x, b.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&y, b.pk, NULL), EG_KEY_OK);
	cr_assert_not(eg_keyset_same_keys(&x, &y), "a missing");
	cr_assert_not(eg_keyset_same_keys(&y, &x), "a extra");
	cr_assert_eq(eg_keyset_add(&y, a.pk, NULL), EG_KEY_OK);
	cr_assert(eg_keyset_same_keys(&x, &y), "b, a against a, b");
	cr_assert_eq(eg_keyset_add(&y, c.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_remove(&y, a.kid), EG_KEY_OK);
	cr_assert_neq(x.generation, y.generation);
	cr_assert_not(eg_keyset_same_keys(&x, &y), "a replaced by c, same count");
	cr_assert_eq(eg_keyset_remove(&y, c.kid), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&y, a.pk, NULL), EG_KEY_OK);
	cr_assert(eg_keyset_same_keys(&x, &y), "the same keys at another generation");
	/* a kid that matches with another key behind it (only a corrupt set
	 * can hold one: ids are hashes of their keys) is not the same key */
	y.keys[0].pk[0] ^= 1;
	cr_assert_not(eg_keyset_same_keys(&x, &y), "same ids, another key");
}

Test(keyset, is_bounded)
{
	struct eg_keyset ks;
	struct test_key k;

	eg_keyset_init(&ks);
	for (int i = 0; i < EG_KEYSET_MAX; i++) {
		test_key(&k, (uint8_t)i);
		cr_assert_eq(eg_keyset_add(&ks, k.pk, NULL), EG_KEY_OK);
	}
	test_key(&k, EG_KEYSET_MAX);
	cr_assert_eq(eg_keyset_add(&ks, k.pk, NULL), EG_KEY_FULL);
	cr_assert_eq(ks.n, EG_KEYSET_MAX);
}

Test(keyset, pubkey_file_is_one_strict_typed_line, .init = make_dir, .fini = remove_dir)
{
	struct test_key k;
	char line[LINE_MAX_], path[4096], buf[300];
	uint8_t pk[32];

	test_key(&k, 1);
	pub_line(k.pk, line);
	snprintf(path, sizeof(path), "%s/k.pub", dir);

	test_write_file(dir, "k.pub", line);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_OK);
	cr_assert_arr_eq(pk, k.pk, 32);
	line[91] = '\0'; /* no newline: still one line */
	test_write_file(dir, "k.pub", line);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_OK);

	/* Each malformed file gets its own reason (test_key_file.c has the
	 * full table); these are the ones that all used to be bad-key-file. */
	static const struct {
		const char *fmt;
		enum eg_key_err want;
	} bad[] = {
	    {"", EG_KEY_FILE_EMPTY},
	    {"\n", EG_KEY_FILE_EMPTY},
	    {"%.90s\n", EG_KEY_FILE_WRONG_LENGTH},
	    {"%s\n\n", EG_KEY_FILE_TRAILING},
	    {"%s\r\n", EG_KEY_FILE_CRLF},
	    {" %s\n", EG_KEY_FILE_UNKNOWN_TYPE},
	    {"%s \n", EG_KEY_FILE_TRAILING},
	    {"%s00\n", EG_KEY_FILE_WRONG_LENGTH},
	    {"%.27sg%s\n", EG_KEY_FILE_NOT_HEX},
	    {"%s\n", EG_KEY_FILE_UNTYPED}, /* filled with the bare hex below */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *arg = bad[i].want == EG_KEY_FILE_UNTYPED ? line + 27 : line;

		snprintf(buf, sizeof(buf), bad[i].fmt, arg, line + 28);
		test_write_file(dir, "k.pub", buf);
		memset(pk, 0, sizeof(pk));
		cr_assert_eq(eg_pubkey_read(path, pk), bad[i].want, "[%s]: %s", buf,
			     eg_key_err_name(eg_pubkey_read(path, pk)));
		cr_assert(sodium_is_zero(pk, sizeof(pk)));
	}
	snprintf(path, sizeof(path), "%s/missing.pub", dir);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_FILE_MISSING);
}

Test(keyset, directory_loads_all_or_nothing, .init = make_dir, .fini = remove_dir)
{
	struct eg_keyset ks;
	struct test_key a, b, c;
	char line[LINE_MAX_], bad[4096], want[4096];

	test_key(&a, 1);
	test_key(&b, 2);
	test_key(&c, 3);
	pub_line(a.pk, line);
	test_write_file(dir, "a.pub", line);
	pub_line(b.pk, line);
	test_write_file(dir, "b.pub", line);
	pub_line(c.pk, line);
	test_write_file(dir, "c.pub.disabled", line); /* not *.pub */
	test_write_file(dir, ".c.pub", line);	      /* hidden */

	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_OK);
	cr_assert_eq(ks.n, 2);
	cr_assert_eq(ks.generation, 1);
	cr_assert_not_null(eg_keyset_find(&ks, a.kid));
	cr_assert_not_null(eg_keyset_find(&ks, b.kid));
	cr_assert_null(eg_keyset_find(&ks, c.kid));

	/* One bad file: nothing changes, and the file is named. */
	test_write_file(dir, "b2.pub",
			"execgate-ed25519-public-v1 "
			"0000000000000000000000000000000000000000000000000000000000000000\n");
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_ZERO);
	snprintf(want, sizeof(want), "%s/b2.pub", dir);
	cr_assert_str_eq(bad, want);
	cr_assert_eq(ks.n, 2);
	cr_assert_eq(ks.generation, 1);

	/* The same key twice. */
	pub_line(a.pk, line);
	test_write_file(dir, "b2.pub", line);
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_DUPLICATE);
	cr_assert_eq(ks.n, 2);

	/* A reload replaces the set whole and moves the generation on. */
	snprintf(want, sizeof(want), "%s/b2.pub", dir);
	unlink(want);
	snprintf(want, sizeof(want), "%s/a.pub", dir);
	unlink(want);
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_OK);
	cr_assert_eq(ks.n, 1);
	cr_assert_eq(ks.generation, 2);
	cr_assert_null(eg_keyset_find(&ks, a.kid));

	/* A single file. */
	snprintf(want, sizeof(want), "%s/b.pub", dir);
	cr_assert_eq(eg_keyset_load_path(&ks, want, bad, sizeof(bad)), EG_KEY_OK);
	cr_assert_eq(ks.n, 1);
	cr_assert_eq(ks.generation, 3);

	/* A directory that is called *.pub is not a key file. */
	snprintf(want, sizeof(want), "%s/sub.pub", dir);
	cr_assert_eq(mkdir(want, 0700), 0);
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_FILE_NOT_REGULAR);
	cr_assert_str_eq(bad, want);
	rmdir(want);

	/* A seed dropped into the key directory fails the whole load. */
	test_write_file(dir, "s.pub",
			"execgate-ed25519-secret-v1 "
			"4512dce88c67e3c14d9d112a296cc5c8efee6504d4987c1d3049ab627d9e8aa0\n");
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_FILE_SECRET);
	snprintf(want, sizeof(want), "%s/s.pub", dir);
	cr_assert_str_eq(bad, want);
	cr_assert_eq(ks.n, 1);
	cr_assert_eq(ks.generation, 3);
}

Test(keyset, empty_directory_empties_missing_one_fails, .init = make_dir, .fini = remove_dir)
{
	struct eg_keyset ks;
	struct test_key k;
	char bad[4096], path[4096];

	/* Removing the last key is a valid state: it verifies nothing. */
	test_key(&k, 1);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, k.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_load_path(&ks, dir, bad, sizeof(bad)), EG_KEY_OK);
	cr_assert_eq(ks.n, 0);
	cr_assert_eq(ks.generation, 2);
	cr_assert_null(eg_keyset_find(&ks, k.kid));
	snprintf(path, sizeof(path), "%s/nope", dir);
	cr_assert_eq(eg_keyset_load_path(&ks, path, bad, sizeof(bad)), EG_KEY_FILE_MISSING);
	cr_assert_str_eq(bad, path);
	cr_assert_eq(ks.generation, 2);
}

Test(keyset, error_names)
{
	cr_assert_str_eq(eg_key_err_name(EG_KEY_SMALL_ORDER), "small-order-key");
	cr_assert_str_eq(eg_key_err_name(EG_KEY_FILE_CRLF), "key-file-crlf");
	cr_assert_str_eq(eg_key_err_name((enum eg_key_err)99), "unknown");
}
