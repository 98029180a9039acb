/*
 * A session's recording: its folder, its manifest, its verification
 * (recording.h; the format in docs/record.md).
 *
 * Input bounds: a capture of at most LAUNCH_RECORD_READ_MAX bytes, read
 * one block at a time (common/pcapng.h: blocks of at most
 * PCAPNG_READ_BLOCK_MAX bytes); at most LAUNCH_RECORD_STREAMS streams
 * hashed one by one; a manifest of at most LAUNCH_RECORD_MANIFEST_MAX
 * bytes, lines of at most MF_LINE_MAX.  Every header is checked against
 * the bytes the packet has before it is read.
 */
#include "config.h"

#include <sys/stat.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "buf.h"
#include "file.h"
#include "pcapng.h"
#include "session/recording.h"

#define SHA_HEX		(2 * 32)
#define CONNID_MAX	32		/* bytes of a conn id kept */
#define MF_LINE_MAX	512		/* bytes of one manifest line */
#define HASH_BUCKETS	(2 * LAUNCH_RECORD_STREAMS)	/* a power of 2 */

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_ACK		0x10

/* The files a manifest covers, relative to the session folder. */
static const char *const record_files[] = {
	LAUNCH_RECORDING_DIR "/" LAUNCH_RECORDING_CAPTURE,
	"audit.jsonl",		/* the decision log */
	"record",		/* the session's record (run.c) */
};
#define NFILES	(sizeof(record_files) / sizeof(record_files[0]))

/* One end of a TCP connection: address (v4 in the first 4 bytes), port. */
struct endpoint {
	int		 family;
	unsigned char	 addr[16];
	uint16_t	 port;
};

struct stream {
	struct endpoint	 client, server;
	char		 conn[CONNID_MAX + 1];
	EVP_MD_CTX	*md[2];		/* 0: up (client -> server), 1: down */
	uint64_t	 bytes[2];
	int		 ended;		/* a FIN or RST was seen */
};

struct streams {
	struct stream	*v;
	size_t		 n;
	int		 over;		/* more than LAUNCH_RECORD_STREAMS */
	uint32_t	*bucket;	/* index + 1 of the newest stream of a key */
};

static void
hex(const unsigned char *md, size_t n, char *out)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int
ep_equal(const struct endpoint *a, const struct endpoint *b)
{
	return a->family == b->family && a->port == b->port &&
	    memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* The same for both directions of a connection. */
static uint32_t
key_hash(const struct endpoint *a, const struct endpoint *b)
{
	uint32_t	 h[2] = { 2166136261u, 2166136261u };
	const struct endpoint *e[2] = { a, b };
	size_t		 i, k, n = a->family == AF_INET ? 4 : 16;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < n; i++)
			h[k] = (h[k] ^ e[k]->addr[i]) * 16777619u;
		h[k] = (h[k] ^ (e[k]->port & 0xff)) * 16777619u;
		h[k] = (h[k] ^ (e[k]->port >> 8)) * 16777619u;
	}
	return h[0] ^ h[1];
}

/* The stream of a packet from src to dst, or NULL; *dir its direction. */
static struct stream *
stream_find(struct streams *t, const struct endpoint *src,
    const struct endpoint *dst, int *dir, uint32_t **slot)
{
	uint32_t	 i, h = key_hash(src, dst) & (HASH_BUCKETS - 1);
	struct stream	*s;

	for (i = 0; i < HASH_BUCKETS; i++, h = (h + 1) & (HASH_BUCKETS - 1)) {
		*slot = &t->bucket[h];
		if (t->bucket[h] == 0)
			return NULL;
		s = &t->v[t->bucket[h] - 1];
		if (ep_equal(&s->client, src) && ep_equal(&s->server, dst)) {
			*dir = 0;
			return s;
		}
		if (ep_equal(&s->client, dst) && ep_equal(&s->server, src)) {
			*dir = 1;
			return s;
		}
	}
	*slot = NULL;	/* cannot happen: more buckets than streams */
	return NULL;
}

