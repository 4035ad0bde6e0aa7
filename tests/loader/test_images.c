// SPDX-License-Identifier: BSD-2-Clause
/*
 * The session's class and stage slots (contract/images.c), on images made here: an
 * application, two libraries whose ids and two of whose names collide, the first library
 * again (another process, the same file), a library without a names note whose sites pass
 * constants, and one whose sites pass registers when no slot is left. Every table entry and
 * every name is checked against the rules of contract/images.h.
 */
#include <errno.h>
#include <string.h>
#include "check.h"
#include "contract/images.h"

#define R IMAGES_REFUSED

struct fake {
	struct usdt_binary b;
	struct usdt_site sites[8];
};

static void declare(struct infl_names *n, int kind, unsigned id, const char *name)
{
	if (kind == 0) {
		snprintf(n->cls[id], sizeof(n->cls[id]), "%s", name);
		n->cls_declared |= 1u << id;
	} else {
		snprintf(n->stage[id], sizeof(n->stage[id]), "%s", name);
		n->stage_declared |= 1u << id;
	}
}

/* A site of `probe` passing argument 1 as a constant `id`, or in a register (id < 0). */
static void site(struct fake *f, int probe, int id)
{
	struct usdt_site *st = &f->sites[f->b.nsites++];

	memset(st, 0, sizeof(*st));
	st->probe = probe;
	st->fate = USDT_SITE_LIVE;
	st->spec.nargs = probe == INFL_PROBE_STAGE ? 2 : probe == INFL_PROBE_ALLOC ? 4 : 3;
	st->spec.args[1].kind = id < 0 ? INFL_ARG_REG : INFL_ARG_CONST;
	st->spec.args[1].base = id < 0 ? INFL_REG_SI : 0;
	st->spec.args[1].disp = id < 0 ? 0 : id;
}

/* An image with a note (classes c0 c1, stages s0 entry, s1, s2 terminal or plain) whose
 * sites pass their ids in registers. */
static void noted(struct fake *f, const char *c0, const char *c1, const char *s0, const char *s1,
		  const char *s2, bool s2_terminal)
{
	memset(f, 0, sizeof(*f));
	f->b.sites = f->sites;
	snprintf(f->b.provider, sizeof(f->b.provider), "prover");
	names__init(&f->b.names);
	f->b.names.contract_version = 1;
	f->b.names.entry_mask = 1;
	f->b.names.terminal_mask = s2_terminal ? 4 : 0;
	declare(&f->b.names, 0, 0, c0);
	declare(&f->b.names, 0, 1, c1);
	declare(&f->b.names, 1, 0, s0);
	declare(&f->b.names, 1, 1, s1);
	declare(&f->b.names, 1, 2, s2);
	site(f, INFL_PROBE_ALLOC, -1);
	site(f, INFL_PROBE_FREE, -1);
	site(f, INFL_PROBE_STAGE, -1);
}

static bool table_is(const __u8 *got, const __u8 *want)
{
	return !memcmp(got, want, INFL_USDT_IDS);
}

static void identity(__u8 *t)
{
	for (int i = 0; i < INFL_USDT_IDS; i++)
		t[i] = (__u8)i;
}

