/*
 * Undo (snap_tx_undo, snap.h; docs/snapshot.md, "Undo"): an applied
 * transaction taken back by a transaction of its own, in a new folder,
 * whose change set is the inverse of the one applied (a creation becomes
 * a delete, a delete a creation, a modification the modification back, a
 * mode the mode back) and whose new contents are the backups the applied
 * one made.  Everything else is apply's (tx.c): every target checked
 * first, now against what the transaction left there (a later edit on the
 * host is a conflict naming the file, and nothing is written), backups of
 * what it replaces, the journal, each target checked again at its write,
 * the crash points, and recovery (recover.c: an interrupted undo rolls
 * back to "applied").  The undo's folder names the one it undoes in its
 * file "undoes".
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"
#include "tx-int.h"

#define UNDOES_MAX	256	/* bytes of the "undoes" file */

static int
dup_link(char **dst, const char *src)
{
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) == NULL ? -1 : 0;
}

/* The inverse of c (its SKIPs left out), sorted, with its digest. */
static struct snap_changes *
inverse(const struct snap_changes *c)
{
	struct snap_changes	*inv;
	const struct snap_chg	*x;
	struct snap_chg		*y;
	size_t			 i;
	int			 kind;

	if ((inv = calloc(1, sizeof(*inv))) == NULL)
		return NULL;
	for (i = 0; i < c->n; i++) {
		x = &c->v[i];
		switch (x->pub.kind) {
		case SNAP_CREATE:
			kind = SNAP_DELETE;
			break;
		case SNAP_DELETE:
			kind = SNAP_CREATE;
			break;
		case SNAP_MODIFY:
		case SNAP_MODE:
			kind = x->pub.kind;
			break;
		default:
			continue;
		}
		if ((y = snap_changes_add(inv, kind, x->pub.type, x->path)) ==
		    NULL)
			goto fail;
		y->pub.old_mode = x->pub.new_mode;
		y->pub.new_mode = x->pub.old_mode;
		y->pub.old_size = x->pub.new_size;
		y->pub.new_size = x->pub.old_size;
		memcpy(y->old_sha, x->new_sha, sizeof(y->old_sha));
		memcpy(y->new_sha, x->old_sha, sizeof(y->new_sha));
		if (dup_link(&y->old_link, x->new_link) == -1 ||
		    dup_link(&y->new_link, x->old_link) == -1)
			goto fail;
	}
	if (snap_changes_finish(inv) == -1)
		goto fail;
	return inv;
fail:
	snap_changes_free(inv);
	return NULL;
}

int
snap_tx_undo(const char *undo_dir, const char *tx_dir, const char *host_root,
    char *err, size_t errlen)
{
	struct tx		 t;
	struct jstate		 js;
	struct snap_changes	*c = NULL, *inv = NULL;
	char			 path[SNAP_PATH_MAX];
	const char		*name;
	int			 rc;

	if ((rc = snap_tx_read_journal(tx_dir, &js, err, errlen)) != SNAP_OK)
		return rc;
	if (js.state != SNAP_TX_APPLIED)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: %s, not applied: "
		    "nothing to undo", tx_dir, snap_tx_state_name(js.state));
	if (snap_join(path, tx_dir, "changes") == -1)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: path too long",
		    tx_dir);
	if ((rc = snap_changes_load(path, &c, err, errlen)) != SNAP_OK)
		return rc;
	if (strcmp(c->digest, js.digest) != 0) {
		rc = snap_err(err, errlen, SNAP_EINVAL, "%s: the change set is "
		    "not the one the journal names", path);
		goto out;
	}
	if ((inv = inverse(c)) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "out of memory");
		goto out;
	}
	name = strrchr(tx_dir, '/') != NULL ? strrchr(tx_dir, '/') + 1 :
	    tx_dir;
	snap_tx_open(&t, undo_dir, host_root, NULL, err, errlen);
	t.c = inv;
	t.src_dir = tx_dir;
	t.src_c = c;
	rc = snap_tx_run(&t, name);
	snap_tx_close(&t);
out:
	snap_changes_free(inv);
	snap_changes_free(c);
	return rc;
}

int
snap_tx_undoes(const char *tx_dir, char *name, size_t len)
{
	char	 path[SNAP_PATH_MAX], *text;
	size_t	 n;

	if (snap_join(path, tx_dir, "undoes") == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((text = snap_file_read(path, UNDOES_MAX, &n)) == NULL)
		return errno == ENOENT ? 0 : -1;
	n = strcspn(text, "\n");
	if (n == 0 || n >= len || strchr(text, '/') != NULL) {
		free(text);
		errno = EINVAL;
		return -1;
	}
	memcpy(name, text, n);
	name[n] = '\0';
	free(text);
	return 1;
}
