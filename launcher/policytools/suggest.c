/*
 * aisb policy suggest ID|LOG [--base POLICY] [--group] [--allow-ip]: a
 * policy that allows what a session used, from its audit log (a learning
 * session, aisb --learn, above all); and the summary a learning session
 * ends with (launch_learn_summary, session/run.c).
 *
 * The log is read with denials.c's bounded reader (launch_audit_each):
 * each decision and close line is counted into a table of at most
 * LEARN_MAX_DEST host:port destinations (the rest counted, and said).
 * Only destinations with at least one allowed connection are proposed:
 * a destination refused by its address (the denied ranges, the gate's own
 * address) never is, whatever the flags, and neither are names that did
 * not resolve or connect (listed as comments, for review).  IP literals
 * are proposed only with --allow-ip, as a /32 or /128 rule, and never in
 * a denied range.
 *
 * --group: names that share a registrable domain, two or more of them
 * below it, become one "*.domain" rule.  The registrable domain is the
 * Public Suffix List's, private section included, and never one under
 * which many owners get names (launcher/psl.c): no wildcard admits
 * another tenant of a cloud or tunnel service.
 *
 * --base POLICY: the destinations POLICY already allows are left out,
 * and the rest are printed as a unified diff against POLICY's canonical
 * form (aisb policy print POLICY), which patch(1) applies.  Whatever is
 * printed was loaded by the policy compiler first: the suggestion is a
 * policy that aisb policy check accepts, or nothing is printed.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policytools/denials.h"
#include "file.h"
#include "exitcode.h"
#include "policy.h"
#include "policytools/psl.h"
#include "policytools/suggest.h"
#include "termsafe.h"

#define LEARN_MAX_DEST		4096	/* host:port pairs kept from one log */
#define LEARN_HASH		8192	/* slots: a power of two > MAX_DEST */
#define LEARN_MAX_PORTS		64	/* ports of one name in a rule */
#define LEARN_SUMMARY_LIST	10	/* would-be denials listed at the end */

struct dest {
	char		 host[POLICY_MAX_NAME + 1];
	unsigned	 port;
	unsigned long	 decisions, allowed, denied, failed;
	uint64_t	 up, down;
	char		 would[8];		/* "allow", "deny", "" */
	char		 would_reason[32];
	char		 reason[32];		/* the last refusal's token */
	char		 rule[256];		/* the rule that (would have) decided */
	int		 is_ip;
	struct policy_addr addr;
	/* suggest's own marks */
	int		 keep;			/* proposed */
	const char	*why;			/* not proposed: why (static) */
	char		 note[320];		/* --base: what the base says */
	char		 group[POLICY_MAX_NAME + 8];	/* --group: its rule */
	const char	*reg;			/* --group: the domain it may
						   be grouped under, or NULL */
};

struct learnlog {
	struct dest	*d;			/* grown by doubling */
	size_t		 n, cap;
	int32_t		 slot[LEARN_HASH];	/* index into d, -1: free */
	unsigned long	 more;			/* lines of destinations past d */
	unsigned long	 learn_lines, decision_lines;
	int		 truncated;
};

static uint32_t
fnv1a(const char *s, unsigned port)
{
	uint32_t	 h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	h = (h ^ (port & 0xff)) * 16777619u;
	return (h ^ (port >> 8)) * 16777619u;
}

static struct dest *
dest_get(struct learnlog *l, const char *host, unsigned port)
{
	uint32_t	 i = fnv1a(host, port) & (LEARN_HASH - 1);
	struct dest	*e;

	for (; l->slot[i] != -1; i = (i + 1) & (LEARN_HASH - 1)) {
		e = &l->d[l->slot[i]];
		if (e->port == port && strcmp(e->host, host) == 0)
			return e;
	}
	if (l->n == LEARN_MAX_DEST)
		return NULL;
	if (l->n == l->cap) {
		size_t	 ncap = l->cap * 2;
		void	*nd;

		if ((nd = reallocarray(l->d, ncap, sizeof(*l->d))) == NULL)
			return NULL;
		l->d = nd;
		l->cap = ncap;
	}
	e = &l->d[l->n];
	memset(e, 0, sizeof(*e));
	snprintf(e->host, sizeof(e->host), "%s", host);
	e->port = port;
	e->is_ip = policy_parse_addr(host, strlen(host), &e->addr) == 0;
	l->slot[i] = (int32_t)l->n++;
	return e;
}