int main(void)
{
	static struct fake app, gpu, aux, plain, wide;
	struct image_slots tab;
	struct infl_names n;
	struct images ims;
	unsigned tag;
	int refused;
	__u8 want[INFL_USDT_IDS];

	images__init(&ims);
	images__names(&ims, &n);
	CHECK(!n.cls_declared && !n.stage_declared && n.entry_mask == 0xffff,
	      "no image: the numeric defaults");

	/* the application alone: counted exactly as it numbers itself */
	noted(&app, "input", "output", "read", "gpu", "done", true);
	CHECK(!images__add(&ims, "/srv/app", &app.b, NULL, &tag, &refused) && tag == 0 && !refused,
	      "the application: image 0, nothing refused");
	images__table(&ims, 0, &tab);
	identity(want);
	CHECK(table_is(tab.cls, want) && table_is(tab.stage, want),
	      "alone: every class and stage id in the slot of its number");
	images__names(&ims, &n);
	CHECK(!strcmp(n.cls[0], "input") && !strcmp(n.cls[1], "output") && n.cls_declared == 3,
	      "alone: its class names, unqualified");
	CHECK(!strcmp(n.stage[2], "done") && n.stage_declared == 7 && n.entry_mask == 1 &&
		      n.terminal_mask == 4,
	      "alone: its stage names and roles (entry read, terminal done)");

	/* a library with the same ids, other names */
	noted(&gpu, "weights", "kbuf", "upload", "kernel", "fin", false);
	CHECK(!images__add(&ims, "/usr/lib/libgpu.so", &gpu.b, NULL, &tag, &refused) && tag == 1 &&
		      !refused,
	      "libgpu.so: image 1");
	images__table(&ims, 1, &tab);
	identity(want);
	want[0] = 2, want[1] = 3;
	want[2] = want[3] = R; /* its own claims hold slots 2 3 */
	CHECK(table_is(tab.cls, want),
	      "libgpu.so: classes 0 1 in slots 2 3 (the lowest free), undeclared 2 3 refused");
	identity(want);
	want[0] = 3, want[1] = 4, want[2] = 5;
	/* its unclaimed ids 3..5 now find their slots taken: refused, not counted as its own */
	want[3] = want[4] = want[5] = R;
	CHECK(table_is(tab.stage, want), "libgpu.so: stages 0 1 2 in slots 3 4 5, 3..5 refused");
	images__table(&ims, 0, &tab);
	identity(want);
	want[2] = want[3] = R;
	CHECK(table_is(tab.cls, want),
	      "the application's undeclared classes 2 3 are refused once libgpu.so holds them");
	images__names(&ims, &n);
	CHECK(!strcmp(n.cls[2], "weights") && !strcmp(n.cls[3], "kbuf") && n.cls_declared == 0xf,
	      "no name shared: weights, kbuf unqualified");
	CHECK(!strcmp(n.stage[3], "upload") && n.entry_mask == (1 | 8) && n.terminal_mask == 4,
	      "entry stages of both images (read, upload), terminal the application's done");

	/* a second library: same ids, names kbuf, upload and fin shared with libgpu.so */
	noted(&aux, "tiles", "kbuf", "upload", "merge", "fin", false);
	CHECK(!images__add(&ims, "/usr/lib/libaux.so", &aux.b, NULL, &tag, &refused) && tag == 2,
	      "libaux.so: image 2");
	images__table(&ims, 2, &tab);
	CHECK(tab.cls[0] == 4 && tab.cls[1] == 5 && tab.stage[0] == 6 && tab.stage[1] == 7 &&
		      tab.stage[2] == 8,
	      "libaux.so: classes in 4 5, stages in 6 7 8");
	images__names(&ims, &n);
	CHECK(!strcmp(n.cls[3], "libgpu.so:kbuf") && !strcmp(n.cls[5], "libaux.so:kbuf") &&
		      !strcmp(n.cls[4], "tiles"),
	      "a class name in two images is qualified in both: %s, %s", n.cls[3], n.cls[5]);
	CHECK(!strcmp(n.stage[3], "libgpu.so:upload") && !strcmp(n.stage[6], "libaux.so:upload") &&
		      !strcmp(n.stage[5], "libgpu.so:fin") && !strcmp(n.stage[8], "libaux.so:fin") &&
		      !strcmp(n.stage[7], "merge"),
	      "stage names alike: %s %s %s %s", n.stage[3], n.stage[6], n.stage[5], n.stage[8]);

	/* libgpu.so in another process: the same image, the same slots */
	CHECK(!images__add(&ims, "/proc/9/root/usr/lib/libgpu.so", &gpu.b, NULL, &tag, &refused) &&
		      tag == 1 && ims.nimg == 3,
	      "the same library again (another process): image 1 again");

	/* no names note, constant ids: it claims what it passes */
	memset(&plain, 0, sizeof(plain));
	plain.b.sites = plain.sites;
	plain.b.names_err = -ENOENT;
	names__init(&plain.b.names);
	snprintf(plain.b.provider, sizeof(plain.b.provider), "prover");
	site(&plain, INFL_PROBE_ALLOC, 0);
	site(&plain, INFL_PROBE_ALLOC, 1);
	site(&plain, INFL_PROBE_FREE, 1);
	site(&plain, INFL_PROBE_STAGE, 0);
	site(&plain, INFL_PROBE_STAGE, 1);
	CHECK(!images__add(&ims, "/usr/lib/libplain.so", &plain.b, NULL, &tag, &refused) && tag == 3 &&
		      !refused,
	      "a library without a note: image 3");
	images__table(&ims, 3, &tab);
	CHECK(tab.cls[0] == 6 && tab.cls[1] == 7 && tab.stage[0] == 9 && tab.stage[1] == 10,
	      "... the ids its sites pass take slots (classes 6 7, stages 9 10)");
	images__names(&ims, &n);
	CHECK(!strcmp(n.cls[6], "libplain.so:cls0") && !strcmp(n.stage[10], "libplain.so:stage1"),
	      "... numeric names away from their number are qualified: %s %s", n.cls[6],
	      n.stage[10]);

	/* registers and no note: it claims all 16, and 8 class slots are left */
	memset(&wide, 0, sizeof(wide));
	wide.b.sites = wide.sites;
	wide.b.names_err = -ENOENT;
	names__init(&wide.b.names);
	snprintf(wide.b.provider, sizeof(wide.b.provider), "prover");
	site(&wide, INFL_PROBE_ALLOC, -1);
	site(&wide, INFL_PROBE_STAGE, 3);
	CHECK(!images__add(&ims, "/opt/libwide.so", &wide.b, NULL, &tag, &refused) && tag == 4,
	      "a library without a note passing class ids in registers: image 4");
	CHECK_EQ_U64(refused, 8, "... 8 of its 16 classes find no slot (said on stderr)");
	images__table(&ims, 4, &tab);
	CHECK(tab.cls[0] == 8 && tab.cls[7] == 15 && tab.cls[8] == R && tab.cls[15] == R,
	      "... classes 0..7 in slots 8..15, 8..15 refused");
	CHECK(tab.stage[3] == 11 && tab.stage[0] == R && tab.stage[12] == 12,
	      "... its one constant stage claimed (slot 11), its unclaimed ids by number while free");

	images__free(&ims);

	/* a copy of the application under another name, its note word for word: the same
	 * contract, the same slots, nothing qualified */
	images__init(&ims);
	images__add(&ims, "/srv/app", &app.b, NULL, &tag, &refused);
	images__add(&ims, "/usr/lib/libgpu.so", &gpu.b, NULL, &tag, &refused);
	CHECK(!images__add(&ims, "/tmp/app-copy", &app.b, NULL, &tag, &refused) && tag == 2 &&
		      !refused,
	      "a copy of the application: an image of its own");
	images__table(&ims, 2, &tab);
	images__names(&ims, &n);
	CHECK(tab.cls[0] == 0 && tab.cls[1] == 1 && tab.stage[2] == 2 && !strcmp(n.cls[0], "input") &&
		      n.cls_declared == 0xf,
	      "... counted in the application's slots, under its unqualified names");
	images__free(&ims);

	/* the application counted in its undeclared class 2 and stage 4 before the library came:
	 * the library's claims pass those slots by, so nothing counted reads as its */
	images__init(&ims);
	images__add(&ims, "/srv/app", &app.b, NULL, &tag, &refused);
	CHECK(!images__add(&ims, "/usr/lib/libgpu.so", &gpu.b,
			   &(struct image_slots_used){ .cls = 1u << 2, .stage = 1u << 4 }, &tag,
			   &refused) && !refused,
	      "counted slots: libgpu.so placed, nothing refused");
	images__table(&ims, tag, &tab);
	CHECK(tab.cls[0] == 3 && tab.cls[1] == 4 && tab.stage[0] == 3 && tab.stage[1] == 5 &&
		      tab.stage[2] == 6,
	      "counted slots: classes in 3 4 (not the counted 2), stages in 3 5 6 (not 4)");
	images__table(&ims, 0, &tab);
	CHECK(tab.cls[2] == 2 && tab.stage[4] == 4,
	      "... and the application's undeclared ids keep counting where they did");
	images__free(&ims);
	return check_done();
}
