// SPDX-License-Identifier: BSD-2-Clause
/* Options, their defaults and their checks. --help is the reference for every knob. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "c1.h"
#include "circuit.h"
#include "cli.h"
#include "exit_codes.h"
#include "gpu_model.h"
#include "hcheck.h"
#include "host_model.h"
#include "model_time.h"

const char *argp_program_version = "prover (inflight reference prover) 1";

enum {
	OPT_PW = 0x100, OPT_GW, OPT_CHAN_CAP, OPT_RELEASE, OPT_JOBS, OPT_LOG_N, OPT_GPU_ROUNDS,
	OPT_SYNTH_ROUNDS, OPT_GPU, OPT_PAYLOAD_KIB, OPT_UNTRACKED_MB, OPT_JSON, OPT_SECTOR,
	OPT_SEED, OPT_GPU_RATE, OPT_H_CHECK_EVERY, OPT_GPU_SPREAD, OPT_HOST, OPT_SYNTH_RATE,
	OPT_SYNTH_SPREAD, OPT_MODEL_SEED,
};

#define STR(x) #x
#define XSTR(x) STR(x)
#define DEFAULT_PROOFS 3
#define DEFAULT_JOBS 2
#define DEFAULT_PARTITIONS 10
#define DEFAULT_PW 4
#define DEFAULT_GW 2
#define DEFAULT_LOG_N 18
#define DEFAULT_SLICE_KIB 16

static const struct argp_option run_options[] = {
	{ NULL, 0, NULL, 0, "Pipeline (the knobs of the incident):", 1 },
	{ "proofs", 'n', "N", 0, "proof jobs to run (default 3)", 1 },
	{ "partitions", 'p', "P",  0,
	  "partitions per proof of the generated input (default 10; a C1 file says its own)", 1 },
	{ "pw", OPT_PW, "N", 0, "synthesis permits: partitions synthesizing at once (default 4)", 1 },
	{ "gw", OPT_GW, "N", 0, "GPU workers, sharing one device lock (default 2)", 1 },
	{ "chan-cap", OPT_CHAN_CAP, "N", 0, "GPU channel capacity (default: equal to --pw)", 1 },
	{ "permit-release", OPT_RELEASE, "WHEN", 0,
	  "when a partition gives its permit back: after-synth (the incident: before the send) "
	  "or after-send (the fix; default)", 1 },
	{ "jobs", OPT_JOBS, "J", 0, "proof jobs admitted at once (default 2)", 1 },
	{ NULL, 0, NULL, 0, "Work:", 2 },
	{ "log-n", OPT_LOG_N, "K", 0,
	  "2^K constraints per partition (8..26, default 18); a partition holds about 32 * 2^K "
	  "bytes after synthesis", 2 },
	{ "gpu-rounds", OPT_GPU_ROUNDS, "R", 0,
	  "GPU stage work: each round past the first adds a forward+inverse NTT of H, real work "
	  "still checked (1..1000, default 1); raise it to make the GPU slower than synthesis", 2 },
	{ "synth-rounds", OPT_SYNTH_ROUNDS, "R", 0,
	  "synthesis work: field squarings per row deriving its constant (1..1000, default 1)", 2 },
	{ "input", 'i', "FILE", 0, "C1 input (from gen-c1), parsed by every proof job; default: "
	  "one generated in memory", 2 },
	{ "payload-kib", OPT_PAYLOAD_KIB, "K", 0,
	  "generated input: phase1_out KiB per partition (1..65536, default 16)", 2 },
	{ "untracked-mb", OPT_UNTRACKED_MB, "N", 0,
	  "hold N MiB of touched memory that the probes never report (default 0)", 2 },
	{ NULL, 0, NULL, 0, "The GPU stage:", 3 },
	{ "gpu", OPT_GPU, "MODE", 0,
	  "auto (default): CUDA when a device is present, else the modelled device; model: a "
	  "MODELLED GPU, a device of its own whose kernel time is derived from the work (the H "
	  "recipe's NTTs and the MSM) at --gpu-rate and uses no CPU, so synthesis keeps the "
	  "cores, as on a real host; cpu: H computed on the CPU cores that also synthesize; "
	  "cuda: fail (exit 6) without a device", 3 },
	{ "gpu-rate", OPT_GPU_RATE, "MOPS", 0,
	  "the modelled device's speed: million field operations per second (1.."
	  XSTR(GPU_MODEL_MAX_MOPS) "; default " XSTR(GPU_MODEL_BALANCED_MOPS) " with --host "
	  "model, 55.4 ms at 2^17: cuzk's GPU stage 50 times shorter, at cuzk's balance with "
	  "the modelled synthesis; else " XSTR(GPU_MODEL_DEFAULT_MOPS) ", 181 ms at 2^18, "
	  "slower than real synthesis here)", 3 },
	{ "gpu-spread", OPT_GPU_SPREAD, "PCT", 0,
	  "the modelled device's kernel time varies per partition, uniformly within PCT% of "
	  "its mean, drawn from --model-seed (0.." XSTR(MODEL_MAX_SPREAD_PCT) ", default "
	  XSTR(GPU_MODEL_DEFAULT_SPREAD) ": cuzk's 1.8-3.75 s)", 3 },
	{ "h-check-every", OPT_H_CHECK_EVERY, "N", 0,
	  "check the H of 1 partition in N (1.." XSTR(HCHECK_EVERY_MAX) "; default: every "
	  "partition on CUDA and the CPU, where the check is inline; 1 in "
	  XSTR(HCHECK_EVERY_MODEL) " on the modelled device, checked after "
	  "the run from the same witness, so that it costs the pipeline no CPU)", 3 },
	{ NULL, 0, NULL, 0, "Synthesis:", 4 },
	{ "host", OPT_HOST, "MODE", 0,
	  "real (default): synthesis takes what it takes on this machine's cores; model: a "
	  "MODELLED host, as on cuzk's where each synthesizing partition has cores of its own: "
	  "the real witness is still computed, then the partition waits until its modelled "
	  "duration (from its constraints at --synth-rate, whatever else runs) has passed", 4 },
	{ "synth-rate", OPT_SYNTH_RATE, "KCPS", 0,
	  "the modelled host's speed: thousand constraints per second per partition, "
	  "--synth-rounds R counting R times (1.." XSTR(HOST_MODEL_MAX_KCPS) ", default "
	  XSTR(HOST_MODEL_DEFAULT_KCPS) ": 729.7 ms at 2^17, cuzk's 36.5 s under load 50 "
	  "times shorter)", 4 },
	{ "synth-spread", OPT_SYNTH_SPREAD, "PCT", 0,
	  "the modelled synthesis time varies per partition, uniformly within PCT% of its "
	  "mean (0.." XSTR(MODEL_MAX_SPREAD_PCT) ", default " XSTR(HOST_MODEL_DEFAULT_SPREAD)
	  ")", 4 },
	{ "model-seed", OPT_MODEL_SEED, "S", 0,
	  "the seed of the modelled durations (default " XSTR(MODEL_DEFAULT_SEED) "): a "
	  "partition's durations depend on it and its owner id only, so the same seed gives "
	  "every variant the same durations", 4 },
	{ NULL, 0, NULL, 0, "Output:", 5 },
	{ "json", OPT_JSON, NULL, 0, "print the summary as one JSON object", 5 },
	{ NULL, 0, NULL, 0, "Informational:", -1 },
	{ 0 }
};

static const char run_doc[] =
	"A cuzk-like Groth16 proving pipeline: proof jobs of P partitions; each partition waits "
	"for a synthesis permit, synthesizes an R1CS witness over Goldilocks (in its real time, "
	"or in the time of a MODELLED host), is sent into a bounded GPU channel, gets its H "
	"polynomial computed by a GPU worker (NTTs on CUDA, or on the CPU, or the time of them "
	"on a MODELLED device) and is finalized on the CPU. Every large buffer and stage "
	"transition fires a USDT probe (provider `prover`) for inflight to watch."
	"\v"
	"Subcommand:\n"
	"  prover gen-c1 -o FILE [OPTION...]   write a C1 input (gen-c1 --help)\n"
	"\n"
	"Examples:\n"
	"  prover                          3 proofs with the defaults, in seconds\n"
	"  prover --json                   the same, the summary as JSON\n"
	"  prover gen-c1 -o c1.json && prover -i c1.json\n"
	"  prover --log-n 20 --gpu-rounds 4    bigger buffers, a slower GPU stage\n"
	"  prover --gpu model --gpu-rate 2600  a modelled GPU four times the default speed\n"
	"  prover --gpu model --host model --log-n 17   cuzk's balance, 50 times faster\n"
	"  prover --gpu cpu                H on the CPU, every partition checked inline\n"
	"The incident and its two fixes, scaled (prover/incident.sh runs the three in both "
	"scenes of prover/story.sh, several seeds each; on the modelled host and device):\n"
	"  S=\"--gpu model --host model --log-n 17 --pw 12 -n 12 --jobs 12\"\n"
	"  prover $S --chan-cap 1 --permit-release after-synth    the incident\n"
	"  prover $S --chan-cap 1 --permit-release after-send     fix 1\n"
	"  prover $S --chan-cap 12 --permit-release after-send    fix 2 (kept)\n"
	"\n"
	"At the end: proofs, wall time, proofs per minute, peak RSS, whether the H checks "
	"(A(x)B(x) - C(x) = H(x)(x^N - 1) at a random x) passed, and for each modelled part "
	"one line, marked MODELLED, with its mean time, spread, how busy it was and how often "
	"the real work did not fit in the modelled time (overruns).\n"
	"\n"
	"Exit status: 0 all proofs done and checked; 1 an H check failed; 2 bad command line; "
	"3 input unreadable (or output unwritable); 4 malformed C1 input; 5 out of memory or "
	"another system failure; 6 --gpu=cuda without a usable CUDA device.";

static const struct argp_option gen_options[] = {
	{ "output", 'o', "FILE", 0, "the file to write (required)", 0 },
	{ "partitions", 'p', "P", 0, "partitions (1..256, default 10)", 0 },
	{ "payload-kib", OPT_PAYLOAD_KIB, "K", 0,
	  "phase1_out KiB per partition (1..65536, default 16)", 0 },
	{ "sector", OPT_SECTOR, "N", 0, "sector number (default 1)", 0 },
	{ "seed", OPT_SEED, "S", 0, "seed every byte derives from (default 1)", 0 },
	{ 0 }
};

static const char gen_doc[] =
	"Writes a C1-like input: JSON with the sector number, prover id, ticket, seed and a "
	"base64 phase1_out payload, P slices of it, one per partition. The same options give "
	"the same file."
	"\v"
	"Examples:\n"
	"  prover gen-c1 -o c1.json\n"
	"  prover gen-c1 -o big.json --partitions 10 --payload-kib 4096\n";

static unsigned long long parse_number(const char *opt, const char *arg, unsigned long long min,
				       unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "prover: %s: '%s' is not a whole number from %llu to %llu\n", opt,
			arg, min, max);
		exit(PROVER_EXIT_USAGE);
	}
	return v;
}

#define NUM(opt, min, max) parse_number(opt, arg, min, max)

static bool chan_cap_set, partitions_set, gpu_rate_set;

static error_t run_opt(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	struct pipeline_config *c = &cli->cfg;

	switch (key) {
	case 'n': c->proofs = NUM("--proofs", 1, 100000); break;
	case 'p':
		c->gen.partitions = NUM("--partitions", 1, C1_MAX_PARTITIONS);
		partitions_set = true;
		break;
	case OPT_PW: c->pw = NUM("--pw", 1, 1024); break;
	case OPT_GW: c->gw = NUM("--gw", 1, 64); break;
	case OPT_CHAN_CAP:
		c->chan_cap = NUM("--chan-cap", 1, 4096);
		chan_cap_set = true;
		break;
	case OPT_JOBS: c->jobs = NUM("--jobs", 1, 256); break;
	case OPT_LOG_N: c->log_n = NUM("--log-n", 8, 26); break;
	case OPT_GPU_ROUNDS: c->gpu_rounds = NUM("--gpu-rounds", 1, 1000); break;
	case OPT_GPU_RATE:
		c->gpu_mops = NUM("--gpu-rate", GPU_MODEL_MIN_MOPS, GPU_MODEL_MAX_MOPS);
		gpu_rate_set = true;
		break;
	case OPT_GPU_SPREAD:
		c->gpu_spread = NUM("--gpu-spread", 0, MODEL_MAX_SPREAD_PCT);
		break;
	case OPT_SYNTH_RATE:
		c->synth_kcps = NUM("--synth-rate", HOST_MODEL_MIN_KCPS, HOST_MODEL_MAX_KCPS);
		break;
	case OPT_SYNTH_SPREAD:
		c->synth_spread = NUM("--synth-spread", 0, MODEL_MAX_SPREAD_PCT);
		break;
	case OPT_MODEL_SEED: c->model_seed = NUM("--model-seed", 0, UINT64_MAX); break;
	case OPT_HOST:
		if (!strcmp(arg, "real"))
			c->host = HOST_REAL;
		else if (!strcmp(arg, "model"))
			c->host = HOST_MODEL;
		else {
			fprintf(stderr, "prover: --host: '%s' is neither real nor model\n", arg);
			exit(PROVER_EXIT_USAGE);
		}
		break;
	case OPT_H_CHECK_EVERY:
		c->h_check_every = NUM("--h-check-every", 1, HCHECK_EVERY_MAX);
		break;
	case OPT_SYNTH_ROUNDS: c->synth_rounds = NUM("--synth-rounds", 1, 1000); break;
	case OPT_PAYLOAD_KIB:
		c->gen.slice_bytes = NUM("--payload-kib", 1, 65536) * 1024;
		break;
	case OPT_UNTRACKED_MB: c->untracked_mb = NUM("--untracked-mb", 0, 1 << 20); break;
	case OPT_SECTOR: c->gen.sector_num = NUM("--sector", 0, INT64_MAX); break;
	case OPT_SEED: c->gen.seed = NUM("--seed", 0, UINT64_MAX); break;
	case OPT_JSON: cli->json = true; break;
	case 'i': c->input = arg; break;
	case 'o': cli->out = arg; break;
	case OPT_RELEASE:
		if (!strcmp(arg, "after-synth"))
			c->release = RELEASE_AFTER_SYNTH;
		else if (!strcmp(arg, "after-send"))
			c->release = RELEASE_AFTER_SEND;
		else {
			fprintf(stderr, "prover: --permit-release: '%s' is neither after-synth nor "
					"after-send\n", arg);
			exit(PROVER_EXIT_USAGE);
		}
		break;
	case OPT_GPU:
		if (!strcmp(arg, "auto"))
			c->gpu = GPU_AUTO;
		else if (!strcmp(arg, "cpu"))
			c->gpu = GPU_CPU;
		else if (!strcmp(arg, "cuda"))
			c->gpu = GPU_CUDA;
		else if (!strcmp(arg, "model"))
			c->gpu = GPU_MODEL;
		else {
			fprintf(stderr, "prover: --gpu: '%s' is not auto, model, cpu or cuda\n", arg);
			exit(PROVER_EXIT_USAGE);
		}
		break;
	case ARGP_KEY_ARG: /* gen-c1 is recognised before argp runs, as argv[1] only */
		fprintf(stderr, "prover: unexpected argument '%s'\n", arg);
		exit(PROVER_EXIT_USAGE);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void set_defaults(struct cli *cli)
{
	memset(cli, 0, sizeof(*cli));
	cli->cfg = (struct pipeline_config){
		.proofs = DEFAULT_PROOFS,
		.jobs = DEFAULT_JOBS,
		.pw = DEFAULT_PW,
		.gw = DEFAULT_GW,
		.log_n = DEFAULT_LOG_N,
		.gpu_rounds = 1,
		.synth_rounds = 1,
		.release = RELEASE_AFTER_SEND,
		.gpu = GPU_AUTO,
		.gpu_mops = GPU_MODEL_DEFAULT_MOPS,
		.gpu_spread = GPU_MODEL_DEFAULT_SPREAD,
		.host = HOST_REAL,
		.synth_kcps = HOST_MODEL_DEFAULT_KCPS,
		.synth_spread = HOST_MODEL_DEFAULT_SPREAD,
		.model_seed = MODEL_DEFAULT_SEED,
		.gen = { .partitions = DEFAULT_PARTITIONS,
			 .slice_bytes = DEFAULT_SLICE_KIB * 1024,
			 .sector_num = 1,
			 .seed = 1 },
	};
}