static void
learn_line(void *arg, const char *line, size_t len)
{
	struct learnlog			*l = arg;
	struct launch_audit_line	 f;
	struct dest			*e;
	int				 close;

	if (launch_audit_parse(line, len, &f) == -1 || f.host[0] == '\0' ||
	    f.port == 0)
		return;
	close = strcmp(f.event, "close") == 0;
	if (!close && strcmp(f.event, "decision") != 0)
		return;
	if ((e = dest_get(l, f.host, f.port)) == NULL) {
		l->more++;
		return;
	}
	if (close) {
		e->up += f.bytes_up;
		e->down += f.bytes_down;
		return;
	}
	l->decision_lines++;
	l->learn_lines += f.learn != 0;
	e->decisions++;
	if (strcmp(f.decision, "allow") == 0)
		e->allowed++;
	else {
		if (strcmp(f.decision, "deny") == 0)
			e->denied++;
		else
			e->failed++;
		snprintf(e->reason, sizeof(e->reason), "%s", f.reason);
	}
	if (f.would[0] != '\0') {
		/* a deny seen once is what the policy says of it */
		if (strcmp(e->would, "deny") != 0) {
			snprintf(e->would, sizeof(e->would), "%s", f.would);
			snprintf(e->would_reason, sizeof(e->would_reason),
			    "%s", f.would_reason);
		}
	}
	if (f.rule[0] != '\0')
		snprintf(e->rule, sizeof(e->rule), "%s", f.rule);
}

static struct learnlog *
learnlog_new(void)
{
	struct learnlog	*l;
	size_t		 i;

	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->d = calloc(l->cap = 64, sizeof(*l->d))) == NULL) {
		free(l);
		return NULL;
	}
	for (i = 0; i < LEARN_HASH; i++)
		l->slot[i] = -1;
	return l;
}

static struct learnlog *
learnlog_read(const char *path)
{
	struct learnlog	*l;

	if ((l = learnlog_new()) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return NULL;
	}
	if (launch_audit_each(path, learn_line, l, &l->truncated) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", path, strerror(errno));
		free(l->d);
		free(l);
		return NULL;
	}
	return l;
}

static void
learnlog_free(struct learnlog *l)
{
	if (l == NULL)
		return;
	free(l->d);
	free(l);
}

/* s, terminal-safe and ASCII (termsafe.h): hosts a sandbox chose */
static void
put_clean(FILE *out, const char *s)
{
	(void)term_fputs(s, out, TERM_ASCII);
}

static void
put_dest(FILE *out, const struct dest *e)
{
	if (e->is_ip && e->addr.family == AF_INET6) {
		putc('[', out);
		put_clean(out, e->host);
		fprintf(out, "]:%u", e->port);
	} else {
		put_clean(out, e->host);
		fprintf(out, ":%u", e->port);
	}
}

/* Would the session's own policy have refused e? */
static int
would_deny(const struct dest *e)
{
	return strcmp(e->would, "deny") == 0 || e->denied > 0;
}

