/*
 * The audit log: one JSON object per line, appended with O_APPEND by
 * write(2)s of whole lines, so that lines from several writers (workers)
 * never interleave.  Lines made in one turn of the event loop are written
 * together at its end, at most PIPE_BUF bytes a write (atomic on a pipe
 * too): two audit lines a tunnel cost less than two syscalls.
 *
 * A line is written whole or not at all.  A write cut short (a full disk)
 * leaves the file as it was before the cut line: the bytes of the cut
 * line are truncated away (a regular file; a pipe takes PIPE_BUF bytes
 * whole) and the lines not written stay in buf, to be written first on
 * the next try: at the next line, at the next connection the gate is
 * asked for (gate_audit_failing), and every second meanwhile.  Lines that
 * find buf full while it fails are dropped and counted (audit_errors).
 * The gate meanwhile answers new connections 503 audit_unavailable, or
 * goes on (--audit-failure allow): see conn.c.  Failures are logged once
 * per burst, never fatal.
 *
 * The truncation assumes that this process is the file's only writer
 * between its write and its ftruncate: true of one gate; with --workers
 * a worker appending in that window could lose its line (never tear it).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "file.h"
#include "log.h"
#include "gate/gate.h"

#define AUDIT_LINE_MAX	4096	/* bytes of one line; fields are truncated */

struct gate_audit {
	char		*path;		/* NULL for stdout */
	int		 dir;		/* its folder (file_dir_open), for reopen */
	const char	*name;		/* in dir */
	int		 fd;
	int		 failing;	/* the last write failed: lines wait in buf */
	int		 regular;	/* fd is a regular file (can be truncated) */
	struct event	*flush;		/* NULL: write each line at once */
	struct event	*retry;		/* while failing, every second */
	uint64_t	*errors;	/* where failed lines are counted */
	size_t		 len, lines;	/* waiting in buf */
	char		 buf[PIPE_BUF];
};

/*
 * By name in the folder opened at start: a gate that dropped to --user
 * may reopen the log (rotation) with search permission on that folder
 * only.
 */
static int
audit_openfd(const struct gate_audit *a)
{
	return openat(a->dir, a->name, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0640);
}

static int
is_regular(int fd)
{
	struct stat	 st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

struct gate_audit *
gate_audit_open(const char *path)
{
	struct gate_audit	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	if (strcmp(path, "-") == 0) {
		a->fd = STDOUT_FILENO;
		a->regular = is_regular(a->fd);
		return a;
	}
	if ((a->path = strdup(path)) == NULL) {
		free(a);
		return NULL;
	}
	a->dir = file_dir_open(a->path, &a->name);
	if ((a->fd = audit_openfd(a)) == -1) {
		if (a->dir != AT_FDCWD)
			close(a->dir);
		free(a->path);
		free(a);
		return NULL;
	}
	a->regular = is_regular(a->fd);
	return a;
}

/*
 * Write len bytes of whole lines from buf.  Returns how many bytes of
 * whole lines are in the file now (len on success); the bytes of a line
 * cut short are taken out of the file again.  When that fails *torn is
 * set: the file then ends in a piece of a line.  *err is the write's errno
 * (0 for a short write).
 */
static size_t
write_lines(struct gate_audit *a, const char *buf, size_t len, int *torn,
    int *err)
{
	ssize_t	 w;
	size_t	 whole;
	off_t	 end;

	*torn = *err = 0;
	do {
		w = write(a->fd, buf, len);
	} while (w == -1 && errno == EINTR);
	if (w == -1) {
		*err = errno;
		return 0;
	}
	if ((size_t)w == len)
		return len;
	/* cut short: keep the whole lines, take back the rest */
	for (whole = (size_t)w; whole > 0 && buf[whole - 1] != '\n'; whole--)
		;
	if (whole == (size_t)w)
		return whole;
	if (!a->regular ||
	    (end = lseek(a->fd, 0, SEEK_END)) == -1 ||
	    end < (off_t)((size_t)w - whole) ||
	    ftruncate(a->fd, end - (off_t)((size_t)w - whole)) == -1) {
		log_warn("audit: cannot take back a cut line");
		*torn = 1;
	}
	return whole;
}

static void
audit_retry_arm(struct gate_audit *a)
{
	struct timeval	 tv = { 1, 0 };

	if (a->retry != NULL && !evtimer_pending(a->retry, NULL) &&
	    evtimer_add(a->retry, &tv) == -1)
		log_warnx("audit: cannot arm the retry timer");
}

/*
 * Write what waits in buf.  What could not be written whole stays for the
 * next try, and the log says so once per burst.
 */
static void
audit_flush(struct gate_audit *a)
{
	size_t	 w, i, lines;
	int	 e, torn;

	if (a->len == 0)
		return;
	w = write_lines(a, a->buf, a->len, &torn, &e);
	if (w == a->len) {
		if (a->failing)
			log_warnx("audit: writing again after failures");
		a->failing = 0;
		a->len = a->lines = 0;
		return;
	}
	for (i = 0, lines = 0; i < w; i++)
		if (a->buf[i] == '\n')
			lines++;
	memmove(a->buf, a->buf + w, a->len - w);
	a->len -= w;
	a->lines -= lines < a->lines ? lines : a->lines;
	if (torn && a->len < sizeof(a->buf)) {
		/*
		 * A cut line could not be taken back: the lines kept start
		 * on a line of their own, so that they at least parse.
		 */
		memmove(a->buf + 1, a->buf, a->len);
		a->buf[0] = '\n';
		a->len++;
	}
	if (!a->failing) {
		errno = e;
		if (e != 0)
			log_warn("audit: write (%zu line(s) kept for retry)",
			    a->lines);
		else
			log_warnx("audit: short write (%zu line(s) kept for "
			    "retry)", a->lines);
	}
	a->failing = 1;
	audit_retry_arm(a);
}

static void
audit_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	audit_flush(arg);
}

