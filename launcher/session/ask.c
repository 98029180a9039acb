/*
 * Held requests, the launcher's half (ask.h): finding the gates that may
 * hold them, reading what they hold, answering, and following one gate's
 * watch stream for the session's own terminal.
 *
 * Everything a gate says came, in part, from the sandbox (a host name, a
 * method): it is parsed under the bounds of ask.h, and what reaches a
 * terminal has its control bytes replaced.  The gate itself decides who
 * may answer (its control socket is 0600, in a 0700 folder) and audits
 * every answer with the peer's uid and pid.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "json.h"
#include "termsafe.h"
#include "host/paths.h"
#include "host/proc.h"
#include "session/ask.h"
#include "session/folder.h"
#include "session/gates.h"
#include "session/gates-int.h"
#include "session/options.h"
#include "session/watchline.h"

#define NOTE_MAX	(PATH_MAX + 1024)	/* bytes of dir/ask */

extern char	**environ;

/* ---- the gate's JSON --------------------------------------------------- */

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' ||
	    *p == '\n'))
		p++;
	return p;
}

/*
 * Past one JSON value at p (a string, a number, a literal, or an object
 * or array, nested at most 16 deep), or NULL when it does not end.
 */
static const char *
skip_value(const char *p, const char *end)
{
	ssize_t	 n;
	int	 depth = 0;

	do {
		p = skip_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == '"') {
			if ((n = json_string(p, (size_t)(end - p), NULL, 0,
			    NULL, JSON_BYTES, NULL, 0)) <= 0)
				return NULL;
			p += n;
		} else if (*p == '{' || *p == '[') {
			if (++depth > 16)
				return NULL;
			p++;
		} else if (*p == '}' || *p == ']') {
			if (depth-- == 0)
				return NULL;
			p++;
		} else if (*p == ',' || *p == ':')
			p++;
		else {
			while (p < end && *p != ',' && *p != '}' &&
			    *p != ']' && *p != ' ')
				p++;
		}
	} while (depth > 0);
	return p;
}

/* A string value into out (outlen), or null as "": 0, or -1. */
static int
str_value(const char **p, const char *end, char *out, size_t outlen)
{
	ssize_t	 n;

	if (end - *p >= 4 && memcmp(*p, "null", 4) == 0) {
		out[0] = '\0';
		*p += 4;
		return 0;
	}
	if ((n = json_string(*p, (size_t)(end - *p), out, outlen, NULL,
	    JSON_BYTES, NULL, 0)) <= 0)
		return -1;
	*p += n;
	return 0;
}

/* A number value (optionally negative, at most 18 digits): 0, or -1. */
static int
num_value(const char **p, const char *end, long long *v)
{
	const char	*s = *p;
	int		 neg = 0, digits = 0;

	*v = 0;
	if (s < end && *s == '-') {
		neg = 1;
		s++;
	}
	for (; s < end && isdigit((unsigned char)*s); s++)
		if (++digits > 18)
			return -1;
		else
			*v = *v * 10 + (*s - '0');
	if (digits == 0)
		return -1;
	if (neg)
		*v = -*v;
	*p = s;
	return 0;
}

/* Where the string of key goes in h, or NULL when it is none of ours. */
static char *
held_str(struct launch_held *h, const char *key, size_t *len)
{
	const struct {
		const char	*key;
		size_t		 off, len;
	} map[] = {
#define F(k)	{ #k, offsetof(struct launch_held, k), sizeof(h->k) }
		F(host), F(how), F(user), F(method),
#undef F
	};
	size_t	 i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(key, map[i].key) == 0) {
			*len = map[i].len;
			return (char *)h + map[i].off;
		}
	return NULL;
}

