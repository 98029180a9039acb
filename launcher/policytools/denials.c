/*
 * The denials of a session, from the audit log in its folder (for a
 * named gate, the session's lines copied there at detach: gates.c).
 *
 * The log may be large (a busy agent, a gate left for days): it is read
 * line by line into a fixed buffer, at most LAUNCH_DENY_READ_MAX bytes,
 * and aggregated into a table of LAUNCH_DENY_MAX destinations; denials
 * past the table are counted ("and N more").  An audit line is one flat
 * JSON object written by gate/audit.c; anything else is skipped.  What is
 * printed comes from the sandbox (names it asked for) by way of the gate:
 * cleaned by common/termsafe.h (controls, C1 and broken UTF-8 as '?'), so
 * nothing reaches the terminal that it would interpret.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "termsafe.h"
#include "policytools/denials.h"

void
launch_denials_init(struct launch_denials *d)
{
	memset(d, 0, sizeof(*d));
}

/*
 * The JSON string whose opening quote is at *p, up to end, decoded as the
 * gate writes it (\u escapes are bytes: common/json.c) and cut to
 * outlen - 1 bytes into out (NULL: skipped); *p ends after its closing
 * quote.  0, or -1 when it is not a string.
 */
static int
field_string(const char **p, const char *end, char *out, size_t outlen)
{
	char	 buf[LAUNCH_DENY_LINE];
	ssize_t	 n;

	n = json_string(*p, (size_t)(end - *p), out != NULL ? buf : NULL,
	    sizeof(buf), NULL, JSON_BYTES, NULL, 0);
	if (n <= 0)
		return -1;
	if (out != NULL && outlen > 0)
		snprintf(out, outlen, "%s", buf);
	*p += n;
	return 0;
}

/* Where the value of key goes, or out NULL when it is not wanted. */
static void
field_of(struct launch_audit_line *f, const char *key, char **out,
    size_t *outlen)
{
	const struct {
		const char	*key;
		size_t		 off, len;
	} map[] = {
#define F(k)	{ #k, offsetof(struct launch_audit_line, k), sizeof(f->k) }
		F(event), F(decision), F(host), F(reason), F(detail), F(rule),
		F(method), F(path),
		F(fix), F(would), F(would_reason), F(tool), F(name),
		F(answer),
#undef F
	};
	size_t	 i;

	*out = NULL;
	*outlen = 0;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(key, map[i].key) == 0) {
			*out = (char *)f + map[i].off;
			*outlen = map[i].len;
		}
}

/* The fields of one flat JSON object; -1 when it is not one. */
int
launch_audit_parse(const char *s, size_t len, struct launch_audit_line *f)
{
	const char	*p = s, *end = s + len;
	char		 key[16];
	char		*out;
	size_t		 outlen;

	memset(f, 0, sizeof(*f));
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p++ != '{')
		return -1;
	for (;;) {
		while (p < end && (*p == ' ' || *p == ','))
			p++;
		if (p < end && *p == '}')
			return 0;
		if (p >= end || *p != '"' ||
		    field_string(&p, end, key, sizeof(key)) == -1)
			return -1;
		if (p >= end || *p++ != ':')
			return -1;
		field_of(f, key, &out, &outlen);
		if (p < end && *p == '"') {
			if (field_string(&p, end, out, outlen) == -1)
				return -1;
			continue;
		}
		/* a number or a literal: up to the next ',' or '}' */
		if (strcmp(key, "port") == 0 || strcmp(key, "status") == 0) {
			unsigned long	 v = 0;

			while (p < end && *p >= '0' && *p <= '9' && v <= 65535)
				v = v * 10 + (unsigned long)(*p++ - '0');
			if (key[0] == 'p')
				f->port = v <= 65535 ? (unsigned)v : 0;
			else
				f->status = v <= 999 ? (unsigned)v : 0;
		} else if (strcmp(key, "bytes_up") == 0 ||
		    strcmp(key, "bytes_down") == 0 ||
		    strcmp(key, "refused") == 0) {
			uint64_t	 v = 0;

			/* at most 19 digits: no overflow */
			while (p < end && *p >= '0' && *p <= '9' &&
			    v < UINT64_C(1000000000000000000))
				v = v * 10 + (uint64_t)(*p++ - '0');
			if (key[0] == 'r')
				f->refused = v;
			else if (key[6] == 'u')
				f->bytes_up = v;
			else
				f->bytes_down = v;
		} else if (strcmp(key, "learn") == 0)
			f->learn = end - p >= 4 && memcmp(p, "true", 4) == 0;
		else if (strcmp(key, "transparent") == 0)
			f->transparent = end - p >= 4 &&
			    memcmp(p, "true", 4) == 0;
		while (p < end && *p != ',' && *p != '}')
			p++;
	}
}

