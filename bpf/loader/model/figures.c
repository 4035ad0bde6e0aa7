// SPDX-License-Identifier: BSD-2-Clause
/* Figures of a process's kernel record shared by every view. model/figures.h */
#include <stdio.h>
#include <string.h>
#include "model/figures.h"
#include "model/snapshot.h"
#include "usdt_spec.h"
#include "util/errors.h"

const struct infl_anomaly infl_anomalies[] = {
#define ANOMALY_ROW(field, kind, inexact, one, many, what)                                     \
	{ #field, one, many, what, INFL_AN_##kind, inexact, offsetof(struct infl_proc, field) },
	INFL_ANOMALIES(ANOMALY_ROW)
#undef ANOMALY_ROW
};
const size_t infl_nanomalies = sizeof(infl_anomalies) / sizeof(infl_anomalies[0]);
_Static_assert(sizeof(infl_anomalies) / sizeof(infl_anomalies[0]) <= 32,
	       "infl_anomalies_warn_new: one bit each");

__u64 figures__refused_id(__u64 seen, bool *undeclared)
{
	*undeclared = (seen & ~(__u64)0xff) == INFL_ID_REFUSED && (seen & 0xff) < INFL_USDT_IDS;
	return *undeclared ? seen & 0xff : seen;
}

/* " (the latest: 20)" after a count of refused ids, when the kernel kept the id (1.4) */
static void seen_id(char *buf, size_t len, const char *key, const struct infl_proc *p)
{
	__u64 seen = !strcmp(key, "bad_class") ? p->bad_class_seen :
		     !strcmp(key, "bad_stage") ? p->bad_stage_seen : 0;
	size_t at = strlen(buf);
	bool undeclared;
	__u64 id = figures__refused_id(seen, &undeclared);

	if (!seen || at >= len)
		return;
	if (undeclared)
		snprintf(buf + at, len - at, " (the latest: %llu, which its image does not declare "
			 "and another image's %s holds)", (unsigned long long)id,
			 !strcmp(key, "bad_class") ? "class" : "stage");
	else
		snprintf(buf + at, len - at, " (the latest: %llu)", (unsigned long long)id);
}

const char *figures__anomaly_phrase(char *buf, size_t len, size_t i, const struct infl_proc *p)
{
	const struct infl_anomaly *a = &infl_anomalies[i];
	__u64 n = figures__anomaly_count(p, i);

	snprintf(buf, len, "%llu %s %s", (unsigned long long)n, n == 1 ? a->one : a->many, a->what);
	seen_id(buf, len, a->key, p);
	return buf;
}

void figures__anomalies_warn_new(const struct snapshot *snap, __u32 *warned)
{
	char what[192];

	for (int k = 0; k < snap->nprocs; k++)
		for (size_t i = 0; i < infl_nanomalies; i++) {
			__u64 n = figures__anomaly_count(&snap->procs[k].st, i);

			if (!n || (*warned & (1u << i)))
				continue;
			*warned |= 1u << i;
			infl_warn("pid %u: %s (first seen)",
				  snap->procs[k].pid,
				  figures__anomaly_phrase(what, sizeof(what), i, &snap->procs[k].st));
		}
}

__u64 figures__anomaly_count(const struct infl_proc *p, size_t i)
{
	__u64 v;

	memcpy(&v, (const char *)p + infl_anomalies[i].off, sizeof(v));
	return v;
}

bool figures__proc_inexact(const struct infl_proc *p)
{
	for (size_t i = 0; i < infl_nanomalies; i++)
		if (infl_anomalies[i].inexact && figures__anomaly_count(p, i))
			return true;
	return false;
}

void figures__composition_totals(const struct infl_cell cells[INFL_CLASSES][INFL_SLOTS],
			const __u64 owners[INFL_SLOTS], struct composition_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < INFL_CLASSES; c++) {
		for (int s = 0; s < INFL_SLOTS; s++) {
			const struct infl_cell *x = &cells[c][s];

			t->cls[c].count += x->count;
			t->cls[c].bytes += x->bytes;
			t->slot[s].count += x->count;
			t->slot[s].bytes += x->bytes;
			t->all.count += x->count;
			t->all.bytes += x->bytes;
		}
	}
	for (int s = 0; s < INFL_SLOTS; s++)
		t->owners += owners[s];
}

/* Rows: stages in id order, then the no-stage slot; only those holding or owning. */
bool figures__composition_row_shown(const struct composition_totals *t, const __u64 owners[INFL_SLOTS], int s)
{
	return t->slot[s].count || t->slot[s].bytes || owners[s];
}

void figures__json_composition(struct json *j, const struct infl_cell cells[INFL_CLASSES][INFL_SLOTS],
		      const __u64 owners[INFL_SLOTS], const struct infl_names *n)
{
	struct composition_totals t;

	figures__composition_totals(cells, owners, &t);
	json_key(j, "stages");
	json_arr(j);
	for (int s = 0; s < INFL_SLOTS; s++) {
		if (!figures__composition_row_shown(&t, owners, s))
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(n, s));
		json_kv_opt_u64(j, "id", s != INFL_SLOT_NONE, s);
		json_kv_u64(j, "owners", owners[s]);
		json_kv_u64(j, "bufs", t.slot[s].count);
		json_kv_u64(j, "bytes", t.slot[s].bytes);
		json_key(j, "classes");
		json_obj(j);
		for (int c = 0; c < INFL_CLASSES; c++) {
			if (!cells[c][s].count && !cells[c][s].bytes)
				continue;
			json_key(j, names__cls(n, c));
			json_obj(j);
			json_kv_u64(j, "bufs", cells[c][s].count);
			json_kv_u64(j, "bytes", cells[c][s].bytes);
			json_obj_end(j);
		}
		json_obj_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "classes");
	json_obj(j);
	for (int c = 0; c < INFL_CLASSES; c++) {
		if (!t.cls[c].count && !t.cls[c].bytes)
			continue;
		json_key(j, names__cls(n, c));
		json_obj(j);
		json_kv_u64(j, "bufs", t.cls[c].count);
		json_kv_u64(j, "bytes", t.cls[c].bytes);
		json_obj_end(j);
	}
	json_obj_end(j);
}

void figures__leak_candidates(const struct infl_proc *p, const struct infl_names *n,
		     struct leak_candidates *lk)
{
	memset(lk, 0, sizeof(*lk));
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		if (!(n->terminal_mask & (1u << s)))
			continue;
		lk->owners += p->owners[s];
		for (int c = 0; c < INFL_CLASSES; c++) {
			lk->cls[c].count += p->cur[c][s].count;
			lk->cls[c].bytes += p->cur[c][s].bytes;
			lk->all.count += p->cur[c][s].count;
			lk->all.bytes += p->cur[c][s].bytes;
		}
	}
}
