// SPDX-License-Identifier: BSD-2-Clause
/*
 * Class and stage names from a traced binary's ".note.inflight" (probes/inflight_note.h).
 * The note comes from a file we do not control: every length and id is checked, the text is
 * never assumed NUL-terminated, and a note that breaks the grammar is refused as a whole
 * (numeric names then) rather than half-applied.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inflight_note.h" /* the note format: the contract's */
#include "contract/elf_file.h"
#include "contract/names.h"

_Static_assert(INFLIGHT_MAX_IDS == INFL_MAX_CLASSES && INFLIGHT_MAX_IDS == INFL_MAX_STAGES,
	       "the note's id limit is the kernel side's");
_Static_assert(INFL_MAX_STAGES <= 16, "entry/terminal masks are 16 bits");

#define NOTE_OWNER "inflight"
#define MAX_NOTE_TEXT 65536 /* far more than 32 declarations need; bounds the work */

static const char *const cls_numeric[INFL_MAX_CLASSES] = {
	"cls0", "cls1", "cls2",	 "cls3",  "cls4",  "cls5",  "cls6",  "cls7",
	"cls8", "cls9", "cls10", "cls11", "cls12", "cls13", "cls14", "cls15",
};
static const char *const stage_numeric[INFL_MAX_STAGES] = {
	"stage0", "stage1", "stage2",  "stage3",  "stage4",  "stage5",	"stage6",  "stage7",
	"stage8", "stage9", "stage10", "stage11", "stage12", "stage13", "stage14", "stage15",
};

void names__init(struct infl_names *n)
{
	memset(n, 0, sizeof(*n));
	n->entry_mask = 0xffff; /* without a note, any stage may start an owner */
}

/* the tracer's own classes (libcuda's memory): named here, whatever a program declares */
static const char *const cls_cuda[INFL_CUDA_CLASSES] = {
	[INFL_CLS_CUDA_DEVICE - INFL_MAX_CLASSES] = "cuda_device",
	[INFL_CLS_CUDA_HOST - INFL_MAX_CLASSES] = "cuda_host",
	[INFL_CLS_CUDA_MANAGED - INFL_MAX_CLASSES] = "cuda_managed",
};

const char *names__cls(const struct infl_names *n, unsigned id)
{
	if (id >= INFL_MAX_CLASSES && id < INFL_CLASSES)
		return cls_cuda[id - INFL_MAX_CLASSES];
	if (id >= INFL_MAX_CLASSES)
		return "cls?";
	if (n && (n->cls_declared & (1u << id)))
		return n->cls[id];
	return cls_numeric[id];
}

const char *names__stage(const struct infl_names *n, unsigned slot)
{
	if (slot == INFL_SLOT_NONE)
		return "(none)";
	if (slot >= INFL_MAX_STAGES)
		return "stage?";
	if (n && (n->stage_declared & (1u << slot)))
		return n->stage[slot];
	return stage_numeric[slot];
}

/* Splits the next line off [*p, end): returns its words (at most max) in w[]/wl[]. */
static int next_line(const char **p, const char *end, const char **w, size_t *wl, int max)
{
	const char *s = *p, *eol = memchr(s, '\n', end - s);
	int nw = 0;

	if (!eol)
		eol = end;
	*p = eol < end ? eol + 1 : end;
	while (s < eol) {
		const char *t;

		while (s < eol && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == eol)
			break;
		t = s;
		while (t < eol && *t != ' ' && *t != '\t' && *t != '\r')
			t++;
		if (nw == max)
			return max + 1; /* too many words */
		w[nw] = s;
		wl[nw] = t - s;
		nw++;
		s = t;
	}
	return nw;
}

static bool word_is(const char *w, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(w, lit, len);
}

/* A decimal id < limit, no sign, no leading zeros beyond "0". */
static int parse_id(const char *w, size_t len, unsigned limit)
{
	unsigned v = 0;

	if (len == 0 || len > 2 || (len > 1 && w[0] == '0'))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		v = v * 10 + (w[i] - '0');
	}
	return v < limit ? (int)v : -1;
}

