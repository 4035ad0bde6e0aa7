/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loader's subcommands. Each takes the command line from its own name on (argv[0] is
 * "inflight NAME", for argp's messages), parses it with argp and returns the process's exit
 * status (enum infl_exit, or the traced command's status where documented).
 * A new command adds its prototype here and one line to the table in main.c.
 */
#ifndef INFLIGHT_COMMANDS_H
#define INFLIGHT_COMMANDS_H

#define INFL_VERSION "0.1" /* --version, recordings' tool field, inflight_build_info */

/* `inflight [OPTIONS] TARGET`: live timeline and final summary (trace.c); the default */
int cmd__trace(int argc, char **argv);
/* `inflight list PATH|PID`: probes and names a binary carries (list.c) */
int cmd__list(int argc, char **argv);
/* `inflight serve [--listen ADDR:PORT] TARGET`: Prometheus exporter (serve.c) */
int cmd__serve(int argc, char **argv);

/* `inflight record -o FILE TARGET`: events and snapshots into a recording (record.c) */
int cmd__record(int argc, char **argv);
/* `inflight report FILE`: render a recording offline (report.c) */
int cmd__report(int argc, char **argv);
/* `inflight compare A B`: two recordings side by side with ratios (compare.c) */
int cmd__compare(int argc, char **argv);

/* The command table (main.c), for help texts; weak so that test programs linking the
 * loader's objects without main.o still link. NULL-name terminated. */
struct infl_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args; /* synopsis after the name */
	const char *doc;  /* one line */
};
extern const struct infl_command infl_commands[] __attribute__((weak));

#endif /* INFLIGHT_COMMANDS_H */
