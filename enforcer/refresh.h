/*
 * Direct mode: no gate.  Allowed names are resolved (c-ares) into the sets
 * allowed4/allowed6 before the command runs; a refresher parent holding only
 * CAP_NET_ADMIN re-resolves them on their TTL while the command runs.
 */
#ifndef AISB_ENF_REFRESH_H
#define AISB_ENF_REFRESH_H

#include <stddef.h>

#include "enforcer/nft.h"
#include "enforcer/plan.h"
#include "enforcer/privdrop.h"
#include "enforcer/record.h"

/*
 * Resolves, fills the sets, verifies rs, forks the command (which drops to
 * creds and execs cmd) and stays behind as its refresher.  rec (NULL
 * without a record line) keeps its descriptors and is stopped, drained,
 * once the command has exited.  Returns the exit status for main: 77 when
 * enforcement failed before the command ran, else the command's status
 * (128 + signal when it was killed).
 */
int	enf_direct_run(const struct enf_plan *plan, struct nft_ruleset *rs,
	    struct enf_recorder *rec, const struct enf_creds *creds,
	    const int *keep, size_t nkeep, char **cmd);

#endif
