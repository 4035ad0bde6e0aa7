// SPDX-License-Identifier: BSD-2-Clause
/* The flight recorder's options (cmd/flight.h): the argp child of record and serve, and the
 * words of --dump-on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd/flight.h"
#include "util/errors.h"
#include "util/parse.h"

/* ---- the triggers' words ---- */

void flight_opts__parse_trigger(struct flight_opts *o, const char *arg)
{
	char buf[256], *save = NULL, *w;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		infl_die(EXIT_USAGE, NULL, "--dump-on '%.40s...': too long", arg);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		const char *v;
		__u64 n;

		if (!strcmp(w, "oom")) {
			o->on |= 1u << FLIGHT_OOM;
		} else if (!strcmp(w, "exit")) {
			o->on |= 1u << FLIGHT_EXIT;
		} else if (!strcmp(w, "sigusr1") || !strcmp(w, "signal")) {
			o->on |= 1u << FLIGHT_SIGNAL; /* always on: accepted for symmetry */
		} else if (!strncmp(w, "tracked>", 8)) {
			if (parse_size(w + 8, 1, ~0ull, &o->tracked_gt))
				infl_die(EXIT_USAGE, "e.g. --dump-on 'tracked>8GiB'",
					 "--dump-on '%s': not a size", w);
			o->on |= 1u << FLIGHT_TRACKED;
		} else if (!strncmp(w, "rss>", 4)) {
			v = w + 4;
			if (*v && v[strlen(v) - 1] == '%') {
				char pct[16];

				snprintf(pct, sizeof(pct), "%.*s", (int)strlen(v) - 1, v);
				if (parse_u64(pct, 1, 100, &n))
					infl_die(EXIT_USAGE, "e.g. --dump-on 'rss>90%%' (1 to 100)",
						 "--dump-on '%s': not a percentage", w);
				o->rss_pct = n;
				o->rss_gt = 0;
			} else if (parse_size(v, 1, ~0ull, &o->rss_gt)) {
				infl_die(EXIT_USAGE, "e.g. --dump-on 'rss>200GiB' or 'rss>90%%'",
					 "--dump-on '%s': not a size or a percentage", w);
			} else {
				o->rss_pct = 0;
			}
			o->on |= 1u << FLIGHT_RSS;
		} else if (!strncmp(w, "owners:", 7) && (v = strchr(w + 7, '>')) && v > w + 7) {
			static char stage[64];

			if (parse_u64(v + 1, 0, ~0ull, &o->owners_gt) || v - (w + 7) >= 64)
				infl_die(EXIT_USAGE, "e.g. --dump-on 'owners:chan_send>16'",
					 "--dump-on '%s': not STAGE>COUNT", w);
			snprintf(stage, sizeof(stage), "%.*s", (int)(v - (w + 7)), w + 7);
			o->owners_name = stage;
			o->on |= 1u << FLIGHT_OWNERS;
		} else {
			infl_die(EXIT_USAGE, "give oom, exit, sigusr1, tracked>SIZE, rss>SIZE, "
				 "rss>PCT%, owners:STAGE>N", "--dump-on '%s': unknown trigger", w);
		}
	}
}

#define DEFAULT_RING_BYTES (256ull << 20) /* the ring's memory at most */
#define DEFAULT_AFTER_NS 2000000000ull	  /* a dump goes on this long after its trigger */
#define DEFAULT_GAP_NS 60000000000ull	  /* and the next may come this long after */
#define DEFAULT_MAX_DUMPS 16

enum { OPT_RING = 0x300, OPT_RING_SIZE, OPT_DIR, OPT_ON, OPT_AFTER, OPT_GAP, OPT_MAX, OPT_ROTATE };

