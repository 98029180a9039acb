/*
 * libaisbsnap: snapshot sessions (issue 17).  A command never touches the
 * user's tree: it works on a private COPY (the stage); after it succeeds
 * the library computes what it changed (the change set), prints it, and
 * writes it back under a journalled transaction that a crash leaves
 * recoverable to "nothing applied" (docs/snapshot.md).
 *
 * Portable C: every call to the operating system goes through snap/fs.h
 * (snap/fs_posix.c; a Windows implementation may follow).  Paths given to
 * and returned by this API are UTF-8; paths inside a tree are relative,
 * '/'-separated, without "." or ".." components.
 *
 * Errors: every function that can fail returns SNAP_OK (0) or one of the
 * negative SNAP_E* codes below and, when err is not NULL, writes one line
 * into err[errlen] saying what, where (the path), and how to fix it.  No
 * file content ever appears in a message.
 *
 * Ownership: x_new/x_load/x_compute return objects the caller frees with
 * the matching x_free; x_free(NULL) does nothing.  Strings returned by
 * accessors belong to the object and live as long as it.
 */
#ifndef AISB_SNAP_H
#define AISB_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SNAP_OK		  0
#define SNAP_ESYS	 -1	/* the system said no (I/O, permission, space) */
#define SNAP_EBOUND	 -2	/* a limit of struct snap_limits was exceeded:
				   the launcher exits 78; err names the limit,
				   the number reached and the option to raise */
#define SNAP_ECONFLICT	 -3	/* the host tree changed since the stage was
				   made: err names the first file; nothing was
				   written */
#define SNAP_EINVAL	 -4	/* bad input: a pattern, an unsafe path, a
				   corrupt manifest, change set or journal */
#define SNAP_ECRASH	 -5	/* tests only: the crash hook fired (snap-test.h) */

#define SNAP_SHA256_HEX	64	/* hex digits of a SHA-256 (plus NUL: 65) */

/* ------------------------------------------------------------------ */
/* Rules: what the stage leaves out, and what is never written back.   */

/*
 * The default rules (docs/snapshot.md, "Exclusions"), by pattern:
 *   .git/hooks  .git/modules/ ** /hooks  .git/modules/ ** /config
 *   .git/config.worktree  .git/worktrees/ * /config.worktree
 *   .git-credentials  .env  .env.*  *.pem  *.key  *.p12  *.pfx
 *   id_*  (only when the file holds "PRIVATE KEY")
 *   .npmrc .pypirc .netrc _netrc  (only when they hold a token/password)
 *   .aws/credentials  .docker/config.json
 *   .git/config is copied SANITIZED: only [core] format keys, [branch]
 *   remote/merge/rebase and [remote] url, pushurl (without credentials),
 *   fetch and push survive (snap/gitkeys.c's allowlist); hooksPath,
 *   fsmonitor, filters, credential helpers, sshCommand, aliases and
 *   includes do not.  It is never written back.
 * Always, not configurable: symbolic links whose target leaves the tree
 * (absolute, or ".." past the root), files with more than one link,
 * devices, fifos, sockets.
 *
 * Pattern syntax: without '/', matched against the last component at any
 * depth; with '/', against the whole relative path; '*' and '?' never
 * match '/'; a "**" component matches zero or more components.  A matched
 * folder is left out with everything beneath it.
 *
 * The same rules hold on the way back: a change to a path they match (or
 * a path under one) is listed as skipped and never written to the host,
 * so a command cannot plant a hook, a config or a key file in the user's
 * tree.  Setuid, setgid and sticky bits are never written back.
 */
struct snap_rules;

/* 1 when pattern (the syntax above) matches the relative path. */
int	 snap_glob(const char *pattern, const char *path);

/* The defaults above; NULL on memory exhaustion. */
struct snap_rules	*snap_rules_new(void);
void			 snap_rules_free(struct snap_rules *);
/* One more pattern left out ("configured"): SNAP_OK, or SNAP_EINVAL for
 * an empty pattern, one over 255 bytes, or one with a ".." component. */
