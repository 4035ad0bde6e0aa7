/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The proving pipeline: proof jobs of P partitions; per partition wait_permit -> synth ->
 * chan_send -> gpu_queue -> gpu -> finalize -> done; per job parse -> assemble -> done.
 * docs/prover.md maps every piece to cuzk.
 */
#ifndef PROVER_PIPELINE_H
#define PROVER_PIPELINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "c1.h"
#include "gpu.h"
#include "host_model.h"

/* Synthesis: real time on this machine's cores, or the modelled host's (host_model.h). */
enum host_mode { HOST_REAL, HOST_MODEL };

/* When a partition gives its synthesis permit back. */
enum permit_release {
	RELEASE_AFTER_SYNTH, /* the incident: as soon as synthesis ends, before the send */
	RELEASE_AFTER_SEND,  /* the fix: once the partition is in the GPU channel */
};

struct pipeline_config {
	unsigned proofs;       /* proof jobs to run */
	unsigned jobs;	       /* proof jobs admitted at once */
	unsigned pw;	       /* synthesis permits (partition_workers) */
	unsigned gw;	       /* GPU workers sharing the one device lock */
	unsigned chan_cap;     /* GPU channel capacity */
	unsigned log_n;	       /* domain 2^log_n: sets every buffer's size */
	unsigned gpu_rounds;   /* >= 1; each extra round adds an NTT round trip of H */
	unsigned synth_rounds; /* >= 1; work per row spent deriving its constant */
	enum permit_release release;
	enum gpu_mode gpu;
	unsigned gpu_mops;     /* the modelled device's rate (--gpu-rate) ... */
	unsigned gpu_spread;   /* ... and spread in percent (--gpu-spread) */
	enum host_mode host;
	unsigned synth_kcps;   /* the modelled host's rate (--synth-rate) ... */
	unsigned synth_spread; /* ... and spread in percent (--synth-spread) */
	uint64_t model_seed;   /* both models' draws derive from it (--model-seed) */
	unsigned h_check_every; /* check 1 partition in N; 0: every one, or 1 in 10 if modelled */
	const char *input;	 /* C1 file, or NULL for a generated one ... */
	struct c1_gen_opts gen;	 /* ... made with these options */
	size_t untracked_mb;	 /* memory held but never reported through the probes */
	volatile sig_atomic_t *stop; /* set asynchronously: admit no more proof jobs */
};

struct pipeline_result {
	unsigned proofs;     /* proof jobs completed */
	unsigned partitions; /* partitions proved */
	unsigned h_checked;  /* partitions whose H was checked ... */
	unsigned h_passed;   /* ... and passed */
	unsigned h_every;    /* 1 partition in h_every was checked */
	bool h_deferred;     /* checked after the run (the modelled device) */
	double setup_s;	     /* SRS load, domain, backend, input */
	double wall_s;	     /* first job admitted to last job done */
	double check_s;	     /* the deferred H checks, after wall_s */
	double model_makespan_s; /* the modelled device's last region end, from wall_s's start */
	bool modelled;	     /* the GPU stage ran on the modelled device: */
	struct gpu_model model; /* its rate, kernel time and account */
	bool host_modelled;  /* synthesis ran on the modelled host: */
	struct host_model host; /* its rate, mean duration and account */
	char host_notice[256];
	uint64_t digest;     /* of all proofs: equal for equal inputs, whatever the schedule */
	size_t partition_bytes; /* what one partition holds once synthesized (a, b, c, aux, ...) */
	double rss_before_mib;	/* the peak RSS before the first job: set-up's share of it */
	char gpu_notice[256];
	const char *gpu_name;
};

/* The process's peak RSS so far (getrusage), in MiB. */
double pipeline_peak_rss_mib(void);

/* Runs every proof job; returns a prover_exit code (messages already printed). */
int pipeline_run(const struct pipeline_config *cfg, struct pipeline_result *res);

#endif /* PROVER_PIPELINE_H */