/* One transparent connection of tool ("" when the relay could not tell). */
static void
tool_add(struct launch_denials *d, const char *tool)
{
	size_t	 i;

	d->transparent++;
	for (i = 0; i < d->ntools; i++)
		if (strcmp(d->tools[i].name, tool) == 0) {
			d->tools[i].count++;
			return;
		}
	if (d->ntools == LAUNCH_TPROXY_TOOLS) {
		d->tools_more++;
		return;
	}
	snprintf(d->tools[d->ntools].name, sizeof(d->tools[0].name), "%s",
	    tool);
	d->tools[d->ntools++].count = 1;
}

/*
 * count requests to f's destination, into tab (denials or failures: *n
 * entries) or past it (*more); bydetail: one entry a detail too (the
 * malformed: bad_request's detail says which of many faults it was)
 */
static void
dest_count(struct launch_denial *tab, size_t *n, unsigned long *more,
    const struct launch_audit_line *f, int dns, const char *req,
    unsigned long count, int bydetail)
{
	struct launch_denial	*e;
	size_t			 i;

	for (i = 0; i < *n; i++) {
		e = &tab[i];
		if (e->dns == dns && e->port == f->port &&
		    strcmp(e->host, f->host) == 0 &&
		    strcmp(e->reason, f->reason) == 0 &&
		    strcmp(e->request, req) == 0 &&
		    (!bydetail || strncmp(e->detail, f->detail,
		    sizeof(e->detail) - 1) == 0)) {
			e->count += count;
			return;
		}
	}
	if (*n == LAUNCH_DENY_MAX) {
		*more += count;
		return;
	}
	e = &tab[(*n)++];
	snprintf(e->host, sizeof(e->host), "%s", f->host);
	e->port = f->port;
	e->dns = dns;
	snprintf(e->reason, sizeof(e->reason), "%s", f->reason);
	snprintf(e->detail, sizeof(e->detail), "%s", f->detail);
	snprintf(e->rule, sizeof(e->rule), "%s", f->rule);
	snprintf(e->fix, sizeof(e->fix), "%s", f->fix);
	snprintf(e->request, sizeof(e->request), "%s", req);
	e->count = count;
}

static void
denial_count(struct launch_denials *d, const struct launch_audit_line *f,
    int dns, const char *req, unsigned long count)
{
	d->denied += count;
	dest_count(d->d, &d->n, &d->more, f, dns, req, count, 0);
}

static void
failure_count(struct launch_denials *d, const struct launch_audit_line *f,
    int dns, const char *req)
{
	d->failed++;
	dest_count(d->f, &d->nf, &d->fmore, f, dns, req, 1, 0);
}

static void
malformed_count(struct launch_denials *d, const struct launch_audit_line *f,
    int dns, const char *req)
{
	d->malformed++;
	dest_count(d->m, &d->nm, &d->mmore, f, dns, req, 1, 1);
}

/*
 * An inspected host's request the gate refused before its entries
 * decided it: a malformed head or body, a target not in origin form, a
 * Host that is not the connection's (fronting through the name).  The
 * sandbox's doing, not the upstream's: malformed, not failed.
 */
static int
request_malformed(const char *reason)
{
	static const char *const r[] = {
		"bad_request", "bad_target", "host_mismatch",
		"bad_chunked_body",
	};
	size_t	 i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (strcmp(reason, r[i]) == 0)
			return 1;
	return 0;
}

static int
is_probe(const struct launch_audit_line *f)
{
	return f->status == 407 && strcmp(f->reason, "auth_required") == 0 &&
	    strcmp(f->detail, "no credentials") == 0 && f->host[0] != '\0';
}

/*
 * A 407 without credentials is held (is_probe); a decision on the same
 * request made with credentials (any but a 407) answers the held ones.
 * 1 when f was held.
 */
