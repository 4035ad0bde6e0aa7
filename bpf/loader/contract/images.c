// SPDX-License-Identifier: BSD-2-Clause
/* The session's class and stage slots (contract/images.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/images.h"
#include "util/errors.h"

_Static_assert(INFL_MAX_CLASSES == INFL_USDT_IDS && INFL_MAX_STAGES == INFL_USDT_IDS,
	       "a site's table covers every id of its image");

enum { KIND_CLS, KIND_STAGE };

void images__init(struct images *ims)
{
	memset(ims, 0, sizeof(*ims));
}

void images__free(struct images *ims)
{
	free(ims->img);
	images__init(ims);
}

/* A file's basename, in the characters names may hold (others become '_'). */
static void label_of(const char *path, char label[INFL_NAME_LEN])
{
	const char *base = strrchr(path, '/');
	size_t n = 0;

	for (base = base ? base + 1 : path; *base && n < INFL_NAME_LEN - 1; base++, n++) {
		char c = *base;

		label[n] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ? c : '_';
	}
	label[n] = '\0';
	if (!n)
		snprintf(label, INFL_NAME_LEN, "image");
}

static bool same_names(const struct infl_names *a, const struct infl_names *b)
{
	if (a->contract_version != b->contract_version || strcmp(a->provider, b->provider) ||
	    a->cls_declared != b->cls_declared || a->stage_declared != b->stage_declared ||
	    a->entry_mask != b->entry_mask || a->terminal_mask != b->terminal_mask)
		return false;
	for (int i = 0; i < INFL_MAX_CLASSES; i++)
		if ((a->cls_declared >> i & 1) && strcmp(a->cls[i], b->cls[i]))
			return false;
	for (int i = 0; i < INFL_MAX_STAGES; i++)
		if ((a->stage_declared >> i & 1) && strcmp(a->stage[i], b->stage[i]))
			return false;
	return true;
}

/* Two images with one names note, word for word (a copy of a binary under another name, a
 * library under two sonames): one contract, the same classes and stages. Images without a
 * note name nothing that could tell them apart, so only their file's name does. */
static bool same_contract(const struct images_image *a, const struct images_image *b)
{
	return a->names.contract_version && !strcmp(a->provider, b->provider) &&
	       same_names(&a->names, &b->names);
}

/* The ids the sites of `b` pass for `probe`'s argument 1: constants, or every id when some
 * site passes it otherwise. */
static __u16 site_ids(const struct usdt_binary *b, int kind)
{
	__u16 ids = 0;

	for (size_t k = 0; k < b->nsites; k++) {
		const struct usdt_site *st = &b->sites[k];
		const struct infl_usdt_arg *a = &st->spec.args[1];
		bool mine = kind == KIND_STAGE ? st->probe == INFL_PROBE_STAGE
					       : st->probe != INFL_PROBE_STAGE;

		if (!mine || st->fate != USDT_SITE_LIVE || st->spec.nargs < 2)
			continue;
		if (a->kind != INFL_ARG_CONST)
			return 0xffff;
		if (a->disp >= 0 && a->disp < INFL_USDT_IDS)
			ids |= 1u << a->disp;
	}
	return ids;
}

static struct images_claim *claims_of(struct images *ims, int kind)
{
	return kind == KIND_CLS ? ims->cls : ims->stage;
}

static const char *own_name(const struct infl_names *n, int kind, unsigned id)
{
	if (kind == KIND_CLS)
		return n->cls_declared >> id & 1 ? n->cls[id] : "";
	return n->stage_declared >> id & 1 ? n->stage[id] : "";
}

