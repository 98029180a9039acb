/*
 * Lockfiles and tool configurations -> the hosts their URLs name, for
 * aisb policy derive lockfile|env and aisb --allow-from-lockfile.
 *
 * Pure: bytes in, hosts out.  No file, no environment, no network, so
 * that what an untrusted repository hands us is fuzzed exactly as it is
 * parsed (tests/fuzz/fuzz_lockfile.c).  No full JSON, YAML or TOML
 * parser: one small bounded scanner per format that reads only the
 * fields that hold URLs (docs/policy.md lists them), and checks enough
 * of the shape to refuse what is not that format.
 *
 * What a lockfile can add: host names on 443 (https), or on 80 (http)
 * only with LOCKFILE_HTTP.  Never an IP literal, a range, a wildcard or
 * another port: those URLs are counted and left out.  A URL whose host
 * does not parse is an error (a malformed file), not a skip.
 */
#ifndef AISB_LOCKFILE_H
#define AISB_LOCKFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"

#define LOCKFILE_MAX_SIZE	(32 * 1024 * 1024) /* bytes of one file */
#define LOCKFILE_MAX_LINE	(64 * 1024)	/* bytes of one line (JSON: of
						   one string) */
#define LOCKFILE_MAX_HOSTS	256		/* distinct host:port, all files */
#define LOCKFILE_MAX_DEPTH	256		/* JSON nesting */
#define LOCKFILE_MAX_FILES	64		/* files of one derive */

enum lockfile_kind {
	LOCKFILE_NPM = 0,	/* package-lock.json, npm-shrinkwrap.json */
	LOCKFILE_YARN,		/* yarn.lock, v1 and berry */
	LOCKFILE_PNPM,		/* pnpm-lock.yaml */
	LOCKFILE_CARGO,		/* Cargo.lock */
	LOCKFILE_POETRY,	/* poetry.lock */
	LOCKFILE_PIPREQ,	/* requirements.txt */
	LOCKFILE_GOSUM,		/* go.sum (+ the GOPROXY value) */
	LOCKFILE_GEMFILE,	/* Gemfile.lock */
	/* tool configurations (derive env; the workspace's own for berry/pnpm) */
	LOCKFILE_YARNRC,	/* .yarnrc.yml */
	LOCKFILE_NPMRC,		/* .npmrc */
	LOCKFILE_CARGOCFG,	/* .cargo/config.toml */
	LOCKFILE_GITCONFIG,	/* .gitconfig, git/config */
	LOCKFILE__COUNT
};

#define LOCKFILE_HTTP	0x01	/* keep http:// URLs (port 80) */

/* What the files said besides hosts: lockfile_notes() words them. */
#define LOCKFILE_NOTE_PYPI	0x001	/* PyPI's index added: nothing else named */
#define LOCKFILE_NOTE_CRATES	0x002	/* crates.io's index: its sparse hosts */
#define LOCKFILE_NOTE_REGISTRY	0x004	/* a cargo registry: downloads may be elsewhere */
#define LOCKFILE_NOTE_NOURL	0x008	/* berry/pnpm packages from the configured registry */
#define LOCKFILE_NOTE_GODIRECT	0x010	/* GOPROXY direct: the module paths' hosts */
#define LOCKFILE_NOTE_GOFALLBACK 0x020	/* ",direct" after a proxy: left out */
#define LOCKFILE_NOTE_INCLUDE	0x040	/* requirements -r/-c: not followed */
#define LOCKFILE_NOTE_VARIABLE	0x080	/* a URL with ${VAR}: left out */

struct lockfile_host {
	char		 host[POLICY_MAX_NAME + 1];
	uint16_t	 port;
	unsigned	 file;		/* the caller's index of the file */
	unsigned	 line;		/* where it was first seen */
};

struct lockfile_hosts {
	struct lockfile_host h[LOCKFILE_MAX_HOSTS];
	size_t		 n;
	unsigned	 http;		/* http:// URLs left out */
	unsigned	 ip;		/* IP literals left out */
	unsigned	 port;		/* URLs on another port, left out */
	unsigned	 other;		/* other schemes, local paths */
	unsigned	 notes;		/* LOCKFILE_NOTE_* */
};

/* The kind of a file by its base name, or -1. */
int	 lockfile_kind_of(const char *name);
/* "package-lock.json", "yarn.lock", ...: the kind's usual name. */
const char *lockfile_kind_name(enum lockfile_kind);

/*
 * Adds the hosts of buf[len] (a file of kind; need not be
 * NUL-terminated) to out, each once over all calls, tagged with file.
 * goproxy: the GOPROXY value go.sum's modules come through (NULL: go's
 * default).  0, or -1 with "line N: what is wrong" in err (out keeps
 * what came before the error; the caller drops it all).
 */
int	 lockfile_parse(enum lockfile_kind, const char *buf, size_t len,
	    unsigned flags, const char *goproxy, unsigned file,
	    struct lockfile_hosts *out, char *err, size_t errlen);
/*
 * Adds host:port once (a config that is not a lockfile: apt's http
 * mirrors).  0; 1 when it was there, or is an IP address (counted in
 * out->ip, never added); -1 when out is full or the name is
 * not a host name.
 */
int	 lockfile_add(struct lockfile_hosts *, const char *host, uint16_t port,
	    unsigned file, unsigned line);
/* One line per note in notes, each starting with prefix, into f. */
void	 lockfile_notes(unsigned notes, const char *prefix, FILE *f);

#endif
