/*
 * Public suffixes for aisb policy suggest --group (launcher/psl.c,
 * docs/policy.md): the domain a "*.domain" rule may stand on, by the
 * Public Suffix List (libpsl, private section included) and the list's
 * own file, never over a domain where many owners get names.
 */
#ifndef AISB_PSL_H
#define AISB_PSL_H

#include <stddef.h>

struct launch_psl;

/* The list (libpsl's newest, and its text for what lies under a
 * domain): NULL with err filled when there is none to check against. */
struct launch_psl *launch_psl_new(char *err, size_t errlen);
void	 launch_psl_free(struct launch_psl *);

/*
 * The registrable domain of name (a pointer into name), when "*.domain"
 * may be proposed over it; NULL when name has none (it is a public
 * suffix itself), when a public suffix lies under that domain
 * (s3.amazonaws.com under amazonaws.com), or when the domain is at or
 * under one where anyone gets a name (windows.net, ngrok-free.app, ...).
 */
const char *launch_psl_group_domain(const struct launch_psl *,
	    const char *name);

#endif
