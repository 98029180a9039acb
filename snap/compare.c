/*
 * The change set computed (snap_changes_compute, snap.h): the stage
 * walked and compared with the manifest made when it was staged, within
 * the limits (entries, bytes, depth); then the entries git's rules keep
 * from the host (docs/snapshot.md, "Exclusions"); then the manifest's
 * new hashes saved.  The change set itself is changes.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"

struct walk {
	struct snap_manifest		*m;
	const char			*stage;
	const struct snap_rules		*rules;
	const struct snap_limits	*lim;
	struct snap_changes		*c;
	unsigned char			*seen;	/* per manifest entry */
	uint64_t			 entries, bytes;
	char				*err;
	size_t				 errlen;
	char				 hooks[SNAP_REL_MAX];	/* core.hooksPath
							   inside the tree,
							   or "" */
};

static int
oom(struct walk *w)
{
	return snap_err(w->err, w->errlen, SNAP_ESYS, "changes: out of "
	    "memory");
}

static int
skip(struct walk *w, const char *rel, int type, const char *prefix,
    const char *why)
{
	struct snap_chg	*x;
	char		 r[256];

	if (prefix != NULL)
		snprintf(r, sizeof(r), "%s: %s", prefix, why);
	else
		snprintf(r, sizeof(r), "%s", why);
	if ((x = snap_changes_add(w->c, SNAP_SKIP, type, rel)) == NULL ||
	    (x->reason = strdup(r)) == NULL)
		return oom(w);
	return SNAP_OK;
}

static int
bounds(struct walk *w, const char *rel)
{
	return snap_bound_entry(w->lim, &w->entries, w->stage, rel,
	    " after the command", "nothing is proposed", w->err, w->errlen);
}

static int	walk_dir(struct walk *, const char *);

static int
file_bounds(struct walk *w, const char *rel, uint64_t size)
{
	if (size > w->lim->file_bytes)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s/%s: %"
		    PRIu64 " bytes after the command, over %" PRIu64 " (limit "
		    "file_bytes): nothing is proposed", w->stage, rel, size,
		    w->lim->file_bytes);
	w->bytes += size;
	if (w->bytes > w->lim->bytes)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s: more "
		    "than %" PRIu64 " bytes of files after the command "
		    "(limit bytes): nothing is proposed", w->stage,
		    w->lim->bytes);
	return SNAP_OK;
}

/*
 * The permission bits written back for a stage entry of mode now whose
 * original had old (0 for a new one): the command's, but never write for
 * everyone unless the original had it: a world-writable file or folder
 * in the user's tree lets any local user change it.
 */
static uint32_t
back_mode(uint32_t now, uint32_t old)
{
	return (now & 0777) & ~(0002 & ~old);
}

/* A new entry of the stage (not in the manifest, or of another type). */
static int
created(struct walk *w, const char *rel, const char *full,
    const struct snap_stat *st)
{
	struct snap_chg	*x;
	char		 link[SNAP_LINK_MAX];
	const char	*why;
	int		 rc;

	if ((why = snap_rules_match_file(w->rules, rel, full,
	    st->type == SNAP_FS_DIR)) != NULL)
		return skip(w, rel, st->type == SNAP_FS_DIR ? SNAP_DIR :
		    SNAP_FILE, "excluded", why);
	switch (st->type) {
	case SNAP_FS_OTHER:
		return skip(w, rel, SNAP_SPECIAL, NULL, "special file");
	case SNAP_FS_LINK:
		if (snap_fs_readlink(full, link, sizeof(link)) == -1)
			return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s",
			    full, strerror(errno));
		if (!snap_link_inside(rel, link))
			return skip(w, rel, SNAP_LINK, NULL,
			    "link leaves the tree");
		if ((x = snap_changes_add(w->c, SNAP_CREATE, SNAP_LINK,
		    rel)) == NULL || (x->new_link = strdup(link)) == NULL)
			return oom(w);
		x->pub.new_mode = 0777;
		x->pub.new_size = strlen(link);
		return SNAP_OK;
	case SNAP_FS_DIR:
		if ((x = snap_changes_add(w->c, SNAP_CREATE, SNAP_DIR, rel)) ==
		    NULL)
			return oom(w);
		x->pub.new_mode = back_mode(st->mode, 0);
		return walk_dir(w, rel);
	case SNAP_FS_FILE:
		break;
	}
	if ((rc = file_bounds(w, rel, st->size)) != SNAP_OK)
		return rc;
	if ((x = snap_changes_add(w->c, SNAP_CREATE, SNAP_FILE, rel)) == NULL)
		return oom(w);
	if (snap_sha_file(full, x->new_sha, &x->pub.new_size) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	x->pub.new_mode = back_mode(st->mode, 0);
	return SNAP_OK;
}

