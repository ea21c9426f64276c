// SPDX-License-Identifier: Apache-2.0
/* libgit2, loaded by Criterion only when it needs it.
 *
 * The test programs link Criterion statically (the Makefile's
 * CRITERION_LIBS): Criterion starts every test case as a fresh exec of the
 * test program (BoxFort's worker), and libcriterion.so pulls in 16 shared
 * libraries through libgit2 (krb5, mbedtls, libssh2, OpenSSL's libcrypto,
 * ...). Under the VM matrix's emulated CPU each of them costs every case
 * its loading and relocation (docs/bench/2026-12-07-criterion-static.md).
 * Criterion uses libgit2 for one thing, the diff under a failed string
 * assertion: the three functions below are all the libgit2 symbols
 * libcriterion.a leaves undefined (nm -u). These definitions take the
 * place of libgit2's: init and shutdown do nothing until a diff is asked
 * for, and the first diff opens the real library and forwards to it, so a
 * failure prints the same diff as before. */
#include <dlfcn.h>
#include <git2.h>

typedef int (*diff_buffers_fn)(const void *, size_t, const char *, const void *, size_t,
			       const char *, const git_diff_options *, git_diff_file_cb,
			       git_diff_binary_cb, git_diff_hunk_cb, git_diff_line_cb, void *);

static diff_buffers_fn real_diff_buffers;
static int (*real_shutdown)(void);

static int load(void)
{
	int (*init)(void);
	void *lib;

	if (real_diff_buffers)
		return 0;
	lib = dlopen("libgit2.so." LIBGIT2_SOVERSION, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return -1;
	init = (int (*)(void))dlsym(lib, "git_libgit2_init");
	real_shutdown = (int (*)(void))dlsym(lib, "git_libgit2_shutdown");
	real_diff_buffers = (diff_buffers_fn)dlsym(lib, "git_diff_buffers");
	if (!init || !real_shutdown || !real_diff_buffers || init() < 0) {
		real_diff_buffers = NULL;
		return -1;
	}
	return 0;
}

int git_libgit2_init(void)
{
	return 1; /* the count libgit2 returns after a first init */
}

int git_libgit2_shutdown(void)
{
	return real_shutdown ? real_shutdown() : 0;
}

int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path,
		     const void *new_buffer, size_t new_len, const char *new_as_path,
		     const git_diff_options *options, git_diff_file_cb file_cb,
		     git_diff_binary_cb binary_cb, git_diff_hunk_cb hunk_cb,
		     git_diff_line_cb line_cb, void *payload)
{
	if (load())
		/* libgit2 is libcriterion-dev's dependency, so this does not
		 * happen; if it did, Criterion 2.4 would crash on the error, and
		 * the case would still fail, as a crash (tried). */
		return -1;
	return real_diff_buffers(old_buffer, old_len, old_as_path, new_buffer, new_len, new_as_path,
				 options, file_cb, binary_cb, hunk_cb, line_cb, payload);
}
