/*
 * --record's launcher side: the pcapng reader (common/pcapng.h) on
 * captures the writer made, its bounds, and the stream hashing, the
 * manifest and its verification (launcher/session/record.h) on a session folder
 * made here with packets built by hand.
 */
#include "config.h"

#include <sys/stat.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "buf.h"
#include "file.h"
#include "pcapng.h"
#include "session/recording.h"

static char	 tmpdir[64];

/* An IPv4 or IPv6 TCP segment, headers by hand; its length. */
static size_t
tcp_packet(unsigned char *p, int v6, const char *src, const char *dst,
    uint16_t sport, uint16_t dport, uint8_t flags, const void *data,
    size_t len)
{
	size_t	 hl = v6 ? 40 : 20, tl = hl + 20 + len;

	memset(p, 0, hl + 20);
	if (v6) {
		p[0] = 0x60;
		p[4] = (unsigned char)((20 + len) >> 8);
		p[5] = (unsigned char)(20 + len);
		p[6] = 6;
		p[7] = 64;
		assert_int_equal(inet_pton(AF_INET6, src, p + 8), 1);
		assert_int_equal(inet_pton(AF_INET6, dst, p + 24), 1);
	} else {
		p[0] = 0x45;
		p[2] = (unsigned char)(tl >> 8);
		p[3] = (unsigned char)tl;
		p[6] = 0x40;		/* DF: not a fragment */
		p[8] = 64;
		p[9] = 6;
		assert_int_equal(inet_pton(AF_INET, src, p + 12), 1);
		assert_int_equal(inet_pton(AF_INET, dst, p + 16), 1);
	}
	p[hl] = (unsigned char)(sport >> 8);
	p[hl + 1] = (unsigned char)sport;
	p[hl + 2] = (unsigned char)(dport >> 8);
	p[hl + 3] = (unsigned char)dport;
	p[hl + 12] = 5 << 4;
	p[hl + 13] = flags;
	memcpy(p + hl + 20, data, len);
	return tl;
}

static void
sha_hex(const void *d, size_t len, char *out)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 n, i;

	assert_int_equal(EVP_Digest(d, len, md, &n, EVP_sha256(), NULL), 1);
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static const char up1[] = "GET http://allowed.test/x HTTP/1.1\r\n\r\n";
static const char up1b[] = "second request";
static const char down1[] = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

/*
 * path: a v4 stream (conn 7: SYN with the comment, SYN-ACK, a Decryption
 * Secrets Block as an inspecting gate writes one, data both ways in three
 * segments, FIN), a denied v6 one (conn 8: SYN, RST), an ICMP packet
 * (skipped), and the same v4 ports again (a new SYN: a new stream, no
 * comment).  The reader, the stream hashes and verify skip the secrets.
 */
static void
write_capture(const char *path, uint64_t max)
{
	struct pcapng	*w;
	unsigned char	 p[2048];
	struct timespec	 ts = { 1700000000, 123456789 };
	size_t		 n;
	int		 fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd != -1);
	assert_non_null(w = pcapng_open(fd, max, "test_record"));
	n = tcp_packet(p, 0, "10.0.2.100", "127.0.0.1", 40000, 8080, 0x02,
	    "", 0);
	assert_int_equal(pcapng_write(w, &ts, p, n, "aisb conn=7 "
	    "session=abc decision=allow reason=rule host=allowed.test:8080 "
	    "rule=\"allow allowed.test\""), 0);
	n = tcp_packet(p, 0, "127.0.0.1", "10.0.2.100", 8080, 40000, 0x12,
	    "", 0);
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	assert_int_equal(pcapng_write_secrets(w, PCAPNG_SECRETS_TLS,
	    "CLIENT_TRAFFIC_SECRET_0 00 11\n", 30), 0);
	assert_int_equal(pcapng_write_secrets(w, PCAPNG_SECRETS_TLS, p,
	    PCAPNG_SECRETS_MAX + 1), -1);	/* over the bound: nothing */
	n = tcp_packet(p, 0, "10.0.2.100", "127.0.0.1", 40000, 8080, 0x18,
	    up1, strlen(up1));
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	n = tcp_packet(p, 0, "127.0.0.1", "10.0.2.100", 8080, 40000, 0x18,
	    down1, strlen(down1));
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	n = tcp_packet(p, 0, "10.0.2.100", "127.0.0.1", 40000, 8080, 0x18,
	    up1b, strlen(up1b));
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	n = tcp_packet(p, 0, "10.0.2.100", "127.0.0.1", 40000, 8080, 0x11,
	    "", 0);
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	n = tcp_packet(p, 1, "fd00::2", "::1", 40001, 443, 0x02, "", 0);
	assert_int_equal(pcapng_write(w, &ts, p, n, "aisb conn=8 "
	    "session=abc decision=deny reason=no-rule host=denied.test:443"), 0);
	n = tcp_packet(p, 1, "::1", "fd00::2", 443, 40001, 0x14, "", 0);
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	n = tcp_packet(p, 0, "10.0.2.100", "127.0.0.1", 1, 2, 0, "", 0);
	p[9] = 1;	/* ICMP: not a stream */
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	n = tcp_packet(p, 0, "10.0.2.100", "127.0.0.1", 40000, 8080, 0x02,
	    "", 0);
	assert_int_equal(pcapng_write(w, &ts, p, n, NULL), 0);
	pcapng_close(w);
}