void cli_parse(int argc, char **argv, struct cli *cli)
{
	static const struct argp run_argp = { run_options, run_opt, NULL, run_doc, NULL, NULL, NULL };
	static const struct argp gen_argp = { gen_options, run_opt, NULL, gen_doc, NULL, NULL, NULL };

	argp_err_exit_status = PROVER_EXIT_USAGE;
	set_defaults(cli);
	if (argc > 1 && !strcmp(argv[1], "gen-c1")) {
		cli->gen_c1 = true;
		argv[1] = "prover gen-c1"; /* argp names the command after argv[0] */
		argp_parse(&gen_argp, argc - 1, argv + 1, 0, NULL, cli);
		if (!cli->out) {
			fprintf(stderr, "prover: gen-c1: -o FILE is required\n");
			exit(PROVER_EXIT_USAGE);
		}
		return;
	}
	argp_parse(&run_argp, argc, argv, 0, NULL, cli);
	if (!chan_cap_set)
		cli->cfg.chan_cap = cli->cfg.pw;
	if (!gpu_rate_set && cli->cfg.host == HOST_MODEL)
		cli->cfg.gpu_mops = GPU_MODEL_BALANCED_MOPS;
	if (cli->cfg.input && partitions_set) {
		fprintf(stderr, "prover: --partitions applies to the generated input; %s says its "
				"own\n", cli->cfg.input);
		exit(PROVER_EXIT_USAGE);
	}
}
