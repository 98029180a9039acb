/*
 * The config's changes of a bind session's git guard (gitguard.h): each
 * repository's private config against the one copied at the start, key
 * by key (every value of a key, in order: remote.NAME.fetch may repeat),
 * read by snap's one reader of git's syntax.  A changed key is offered
 * back only when snap_git_key_back says it cannot run code (the keys git
 * remote add, fetch, push -u and branch -u write); the others are named
 * with the reason, never their values (a credential helper's, a URL's
 * password).  Offered keys are applied at a terminal when the person says
 * yes (--apply as a snapshot's: auto asks when stdin and stderr are a
 * terminal, ask asks on the terminal, never keeps), else the git config
 * commands that apply them are printed.
 *
 * Applying: the host's config copied into the session folder, edited by
 * git config --file (git's own writer: sections, quoting, multiple
 * values; with no system or global config of its own and outside any
 * repository, so it runs nothing), then put back as git writes it while
 * the host's config is still the one copied.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft/draft.h"
#include "host/proc.h"
#include "session/gitguard-int.h"
#include "session/options.h"
#include "snap/fs.h"
#include "snap/snap.h"

#define KV_MAX		4096	/* values of one config read */
#define OFFER_MAX	64	/* changed keys listed */
#define GIT_TIMEOUT_MS	10000

struct kv {
	char	*name;		/* sect[.sub].key, as git config names it */
	char	*sect, *sub, *key;
	char	*value;		/* NULL: a key without '=' */
};

struct kvs {
	struct kv	*v;
	size_t		 n, cap;
	int		 failed;
};

/* One changed key: its values after, offered or why not. */
struct offer {
	const struct kv	*k;		/* names (from either side) */
	const char	**vals;		/* after, in order */
	size_t		 nvals;
	const char	*why;		/* NULL: offered */
};

static int
kv_add(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	struct kvs	*s = arg;
	struct kv	*nv, *k;
	int		 n;

	if (s->n == KV_MAX) {
		s->failed = 1;
		return -1;
	}
	if (s->n == s->cap) {
		s->cap = s->cap == 0 ? 64 : s->cap * 2;
		if ((nv = reallocarray(s->v, s->cap, sizeof(*nv))) == NULL) {
			s->failed = 1;
			return -1;
		}
		s->v = nv;
	}
	k = &s->v[s->n];
	memset(k, 0, sizeof(*k));
	n = sub != NULL ? asprintf(&k->name, "%s.%s.%s", sect, sub, key) :
	    asprintf(&k->name, "%s.%s", sect, key);
	if (n == -1 || (k->sect = strdup(sect)) == NULL || (sub != NULL &&
	    (k->sub = strdup(sub)) == NULL) || (k->key = strdup(key)) ==
	    NULL || (value != NULL && (k->value = strdup(value)) == NULL)) {
		if (n == -1)
			k->name = NULL;
		s->n++;			/* freed with the rest */
		s->failed = 1;
		return -1;
	}
	s->n++;
	return 0;
}

static void
kvs_free(struct kvs *s)
{
	size_t	 i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].sect);
		free(s->v[i].sub);
		free(s->v[i].key);
		free(s->v[i].value);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* text's values into s: 0, or -1 (too many, memory). */
static int
kvs_read(struct kvs *s, const char *text, size_t len)
{
	memset(s, 0, sizeof(*s));
	if (text == NULL)
		return 0;
	return snap_gitcfg_parse(text, len, kv_add, s) == -1 || s->failed ?
	    -1 : 0;
}

/* 1 when the values of name in a and b are the same, in order. */
static int
same_values(const struct kvs *a, const struct kvs *b, const char *name)
{
	size_t	 i = 0, j = 0;

	for (;;) {
		while (i < a->n && strcmp(a->v[i].name, name) != 0)
			i++;
		while (j < b->n && strcmp(b->v[j].name, name) != 0)
			j++;
		if (i == a->n || j == b->n)
			return i == a->n && j == b->n;
		if ((a->v[i].value == NULL) != (b->v[j].value == NULL) ||
		    (a->v[i].value != NULL && strcmp(a->v[i].value,
		    b->v[j].value) != 0))
			return 0;
		i++;
		j++;
	}
}

