/*
 * The sticky-error string builder (buf.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void
buf_init(struct buf *b, size_t max, int flags)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
	b->flags = flags;
}

void
buf_fixed(struct buf *b, char *mem, size_t size)
{
	memset(b, 0, sizeof(*b));
	b->p = mem;
	b->cap = size;
	b->max = size > 0 ? size - 1 : 0;
	b->fixed = 1;
	if (size > 0)
		mem[0] = '\0';
	else
		b->failed = 1;
}

/* Room for n more bytes and the NUL; 0, or -1 with failed set. */
static int
reserve(struct buf *b, size_t n)
{
	char	*np;
	size_t	 ncap;

	if (b->failed)
		return -1;
	if (n > b->max - b->len) {
		b->failed = 1;
		return -1;
	}
	if (b->len + n + 1 <= b->cap)
		return 0;
	if (b->fixed) {
		b->failed = 1;
		return -1;
	}
	ncap = (b->len + n + 1) * 2;
	if ((np = malloc(ncap)) == NULL) {
		b->failed = 1;
		return -1;
	}
	/* copied by hand so that no secret is left in a freed block */
	if (b->p != NULL) {
		memcpy(np, b->p, b->len + 1);
		if (b->flags & BUF_SECRET)
			explicit_bzero(b->p, b->cap);
		free(b->p);
	}
	b->p = np;
	b->cap = ncap;
	return 0;
}

void
buf_add(struct buf *b, const void *s, size_t n)
{
	if (reserve(b, n) == -1)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	size_t	room = 0;
	int	n;

	if (b->failed)
		return;
	/*
	 * Straight into the room there is, and formatted a second time only
	 * when it did not fit: the audit line of every connection is built
	 * here, and measuring first doubled its cost.
	 */
	if (b->p != NULL) {
		room = b->cap - b->len;
		if (room > b->max - b->len + 1)
			room = b->max - b->len + 1;
	}
	va_start(ap, fmt);
	n = vsnprintf(room > 0 ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		if (room > 0)
			b->p[b->len] = '\0';
		return;
	}
	if ((size_t)n < room) {
		b->len += (size_t)n;
		return;
	}
	if (room > 0)
		b->p[b->len] = '\0';	/* what did fit is not kept */
	if (reserve(b, (size_t)n) == -1)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_free(struct buf *b)
{
	if (b->fixed || b->p == NULL)
		return;
	if (b->flags & BUF_SECRET)
		explicit_bzero(b->p, b->cap);
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
