/*
 * Captures in pcapng (draft-ietf-opsawg-pcapng), written directly: a
 * section header, one interface of link type RAW (each packet an IPv4 or
 * IPv6 datagram, no link layer), then one enhanced packet block per packet,
 * with an optional comment that Wireshark and tshark show
 * (`frame.comment`).  libpcap's dump API writes pcap only, which cannot
 * carry the comment that ties a stream to its decision (docs/record.md).
 *
 * Every block goes out in one write(2), so a capture cut short by a kill
 * or a crash ends at the last complete block, or inside one that readers
 * report as cut short; a block that failed half-written is cut off again
 * with ftruncate(2).  Nothing here allocates per packet.
 */
#ifndef AISB_PCAPNG_H
#define AISB_PCAPNG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define PCAPNG_LINKTYPE_RAW	101
#define PCAPNG_SNAPLEN		65535	/* bytes of one packet, at most */
#define PCAPNG_COMMENT_MAX	1024	/* bytes of one comment, at most */

struct pcapng;

/*
 * A writer on fd (which it owns from now on: pcapng_close closes it),
 * positioned at the end of an empty file; the section and interface
 * headers are written at once.  max bounds the whole file in bytes (0: no
 * bound); app names the writing program in the section header.  NULL with
 * errno set on failure (fd is then closed too).
 */
struct pcapng	*pcapng_open(int fd, uint64_t max, const char *app);

/*
 * One packet of len bytes (at most PCAPNG_SNAPLEN) seen at ts, with an
 * optional comment (NULL: none; cut at PCAPNG_COMMENT_MAX bytes).
 *   0	written
 *   1	not written: the block would pass the bound; from now on the
 *	writer is full and every call returns 1 (pcapng_full)
 *  -1	not written: a write error (errno) or len too large (EINVAL);
 *	after a write error every call returns -1
 */
int		 pcapng_write(struct pcapng *, const struct timespec *ts,
		    const void *pkt, size_t len, const char *comment);

/*
 * A Decryption Secrets Block of len bytes (at most PCAPNG_SECRETS_MAX) of
 * type (PCAPNG_SECRETS_TLS: NSS key log lines, each ending in a line
 * feed), for the packets written after it.  Returns as pcapng_write.
 */
#define PCAPNG_SECRETS_TLS	0x544c534bu	/* "TLSK" */
#define PCAPNG_SECRETS_MAX	4096
int		 pcapng_write_secrets(struct pcapng *, uint32_t type,
		    const void *data, size_t len);

/* The bound was reached. */
int		 pcapng_full(const struct pcapng *);
/* Bytes in the file. */
uint64_t	 pcapng_size(const struct pcapng *);
/* Closes the file.  NULL does nothing. */
void		 pcapng_close(struct pcapng *);

/* ---- reader ------------------------------------------------------------ */

/*
 * Reads what the writer above wrote, and captures of link type RAW, IPv4
 * (228) or IPv6 (229) from other pcapng writers (Wireshark's, editcap's),
 * either byte order, several sections.  Pure libc, one block in memory at
 * a time.  Bounds: a block over PCAPNG_READ_BLOCK_MAX bytes and a file
 * over the caller's max are refused; at most PCAPNG_READ_IFACES
 * interfaces per section.  A last block cut short (a writer killed
 * mid-write, a truncated copy) ends the reading like the end of the file,
 * and pcapng_reader_cut() says so.
 */
#define PCAPNG_READ_BLOCK_MAX	(256 * 1024)	/* bytes of one block */
#define PCAPNG_READ_IFACES	64		/* interfaces per section */

struct pcapng_reader;

/* One packet of an enhanced packet block; valid until the next call. */
struct pcapng_pkt {
	struct timespec		 ts;
	const unsigned char	*data;		/* captured bytes */
	size_t			 len;		/* of data */
	size_t			 origlen;	/* on the wire */
	uint16_t		 linktype;	/* of its interface */
	const char		*comment;	/* first opt_comment; NULL: none */
	size_t			 commentlen;	/* not NUL-terminated */
	uint64_t		 offset;	/* of its block in the file */
};

/*
 * A reader on fd (which it owns from now on: pcapng_reader_close closes
 * it), refusing a file of more than max bytes.  NULL with err filled in.
 */
struct pcapng_reader *pcapng_reader_open(int fd, uint64_t max, char *err,
		    size_t errlen);
/*
 * The next packet: 1 (pkt filled in), 0 at the end of the file (or of
 * its last complete block), -1 with err (where: the block's offset, and
 * what is wrong with it).  Other blocks are skipped.
 */
int		 pcapng_reader_next(struct pcapng_reader *, struct pcapng_pkt *,
		    char *err, size_t errlen);
/* The file ended inside a block: 1, and the bytes of the part. */
int		 pcapng_reader_cut(const struct pcapng_reader *, uint64_t *part);
/* Closes the file.  NULL does nothing. */
void		 pcapng_reader_close(struct pcapng_reader *);

#endif /* AISB_PCAPNG_H */
