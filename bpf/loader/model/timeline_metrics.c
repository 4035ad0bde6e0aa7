// SPDX-License-Identifier: BSD-2-Clause
/* Figures of a replayed process that reports and comparisons both show. model/timeline.h */
#include "model/timeline.h"
#include "recording/rec_reader.h"

__u32 tl_proc__used_classes(const struct tl_proc *p)
{
	__u32 m = 0;

	for (int c = 0; c < INFL_CLASSES; c++)
		if (p->class_peak[c])
			m |= 1u << c;
	return m;
}

__u32 tl_proc__used_slots(const struct tl_proc *p)
{
	__u32 m = 0;

	for (int s = 0; s < INFL_SLOTS; s++)
		if (p->owners_peak[s] || p->slot_peak[s])
			m |= 1u << s;
	for (int c = 0; c < INFL_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++)
			if (p->byte_ns[c][s] || p->peak[c][s].count)
				m |= 1u << s;
	return m;
}

const char *timeline__command(const struct timeline *tl, const struct tl_proc *p)
{
	const struct recording *r = tl->rec;

	if (p && p->pid == r->target_pid && r->cmdline[0])
		return r->cmdline;
	if (p && p->cmdline[0])
		return p->cmdline;
	if (!p && r->cmdline[0])
		return r->cmdline;
	return r->binary;
}

unsigned __int128 tl_proc__slot_byte_ns(const struct tl_proc *p, unsigned slot)
{
	unsigned __int128 sum = 0;

	for (int c = 0; c < INFL_CLASSES; c++)
		sum += p->byte_ns[c][slot];
	return sum;
}

double tl_proc__mean_dwell_ms(const struct tl_proc *p, unsigned stage)
{
	if (stage >= INFL_MAX_STAGES || !p->dwell_count[stage])
		return -1;
	return p->dwell_sum_ns[stage] / 1e6 / p->dwell_count[stage];
}

__u64 tl_proc__active_ns(const struct tl_proc *p)
{
	return p->last_ts > p->first_ts ? p->last_ts - p->first_ts : 0;
}

double tl_proc__per_minute(const struct tl_proc *p, __u64 count)
{
	__u64 ns = tl_proc__active_ns(p);

	return ns ? count * 60e9 / ns : 0;
}
