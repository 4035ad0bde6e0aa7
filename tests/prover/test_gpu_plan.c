// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CUDA path's computation without a GPU: gpu_plan.h's passes, each run on the host
 * thread by thread exactly as the kernels index them (in an order a GPU might use), must
 * give the CPU path's NTT and H bit for bit.
 */
#include "check.h"
#include "circuit.h"
#include "gpu_plan.h"
#include "hpoly.h"
#include "ntt.h"
#include "rng.h"

struct emul {
	unsigned log_n;
	size_t n;
};

/* threads in reverse order: a pass must not depend on which thread runs first */
static void emul_bit_reverse(void *ctx, uint64_t *v)
{
	struct emul *e = ctx;

	for (size_t i = e->n; i-- > 0;)
		gpu_bit_reverse_thread(v, e->log_n, i);
}

static void emul_butterflies(void *ctx, uint64_t *v, const uint64_t *tw, unsigned log_half)
{
	struct emul *e = ctx;

	for (size_t t = e->n / 2; t-- > 0;)
		gpu_butterfly_thread(v, tw, e->log_n, log_half, t);
}

static void emul_scale(void *ctx, uint64_t *v, uint64_t first, uint64_t step)
{
	struct emul *e = ctx;

	for (size_t j = e->n; j-- > 0;)
		gpu_scale_thread(v, first, step, j);
}

static void emul_pointwise_h(void *ctx, uint64_t *a, const uint64_t *b, const uint64_t *c,
			     uint64_t z_inv)
{
	struct emul *e = ctx;

	for (size_t i = e->n; i-- > 0;)
		gpu_pointwise_h_thread(a, b, c, z_inv, i);
}

static const struct gpu_ops emul_ops = {
	emul_bit_reverse, emul_butterflies, emul_scale, emul_pointwise_h,
};

int main(void)
{
	CHECK_EQ_U64(gpu_bit_reverse_index(1, 10), 512, "bitrev(1) over 10 bits is 512");
	CHECK_EQ_U64(gpu_bit_reverse_index(6, 4), 6, "bitrev(0110) = 0110");
	CHECK_EQ_U64(gpu_bit_reverse_index(0x13, 5), 0x19, "bitrev(10011) = 11001");

	for (unsigned log_n = 4; log_n <= 12; log_n += 2) {
		struct circuit_shape s;
		struct ntt_domain d;
		struct emul e = { log_n, (size_t)1 << log_n };
		uint64_t *tables = malloc(ntt_table_bytes(log_n));
		uint64_t *cpu[3], *gpu[3], *aux, *in;
		uint8_t *dens;
		struct witness w;
		struct gpu_plan plan;

		circuit_shape(log_n, &s);
		ntt_domain_init(&d, log_n, tables);
		for (int k = 0; k < 3; k++) {
			cpu[k] = malloc(s.n * 8);
			gpu[k] = malloc(s.n * 8);
		}
		aux = malloc(s.n_aux * 8), in = malloc(s.n_input * 8), dens = malloc(s.density_bytes);
		w = (struct witness){ cpu[0], cpu[1], cpu[2], aux, in, dens };
		circuit_synthesize(&s, 77 + log_n, 1, &w);
		for (int k = 0; k < 3; k++)
			memcpy(gpu[k], cpu[k], s.n * 8);

		plan = (struct gpu_plan){ .log_n = log_n, .n_inv = d.n_inv, .shift = d.shift,
					  .shift_inv = d.shift_inv,
					  .z_inv = hpoly_z_inv_on_coset(&d), .tw = d.tw,
					  .tw_inv = d.tw_inv, .extra_rounds = 0 };

		/* a forward NTT alone */
		uint64_t *v1 = malloc(s.n * 8), *v2 = malloc(s.n * 8), seed = log_n;

		for (size_t i = 0; i < s.n; i++)
			v1[i] = v2[i] = gl_from_u64(rng_next(&seed));
		ntt_forward(&d, v1);
		gpu_plan_ntt(&emul_ops, &e, &plan, v2, d.tw);
		CHECK(!memcmp(v1, v2, s.n * 8), "2^%u: the kernels' NTT equals the CPU's", log_n);
		ntt_inverse(&d, v1);
		gpu_plan_intt(&emul_ops, &e, &plan, v2, 1);
		CHECK(!memcmp(v1, v2, s.n * 8), "2^%u: the kernels' inverse NTT equals the CPU's",
		      log_n);

		hpoly_compute(&d, cpu[0], cpu[1], cpu[2]);
		gpu_plan_h(&emul_ops, &e, &plan, gpu[0], gpu[1], gpu[2]);
		CHECK(!memcmp(cpu[0], gpu[0], s.n * 8), "2^%u: the kernels' H equals the CPU's",
		      log_n);
		plan.extra_rounds = 2;
		/* a, b, c are spent: synthesize them again */
		circuit_synthesize(&s, 77 + log_n, 1,
				   &(struct witness){ gpu[0], gpu[1], gpu[2], aux, in, dens });
		gpu_plan_h(&emul_ops, &e, &plan, gpu[0], gpu[1], gpu[2]);
		CHECK(!memcmp(cpu[0], gpu[0], s.n * 8),
		      "2^%u: with 2 extra rounds the kernels' H is unchanged", log_n);
		for (int k = 0; k < 3; k++)
			free(cpu[k]), free(gpu[k]);
		free(v1), free(v2), free(aux), free(in), free(dens), free(tables);
	}
	return check_done();
}
