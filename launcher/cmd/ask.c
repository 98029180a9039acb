/*
 * aisb pending [--watch], aisb approve ID once|session|always [--to
 * FILE], aisb deny ID: the requests gates run with --ask hold, from any
 * terminal of the user's (session/ask.h; docs/launcher.md, "Held
 * requests").  always writes the rule into a policy file first
 * (policytools/polyedit.h), then approves for the session.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "policy.h"
#include "termsafe.h"
#include "policytools/polyedit.h"
#include "session/ask.h"
#include "session/gates-int.h"
#include "session/watchline.h"

/* The session of a held request: the gate's own, else its user's. */
static void
held_session(const struct launch_ask_gate *g, const struct launch_held *h,
    char *sess, size_t slen, char *cmd, size_t clen)
{
	const char	*id = g->session[0] != '\0' ? g->session :
			    launch_ask_user_session(h->user);

	snprintf(sess, slen, "%.*s", LAUNCH_ASK_SHORT, id != NULL ? id : "-");
	if (id == NULL || launch_ask_command(id, cmd, clen) == -1)
		snprintf(cmd, clen, "-");
}

static void
held_row(const struct launch_ask_gate *g, const struct launch_held *h)
{
	char	 id[LAUNCH_GATE_NAME_MAX + 24], sess[LAUNCH_ASK_SHORT + 1];
	char	 raw[256], cmd[41], dest[POLICY_MAX_NAME + 16], how[16];
	size_t	 i;
	int	 cut;

	snprintf(id, sizeof(id), "%s-%llu", g->prefix, h->id);
	held_session(g, h, sess, sizeof(sess), raw, sizeof(raw));
	/* the column's 40 bytes, or 37 and "...", cut between characters */
	term_clean(cmd, sizeof(cmd), raw, strlen(raw), 0, &cut);
	if (cut)
		memcpy(cmd + term_cut(cmd, strlen(cmd), sizeof(cmd) - 4), "...",
		    4);
	launch_held_dest(h, dest, sizeof(dest));
	snprintf(how, sizeof(how), "%s", h->how);
	for (i = 0; how[i] != '\0'; i++)
		if (how[i] < 'a' || how[i] > 'z')
			how[i] = '?';
	printf("%-14s %-9s %-40s %-28s %-11s %llds/%llds\n", id, sess, cmd,
	    dest, how, h->age_ms / 1000, (h->left_ms + 999) / 1000);
}

/* The table of what every gate holds now; the gates in v, n. */
static int
pending_list(struct launch_ask_gate *v, size_t n)
{
	struct launch_held	*h, r;
	char			 err[PATH_MAX + 256];
	char			 say[POLICY_MAX_NAME + 512];
	char			 (*said)[sizeof(say)];
	size_t			 i, k, nh, shown = 0, nsaid = 0;

	/* the bounds' denials after the table, one line a gate */
	if ((said = calloc(n, sizeof(*said))) == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		if (launch_ask_pending(&v[i], &h, &nh, &r, err,
		    sizeof(err)) == -1) {
			/* a gate that went away meanwhile is no news */
			if (errno != ECONNREFUSED && errno != ENOENT)
				fprintf(stderr, "aisb: pending: %s\n", err);
			continue;
		}
		for (k = 0; k < nh; k++) {
			if (shown++ == 0)
				printf("%-14s %-9s %-40s %-28s %-11s %s\n",
				    "ID", "SESSION", "COMMAND", "HOST:PORT",
				    "HOW", "AGE/LEFT");
			held_row(&v[i], &h[k]);
		}
		free(h);
		if (r.count > 0)
			launch_refused_say(&r, v[i].prefix, 1, said[nsaid++],
			    sizeof(said[0]));
	}
	if (shown == 0)
		printf("no held requests\n");
	for (i = 0; i < nsaid; i++)
		printf("%s\n", said[i]);
	free(said);
	return 0;
}