void
launch_learn_summary(const char *auditpath, const char *id, FILE *out)
{
	struct learnlog	*l;
	size_t		 i, n = 0, listed = 0;

	fprintf(out, "aisb: LEARNING MODE ended: nothing was blocked by the "
	    "policy in this session (the denied address ranges still "
	    "were)\n");
	if ((l = learnlog_read(auditpath)) == NULL)
		return;
	for (i = 0; i < l->n; i++)
		n += (size_t)would_deny(&l->d[i]);
	fprintf(out, "aisb: %zu%s destination(s) used; %zu would have been "
	    "denied by the policy%s\n", l->n, l->more ? "+" : "", n,
	    n > 0 ? ":" : "");
	for (i = 0; i < l->n && listed < LEARN_SUMMARY_LIST; i++) {
		const struct dest *e = &l->d[i];

		if (!would_deny(e))
			continue;
		fputs("aisb:   ", out);
		put_dest(out, e);
		fputs(" (", out);
		put_clean(out, e->denied > 0 && e->allowed == 0 ? e->reason :
		    e->would_reason);
		fprintf(out, ", %lu connection(s))\n", e->decisions);
		listed++;
	}
	if (n > listed)
		fprintf(out, "aisb:   and %zu more\n", n - listed);
	fprintf(out, "aisb: aisb policy suggest %s prints a policy that "
	    "allows what this session used (--base POLICY: as a diff)\n", id);
	learnlog_free(l);
}

/* --- building the suggestion -------------------------------------------- */

struct rule {
	char		 host[POLICY_MAX_NAME + 8];	/* "*.x", or a CIDR */
	int		 cidr;
	unsigned	 ports[LEARN_MAX_PORTS];
	size_t		 nports;
	const struct dest *first;			/* for its comment */
	size_t		 names;				/* grouped into it */
};

static int
cmp_dest(const void *a, const void *b)
{
	const struct dest *x = *(const struct dest *const *)a;
	const struct dest *y = *(const struct dest *const *)b;
	int		 c = strcmp(x->host, y->host);

	return c != 0 ? c : (x->port > y->port) - (x->port < y->port);
}

static void
add_port(struct rule *r, unsigned port)
{
	size_t	 i, j;

	for (i = 0; i < r->nports && r->ports[i] < port; i++)
		;
	if ((i < r->nports && r->ports[i] == port) ||
	    r->nports == LEARN_MAX_PORTS)
		return;
	for (j = r->nports; j > i; j--)
		r->ports[j] = r->ports[j - 1];
	r->ports[i] = port;
	r->nports++;
}

