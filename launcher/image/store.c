/*
 * The store of aisb's images: what is there (one cached `podman images`
 * listing answers an ensure's questions), the last use of each (a file
 * per image under the state folder), their rows from podman, the listing
 * of aisb image ls, the newest built version of an npm tool, and aisb
 * clean --images.  The images themselves are made by image.c, base.c and
 * layer.c.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/cache.h"
#include "host/paths.h"
#include "image/image-t.h"
#include "image/image-int.h"
#include "host/proc.h"
#include "file.h"
#include "image/names.h"
#include "image/store.h"
#include "log.h"

extern char **environ;

/*
 * One `podman images` answers every existence and id question of an
 * ensure (the base, the offline base, the image) instead of one podman
 * run each, about 0.25 s apiece; and that listing is kept in the cache
 * for as long as the store's image list is the same file (cache.h), so
 * that a session whose image exists asks podman nothing.  Only fully
 * qualified references are looked up in it (podman lists those);
 * anything else, a listing that did not fit, and everything after a
 * build or pull (list_drop) asks podman directly.
 */
#define IMAGE_LIST_MAX	(1024 * 1024)

static struct {
	char	*text;		/* "REPO:TAG sha256:ID\n" lines */
	int	 tried;
} image_list;

void
image_list_drop(void)
{
	free(image_list.text);
	image_list.text = NULL;
	image_list.tried = 1;	/* stale now: podman is asked directly */
}


/* Forgets the listing; the next question lists again. */
void
image_list_reset(void)
{
	free(image_list.text);
	image_list.text = NULL;
	image_list.tried = 0;
}


/* The listed line of ref, or NULL (not listed, or no listing to use). */
static const char *
list_find(const char *ref, int *usable)
{
	char		 err[256], podman[PATH_MAX];
	const char	*line, *slash = strchr(ref, '/');
	size_t		 rl = strlen(ref), n;

	*usable = 0;
	/* registry/repo:tag, as podman lists it; no digests, no short names */
	if (slash == NULL || strchr(slash, ':') == NULL ||
	    strchr(ref, '@') != NULL || strchr(ref, ' ') != NULL)
		return NULL;
	if (!image_list.tried) {
		image_list.tried = 1;
		if ((image_list.text = malloc(IMAGE_LIST_MAX)) != NULL &&
		    (launch_find_program("podman", podman,
		    sizeof(podman)) == -1 ||
		    launch_cache_images(podman, environ, image_list.text,
		    IMAGE_LIST_MAX, err, sizeof(err)) == -1)) {
			free(image_list.text);	/* failed or did not fit */
			image_list.text = NULL;
		}
	}
	if (image_list.text == NULL)
		return NULL;
	*usable = 1;
	for (line = image_list.text; *line != '\0'; line += n + 1) {
		n = strcspn(line, "\n");
		if (n > rl && strncmp(line, ref, rl) == 0 && line[rl] == ' ')
			return line;
		if (line[n] == '\0')
			break;
	}
	return NULL;
}


/* 1 when the image exists locally, 0 when not, -1 when podman failed. */
int
image_exists(const char *ref, char *err, size_t errlen)
{
	char *const	argv[] = { "podman", "image", "exists", (char *)ref,
	    NULL };
	int		rc, usable;

	if (list_find(ref, &usable) != NULL)
		return 1;
	if (usable) {
		if (errlen > 0)
			err[0] = '\0';
		return 0;
	}

	rc = launch_exec(argv, NULL, 0, NULL, 0, LAUNCH_QUICK_TIMEOUT_MS, 0,
	    err, errlen);
	if (rc == 0)
		return 1;
	if (rc == 1) {
		if (errlen > 0)
			err[0] = '\0';
		return 0;
	}
	if (rc > 1)
		snprintf(err, errlen, "podman image exists %s: status %d",
		    ref, rc);
	return -1;
}


