// SPDX-License-Identifier: BSD-2-Clause
/* The session's background thread (attach/service.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "attach/redeploy.h"
#include "attach/service.h"
#include "attach/session_int.h"
#include "attach/watch.h"

struct service {
	pthread_t thread;
	int stop; /* eventfd: written to end the thread */
};

static void *run(void *arg)
{
	struct session *s = arg;
	struct pollfd pfd[3] = {
		{ .fd = s->svc->stop, .events = POLLIN },
		{ .fd = watch__epoll_fd(s->watch), .events = POLLIN },
		{ .fd = s->inotify_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents)
			watch__consume(s->watch);
		if (pfd[2].revents)
			redeploy__handle(s);
	}
	return NULL;
}

int service__start(struct session *s)
{
	struct service *svc;
	int err;

	if (!s->watch && s->inotify_fd < 0)
		return 0;
	svc = calloc(1, sizeof(*svc));
	if (!svc)
		return -ENOMEM;
	svc->stop = eventfd(0, EFD_CLOEXEC);
	if (svc->stop < 0) {
		err = -errno;
		free(svc);
		return err;
	}
	s->svc = svc;
	err = pthread_create(&svc->thread, NULL, run, s);
	if (err) {
		close(svc->stop);
		free(svc);
		s->svc = NULL;
		return -err;
	}
	return 0;
}

void service__stop(struct session *s)
{
	uint64_t one = 1;

	if (!s->svc)
		return;
	if (write(s->svc->stop, &one, sizeof(one)) == sizeof(one))
		pthread_join(s->svc->thread, NULL);
	close(s->svc->stop);
	free(s->svc);
	s->svc = NULL;
}
