// SPDX-License-Identifier: BSD-2-Clause
/* The one clock of every output. model/clock.h */
#include "model/clock.h"
#include "model/snapshot.h"
#include "util/fmt.h"

double clock__rel_s(__u64 t, __u64 origin)
{
	/* whole microseconds (truncated, like the Chrome trace's integer timestamps), so that
	 * every output prints the same number for one instant */
	return t >= origin ? (double)((t - origin) / 1000) / 1e6
			   : -(double)((origin - t) / 1000) / 1e6;
}

__u64 clock__origin(const struct snapshot *snap, __u32 *pid)
{
	__u64 o = 0;

	*pid = 0;
	for (int i = 0; i < snap->nprocs; i++) {
		__u64 f = snap->procs[i].st.first_ns;

		if (f && (!o || f < o)) {
			o = f;
			*pid = snap->procs[i].pid;
		}
	}
	return o;
}

void clock__json(struct json *j, __u64 origin, __u32 pid)
{
	json_key(j, "clock");
	json_obj(j);
	json_kv_str(j, "origin", "first probe event");
	json_kv_opt_u64(j, "origin_pid", origin, pid);
	json_kv_opt_u64(j, "origin_mono_ns", origin, origin);
	json_obj_end(j);
}