static void
old_of(struct snap_chg *x, const struct snap_ment *e)
{
	x->pub.old_mode = e->pub.mode;
	x->pub.old_size = e->pub.size;
	memcpy(x->old_sha, e->sha, sizeof(x->old_sha));
}

/* The staged content's hash of file entry e, when it can be known (not
 * hashed at stage time: read from the source now, if unchanged since). */
static int
orig_hash(struct walk *w, struct snap_ment *e, int *known)
{
	int	r;

	*known = 1;
	if (e->pub.type != SNAP_FILE || e->sha[0] != '\0')
		return SNAP_OK;
	if ((r = snap_ment_hash(w->m, e)) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s/%s: %s",
		    w->m->source != NULL ? w->m->source : "?", e->path,
		    strerror(errno));
	*known = r == 0;
	return SNAP_OK;
}

static int
deleted(struct walk *w, struct snap_ment *e)
{
	struct snap_chg	*x;
	int		 rc, known;

	/* unknown (the source changed since): "-", a conflict at apply */
	if ((rc = orig_hash(w, e, &known)) != SNAP_OK)
		return rc;
	if ((x = snap_changes_add(w->c, SNAP_DELETE, e->pub.type,
	    e->path)) == NULL ||
	    (e->link != NULL && (x->old_link = strdup(e->link)) == NULL))
		return oom(w);
	old_of(x, e);
	return SNAP_OK;
}

