/*
 * snap/gitsyntax.c and snap/gitkeys.c: git's config syntax as the one
 * reader reads it, the keys a bind session may offer back to a host's
 * config (an allowlist, with the values that name code refused), and the
 * stage's sanitized copy read back through the same reader.  In memory.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "snap/snap.h"
#include "snap/snap-int.h"

/* Every value read, one "sect|sub|key=value" line each ("-" for no
 * subsection, "(true)" for no value). */
static int
collect(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	FILE	*f = arg;

	fprintf(f, "%s|%s|%s=%s\n", sect, sub != NULL ? sub : "-", key,
	    value != NULL ? value : "(true)");
	return 0;
}

static char *
read_all(const char *text, size_t len)
{
	char	*p = NULL;
	size_t	 n = 0;
	FILE	*f = open_memstream(&p, &n);

	assert_non_null(f);
	assert_int_equal(snap_gitcfg_parse(text, len, collect, f), 0);
	fclose(f);
	return p;
}

static void
syntax(void **state)
{
	static const char text[] =
	    "# comment\n"
	    "[Core]\n"
	    "\tBare = false ; trailing\n"
	    "\tfsmonitor\n"
	    "[remote \"Or\\\"ig\\\\in\"] url = \"a b\" # c\n"
	    "\tfetch = +refs/heads/*:refs/remotes/o/* \\\n"
	    "  more\n"
	    "[branch.Main]\n"
	    "\tmerge = \"refs/heads/main\"\n"
	    "[bad \"unterminated]\n"
	    "\tpager = evil\n"
	    "[x]\n"
	    "\t9key = no\n"
	    "\tkey junk\n"
	    "\tesc = a\\tb\\nc\n";
	char	*s;

	(void)state;
	s = read_all(text, sizeof(text) - 1);
	assert_string_equal(s,
	    "core|-|bare=false\n"
	    "core|-|fsmonitor=(true)\n"
	    "remote|Or\"ig\\in|url=a b\n"
	    "remote|Or\"ig\\in|fetch=+refs/heads/*:refs/remotes/o/*   more\n"
	    "branch|main|merge=refs/heads/main\n"
	    "x|-|esc=a\tb\nc\n");
	free(s);
}

/* A value over the bound is skipped with its line; the rest is read. */
static void
bounds(void **state)
{
	size_t	 n = SNAP_GITCFG_VALUE_MAX + 64, off;
	char	*text = malloc(n + 64), *s;

	(void)state;
	assert_non_null(text);
	off = (size_t)sprintf(text, "[core]\n\tpager = ");
	memset(text + off, 'x', SNAP_GITCFG_VALUE_MAX);
	off += SNAP_GITCFG_VALUE_MAX;
	off += (size_t)sprintf(text + off, "\n\tbare = true\n");
	s = read_all(text, off);
	assert_string_equal(s, "core|-|bare=true\n");
	free(s);
	free(text);
}

static const char *const remotes[] = { "origin", NULL };

#define BACK(sub, key, sect, v) snap_git_key_back(sect, sub, key, v, remotes)