/* The slot of claim (image `tag`, `id`), placed when new; IMAGES_REFUSED when none is free. */
static __u8 place(struct images *ims, int kind, unsigned tag, unsigned id, __u32 counted,
		  bool *refused)
{
	const struct images_image *im = &ims->img[tag];
	struct images_claim *c = claims_of(ims, kind);
	const char *name = own_name(&im->names, kind, id);
	int slot = -1;

	*refused = false;
	for (int s = 0; s < INFL_USDT_IDS; s++)
		if (c[s].taken && c[s].id == id && !strcmp(c[s].provider, im->provider) &&
		    !strcmp(c[s].name, name) &&
		    (!strcmp(c[s].label, im->label) || same_contract(&ims->img[c[s].image], im)))
			return (__u8)s;
	if (!c[id].taken && !(counted >> id & 1))
		slot = (int)id;
	for (int s = 0; slot < 0 && s < INFL_USDT_IDS; s++)
		if (!c[s].taken && !(counted >> s & 1))
			slot = s;
	if (slot < 0) {
		*refused = true;
		return IMAGES_REFUSED;
	}
	c[slot].taken = true;
	c[slot].id = (__u8)id;
	c[slot].image = (__u16)tag;
	snprintf(c[slot].label, sizeof(c[slot].label), "%s", im->label);
	snprintf(c[slot].provider, sizeof(c[slot].provider), "%s", im->provider);
	snprintf(c[slot].name, sizeof(c[slot].name), "%s", name);
	return (__u8)slot;
}

/* One kind of image `tag`'s table: its claims' slots; an unclaimed id its own number's
 * slot while that is free. */
static void table_kind(const struct images *ims, unsigned tag, int kind, __u8 *out)
{
	const struct images_image *im = &ims->img[tag];
	const struct images_claim *c = kind == KIND_CLS ? ims->cls : ims->stage;
	__u16 claims = kind == KIND_CLS ? im->cls_claims : im->stage_claims;
	const __u8 *mine = kind == KIND_CLS ? im->slots.cls : im->slots.stage;

	for (unsigned id = 0; id < INFL_USDT_IDS; id++)
		out[id] = claims >> id & 1 ? mine[id] : c[id].taken ? IMAGES_REFUSED : (__u8)id;
}

void images__table(const struct images *ims, unsigned tag, struct image_slots *out)
{
	table_kind(ims, tag, KIND_CLS, out->cls);
	table_kind(ims, tag, KIND_STAGE, out->stage);
}

/* Places image `tag`'s new claims `claims` of one kind, on slots not `counted` in. */
static int place_kind(struct images *ims, unsigned tag, int kind, __u16 claims, __u32 counted,
		      const char *path)
{
	struct images_image *im = &ims->img[tag];
	__u8 *mine = kind == KIND_CLS ? im->slots.cls : im->slots.stage;
	const char *what = kind == KIND_CLS ? "class" : "stage";
	char ids[64] = "";
	int refused = 0;
	bool no;

	for (unsigned id = 0; id < INFL_USDT_IDS; id++) {
		if (!(claims >> id & 1))
			continue;
		mine[id] = place(ims, kind, tag, id, counted, &no);
		if (no)
			snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%u",
				 refused++ ? "," : "", id);
	}
	if (refused)
		infl_warn("%s: no %s slot is left for its %s id%s %s (%d per session, taken by the "
			  "images attached before it): their events are counted as bad %s ids", path,
			  what, what, refused > 1 ? "s" : "", ids, INFL_USDT_IDS, what);
	return refused;
}

