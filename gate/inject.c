/*
 * Secrets into an allowed request's head (inject.h).  The decision is
 * made before this runs (inspect_http.c): a refused request never gets
 * here, so a secret goes only into requests the policy allowed, on the
 * connection its rule allowed, and the head it writes is sent only to
 * that connection's upstream.
 *
 * The policy says where a value goes, never the client.  Header modes
 * drop every field of their name the client sent (a sandbox cannot
 * smuggle a second credential past the one set) and set the field once.
 * The query mode writes the value only as the whole value of its one
 * parameter, and only where the client wrote the placeholder as that
 * value: the placeholder in the path, in another parameter, in a header
 * or inside a client's own Basic credential stays a placeholder (any
 * endpoint of the host that echoes what it got, a path or a header,
 * would otherwise hand the value back to the sandbox).  Placeholders
 * left in the head are named, for the audit.
 *
 * The value never reaches a log: info carries names only.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "buf.h"
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/inject.h"
#include "log.h"

#define BASIC_MAX	1024	/* bytes of a Basic credential looked into */

/* name appended to list ("A,B"), once; a full list keeps what it has */
static void
name_add(char *list, size_t len, const char *name)
{
	size_t	 n = strlen(list), k = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)) != NULL; p += k)
		if ((p == list || p[-1] == ',') && (p[k] == ',' || p[k] == '\0'))
			return;
	if (n + k + 2 > len)
		return;
	if (n > 0)
		list[n++] = ',';
	memcpy(list + n, name, k + 1);
}

/* 1 when name was not in list yet (it is now, room permitting) */
static int
name_fresh(char *list, size_t len, const char *name)
{
	size_t	 before = strlen(list);

	name_add(list, len, name);
	return strlen(list) != before;
}

/* The rule's secret that sets header name, if the gate holds it. */
static int
sets_header(const struct policy_rule *rule, const struct gate_secrets *ss,
    const char *buf, struct gate_http_span name)
{
	struct policy_secret_info	 s;
	size_t				 i;

	for (i = 0; i < policy_rule_secret_count(rule); i++) {
		policy_rule_secret(rule, i, &s);
		if (s.header != NULL && gate_http_span_eq(buf, name, s.header) &&
		    gate_secrets_find(ss, s.name) != NULL)
			return 1;
	}
	return 0;
}

/*
 * Whether name is a secret the rule sets in a header: its placeholder,
 * wherever the client wrote it, is harmless there (the field is set with
 * the value all the same), and not worth a line.
 */
static int
header_secret(const struct policy_rule *rule, const char *name)
{
	struct policy_secret_info	 s;
	size_t				 i;

	for (i = 0; i < policy_rule_secret_count(rule); i++) {
		policy_rule_secret(rule, i, &s);
		if (strcmp(s.name, name) == 0)
			return s.mode != POLICY_SECRET_QUERY;
	}
	return 0;
}

void
gate_inject_scan(const struct gate_secrets *ss, const char *p, size_t len,
    char *names, size_t nameslen)
{
	const struct gate_secret	*s;
	size_t				 i;

	for (i = 0; (s = gate_secrets_at(ss, i)) != NULL; i++)
		if (memmem(p, len, s->placeholder, s->plen) != NULL)
			name_add(names, nameslen, s->name);
}

/*
 * Placeholders in p[0..len), as they go upstream, named in info->foreign:
 * worth nothing where they are (another host's secret, or this one's
 * query secret outside its parameter), but for the rule's header secrets.
 */
static void
scan_foreign(const char *p, size_t len, const struct policy_rule *rule,
    const struct gate_secrets *ss, struct gate_inject_info *info)
{
	const struct gate_secret	*s;
	size_t				 k;

	for (k = 0; (s = gate_secrets_at(ss, k)) != NULL; k++)
		if (memmem(p, len, s->placeholder, s->plen) != NULL &&
		    !header_secret(rule, s->name))
			name_add(info->foreign, sizeof(info->foreign), s->name);
}

/*
 * The header fields of a head (the request line is the caller's), and
 * the credential of each "Authorization: Basic" decoded: the placeholders
 * they carry, named.  A client's Basic credential goes as it came: the
 * gate never writes a value into it (the client chose that place).
 */
