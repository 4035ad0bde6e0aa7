// SPDX-License-Identifier: BSD-2-Clause
/* The prover's entry point: gen-c1, or a run with its end-of-run summary. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "exit_codes.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	/* no SA_RESTART: the dispatcher's wait for a job slot must wake up */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int gen_c1(const struct cli *cli)
{
	size_t len;
	char *text = c1_generate(&cli->cfg.gen, &len);
	FILE *f;

	if (!text) {
		fprintf(stderr, "prover: gen-c1: out of memory\n");
		return PROVER_EXIT_SYSTEM;
	}
	f = fopen(cli->out, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "prover: gen-c1: cannot write %s: %s\n", cli->out, strerror(errno));
		free(text);
		return PROVER_EXIT_INPUT_IO;
	}
	free(text);
	return PROVER_EXIT_OK;
}

static const char *release_name(enum permit_release r)
{
	return r == RELEASE_AFTER_SYNTH ? "after-synth" : "after-send";
}

static double share_pct(uint64_t ns, double wall_s)
{
	return wall_s > 0 ? ns / 1e9 / wall_s * 100 : 0;
}

/* the modelled device's account, as JSON (null when the GPU stage computed H) */
static void print_model_json(const struct pipeline_result *r)
{
	const struct gpu_model *m = &r->model;

	if (!r->modelled) {
		printf("null");
		return;
	}
	printf("{\"modelled\":true,\"rate_mops\":%u,\"kernel_ms\":%.3f,\"spread_pct\":%u,"
	       "\"seed\":%llu,\"regions\":%llu,\"busy_s\":%.3f,\"busy_pct\":%.1f,"
	       "\"overruns\":%llu,\"overrun_ms\":%.3f,\"real_max_pct\":%.1f,"
	       "\"makespan_s\":%.6f}",
	       m->mops, m->kernel_ns / 1e6, m->spread_pct, (unsigned long long)m->seed,
	       (unsigned long long)m->regions, m->busy_ns / 1e9, share_pct(m->busy_ns, r->wall_s),
	       (unsigned long long)m->overruns, m->overrun_ns / 1e6, m->max_real_permille / 10.0,
	       r->model_makespan_s);
}

/* the modelled host's account, as JSON (null when synthesis ran in real time) */
static void print_host_json(const struct pipeline_result *r)
{
	const struct host_model *h = &r->host;

	if (!r->host_modelled) {
		printf("null");
		return;
	}
	printf("{\"modelled\":true,\"rate_kcps\":%u,\"synth_ms\":%.3f,\"spread_pct\":%u,"
	       "\"seed\":%llu,\"syntheses\":%llu,\"modelled_s\":%.6f,\"overruns\":%llu,"
	       "\"overrun_ms\":%.3f,\"real_max_pct\":%.1f}",
	       h->kcps, h->synth_ns / 1e6, h->spread_pct, (unsigned long long)h->seed,
	       (unsigned long long)h->syntheses, h->modelled_ns / 1e9,
	       (unsigned long long)h->overruns, h->overrun_ns / 1e6, h->max_real_permille / 10.0);
}

static void print_json(const struct cli *cli, const struct pipeline_result *r, int rc)
{
	const struct pipeline_config *c = &cli->cfg;
	double per_min = r->wall_s > 0 ? r->proofs * 60.0 / r->wall_s : 0;
	bool all_ok = r->h_checked && r->h_passed == r->h_checked;

	printf("{\"proofs\":%u,\"partitions\":%u,\"wall_s\":%.3f,\"setup_s\":%.3f,"
	       "\"proofs_per_min\":%.2f,\"peak_rss_mib\":%.1f,\"rss_before_mib\":%.1f,"
	       "\"partition_bytes\":%zu,\"h_checks_passed\":%u,"
	       "\"h_checks_total\":%u,\"all_h_checks_passed\":%s,\"h_check_every\":%u,"
	       "\"h_checks_after_run\":%s,\"check_s\":%.3f,\"digest\":\"%016llx\","
	       "\"pw\":%u,\"gw\":%u,\"chan_cap\":%u,\"permit_release\":\"%s\",\"jobs\":%u,"
	       "\"log_n\":%u,\"gpu_rounds\":%u,\"synth_rounds\":%u,\"gpu\":\"%s\","
	       "\"host\":\"%s\",\"gpu_model\":",
	       r->proofs, r->partitions, r->wall_s, r->setup_s, per_min, pipeline_peak_rss_mib(),
	       r->rss_before_mib, r->partition_bytes, r->h_passed, r->h_checked, all_ok ? "true" : "false", r->h_every,
	       r->h_deferred ? "true" : "false", r->check_s, (unsigned long long)r->digest, c->pw,
	       c->gw, c->chan_cap, release_name(c->release), c->jobs, c->log_n, c->gpu_rounds,
	       c->synth_rounds, r->gpu_name ? r->gpu_name : "none",
	       r->host_modelled ? "model" : "real");
	print_model_json(r);
	printf(",\"host_model\":");
	print_host_json(r);
	printf(",\"exit\":%d}\n", rc);
}

