/*
 * A transaction's insides (tx.c), shared by its four files and nothing
 * else: tx.c writes a change set back, recover.c rolls an interrupted
 * one back, undo.c takes an applied one back, journal.c holds what they
 * use (the step list, the journal written and read back, host paths and
 * copies, the crash hook).
 */
#ifndef AISB_SNAP_TX_INT_H
#define AISB_SNAP_TX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "snap-int.h"

#define JOURNAL_HEAD	"aisb-snap-journal 1"

enum action {
	A_DEL,		/* a file, link or folder removed */
	A_MKDIR,	/* a folder made (0700 until A_CHMOD) */
	A_PUT,		/* a file or link written: temporary, rename */
	A_CHMOD		/* the final mode of a file or folder */
};

struct step {
	size_t		ci;	/* change index */
	enum action	a;
};

struct tx {
	const char		*dir, *host, *stage;
	const struct snap_changes *c;
	struct step		*steps;
	size_t			 nsteps;
	struct snap_stat	*was;	/* per change: its target as checked
					   before "ready" (type 0: absent) */
	long			 refused;	/* the step whose target was not
					   the one checked: it wrote nothing
					   there; -1 */
	struct snap_file	*j;	/* the journal, for appending */
	/* an undo (undo.c): the new contents are the backups of the
	 * transaction in src_dir, whose change set is src_c */
	const char		*src_dir;
	const struct snap_changes *src_c;
	char			*err;
	size_t			 errlen;
};

struct jstate {
	enum snap_tx_state	state;
	char			digest[SNAP_SHA256_HEX + 1];
	size_t			nsteps;
	long			last;	/* the last step announced; -1 */
	long			refused;	/* "refused K"; -1 */
	int			ready;
};

/*
 * The names a step uses next to its target (snap_tx_temp_path): its new
 * content or folder before it gets the target's name, the entry it moved
 * away from the target (snap_fs_move_checked), and a backup on its way
 * back (recovery).
 */
#define TX_NEW		""
#define TX_WAS		".was"
#define TX_BACK		".back"

/* journal.c */
/* The crash hook (snap-test.h): 1 when the test's crash point is here. */
int	 snap_tx_crash(void);
/* A system error about path into t's err: SNAP_ESYS. */
int	 snap_tx_sys(struct tx *, const char *path);
/* One journal record, durable before the caller goes on. */
int	 snap_tx_jrec(struct tx *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The deterministic step list of t->c (the journal's K) into t->steps. */
int	 snap_tx_plan(struct tx *);
/* The host's path of rel, and the temporary of step k next to it (with
 * one of the TX_* suffixes), into out[SNAP_PATH_MAX]. */
int	 snap_tx_host_path(struct tx *, char *out, const char *rel);
int	 snap_tx_temp_path(struct tx *, char *out, const char *rel, size_t k,
	    const char *suffix);
/* The folder of rel on the host, fsync'd. */
int	 snap_tx_fsync_parent(struct tx *, const char *rel);
/* src to a new file dst of mode (dst NULL: only read), fsync'd when
 * dosync; its hash must be want (unless NULL), and src the same file
 * unchanged from the first byte to the last (its identity into *id when
 * id is not NULL): 0, -1 (errno), or 1 when the hash differs or src
 * changed while it was read. */
int	 snap_tx_copy_to(const char *src, const char *dst, uint32_t mode,
	    const char *want, int dosync, struct snap_stat *id);
int	 snap_tx_open(struct tx *, const char *tx_dir, const char *host,
	    const char *stage, char *err, size_t errlen);
void	 snap_tx_close(struct tx *);
/* The journal of tx_dir read back into js (no journal: SNAP_TX_NONE). */
int	 snap_tx_read_journal(const char *tx_dir, struct jstate *js,
	    char *err, size_t errlen);

/* The path of the new content of change ci into out[SNAP_PATH_MAX]:
 * the stage's file, or for an undo the backup the undone transaction
 * made of it. */
int	 snap_tx_content(struct tx *, size_t ci, char *out);

/* tx.c: the transaction t (its c, dir, host, and stage or src_*) run in
 * the new folder t->dir, from the journal's first record to done (or
 * rolled back); an undo names the transaction it undoes. */
int	 snap_tx_run(struct tx *, const char *undoes);

/* recover.c: every step of t's journal undone; its state in *state. */
int	 snap_tx_rollback(struct tx *, enum snap_tx_state *state);

#endif
