/*
 * Git in a bind session (gitguard.h): the plan of the private git
 * folders, their making and their mounts (the end is gitback.c's and
 * gitoffer.c's).  Every path on the host is opened through
 * snap/fs.h, which never goes through a link (the command may have
 * planted one anywhere in the workspace and in the private folders):
 * ws and the session folder are real paths.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "session/gitguard-int.h"
#include "session/podman.h"
#include "snap/fs.h"
#include "snap/snap.h"

#define GG_FILE_MAX	((uint64_t)1 << 30)	/* bytes of a file copied */
#define GG_DEPTH_MAX	8			/* folders deep in modules/ */
#define GG_NAMES_MAX	4096			/* entries of a git folder */
#define GG_GITFILE_MAX	4096			/* bytes of a .git file */

struct plan {
	struct launch_gitguard	*g;
	char			*err;
	size_t			 errlen;
};

int
gg_path(char *out, const char *a, const char *b)
{
	int	 n;

	n = snprintf(out, PATH_MAX, "%s%s%s", a, b[0] != '\0' ? "/" : "", b);
	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

int
gg_priv(const struct launch_gitguard *g, const struct gg_node *n, char *out)
{
	const struct gg_repo	*r = &g->repos[n->repo];
	const char		*sub = n->rel + strlen(r->rel);

	return gg_path(out, r->priv, *sub == '/' ? sub + 1 : sub);
}

int
gg_same(const struct gg_ident *a, const struct snap_stat *st)
{
	return a->dev == st->dev && a->ino == st->ino && a->size ==
	    st->size && a->mtime_ns == st->mtime_ns && a->ctime_ns ==
	    st->ctime_ns;
}

static void
ident_set(struct gg_ident *a, const struct snap_stat *st)
{
	a->dev = st->dev;
	a->ino = st->ino;
	a->size = st->size;
	a->mtime_ns = st->mtime_ns;
	a->ctime_ns = st->ctime_ns;
}

/* ---- the plan ------------------------------------------------------------ */

static struct gg_node *
add_node(struct plan *p, enum gg_kind kind, const char *rel, size_t repo)
{
	struct launch_gitguard	*g = p->g;
	struct gg_node		*nv, *n;

	if (g->nnodes == LAUNCH_GIT_NODES_MAX) {
		snprintf(p->err, p->errlen, "the workspace's git folders hold "
		    "more than %d entries to copy or mount",
		    LAUNCH_GIT_NODES_MAX);
		return NULL;
	}
	if (g->nnodes == g->capnodes) {
		g->capnodes = g->capnodes == 0 ? 64 : g->capnodes * 2;
		if ((nv = reallocarray(g->nodes, g->capnodes,
		    sizeof(*nv))) == NULL) {
			snprintf(p->err, p->errlen, "out of memory");
			return NULL;
		}
		g->nodes = nv;
	}
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof(*n));
	if ((n->rel = strdup(rel)) == NULL) {
		snprintf(p->err, p->errlen, "out of memory");
		return NULL;
	}
	n->kind = kind;
	n->repo = repo;
	n->inpriv = repo != (size_t)-1;
	g->nnodes++;
	return n;
}

/* A git folder at rel; its private folder priv.  Its index, or -1. */
static long
add_repo(struct plan *p, const char *rel, int top, int full,
    const char *priv)
{
	struct launch_gitguard	*g = p->g;
	struct gg_repo		*nv, *r;
	struct snap_stat	 st;
	char			 host[PATH_MAX];

	if (g->nrepos == LAUNCH_GIT_REPOS_MAX) {
		snprintf(p->err, p->errlen, "more than %d git folders in the "
		    "workspace (repositories, submodules, worktrees)",
		    LAUNCH_GIT_REPOS_MAX);
		return -1;
	}
	if (gg_path(host, g->ws, rel) == -1 || snap_fs_lstat(host, &st) ==
	    -1) {
		snprintf(p->err, p->errlen, "%s: %s", rel, strerror(errno));
		return -1;
	}
	if (st.type != SNAP_FS_DIR) {
		snprintf(p->err, p->errlen, "%s: not a folder", rel);
		return -1;
	}
	if ((nv = reallocarray(g->repos, g->nrepos + 1, sizeof(*nv))) ==
	    NULL) {
		snprintf(p->err, p->errlen, "out of memory");
		return -1;
	}
	g->repos = nv;
	r = &g->repos[g->nrepos];
	memset(r, 0, sizeof(*r));
	if ((r->rel = strdup(rel)) == NULL || (r->priv = strdup(priv)) ==
	    NULL) {
		free(r->rel);
		snprintf(p->err, p->errlen, "out of memory");
		return -1;
	}
	r->top = top;
	r->full = full;
	r->dev = st.dev;
	r->ino = st.ino;
	r->uid = st.uid;
	r->gid = st.gid;
	g->nrepos++;
	return (long)(g->nrepos - 1);
}