int	 snap_rules_add(struct snap_rules *, const char *pattern, char *err,
	    size_t errlen);
/*
 * One more pattern staged as it is but never written back (the user
 * config's writeback_deny): a change to a path it matches, or under one,
 * is listed as skipped ("writeback denied: PATTERN").  As snap_rules_add.
 */
int	 snap_rules_deny(struct snap_rules *, const char *pattern, char *err,
	    size_t errlen);
/* Drops a default by its exact pattern text (".env", ".git/config": the
 * latter copies .git/config unchanged and lets it be written back):
 * SNAP_OK, or SNAP_EINVAL naming the defaults when there is none such. */
int	 snap_rules_drop(struct snap_rules *, const char *pattern, char *err,
	    size_t errlen);
/*
 * Where git reads configuration outside the tree, as git would for the
 * user whose tree it is (the change set resolves core.hooksPath and
 * included files from these and from every repository's own files:
 * docs/snapshot.md, "core.hooksPath").  NULL members: none of that.
 */
#define SNAP_GIT_SYSTEM_MAX	4
#define SNAP_GIT_PAIRS_MAX	64
struct snap_git_env {
	const char	*home;		/* "~", ~/.gitconfig */
	const char	*xdg_config;	/* $XDG_CONFIG_HOME (else home/.config):
					   its git/config */
	const char	*global;	/* $GIT_CONFIG_GLOBAL (read besides the
					   two above: the safe side) */
	const char	*system[SNAP_GIT_SYSTEM_MAX];	/* /etc/gitconfig,
					   $GIT_CONFIG_SYSTEM; NULL ends */
	const char	*const *pairs;	/* $GIT_CONFIG_KEY_n=$GIT_CONFIG_VALUE_n,
					   "key=value" each */
	size_t		 npairs;	/* at most SNAP_GIT_PAIRS_MAX */
};
/* The rules take a copy of env: SNAP_OK, SNAP_EINVAL (too many), or
 * SNAP_ESYS (memory).  Without it only the tree's own git files count. */
int	 snap_rules_git(struct snap_rules *, const struct snap_git_env *env,
	    char *err, size_t errlen);
/* snap_rules_git with home, xdg_config and the system files given (NULL
 * ends system) and the rest from this process's environment:
 * $GIT_CONFIG_GLOBAL, $GIT_CONFIG_SYSTEM, $GIT_CONFIG_COUNT's pairs. */
int	 snap_rules_git_environ(struct snap_rules *, const char *home,
	    const char *xdg_config, const char *const *system, char *err,
	    size_t errlen);

/*
 * Git's config syntax, the one reader of it (snap/gitsyntax.c): fn is
 * called for every "key = value" of text, in order, with the section
 * and key lower case, the subsection as written (NULL: none), the value
 * unquoted and unescaped (NULL: a key without '=', a boolean true).  A
 * line git would refuse, or a name or value over its bound, is skipped.
 * fn returning -1 stops the reading: -1; also -1 (ENOMEM) without
 * memory; else 0.
 */
#define SNAP_GITCFG_NAME_MAX	64	/* bytes of a section or key name */
#define SNAP_GITCFG_SUB_MAX	256	/* bytes of a subsection */
#define SNAP_GITCFG_VALUE_MAX	4096	/* bytes of a value */
typedef int (*snap_gitcfg_fn)(void *arg, const char *sect, const char *sub,
	    const char *key, const char *value);
int	 snap_gitcfg_parse(const char *text, size_t len, snap_gitcfg_fn fn,
	    void *arg);

