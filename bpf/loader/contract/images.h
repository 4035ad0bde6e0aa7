/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session's class and stage slots, and which image's id each one is. Every image that
 * carries the contract (an executable, each library it maps) numbers its classes and stages
 * from 0 in its own names note; the kernel side counts INFL_MAX_CLASSES class slots and
 * INFL_MAX_STAGES stage slots per process. Here each image's ids get slots:
 *
 *   - what an image claims: the ids its names note declares, and every id a probe site of
 *     it passes as a constant; an image without a note whose sites pass an id in a register
 *     claims them all;
 *   - a claim is (image label, provider, id, name), the label being the file's basename: the
 *     same claim in another process, or in the file rebuilt at the same path, is the same slot;
 *     so is a claim of an image whose names note is the first claimant's word for word (a
 *     copy of the binary under another name);
 *   - a claim takes the slot of its own number when that is free (so one image alone is
 *     counted exactly as it numbers itself), else the lowest free one; a slot is free when
 *     no claim holds it and nothing is counted in it yet; with none free the claim is
 *     refused (said at the attach, and its events counted as bad ids);
 *   - an id an image does not claim keeps the slot of its number while no claim holds that
 *     slot, and is refused once one does (never counted as another image's);
 *   - a slot's name is its claim's; it is qualified as LABEL:NAME where two slots would
 *     show the same name, or where a numeric name (cls3) sits in another slot than 3.
 *
 * Slots are never given back within a session: recordings and outputs read one table.
 */
#ifndef INFLIGHT_CONTRACT_IMAGES_H
#define INFLIGHT_CONTRACT_IMAGES_H

#include <stdbool.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"
#include "contract/usdt_binary.h"

#define IMAGES_REFUSED 0xff /* a table entry: the id is refused (a slot >= 16) */

/* Where one image's ids go: class id -> class slot, stage id -> stage slot. */
struct image_slots {
	__u8 cls[INFL_MAX_CLASSES];
	__u8 stage[INFL_MAX_STAGES];
};

/* Slots that hold counts already (bit s): the kernel's records say so. */
struct image_slots_used {
	__u32 cls, stage;
};

struct images_claim {
	bool taken;
	__u8 id;		   /* the image's own id */
	__u16 image;		   /* the image that claimed it first */
	char label[INFL_NAME_LEN]; /* the image's label (file basename) */
	char provider[INFL_NAME_LEN];
	char name[INFL_NAME_LEN];  /* "" when its image declares no name for it */
};

struct images_image {
	char label[INFL_NAME_LEN];
	char provider[INFL_NAME_LEN]; /* the provider its probes are traced by */
	struct infl_names names; /* its note's (numeric when it has none) */
	__u16 cls_claims, stage_claims; /* bit id: the image claims it */
	struct image_slots slots;	/* its table as last computed */
};

struct images {
	struct images_claim cls[INFL_MAX_CLASSES], stage[INFL_MAX_STAGES];
	struct images_image *img;
	int nimg;
};

void images__init(struct images *ims);
void images__free(struct images *ims);

/*
 * Image `b` (the file `path` names; its basename is the label): its claims placed, `*tag`
 * set to its index (an image with the same label, provider and names note is the same
 * image). A new claim takes no slot of `counted` (NULL: none), the classes and stages that
 * already hold counts: what an earlier image's undeclared id counted there would read as
 * the new claim's. `refused` gets the number of its claims that found no slot (said on
 * stderr once). 0, or -ENOMEM.
 */
int images__add(struct images *ims, const char *path, const struct usdt_binary *b,
		const struct image_slots_used *counted, unsigned *tag, int *refused);

/* The table of image `tag` now (the tables of earlier images change when a later one takes
 * a slot one of their undeclared ids used). */
void images__table(const struct images *ims, unsigned tag, struct image_slots *out);

/*
 * The names every output shows, per slot: the claims' (qualified where needed), numeric
 * for free slots; entry and terminal stages from each claim's image, a free slot's from the
 * first image. With no image at all, `out` is names__init's.
 */
void images__names(const struct images *ims, struct infl_names *out);

#endif /* INFLIGHT_CONTRACT_IMAGES_H */