/* The names of the host's folder rel, sorted: their count, or -1. */
static long
names_of(struct plan *p, const char *rel, char ***out)
{
	long	 n;

	if ((n = snap_list_dir(p->g->ws, rel, out)) == -1) {
		snprintf(p->err, p->errlen, "%s: %s", rel, strerror(errno));
		return -1;
	}
	if (n > GG_NAMES_MAX) {
		snap_names_free(*out, n);
		snprintf(p->err, p->errlen, "%s: more than %d entries", rel,
		    GG_NAMES_MAX);
		return -1;
	}
	return n;
}

static int	guard_dir(struct plan *, size_t repo, int depth);

/* The private path of rel inside repo's private folder into out. */
static int
priv_of(struct plan *p, size_t repo, const char *rel, char *out)
{
	const struct gg_repo	*r = &p->g->repos[repo];
	const char		*sub = rel + strlen(r->rel);

	if (gg_path(out, r->priv, *sub == '/' ? sub + 1 : sub) == -1) {
		snprintf(p->err, p->errlen, "%s: path too long", rel);
		return -1;
	}
	return 0;
}

/* A nested git folder at rel (a worktree's, full 0; a submodule's, full
 * 1), its private folder inside its parent's. */
static int
nested(struct plan *p, size_t parent, const char *rel, int full, int depth)
{
	char	 priv[PATH_MAX];
	long	 k;

	if (priv_of(p, parent, rel, priv) == -1 || add_node(p, GG_DIR, rel,
	    parent) == NULL || (k = add_repo(p, rel, 0, full, priv)) == -1)
		return -1;
	return guard_dir(p, (size_t)k, depth + 1);
}

/* A file or link of the host's folder, copied; top: at the top of a git
 * folder, where git's own work writes its files. */
static int
copy_entry(struct plan *p, size_t repo, const char *rel, const char *name,
    const struct snap_stat *st, int top)
{
	struct gg_node	*n;

	char		 host[PATH_MAX], real[PATH_MAX];
	size_t		 k = strlen(p->g->ws);

	if (st->type != SNAP_FS_FILE && st->type != SNAP_FS_LINK)
		return 0;		/* a fifo, a socket: nothing of git's */
	if ((n = add_node(p, st->type == SNAP_FS_FILE ? GG_COPY : GG_LINK,
	    rel, repo)) == NULL)
		return -1;
	/*
	 * A link (.git/hooks -> ../githooks, a config kept in the tree):
	 * the copy points where the host's does, which in the workspace the
	 * command could write, and the host's git would then read or run:
	 * its target is read-only inside.
	 */
	if (st->type == SNAP_FS_LINK && gg_path(host, p->g->ws, rel) == 0 &&
	    realpath(host, real) != NULL && strncmp(real, p->g->ws, k) == 0 &&
	    real[k] == '/' && add_node(p, GG_RO, real + k + 1,
	    (size_t)-1) == NULL)
		return -1;
	n->back = top && st->type == SNAP_FS_FILE && snap_git_back_name(name);
	n->mode = st->mode;
	n->uid = st->uid;
	n->gid = st->gid;
	return 0;
}

/*
 * worktrees/ (modules 0): each folder a linked worktree's git folder;
 * modules/ (modules 1, and the folders under it, for a submodule named
 * a/b): each folder holding HEAD a submodule's.  Files are copied.
 */
