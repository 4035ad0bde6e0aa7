// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel feature probing, before load. Each probe names the kernel release (and the commit)
 * that brought what it looks for; attach/session.c turns the answers into program variants
 * (bpf_program__set_autoload) and rodata, and the BPF side's CO-RE flavours do the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "attach/features.h"

/*
 * BPF_ATOMIC_OP(BPF_DW, BPF_CMPXCHG) on the stack, in a socket filter: accepted from 5.12
 * (upstream 5ffa25502b5a "bpf: Add instructions for atomic_[cmp]xchg"); 5.10's verifier
 * reads the opcode as BPF_XADD with reserved fields set and refuses it.
 */
static bool probe_atomics(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The kernel's BTF, read but not parsed: btf__load_vmlinux_btf() indexes its ~150,000 types
 * (40-50 ms here, a third of inflight's attach time) and libbpf does it again at load. The
 * choices below only need to know whether a few names exist, which the string section says.
 */
struct btf_strings {
	char *buf;
	const char *str;
	size_t len;
};

static int btf_strings_read(struct btf_strings *b)
{
	const struct btf_header *h;
	size_t cap = 8u << 20, n = 0;
	ssize_t got;
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);

	memset(b, 0, sizeof(*b));
	if (fd < 0)
		return -errno;
	b->buf = malloc(cap);
	while (b->buf && (got = read(fd, b->buf + n, cap - n)) > 0) {
		n += got;
		if (n == cap) {
			char *more = realloc(b->buf, cap * 2);

			if (!more)
				break;
			b->buf = more;
			cap *= 2;
		}
	}
	close(fd);
	h = (const void *)b->buf;
	if (!b->buf || n < sizeof(*h) || h->magic != BTF_MAGIC ||
	    (size_t)h->hdr_len + h->str_off + h->str_len > n) {
		free(b->buf);
		b->buf = NULL;
		return -EINVAL;
	}
	b->str = b->buf + h->hdr_len + h->str_off;
	b->len = h->str_len;
	return 0;
}

/* `name` is one of the kernel's BTF names (a type's, a member's). */
static bool btf_has_name(const struct btf_strings *b, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = b->str, *end = b->str + b->len; p + n < end;) {
		const char *hit = memmem(p, end - p, name, n + 1); /* with its NUL */

		if (!hit)
			return false;
		if (hit == b->str || hit[-1] == '\0')
			return true;
		p = hit + 1;
	}
	return false;
}

bool features__uprobe_multi_named(void)
{
	struct btf_strings b;
	bool has;

	if (btf_strings_read(&b))
		return false;
	has = btf_has_name(&b, "BPF_TRACE_UPROBE_MULTI");
	free(b.buf);
	return has;
}

/* mm_struct's RSS counters: a struct mm_rss_stat before 6.2, percpu_counter rss_stat[] since
 * (upstream f1a7941243c1, "mm: convert mm's rss stats into percpu_counter"), which removed
 * struct mm_rss_stat. */
static enum rss_layout rss_layout_of(const struct btf_strings *b)
{
	if (!btf_has_name(b, "rss_stat"))
		return RSS_LAYOUT_NONE;
	if (btf_has_name(b, "mm_rss_stat"))
		return RSS_LAYOUT_ATOMIC;
	return btf_has_name(b, "percpu_counter") ? RSS_LAYOUT_PERCPU : RSS_LAYOUT_NONE;
}

int features__probe(struct infl_features *f)
{
	struct btf_strings b;
	struct utsname u;

	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0)
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	if (btf_strings_read(&b))
		return -ENOENT;
	f->btf = true;
	/* tp_btf programs (5.5) on the tracepoints we need, by their BTF typedefs */
	f->tp_btf = btf_has_name(&b, "btf_trace_sched_process_exit") &&
		    btf_has_name(&b, "btf_trace_sched_process_exec") &&
		    btf_has_name(&b, "btf_trace_sched_process_fork");
	f->rss_tp = btf_has_name(&b, "btf_trace_rss_stat"); /* kmem:rss_stat, 5.5 */
	f->rss = rss_layout_of(&b);
	free(b.buf);
	/* BPF_MAP_TYPE_RINGBUF: 5.8 (upstream 457f44363a88) */
	f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	f->atomics = probe_atomics();
	/* bpf_loop: 5.17 (upstream e6f2dd0f8067) */
	f->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
	/* bpf_get_attach_cookie: 5.15 (upstream 7adfc6c9b315); libbpf's usdt.bpf.h falls
	 * back to an IP-to-spec map without it */
	f->cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					    NULL) == 1;
	return 0;
}

const char *features__missing(const struct infl_features *f)
{
	if (!f->btf)
		return "kernel BTF at /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF, Linux 5.4)";
	if (!f->ringbuf)
		return "the BPF ring buffer (Linux 5.8)";
	if (!f->tp_btf)
		return "BTF-typed tracepoints for sched_process_exit, exec and fork (Linux 5.5)";
	return NULL;
}

const char *features__rss_unavailable(const struct infl_features *f)
{
	if (!f->rss_tp)
		return "no kmem:rss_stat tracepoint in this kernel (Linux 5.5)";
	if (f->rss == RSS_LAYOUT_NONE)
		return "this kernel's struct mm_struct has no rss_stat counters inflight can read";
	return NULL;
}

void features__describe(const struct infl_features *f, char *buf, size_t len)
{
	snprintf(buf, len, "kernel %s: %s, %s, RSS %s", f->release[0] ? f->release : "?",
		 f->atomics && f->bpf_loop ? "accounting by atomics, no lock" :
		 f->atomics ? "accounting under a lock per process (no bpf_loop before 5.17)" :
			      "accounting under a lock per process (no BPF atomics before 5.12)",
		 f->cookie ? "BPF cookies" : "USDT specs by address (no BPF cookies before 5.15)",
		 features__rss_unavailable(f) ? "unavailable" :
		 f->rss == RSS_LAYOUT_ATOMIC ? "from atomic counters (before 6.2)" :
					       "from percpu counters");
}

const char *features__libbpf_version(void)
{
	const char *v = libbpf_version_string(); /* "v1.5" */

	return v[0] == 'v' ? v + 1 : v;
}