static struct stream *
stream_new(struct streams *t, const struct endpoint *client,
    const struct endpoint *server, uint32_t *slot)
{
	struct stream	*s;
	int		 k;

	if (t->n == LAUNCH_RECORD_STREAMS || slot == NULL) {
		t->over = 1;
		return NULL;
	}
	s = &t->v[t->n];
	memset(s, 0, sizeof(*s));
	s->client = *client;
	s->server = *server;
	snprintf(s->conn, sizeof(s->conn), "-");
	for (k = 0; k < 2; k++)
		if ((s->md[k] = EVP_MD_CTX_new()) == NULL ||
		    EVP_DigestInit_ex(s->md[k], EVP_sha256(), NULL) != 1) {
			EVP_MD_CTX_free(s->md[0]);
			EVP_MD_CTX_free(s->md[1]);
			return NULL;
		}
	*slot = (uint32_t)++t->n;
	return s;
}

static void
streams_free(struct streams *t)
{
	size_t	 i;

	for (i = 0; t->v != NULL && i < t->n; i++) {
		EVP_MD_CTX_free(t->v[i].md[0]);
		EVP_MD_CTX_free(t->v[i].md[1]);
	}
	free(t->v);
	free(t->bucket);
	memset(t, 0, sizeof(*t));
}

