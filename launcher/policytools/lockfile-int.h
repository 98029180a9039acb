/*
 * What the lockfile scanner's files share (lockfile.c: the context, the
 * errors, hosts and URLs, lines and JSON strings; lockfile_formats.c: one
 * parser per format and the entry point).  Only they include this.
 */
#ifndef AISB_POLICYTOOLS_LOCKFILE_INT_H
#define AISB_POLICYTOOLS_LOCKFILE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "policytools/lockfile.h"

/* One scan: where the hosts go, what the flags allow, where we are. */
struct ctx {
	struct lockfile_hosts	*out;
	unsigned		 flags, file, line;
	const char		*where;		/* for line 0: "GOPROXY" */
	char			*err;
	size_t			 errlen;
};

/* What the file said, terminal-safe and short (len >= 4), for an error. */
const char *lockfile_shown(const char *s, size_t n, char *buf, size_t len);
int	lockfile_fail(struct ctx *c, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	lockfile_add_name(struct ctx *c, const char *host, uint16_t port);
int	lockfile_has_prefix(const char *s, size_t n, const char *pre);
int	lockfile_contains(const char *s, size_t n, const char *needle);
/*
 * The host of URL u[n]: https -> 443, http -> 80 (LOCKFILE_HTTP), after
 * an optional git+, registry+ or sparse+.  Other schemes, local paths,
 * IP literals and other ports are counted and left out; a host that
 * does not parse is an error.
 */
int	lockfile_add_url(struct ctx *c, const char *u, size_t n);
/*
 * The next line of b[len] from *pos, without its \n or \r\n: 1, 0 at the
 * end, -1 over LOCKFILE_MAX_LINE or on a NUL byte.  Counts c->line.
 */
int	lockfile_next_line(struct ctx *c, const char *b, size_t len,
	    size_t *pos, const char **lp, size_t *ll);
void	lockfile_trim(const char **s, size_t *n);
/*
 * A value as YAML or INI writes it: "quoted", 'quoted', or bare up to
 * one of stop (NULL: to the end, trimmed).  *vp, *vn: the text; the
 * bytes consumed from s.  -1 when a quote does not close on the line.
 */
int	lockfile_value_at(struct ctx *c, const char *s, size_t n,
	    const char *stop, const char **vp, size_t *vn, size_t *used);
/* A JSON string at b[*i] ('"'), into str (LOCKFILE_MAX_LINE + 1 bytes). */
int	lockfile_json_string(struct ctx *c, const char *b, size_t len,
	    size_t *i, char *str, size_t *slen);

#endif
