// SPDX-License-Identifier: BSD-2-Clause
/*
 * Attaching the contract's USDT probes site by site (attach/usdt_attach.h). What libbpf's
 * USDT manager would do, without its limits: a dead site or an argument it cannot read is
 * skipped with a warning instead of failing the whole probe, arguments it does not know
 * (RIP-relative, indexed) are read, and the mechanism is ours to choose.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/caps.h"
#include "attach/usdt_attach.h"
#include "util/clock.h"
#include "util/errors.h"
#include "util/procfs.h"

#define WARN_SITES 5 /* skipped sites named one by one per binary; the rest are counted */

struct ua_image {
	struct infl_image_key key; /* the file (util/procfs.h: proc_image) */
	pid_t pid;
	struct bpf_link **links;
	size_t nlinks, cap;
};

struct usdt_attach {
	struct bpf_program *progs[INFL_PROBE__COUNT];
	struct bpf_map *specs_map, *ips_map; /* their fds exist once the object is loaded */
	enum usdt_mech mech;
	bool cookie;
	bool verbose;
	struct infl_usdt_spec *specs; /* what each spec id holds (ids are indexes) */
	__u32 nspecs;
	struct ua_image *images;
	int nimages;
	int sites;
};

/* --- the kernel's features ---------------------------------------------------------------- */

/*
 * uprobe_multi links: Linux 6.6 (0b779b61f651). Probed as libbpf probes it: a link on "/"
 * fails with EBADF where the link type exists; the first kernels filtered by thread instead
 * of process (fixed in 6.9 and the stables: 46ba0e49b642), which a pid of -1 then tells:
 * fixed kernels refuse it at once with EINVAL.
 */
static bool have_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 },			  /* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = BPF_TRACE_UPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	unsigned long off = 0;
	int prog, link, err;
	bool ok = false;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &po);
	if (prog < 0)
		return false;
	lo.uprobe_multi.path = "/";
	lo.uprobe_multi.offsets = &off;
	lo.uprobe_multi.cnt = 1;
	link = bpf_link_create(prog, -1, BPF_TRACE_UPROBE_MULTI, &lo);
	err = link < 0 ? -errno : 0;
	if (link >= 0)
		close(link);
	if (err == -EBADF) {
		lo.uprobe_multi.pid = -1;
		link = bpf_link_create(prog, -1, BPF_TRACE_UPROBE_MULTI, &lo);
		ok = link < 0 && errno == EINVAL;
		if (link >= 0)
			close(link);
	}
	close(prog);
	return ok;
}

static int choose_mech(struct usdt_attach *ua, bool perf_only)
{
	const char *force = getenv("INFLIGHT_ATTACH");
	bool multi = !perf_only && have_uprobe_multi();

	/* bpf_get_attach_cookie: Linux 5.15 (7adfc6c9b315); uprobe_multi links always have it */
	ua->cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					     NULL) == 1;
	ua->mech = multi ? USDT_MECH_MULTI : USDT_MECH_PERF;
	if (!force || !*force)
		return 0;
	if (!strcmp(force, "perf")) {
		ua->mech = USDT_MECH_PERF;
	} else if (!strcmp(force, "multi") && multi) {
		ua->mech = USDT_MECH_MULTI;
	} else {
		return infl_err(EXIT_USAGE, "INFLIGHT_ATTACH is perf, multi (Linux 6.6+) or unset",
				"INFLIGHT_ATTACH=%s: %s", force,
				strcmp(force, "multi") ? "unknown mechanism"
				: perf_only ? "the locked form (--accounting=locked) attaches by "
					      "perf-event uprobes"
					    : "this kernel has no uprobe_multi links");
	}
	return 0;
}

/*
 * The programs are SEC("usdt") for the skeleton, and libbpf makes such a program a
 * uprobe_multi one whenever the kernel has the link type, whatever we ask. Changing the
 * type drops libbpf's section handler (bpf_program__set_type), after which the attach type
 * set here is the one loaded: uprobe_multi, or 0 for perf-event uprobes.
 */
static int prepare_prog(struct bpf_program *p, enum usdt_mech mech)
{
	int err = bpf_program__set_type(p, BPF_PROG_TYPE_TRACEPOINT);

	err = err ?: bpf_program__set_type(p, BPF_PROG_TYPE_KPROBE);
	return err ?: bpf_program__set_expected_attach_type(
			      p, mech == USDT_MECH_MULTI ? BPF_TRACE_UPROBE_MULTI : 0);
}

