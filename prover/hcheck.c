// SPDX-License-Identifier: BSD-2-Clause
/* The deferred H check of the modelled device's partitions (see hcheck.h). */
#include <stdlib.h>
#include <sys/mman.h>
#include "field.h"
#include "gpu_model.h"
#include "hcheck.h"
#include "hpoly.h"

bool hcheck_add(struct hcheck_list *l, const struct hcheck_sample *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct hcheck_sample *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *s;
	return true;
}

void hcheck_list_free(struct hcheck_list *l)
{
	free(l->v);
	*l = (struct hcheck_list){ 0 };
}

/* one witness and the device's output, reused for every sample */
struct scratch {
	struct witness w;
	uint64_t *out;
	void *mem;
	size_t bytes;
};

static bool scratch_new(struct scratch *s, const struct circuit_shape *sh)
{
	size_t n = sh->n, words = 3 * n + sh->n_aux + sh->n_input + n / 2;
	uint64_t *m;

	s->bytes = words * sizeof(uint64_t) + sh->density_bytes;
	s->mem = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED)
		return false;
	m = s->mem;
	s->w.a = m;
	s->w.b = m + n;
	s->w.c = m + 2 * n;
	s->w.aux = m + 3 * n;
	s->w.input = s->w.aux + sh->n_aux;
	s->out = s->w.input + sh->n_input;
	s->w.density = (uint8_t *)(s->out + n / 2);
	return true;
}

static bool check_one(const struct hcheck_ctx *ctx, struct scratch *s,
		      const struct hcheck_sample *smp)
{
	const struct ntt_domain *d = ctx->dom;
	uint64_t abc_at_x[3], x, sum = 0;

	circuit_synthesize(ctx->shape, smp->seed, ctx->synth_rounds, &s->w);
	gpu_model_fold(s->w.a, s->w.b, s->w.c, d->n, s->out);
	for (size_t i = 0; i < d->n / 2; i++)
		sum = gl_add(sum, s->out[i]);
	x = hpoly_pick_x(d, ctx->x_seed ^ smp->owner);
	hpoly_eval_from_evals(d, s->w.a, s->w.b, s->w.c, x, abc_at_x);
	hpoly_compute(d, s->w.a, s->w.b, s->w.c);
	hpoly_round_trips(d, s->w.a, ctx->extra_rounds);
	return sum == smp->h_acc && hpoly_check(d, abc_at_x, s->w.a, x);
}

long hcheck_run_deferred(const struct hcheck_ctx *ctx, const struct hcheck_list *l)
{
	struct scratch s;
	long passed = 0;

	if (!l->n)
		return 0;
	if (!scratch_new(&s, ctx->shape))
		return -1;
	for (size_t i = 0; i < l->n; i++)
		passed += check_one(ctx, &s, &l->v[i]);
	munmap(s.mem, s.bytes);
	return passed;
}
