/*
 * The gate's HTTP/1.x request head parser.  Pure: no I/O, no allocation.
 *
 * Restartable: the caller keeps every byte received so far in one buffer
 * (which may move between calls) and calls gate_http_parse() again with the
 * longer buffer; parsing resumes at the first incomplete line.  Positions
 * are stored as offsets, never pointers.
 *
 * Bounds (RFC 9112 leaves them to us):
 *   request line, CRLF included		GATE_HTTP_MAX_LINE	-> 414
 *   header section, final CRLF included	GATE_HTTP_MAX_HDR_BYTES	-> 431
 *   header fields				GATE_HTTP_MAX_HEADERS	-> 431
 * Rejected with 400: obs-fold, a bare CR or LF, NUL or another control
 * byte, whitespace before a colon, a field name that is not a token, both
 * Content-Length and Transfer-Encoding, a duplicate or non-numeric
 * Content-Length, a Transfer-Encoding other than "chunked" or in an
 * HTTP/1.0 message (RFC 9112 6.1), a version other than HTTP/1.0 or
 * HTTP/1.1, more than one Host, a Content-Length of 2^31 or more
 * (GATE_HTTP_MAX_CHUNK, for the reason given there), a method that is not
 * upper case (methods are case-sensitive, RFC 9110 section 9.1: "connect"
 * is not CONNECT, and an upstream that folds case must not read one as
 * the other) or longer than GATE_HTTP_MAX_METHOD.
 */
#ifndef AISB_GATE_HTTP_H
#define AISB_GATE_HTTP_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define GATE_HTTP_MAX_LINE	8192
#define GATE_HTTP_MAX_HDR_BYTES	32768
#define GATE_HTTP_MAX_HEADERS	100
#define GATE_HTTP_MAX_HEAD	(GATE_HTTP_MAX_LINE + GATE_HTTP_MAX_HDR_BYTES)
#define GATE_HTTP_MAX_CL_DIGITS	18	/* Content-Length below 10^18 */
#define GATE_HTTP_MAX_METHOD	20	/* "UPDATEREDIRECTREF" is 17 */

struct gate_http_span {
	uint32_t	 off;
	uint32_t	 len;
};

struct gate_http_hdr {
	struct gate_http_span	 name;
	struct gate_http_span	 value;		/* OWS trimmed */
};

struct gate_http_req {
	int			 response;	/* a status line, not a request line
						   (gate_http_resp_init) */
	/* parser state */
	size_t			 pos;		/* start of the next unparsed line */
	size_t			 scan;		/* bytes of that line already checked */
	size_t			 hdr_start;	/* offset of the first header line */
	int			 have_line;	/* the request line is parsed */

	/* results, valid once gate_http_parse() returned > 0 */
	struct gate_http_span	 method;
	struct gate_http_span	 target;
	int			 minor;		/* HTTP/1.<minor> */
	size_t			 nhdrs;
	struct gate_http_hdr	 hdrs[GATE_HTTP_MAX_HEADERS];
	int64_t			 content_length;	/* -1: absent */
	int			 chunked;
	int			 host;		/* index in hdrs, -1: absent */
	int			 proxy_auth;	/* index in hdrs, -1: absent */
	int			 code;		/* a response's status code */

	/* on error */
	int			 status;	/* 400, 414 or 431 */
	const char		*error;		/* static text */
};

void	 gate_http_req_init(struct gate_http_req *);
/*
 * The same parser for a response head (an inspected connection's
 * upstream, inspect.c): a status line "HTTP/1.x NNN[ reason]" instead of
 * the request line (its bound and errors are the request line's), then
 * the fields as for a request, but a Content-Length up to 18 digits (the
 * 2^31 bound protects upstreams that read requests; a response goes to
 * the client).  code holds the status; method and target stay empty.
 */
void	 gate_http_resp_init(struct gate_http_req *);

/*
 * Parse buf[0..len), which holds the request from its first byte.
 * Returns -1 on error (req->status, req->error set), 0 when more bytes are
 * needed, or the length of the head (through the empty line) when complete.
 */
ssize_t	 gate_http_parse(struct gate_http_req *, const char *buf, size_t len);