int usdt_attach__new(const struct usdt_attach_cfg *cfg, struct usdt_attach **out)
{
	struct usdt_attach *ua = calloc(1, sizeof(*ua));
	int err;

	*out = NULL;
	if (!ua)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	err = choose_mech(ua, cfg->perf_only);
	if (err) {
		free(ua);
		return err;
	}
	for (int i = 0; i < INFL_PROBE__COUNT; i++) {
		ua->progs[i] = cfg->progs[i];
		err = err ?: prepare_prog(ua->progs[i], ua->mech);
	}
	for (int i = 0; i < 2; i++)
		if (cfg->tail_progs[i])
			err = err ?: prepare_prog(cfg->tail_progs[i], ua->mech);
	*cfg->have_cookie = ua->cookie;
	ua->verbose = cfg->verbose;
	ua->specs_map = cfg->specs;
	ua->ips_map = cfg->ips;
	/* the IP map is only read without cookies: one entry otherwise */
	if (ua->cookie) {
		err = err ?: bpf_map__set_max_entries(cfg->ips, 1);
		err = err ?: bpf_map__set_max_entries(cfg->ip_cache, 1);
	}
	if (err) {
		free(ua);
		return infl_err(EXIT_BPF, NULL, "prepare the USDT programs: %s", strerror(-err));
	}
	*out = ua;
	return 0;
}

int usdt_attach__read(const char *path, const char *shown, struct usdt_binary *b)
{
	const char *hint;
	char why[512];
	int err = usdt_binary__read(path, b);

	switch (err) {
	case 0:
		break;
	case -ENOENT:
		return infl_err(EXIT_NO_BINARY, "give the path of an executable", "%s: %s", shown,
				strerror(ENOENT));
	case -ENOEXEC:
		return infl_err(EXIT_NO_BINARY, "give the path of an executable",
				"%s: not an ELF file", shown);
	case -EBADMSG:
		return infl_err(EXIT_NO_PROBES, NULL, "%s: malformed .note.stapsdt", shown);
	default:
		return infl_err(EXIT_NO_BINARY, NULL, "%s: %s", shown, strerror(-err));
	}
	if (b->verdict == USDT_OK)
		return 0;
	usdt_binary__why(b, why, sizeof(why), &hint);
	usdt_binary__free(b); /* an error leaves nothing to free */
	return infl_err(EXIT_NO_PROBES, hint, "%s: %s", shown, why);
}

/* --- specs ---------------------------------------------------------------------------------- */

/* The id of `spec` in the spec map, added when new: sites that read their arguments alike
 * share one. -ENOSPC when the map is full. */