static void
reader_reads_what_the_writer_wrote(void **state)
{
	struct pcapng_reader	*r;
	struct pcapng_pkt	 pkt;
	char			 path[PATH_MAX], err[256];
	int			 n = 0, fd, rc;

	(void)state;
	snprintf(path, sizeof(path), "%s/a.pcapng", tmpdir);
	write_capture(path, 0);
	assert_true((fd = open(path, O_RDONLY)) != -1);
	assert_non_null(r = pcapng_reader_open(fd, 1 << 20, err, sizeof(err)));
	while ((rc = pcapng_reader_next(r, &pkt, err, sizeof(err))) == 1) {
		assert_int_equal(pkt.linktype, PCAPNG_LINKTYPE_RAW);
		assert_int_equal(pkt.ts.tv_sec, 1700000000);
		assert_int_equal(pkt.ts.tv_nsec, 123456789);
		assert_int_equal(pkt.len, pkt.origlen);
		if (n == 0) {
			assert_non_null(pkt.comment);
			assert_true(pkt.commentlen > 12);
			assert_memory_equal(pkt.comment, "aisb conn=7 ", 12);
			assert_int_equal(pkt.len, 40);
		} else if (n == 1)
			assert_null(pkt.comment);
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 10);
	assert_false(pcapng_reader_cut(r, NULL));
	pcapng_reader_close(r);
	pcapng_reader_close(NULL);

	/* a file over the caller's bound is refused before any read */
	assert_true((fd = open(path, O_RDONLY)) != -1);
	assert_null(pcapng_reader_open(fd, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "more than the 100"));
	unlink(path);
}

