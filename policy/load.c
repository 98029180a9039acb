/*
 * Loading: read the file (bounded), then three stages, one file each:
 * yaml.c turns the text into a small tree (no aliases, bounded depth),
 * schema.c checks the tree against schema version 1 and reads the rules,
 * compile.c puts them in canonical order and builds the indexes of the
 * immutable struct policy.  This file holds the entry points and the
 * policy's reference count; errors.c the error collector the stages share.
 *
 * Every problem is reported with file:line:column and, where one exists,
 * what to write instead.  Loading goes on after an error so that one run
 * reports as many problems as it can (up to POLICY_MAX_ERRORS).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load-int.h"

static void
policy_destroy(struct policy *p)
{
	size_t	 i;

	for (i = 0; i < p->nrules; i++)
		policy_rule_free(p->rules[i]);
	free(p->rules);
	policy_htab_free(&p->exact);
	policy_htab_free(&p->sfx);
	free(p->re_allow);
	free(p->re_deny);
	free(p->cidr_allow);
	free(p->cidr_deny);
	free(p->allow_ranges);
	for (i = 0; i < p->ndns_servers; i++)
		free(p->dns_servers[i]);
	pcre2_match_context_free(p->mctx);
	free(p->dump);
	free(p->file);
	free(p);
}

struct policy *
policy_ref(struct policy *p)
{
	if (p != NULL)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void
policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		policy_destroy(p);
}

int
policy_load_buffer(const char *name, const char *buf, size_t len,
    struct policy **out, struct policy_errors *errs)
{
	struct policy_errors	 scratch;
	struct ctx		 c;
	struct ynode		*root;
	struct policy		*p;
	size_t			 i;
	int			 failed;

	*out = NULL;
	if (errs == NULL)
		errs = &scratch;
	memset(errs, 0, sizeof(*errs));
	snprintf(errs->file, sizeof(errs->file), "%s", name);
	memset(&c, 0, sizeof(c));
	c.errs = errs;
	c.file = name;

	if (len > POLICY_MAX_FILE_SIZE) {
		policy_error_at(&c, 0, 0, "split the policy or use wildcards and ranges",
		    "policy is larger than %d bytes", POLICY_MAX_FILE_SIZE);
		return -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->file = strdup(name)) == NULL) {
		free(p);
		policy_error_at(&c, 0, 0, NULL, "out of memory");
		return -1;
	}
	p->refs = 1;
	p->dns_min_ttl = POLICY_DEFAULT_MIN_TTL;
	p->dns_max_ttl = POLICY_DEFAULT_MAX_TTL;
	c.p = p;
	if ((c.cctx = pcre2_compile_context_create(NULL)) == NULL ||
	    (p->mctx = pcre2_match_context_create(NULL)) == NULL) {
		policy_error_at(&c, 0, 0, NULL, "out of memory");
		goto fail;
	}
	/* Bound the work a hostile name can cause in a backtracking regex. */
	pcre2_set_match_limit(p->mctx, 100000);
	pcre2_set_depth_limit(p->mctx, 1000);
	pcre2_set_max_pattern_length(c.cctx, POLICY_MAX_REGEX);

	root = policy_yaml_tree(&c, buf, len, &failed);
	if (!failed)
		policy_schema_read(&c, root);
	ytree_free(root);
	if (errs->count > 0 || failed)
		goto fail;
	if (policy_compile(&c) == -1) {
		if (errs->count == 0)	/* else compile said what */
			policy_error_at(&c, 0, 0, NULL, "out of memory");
		goto fail;
	}
	pcre2_compile_context_free(c.cctx);
	*out = p;
	return 0;

fail:
	if (errs->count == 0)
		policy_error_at(&c, 0, 0, NULL, "invalid policy");
	for (i = 0; i < c.nrules; i++)
		policy_rule_free(c.rules[i]);
	free(c.rules);
	pcre2_compile_context_free(c.cctx);
	policy_destroy(p);
	return -1;
}

int
policy_load_file(const char *path, struct policy **out,
    struct policy_errors *errs)
{
	struct policy_errors	 scratch;
	struct stat		 st;
	char			*buf = NULL;
	size_t			 off = 0;
	ssize_t			 n;
	int			 fd, rc, saved;

	*out = NULL;
	if (errs == NULL)
		errs = &scratch;
	memset(errs, 0, sizeof(*errs));
	snprintf(errs->file, sizeof(errs->file), "%s", path);
	errs->count = 1;
	/* O_NONBLOCK: a FIFO in the policy's place must not hang the open */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		/* st is undefined now: say why, not what it may hold */
		saved = errno;
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "cannot stat: %s", strerror(saved));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size > POLICY_MAX_FILE_SIZE) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "policy is larger than %d bytes", POLICY_MAX_FILE_SIZE);
		snprintf(errs->err[0].hint, sizeof(errs->err[0].hint),
		    "split the policy or use wildcards and ranges");
		close(fd);
		return -1;
	}
	/* Read up to one byte past the limit: the file may grow meanwhile. */
	if ((buf = malloc(POLICY_MAX_FILE_SIZE + 1)) == NULL) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "out of memory");
		close(fd);
		return -1;
	}
	while (off <= POLICY_MAX_FILE_SIZE) {
		n = read(fd, buf + off, POLICY_MAX_FILE_SIZE + 1 - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
			    "read: %s", strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	errs->count = 0;
	rc = policy_load_buffer(path, buf, off, out, errs);
	free(buf);
	return rc;
}