/* The image's full id (64 hex digits) into id[65].  0 or -1. */
int
image_id(const char *ref, char id[65], char *err, size_t errlen)
{
	char *const	argv[] = { "podman", "image", "inspect", "--format",
	    "{{.Id}}", (char *)ref, NULL };
	char		out[128];
	const char	*line, *sp;
	size_t		i;
	int		usable;

	if ((line = list_find(ref, &usable)) != NULL &&
	    (sp = strchr(line, ' ')) != NULL &&
	    strncmp(sp + 1, "sha256:", 7) == 0) {
		snprintf(out, sizeof(out), "%.64s", sp + 8);
	} else if (launch_run_quiet(argv, out, sizeof(out),
	    LAUNCH_QUICK_TIMEOUT_MS, 0, err, errlen) == -1)
		return -1;
	for (i = 0; i < 64; i++)
		if (!((out[i] >= '0' && out[i] <= '9') ||
		    (out[i] >= 'a' && out[i] <= 'f')))
			break;
	if (i != 64 || (out[64] != '\n' && out[64] != '\0')) {
		snprintf(err, errlen, "podman image inspect %s: not an image "
		    "id", ref);
		return -1;
	}
	memcpy(id, out, 64);
	id[64] = '\0';
	return 0;
}

#define IMAGE_LS_MAX	(512u * 1024)	/* bytes of podman's listing */
#define IMAGE_ROWS_MAX	1024		/* aisb images judged at once */
#define NO_VALUE	"<no value>"	/* podman's text for a missing label */
#define SANDBOXES_LISTED 4		/* images doctor names */

/* $XDG_STATE_HOME/aisb/images/<16 hex of tag> into path.  0 or -1. */
static int
used_path(const char *tag, char *path, size_t len)
{
	char		 dir[PATH_MAX];
	const char	*hex;
	size_t		 i;

	if (strncmp(tag, LAUNCH_IMAGE_REPO ":", strlen(LAUNCH_IMAGE_REPO) +
	    1) != 0)
		return -1;
	hex = tag + strlen(LAUNCH_IMAGE_REPO) + 1;
	for (i = 0; hex[i] != '\0'; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') ||
		    (hex[i] >= 'a' && hex[i] <= 'f')))
			return -1;
	if (i != LAUNCH_IMAGE_HASHLEN ||
	    launch_state_dir(environ, dir, sizeof(dir)) == -1)
		return -1;
	i = (size_t)snprintf(path, len, "%s/images/%s", dir, hex);
	return i >= len ? -1 : 0;
}

void
launch_image_mark_used(const char *tag)
{
	char	path[PATH_MAX], *slash;
	int	fd;

	if (used_path(tag, path, sizeof(path)) == -1)
		return;
	slash = strrchr(path, '/');
	*slash = '\0';
	if (launch_mkdirs(path) == -1)
		return;
	*slash = '/';
	/* best effort: an image never marked counts from its creation */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) != -1) {
		(void)futimens(fd, NULL);
		close(fd);
	}
}

/* When a session last used tag, or 0 when none is known. */
static time_t
last_used(const char *tag)
{
	struct stat	st;
	char		path[PATH_MAX];

	if (used_path(tag, path, sizeof(path)) == -1 ||
	    stat(path, &st) == -1)
		return 0;
	return st.st_mtime;
}

static void
forget_used(const char *tag)
{
	char	path[PATH_MAX];

	if (used_path(tag, path, sizeof(path)) == 0)
		(void)unlink(path);
}

struct img_row {
	const char	*tag, *kind, *base, *packages, *npm, *pip;
	time_t		 created, used;
	unsigned long long size;
	int		 removed;
};

/* "2026-12-01 00:11:22 +0000 UTC" (podman's CreatedAt) into a time_t. */
static time_t
parse_created(const char *s)
{
	struct tm	tm;

	memset(&tm, 0, sizeof(tm));
	if (strptime(s, "%Y-%m-%d %H:%M:%S %z", &tm) == NULL)
		return 0;
	return timegm(&tm) - tm.tm_gmtoff;
}

/*
 * aisb's images from one podman images, into rows pointing into text
 * (which the caller frees).  The count, or -1 with a message on stderr.
 */