static int
probe_hold(struct launch_denials *d, const struct launch_audit_line *f)
{
	struct launch_probe	*p;
	size_t			 i;

	for (i = 0; i < d->nprobes; i++) {
		p = &d->probes[i];
		if (p->count == 0 || p->port != f->port ||
		    strcmp(p->method, f->method) != 0 ||
		    strcmp(p->host, f->host) != 0)
			continue;
		if (is_probe(f)) {
			p->count++;
			return 1;
		}
		if (f->status != 407) {
			d->probes_answered += p->count;
			p->count = 0;
		}
		return 0;
	}
	if (!is_probe(f))
		return 0;
	for (i = 0; i < d->nprobes && d->probes[i].count != 0; i++)
		;
	if (i == LAUNCH_DENY_MAX)
		return 0;		/* no room: a denial at once */
	if (i == d->nprobes)
		d->nprobes++;
	p = &d->probes[i];
	snprintf(p->method, sizeof(p->method), "%s", f->method);
	snprintf(p->host, sizeof(p->host), "%s", f->host);
	p->port = f->port;
	p->count = 1;
	return 1;
}

void
launch_denials_end(struct launch_denials *d)
{
	struct launch_audit_line	 f;
	size_t				 i;

	for (i = 0; i < d->nprobes; i++) {
		if (d->probes[i].count == 0)
			continue;
		memset(&f, 0, sizeof(f));
		snprintf(f.host, sizeof(f.host), "%s", d->probes[i].host);
		f.port = d->probes[i].port;
		snprintf(f.reason, sizeof(f.reason), "auth_required");
		snprintf(f.detail, sizeof(f.detail), "no credentials");
		denial_count(d, &f, 0, "", d->probes[i].count);
		d->probes[i].count = 0;
	}
	d->nprobes = 0;
}

/*
 * The gate's DNS answers to a query it could not read or does not serve,
 * given before any decision (REFUSED without a reason): for people.
 */
static const struct {
	const char	*answer, *detail;
} dns_unserved[] = {
	{ "FORMERR",	"a query the gate could not read" },
	{ "NOTIMP",	"not a standard query (opcode)" },
	{ "BADVERS",	"an EDNS version other than 0" },
	{ "REFUSED",	"a class other than IN, or the root name" },
};

/*
 * A question the gate's DNS refused (AISB-DNS, transparent capture): a
 * name the policy does not allow is answered NXDOMAIN, and a tool that
 * resolves before it connects never connects, so the answer is the
 * denial.  Queries over the rate bound (REFUSED) count as the line says.
 * A malformed query, or one the gate does not serve, is counted as
 * malformed: no policy judged it.  1 when the line was a denial, its
 * fields turned into a denial's in f.
 */
static int
dns_denial(struct launch_denials *d, struct launch_audit_line *f,
    unsigned long *count)
{
	size_t	 i;
	int	 nx = strcmp(f->answer, "NXDOMAIN") == 0;

	for (i = 0; i < sizeof(dns_unserved) / sizeof(dns_unserved[0]); i++) {
		if (strcmp(f->answer, dns_unserved[i].answer) != 0)
			continue;
		if (strcmp(f->answer, "REFUSED") == 0 && f->reason[0] != '\0')
			break;		/* over the rate bound: a refusal */
		memcpy(f->host, f->name, sizeof(f->host));
		snprintf(f->reason, sizeof(f->reason), "%.16s", f->answer);
		snprintf(f->detail, sizeof(f->detail), "%s",
		    dns_unserved[i].detail);
		f->port = 0;
		malformed_count(d, f, 1, "");
		return 0;
	}
	if (!nx && strcmp(f->answer, "REFUSED") != 0)
		return 0;
	if (f->reason[0] == '\0')	/* a gate before reasons were given */
		snprintf(f->reason, sizeof(f->reason), "name_refused");
	memcpy(f->host, f->name, sizeof(f->host));
	f->port = 0;
	*count = f->refused > 0 ? (unsigned long)f->refused : 1;
	return 1;
}

