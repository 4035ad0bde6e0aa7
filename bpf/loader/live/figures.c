// SPDX-License-Identifier: BSD-2-Clause
/* Figures of a process's kernel record shared by every view. live/figures.h */
#include <string.h>
#include "live/figures.h"

const struct infl_anomaly infl_anomalies[] = {
#define ANOMALY_ROW(field, kind, inexact, text)                                                \
	{ #field, text, INFL_AN_##kind, inexact, offsetof(struct infl_proc, field) },
	INFL_ANOMALIES(ANOMALY_ROW)
#undef ANOMALY_ROW
};
const size_t infl_nanomalies = sizeof(infl_anomalies) / sizeof(infl_anomalies[0]);

__u64 infl_anomaly_count(const struct infl_proc *p, size_t i)
{
	__u64 v;

	memcpy(&v, (const char *)p + infl_anomalies[i].off, sizeof(v));
	return v;
}

bool proc_inexact(const struct infl_proc *p)
{
	for (size_t i = 0; i < infl_nanomalies; i++)
		if (infl_anomalies[i].inexact && infl_anomaly_count(p, i))
			return true;
	return false;
}

void composition_totals(const struct infl_cell cells[INFL_MAX_CLASSES][INFL_SLOTS],
			const __u64 owners[INFL_SLOTS], struct composition_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < INFL_MAX_CLASSES; c++) {
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
bool composition_row_shown(const struct composition_totals *t, const __u64 owners[INFL_SLOTS], int s)
{
	return t->slot[s].count || t->slot[s].bytes || owners[s];
}

void json_composition(struct json *j, const struct infl_cell cells[INFL_MAX_CLASSES][INFL_SLOTS],
		      const __u64 owners[INFL_SLOTS], const struct infl_names *n)
{
	struct composition_totals t;

	composition_totals(cells, owners, &t);
	json_key(j, "stages");
	json_arr(j);
	for (int s = 0; s < INFL_SLOTS; s++) {
		if (!composition_row_shown(&t, owners, s))
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(n, s));
		json_kv_opt_u64(j, "id", s != INFL_SLOT_NONE, s);
		json_kv_u64(j, "owners", owners[s]);
		json_kv_u64(j, "bufs", t.slot[s].count);
		json_kv_u64(j, "bytes", t.slot[s].bytes);
		json_key(j, "classes");
		json_obj(j);
		for (int c = 0; c < INFL_MAX_CLASSES; c++) {
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
	for (int c = 0; c < INFL_MAX_CLASSES; c++) {
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
