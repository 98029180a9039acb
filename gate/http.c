/*
 * Request head parsing for aisb-gate.  See http.h for the contract and the
 * bounds.  Strict on purpose: the gate forwards only what it understood, so
 * anything two HTTP implementations could read differently (obs-fold, bare
 * LF, CL+TE, TE in HTTP/1.0, duplicate lengths) is refused rather than
 * normalised.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "gate/http.h"

enum {
	CH_SIZE = 0, CH_SIZE_WS, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
	CH_TRAILER_START, CH_TRAILER, CH_TRAILER_LF, CH_END_LF, CH_DONE,
};

void
gate_http_req_init(struct gate_http_req *req)
{
	memset(req, 0, sizeof(*req));
	req->content_length = -1;
	req->host = -1;
	req->proxy_auth = -1;
}

void
gate_http_resp_init(struct gate_http_req *req)
{
	gate_http_req_init(req);
	req->response = 1;
}

static int
fail(struct gate_http_req *req, int status, const char *error)
{
	req->status = status;
	req->error = error;
	return -1;
}

/* RFC 9110 tchar */
static int
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar / SP / HTAB, obs-text allowed */
static int
is_value_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

int
gate_http_span_eq(const char *buf, struct gate_http_span s, const char *word)
{
	size_t	 n = strlen(word);

	return s.len == n && strncasecmp(buf + s.off, word, n) == 0;
}

int
gate_http_span_is(const char *buf, struct gate_http_span s, const char *word)
{
	size_t	 n = strlen(word);

	return s.len == n && memcmp(buf + s.off, word, n) == 0;
}

/*
 * Registered methods are upper-case letters and '-' (the IANA registry);
 * anything else is a spelling an upstream may read differently.
 */
static int
is_method(const char *m, size_t len)
{
	size_t	 i;

	if (len > GATE_HTTP_MAX_METHOD)
		return 0;
	for (i = 0; i < len; i++)
		if ((m[i] < 'A' || m[i] > 'Z') && m[i] != '-')
			return 0;
	return 1;
}

static int
parse_request_line(struct gate_http_req *req, const char *buf, size_t start,
    size_t end)
{
	size_t	 i = start, v;

	while (i < end && is_tchar((unsigned char)buf[i]))
		i++;
	if (i == start || i == end || buf[i] != ' ')
		return fail(req, 400, "malformed method");
	req->method.off = start;
	req->method.len = i - start;
	req->have_line = 1;
	if (!is_method(buf + start, i - start))
		return fail(req, 400, "unknown method");

	v = ++i;
	while (i < end && (unsigned char)buf[i] > 0x20 &&
	    (unsigned char)buf[i] < 0x7f)
		i++;
	if (i == v || i == end || buf[i] != ' ')
		return fail(req, 400, "malformed request target");
	req->target.off = v;
	req->target.len = i - v;

	i++;
	if (end - i != 8 || memcmp(buf + i, "HTTP/1.", 7) != 0 ||
	    (buf[i + 7] != '0' && buf[i + 7] != '1'))
		return fail(req, 400, "unsupported HTTP version");
	req->minor = buf[i + 7] - '0';
	return 0;
}

