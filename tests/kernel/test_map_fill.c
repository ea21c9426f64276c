// SPDX-License-Identifier: Apache-2.0
/* eg_map_fill(), which `status` and /metrics show for every hash map, on a
 * real kernel map: exact when nothing changes, and under churn within the
 * inserts and deletes made during the count. The churn is what a busy
 * gateway does to eg_inet_tags (a socket's tag comes and goes). A count by
 * get_next_key restarted from the first bucket whenever the key it stood
 * on was deleted, and read 115 873 entries in a 65 536-entry map holding
 * 60 000. The map is an anonymous one of the tag map's shape: no pins, no
 * cgroup. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "abi/abi.h"
#include "loader/maps/maps.h"

#define FILL_CAP  65536
#define FILL_HELD 60000

TestSuite(map_fill, .timeout = 120);

static int fill_map(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct eg_inet_tag v;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "eg_fill_test", sizeof(__u64), sizeof(v), FILL_CAP,
			    &o);
	cr_assert_geq(fd, 0, "bpf_map_create: %s", strerror(errno));
	memset(&v, 0, sizeof(v));
	for (__u64 k = 1; k <= FILL_HELD; k++)
		cr_assert_eq(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0, "insert %llu: %s",
			     (unsigned long long)k, strerror(errno));
	return fd;
}

static int count_cb(const void *key, const void *value, void *arg)
{
	(void)key;
	(void)value;
	++*(int *)arg;
	return 0;
}

/* guarantees: none */
Test(map_fill, a_quiet_map_is_counted_exactly)
{
	unsigned entries = 1, cap = 0;
	int fd = fill_map(), seen = 0;

	cr_assert_eq(eg_map_fill(fd, &entries, &cap), 0);
	cr_expect_eq(entries, FILL_HELD, "entries %u, want %u", entries, FILL_HELD);
	cr_expect_eq(cap, FILL_CAP);
	cr_assert_eq(eg_map_walk(fd, 0, count_cb, &seen), 0);
	cr_expect_eq(seen, FILL_HELD, "the walk saw %d elements", seen);
	close(fd);
}

/* An array has no entries to count (its capacity is all there), and the
 * walker refuses anything but a plain hash: a per-CPU value would overrun
 * its buffers. */
/* guarantees: none */
Test(map_fill, another_map_type_has_no_fill_and_is_not_walked)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	unsigned entries = 1, cap = 0;
	int fd, seen = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "eg_fill_arr", 4, 8, 16, &o);
	cr_assert_geq(fd, 0, "bpf_map_create: %s", strerror(errno));
	cr_expect_eq(eg_map_fill(fd, &entries, &cap), 0);
	cr_expect_eq(entries, 0);
	cr_expect_eq(cap, 16);
	cr_expect_eq(eg_map_walk(fd, 0, count_cb, &seen), -EINVAL);
	cr_expect_eq(seen, 0);
	close(fd);
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "eg_fill_pcpu", 8, 8, 16, &o);
	cr_assert_geq(fd, 0, "bpf_map_create: %s", strerror(errno));
	cr_expect_eq(eg_map_walk(fd, 0, count_cb, &seen), -EINVAL);
	close(fd);
}

/* Deletes the oldest key and inserts a new one, over and over: the map
 * holds FILL_HELD or FILL_HELD - 1 entries at every instant. */
struct churn {
	int fd;
	atomic_bool stop;
	atomic_ullong ops; /* delete + insert pairs done */
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	__u64 old = 1, fresh = FILL_HELD + 1;
	struct eg_inet_tag v;

	memset(&v, 0, sizeof(v));
	while (!atomic_load(&c->stop)) {
		bpf_map_delete_elem(c->fd, &old);
		old++;
		bpf_map_update_elem(c->fd, &fresh, &v, BPF_NOEXIST);
		fresh++;
		atomic_fetch_add(&c->ops, 1);
	}
	return NULL;
}

/* guarantees: none */
Test(map_fill, under_churn_the_count_stays_within_the_churn_of_the_walk)
{
	struct churn c = {.fd = fill_map()};
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, churn_main, &c), 0);
	while (atomic_load(&c.ops) < 1000)
		usleep(1000); /* the churn is running */
	for (int round = 0; round < 5; round++) {
		unsigned entries = 0, cap = 0;
		unsigned long long before, during;
		int rc;

		before = atomic_load(&c.ops);
		rc = eg_map_fill(c.fd, &entries, &cap);
		/* +1: a pair in flight when the count began */
		during = atomic_load(&c.ops) - before + 1;
		cr_assert_eq(rc, 0, "eg_map_fill: %s", strerror(-rc));
		cr_assert_leq(entries, FILL_CAP);
		/* every element counted was there at the start or inserted
		 * since; every one there at the start and not deleted since was
		 * counted */
		cr_expect_leq(entries, FILL_HELD + during,
			      "round %d: %u entries, at most %u + %llu inserts during the count",
			      round, entries, FILL_HELD, during);
		cr_expect_geq(entries + during, (unsigned long long)FILL_HELD,
			      "round %d: %u entries, at least %u - %llu deletes during the count",
			      round, entries, FILL_HELD, during);
	}
	atomic_store(&c.stop, true);
	pthread_join(t, NULL);
	close(c.fd);
}