void
launch_denials_add(struct launch_denials *d, const char *line, size_t len)
{
	struct launch_audit_line	 f;
	char				 req[sizeof(d->d[0].request)];
	unsigned long			 count = 1;
	int				 dns;

	if (launch_audit_parse(line, len, &f) == -1)
		return;
	if (strcmp(f.event, "request") == 0) {
		/*
		 * an inspected host's refused or failed request: listed as a
		 * connection is (its connection was allowed: counted once)
		 */
		/* a head that did not parse may have no path, or no method */
		snprintf(req, sizeof(req), "%s%s%s", f.method,
		    f.method[0] != '\0' && f.path[0] != '\0' ? " " : "", f.path);
		if (strcmp(f.decision, "deny") == 0)
			denial_count(d, &f, 0, req, 1);
		else if (strcmp(f.decision, "error") == 0 &&
		    request_malformed(f.reason))
			malformed_count(d, &f, 0, req);
		else if (strcmp(f.decision, "error") == 0)
			failure_count(d, &f, 0, req);
		return;
	}
	if ((dns = strcmp(f.event, "dns") == 0) &&
	    !dns_denial(d, &f, &count))
		return;
	if (!dns && strcmp(f.event, "decision") != 0)
		return;
	if (f.transparent)
		tool_add(d, f.tool);
	if (!dns && probe_hold(d, &f))
		return;
	if (strcmp(f.decision, "allow") == 0) {
		d->allowed++;
		return;
	}
	if (!dns && strcmp(f.reason, "bad_request") == 0) {
		/* no policy decided it, whatever its decision says */
		malformed_count(d, &f, 0, "");
		return;
	}
	if (!dns && strcmp(f.decision, "deny") != 0) {
		failure_count(d, &f, 0, "");
		return;
	}
	denial_count(d, &f, dns, "", count);
}

static void
denials_line(void *arg, const char *line, size_t len)
{
	launch_denials_add(arg, line, len);
}

int
launch_denials_read(struct launch_denials *d, const char *path)
{
	int	 rc = launch_audit_each(path, denials_line, d, &d->truncated);

	launch_denials_end(d);
	return rc;
}

int
launch_audit_each(const char *path, launch_audit_fn fn, void *arg,
    int *truncated)
{
	char		*buf;
	size_t		 have = 0, total = 0, i, start;
	ssize_t		 n;
	int		 fd, skipping = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	if ((buf = malloc(LAUNCH_DENY_LINE)) == NULL) {
		close(fd);
		return -1;
	}
	for (;;) {
		if (total >= LAUNCH_DENY_READ_MAX) {
			*truncated = 1;
			break;
		}
		n = read(fd, buf + have, LAUNCH_DENY_LINE - have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;		/* a last line without '\n' is cut */
		total += (size_t)n;
		have += (size_t)n;
		for (start = 0, i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			if (!skipping)
				fn(arg, buf + start, i - start);
			skipping = 0;
			start = i + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == LAUNCH_DENY_LINE) {
			/* a line over the bound: skipped to its end */
			skipping = 1;
			have = 0;
		}
	}
	free(buf);
	close(fd);
	return 0;
}

/*
 * s, terminal-safe and ASCII (termsafe.h; '\n' kept when nl): hosts and
 * paths a sandbox chose, listed for rules a person may write from them
 */
static void
put_clean(FILE *out, const char *s, int nl)
{
	(void)term_fputs(s, out, TERM_ASCII | (nl ? TERM_KEEP_NL : 0));
}

/* "host not allowed" for host_not_allowed: the detail says it already */
static int
same_words(const char *token, const char *words)
{
	for (; *token != '\0' && *words != '\0'; token++, words++)
		if (*token != *words && !(*token == '_' && *words == ' '))
			return 0;
	return *token == *words;
}

/* "host:port", "[v6]:port", "name (DNS lookup)", "(DNS query, no name)" */
static void
put_dest(FILE *out, const struct launch_denial *e)
{
	if (e->host[0] == '\0')
		fputs(e->dns ? "(DNS query, no name)" : "(no target)", out);
	else if (e->dns) {
		put_clean(out, e->host, 0);
		fputs(" (DNS lookup)", out);
	} else if (strchr(e->host, ':') != NULL) {
		putc('[', out);
		put_clean(out, e->host, 0);
		fprintf(out, "]:%u", e->port);
	} else {
		put_clean(out, e->host, 0);
		fprintf(out, ":%u", e->port);
	}
}

/* One line per entry: verb, destination, count, reason, rule; its fix. */
static void
put_table(FILE *out, const char *prefix, const char *verb,
    const struct launch_denial *tab, size_t n)
{
	const struct launch_denial	*e;
	size_t				 i, len;

	for (i = 0; i < n; i++) {
		e = &tab[i];
		fprintf(out, "%s%s ", prefix, verb);
		put_dest(out, e);
		if (e->request[0] != '\0') {
			putc(' ', out);
			put_clean(out, e->request, 0);
		}
		fprintf(out, ", %lu time%s: ", e->count, e->count == 1 ? "" : "s");
		put_clean(out, e->detail[0] ? e->detail : e->reason, 0);
		if (e->detail[0] && !same_words(e->reason, e->detail)) {
			fputs(" (", out);
			put_clean(out, e->reason, 0);
			putc(')', out);
		}
		if (e->rule[0] != '\0') {
			fputs("; rule ", out);
			put_clean(out, e->rule, 0);
		}
		putc('\n', out);
		if (e->fix[0] != '\0') {
			put_clean(out, e->fix, 1);
			len = strlen(e->fix);
			if (e->fix[len - 1] != '\n')
				putc('\n', out);
		}
	}
}

/*
 * The destinations of a table's n entries: an entry is a destination and
 * a reason, a request (an inspected host's) or a fault, so one host:port
 * may have several.
 */
static size_t
dests(const struct launch_denial *tab, size_t n)
{
	size_t	 i, j, k = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (tab[j].dns == tab[i].dns &&
			    tab[j].port == tab[i].port &&
			    strcmp(tab[j].host, tab[i].host) == 0)
				break;
		if (j == i)
			k++;
	}
	return k;
}

