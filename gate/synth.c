/*
 * The names behind the synthetic addresses: what AISB-DNS (conn/dnsgate.c)
 * answered each session, so that a connection the relay caught on any
 * port of such an address (AISB-TRANSPARENT with X-Aisb-Dialled,
 * conn/transparent.c) is decided by the name it was given for, not by
 * the address (docs/gate.md, "Transparent entry").
 *
 * The address of a name is a hash (dnsmsg_synth_v4), so two names may
 * share one; within a session the latest answer wins.  An address is
 * looked up in the session's own answers first, then among the exact
 * names of the connection's policy (a gate restarted, or another worker
 * of --workers, answered the query): only one may match.  An address
 * neither knows was never handed out: the caller refuses it.
 *
 * The policy's exact names are an index sorted by address, built once per
 * policy (its SHA-256: a reload is another policy) and searched in
 * O(log n): hashing every rule on every look-up cost ~64 us a connection
 * for 1,000 rules (tests/bench/bench_synth.c), half a tunnel's own cost,
 * and with --workers most connections look there.  SYNTH_INDEXES of them,
 * the one used least recently rebuilt for another: under --users each
 * user's policy is one (a named gate's sessions), and a single index
 * would be rebuilt on every connection of another user.  Without the
 * memory for one, the rules are scanned as before.
 *
 * A session is a credential and the name it gave: the key of the token
 * file's line it came through (gate_auth_check; all zero without a token
 * file, and under --users, whose names are each one line's) and its
 * label.  The label alone is not enough: a line of any user name accepts
 * every name, so another credential (another such line, or a labelled
 * line "bob:SECRET" beside a bare one) could give the same name and would
 * otherwise be told what this one resolved, and have the addresses
 * handed to this one mean names to it.  An address handed to one
 * credential is only ever looked up in that credential's answers.  A
 * reload that removes or changes a line leaves its answers unreachable
 * (a changed line has another key) until they are given up as the least
 * recently used; the same line again (label and secret) is the same
 * credential and finds them.
 *
 * Bounds: GATE_SYNTH_LABELS sessions, the one used least recently given
 * up for a new one; GATE_SYNTH_NAMES names each, likewise.  A name is at
 * most POLICY_MAX_NAME bytes (it was normalised by the policy library).
 * Nothing here decides: the name goes through the policy like any
 * CONNECT's, so a name some other session was given gets no further than
 * that session's policy lets it.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsmsg.h"
#include "gate/gate.h"

struct synth_entry {
	uint32_t	 addr;		/* network order, as the answer had it */
	uint64_t	 used;		/* tick of the last answer or look-up */
	char		*name;		/* NULL: free */
};

struct synth_label {
	unsigned char		 key[GATE_AUTH_KEY];	/* its token line */
	char			 label[GATE_SESSION_MAX];
	uint64_t		 used;
	struct synth_entry	 e[GATE_SYNTH_NAMES];
};

#define SYNTH_INDEXES	8	/* policies indexed at once */

/* One address of the policy's exact allow rules; name NULL: two names. */
struct synth_ix {
	uint32_t	 addr;
	char		*name;
};

/* The index of one policy. */
struct synth_index {
	char			 sha[POLICY_SHA256_HEX + 1];	/* "": none */
	struct synth_ix		*ix;
	size_t			 nix;
	uint64_t		 used;		/* the tick of its last use */
};

struct gate_synth {
	uint64_t		 tick;
	struct synth_label	*l[GATE_SYNTH_LABELS];
	struct synth_index	 ixs[SYNTH_INDEXES];
};

struct gate_synth *
gate_synth_new(void)
{
	return calloc(1, sizeof(struct gate_synth));
}

static void
label_free(struct synth_label *l)
{
	size_t	 i;

	if (l == NULL)
		return;
	for (i = 0; i < GATE_SYNTH_NAMES; i++)
		free(l->e[i].name);
	free(l);
}

static void
ix_drop(struct synth_index *s)
{
	size_t	 i;

	for (i = 0; i < s->nix; i++)
		free(s->ix[i].name);
	free(s->ix);
	s->ix = NULL;
	s->nix = 0;
	s->sha[0] = '\0';
}