static void
audit_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_audit	*a = arg;

	audit_flush(a);
	if (a->failing)
		audit_retry_arm(a);
}

/*
 * From now on lines wait for the end of the loop turn (an event made
 * active when the first one waits).  Without it each is written at once.
 */
int
gate_audit_batch(struct gate_audit *a, struct event_base *base)
{
	if (a == NULL)
		return 0;
	if ((a->flush = event_new(base, -1, 0, audit_flush_cb, a)) == NULL ||
	    (a->retry = evtimer_new(base, audit_retry_cb, a)) == NULL)
		return -1;
	return 0;
}

/*
 * Whether audit lines cannot be written now.  Tries once more first, so
 * that the gate recovers with the first connection after space returns.
 */
int
gate_audit_failing(struct gate_audit *a)
{
	if (a == NULL || !a->failing)
		return 0;
	audit_flush(a);
	return a->failing;
}

/* For log rotation: open the path again; on failure keep the old file. */
int
gate_audit_reopen(struct gate_audit *a)
{
	int	 fd;

	if (a == NULL || a->path == NULL)
		return 0;
	audit_flush(a);
	if ((fd = audit_openfd(a)) == -1)
		return -1;
	close(a->fd);
	a->fd = fd;
	a->regular = is_regular(fd);
	audit_flush(a);		/* what waited goes to the new file */
	return 0;
}

int
gate_audit_chown(struct gate_audit *a, uid_t uid, gid_t gid)
{
	if (a == NULL || a->path == NULL)
		return 0;
	return fchown(a->fd, uid, gid);
}

void
gate_audit_close(struct gate_audit *a)
{
	if (a == NULL)
		return;
	audit_flush(a);
	if (a->len > 0)
		log_warnx("audit: %zu line(s) lost at exit", a->lines);
	if (a->flush != NULL)
		event_free(a->flush);
	if (a->retry != NULL)
		event_free(a->retry);
	if (a->path != NULL) {
		close(a->fd);
		if (a->dir != AT_FDCWD)
			close(a->dir);
	}
	free(a->path);
	free(a);
}

/*
 * The UTF-8 sequence at s (NUL-terminated): its length (2-4) with its code
 * point in *cp, or 0 when s[0] does not start a valid one (RFC 3629: no
 * overlong form, no surrogate U+D800-U+DFFF, nothing above U+10FFFF, no
 * sequence cut short).  s[0] >= 0x80.
 */
