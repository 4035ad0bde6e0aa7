// SPDX-License-Identifier: BSD-2-Clause
/* A snapshot's memory. model/snapshot.h */
#include <stdlib.h>
#include "model/snapshot.h"

void snapshot__free(struct snapshot *snap)
{
	free(snap->procs);
	snap->procs = NULL;
	snap->nprocs = 0;
}
