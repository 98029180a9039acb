#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "termsafe.h"

static const char	*log_prog = "aisb";
static int		 log_verbose = 0;	/* 0: warnings, 1: info, 2: debug */
static int		 log_syslog = 0;

void
log_init(const char *progname, int verbosity)
{
	if (progname != NULL)
		log_prog = progname;
	log_verbose = verbosity;
}

void
log_to_syslog(void)
{
	openlog(log_prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_syslog = 1;
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return log_verbose;
}

/*
 * One line per call, written with a single fprintf so lines do not
 * interleave.  The whole line goes through termsafe (term_clean_str):
 * a host, a header value, a path or a name a client or an upstream
 * chose is one '?' a control character (ESC, CSI, a newline that would
 * forge a line of its own), so that no value reaches a terminal or
 * syslog as anything but text, whichever log call forgot it.
 */
void
vlog(enum log_level lvl, const char *fmt, va_list ap)
{
	char	 buf[1024];

	if ((lvl == LOG_L_INFO && log_verbose < 1) ||
	    (lvl == LOG_L_DEBUG && log_verbose < 2))
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	term_clean_str(buf, 0);
	if (log_syslog)
		syslog(lvl == LOG_L_ERR ? LOG_ERR : lvl == LOG_L_WARN ?
		    LOG_WARNING : lvl == LOG_L_NOTICE ? LOG_NOTICE :
		    lvl == LOG_L_INFO ? LOG_INFO : LOG_DEBUG,
		    "%s", buf);
	else
		fprintf(stderr, "%s: %s\n", log_prog, buf);
}

static void __attribute__((format(printf, 1, 0)))
vlog_errno(const char *fmt, va_list ap, int saved)
{
	char	 buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	term_clean_str(buf, 0);
	if (log_syslog)
		syslog(LOG_ERR, "%s: %s", buf, strerror(saved));
	else
		fprintf(stderr, "%s: %s: %s\n", log_prog, buf, strerror(saved));
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog_errno(fmt, ap, saved);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_L_WARN, fmt, ap);
	va_end(ap);
}

void
log_notice(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_L_NOTICE, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_L_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_L_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog_errno(fmt, ap, saved);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_L_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}