static int
list_rows(char **textp, struct img_row *rows)
{
	char *const	 argv[] = { "podman", "images", "--filter",
	    "label=" LAUNCH_LABEL_MANAGED "=1", "--format",
	    "{{.Repository}}:{{.Tag}}\t{{.CreatedAt}}\t{{.VirtualSize}}\t"
	    "{{index .Labels \"" LAUNCH_LABEL_KIND "\"}}\t"
	    "{{index .Labels \"" LAUNCH_LABEL_BASE "\"}}\t"
	    "{{index .Labels \"" LAUNCH_LABEL_PACKAGES "\"}}\t"
	    "{{index .Labels \"" LAUNCH_LABEL_NPM "\"}}\t"
	    "{{index .Labels \"" LAUNCH_LABEL_PIP "\"}}", NULL };
	char		*text, *line, *save = NULL, *f[8], *p;
	char		 err[256];
	int		 n = 0, k;

	if ((text = malloc(IMAGE_LS_MAX)) == NULL) {
		log_warn("podman images");
		return -1;
	}
	if (launch_exec(argv, NULL, 0, text, IMAGE_LS_MAX,
	    LAUNCH_QUICK_TIMEOUT_MS, 0, err, sizeof(err)) != 0) {
		log_warnx("podman images: %s", err);
		free(text);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL &&
	    n < IMAGE_ROWS_MAX; line = strtok_r(NULL, "\n", &save)) {
		for (k = 0, p = line; k < 8; k++) {
			f[k] = p;
			if (k < 7) {
				if ((p = strchr(p, '\t')) == NULL)
					break;
				*p++ = '\0';
			}
		}
		/* untagged leftovers are podman's to prune, not ours */
		if (k < 8 || strstr(f[0], "<none>") != NULL)
			continue;
		memset(&rows[n], 0, sizeof(rows[n]));
		rows[n].tag = f[0];
		rows[n].created = parse_created(f[1]);
		rows[n].size = strtoull(f[2], NULL, 10);
		rows[n].kind = f[3];
		rows[n].base = strcmp(f[4], NO_VALUE) == 0 ? "" : f[4];
		rows[n].packages = strcmp(f[5], NO_VALUE) == 0 ? "" : f[5];
		rows[n].npm = strcmp(f[6], NO_VALUE) == 0 ? "" : f[6];
		rows[n].pip = strcmp(f[7], NO_VALUE) == 0 ? "" : f[7];
		rows[n].used = last_used(f[0]);
		n++;
	}
	*textp = text;
	return n;
}

static void
fmt_age(char *buf, size_t len, time_t now, time_t t)
{
	long long	d = (long long)(now - t);

	if (t == 0)
		snprintf(buf, len, "never");
	else if (d < 120)
		snprintf(buf, len, "%llds ago", d < 0 ? 0 : d);
	else if (d < 7200)
		snprintf(buf, len, "%lldm ago", d / 60);
	else if (d < 2 * 86400)
		snprintf(buf, len, "%lldh ago", d / 3600);
	else
		snprintf(buf, len, "%lldd ago", d / 86400);
}

static void
fmt_size(char *buf, size_t len, unsigned long long b)
{
	if (b >= 1000ULL * 1000 * 1000)
		snprintf(buf, len, "%.1fGB", (double)b / 1e9);
	else
		snprintf(buf, len, "%lluMB", (b + 500000) / 1000000);
}

static const struct img_row *
find_row(const struct img_row *rows, int n, const char *tag)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(rows[i].tag, tag) == 0)
			return &rows[i];
	return NULL;
}

/*
 * One line per image: its tag, kind, the packages it adds, its size
 * (with what it adds over its base, whose layers it shares), when it was
 * built and when a session last used it.
 */
