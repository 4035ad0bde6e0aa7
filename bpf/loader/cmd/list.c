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
#include <sys/stat.h>
#include "util/parse.h"
#include "cmd/commands.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "util/sanitize.h"
#include "util/procfs.h"
#include "util/fmt.h"
#include "contract/images.h"
#include "contract/names.h"
#include "contract/usdt_binary.h"

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
	"A site inflight cannot use (a note of code the linker removed, an argument it cannot\n"
	"read) is marked skipped, with why: the attach skips it too.\n"
	"\n"
	"EXIT STATUS: 0 when inflight can trace it; 5 when it cannot (probes missing or\n"
	"malformed, a 32-bit file, no semaphores, a provider other than its names note's),\n"
	"6 no such process, 12 no such file or not an ELF file.";

static const struct argp list_argp = { list_options, list_parse, "PATH|PID", list_doc,
				       NULL,	     NULL,	 NULL };

static int cmp_probe(const void *pa, const void *pb)
{
	const struct usdt_probe *a = *(const struct usdt_probe *const *)pa;
	const struct usdt_probe *b = *(const struct usdt_probe *const *)pb;
	int c = strcmp(a->provider, b->provider);

	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = a->loc < b->loc ? -1 : a->loc > b->loc;
	return c;
}

/* The site of note `p` in b's plan, NULL when it is not one of the traced contract probes. */
static const struct usdt_site *site_of(const struct usdt_binary *b, const struct usdt_probe *p)
{
	for (size_t k = 0; k < b->nsites; k++)
		if (b->sites[k].note == p)
			return &b->sites[k];
	return NULL;
}

static void print_contract(const struct usdt_binary *b)
{
	printf("contract ");
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		int skipped = b->dead[i] + b->bad_args[i];

		printf(" %s: %d site%s", usdt_contract[i].name, b->live[i], b->live[i] == 1 ? "" : "s");
		if (skipped)
			printf(" (%d skipped)", skipped);
		if (b->wrong_nargs[i])
			printf(" (wrong arguments)");
		printf("%s", i < USDT_CONTRACT_PROBES - 1 ? "," : "");
	}
	printf(" (%s)\n", b->verdict == USDT_OK ? "complete" : b->verdict == USDT_MISSING ?
		"incomplete" : b->verdict == USDT_BAD_NARGS ? "argument count mismatch" :
		"not traceable");
}

