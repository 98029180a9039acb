/*
 * aisb's own seccomp profile (contrib/seccomp.json, docs/seccomp.md):
 * where a session finds it.
 */
#ifndef AISB_SECCOMP_H
#define AISB_SECCOMP_H

#include <stddef.h>

/* The profile's name next to the aisb executable, in a build tree. */
#define LAUNCH_SECCOMP_BUILT	"aisb-seccomp.json"

/*
 * The profile every session runs under: LAUNCH_SECCOMP_BUILT next to the
 * running aisb (a build tree, whose profile belongs to that build), else
 * the installed one (AISB_SECCOMP_PROFILE, $(pkgdatadir)/seccomp.json).
 * Its path in buf.  -1 with err naming every place looked at when there
 * is none, or when the one found could be rewritten by any user: a
 * session never runs without it.
 */
int	launch_seccomp_profile(char *buf, size_t len, char *err,
	    size_t errlen);

#endif