static int spec_id(struct usdt_attach *ua, const struct infl_usdt_spec *spec, __u32 *id)
{
	struct infl_usdt_spec *more;

	for (__u32 i = 0; i < ua->nspecs; i++)
		if (!memcmp(&ua->specs[i], spec, sizeof(*spec))) {
			*id = i;
			return 0;
		}
	if (ua->nspecs == INFL_USDT_MAX_SPECS)
		return -ENOSPC;
	more = realloc(ua->specs, (ua->nspecs + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	ua->specs = more;
	if (bpf_map_update_elem(bpf_map__fd(ua->specs_map), &ua->nspecs, spec, BPF_ANY))
		return -errno;
	ua->specs[ua->nspecs] = *spec;
	*id = ua->nspecs++;
	return 0;
}

/* --- images --------------------------------------------------------------------------------- */

static int image_add_link(struct ua_image *im, struct bpf_link *link)
{
	if (im->nlinks == im->cap) {
		size_t cap = im->cap ? 2 * im->cap : 8;
		struct bpf_link **more = realloc(im->links, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		im->links = more;
		im->cap = cap;
	}
	im->links[im->nlinks++] = link;
	return 0;
}

/* A site's spec as its image's: where its class or stage ids go (contract/images.h). */
static void spec_table(struct infl_usdt_spec *spec, const struct image_slots *tab)
{
	memcpy(spec->id_slot, spec->probe == INFL_PROBE_STAGE ? tab->stage : tab->cls,
	       sizeof(spec->id_slot));
}

/* The sites' ids; without cookies, the IP map learns each site's file and offset too. */
static int site_ids(struct usdt_attach *ua, const struct ua_image *im,
		    const struct usdt_binary *b, unsigned tag, const struct image_slots *tab,
		    __u32 *ids)
{
	for (size_t k = 0; k < b->nsites; k++) {
		const struct usdt_site *st = &b->sites[k];
		struct infl_usdt_ip_key key = { .dev = im->key.dev, .ino = im->key.ino,
						.off = st->off };
		struct infl_usdt_spec spec = st->spec;
		int err;

		if (st->fate != USDT_SITE_LIVE)
			continue;
		spec.image = (__u16)tag;
		spec.probe = (__u8)st->probe;
		spec_table(&spec, tab);
		err = spec_id(ua, &spec, &ids[k]);
		if (err)
			return err;
		if (!ua->cookie &&
		    bpf_map_update_elem(bpf_map__fd(ua->ips_map), &key, &ids[k], BPF_ANY))
			return -errno;
	}
	return 0;
}

/* One uprobe_multi link per program, all its live sites at once. */
static int attach_multi(struct usdt_attach *ua, struct ua_image *im, const char *path,
			const struct usdt_binary *b, const __u32 *ids)
{
	size_t n = b->nsites ? b->nsites : 1;
	unsigned long *offs = calloc(n, sizeof(*offs)), *refs = calloc(n, sizeof(*refs));
	__u64 *cookies = calloc(n, sizeof(*cookies));
	int err = offs && refs && cookies ? 0 : -ENOMEM;

	for (int i = 0; !err && i < INFL_PROBE__COUNT; i++) {
		LIBBPF_OPTS(bpf_uprobe_multi_opts, mo, .offsets = offs, .ref_ctr_offsets = refs,
			    .cookies = cookies);
		struct bpf_link *link;

		for (size_t k = 0; k < b->nsites; k++) {
			const struct usdt_site *st = &b->sites[k];

			if (st->fate != USDT_SITE_LIVE || st->probe != i)
				continue;
			offs[mo.cnt] = st->off;
			refs[mo.cnt] = st->sema_off;
			cookies[mo.cnt++] = ids[k];
		}
		if (!mo.cnt)
			continue;
		link = bpf_program__attach_uprobe_multi(ua->progs[i], im->pid, path, NULL, &mo);
		if (!link) {
			err = -errno;
			break;
		}
		err = image_add_link(im, link);
		if (err)
			bpf_link__destroy(link);
		else
			ua->sites += (int)mo.cnt;
	}
	free(offs);
	free(refs);
	free(cookies);
	return err;
}

/* One perf-event uprobe per live site. */
static int attach_perf(struct usdt_attach *ua, struct ua_image *im, const char *path,
		       const struct usdt_binary *b, const __u32 *ids)
{
	for (size_t k = 0; k < b->nsites; k++) {
		const struct usdt_site *st = &b->sites[k];
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = st->sema_off,
			    .bpf_cookie = ua->cookie ? ids[k] : 0);
		struct bpf_link *link;
		int err;

		if (st->fate != USDT_SITE_LIVE)
			continue;
		link = bpf_program__attach_uprobe_opts(ua->progs[st->probe], im->pid, path,
						       st->off, &uo);
		if (!link)
			return -errno;
		err = image_add_link(im, link);
		if (err) {
			bpf_link__destroy(link);
			return err;
		}
		ua->sites++;
	}
	return 0;
}

/* Every skipped site is said, never silent: the first few by name, the rest counted. */
static void warn_skipped(const char *shown, const struct usdt_binary *b)
{
	int skipped = usdt_binary__skipped(b), said = 0;

	for (size_t k = 0; k < b->nsites && said < WARN_SITES; k++) {
		const struct usdt_site *st = &b->sites[k];

		if (st->fate == USDT_SITE_LIVE)
			continue;
		infl_warn("%s: %s:%s site 0x%llx skipped: %s", shown, b->provider,
			  usdt_contract[st->probe].name, (unsigned long long)st->note->loc, st->why);
		said++;
	}
	if (skipped > said)
		infl_warn("%s: %d more sites skipped; `inflight list %s` shows each", shown,
			  skipped - said, shown);
}

static int attach_error(const struct usdt_attach *ua, int err, const char *shown, pid_t pid)
{
	if (err == -ESRCH)
		return infl_err(EXIT_TARGET_EXITED, NULL, "attach to %s in pid %d: the process is gone",
				shown, pid);
	/* Linux 6.16 (and stable kernels since July 2025) want CAP_SYS_ADMIN to create a
	 * perf-event uprobe again (upstream ba677dbe77af); uprobe_multi links do not, so far */
	if ((err == -EACCES || err == -EPERM) && !caps__has(CAP_SYS_ADMIN))
		return infl_err(EXIT_NOT_PRIV, CAPS_HINT,
				"not privileged: missing CAP_SYS_ADMIN (this kernel requires it to "
				"create %s)", ua->mech == USDT_MECH_MULTI ? "uprobe_multi links" :
				"uprobes, Linux 6.16+");
	if (err == -ENOSPC)
		return infl_err(EXIT_BPF, NULL, "%s: more than %d distinct argument specs", shown,
				INFL_USDT_MAX_SPECS);
	return infl_err(infl_bpf_exit_code(err, NULL), NULL, "attach USDT probes (%s) to %s: %s",
			usdt_attach__mech_name(ua), shown, strerror(-err));
}

int usdt_attach__retable(struct usdt_attach *ua, unsigned tag, const struct image_slots *tab)
{
	for (__u32 i = 0; i < ua->nspecs; i++) {
		struct infl_usdt_spec spec = ua->specs[i];

		if (spec.image != tag)
			continue;
		spec_table(&spec, tab);
		if (!memcmp(&spec, &ua->specs[i], sizeof(spec)))
			continue;
		/* an array element, copied in place: only id_slot bytes change, each one a
		 * single byte the kernel side reads whole */
		if (bpf_map_update_elem(bpf_map__fd(ua->specs_map), &i, &spec, BPF_ANY))
			return -errno;
		ua->specs[i] = spec;
	}
	return 0;
}

int usdt_attach__image(struct usdt_attach *ua, const struct proc_image *file, const char *shown,
		       pid_t pid, const struct usdt_binary *b, unsigned tag,
		       const struct image_slots *tab)
{
	struct ua_image *im, *more;
	int sites_before = ua->sites;
	unsigned long long t0;
	__u32 *ids;
	int err;

	for (int i = 0; i < ua->nimages; i++) {
		im = &ua->images[i];
		if (proc_image_same(&im->key, &file->key) && (im->pid == -1 || im->pid == pid))
			return 0;
	}
	more = realloc(ua->images, (ua->nimages + 1) * sizeof(*more));
	if (!more)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	ua->images = more;
	im = &ua->images[ua->nimages++];
	memset(im, 0, sizeof(*im));
	im->key = file->key;
	im->pid = pid;
	warn_skipped(shown, b);
	ids = calloc(b->nsites ? b->nsites : 1, sizeof(*ids));
	t0 = mono_ns();
	err = ids ? site_ids(ua, im, b, tag, tab, ids) : -ENOMEM;
	if (!err)
		err = ua->mech == USDT_MECH_MULTI ? attach_multi(ua, im, file->path, b, ids)
						  : attach_perf(ua, im, file->path, b, ids);
	free(ids);
	if (err)
		return attach_error(ua, err, shown, pid);
	if (ua->verbose)
		fprintf(stderr, "inflight: %s: %d sites attached by %s (%zu links, %s) in %.1f ms\n",
			shown, ua->sites - sites_before, usdt_attach__mech_name(ua), im->nlinks,
			ua->cookie ? "BPF cookies" : "IP map, no cookies", (mono_ns() - t0) / 1e6);
	return 0;
}

enum usdt_mech usdt_attach__mech(const struct usdt_attach *ua)
{
	return ua->mech;
}

const char *usdt_attach__mech_name(const struct usdt_attach *ua)
{
	return ua->mech == USDT_MECH_MULTI ? "uprobe_multi" : "perf-event uprobes";
}

int usdt_attach__sites(const struct usdt_attach *ua)
{
	return ua ? ua->sites : 0;
}

/* --- detach --------------------------------------------------------------------------------- */

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/*
 * A uprobe_multi link waits for one grace period as it goes; closed one after the other the
 * waits add up (inflight's three: ~130 ms here), from one thread each they overlap (~50 ms;
 * docs/attach.md). Perf-event uprobes are unregistered one at a time by the kernel whatever
 * we do: one thread.
 */
void usdt_attach__detach(struct usdt_attach *ua)
{
	pthread_t *th;
	size_t n = 0, started = 0;

	if (!ua)
		return;
	for (int i = 0; i < ua->nimages; i++)
		n += ua->images[i].nlinks;
	th = ua->mech == USDT_MECH_MULTI && n > 1 ? calloc(n, sizeof(*th)) : NULL;
	for (int i = 0; i < ua->nimages; i++) {
		struct ua_image *im = &ua->images[i];

		for (size_t k = 0; k < im->nlinks; k++)
			if (!th || pthread_create(&th[started], NULL, destroy_link, im->links[k]))
				destroy_link(im->links[k]);
			else
				started++;
		im->nlinks = 0;
	}
	for (size_t k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	free(th);
}

void usdt_attach__free(struct usdt_attach *ua)
{
	if (!ua)
		return;
	usdt_attach__detach(ua);
	for (int i = 0; i < ua->nimages; i++)
		free(ua->images[i].links);
	free(ua->images);
	free(ua->specs);
	free(ua);
}
