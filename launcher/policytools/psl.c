/*
 * Where aisb policy suggest --group may put a wildcard (launcher/psl.h,
 * docs/policy.md): "*.D" only over a domain D that one owner holds.
 *
 * D is the registrable domain of a name by the Public Suffix List, ICANN
 * and private sections both (libpsl: the newer of its built-in list and
 * the system's, publicsuffix's public_suffix_list.dafsa), so that
 * s3.amazonaws.com, github.io or blob.core.windows.net, where anyone
 * opens an account, are never D.  Then D is refused when
 *   - a public suffix lies under it: amazonaws.com holds s3.amazonaws.com,
 *     and "*.amazonaws.com" would admit every bucket.  libpsl answers
 *     only "is this a suffix", so the list's text (its file beside the
 *     built-in copy, read once, at most PSL_FILE_MAX bytes) gives the
 *     domains that hold one;
 *   - D is at or under a domain of shared[]: services where anyone gets a
 *     name, which a list older than the service does not know (Debian
 *     12's has no windows.net or ngrok-free.app entries).
 * Without the list file nothing is grouped: a wildcard is only proposed
 * when it can be checked.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include "file.h"
#include "policy.h"
#include "policytools/psl.h"

#define PSL_FILE_MAX	((size_t)8 << 20)	/* bytes of the list's text */
#define PSL_UNDER_MAX	100000			/* domains holding a suffix */

/*
 * Multi-tenant domains, each at or under which no wildcard is proposed:
 * a name there is anyone's.  For lists that predate the service; a
 * current list names most of them (or their tenants' suffixes) itself.
 */
static const char *const shared[] = {
	"windows.net", "azure.net", "azurewebsites.net", "azureedge.net",
	"azurefd.net", "azurecr.io", "cloudapp.net", "trafficmanager.net",
	"ngrok-free.app", "ngrok-free.dev", "ngrok.app", "ngrok.dev",
	"ngrok.io", "trycloudflare.com", "loca.lt", "serveo.net",
	"amazonaws.com", "cloudfront.net", "on.aws", "r2.dev", "pages.dev",
	"workers.dev", "herokuapp.com", "appspot.com", "run.app",
	"cloudfunctions.net", "googleusercontent.com", "blogspot.com",
	"github.io", "githubusercontent.com", "gitlab.io", "vercel.app",
	"netlify.app", "web.app", "firebaseapp.com", "fly.dev",
};

struct launch_psl {
	psl_ctx_t	*latest;	/* psl_latest(), or NULL */
	const psl_ctx_t	*ctx;		/* latest, else the built-in one */
	char		**under;	/* sorted, unique */
	size_t		 nunder;
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every domain of two labels or more strictly above rule: "under". */
static int
add_above(struct launch_psl *p, size_t *cap, const char *rule)
{
	const char	*d;
	char		**nv;

	for (d = strchr(rule, '.'); d != NULL; d = strchr(d + 1, '.')) {
		if (strchr(d + 1, '.') == NULL)
			break;		/* one label left: a TLD, not a D */
		if (p->nunder == PSL_UNDER_MAX)
			return -1;
		if (p->nunder == *cap) {
			*cap = *cap == 0 ? 1024 : *cap * 2;
			if ((nv = realloc(p->under, *cap * sizeof(*nv))) ==
			    NULL)
				return -1;
			p->under = nv;
		}
		if ((p->under[p->nunder] = strdup(d + 1)) == NULL)
			return -1;
		p->nunder++;
	}
	return 0;
}

/* The list's text at path into p->under: 0, or -1 with err filled. */
static int
load_under(struct launch_psl *p, const char *path, char *err, size_t errlen)
{
	char	*text, *line, *next, *rule;
	size_t	 len, cap = 0, i, j;

	if ((text = file_read_bounded(path, PSL_FILE_MAX, &len, err,
	    errlen)) == NULL)
		return -1;
	for (line = text; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		rule = line + strspn(line, " \t\r");
		rule[strcspn(rule, " \t\r")] = '\0';
		if (rule[0] == '\0' || strncmp(rule, "//", 2) == 0)
			continue;
		if (rule[0] == '!')
			rule++;
		else if (strncmp(rule, "*.", 2) == 0)
			rule += 2;
		if (add_above(p, &cap, rule) == -1) {
			snprintf(err, errlen, "%s: more than %d domains holding "
			    "a public suffix, or out of memory", path,
			    PSL_UNDER_MAX);
			free(text);
			return -1;
		}
	}
	free(text);
	if (p->nunder > 1)
		qsort(p->under, p->nunder, sizeof(*p->under), cmp_str);
	for (i = j = 0; i < p->nunder; i++) {
		if (j > 0 && strcmp(p->under[j - 1], p->under[i]) == 0)
			free(p->under[i]);
		else
			p->under[j++] = p->under[i];
	}
	p->nunder = j;
	return 0;
}

struct launch_psl *
launch_psl_new(char *err, size_t errlen)
{
	struct launch_psl	*p;
	const char		*file;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->latest = psl_latest(NULL);
	p->ctx = p->latest != NULL ? p->latest : psl_builtin();
	file = psl_builtin_filename();
	if (p->ctx == NULL || file == NULL) {
		snprintf(err, errlen, "libpsl has no Public Suffix List");
		goto fail;
	}
	if (load_under(p, file, err, errlen) == -1)
		goto fail;
	return p;
fail:
	launch_psl_free(p);
	return NULL;
}

void
launch_psl_free(struct launch_psl *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nunder; i++)
		free(p->under[i]);
	free(p->under);
	psl_free(p->latest);
	free(p);
}

const char *
launch_psl_group_domain(const struct launch_psl *p, const char *name)
{
	char		 low[POLICY_MAX_NAME + 1];
	const char	*reg, *key;
	size_t		 i, n, len = strlen(name);

	if (len >= sizeof(low))
		return NULL;
	for (i = 0; i <= len; i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ?
		    name[i] + 32 : name[i]);
	if ((reg = psl_registrable_domain(p->ctx, low)) == NULL)
		return NULL;
	key = reg;
	if (bsearch(&key, p->under, p->nunder, sizeof(*p->under),
	    cmp_str) != NULL)
		return NULL;
	n = strlen(reg);
	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		len = strlen(shared[i]);
		if (n == len ? strcmp(reg, shared[i]) == 0 : n > len &&
		    reg[n - len - 1] == '.' && strcmp(reg + n - len,
		    shared[i]) == 0)
			return NULL;
	}
	return name + (reg - low);
}
