/*
 * What an install says when it cannot work (install_why.h).
 *
 * The install sessions run under a policy derived from the host's npm or
 * pip configuration.  Where the configured source resolves into a range
 * the gate denies (the public registries here resolve into a
 * documentation range; a company's mirror is on 10.x) or does not
 * resolve, the session failed after its images were built, with npm's
 * E403 or pip's five retries against a 502, and a pointer to `sessions
 * show`; the fix was only in the docs.  Now the sources are judged first,
 * and a failed session's audit says what the gate refused, with the fix.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "termsafe.h"
#include "host/paths.h"
#include "image/image-t.h"
#include "image/install_why.h"
#include "policy.h"
#include "policytools/denials.h"
#include "policytools/derive.h"
#include "policytools/reach.h"

extern char **environ;

#define LOGS_MAX	16	/* tool logs kept, at most */

/* "host[:port]" of an http(s) URL into t; 0, or -1 when it is none. */
static int
url_target(const char *url, struct policy_target *t)
{
	const char	*p;
	uint16_t	 port;
	char		 err[128];

	if (strncmp(url, "https://", 8) == 0) {
		p = url + 8;
		port = 443;
	} else if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
		port = 80;
	} else
		return -1;
	return policy_parse_target(p, strcspn(p, "/?# \t"), port, t, err,
	    sizeof(err));
}

static int
preflight(const char *kind, const char *const *urls, size_t n, char *err,
    size_t errlen)
{
	struct policy_target	 t;
	struct launch_reach_res	 r;
	char			*copy, *w, *save = NULL;
	size_t			 i;
	int			 rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		if (urls[i] == NULL || (copy = strdup(urls[i])) == NULL)
			continue;
		for (w = strtok_r(copy, " \t", &save); w != NULL && rc == 0;
		    w = strtok_r(NULL, " \t", &save)) {
			if (url_target(w, &t) == -1)
				continue;
			launch_reach_check(t.host, &r);
			if (r.verdict == LAUNCH_REACH_NOT_FOUND) {
				snprintf(err, errlen, "install: %s's source "
				    "%s: name not found (dns_failed), so its "
				    "install session could not reach it; "
				    "nothing was built.  Fix: its name (npm "
				    "config get registry, pip.conf) or this "
				    "host's DNS", kind, t.host);
				rc = -1;
			} else if (r.verdict == LAUNCH_REACH_DENIED) {
				snprintf(err, errlen, "install: %s's source "
				    "%s:%u: %s, a range the gate denies, so the "
				    "install policy derived for it (aisb policy "
				    "derive %s) cannot reach it; nothing was "
				    "built.  Fix: aisb policy derive %s > "
				    "install.yaml, uncomment its allow_ranges "
				    "line (exactly those addresses), then "
				    "%s", kind, t.host, t.port, r.why, kind,
				    kind, LAUNCH_INSTALL_POLICY_HOW);
				rc = -1;
			}
		}
		free(copy);
	}
	return rc;
}

int
launch_install_preflight(const char *registry, int pip,
    const char *const *pipvals, char *err, size_t errlen)
{
	/* pip's own default, as derive pip allows it (derive.c) */
	static const char *const dflt[1] = { "https://pypi.org/simple" };
	int	 configured;

	if (registry != NULL && preflight("npm", &registry, 1, err,
	    errlen) == -1)
		return -1;
	if (!pip)
		return 0;
	configured = pipvals[0] != NULL || pipvals[1] != NULL ||
	    pipvals[2] != NULL;
	return preflight("pip", configured ? pipvals : dflt, configured ? 3 : 1,
	    err, errlen);
}

int
launch_tools_preflight(const struct launch_image_spec *spec, char *err,
    size_t errlen)
{
	char	 registry[2048], *vals[3] = { NULL, NULL, NULL };
	FILE	*devnull;
	int	 npm = spec->nnpm > 0 || spec->node != NULL, pip = spec->npip > 0;
	int	 cwd, rc = 0, k;

	if (spec->install_policy != NULL ||
	    getenv(LAUNCH_INSTALL_POLICY_ENV) != NULL || (!npm && !pip))
		return 0;
	if ((devnull = fopen("/dev/null", "w")) == NULL)
		return 0;	/* the install itself says what fails */
	if (npm && (cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) !=
	    -1) {
		if (chdir("/") == 0 && launch_derive_npm(devnull, registry,
		    sizeof(registry)) == 0)
			rc = launch_install_preflight(registry, 0, NULL, err,
			    errlen);
		if (fchdir(cwd) == -1 && rc == 0) {
			snprintf(err, errlen, "back to the working folder: %s",
			    strerror(errno));
			rc = -1;
		}
		close(cwd);
	}
	if (rc == 0 && pip && launch_derive_pip(devnull, vals) == 0)
		rc = launch_install_preflight(NULL, 1,
		    (const char *const *)vals, err, errlen);
	for (k = 0; k < 3; k++)
		free(vals[k]);
	fclose(devnull);
	return rc;
}

