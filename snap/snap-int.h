/*
 * libaisbsnap's insides, shared by its files and its unit tests; not part
 * of the API (snap.h).
 */
#ifndef AISB_SNAP_INT_H
#define AISB_SNAP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "snap.h"
#include "fs.h"

/* Full paths aisb builds (root + relative path); relative paths are
 * bounded far below by struct snap_limits (4,096 by default, at most
 * SNAP_REL_MAX). */
#define SNAP_PATH_MAX	8192
#define SNAP_REL_MAX	4096
/* A manifest or change set file, and one of its lines. */
#define SNAP_FILE_MAX	((size_t)256 << 20)
#define SNAP_LINE_MAX	16384
/* A link target. */
#define SNAP_LINK_MAX	4096

/* The stat identity of one entry at one moment. */
struct snap_ident {
	uint64_t	dev, ino, size;
	int64_t		mtime_ns, ctime_ns;
};

struct snap_ment {
	struct snap_entry	 pub;	/* points into the fields below */
	char			*path;
	char			*link;
	char			*excluded;
	char			 sha[SNAP_SHA256_HEX + 1];	/* "": not
						   hashed yet (files) */
	struct snap_ident	 src, stg;
};

struct snap_manifest {
	struct snap_ment	*v;
	size_t			 n, cap;
	struct snap_stage_stats	 stats;
	char			*source;	/* the tree staged; NULL in a
						   version 1 file (all hashed) */
	char			*file;		/* saved to or loaded from */
	int			 dirty;		/* hashes found since */
};

struct snap_chg {
	struct snap_change	 pub;
	char			*path, *old_link, *new_link, *reason;
	char			 old_sha[SNAP_SHA256_HEX + 1];
	char			 new_sha[SNAP_SHA256_HEX + 1];
};

struct snap_changes {
	struct snap_chg	*v;
	size_t		 n, cap;
	char		 digest[SNAP_SHA256_HEX + 1];
};