void
launch_denials_print(const struct launch_denials *d, FILE *out,
    const char *prefix, const char *logpath)
{
	size_t	 i;
	int	 anyfix = 0;

	if (d->denied == 0 && d->failed == 0 && d->malformed == 0)
		return;
	for (i = 0; i < d->n; i++)
		if (d->d[i].fix[0] != '\0' && d->d[i].fix[0] != '#')
			anyfix = 1;
	if (d->denied > 0)
		fprintf(out, "%s%lu request(s) denied, to %zu%s "
		    "destination(s)%s\n", prefix, d->denied, dests(d->d, d->n),
		    d->more ? "+" : "", anyfix ? "; the YAML under one would "
		    "allow it: add its entries to your policy" : "");
	put_table(out, prefix, "denied", d->d, d->n);
	if (d->more > 0)
		fprintf(out, "%sand %lu more denial(s) to other destinations\n",
		    prefix, d->more);
	if (d->failed > 0)
		fprintf(out, "%s%lu request(s) failed, to %zu%s destination(s): "
		    "the policy allowed them, the gate could not complete "
		    "them\n", prefix, d->failed, dests(d->f, d->nf),
		    d->fmore ? "+" : "");
	put_table(out, prefix, "failed", d->f, d->nf);
	if (d->fmore > 0)
		fprintf(out, "%sand %lu more failure(s) to other "
		    "destinations\n", prefix, d->fmore);
	if (d->malformed > 0)
		fprintf(out, "%s%lu request(s) malformed, to %zu%s "
		    "destination(s): the gate refused them before any "
		    "decision, no policy judged them\n", prefix, d->malformed,
		    dests(d->m, d->nm), d->mmore ? "+" : "");
	put_table(out, prefix, "malformed", d->m, d->nm);
	if (d->mmore > 0)
		fprintf(out, "%sand %lu more malformed request(s) to other "
		    "destinations\n", prefix, d->mmore);
	if (d->truncated)
		fprintf(out, "%sonly the first %lu MiB of the audit log were "
		    "read\n", prefix, LAUNCH_DENY_READ_MAX >> 20);
	if (logpath != NULL && (d->more > 0 || d->fmore > 0 || d->mmore > 0 ||
	    d->truncated))
		fprintf(out, "%severy decision: %s\n", prefix, logpath);
}

void
launch_denials_print_tools(const struct launch_denials *d, FILE *out,
    const char *prefix)
{
	size_t	 i;

	if (d->transparent == 0)
		return;
	fprintf(out, "%s%lu connection(s) came in transparently; tools that "
	    "ignored the proxy variables: ", prefix, d->transparent);
	for (i = 0; i < d->ntools; i++) {
		if (i > 0)
			fputs(", ", out);
		put_clean(out, d->tools[i].name[0] ? d->tools[i].name :
		    "(unknown program)", 0);
		fprintf(out, " (%lu)", d->tools[i].count);
	}
	if (d->tools_more > 0)
		fprintf(out, ", others (%lu)", d->tools_more);
	putc('\n', out);
}

void
launch_denials_summary(const char *path, FILE *f, const char *prefix)
{
	struct launch_denials	*d;

	if ((d = malloc(sizeof(*d))) == NULL)
		return;
	launch_denials_init(d);
	if (launch_denials_read(d, path) == 0) {
		launch_denials_print(d, f, prefix, path);
		launch_denials_print_tools(d, f, prefix);
	}
	free(d);
}