static int
entry(struct walk *w, const char *rel)
{
	char			 full[SNAP_PATH_MAX], link[SNAP_LINK_MAX];
	char			 sha[SNAP_SHA256_HEX + 1];
	struct snap_stat	 st;
	struct snap_ment	*e;
	struct snap_chg		*x;
	const char		*why;
	uint64_t		 size;
	int			 rc, known, type;

	if ((rc = bounds(w, rel)) != SNAP_OK)
		return rc;
	if (snap_join(full, w->stage, rel) == -1)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s/%s: path "
		    "too long", w->stage, rel);
	if (snap_fs_lstat(full, &st) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	if ((e = snap_manifest_find(w->m, rel)) == NULL)
		return created(w, rel, full, &st);
	w->seen[e - w->m->v] = 1;
	if (e->excluded != NULL) {
		if (strcmp(e->excluded, "sanitized copy") == 0 &&
		    st.type == SNAP_FS_FILE && st.dev == e->stg.dev &&
		    st.ino == e->stg.ino && st.size == e->stg.size &&
		    st.mtime_ns == e->stg.mtime_ns &&
		    st.ctime_ns == e->stg.ctime_ns)
			return SNAP_OK;
		return skip(w, rel, e->pub.type, "excluded", e->excluded);
	}
	type = st.type == SNAP_FS_FILE ? SNAP_FILE : st.type == SNAP_FS_DIR ?
	    SNAP_DIR : st.type == SNAP_FS_LINK ? SNAP_LINK : SNAP_SPECIAL;
	if (type != (int)e->pub.type) {
		/* another type at the same path: the old one goes, the new
		 * one comes (a folder's entries go through the "not seen"
		 * pass) */
		if ((rc = deleted(w, e)) != SNAP_OK)
			return rc;
		return created(w, rel, full, &st);
	}
	switch (type) {
	case SNAP_DIR:
		if (back_mode(st.mode, e->pub.mode) != e->pub.mode) {
			if ((x = snap_changes_add(w->c, SNAP_MODE, SNAP_DIR,
			    rel)) == NULL)
				return oom(w);
			old_of(x, e);
			x->pub.new_mode = back_mode(st.mode, e->pub.mode);
		}
		return walk_dir(w, rel);
	case SNAP_LINK:
		if (snap_fs_readlink(full, link, sizeof(link)) == -1)
			return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s",
			    full, strerror(errno));
		if (strcmp(link, e->link) == 0)
			return SNAP_OK;
		if (!snap_link_inside(rel, link))
			return skip(w, rel, SNAP_LINK, NULL,
			    "link leaves the tree");
		if ((x = snap_changes_add(w->c, SNAP_MODIFY, SNAP_LINK,
		    rel)) == NULL || (x->old_link = strdup(e->link)) == NULL ||
		    (x->new_link = strdup(link)) == NULL)
			return oom(w);
		old_of(x, e);
		x->pub.new_mode = 0777;
		x->pub.new_size = strlen(link);
		return SNAP_OK;
	case SNAP_FILE:
		break;
	default:
		return skip(w, rel, SNAP_SPECIAL, NULL, "special file");
	}
	if ((rc = file_bounds(w, rel, st.size)) != SNAP_OK)
		return rc;
	/* the stage copy's identity unchanged: its content is too (a mode
	 * change moves the ctime) */
	if (snap_ident_is(&st, &e->stg) &&
	    back_mode(st.mode, e->pub.mode) == e->pub.mode)
		return SNAP_OK;
	if (snap_sha_file(full, sha, &size) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	/* the original's hash: from the manifest, else from the source if
	 * it is as staged; unknown, the file is proposed as modified with
	 * an unknown old side, which apply refuses as a conflict */
	if ((rc = orig_hash(w, e, &known)) != SNAP_OK)
		return rc;
	if (known && strcmp(sha, e->sha) == 0 &&
	    back_mode(st.mode, e->pub.mode) == e->pub.mode)
		return SNAP_OK;
	/* a change to a file the content rules now match is not taken */
	if ((why = snap_rules_match_file(w->rules, rel, full, 0)) != NULL)
		return skip(w, rel, SNAP_FILE, "excluded", why);
	if ((x = snap_changes_add(w->c, !known || strcmp(sha, e->sha) != 0 ?
	    SNAP_MODIFY : SNAP_MODE, SNAP_FILE, rel)) == NULL)
		return oom(w);
	old_of(x, e);
	x->pub.new_mode = back_mode(st.mode, e->pub.mode);
	x->pub.new_size = st.size;
	memcpy(x->new_sha, sha, sizeof(sha));
	return SNAP_OK;
}

static int
walk_dir(struct walk *w, const char *rel)
{
	char	 child[SNAP_PATH_MAX];
	char	**names;
	long	 n, i;
	int	 rc = SNAP_OK, len;

	if ((n = snap_list_dir(w->stage, rel, &names)) == -1)
		return snap_err(w->err, w->errlen, errno == EFBIG ?
		    SNAP_EBOUND : SNAP_ESYS, "%s/%s: %s", w->stage, rel,
		    errno == EFBIG ? "too many names in one folder" :
		    strerror(errno));
	for (i = 0; i < n && rc == SNAP_OK; i++) {
		len = rel[0] == '\0' ?
		    snprintf(child, sizeof(child), "%s", names[i]) :
		    snprintf(child, sizeof(child), "%s/%s", rel, names[i]);
		if (len < 0 || (size_t)len >= SNAP_REL_MAX) {
			rc = snap_err(w->err, w->errlen, SNAP_EBOUND, "%s/%s: "
			    "a path too long after the command (limit "
			    "path_len): nothing is proposed", w->stage, rel);
			break;
		}
		rc = entry(w, child);
	}
	snap_names_free(names, n);
	return rc;
}

/* Folder deletes over excluded entries cannot happen on the host: the
 * folder and the folders above it stay (SKIP). */
static int
hold_excluded(const struct snap_manifest *m, size_t i)
{
	size_t	len = strlen(m->v[i].path), lo = i + 1, hi = m->n, mid, j;

	/* the entries under "path/" are one run, but not right after path:
	 * "path-x" and "path.x" sort between (both below '/') */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strncmp(m->v[mid].path, m->v[i].path, len) < 0 ||
		    (strncmp(m->v[mid].path, m->v[i].path, len) == 0 &&
		    (unsigned char)m->v[mid].path[len] < '/'))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < m->n; j++) {
		if (strncmp(m->v[j].path, m->v[i].path, len) != 0 ||
		    m->v[j].path[len] != '/')
			break;
		if (m->v[j].excluded != NULL)
			return 1;
	}
	return 0;
}

