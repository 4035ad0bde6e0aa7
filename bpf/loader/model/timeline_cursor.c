// SPDX-License-Identifier: BSD-2-Clause
/*
 * Cursors (model/timeline.h): one process replayed again from the file, in accounting
 * order, with one event of look-ahead; RSS samples come from its kernel RSS events (in the
 * same order) or from the RSS records, kept in a small queue until the cursor's time
 * reaches them. The recorder writes an RSS record only after every event before it, so a
 * sample at or before time t is always read by the time the cursor holds an event after t.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/timeline.h"
#include "model/timeline_replay.h"
#include "recording/rec_format.h"
#include "util/grow.h"

struct tl_cursor_priv {
	struct rec_stream *rs;
	struct tl_order ord;
	struct infl_event la; /* the next event in order, when has_la */
	bool has_la, eof;
	/* RSS */
	struct rec_rss *q; /* records not reached yet, in file order */
	size_t qhead, qn, qcap;
	__u64 rss_ts, rss;
	bool rss_set;
	void (*rss_hook)(void *ctx, __u64 ts, __u64 bytes);
	void *ctx;
};

static bool q_push(struct tl_cursor_priv *c, const struct rec_rss *r)
{
	struct rec_rss *q;

	if (c->qhead && c->qhead == c->qn) {
		c->qhead = c->qn = 0;
	} else if (c->qn == c->qcap && c->qhead) {
		memmove(c->q, c->q + c->qhead, (c->qn - c->qhead) * sizeof(*c->q));
		c->qn -= c->qhead;
		c->qhead = 0;
	}
	q = grow_array(c->q, &c->qcap, c->qn, sizeof(*c->q));
	if (!q)
		return false;
	c->q = q;
	c->q[c->qn++] = *r;
	return true;
}

static void rss_set(struct tl_cursor_priv *c, __u64 ts, __u64 v)
{
	if (c->rss_set && ts < c->rss_ts)
		return;
	c->rss_set = true;
	c->rss_ts = ts;
	c->rss = v;
	if (c->rss_hook)
		c->rss_hook(c->ctx, ts, v);
}

/* Reads until the next event in order is known (or the end). */
static void fill(struct tl_cursor *cur)
{
	struct tl_cursor_priv *c = cur->priv;

	while (!c->has_la) {
		struct rec_item it;
		int k;

		if (tl_order__pop(&c->ord, c->eof, &c->la)) {
			c->has_la = true;
			return;
		}
		if (c->eof)
			return;
		k = rec_stream__next(c->rs, &it);
		if (k <= 0) {
			if (k < 0)
				cur->err = k;
			c->eof = true;
			continue;
		}
		if (it.is_rss) {
			/* the series the timeline chose: kernel samples, or statm ones */
			if ((it.rss.source == REC_RSS_KERNEL) == cur->p->rss_kernel &&
			    !q_push(c, &it.rss))
				cur->err = -ENOMEM;
		} else if (tl_order__push(&c->ord, &it.ev)) {
			cur->err = -ENOMEM;
			c->eof = true;
		}
	}
}

int tl_cursor__init_hooks(struct tl_cursor *c, const struct tl_proc *p,
			  const struct tl_hooks *hooks, void (*rss)(void *ctx, __u64 ts,
								    __u64 bytes),
			  void *ctx)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->priv = calloc(1, sizeof(*c->priv));
	c->rp = tl_replay__new(p->entry_mask, p->terminal_mask, recording__dup_free(p->rec), hooks,
			       ctx);
	if (!c->priv || !c->rp || rec_stream__open(p->rec, p->pid, &c->priv->rs)) {
		tl_cursor__free(c);
		return -ENOMEM;
	}
	c->priv->rss_hook = rss;
	c->priv->ctx = ctx;
	c->st = &c->rp->st;
	return 0;
}

int tl_cursor__init(struct tl_cursor *c, const struct tl_proc *p)
{
	return tl_cursor__init_hooks(c, p, NULL, NULL, NULL);
}

void tl_cursor__free(struct tl_cursor *c)
{
	if (c->priv) {
		rec_stream__free(c->priv->rs);
		tl_order__free(&c->priv->ord);
		free(c->priv->q);
		free(c->priv);
	}
	tl_replay__free(c->rp);
	c->rp = NULL;
	c->priv = NULL;
}

/* RSS records with a time at or before t become the current sample. */
static void rss_reach(struct tl_cursor_priv *c, __u64 t)
{
	while (c->qhead < c->qn && c->q[c->qhead].mono_ns <= t) {
		rss_set(c, c->q[c->qhead].mono_ns, c->q[c->qhead].bytes);
		c->qhead++;
	}
}

bool tl_cursor__step(struct tl_cursor *c)
{
	struct tl_cursor_priv *pv = c->priv;

	fill(c);
	if (!pv->has_la)
		return false;
	pv->has_la = false;
	rss_reach(pv, pv->la.ts_ns);
	tl_replay__apply(c->rp, &pv->la);
	if (pv->la.type == INFL_EV_RSS && c->p->rss_kernel)
		rss_set(pv, pv->la.ts_ns, pv->la.arg0);
	return true;
}

__u64 tl_cursor__next_ts(struct tl_cursor *c)
{
	struct tl_cursor_priv *pv = c->priv;

	fill(c);
	if (!pv->has_la)
		return UINT64_MAX;
	return pv->la.ts_ns > c->rp->st.ts ? pv->la.ts_ns : c->rp->st.ts;
}

void tl_cursor__until(struct tl_cursor *c, __u64 t)
{
	while (tl_cursor__next_ts(c) <= t)
		tl_cursor__step(c);
}

__u64 tl_cursor__rss_at(struct tl_cursor *c, __u64 t)
{
	fill(c);
	rss_reach(c->priv, t);
	return c->priv->rss_set && c->priv->rss_ts <= t ? c->priv->rss : 0;
}

void tl_cursor__rss_drain(struct tl_cursor *c)
{
	while (tl_cursor__step(c))
		;
	rss_reach(c->priv, UINT64_MAX);
}

void tl_cursor__sample(struct tl_cursor *c, __u64 t, __u64 step, struct tl_sample *out)
{
	__u64 end = t + step, max = c->rp->st.total_bytes;

	while (tl_cursor__next_ts(c) < end) {
		tl_cursor__step(c);
		if (c->rp->st.total_bytes > max)
			max = c->rp->st.total_bytes;
	}
	out->at_end = c->st;
	out->max_bytes = max;
}
