// SPDX-License-Identifier: BSD-2-Clause
/*
 * Prints the contract's semaphores of process PID, read where the program reads them (the
 * loader's own attach/sema.c): "buf_alloc=N buf_free=N stage=N". For the tests that check
 * what a tracer leaves behind (tests/t_attach_exit.sh). Exit 1 when they cannot be read.
 *   sema_peek PID [FILE]   FILE: the mapped file carrying the probes (default: its exe)
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/sema.h"

int main(int argc, char **argv)
{
	unsigned short v[USDT_CONTRACT_PROBES];
	__u64 addr[USDT_CONTRACT_PROBES];
	char path[PATH_MAX];
	struct usdt_binary b;
	int err;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: sema_peek PID [FILE]\n");
		return 2;
	}
	if (argc == 3)
		snprintf(path, sizeof(path), "%s", argv[2]);
	else
		snprintf(path, sizeof(path), "/proc/%s/exe", argv[1]);
	err = usdt_binary__read(path, &b);
	err = err ?: sema__read(atoi(argv[1]), path, &b, v, addr);
	if (err) {
		fprintf(stderr, "sema_peek: %s: %s\n", path, strerror(-err));
		return 1;
	}
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		printf("%s%s=%u", i ? " " : "", usdt_contract[i].name, v[i]);
	printf("\n");
	usdt_binary__free(&b);
	return 0;
}