int
launch_image_ls(void)
{
	struct img_row		*rows;
	const struct img_row	*b;
	char			*text = NULL, age[32], used[32], size[32];
	char			 own[32];
	time_t			 now = time(NULL);
	int			 n, i;

	if ((rows = calloc(IMAGE_ROWS_MAX, sizeof(*rows))) == NULL) {
		log_warn("image ls");
		return -1;
	}
	if ((n = list_rows(&text, rows)) == -1) {
		free(rows);
		return -1;
	}
	printf("%-36s %-7s %-8s %-8s %-9s %-9s %s\n", "TAG", "KIND", "SIZE",
	    "OWN", "CREATED", "LAST USE", "PACKAGES");
	for (i = 0; i < n; i++) {
		fmt_size(size, sizeof(size), rows[i].size);
		b = rows[i].base[0] != '\0' ? find_row(rows, n, rows[i].base) :
		    NULL;
		if (b != NULL && rows[i].size >= b->size)
			fmt_size(own, sizeof(own), rows[i].size - b->size);
		else if (strcmp(rows[i].kind, "base") == 0)
			snprintf(own, sizeof(own), "%s", size);
		else	/* built before the io.aisb.base label, or base gone */
			snprintf(own, sizeof(own), "-");
		fmt_age(age, sizeof(age), now, rows[i].created);
		if (strcmp(rows[i].kind, "sandbox") == 0)
			fmt_age(used, sizeof(used), now, rows[i].used);
		else
			snprintf(used, sizeof(used), "-");
		printf("%-36s %-7s %-8s %-8s %-9s %-9s %s%s%s%s%s\n",
		    rows[i].tag, rows[i].kind, size, own, age, used,
		    rows[i].packages[0] != '\0' ? rows[i].packages : "-",
		    rows[i].npm[0] != '\0' ? " npm:" : "", rows[i].npm,
		    rows[i].pip[0] != '\0' ? " pip:" : "", rows[i].pip);
	}
	free(text);
	free(rows);
	return 0;
}

/*
 * The sandbox images of the store, the one sessions used last first
 * (its last use, else when it was built).  Lists at most a few, each with
 * its packages, into list.
 */
int
launch_image_sandboxes(char *tag, size_t taglen, char *list, size_t listlen)
{
	struct img_row	*rows;
	char		*text = NULL;
	time_t		 ti, tb = 0;
	size_t		 off = 0;
	int		 n, i, best = -1, count = 0, k;

	tag[0] = list[0] = '\0';
	if ((rows = calloc(IMAGE_ROWS_MAX, sizeof(*rows))) == NULL)
		return -1;
	if ((n = list_rows(&text, rows)) == -1) {
		free(rows);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].kind, "sandbox") != 0)
			continue;
		count++;
		ti = rows[i].used != 0 ? rows[i].used : rows[i].created;
		if (best == -1 || ti > tb) {
			best = i;
			tb = ti;
		}
	}
	if (best != -1 && strlen(rows[best].tag) < taglen)
		snprintf(tag, taglen, "%s", rows[best].tag);
	for (i = 0, k = 0; i < n && off < listlen; i++) {
		if (strcmp(rows[i].kind, "sandbox") != 0)
			continue;
		if (k++ == SANDBOXES_LISTED) {
			snprintf(list + off, listlen - off, ", and %d more",
			    count - SANDBOXES_LISTED);
			break;
		}
		off += (size_t)snprintf(list + off, listlen - off,
		    "%s%s (%s%s%s%s%s)", k > 1 ? ", " : "", rows[i].tag,
		    rows[i].packages[0] != '\0' ? rows[i].packages :
		    "no package", rows[i].npm[0] != '\0' ? " npm:" : "",
		    rows[i].npm, rows[i].pip[0] != '\0' ? " pip:" : "",
		    rows[i].pip);
	}
	free(text);
	free(rows);
	return tag[0] != '\0' ? count : 0;
}