/* "aisb conn=ID ..." -> ID (letters, digits, . _ -), at most CONNID_MAX */
static void
comment_conn(struct stream *s, const char *c, size_t len)
{
	static const char	 pre[] = "aisb conn=";
	size_t			 i;

	if (s->conn[0] != '-' || len <= sizeof(pre) - 1 ||
	    memcmp(c, pre, sizeof(pre) - 1) != 0)
		return;
	c += sizeof(pre) - 1;
	len -= sizeof(pre) - 1;
	for (i = 0; i < len && i < CONNID_MAX; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-", c[i]) == NULL || c[i] == '\0')
			break;
	if (i > 0) {
		memcpy(s->conn, c, i);
		s->conn[i] = '\0';
	}
}

/*
 * One packet: its IP and TCP headers checked against len, its payload
 * added to its stream's direction.  Not TCP, fragments, IPv6 extension
 * headers: skipped (0).  -1: out of memory.
 */
static int
stream_packet(struct streams *t, const struct pcapng_pkt *pkt)
{
	const unsigned char	*p = pkt->data, *tcp;
	size_t			 len = pkt->len, hl, tl, thl;
	struct endpoint		 src, dst;
	struct stream		*s;
	uint32_t		*slot;
	int			 dir, v;
	uint8_t			 flags;

	if (len < 1)
		return 0;
	v = p[0] >> 4;
	if ((pkt->linktype == 228 && v != 4) || (pkt->linktype == 229 && v != 6))
		return 0;
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	if (v == 4) {
		if (len < 20 || (hl = (size_t)(p[0] & 0x0f) * 4) < 20 ||
		    hl > len || p[9] != 6)
			return 0;
		tl = (size_t)p[2] << 8 | p[3];
		if (tl < hl || tl > len)
			return 0;
		if (((p[6] & 0x3f) | p[7]) != 0)
			return 0;	/* a fragment (MF, or an offset) */
		src.family = dst.family = AF_INET;
		memcpy(src.addr, p + 12, 4);
		memcpy(dst.addr, p + 16, 4);
	} else if (v == 6) {
		if (len < 40 || p[6] != 6)
			return 0;
		hl = 40;
		tl = 40 + ((size_t)p[4] << 8 | p[5]);
		if (tl > len)
			return 0;
		src.family = dst.family = AF_INET6;
		memcpy(src.addr, p + 8, 16);
		memcpy(dst.addr, p + 24, 16);
	} else
		return 0;
	tcp = p + hl;
	if (tl - hl < 20 || (thl = (size_t)(tcp[12] >> 4) * 4) < 20 ||
	    thl > tl - hl)
		return 0;
	src.port = (uint16_t)(tcp[0] << 8 | tcp[1]);
	dst.port = (uint16_t)(tcp[2] << 8 | tcp[3]);
	flags = tcp[13];

	s = stream_find(t, &src, &dst, &dir, &slot);
	/* a new handshake on the key of a stream that carried or ended */
	if (s != NULL && (flags & (TCP_SYN | TCP_ACK)) == TCP_SYN &&
	    (s->ended || s->bytes[0] + s->bytes[1] > 0))
		s = NULL;
	if (s == NULL) {
		if (t->over)
			return 0;
		/* the client: the SYN's sender, else the first packet's */
		if ((flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK)) {
			if ((s = stream_new(t, &dst, &src, slot)) == NULL)
				return t->over ? 0 : -1;
			dir = 1;
		} else {
			if ((s = stream_new(t, &src, &dst, slot)) == NULL)
				return t->over ? 0 : -1;
			dir = 0;
		}
	}
	if (pkt->comment != NULL)
		comment_conn(s, pkt->comment, pkt->commentlen);
	if (flags & (TCP_FIN | TCP_RST))
		s->ended = 1;
	if (tl - hl - thl > 0) {
		if (EVP_DigestUpdate(s->md[dir], tcp + thl, tl - hl - thl) != 1)
			return -1;
		s->bytes[dir] += tl - hl - thl;
	}
	return 0;
}

static void
ep_str(const struct endpoint *e, char *out, size_t len)
{
	char	 a[INET6_ADDRSTRLEN];

	inet_ntop(e->family, e->addr, a, sizeof(a));
	snprintf(out, len, e->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
	    e->port);
}

int
launch_record_streams(const char *path, struct buf *out, char *err,
    size_t errlen)
{
	struct pcapng_reader	*r = NULL;
	struct pcapng_pkt	 pkt;
	struct streams		 t = { .n = 0 };
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen;
	char			 sub[256], c[64], d[64], h[SHA_HEX + 1];
	size_t			 i;
	int			 fd, rc = -1, k, n;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((r = pcapng_reader_open(fd, LAUNCH_RECORD_READ_MAX, sub,
	    sizeof(sub))) == NULL) {
		snprintf(err, errlen, "%s: %s", path, sub);
		return -1;
	}
	if ((t.v = calloc(LAUNCH_RECORD_STREAMS, sizeof(*t.v))) == NULL ||
	    (t.bucket = calloc(HASH_BUCKETS, sizeof(*t.bucket))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	while ((n = pcapng_reader_next(r, &pkt, sub, sizeof(sub))) == 1)
		if (stream_packet(&t, &pkt) == -1) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	if (n == -1) {
		snprintf(err, errlen, "%s: %s", path, sub);
		goto fail;
	}
	if (t.over)
		buf_printf(out, "streams-over %d\n", LAUNCH_RECORD_STREAMS);
	for (i = 0; !t.over && i < t.n; i++) {
		ep_str(&t.v[i].client, c, sizeof(c));
		ep_str(&t.v[i].server, d, sizeof(d));
		for (k = 0; k < 2; k++) {
			if (EVP_DigestFinal_ex(t.v[i].md[k], md, &mdlen) != 1) {
				snprintf(err, errlen, "SHA-256 failed");
				goto fail;
			}
			hex(md, mdlen, h);
			buf_printf(out, "stream %s %s %s %s %llu %s\n",
			    t.v[i].conn, c, d, k == 0 ? "up" : "down",
			    (unsigned long long)t.v[i].bytes[k], h);
		}
	}
	rc = 0;
fail:
	streams_free(&t);
	pcapng_reader_close(r);
	return rc;
}

/*
 * The size and SHA-256 of dir/name, never through a symbolic link.  0,
 * 1 when there is no such file, -1 with err.
 */
static int
file_sha256(const char *dir, const char *name, uint64_t *size, char *h,
    char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	unsigned char	 b[65536], md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen;
	struct stat	 st;
	EVP_MD_CTX	*ctx = NULL;
	ssize_t		 n;
	int		 fd = -1, rc = -1;

	if (file_path_join(path, sizeof(path), dir, name) == -1) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		snprintf(err, errlen, "SHA-256: out of memory");
		goto fail;
	}
	*size = 0;
	for (;;) {
		n = read(fd, b, sizeof(b));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		*size += (uint64_t)n;
		if (*size > LAUNCH_RECORD_READ_MAX) {
			snprintf(err, errlen, "%s: more than %llu bytes", path,
			    (unsigned long long)LAUNCH_RECORD_READ_MAX);
			goto fail;
		}
		if (EVP_DigestUpdate(ctx, b, (size_t)n) != 1)
			goto fail;
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1)
		goto fail;
	hex(md, mdlen, h);
	rc = 0;
fail:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}

int
launch_record_prepare(const char *sessdir, char *capture, size_t caplen,
    char *err, size_t errlen)
{
	char	 dir[PATH_MAX];

	if (file_path_join(dir, sizeof(dir), sessdir, LAUNCH_RECORDING_DIR) ==
	    -1 || file_path_join(capture, caplen, dir,
	    LAUNCH_RECORDING_CAPTURE) == -1) {
		snprintf(err, errlen, "%s/%s: path too long", sessdir,
		    LAUNCH_RECORDING_DIR);
		return -1;
	}
	if (mkdir(dir, 0700) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The manifest's text; with_streams 0: its file lines only. */
static int
manifest_text(const char *sessdir, struct buf *out, int with_streams,
    char *err, size_t errlen)
{
	char		 h[SHA_HEX + 1], cap[PATH_MAX];
	uint64_t	 size;
	size_t		 i;
	int		 rc, have_cap = 0;

	buf_printf(out, "# aisb record manifest 1: file NAME BYTES SHA256; "
	    "stream CONNID CLIENT DEST up|down BYTES SHA256 (docs/record.md)\n");
	for (i = 0; i < NFILES; i++) {
		if ((rc = file_sha256(sessdir, record_files[i], &size, h, err,
		    errlen)) == -1)
			return -1;
		if (rc == 1)
			continue;
		buf_printf(out, "file %s %llu %s\n", record_files[i],
		    (unsigned long long)size, h);
		have_cap |= i == 0;
	}
	if (have_cap && with_streams) {
		if (file_path_join(cap, sizeof(cap), sessdir, record_files[0]) ==
		    -1) {
			snprintf(err, errlen, "%s: path too long", sessdir);
			return -1;
		}
		if (launch_record_streams(cap, out, err, errlen) == -1)
			return -1;
	}
	if (out->failed) {
		snprintf(err, errlen, "manifest longer than %d bytes",
		    LAUNCH_RECORD_MANIFEST_MAX);
		return -1;
	}
	return 0;
}

int
launch_record_manifest_text(const char *sessdir, struct buf *out, char *err,
    size_t errlen)
{
	return manifest_text(sessdir, out, 1, err, errlen);
}

int
launch_record_write_manifest(const char *sessdir, char *err, size_t errlen)
{
	struct buf	 b;
	char		 path[PATH_MAX];
	int		 rc = -1;

	if (file_path_join(path, sizeof(path), sessdir, LAUNCH_RECORDING_DIR "/"
	    LAUNCH_RECORDING_MANIFEST) == -1) {
		snprintf(err, errlen, "%s: path too long", sessdir);
		return -1;
	}
	buf_init(&b, LAUNCH_RECORD_MANIFEST_MAX, 0);
	if (launch_record_manifest_text(sessdir, &b, err, errlen) == -1)
		goto fail;
	if (file_write_atomic(path, b.p, b.len, 0600, (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	rc = 0;
fail:
	buf_free(&b);
	return rc;
}

/* ---- verify -------------------------------------------------------------- */

/*
 * One line of a manifest: its key (what it is about: "file NAME",
 * "stream CONNID CLIENT DEST DIR" with the occurrence of that key) and
 * its value (BYTES SHA256).
 */
struct mline {
	char	 key[MF_LINE_MAX];
	char	 val[96];
	int	 seen;
};

/*
 * The lines of text into *vp.  -1 with err on a line that is not one a
 * manifest has.
 */
static int
parse_manifest(const char *text, const char *what, struct mline **vp,
    size_t *np, char *err, size_t errlen)
{
	struct mline	*v = NULL, *nv;
	const char	*line, *nl, *sp;
	size_t		 n = 0, len, lineno = 0, i, vlen;
	int		 occ;

	for (line = text; *line != '\0'; line = nl != NULL ? nl + 1 :
	    line + len) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		lineno++;
		if (len == 0 || line[0] == '#')
			continue;
		if (len >= MF_LINE_MAX || (strncmp(line, "file ", 5) != 0 &&
		    strncmp(line, "stream ", 7) != 0 &&
		    strncmp(line, "streams-over ", 13) != 0)) {
			snprintf(err, errlen, "%s:%zu: not a manifest line",
			    what, lineno);
			free(v);
			return -1;
		}
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL) {
			snprintf(err, errlen, "out of memory");
			free(v);
			return -1;
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		/* the value: the last two words (BYTES SHA256) */
		sp = line + len;
		for (i = 0; i < 2 && sp > line; i++) {
			sp--;
			while (sp > line && *sp != ' ')
				sp--;
		}
		if (strncmp(line, "streams-over ", 13) == 0)
			sp = line + len;
		vlen = (size_t)(line + len - sp);
		if (sp == line || vlen >= sizeof(v[n].val)) {
			snprintf(err, errlen, "%s:%zu: not a manifest line",
			    what, lineno);
			free(v);
			return -1;
		}
		snprintf(v[n].val, sizeof(v[n].val), "%.*s",
		    (int)(vlen > 0 ? vlen - 1 : 0), vlen > 0 ? sp + 1 : sp);
		/* the key, with its occurrence: a port reused, a stream again */
		for (i = 0, occ = 1; i < n; i++)
			if (strlen(v[i].key) > (size_t)(sp - line) &&
			    strncmp(v[i].key, line, (size_t)(sp - line)) == 0 &&
			    v[i].key[sp - line] == '#')
				occ++;
		snprintf(v[n].key, sizeof(v[n].key), "%.*s#%d",
		    (int)(sp - line), line, occ);
		n++;
	}
	*vp = v;
	*np = n;
	return 0;
}

/* "stream ... up#2" as people read it: "stream ... up (2nd of that key)" */
static void
say(FILE *out, const char *what, const char *key, const char *detail)
{
	const char	*hash = strrchr(key, '#');
	int		 occ = atoi(hash + 1);

	fprintf(out, "%s: %.*s%s%s%s\n", what, (int)(hash - key), key,
	    occ > 1 ? " (again: same key, later stream)" : "",
	    detail[0] != '\0' ? ": " : "", detail);
}

int
launch_record_verify(const char *sessdir, FILE *out, char *err,
    size_t errlen)
{
	struct buf	 now;
	struct mline	*want = NULL, *have = NULL;
	char		 dir[PATH_MAX], detail[256];
	char		*text = NULL;
	size_t		 len, nwant = 0, nhave = 0, i, j;
	int		 rc = -1, differ = 0;

	buf_init(&now, LAUNCH_RECORD_MANIFEST_MAX, 0);
	if (file_path_join(dir, sizeof(dir), sessdir, LAUNCH_RECORDING_DIR) ==
	    -1) {
		snprintf(err, errlen, "%s: path too long", sessdir);
		goto fail;
	}
	if ((text = file_read_in(dir, LAUNCH_RECORDING_MANIFEST,
	    LAUNCH_RECORD_MANIFEST_MAX, &len, err, errlen)) == NULL) {
		if (errno == ENOENT)
			snprintf(err, errlen, "%s/%s: no manifest: the session "
			    "did not record (--record), or its launcher was "
			    "killed before the end", dir, LAUNCH_RECORDING_MANIFEST);
		goto fail;
	}
	if (strlen(text) != len) {
		snprintf(err, errlen, "%s/%s: a NUL byte", dir,
		    LAUNCH_RECORDING_MANIFEST);
		goto fail;
	}
	if (parse_manifest(text, LAUNCH_RECORDING_MANIFEST, &want, &nwant, err,
	    errlen) == -1)
		goto fail;
	/*
	 * The capture as it is now: one that no longer parses (cut inside
	 * its headers, a block length edited) is a difference, not an error.
	 */
	if (launch_record_manifest_text(sessdir, &now, detail,
	    sizeof(detail)) == -1) {
		fprintf(out, "unreadable: %s\n", detail);
		differ = 1;
		buf_free(&now);
		buf_init(&now, LAUNCH_RECORD_MANIFEST_MAX, 0);
		/* the files alone, then */
		if (manifest_text(sessdir, &now, 0, err, errlen) == -1)
			goto fail;
		for (i = 0; i < nwant; i++)
			if (strncmp(want[i].key, "stream", 6) == 0)
				want[i].seen = 1;
	}
	if (parse_manifest(now.p != NULL ? now.p : "", "recomputed", &have,
	    &nhave, err, errlen) == -1)
		goto fail;
	for (i = 0; i < nhave; i++) {
		for (j = 0; j < nwant; j++)
			if (strcmp(have[i].key, want[j].key) == 0)
				break;
		if (j == nwant) {
			/* a file or stream the manifest does not have */
			say(out, "added", have[i].key, have[i].val);
			differ = 1;
			continue;
		}
		want[j].seen = 1;
		if (strcmp(have[i].val, want[j].val) != 0) {
			snprintf(detail, sizeof(detail), "was %s, is %s",
			    want[j].val, have[i].val);
			say(out, "changed", have[i].key, detail);
			differ = 1;
		}
	}
	for (j = 0; j < nwant; j++)
		if (!want[j].seen) {
			say(out, "missing", want[j].key, want[j].val);
			differ = 1;
		}
	if (!differ)
		fprintf(out, "verified: %zu files and streams match %s/%s\n",
		    nwant, dir, LAUNCH_RECORDING_MANIFEST);
	rc = differ;
fail:
	free(want);
	free(have);
	free(text);
	buf_free(&now);
	return rc;
}

void
launch_record_show(const char *sessdir, FILE *out)
{
	char		 h[SHA_HEX + 1], err[PATH_MAX + 64];
	uint64_t	 size;
	size_t		 i;
	struct stat	 st;
	char		 dir[PATH_MAX];

	if (file_path_join(dir, sizeof(dir), sessdir, LAUNCH_RECORDING_DIR) ==
	    -1 || lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		fprintf(out, "recording none (the session ran without "
		    "--record)\n");
		return;
	}
	fprintf(out, "recording %s\n", dir);
	for (i = 0; i < NFILES; i++) {
		if (file_sha256(sessdir, record_files[i], &size, h, err,
		    sizeof(err)) != 0)
			continue;
		fprintf(out, "recording_file %s %llu bytes\n", record_files[i],
		    (unsigned long long)size);
	}
	if (file_sha256(dir, LAUNCH_RECORDING_MANIFEST, &size, h, err,
	    sizeof(err)) == 0)
		fprintf(out, "recording_manifest %s/%s %llu bytes (aisb sessions "
		    "verify checks it)\n", dir, LAUNCH_RECORDING_MANIFEST,
		    (unsigned long long)size);
	else
		fprintf(out, "recording_manifest none (the launcher did not "
		    "reach the session's end)\n");
}
