/*
 * enforce_verify: drives enforcer/nft.c and verify.c directly so that
 * enforce_netns.sh can tamper with the table between loading and checking
 * it (with the nft tool) and see the read-back refuse it.
 *
 *	enforce_verify apply PLAN	load the table; exit 0 or 1
 *	enforce_verify verify PLAN	read it back; "verify ok" or
 *					"verify failed: WHY"; exit 0 or 1
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nft.h"
#include "plan.h"

int
main(int argc, char **argv)
{
	struct enf_plan		*plan;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	char			*buf, err[1200];
	ssize_t			 n;
	int			 fd, rc = 1;

	if (argc != 3 || (strcmp(argv[1], "apply") != 0 &&
	    strcmp(argv[1], "verify") != 0)) {
		fprintf(stderr, "usage: enforce_verify apply|verify PLAN\n");
		return 2;
	}
	if ((buf = malloc(ENF_PLAN_MAX_BYTES + 1)) == NULL ||
	    (fd = open(argv[2], O_RDONLY)) == -1) {
		perror(argv[2]);
		return 2;
	}
	n = enf_plan_read(fd, buf, ENF_PLAN_MAX_BYTES + 1, err, sizeof(err));
	close(fd);
	if (n == -1 || (plan = enf_plan_parse(buf, (size_t)n, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: %s\n", argv[2], err);
		free(buf);
		return 2;
	}
	free(buf);
	if ((rs = nft_ruleset_new(plan, getuid(), err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		enf_plan_free(plan);
		return 2;
	}
	if (strcmp(argv[1], "apply") == 0) {
		if (nft_batch_init(&b) == 0) {
			if (nft_batch_ruleset(rs, (uint32_t)time(NULL), &b, err,
			    sizeof(err)) == 0 &&
			    nft_send(&b, err, sizeof(err)) == 0)
				rc = 0;
			else
				fprintf(stderr, "apply: %s\n", err);
			nft_batch_release(&b);
		}
	} else if (nft_verify(rs, err, sizeof(err)) == 0) {
		printf("verify ok\n");
		rc = 0;
	} else
		printf("verify failed: %s\n", err);
	nft_ruleset_free(rs);
	enf_plan_free(plan);
	return rc;
}