void
gate_synth_free(struct gate_synth *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < GATE_SYNTH_LABELS; i++)
		label_free(s->l[i]);
	for (i = 0; i < SYNTH_INDEXES; i++)
		ix_drop(&s->ixs[i]);
	free(s);
}

/* The session's slot (key and label); with make, a new one (the least
 * recent one's). */
static struct synth_label *
label_get(struct gate_synth *s, const unsigned char key[GATE_AUTH_KEY],
    const char *label, int make)
{
	struct synth_label	*l;
	size_t			 i, lru = 0;

	for (i = 0; i < GATE_SYNTH_LABELS; i++) {
		if ((l = s->l[i]) != NULL && strcmp(l->label, label) == 0 &&
		    memcmp(l->key, key, GATE_AUTH_KEY) == 0) {
			l->used = ++s->tick;
			return l;
		}
		if (s->l[lru] != NULL &&
		    (l == NULL || l->used < s->l[lru]->used))
			lru = i;
	}
	if (!make || strlen(label) >= GATE_SESSION_MAX ||
	    (l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	label_free(s->l[lru]);
	memcpy(l->key, key, GATE_AUTH_KEY);
	snprintf(l->label, sizeof(l->label), "%s", label);
	l->used = ++s->tick;
	s->l[lru] = l;
	return l;
}

static uint32_t
addr32(const uint8_t a[4])
{
	uint32_t	 v;

	memcpy(&v, a, 4);
	return v;
}

int
gate_synth_note(struct gate_synth *s, const unsigned char key[GATE_AUTH_KEY],
    const char *label, const char *name, const uint8_t addr[4])
{
	struct synth_label	*l;
	struct synth_entry	*e, *lru = NULL;
	uint32_t		 a = addr32(addr);
	size_t			 i;
	char			*copy;

	if (s == NULL || strlen(name) > POLICY_MAX_NAME ||
	    (l = label_get(s, key, label, 1)) == NULL)
		return -1;
	for (i = 0; i < GATE_SYNTH_NAMES; i++) {
		e = &l->e[i];
		if (e->name != NULL && e->addr == a) {
			if (strcmp(e->name, name) != 0) {
				/* another name of the same hash: the latest */
				if ((copy = strdup(name)) == NULL)
					return -1;
				free(e->name);
				e->name = copy;
			}
			e->used = ++s->tick;
			return 0;
		}
		if (lru == NULL || e->name == NULL ||
		    (lru->name != NULL && e->used < lru->used))
			lru = e;
	}
	if ((copy = strdup(name)) == NULL)
		return -1;
	free(lru->name);
	lru->name = copy;
	lru->addr = a;
	lru->used = ++s->tick;
	return 0;
}

/*
 * The one exact name of pol's allow rules whose synthetic address is a:
 * 1 with it in out, 0 when none or two do (then the address says
 * nothing).
 */
static int
policy_name_of(const struct policy *pol, uint32_t a, char *out, size_t len)
{
	struct policy_rule_info	 ri;
	uint8_t			 b[4];
	size_t			 i, n = policy_rule_count(pol);
	int			 found = 0;

	for (i = 0; i < n; i++) {
		policy_rule_info(policy_rule_at(pol, i), &ri);
		if (ri.kind != POLICY_RULE_EXACT || ri.action != POLICY_ALLOW)
			continue;
		dnsmsg_synth_v4(ri.pattern, strlen(ri.pattern), b);
		if (addr32(b) != a || (found && strcmp(out, ri.pattern) == 0))
			continue;
		if (found)
			return 0;	/* two names: ambiguous */
		snprintf(out, len, "%s", ri.pattern);
		found = 1;
	}
	return found;
}

static int
ix_cmp(const void *a, const void *b)
{
	const struct synth_ix	*x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* two names of one address side by side, either order */
	return strcmp(x->name, y->name);
}

/*
 * The index of pol's exact allow names (see the top): one entry an
 * address, its name NULL when two names share it.  0, or -1 when out of
 * memory (then there is none).
 */
static int
ix_build(struct synth_index *s, const struct policy *pol)
{
	struct policy_rule_info	 ri;
	uint8_t			 b[4];
	size_t			 i, j, n = policy_rule_count(pol);

	ix_drop(s);
	if (n > 0 && (s->ix = calloc(n, sizeof(*s->ix))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		policy_rule_info(policy_rule_at(pol, i), &ri);
		if (ri.kind != POLICY_RULE_EXACT || ri.action != POLICY_ALLOW)
			continue;
		dnsmsg_synth_v4(ri.pattern, strlen(ri.pattern), b);
		if ((s->ix[s->nix].name = strdup(ri.pattern)) == NULL) {
			ix_drop(s);
			return -1;
		}
		s->ix[s->nix++].addr = addr32(b);
	}
	qsort(s->ix, s->nix, sizeof(*s->ix), ix_cmp);
	/* collapse each address to one entry: its name, or NULL for two */
	for (i = j = 0; i < s->nix; i++) {
		if (j > 0 && s->ix[j - 1].addr == s->ix[i].addr) {
			if (s->ix[j - 1].name != NULL &&
			    strcmp(s->ix[j - 1].name, s->ix[i].name) != 0) {
				free(s->ix[j - 1].name);
				s->ix[j - 1].name = NULL;
			}
			free(s->ix[i].name);
			continue;
		}
		s->ix[j++] = s->ix[i];
	}
	s->nix = j;
	snprintf(s->sha, sizeof(s->sha), "%s", policy_sha256(pol));
	return 0;
}

/* The index of pol: its own, else the least recently used one rebuilt
 * for it; NULL when out of memory. */
static struct synth_index *
ix_get(struct gate_synth *gs, const struct policy *pol)
{
	struct synth_index	*s, *lru = &gs->ixs[0];
	const char		*sha = policy_sha256(pol);
	size_t			 i;

	for (i = 0; i < SYNTH_INDEXES; i++) {
		s = &gs->ixs[i];
		if (s->sha[0] != '\0' && strcmp(s->sha, sha) == 0) {
			s->used = ++gs->tick;
			return s;
		}
		if (s->used < lru->used)
			lru = s;
	}
	if (ix_build(lru, pol) == -1)
		return NULL;
	lru->used = ++gs->tick;
	return lru;
}

/* policy_name_of() through the index: 1, 0 as it; -1: no index. */
static int
ix_name_of(struct gate_synth *gs, const struct policy *pol, uint32_t a,
    char *out, size_t len)
{
	struct synth_index	*s;
	size_t			 lo = 0, hi, mid;

	if (gs == NULL || (s = ix_get(gs, pol)) == NULL)
		return -1;
	for (hi = s->nix; lo < hi; ) {
		mid = lo + (hi - lo) / 2;
		if (s->ix[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nix || s->ix[lo].addr != a || s->ix[lo].name == NULL ||
	    strlen(s->ix[lo].name) >= len)
		return 0;
	snprintf(out, len, "%s", s->ix[lo].name);
	return 1;
}

int
gate_synth_name(struct gate_synth *s, const struct policy *pol,
    const unsigned char key[GATE_AUTH_KEY], const char *label,
    const struct policy_addr *addr, char *out, size_t len)
{
	struct synth_label	*l;
	uint32_t		 a;
	size_t			 i;
	int			 rc;

	out[0] = '\0';
	if (addr->family != AF_INET || !dnsmsg_synth_is(addr->bytes))
		return -1;
	a = addr32(addr->bytes);
	if (s != NULL && (l = label_get(s, key, label, 0)) != NULL)
		for (i = 0; i < GATE_SYNTH_NAMES; i++)
			if (l->e[i].name != NULL && l->e[i].addr == a) {
				l->e[i].used = ++s->tick;
				if (strlen(l->e[i].name) >= len)
					return -1;
				snprintf(out, len, "%s", l->e[i].name);
				return 0;
			}
	if (pol != NULL && ((rc = ix_name_of(s, pol, a, out, len)) == 1 ||
	    (rc == -1 && policy_name_of(pol, a, out, len))))
		return 0;
	out[0] = '\0';
	return -1;
}