static void print_text(const char *shown, const struct usdt_binary *b,
		       const struct usdt_probe *const *v, size_t nv)
{
	const struct infl_names *n = &b->names;

	fputs("binary    ", stdout);
	san_fputs(stdout, shown);
	fputc('\n', stdout);
	print_contract(b);
	if (b->names_err == -ENOENT)
		printf("names     none in the binary: classes and stages are numbered\n");
	else if (b->names_err)
		printf("names     malformed .note.inflight: classes and stages are numbered\n");
	else
		printf("names     contract version %d, provider %s\n", n->contract_version,
		       n->provider[0] ? n->provider : "-");
	if (usdt_binary__sema_shared(b))
		printf("semaphores share a page with RELRO (LLD/mold layout): -b cannot enable "
		       "them\n");
	if (b->names_err || !n->terminal_mask)
		printf("warning   no stage is terminal: owners never end and fill --max-owners; "
		       "name them\n          with --terminal-stages\n");

	printf("\n%-20s %-10s %-10s %s\n", "PROBE", "SITE", "SEMAPHORE", "ARGUMENTS");
	if (!nv)
		printf("(none)\n");
	for (size_t k = 0; k < nv; k++) {
		const struct usdt_probe *p = v[k];
		const struct usdt_site *st = site_of(b, p);
		char pn[256], sema[24];

		snprintf(pn, sizeof(pn), "%s:%s", p->provider, p->name);
		snprintf(sema, sizeof(sema), p->sema ? "0x%llx" : "-", (unsigned long long)p->sema);
		printf("%-20s 0x%-8llx %-10s %s", pn, (unsigned long long)p->loc, sema, p->args);
		if (st && st->fate != USDT_SITE_LIVE)
			printf("  <- skipped: %s", st->why);
		printf("\n");
	}
	if (b->names_err)
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

static void json_names(struct json *j, const struct usdt_binary *b)
{
	const struct infl_names *n = &b->names;

	json_key(j, "names");
	if (b->names_err) {
		json_null(j);
		return;
	}
	json_obj(j);
	json_kv_u64(j, "contract_version", n->contract_version);
	json_kv_str(j, "provider", n->provider);
	json_key(j, "classes");
	json_arr(j);
	for (int c = 0; c < INFL_MAX_CLASSES; c++) {
		if (!(n->cls_declared & (1u << c)))
			continue;
		json_obj(j);
		json_kv_u64(j, "id", c);
		json_kv_str(j, "name", n->cls[c]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "stages");
	json_arr(j);
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		if (!(n->stage_declared & (1u << s)))
			continue;
		json_obj(j);
		json_kv_u64(j, "id", s);
		json_kv_str(j, "name", n->stage[s]);
		json_kv_bool(j, "entry", n->entry_mask & (1u << s));
		json_kv_bool(j, "terminal", n->terminal_mask & (1u << s));
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void json_contract(struct json *j, const struct usdt_binary *b)
{
	const char *hint;
	char why[512];

	json_key(j, "contract");
	json_obj(j);
	json_kv_str(j, "provider", b->provider);
	json_kv_bool(j, "complete", b->verdict == USDT_OK);
	json_key(j, "why");
	if (b->verdict == USDT_OK) {
		json_null(j);
	} else {
		usdt_binary__why(b, why, sizeof(why), &hint);
		json_str(j, why);
	}
	json_kv_bool(j, "semaphores_share_relro_page", usdt_binary__sema_shared(b));
	json_key(j, "probes");
	json_arr(j);
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		json_obj(j);
		json_kv_str(j, "name", usdt_contract[i].name);
		json_kv_u64(j, "nargs", usdt_contract[i].nargs);
		json_kv_u64(j, "sites", b->live[i]);
		json_kv_u64(j, "skipped", b->dead[i] + b->bad_args[i]);
		json_kv_u64(j, "bad_args", b->wrong_nargs[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

struct mapped_image;
static void json_images(struct json *j, const struct mapped_image *libs, int nlibs,
			const struct infl_names *all);

static void print_json(const char *shown, pid_t pid, const struct usdt_binary *b,
		       const struct usdt_probe *const *v, size_t nv,
		       const struct mapped_image *libs, int nlibs, const struct infl_names *all)
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
	json_contract(&j, b);
	json_key(&j, "probes");
	json_arr(&j);
	for (size_t k = 0; k < nv; k++) {
		const struct usdt_probe *p = v[k];
		const struct usdt_site *st = site_of(b, p);

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
		json_key(&j, "skipped");
		if (st && st->fate != USDT_SITE_LIVE)
			json_str(&j, st->why);
		else
			json_null(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kv_bool(&j, "no_terminal_stage", b->names_err || !b->names.terminal_mask);
	json_names(&j, b);
	if (pid)
		json_images(&j, libs, nlibs, all);
	json_obj_end(&j);
	json_end_line(&j);
}

/*
 * `list PID`: every other file the process maps executable that carries the contract (its
 * libraries), each with its own names, and the names inflight gives them all together
 * (contract/images.h): what a trace of the process shows.
 */
#define LIST_MAX_IMAGES 32

struct mapped_image {
	char path[PATH_MAX];  /* as the process maps it */
	char reach[PATH_MAX + 32]; /* where we read it: through the process's root */
	struct usdt_binary b;
};

static int mapped_images(pid_t pid, const char *exe, struct mapped_image *out, int max)
{
	struct infl_image_key ex = {}, key;
	struct proc_mapping m;
	int n = 0;
	FILE *f = proc_maps_open(pid);

	if (!f)
		return 0;
	proc_image_key(exe, &ex); /* gone: no mapping is taken for the executable */
	while (n < max && proc_maps_next(f, &m)) {
		bool seen = false;

		if (m.perms[2] != 'x' || !m.ino || m.path[0] != '/' || strstr(m.path, " (deleted)"))
			continue;
		for (int i = 0; i < n; i++)
			seen |= !strcmp(out[i].path, m.path);
		snprintf(out[n].reach, sizeof(out[n].reach), "/proc/%d/root%s", (int)pid, m.path);
		if (seen || proc_image_key(out[n].reach, &key) || !proc_mapping_of(&m, &key) ||
		    proc_image_same(&key, &ex))
			continue;
		if (usdt_binary__read(out[n].reach, &out[n].b))
			continue;
		if (out[n].b.verdict != USDT_OK) {
			usdt_binary__free(&out[n].b);
			continue;
		}
		snprintf(out[n].path, sizeof(out[n].path), "%s", m.path);
		n++;
	}
	fclose(f);
	return n;
}

/* The names of the executable (when it carries the contract) and its libraries together. */
static void names_together(const char *shown, const struct usdt_binary *exe,
			   const struct mapped_image *libs, int nlibs, struct infl_names *out)
{
	struct images ims;
	unsigned tag;
	int refused;

	images__init(&ims);
	if (exe->verdict == USDT_OK)
		images__add(&ims, shown, exe, NULL, &tag, &refused);
	for (int i = 0; i < nlibs; i++)
		images__add(&ims, libs[i].path, &libs[i].b, NULL, &tag, &refused);
	images__names(&ims, out);
	images__free(&ims);
}

static void print_images_text(const struct mapped_image *libs, int nlibs,
			      const struct infl_names *all)
{
	for (int i = 0; i < nlibs; i++) {
		const struct infl_names *n = &libs[i].b.names;

		fputs("\nlibrary   ", stdout);
		san_fputs(stdout, libs[i].path);
		fputc('\n', stdout);
		print_contract(&libs[i].b);
		if (libs[i].b.names_err) {
			printf("names     none: classes and stages are numbered\n");
			continue;
		}
		printf("classes  ");
		for (int c = 0; c < INFL_MAX_CLASSES; c++)
			if (n->cls_declared & (1u << c))
				printf(" %d %s", c, n->cls[c]);
		printf("\nstages   ");
		for (int s = 0; s < INFL_MAX_STAGES; s++)
			if (n->stage_declared & (1u << s))
				printf(" %d %s", s, n->stage[s]);
		printf("\n");
	}
	if (!nlibs)
		return;
	printf("\ntraced together, classes and stages are named:\n  classes");
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (all->cls_declared & (1u << c))
			printf(" %s", all->cls[c]);
	printf("\n  stages ");
	for (int s = 0; s < INFL_MAX_STAGES; s++)
		if (all->stage_declared & (1u << s))
			printf(" %s", all->stage[s]);
	printf("\n");
}

static void json_images(struct json *j, const struct mapped_image *libs, int nlibs,
			const struct infl_names *all)
{
	json_key(j, "libraries");
	json_arr(j);
	for (int i = 0; i < nlibs; i++) {
		json_obj(j);
		json_kv_str(j, "binary", libs[i].path);
		json_contract(j, &libs[i].b);
		json_names(j, &libs[i].b);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "traced_names");
	json_obj(j);
	json_key(j, "classes");
	json_arr(j);
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (all->cls_declared & (1u << c))
			json_str(j, all->cls[c]);
	json_arr_end(j);
	json_key(j, "stages");
	json_arr(j);
	for (int s = 0; s < INFL_MAX_STAGES; s++)
		if (all->stage_declared & (1u << s))
			json_str(j, all->stage[s]);
	json_arr_end(j);
	json_obj_end(j);
}

int cmd__list(int argc, char **argv)
{
	struct list_args la = { 0 };
	char path[PATH_MAX], shown[PATH_MAX], why[512];
	static struct mapped_image libs[LIST_MAX_IMAGES];
	const struct usdt_probe **v;
	struct infl_names all;
	struct usdt_binary b;
	const char *hint;
	int err, nlibs = 0;
	pid_t pid = 0;

	suggest_check_options(&list_argp, argc, argv);
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

	err = usdt_binary__read(path, &b);
	if (err == -ENOEXEC)
		return infl_err(EXIT_NO_BINARY, NULL, "%s: not an ELF file", shown);
	if (err == -EBADMSG)
		return infl_err(EXIT_NO_PROBES, NULL, "%s: malformed .note.stapsdt", shown);
	if (err == -ENOENT && pid)
		return infl_err(EXIT_TARGET_EXITED, NULL, "%d: the process has exited", (int)pid);
	if (err)
		return infl_err(err == -EACCES || err == -EPERM ? EXIT_NOT_PRIV : EXIT_NO_BINARY,
				NULL, "%s: %s", shown, strerror(-err));
	v = calloc(b.notes.n ? b.notes.n : 1, sizeof(*v));
	if (!v) {
		usdt_binary__free(&b);
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	}
	for (size_t k = 0; k < b.notes.n; k++)
		v[k] = &b.notes.probes[k];
	qsort(v, b.notes.n, sizeof(*v), cmp_probe);
	if (b.names_err && b.names_err != -ENOENT)
		infl_warn("%s: .note.inflight: %s; classes and stages are numbered", shown,
			  b.names_err == -EBADMSG ? "malformed" : strerror(-b.names_err));

	if (pid)
		nlibs = mapped_images(pid, path, libs, LIST_MAX_IMAGES);
	names_together(shown, &b, libs, nlibs, &all);
	if (la.json) {
		print_json(shown, pid, &b, v, b.notes.n, libs, nlibs, &all);
	} else {
		print_text(shown, &b, v, b.notes.n);
		print_images_text(libs, nlibs, &all);
	}
	free(v);
	usdt_binary__why(&b, why, sizeof(why), &hint);
	err = b.verdict;
	usdt_binary__free(&b);
	for (int i = 0; i < nlibs; i++)
		usdt_binary__free(&libs[i].b);
	if (infl_flush_output(stdout, "stdout"))
		return EXIT_IO;
	/* the same words, and the same exit code, as the attach would give: a process whose
	 * executable lacks the contract is traced for the libraries that carry it */
	return err == USDT_OK || nlibs ? 0 : infl_err(EXIT_NO_PROBES, hint, "%s: %s", shown, why);
}
