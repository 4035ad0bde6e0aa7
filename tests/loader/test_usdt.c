// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_notes.c: the stapsdt notes of real binaries (the contract complete, a probe with the
 * wrong argument count, probes missing), the error codes, and mutated copies of a binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "check.h"
#include "contract/usdt_notes.h"

static const struct usdt_probe *find(const struct usdt_notes *un, const char *name)
{
	for (size_t i = 0; i < un->n; i++)
		if (!strcmp(un->probes[i].name, name))
			return &un->probes[i];
	return NULL;
}

static void test_target(void)
{
	struct usdt_notes un;
	int sites[USDT_CONTRACT_PROBES], bad[USDT_CONTRACT_PROBES];
	const struct usdt_probe *a, *f, *s;

	CHECK_EQ_U64(usdt_notes__read(TEST_BIN_DIR "/loader_probe_target", &un), 0,
		     "reads the probe target's notes");
	CHECK_EQ_U64(un.n, 3, "one site per probe");
	a = find(&un, "buf_alloc");
	f = find(&un, "buf_free");
	s = find(&un, "stage");
	CHECK(a && f && s, "buf_alloc, buf_free and stage found");
	if (!a || !f || !s)
		return;
	CHECK(!strcmp(a->provider, "prover") && !strcmp(s->provider, "prover"), "provider prover");
	CHECK(a->nargs == 4 && f->nargs == 3 && s->nargs == 2, "argument counts 4, 3, 2");
	CHECK(a->sema && f->sema && s->sema && a->sema != f->sema && f->sema != s->sema,
	      "each probe has its own semaphore");
	/* dtrace -G lays the semaphores out as consecutive unsigned shorts */
	CHECK(f->sema == a->sema + 2 && s->sema == f->sema + 2, "semaphores 2 bytes apart");
	CHECK(a->loc && f->loc && s->loc && a->loc != s->loc, "distinct probe sites");
	CHECK(strchr(a->args, '@') != NULL, "argument string in sdt form (\"%s\")", a->args);
	CHECK_EQ_U64(usdt_notes__contract(&un, sites, bad), 0, "the contract is complete");
	CHECK(sites[0] == 1 && sites[1] == 1 && sites[2] == 1 && !bad[0] && !bad[1] && !bad[2],
	      "one good site each, none bad");
	usdt_notes__free(&un);
	CHECK(un.n == 0 && un.probes == NULL, "free leaves an empty list");
}

static void test_variants(const char *self)
{
	struct usdt_notes un;
	int sites[USDT_CONTRACT_PROBES], bad[USDT_CONTRACT_PROBES];

	CHECK_EQ_U64(usdt_notes__read(TEST_BIN_DIR "/loader_sdt_bad_args", &un), 0,
		     "reads the bad-arguments variant");
	CHECK_EQ_U64(usdt_notes__contract(&un, sites, bad), (__u64)-EPROTO,
		     "stage with 1 argument: -EPROTO");
	CHECK(sites[2] == 0 && bad[2] == 1 && sites[0] == 1 && sites[1] == 1,
	      "the bad site is counted as bad, the others as good");
	CHECK(!strcmp(find(&un, "stage")->args, "-8@%rdi"), "its argument string");
	CHECK_EQ_U64(find(&un, "buf_alloc")->sema, 0, "no semaphore: address 0");
	usdt_notes__free(&un);

	CHECK_EQ_U64(usdt_notes__read(TEST_BIN_DIR "/loader_sdt_partial", &un), 0,
		     "reads the partial variant");
	CHECK_EQ_U64(usdt_notes__contract(&un, sites, bad), (__u64)-ENOENT,
		     "only buf_alloc: -ENOENT");
	CHECK(sites[0] == 1 && sites[1] == 0 && sites[2] == 0, "sites 1, 0, 0");
	usdt_notes__free(&un);

	CHECK_EQ_U64(usdt_notes__check_contract(TEST_BIN_DIR "/loader_probe_target"), 0,
		     "check_contract: complete");
	CHECK_EQ_U64(usdt_notes__check_contract(TEST_BIN_DIR "/loader_sdt_bad_args"),
		     (__u64)-EPROTO, "check_contract: wrong arguments");
	CHECK_EQ_U64(usdt_notes__check_contract(TEST_BIN_DIR "/loader_sdt_partial"),
		     (__u64)-ENOENT, "check_contract: probes missing");
	CHECK_EQ_U64(usdt_notes__check_contract(self), (__u64)-ENOENT,
		     "check_contract: an ELF file without probes");
	CHECK_EQ_U64(usdt_notes__check_contract("tests/check.h"), (__u64)-ENOEXEC,
		     "check_contract: not an ELF file");
	CHECK_EQ_U64(usdt_notes__check_contract("/nonexistent/x"), (__u64)-ENOENT,
		     "check_contract: no such file (also -ENOENT: callers check existence)");
	CHECK_EQ_U64(usdt_notes__read(self, &un), 0, "reading a binary without notes succeeds");
	CHECK(un.n == 0, "... with no probes");
	usdt_notes__free(&un);
}

/* Random bytes written over the binary's note area: the reader must refuse or read, never
 * crash or read out of bounds (this test runs under ASan/UBSan too). */
static void test_mutations(void)
{
	static unsigned char orig[1 << 20], buf[1 << 20];
	char path[] = "/tmp/inflight-usdt-XXXXXX";
	int fd = open(TEST_BIN_DIR "/loader_probe_target", O_RDONLY), out;
	ssize_t len = fd < 0 ? -1 : read(fd, orig, sizeof(orig));
	unsigned seed = 777, ok = 0, refused = 0, other = 0;
	ssize_t note = -1;

	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; len > 8 && i < len - 8; i++)
		if (!memcmp(orig + i, "stapsdt", 8)) {
			note = i - 12; /* the note header precedes its owner name */
			break;
		}
	CHECK(note > 0, "found the first stapsdt note");
	if (note <= 0)
		return;
	out = mkstemp(path);
	for (int round = 0; round < 400 && out >= 0; round++) {
		struct usdt_notes un;
		int err;

		memcpy(buf, orig, len);
		for (int k = 0; k < 1 + round % 3; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = note + (seed >> 8) % 160; /* header, addresses, strings */

			seed = seed * 1103515245 + 12345;
			buf[at] = round % 2 ? (unsigned char)(seed >> 24) : 0;
		}
		if (pwrite(out, buf, len, 0) != len)
			break;
		err = usdt_notes__read(path, &un);
		if (!err)
			ok++;
		else if (err == -EBADMSG || err == -ENOEXEC)
			refused++;
		else
			other++;
		/* whatever was read holds printable, terminated strings */
		for (size_t i = 0; i < un.n; i++)
			other += strspn(un.probes[i].args, "\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29"
							     "*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOP"
							     "QRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz"
							     "{|}~") != strlen(un.probes[i].args);
		usdt_notes__free(&un);
	}
	if (out >= 0)
		close(out);
	unlink(path);
	CHECK_EQ_U64(other, 0, "400 mutated binaries: read cleanly or refused");
	CHECK(ok > 0 && refused > 0, "both outcomes seen (%u read, %u refused)", ok, refused);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_target();
	test_variants(argv[0]);
	test_mutations();
	return check_done();
}