/* util.c */
/* snap_file_read (snap.h) with links followed (snap_fs_open_follow). */
char	*snap_file_read_follow(const char *path, size_t max, size_t *lenp);
int	 snap_err(char *err, size_t errlen, int code, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
/* root/rel into out[SNAP_PATH_MAX] (rel "" is root itself): 0 or -1. */
int	 snap_join(char *out, const char *root, const char *rel);
/* The folder part of rel ("" at the top) into out[SNAP_PATH_MAX]. */
void	 snap_dirname(char *out, const char *rel);
/* Percent-encoding of one token of the text formats ("-" for NULL). */
struct buf;
void	 snap_enc(struct buf *, const char *);
/* Decodes token s in place; NULL for "-"; -1 on a bad escape. */
int	 snap_dec(char *s, char **out);
/*
 * The bounds every walked entry is held to, by the stage (stage.c) and
 * by the change set (compare.c): one more entry (counted in *entries),
 * rel's length and depth within lim.  SNAP_OK, or SNAP_EBOUND with
 * "ROOT: what WHEN, over N (limit NAME): FIX" in err; when says which
 * walk ("" or " after the command"), fix what to do.
 */
int	 snap_bound_entry(const struct snap_limits *lim, uint64_t *entries,
	    const char *root, const char *rel, const char *when,
	    const char *fix, char *err, size_t errlen);
/* Splits a line into at most max space-separated tokens: their count. */
size_t	 snap_split(char *line, char **tok, size_t max);
/* The relative path is safe: not empty, no "", "." or ".." component, no
 * leading or trailing '/'. */
int	 snap_path_ok(const char *rel);
int	 snap_cmp_path(const void *, const void *);
/* Why Windows would take the relative path rel for another name (a
 * component with a trailing dot or space, a ':' that names a stream,
 * <>"|?*\ or a control character, a device name such as NUL or COM1
 * with any extension), or NULL.  The change set of a Windows build skips
 * such a path: a command could write ".git/hooks./x" or ".env " that the
 * host then opens as ".git/hooks/x" or ".env". */
const char *snap_win_name_bad(const char *rel);

/* hash.c: SHA-256 through the project's libcrypto */
struct snap_sha;
struct snap_sha	*snap_sha_new(void);
int	 snap_sha_update(struct snap_sha *, const void *, size_t);
/* Finishes into hex[SNAP_SHA256_HEX + 1] and frees. */
int	 snap_sha_final(struct snap_sha *, char *hex);
void	 snap_sha_free(struct snap_sha *);
int	 snap_sha_buf(const void *, size_t, char *hex);
/* The hash of a file (never through a link), its size in *size. */
int	 snap_sha_file(const char *path, char *hex, uint64_t *size);

/* rules.c */
/* As snap_rules_match, and for files the content rules read full (the
 * file on disk) to decide. */
const char *snap_rules_match_file(const struct snap_rules *,
	    const char *rel, const char *full, int is_dir);
/* snap_rules_git's copy, or NULL when none was given. */
const struct snap_git_env *snap_rules_git_env(const struct snap_rules *);
/* snap_rules_reader's uid and gid: 1 when set, else 0. */
int	 snap_rules_reader_of(const struct snap_rules *, uint32_t *uid,
	    uint32_t *gid);
/* The writeback_deny pattern (snap_rules_deny) that matches rel or a
 * folder above it, else NULL. */
const char *snap_rules_denied(const struct snap_rules *, const char *rel);
/* The rule that sanitizes rather than excludes: .git/config. */
int	 snap_rules_sanitizes(const struct snap_rules *, const char *rel);
/* gitkeys.c: .git/config text -> the sanitized text (snap.h): a new
 * buffer, with only the keys snap_git_key_staged keeps. */
char	*snap_git_config_sanitize(const char *in, size_t len, size_t *outlen);



/* stage.c */
/* The same of an open listing, which is closed. */
long	 snap_list_open(struct snap_dir *, char ***names);

/* manifest.c */
/* The content hash of file entry e as staged, into e->sha, read from the
 * source tree when e has none yet and the source file's stat identity is
 * still e->src (so it still holds what was staged).  0 with e->sha set;
 * 1 when it cannot be known (the source changed since: e->sha stays "");
 * -1 on error (errno). */
int	 snap_ment_hash(struct snap_manifest *, struct snap_ment *);
/* st is a regular file with the identity id. */
int	 snap_ident_is(const struct snap_stat *, const struct snap_ident *);
struct snap_manifest *snap_manifest_new(void);
struct snap_ment *snap_manifest_add(struct snap_manifest *, const char *path);
void	 snap_manifest_sort(struct snap_manifest *);
struct snap_ment *snap_manifest_find(const struct snap_manifest *,
	    const char *path);
void	 snap_ment_publish(struct snap_ment *);
/* Tokens of the text formats: 0, or -1 when malformed. */
int	 snap_parse_u64(const char *, uint64_t *);
int	 snap_parse_mode(const char *, uint32_t *);
/* "-" -> "", else 64 lower-case hex digits into out[65]. */
int	 snap_parse_sha(const char *, char *out);
/* "f" "d" "l" "s" -> enum snap_type; -1 else. */
int	 snap_parse_type(const char *);
extern const char snap_type_chars[];

/* changes.c */
struct snap_chg *snap_changes_add(struct snap_changes *, int kind,
	    int type, const char *path);
const struct snap_chg *snap_changes_find(const struct snap_changes *,
	    const char *path, int kind);
/* The canonical text (ends with the digest line) into a struct buf. */
int	 snap_changes_text(const struct snap_changes *, struct buf *);
/* In canonical order: by path, then delete, create, modify, mode, skip. */
void	 snap_changes_sort(struct snap_changes *);
/* Sorted, its entries' public fields set, its digest made: 0, or -1 when
 * its text is over SNAP_FILE_MAX. */
int	 snap_changes_finish(struct snap_changes *);

/* git.c: git's rules on the change set c (unsorted; sorted on return):
 * what they refuse becomes SKIP.  SNAP_OK, SNAP_ESYS, SNAP_EBOUND. */
int	 snap_git_pass(struct snap_changes *c, const struct snap_manifest *,
	    const char *stage, const struct snap_rules *, char *err,
	    size_t errlen);

/* gitcfg.c: core.hooksPath and included config files, as git reads them
 * for the tree's repositories (docs/snapshot.md, "core.hooksPath"). */
struct snap_gitguard;
/* NULL with *rc and err set on error (SNAP_EBOUND past a bound). */
struct snap_gitguard *snap_gitguard_new(const char *root,
	    const struct snap_manifest *, const struct snap_changes *,
	    const struct snap_git_env *, char *err, size_t errlen, int *rc);
void	 snap_gitguard_free(struct snap_gitguard *);
/* Why a change at rel may not be written (a hooks folder, an included
 * config file), or NULL. */
const char *snap_gitguard_refuses(const struct snap_gitguard *,
	    const char *rel);

/* The link target stays inside the tree when resolved lexically from the
 * folder of rel. */
int	 snap_link_inside(const char *rel, const char *target);

#endif
