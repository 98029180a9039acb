/*
 * aisb policy derive npm|apt: a policy allowing the package sources the
 * user's own tools are configured with, so that nobody has to copy a
 * registry or mirror name into a policy by hand (and no name is written
 * into aisb itself).
 *
 *   apt: the http(s) URIs of /etc/apt/sources.list, the .list files of
 *        sources.list.d (one-line format) and its .sources files (deb822).
 *   npm: the registry `npm config get registry` prints (run with an argv,
 *        never a shell), which honours .npmrc files and npm_config_*.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"
#include "policy.h"

#define DERIVE_MAX_FILE		(256 * 1024)	/* bytes of one sources file */
#define DERIVE_MAX_FILES	256		/* files in sources.list.d */
#define DERIVE_MAX_HOSTS	256		/* distinct sources */
#define DERIVE_MAX_NPM_OUT	4096		/* bytes of npm's answer */

extern char **environ;

struct source {
	char		 host[POLICY_MAX_NAME + 3];	/* [v6] fits too */
	uint16_t	 port;
};

struct sources {
	struct source	 s[DERIVE_MAX_HOSTS];
	size_t		 n;
	int		 skipped;	/* URIs that are not http(s) */
};

/*
 * Adds the host of an http(s) URI.  Other schemes (file:, cdrom:, tor+,
 * mirror+) are counted and left out: they need no network or need more
 * than a host rule.
 */
static void
add_uri(struct sources *out, const char *uri, size_t len)
{
	struct policy_target	 t;
	const char		*p, *end;
	char			 err[128];
	uint16_t		 defport;
	size_t			 i;

	if (len > 7 && strncasecmp(uri, "http://", 7) == 0) {
		p = uri + 7;
		defport = 80;
	} else if (len > 8 && strncasecmp(uri, "https://", 8) == 0) {
		p = uri + 8;
		defport = 443;
	} else {
		out->skipped++;
		return;
	}
	for (end = p; end < uri + len && *end != '/' && *end != '?' &&
	    *end != '#'; end++)
		;
	if (memchr(p, '@', (size_t)(end - p)) != NULL) {
		/* credentials in a URI: never copy them into a policy */
		p = (const char *)memchr(p, '@', (size_t)(end - p)) + 1;
	}
	if (policy_parse_target(p, (size_t)(end - p), defport, &t, err,
	    sizeof(err)) == -1) {
		out->skipped++;
		return;
	}
	for (i = 0; i < out->n; i++)
		if (strcmp(out->s[i].host, t.host) == 0 &&
		    out->s[i].port == t.port)
			return;
	if (out->n == DERIVE_MAX_HOSTS) {
		out->skipped++;
		return;
	}
	snprintf(out->s[out->n].host, sizeof(out->s[out->n].host), "%s",
	    t.host);
	out->s[out->n].port = t.port;
	out->n++;
}

