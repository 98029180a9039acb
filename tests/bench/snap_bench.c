/*
 * snap_bench: the snapshot library on a tree like a mid-sized repository
 * (docs/performance.md, "Snapshot sessions").  Makes FILES files of BYTES
 * bytes in all (default 10,000 and 200 MB: 9,990 small files in 100
 * folders and 10 large ones), then ROUNDS times: stage it (timed), change
 * 1% of its files in the stage (modify, create, delete), compute the
 * change set (timed), apply it with its transaction (timed), remove the
 * stage and the transaction.  Prints min..max of each.
 *
 *   snap_bench [-d DIR] [-f FILES] [-m MB] [-r ROUNDS]
 *
 * DIR (default $TMPDIR or /tmp) must have room for three copies.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "snap/snap.h"

#define LARGE	10

/* snprintf that never cuts silently */
#define xsnprintf(b, n, ...) do {					\
	if (snprintf((b), (n), __VA_ARGS__) >= (int)(n))		\
		die("path", "too long");				\
} while (0)

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this process: on a shared machine the wall clock
 * also counts the time others had the cores */
static double
cpu(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
die(const char *what, const char *err)
{
	fprintf(stderr, "snap_bench: %s: %s\n", what, err);
	exit(1);
}

static void
write_file(const char *path, size_t size, unsigned seed)
{
	static char	buf[1 << 16];
	size_t		i, n;
	int		fd;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + (i * 7 + seed) % 26);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		die(path, strerror(errno));
	for (; size > 0; size -= n) {
		n = size < sizeof(buf) ? size : sizeof(buf);
		if (write(fd, buf, n) != (ssize_t)n)
			die(path, strerror(errno));
	}
	close(fd);
}

static void
make_tree(const char *root, long files, uint64_t bytes)
{
	char		path[4096];
	long		i, small = files - LARGE;
	uint64_t	large = bytes / 2 / LARGE, each = bytes / 2 / (uint64_t)small;

	if (mkdir(root, 0755) == -1)
		die(root, strerror(errno));
	for (i = 0; i < 100; i++) {
		xsnprintf(path, sizeof(path), "%s/d%02ld", root, i);
		if (mkdir(path, 0755) == -1)
			die(path, strerror(errno));
	}
	for (i = 0; i < small; i++) {
		xsnprintf(path, sizeof(path), "%s/d%02ld/f%05ld.c", root, i % 100,
		    i);
		write_file(path, (size_t)each, (unsigned)i);
	}
	for (i = 0; i < LARGE; i++) {
		xsnprintf(path, sizeof(path), "%s/large%ld.bin", root, i);
		write_file(path, (size_t)large, (unsigned)i);
	}
}

/* 1% of the files: a third modified, a third created, a third deleted. */
static void
agent(const char *stage, long files, int round)
{
	char	path[4096];
	long	i, n = files / 100 / 3;

	for (i = 0; i < n; i++) {
		xsnprintf(path, sizeof(path), "%s/d%02ld/f%05ld.c", stage,
		    (i * 3) % 100, i * 3);
		write_file(path, 5000, (unsigned)(round * 1000 + i));
		xsnprintf(path, sizeof(path), "%s/d%02ld/new%d-%05ld.c", stage,
		    i % 100, round, i);
		write_file(path, 3000, (unsigned)i);
		xsnprintf(path, sizeof(path), "%s/d%02ld/f%05ld.c", stage,
		    (i * 3 + 1) % 100, i * 3 + 1 + (long)round * 3000);
		(void)unlink(path);
	}
}

struct range {
	double	min, max;
};

static void
note(struct range *r, double v, int first)
{
	if (first || v < r->min)
		r->min = v;
	if (first || v > r->max)
		r->max = v;
}

