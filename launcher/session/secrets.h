/*
 * A session's secrets (docs/launcher.md, "Secrets"): each --secret entry
 * (or secrets: of the user config) read on the host before anything
 * starts, handed to the session's own gate on a descriptor of its own
 * (aisb-gate --secrets-fd), which adds it to the requests its policy
 * says; the sandbox holds a placeholder, random and unique to the
 * session, in its place.
 *
 * An entry is NAME[=SOURCE]:
 *
 *   NAME                 the value of NAME in aisb's environment
 *   NAME=env:VAR         the value of VAR in aisb's environment
 *   NAME=file:PATH       the file's content (an absolute path), less one
 *                        line break at its end
 *   NAME=command:ARGV    what the command prints, less one line break at
 *                        its end: words split on spaces, run with no
 *                        shell, PATH searched (command:pass show api/key)
 *
 * A file: or the program of a command: in the workspace or a --mount's
 * source, or reached through a link there, is refused: the command
 * reads those folders and a direct session's command writes them.
 *
 * A value is 1 to LAUNCH_SECRETS_VALUE_MAX bytes of visible ASCII (it
 * goes into header values and request targets).  A variable read from
 * aisb's environment is wiped in place (what /proc/PID/environ shows)
 * and removed from it at once, so that nothing aisb starts afterwards
 * (the gate, podman, the watcher it forks) inherits it.
 */
#ifndef AISB_SESSION_SECRETS_H
#define AISB_SESSION_SECRETS_H

#include <stddef.h>
#include <stdio.h>

#include "policy.h"

#define LAUNCH_SECRETS_MAX	 32	/* entries (the gate's bound) */
#define LAUNCH_SECRETS_VALUE_MAX 4096	/* bytes of a value (the gate's) */
#define LAUNCH_SECRETS_ENTRY_MAX 1024	/* bytes of an entry */
#define LAUNCH_SECRETS_CMD_WORDS 16	/* words of a command: source */
#define LAUNCH_SECRETS_CMD_MS	 30000	/* a command: source's time */
#define LAUNCH_SECRETS_PH_PREFIX "aisb-placeholder-"
#define LAUNCH_SECRETS_PH_LEN	 (sizeof(LAUNCH_SECRETS_PH_PREFIX) - 1 + 40)

/*
 * For tests only: a CA file the session's gate also trusts for upstreams
 * (aisb-gate --upstream-ca), so that a test's HTTPS server on the host
 * can stand for a real API (tests/e2e/secrets.sh).  Not an interface for
 * users: an inspecting gate checks upstreams against the system's store.
 * A session (and a dry run) says on stderr that it is set.
 */
#define LAUNCH_TEST_UPSTREAM_CA_ENV	"AISB_TEST_UPSTREAM_CA"

struct launch_opts;

struct launch_secret {
	char		 name[POLICY_MAX_SECRET_NAME + 1];
	char		 placeholder[LAUNCH_SECRETS_PH_LEN + 1];
	char		*value;		/* NUL-terminated; wiped when freed */
	size_t		 vlen;
	size_t		 cap;		/* bytes value holds, to wipe */
	char		 source[96];	/* "environment FOO", "file /x", ... */
	const char	*where;		/* the option's: "--secret", a file */
};

struct launch_secrets {
	struct launch_secret	 v[LAUNCH_SECRETS_MAX];
	size_t			 n;
};

/*
 * One entry's grammar (the options check it as it is set; nothing is
 * read).  0, or -1 with err.
 */
int	 launch_secret_entry_check(const char *entry, char *err,
	    size_t errlen);
/* The NAME of an entry, into name (POLICY_MAX_SECRET_NAME + 1 bytes). */
void	 launch_secret_entry_name(const char *entry, char *name,
	    size_t len);
/*
 * The user config's secrets: entries are what a session may use: the
 * ones this session cannot give (no gate of its own, a policy the
 * project config chose, no rule of p that names them) are dropped from
 * o, each said to say (NULL: quiet), before launch_secrets_usable.  A
 * --secret the session cannot give stays, for that to refuse.
 */
void	 launch_secrets_unused(struct launch_opts *, const struct policy *p,
	    FILE *say);
/*
 * Before the values are read: the session can use them.  A gate of the
 * session's own (not --net none or direct, not a named gate, which
 * cannot take one session's secrets), a policy the user chose (not a
 * project config's: its rules would say where the secrets go), no --env
 * of the same name (which would pass the value itself), each named by a
 * secrets: entry of a rule of p (else it would reach nothing).  0, or -1
 * with err.
 */
int	 launch_secrets_usable(const struct launch_opts *,
	    const struct policy *p, char *err, size_t errlen);
/*
 * Reads every entry of o into ss and makes its placeholder: a secret
 * that is not set, empty, too long or not visible ASCII stops the
 * session (the caller exits 78).  envp is aisb's environment; each
 * variable read is removed from it (unsetenv).  0, or -1 with err
 * naming the entry, where it was given, and what to do; nothing of a
 * value is in err.
 */
int	 launch_secrets_read(struct launch_secrets *, const struct launch_opts *,
	    char **envp, char *err, size_t errlen);
/*
 * The gate's secrets file (aisb-gate(8), --secrets-fd) in a memory file
 * of its own, sealed, at offset 0: a descriptor to pass to the gate and
 * close; -1 with err.
 */
int	 launch_secrets_fd(const struct launch_secrets *, char *err,
	    size_t errlen);
/* The placeholder of name, or NULL. */
const char *launch_secrets_placeholder(const struct launch_secrets *,
	    const char *name);
/* Every value wiped and freed, names and placeholders kept (the gate has them). */
void	 launch_secrets_forget(struct launch_secrets *);
/* Every value wiped and freed; ss is empty after. */
void	 launch_secrets_free(struct launch_secrets *);
/* 1 when a rule of p has inspect: true (the gate then needs its CA). */
int	 launch_policy_inspects(const struct policy *p);

#endif
