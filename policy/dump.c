/*
 * The canonical dump: the compiled policy printed back as YAML that loads
 * to the same policy.  Rules come in canonical order (allow before deny;
 * exact, wildcard, regex, cidr; then by pattern), duplicates merged,
 * ports explicit, defaults spelled out.  Its SHA-256 is the policy's
 * identity: the same meaning gives the same text and so the same hash.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "policy-int.h"

struct sbuf {
	char	*buf;
	size_t	 len, cap;
	int	 oom;
};

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t	 ncap = (b->cap + (size_t)n + 1) * 2;
			char	*nb = realloc(b->buf, ncap);

			if (nb == NULL) {
				b->oom = 1;
				return;
			}
			b->buf = nb;
			b->cap = ncap;
		}
	}
}

/* A double-quoted YAML scalar; bytes outside printable ASCII are escaped. */
static void
sb_quoted(struct sbuf *b, const char *s, size_t len)
{
	size_t	 i;

	sb_printf(b, "\"");
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			sb_printf(b, "\\x%02x", c);
		else
			sb_printf(b, "%c", c);
	}
	sb_printf(b, "\"");
}

static void
dump_reqs(struct sbuf *b, const char *which, const struct policy_reqrule *e,
    size_t n)
{
	size_t	 i;

	if (n == 0)
		return;
	sb_printf(b, "      %s: [", which);
	for (i = 0; i < n; i++) {
		sb_printf(b, "%s", i ? ", " : "");
		sb_quoted(b, e[i].text, strlen(e[i].text));
	}
	sb_printf(b, "]\n");
}

/*
 * Written only for inspect: true, so that a policy without inspection
 * keeps the text, and so the identity, it always had.
 */
static void
dump_inspect(struct sbuf *b, const struct policy_rule *r)
{
	static const char *const scheme[] = {
		[POLICY_SECRET_BEARER] = "bearer", [POLICY_SECRET_BASIC] = "basic"
	};
	size_t	 i;

	sb_printf(b, "    inspect: true\n");
	if (r->nreq_allow > 0 || r->nreq_deny > 0) {
		sb_printf(b, "    requests:\n");
		dump_reqs(b, "allow", r->req_allow, r->nreq_allow);
		dump_reqs(b, "deny", r->req_deny, r->nreq_deny);
	}
	if (r->nsecrets > 0)
		sb_printf(b, "    secrets:\n");
	for (i = 0; i < r->nsecrets; i++) {
		const struct policy_secret *s = &r->secrets[i];

		sb_printf(b, "      - name: ");
		sb_quoted(b, s->name, strlen(s->name));
		sb_printf(b, "\n");
		if (s->header != NULL) {
			sb_printf(b, "        header: ");
			sb_quoted(b, s->header, strlen(s->header));
			sb_printf(b, "\n");
		}
		if (s->mode == POLICY_SECRET_BEARER ||
		    s->mode == POLICY_SECRET_BASIC)
			sb_printf(b, "        scheme: %s\n", scheme[s->mode]);
		if (s->user != NULL) {
			sb_printf(b, "        user: ");
			sb_quoted(b, s->user, strlen(s->user));
			sb_printf(b, "\n");
		}
	}
}

static void
dump_rule(struct sbuf *b, const struct policy_rule *r)
{
	size_t	 i;

	sb_printf(b, "  - %s: ", r->kind == POLICY_RULE_CIDR ? "cidr" : "host");
	sb_quoted(b, r->pattern, r->patlen);
	sb_printf(b, "\n    ports: [");
	for (i = 0; i < r->nports; i++) {
		if (r->ports[i].lo == r->ports[i].hi)
			sb_printf(b, "%s%u", i ? ", " : "", r->ports[i].lo);
		else
			sb_printf(b, "%s\"%u-%u\"", i ? ", " : "",
			    r->ports[i].lo, r->ports[i].hi);
	}
	sb_printf(b, "]\n");
	if (r->inspect)
		dump_inspect(b, r);
}

int
policy_build_dump(struct policy *p)
{
	struct sbuf	 b = { NULL, 0, 0, 0 };
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	char		 addr[64];
	size_t		 i;
	int		 section = -1;

	if ((b.buf = malloc(b.cap = 4096)) == NULL)
		return -1;
	sb_printf(&b, "version: %d\n", POLICY_SCHEMA_VERSION);
	for (i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = p->rules[i];

		if ((int)r->action != section) {
			section = (int)r->action;
			sb_printf(&b, "%s:\n", r->action == POLICY_ALLOW ?
			    "allow" : "deny");
		}
		dump_rule(&b, r);
	}
	if (section == -1)
		sb_printf(&b, "allow: []\n");
	sb_printf(&b, "allow_ranges: [");
	for (i = 0; i < p->nallow_ranges; i++)
		sb_printf(&b, "%s\"%s/%u\"", i ? ", " : "",
		    policy_addr_str(&p->allow_ranges[i].net, addr, sizeof(addr)),
		    p->allow_ranges[i].prefix);
	sb_printf(&b, "]\ndns:\n  servers: [");
	for (i = 0; i < p->ndns_servers; i++)
		sb_printf(&b, "%s\"%s\"", i ? ", " : "", p->dns_servers[i]);
	sb_printf(&b, "]\n  min_ttl: %u\n  max_ttl: %u\n", p->dns_min_ttl,
	    p->dns_max_ttl);
	if (b.oom ||
	    EVP_Digest(b.buf, b.len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32) {
		free(b.buf);
		return -1;
	}
	for (i = 0; i < 32; i++)
		snprintf(p->sha256 + 2 * i, 3, "%02x", md[i]);
	sb_printf(&b, "# sha256:%s\n", p->sha256);
	if (b.oom) {
		free(b.buf);
		return -1;
	}
	p->dump = b.buf;
	p->dumplen = b.len;
	return 0;
}

char *
policy_rule_inspect_yaml(const struct policy_rule *r)
{
	struct sbuf	 b = { NULL, 0, 0, 0 };

	if ((b.buf = malloc(b.cap = 256)) == NULL)
		return NULL;
	b.buf[0] = '\0';
	if (r->inspect)
		dump_inspect(&b, r);
	if (b.oom) {
		free(b.buf);
		return NULL;
	}
	return b.buf;
}

char *
policy_dump(const struct policy *p, size_t *lenp)
{
	char	*s;

	if ((s = malloc(p->dumplen + 1)) == NULL)
		return NULL;
	memcpy(s, p->dump, p->dumplen + 1);
	if (lenp != NULL)
		*lenp = p->dumplen;
	return s;
}

const char *
policy_sha256(const struct policy *p)
{
	return p->sha256;
}