static int
sub_dirs(struct plan *p, size_t repo, const char *rel, int modules,
    int depth)
{
	struct snap_stat	 st;
	char			**names = NULL, child[PATH_MAX];
	char			 host[PATH_MAX], head[PATH_MAX];
	long			 n, i;
	int			 rc = 0;

	if ((n = names_of(p, rel, &names)) == -1)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		if (gg_path(child, rel, names[i]) == -1 ||
		    gg_path(host, p->g->ws, child) == -1 ||
		    snap_fs_lstat(host, &st) == -1) {
			snprintf(p->err, p->errlen, "%s/%s: %s", rel, names[i],
			    strerror(errno));
			rc = -1;
		} else if (st.type != SNAP_FS_DIR)
			rc = copy_entry(p, repo, child, names[i], &st, 0);
		else if (!modules)
			rc = nested(p, repo, child, 0, depth);
		else if (gg_path(head, host, "HEAD") == 0 &&
		    snap_fs_lstat(head, &st) == 0)
			rc = nested(p, repo, child, 1, depth);
		else if (depth >= GG_DEPTH_MAX)
			rc = add_node(p, GG_RO, child, repo) == NULL ? -1 : 0;
		else
			rc = add_node(p, GG_DIR, child, repo) == NULL ? -1 :
			    sub_dirs(p, repo, child, 1, depth + 1);
	}
	snap_names_free(names, n);
	return rc;
}

/* objects/: the host's, read-write, but for its info/alternates (git
 * reads objects from the folders it names): read-only, made empty on
 * the host when missing. */
static int
objects(struct plan *p, size_t repo, const char *rel)
{
	struct gg_node		*n;
	struct snap_stat	 st;
	char			 alt[PATH_MAX], host[PATH_MAX];
	int			 missing;

	if (add_node(p, GG_RW, rel, repo) == NULL)
		return -1;
	if (snprintf(alt, sizeof(alt), "%s/info/alternates", rel) >=
	    (int)sizeof(alt) || gg_path(host, p->g->ws, alt) == -1) {
		snprintf(p->err, p->errlen, "%s: path too long", rel);
		return -1;
	}
	if (snap_fs_lstat(host, &st) == 0)
		missing = 0;
	else if (errno == ENOENT || errno == ENOTDIR)
		missing = 1;
	else {
		snprintf(p->err, p->errlen, "%s: %s", alt, strerror(errno));
		return -1;
	}
	if (!missing && st.type != SNAP_FS_FILE) {
		snprintf(p->err, p->errlen, "%s is not a file", alt);
		return -1;
	}
	if ((n = add_node(p, missing ? GG_HOSTFILE : GG_RO, alt,
	    repo)) == NULL)
		return -1;
	n->inpriv = 0;		/* in the host's objects/ */
	return 0;
}

/*
 * One git folder: its files copied, what git's own work writes shared
 * read-write, worktrees/ and modules/ folder by folder, every other
 * folder read-only; hooks/ and info/ read-only even where the host has
 * none, logs/ made on the host where missing.
 */