/*
 * The tool's logs (logs: a folder) moved into the session folder sdir as
 * KIND-logs/, at most LOGS_MAX; the new folder into kept, "" if none.
 */
static void
keep_logs(const char *kind, const char *logs, const char *sdir, char *kept,
    size_t len)
{
	char		 dst[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	kept[0] = '\0';
	if (logs == NULL || (d = opendir(logs)) == NULL)
		return;
	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s-logs", sdir, kind) >=
	    sizeof(dst) || (mkdir(dst, 0700) == -1 && errno != EEXIST)) {
		closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL && n < LOGS_MAX) {
		if (de->d_name[0] == '.' ||
		    file_path_join(from, sizeof(from), logs, de->d_name) ==
		    -1 || file_path_join(to, sizeof(to), dst, de->d_name) ==
		    -1 || rename(from, to) == -1)
			continue;
		n++;
	}
	closedir(d);
	if (n > 0)
		snprintf(kept, len, "%s", dst);
}

/* e's destination for people, terminal-safe (termsafe.h) */
static void
dest_of(const struct launch_denial *e, char *out, size_t len)
{
	if (e->dns)
		snprintf(out, len, "%s (DNS lookup)", e->host);
	else
		snprintf(out, len, "%s:%u", e->host, e->port);
	term_clean_str(out, 0);
}

void
launch_install_failed(const char *kind, const char *what, int st,
    const char *sid, const char *serr, const char *logs, char *err,
    size_t errlen)
{
	struct launch_denials	*d = NULL;
	const struct launch_denial *e;
	char			 sdir[PATH_MAX], audit[PATH_MAX + 16];
	char			 kept[PATH_MAX], dest[POLICY_MAX_NAME + 32];
	int			 off;

	if (sid[0] == '\0') {
		snprintf(err, errlen, "install: the %s session failed: %s",
		    what, serr);
		return;
	}
	off = snprintf(err, errlen, "install: %s in session %s exited with "
	    "status %d", what, sid, st);
	if (launch_state_dir(environ, sdir, sizeof(sdir)) == -1 ||
	    strlen(sdir) + strlen(sid) + 16 >= sizeof(sdir))
		return;
	strcat(sdir, "/sessions/");
	strcat(sdir, sid);
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", sdir);
	if ((d = malloc(sizeof(*d))) != NULL) {
		launch_denials_init(d);
		if (launch_denials_read(d, audit) == 0 && d->n > 0) {
			e = &d->d[0];
			dest_of(e, dest, sizeof(dest));
			/* the first refusal, the one the tool met */
			off += snprintf(err + off, errlen - (size_t)off, ": the "
			    "gate denied %s (%s)%s; fix: a policy of your own "
			    "for the installs (aisb policy derive %s > "
			    "install.yaml, then add what aisb sessions show "
			    "%s prints under the denial), used with %s", dest,
			    e->reason, d->n > 1 ? ", and more" : "", kind, sid,
			    LAUNCH_INSTALL_POLICY_HOW);
		} else if (d->nf > 0) {
			e = &d->f[0];
			dest_of(e, dest, sizeof(dest));
			off += snprintf(err + off, errlen - (size_t)off, ": %s "
			    "failed: %.100s (%s)%s", dest, e->detail[0] ?
			    e->detail : e->reason, e->reason, d->nf > 1 ?
			    ", and more" : "");
		} else
			off += snprintf(err + off, errlen - (size_t)off, " (aisb "
			    "sessions show %s says what its gate decided)", sid);
		free(d);
	}
	keep_logs(kind, logs, sdir, kept, sizeof(kept));
	if (kept[0] != '\0' && off > 0 && (size_t)off < errlen)
		snprintf(err + off, errlen - (size_t)off, "; %s's own log: %s",
		    kind, kept);
}