/* ---- git's metadata on the way back ------------------------------------ */

/*
 * What a command's git work (commit, fetch, merge, rebase, gc) writes in
 * a repository's folder, and nothing else is written back there: git
 * reads code to run, or a folder to take its config and hooks from, from
 * most of the rest (config, hooks, commondir, gitdir, worktrees, modules,
 * info, objects/info/alternates...).
 */
static const char *const git_back[] = {
	"objects", "refs", "logs", "index", "HEAD", "packed-refs",
	"ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE",
	"COMMIT_EDITMSG", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
	"AUTO_MERGE", "shallow", "description", NULL
};

/* s equals t (lower case) in any ASCII case, as case-insensitive
 * volumes compare names. */
static int
name_fold_eq(const char *s, const char *t)
{
	for (; *s != '\0' && *t != '\0'; s++, t++)
		if (*s != *t && !(*s >= 'A' && *s <= 'Z' && *s + 32 == *t))
			return 0;
	return *s == *t;
}

/* n bytes at s are ".git", in any case (as case-insensitive volumes
 * take it). */
static int
is_dotgit(const char *s, size_t n)
{
	static const char	 g[] = ".git";
	size_t			 i;

	if (n != 4)
		return 0;
	for (i = 0; i < 4; i++)
		if (s[i] != g[i] && s[i] != g[i] - 'a' + 'A')
			return 0;
	return 1;
}

/*
 * The folder rel[0..n) ("" the top) is one git would take for a
 * repository's: it holds an entry named HEAD, of any type (git takes a
 * file, a link, and an "objects" that is an executable file), in the
 * stage or in the tree as staged (a command that deletes HEAD in its
 * stage still writes into the host's repository).  What git needs
 * besides (objects, refs) may be anywhere a commondir points.
 */
static int
holds_repo(struct walk *w, const char *rel, size_t n)
{
	char			 full[SNAP_PATH_MAX], sub[SNAP_PATH_MAX];
	struct snap_stat	 st;
	int			 len;

	len = snprintf(sub, sizeof(sub), "%.*s%sHEAD", (int)n, rel,
	    n > 0 ? "/" : "");
	if (len < 0 || (size_t)len >= sizeof(sub))
		return 0;
	if (snap_manifest_find(w->m, sub) != NULL)
		return 1;
	return snap_join(full, w->stage, sub) == 0 &&
	    snap_fs_lstat(full, &st) == 0;
}

/*
 * The host repository's core.hooksPath, when it names a folder inside the
 * tree (husky's ".husky", say), into w->hooks: what the command writes
 * there is a hook the user's next commit runs.  Read from the tree's
 * .git/config now (at most 1 MiB; a file that cannot be read sets
 * nothing: the default hooks folder is excluded anyway).
 */
