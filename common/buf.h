/*
 * A string built piece by piece with a sticky error: once an append fails
 * (memory, or the bound) the rest do nothing, and the caller checks
 * failed once at the end instead of after every piece.
 */
#ifndef AISB_BUF_H
#define AISB_BUF_H

#include <stddef.h>

#define BUF_SECRET	0x01	/* wipe every block before it is freed */

struct buf {
	char	*p;		/* NUL-terminated; NULL until the first add */
	size_t	 len;		/* bytes before the NUL */
	size_t	 cap;		/* bytes p holds */
	size_t	 max;		/* bytes len may reach */
	int	 flags;
	int	 fixed;		/* p is the caller's: it never grows */
	int	 failed;
};

/* An empty growing buffer of at most max bytes (flags: BUF_SECRET). */
void	 buf_init(struct buf *, size_t max, int flags);
/* The caller's size bytes at mem, never grown: len stays below size. */
void	 buf_fixed(struct buf *, char *mem, size_t size);
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_printf(struct buf *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Frees a growing buffer (wiped first with BUF_SECRET). */
void	 buf_free(struct buf *);

#endif