static void print_summary(const struct cli *cli, const struct pipeline_result *r, int rc)
{
	const struct pipeline_config *c = &cli->cfg;
	double per_min = r->wall_s > 0 ? r->proofs * 60.0 / r->wall_s : 0;
	bool all_ok = r->h_checked && r->h_passed == r->h_checked;
	char which[96];

	if (cli->json) {
		print_json(cli, r, rc);
		return;
	}
	if (r->h_every == 1)
		snprintf(which, sizeof(which), "every partition");
	else
		snprintf(which, sizeof(which), "1 partition in %u", r->h_every);
	printf("proofs        %u (%u partitions)\n", r->proofs, r->partitions);
	printf("wall time     %.2f s (set-up %.2f s before it)\n", r->wall_s, r->setup_s);
	printf("proofs/min    %.2f\n", per_min);
	printf("peak RSS      %.1f MiB\n", pipeline_peak_rss_mib());
	printf("H checks      %u/%u passed (%s, %s)%s\n", r->h_passed, r->h_checked, which,
	       r->h_deferred ? "after the run" : "inline", all_ok ? "" : "  <-- FAILED");
	printf("proof digest  %016llx\n", (unsigned long long)r->digest);
	printf("pipeline      pw=%u gw=%u chan-cap=%u permit-release=%s jobs=%u\n", c->pw, c->gw,
	       c->chan_cap, release_name(c->release), c->jobs);
	printf("work          log-n=%u gpu-rounds=%u synth-rounds=%u gpu=%s host=%s\n",
	       c->log_n, c->gpu_rounds, c->synth_rounds, r->gpu_name ? r->gpu_name : "none",
	       r->host_modelled ? "model" : "real");
	if (r->modelled)
		printf("device        MODELLED, %.2f ms +-%u%% per partition at %u Mop/s, busy "
		       "%.1f%%\n              overruns %llu (the real work took at most %.0f%% of a "
		       "kernel time)\n              last region over %.3f s after the start, by the "
		       "model's clock\n",
		       r->model.kernel_ns / 1e6, r->model.spread_pct, r->model.mops,
		       share_pct(r->model.busy_ns, r->wall_s),
		       (unsigned long long)r->model.overruns, r->model.max_real_permille / 10.0,
		       r->model_makespan_s);
	if (r->host_modelled)
		printf("host          MODELLED, %.2f ms +-%u%% per synthesis at %uk constraints/s\n"
		       "              overruns %llu (the real work took at most %.0f%% of a "
		       "modelled time)\n",
		       r->host.synth_ns / 1e6, r->host.spread_pct, r->host.kcps,
		       (unsigned long long)r->host.overruns, r->host.max_real_permille / 10.0);
}

int main(int argc, char **argv)
{
	struct pipeline_result res;
	struct cli cli;
	int rc;

	cli_parse(argc, argv, &cli);
	if (cli.gen_c1)
		return gen_c1(&cli);
	catch_stop_signals();
	cli.cfg.stop = &stop_requested;
	rc = pipeline_run(&cli.cfg, &res);
	if (rc == PROVER_EXIT_OK || rc == PROVER_EXIT_CHECK)
		print_summary(&cli, &res, rc);
	return rc;
}
