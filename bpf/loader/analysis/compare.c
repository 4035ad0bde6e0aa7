// SPDX-License-Identifier: BSD-2-Clause
/* compare's figures and verdict (analysis/compare.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "model/clock.h"
#include "analysis/compare.h"
#include "util/grow.h"

/* what a metric is computed over */
enum over { ONE, CLASSES, SLOTS, STAGES, KINDS };

struct spec {
	const char *group;
	const char *name; /* ONE: the name; otherwise a prefix ("" or "from ") */
	enum cmp_unit unit;
	enum over over;
	double (*fn)(const struct cmp_run *r, unsigned k);
};

static __u64 peak_slot(const struct tl_proc *p, unsigned s)
{
	__u64 v = 0;

	for (unsigned c = 0; c < INFL_CLASSES; c++)
		v += p->peak[c][s].bytes;
	return v;
}

static double share(const struct tl_proc *p, unsigned s)
{
	unsigned __int128 all = 0;

	for (unsigned k = 0; k < INFL_SLOTS; k++)
		all += tl_proc__slot_byte_ns(p, k);
	return all ? (double)tl_proc__slot_byte_ns(p, s) / (double)all : NAN;
}

static double f_program(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return r->p->first_ts && r->p->t_end > r->p->first_ts ? r->p->t_end - r->p->first_ts : NAN;
}

static double f_active(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return tl_proc__active_ns(r->p);
}

static double f_recording(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return r->tl->t_end - r->rec->start_mono_ns;
}

static double f_events(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return r->p->nev;
}

static double f_oom(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return r->p->oom.ns ? 1 : 0;
}

static double f_peak(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return r->p->peak_bytes;
}

static double f_rss_peak(const struct cmp_run *r, unsigned k)
{
	(void)k;
	return r->p->nrss ? r->p->rss_peak : NAN;
}

static double f_class_peak(const struct cmp_run *r, unsigned c)
{
	return r->p->class_peak[c];
}

static double f_at_peak(const struct cmp_run *r, unsigned s)
{
	return peak_slot(r->p, s);
}

static double f_slot_peak(const struct cmp_run *r, unsigned s)
{
	return r->p->slot_peak[s];
}

static double f_owners_peak(const struct cmp_run *r, unsigned s)
{
	return r->p->owners_peak[s];
}

static double f_byte_s(const struct cmp_run *r, unsigned s)
{
	return (double)tl_proc__slot_byte_ns(r->p, s) / 1e9;
}

static double f_share(const struct cmp_run *r, unsigned s)
{
	return share(r->p, s);
}

static double f_dwell(const struct cmp_run *r, unsigned s)
{
	double d = tl_proc__mean_dwell_ms(r->p, s);

	return d < 0 ? NAN : d * 1e6;
}

static double f_rate(const struct cmp_run *r, unsigned k)
{
	return tl_proc__per_minute(r->p, r->p->retired_by_kind[k]);
}

static double f_done(const struct cmp_run *r, unsigned k)
{
	return r->p->retired_by_kind[k];
}

static double f_lost(const struct cmp_run *r, unsigned k)
{
	__u64 l = r->p->lost_kernel + r->p->lost_user;

	(void)k;
	return l > r->p->seq_gaps ? l : r->p->seq_gaps;
}

static const struct spec specs[] = {
	{ "run", "program (first event to exit)", U_NS, ONE, f_program },
	{ "run", "active (first to last event)", U_NS, ONE, f_active },
	{ "run", "recording", U_NS, ONE, f_recording },
	{ "run", "event records", U_COUNT, ONE, f_events },
	{ "run", "events lost", U_COUNT, ONE, f_lost },
	{ "run", "killed by the OOM killer", U_COUNT, ONE, f_oom },
	{ "peak", "tracked total", U_BYTES, ONE, f_peak },
	{ "peak", "RSS", U_BYTES, ONE, f_rss_peak },
	{ "peak per class (each its own)", "", U_BYTES, CLASSES, f_class_peak },
	{ "at the peak, bytes by stage", "", U_BYTES, SLOTS, f_at_peak },
	{ "each stage's own peak", "", U_BYTES, SLOTS, f_slot_peak },
	{ "most owners at once, by stage", "", U_COUNT, STAGES, f_owners_peak },
	{ "memory x time by stage", "", U_BYTE_S, SLOTS, f_byte_s },
	{ "share of memory x time", "", U_SHARE, SLOTS, f_share },
	{ "mean dwell by stage", "", U_NS, STAGES, f_dwell },
	{ "owners done per minute, by kind", "from ", U_RATE, KINDS, f_rate },
	{ "owners done, by kind", "from ", U_COUNT, KINDS, f_done },
};

