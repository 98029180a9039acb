/*
 * The names behind the synthetic addresses (gate/synth.c) at their bounds
 * (not a test): every transparent-range connection asks gate_synth_name()
 * for its address, which scans the sessions (GATE_SYNTH_LABELS) and the
 * session's names (GATE_SYNTH_NAMES) in order.  With every slot full it
 * times, per call, in ROUNDS rounds of N calls each:
 *
 *   hit     a random name of a random session, found in its answers
 *   miss    an address no session was given, found among the exact
 *           names of a policy of RULES rules (a gate restarted)
 *   note    an answer noted again (AISB-DNS, each query)
 *   users   miss, each call under the policy of one of USERS users in
 *           turn (--users: a named gate's sessions, each its own policy)
 *
 * and prints min, median and max of the rounds in ns per call, against
 * which to hold a tunnel's own cost (docs/performance.md: ~140 us).
 *
 * usage: bench_synth [-r ROUNDS] [-n CALLS] [-p RULES]
 * (USERS is USERS_N)
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dnsmsg.h"
#include "policy.h"
#include "gate.h"

#define ROUNDS_MAX	64
#define USERS_N		4

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
name_of(char *buf, size_t len, unsigned label, unsigned i)
{
	snprintf(buf, len, "h%u.s%u.example.test", i, label);
}

static void
label_of(char *buf, size_t len, unsigned label)
{
	snprintf(buf, len, "session-%08u", label);
}

/* A policy of n exact allow rules, p0.rules.test ..., and one of user u
 * (each user's policy is another) */
static struct policy *
make_policy(unsigned n, unsigned u)
{
	struct policy	*p = NULL;
	size_t		 cap = (size_t)n * 64 + 64, off = 0;
	char		*s;
	unsigned	 i;

	if ((s = malloc(cap)) == NULL)
		return NULL;
	off += (size_t)snprintf(s + off, cap - off, "version: 1\nallow:\n");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(s + off, cap - off,
		    "  - host: p%u.rules.test\n", i);
	off += (size_t)snprintf(s + off, cap - off,
	    "  - host: user%u.rules.test\n", u);
	if (policy_load_buffer("bench.yaml", s, off, &p, NULL) == -1)
		p = NULL;
	free(s);
	return p;
}

enum what { HIT, MISS, NOTE, USERS };

/* every session's token file line: one line of any user name, so that
 * each look-up compares the whole key as well as the label */
static const unsigned char	 key[GATE_AUTH_KEY] = { 0x5a, 0x5a, 0x5a };

/* One round of n calls: ns per call, or -1. */
static double
round_of(struct gate_synth *s, struct policy *const *pols, enum what w,
    unsigned n)
{
	const struct policy	*pol = pols[0];
	struct policy_addr	 a;
	char			 name[POLICY_MAX_NAME + 1], label[64];
	char			 out[POLICY_MAX_NAME + 1];
	double			 t0;
	unsigned		 k, l, i;
	int			 rc;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	t0 = now();
	for (k = 0; k < n; k++) {
		l = (unsigned)rand() % GATE_SYNTH_LABELS;
		i = (unsigned)rand() % GATE_SYNTH_NAMES;
		label_of(label, sizeof(label), l);
		if (w == USERS)
			pol = pols[k % USERS_N];
		if (w == MISS || w == USERS)
			snprintf(name, sizeof(name), "p%u.rules.test",
			    i % 100);
		else
			name_of(name, sizeof(name), l, i);
		dnsmsg_synth_v4(name, strlen(name), a.bytes);
		if (w == NOTE)
			rc = gate_synth_note(s, key, label, name, a.bytes);
		else
			rc = gate_synth_name(s, pol, key, label, &a, out,
			    sizeof(out));
		if (rc == -1 && w != MISS && w != USERS)
			return -1;
	}
	return (now() - t0) * 1e9 / n;
}

/* The cost of the loop's own work (rand, snprintf, the hash). */
static double
round_base(unsigned n)
{
	struct policy_addr	 a;
	char			 name[POLICY_MAX_NAME + 1], label[64];
	double			 t0;
	unsigned		 k, l, i;
	volatile unsigned	 sink = 0;

	memset(&a, 0, sizeof(a));
	t0 = now();
	for (k = 0; k < n; k++) {
		l = (unsigned)rand() % GATE_SYNTH_LABELS;
		i = (unsigned)rand() % GATE_SYNTH_NAMES;
		label_of(label, sizeof(label), l);
		name_of(name, sizeof(name), l, i);
		dnsmsg_synth_v4(name, strlen(name), a.bytes);
		sink += a.bytes[3] + (unsigned char)label[9];
	}
	(void)sink;
	return (now() - t0) * 1e9 / n;
}

int
main(int argc, char **argv)
{
	static const char *const names[] = { "hit", "miss", "note", "users" };
	struct gate_synth	*s;
	struct policy		*pol[USERS_N];
	double			 t[ROUNDS_MAX], base[ROUNDS_MAX];
	char			 name[POLICY_MAX_NAME + 1], label[64];
	uint8_t			 addr[4];
	unsigned		 rounds = 5, n = 200000, rules = 1000, l, i, r;
	int			 c, w;

	while ((c = getopt(argc, argv, "r:n:p:")) != -1) {
		switch (c) {
		case 'r':
			rounds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			n = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			rules = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: bench_synth [-r ROUNDS] "
			    "[-n CALLS] [-p RULES]\n");
			return 64;
		}
	}
	if (rounds < 1 || rounds > ROUNDS_MAX || n < 1 || rules < 100) {
		fprintf(stderr, "bench_synth: 1 to %d rounds, 1 call or more, "
		    "100 rules or more\n", ROUNDS_MAX);
		return 64;
	}
	if ((s = gate_synth_new()) == NULL) {
		fprintf(stderr, "bench_synth: out of memory\n");
		return 1;
	}
	for (i = 0; i < USERS_N; i++)
		if ((pol[i] = make_policy(rules, i)) == NULL) {
			fprintf(stderr, "bench_synth: out of memory or bad "
			    "policy\n");
			return 1;
		}
	/* every slot full */
	for (l = 0; l < GATE_SYNTH_LABELS; l++)
		for (i = 0; i < GATE_SYNTH_NAMES; i++) {
			label_of(label, sizeof(label), l);
			name_of(name, sizeof(name), l, i);
			dnsmsg_synth_v4(name, strlen(name), addr);
			if (gate_synth_note(s, key, label, name, addr) == -1) {
				fprintf(stderr, "bench_synth: note failed\n");
				return 1;
			}
		}
	srand(1);
	printf("gate_synth, %d sessions x %d names, full; policy of %u exact "
	    "rules; %u rounds of %u calls; ns per call (the loop's own work "
	    "taken off)\n", GATE_SYNTH_LABELS, GATE_SYNTH_NAMES, rules, rounds,
	    n);
	for (w = HIT; w <= USERS; w++) {
		for (r = 0; r < rounds; r++) {
			base[r] = round_base(n);
			if ((t[r] = round_of(s, pol, (enum what)w, n)) < 0) {
				fprintf(stderr, "bench_synth: %s failed\n",
				    names[w]);
				return 1;
			}
			t[r] -= base[r];
		}
		qsort(t, rounds, sizeof(t[0]), cmp_double);
		printf("%-5s min %8.0f  median %8.0f  max %8.0f\n", names[w],
		    t[0], t[rounds / 2], t[rounds - 1]);
	}
	gate_synth_free(s);
	for (i = 0; i < USERS_N; i++)
		policy_free(pol[i]);
	return 0;
}