static int
guard_dir(struct plan *p, size_t repo, int depth)
{
	struct snap_stat	 st;
	char			 rel[PATH_MAX], child[PATH_MAX];
	char			 host[PATH_MAX], **names = NULL;
	long			 n, i;
	int			 rc = 0, full, seen = 0;

	snprintf(rel, sizeof(rel), "%s", p->g->repos[repo].rel);
	full = p->g->repos[repo].full;
	if ((n = names_of(p, rel, &names)) == -1)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		const char *name = names[i];

		if (gg_path(child, rel, name) == -1 ||
		    gg_path(host, p->g->ws, child) == -1 ||
		    snap_fs_lstat(host, &st) == -1) {
			snprintf(p->err, p->errlen, "%s: %s", child,
			    strerror(errno));
			rc = -1;
			break;
		}
		seen |= strcmp(name, "hooks") == 0 ? 1 : strcmp(name,
		    "info") == 0 ? 2 : strcmp(name, "logs") == 0 ? 4 : 0;
		if (st.type != SNAP_FS_DIR)
			rc = copy_entry(p, repo, child, name, &st, 1);
		else if (strcmp(name, "objects") == 0)
			rc = objects(p, repo, child);
		else if (snap_git_back_name(name))
			rc = add_node(p, GG_RW, child, repo) == NULL ? -1 : 0;
		else if (full && (strcmp(name, "worktrees") == 0 ||
		    strcmp(name, "modules") == 0))
			rc = add_node(p, GG_DIR, child, repo) == NULL ? -1 :
			    sub_dirs(p, repo, child, name[0] == 'm', depth);
		else
			rc = add_node(p, GG_RO, child, repo) == NULL ? -1 : 0;
	}
	snap_names_free(names, n);
	if (rc == 0 && full && !(seen & 1) && (gg_path(child, rel, "hooks") ==
	    -1 || add_node(p, GG_EMPTY, child, repo) == NULL))
		rc = -1;
	if (rc == 0 && full && !(seen & 2) && (gg_path(child, rel, "info") ==
	    -1 || add_node(p, GG_EMPTY, child, repo) == NULL))
		rc = -1;
	if (rc == 0 && !(seen & 4) && (gg_path(child, rel, "logs") == -1 ||
	    add_node(p, GG_HOSTDIR, child, repo) == NULL))
		rc = -1;
	return rc;
}