/* Names become table headers, JSON keys and Prometheus labels: C identifiers only. */
static bool copy_name(char dst[INFL_NAME_LEN], const char *w, size_t len)
{
	if (len == 0 || len >= INFL_NAME_LEN || (w[0] >= '0' && w[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = w[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	memcpy(dst, w, len);
	dst[len] = '\0';
	return true;
}

static int parse_into(const char *text, size_t len, struct infl_names *n)
{
	const char *p = text, *end, *nul = memchr(text, '\0', len);
	const char *w[5];
	size_t wl[5];
	bool header = false;
	int nw, id;

	end = nul ? nul : text + len; /* the descriptor is NUL-terminated and padded */
	while (p < end) {
		nw = next_line(&p, end, w, wl, 4);
		if (nw == 0)
			continue;
		if (nw > 4)
			return -EBADMSG;
		if (!header) {
			/* the first declaration must say which contract this is */
			if (nw != 2 || !word_is(w[0], wl[0], "inflight-contract"))
				return -EBADMSG;
			id = parse_id(w[1], wl[1], 100);
			if (id < 1)
				return -EBADMSG;
			n->contract_version = id;
			header = true;
		} else if (word_is(w[0], wl[0], "provider")) {
			if (nw != 2 || n->provider[0] || !copy_name(n->provider, w[1], wl[1]))
				return -EBADMSG;
		} else if (word_is(w[0], wl[0], "class")) {
			if (nw != 3 || (id = parse_id(w[1], wl[1], INFL_MAX_CLASSES)) < 0 ||
			    (n->cls_declared & (1u << id)) || !copy_name(n->cls[id], w[2], wl[2]))
				return -EBADMSG;
			n->cls_declared |= 1u << id;
		} else if (word_is(w[0], wl[0], "stage")) {
			if (nw != 4 || (id = parse_id(w[1], wl[1], INFL_MAX_STAGES)) < 0 ||
			    (n->stage_declared & (1u << id)) || !copy_name(n->stage[id], w[2], wl[2]))
				return -EBADMSG;
			if (word_is(w[3], wl[3], "entry"))
				n->entry_mask |= 1u << id;
			else if (word_is(w[3], wl[3], "terminal"))
				n->terminal_mask |= 1u << id;
			else if (!word_is(w[3], wl[3], "plain"))
				return -EBADMSG;
			n->stage_declared |= 1u << id;
		} else if (n->contract_version == INFLIGHT_CONTRACT_VERSION) {
			return -EBADMSG; /* unknown declaration in a version we know */
		}
		/* a later contract version may add declarations: skip what we do not know */
	}
	if (!header)
		return -EBADMSG;
	/* a name used twice would make two columns indistinguishable */
	for (int a = 0; a < INFL_MAX_CLASSES; a++)
		for (int b = a + 1; b < INFL_MAX_CLASSES; b++)
			if ((n->cls_declared >> a & 1) && (n->cls_declared >> b & 1) &&
			    !strcmp(n->cls[a], n->cls[b]))
				return -EBADMSG;
	for (int a = 0; a < INFL_MAX_STAGES; a++)
		for (int b = a + 1; b < INFL_MAX_STAGES; b++)
			if ((n->stage_declared >> a & 1) && (n->stage_declared >> b & 1) &&
			    !strcmp(n->stage[a], n->stage[b]))
				return -EBADMSG;
	return 0;
}

int names__parse(const char *text, size_t len, struct infl_names *n)
{
	int err;

	names__init(n);
	if (!text || len > MAX_NOTE_TEXT)
		return -EBADMSG;
	n->entry_mask = 0; /* a note names its entry stages itself */
	err = parse_into(text, len, n);
	if (err) /* all or nothing: numeric names, not a mix */
		names__init(n);
	return err;
}

/* Looks for our note in one ELF_T_NHDR data block. 1: parsed, 0: not there, <0: error. */
static int scan_notes(Elf_Data *data, struct infl_names *n)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		off = next;
		if (nh.n_type != INFLIGHT_NOTE_TYPE || nh.n_namesz != sizeof(NOTE_OWNER) ||
		    memcmp((char *)data->d_buf + name_off, NOTE_OWNER, sizeof(NOTE_OWNER)))
			continue;
		/* gelf_getnote checked that name and descriptor lie within the data */
		return names__parse((char *)data->d_buf + desc_off, nh.n_descsz, n) ?: 1;
	}
	return 0;
}

static int names_from_elf(Elf *elf, struct infl_names *n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t nph;
	int r;

	/* sections first (any SHT_NOTE: the name is only a convention) */
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = NULL;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		while ((data = elf_getdata(scn, data)))
			if ((r = scan_notes(data, n)))
				return r < 0 ? r : 0;
	}
	/* a binary stripped of its section headers still has its PT_NOTE segments */
	if (elf_getphdrnum(elf, &nph))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		Elf_Data *data;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && (r = scan_notes(data, n)))
			return r < 0 ? r : 0;
	}
	return -ENOENT;
}

int names__from_elf(const char *path, struct infl_names *n)
{
	struct elf_file ef;
	int err;

	names__init(n);
	err = elf_file__open(path, &ef);
	if (err)
		return err;
	err = names_from_elf(ef.elf, n);
	elf_file__close(&ef);
	if (err)
		names__init(n);
	return err;
}
