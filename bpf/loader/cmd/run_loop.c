// SPDX-License-Identifier: BSD-2-Clause
/* The attaching commands' run loop. cmd/run_loop.h */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include "cmd/run_loop.h"
#include "util/errors.h"

#define RUN_GRACE_NS 2000000000ull /* how long a forwarded SIGTERM may take to end the command */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

int run_loop__install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal }; /* no SA_RESTART: wake up */

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	return 0;
}

static int wait_ms(__u64 now, __u64 deadline)
{
	__u64 ms = deadline > now ? (deadline - now + 999999) / 1000000 : 0;

	return ms < RUN_POLL_MS ? (int)ms : RUN_POLL_MS;
}

void run_loop__run(struct session *s, const struct run_ops *ops, void *ctx, struct run_end *end)
{
	__u64 next_tick = session__now_ns() + ops->interval_ns;

	*end = (struct run_end){ .status = -1 };
	while (!stop_signal) {
		__u64 now = session__now_ns();

		end->err = ops->wait(ctx, ops->interval_ns ? wait_ms(now, next_tick) : RUN_POLL_MS);
		if (stop_signal || end->err)
			break;
		if (session__target_gone(s, &end->status)) {
			end->gone = true;
			break;
		}
		now = session__now_ns();
		if (ops->interval_ns && now >= next_tick) {
			end->err = ops->tick(ctx, now);
			if (end->err)
				break;
			while (next_tick <= now) /* skip ticks missed while stopped */
				next_tick += ops->interval_ns;
		}
		if (ops->housekeep) /* ended processes: -b restarts, children, exec */
			ops->housekeep(ctx, now);
	}
	end->signal = stop_signal;
	if (!stop_signal || end->gone || end->err || session__mode(s) != SESSION_SPAWN)
		return;
	/* the terminal sent Ctrl-C to the command already; SIGTERM came to us alone */
	if (stop_signal == SIGTERM)
		kill(session__target_pid(s), SIGTERM);
	for (__u64 deadline = session__now_ns() + RUN_GRACE_NS; session__now_ns() < deadline;) {
		if ((end->gone = session__target_gone(s, &end->status)))
			break;
		if ((end->err = ops->wait(ctx, RUN_POLL_MS / 4)))
			break;
	}
}

const char *run_loop__end_text(const struct run_end *e, enum session_mode mode)
{
	if (e->signal == SIGINT)
		return "interrupted (SIGINT)";
	if (e->signal == SIGTERM)
		return "terminated (SIGTERM)";
	return mode == SESSION_SPAWN ? "command exited" : "target exited";
}

int run_loop__exit_status(const struct run_end *e, enum session_mode mode)
{
	if (mode != SESSION_SPAWN)
		return 0;
	if (e->gone && e->status >= 0)
		return WIFEXITED(e->status)   ? WEXITSTATUS(e->status) :
		       WIFSIGNALED(e->status) ? 128 + WTERMSIG(e->status) :
						EXIT_GENERIC;
	return e->signal ? 128 + e->signal : 0;
}