/* rel is repo's folder or under it. */
static int
under(const char *rel, const char *repo)
{
	size_t	 n = strlen(repo);

	return strncmp(rel, repo, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

static int
top_repo(struct plan *p, const char *rel)
{
	char	 priv[PATH_MAX];
	size_t	 i, tops = 0;
	long	 k;

	for (i = 0; i < p->g->nrepos; i++) {
		if (under(rel, p->g->repos[i].rel))
			return 0;	/* guarded already */
		tops += p->g->repos[i].top;
	}
	if (snprintf(priv, sizeof(priv), "%s/git/%zu", p->g->sdir, tops) >=
	    (int)sizeof(priv)) {
		snprintf(p->err, p->errlen, "%s: path too long", p->g->sdir);
		return -1;
	}
	if ((k = add_repo(p, rel, 1, 1, priv)) == -1 ||
	    add_node(p, GG_TOP, rel, (size_t)k) == NULL)
		return -1;
	return guard_dir(p, (size_t)k, 0);
}

/*
 * Where the .git file at rel points (gitdir: PATH, relative to its
 * folder), as a path relative to the workspace into out: 1, or 0 when
 * it points outside it (the container does not see that folder), or the
 * file says nothing git would take.
 */
static int
gitfile_target(struct plan *p, const char *rel, char *out)
{
	struct snap_file	*f;
	char			 host[PATH_MAX], buf[GG_GITFILE_MAX + 1];
	char			 abs[2 * PATH_MAX], *e, *s, *d;
	const char		*q;
	long			 k, len = 0;
	size_t			 n;

	if (gg_path(host, p->g->ws, rel) == -1 ||
	    (f = snap_fs_open_read(host)) == NULL)
		return 0;
	while (len < GG_GITFILE_MAX && (k = snap_fs_read(f, buf + len,
	    (size_t)(GG_GITFILE_MAX - len))) > 0)
		len += k;
	snap_fs_close(f);
	buf[len] = '\0';
	if (strncmp(buf, "gitdir: ", 8) != 0)
		return 0;
	buf[8 + strcspn(buf + 8, "\r\n")] = '\0';
	q = buf + 8;
	if (q[0] == '/')
		snprintf(abs, sizeof(abs), "%s", q);
	else {
		snprintf(abs, sizeof(abs), "%s", host);
		*strrchr(abs, '/') = '\0';
		n = strlen(abs);
		snprintf(abs + n, sizeof(abs) - n, "/%s", q);
	}
	/* lexically, as git would see it without links */
	for (s = d = abs + 1; *s != '\0';) {
		e = s + strcspn(s, "/");
		n = (size_t)(e - s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			;
		else if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (d > abs + 1)
				d--;
			while (d > abs + 1 && d[-1] != '/')
				d--;
		} else {
			memmove(d, s, n);
			d += n;
			*d++ = '/';
		}
		s = *e == '/' ? e + 1 : e;
	}
	if (d > abs + 1)
		d--;
	*d = '\0';
	n = strlen(p->g->ws);
	if (strncmp(abs, p->g->ws, n) != 0 || abs[n] != '/')
		return 0;
	snprintf(out, PATH_MAX, "%s", abs + n + 1);
	return 1;
}

struct launch_gitguard *
launch_gitguard_new(const char *ws, const char *src, const char *sdir,
    const struct launch_wsscan *scan, char *err, size_t errlen)
{
	struct launch_gitguard	*g;
	struct plan		 p;
	struct snap_stat	 st;
	char			 target[PATH_MAX], host[PATH_MAX];
	size_t			 i;
	int			 pass;

	if ((g = calloc(1, sizeof(*g))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p.g = g;
	p.err = err;
	p.errlen = errlen;
	if (snprintf(g->ws, sizeof(g->ws), "%s", ws) >= (int)sizeof(g->ws) ||
	    snprintf(g->src, sizeof(g->src), "%s", src) >=
	    (int)sizeof(g->src) || snprintf(g->sdir, sizeof(g->sdir), "%s",
	    sdir) >= (int)sizeof(g->sdir) || snprintf(g->empty,
	    sizeof(g->empty), "%s/git/empty", sdir) >= (int)sizeof(g->empty)) {
		snprintf(err, errlen, "%s: path too long", ws);
		goto fail;
	}
	/* folders first, then what .git files point to */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < scan->n; i++) {
			const struct launch_wsent *e = &scan->v[i];

			if (pass == 0 && (e->flags & LAUNCH_WS_GITLINK)) {
				snprintf(err, errlen, "%s is a link: a link "
				    "git follows cannot be guarded", e->rel);
				goto fail;
			}
			if (pass == 0 && (e->flags & (LAUNCH_WS_GITDIR |
			    LAUNCH_WS_BARE)) && top_repo(&p, e->rel) == -1)
				goto fail;
			if (pass == 1 && (e->flags & LAUNCH_WS_GITFILE)) {
				/* the file itself: where git goes from here */
				if (add_node(&p, GG_RO, e->rel,
				    (size_t)-1) == NULL)
					goto fail;
				if (gitfile_target(&p, e->rel, target) &&
				    gg_path(host, ws, target) == 0 &&
				    snap_fs_lstat(host, &st) == 0 &&
				    st.type == SNAP_FS_DIR &&
				    top_repo(&p, target) == -1)
					goto fail;
			}
		}
	return g;
fail:
	launch_gitguard_free(g);
	return NULL;
}

void
launch_gitguard_free(struct launch_gitguard *g)
{
	size_t	 i;

	if (g == NULL)
		return;
	for (i = 0; i < g->nrepos; i++) {
		free(g->repos[i].rel);
		free(g->repos[i].priv);
		free(g->repos[i].config);
	}
	for (i = 0; i < g->nnodes; i++)
		free(g->nodes[i].rel);
	free(g->repos);
	free(g->nodes);
	free(g);
}

size_t
launch_gitguard_count(const struct launch_gitguard *g)
{
	return g != NULL ? g->nrepos : 0;
}

/* ---- the private folders ------------------------------------------------- */

/*
 * The host's file at src copied to dst (a new file, mode), its SHA-256
 * into sha[65] and its identity into host as it was read.  0, or -1
 * with err.
 */
static int
copy_file(const char *src, const char *dst, uint32_t mode, char *sha,
    struct gg_ident *host, char *err, size_t errlen)
{
	static const char	 hex[] = "0123456789abcdef";
	struct snap_file	*in, *out = NULL;
	struct snap_stat	 st;
	EVP_MD_CTX		*md = NULL;
	unsigned char		 buf[65536], d[EVP_MAX_MD_SIZE];
	unsigned		 dlen = 0, i;
	long			 k;
	int			 rc = -1;

	if ((in = snap_fs_open_read(src)) == NULL || snap_fs_fstat(in,
	    &st) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		goto out;
	}
	if (st.size > GG_FILE_MAX) {
		snprintf(err, errlen, "%s: over %llu bytes", src,
		    (unsigned long long)GG_FILE_MAX);
		goto out;
	}
	ident_set(host, &st);
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		snprintf(err, errlen, "SHA-256: out of memory");
		goto out;
	}
	if ((out = snap_fs_create(dst, mode)) == NULL) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		goto out;
	}
	while ((k = snap_fs_read(in, buf, sizeof(buf))) > 0)
		if (EVP_DigestUpdate(md, buf, (size_t)k) != 1 ||
		    snap_fs_write(out, buf, (size_t)k) == -1) {
			snprintf(err, errlen, "%s: %s", dst, strerror(errno));
			goto out;
		}
	if (k == -1 || EVP_DigestFinal_ex(md, d, &dlen) != 1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		goto out;
	}
	for (i = 0; i < dlen && i < 32; i++) {
		sha[2 * i] = hex[d[i] >> 4];
		sha[2 * i + 1] = hex[d[i] & 15];
	}
	sha[2 * i] = '\0';
	rc = 0;
out:
	if (out != NULL && snap_fs_close(out) == -1 && rc == 0) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		rc = -1;
	}
	if (in != NULL)
		snap_fs_close(in);
	EVP_MD_CTX_free(md);
	return rc;
}

