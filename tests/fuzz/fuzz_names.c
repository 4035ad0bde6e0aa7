// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: the names a traced binary carries. Every input goes to names__parse (the note
 * descriptor, never NUL-terminated for us); an input that is an ELF file also goes through
 * the ELF readers (names__from_elf and the stapsdt reader usdt_notes__read) from a memfd.
 * Beyond "no crash, no out-of-bounds read" (ASan), the results must keep their promises:
 * a parsed note yields identifier names, unique, within INFL_NAME_LEN; a refused one leaves
 * the numeric defaults, never half a table. A broken promise aborts.
 * Built for libFuzzer (`make fuzz`) and as a corpus replay in the suite.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "contract/names.h"
#include "contract/usdt_notes.h"

#define PROMISE(cond)                                                                            \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_names: broken promise: %s (%s:%d)\n", #cond,       \
				__FILE__, __LINE__);                                             \
			abort();                                                                 \
		}                                                                                \
	} while (0)

static bool identifier(const char *s)
{
	size_t len = strnlen(s, INFL_NAME_LEN);

	if (len == 0 || len >= INFL_NAME_LEN || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static void check_table(const struct infl_names *n, int err)
{
	struct infl_names fresh;

	names__init(&fresh);
	if (err) {
		PROMISE(!memcmp(n, &fresh, sizeof(fresh))); /* all or nothing */
		return;
	}
	PROMISE(n->contract_version >= 1);
	PROMISE(!n->provider[0] || identifier(n->provider));
	PROMISE((n->entry_mask & ~n->stage_declared) == 0);
	PROMISE((n->terminal_mask & ~n->stage_declared) == 0);
	PROMISE((n->entry_mask & n->terminal_mask) == 0);
	for (int a = 0; a < INFL_MAX_CLASSES; a++) {
		if (!(n->cls_declared >> a & 1))
			continue;
		PROMISE(identifier(n->cls[a]));
		for (int b = 0; b < a; b++)
			PROMISE(!(n->cls_declared >> b & 1) || strcmp(n->cls[a], n->cls[b]));
	}
	for (int a = 0; a < INFL_MAX_STAGES; a++) {
		if (!(n->stage_declared >> a & 1))
			continue;
		PROMISE(identifier(n->stage[a]));
		for (int b = 0; b < a; b++)
			PROMISE(!(n->stage_declared >> b & 1) || strcmp(n->stage[a], n->stage[b]));
	}
}

/* What every renderer relies on, whatever the table holds. */
static void check_lookups(const struct infl_names *n)
{
	for (unsigned id = 0; id <= INFL_SLOT_NONE + 1; id++) {
		const char *c = names__cls(n, id), *s = names__stage(n, id);

		PROMISE(c && strnlen(c, INFL_NAME_LEN) < INFL_NAME_LEN && c[0]);
		PROMISE(s && strnlen(s, INFL_NAME_LEN) < INFL_NAME_LEN && s[0]);
	}
}

static void check_elf(const uint8_t *data, size_t size)
{
	struct infl_names n;
	struct usdt_notes un;
	int sites[USDT_CONTRACT_PROBES], bad[USDT_CONTRACT_PROBES];
	char path[64];
	int fd = memfd_create("fuzz_elf", MFD_CLOEXEC), err;

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = names__from_elf(path, &n);
	check_table(&n, err);
	check_lookups(&n);
	if (usdt_notes__read(path, &un) == 0) {
		for (size_t i = 0; i < un.n; i++) {
			const struct usdt_probe *p = &un.probes[i];

			PROMISE(p->provider && p->name && p->args);
			PROMISE(p->nargs >= 0);
		}
		err = usdt_notes__contract(&un, sites, bad);
		PROMISE(err == 0 || err == -ENOENT || err == -EPROTO);
		usdt_notes__free(&un);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct infl_names n;
	int err = names__parse((const char *)data, size, &n);

	PROMISE(err == 0 || err == -EBADMSG);
	check_table(&n, err);
	check_lookups(&n);
	if (size >= 4 && !memcmp(data, "\x7f" "ELF", 4))
		check_elf(data, size);
	return 0;
}
