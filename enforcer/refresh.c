/* Direct mode: see refresh.h. */
#include "config.h"

#include "log.h"
#include "refresh.h"

int
enf_direct_run(const struct enf_plan *plan, struct nft_ruleset *rs,
    const struct enf_creds *creds, const int *keep, size_t nkeep, char **cmd)
{
	log_warnx("mode direct is not available in this build yet");
	return 77;
}