/* One watch line of gate g (len bytes, NUL-terminated there), said. */
static void
watch_line(const char *line, size_t len, void *arg)
{
	const struct launch_ask_gate	*g = arg;
	struct launch_held	 h;
	const char		*p;
	long long		 id = -1;
	char			 answer[16] = "?";

	if (len > 8 && memcmp(line, "{\"held\":", 8) == 0) {
		if (launch_held_parse(line + 8, len - 8, &h) > 0) {
			printf("held     ");
			held_row(g, &h);
		}
		return;
	}
	if (len > 12 && memcmp(line, "{\"refused\":", 11) == 0) {
		char	 say[POLICY_MAX_NAME + 512];

		if (launch_held_parse(line + 11, len - 11, &h) > 0 &&
		    h.count > 0) {
			launch_refused_say(&h, g->prefix, 0, say, sizeof(say));
			printf("refused  %s\n", say);
		}
		return;
	}
	if (len < 13 || memcmp(line, "{\"answered\":", 12) != 0)
		return;
	if ((p = strstr(line, "\"id\":")) != NULL)
		id = strtoll(p + 5, NULL, 10);
	if ((p = strstr(line, "\"answer\":\"")) != NULL)
		snprintf(answer, sizeof(answer), "%.*s",
		    (int)strspn(p + 10, "abcdefghijklmnopqrstuvwxyz"), p + 10);
	if (id >= 0)
		printf("answered %s-%lld %s\n", g->prefix, id, answer);
}

/*
 * --watch: the gates' watch streams, one line per event, until every
 * gate is gone (the gates up when it started).
 */
static int
pending_watch(struct launch_ask_gate *v, size_t n)
{
	struct pollfd		*pfd;
	struct launch_watch	*w;
	char			(*buf)[LAUNCH_ASK_LINE_MAX];
	size_t			 i, open = 0;

	pfd = calloc(n, sizeof(*pfd));
	w = calloc(n, sizeof(*w));
	buf = calloc(n, sizeof(*buf));
	if (pfd == NULL || w == NULL || buf == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		free(pfd), free(w), free(buf);
		return 1;
	}
	for (i = 0; i < n; i++) {
		w[i].buf = buf[i];
		w[i].cap = sizeof(buf[i]);
		pfd[i].events = POLLIN;
		if ((pfd[i].fd = gates_control_open(v[i].dir, "watch\n")) != -1)
			open++;
	}
	fflush(stdout);
	while (open > 0 && poll(pfd, n, -1) != -1) {
		for (i = 0; i < n; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (launch_watch_read(&w[i], pfd[i].fd, watch_line,
			    &v[i]) <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open--;
				continue;
			}
			fflush(stdout);
		}
	}
	for (i = 0; i < n; i++)
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
	free(pfd), free(w), free(buf);
	return 0;
}

