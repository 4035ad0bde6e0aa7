// SPDX-License-Identifier: BSD-2-Clause
/*
 * names.c: the ".note.inflight" parser on good, malformed and mutated input, and the ELF
 * reader on real binaries (the prover's names, a malformed note, no note, not an ELF file,
 * corrupted copies).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "check.h"
#include "inflight_note.h"
#include "contract/names.h"
#include "prover_ids.h"

static const char prover_text[] = INFLIGHT__NOTE_TEXT("prover", PROVER_CLASSES, PROVER_STAGES);

static bool is_default(const struct infl_names *n)
{
	struct infl_names d;

	names__init(&d);
	return !memcmp(&d, n, sizeof(d));
}

static void check_prover_names(const struct infl_names *n, const char *what)
{
	CHECK_EQ_U64(n->contract_version, 1, "%s: contract version", what);
	CHECK(!strcmp(n->provider, "prover"), "%s: provider", what);
	CHECK_EQ_U64(n->cls_declared, 0x1ff, "%s: classes 0..8 declared", what);
	CHECK_EQ_U64(n->stage_declared, 0x1ff, "%s: stages 0..8 declared", what);
	CHECK_EQ_U64(n->entry_mask, 0x3, "%s: parse and wait_permit are entry stages", what);
	CHECK_EQ_U64(n->terminal_mask, 0x100, "%s: done is terminal", what);
	CHECK(!strcmp(names__cls(n, 0), "c1_data") && !strcmp(names__cls(n, 8), "gpu_abc"),
	      "%s: class names", what);
	CHECK(!strcmp(names__stage(n, 3), "chan_send") && !strcmp(names__stage(n, 8), "done"),
	      "%s: stage names", what);
	CHECK(!strcmp(names__cls(n, 9), "cls9") && !strcmp(names__stage(n, 9), "stage9"),
	      "%s: undeclared ids fall back to numbers", what);
}

static void test_parse_good(void)
{
	struct infl_names n;
	char exact[sizeof(prover_text)];

	CHECK_EQ_U64(names__parse(prover_text, sizeof(prover_text), &n), 0, "prover note parses");
	check_prover_names(&n, "parsed");

	/* the descriptor's length is the bound: no NUL needed within it */
	memcpy(exact, prover_text, sizeof(exact));
	CHECK_EQ_U64(names__parse(exact, sizeof(exact) - 1, &n), 0, "parses without its NUL");
	CHECK_EQ_U64(n.cls_declared, 0x1ff, "... with every class");

	/* padding after the NUL is ignored, as are blank lines, CRs and extra spaces */
	static const char loose[] = "\n  inflight-contract 1\r\n\nclass  3\tx_y\n"
				    "stage 15 Last terminal\n\0garbage\nclass 4 y\n";
	CHECK_EQ_U64(names__parse(loose, sizeof(loose), &n), 0, "loose layout parses");
	CHECK(!strcmp(names__cls(&n, 3), "x_y") && n.cls_declared == 1u << 3,
	      "... one class, nothing after the NUL");
	CHECK(n.terminal_mask == 1u << 15 && n.entry_mask == 0 && !strcmp(n.stage[15], "Last"),
	      "... stage 15 terminal, no entry stage");
	CHECK(n.provider[0] == '\0', "... no provider line: empty provider");

	/* a later contract version may add declarations: known ones still count */
	static const char v2[] = "inflight-contract 2\nprovider p\nunit bytes\nclass 0 a\n";
	CHECK_EQ_U64(names__parse(v2, sizeof(v2), &n), 0, "version 2 with an unknown line parses");
	CHECK(n.contract_version == 2 && !strcmp(n.cls[0], "a"), "... keeping what it knows");
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
		"",
		"\n\n",
		"class 0 a\n",				     /* no header */
		"inflight-contract\n",			     /* no version */
		"inflight-contract 0\n",		     /* versions start at 1 */
		"inflight-contract 01\n",		     /* leading zero */
		"inflight-contract 1 x\n",		     /* extra word */
		"inflight-contract 1\nclass 16 a\n",	     /* id out of range */
		"inflight-contract 1\nclass -1 a\n",
		"inflight-contract 1\nclass 1a a\n",
		"inflight-contract 1\nclass 007 a\n",
		"inflight-contract 1\nclass 1\n",	     /* no name */
		"inflight-contract 1\nclass 1 a b\n",	     /* two names */
		"inflight-contract 1\nclass 1 a\nclass 1 b\n", /* id twice */
		"inflight-contract 1\nclass 1 a\nclass 2 a\n", /* name twice */
		"inflight-contract 1\nclass 1 9lives\n",    /* not an identifier */
		"inflight-contract 1\nclass 1 a-b\n",
		"inflight-contract 1\nclass 1 a\x1b[2J\n",  /* terminal escape */
		"inflight-contract 1\nclass 1 abcdefghijabcdefghijabcdefghijab\n", /* 32 chars */
		"inflight-contract 1\nstage 1 a\n",	     /* no flag */
		"inflight-contract 1\nstage 1 a final\n",    /* unknown flag */
		"inflight-contract 1\nstage 1 a entry\nstage 2 a plain\n",
		"inflight-contract 1\nprovider\n",
		"inflight-contract 1\nprovider a\nprovider b\n",
		"inflight-contract 1\nunit bytes\n",	     /* unknown line in version 1 */
	};
	struct infl_names n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = names__parse(bad[i], strlen(bad[i]) + 1, &n);

		CHECK(err == -EBADMSG && is_default(&n), "malformed note %zu refused, numeric names",
		      i);
	}
	CHECK_EQ_U64(names__parse(NULL, 0, &n), (__u64)-EBADMSG, "NULL text refused");
	/* 31 characters is the longest name */
	static const char longest[] = "inflight-contract 1\nclass 1 abcdefghijabcdefghijabcdefghija\n";
	CHECK_EQ_U64(names__parse(longest, sizeof(longest), &n), 0, "a 31-character name fits");
}

