// SPDX-License-Identifier: BSD-2-Clause
/* The prover's entry point: gen-c1, or a run with its end-of-run summary. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

static double peak_rss_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static const char *release_name(enum permit_release r)
{
	return r == RELEASE_AFTER_SYNTH ? "after-synth" : "after-send";
}

/* the modelled device's account, as JSON (null when the GPU stage computed H) */
static void print_model_json(const struct pipeline_result *r)
{
	const struct gpu_model *m = &r->model;

	if (!r->modelled) {
		printf("null");
		return;
	}
	printf("{\"modelled\":true,\"rate_mops\":%u,\"kernel_ms\":%.3f,\"regions\":%llu,"
	       "\"busy_s\":%.3f,\"busy_pct\":%.1f,\"overruns\":%llu,\"overrun_ms\":%.3f}",
	       m->mops, m->kernel_ns / 1e6, (unsigned long long)m->regions, m->busy_ns / 1e9,
	       r->wall_s > 0 ? m->busy_ns / 1e9 / r->wall_s * 100 : 0,
	       (unsigned long long)m->overruns, m->overrun_ns / 1e6);
}

static void print_json(const struct cli *cli, const struct pipeline_result *r, int rc)
{
	const struct pipeline_config *c = &cli->cfg;
	double per_min = r->wall_s > 0 ? r->proofs * 60.0 / r->wall_s : 0;
	bool all_ok = r->h_checked && r->h_passed == r->h_checked;

	printf("{\"proofs\":%u,\"partitions\":%u,\"wall_s\":%.3f,\"setup_s\":%.3f,"
	       "\"proofs_per_min\":%.2f,\"peak_rss_mib\":%.1f,\"h_checks_passed\":%u,"
	       "\"h_checks_total\":%u,\"all_h_checks_passed\":%s,\"h_check_every\":%u,"
	       "\"h_checks_after_run\":%s,\"check_s\":%.3f,\"digest\":\"%016llx\","
	       "\"pw\":%u,\"gw\":%u,\"chan_cap\":%u,\"permit_release\":\"%s\",\"jobs\":%u,"
	       "\"log_n\":%u,\"gpu_rounds\":%u,\"synth_rounds\":%u,\"gpu\":\"%s\","
	       "\"gpu_model\":",
	       r->proofs, r->partitions, r->wall_s, r->setup_s, per_min, peak_rss_mib(),
	       r->h_passed, r->h_checked, all_ok ? "true" : "false", r->h_every,
	       r->h_deferred ? "true" : "false", r->check_s, (unsigned long long)r->digest, c->pw,
	       c->gw, c->chan_cap, release_name(c->release), c->jobs, c->log_n, c->gpu_rounds,
	       c->synth_rounds, r->gpu_name ? r->gpu_name : "none");
	print_model_json(r);
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
	printf("peak RSS      %.1f MiB\n", peak_rss_mib());
	printf("H checks      %u/%u passed (%s, %s)%s\n", r->h_passed, r->h_checked, which,
	       r->h_deferred ? "after the run" : "inline", all_ok ? "" : "  <-- FAILED");
	printf("proof digest  %016llx\n", (unsigned long long)r->digest);
	printf("pipeline      pw=%u gw=%u chan-cap=%u permit-release=%s jobs=%u\n", c->pw, c->gw,
	       c->chan_cap, release_name(c->release), c->jobs);
	printf("work          log-n=%u gpu-rounds=%u synth-rounds=%u gpu=%s\n", c->log_n,
	       c->gpu_rounds, c->synth_rounds, r->gpu_name ? r->gpu_name : "none");
	if (r->modelled)
		printf("device        MODELLED, %.2f ms per partition at %u Mop/s, busy %.1f%%, "
		       "%llu overruns\n",
		       r->model.kernel_ns / 1e6, r->model.mops,
		       r->wall_s > 0 ? r->model.busy_ns / 1e9 / r->wall_s * 100 : 0,
		       (unsigned long long)r->model.overruns);
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
