/*
 * Held requests (ask.c; docs/launcher.md, "Held requests"): a gate run
 * with --ask holds a request its policy would deny and announces it on
 * its control socket; the user answers from any terminal with aisb
 * pending, aisb approve ID once|session|always and aisb deny ID.
 *
 * The control protocol (one command per connection, one line each, JSON
 * answers; gate/control.c):
 *	pending			{"pending":[HELD,...],"refused":REFUSED|null}
 *	approve N once|session	{"approve":"ok"} or {"approve":"gone"}
 *	deny N			{"deny":"ok"} or {"deny":"gone"}
 *	watch			stays open: {"held":HELD} and
 *				{"answered":{"id":N,"answer":"..."}} and
 *				{"refused":REFUSED} lines
 * HELD: {"id":N,"host":"NAME","port":P,"how":"connect|http|transparent|
 * socks|port","user":"U"|null,"method":"GET"|null,"age_ms":A,"left_ms":L}
 * REFUSED: the last request the gate's bounds denied without holding it
 * (too many held already), {"host":..,"port":..,"how":..,"user":..,
 * "method":..,"count":N,"ago_ms":A}: N such denials since the gate
 * started (pending), or since its last "refused" line (watch).
 *
 * An ID as the user types it is PREFIX-N: PREFIX the first 8 hex digits
 * of a session with a gate of its own (any unique prefix of its id is
 * taken), or a named gate's name; N the gate's number of the request.
 */
#ifndef AISB_SESSION_ASK_H
#define AISB_SESSION_ASK_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "host/paths.h"
#include "policy.h"
#include "session/gates.h"

#define LAUNCH_ASK_SHORT	8	/* hex digits of a session in an ID */
#define LAUNCH_ASK_GATES_MAX	256	/* gates asked by aisb pending */
#define LAUNCH_ASK_PENDING_MAX	(256 * 1024)	/* bytes of an answer */
#define LAUNCH_ASK_LINE_MAX	4096	/* bytes of a watch line */
#define LAUNCH_ASK_ID_MAX	9007199254740991LL	/* 2^53 - 1: the gate's */

/* One held request, as the gate says it. */
struct launch_held {
	unsigned long long	 id;
	char			 host[POLICY_MAX_NAME + 1];
	unsigned		 port;
	char			 how[16];
	char			 user[64];	/* "": null */
	char			 method[POLICY_MAX_METHOD + 1];	/* "": null */
	long long		 age_ms, left_ms;	/* REFUSED: ago_ms */
	long long		 count;		/* REFUSED's; 0: held */
};

/* One gate that may hold requests: a session's own or a named one. */
struct launch_ask_gate {
	char	 dir[PATH_MAX];		/* holds its control socket */
	char	 prefix[LAUNCH_GATE_NAME_MAX + 1];	/* of its IDs */
	char	 session[LAUNCH_ID_HEX + 1];	/* its session; "": named */
};

/*
 * The object at s (len bytes, its opening '{') into h: the bytes it took,
 * or -1 when it is not one (a string too long for its field, a port out
 * of range, no id, or for a REFUSED no count).  Unknown keys are skipped,
 * whatever their value.
 */
ssize_t	 launch_held_parse(const char *s, size_t len, struct launch_held *h);
/*
 * "HOST:PORT" ("[ADDR]:PORT" for IPv6), bytes a terminal would act on
 * replaced by '?': the host came from the sandbox.
 */
void	 launch_held_dest(const struct launch_held *, char *out, size_t len);

/*
 * The gates of the user's running sessions (their launcher alive, a
 * control socket in their folder) and named gates up with --ask, at most
 * max, into v; their count in *n.  Dead ones are left out quietly.  0,
 * or -1 with err (no state folder).
 */
int	 launch_ask_gates(struct launch_ask_gate *v, size_t max, size_t *n,
	    char *err, size_t errlen);
/*
 * The gate of ID ("PREFIX-N") into g and N into *n: 0; 1 with err when
 * PREFIX is a session of the user's that ended (nothing of it is held);
 * or -1 with err (not an ID, no such gate, more than one).
 */