/* ---- collecting ---- */

static struct cmp_metric *metric_add(struct cmp *c)
{
	struct cmp_metric *m = grow_array(c->m, &c->cap, c->nm, sizeof(*c->m));

	if (!m) {
		c->err = -ENOMEM;
		return NULL;
	}
	c->m = m;
	memset(&c->m[c->nm], 0, sizeof(c->m[0]));
	return &c->m[c->nm++];
}

/* mean, smallest and largest of one side; NAN when no run has the figure */
static void side_stats(const struct cmp_side *sd, const struct spec *sp, unsigned k, double *mean,
		       double *lo, double *hi)
{
	double sum = 0;
	int n = 0;

	*lo = *hi = NAN;
	for (size_t i = 0; i < sd->n; i++) {
		double v = sp->fn(&sd->runs[i], k);

		if (isnan(v))
			continue;
		sum += v;
		*lo = n && *lo < v ? *lo : v;
		*hi = n && *hi > v ? *hi : v;
		n++;
	}
	*mean = n ? sum / n : NAN;
}

/* the ids a spec runs over: every class or stage some run of either side used */
static __u32 used(const struct cmp *c, enum over over)
{
	__u32 m = 0;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].n; i++) {
			const struct tl_proc *p = c->side[s].runs[i].p;

			if (over == CLASSES)
				m |= tl_proc__used_classes(p);
			else if (over == SLOTS)
				m |= tl_proc__used_slots(p);
			else if (over == STAGES)
				m |= tl_proc__used_slots(p) & ((1u << INFL_MAX_STAGES) - 1);
			else
				for (unsigned k = 0; k < INFL_SLOTS; k++)
					m |= (p->retired_by_kind[k] || p->started_by_kind[k]) << k;
		}
	return over == ONE ? 1 : m;
}

static void collect(struct cmp *c)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		const struct spec *sp = &specs[i];
		__u32 ids = used(c, sp->over);

		for (unsigned k = 0; k < INFL_SLOTS; k++) {
			struct cmp_metric *m;

			if (!(ids & (1u << k)))
				continue;
			if (sp->over == CLASSES && k >= INFL_CLASSES)
				continue;
			m = metric_add(c);
			if (!m)
				return;
			m->group = sp->group;
			m->unit = sp->unit;
			if (sp->over == ONE)
				snprintf(m->name, sizeof(m->name), "%s", sp->name);
			else
				snprintf(m->name, sizeof(m->name), "%s%s", sp->name, sp->over == CLASSES ?
					 names__cls(c->names, k) : names__stage(c->names, k));
			for (int s = 0; s < 2; s++)
				side_stats(&c->side[s], sp, k, &m->v[s], &m->lo[s], &m->hi[s]);
			if (sp->over == ONE)
				break;
		}
	}
}

/* ---- the verdict ---- */

static const struct cmp_metric *find(const struct cmp *c, const char *group, const char *name)
{
	for (size_t i = 0; i < c->nm; i++)
		if (!strcmp(c->m[i].group, group) && !strcmp(c->m[i].name, name))
			return &c->m[i];
	return NULL;
}

static struct cmp_finding *finding(struct cmp *c, const char *what, const char *name, double a,
				   double b)
{
	struct cmp_finding *f;

	f = grow_array(c->f, &c->fcap, c->nf, sizeof(*c->f));
	if (!f) {
		c->err = -ENOMEM;
		return NULL;
	}
	c->f = f;
	f = &c->f[c->nf++];
	memset(f, 0, sizeof(*f));
	f->what = what;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->a = a;
	f->b = b;
	f->spread = NAN;
	f->beyond = -1;
	return f;
}