static int
pending(const struct cli_args *a)
{
	struct launch_ask_gate	*v;
	char			 err[512];
	size_t			 n;
	int			 rc;

	if ((v = calloc(LAUNCH_ASK_GATES_MAX, sizeof(*v))) == NULL)
		return 1;
	if (launch_ask_gates(v, LAUNCH_ASK_GATES_MAX, &n, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: pending: %s\n", err);
		free(v);
		return EXIT_CONFIG;
	}
	rc = pending_list(v, n);
	if (launch_cli_get(a, "--watch") != NULL && n > 0)
		rc = pending_watch(v, n);
	free(v);
	return rc;
}

/*
 * always: the rule for the held request's host and port written into
 * the policy file (to, else the one the session used when it is the
 * user's own, else ~/.config/aisb/policy.yaml), its diff printed.  0;
 * 1 when the request is gone; 78 after a line on stderr.
 */
static int
always(const struct launch_ask_gate *g, unsigned long long n,
    const char *id, const char *to)
{
	struct launch_held	*h;
	struct policy_target	 t;
	char			 file[PATH_MAX], err[8192], hp[POLICY_MAX_NAME + 16];
	char			 note[160], day[16];
	size_t			 nh, k;
	time_t			 now = time(NULL);
	int			 rc = EXIT_CONFIG;

	if (launch_ask_pending(g, &h, &nh, NULL, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: approve: %s\n", err);
		return EXIT_CONFIG;
	}
	for (k = 0; k < nh && h[k].id != n; k++)
		;
	if (k == nh) {
		fprintf(stderr, "aisb: %s is no longer held (answered, timed "
		    "out, or its client gave up); nothing was written\n", id);
		free(h);
		return 1;
	}
	snprintf(hp, sizeof(hp), "%s%s%s:%u", strchr(h[k].host, ':') ? "[" :
	    "", h[k].host, strchr(h[k].host, ':') ? "]" : "", h[k].port);
	free(h);
	if (policy_parse_target(hp, strlen(hp), 0, &t, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: approve: %s: %s\n", hp, err);
		return EXIT_CONFIG;
	}
	if (to != NULL)
		snprintf(file, sizeof(file), "%s", to);
	else if (launch_ask_policy_file(g, file, sizeof(file), err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: approve: %s\n", err);
		return EXIT_CONFIG;
	}
	strftime(day, sizeof(day), "%Y-%m-%d", gmtime(&now));
	snprintf(note, sizeof(note), "allowed by aisb approve %.60s always, "
	    "%s", id, day);
	if (launch_policy_allow_write(file, &t, note, stdout, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: approve: %s\n", err);
		return EXIT_CONFIG;
	}
	printf("%s now allows %s\n", file, hp);
	fflush(stdout);
	if ((rc = launch_ask_answer(g, n, "session", err, sizeof(err))) == 0)
		printf("approved %s for the session (and from now on)\n", id);
	else if (rc == 1)
		fprintf(stderr, "aisb: %s is no longer held (answered or timed "
		    "out meanwhile); the rule stays in %s for the next "
		    "request\n", id, file);
	else
		fprintf(stderr, "aisb: approve: %s; the rule stays in %s\n",
		    err, file);
	return rc == 0 ? 0 : rc == 1 ? 1 : EXIT_CONFIG;
}

static int
answer(const struct cli_args *a, int deny)
{
	struct launch_ask_gate	 g;
	unsigned long long	 n;
	const char		*how = deny ? "deny" : a->pos[1];
	char			 err[1024];
	int			 rc;

	if (!deny && strcmp(how, "once") != 0 && strcmp(how, "session") != 0 &&
	    strcmp(how, "always") != 0) {
		fprintf(stderr, "aisb: approve: '%.32s' is not once, session "
		    "or always\n", how);
		return EXIT_CONFIG;
	}
	if (launch_cli_get(a, "--to") != NULL && strcmp(how, "always") != 0) {
		fprintf(stderr, "aisb: approve: --to names the file always "
		    "writes; once and session write none\n");
		return EXIT_CONFIG;
	}
	if ((rc = launch_ask_find(a->pos[0], &g, &n, err,
	    sizeof(err))) == 1) {
		fprintf(stderr, "aisb: %s is no longer held: %s\n", a->pos[0],
		    err);
		return 1;
	}
	if (rc == -1) {
		fprintf(stderr, "aisb: %s: %s\n", deny ? "deny" : "approve",
		    err);
		return EXIT_CONFIG;
	}
	if (strcmp(how, "always") == 0)
		return always(&g, n, a->pos[0], launch_cli_get(a, "--to"));
	if ((rc = launch_ask_answer(&g, n, how, err, sizeof(err))) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", deny ? "deny" : "approve",
		    err);
		return EXIT_CONFIG;
	}
	if (rc == 1) {
		fprintf(stderr, "aisb: %s is no longer held (answered, timed "
		    "out, or its client gave up)\n", a->pos[0]);
		return 1;
	}
	if (deny)
		printf("denied %s\n", a->pos[0]);
	else
		printf("approved %s %s\n", a->pos[0], strcmp(how, "once") == 0 ?
		    "once" : "for the session");
	return 0;
}

int
launch_cmd_ask(int argc, char **argv)
{
	struct cli_args	 a;
	int		 rc;

	if ((rc = launch_cli_parse(argv[0], argc - 1, argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[0], "pending") == 0)
		return pending(&a);
	return answer(&a, strcmp(argv[0], "deny") == 0);
}