/* A number of key into h: 0, or -1 when it is out of its range. */
static int
held_num(struct launch_held *h, const char *key, long long v, int *have_id)
{
	if (strcmp(key, "id") == 0 && v >= 0) {
		h->id = (unsigned long long)v;
		*have_id = 1;
	} else if (strcmp(key, "port") == 0 && v >= 1 && v <= 65535)
		h->port = (unsigned)v;
	else if (strcmp(key, "age_ms") == 0 || strcmp(key, "ago_ms") == 0)
		h->age_ms = v;
	else if (strcmp(key, "count") == 0 && v >= 1)
		h->count = v;
	else if (strcmp(key, "left_ms") == 0)
		h->left_ms = v;
	else
		return -1;
	return 0;
}

ssize_t
launch_held_parse(const char *s, size_t len, struct launch_held *h)
{
	const char	*p = s, *end = s + len;
	char		 key[16], *out;
	size_t		 outlen;
	long long	 v;
	int		 have_id = 0;

	memset(h, 0, sizeof(*h));
	p = skip_ws(p, end);
	if (p >= end || *p++ != '{')
		return -1;
	for (;;) {
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		if (p < end && *p == '}')
			break;
		if (p >= end || *p != '"')
			return -1;
		/* a key longer than ours is none of ours: skipped */
		if (str_value(&p, end, key, sizeof(key)) == -1) {
			key[0] = '\0';
			if ((p = skip_value(p, end)) == NULL)
				return -1;
		}
		p = skip_ws(p, end);
		if (p >= end || *p++ != ':')
			return -1;
		p = skip_ws(p, end);
		if ((out = held_str(h, key, &outlen)) != NULL) {
			if (str_value(&p, end, out, outlen) == -1)
				return -1;
		} else if (strcmp(key, "id") == 0 || strcmp(key, "port") == 0 ||
		    strcmp(key, "age_ms") == 0 || strcmp(key, "left_ms") == 0 ||
		    strcmp(key, "ago_ms") == 0 || strcmp(key, "count") == 0) {
			if (num_value(&p, end, &v) == -1 ||
			    held_num(h, key, v, &have_id) == -1)
				return -1;
		} else if ((p = skip_value(p, end)) == NULL)
			return -1;
	}
	return (have_id || h->count > 0) && h->host[0] != '\0' &&
	    h->port != 0 ? p + 1 - s : -1;
}

void
launch_held_dest(const struct launch_held *h, char *out, size_t len)
{
	size_t	 i;
	int	 v6 = strchr(h->host, ':') != NULL;

	snprintf(out, len, "%s%s%s:%u", v6 ? "[" : "", h->host, v6 ? "]" :
	    "", h->port);
	term_clean_str(out, TERM_ASCII);
	for (i = 0; out[i] != '\0'; i++)
		if (out[i] == ' ')
			out[i] = '?';
}

/* ---- the gates --------------------------------------------------------- */

/* 1 when dir/control is a socket. */
static int
has_control(const char *dir)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	return file_path_join(path, sizeof(path), dir, "control") == 0 &&
	    lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void
sessions_gates(struct launch_ask_gate *v, size_t max, size_t *n)
{
	struct launch_sess	*s;
	char			 dir[PATH_MAX], path[PATH_MAX];
	size_t			 ns, i;
	int			 e = errno;

	if (launch_sessions_dir(dir, sizeof(dir)) == -1 ||
	    (s = launch_sessions_list(dir, &ns)) == NULL)
		return;
	for (i = 0; i < ns && *n < max; i++) {
		if (file_path_join(path, sizeof(path), dir, s[i].id) == -1 ||
		    !has_control(path) ||
		    launch_session_launcher(dir, s[i].id) != 1)
			continue;
		snprintf(v[*n].dir, sizeof(v[*n].dir), "%s", path);
		snprintf(v[*n].prefix, sizeof(v[*n].prefix), "%.*s",
		    LAUNCH_ASK_SHORT, s[i].id);
		snprintf(v[*n].session, sizeof(v[*n].session), "%s", s[i].id);
		(*n)++;
	}
	free(s);
	errno = e;
}