int
gg_hash(const char *path, char *sha)
{
	static const char	 hex[] = "0123456789abcdef";
	struct snap_file	*in;
	EVP_MD_CTX		*md;
	unsigned char		 buf[65536], d[EVP_MAX_MD_SIZE];
	unsigned		 dlen = 0, i;
	long			 k;
	int			 rc = -1;

	if ((in = snap_fs_open_read(path)) == NULL)
		return -1;
	if ((md = EVP_MD_CTX_new()) != NULL &&
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1) {
		while ((k = snap_fs_read(in, buf, sizeof(buf))) > 0)
			if (EVP_DigestUpdate(md, buf, (size_t)k) != 1)
				break;
		if (k == 0 && EVP_DigestFinal_ex(md, d, &dlen) == 1) {
			for (i = 0; i < dlen && i < 32; i++) {
				sha[2 * i] = hex[d[i] >> 4];
				sha[2 * i + 1] = hex[d[i] & 15];
			}
			sha[2 * i] = '\0';
			rc = 0;
		}
	}
	EVP_MD_CTX_free(md);
	snap_fs_close(in);
	return rc;
}

/* A folder made at path (it may exist when host), given to uid:gid. */
static int
make_dir(const char *path, uint32_t mode, uint32_t uid, uint32_t gid,
    int may_exist, char *err, size_t errlen)
{
	if (snap_fs_mkdir(path, mode) == -1 && !(may_exist &&
	    errno == EEXIST)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (snap_fs_lchown(path, uid, gid) == -1) {
		snprintf(err, errlen, "chown %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* One entry of the plan made (the copies' identities noted). */
static int
make_node(struct launch_gitguard *g, struct gg_node *n, uint32_t uid,
    uint32_t gid, char *err, size_t errlen)
{
	struct gg_repo		*r = n->repo != (size_t)-1 ?
				    &g->repos[n->repo] : NULL;
	struct snap_stat	 st;
	struct snap_file	*f;
	char			 priv[PATH_MAX], host[PATH_MAX], dir[PATH_MAX];
	char			 target[PATH_MAX];

	if (gg_path(host, g->ws, n->rel) == -1 || (r != NULL &&
	    gg_priv(g, n, priv) == -1)) {
		snprintf(err, errlen, "%s: path too long", n->rel);
		return -1;
	}
	switch (n->kind) {
	case GG_TOP:
		return make_dir(r->priv, 0755, uid, gid, 0, err, errlen);
	case GG_COPY:
		if (copy_file(host, priv, n->mode & 0777, n->sha, &n->host,
		    err, errlen) == -1 || snap_fs_lchown(priv, uid,
		    gid) == -1 || snap_fs_lstat(priv, &st) == -1) {
			if (err[0] == '\0')
				snprintf(err, errlen, "%s: %s", priv,
				    strerror(errno));
			return -1;
		}
		ident_set(&n->copy, &st);
		/* the config as copied: what the offer compares with */
		if (r->full && strcmp(n->rel + strlen(r->rel), "/config") ==
		    0 && (r->config = snap_file_read(priv, GG_CONFIG_MAX,
		    &r->configlen)) != NULL)
			r->hasconfig = 1;
		return 0;
	case GG_LINK:
		if (snap_fs_readlink(host, target, sizeof(target)) == -1 ||
		    snap_fs_symlink(target, priv) == -1 ||
		    snap_fs_lchown(priv, uid, gid) == -1) {
			snprintf(err, errlen, "%s: %s", n->rel,
			    strerror(errno));
			return -1;
		}
		return 0;
	case GG_HOSTDIR:
		if (make_dir(host, 0755, r->uid, r->gid, 1, err, errlen) == -1)
			return -1;
		break;
	case GG_HOSTFILE:
		/* objects/info may be missing too: git makes both */
		snprintf(dir, sizeof(dir), "%s", host);
		*strrchr(dir, '/') = '\0';
		if (make_dir(dir, 0755, r->uid, r->gid, 1, err, errlen) == -1)
			return -1;
		if ((f = snap_fs_create(host, 0644)) == NULL) {
			if (errno != EEXIST) {
				snprintf(err, errlen, "%s: %s", host,
				    strerror(errno));
				return -1;
			}
		} else if (snap_fs_close(f) == -1 || snap_fs_lchown(host,
		    r->uid, r->gid) == -1) {
			snprintf(err, errlen, "%s: %s", host, strerror(errno));
			return -1;
		}
		break;
	default:
		break;
	}
	/* the mount point, where the mount lands in a private folder */
	if (n->inpriv && n->kind != GG_DIR && n->kind != GG_HOSTFILE &&
	    make_dir(priv, 0755, uid, gid, 0, err, errlen) == -1)
		return -1;
	if (n->kind == GG_DIR && make_dir(priv, 0755, uid, gid, 0, err,
	    errlen) == -1)
		return -1;
	return 0;
}

int
launch_gitguard_make(struct launch_gitguard *g, uint32_t uid, uint32_t gid,
    char *err, size_t errlen)
{
	char	 dir[PATH_MAX];
	size_t	 i;

	err[0] = '\0';
	if (g->nrepos == 0)
		return 0;
	if (gg_path(dir, g->sdir, "git") == -1 || snap_fs_mkdir(dir,
	    0700) == -1 || snap_fs_mkdir(g->empty, 0555) == -1) {
		snprintf(err, errlen, "%s/git: %s", g->sdir, strerror(errno));
		return -1;
	}
	for (i = 0; i < g->nnodes; i++)
		if (make_node(g, &g->nodes[i], uid, gid, err, errlen) == -1)
			return -1;
	return 0;
}

int
launch_gitguard_mounts(const struct launch_gitguard *g,
    struct launch_mounts *m)
{
	const struct gg_node	*n;
	char			 src[PATH_MAX], dst[PATH_MAX];
	size_t			 i;
	int			 rc = 0;

	for (i = 0; g != NULL && i < g->nnodes && rc == 0; i++) {
		n = &g->nodes[i];
		if (gg_path(dst, g->ws, n->rel) == -1 || gg_path(src, g->src,
		    n->rel) == -1)
			return -1;
		switch (n->kind) {
		case GG_TOP:
			rc = launch_mounts_add(m, g->repos[n->repo].priv, dst,
			    0);
			break;
		case GG_RW:
		case GG_HOSTDIR:
			rc = launch_mounts_add(m, src, dst, 0);
			break;
		case GG_RO:
		case GG_HOSTFILE:
			rc = launch_mounts_add(m, src, dst, 1);
			break;
		case GG_EMPTY:
			rc = launch_mounts_add(m, g->empty, dst, 1);
			break;
		default:
			break;
		}
	}
	return rc;
}