static const struct argp_option flight_options[] = {
	{ NULL, 0, NULL, 0, "Flight recorder:", 13 },
	{ "ring", OPT_RING, "DURATION", 0,
	  "Keep the last DURATION (1s to 1h) in memory; write it into --dump-dir only when a "
	  "trigger fires", 0 },
	{ "ring-size", OPT_RING_SIZE, "SIZE", 0,
	  "With --ring: the recorder's memory at most (default 256M; K, M, G suffixes). record "
	  "without --ring: the BPF ring buffers, as --bpf-ring-size", 0 },
	{ "dump-dir", OPT_DIR, "DIR", 0, "Where dumps go (required with --ring)", 0 },
	{ "dump-on", OPT_ON, "TRIGGER", 0,
	  "Also dump on TRIGGER: exit, tracked>SIZE, rss>SIZE, rss>PCT%, owners:STAGE>N "
	  "(repeatable, or comma-separated; oom and SIGUSR1 always)", 0 },
	{ "dump-after", OPT_AFTER, "DURATION", 0,
	  "How long a dump goes on after its trigger (default 2s, 0 to 10m)", 0 },
	{ "dump-interval", OPT_GAP, "DURATION", 0,
	  "The least time between two dumps' triggers (default 1m, 0 to 1d); triggers sooner "
	  "are refused, said and counted", 0 },
	{ "max-dumps", OPT_MAX, "N", 0,
	  "Dumps one run writes at most (default 16); later triggers are refused", 0 },
	{ "rotate", OPT_ROTATE, NULL, 0,
	  "Past --max-dumps remove the run's oldest dump instead of refusing the new one", 0 },
	{ 0 },
};

static error_t flight_parse(int key, char *arg, struct argp_state *state)
{
	struct flight_opts *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		o->after_ns = DEFAULT_AFTER_NS;
		o->min_gap_ns = DEFAULT_GAP_NS;
		o->max_dumps = DEFAULT_MAX_DUMPS;
		return 0;
	case OPT_RING:
		if (parse_duration_ns(arg, 1000000000ull, 3600000000000ull, &o->ring_ns))
			infl_die(EXIT_USAGE, "e.g. --ring 5m (1s to 1h)", "--ring '%s': not a "
				 "duration in range", arg);
		return 0;
	case OPT_RING_SIZE:
		o->ring_size = arg;
		return 0;
	case OPT_DIR:
		o->dir = arg;
		return 0;
	case OPT_ON:
		flight_opts__parse_trigger(o, arg);
		return 0;
	case OPT_AFTER:
		if (parse_duration_ns(arg, 0, 600000000000ull, &o->after_ns))
			infl_die(EXIT_USAGE, "e.g. --dump-after 5s (0 to 10m)", "--dump-after '%s': "
				 "not a duration in range", arg);
		return 0;
	case OPT_GAP:
		if (parse_duration_ns(arg, 0, 86400000000000ull, &o->min_gap_ns))
			infl_die(EXIT_USAGE, "e.g. --dump-interval 10m (0 to 1d)", "--dump-interval "
				 "'%s': not a duration in range", arg);
		return 0;
	case OPT_MAX:
		if (parse_u64(arg, 1, 100000, &o->max_dumps))
			infl_die(EXIT_USAGE, "1 to 100000", "--max-dumps '%s'", arg);
		return 0;
	case OPT_ROTATE:
		o->rotate = true;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

const struct argp flight_argp = { flight_options, flight_parse, NULL, NULL, NULL, NULL, NULL };

bool flight_opts__end(struct flight_opts *o, bool ring_size_allowed)
{
	if (!o->ring_ns) {
		if (o->dir || o->on || (o->ring_size && !ring_size_allowed))
			infl_die(EXIT_USAGE, "e.g. --ring 5m --dump-dir /var/lib/inflight",
				 "--dump-dir, --dump-on and --ring-size need --ring");
		return false;
	}
	if (!o->dir)
		infl_die(EXIT_USAGE, "e.g. --ring 5m --dump-dir /var/lib/inflight",
			 "--ring needs --dump-dir DIR");
	o->ring_bytes = DEFAULT_RING_BYTES;
	if (o->ring_size && parse_size(o->ring_size, 1u << 20, 1ull << 40, &o->ring_bytes))
		infl_die(EXIT_USAGE, "e.g. --ring-size 512M (1M to 1T)", "--ring-size '%s': not "
			 "a size in range", o->ring_size);
	o->on |= 1u << FLIGHT_OOM | 1u << FLIGHT_SIGNAL;
	return true;
}
