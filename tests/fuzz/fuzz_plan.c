/*
 * libFuzzer: the enforcer's plan parser.  Whatever parses must be within
 * the plan's bounds and coherent for its mode, and must build a ruleset
 * that fits in one batch (the enforcer never meets a plan it accepted but
 * cannot load).
 */
#include "config.h"

#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nft.h"
#include "plan.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nft_batch	 b;
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	char			 err[256];
	size_t			 i, j;

	if ((p = enf_plan_parse((const char *)data, size, err,
	    sizeof(err))) == NULL) {
		if (strncmp(err, "line ", 5) != 0)
			abort();
		return 0;
	}
	if (p->ngates > ENF_PLAN_MAX_GATES || p->nnames > ENF_PLAN_MAX_NAMES ||
	    p->nresolvers > ENF_PLAN_MAX_RESOLVERS || p->ttl_min > p->ttl_max ||
	    p->nranges > ENF_PLAN_MAX_RANGES ||
	    (p->mode != ENF_MODE_DIRECT && (p->nranges > 0 || p->has_stub)) ||
	    (p->mode == ENF_MODE_GATE) != (p->ngates > 0) ||
	    (p->mode == ENF_MODE_DIRECT) != (p->nnames > 0) ||
	    (p->mode == ENF_MODE_DIRECT) != (p->nresolvers > 0) ||
	    strlen(p->log_prefix) > ENF_PLAN_MAX_PREFIX ||
	    strlen(p->record_path) > ENF_PLAN_MAX_PATH ||
	    (p->record_path[0] != '\0' && (p->mode != ENF_MODE_DIRECT ||
	    p->record_path[0] != '/' || p->record_max < ENF_RECORD_MIN ||
	    p->record_max > ENF_RECORD_LIMIT)))
		abort();
	for (i = 0; i < p->nnames; i++) {
		if (strlen(p->names[i].name) == 0 ||
		    strlen(p->names[i].name) > ENF_PLAN_MAX_NAME ||
		    p->names[i].nports == 0 ||
		    p->names[i].nports > ENF_PLAN_MAX_PORTS)
			abort();
		for (j = 0; j < p->names[i].nports; j++)
			if (p->names[i].ports[j] == 0)
				abort();
	}
	for (i = 0; i < p->ngates; i++)
		if (p->gates[i].port == 0 || (p->gates[i].addr.family !=
		    AF_INET && p->gates[i].addr.family != AF_INET6))
			abort();
	/* transparent / dns-gate: gate mode, a tcp gate, bounded ports */
	if ((p->ntports > 0 || p->dns_gate) && (p->mode != ENF_MODE_GATE ||
	    enf_plan_relay_gate(p) == NULL ||
	    p->ntports > ENF_PLAN_MAX_TPORTS || p->relay_port != 0 ||
	    p->relay_dns_port != 0))
		abort();
	for (i = 0; i < p->ntports; i++)
		if (p->tports[i] == 0)
			abort();
	/* gate-uid and serve (--init): no relay; gate-uid in gate mode */
	if ((p->gate_uid != 0 || p->nserve > 0) && (p->ntports > 0 ||
	    p->dns_gate))
		abort();
	if ((p->gate_uid != 0 && p->mode != ENF_MODE_GATE) ||
	    p->gate_uid == (uid_t)-1 || p->nserve > ENF_PLAN_MAX_SERVE)
		abort();
	for (i = 0; i < p->nserve; i++)
		if (p->serve[i] == 0)
			abort();
	/* the ports aisb-enforce would have bound: the largest ruleset */
	p->relay_port = 65535;
	p->relay_dns_port = 65534;
	if (b.buf == NULL && nft_batch_init(&b) == -1)
		abort();
	if ((rs = nft_ruleset_new(p, 0, err, sizeof(err))) == NULL ||
	    nft_batch_ruleset(rs, 1, &b, err, sizeof(err)) == -1)
		abort();
	nft_ruleset_free(rs);
	enf_plan_free(p);
	return 0;
}
