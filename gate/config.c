/*
 * The gate's configuration: the policy and the proxy credentials (a token
 * file, or --users: credentials with a policy each), loaded at start-up
 * and again on every reload (SIGHUP, or "reload" on the control socket),
 * all or nothing.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "log.h"
#include "gate/gate.h"
#include "gate/inject.h"

/*
 * At start-up the errors go to stderr as aisb policy check prints them; on
 * a reload (logged) the first one, with its file:line:col, goes into why
 * for the one line that says the reload was refused: a detached gate's
 * stderr is /dev/null by then, and aisb policy check FILE lists the rest.
 */
static struct policy *
load_policy(int dirfd, const char *name, const char *path, int logged,
    char *why, size_t whylen)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 buf[8192], *line, *next, *text;
	size_t			 len;
	int			 rc, more = -1;

	memset(&errs, 0, sizeof(errs));
	if (!logged && dirfd == AT_FDCWD)
		rc = policy_load_file(name, &p, &errs);
	else {
		/* by name in its folder: the gate may have dropped to --user */
		if ((text = file_read_bounded_at(dirfd, name, path,
		    POLICY_MAX_FILE_SIZE, &len, buf, sizeof(buf))) == NULL) {
			if (!logged)
				fprintf(stderr, "aisb-gate: %s\n", buf);
			snprintf(why, whylen, "%.*s", (int)(whylen > 0 ?
			    whylen - 1 : 0), buf);
			return NULL;
		}
		rc = policy_load_buffer(path, text, len, &p, &errs);
		free(text);
	}
	if (rc == 0)
		return p;
	policy_errors_format(&errs, buf, sizeof(buf));
	if (!logged) {
		fprintf(stderr, "%s", buf);
		return NULL;
	}
	/* the first error line, and how many more errors follow it */
	why[0] = '\0';
	for (line = buf; *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (strstr(line, ": error: ") == NULL && why[0] != '\0')
			continue;	/* a hint under an error */
		if (why[0] == '\0')
			snprintf(why, whylen, "%s", line);
		more++;
	}
	if (more > 0)
		snprintf(why + strlen(why), whylen - strlen(why),
		    " (and %d more; aisb policy check %s lists them)", more,
		    path);
	return NULL;
}

static struct gate_auth *
load_auth(const struct gate *g, const struct gate_config *cfg)
{
	struct gate_auth	*a;
	char			 err[256];

	if (cfg->token_file != NULL)
		a = gate_auth_load_file_at(g->token_dir, g->token_name,
		    cfg->token_file, err, sizeof(err));
	else
		a = gate_auth_load_fd(cfg->token_fd, err, sizeof(err));
	if (a == NULL)
		log_warnx("token: %s", err);
	return a;
}

/*
 * At start-up: the policy (its errors go to stderr, as aisb policy check
 * prints them), and the folders of the files a reload reads again, opened
 * now, before --user drops privileges (file_dir_open): the gate then
 * needs search permission on those folders only.  0, or -1 when the
 * policy is invalid.
 */
int
gate_config_load(struct gate *g)
{
	const struct gate_config	*cfg = &g->cfg;
	char				 why[32];	/* only on a reload */

	if ((g->policy = load_policy(AT_FDCWD, cfg->policy_path,
	    cfg->policy_path, 0, why, sizeof(why))) == NULL)
		return -1;
	g->policy_dir = file_dir_open(cfg->policy_path, &g->policy_name);
	g->token_dir = AT_FDCWD;
	g->token_name = cfg->token_file;
	if (cfg->token_file != NULL)
		g->token_dir = file_dir_open(cfg->token_file, &g->token_name);
	g->users_dir = AT_FDCWD;
	g->users_name = cfg->users_path;
	if (cfg->users_path != NULL)
		g->users_dir = file_dir_open(cfg->users_path, &g->users_name);
	return 0;
}

/* One gate has one resolver: every policy must configure it alike. */
static int
dns_same(const struct policy *a, const struct policy *b)
{
	size_t	 i, n = policy_dns_server_count(a);

	if (n != policy_dns_server_count(b) ||
	    policy_dns_min_ttl(a) != policy_dns_min_ttl(b) ||
	    policy_dns_max_ttl(a) != policy_dns_max_ttl(b))
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(policy_dns_server_at(a, i),
		    policy_dns_server_at(b, i)) != 0)
			return 0;
	return 1;
}

/*
 * --users FILE and the policy of each user, all or nothing.  deflt is
 * -f's policy (the resolver's settings, which every user's policy must
 * share).  A relative policy= path is opened in the users file's folder,
 * by name in the descriptor opened before the privilege drop; an
 * absolute one must be readable by --user.  NULL with why filled (at
 * start-up the policies' own errors also go to stderr, all of them).
 */