static void
git_hooks_path(struct walk *w)
{
	char		 path[SNAP_PATH_MAX], sect[16] = "", key[16];
	char		*text, *line, *next, *v, *e;
	const char	*src = w->m->source;
	size_t		 len, n;

	w->hooks[0] = '\0';
	if (src == NULL || snap_join(path, src, ".git/config") == -1 ||
	    (text = snap_file_read(path, 1 << 20, &len)) == NULL)
		return;
	for (line = text; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (*line == '[') {
			n = strcspn(line + 1, " \t\"].");
			snprintf(sect, sizeof(sect), "%.*s", (int)(n < 15 ?
			    n : 15), line + 1);
			for (v = sect; *v != '\0'; v++)
				*v = (char)(*v >= 'A' && *v <= 'Z' ? *v + 32 :
				    *v);
			continue;
		}
		if (strcmp(sect, "core") != 0 || (v = strchr(line, '=')) ==
		    NULL)
			continue;
		n = strcspn(line, " \t=");
		snprintf(key, sizeof(key), "%.*s", (int)(n < 15 ? n : 15),
		    line);
		for (e = key; *e != '\0'; e++)
			*e = (char)(*e >= 'A' && *e <= 'Z' ? *e + 32 : *e);
		if (strcmp(key, "hookspath") != 0)
			continue;
		v += 1 + strspn(v + 1, " \t");
		e = v + strlen(v);
		while (e > v && (e[-1] == ' ' || e[-1] == '\t' ||
		    e[-1] == '\r'))
			*--e = '\0';
		if (*v == '"' && e > v + 1 && e[-1] == '"') {
			*--e = '\0';
			v++;
		}
#ifdef _WIN32
		/* git on Windows writes either separator, and any case */
		for (e = v; *e != '\0'; e++)
			if (*e == '\\')
				*e = '/';
		len = strlen(src);
		if (strlen(v) > len && v[len] == '/' &&
		    _strnicmp(v, src, len) == 0)
			v += len + 1;		/* absolute, inside the tree */
		else if (*v == '/' || *v == '~' || *v == '\0' ||
		    (v[0] != '\0' && v[1] == ':'))
			continue;		/* outside: not ours */
#else
		len = strlen(src);
		if (strncmp(v, src, len) == 0 && v[len] == '/')
			v += len + 1;		/* absolute, inside the tree */
		else if (*v == '/' || *v == '~' || *v == '\0')
			continue;		/* outside: not ours */
#endif
		while (v[0] == '.' && v[1] == '/')
			v += 2;
		e = v + strlen(v);
		while (e > v && e[-1] == '/')
			*--e = '\0';
		/* husky 9: hooksPath .husky/_, whose scripts run the hooks
		 * in .husky itself: the folder above is the hooks' too */
		if (e - v >= 2 && strcmp(e - 2, "/_") == 0)
			*(e - 2) = '\0';
		else if (strcmp(v, "_") == 0)
			continue;
		/* the last one wins, as in git */
		if (*v != '\0' && strlen(v) < sizeof(w->hooks))
			snprintf(w->hooks, sizeof(w->hooks), "%s", v);
		else
			w->hooks[0] = '\0';
	}
	free(text);
}

/* Why the change x may not reach the host for git's sake, or NULL. */
static const char *
git_refused(struct walk *w, const struct snap_chg *x)
{
	const char	*rel = x->path, *c, *next, *base, *alast = rel;
	size_t		 clen, i, n;
	int		 repo;

	n = strlen(w->hooks);
	if (n > 0 && strncmp(rel, w->hooks, n) == 0 &&
	    (rel[n] == '/' || rel[n] == '\0'))
		return "git hooks run code (core.hooksPath)";
	base = strrchr(rel, '/');
	base = base != NULL ? base + 1 : rel;
	if (is_dotgit(base, strlen(base)) && x->pub.type != SNAP_DIR)
		return "git: a .git file or link points git at another folder";
	/* c: each component; the folder above it, rel[0 .. c - 1), is a
	 * repository's when it is named .git or holds HEAD and objects */
	for (c = rel;; c = next + 1) {
		next = strchr(c, '/');
		clen = next != NULL ? (size_t)(next - c) : strlen(c);
		if (c == rel)
			repo = holds_repo(w, rel, 0);
		else
			repo = is_dotgit(alast, (size_t)(c - 1 - alast)) ||
			    holds_repo(w, rel, (size_t)(c - 1 - rel));
		if (repo) {
			if (x->pub.type == SNAP_LINK)
				return "git: a link in a repository's folder";
			for (i = 0; git_back[i] != NULL; i++)
				if (strlen(git_back[i]) == clen &&
				    strncmp(git_back[i], c, clen) == 0)
					break;
			if (git_back[i] == NULL)
				return "git: repository metadata that can run "
				    "code (only objects, refs, logs, index, "
				    "HEAD and the like are written back)";
			if (i == 0 && next != NULL &&
			    (name_fold_eq(next + 1, "info/alternates") ||
			    name_fold_eq(next + 1, "info/http-alternates")))
				return "git: alternates point git at other "
				    "folders";
		}
		if (next == NULL)
			break;
		alast = c;
	}
	return NULL;
}

/*
 * The changes git's rules refuse become SKIP; then a folder delete over
 * anything kept is kept too (its rmdir could not happen).  Sorted on
 * return.
 */
