/*
 * Logging shared by aisb, aisb-gate and aisb-enforce, after OpenBSD's log.c:
 * log_warn() appends strerror(errno), log_warnx() does not; fatal() and
 * fatalx() log and exit(1) and are for start-up or broken invariants only.
 */
#ifndef AISB_LOG_H
#define AISB_LOG_H

#include <stdarg.h>

enum log_level { LOG_L_ERR = 0, LOG_L_WARN, LOG_L_NOTICE, LOG_L_INFO,
	LOG_L_DEBUG };

void	log_init(const char *progname, int verbosity);
/* From now on to syslog (facility daemon) instead of stderr: for daemons. */
void	log_to_syslog(void);
void	log_setverbose(int verbosity);
int	log_getverbose(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
/* What a daemon says once without -v: it is up, a reload's outcome. */
void	log_notice(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	vlog(enum log_level, const char *, va_list) __attribute__((format(printf, 2, 0)));

#endif