static void say(struct cmp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct cmp *c, const char *fmt, ...)
{
	size_t len = strlen(c->verdict);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->verdict + len, sizeof(c->verdict) - len, fmt, ap);
	va_end(ap);
}

static double pct(double a, double b)
{
	return a ? (b - a) / a * 100 : NAN;
}

static const char *signed_bytes(char buf[FMT_LEN], double d)
{
	char b[FMT_LEN];

	snprintf(buf, FMT_LEN, "%s%s", d < 0 ? "-" : "+", fmt_bytes(b, (__u64)fabs(d)));
	return buf;
}

static double delta(const struct cmp_metric *m)
{
	return (isnan(m->v[1]) ? 0 : m->v[1]) - (isnan(m->v[0]) ? 0 : m->v[0]);
}

/* the members of `group` whose change is at least `min`, largest change first, at most 3 */
static int movers(const struct cmp *c, const char *group, double min, const struct cmp_metric **out)
{
	const struct cmp_metric *cand[INFL_SLOTS + INFL_CLASSES];
	int n = 0;

	for (size_t i = 0; i < c->nm && n < (int)(sizeof(cand) / sizeof(cand[0])); i++)
		if (!strcmp(c->m[i].group, group) && fabs(delta(&c->m[i])) >= min)
			cand[n++] = &c->m[i];
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fabs(delta(cand[j])) > fabs(delta(cand[j - 1])); j--) {
			const struct cmp_metric *t = cand[j];

			cand[j] = cand[j - 1];
			cand[j - 1] = t;
		}
	n = n < 3 ? n : 3;
	memcpy(out, cand, n * sizeof(*out));
	return n;
}

static void verdict_peak(struct cmp *c)
{
	const struct cmp_metric *pk = find(c, "peak", "tracked total"), *mv[3];
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN];
	int n;

	if (!pk || isnan(pk->v[0]) || isnan(pk->v[1]))
		return;
	finding(c, "peak", "tracked total", pk->v[0], pk->v[1]);
	say(c, "peak      %s -> %s (%+.0f%%)", fmt_bytes(b1, pk->v[0]), fmt_bytes(b2, pk->v[1]),
	    pct(pk->v[0], pk->v[1]));
	/* the stages and classes that made the change: at least 5% of A's peak */
	n = movers(c, "at the peak, bytes by stage", pk->v[0] * 0.05, mv);
	for (int i = 0; i < n; i++) {
		finding(c, "stage", mv[i]->name, mv[i]->v[0], mv[i]->v[1]);
		say(c, "%s%s %s -> %s (%s)", i ? ", " : "; at it ", mv[i]->name,
		    fmt_bytes(b1, mv[i]->v[0]), fmt_bytes(b2, mv[i]->v[1]),
		    signed_bytes(b3, mv[i]->v[1] - mv[i]->v[0]));
	}
	n = movers(c, "peak per class (each its own)", pk->v[0] * 0.05, mv);
	for (int i = 0; i < n; i++) {
		finding(c, "class", mv[i]->name, mv[i]->v[0], mv[i]->v[1]);
		say(c, "%s%s %s", i ? ", " : "; by class ", mv[i]->name,
		    signed_bytes(b3, mv[i]->v[1] - mv[i]->v[0]));
	}
	say(c, "\n");
}