/* Deterministic mutations of the prover's note: nothing may crash (ASan/UBSan run this
 * too), and whatever parses must hold only identifiers within bounds. */
static void test_parse_mutations(void)
{
	char buf[sizeof(prover_text) + 16];
	unsigned seed = 12345, ok = 0, refused = 0, broken = 0;

	for (int round = 0; round < 20000; round++) {
		struct infl_names n;
		size_t len = sizeof(prover_text);
		int err;

		memcpy(buf, prover_text, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = len ? (seed >> 8) % len : 0;

			seed = seed * 1103515245 + 12345;
			switch ((seed >> 16) % 4) {
			case 0:
				buf[at] = (char)(seed >> 24);
				break;
			case 1:
				buf[at] = "\n 0123456789_\0"[(seed >> 24) % 14];
				break;
			case 2:
				len = at; /* truncate */
				break;
			default:
				buf[at] ^= 0x20;
				break;
			}
		}
		err = names__parse(buf, len, &n);
		if (err == 0) {
			ok++;
			for (int c = 0; c < INFL_MAX_CLASSES; c++)
				if (n.cls_declared & (1u << c))
					broken += strlen(n.cls[c]) == 0 ||
						  strlen(n.cls[c]) >= INFL_NAME_LEN ||
						  strspn(n.cls[c], "abcdefghijklmnopqrstuvwxyz"
								   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
								   "0123456789_") != strlen(n.cls[c]);
		} else if (err == -EBADMSG && is_default(&n)) {
			refused++;
		} else {
			broken++;
		}
	}
	CHECK_EQ_U64(broken, 0, "20000 mutated notes: each parsed cleanly or refused whole");
	CHECK(ok > 100 && refused > 100, "mutations exercised both outcomes (%u parsed, %u refused)",
	      ok, refused);
}

static const char *tmp_copy(const char *src, char *path, size_t len)
{
	char buf[1 << 16];
	int in = open(src, O_RDONLY), out;
	ssize_t n;

	snprintf(path, len, "/tmp/inflight-names-XXXXXX");
	out = mkstemp(path);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return path;
}

/* Overwrites the first occurrence of `find` in the file with `repl` (same length). */
static bool patch_file(const char *path, const void *find, const void *repl, size_t len)
{
	static char buf[4 << 20];
	int fd = open(path, O_RDWR);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	bool done = false;

	for (ssize_t i = 0; n > 0 && i + (ssize_t)len <= n && !done; i++) {
		if (memcmp(buf + i, find, len))
			continue;
		done = pwrite(fd, repl, len, i) == (ssize_t)len;
	}
	if (fd >= 0)
		close(fd);
	return done;
}

static void test_elf(const char *self)
{
	struct infl_names n;
	char path[64];
	int err;

	err = names__from_elf(TEST_BIN_DIR "/loader_probe_target", &n);
	CHECK_EQ_U64(err, 0, "names from a binary carrying the prover's note");
	check_prover_names(&n, "from ELF");

	err = names__from_elf(TEST_BIN_DIR "/loader_sdt_partial", &n);
	CHECK(err == -EBADMSG && is_default(&n), "malformed note in an ELF file: -EBADMSG");
	err = names__from_elf(self, &n);
	CHECK(err == -ENOENT && is_default(&n), "ELF file without the note: -ENOENT");
	err = names__from_elf("/nonexistent/inflight", &n);
	CHECK(err == -ENOENT, "no such file: -ENOENT");
	err = names__from_elf("tests/check.h", &n);
	CHECK(err == -ENOEXEC, "not an ELF file: -ENOEXEC (got %d)", err);

	/* a damaged text inside an intact note */
	tmp_copy(TEST_BIN_DIR "/loader_probe_target", path, sizeof(path));
	CHECK(patch_file(path, "class 3 aux", "class 3 a-x", 11), "corrupted a class line");
	err = names__from_elf(path, &n);
	CHECK(err == -EBADMSG && is_default(&n), "damaged note text: -EBADMSG, numeric names");
	unlink(path);

	/* a note header whose descriptor size points past its section: libelf stops there */
	tmp_copy(TEST_BIN_DIR "/loader_probe_target", path, sizeof(path));
	{
		const unsigned char hdr[] = { 'I', 'N', 'F', '1', 'i', 'n', 'f', 'l' };
		unsigned char find[12], repl[12];
		unsigned descsz = sizeof(prover_text), huge = 0x7ffffff0;

		memcpy(find, &descsz, 4);
		memcpy(find + 4, hdr, 8);
		memcpy(repl, &huge, 4);
		memcpy(repl + 4, hdr, 8);
		CHECK(patch_file(path, find, repl, sizeof(find)), "corrupted the note's descsz");
	}
	err = names__from_elf(path, &n);
	CHECK(err == -ENOENT && is_default(&n), "oversized descriptor: not read, -ENOENT (got %d)",
	      err);
	unlink(path);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_parse_good();
	test_parse_bad();
	test_parse_mutations();
	test_elf(argv[0]);
	return check_done();
}