int
launch_ask_gates(struct launch_ask_gate *v, size_t max, size_t *n,
    char *err, size_t errlen)
{
	struct gates_state	 st;
	struct dirent		*de;
	char			 base[PATH_MAX], gdir[PATH_MAX];
	char			 dir[PATH_MAX];
	DIR			*d;

	*n = 0;
	if (launch_state_dir(environ, base, sizeof(base)) == -1 ||
	    file_path_join(gdir, sizeof(gdir), base, "gates") == -1) {
		snprintf(err, errlen, "cannot find a state folder: set "
		    "XDG_STATE_HOME or HOME to an absolute path");
		return -1;
	}
	sessions_gates(v, max, n);
	if ((d = opendir(gdir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && *n < max) {
		if (!launch_gate_name_ok(de->d_name) ||
		    file_path_join(dir, sizeof(dir), gdir, de->d_name) == -1 ||
		    gates_state_read(dir, &st) == -1 ||
		    !gates_state_up(&st) || st.ask == 0 || !has_control(dir))
			continue;
		snprintf(v[*n].dir, sizeof(v[*n].dir), "%s", dir);
		snprintf(v[*n].prefix, sizeof(v[*n].prefix), "%.*s",
		    LAUNCH_GATE_NAME_MAX, de->d_name);
		v[*n].session[0] = '\0';
		(*n)++;
	}
	closedir(d);
	return 0;
}

/*
 * 1 when the first plen bytes of id (at least 4) start the id of a
 * session of the user's that ran: its requests are no longer held.
 */
static int
session_ended(const char *id, size_t plen)
{
	struct launch_sess	*s;
	char			 dir[PATH_MAX];
	size_t			 ns, i;
	int			 e = errno, ended = 0;

	if (plen < 4 || launch_sessions_dir(dir, sizeof(dir)) == -1 ||
	    (s = launch_sessions_list(dir, &ns)) == NULL)
		return 0;
	for (i = 0; i < ns && !ended; i++)
		ended = strncmp(s[i].id, id, plen) == 0;
	free(s);
	errno = e;
	return ended;
}

int
launch_ask_find(const char *id, struct launch_ask_gate *g,
    unsigned long long *n, char *err, size_t errlen)
{
	struct launch_ask_gate	*v;
	const char		*dash = strrchr(id, '-'), *p;
	long long		 num;
	size_t			 nv, i, plen, found = 0;

	p = dash != NULL ? dash + 1 : NULL;
	plen = dash != NULL ? (size_t)(dash - id) : 0;
	/* the gate's ids: 1 .. 2^53 - 1 (gate/ctlcmd.h GATE_CTL_MAX_ID) */
	if (dash == NULL || plen == 0 || plen > LAUNCH_GATE_NAME_MAX ||
	    num_value(&p, p + strlen(p), &num) == -1 || *p != '\0' ||
	    num < 1 || num > LAUNCH_ASK_ID_MAX) {
		snprintf(err, errlen, "'%.64s' is not a held request's ID: "
		    "PREFIX-N as aisb pending prints it", id);
		return -1;
	}
	*n = (unsigned long long)num;
	if ((v = calloc(LAUNCH_ASK_GATES_MAX, sizeof(*v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (launch_ask_gates(v, LAUNCH_ASK_GATES_MAX, &nv, err,
	    errlen) == -1) {
		free(v);
		return -1;
	}
	for (i = 0; i < nv; i++) {
		/* a session by a prefix of its id, a named gate by its name */
		if (v[i].session[0] != '\0' ? plen >= 4 &&
		    strncmp(v[i].session, id, plen) == 0 :
		    strlen(v[i].prefix) == plen &&
		    strncmp(v[i].prefix, id, plen) == 0) {
			if (found++ == 0)
				*g = v[i];
		}
	}
	free(v);
	if (found == 0 && session_ended(id, plen)) {
		snprintf(err, errlen, "its session %.*s ended: nothing of it "
		    "is held any more", (int)plen, id);
		return 1;
	}
	if (found != 1) {
		snprintf(err, errlen, found == 0 ? "no running session or "
		    "named gate that holds requests is '%.*s' (aisb pending "
		    "lists what is held)" : "'%.*s' names more than one "
		    "session or gate: give more of the session's id",
		    (int)plen, id);
		return -1;
	}
	return 0;
}

void
launch_refused_say(const struct launch_held *r, const char *prefix,
    int since_start, char *out, size_t len)
{
	char	 dest[POLICY_MAX_NAME + 16], how[16], n[64];
	size_t	 i;

	launch_held_dest(r, dest, sizeof(dest));
	snprintf(how, sizeof(how), "%s", r->how[0] != '\0' ? r->how : "?");
	for (i = 0; how[i] != '\0'; i++)
		if (!islower((unsigned char)how[i]))
			how[i] = '?';
	if (r->count == 1)
		snprintf(n, sizeof(n), "1 request");
	else
		snprintf(n, sizeof(n), "%lld requests", r->count);
	if (since_start)
		snprintf(out, len, "%s: %s denied without being held (too "
		    "many were waiting), the last %s (%s) %llds ago; each is "
		    "in the gate's audit log", prefix, n, dest, how,
		    r->age_ms / 1000);
	else if (r->count == 1)
		snprintf(out, len, "denied %s (%s) without holding it: too "
		    "many requests of %s wait for an answer already; answer "
		    "them (aisb pending), the gate's audit log has every "
		    "denied one", dest, how, prefix);
	else
		snprintf(out, len, "denied %s without holding them, the last "
		    "%s (%s): too many requests of %s wait for an answer "
		    "already; answer them (aisb pending), the gate's audit log "
		    "has every denied one", n, dest, how, prefix);
}

int
launch_ask_pending(const struct launch_ask_gate *g, struct launch_held **v,
    size_t *n, struct launch_held *refused, char *err, size_t errlen)
{
	const char	*p, *end;
	char		*buf;
	size_t		 cap = 0;
	ssize_t		 k;
	void		*nv;

	*v = NULL;
	*n = 0;
	if (refused != NULL)
		memset(refused, 0, sizeof(*refused));
	if ((buf = malloc(LAUNCH_ASK_PENDING_MAX)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (gates_control(g->dir, "pending\n", buf, LAUNCH_ASK_PENDING_MAX,
	    1) == -1) {
		snprintf(err, errlen, "%s/control: %s", g->dir,
		    strerror(errno));
		free(buf);
		return -1;
	}
	end = buf + strlen(buf);
	if ((p = strstr(buf, "\"pending\"")) == NULL ||
	    (p = strchr(p, '[')) == NULL)
		goto bad;
	for (p++;;) {
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		if (p < end && *p == ']')
			break;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = reallocarray(*v, cap, sizeof(**v))) == NULL)
				goto bad;
			*v = nv;
		}
		if ((k = launch_held_parse(p, (size_t)(end - p), &(*v)[*n])) ==
		    -1)
			goto bad;
		p += k;
		(*n)++;
	}
	/* after the array: the last refused, or null (an older gate: none) */
	p = skip_ws(p + 1, end);
	if (refused != NULL && end - p > 11 &&
	    memcmp(p, ",\"refused\":{", 12) == 0 &&
	    launch_held_parse(p + 11, (size_t)(end - p - 11), refused) == -1)
		goto bad;
	free(buf);
	return 0;
bad:
	snprintf(err, errlen, "%s/control: an answer to pending that is not "
	    "one (longer than %d bytes, or another gate's protocol)", g->dir,
	    LAUNCH_ASK_PENDING_MAX);
	free(buf);
	free(*v);
	*v = NULL;
	*n = 0;
	errno = EPROTO;
	return -1;
}

int
launch_ask_answer(const struct launch_ask_gate *g, unsigned long long n,
    const char *answer, char *err, size_t errlen)
{
	char		 cmd[64], resp[256], want[32], gone[32];
	const char	*verb = strcmp(answer, "deny") == 0 ? "deny" :
			    "approve";

	if (strcmp(verb, "deny") == 0)
		snprintf(cmd, sizeof(cmd), "deny %llu\n", n);
	else
		snprintf(cmd, sizeof(cmd), "approve %llu %s\n", n, answer);
	snprintf(want, sizeof(want), "{\"%s\":\"ok\"}", verb);
	snprintf(gone, sizeof(gone), "{\"%s\":\"gone\"}", verb);
	if (gates_control(g->dir, cmd, resp, sizeof(resp), 0) == -1) {
		snprintf(err, errlen, "%s/control: %s", g->dir,
		    strerror(errno));
		return -1;
	}
	if (strncmp(resp, want, strlen(want)) == 0)
		return 0;
	if (strncmp(resp, gone, strlen(gone)) == 0)
		return 1;
	if (strncmp(resp, "{\"approve\":\"full\"}", 18) == 0) {
		/* gate/gate.h GATE_ASK_GRANTS; the request stays held */
		snprintf(err, errlen, "%s/control: the gate keeps no more "
		    "session grants (256, until it exits); the request is still "
		    "held: approve it once, or always (a rule in the policy "
		    "file)", g->dir);
		return -1;
	}
	/* 120 bytes of it, cut between characters */
	term_clean(resp, 121, resp, strcspn(resp, "\n"), 0, NULL);
	snprintf(err, errlen, "the gate answered %s (does its aisb-gate "
	    "hold requests? aisb-gate --help names --ask)", resp);
	return -1;
}

/* ---- the sessions ------------------------------------------------------ */

const char *
launch_ask_user_session(const char *user)
{
	if (strncmp(user, "session-", 8) != 0 ||
	    strlen(user + 8) != LAUNCH_ID_HEX ||
	    !launch_session_id_ok(user + 8))
		return NULL;
	return user + 8;
}

/*
 * The line of dir/ask that starts with key ("policy ", "command "),
 * without its '\n', into out: 0, or -1 when there is none.
 */
static int
note_line(const char *dir, const char *key, char *out, size_t len)
{
	char		 e[PATH_MAX + 64], *text;
	const char	*p;
	size_t		 tlen, klen = strlen(key), n;

	if ((text = file_read_in(dir, "ask", NOTE_MAX, &tlen, e,
	    sizeof(e))) == NULL)
		return -1;
	for (p = text; *p != '\0'; p += n + (p[n] == '\n')) {
		n = strcspn(p, "\n");
		if (n > klen && strncmp(p, key, klen) == 0 && p[n] == '\n') {
			snprintf(out, len, "%.*s", (int)(n - klen), p + klen);
			free(text);
			return 0;
		}
	}
	free(text);
	return -1;
}

int
launch_ask_command(const char *session, char *out, size_t len)
{
	char	 dir[PATH_MAX], path[PATH_MAX];

	out[0] = '\0';
	if (launch_sessions_dir(dir, sizeof(dir)) == -1 ||
	    file_path_join(path, sizeof(path), dir, session) == -1)
		return -1;
	return note_line(path, "command ", out, len);
}

/* ---- which policy file always writes ----------------------------------- */

int
launch_ask_policy_ours(const struct launch_opts *o)
{
	return o->src[LO_POLICY] != LAUNCH_SRC_PROJECT &&
	    o->policy_origin != LAUNCH_POLICY_BUILT &&
	    o->policy_origin != LAUNCH_POLICY_INSTALLED &&
	    o->policy_origin != LAUNCH_POLICY_GATE &&
	    o->val[LO_POLICY] != NULL && o->val[LO_POLICY][0] != '\0';
}

int
launch_ask_note(const char *dir, const char *policy, char *const *cmd,
    int ncmd, char *err, size_t errlen)
{
	char	 path[PATH_MAX], real[PATH_MAX], *text = NULL;
	size_t	 len = 0;
	FILE	*f;
	int	 k, rc = -1;

	if (policy != NULL && realpath(policy, real) != NULL)
		policy = real;
	if ((f = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(f, "policy %s\n", policy != NULL && strchr(policy, '\n') ==
	    NULL ? policy : "-");
	/* for aisb pending: the words, printable, cut at the bound */
	if (ncmd > 0) {
		fputs("command", f);
		for (k = 0; k < ncmd; k++) {
			fputc(' ', f);
			(void)term_fputs(cmd[k], f, 0);
		}
		fputc('\n', f);
	}
	if (fclose(f) == EOF) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (len > NOTE_MAX) {
		/* the command is the last line: cut, still one line */
		len = term_cut(text, len, NOTE_MAX - 1) + 1;
		text[len - 1] = '\n';
	}
	if (file_path_join(path, sizeof(path), dir, "ask") == -1 ||
	    file_write_atomic(path, text, len, 0600, (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s/ask: %s", dir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(text);
	return rc;
}

int
launch_ask_policy_file(const struct launch_ask_gate *g, char *out,
    size_t len, char *err, size_t errlen)
{
	if (note_line(g->dir, "policy /", out + 1, len - 1) == 0) {
		out[0] = '/';
		return 0;
	}
	if (launch_config_home(environ, "aisb/policy.yaml", out, len) == -1) {
		snprintf(err, errlen, "cannot find the user's configuration "
		    "folder: set XDG_CONFIG_HOME or HOME, or name the file "
		    "with --to FILE");
		return -1;
	}
	if (access(out, F_OK) == -1) {
		snprintf(err, errlen, "the session's policy is not a file of "
		    "yours, and %s does not exist: make it (aisb policy print "
		    "POLICY > %s, or a copy of the shipped default), or name "
		    "another with --to FILE", out, out);
		return -1;
	}
	return 0;
}

/* ---- the session's own terminal ---------------------------------------- */

/*
 * One watch line: a notice when it holds a request for user, or when
 * the gate's bounds denied one of user's unheld.  eol ends it: "\r\n"
 * on a terminal, which the session's podman run -t holds in raw mode (no
 * newline translation: a bare "\n" would leave the command's next line
 * starting where the notice ended).
 */
static void
notify_line(const char *line, size_t len, const char *prefix,
    const char *user, const char *eol)
{
	struct launch_held	 h;
	const char		*p = line, *end = line + len;
	char			 dest[POLICY_MAX_NAME + 16], how[16];
	size_t			 i;

	p = skip_ws(p, end);
	if (end - p > 12 && memcmp(p, "{\"refused\":", 11) == 0) {
		char	 say[POLICY_MAX_NAME + 512];

		if (launch_held_parse(p + 11, (size_t)(end - p - 11), &h) ==
		    -1 || h.count < 1 ||
		    (user != NULL && strcmp(h.user, user) != 0))
			return;
		launch_refused_say(&h, prefix, 0, say, sizeof(say));
		fprintf(stderr, "aisb: %s%s", say, eol);
		return;
	}
	if (end - p < 9 || memcmp(p, "{\"held\":", 8) != 0 ||
	    launch_held_parse(p + 8, (size_t)(end - p - 8), &h) == -1)
		return;
	if (user != NULL && strcmp(h.user, user) != 0)
		return;
	launch_held_dest(&h, dest, sizeof(dest));
	snprintf(how, sizeof(how), "%s", h.how[0] != '\0' ? h.how : "?");
	for (i = 0; how[i] != '\0'; i++)
		if (!islower((unsigned char)how[i]))
			how[i] = '?';
	fprintf(stderr, "aisb: held %s (%s) for %llds: aisb approve %s-%llu "
	    "once|session|always, or aisb deny %s-%llu%s", dest, how,
	    (h.left_ms + 999) / 1000, prefix, h.id, prefix, h.id, eol);
}

struct notify_to {
	const char	*prefix, *user, *eol;
};

static void
notify_each(const char *line, size_t len, void *arg)
{
	const struct notify_to	*t = arg;

	notify_line(line, len, t->prefix, t->user, t->eol);
}

static void __attribute__((noreturn))
notify(const char *gatedir, const char *prefix, const char *user)
{
	char				 buf[LAUNCH_ASK_LINE_MAX];
	struct launch_watch		 w = { buf, sizeof(buf), 0, 0 };
	struct notify_to		 t = { prefix, user, NULL };
	ssize_t				 n;
	int				 fd;

	t.eol = isatty(STDERR_FILENO) ? "\r\n" : "\n";
	/* nothing of the launcher's: the watcher's pipe ends with aisb */
	closefrom(STDERR_FILENO + 1);
	if ((fd = gates_control_open(gatedir, "watch\n")) == -1)
		_exit(1);
	for (;;) {
		if ((n = launch_watch_read(&w, fd, notify_each, &t)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the gate is gone, or stopped */
	}
}

void
launch_ask_notify_start(const char *gatedir, const char *prefix,
    const char *user, pid_t *pid)
{
	sigset_t	 none;
	pid_t		 parent = getpid();

	fflush(stdout);
	fflush(stderr);
	if ((*pid = fork()) != 0)
		return;
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)signal(SIGINT, SIG_IGN);	/* the terminal's Ctrl-C: aisb's */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(0);
	notify(gatedir, prefix, user);
}

void
launch_ask_notify_stop(pid_t *pid)
{
	if (*pid <= 0)
		return;
	(void)kill(*pid, SIGTERM);
	(void)waitpid(*pid, NULL, 0);
	*pid = -1;
}

int
launch_ask_gate_refuses(const struct launch_opts *o, char *err,
    size_t errlen)
{
	struct gates_state	 st;
	char			 dir[PATH_MAX], e[256];
	const char		*name = o->val[LO_GATE];

	if (o->ask == 0 || (o->src[LO_ASK] != LAUNCH_SRC_FLAG &&
	    o->src[LO_ASK] != LAUNCH_SRC_ENV))
		return 0;
	if (gates_dir(name, dir, sizeof(dir), e, sizeof(e)) == 0 &&
	    gates_state_read(dir, &st) == 0 && st.ask > 0)
		return 0;
	snprintf(err, errlen, "%s: gate %s does not hold requests; its own "
	    "flag turns that on: aisb gate down %s; aisb gate up %s --ask",
	    o->where[LO_ASK], name, name, name);
	return -1;
}

int
launch_ask_session_begin(const struct launch_session *s,
    const struct launch_opts *o, const char *shared, pid_t *notify,
    char *err, size_t errlen)
{
	struct gates_state	 st;
	char			 user[LAUNCH_ID_HEX + 16];
	const char		*name = NULL;

	*notify = -1;
	if (shared != NULL) {
		/* (a flag that asked for more was refused at the start) */
		name = strrchr(shared, '/') != NULL ? strrchr(shared, '/') + 1 :
		    shared;
		if (gates_state_read(shared, &st) == -1 || st.ask == 0)
			return 0;
	}
	/* its policy file (a gate of its own) and command, for pending */
	if (launch_ask_note(s->dir, shared == NULL &&
	    launch_ask_policy_ours(o) ? o->val[LO_POLICY] : NULL, o->cmd,
	    o->ncmd, err, errlen) == -1)
		return -1;
	if (o->quiet || (!isatty(STDERR_FILENO) &&
	    o->src[LO_ASK] != LAUNCH_SRC_FLAG))
		return 0;
	if (shared == NULL) {
		char	 prefix[LAUNCH_ASK_SHORT + 1];

		snprintf(prefix, sizeof(prefix), "%.*s", LAUNCH_ASK_SHORT,
		    s->id);
		launch_ask_notify_start(s->dir, prefix, NULL, notify);
	} else {
		snprintf(user, sizeof(user), "session-%s", s->id);
		launch_ask_notify_start(shared, name, user, notify);
	}
	return 0;
}
