/*
 * pcapng writer: see pcapng.h.  Host byte order throughout (the section
 * header's magic tells readers which); 32-bit alignment of every block and
 * option, as the format requires.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcapng.h"

#define BT_SHB		0x0A0D0D0Au
#define BT_IDB		0x00000001u
#define BT_EPB		0x00000006u
#define BT_DSB		0x0000000Au	/* Decryption Secrets Block */
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

/*
 * A Decryption Secrets Block: type (PCAPNG_SECRETS_TLS: NSS keylog
 * lines), then the secrets, padded.  Readers that know the type decrypt
 * the packets after it.
 */
int
pcapng_write_secrets(struct pcapng *w, uint32_t type, const void *data,
    size_t len)
{
	unsigned char	*p = w->buf;
	size_t		 n = 0;
	int		 rc;

	if (len > PCAPNG_SECRETS_MAX) {
		errno = EINVAL;
		return -1;
	}
	n += put32(p + n, BT_DSB);
	n += 4;
	n += put32(p + n, type);
	n += put32(p + n, (uint32_t)len);
	memcpy(p + n, data, len);
	memset(p + n + len, 0, PAD4(len) - len);
	n += PAD4(len);
	n = close_block(p, n, 0);
	rc = emit(w, p, n);
	explicit_bzero(p, n);		/* the keys are no business of the buffer */
	return rc;
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

/* ---- reader ------------------------------------------------------------ */

struct pcapng_iface {
	uint16_t	 linktype;
	uint64_t	 units;		/* of a timestamp, per second */
};

struct pcapng_reader {
	int			 fd;
	int			 swap;		/* the section's byte order is not ours */
	int			 insection;
	int			 cut;
	uint64_t		 part;		/* bytes of a block cut short */
	uint64_t		 off;		/* of the next block */
	uint64_t		 max;
	size_t			 nifaces;
	struct pcapng_iface	 ifaces[PCAPNG_READ_IFACES];
	unsigned char		*buf;		/* PCAPNG_READ_BLOCK_MAX bytes */
};

static uint32_t
get32(const struct pcapng_reader *r, const unsigned char *p)
{
	uint32_t	 v;

	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint16_t
get16(const struct pcapng_reader *r, const unsigned char *p)
{
	uint16_t	 v;

	memcpy(&v, p, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}

/* Up to len bytes at buf: how many there were (short: the file ended). */
static ssize_t
read_full(int fd, unsigned char *buf, size_t len)
{
	size_t	 off = 0;
	ssize_t	 n;

	while (off < len) {
		n = read(fd, buf + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

struct pcapng_reader *
pcapng_reader_open(int fd, uint64_t max, char *err, size_t errlen)
{
	struct pcapng_reader	*r;
	struct stat		 st;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "fstat: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%lld bytes, more than the %llu a capture "
		    "may have here", (long long)st.st_size,
		    (unsigned long long)max);
		close(fd);
		return NULL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->buf = malloc(PCAPNG_READ_BLOCK_MAX)) == NULL) {
		free(r);
		snprintf(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	r->fd = fd;
	r->max = max;
	return r;
}

/*
 * The options from p to end: the first comment (code 1) into *c, and the
 * timestamp resolution (code 9, interface blocks) into *units.  -1 when
 * an option runs past the block.
 */
static int
read_opts(const struct pcapng_reader *r, const unsigned char *p,
    const unsigned char *end, const char **c, size_t *clen, uint64_t *units)
{
	uint16_t	 code, len;
	unsigned	 v, i;

	while (end - p >= 4) {
		code = get16(r, p);
		len = get16(r, p + 2);
		p += 4;
		if (code == OPT_END)
			return 0;
		if ((size_t)(end - p) < PAD4((size_t)len))
			return -1;
		if (code == OPT_COMMENT && c != NULL && *c == NULL) {
			*c = (const char *)p;
			*clen = len;
		}
		if (code == IF_TSRESOL && units != NULL && len >= 1) {
			v = p[0] & 0x7f;
			if ((p[0] & 0x80) != 0 && v <= 63)
				*units = UINT64_C(1) << v;
			else if ((p[0] & 0x80) == 0 && v <= 19)
				for (*units = 1, i = 0; i < v; i++)
					*units *= 10;
			else
				return -1;
		}
		p += PAD4((size_t)len);
	}
	return 0;
}

int
pcapng_reader_next(struct pcapng_reader *r, struct pcapng_pkt *pkt,
    char *err, size_t errlen)
{
	unsigned char		*b = r->buf;
	uint32_t		 type, len, ifid, caplen, magic;
	uint64_t		 at, t, units;
	ssize_t			 n;
	struct pcapng_iface	*ifc;

	for (;;) {
		at = r->off;
		if ((n = read_full(r->fd, b, 12)) == -1) {
			snprintf(err, errlen, "offset %llu: read: %s",
			    (unsigned long long)at, strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		if (n < 12) {
			r->cut = 1;
			r->part = (uint64_t)n;
			return 0;
		}
		memcpy(&type, b, 4);
		if (type == BT_SHB) {
			/* the byte order of this section, from its magic */
			memcpy(&magic, b + 8, 4);
			if (magic == BOM)
				r->swap = 0;
			else if (magic == __builtin_bswap32(BOM))
				r->swap = 1;
			else {
				snprintf(err, errlen, "offset %llu: a section "
				    "header without the byte-order magic",
				    (unsigned long long)at);
				return -1;
			}
			r->insection = 1;
			r->nifaces = 0;
		} else if (!r->insection) {
			snprintf(err, errlen, "offset %llu: not a pcapng file "
			    "(no section header first)", (unsigned long long)at);
			return -1;
		}
		type = get32(r, b);
		len = get32(r, b + 4);
		if (len < 12 || len % 4 != 0 || len > PCAPNG_READ_BLOCK_MAX) {
			snprintf(err, errlen, "offset %llu: block length %u "
			    "(a block is 12 to %u bytes, a multiple of 4)",
			    (unsigned long long)at, len, PCAPNG_READ_BLOCK_MAX);
			return -1;
		}
		if (at + len > r->max) {
			snprintf(err, errlen, "offset %llu: the file grew past "
			    "%llu bytes", (unsigned long long)at,
			    (unsigned long long)r->max);
			return -1;
		}
		if ((n = read_full(r->fd, b + 12, len - 12)) == -1) {
			snprintf(err, errlen, "offset %llu: read: %s",
			    (unsigned long long)at, strerror(errno));
			return -1;
		}
		if ((size_t)n < len - 12) {
			r->cut = 1;
			r->part = 12 + (uint64_t)n;
			return 0;
		}
		r->off += len;
		if (get32(r, b + len - 4) != len) {
			snprintf(err, errlen, "offset %llu: the block's trailing "
			    "length is not its length %u", (unsigned long long)at,
			    len);
			return -1;
		}
		if (type == BT_IDB) {
			if (len < 20 || r->nifaces == PCAPNG_READ_IFACES) {
				snprintf(err, errlen, "offset %llu: interface "
				    "block: %s", (unsigned long long)at,
				    len < 20 ? "too short" : "too many interfaces");
				return -1;
			}
			ifc = &r->ifaces[r->nifaces];
			ifc->linktype = get16(r, b + 8);
			ifc->units = 1000000;	/* the format's default: us */
			if (read_opts(r, b + 16, b + len - 4, NULL, NULL,
			    &ifc->units) == -1) {
				snprintf(err, errlen, "offset %llu: interface "
				    "block: a bad option", (unsigned long long)at);
				return -1;
			}
			r->nifaces++;
			continue;
		}
		if (type != BT_EPB)
			continue;	/* statistics, name resolution, ... */
		if (len < 32) {
			snprintf(err, errlen, "offset %llu: packet block too "
			    "short", (unsigned long long)at);
			return -1;
		}
		ifid = get32(r, b + 8);
		caplen = get32(r, b + 20);
		if (ifid >= r->nifaces) {
			snprintf(err, errlen, "offset %llu: packet of interface "
			    "%u, which no block described", (unsigned long long)at,
			    ifid);
			return -1;
		}
		if (PAD4((size_t)caplen) > len - 32) {
			snprintf(err, errlen, "offset %llu: %u captured bytes "
			    "in a block of %u", (unsigned long long)at, caplen,
			    len);
			return -1;
		}
		memset(pkt, 0, sizeof(*pkt));
		if (read_opts(r, b + 28 + PAD4((size_t)caplen), b + len - 4,
		    &pkt->comment, &pkt->commentlen, NULL) == -1) {
			snprintf(err, errlen, "offset %llu: packet block: an "
			    "option runs past the block", (unsigned long long)at);
			return -1;
		}
		units = r->ifaces[ifid].units;
		t = (uint64_t)get32(r, b + 12) << 32 | get32(r, b + 16);
		pkt->ts.tv_sec = (time_t)(t / units);
		pkt->ts.tv_nsec = (long)((unsigned __int128)(t % units) *
		    1000000000u / units);
		pkt->data = b + 28;
		pkt->len = caplen;
		pkt->origlen = get32(r, b + 24);
		pkt->linktype = r->ifaces[ifid].linktype;
		pkt->offset = at;
		return 1;
	}
}

int
pcapng_reader_cut(const struct pcapng_reader *r, uint64_t *part)
{
	if (part != NULL)
		*part = r->part;
	return r->cut;
}

void
pcapng_reader_close(struct pcapng_reader *r)
{
	if (r == NULL)
		return;
	close(r->fd);
	free(r->buf);
	free(r);
}