/*
 * NULL when "sect.sub.key = value" (snap_gitcfg_parse's names) may go
 * into a host's git config: the key is on the allowlist of those that
 * cannot run code (remote.NAME.url, pushurl, fetch, push; branch.NAME.
 * remote, merge, rebase) and its value names no code either (a URL of
 * https, http, ssh or git, without a credential; a branch's remote is
 * "." or one of remotes, the names of the remotes with a URL in the
 * config it goes into, NULL-terminated); value NULL: the key removed,
 * which the allowlist alone decides.  Else why not, one phrase
 * (snap/gitkeys.c).
 */
const char *snap_git_key_back(const char *sect, const char *sub,
	    const char *key, const char *value, const char *const *remotes);
/* 1 when section.key (sub: its subsection or NULL) survives the stage's
 * sanitized copy: the repository's format keys and the allowlist above.
 * Every other key may run code or redirect git. */
int	 snap_git_key_staged(const char *sect, const char *sub,
	    const char *key);

/*
 * 1 when name, an entry at the top of a git folder, is one that git's
 * own work writes (objects, refs, logs, lfs, index, HEAD, packed-refs,
 * ORIG_HEAD, FETCH_HEAD, COMMIT_EDITMSG, ...: docs/snapshot.md, "Git's
 * metadata on the way back"); 0 for what git reads code or another
 * folder from (config, hooks, info, commondir, worktrees, modules, a
 * rebase's todo list, anything else).
 */
int	 snap_git_back_name(const char *name);

/*
 * What git would run or read as its config from inside the tree root,
 * resolved as the change set resolves it (docs/snapshot.md,
 * "core.hooksPath": every config git reads, from rules' snap_rules_git
 * environment, includeIf as if it held) for the repositories of the
 * folders wt (holding a .git; relative, "" the top) and the bare git
 * folders bare, and those the tree is in: fn is called with each folder
 * core.hooksPath names inside the tree (hooks 1; a hooks path that is
 * the top itself: each hook's name, hooks 0) and each config file inside
 * it that git includes (hooks 0).  A bind session keeps them read-only.
 * fn returns SNAP_OK, else the walk stops.  SNAP_OK, SNAP_ESYS,
 * SNAP_EBOUND, with err.
 */
typedef int (*snap_guarded_fn)(void *arg, const char *rel, int hooks);
int	 snap_git_guarded(const char *root, char *const *wt, size_t nwt,
	    char *const *bare, size_t nbare, const struct snap_rules *rules,
	    snap_guarded_fn fn, void *arg, char *err, size_t errlen);

/*
 * Whose reading the stage is limited to: the workspace's owner, uid:gid
 * with no other group, as a bind session's sandbox reads the workspace
 * (docs/snapshot.md, "Who may read").  What that user may not read (a
 * file or folder of another user, mode 0600 or 0700) is left out with
 * SNAP_WHY_UNREADABLE.  Without it: what this process can read.  Also,
 * always: nothing on another filesystem than the tree's top (a mount
 * point, mounted over the workspace) is staged: SNAP_WHY_MOUNT.
 */
void	 snap_rules_reader(struct snap_rules *, uint32_t uid, uint32_t gid);
#define SNAP_WHY_UNREADABLE	"the workspace's owner cannot read it"
#define SNAP_WHY_MOUNT		"another filesystem (a mount point)"

/* NULL when path (relative) is staged and may be written back; else the
 * reason it is not ("git hooks run code", "credential", "configured",
 * "sanitized copy", ...).  is_dir: path is a folder.  The folders above
 * path are matched too.  Rules that depend on content (id_*, .npmrc, ...)
 * match here by name alone: staging and the change set read the file. */
const char *snap_rules_match(const struct snap_rules *, const char *path,
	    int is_dir);

/*
 * Why the file or folder at rel (relative, '/'-separated) is one that
 * runs, or chooses what runs, without anyone reading it first: a git
 * hook or husky's, .pre-commit-config.yaml, .envrc, .vscode/ and .idea/,
 * package.json's scripts, a Makefile, CI workflows, and what aisb itself
 * reads from the workspace (.aisb.yaml; the lockfiles of
 * --allow-from-lockfile); "make runs it", "aisb reads it: ...".  NULL
 * when it is none of them.  The table is snap/autorun.c's; a snapshot
 * session's summary never folds such a change away and marks it.
 */
