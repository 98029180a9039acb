/*
 * Secrets into an allowed request's head (inject.h).  The decision is
 * made before this runs (inspect_http.c): a refused request never gets
 * here, so a secret goes only into requests the policy allowed, on the
 * connection its rule allowed, and the head it writes is sent only to
 * that connection's upstream.
 *
 * Header modes drop every field of their name the client sent (a
 * sandbox cannot smuggle a second credential past the one set) and set
 * the field once.  The replace mode changes only the bytes of the
 * placeholder, so the client decides where the secret goes inside the
 * request (a query parameter, a header of its choosing), and the rule
 * decides where the request goes.
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

/* 0: name is not one of the rule's secrets; 1: it is, to be replaced;
 * 2: it is, set as a header. */
static int
replaces(const struct policy_rule *rule, const char *name)
{
	struct policy_secret_info	 s;
	size_t				 i;

	for (i = 0; i < policy_rule_secret_count(rule); i++) {
		policy_rule_secret(rule, i, &s);
		if (strcmp(s.name, name) == 0)
			return s.mode == POLICY_SECRET_REPLACE ? 1 : 2;
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
 * Placeholders in p[0..len) of secrets that are not the rule's, named in
 * info->foreign (the rule's own header-mode secrets are not: their
 * placeholder is harmless where it is, and the header is set anyway).
 */
static void
scan_foreign(const char *p, size_t len, const struct policy_rule *rule,
    const struct gate_secrets *ss, struct gate_inject_info *info)
{
	const struct gate_secret	*s;
	size_t				 k;

	for (k = 0; (s = gate_secrets_at(ss, k)) != NULL; k++)
		if (memmem(p, len, s->placeholder, s->plen) != NULL &&
		    replaces(rule, s->name) == 0)
			name_add(info->foreign, sizeof(info->foreign), s->name);
}

/*
 * p[0..len) to out, each placeholder of the rule's replace-mode secrets
 * replaced by its value; the others are left (scan_foreign).  Returns
 * how many were replaced.
 */
static size_t
put_replaced(struct buf *out, const char *p, size_t len,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct gate_inject_info *info)
{
	const struct gate_secret	*s;
	size_t				 i, k, from = 0, n = 0;

	scan_foreign(p, len, rule, ss, info);
	for (i = 0; i < len; i++) {
		for (k = 0; (s = gate_secrets_at(ss, k)) != NULL; k++) {
			if (s->plen > len - i ||
			    memcmp(p + i, s->placeholder, s->plen) != 0 ||
			    replaces(rule, s->name) != 1)
				continue;
			buf_add(out, p + from, i - from);
			buf_add(out, s->value, s->vlen);
			name_add(info->added, sizeof(info->added), s->name);
			i += s->plen - 1;
			from = i + 1;
			n++;
			break;
		}
	}
	buf_add(out, p + from, len - from);
	return n;
}

/* The placeholders a head carries that are not the rule's: named. */
static void
scan_head(const struct gate_http_req *req, const char *head,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct gate_inject_info *info)
{
	unsigned char	 dec[BASIC_MAX];
	size_t		 i, ulen, slen;

	scan_foreign(head, req->pos, rule, ss, info);
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

static void
put_base64(struct buf *out, const unsigned char *p, size_t len)
{
	unsigned char	 enc[4 * ((BASIC_MAX + SECRETS_MAX_VALUE) / 3 + 2)];
	int		 n;

	if (len > BASIC_MAX + SECRETS_MAX_VALUE) {
		out->failed = 1;
		return;
	}
	n = EVP_EncodeBlock(enc, p, (int)len);
	buf_add(out, enc, (size_t)n);
	explicit_bzero(enc, sizeof(enc));
}

/*
 * An "Authorization: Basic" value: the credential decoded, the rule's
 * placeholders replaced inside it, encoded again.  Returns 0 when it was
 * not such a value (the caller writes it as any other).
 */
static int
put_basic(struct buf *out, const char *v, size_t len,
    const struct policy_rule *rule, const struct gate_secrets *ss,
    struct gate_inject_info *info)
{
	unsigned char	 dec[BASIC_MAX];
	struct buf	 cred;
	size_t		 ulen, slen, n;

	if (len > BASIC_MAX ||
	    gate_auth_basic(v, len, dec, sizeof(dec), &ulen, &slen) == -1)
		return 0;
	buf_init(&cred, BASIC_MAX + SECRETS_MAX * SECRETS_MAX_VALUE,
	    BUF_SECRET);
	n = put_replaced(&cred, (const char *)dec, ulen + 1 + slen, rule, ss,
	    info);
	explicit_bzero(dec, sizeof(dec));
	if (cred.failed) {
		out->failed = 1;
		buf_free(&cred);
		return 1;
	}
	if (n == 0) {	/* written as it came */
		buf_free(&cred);
		return 0;
	}
	buf_add(out, "Basic ", 6);
	put_base64(out, (const unsigned char *)cred.p, cred.len);
	buf_free(&cred);
	return 1;
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
	case POLICY_SECRET_REPLACE:
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
	size_t				 i;

	memset(info, 0, sizeof(*info));
	if (policy_rule_secret_count(rule) == 0) {
		/* nothing to add: the head as the client wrote it */
		scan_head(req, head, rule, ss, info);
		buf_add(out, head, req->pos);
		return out->failed ? -1 : 0;
	}
	/* the request line: method, target (placeholders replaced), version */
	buf_add(out, head + req->method.off, req->method.len);
	buf_add(out, " ", 1);
	(void)put_replaced(out, head + req->target.off, req->target.len, rule,
	    ss, info);
	buf_printf(out, " HTTP/1.%d\r\n", req->minor);
	for (i = 0; i < req->nhdrs; i++) {
		const struct gate_http_hdr *h = &req->hdrs[i];

		if (sets_header(rule, ss, head, h->name)) {
			/* dropped, but what it held is looked at */
			scan_foreign(head + h->value.off, h->value.len, rule,
			    ss, info);
			continue;
		}
		buf_add(out, head + h->name.off, h->name.len);
		buf_add(out, ": ", 2);
		if (!gate_http_span_eq(head, h->name, "authorization") ||
		    !put_basic(out, head + h->value.off, h->value.len, rule,
		    ss, info))
			(void)put_replaced(out, head + h->value.off,
			    h->value.len, rule, ss, info);
		buf_add(out, "\r\n", 2);
	}
	for (i = 0; i < policy_rule_secret_count(rule); i++) {
		policy_rule_secret(rule, i, &s);
		if ((v = gate_secrets_find(ss, s.name)) == NULL) {
			name_add(info->missing, sizeof(info->missing), s.name);
			continue;
		}
		if (s.mode == POLICY_SECRET_REPLACE)
			continue;
		put_secret_field(out, &s, v);
		name_add(info->added, sizeof(info->added), s.name);
	}
	buf_add(out, "\r\n", 2);
	return out->failed ? -1 : 0;
}
