/*
 * pcapng writer: see pcapng.h.  Host byte order throughout (the section
 * header's magic tells readers which); 32-bit alignment of every block and
 * option, as the format requires.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcapng.h"

#define BT_SHB		0x0A0D0D0Au
#define BT_IDB		0x00000001u
#define BT_EPB		0x00000006u
#define BOM		0x1A2B3C4Du

#define OPT_END		0
#define OPT_COMMENT	1
#define SHB_USERAPPL	4
#define IF_NAME		2
#define IF_TSRESOL	9

#define PAD4(n)		(((n) + 3) & ~(size_t)3)

/* An enhanced packet block: header, data, a comment, end of options. */
#define EPB_MAX		(28 + PAD4(PCAPNG_SNAPLEN) + 4 + \
			 PAD4(PCAPNG_COMMENT_MAX) + 4 + 4)

struct pcapng {
	int		 fd;
	int		 full;
	int		 failed;
	uint64_t	 size;
	uint64_t	 max;
	unsigned char	*buf;		/* EPB_MAX bytes: one block at a time */
};

static size_t
put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return 4;
}

static size_t
put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return 2;
}

/* An option of len bytes of v at p, padded: its size. */
static size_t
put_opt(unsigned char *p, uint16_t code, const void *v, size_t len)
{
	size_t	 n = 0;

	n += put16(p + n, code);
	n += put16(p + n, (uint16_t)len);
	memcpy(p + n, v, len);
	memset(p + n + len, 0, PAD4(len) - len);
	return n + PAD4(len);
}

/* Closes a block at p whose body ends at n: end of options, trailer. */
static size_t
close_block(unsigned char *p, size_t n, int opts)
{
	if (opts)
		n += put32(p + n, OPT_END);	/* code 0, length 0 */
	n += 4;
	put32(p + 4, (uint32_t)n);
	put32(p + n - 4, (uint32_t)n);
	return n;
}

/*
 * The block, whole or not at all: a short write (a full disk) is cut off
 * again, so that the file still ends at a block boundary.
 */
static int
emit(struct pcapng *w, const unsigned char *p, size_t n)
{
	size_t	 off = 0;
	ssize_t	 r;
	int	 saved;

	if (w->failed) {
		errno = EIO;
		return -1;
	}
	if (w->full)
		return 1;
	if (w->max != 0 && w->size + n > w->max) {
		w->full = 1;
		return 1;
	}
	while (off < n) {
		r = write(w->fd, p + off, n - off);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			saved = r == 0 ? EIO : errno;
			if (off > 0)
				(void)ftruncate(w->fd, (off_t)w->size);
			w->failed = 1;
			errno = saved;
			return -1;
		}
		off += (size_t)r;
	}
	w->size += n;
	return 0;
}

static int
write_headers(struct pcapng *w, const char *app)
{
	unsigned char	*p = w->buf;
	size_t		 n = 0, alen = app != NULL ? strlen(app) : 0;
	unsigned char	 res = 9;		/* 10^-9 s */
	int		 rc;

	if (alen > 128)
		alen = 128;
	n += put32(p + n, BT_SHB);
	n += 4;					/* length, below */
	n += put32(p + n, BOM);
	n += put16(p + n, 1);			/* version 1.0 */
	n += put16(p + n, 0);
	memset(p + n, 0xff, 8);			/* section length unknown */
	n += 8;
	if (alen > 0)
		n += put_opt(p + n, SHB_USERAPPL, app, alen);
	n = close_block(p, n, 1);
	if ((rc = emit(w, p, n)) != 0)
		return rc;

	n = 0;
	n += put32(p + n, BT_IDB);
	n += 4;
	n += put16(p + n, PCAPNG_LINKTYPE_RAW);
	n += put16(p + n, 0);
	n += put32(p + n, PCAPNG_SNAPLEN);
	n += put_opt(p + n, IF_NAME, "aisb", 4);
	n += put_opt(p + n, IF_TSRESOL, &res, 1);
	n = close_block(p, n, 1);
	return emit(w, p, n);
}

struct pcapng *
pcapng_open(int fd, uint64_t max, const char *app)
{
	struct pcapng	*w;
	int		 saved;

	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->buf = malloc(EPB_MAX)) == NULL) {
		saved = errno;
		free(w);
		close(fd);
		errno = saved;
		return NULL;
	}
	w->fd = fd;
	w->max = max;
	if (write_headers(w, app) != 0) {
		saved = w->full ? EFBIG : errno;
		pcapng_close(w);
		errno = saved;
		return NULL;
	}
	return w;
}

int
pcapng_write(struct pcapng *w, const struct timespec *ts, const void *pkt,
    size_t len, const char *comment)
{
	unsigned char	*p = w->buf;
	uint64_t	 t;
	size_t		 n = 0, clen = 0;

	if (len > PCAPNG_SNAPLEN) {
		errno = EINVAL;
		return -1;
	}
	if (comment != NULL && (clen = strlen(comment)) > PCAPNG_COMMENT_MAX)
		clen = PCAPNG_COMMENT_MAX;
	t = (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
	n += put32(p + n, BT_EPB);
	n += 4;
	n += put32(p + n, 0);			/* interface 0 */
	n += put32(p + n, (uint32_t)(t >> 32));
	n += put32(p + n, (uint32_t)t);
	n += put32(p + n, (uint32_t)len);	/* captured */
	n += put32(p + n, (uint32_t)len);	/* on the wire */
	memcpy(p + n, pkt, len);
	memset(p + n + len, 0, PAD4(len) - len);
	n += PAD4(len);
	if (clen > 0)
		n += put_opt(p + n, OPT_COMMENT, comment, clen);
	n = close_block(p, n, clen > 0);
	return emit(w, p, n);
}

int
pcapng_full(const struct pcapng *w)
{
	return w->full;
}

uint64_t
pcapng_size(const struct pcapng *w)
{
	return w->size;
}

void
pcapng_close(struct pcapng *w)
{
	if (w == NULL)
		return;
	close(w->fd);
	free(w->buf);
	free(w);
}
