/*
 * A draft's state file (draft-int.h): SESSION/snapshot, read and written
 * whole, and the snapshot rules it names.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "draft/draft-int.h"
#include "snap/fs.h"

/* sdir/name into out[DRAFT_PATH_MAX]: 0, or -1 (said) when too long. */
int
draft_path(char *out, const char *sdir, const char *name)
{
	int	 n;

	n = snprintf(out, DRAFT_PATH_MAX, "%s/%s", sdir, name);
	if (n < 0 || n >= DRAFT_PATH_MAX) {
		fprintf(stderr, "aisb: %s/%s: path too long\n", sdir, name);
		return -1;
	}
	return 0;
}


void
dstate_free(struct dstate *st)
{
	size_t	 i;

	if (!st->borrowed)
		for (i = 0; i < st->nexclude; i++)
			free(st->exclude[i]);
	st->nexclude = 0;
}


void
dstate_set(struct dstate *st, const char *state)
{
	snprintf(st->state, sizeof(st->state), "%s", state);
}


int
dstate_is(const struct dstate *st, const char *state)
{
	return strcmp(st->state, state) == 0;
}


int
dstate_save(const char *sdir, const struct dstate *st, char *err,
    size_t errlen)
{
	struct buf	 b;
	char		 path[DRAFT_PATH_MAX];
	size_t		 i;
	int		 rc = -1;

	if (snprintf(path, sizeof(path), "%s/snapshot", sdir) >=
	    (int)sizeof(path)) {
		snprintf(err, errlen, "%s/snapshot: path too long", sdir);
		return -1;
	}
	buf_init(&b, DRAFT_STATE_MAX, 0);
	buf_printf(&b, "# aisb snapshot state 1 (docs/snapshot.md)\n"
	    "workspace %s\nstage %s\nowner %u:%u\nstate %s\nexit %d\n"
	    "changes %llu\ndigest %s\ntx %u\nupdated %lld\n", st->workspace,
	    st->stage, st->owner_uid, st->owner_gid, st->state, st->exitcode,
	    st->nchanges, st->digest[0] != '\0' ? st->digest : "-", st->tx,
	    (long long)time(NULL));
	for (i = 0; i < st->nexclude; i++)
		buf_printf(&b, "exclude %s\n", st->exclude[i]);
	if (b.failed)
		snprintf(err, errlen, "%s: more than %d bytes, or out of "
		    "memory", path, DRAFT_STATE_MAX);
	else if (snap_file_write(path, b.p, b.len) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else
		rc = 0;
	buf_free(&b);
	return rc;
}


/* The state of the session in sdir.  0, or -1 with err (errno ENOENT: a
 * session that is not a snapshot session). */
int
dstate_load(const char *sdir, struct dstate *st, char *err, size_t errlen)
{
	char		*text, *line, *next, *v, path[DRAFT_PATH_MAX];
	size_t		 len;
	unsigned	 seen = 0;

	memset(st, 0, sizeof(*st));
	if (snprintf(path, sizeof(path), "%s/snapshot", sdir) >=
	    (int)sizeof(path)) {
		snprintf(err, errlen, "%s/snapshot: path too long", sdir);
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((text = snap_file_read(path, DRAFT_STATE_MAX, &len)) == NULL) {
		int	 e = errno;

		snprintf(err, errlen, "%s: %s", path, e == EFBIG ? "longer "
		    "than the state file may be" : strerror(e));
		errno = e;
		return -1;
	}
	for (line = text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (line[0] == '#' || (v = strchr(line, ' ')) == NULL)
			continue;
		*v++ = '\0';
		/* each of these once: a second would retarget the draft */
		if (strcmp(line, "workspace") == 0) {
			if ((seen & 1) || !draft_os_path_absolute(v))
				seen |= 8;
			snprintf(st->workspace, sizeof(st->workspace), "%s", v);
			seen |= 1;
		} else if (strcmp(line, "stage") == 0) {
			if ((seen & 2) || !draft_os_path_absolute(v))
				seen |= 8;
			snprintf(st->stage, sizeof(st->stage), "%s", v);
			seen |= 2;
		} else if (strcmp(line, "state") == 0) {
			if (seen & 4)
				seen |= 8;
			snprintf(st->state, sizeof(st->state), "%s", v);
			seen |= 4;
		} else if (strcmp(line, "owner") == 0)
			(void)sscanf(v, "%u:%u", &st->owner_uid, &st->owner_gid);
		else if (strcmp(line, "exit") == 0)
			st->exitcode = atoi(v);
		else if (strcmp(line, "changes") == 0)
			st->nchanges = strtoull(v, NULL, 10);
		else if (strcmp(line, "digest") == 0 &&
		    strlen(v) == SNAP_SHA256_HEX)
			snprintf(st->digest, sizeof(st->digest), "%s", v);
		else if (strcmp(line, "tx") == 0)
			st->tx = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(line, "exclude") == 0 &&
		    st->nexclude < DRAFT_MAX_EXCLUDE &&
		    (st->exclude[st->nexclude] = strdup(v)) != NULL)
			st->nexclude++;
	}
	free(text);
	if (seen != 7 || st->tx > DRAFT_MAX_TX) {
		snprintf(err, errlen, "%s: not a snapshot state (a workspace, "
		    "stage or state line missing, repeated or not absolute)",
		    path);
		dstate_free(st);
		errno = EINVAL;
		return -1;
	}
	return 0;
}


/* dstate_load, saying why on stderr: 0 or -1. */
int
dstate_load_said(const char *sdir, struct dstate *st)
{
	char	 err[DRAFT_PATH_MAX + 128];

	if (dstate_load(sdir, st, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a snapshot "
	    "session (aisb --snapshot makes one)" : err);
	return -1;
}


/* The default rules and the patterns the user configured. */
struct snap_rules *
draft_rules(char *const *exclude, size_t n, char *err, size_t errlen)
{
	struct snap_rules	*r;
	size_t			 i;

	if ((r = snap_rules_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (snap_rules_add(r, exclude[i], err, errlen) != SNAP_OK) {
			snap_rules_free(r);
			return NULL;
		}
	return r;
}