int
main(int argc, char **argv)
{
	const char		*dir = getenv("TMPDIR");
	long			 files = 10000, rounds = 3, mb = 200;
	char			 base[4096], src[4096], stage[4096], tx[4096];
	char			 err[1024];
	struct snap_rules	*rules;
	struct snap_limits	 lim;
	struct snap_manifest	*m;
	struct snap_changes	*c;
	struct snap_stage_stats	 st;
	struct range		 rs = { 0, 0 }, rc = { 0, 0 }, ra = { 0, 0 };
	struct range		 cs = { 0, 0 }, cc = { 0, 0 }, ca = { 0, 0 };
	double			 t0, c0;
	long			 r;
	int			 ch;

	while ((ch = getopt(argc, argv, "d:f:m:r:")) != -1) {
		switch (ch) {
		case 'd':
			dir = optarg;
			break;
		case 'f':
			files = atol(optarg);
			break;
		case 'm':
			mb = atol(optarg);
			break;
		case 'r':
			rounds = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: snap_bench [-d DIR] [-f FILES] "
			    "[-m MB] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (files < 1000 || mb < 1 || rounds < 1)
		die("options", "at least 1000 files, 1 MB, 1 round");
	xsnprintf(base, sizeof(base), "%s/snap_bench.XXXXXX",
	    dir != NULL ? dir : "/tmp");
	if (mkdtemp(base) == NULL)
		die(base, strerror(errno));
	/* libaisbsnap refuses a link anywhere on a path: the real one */
	if (realpath(base, src) == NULL)
		die(base, strerror(errno));
	xsnprintf(base, sizeof(base), "%s", src);
	xsnprintf(src, sizeof(src), "%s/src", base);
	xsnprintf(stage, sizeof(stage), "%s/stage", base);
	xsnprintf(tx, sizeof(tx), "%s/tx", base);
	make_tree(src, files, (uint64_t)mb * 1000000);
	sync();
	rules = snap_rules_new();
	snap_limits_default(&lim);
	for (r = 0; r < rounds; r++) {
		t0 = now();
		c0 = cpu();
		if (snap_stage_create(src, stage, rules, &lim, &m, err,
		    sizeof(err)) != SNAP_OK)
			die("stage", err);
		note(&rs, now() - t0, r == 0);
		note(&cs, cpu() - c0, r == 0);
		snap_manifest_stats(m, &st);
		agent(stage, files, (int)r);
		t0 = now();
		c0 = cpu();
		if (snap_changes_compute(m, stage, rules, &lim, &c, err,
		    sizeof(err)) != SNAP_OK)
			die("changes", err);
		note(&rc, now() - t0, r == 0);
		note(&cc, cpu() - c0, r == 0);
		t0 = now();
		c0 = cpu();
		if (snap_tx_apply(tx, src, stage, m, c, err, sizeof(err)) !=
		    SNAP_OK)
			die("apply", err);
		note(&ra, now() - t0, r == 0);
		note(&ca, cpu() - c0, r == 0);
		printf("round %ld: %llu files, %.1f MB staged (%llu cloned); "
		    "%zu changes\n", r + 1, (unsigned long long)st.files,
		    (double)st.bytes / 1e6, (unsigned long long)st.cloned,
		    snap_changes_effective(c));
		snap_changes_free(c);
		snap_manifest_free(m);
		if (snap_tree_remove(stage, err, sizeof(err)) != SNAP_OK ||
		    snap_tree_remove(tx, err, sizeof(err)) != SNAP_OK)
			die("cleanup", err);
	}
	printf("stage:   %.3f .. %.3f s (cpu %.3f .. %.3f s)\n", rs.min,
	    rs.max, cs.min, cs.max);
	printf("changes: %.3f .. %.3f s (cpu %.3f .. %.3f s)\n", rc.min,
	    rc.max, cc.min, cc.max);
	printf("apply:   %.3f .. %.3f s (cpu %.3f .. %.3f s)\n", ra.min,
	    ra.max, ca.min, ca.max);
	snap_rules_free(rules);
	if (snap_tree_remove(base, err, sizeof(err)) != SNAP_OK)
		die("cleanup", err);
	return 0;
}