static void
scan_fields(const struct gate_http_req *req, const char *head,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct gate_inject_info *info)
{
	unsigned char	 dec[BASIC_MAX];
	size_t		 i, ulen, slen;

	scan_foreign(head + req->hdr_start, req->pos - req->hdr_start, rule,
	    ss, info);
	for (i = 0; i < req->nhdrs; i++) {
		const struct gate_http_hdr *h = &req->hdrs[i];

		if (!gate_http_span_eq(head, h->name, "authorization") ||
		    h->value.len > BASIC_MAX ||
		    gate_auth_basic(head + h->value.off, h->value.len, dec,
		    sizeof(dec), &ulen, &slen) == -1)
			continue;
		scan_foreign((const char *)dec, ulen + 1 + slen, rule, ss, info);
		explicit_bzero(dec, sizeof(dec));
	}
}

/*
 * One query parameter p[0..len) ("name=value") to out: the value of the
 * rule's query secret for that name when the parameter's whole value is
 * that secret's placeholder, byte for byte; else as the client wrote it.
 */
static void
put_param(struct buf *out, const char *p, size_t len,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct gate_inject_info *info)
{
	struct policy_secret_info	 s;
	const struct gate_secret	*v;
	const char			*eq = memchr(p, '=', len);
	size_t				 i, nlen, vlen;

	if (eq != NULL) {
		nlen = (size_t)(eq - p);
		vlen = len - nlen - 1;
		for (i = 0; i < policy_rule_secret_count(rule); i++) {
			policy_rule_secret(rule, i, &s);
			if (s.mode != POLICY_SECRET_QUERY ||
			    strlen(s.query) != nlen ||
			    memcmp(p, s.query, nlen) != 0 ||
			    (v = gate_secrets_find(ss, s.name)) == NULL ||
			    v->plen != vlen ||
			    memcmp(eq + 1, v->placeholder, vlen) != 0)
				continue;
			buf_add(out, p, nlen + 1);
			buf_add(out, v->value, v->vlen);
			name_add(info->added, sizeof(info->added), s.name);
			return;
		}
	}
	buf_add(out, p, len);
}

/*
 * The target t[0..len) to out, its query's parameters (split on '&') by
 * put_param; the path, and every other byte, as the client wrote them.
 * What goes out is looked at for placeholders left in it.
 */
static void
put_target(struct buf *out, const char *t, size_t len,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct gate_inject_info *info)
{
	const char	*q = memchr(t, '?', len);
	size_t		 start = out->len, from, end;

	from = q != NULL ? (size_t)(q - t) + 1 : len;
	buf_add(out, t, from);
	while (from < len) {
		for (end = from; end < len && t[end] != '&'; end++)
			continue;
		put_param(out, t + from, end - from, rule, ss, info);
		if (end < len)
			buf_add(out, "&", 1);
		from = end + 1;
	}
	if (!out->failed)
		scan_foreign(out->p + start, out->len - start, rule, ss, info);
}

static void
put_base64(struct buf *out, const unsigned char *p, size_t len)
{
	unsigned char	 enc[4 * ((POLICY_MAX_BASIC_USER + 1 +
			    SECRETS_MAX_VALUE) / 3 + 2)];
	int		 n;

	if (len > POLICY_MAX_BASIC_USER + 1 + SECRETS_MAX_VALUE) {
		out->failed = 1;
		return;
	}
	n = EVP_EncodeBlock(enc, p, (int)len);
	buf_add(out, enc, (size_t)n);
	explicit_bzero(enc, sizeof(enc));
}

/* The field of a header-mode secret, with the value as the mode says. */
static void
put_secret_field(struct buf *out, const struct policy_secret_info *s,
    const struct gate_secret *v)
{
	struct buf	 cred;

	buf_printf(out, "%s: ", s->header);
	switch (s->mode) {
	case POLICY_SECRET_BEARER:
		buf_add(out, "Bearer ", 7);
		/* FALLTHROUGH */
	case POLICY_SECRET_HEADER:
		buf_add(out, v->value, v->vlen);
		break;
	case POLICY_SECRET_BASIC:
		buf_init(&cred, POLICY_MAX_BASIC_USER + 1 + SECRETS_MAX_VALUE,
		    BUF_SECRET);
		buf_printf(&cred, "%s:", s->user);
		buf_add(&cred, v->value, v->vlen);
		buf_add(out, "Basic ", 6);
		if (cred.failed)
			out->failed = 1;
		else
			put_base64(out, (const unsigned char *)cred.p,
			    cred.len);
		buf_free(&cred);
		break;
	case POLICY_SECRET_QUERY:
		break;
	}
	buf_add(out, "\r\n", 2);
}

