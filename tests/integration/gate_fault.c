/*
 * Link-time fault injection for the gate (tests/integration/gate_faults.sh),
 * for failures that cannot be produced for real: libevent refusing to add
 * a timer, or to queue bytes.  The test binary is aisb-gate built with
 * -Wl,--wrap=event_add,--wrap=bufferevent_write; the environment says what
 * fails:
 *   AISB_FAULT_TIMER_SECS=N   event_add of a timer of N seconds fails
 *   AISB_FAULT_BEV_WRITE=1    bufferevent_write fails
 */
#include "config.h"

#include <sys/time.h>

#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

int	__real_event_add(struct event *, const struct timeval *);
int	__wrap_event_add(struct event *, const struct timeval *);
int	__real_bufferevent_write(struct bufferevent *, const void *, size_t);
int	__wrap_bufferevent_write(struct bufferevent *, const void *, size_t);

int
__wrap_event_add(struct event *ev, const struct timeval *tv)
{
	const char	*s = getenv("AISB_FAULT_TIMER_SECS");

	if (s != NULL && tv != NULL && event_get_fd(ev) == -1 &&
	    tv->tv_sec == atol(s))
		return -1;
	return __real_event_add(ev, tv);
}

int
__wrap_bufferevent_write(struct bufferevent *bev, const void *data,
    size_t len)
{
	if (getenv("AISB_FAULT_BEV_WRITE") != NULL)
		return -1;
	return __real_bufferevent_write(bev, data, len);
}