static int
git_pass(struct walk *w)
{
	struct snap_changes	*ch = w->c;
	struct snap_chg		*x;
	const char		*why;
	size_t			 i, j, len;

	for (i = 0; i < ch->n; i++) {
		x = &ch->v[i];
		if (x->pub.kind == SNAP_SKIP)
			continue;
#ifdef _WIN32
		if ((why = snap_win_name_bad(x->path)) == NULL &&
		    (why = git_refused(w, x)) == NULL)
			continue;
#else
		if ((why = git_refused(w, x)) == NULL)
			continue;
#endif
		free(x->old_link);
		free(x->new_link);
		x->old_link = x->new_link = NULL;
		x->pub.old_mode = x->pub.new_mode = 0;
		x->pub.old_size = x->pub.new_size = 0;
		x->old_sha[0] = x->new_sha[0] = '\0';
		x->pub.kind = SNAP_SKIP;
		if ((x->reason = strdup(why)) == NULL)
			return oom(w);
	}
	snap_changes_sort(ch);
	/* children sort after their folder: from the end, a folder sees
	 * its children settled */
	for (i = ch->n; i-- > 0;) {
		x = &ch->v[i];
		if (x->pub.kind != SNAP_DELETE || x->pub.type != SNAP_DIR)
			continue;
		len = strlen(x->path);
		for (j = i + 1; j < ch->n; j++) {
			if (strncmp(ch->v[j].path, x->path, len) != 0)
				break;
			if (ch->v[j].path[len] != '/' ||
			    ch->v[j].pub.kind != SNAP_SKIP)
				continue;
			x->pub.kind = SNAP_SKIP;
			x->pub.old_mode = 0;
			x->old_sha[0] = '\0';
			if ((x->reason = strdup("folder holds entries that are "
			    "kept: kept")) == NULL)
				return oom(w);
			break;
		}
	}
	return SNAP_OK;
}

int
snap_changes_compute(struct snap_manifest *m, const char *stage_root,
    const struct snap_rules *rules, const struct snap_limits *lim,
    struct snap_changes **out, char *err, size_t errlen)
{
	struct walk	 w;
	size_t		 i;
	int		 rc;

	*out = NULL;
	memset(&w, 0, sizeof(w));
	w.m = m;
	w.stage = stage_root;
	w.rules = rules;
	w.lim = lim;
	w.err = err;
	w.errlen = errlen;
	if ((w.c = calloc(1, sizeof(*w.c))) == NULL ||
	    (w.seen = calloc(m->n + 1, 1)) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "changes: out of memory");
		goto fail;
	}
	if ((rc = walk_dir(&w, "")) != SNAP_OK)
		goto fail;
	for (i = 0; i < m->n; i++) {
		if (w.seen[i])
			continue;
		if (m->v[i].excluded != NULL) {
			if (strcmp(m->v[i].excluded, "sanitized copy") == 0 &&
			    (rc = skip(&w, m->v[i].path, SNAP_FILE,
			    "excluded", m->v[i].excluded)) != SNAP_OK)
				goto fail;
			continue;
		}
		if (m->v[i].pub.type == SNAP_DIR && hold_excluded(m, i))
			rc = skip(&w, m->v[i].path, SNAP_DIR, NULL,
			    "folder holds excluded entries: kept");
		else
			rc = deleted(&w, &m->v[i]);
		if (rc != SNAP_OK)
			goto fail;
	}
	git_hooks_path(&w);
	if ((rc = git_pass(&w)) != SNAP_OK)
		goto fail;
	/* the hashes found, kept: the same change set (digest) later,
	 * whatever the host does meanwhile */
	if (m->dirty && m->file != NULL &&
	    (rc = snap_manifest_save(m, m->file, err, errlen)) != SNAP_OK)
		goto fail;
	if (snap_changes_finish(w.c) == -1) {
		rc = snap_err(err, errlen, SNAP_EBOUND, "changes: the change "
		    "set is over %zu bytes: nothing is proposed",
		    SNAP_FILE_MAX);
		goto fail;
	}
	free(w.seen);
	*out = w.c;
	return SNAP_OK;
fail:
	free(w.seen);
	snap_changes_free(w.c);
	return rc;
}