/* stages whose share of memory x time fell or rose by 10 points or more */
static void verdict_moved(struct cmp *c)
{
	bool any[2] = { false, false };

	for (int dir = 0; dir < 2; dir++) {
		for (size_t i = 0; i < c->nm; i++) {
			const struct cmp_metric *m = &c->m[i], *most;
			double a = isnan(m->v[0]) ? 0 : m->v[0], b = isnan(m->v[1]) ? 0 : m->v[1];
			char own[64] = "";

			if (strcmp(m->group, "share of memory x time") ||
			    (dir == 0 ? a - b : b - a) < 0.10)
				continue;
			most = find(c, "most owners at once, by stage", m->name);
			if (most && !isnan(most->v[0]) && !isnan(most->v[1]))
				snprintf(own, sizeof(own), ", at most %.0f owner%s at once (was %.0f)",
					 most->v[1], most->v[1] == 1 ? "" : "s", most->v[0]);
			finding(c, dir ? "moved_to" : "moved_from", m->name, a, b);
			say(c, "%s%s %.0f%% -> %.0f%%%s", any[dir] ? "; " :
			    dir ? "          to " : "moved     memory x time from ", m->name, a * 100,
			    b * 100, own);
			any[dir] = true;
		}
		if (any[dir])
			say(c, "\n");
	}
	if (!any[0] && !any[1])
		say(c, "moved     no stage's share of memory x time changed by 10 points or more\n");
}

static void verdict_throughput(struct cmp *c)
{
	bool one = c->side[0].n < 2 || c->side[1].n < 2;

	for (size_t i = 0; i < c->nm; i++) {
		const struct cmp_metric *m = &c->m[i];
		struct cmp_finding *f;
		double sa, sb, change;

		if (strcmp(m->group, "owners done per minute, by kind") || isnan(m->v[0]) ||
		    isnan(m->v[1]) || !m->v[0])
			continue;
		change = (m->v[1] - m->v[0]) / m->v[0];
		f = finding(c, "throughput", m->name + 5, m->v[0], m->v[1]);
		if (!f)
			return;
		say(c, "throughput owners %s done per minute: %.1f -> %.1f (%+.1f%%)", m->name,
		    m->v[0], m->v[1], change * 100);
		if (one) {
			say(c, "\n");
			continue;
		}
		/* the run-to-run spread: half the range between runs, relative to the mean */
		sa = (m->hi[0] - m->lo[0]) / 2 / m->v[0];
		sb = m->v[1] ? (m->hi[1] - m->lo[1]) / 2 / m->v[1] : 0;
		f->spread = sa > sb ? sa : sb;
		f->beyond = fabs(change) > f->spread;
		say(c, ", %s the run-to-run spread of +-%.1f%%%s\n", f->beyond ? "beyond" : "within",
		    f->spread * 100, f->beyond ? (change < 0 ? ": slower" : ": faster") :
		    ": no change shown");
	}
	if (one)
		say(c, "          one run per side: no spread between runs to judge a change "
		       "against;\n          give several recordings per side (A1 A2 vs B1 B2)\n");
}

static void verdict_program(struct cmp *c)
{
	const struct cmp_metric *m = find(c, "run", "program (first event to exit)");
	char b1[FMT_LEN], b2[FMT_LEN];

	if (!m || isnan(m->v[0]) || isnan(m->v[1]))
		return;
	say(c, "program   %s -> %s from the first event to the exit (%+.1f%%)\n",
	    fmt_duration(b1, (__u64)m->v[0]), fmt_duration(b2, (__u64)m->v[1]),
	    pct(m->v[0], m->v[1]));
}

/* the OOM killer first: a run it killed did not finish its work */
static void verdict_oom(struct cmp *c)
{
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < c->side[s].n; i++) {
			const struct cmp_run *r = &c->side[s].runs[i];
			char b[FMT_LEN];

			if (!r->p->oom.ns)
				continue;
			finding(c, "oom_kill", r->file, clock__rel_s(r->p->oom.ns, r->tl->t0),
				r->p->oom.tracked_bytes);
			say(c, "OOM       %c: %s was killed by the kernel's OOM killer at %.3f s, "
			    "holding %s tracked\n", 'A' + s, r->file,
			    clock__rel_s(r->p->oom.ns, r->tl->t0),
			    fmt_bytes(b, r->p->oom.tracked_bytes));
		}
	}
}

int cmp__build(struct cmp *c)
{
	c->names = &c->side[0].runs[0].rec->names;
	collect(c);
	verdict_oom(c);
	verdict_peak(c);
	verdict_moved(c);
	verdict_throughput(c);
	verdict_program(c);
	return c->err;
}

void cmp__free(struct cmp *c)
{
	free(c->m);
	free(c->f);
	c->m = NULL;
	c->f = NULL;
}