int
gate_inject_head(const struct gate_http_req *req, const char *head,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct buf *out, struct gate_inject_info *info)
{
	struct policy_secret_info	 s;
	const struct gate_secret	*v;
	size_t				 i, fields = 0;

	memset(info, 0, sizeof(*info));
	if (policy_rule_secret_count(rule) == 0) {
		/* nothing to add: the head as the client wrote it */
		scan_foreign(head, req->hdr_start, rule, ss, info);
		scan_fields(req, head, rule, ss, info);
		buf_add(out, head, req->pos);
		return out->failed ? -1 : 0;
	}
	/* the request line: method, target (query secrets), version */
	buf_add(out, head + req->method.off, req->method.len);
	buf_add(out, " ", 1);
	put_target(out, head + req->target.off, req->target.len, rule, ss,
	    info);
	buf_printf(out, " HTTP/1.%d\r\n", req->minor);
	/* the fields: as they came, but those a header secret sets */
	scan_fields(req, head, rule, ss, info);
	for (i = 0; i < req->nhdrs; i++) {
		const struct gate_http_hdr *h = &req->hdrs[i];

		if (sets_header(rule, ss, head, h->name))
			continue;
		buf_add(out, head + h->name.off, h->name.len);
		buf_add(out, ": ", 2);
		buf_add(out, head + h->value.off, h->value.len);
		buf_add(out, "\r\n", 2);
		fields++;
	}
	for (i = 0; i < policy_rule_secret_count(rule); i++) {
		policy_rule_secret(rule, i, &s);
		if ((v = gate_secrets_find(ss, s.name)) == NULL) {
			name_add(info->missing, sizeof(info->missing), s.name);
			continue;
		}
		if (s.mode == POLICY_SECRET_QUERY)
			continue;
		put_secret_field(out, &s, v);
		name_add(info->added, sizeof(info->added), s.name);
		fields++;
	}
	buf_add(out, "\r\n", 2);
	/* no more fields than the gate's own parser takes (an upstream's
	 * may take fewer): the client's 100 and a secret are 101 */
	if (fields > GATE_HTTP_MAX_HEADERS)
		return -1;
	return out->failed ? -1 : 0;
}

/* the names of one policy's inspecting rules' secrets not in ss, said */
static void
missing_in(const struct policy *p, const struct gate_secrets *ss,
    const char *when, char *said, size_t saidlen)
{
	const struct policy_rule	*r;
	struct policy_secret_info	 si;
	char				 rule[256];
	size_t				 i, k;

	for (i = 0; i < policy_rule_count(p); i++) {
		r = policy_rule_at(p, i);
		for (k = 0; policy_rule_inspect(r) &&
		    k < policy_rule_secret_count(r); k++) {
			policy_rule_secret(r, k, &si);
			if (gate_secrets_find(ss, si.name) != NULL ||
			    !name_fresh(said, saidlen, si.name))
				continue;
			log_warnx("%s: secret %s (rule %s) was not given to the "
			    "gate (--secrets-fd): its requests go out without "
			    "it", when, si.name, policy_rule_describe(r, rule,
			    sizeof(rule)));
		}
	}
}

void
gate_inject_missing(const struct gate *g, const struct gate_secrets *ss,
    const char *when)
{
	char	 said[INJECT_NAMES_MAX] = "";
	size_t	 i;

	/* every worker reloads the same files: worker 0 speaks for them */
	if (g->worker != 0)
		return;
	missing_in(g->policy, ss, when, said, sizeof(said));
	for (i = 0; g->users != NULL && i < gate_users_count(g->users); i++)
		if (gate_users_policy(g->users, i) != NULL)
			missing_in(gate_users_policy(g->users, i), ss, when,
			    said, sizeof(said));
}