static void
keys_back(void **state)
{
	(void)state;
	/* what git remote add, fetch, push -u, branch -u write */
	assert_null(BACK("origin", "url", "remote", "https://example.org/r"));
	assert_null(BACK("origin", "url", "remote", "ssh://git@example.org/r"));
	assert_null(BACK("origin", "url", "remote", "git@example.org:r.git"));
	assert_null(BACK("origin", "url", "remote", "git://example.org/r"));
	assert_null(BACK("origin", "pushurl", "remote", "example.org:r"));
	assert_null(BACK("origin", "fetch", "remote",
	    "+refs/heads/*:refs/remotes/origin/*"));
	assert_null(BACK("origin", "push", "remote", "refs/heads/a"));
	assert_null(BACK("main", "remote", "branch", "origin"));
	assert_null(BACK("main", "remote", "branch", "."));
	assert_null(BACK("main", "merge", "branch", "refs/heads/main"));
	assert_null(BACK("main", "rebase", "branch", "merges"));
	/* URLs that run code, or a repository whose hooks a push runs */
	assert_non_null(BACK("o", "url", "remote", "ext::sh -c evil"));
	assert_non_null(BACK("o", "url", "remote", "ext::sh"));
	assert_non_null(BACK("o", "url", "remote", "fd::3"));
	assert_non_null(BACK("o", "url", "remote", "testgit::x"));
	assert_non_null(BACK("o", "url", "remote", "/srv/repo.git"));
	assert_non_null(BACK("o", "url", "remote", "../planted"));
	assert_non_null(BACK("o", "url", "remote", "planted"));
	assert_non_null(BACK("o", "url", "remote", "file:///srv/r"));
	assert_non_null(BACK("o", "url", "remote", "foo://example.org/r"));
	assert_non_null(BACK("o", "url", "remote", "-oProxyCommand=x:y"));
	assert_non_null(BACK("o", "url", "remote", "ssh://-oProxyCommand=x/y"));
	assert_non_null(BACK("o", "url", "remote", "https://u:pw@example.org/r"));
	assert_non_null(BACK("o", "url", "remote", "https://tok@example.org/r"));
	assert_non_null(BACK("o", "url", "remote", "https://example.org/a b"));
	assert_non_null(BACK("o", "url", "remote", "https://example.org/\x1b"));
	/* removing a key of the list runs nothing; one off it, no */
	assert_null(BACK("o", "url", "remote", NULL));
	assert_null(BACK("main", "merge", "branch", NULL));
	assert_non_null(BACK(NULL, "fsmonitor", "core", NULL));
	/* a branch's remote that is no remote is a path or URL */
	assert_non_null(BACK("main", "remote", "branch", "../planted"));
	assert_non_null(BACK("main", "remote", "branch", "other"));
	assert_non_null(BACK("main", "rebase", "branch", "exec evil"));
	/* names git would quote, or a terminal would act on */
	assert_non_null(BACK("a\"b", "url", "remote", "https://example.org/"));
	assert_non_null(BACK("a\nb", "merge", "branch", "refs/heads/x"));
	/* keys that run code, redirect git, or are not on the list */
	assert_non_null(BACK(NULL, "fsmonitor", "core", "true"));
	assert_non_null(BACK(NULL, "hookspath", "core", ".husky"));
	assert_non_null(BACK(NULL, "sshcommand", "core", "evil"));
	assert_non_null(BACK(NULL, "pager", "core", "evil"));
	assert_non_null(BACK("o", "uploadpack", "remote", "evil"));
	assert_non_null(BACK("o", "receivepack", "remote", "evil"));
	assert_non_null(BACK("o", "proxy", "remote", "http://x"));
	assert_non_null(BACK("lfs", "clean", "filter", "evil"));
	assert_non_null(BACK("x", "textconv", "diff", "evil"));
	assert_non_null(BACK(NULL, "helper", "credential", "evil"));
	assert_non_null(BACK(NULL, "path", "include", "/tmp/x"));
	assert_non_null(BACK("gitdir:/", "path", "includeif", "/tmp/x"));
	assert_non_null(BACK(NULL, "st", "alias", "!evil"));
	assert_non_null(BACK(NULL, "repositoryformatversion", "core", "1"));
	/* remote.url without a remote's name is no remote's */
	assert_non_null(BACK(NULL, "url", "remote", "https://example.org/"));
}

/* The sanitized copy, read back by the same reader: only the staged
 * keys, URLs without their credentials, values as they were. */
static void
sanitized(void **state)
{
	static const char text[] =
	    "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = evil\n"
	    "\thooksPath = .husky\n\tsshCommand = evil\n"
	    "[remote \"or \\\"x\\\"\"]\n"
	    "\turl = https://user:s3cret@example.org/r\n"
	    "\turl = https://user:pa@ss@example.net/r\n"
	    "\tpushurl = \"ext::sh -c 'a # b'\"\n"
	    "\tuploadpack = evil\n"
	    "\tfetch = +refs/heads/*:refs/remotes/o/*\n"
	    "[filter \"lfs\"]\n\tclean = evil %f\n"
	    "[include]\n\tpath = /etc/evil\n"
	    "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";
	char	*clean, *s;
	size_t	 len;

	(void)state;
	assert_non_null(clean = snap_git_config_sanitize(text,
	    sizeof(text) - 1, &len));
	s = read_all(clean, len);
	assert_string_equal(s,
	    "core|-|repositoryformatversion=0\n"
	    "remote|or \"x\"|url=https://example.org/r\n"
	    "remote|or \"x\"|url=https://example.net/r\n"
	    "remote|or \"x\"|pushurl=ext::sh -c 'a # b'\n"
	    "remote|or \"x\"|fetch=+refs/heads/*:refs/remotes/o/*\n"
	    "branch|main|remote=origin\n"
	    "branch|main|merge=refs/heads/main\n");
	assert_null(strstr(clean, "s3cret"));
	assert_null(strstr(clean, "ss@"));
	assert_null(strstr(clean, "evil"));
	free(s);
	free(clean);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syntax),
		cmocka_unit_test(bounds),
		cmocka_unit_test(keys_back),
		cmocka_unit_test(sanitized),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