/* The remotes with a URL that may go back, or that the host has. */
static const char **
remotes_of(const struct kvs *after, const struct kvs *host)
{
	const struct kvs	*s;
	const char		**v;
	size_t			 i, n = 0, k;

	if ((v = calloc(after->n + host->n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (k = 0; k < 2; k++) {
		s = k == 0 ? after : host;
		for (i = 0; i < s->n; i++)
			if (strcmp(s->v[i].sect, "remote") == 0 &&
			    s->v[i].sub != NULL && strcmp(s->v[i].key,
			    "url") == 0 && s->v[i].value != NULL &&
			    (k == 1 || snap_git_key_back("remote",
			    s->v[i].sub, "url", s->v[i].value, NULL) == NULL))
				v[n++] = s->v[i].sub;
	}
	return v;
}

/*
 * The changed keys of before -> after, each judged (at most OFFER_MAX;
 * *more counts the rest).  NULL with *n 0 when none changed.
 */
static struct offer *
changed(const struct kvs *before, const struct kvs *after,
    const struct kvs *host, size_t *np, size_t *more)
{
	struct offer	*o;
	const char	**rem;
	const struct kv	*k;
	size_t		 i, j, n = 0, side;

	*np = *more = 0;
	if ((o = calloc(OFFER_MAX, sizeof(*o))) == NULL ||
	    (rem = remotes_of(after, host)) == NULL) {
		free(o);
		return NULL;
	}
	for (side = 0; side < 2; side++)
		for (i = 0; i < (side ? before->n : after->n); i++) {
			k = side ? &before->v[i] : &after->v[i];
			for (j = 0; j < n; j++)
				if (strcmp(o[j].k->name, k->name) == 0)
					break;
			if (j < n || same_values(before, after, k->name))
				continue;
			if (n == OFFER_MAX) {
				(*more)++;
				continue;
			}
			o[n].k = k;
			if ((o[n].vals = calloc(after->n + 1,
			    sizeof(char *))) == NULL)
				break;
			for (j = 0; j < after->n; j++)
				if (strcmp(after->v[j].name, k->name) == 0) {
					o[n].vals[o[n].nvals++] =
					    after->v[j].value;
					if (o[n].why == NULL)
						o[n].why = after->v[j].value ==
						    NULL ? "a key without a "
						    "value" : snap_git_key_back(
						    k->sect, k->sub, k->key,
						    after->v[j].value, rem);
				}
			if (o[n].nvals == 0)
				o[n].why = snap_git_key_back(k->sect, k->sub,
				    k->key, NULL, rem);
			n++;
		}
	/* a remote whose URL does not go back takes nothing along */
	for (i = 0; i < n; i++)
		for (j = 0; o[i].why == NULL && j < after->n; j++)
			if (strcmp(o[i].k->sect, "remote") == 0 &&
			    strcmp(after->v[j].sect, "remote") == 0 &&
			    after->v[j].sub != NULL && o[i].k->sub != NULL &&
			    strcmp(after->v[j].sub, o[i].k->sub) == 0 &&
			    (strcmp(after->v[j].key, "url") == 0 ||
			    strcmp(after->v[j].key, "pushurl") == 0) &&
			    (after->v[j].value == NULL || snap_git_key_back(
			    "remote", after->v[j].sub, after->v[j].key,
			    after->v[j].value, NULL) != NULL))
				o[i].why = "its remote's URL is not offered";
	free(rem);
	*np = n;
	return o;
}

static void
offers_free(struct offer *o, size_t n)
{
	size_t	 i;

	for (i = 0; o != NULL && i < n; i++)
		free(o[i].vals);
	free(o);
}

/* s in single quotes for a shell (the offered values are plain ASCII). */
static void
quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s != '\0'; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/*
 * The arguments after "git" of change o on file, step by step (step 0
 * first): config --file FILE --replace-all NAME VALUE for one value,
 * --unset-all NAME then --add NAME VALUE for each of several, --unset-all
 * NAME for none.  0 with argv (NULL-terminated) and *argc, or -1 past
 * the last step.
 */
static int
step_argv(const struct offer *o, const char *file, size_t step,
    char **argv, size_t *argc)
{
	size_t	 n = 0;

	if (step > (o->nvals > 1 ? o->nvals : 0))
		return -1;
	argv[n++] = (char *)"config";
	argv[n++] = (char *)"--file";
	argv[n++] = (char *)file;
	if (o->nvals == 1)
		argv[n++] = (char *)"--replace-all";
	else if (step == 0)
		argv[n++] = (char *)"--unset-all";
	else
		argv[n++] = (char *)"--add";
	argv[n++] = o->k->name;
	if (o->nvals == 1)
		argv[n++] = (char *)o->vals[0];
	else if (step > 0)
		argv[n++] = (char *)o->vals[step - 1];
	argv[n] = NULL;
	*argc = n;
	return 0;
}

/* The commands that apply the offered keys to the host's config. */
static void
print_commands(const struct offer *o, size_t n, const char *cfg)
{
	char	*argv[8];
	size_t	 i, step, argc, a;

	if (cfg[strcspn(cfg, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"
	    "\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"
	    "\x1b\x1c\x1d\x1e\x1f\x7f")] != '\0') {
		fputs("aisb: git: the config's path holds control characters: "
		    "set the keys above with git config by hand\n", stderr);
		return;
	}
	fputs("aisb: git: kept; to write them into your config, run:\n",
	    stderr);
	for (i = 0; i < n; i++)
		for (step = 0; o[i].why == NULL && step_argv(&o[i], cfg, step,
		    argv, &argc) == 0; step++) {
			fputs("    git", stderr);
			for (a = 0; a < argc; a++) {
				fputc(' ', stderr);
				/* the file, the name, the value */
				if (a == 2 || a > 3)
					quoted(stderr, argv[a]);
				else
					fputs(argv[a], stderr);
			}
			fputc('\n', stderr);
		}
}

/*
 * The offered keys written into the host's config at cfg (owner uid:gid
 * when it is new): edited in a copy by git config --file, then put back
 * while the host's is still the one copied.  0, or -1 after a line.
 */
static int
apply_keys(const struct launch_gitguard *g, size_t k, const struct offer *o,
    size_t n, const char *cfg)
{
	static char	 env0[] = "PATH=/usr/local/bin:/usr/bin:/bin";
	static char	 env1[] = "GIT_CONFIG_NOSYSTEM=1";
	static char	 env2[] = "GIT_CONFIG_GLOBAL=/dev/null";
	static char	 env3[] = "LC_ALL=C";
	const struct gg_repo	*r = &g->repos[k];
	struct snap_stat	 st;
	struct gg_ident		 id;
	char			 tmp[PATH_MAX], ceil[PATH_MAX + 32];
	char			 home[PATH_MAX + 8], err[512], *argv[12];
	char			*envp[] = { env0, env1, env2, env3, home, ceil,
				    NULL };
	char			*text = NULL;
	size_t			 i, step, argc, len = 0;
	int			 at, rc = -1, st_rc;

	if (snprintf(tmp, sizeof(tmp), "%s/git/config-%zu.new", g->sdir, k) >=
	    (int)sizeof(tmp))
		return -1;
	if (snprintf(home, sizeof(home), "HOME=%s/git", g->sdir) >=
	    (int)sizeof(home) || snprintf(ceil, sizeof(ceil),
	    "GIT_CEILING_DIRECTORIES=%s/git", g->sdir) >= (int)sizeof(ceil))
		return -1;
	/* the host's config now, and its identity */
	at = snap_fs_lstat(cfg, &st) == 0;
	if (at && (st.type != SNAP_FS_FILE || (text = snap_file_read(cfg,
	    GG_CONFIG_MAX, &len)) == NULL)) {
		fprintf(stderr, "aisb: git: your config cannot be read: "
		    "%s\n", strerror(errno));
		return -1;
	}
	(void)snap_fs_unlink(tmp);
	if (snap_file_write(tmp, text != NULL ? text : "", len) != 0) {
		fprintf(stderr, "aisb: git: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	/* git -C SDIR/git config --file TMP ...: outside any repository */
	argv[0] = (char *)"git";
	argv[1] = (char *)"-C";
	argv[2] = home + 5;
	for (i = 0; i < n; i++)
		for (step = 0; o[i].why == NULL && step_argv(&o[i], tmp, step,
		    argv + 3, &argc) == 0; step++) {
			st_rc = launch_exec_env(argv, envp, NULL, 0, NULL, 0,
			    GIT_TIMEOUT_MS, 0, err, sizeof(err));
			/* 5: --unset-all of a key the config has not */
			if (st_rc != 0 && !(st_rc == 5 && step == 0 &&
			    o[i].nvals != 1)) {
				fprintf(stderr, "aisb: git: git config %s: "
				    "%s\n", o[i].k->name, err);
				goto out;
			}
		}
	if (at) {
		memset(&id, 0, sizeof(id));
		id.dev = st.dev;
		id.ino = st.ino;
		id.size = st.size;
		id.mtime_ns = st.mtime_ns;
		id.ctime_ns = st.ctime_ns;
	}
	rc = gg_put(tmp, cfg, at ? &id : NULL, at ? st.mode & 0666 : 0644,
	    at ? st.uid : r->uid, at ? st.gid : r->gid, err, sizeof(err));
	if (rc == 1) {
		fputs("aisb: git: your config changed meanwhile: nothing "
		    "written\n", stderr);
		rc = -1;
	} else if (rc == -1)
		fprintf(stderr, "aisb: git: your config: %s\n", err);
out:
	free(text);
	(void)snap_fs_unlink(tmp);
	return rc;
}

/* Asks at in whether to write n offered keys into cfg: 1 yes, 0 no. */
static int
ask(FILE *in, const char *mark, size_t n, const char *cfg)
{
	char	 q[64];
	int	 c;

	snprintf(q, sizeof(q), "write these %zu key(s) into ", n);
	for (;;) {
		if ((c = draft_ask_answer(in, mark, q, cfg, "? [y]es, "
		    "[n]o: ")) == 'y')
			return 1;
		if (c == EOF || c == 'n' || c == '\n')
			return 0;
	}
}

/* The changes of repository k's config said, and the offered ones
 * asked about or printed. */
static void
offer_repo(struct launch_gitguard *g, size_t k, const char *id, int apply)
{
	const struct gg_repo	*r = &g->repos[k];
	struct kvs		 before, after, host;
	struct offer		*o = NULL;
	char			 priv[PATH_MAX], cfg[PATH_MAX];
	char			 mark[DRAFT_MARK_HEX + 1] = "", *text = NULL;
	char			*htext = NULL;
	size_t			 n = 0, more = 0, nok = 0, i, j, len = 0, hlen;
	FILE			*in = NULL;

	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	memset(&host, 0, sizeof(host));
	if (gg_path(priv, r->priv, "config") == -1 ||
	    snprintf(cfg, sizeof(cfg), "%s/%s/config", g->ws, r->rel) >=
	    (int)sizeof(cfg))
		return;
	if ((text = snap_file_read(priv, GG_CONFIG_MAX, &len)) == NULL &&
	    errno != ENOENT) {
		fputs("aisb: git: the session's copy of ", stderr);
		snap_print_name(stderr, cfg);
		fprintf(stderr, " cannot be read (%s): nothing offered\n",
		    strerror(errno));
		return;
	}
	htext = snap_file_read(cfg, GG_CONFIG_MAX, &hlen);
	if (kvs_read(&before, r->config, r->configlen) == -1 ||
	    kvs_read(&after, text, len) == -1 || kvs_read(&host, htext,
	    htext != NULL ? hlen : 0) == -1 || (o = changed(&before, &after,
	    &host, &n, &more)) == NULL) {
		if (o == NULL && !before.failed && !after.failed &&
		    !host.failed)
			goto out;	/* memory */
		fputs("aisb: git: the session's config of ", stderr);
		snap_print_name(stderr, cfg);
		fputs(" holds too much to compare: nothing offered\n", stderr);
		goto out;
	}
	if (n == 0)
		goto out;
	for (i = 0; i < n; i++)
		nok += o[i].why == NULL;
	if (nok > 0 && apply != LAUNCH_APPLY_NEVER &&
	    (in = draft_os_terminal(apply == LAUNCH_APPLY_ASK)) != NULL &&
	    draft_os_is_terminal(stderr)) {
		if (draft_os_random_hex(mark, DRAFT_MARK_HEX) == -1) {
			fclose(in);
			in = NULL;
		} else
			draft_ask_header(id, mark);
	}
	fputs("aisb: git: the command changed the config of ", stderr);
	snap_print_name(stderr, cfg);
	fputs(" (its private copy; yours is as it was):\n", stderr);
	for (i = 0; i < n; i++) {
		fputs("aisb:   ", stderr);
		snap_print_name(stderr, o[i].k->name);
		if (o[i].why != NULL) {
			fprintf(stderr, "  NOT OFFERED: %s\n", o[i].why);
			continue;
		}
		if (o[i].nvals == 0)
			fputs(" removed", stderr);
		for (j = 0; j < o[i].nvals; j++) {
			fputs(j == 0 ? " = " : ", ", stderr);
			snap_print_name(stderr, o[i].vals[j]);
		}
		fputs("  (offered: it runs no code)\n", stderr);
	}
	if (more > 0)
		fprintf(stderr, "aisb:   and %zu more changed key(s), NOT "
		    "OFFERED\n", more);
	if (nok == 0)
		goto out;
	if (in != NULL && ask(in, mark, nok, cfg)) {
		if (apply_keys(g, k, o, n, cfg) == 0)
			fprintf(stderr, "aisb: git: %zu key(s) written\n", nok);
		else
			print_commands(o, n, cfg);
	} else {
		if (in == NULL && apply == LAUNCH_APPLY_ASK)
			fputs("aisb: --apply=ask: no terminal to ask on\n",
			    stderr);
		print_commands(o, n, cfg);
	}
out:
	if (in != NULL)
		fclose(in);
	offers_free(o, n);
	kvs_free(&before);
	kvs_free(&after);
	kvs_free(&host);
	free(text);
	free(htext);
}

void
gg_offer(struct launch_gitguard *g, const char *id, int apply)
{
	size_t	 k;

	for (k = 0; k < g->nrepos; k++)
		if (g->repos[k].full && g->repos[k].hasconfig)
			offer_repo(g, k, id, apply);
}
