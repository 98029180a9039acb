/*
 * The command's environment from a file the launcher mounts read-only
 * (podman's --env-file would leave every value in the container's
 * configuration, where `podman inspect` shows it).
 */
#ifndef AISB_ENF_ENVFILE_H
#define AISB_ENF_ENVFILE_H

#include <stddef.h>

#define ENF_ENV_MAX_BYTES	(1024 * 1024)
#define ENF_ENV_MAX_VARS	4096
#define ENF_ENV_MAX_NAME	255

/*
 * Sets every NAME=VALUE line of buf (len bytes) in the environment,
 * replacing what is there.  Blank lines and lines starting with '#' are
 * skipped.  NAME is [A-Za-z_][A-Za-z0-9_]*; VALUE is the rest of the line.
 * Returns how many were set, or -1 with "line N: ..." in err (a value is
 * never quoted in it).  Nothing is set when it fails.
 */
int	enf_env_apply(const char *buf, size_t len, char *err, size_t errlen);

/* Reads path (at most ENF_ENV_MAX_BYTES) and applies it.  As above. */
int	enf_env_file(const char *path, char *err, size_t errlen);

#endif