/* "HTTP/1.x NNN[ reason]": the reason is any field text, or nothing. */
static int
parse_status_line(struct gate_http_req *req, const char *buf, size_t start,
    size_t end)
{
	size_t	 i = start;

	if (end - start < 12 || memcmp(buf + i, "HTTP/1.", 7) != 0 ||
	    (buf[i + 7] != '0' && buf[i + 7] != '1') || buf[i + 8] != ' ')
		return fail(req, 400, "malformed status line");
	req->minor = buf[i + 7] - '0';
	req->have_line = 1;
	for (i += 9; i < start + 12; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return fail(req, 400, "malformed status code");
	req->code = (buf[start + 9] - '0') * 100 + (buf[start + 10] - '0') * 10 +
	    (buf[start + 11] - '0');
	if (req->code < 100)
		return fail(req, 400, "malformed status code");
	if (i < end && buf[i] != ' ')
		return fail(req, 400, "malformed status line");
	for (; i < end; i++)
		if (!is_value_char((unsigned char)buf[i]))
			return fail(req, 400, "control character in status line");
	return 0;
}

static int
parse_content_length(struct gate_http_req *req, const char *buf,
    struct gate_http_span v)
{
	int64_t	 n = 0;
	size_t	 i;

	if (req->content_length != -1)
		return fail(req, 400, "duplicate Content-Length");
	if (v.len == 0 || v.len > GATE_HTTP_MAX_CL_DIGITS)
		return fail(req, 400, "bad Content-Length");
	for (i = 0; i < v.len; i++) {
		char	 c = buf[v.off + i];

		if (c < '0' || c > '9')
			return fail(req, 400, "bad Content-Length");
		n = n * 10 + (c - '0');
	}
	/* as a chunk: an upstream keeping it in 32 bits must not misframe */
	if (n > (int64_t)GATE_HTTP_MAX_CHUNK && !req->response)
		return fail(req, 400, "Content-Length over 2^31 - 1");
	req->content_length = n;
	return 0;
}

static int
parse_header(struct gate_http_req *req, const char *buf, size_t start,
    size_t end)
{
	struct gate_http_hdr	*h;
	size_t			 i = start, ne, vs, ve;

	if (buf[start] == ' ' || buf[start] == '\t')
		return fail(req, 400, "obsolete line folding");
	while (i < end && is_tchar((unsigned char)buf[i]))
		i++;
	if (i == start || i == end || buf[i] != ':')
		return fail(req, 400, "malformed header field");
	if (req->nhdrs == GATE_HTTP_MAX_HEADERS)
		return fail(req, 431, "too many header fields");

	ne = i;
	vs = i + 1;
	while (vs < end && (buf[vs] == ' ' || buf[vs] == '\t'))
		vs++;
	ve = end;
	while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
		ve--;
	for (i = vs; i < ve; i++)
		if (!is_value_char((unsigned char)buf[i]))
			return fail(req, 400, "control character in field value");

	h = &req->hdrs[req->nhdrs];
	h->name.off = start;
	h->name.len = ne - start;
	h->value.off = vs;
	h->value.len = ve - vs;

	if (gate_http_span_eq(buf, h->name, "content-length")) {
		if (parse_content_length(req, buf, h->value) == -1)
			return -1;
	} else if (gate_http_span_eq(buf, h->name, "transfer-encoding")) {
		if (req->chunked)
			return fail(req, 400, "duplicate Transfer-Encoding");
		if (!gate_http_span_eq(buf, h->value, "chunked"))
			return fail(req, 400, "unsupported Transfer-Encoding");
		req->chunked = 1;
	} else if (gate_http_span_eq(buf, h->name, "host")) {
		if (req->host != -1)
			return fail(req, 400, "duplicate Host");
		req->host = (int)req->nhdrs;
	} else if (gate_http_span_eq(buf, h->name, "proxy-authorization")) {
		if (req->proxy_auth != -1)
			return fail(req, 400, "duplicate Proxy-Authorization");
		req->proxy_auth = (int)req->nhdrs;
	}
	req->nhdrs++;
	return 0;
}

/*
 * Find the end of the line starting at req->pos, checking every byte once.
 * Returns the offset of its LF, or -1 with req->status set, or -2 when the
 * line is not complete yet.
 */
static ssize_t
find_eol(struct gate_http_req *req, const char *buf, size_t len, size_t bound)
{
	size_t	 i = req->pos + req->scan;
	size_t	 lim = len < bound ? len : bound;

	for (; i < lim; i++) {
		unsigned char	 c = buf[i];

		if (c == '\0')
			return fail(req, 400, "NUL byte in request head");
		if (c == '\n')
			return fail(req, 400, "bare LF in request head");
		if (c != '\r')
			continue;
		if (i + 1 >= lim)
			break;		/* a CR as last byte: check it next time */
		if (buf[i + 1] != '\n')
			return fail(req, 400, "bare CR in request head");
		req->scan = 0;
		return (ssize_t)i + 1;
	}
	req->scan = i - req->pos;
	if (len >= bound) {
		if (!req->have_line)
			return fail(req, 414, "request line too long");
		return fail(req, 431, "header section too large");
	}
	return -2;
}

ssize_t
gate_http_parse(struct gate_http_req *req, const char *buf, size_t len)
{
	for (;;) {
		size_t	 bound, start = req->pos, end;
		ssize_t	 lf;

		if (!req->have_line)
			bound = GATE_HTTP_MAX_LINE;
		else
			bound = req->hdr_start + GATE_HTTP_MAX_HDR_BYTES;
		if ((lf = find_eol(req, buf, len, bound)) == -1)
			return -1;
		if (lf == -2)
			return 0;
		end = (size_t)lf - 1;	/* the CR */
		req->pos = (size_t)lf + 1;

		if (!req->have_line) {
			if (end == start)
				return fail(req, 400, "empty request line");
			if ((req->response ? parse_status_line(req, buf, start,
			    end) : parse_request_line(req, buf, start, end)) == -1)
				return -1;
			req->have_line = 1;
			req->hdr_start = req->pos;
			continue;
		}
		if (end == start)
			break;
		if (parse_header(req, buf, start, end) == -1)
			return -1;
	}
	if (req->chunked && req->content_length != -1)
		return fail(req, 400,
		    "both Content-Length and Transfer-Encoding");
	/*
	 * HTTP/1.0 has no chunked coding (RFC 9112 6.1: its framing is
	 * faulty): a 1.0 peer behind the gate would read the chunks as the
	 * body's bytes and the rest as another message.
	 */
	if (req->chunked && req->minor == 0)
		return fail(req, 400, "Transfer-Encoding in an HTTP/1.0 message");
	return (ssize_t)req->pos;
}

int
gate_http_split_url(const char *t, size_t len, struct gate_http_span *auth,
    struct gate_http_span *path)
{
	size_t	 i;

	if (len < 7 || strncasecmp(t, "http://", 7) != 0)
		return -1;
	for (i = 7; i < len && t[i] != '/' && t[i] != '?'; i++)
		if (t[i] == '@' || t[i] == '#')
			return -1;
	if (i == 7)
		return -1;
	auth->off = 7;
	auth->len = i - 7;
	path->off = i;
	path->len = len - i;
	if (memchr(t + i, '#', len - i) != NULL)
		return -1;
	return 0;
}

/* Is the n bytes at s one of the tokens of any Connection field? */
static int
named_by_connection(const struct gate_http_req *req, const char *buf,
    const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < req->nhdrs; i++) {
		struct gate_http_span	 v = req->hdrs[i].value, tok;
		size_t			 p, e = v.off + v.len;

		if (!gate_http_span_eq(buf, req->hdrs[i].name, "connection"))
			continue;
		for (p = v.off; p < e;) {
			while (p < e && (buf[p] == ',' || buf[p] == ' ' ||
			    buf[p] == '\t'))
				p++;
			tok.off = p;
			while (p < e && buf[p] != ',' && buf[p] != ' ' &&
			    buf[p] != '\t')
				p++;
			tok.len = p - tok.off;
			if (tok.len == n && strncasecmp(buf + tok.off, s,
			    n) == 0)
				return 1;
		}
	}
	return 0;
}

