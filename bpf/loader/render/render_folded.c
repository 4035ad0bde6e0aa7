// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format folded`: one `stage;class VALUE` line per (stage, class) that held memory,
 * VALUE being memory x time in byte-milliseconds (the integral of the bytes it held over
 * the recording, truncated to an integer). flamegraph.pl and speedscope draw it: the widest
 * frame is where memory sat longest. Buffers of no owner (or before its first stage) are
 * under the stage "(none)". One process: --pid, else the primary one.
 */
#include "contract/names.h"
#include "render/render.h"

/* frame names cannot hold the separators of the format */
static void frame(FILE *f, const char *name)
{
	for (; *name; name++)
		fputc(*name == ';' || *name == ' ' || *name == '\n' ? '_' : *name, f);
}

int render__folded(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct tl_proc *p = render__proc(tl, o);
	const struct infl_names *nm = &tl->rec->names;

	for (unsigned s = 0; p && s < INFL_SLOTS; s++) {
		for (unsigned c = 0; c < INFL_CLASSES; c++) {
			__u64 byte_ms = (__u64)(p->byte_ns[c][s] / 1000000u);

			if (!byte_ms)
				continue;
			frame(f, names__stage(nm, s));
			fputc(';', f);
			frame(f, names__cls(nm, c));
			fprintf(f, " %llu\n", (unsigned long long)byte_ms);
		}
	}
	return render__finish(f);
}