const char *snap_autorun(const char *rel);

/* ------------------------------------------------------------------ */
/* Bounds on a tree, checked when staging and again on the change set. */

struct snap_limits {
	uint64_t	entries;	/* files, folders, links walked */
	uint64_t	bytes;		/* file bytes in all */
	uint64_t	file_bytes;	/* bytes of one file */
	size_t		path_len;	/* bytes of a relative path */
	size_t		depth;		/* components of a relative path */
};

/* The documented defaults: 100,000 entries, 2 GiB, 512 MiB per file,
 * 4,096-byte paths, depth 128. */
void	 snap_limits_default(struct snap_limits *);

/* ------------------------------------------------------------------ */
/* The stage and its manifest.                                          */

enum snap_type {
	SNAP_FILE = 1,
	SNAP_DIR,
	SNAP_LINK,
	SNAP_SPECIAL		/* device, fifo, socket: listed, never staged */
};

/* One entry of a manifest: what the source held when it was staged. */
struct snap_entry {
	const char	*path;		/* relative; never "" (the root is not
					   an entry) */
	enum snap_type	 type;
	uint32_t	 mode;		/* permission bits, 07777 */
	uint64_t	 size;		/* files: bytes; links: target length */
	const char	*sha256;	/* files: hex of the content; "" else,
					   and "" while not hashed (staging
					   does not hash; the change set
					   fills what it needs) */
	const char	*link;		/* links: the target; NULL else */
	const char	*excluded;	/* NULL: staged; else the reason it was
					   not (or "sanitized copy") */
};

struct snap_stage_stats {
	uint64_t	entries;	/* in the manifest, excluded included */
	uint64_t	files, dirs, links;
	uint64_t	bytes;		/* file bytes staged */
	uint64_t	excluded;	/* entries left out */
	uint64_t	cloned;		/* files staged by reflink (FICLONE) */
};

struct snap_manifest;

/*
 * Copies the tree at src_root into stage_root (which must not exist; its
 * parent must: keep it in a private 0700 folder; it is created with the
 * mode of src_root), following no symbolic link, leaving out what rules
 * match, hashing nothing.  Files are cloned (FICLONE) where the
 * filesystem can, else copied in the kernel (copy_file_range), else read
 * and written; nothing is fsync'd (the stage is scratch).  The manifest
 * records src_root and, per entry, its type, mode, size and the stat
 * identity (device, inode, size, mtime, ctime) of both the source and the
 * stage copy: the change set hashes only stage files whose identity
 * changed, and the source's original only then (see
 * snap_changes_compute).
 * SNAP_OK with *out set; SNAP_EBOUND past a limit, SNAP_ESYS, SNAP_EINVAL
 * (src_root not a folder, stage_root exists).  On error the partial stage
 * is removed and *out is NULL.
 */
int	 snap_stage_create(const char *src_root, const char *stage_root,
	    const struct snap_rules *, const struct snap_limits *,
	    struct snap_manifest **out, char *err, size_t errlen);

/* Removes a stage (or any tree aisb made), never following a link:
 * SNAP_OK (also when root does not exist) or SNAP_ESYS. */
int	 snap_tree_remove(const char *root, char *err, size_t errlen);

/*
 * A manifest to a file and back (text, docs/snapshot.md "Manifest"),
 * written whole or not at all (temporary, fsync, rename).  Load bounds:
 * 256 MiB, 16 KiB per line; anything malformed is SNAP_EINVAL naming the
 * line.  The manifest remembers the file it was saved to or loaded from:
 * snap_changes_compute writes the hashes it finds back there.
 */
int	 snap_manifest_save(const struct snap_manifest *, const char *path,
	    char *err, size_t errlen);
int	 snap_manifest_load(const char *path, struct snap_manifest **out,
	    char *err, size_t errlen);