static int
hop_by_hop(const struct gate_http_req *req, const char *buf,
    struct gate_http_span name)
{
	static const char *const hop[] = {
		"connection", "keep-alive", "proxy-connection",
		"proxy-authorization", "proxy-authenticate", "te", "trailer",
		"upgrade",
	};
	size_t	 i;

	for (i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (gate_http_span_eq(buf, name, hop[i]))
			return 1;
	return named_by_connection(req, buf, buf + name.off, name.len);
}

int
gate_http_conn_has(const struct gate_http_req *req, const char *buf,
    const char *token)
{
	return named_by_connection(req, buf, token, strlen(token));
}

int
gate_http_field(const struct gate_http_req *req, const char *buf,
    const char *name)
{
	size_t	 i;

	for (i = 0; i < req->nhdrs; i++)
		if (gate_http_span_eq(buf, req->hdrs[i].name, name))
			return (int)i;
	return -1;
}

static int
put(char *out, size_t outlen, size_t *n, const char *s, size_t len)
{
	if (len > outlen - *n)
		return -1;
	memcpy(out + *n, s, len);
	*n += len;
	return 0;
}

#define PUTS(s)		put(out, outlen, &n, (s), strlen(s))
#define PUTSPAN(sp)	put(out, outlen, &n, buf + (sp).off, (sp).len)

ssize_t
gate_http_forward_head(const struct gate_http_req *req, const char *buf,
    struct gate_http_span path, const char *hostport, char *out,
    size_t outlen)
{
	size_t	 n = 0, i;

	if (PUTSPAN(req->method) == -1 || PUTS(" ") == -1)
		return -1;
	if ((path.len == 0 || buf[path.off] == '?') && PUTS("/") == -1)
		return -1;
	if (PUTSPAN(path) == -1 || PUTS(" HTTP/1.1\r\n") == -1)
		return -1;
	if (req->host == -1 && (PUTS("Host: ") == -1 || PUTS(hostport) == -1 ||
	    PUTS("\r\n") == -1))
		return -1;
	for (i = 0; i < req->nhdrs; i++) {
		const struct gate_http_hdr	*h = &req->hdrs[i];

		if (hop_by_hop(req, buf, h->name))
			continue;
		if (PUTSPAN(h->name) == -1 || PUTS(": ") == -1 ||
		    PUTSPAN(h->value) == -1 || PUTS("\r\n") == -1)
			return -1;
	}
	if (PUTS("Connection: close\r\n\r\n") == -1)
		return -1;
	return (ssize_t)n;
}

void
gate_http_chunk_init(struct gate_http_chunk *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CH_SIZE;
}

ssize_t
gate_http_chunk_scan(struct gate_http_chunk *c, const char *buf, size_t len,
    int *done)
{
	size_t	 i = 0;

	*done = c->state == CH_DONE;
	while (i < len && c->state != CH_DONE) {
		unsigned char	 ch = buf[i];
		int		 h;

		switch (c->state) {
		case CH_SIZE:
			if ((h = hex_digit(ch)) != -1) {
				if (++c->digits > 15)
					return -1;	/* < 2^60 */
				c->remaining = c->remaining * 16 + (uint64_t)h;
				if (c->remaining > GATE_HTTP_MAX_CHUNK)
					return -1;
			} else if (c->digits == 0) {
				return -1;
			} else if (ch == ';') {
				c->state = CH_EXT;
			} else if (ch == ' ' || ch == '\t') {
				c->state = CH_SIZE_WS;
			} else if (ch == '\r') {
				c->state = CH_SIZE_LF;
			} else
				return -1;
			if (++c->linelen > GATE_HTTP_MAX_CHUNK_LINE)
				return -1;
			i++;
			break;
		case CH_SIZE_WS:
			/*
			 * After the size only whitespace, then ';' (BWS before
			 * an extension, RFC 9112 7.1.1) or the line's end:
			 * "5 6" is no size of ours, and an upstream that read
			 * it as 0x56 would take the rest of this body for
			 * another request.
			 */
			if (ch == ';')
				c->state = CH_EXT;
			else if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (ch != ' ' && ch != '\t')
				return -1;
			if (++c->linelen > GATE_HTTP_MAX_CHUNK_LINE)
				return -1;
			i++;
			break;
		case CH_EXT:
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (!is_value_char(ch))
				return -1;
			if (++c->linelen > GATE_HTTP_MAX_CHUNK_LINE)
				return -1;
			i++;
			break;
		case CH_SIZE_LF:
			if (ch != '\n')
				return -1;
			c->state = c->remaining ? CH_DATA : CH_TRAILER_START;
			c->linelen = 0;
			c->digits = 0;
			i++;
			break;
		case CH_DATA: {
			size_t	 take = len - i;

			if (take > c->remaining)
				take = (size_t)c->remaining;
			c->remaining -= take;
			i += take;
			if (c->remaining == 0)
				c->state = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
			if (ch != '\r')
				return -1;
			c->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_SIZE;
			i++;
			break;
		case CH_TRAILER_START:
			c->state = ch == '\r' ? CH_END_LF : CH_TRAILER;
			if (c->state == CH_TRAILER && !is_value_char(ch))
				return -1;
			if (++c->trailer > GATE_HTTP_MAX_TRAILER)
				return -1;
			i++;
			break;
		case CH_TRAILER:
			if (ch == '\r')
				c->state = CH_TRAILER_LF;
			else if (!is_value_char(ch))
				return -1;
			if (++c->trailer > GATE_HTTP_MAX_TRAILER)
				return -1;
			i++;
			break;
		case CH_TRAILER_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_TRAILER_START;
			i++;
			break;
		case CH_END_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_DONE;
			i++;
			break;
		}
	}
	*done = c->state == CH_DONE;
	return (ssize_t)i;
}

const int gate_http_statuses[] = {
	400, 403, 407, 408, 414, 431, 502, 503, 504, 0
};

const char *
gate_http_status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default:  return "Error";
	}
}

