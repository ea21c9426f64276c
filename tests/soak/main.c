// SPDX-License-Identifier: Apache-2.0
/* soak: the three long runs of `make soak`, or their ~60-second version
 * (`--quick`, in `make check`). Prints one table and exits non-zero on any
 * wrong decision, torn record, unguarded connect or failed check.
 *
 *   soak --bin DIR [--quick] [--kills N] [--storm-seconds S] [--flip-rate HZ]
 *
 * Full: 1 000 kills, 60 s of storm at 1 000 flips/s, both maps at
 * capacity. Quick: kills for at most 15 s (it prints how many), 38 s of
 * storm at the same rate, the same capacity run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "soak.h"

static void usage(void)
{
	fprintf(stderr, "usage: soak --bin DIR [--quick] [--kills N] [--kill-seconds S] "
			"[--storm-seconds S] [--flip-rate HZ] [--only kill|storm|capacity]\n");
	exit(2);
}

static void print(const struct soak_result *r, size_t n)
{
	printf("\n%-9s %8s %10s %6s %6s %5s %9s %6s %8s\n", "scenario", "runs", "decisions",
	       "wrong+", "wrong-", "torn", "unguarded", "other", "seconds");
	for (size_t i = 0; i < n; i++)
		printf("%-9s %8lu %10lu %6lu %6lu %5lu %9lu %6lu %8.1f%s\n", r[i].name, r[i].runs,
		       r[i].decisions, r[i].wrong_allow, r[i].wrong_deny, r[i].torn, r[i].unguarded,
		       r[i].other, r[i].seconds, r[i].failed ? "  FAILED" : "");
	printf("(runs: kills / epoch flips / map entries written; wrong+: wrong allows; "
	       "wrong-: wrong denies; other: an errno that is neither 0 nor EPERM)\n");
	for (size_t i = 0; i < n; i++)
		printf("%s: %s\n", r[i].name, r[i].note);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"bin", required_argument, NULL, 'b'},
	    {"quick", no_argument, NULL, 'q'},
	    {"kills", required_argument, NULL, 'k'},
	    {"kill-seconds", required_argument, NULL, 'K'},
	    {"storm-seconds", required_argument, NULL, 's'},
	    {"flip-rate", required_argument, NULL, 'r'},
	    {"only", required_argument, NULL, 'o'},
	    {0},
	};
	struct soak_result r[3];
	const char *bin = NULL, *only = NULL;
	unsigned kills = 1000, rate = 1000;
	double kill_seconds = 3600, storm_seconds = 60;
	bool quick = false, bad = false;
	size_t n = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			bin = optarg;
			break;
		case 'q':
			quick = true;
			kill_seconds = 15;
			storm_seconds = 38;
			break;
		case 'k':
			kills = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'K':
			kill_seconds = atof(optarg);
			break;
		case 's':
			storm_seconds = atof(optarg);
			break;
		case 'r':
			rate = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			only = optarg;
			break;
		default:
			usage();
		}
	}
	if (!bin || optind != argc || !rate || storm_seconds <= 0)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	soak_setup(bin);
	printf("soak (%s): pins %s, cgroup %s\n", quick ? "quick" : "full", se.pin_dir, se.cgroup);

	memset(r, 0, sizeof(r));
	if (!only || !strcmp(only, "kill")) {
		printf("kill: up to %u kills, at most %.0f s ...\n", kills, kill_seconds);
		soak_kill(&r[n++], kills, kill_seconds);
	}
	if (!only || !strcmp(only, "storm")) {
		printf("storm: %.0f s at %u flips/s ...\n", storm_seconds, rate);
		soak_storm(&r[n++], storm_seconds, rate);
	}
	if (!only || !strcmp(only, "capacity")) {
		printf("capacity: eg_records to %u, eg_grants to %u ...\n", EG_MAX_SANDBOXES,
		       EG_MAX_GRANTS);
		soak_capacity(&r[n++]);
	}
	print(r, n);
	for (size_t i = 0; i < n; i++)
		bad |= r[i].failed || r[i].wrong_allow || r[i].wrong_deny || r[i].torn ||
		       r[i].unguarded || r[i].other || !r[i].decisions;
	printf("soak: %s\n", bad ? "FAILED" : "ok");
	soak_cleanup();
	return bad ? 1 : 0;
}