static char *
read_small(const char *path, size_t *lenp)
{
	char	*buf;
	ssize_t	 n;
	size_t	 off = 0;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return NULL;
	if ((buf = malloc(DERIVE_MAX_FILE + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	while (off < DERIVE_MAX_FILE) {
		n = read(fd, buf + off, DERIVE_MAX_FILE - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*lenp = off;
	return buf;
}

/* One-line format: "deb [opts] URI suite [component...]". */
static void
parse_list(struct sources *out, char *buf)
{
	char	*line, *save = NULL, *tok, *s2;

	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');

		if (hash != NULL)
			*hash = '\0';
		tok = strtok_r(line, " \t", &s2);
		if (tok == NULL || (strcmp(tok, "deb") != 0 &&
		    strcmp(tok, "deb-src") != 0))
			continue;
		tok = strtok_r(NULL, " \t", &s2);
		if (tok != NULL && tok[0] == '[') {
			/* options: skip to the token that closes them */
			while (tok != NULL && strchr(tok, ']') == NULL)
				tok = strtok_r(NULL, " \t", &s2);
			if (tok != NULL && tok[strlen(tok) - 1] != ']')
				continue;
			tok = strtok_r(NULL, " \t", &s2);
		}
		if (tok != NULL)
			add_uri(out, tok, strlen(tok));
	}
}

/* deb822: stanzas split by blank lines; "URIs:" unless "Enabled: no". */
static void
parse_deb822(struct sources *out, char *buf)
{
	char	*stanza = buf, *next, *line, *save, *tok, *s2;
	int	 enabled;

	while (stanza != NULL && *stanza != '\0') {
		char	*uris = NULL;

		next = strstr(stanza, "\n\n");
		if (next != NULL) {
			*next = '\0';
			next += 2;
		}
		enabled = 1;
		save = NULL;
		for (line = strtok_r(stanza, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (strncasecmp(line, "URIs:", 5) == 0)
				uris = line + 5;
			else if (strncasecmp(line, "Enabled:", 8) == 0 &&
			    strstr(line + 8, "no") != NULL)
				enabled = 0;
		}
		if (enabled && uris != NULL)
			for (tok = strtok_r(uris, " \t", &s2); tok != NULL;
			    tok = strtok_r(NULL, " \t", &s2))
				add_uri(out, tok, strlen(tok));
		stanza = next;
	}
}

static int
endswith(const char *s, const char *sfx)
{
	size_t	 a = strlen(s), b = strlen(sfx);

	return a >= b && strcmp(s + a - b, sfx) == 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

static int
derive_apt(const char *root, struct sources *out, char *from, size_t fromlen)
{
	char		 path[4096], *buf, *names[DERIVE_MAX_FILES];
	size_t		 len, n = 0, i;
	DIR		*d;
	struct dirent	*de;

	snprintf(path, sizeof(path), "%s/etc/apt/sources.list", root);
	if ((buf = read_small(path, &len)) != NULL) {
		parse_list(out, buf);
		free(buf);
		snprintf(from, fromlen, "%s", path);
	}
	snprintf(path, sizeof(path), "%s/etc/apt/sources.list.d", root);
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL && n < DERIVE_MAX_FILES) {
			if (de->d_name[0] == '.' ||
			    (!endswith(de->d_name, ".list") &&
			    !endswith(de->d_name, ".sources")))
				continue;
			if ((names[n] = strdup(de->d_name)) != NULL)
				n++;
		}
		closedir(d);
		qsort(names, n, sizeof(*names), name_cmp);
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path),
			    "%s/etc/apt/sources.list.d/%s", root, names[i]);
			if ((buf = read_small(path, &len)) != NULL) {
				if (endswith(names[i], ".list"))
					parse_list(out, buf);
				else
					parse_deb822(out, buf);
				free(buf);
			}
			free(names[i]);
		}
		if (n > 0) {
			size_t l = strlen(from);

			snprintf(from + l, fromlen - l, "%s%s/etc/apt/"
			    "sources.list.d", l ? ", " : "", root);
		}
	}
	if (out->n == 0) {
		fprintf(stderr, "aisb: no http(s) sources found under "
		    "%s/etc/apt\n", root);
		return -1;
	}
	return 0;
}

static int
derive_npm(struct sources *out, char *from, size_t fromlen)
{
	char			*argv[] = { "npm", "config", "get", "registry",
	    NULL };
	char			 buf[DERIVE_MAX_NPM_OUT + 1];
	posix_spawn_file_actions_t fa;
	size_t			 off = 0;
	ssize_t			 n;
	pid_t			 pid;
	int			 pfd[2], status, rc;

	if (pipe2(pfd, O_CLOEXEC) == -1)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	rc = posix_spawnp(&pid, "npm", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc != 0) {
		close(pfd[0]);
		fprintf(stderr, "aisb: cannot run npm: %s\n", strerror(rc));
		return -1;
	}
	for (;;) {
		n = read(pfd[0], buf + off, DERIVE_MAX_NPM_OUT - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || (off += (size_t)n) == DERIVE_MAX_NPM_OUT)
			break;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	buf[off] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "aisb: npm config get registry failed\n");
		return -1;
	}
	while (off > 0 && isspace((unsigned char)buf[off - 1]))
		buf[--off] = '\0';
	add_uri(out, buf, off);
	if (out->n == 0) {
		fprintf(stderr, "aisb: npm's registry is not an http(s) URL\n");
		return -1;
	}
	snprintf(from, fromlen, "npm config get registry");
	return 0;
}

int
launch_cmd_derive(int argc, char **argv)
{
	struct cli_args	 a;
	struct sources	*src;
	const char	*root = "";
	char		 from[8192] = "";
	size_t		 i;
	int		 rc;

	if ((rc = launch_cli_parse("policy derive", argc - 2, argv + 2,
	    &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (launch_cli_get(&a, "--root") != NULL)
		root = launch_cli_get(&a, "--root");
	if (strcmp(a.pos[0], "apt") != 0 && strcmp(a.pos[0], "npm") != 0) {
		fprintf(stderr, "aisb policy derive: '%.32s' is not a source "
		    "aisb knows; write apt or npm\n", a.pos[0]);
		return EXIT_CONFIG;
	}
	if (strcmp(a.pos[0], "npm") == 0 && root[0] != '\0') {
		fprintf(stderr, "aisb policy derive: --root is for apt\n");
		return EXIT_CONFIG;
	}
	if ((src = calloc(1, sizeof(*src))) == NULL)
		return 1;
	if (strcmp(a.pos[0], "apt") == 0)
		rc = derive_apt(root, src, from, sizeof(from));
	else
		rc = derive_npm(src, from, sizeof(from));
	if (rc == -1) {
		free(src);
		return EXIT_CONFIG;
	}
	printf("# derived by aisb from %s\n", from);
	if (src->skipped > 0)
		printf("# %d source(s) left out: not http(s), or not a host\n",
		    src->skipped);
	printf("version: 1\nallow:\n");
	for (i = 0; i < src->n; i++) {
		const char *h = src->s[i].host;

		if (strchr(h, ':') != NULL)
			printf("  - cidr: \"%s\"\n", h);
		else if (policy_parse_addr(h, strlen(h), &(struct policy_addr){ 0 }) == 0)
			printf("  - cidr: %s\n", h);
		else
			printf("  - host: %s\n", h);
		printf("    ports: [%u]\n", src->s[i].port);
	}
	free(src);
	return 0;
}