int	 launch_ask_find(const char *id, struct launch_ask_gate *g,
	    unsigned long long *n, char *err, size_t errlen);
/*
 * What g holds now into a new array *v of *n entries (free it), and,
 * when refused is not NULL, its REFUSED into it (count 0: none).  0, or
 * -1 with errno set (ECONNREFUSED, ENOENT: the gate is gone) and err.
 */
int	 launch_ask_pending(const struct launch_ask_gate *g,
	    struct launch_held **v, size_t *n, struct launch_held *refused,
	    char *err, size_t errlen);
/*
 * The line that tells a person about r, a REFUSED, for the gate whose
 * IDs start with prefix, into out: what was denied, how many, why.
 */
void	 launch_refused_say(const struct launch_held *r, const char *prefix,
	    int since_start, char *out, size_t len);
/*
 * answer ("once", "session" or "deny") to request n of g.  0 done, 1
 * gone (answered, timed out, its client closed, or no such request), -1
 * with err (the gate's session grants full, too: the request is still
 * held).
 */
int	 launch_ask_answer(const struct launch_ask_gate *g,
	    unsigned long long n, const char *answer, char *err,
	    size_t errlen);
/*
 * The command of a running session, as its note says it (printable,
 * cut), into out: 0, or -1 when there is none.
 */
int	 launch_ask_command(const char *session, char *out, size_t len);
/* The session of a gate's user ("session-<id>"), or NULL. */
const char *launch_ask_user_session(const char *user);

/*
 * 1 when the policy of o is the user's own to write into (a flag, AISB_*,
 * the user config, or ~/.config/aisb/policy.yaml), never a project
 * config's, the shipped default or a named gate's.
 */
struct launch_opts;
int	 launch_ask_policy_ours(const struct launch_opts *);
/*
 * Writes dir/ask, a session's or a named gate's note: "policy PATH", the
 * file aisb approve ID always writes for its gate (policy NULL: "-",
 * none of the user's own, so the user's default file), and for a session
 * "command WORDS" (cmd, ncmd; bytes a terminal acts on as '?'), which
 * aisb pending shows.  0, or -1 with err.
 */
int	 launch_ask_note(const char *dir, const char *policy, char *const *cmd,
	    int ncmd, char *err, size_t errlen);
/*
 * The policy file always writes for g, into out: its note's, else
 * ~/.config/aisb/policy.yaml.  0, or -1 with err (neither exists).
 */
int	 launch_ask_policy_file(const struct launch_ask_gate *g, char *out,
	    size_t len, char *err, size_t errlen);

/*
 * --gate NAME with --ask or AISB_ASK: -1 with err when the gate was not
 * started with --ask (a session cannot turn that on for a shared gate),
 * else 0.  The user config's ask: asks nothing of a named gate.
 */
int	 launch_ask_gate_refuses(const struct launch_opts *, char *err,
	    size_t errlen);
/*
 * A session with --ask, or on a named gate, before its container runs:
 * its note (launch_ask_note) in its folder, and the notices on its
 * terminal (launch_ask_notify_start) unless --quiet, when stderr is a
 * terminal or --ask was a flag.  shared: a named gate's folder (NULL:
 * the session's own gate); a named gate up without --ask is nothing to
 * do (launch_ask_gate_refuses said so first).  0, or -1 with err.
 */
struct launch_session;
int	 launch_ask_session_begin(const struct launch_session *,
	    const struct launch_opts *, const char *shared, pid_t *notify,
	    char *err, size_t errlen);
/*
 * The session's own terminal: a process that follows the watch stream of
 * the gate in gatedir and writes one line to stderr per request held
 * for user (NULL: any; a named gate's session: "session-<id>"), naming
 * the ID (prefix-N) to answer.  *pid is -1 when it could not start.
 */
void	 launch_ask_notify_start(const char *gatedir, const char *prefix,
	    const char *user, pid_t *pid);
/* Stops it (SIGTERM) and reaps it; *pid becomes -1. */
void	 launch_ask_notify_stop(pid_t *pid);

#endif