/* Case-insensitive comparison of a span of buf with a NUL-terminated word. */
int	 gate_http_span_eq(const char *buf, struct gate_http_span, const char *);
/* Case-sensitive: for methods. */
int	 gate_http_span_is(const char *buf, struct gate_http_span, const char *);
/* Whether a Connection field of the head lists token (case-insensitive). */
int	 gate_http_conn_has(const struct gate_http_req *, const char *buf,
	    const char *token);
/* The index of the first field called name (case-insensitive), or -1. */
int	 gate_http_field(const struct gate_http_req *, const char *buf,
	    const char *name);

/*
 * Split an absolute-form target "http://authority[/path][?query]".
 * Only the http scheme is accepted; userinfo is refused.  On success the
 * spans are relative to t and path may be empty (meaning "/").
 * Returns 0 or -1.
 */
int	 gate_http_split_url(const char *t, size_t len,
	    struct gate_http_span *authority, struct gate_http_span *path);

/*
 * Write the head to send upstream for a forwarded request into out
 * (at most outlen bytes): origin-form request line, the client's fields less
 * the hop-by-hop ones (Connection, those it names, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Trailer,
 * Upgrade), a Host field if the client sent none, and "Connection: close".
 * Returns the length written, or -1 if it does not fit.
 */
ssize_t	 gate_http_forward_head(const struct gate_http_req *, const char *buf,
	    struct gate_http_span path, const char *hostport, char *out,
	    size_t outlen);

/*
 * Chunked transfer coding framing, tracked so that exactly one request body
 * is forwarded (nothing smuggled behind it).  A chunk-size line is hex
 * digits, whitespace, then ';' and extensions or its CRLF ("5 6" is
 * refused: an upstream might read 0x56).  Bounds: a chunk-size line
 * (with extensions) of GATE_HTTP_MAX_CHUNK_LINE bytes, a chunk of
 * GATE_HTTP_MAX_CHUNK bytes (2^31 and over are refused: an upstream that
 * keeps the size in 32 bits would read a second request in the body), a
 * trailer section of GATE_HTTP_MAX_TRAILER bytes.
 */
#define GATE_HTTP_MAX_CHUNK_LINE	1024
#define GATE_HTTP_MAX_CHUNK		0x7fffffffu
#define GATE_HTTP_MAX_TRAILER		8192

struct gate_http_chunk {
	int		 state;
	uint64_t	 remaining;	/* bytes left in the current chunk */
	size_t		 linelen;	/* bytes of the current size or trailer line */
	size_t		 trailer;	/* bytes of trailers so far */
	int		 digits;
};

void	 gate_http_chunk_init(struct gate_http_chunk *);
/*
 * Scan buf[0..len), the next bytes of a chunked body.  Returns how many of
 * them belong to the body (all of them until the end is seen), with *done
 * set once the body ended; or -1 on malformed framing.
 */
ssize_t	 gate_http_chunk_scan(struct gate_http_chunk *, const char *buf,
	    size_t len, int *done);

/*
 * The gate's own answers.  Every one goes through gate_http_reply(), which
 * counts the Content-Length itself: a hand-counted length (the over-limit
 * 503 said 23 for 22 bytes) leaves a client waiting for a byte that never
 * comes.  decision is the X-Aisb-Decision value ("" for none).  Returns the
 * length written into out (NUL-terminated), or -1 when it does not fit.
 */
#define GATE_HTTP_REPLY_MAX	6144	/* a refusal's header and body fit */

ssize_t	 gate_http_reply(char *out, size_t outlen, int status,
	    const char *decision, const char *body);
const char *gate_http_status_text(int status);

/* The answers whose body is fixed, for the accept path and the tests. */
struct gate_http_canned {
	int		 status;
	const char	*reason;	/* the X-Aisb-Decision reason token */
	const char	*body;
};
extern const struct gate_http_canned	 gate_http_canned[];
extern const size_t			 gate_http_ncanned;
/* The canned answer for reason, or NULL. */
const struct gate_http_canned *gate_http_canned_find(const char *reason);
/* Every status the gate answers with, 0-terminated. */
extern const int			 gate_http_statuses[];

#endif /* AISB_GATE_HTTP_H */
