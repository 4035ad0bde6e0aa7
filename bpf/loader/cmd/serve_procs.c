// SPDX-License-Identifier: BSD-2-Clause
/* What serve remembers of its processes, bounded. cmd/serve_procs.h */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/serve_procs.h"
#include "util/procfs.h"

/* as much of a command line as a label carries */
#define SERVE_COMMAND_MAX 1024

static void ident_free(struct prom_identity *id)
{
	free((char *)id->binary);
	free((char *)id->comm);
	free((char *)id->command);
}

/* Read once, while the process runs: after its exit /proc has nothing left to say. Out of
 * memory leaves the strings NULL: an identity with empty labels, never a failed scrape. */
static void ident_read(struct prom_identity *id, __u32 pid, const char *binary)
{
	char exe[PATH_MAX] = "", comm[64] = "", cmd[SERVE_COMMAND_MAX] = "";

	memset(id, 0, sizeof(*id));
	id->pid = pid;
	/* another user's process without CAP_SYS_PTRACE (inflight dropped it): the binary
	 * it was found by */
	if (proc_exe_name(pid, exe, sizeof(exe)) && !proc_gone(pid))
		snprintf(exe, sizeof(exe), "%s", binary ? binary : "");
	proc_read(pid, "comm", comm, sizeof(comm));
	proc_read(pid, "cmdline", cmd, sizeof(cmd));
	if (proc_start_time(pid, &id->start_time_s))
		id->start_time_s = 0;
	id->binary = strdup(exe);
	id->comm = strdup(comm);
	id->command = strdup(cmd);
}

int serve_idents__sync(struct serve_idents *t, const struct snapshot *snap, const char *binary)
{
	struct prom_identity *next = calloc(snap->nprocs ? snap->nprocs : 1, sizeof(*next));
	int i = 0;

	if (!next)
		return -ENOMEM;
	/* a merge of two pid-sorted lists */
	for (int k = 0; k < snap->nprocs; k++) {
		__u32 pid = snap->procs[k].pid;

		while (i < t->n && t->id[i].pid < pid)
			ident_free(&t->id[i++]); /* gone from the maps */
		if (i < t->n && t->id[i].pid == pid)
			next[k] = t->id[i++];
		else
			ident_read(&next[k], pid, binary);
	}
	while (i < t->n)
		ident_free(&t->id[i++]);
	free(t->id);
	t->id = next;
	t->n = snap->nprocs;
	return 0;
}

void serve_idents__free(struct serve_idents *t)
{
	for (int i = 0; i < t->n; i++)
		ident_free(&t->id[i]);
	free(t->id);
	t->id = NULL;
	t->n = 0;
}

static void count_older(struct serve_retired *r, const struct proc_snapshot *ps)
{
	r->older++;
	if (ps->st.peak_bytes >= r->older_peak) {
		r->older_peak = ps->st.peak_bytes;
		r->older_peak_pid = ps->pid;
	}
}

void serve_retired__add(struct serve_retired *r, const struct proc_snapshot *ps)
{
	if (!r->keep)
		r->keep = calloc(SERVE_RETIRED_KEEP, sizeof(*r->keep));
	if (!r->keep) {
		count_older(r, ps);
		return;
	}
	if (r->n == SERVE_RETIRED_KEEP) { /* the oldest kept one becomes a count */
		count_older(r, &r->keep[r->head]);
		r->keep[r->head] = *ps;
		r->head = (r->head + 1) % SERVE_RETIRED_KEEP;
		return;
	}
	r->keep[(r->head + r->n) % SERVE_RETIRED_KEEP] = *ps;
	r->n++;
}

void serve_retired__free(struct serve_retired *r)
{
	free(r->keep);
	r->keep = NULL;
	r->n = 0;
}

int serve_retired__prepend(const struct serve_retired *r, struct snapshot *snap)
{
	struct proc_snapshot *all;

	if (!r->n)
		return 0;
	all = malloc((snap->nprocs + r->n) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (int i = 0; i < r->n; i++)
		all[i] = r->keep[(r->head + i) % SERVE_RETIRED_KEEP];
	memcpy(all + r->n, snap->procs, snap->nprocs * sizeof(*all));
	free(snap->procs);
	snap->procs = all;
	snap->nprocs += r->n;
	return 0;
}
