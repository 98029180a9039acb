/*
 * Policy engine benchmark (not a test): decisions per second on one core
 * for a 1,000-rule policy (exact, wildcard and regex rules mixed) and the
 * load time of a 10,000-rule file.
 *
 * usage: bench_policy [-d SECONDS] [-r REGEXES_PER_1000]
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* nrules rules: 80% exact, 15% wildcard, the rest regex (at most nre). */
static char *
make_policy(unsigned nrules, unsigned nre, size_t *lenp)
{
	size_t		 cap = (size_t)nrules * 96 + 256, off = 0;
	char		*s = malloc(cap);
	unsigned	 i, nwild = nrules * 15 / 100, nexact;

	if (s == NULL)
		return NULL;
	nexact = nrules - nwild - nre;
	off += (size_t)snprintf(s + off, cap - off, "version: 1\nallow:\n");
	for (i = 0; i < nexact; i++)
		off += (size_t)snprintf(s + off, cap - off,
		    "  - host: host%u.svc%u.example.com\n", i, i % 97);
	for (i = 0; i < nwild; i++)
		off += (size_t)snprintf(s + off, cap - off,
		    "  - host: \"*.zone%u.example.org\"\n    ports: [443]\n", i);
	for (i = 0; i < nre; i++)
		off += (size_t)snprintf(s + off, cap - off,
		    "  - host: \"~^cdn[0-9]+\\\\.edge%u\\\\.example\\\\.net$\"\n",
		    i);
	off += (size_t)snprintf(s + off, cap - off,
	    "deny:\n  - host: host7.svc7.example.com\n    ports: [8080]\n");
	*lenp = off;
	return s;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct policy *
load(const char *buf, size_t len)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 out[4096];

	if (policy_load_buffer("bench.yaml", buf, len, &p, &errs) == -1) {
		policy_errors_format(&errs, out, sizeof(out));
		fprintf(stderr, "%s", out);
		exit(1);
	}
	return p;
}

int
main(int argc, char **argv)
{
	struct policy		*p;
	struct policy_decision	 d;
	struct policy_target	*q;
	char			*buf, name[128], err[128];
	double			 t0, t1, secs = 5.0, best = 1e9;
	size_t			 len, nq = 4096, i;
	unsigned		 nre = 20, allowed = 0, k;
	unsigned long		 n = 0;
	double			 rate[5];
	int			 c;

	while ((c = getopt(argc, argv, "d:r:")) != -1) {
		switch (c) {
		case 'd':
			secs = atof(optarg);
			break;
		case 'r':
			nre = (unsigned)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_policy [-d SECONDS] "
			    "[-r REGEXES_PER_1000]\n");
			return 2;
		}
	}

	/* load time: 10,000 rules, best of 5 */
	if ((buf = make_policy(10000, nre * 10, &len)) == NULL)
		return 1;
	for (k = 0; k < 5; k++) {
		t0 = now();
		p = load(buf, len);
		t1 = now();
		if (t1 - t0 < best)
			best = t1 - t0;
		policy_free(p);
	}
	printf("load 10000 rules (%zu bytes, %u regex): %.1f ms\n", len,
	    nre * 10, best * 1e3);
	free(buf);

	/* decisions: 1,000 rules; queries a quarter each exact hit, wildcard
	 * hit, regex hit and miss, names pre-parsed as the gate has them */
	if ((buf = make_policy(1000, nre, &len)) == NULL)
		return 1;
	p = load(buf, len);
	free(buf);
	if ((q = calloc(nq, sizeof(*q))) == NULL)
		return 1;
	for (i = 0; i < nq; i++) {
		unsigned r = (unsigned)(i * 2654435761u >> 7);

		switch (i % 4) {
		case 0:
			snprintf(name, sizeof(name), "host%u.svc%u.example.com",
			    r % 780, r % 780 % 97);
			break;
		case 1:
			snprintf(name, sizeof(name), "a.b.zone%u.example.org",
			    r % 150);
			break;
		case 2:
			snprintf(name, sizeof(name), "cdn%u.edge%u.example.net",
			    r % 100, nre ? r % nre : 0);
			break;
		default:
			snprintf(name, sizeof(name), "unlisted%u.example.io", r);
			break;
		}
		if (policy_parse_target(name, strlen(name), 443, &q[i], err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "%s: %s\n", name, err);
			return 1;
		}
	}
	/* five rounds; the best is the machine's figure, the spread says how
	 * busy it was */
	for (k = 0; k < 5; k++) {
		n = 0;
		t0 = now();
		do {
			for (i = 0; i < nq; i++) {
				policy_decide(p, &q[i], &d);
				allowed += d.verdict == POLICY_ALLOW;
			}
			n += nq;
		} while ((t1 = now()) - t0 < secs / 5);
		rate[k] = (double)n / (t1 - t0);
	}
	qsort(rate, 5, sizeof(rate[0]), dbl_cmp);
	printf("decide 1000 rules (%u regex), mixed queries (3/4 allowed): "
	    "best %.2f M/s (%.0f ns each), median %.2f M/s\n", nre,
	    rate[4] / 1e6, 1e9 / rate[4], rate[2] / 1e6);
	(void)allowed;
	free(q);
	policy_free(p);
	policy_thread_cleanup();
	return 0;
}
