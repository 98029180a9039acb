/*
 * The gate's configuration: the policy and the proxy credentials, loaded
 * at start-up and again on every reload (SIGHUP, or "reload" on the
 * control socket), all or nothing; and the listening address, parsed from
 * -l and printed for people.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "log.h"
#include "gate.h"

const char *
gate_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char	 ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(sin->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	} else
		snprintf(buf, len, "?");
	return buf;
}

/*
 * "ipv4:port" or "[ipv6]:port", port 0 meaning "any free port".  Names are
 * refused: what the gate binds must not depend on a resolver.
 */
int
gate_listen_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char		 host[INET6_ADDRSTRLEN + 2], *end;
	const char	*colon;
	unsigned long	 port;
	size_t		 hl;

	if ((colon = strrchr(s, ':')) == NULL)
		return -1;
	hl = (size_t)(colon - s);
	if (hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 ||
	    port > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6	*sin6 = (void *)ss;

		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			return -1;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
	} else {
		struct sockaddr_in	*sin = (void *)ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -1;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
	}
	return 0;
}

/*
 * At start-up the errors go to stderr as aisb policy check prints them; on
 * a reload (logged) the first one, with its file:line:col, goes into why
 * for the one line that says the reload was refused: a detached gate's
 * stderr is /dev/null by then, and aisb policy check FILE lists the rest.
 */
static struct policy *
load_policy(const struct gate *g, const char *path, int logged, char *why,
    size_t whylen)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 buf[8192], *line, *next, *text;
	size_t			 len;
	int			 rc, more = -1;

	memset(&errs, 0, sizeof(errs));
	if (!logged)
		rc = policy_load_file(path, &p, &errs);
	else {
		/* by name in its folder: the gate may have dropped to --user */
		if ((text = file_read_bounded_at(g->policy_dir, g->policy_name,
		    path, POLICY_MAX_FILE_SIZE, &len, buf, sizeof(buf))) ==
		    NULL) {
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

	if ((g->policy = load_policy(g, cfg->policy_path, 0, why,
	    sizeof(why))) == NULL)
		return -1;
	g->policy_dir = file_dir_open(cfg->policy_path, &g->policy_name);
	g->token_dir = AT_FDCWD;
	g->token_name = cfg->token_file;
	if (cfg->token_file != NULL)
		g->token_dir = file_dir_open(cfg->token_file, &g->token_name);
	return 0;
}

/* The credentials of --token-file or --token-fd, if any: 0, or -1. */
int
gate_config_auth(struct gate *g)
{
	if (g->cfg.token_file == NULL && g->cfg.token_fd == -1)
		return 0;
	if ((g->auth = load_auth(g, &g->cfg)) == NULL)
		return -1;
	return 0;
}

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
	g->st.reopens++;
	if (gate_audit_reopen(g->audit) == -1) {
		g->st.reopen_failures++;
		log_warn("audit: reopening %s, keeping the old file",
		    g->cfg.audit_path);
		return -1;
	}
	log_debug("audit: %s reopened", g->cfg.audit_path);
	return 0;
}

/*
 * SIGHUP: a new policy, all or nothing.  An invalid file keeps the old
 * policy; tunnels keep the policy they were decided with (their reference).
 */
int
gate_reload(struct gate *g)
{
	struct policy		*p;
	struct gate_auth	*a;
	char			 why[1024];

	g->ctr.reloads++;
	/* Log rotation and credentials do not wait for a valid policy. */
	(void)gate_audit_rotate(g);
	if (g->cfg.token_file != NULL) {
		if ((a = load_auth(g, &g->cfg)) == NULL)
			log_warnx("reload: keeping the old credentials");
		else {
			gate_auth_free(g->auth);
			g->auth = a;
		}
	}
	/* one line either way, -v or not: what runs now, and why */
	if ((p = load_policy(g, g->cfg.policy_path, 1, why,
	    sizeof(why))) == NULL) {
		g->ctr.reload_failures++;
		log_warnx("reload: refused: %s is invalid, keeping policy "
		    "sha256:%.12s (%zu rule%s): %s", g->cfg.policy_path,
		    policy_sha256(g->policy), policy_rule_count(g->policy),
		    policy_rule_count(g->policy) == 1 ? "" : "s", why);
		return -1;
	}
	if (gate_dns_configure(g->dns, p) == -1) {
		g->ctr.reload_failures++;
		log_warnx("reload: refused: cannot apply the DNS settings of "
		    "%s, keeping policy sha256:%.12s (%zu rule%s)",
		    g->cfg.policy_path, policy_sha256(g->policy),
		    policy_rule_count(g->policy),
		    policy_rule_count(g->policy) == 1 ? "" : "s");
		policy_free(p);
		return -1;
	}
	policy_free(g->policy);
	g->policy = p;
	log_notice("reload: policy %s sha256:%.12s (%zu rule%s) applied",
	    g->cfg.policy_path, policy_sha256(p), policy_rule_count(p),
	    policy_rule_count(p) == 1 ? "" : "s");
	return 0;
}
