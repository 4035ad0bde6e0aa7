// SPDX-License-Identifier: BSD-2-Clause
/* The session's background thread (attach/service.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "attach/service.h"

struct service {
	pthread_t thread;
	bool started;
	int stop; /* eventfd: written to end the thread */
	int n;
	struct pollfd pfd[1 + SERVICE_MAX_FDS]; /* the stop, then each module's */
	struct {
		service_fn fn;
		void *ctx;
	} mod[SERVICE_MAX_FDS];
};

static void *run(void *arg)
{
	struct service *svc = arg;

	for (;;) {
		if (poll(svc->pfd, 1 + svc->n, -1) < 0 && errno != EINTR)
			break;
		if (svc->pfd[0].revents)
			break;
		for (int i = 0; i < svc->n; i++)
			if (svc->pfd[1 + i].revents)
				svc->mod[i].fn(svc->mod[i].ctx);
	}
	return NULL;
}

int service__new(struct service **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->stop = -1;
	return 0;
}

int service__add(struct service *svc, int fd, service_fn fn, void *ctx)
{
	if (svc->n == SERVICE_MAX_FDS)
		return -E2BIG;
	svc->pfd[1 + svc->n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	svc->mod[svc->n].fn = fn;
	svc->mod[svc->n].ctx = ctx;
	svc->n++;
	return 0;
}

int service__start(struct service *svc)
{
	int err;

	if (!svc->n)
		return 0;
	svc->stop = eventfd(0, EFD_CLOEXEC);
	if (svc->stop < 0)
		return -errno;
	svc->pfd[0] = (struct pollfd){ .fd = svc->stop, .events = POLLIN };
	err = pthread_create(&svc->thread, NULL, run, svc);
	if (err) {
		close(svc->stop);
		svc->stop = -1;
		return -err;
	}
	svc->started = true;
	return 0;
}

void service__free(struct service *svc)
{
	uint64_t one = 1;

	if (!svc)
		return;
	if (svc->started && write(svc->stop, &one, sizeof(one)) == sizeof(one))
		pthread_join(svc->thread, NULL);
	if (svc->stop >= 0)
		close(svc->stop);
	free(svc);
}