static void
human_bytes(uint64_t v, char *buf, size_t len)
{
	if (v >= 10ULL * 1024 * 1024)
		snprintf(buf, len, "%" PRIu64 " MiB", v >> 20);
	else if (v >= 10ULL * 1024)
		snprintf(buf, len, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", v);
}

/* The comment over a rule: what the session did there, what the policy said. */
static void
dest_comment(FILE *f, const char *indent, const struct dest *e)
{
	char	 up[32], down[32];

	human_bytes(e->up, up, sizeof(up));
	human_bytes(e->down, down, sizeof(down));
	fprintf(f, "%s# ", indent);
	put_dest(f, e);
	fprintf(f, ": %lu connection(s), %s up, %s down", e->decisions, up,
	    down);
	if (e->would[0] != '\0') {
		fputs("; the session's policy: ", f);
		put_clean(f, e->would);
		if (strcmp(e->would, "deny") == 0) {
			fputs(" (", f);
			put_clean(f, e->would_reason);
			putc(')', f);
		}
	}
	putc('\n', f);
}

static void
rule_yaml(FILE *f, const struct rule *r, struct dest *const *v,
    size_t nv)
{
	size_t	 i;

	if (r->names > 1)
		fprintf(f, "  # --group: %zu names below %s:\n", r->names,
		    r->host + 2);
	for (i = 0; i < nv; i++)
		if (v[i]->keep && (r->names > 1 ?
		    strcmp(v[i]->group, r->host) == 0 :
		    v[i]->group[0] == '\0' &&
		    strcmp(v[i]->host, r->first->host) == 0))
			dest_comment(f, "  ", v[i]);
	fprintf(f, "  - %s: \"%s\"\n    ports: [", r->cidr ? "cidr" : "host",
	    r->host);
	for (i = 0; i < r->nports; i++)
		fprintf(f, "%s%u", i ? ", " : "", r->ports[i]);
	fprintf(f, "]\n");
}

/*
 * Which destinations to propose: e->keep, or e->why says why not.  With a
 * base policy, what it allows already or denies by a rule is left out
 * (e->note says which).
 */
static void
choose(struct dest *const *v, size_t nv, int allow_ip,
    const struct policy *base)
{
	struct policy_decision	 d;
	char			 rule[256], name[POLICY_MAX_NAME + 1], err[64];
	size_t			 i, nlen;

	for (i = 0; i < nv; i++) {
		struct dest *e = v[i];

		e->keep = 0;
		e->why = NULL;
		e->note[0] = '\0';
		if (e->allowed == 0) {
			e->why = e->denied > 0 ? "refused" : "never connected";
			continue;
		}
		if (e->is_ip) {
			if (policy_classify(NULL, &e->addr) != NULL)
				e->why = "an address in a denied range";
			else if (!allow_ip)
				e->why = "an IP literal (--allow-ip proposes it)";
			else
				e->keep = 1;
		} else if (policy_normalize_name(e->host, strlen(e->host),
		    name, &nlen, err, sizeof(err)) == -1 ||
		    strcmp(name, e->host) != 0)
			e->why = "not a host name";
		else
			e->keep = 1;
		if (!e->keep || base == NULL)
			continue;
		if (e->is_ip)
			policy_decide_addr(base, &e->addr, (uint16_t)e->port,
			    &d);
		else
			policy_decide_name(base, e->host, strlen(e->host),
			    (uint16_t)e->port, &d);
		if (d.verdict == POLICY_ALLOW) {
			e->keep = 0;
			e->why = "allowed by the base already";
		} else if (d.reason == POLICY_R_DENY_RULE) {
			e->keep = 0;
			e->why = "denied by a deny rule of the base, which "
			    "wins over any allow: remove it to allow this";
		} else
			continue;
		snprintf(e->note, sizeof(e->note), "%s",
		    policy_rule_describe(d.rule, rule, sizeof(rule)));
	}
}

/* Distinct kept names strictly below the registrable domain reg. */
static size_t
names_below(struct dest *const *v, size_t nv, const char *reg)
{
	const char	*r2;
	size_t		 j, n = 0;

	for (j = 0; j < nv; j++) {
		if (!v[j]->keep || (r2 = v[j]->reg) == NULL ||
		    strcmp(r2, reg) != 0 || strcmp(v[j]->host, reg) == 0)
			continue;
		if (j > 0 && v[j - 1]->keep &&
		    strcmp(v[j - 1]->host, v[j]->host) == 0)
			continue;	/* the same name on another port */
		n++;
	}
	return n;
}

/*
 * The rules for the destinations kept, in v's (sorted) order: one per
 * name, or with group one "*.domain" for two or more names below the same
 * registrable domain.  Returns how many, or -1 when out of memory.
 */
static ssize_t
make_rules(struct dest *const *v, size_t nv, const struct launch_psl *psl,
    struct rule **out)
{
	struct rule	*r;
	size_t		 i, j, n = 0, below;
	const char	*reg;

	*out = NULL;
	if ((r = calloc(nv + 1, sizeof(*r))) == NULL)
		return -1;
	for (i = 0; i < nv; i++)
		v[i]->reg = psl != NULL && !v[i]->is_ip ?
		    launch_psl_group_domain(psl, v[i]->host) : NULL;
	for (i = 0; i < nv; i++) {
		struct dest	*e = v[i];
		struct rule	*x = NULL;
		char		 name[POLICY_MAX_NAME + 8];

		if (!e->keep)
			continue;
		e->group[0] = '\0';
		reg = e->reg;
		if (reg != NULL && strcmp(reg, e->host) != 0 &&
		    (below = names_below(v, nv, reg)) >= 2) {
			snprintf(name, sizeof(name), "*.%s", reg);
			snprintf(e->group, sizeof(e->group), "%s", name);
		} else {
			below = 1;
			if (e->is_ip)
				snprintf(name, sizeof(name), "%s/%u", e->host,
				    e->addr.family == AF_INET ? 32 : 128);
			else
				snprintf(name, sizeof(name), "%s", e->host);
		}
		for (j = 0; j < n && x == NULL; j++)
			if (strcmp(r[j].host, name) == 0)
				x = &r[j];
		if (x == NULL) {
			x = &r[n++];
			snprintf(x->host, sizeof(x->host), "%s", name);
			x->first = e;
			x->names = below;
			x->cidr = e->is_ip;
		}
		add_port(x, e->port);
	}
	*out = r;
	return (ssize_t)n;
}

/* The rules as the items of an allow: list, into a malloc'd string. */
static char *
rules_text(const struct rule *r, size_t n, struct dest *const *v, size_t nv)
{
	char	*s = NULL;
	size_t	 len = 0, i;
	FILE	*f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		rule_yaml(f, &r[i], v, nv);
	if (fclose(f) == EOF) {
		free(s);
		return NULL;
	}
	return s;
}

/* What was not proposed, as comments. */
static void
not_proposed(FILE *f, struct dest *const *v, size_t nv)
{
	size_t	 i;
	int	 head = 0;

	for (i = 0; i < nv; i++) {
		if (v[i]->keep)
			continue;
		if (!head)
			fprintf(f, "# not proposed:\n");
		head = 1;
		fputs("#   ", f);
		put_dest(f, v[i]);
		fputs(": ", f);
		fputs(v[i]->why, f);
		if (v[i]->allowed == 0 && v[i]->reason[0] != '\0') {
			fputs(" (", f);
			put_clean(f, v[i]->reason);
			putc(')', f);
		}
		if (v[i]->note[0] != '\0') {
			fputs("; ", f);
			put_clean(f, v[i]->note);
		}
		putc('\n', f);
	}
}

/* 0 when text loads as a policy, else -1 after the errors on stderr. */
static int
loads(const char *name, const char *text)
{
	struct policy_errors	*errs;
	struct policy		*p = NULL;
	char			 buf[4096];
	int			 rc;

	if ((errs = calloc(1, sizeof(*errs))) == NULL)
		return -1;
	rc = policy_load_buffer(name, text, strlen(text), &p, errs);
	if (rc == -1) {
		policy_errors_format(errs, buf, sizeof(buf));
		fprintf(stderr, "aisb: the suggestion does not load (a bug; "
		    "please report it):\n%s", buf);
	}
	policy_free(p);
	free(errs);
	return rc;
}

/* Each line of s with a '+' before it. */
static void
added(FILE *out, const char *s)
{
	const char	*p;

	for (p = s; *p != '\0'; p++) {
		if (p == s || p[-1] == '\n')
			putc('+', out);
		putc(*p, out);
	}
}

/*
 * The lines of the base's canonical form as a diff with the rules added
 * (rules: the allow: items, "" for none): one hunk, three lines of
 * context.  The merged text is loaded before anything is printed.
 */
static int
print_diff(FILE *out, const char *basepath, const struct policy *base,
    const char *rules, const char *id)
{
	char		*dump, **line = NULL, *merged = NULL, *p;
	size_t		 n = 0, i, at = 0, del = 0, c0, c1, nadd = 0, mlen = 0;
	const char	*pre = "";
	FILE		*m;
	int		 rc = -1;

	if ((dump = policy_dump(base, NULL)) == NULL)
		return -1;
	for (p = dump; *p != '\0'; p++)
		n += *p == '\n';
	if ((line = calloc(n + 1, sizeof(*line))) == NULL)
		goto fail;
	for (i = 0, p = dump; i < n; i++) {
		line[i] = p;
		p = strchr(p, '\n');
		*p++ = '\0';
	}
	/* canonical order: allow:, deny:, allow_ranges: */
	for (at = 0; at < n; at++) {
		if (strcmp(line[at], "allow: []") == 0) {
			del = 1;
			pre = "allow:\n";
			break;
		}
		if (strcmp(line[at], "deny:") == 0 ||
		    strncmp(line[at], "allow_ranges:", 13) == 0)
			break;
	}
	if (at == n)
		goto fail;		/* not a canonical form */
	if (del == 0 && strcmp(line[at], "deny:") == 0) {
		for (i = 0; i < at && strcmp(line[i], "allow:") != 0; i++)
			;
		if (i == at)
			pre = "allow:\n";	/* only deny rules */
	}
	if ((m = open_memstream(&merged, &mlen)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		if (i == at)
			fprintf(m, "%s%s", pre, rules);
		if (i < at || i >= at + del)
			fprintf(m, "%s\n", line[i]);
	}
	if (fclose(m) == EOF || loads("the base with the suggestion",
	    merged) == -1)
		goto fail;
	for (i = 0; pre[i] != '\0'; i++)
		nadd += pre[i] == '\n';
	for (i = 0; rules[i] != '\0'; i++)
		nadd += rules[i] == '\n';
	c0 = at > 3 ? at - 3 : 0;
	c1 = at + del + 3 < n ? at + del + 3 : n;
	fprintf(out, "--- %s (canonical: aisb policy print)\n"
	    "+++ %s with what session %s used\n"
	    "@@ -%zu,%zu +%zu,%zu @@\n", basepath, basepath, id, c0 + 1,
	    c1 - c0, c0 + 1, c1 - c0 - del + nadd);
	for (i = c0; i < at; i++)
		fprintf(out, " %s\n", line[i]);
	for (i = at; i < at + del; i++)
		fprintf(out, "-%s\n", line[i]);
	added(out, pre);
	added(out, rules);
	for (i = at + del; i < c1; i++)
		fprintf(out, " %s\n", line[i]);
	rc = 0;
fail:
	free(merged);
	free(line);
	free(dump);
	return rc;
}

static struct policy *
load_base(const char *path)
{
	struct policy_errors	*errs;
	struct policy		*p = NULL;
	char			 buf[8192];

	if ((errs = calloc(1, sizeof(*errs))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return NULL;
	}
	if (policy_load_file(path, &p, errs) == -1) {
		policy_errors_format(errs, buf, sizeof(buf));
		fprintf(stderr, "%s(--base %s)\n", buf, path);
	}
	free(errs);
	return p;
}

/*
 * The suggestion for the destinations of l, on out: a whole policy, or
 * with base a diff against its canonical form (basepath names it).  0;
 * -1 when out of memory; -2 when the suggestion did not load (a bug:
 * nothing is printed then).
 */
static int
suggest_print(struct learnlog *l, const char *id, const struct policy *base,
    const char *basepath, unsigned flags, FILE *out)
{
	struct dest		**v = NULL;
	struct rule		*r = NULL;
	struct launch_psl	*psl = NULL;
	char			*rules = NULL, *full = NULL, err[512];
	size_t			 i, flen = 0;
	ssize_t			 nr;
	int			 rc = -1;
	FILE			*f;

	/* no list to check a wildcard against: none is proposed */
	if ((flags & LAUNCH_SUGGEST_GROUP) &&
	    (psl = launch_psl_new(err, sizeof(err))) == NULL)
		fprintf(stderr, "aisb: --group: %s; nothing is grouped "
		    "(apt-get install publicsuffix)\n", err);
	if ((v = calloc(l->n + 1, sizeof(*v))) == NULL)
		goto out;
	for (i = 0; i < l->n; i++)
		v[i] = &l->d[i];
	qsort(v, l->n, sizeof(*v), cmp_dest);
	choose(v, l->n, (flags & LAUNCH_SUGGEST_ALLOW_IP) != 0, base);
	if ((nr = make_rules(v, l->n, psl, &r)) == -1 || (rules = rules_text(r, (size_t)nr, v, l->n)) == NULL)
		goto out;
	if ((f = open_memstream(&full, &flen)) == NULL)
		goto out;
	if (base != NULL && nr == 0)
		fprintf(f, "# nothing to add: %s allows what session %s used\n",
		    basepath, id);	/* from argv: the caller's own words */
	else if (base != NULL) {
		if ((rc = print_diff(f, basepath, base, rules, id)) != 0) {
			fclose(f);
			goto out;
		}
		rc = -1;
	} else {
		fputs("# aisb policy suggest: what session ", f);
		put_clean(f, id);
		fputs(" used, as a policy; review it (docs/policy.md, "
		    "\"Writing a policy\")\n", f);
		fprintf(f, "version: %d\n", POLICY_SCHEMA_VERSION);
		if (nr == 0)
			fprintf(f, "allow: []\n");
		else
			fprintf(f, "allow:\n%s", rules);
	}
	not_proposed(f, v, l->n);
	if (fclose(f) == EOF)
		goto out;
	if (base == NULL && loads("the suggestion", full) == -1) {
		rc = -2;
		goto out;
	}
	fputs(full, out);
	rc = 0;
out:
	launch_psl_free(psl);
	free(full);
	free(rules);
	free(r);
	free(v);
	return rc;
}

int
launch_suggest_buffer(const char *buf, size_t len, const struct policy *base,
    unsigned flags, FILE *out)
{
	struct learnlog	*l;
	const char	*nl;
	size_t		 n;
	int		 rc;

	if ((l = learnlog_new()) == NULL)
		return -1;
	while (len > 0) {
		nl = memchr(buf, '\n', len);
		n = nl != NULL ? (size_t)(nl - buf) : len;
		if (nl != NULL && n < LAUNCH_DENY_LINE)	/* as the file reader */
			learn_line(l, buf, n);
		buf += n + (nl != NULL);
		len -= n + (nl != NULL);
	}
	rc = suggest_print(l, "(buffer)", base, "(base)", flags, out);
	learnlog_free(l);
	return rc;
}

int
launch_suggest_log(const char *log, const char *id, const char *basepath,
    unsigned flags)
{
	struct learnlog		*l = NULL;
	struct policy		*base = NULL;
	int			 rc;

	if (basepath != NULL && (base = load_base(basepath)) == NULL)
		return EXIT_CONFIG;
	rc = 1;
	if ((l = learnlog_read(log)) == NULL)
		goto out;
	if (l->decision_lines == 0) {
		fprintf(stderr, "aisb: %s has no decisions: the session made "
		    "no connection through its gate\n", log);
		rc = EXIT_CONFIG;
		goto out;
	}
	if (l->learn_lines == 0)
		fprintf(stderr, "aisb: %s is not a learning session's log "
		    "(aisb --learn): it proposes only what its policy "
		    "allowed\n", log);
	if (l->truncated || l->more)
		fprintf(stderr, "aisb: %s: only the first %lu MiB and %d "
		    "destinations were read; the suggestion may be short\n",
		    log, LAUNCH_DENY_READ_MAX >> 20, LEARN_MAX_DEST);
	switch (suggest_print(l, id, base, basepath, flags, stdout)) {
	case 0:
		rc = 0;
		break;
	case -1:
		fprintf(stderr, "aisb: out of memory\n");
		break;
	default:
		break;			/* loads() said why */
	}
	if (fflush(stdout) == EOF) {
		perror("aisb: stdout");
		rc = 1;
	}
out:
	learnlog_free(l);
	policy_free(base);
	return rc;
}