void	 snap_manifest_free(struct snap_manifest *);
size_t	 snap_manifest_count(const struct snap_manifest *);
/* Entry i < count, in path order; NULL past the end. */
const struct snap_entry *snap_manifest_entry(const struct snap_manifest *,
	    size_t i);
void	 snap_manifest_stats(const struct snap_manifest *,
	    struct snap_stage_stats *);
/*
 * Whether the tree the manifest was staged from is still as staged:
 * every entry of it known to the manifest with the same identity
 * (device, inode, and for files and links size, mtime and ctime), none
 * more, none less; what the stage left out is not looked into.  Stat
 * only.  1 as staged, 0 moved on (or past lim's entries), SNAP_ESYS,
 * SNAP_EINVAL (a manifest that names no source).
 */
int	 snap_manifest_current(const struct snap_manifest *,
	    const struct snap_limits *lim, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* The change set: what the command did to the stage.                   */

enum snap_change_kind {
	SNAP_CREATE = 1,	/* a new file, folder or link */
	SNAP_MODIFY,		/* new content (file) or target (link); mode
				   may change with it */
	SNAP_DELETE,		/* gone from the stage */
	SNAP_MODE,		/* same content, new permission bits */
	SNAP_SKIP		/* a change that is never written back: see
				   reason */
};

struct snap_change {
	enum snap_change_kind	 kind;
	enum snap_type		 type;		/* of the new entry (CREATE,
						   MODIFY, MODE) or of the
						   old one (DELETE) */
	const char		*path;
	uint32_t		 old_mode, new_mode;	/* 0 when none */
	uint64_t		 old_size, new_size;
	const char		*old_sha256, *new_sha256; /* files; "" else */
	const char		*old_link, *new_link;	/* links; NULL else */
	const char		*reason;	/* SKIP: why ("excluded:
						   credential", "link leaves
						   the tree", ...); NULL else */
};

struct snap_changes;

/*
 * Walks stage_root and compares it with the manifest made when it was
 * staged.  A rename is a delete and a create; a type change (file to
 * folder) too.  Files whose stage stat identity is unchanged are not read;
 * others are hashed, and so is their original in the manifest's source
 * tree (once, when the manifest has no hash yet) if the source file's
 * stat identity is still the one staged: then it still holds the staged
 * content.  If it is not, the original is unknown: the file is MODIFY
 * (or DELETE) with old_sha256 "", which snap_tx_apply refuses as a
 * conflict.  The hashes found go into the manifest and, when it has a
 * file (snap_manifest_save/_load), are saved there (SNAP_ESYS if that
 * fails), so that computing again later gives the same change set
 * whatever the host does meanwhile.  The same rules and limits as staging hold: what the
 * rules match becomes SKIP, a link whose target leaves the tree or a
 * device/fifo/socket becomes SKIP; entries, bytes, file bytes, path length
 * and depth past the limits are SNAP_EBOUND (with the number).
 * The changes are in canonical order (by path, bytewise); their digest is
 * the SHA-256 of the canonical serialisation (snap_changes_save).
 */
int	 snap_changes_compute(struct snap_manifest *,
	    const char *stage_root, const struct snap_rules *,
	    const struct snap_limits *, struct snap_changes **out,
	    char *err, size_t errlen);
void	 snap_changes_free(struct snap_changes *);
size_t	 snap_changes_count(const struct snap_changes *);
const struct snap_change *snap_changes_get(const struct snap_changes *,
	    size_t i);
/* Changes that would be written (count minus SKIPs): 0 = nothing to
 * propose. */
size_t	 snap_changes_effective(const struct snap_changes *);
/* Hex SHA-256 of the canonical form, SNAP_SHA256_HEX digits. */
const char *snap_changes_digest(const struct snap_changes *);

/* The canonical text form to a file and back (whole or not at all; load
 * bounded at 256 MiB, 16 KiB per line; a digest that does not match the
 * content is SNAP_EINVAL). */
int	 snap_changes_save(const struct snap_changes *, const char *path,
	    char *err, size_t errlen);
int	 snap_changes_load(const char *path, struct snap_changes **out,
	    char *err, size_t errlen);

/*
 * Prints a summary: one line per change ("A path", "M path", "D path",
 * "m path 0644 -> 0755", "S path (reason)"; folders end in '/', links show
 * "-> target"), then a totals line with the digest.  max_lines bounds the
 * per-change lines (0: no bound); "... N more" says what was left out.
 * SNAP_OK or SNAP_ESYS (write error).
 */
int	 snap_changes_print_summary(const struct snap_changes *, FILE *out,
	    size_t max_lines);

/* A name (a path of the tree, a link target) on out, escaped as the
 * printers escape it: nothing in it can act on a terminal. */
void	 snap_print_name(FILE *out, const char *name);

/*
 * A unified diff (3 lines of context) of every changed file, old content
 * from host_root (checked against the manifest's hash; a file changed on
 * the host since staging is printed as "conflict", with the stage's path,
 * then diffed against the host's file as it is now) and new
 * content from stage_root (checked against the change set's hash).  Text
 * files up to max_file_bytes each (0: 1 MiB) are diffed; binary (a NUL
 * byte in the first 8 KiB), larger ones and pairs differing in more than
 * 2,000 lines are shown by size and SHA-256 with the reason.  A script
 * (executable, "#!", snap_autorun) is always diffed as text within
 * max_file_bytes, NUL bytes escaped, shown whole past 2,000 lines.
 * SNAP_OK, SNAP_ESYS.
 */
int	 snap_changes_print_diff(const struct snap_changes *,
	    const char *host_root, const char *stage_root,
	    size_t max_file_bytes, FILE *out, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Transactions: the change set written back to the host.               */

enum snap_tx_state {
	SNAP_TX_NONE = 0,	/* no journal: nothing was ever written */
	SNAP_TX_PREPARING,	/* intent recorded, backups being made: the
				   host is untouched */
	SNAP_TX_APPLYING,	/* some step may have written: needs
				   snap_tx_recover */
	SNAP_TX_APPLIED,	/* done: all applied */
	SNAP_TX_ROLLED_BACK	/* recovered: nothing applied */
};

/* "none", "preparing", "applying", "applied", "rolled-back". */
const char *snap_tx_state_name(enum snap_tx_state);

/*
 * Writes the change set back into host_root, with new content from
 * stage_root.  tx_dir (must not exist; its parent must, private) receives
 * the journal, a copy of the change set and the backups.
 * 1. Before any host write, every target is checked against the manifest:
 *    a file to modify or delete must still hold the hash it had when the
 *    stage was made (an unknown one, "", is a conflict: see
 *    snap_changes_compute), a path to create must not exist, a folder to delete
 *    must hold nothing the manifest does not know, no folder on the way
 *    may be a link.  Any difference is SNAP_ECONFLICT naming the path;
 *    nothing is written (the tx_dir stays, state "rolled-back").
 * 2. Backups of every file to be changed or deleted go to tx_dir/backup,
 *    after the journal's intent record (the change set's digest); one
 *    syncfs makes them durable, then the journal says "ready".
 * 3. Steps, not journalled one by one: deletes (children first), then
 *    folders, then files and links (every new content to a temporary
 *    next to its target, one syncfs of the host's filesystem, then the
 *    renames), then modes.  One more syncfs, then "done".
 * A failure during 3 rolls back at once (snap_tx_recover); its error is
 * returned.  SNAP_OK: all applied.
 */
int	 snap_tx_apply(const char *tx_dir, const char *host_root,
	    const char *stage_root, const struct snap_manifest *,
	    const struct snap_changes *, char *err, size_t errlen);

/*
 * Brings an interrupted transaction to a settled state: "applied" stays
 * applied; otherwise every step whose target shows it ran is undone from
 * the backups (a target as it was before its step is left alone) (ROLL BACK: the backups are the only content the transaction
 * made durable itself; the stage may be gone), children created removed,
 * folders deleted made again.  Before writing, every target is checked to
 * be either as the transaction left it or as it was before: anything else
 * (a later edit by someone else) is SNAP_ECONFLICT naming the path, and
 * nothing is written.  Idempotent: recovering a settled transaction does
 * nothing and returns SNAP_OK.  *state (may be NULL) receives the state
 * after.
 */
int	 snap_tx_recover(const char *tx_dir, const char *host_root,
	    enum snap_tx_state *state, char *err, size_t errlen);

/*
 * Takes back the transaction in tx_dir, which must be applied, with a
 * transaction of its own in undo_dir (must not exist; its parent must,
 * private): the inverse change set (creations deleted, deletions created,
 * modifications and modes put back), its new contents the backups tx_dir
 * made, written back exactly as snap_tx_apply writes (every target first
 * checked to be as tx_dir left it: a later edit on the host is
 * SNAP_ECONFLICT naming the file, and nothing is written; backups, the
 * journal, each target checked again at its write, the same crash
 * points; snap_tx_recover rolls an interrupted undo back to "applied").
 * Every transaction also keeps, in after/, the new content of each file
 * it writes (beside backup/, the old).  SNAP_OK: undone.
 */
int	 snap_tx_undo(const char *undo_dir, const char *tx_dir,
	    const char *host_root, char *err, size_t errlen);
/* 1 when the transaction in tx_dir is an undo, with the folder name of
 * the one it undoes into name[len]; 0 when not; -1 (errno). */
int	 snap_tx_undoes(const char *tx_dir, char *name, size_t len);

/*
 * The state of the transaction in tx_dir from its journal, and (digest
 * not NULL, SNAP_SHA256_HEX + 1 bytes) its change set's digest ("" when
 * none).  A tx_dir without a journal is SNAP_TX_NONE.  SNAP_OK, SNAP_ESYS,
 * SNAP_EINVAL (a corrupt journal).
 */
int	 snap_tx_state(const char *tx_dir, enum snap_tx_state *state,
	    char *digest, char *err, size_t errlen);

/* 1 when the transaction in tx_dir got to write the host (its journal
 * says "ready"; rolled back since or not), 0 when it never did, -1 on an
 * unreadable or corrupt journal. */
int	 snap_tx_wrote(const char *tx_dir);

/*
 * Calls fn(name, state, digest, arg) for every transaction folder under
 * parent (a folder holding tx folders), in name order; fn returning
 * non-zero stops the walk.  Unreadable entries are passed with state
 * SNAP_TX_NONE and digest "".  SNAP_OK, SNAP_ESYS.
 */
int	 snap_tx_list(const char *parent,
	    int (*fn)(const char *name, enum snap_tx_state, const char *digest,
		void *arg), void *arg, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Small files kept beside a stage (the launchers' state files).        */

/* The names in the folder root/rel ("" root itself; never through a
 * link), sorted bytewise: their count, or -1 (errno); free with
 * snap_names_free. */
long	 snap_list_dir(const char *root, const char *rel, char ***names);
void	 snap_names_free(char **, long);
/* A whole file of at most max bytes, never through a link: a
 * NUL-terminated buffer the caller frees, its length in *lenp; NULL with
 * errno set (EFBIG past max). */
char	*snap_file_read(const char *path, size_t max, size_t *lenp);
/* data written to path whole or not at all (a temporary, fsync, rename,
 * fsync of its folder): 0, or -1 with errno set. */
int	 snap_file_write(const char *path, const void *, size_t);
/* The SHA-256 of len bytes as lower-case hex into hex[SNAP_SHA256_HEX
 * + 1]: 0, or -1. */
int	 snap_sha256_hex(const void *, size_t len, char *hex);

#endif