ssize_t
gate_http_reply(char *out, size_t outlen, int status, const char *decision,
    const char *body)
{
	int	 n;

	n = snprintf(out, outlen, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=us-ascii\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s%s%s%s\r\n%s",
	    status, gate_http_status_text(status), strlen(body),
	    status == 407 ? "Proxy-Authenticate: Basic realm=\"aisb\"\r\n" : "",
	    decision[0] ? "X-Aisb-Decision: " : "", decision,
	    decision[0] ? "\r\n" : "", body);
	if (n < 0 || (size_t)n >= outlen)
		return -1;
	return n;
}

const struct gate_http_canned gate_http_canned[] = {
	{ 503, "limit_total", "aisb-gate: over limit\n" },
	{ 503, "limit_client", "aisb-gate: over limit\n" },
	{ 503, "audit_unavailable",
	    "aisb-gate: the audit log cannot be written; try again later\n" },
};

const size_t gate_http_ncanned = sizeof(gate_http_canned) /
    sizeof(gate_http_canned[0]);

const struct gate_http_canned *
gate_http_canned_find(const char *reason)
{
	size_t	 i;

	for (i = 0; i < gate_http_ncanned; i++)
		if (strcmp(gate_http_canned[i].reason, reason) == 0)
			return &gate_http_canned[i];
	return NULL;
}