static size_t
utf8_seq(const unsigned char *s, unsigned *cp)
{
	unsigned char	 c = s[0], lo = 0x80, hi = 0xbf;
	size_t		 n, i;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		*cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		*cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;	/* below: overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* above: a surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		*cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;	/* below: overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above: past U+10FFFF */
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/*
 * Write s as a JSON string (with the quotes) into buf, truncated to fit
 * (never inside an escape or a character).  The result is ASCII and valid
 * JSON whatever the input: control bytes and DEL are \u00XX (\n and \t
 * themselves), a valid UTF-8 character is its code point, \uXXXX, or a
 * surrogate pair above U+FFFF, and a byte that is not part of valid
 * UTF-8 is \udcXX, a lone low surrogate U+DC80-U+DCFF that no character
 * is (Python's surrogateescape, PEP 383): docs/gate.md, "The audit log".
 * Returns the length written.
 */
size_t
gate_json_str(char *buf, size_t len, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n = 0, k;
	unsigned		 cp;

	if (len < 3)
		return 0;
	buf[n++] = '"';
	while (*p != '\0') {
		unsigned char	 c = *p;
		char		 esc[16];
		size_t		 el;

		k = 1;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = c;
			el = 2;
		} else if (c == '\n') {
			memcpy(esc, "\\n", 2);
			el = 2;
		} else if (c == '\t') {
			memcpy(esc, "\\t", 2);
			el = 2;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			el = 6;
		} else if (c < 0x7f) {
			esc[0] = c;
			el = 1;
		} else if ((k = utf8_seq(p, &cp)) == 0) {
			k = 1;
			snprintf(esc, sizeof(esc), "\\udc%02x", c);
			el = 6;
		} else if (cp < 0x10000) {
			snprintf(esc, sizeof(esc), "\\u%04x", cp);
			el = 6;
		} else {
			cp -= 0x10000;
			snprintf(esc, sizeof(esc), "\\u%04x\\u%04x",
			    0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
			el = 12;
		}
		if (n + el + 2 > len)
			break;
		memcpy(buf + n, esc, el);
		n += el;
		p += k;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return n;
}

static void
add_str(struct buf *l, const char *key, const char *val)
{
	char	 tmp[1024];

	if (val == NULL)
		return;
	gate_json_str(tmp, sizeof(tmp), val);
	buf_printf(l, ",\"%s\":%s", key, tmp);
}

static void
add_ms(struct buf *l, const char *key, double ms)
{
	if (ms >= 0)
		buf_printf(l, ",\"%s\":%.3f", key, ms);
}

void
gate_audit_write(struct gate_audit *a, const struct gate_audit_rec *r,
    uint64_t *errors)
{
	struct buf	 l;
	char		 line[AUDIT_LINE_MAX];	/* l's: never grown */
	struct timeval	 tv;
	struct tm	 tm;
	char		 ts[32];
	int		 torn, e;

	if (a == NULL)
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);

	buf_fixed(&l, line, sizeof(line));
	buf_printf(&l, "{\"time\":\"%s.%03ldZ\",\"event\":\"%s\","
	    "\"conn\":%" PRIu64, ts, (long)(tv.tv_usec / 1000), r->event,
	    r->conn);
	add_str(&l, "session", r->session);
	add_str(&l, "user", r->user);
	add_str(&l, "client", r->client);
	add_str(&l, "method", r->method);
	add_str(&l, "host", r->host);
	if (r->port != 0)
		buf_printf(&l, ",\"port\":%u", r->port);
	/* event "request": the path (no query) within INSP_PATH_MAX bytes */
	add_str(&l, "path", r->path);
	add_str(&l, "addr", r->addr);
	add_str(&l, "decision", r->decision);
	if (r->status != 0)
		buf_printf(&l, ",\"status\":%d", r->status);
	add_str(&l, "reason", r->reason);
	add_str(&l, "rule", r->rule);
	/* an inspected request's requests: entry, at most 576 bytes */
	add_str(&l, "entry", r->entry);
	add_str(&l, "detail", r->detail);
	/* under POLICY_FIX_MAX: about 300 bytes escaped for the longest name */
	add_str(&l, "fix", r->fix);
	/* event "dns": at most 253 + 12 + 46 bytes */
	add_str(&l, "name", r->name);
	add_str(&l, "qtype", r->qtype);
	add_str(&l, "answer", r->answer);
	if (r->refused != 0)
		buf_printf(&l, ",\"refused\":%" PRIu64, r->refused);
	/* --learn: what the policy would have said; tokens, no escaping */
	if (r->learn)
		buf_printf(&l, ",\"learn\":true");
	if (r->would != NULL)
		buf_printf(&l, ",\"would\":\"%s\",\"would_reason\":\"%s\"",
		    strcmp(r->would, "allowed") == 0 ? "allow" : "deny",
		    r->would);
	add_ms(&l, "dns_ms", r->dns_ms);
	add_ms(&l, "connect_ms", r->connect_ms);
	if (strcmp(r->event, "close") == 0 || strcmp(r->event, "request") == 0)
		buf_printf(&l, ",\"bytes_up\":%" PRIu64 ",\"bytes_down\":%"
		    PRIu64, r->bytes_up, r->bytes_down);
	add_ms(&l, "duration_ms", r->duration_ms);
	/* AISB-TRANSPARENT: tool and dialled are at most 64 bytes, escaped */
	if (r->transparent)
		buf_printf(&l, ",\"transparent\":true");
	add_str(&l, "tool", r->tool);
	add_str(&l, "dialled", r->dialled);
	/* inspected: names of secrets (INJECT_NAMES_MAX bytes), never values */
	if (r->inspect)
		buf_printf(&l, ",\"inspect\":true");
	add_str(&l, "inject", r->inject);
	add_str(&l, "placeholder", r->placeholder);
	add_str(&l, "upgrade", r->upgrade);
	if (r->reused)
		buf_printf(&l, ",\"upstream_reused\":true");
	add_str(&l, "named_by", r->named_by);
	if (r->socks)
		buf_printf(&l, ",\"socks\":true");
	/* --ask: numbers and fixed tokens, no escaping */
	if (r->asked)
		buf_printf(&l, ",\"asked\":true");
	if (r->ask_id != 0)
		buf_printf(&l, ",\"id\":%" PRIu64, r->ask_id);
	if (r->by_peer)
		buf_printf(&l, ",\"by_uid\":%lu,\"by_pid\":%ld",
		    (unsigned long)r->by_uid, (long)r->by_pid);
	add_str(&l, "by", r->by);
	if (l.failed) {
		/* Cannot happen with the field bounds above; stay valid JSON. */
		buf_fixed(&l, line, sizeof(line));
		buf_printf(&l, "{\"time\":\"%s.%03ldZ\",\"event\":\"%s\","
		    "\"conn\":%" PRIu64 ",\"truncated\":true", ts,
		    (long)(tv.tv_usec / 1000), r->event, r->conn);
	}
	buf_printf(&l, "}\n");

	a->errors = errors;
	if (a->len + l.len > sizeof(a->buf))
		audit_flush(a);
	if (l.len > sizeof(a->buf) || a->len + l.len > sizeof(a->buf)) {
		/*
		 * A line over PIPE_BUF (not with the bounds above) goes
		 * alone, after what waits; a line that finds buf still full
		 * of lines kept for retry is lost, counted.
		 */
		if (a->len == 0 && l.len > sizeof(a->buf) &&
		    write_lines(a, l.p, l.len, &torn, &e) == l.len)
			return;
		if (errors != NULL)
			(*errors)++;
		return;
	}
	memcpy(a->buf + a->len, l.p, l.len);
	a->len += l.len;
	a->lines++;
	if (a->flush == NULL)
		audit_flush(a);
	else if (a->len == l.len)
		event_active(a->flush, 0, 1);
}

/*
 * A reload's outcome (SIGHUP, control "reload", --watch): the one line of
 * the log that says what runs now and why, also as an audit line of its
 * own, event "reload", reason "applied" or "refused", detail that text.
 * Every worker reloads; worker 0 alone writes the line, as it alone
 * counts the reload.
 */
void
gate_reload_said(struct gate *g, int applied, const char *fmt, ...)
{
	struct gate_audit_rec	 r;
	char			 text[2048];	/* a path, the first error */
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (applied)
		log_notice("%s", text);
	else
		log_warnx("%s", text);
	if (g->worker != 0)
		return;
	memset(&r, 0, sizeof(r));
	r.event = "reload";
	r.reason = applied ? "applied" : "refused";
	/* without "reload: ", which the event says */
	r.detail = strncmp(text, "reload: ", 8) == 0 ? text + 8 : text;
	r.dns_ms = r.connect_ms = r.duration_ms = -1;
	gate_audit_write(g->audit, &r, &g->num->ctr.audit_errors);
}
