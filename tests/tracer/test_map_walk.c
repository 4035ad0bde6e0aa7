// SPDX-License-Identifier: BSD-2-Clause
/*
 * attach/map_walk.c on a real kernel hash map while its elements come and go: every element
 * present for the whole walk is seen exactly once, one deleted or inserted meanwhile at most
 * once. The deletions are made from the walk's own callback, at the worst moment: the
 * element just seen (a get_next_key walk restarts from the first key when its cursor is
 * gone, and counts everything before it again). Needs root.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "attach/map_walk.h"
#include "check.h"

#define N 2000

struct churn {
	int fd;
	unsigned seen[2 * N];
	unsigned calls;
};

/* Deletes the element just seen and one still ahead, inserts one new: what processes ending
 * and starting during a snapshot do to `procs`. */
static int churn_one(const void *key, const void *value, void *ctx)
{
	struct churn *c = ctx;
	__u32 k = *(const __u32 *)key, v = *(const __u32 *)value, other, fresh;

	if (k < 2 * N)
		c->seen[k]++;
	if (v != k * 3)
		return -EBADMSG;
	c->calls++;
	if (k % 2 == 0 && k < N) {
		bpf_map_delete_elem(c->fd, &k);
		/* an odd key elsewhere in the walk: those 3 mod 4 go, those 1 mod 4 stay */
		other = (k + 195) % N;
		if (other % 4 == 3)
			bpf_map_delete_elem(c->fd, &other);
		fresh = N + k;
		v = fresh * 3;
		bpf_map_update_elem(c->fd, &fresh, &v, BPF_NOEXIST);
	}
	return 0;
}

static int count_one(const void *key, const void *value, void *ctx)
{
	(void)key;
	(void)value;
	++*(unsigned *)ctx;
	return 0;
}

typedef int (*walker)(int fd, size_t ks, size_t vs, __u32 max, map_walk_fn fn, void *ctx);

static void walk_under_churn(walker walk, const char *how)
{
	static struct churn c;
	unsigned once = 0, twice = 0, missed = 0, left = 0;
	int err;

	memset(&c, 0, sizeof(c));
	c.fd = bpf_map_create(BPF_MAP_TYPE_HASH, "walk_test", sizeof(__u32), sizeof(__u32), 2 * N,
			      NULL);
	if (!CHECK(c.fd >= 0, "a hash map of %d elements%s%s", 2 * N, c.fd < 0 ? ": " : "",
		   c.fd < 0 ? strerror(errno) : ""))
		return;
	for (__u32 k = 0; k < N; k++) {
		__u32 v = k * 3;

		bpf_map_update_elem(c.fd, &k, &v, BPF_NOEXIST);
	}
	err = walk(c.fd, sizeof(__u32), sizeof(__u32), 2 * N, churn_one, &c);
	CHECK(err == 0, "%s: the walk ends (%s)", how, strerror(-err));
	for (__u32 k = 0; k < 2 * N; k++) {
		bool kept = k < N && k % 2 == 1 && k % 4 != 3;

		once += c.seen[k] == 1;
		twice += c.seen[k] > 1;
		missed += kept && !c.seen[k];
	}
	CHECK(twice == 0, "%s: no element seen twice (%u were)", how, twice);
	CHECK(missed == 0, "%s: every element present throughout seen (%u missed)", how, missed);
	CHECK(once >= N / 2, "%s: at least the kept half seen once (%u)", how, once);
	err = walk(c.fd, sizeof(__u32), sizeof(__u32), 2 * N, count_one, &left);
	/* left: the odd keys 1 mod 4 (the others of the 3 mod 4 went) and one new per even */
	CHECK(err == 0 && left == N / 4 + N / 2, "%s: a second walk counts what is left (%u, want %u)",
	      how, left, N / 4 + N / 2);
	close(c.fd);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root (bpf(2))\n");
		return 0;
	}
	walk_under_churn(map_walk__all, "batch lookups");
	walk_under_churn(map_walk__by_keys, "key by key (kernels without batch lookups)");
	return check_done();
}
