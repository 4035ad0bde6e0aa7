// SPDX-License-Identifier: BSD-2-Clause
/* A snapshot's memory. live/snapshot.h */
#include <stdlib.h>
#include "live/snapshot.h"

void snapshot__free(struct snapshot *snap)
{
	free(snap->procs);
	snap->procs = NULL;
	snap->nprocs = 0;
}