int images__add(struct images *ims, const char *path, const struct usdt_binary *b,
		const struct image_slots_used *counted, unsigned *tag, int *refused)
{
	struct images_image im = { 0 }, *more;
	__u16 cls, stage;
	unsigned t;

	label_of(path, im.label);
	if (b->names_err)
		names__init(&im.names);
	else
		im.names = b->names;
	snprintf(im.provider, sizeof(im.provider), "%s", b->provider);
	/* an image without a note names nothing: what its sites pass is what it claims */
	cls = site_ids(b, KIND_CLS);
	stage = site_ids(b, KIND_STAGE);
	if (!b->names_err) { /* a note: what it declares, and the constants its sites pass */
		cls = (cls == 0xffff ? 0 : cls) | im.names.cls_declared;
		stage = (stage == 0xffff ? 0 : stage) | im.names.stage_declared;
	}
	for (t = 0; t < (unsigned)ims->nimg; t++)
		if (!strcmp(ims->img[t].label, im.label) && !strcmp(ims->img[t].provider, im.provider) &&
		    same_names(&ims->img[t].names, &im.names))
			break;
	if (t == (unsigned)ims->nimg) {
		more = realloc(ims->img, (ims->nimg + 1) * sizeof(*more));
		if (!more)
			return -ENOMEM;
		ims->img = more;
		ims->img[ims->nimg++] = im;
	}
	/* a file rebuilt with the same note may pass other constants: only new claims */
	cls &= (__u16)~ims->img[t].cls_claims;
	stage &= (__u16)~ims->img[t].stage_claims;
	ims->img[t].cls_claims |= cls;
	ims->img[t].stage_claims |= stage;
	*refused = place_kind(ims, t, KIND_CLS, cls, counted ? counted->cls : 0, path) +
		   place_kind(ims, t, KIND_STAGE, stage, counted ? counted->stage : 0, path);
	*tag = t;
	return 0;
}

/* The name slot `s` shows before qualification: its claim's, or numeric by its own id. */
static void plain_name(const struct images_claim *c, int kind, char *out, size_t len)
{
	if (c->name[0])
		snprintf(out, len, "%s", c->name);
	else
		snprintf(out, len, "%s%u", kind == KIND_CLS ? "cls" : "stage", c->id);
}

static void names_kind(const struct images *ims, int kind, struct infl_names *out)
{
	const struct images_claim *c = kind == KIND_CLS ? ims->cls : ims->stage;
	char plain[INFL_USDT_IDS][INFL_NAME_LEN];

	for (int s = 0; s < INFL_USDT_IDS; s++)
		if (c[s].taken)
			plain_name(&c[s], kind, plain[s], sizeof(plain[s]));
	for (int s = 0; s < INFL_USDT_IDS; s++) {
		char *dst = kind == KIND_CLS ? out->cls[s] : out->stage[s];
		__u16 *declared = kind == KIND_CLS ? &out->cls_declared : &out->stage_declared;
		bool qualify = !c[s].name[0] && c[s].id != s;
		int room;

		if (!c[s].taken)
			continue;
		for (int o = 0; !qualify && o < INFL_USDT_IDS; o++)
			qualify = o != s && c[o].taken && !strcmp(plain[o], plain[s]);
		if (!qualify && !c[s].name[0]) /* cls3 in slot 3: the numeric default */
			continue;
		/* LABEL:NAME, the label cut to fit */
		room = INFL_NAME_LEN - 2 - (int)strlen(plain[s]);
		if (qualify)
			snprintf(dst, INFL_NAME_LEN, "%.*s:%s", room > 1 ? room : 1, c[s].label,
				 plain[s]);
		else
			memcpy(dst, plain[s], INFL_NAME_LEN); /* both INFL_NAME_LEN, NUL-ended */
		*declared |= (__u16)(1u << s);
	}
}

void images__names(const struct images *ims, struct infl_names *out)
{
	const struct infl_names *first = ims->nimg ? &ims->img[0].names : NULL;

	names__init(out);
	if (!first)
		return;
	out->contract_version = first->contract_version;
	snprintf(out->provider, sizeof(out->provider), "%s", first->provider);
	names_kind(ims, KIND_CLS, out);
	names_kind(ims, KIND_STAGE, out);
	out->entry_mask = first->entry_mask;
	out->terminal_mask = first->terminal_mask;
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		const struct images_claim *c = &ims->stage[s];
		const struct infl_names *n = c->taken ? &ims->img[c->image].names : NULL;
		__u16 bit = (__u16)(1u << s);

		if (!n)
			continue;
		out->entry_mask = (__u16)((out->entry_mask & ~bit) | (n->entry_mask >> c->id & 1 ? bit : 0));
		out->terminal_mask =
			(__u16)((out->terminal_mask & ~bit) | (n->terminal_mask >> c->id & 1 ? bit : 0));
	}
}