int
launch_image_npm_built(const char *name, char *ver, size_t len)
{
	char *const	 argv[] = { "podman", "images", "--sort", "created",
	    "--filter", "label=" LAUNCH_LABEL_MANAGED "=1", "--format",
	    "{{index .Labels \"" LAUNCH_LABEL_NPM "\"}}", NULL };
	char		*text, err[256], *line, *save = NULL, *e, *esave;
	size_t		 nlen = strlen(name);
	int		 found = 0;

	if ((text = malloc(IMAGE_LS_MAX)) == NULL)
		return 0;
	if (launch_exec(argv, NULL, 0, text, IMAGE_LS_MAX,
	    LAUNCH_QUICK_TIMEOUT_MS, 0, err, sizeof(err)) != 0) {
		free(text);
		return 0;
	}
	/* newest first (podman's --sort created): the first match wins */
	for (line = strtok_r(text, "\n", &save); line != NULL && !found;
	    line = strtok_r(NULL, "\n", &save)) {
		esave = NULL;
		for (e = strtok_r(line, ",", &esave); e != NULL;
		    e = strtok_r(NULL, ",", &esave))
			if (strncmp(e, name, nlen) == 0 && e[nlen] == '@' &&
			    launch_npm_version_ok(e + nlen + 1) &&
			    strlen(e + nlen + 1) < len) {
				snprintf(ver, len, "%s", e + nlen + 1);
				found = 1;
				break;
			}
	}
	free(text);
	return found;
}

/* podman rmi without --force: podman keeps what a container uses. */
static int
rmi(const char *tag, char *err, size_t errlen)
{
	char *const	argv[] = { "podman", "rmi", (char *)tag, NULL };

	return launch_exec(argv, NULL, 0, NULL, 0, LAUNCH_QUICK_TIMEOUT_MS, 0,
	    err, errlen) == 0 ? 0 : -1;
}

int
launch_image_clean(long long older_than, size_t *nremoved)
{
	struct img_row	*rows;
	char		*text = NULL, err[512], age[32];
	time_t		 now = time(NULL), last;
	int		 n, i, j, rc = 0, unlabelled = 0, needed;

	*nremoved = 0;
	if ((rows = calloc(IMAGE_ROWS_MAX, sizeof(*rows))) == NULL) {
		log_warn("clean --images");
		return -1;
	}
	if ((n = list_rows(&text, rows)) == -1) {
		free(rows);
		return -1;
	}
	/* 1. sandbox images no session used for older_than */
	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].kind, "sandbox") != 0)
			continue;
		last = rows[i].used != 0 ? rows[i].used : rows[i].created;
		if (now - last < older_than) {
			if (rows[i].base[0] == '\0')
				unlabelled = 1;
			continue;
		}
		fmt_age(age, sizeof(age), now, rows[i].used);
		if (rmi(rows[i].tag, err, sizeof(err)) == -1) {
			printf("kept image %s: %s\n", rows[i].tag,
			    strstr(err, "in use by a container") != NULL ?
			    "a container uses it" : err);
			if (rows[i].base[0] == '\0')
				unlabelled = 1;
			continue;
		}
		rows[i].removed = 1;
		forget_used(rows[i].tag);
		printf("removed image %s (last used: %s)\n", rows[i].tag, age);
		(*nremoved)++;
	}
	/*
	 * 2. bases no kept image is built on.  podman itself would remove
	 * a base that images were built on (they share its layers, but it
	 * does not count them as children), so aisb counts: a kept image
	 * from before the io.aisb.base label keeps every base.
	 */
	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].kind, "base") != 0)
			continue;
		needed = unlabelled;
		for (j = 0; j < n && !needed; j++)
			if (!rows[j].removed &&
			    strcmp(rows[j].kind, "sandbox") == 0 &&
			    strcmp(rows[j].base, rows[i].tag) == 0)
				needed = 1;
		if (needed || now - rows[i].created < older_than)
			continue;
		if (rmi(rows[i].tag, err, sizeof(err)) == -1) {
			printf("kept base %s: %s\n", rows[i].tag, err);
			continue;
		}
		printf("removed base %s: no kept image is built on it\n",
		    rows[i].tag);
		(*nremoved)++;
	}
	free(text);
	free(rows);
	return rc;
}
