/*
 * libFuzzer: aisb-gate's request head parser and chunked framing.
 * Invariants: the parser gives the same answer fed whole or in two pieces
 * (it is restartable); a parsed head lies inside the input; the forwarded
 * head fits its bound; chunked scanning never claims more than it was given;
 * a TLS server name found is a lower-case name within its bound; the
 * input up to its first NUL, written as an audit line's JSON string, is
 * pure ASCII and reads back (JSON_BYTES) as exactly those bytes.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "http.h"
#include "json.h"
#include "tls.h"

#define JSON_IN_MAX	512	/* bytes of input written as a string */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gate_http_req	 a, b;
	struct gate_http_span	 auth, path;
	struct gate_http_chunk	 ch;
	const char		*buf = (const char *)data;
	char			*out;
	size_t			 split, i, cap;
	ssize_t			 ra, rb, n;
	int			 done;

	if (size == 0)
		return 0;
	{
		/* 6 bytes of escape at most per byte, and the quotes */
		char	 s[JSON_IN_MAX + 1], j[6 * JSON_IN_MAX + 3];
		char	 back[JSON_IN_MAX + 1];
		size_t	 sl = strnlen(buf, size < JSON_IN_MAX ? size :
		    JSON_IN_MAX), jl, k;

		memcpy(s, buf, sl);
		s[sl] = '\0';
		jl = gate_json_str(j, sizeof(j), s);
		for (k = 0; k < jl; k++)
			if (j[k] < 0x20 || j[k] >= 0x7f)
				abort();
		if (json_string(j, jl, back, sizeof(back), &k, JSON_BYTES,
		    NULL, 0) != (ssize_t)jl || k != sl ||
		    memcmp(back, s, sl) != 0)
			abort();
	}
	{
		char	 name[254];
		int	 t = gate_tls_sni(data, size, name, sizeof(name));

		if (t < GATE_TLS_BAD || t > GATE_TLS_NOT_TLS)
			abort();
		if (t == GATE_TLS_NAME) {
			size_t	 k, nl = strnlen(name, sizeof(name));

			if (nl == 0 || nl == sizeof(name))
				abort();
			for (k = 0; k < nl; k++)
				if (name[k] >= 'A' && name[k] <= 'Z')
					abort();
		}
	}
	split = data[0] % size;
	gate_http_req_init(&a);
	ra = gate_http_parse(&a, buf, size);
	gate_http_req_init(&b);
	rb = gate_http_parse(&b, buf, split);
	if (rb == 0)
		rb = gate_http_parse(&b, buf, size);
	if (ra != rb || (ra == -1 && (a.status != b.status ||
	    strcmp(a.error, b.error) != 0)))
		abort();
	if (ra == -1 && a.status != 400 && a.status != 414 && a.status != 431)
		abort();
	if (ra <= 0)
		return 0;
	if ((size_t)ra > size || a.nhdrs > GATE_HTTP_MAX_HEADERS ||
	    a.target.off + a.target.len > (size_t)ra)
		abort();
	for (i = 0; i < a.nhdrs; i++)
		if (a.hdrs[i].value.off + a.hdrs[i].value.len > (size_t)ra)
			abort();

	if (gate_http_split_url(buf + a.target.off, a.target.len, &auth,
	    &path) == 0) {
		path.off += a.target.off;
		cap = (size_t)ra + a.nhdrs + 4 + 64;	/* as conn.c */
		if ((out = malloc(cap)) == NULL)
			return 0;
		n = gate_http_forward_head(&a, buf, path, "h:1", out, cap);
		if (n == -1 || (size_t)n > cap)
			abort();
		free(out);
	}

	gate_http_chunk_init(&ch);
	for (i = (size_t)ra; i < size;) {
		n = gate_http_chunk_scan(&ch, buf + i, size - i, &done);
		if (n == -1 || done)
			break;
		if (n == 0 || (size_t)n > size - i)
			abort();
		i += (size_t)n;
	}
	return 0;
}