static struct gate_users *
load_users(const struct gate *g, const struct policy *deflt, int logged,
    char *why, size_t whylen)
{
	const char		*path = g->cfg.users_path, *slash;
	struct gate_users	*u = NULL;
	struct policy		*p;
	char			 buf[512], dir[PATH_MAX], full[PATH_MAX];
	char			 pwhy[768], *text;
	size_t			 len, i, j, n;
	int			 dirfd;
	struct stat		 st;

	/* group read is how a gate that dropped to --user reads it */
	if (fstatat(g->users_dir, g->users_name, &st, 0) == 0 &&
	    (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)))
		log_warnx("users file %s is accessible by others, or writable "
		    "by its group", path);
	if ((text = file_read_bounded_at(g->users_dir, g->users_name, path,
	    USERS_MAX_FILE, &len, buf, sizeof(buf))) == NULL) {
		snprintf(why, whylen, "%s", buf);
		return NULL;
	}
	u = gate_users_parse(text, len, path, why, whylen);
	explicit_bzero(text, len);	/* plain: secrets */
	free(text);
	if (u == NULL)
		return NULL;
	if ((slash = strrchr(path, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 :
		    (int)(slash - path), path);
	n = gate_users_count(u);
	for (i = 0; i < n; i++) {
		const char	*pp = gate_users_policy_path(u, i), *name = pp;

		if (pp == NULL)
			continue;
		/* users sharing a file share one policy object */
		for (j = 0; j < i; j++)
			if (gate_users_policy_path(u, j) != NULL &&
			    strcmp(gate_users_policy_path(u, j), pp) == 0)
				break;
		if (j < i) {
			gate_users_set_policy(u, i,
			    policy_ref(gate_users_policy(u, j)));
			continue;
		}
		dirfd = AT_FDCWD;
		if (pp[0] == '/')
			snprintf(full, sizeof(full), "%s", pp);
		else if (file_path_join(full, sizeof(full), dir, pp) == -1) {
			snprintf(why, whylen, "%s:%u: policy=%s: path too "
			    "long", path, gate_users_line(u, i), pp);
			goto fail;
		} else if ((dirfd = g->users_dir) == AT_FDCWD)
			name = full;
		if ((p = load_policy(dirfd, name, full, logged, pwhy,
		    sizeof(pwhy))) == NULL) {
			snprintf(why, whylen, "%s:%u: the policy of user %s "
			    "is invalid: %s", path, gate_users_line(u, i),
			    gate_users_name(u, i), logged ? pwhy :
			    "see the errors above");
			goto fail;
		}
		if (!dns_same(p, deflt)) {
			snprintf(why, whylen, "%s:%u: the policy of user %s, "
			    "%.256s, configures DNS (dns: servers, TTLs) "
			    "unlike -f's policy %.256s; one gate has one "
			    "resolver: give them the same dns: section", path,
			    gate_users_line(u, i), gate_users_name(u, i), full,
			    policy_file(deflt));
			policy_free(p);
			goto fail;
		}
		gate_users_set_policy(u, i, p);
	}
	return u;
 fail:
	gate_users_free(u);
	return NULL;
}

/* The number of distinct policies of a users set, -f's included. */
static size_t
users_policies(const struct gate_users *u)
{
	size_t	 i, j, n = 1;

	for (i = 0; i < gate_users_count(u); i++) {
		if (gate_users_policy(u, i) == NULL)
			continue;
		for (j = 0; j < i; j++)
			if (gate_users_policy(u, j) == gate_users_policy(u, i))
				break;
		if (j == i)
			n++;
	}
	return n;
}

/*
 * The credentials of --token-file or --token-fd, or --users and the
 * policies it names, if any: 0, or -1 (said on stderr).
 */
int
gate_config_auth(struct gate *g)
{
	char	 why[1024];

	if (g->cfg.users_path != NULL) {
		if ((g->users = load_users(g, g->policy, 0, why,
		    sizeof(why))) == NULL) {
			fprintf(stderr, "aisb-gate: --users: %s\n", why);
			return -1;
		}
		return 0;
	}
	if (g->cfg.token_file == NULL && g->cfg.token_fd == -1)
		return 0;
	if ((g->auth = load_auth(g, &g->cfg)) == NULL)
		return -1;
	return 0;
}

/*
 * Every worker reloads and reopens on the same signal, reading the same
 * files: worker 0 alone counts it, so that --metrics' sum over the
 * workers says one reload, not one per worker.
 */
#define ONCE(g)	((g)->worker == 0 ? 1 : 0)

/*
 * Log rotation (SIGUSR1, control "reopen", and every reload): the audit
 * log is opened again by its name, after what waits was written to the
 * old file; the lines of one loop turn go whole to one file or the other.
 * On failure the old file stays in use.  0 or -1 (logged).
 */
int
gate_audit_rotate(struct gate *g)
{
	if (g->audit == NULL || g->cfg.audit_path == NULL ||
	    strcmp(g->cfg.audit_path, "-") == 0)
		return 0;
	g->num->st.reopens += ONCE(g);
	if (gate_audit_reopen(g->audit) == -1) {
		g->num->st.reopen_failures += ONCE(g);
		log_warn("audit: reopening %s, keeping the old file",
		    g->cfg.audit_path);
		return -1;
	}
	log_debug("audit: %s reopened", g->cfg.audit_path);
	return 0;
}

static int	 reload_set(struct gate *);

/*
 * SIGHUP: a new policy, all or nothing.  Then, applied or refused (the
 * credentials are reread either way), --ask's held requests are judged
 * again (conn/ask.c): a removed user's or session's, or one the new
 * policy denies, denied; then, the policy applied, one it allows goes on.
 */
int
gate_reload(struct gate *g)
{
	int	 rc = reload_set(g);

	gate_ask_reload(g);
	if (rc == 0)
		gate_ask_reallow(g);
	return rc;
}

/*
 * The reload itself.  An invalid file keeps the old
 * policy; tunnels keep the policy they were decided with (their reference).
 * With --users, -f's policy, the users file and every policy it names are
 * one set: any invalid file keeps the whole old set.
 */
static int
reload_set(struct gate *g)
{
	struct policy		*p;
	struct gate_auth	*a;
	struct gate_users	*u = NULL;
	char			 why[1024];

	g->num->ctr.reloads += ONCE(g);
	/*
	 * Kept upstream connections were decided, keyed and verified under
	 * what may change now (rules, inspect, users, --upstream-ca's file):
	 * none serves a connection decided after a reload.
	 */
	gate_inspect_pool_flush(g);
	/* Log rotation and credentials do not wait for a valid policy. */
	(void)gate_audit_rotate(g);
	g->auth_kept = 0;
	if (g->cfg.token_file != NULL) {
		if ((a = load_auth(g, &g->cfg)) == NULL) {
			log_warnx("reload: keeping the old credentials");
			g->auth_kept = 1;
		} else {
			gate_auth_free(g->auth);
			g->auth = a;
		}
	}
	/* one line either way, -v or not: what runs now, and why */
	if ((p = load_policy(g->policy_dir, g->policy_name,
	    g->cfg.policy_path, 1, why, sizeof(why))) == NULL) {
		g->num->ctr.reload_failures += ONCE(g);
		gate_reload_said(g, 0, "reload: refused: %s is invalid, "
		    "keeping policy sha256:%.12s (%zu rule%s): %s",
		    g->cfg.policy_path,
		    policy_sha256(g->policy), policy_rule_count(g->policy),
		    policy_rule_count(g->policy) == 1 ? "" : "s", why);
		return -1;
	}
	if (g->cfg.users_path != NULL &&
	    (u = load_users(g, p, 1, why, sizeof(why))) == NULL) {
		g->num->ctr.reload_failures += ONCE(g);
		gate_reload_said(g, 0, "reload: refused: users file %s: %s; "
		    "keeping the old users and policies", g->cfg.users_path,
		    why);
		policy_free(p);
		return -1;
	}
	if (gate_dns_configure(g->dns, p) == -1) {
		g->num->ctr.reload_failures += ONCE(g);
		gate_reload_said(g, 0, "reload: refused: cannot apply the DNS "
		    "settings of %s, keeping policy sha256:%.12s (%zu rule%s)",
		    g->cfg.policy_path, policy_sha256(g->policy),
		    policy_rule_count(g->policy),
		    policy_rule_count(g->policy) == 1 ? "" : "s");
		gate_users_free(u);
		policy_free(p);
		return -1;
	}
	policy_free(g->policy);
	g->policy = p;
	gate_reload_said(g, 1, "reload: policy %s sha256:%.12s (%zu rule%s) "
	    "applied", g->cfg.policy_path, policy_sha256(p),
	    policy_rule_count(p), policy_rule_count(p) == 1 ? "" : "s");
	if (u != NULL) {
		gate_users_free(g->users);
		g->users = u;
		gate_reload_said(g, 1, "reload: users %s: %zu user%s, %zu "
		    "polic%s applied",
		    g->cfg.users_path, gate_users_count(u),
		    gate_users_count(u) == 1 ? "" : "s", users_policies(u),
		    users_policies(u) == 1 ? "y" : "ies");
	}
	/* --reload-closes: the live connections judged too */
	if (g->cfg.reload_closes)
		gate_reload_said(g, 1, "reload: %zu connection(s) the policy "
		    "now denies closed", gate_conn_recheck(g));
	/* policies that inspect for the first time: the CA is made now */
	if (gate_inspect_init(g) == -1)
		log_warnx("reload: the gate cannot inspect: connections to "
		    "inspected hosts are refused (upstream_tls)");
	gate_inject_missing(g, gate_inspect_secrets(g), "reload");
	return 0;
}
