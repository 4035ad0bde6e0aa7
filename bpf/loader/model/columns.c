// SPDX-License-Identifier: BSD-2-Clause
/* Columns of a timeline for the drawn views. model/columns.h */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "model/columns.h"

struct col_pass {
	struct column *cur;
	__u64 rss; /* the latest sample */
};

static void on_rss(void *ctx, __u64 ts, __u64 bytes)
{
	struct col_pass *cp = ctx;

	(void)ts;
	cp->rss = bytes;
	if (cp->cur && bytes > cp->cur->rss)
		cp->cur->rss = bytes;
}

static void take(struct column *c, const struct tl_state *st)
{
	c->total = st->total_bytes;
	c->bufs = st->total_bufs;
	c->at = st->ts;
	for (unsigned k = 0; k < INFL_CLASSES; k++)
		c->cls[k] = tl_state__class_bytes(st, k);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		c->slot[s] = tl_state__slot_bytes(st, s);
		c->owners_at[s] = st->owners[s];
	}
}

int columns__build(const struct tl_proc *p, __u64 t0, __u64 t1, int n, struct column *col)
{
	struct col_pass cp = { 0 };
	struct tl_cursor c;
	__u64 span = t1 > t0 ? t1 - t0 : 0;
	int err;

	memset(col, 0, n * sizeof(*col));
	err = tl_cursor__init_hooks(&c, p, NULL, on_rss, &cp);
	if (err)
		return err;
	/* what happened before the first column is carried into it */
	tl_cursor__until(&c, t0 ? t0 - 1 : 0);
	tl_cursor__rss_at(&c, t0 ? t0 - 1 : 0);
	for (int i = 0; i < n; i++) {
		struct column *k = &col[i];

		k->t0 = t0 + (__u64)((double)span * i / n);
		k->t1 = i == n - 1 ? t1 : t0 + (__u64)((double)span * (i + 1) / n);
		take(k, c.st);
		k->at = k->t0;
		k->rss = cp.rss;
		cp.cur = k;
		for (unsigned s = 0; s < INFL_SLOTS; s++)
			k->owners_max[s] = c.st->owners[s];
		while (tl_cursor__next_ts(&c) < k->t1 ||
		       (i == n - 1 && tl_cursor__next_ts(&c) != UINT64_MAX &&
			tl_cursor__next_ts(&c) <= t1)) {
			tl_cursor__step(&c);
			for (unsigned s = 0; s < INFL_SLOTS; s++)
				if (c.st->owners[s] > k->owners_max[s])
					k->owners_max[s] = c.st->owners[s];
			if (c.st->total_bytes > k->total)
				take(k, c.st);
		}
		tl_cursor__rss_at(&c, k->t1 - 1);
		cp.cur = NULL;
	}
	err = c.err;
	tl_cursor__free(&c);
	return err;
}
