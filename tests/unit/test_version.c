// SPDX-License-Identifier: Apache-2.0
/* The version macros, the version string, eg_version(), the soname's major
 * (Makefile SOMAJOR) and the newest heading of docs/CHANGELOG.md say the
 * same version: the header once said minor 1 beside "1.2.0". */
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <execgate/execgate.h>

#ifndef EG_TEST_SOMAJOR
#error "the Makefile's unit build passes -DEG_TEST_SOMAJOR=$(SOMAJOR)"
#endif
#ifndef EG_TEST_CHANGELOG
#error "the Makefile's unit build passes -DEG_TEST_CHANGELOG=\"docs/CHANGELOG.md\""
#endif

static void macros_text(char *out, size_t size)
{
	snprintf(out, size, "%d.%d.%d", EXECGATE_VERSION_MAJOR, EXECGATE_VERSION_MINOR,
		 EXECGATE_VERSION_PATCH);
}

Test(version, macros_spell_the_string)
{
	char text[32];

	macros_text(text, sizeof(text));
	cr_assert_str_eq(text, EXECGATE_VERSION, "macros say %s, EXECGATE_VERSION says %s", text,
			 EXECGATE_VERSION);
}

Test(version, library_answers_the_header)
{
	cr_assert_str_eq(eg_version(), EXECGATE_VERSION);
}

Test(version, major_is_the_sonames)
{
	cr_assert_eq(EXECGATE_VERSION_MAJOR, EG_TEST_SOMAJOR,
		     "EXECGATE_VERSION_MAJOR %d, soname libexecgate.so.%d", EXECGATE_VERSION_MAJOR,
		     EG_TEST_SOMAJOR);
}

/* An added call bumps the minor and is written down under the version it
 * ships in: the changelog's first "## " heading is this version's. */
Test(version, changelog_names_it_first)
{
	char line[512], want[64];
	FILE *f = fopen(EG_TEST_CHANGELOG, "r");

	cr_assert_not_null(f, "%s: cannot open", EG_TEST_CHANGELOG);
	snprintf(want, sizeof(want), "## %s", EXECGATE_VERSION);
	while (fgets(line, sizeof(line), f) && strncmp(line, "## ", 3))
		;
	fclose(f);
	cr_assert(!strncmp(line, "## ", 3), "%s: no \"## \" heading", EG_TEST_CHANGELOG);
	cr_assert(!strncmp(line, want, strlen(want)) &&
		      (line[strlen(want)] == ' ' || line[strlen(want)] == ':' ||
		       line[strlen(want)] == '\n'),
		  "%s: newest heading is \"%.*s\", not version %s", EG_TEST_CHANGELOG,
		  (int)strcspn(line, "\n"), line, EXECGATE_VERSION);
}
