// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight list PATH|PID`: what a binary offers a tracer, without attaching anything: its
 * USDT probes (sites, semaphores, argument strings), whether they meet the contract, and
 * the class and stage names of its ".note.inflight". No privileges needed for a file.
 */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/parse.h"
#include "cmd/commands.h"
#include "util/errors.h"
#include "util/sanitize.h"
#include "util/procfs.h"
#include "util/fmt.h"
#include "contract/names.h"
#include "contract/usdt_notes.h"

struct list_args {
	const char *target;
	bool json;
};

static const struct argp_option list_options[] = {
	{ "json", 'j', NULL, 0, "One JSON object instead of text (docs/json.md)", 0 },
	{ 0 },
};

static error_t list_parse(int key, char *arg, struct argp_state *state)
{
	struct list_args *la = state->input;

	switch (key) {
	case 'j':
		la->json = true;
		return 0;
	case ARGP_KEY_ARG:
		if (la->target)
			infl_die(EXIT_USAGE, "give one PATH or PID", "unexpected argument '%s'", arg);
		la->target = arg;
		return 0;
	case ARGP_KEY_END:
		if (!la->target)
			infl_die(EXIT_USAGE, "see inflight list --help", "no PATH or PID given");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char list_doc[] =
	"Show the USDT probes of an executable (or of the process PID), whether they meet the "
	"inflight probe contract, and the buffer class and stage names it carries.\v"
	"EXAMPLES:\n"
	"  inflight list build/prover\n"
	"  inflight list 4242            the binary of process 4242\n"
	"  inflight list --json /proc/4242/root/usr/bin/prover\n"
	"\n"
	"EXIT STATUS: 0 when the contract is complete, 5 when its probes are missing or\n"
	"malformed, 6 no such process, 12 no such file or not an ELF file.";

static const struct argp list_argp = { list_options, list_parse, "PATH|PID", list_doc,
				       NULL,	     NULL,	 NULL };

static int cmp_probe(const void *pa, const void *pb)
{
	const struct usdt_probe *a = pa, *b = pb;
	int c = strcmp(a->provider, b->provider);

	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = a->loc < b->loc ? -1 : a->loc > b->loc;
	return c;
}

static void print_text(const char *shown, const struct usdt_notes *un, const int *sites,
		       const int *bad, int contract, const struct infl_names *n, int names_err)
{
	fputs("binary    ", stdout);
	san_fputs(stdout, shown);
	fputc('\n', stdout);
	printf("contract ");
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		printf(" %s: %d site%s%s%s", usdt_contract[i].name, sites[i], sites[i] == 1 ? "" : "s",
		       bad[i] ? " (wrong arguments)" : "", i < USDT_CONTRACT_PROBES - 1 ? "," : "");
	printf(" (%s)\n", contract == 0 ? "complete" : contract == -ENOENT ? "incomplete" :
							       "argument count mismatch");
	if (names_err == -ENOENT)
		printf("names     none in the binary: classes and stages are numbered\n");
	else if (names_err)
		printf("names     malformed .note.inflight: classes and stages are numbered\n");
	else
		printf("names     contract version %d, provider %s\n", n->contract_version,
		       n->provider[0] ? n->provider : "-");
	if (names_err || !n->terminal_mask)
		printf("warning   no stage is terminal: owners never end and fill --max-owners; "
		       "name them\n          with --terminal-stages\n");

	printf("\n%-20s %-10s %-10s %s\n", "PROBE", "SITE", "SEMAPHORE", "ARGUMENTS");
	if (!un->n)
		printf("(none)\n");
	for (size_t k = 0; k < un->n; k++) {
		const struct usdt_probe *p = &un->probes[k];
		char pn[256], sema[24];

		snprintf(pn, sizeof(pn), "%s:%s", p->provider, p->name);
		snprintf(sema, sizeof(sema), p->sema ? "0x%llx" : "-", (unsigned long long)p->sema);
		printf("%-20s 0x%-8llx %-10s %s\n", pn, (unsigned long long)p->loc, sema, p->args);
	}
	if (names_err)
		return;
	printf("\n%5s  %s\n", "CLASS", "NAME");
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (n->cls_declared & (1u << c))
			printf("%5d  %s\n", c, n->cls[c]);
	printf("\n%5s  %-24s %s\n", "STAGE", "NAME", "ROLE");
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		if (!(n->stage_declared & (1u << s)))
			continue;
		printf("%5d  %-24s %s\n", s, n->stage[s],
		       n->entry_mask & (1u << s)      ? "entry" :
		       n->terminal_mask & (1u << s) ? "terminal" :
						      "-");
	}
}

static void print_json(const char *shown, pid_t pid, const struct usdt_notes *un,
		       const int *sites, const int *bad, int contract, const struct infl_names *n,
		       int names_err)
{
	struct json j;
	char hex[24];

	json_init(&j, stdout);
	json_obj(&j);
	json_kv_str(&j, "binary", shown);
	json_key(&j, "pid");
	if (pid)
		json_u64(&j, pid);
	else
		json_null(&j);
	json_key(&j, "contract");
	json_obj(&j);
	json_kv_str(&j, "provider", USDT_CONTRACT_PROVIDER);
	json_kv_bool(&j, "complete", contract == 0);
	json_key(&j, "probes");
	json_arr(&j);
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		json_obj(&j);
		json_kv_str(&j, "name", usdt_contract[i].name);
		json_kv_u64(&j, "nargs", usdt_contract[i].nargs);
		json_kv_u64(&j, "sites", sites[i]);
		json_kv_u64(&j, "bad_args", bad[i]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_key(&j, "probes");
	json_arr(&j);
	for (size_t k = 0; k < un->n; k++) {
		const struct usdt_probe *p = &un->probes[k];

		json_obj(&j);
		json_kv_str(&j, "provider", p->provider);
		json_kv_str(&j, "name", p->name);
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)p->loc);
		json_kv_str(&j, "site", hex);
		json_key(&j, "semaphore");
		if (p->sema) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)p->sema);
			json_str(&j, hex);
		} else {
			json_null(&j);
		}
		json_kv_str(&j, "args", p->args);
		json_kv_u64(&j, "nargs", p->nargs);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kv_bool(&j, "no_terminal_stage", names_err || !n->terminal_mask);
	json_key(&j, "names");
	if (names_err) {
		json_null(&j);
	} else {
		json_obj(&j);
		json_kv_u64(&j, "contract_version", n->contract_version);
		json_kv_str(&j, "provider", n->provider);
		json_key(&j, "classes");
		json_arr(&j);
		for (int c = 0; c < INFL_MAX_CLASSES; c++) {
			if (!(n->cls_declared & (1u << c)))
				continue;
			json_obj(&j);
			json_kv_u64(&j, "id", c);
			json_kv_str(&j, "name", n->cls[c]);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_key(&j, "stages");
		json_arr(&j);
		for (int s = 0; s < INFL_MAX_STAGES; s++) {
			if (!(n->stage_declared & (1u << s)))
				continue;
			json_obj(&j);
			json_kv_u64(&j, "id", s);
			json_kv_str(&j, "name", n->stage[s]);
			json_kv_bool(&j, "entry", n->entry_mask & (1u << s));
			json_kv_bool(&j, "terminal", n->terminal_mask & (1u << s));
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_end_line(&j);
}

int cmd_list(int argc, char **argv)
{
	struct list_args la = { 0 };
	char path[PATH_MAX], shown[PATH_MAX];
	struct usdt_notes un;
	struct infl_names n;
	int sites[USDT_CONTRACT_PROBES], bad[USDT_CONTRACT_PROBES];
	int err, names_err, contract;
	pid_t pid = 0;

	argp_parse(&list_argp, argc, argv, ARGP_IN_ORDER, NULL, &la);
	if (la.target[0] >= '0' && la.target[0] <= '9') {
		if (parse_pid(la.target, &pid))
			return infl_err(EXIT_USAGE, NULL, "'%s': not a process id", la.target);
		if (proc_exe_path(pid, path, sizeof(path)))
			return infl_err(EXIT_NO_PID, "check the pid with ps", "%d: no such process",
					(int)pid);
		if (proc_exe_name(pid, shown, sizeof(shown)))
			snprintf(shown, sizeof(shown), "%s", path);
	} else {
		snprintf(path, sizeof(path), "%s", la.target);
		snprintf(shown, sizeof(shown), "%s", la.target);
	}

	err = usdt_notes__read(path, &un);
	if (err == -ENOEXEC)
		return infl_err(EXIT_NO_BINARY, NULL, "%s: not an ELF file", shown);
	if (err == -EBADMSG)
		return infl_err(EXIT_NO_PROBES, NULL, "%s: malformed .note.stapsdt", shown);
	if (err == -ENOENT && pid)
		return infl_err(EXIT_TARGET_EXITED, NULL, "%d: the process has exited", (int)pid);
	if (err)
		return infl_err(err == -EACCES || err == -EPERM ? EXIT_NOT_PRIV : EXIT_NO_BINARY,
				NULL, "%s: %s", shown, strerror(-err));
	qsort(un.probes, un.n, sizeof(*un.probes), cmp_probe);
	contract = usdt_notes__contract(&un, sites, bad);
	names_err = names__from_elf(path, &n);
	if (names_err && names_err != -ENOENT)
		infl_warn("%s: .note.inflight: %s; classes and stages are numbered", shown,
			  names_err == -EBADMSG ? "malformed" : strerror(-names_err));

	if (la.json)
		print_json(shown, pid, &un, sites, bad, contract, &n, names_err);
	else
		print_text(shown, &un, sites, bad, contract, &n, names_err);
	usdt_notes__free(&un);
	if (infl_flush_output(stdout, "stdout"))
		return EXIT_IO;
	if (contract) {
		char which[128] = "";

		/* the missing probes, or (all present) the ones with a wrong argument count */
		for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
			if (contract == -ENOENT ? !sites[i] && !bad[i] : bad[i] != 0)
				snprintf(which + strlen(which), sizeof(which) - strlen(which), "%s%s:%s",
					 which[0] ? ", " : "", USDT_CONTRACT_PROVIDER,
					 usdt_contract[i].name);
		return infl_err(EXIT_NO_PROBES, "see the probe contract in probes/README.md",
				contract == -ENOENT ? "%s: no %s probe" :
						      "%s: %s: wrong number of arguments",
				shown, which);
	}
	return 0;
}