static void
reader_bounds_and_cut(void **state)
{
	struct pcapng_reader	*r;
	struct pcapng_pkt	 pkt;
	char			 path[PATH_MAX], err[256];
	struct stat		 st;
	uint32_t		 big = PCAPNG_READ_BLOCK_MAX + 4;
	uint64_t		 part;
	int			 n = 0, fd, rc;

	(void)state;
	snprintf(path, sizeof(path), "%s/b.pcapng", tmpdir);
	write_capture(path, 0);
	/* cut 5 bytes into the last block: nine packets, then a cut */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 40 - 32 + 5), 0);
	assert_true((fd = open(path, O_RDONLY)) != -1);
	assert_non_null(r = pcapng_reader_open(fd, 1 << 20, err, sizeof(err)));
	while ((rc = pcapng_reader_next(r, &pkt, err, sizeof(err))) == 1)
		n++;
	assert_int_equal(rc, 0);
	assert_int_equal(n, 9);
	assert_true(pcapng_reader_cut(r, &part));
	assert_int_equal(part, 5);
	pcapng_reader_close(r);

	/* a block length over the bound: refused, naming the offset */
	assert_true((fd = open(path, O_WRONLY)) != -1);
	assert_int_equal(pwrite(fd, &big, 4, 4), 4);	/* the SHB's */
	close(fd);
	assert_true((fd = open(path, O_RDONLY)) != -1);
	assert_non_null(r = pcapng_reader_open(fd, 1 << 20, err, sizeof(err)));
	assert_int_equal(pcapng_reader_next(r, &pkt, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "offset 0: block length"));
	pcapng_reader_close(r);

	/* not pcapng at all */
	assert_int_equal(truncate(path, 0), 0);
	assert_true((fd = open(path, O_WRONLY)) != -1);
	assert_int_equal(write(fd, "GET / HTTP/1.1\r\n\r\n", 18), 18);
	close(fd);
	assert_true((fd = open(path, O_RDONLY)) != -1);
	assert_non_null(r = pcapng_reader_open(fd, 1 << 20, err, sizeof(err)));
	assert_int_equal(pcapng_reader_next(r, &pkt, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a pcapng file"));
	pcapng_reader_close(r);
	unlink(path);
}

static void
streams_hash_each_direction(void **state)
{
	struct buf	 b;
	char		 path[PATH_MAX], err[256], want[2048];
	char		 hu[65], hd[65], he[65], up[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/c.pcapng", tmpdir);
	write_capture(path, 0);
	snprintf(up, sizeof(up), "%s%s", up1, up1b);
	sha_hex(up, strlen(up), hu);
	sha_hex(down1, strlen(down1), hd);
	sha_hex("", 0, he);
	snprintf(want, sizeof(want),
	    "stream 7 10.0.2.100:40000 127.0.0.1:8080 up %zu %s\n"
	    "stream 7 10.0.2.100:40000 127.0.0.1:8080 down %zu %s\n"
	    "stream 8 [fd00::2]:40001 [::1]:443 up 0 %s\n"
	    "stream 8 [fd00::2]:40001 [::1]:443 down 0 %s\n"
	    "stream - 10.0.2.100:40000 127.0.0.1:8080 up 0 %s\n"
	    "stream - 10.0.2.100:40000 127.0.0.1:8080 down 0 %s\n",
	    strlen(up), hu, strlen(down1), hd, he, he, he, he);
	buf_init(&b, 1 << 20, 0);
	assert_int_equal(launch_record_streams(path, &b, err, sizeof(err)), 0);
	assert_string_equal(b.p, want);
	buf_free(&b);
	unlink(path);
}

/* A session folder: recording/capture.pcapng, audit.jsonl, record. */
static void
make_session(char *sess, size_t len)
{
	char	 path[PATH_MAX], cap[PATH_MAX], err[256];

	snprintf(sess, len, "%s/sess", tmpdir);
	assert_int_equal(mkdir(sess, 0700), 0);
	assert_int_equal(launch_record_prepare(sess, cap, sizeof(cap), err,
	    sizeof(err)), 0);
	/* a second prepare never reuses the folder */
	assert_int_equal(launch_record_prepare(sess, path, sizeof(path), err,
	    sizeof(err)), -1);
	write_capture(cap, 0);
	snprintf(path, sizeof(path), "%s/audit.jsonl", sess);
	assert_int_equal(file_write_atomic(path, "{\"conn\":7}\n", 11, 0600,
	    (gid_t)-1), 0);
	snprintf(path, sizeof(path), "%s/record", sess);
	assert_int_equal(file_write_atomic(path, "exit 0\n", 7, 0600,
	    (gid_t)-1), 0);
}

static void
rm_session(const char *sess)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/recording/capture.pcapng", sess);
	unlink(path);
	snprintf(path, sizeof(path), "%s/recording/manifest", sess);
	unlink(path);
	snprintf(path, sizeof(path), "%s/recording", sess);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/audit.jsonl", sess);
	unlink(path);
	snprintf(path, sizeof(path), "%s/record", sess);
	unlink(path);
	rmdir(sess);
}

/* verify's output, into out; its return */
static int
verify(const char *sess, char *out, size_t len)
{
	char	 err[512];
	FILE	*f = fmemopen(out, len, "w");
	int	 rc;

	assert_non_null(f);
	rc = launch_record_verify(sess, f, err, sizeof(err));
	fclose(f);
	if (rc == -1)
		snprintf(out, len, "error: %s", err);
	return rc;
}

static void
verify_catches_edits_and_cuts(void **state)
{
	char		 sess[256], cap[PATH_MAX], path[PATH_MAX];
	char		 out[8192], err[256], c;
	struct stat	 st;
	int		 fd;

	(void)state;
	make_session(sess, sizeof(sess));
	snprintf(cap, sizeof(cap), "%s/recording/capture.pcapng", sess);

	/* no manifest yet: an error (78 for the command) */
	assert_int_equal(verify(sess, out, sizeof(out)), -1);
	assert_non_null(strstr(out, "no manifest"));

	assert_int_equal(launch_record_write_manifest(sess, err,
	    sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/recording/manifest", sess);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(verify(sess, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "verified: 9 files and streams match"));

	/* one byte of the response edited: the file and its stream */
	assert_true((fd = open(cap, O_RDWR)) != -1);
	assert_int_equal(stat(cap, &st), 0);
	/* the 4th packet's payload: find "200" in the file */
	{
		char	*all = malloc((size_t)st.st_size), *hit;

		assert_non_null(all);
		assert_int_equal(pread(fd, all, (size_t)st.st_size, 0),
		    st.st_size);
		hit = memmem(all, (size_t)st.st_size, "200 OK", 6);
		assert_non_null(hit);
		c = '3';
		assert_int_equal(pwrite(fd, &c, 1, hit - all), 1);
		assert_int_equal(verify(sess, out, sizeof(out)), 1);
		assert_non_null(strstr(out, "changed: file recording/capture."
		    "pcapng"));
		assert_non_null(strstr(out, "changed: stream 7 10.0.2.100:40000 "
		    "127.0.0.1:8080 down: was "));
		assert_null(strstr(out, "stream 7 10.0.2.100:40000 "
		    "127.0.0.1:8080 up"));
		/* put back: all match again */
		c = '2';
		assert_int_equal(pwrite(fd, &c, 1, hit - all), 1);
		free(all);
	}
	close(fd);
	assert_int_equal(verify(sess, out, sizeof(out)), 0);

	/* cut inside the last block: the file and the last stream */
	assert_int_equal(truncate(cap, st.st_size - 50), 0);
	assert_int_equal(verify(sess, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "changed: file recording/capture.pcapng"));
	assert_non_null(strstr(out, "missing: stream - 10.0.2.100:40000 "
	    "127.0.0.1:8080 up"));

	/* cut inside the headers: unreadable, and the files still named */
	assert_int_equal(truncate(cap, 30), 0);
	assert_int_equal(verify(sess, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "changed: file recording/capture.pcapng"));

	/* the decision log gone: missing, by name */
	snprintf(path, sizeof(path), "%s/audit.jsonl", sess);
	unlink(path);
	assert_int_equal(verify(sess, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "missing: file audit.jsonl: 11 "));

	/* a manifest edited into something else: an error, not a pass */
	snprintf(path, sizeof(path), "%s/recording/manifest", sess);
	assert_int_equal(file_write_atomic(path, "rm -rf /\n", 9, 0600,
	    (gid_t)-1), 0);
	assert_int_equal(verify(sess, out, sizeof(out)), -1);
	assert_non_null(strstr(out, "manifest:1: not a manifest line"));
	rm_session(sess);
}

static void
show_says_what_there_is(void **state)
{
	char	 sess[256], out[4096], err[256];
	FILE	*f;

	(void)state;
	make_session(sess, sizeof(sess));
	assert_non_null(f = fmemopen(out, sizeof(out), "w"));
	launch_record_show(sess, f);
	fclose(f);
	assert_non_null(strstr(out, "recording_file recording/capture.pcapng "));
	assert_non_null(strstr(out, "recording_file audit.jsonl 11 bytes\n"));
	assert_non_null(strstr(out, "recording_manifest none"));
	assert_int_equal(launch_record_write_manifest(sess, err,
	    sizeof(err)), 0);
	assert_non_null(f = fmemopen(out, sizeof(out), "w"));
	launch_record_show(sess, f);
	fclose(f);
	assert_non_null(strstr(out, "/recording/manifest "));
	rm_session(sess);

	assert_int_equal(mkdir(sess, 0700), 0);
	assert_non_null(f = fmemopen(out, sizeof(out), "w"));
	launch_record_show(sess, f);
	fclose(f);
	assert_non_null(strstr(out, "recording none"));
	rmdir(sess);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_record.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reader_reads_what_the_writer_wrote),
		cmocka_unit_test(reader_bounds_and_cut),
		cmocka_unit_test(streams_hash_each_direction),
		cmocka_unit_test(verify_catches_edits_and_cuts),
		cmocka_unit_test(show_says_what_there_is),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
