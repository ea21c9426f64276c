// SPDX-License-Identifier: Apache-2.0
/* docs/operators.md §2 lists what `execgate load` pins. This compares that
 * list with the pins of a real load on this kernel: every map (a load pins
 * them all), and the links and pinned programs of the tiers this load
 * attached (its probe record says which), each name exactly, nothing
 * missing and nothing extra. A pin added to the code, or renamed, fails
 * here until the reference says so. */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/tiers/tcp_tier.h"
#include "loader/tiers/tier.h"

/* Whatever this kernel offers: the list is checked against what loaded. */
static void setup(void)
{
	kh_setup_shared_requiring(NULL);
}

TestSuite(pin_layout, .init = setup, .fini = kh_teardown, .timeout = 60);

#define MAX_PINS 64

struct pins {
	char name[MAX_PINS][320];
	size_t n;
};

static void add(struct pins *p, const char *name)
{
	cr_assert_lt(p->n, MAX_PINS, "more than %d pins", MAX_PINS);
	snprintf(p->name[p->n++], sizeof(p->name[0]), "%s", name);
}

static bool has(const struct pins *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], name))
			return true;
	return false;
}

static void list_dir(const char *dir, const char *prefix, struct pins *p)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char name[320];

	cr_assert_not_null(d, "%s: cannot list", dir);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "links"))
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, e->d_name);
		add(p, name);
	}
	closedir(d);
}

static bool offered(const struct eg_probe_record *r, const char *tier)
{
	const struct eg_tier_ops *t = eg_tier_find(tier);

	cr_assert_not_null(t, "docs/operators.md §2 names tier %s, which the loader has not", tier);
	return r->offered[eg_tier_index(t)];
}

/* Whether the pin a documented line names is expected here: maps always;
 * links by their [tag]: the tier, and for a TCP revoker the kernel feature
 * the loader probes for it. */
static bool expected(const char *line, bool link, const struct eg_probe_record *r)
{
	char why[256];

	if (!link)
		return true;
	if (strstr(line, "[cgroup]"))
		return offered(r, "cgroup");
	if (strstr(line, "[lsm]"))
		return offered(r, "lsm");
	if (strstr(line, "[tcp, bpf_sock_destroy]"))
		return offered(r, "tcp") && !eg_tcp_iter_probe(why, sizeof(why));
	if (strstr(line, "[tcp, SOCK_DESTROY]"))
		return offered(r, "tcp") && !eg_tcp_diag_probe(why, sizeof(why));
	if (strstr(line, "[tcp]"))
		return offered(r, "tcp");
	cr_assert(!strchr(line, '['), "docs/operators.md §2: unknown tag in: %s", line);
	return true;
}

/* The documented pins: the tree between "/sys/fs/bpf/execgate/" and the
 * state dir, in §2's first code block. */
static size_t documented(struct pins *want, struct pins *all, const struct eg_probe_record *r)
{
	FILE *f = fopen("docs/operators.md", "r");
	bool section = false, tree = false, link = false;
	char line[512], exe[400];
	ssize_t n;

	/* Not run from the source tree (a VM's shell): next to the build dir. */
	if (!f && (n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		snprintf(line, sizeof(line), "%s/../docs/operators.md", dirname(exe));
		f = fopen(line, "r");
	}
	cr_assert_not_null(f, "docs/operators.md (run from the source tree)");
	while (fgets(line, sizeof(line), f)) {
		char *e, name[64], full[80];

		if (!strncmp(line, "## ", 3))
			section = !strncmp(line, "## 2. Pin layout", 16);
		if (!section)
			continue;
		if (!strncmp(line, "/sys/fs/bpf/execgate/", 21)) {
			tree = true;
			continue;
		}
		if (!tree)
			continue;
		if (line[0] == '/' || !strncmp(line, "```", 3))
			break;
		e = strstr(line, "── ");
		if (!e)
			continue; /* a continuation line */
		if (sscanf(e + strlen("── "), "%63s", name) != 1)
			continue;
		if (!strcmp(name, "links/")) {
			link = true;
			continue;
		}
		snprintf(full, sizeof(full), "%s%s", link ? "links/" : "", name);
		cr_assert(!has(all, full), "docs/operators.md §2 lists %s twice", full);
		add(all, full);
		if (expected(line, link, r))
			add(want, full);
	}
	fclose(f);
	return all->n;
}

/* guarantees: none */
Test(pin_layout, the_documented_pins_are_the_pinned_ones)
{
	static struct pins want, all, have;
	struct eg_probe_record r;
	char links[256];
	size_t checked = 0;

	eg_probe_record_read(kh.state_dir, &r);
	cr_assert(r.present, "load kept no probe record: %s", r.missing);
	cr_assert_geq(documented(&want, &all, &r), 30, "docs/operators.md §2: %zu pins", all.n);
	list_dir(kh.pin_dir, "", &have);
	snprintf(links, sizeof(links), "%s/links", kh.pin_dir);
	list_dir(links, "links/", &have);
	for (size_t i = 0; i < have.n; i++)
		cr_expect(has(&want, have.name[i]), "%s is pinned, docs/operators.md §2 %s",
			  have.name[i],
			  has(&all, have.name[i]) ? "says not on this kernel" : "does not list it");
	for (size_t i = 0; i < want.n; i++, checked++)
		cr_expect(has(&have, want.name[i]),
			  "docs/operators.md §2 lists %s, not pinned here", want.name[i]);
	cr_assert_geq(checked, 16, "only %zu pins expected here", checked);
}
