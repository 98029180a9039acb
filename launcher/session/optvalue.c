/*
 * Each option's value checked for its type (options-int.h), with the
 * typed view filled: sizes, CPUs, durations, choices, the names of the
 * grammar (image/names.c) in lists.  Every check bounds the value first.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/names.h"
#include "session/options-int.h"
#include "session/recording.h"

static int
parse_u64(const char *s, uint64_t max, uint64_t *out, const char **end)
{
	uint64_t	 v = 0;
	const char	*p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	*end = p;
	return 0;
}

/* transparent_ports: 1..16 distinct ports 1-65535, comma-separated. */
static int
tports_parse(struct launch_opts *o, const char *v, char *err, size_t errlen)
{
	const char	*p = v, *end;
	uint64_t	 n;
	size_t		 i;

	o->ntports = 0;
	for (;;) {
		if (parse_u64(p, 65535, &n, &end) == -1 || n == 0 ||
		    (*end != ',' && *end != '\0'))
			goto bad;
		for (i = 0; i < o->ntports; i++)
			if (o->tports[i] == n) {
				snprintf(err, errlen, "transparent_ports: port "
				    "%u listed twice", (unsigned)n);
				return -1;
			}
		if (o->ntports == sizeof(o->tports) / sizeof(o->tports[0])) {
			snprintf(err, errlen, "transparent_ports: more than "
			    "16 ports");
			return -1;
		}
		o->tports[o->ntports++] = (uint16_t)n;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
bad:
	snprintf(err, errlen, "transparent_ports: '%.64s' is not a list of "
	    "ports; write 80,443 (1 to 16 ports, 1-65535)", v);
	return -1;
}

/* choice and net: the one word among the few, into the typed view */
static int
check_choice(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, char *err, size_t errlen)
{
	if (d->type == OT_NET) {
		if (strcmp(v, "gate") == 0)
			o->net = LAUNCH_NET_GATE;
		else if (strcmp(v, "none") == 0)
			o->net = LAUNCH_NET_NONE;
		else if (strcmp(v, "direct") == 0)
			o->net = LAUNCH_NET_DIRECT;
		else {
			snprintf(err, errlen, "net: '%.32s' is not a network "
			    "mode; write gate, none or direct", v);
			return -1;
		}
		return 0;
	}
	if (id == LO_WORKSPACE_MODE && (strcmp(v, "direct") == 0 ||
	    strcmp(v, "snapshot") == 0)) {
		o->snapshot = v[0] == 's';
		return 0;
	}
	if (id == LO_APPLY && strcmp(v, "auto") == 0)
		o->apply = LAUNCH_APPLY_AUTO;
	else if (id == LO_APPLY && strcmp(v, "ask") == 0)
		o->apply = LAUNCH_APPLY_ASK;
	else if (id == LO_APPLY && strcmp(v, "never") == 0)
		o->apply = LAUNCH_APPLY_NEVER;
	else if (id == LO_APPLY && (strcmp(v, "yes") == 0 ||
	    strcmp(v, "always") == 0)) {
		/* a person approves a write-back (docs/snapshot.md) */
		snprintf(err, errlen, "apply: '%s' is not offered: a "
		    "session's changes are written back when a person "
		    "says so; write never and run aisb apply ID after "
		    "the session (a script may), or ask", v);
		return -1;
	} else {
		snprintf(err, errlen, "%s: '%.32s' is not one of %s",
		    d->name, v, d->arg);
		return -1;
	}
	return 0;
}

/* a word: no blank or control character; some have a grammar */
static int
check_word(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, size_t len, char *err,
    size_t errlen)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (!isgraph((unsigned char)v[i])) {
			snprintf(err, errlen, "%s: '%.64s' has a space or "
			    "control character", d->name, v);
			return -1;
		}
	if (id == LO_HOME_VOLUME && (len == 0 || len > 128 ||
	    !isalnum((unsigned char)v[0]) ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_.-") != len)) {
		snprintf(err, errlen, "home_volume: '%.64s' is not a "
		    "volume name; use letters, digits, '_', '.', '-'", v);
		return -1;
	}
	if (id == LO_AGENT && !launch_agent_name_ok(v)) {
		snprintf(err, errlen, "agent: '%.64s' is not an agent "
		    "name; write a lower-case name from aisb doctor's "
		    "list, or none", v);
		return -1;
	}
	if (id == LO_TRANSPARENT_PORTS)
		return tports_parse(o, v, err, errlen);
	if ((id == LO_IMAGE || id == LO_RUNTIME) && len == 0) {
		snprintf(err, errlen, "%s: empty", d->name);
		return -1;
	}
	return 0;
}

/* an entry of a list option, by the grammar of its kind (names.h) */
static int
check_list(enum launch_opt_id id, const char *v, size_t len, char *err,
    size_t errlen)
{
	if (id == LO_NPM) {
		char sub[256];

		if (strchr(v + (v[0] == '@'), '@') != NULL ?
		    launch_npm_entry_ok(v, sub, sizeof(sub)) == -1 :
		    !launch_npm_name_ok(v)) {
			snprintf(err, errlen, "npm: '%.64s' is not "
			    "NAME or NAME@X.Y.Z (npm's names: lower "
			    "case, digits, - . _ ~; @scope/name)", v);
			return -1;
		}
		return 0;
	}
	if (id == LO_PIP)
		return launch_pip_entry_ok(v, err, errlen);
	if (id == LO_SNAPSHOT_EXCLUDE) {
		/* the library checks the rest (snap_rules_add) */
		if (len == 0 || len > 255 || strpbrk(v, "\n\r") !=
		    NULL) {
			snprintf(err, errlen, "snapshot_exclude: '%.64s' "
			    "is not a pattern of 1 to 255 bytes on one "
			    "line", v);
			return -1;
		}
		return 0;
	}
	if (!launch_deb_package_ok(v)) {
		snprintf(err, errlen, "packages: '%.64s' is not a Debian "
		    "package name", v);
		return -1;
	}
	return 0;
}

/* an --env entry: NAME, NAME=VALUE or NAME? */
static int
check_env(const char *v, size_t len, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	size_t nlen = eq != NULL ? (size_t)(eq - v) : len;

	if (eq == NULL && nlen > 0 && v[nlen - 1] == '?')
		nlen--;
	if (!launch_env_name_ok(v, nlen)) {
		snprintf(err, errlen, "env: '%.*s' is not a variable "
		    "name; write NAME, NAME=VALUE or NAME?",
		    (int)(nlen > 64 ? 64 : nlen), v);
		return -1;
	}
	if (eq != NULL && strpbrk(eq, "\n\r") != NULL) {
		snprintf(err, errlen, "env: the value of %.*s holds a "
		    "line break, which an env file cannot carry",
		    (int)nlen, v);
		return -1;
	}
	return 0;
}

/* sizes, CPUs, counts and durations, each within its bound */
static int
check_number(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, char *err, size_t errlen)
{
	const char	*end;
	uint64_t	 n, frac = 0;

	switch (d->type) {
	case OT_SIZE:
		if (parse_u64(v, UINT64_C(1) << 40, &n, &end) == -1)
			goto badnum;
		switch (tolower((unsigned char)*end)) {
		case '\0':
			break;
		case 'k':
			n <<= 10;
			end++;
			break;
		case 'm':
			n <<= 20;
			end++;
			break;
		case 'g':
			n <<= 30;
			end++;
			break;
		default:
			goto badnum;
		}
		if (*end != '\0' || n > (UINT64_C(1) << 40))
			goto badnum;
		if (id == LO_RECORD_MAX) {
			if (n < 4096 || n > LAUNCH_RECORD_MAX_LIMIT) {
				snprintf(err, errlen, "record_max: %s is not "
				    "between 4K and 64G", v);
				return -1;
			}
			o->record_max = n;
			return 0;
		}
		if (n != 0 && n < (UINT64_C(6) << 20)) {
			snprintf(err, errlen, "memory: %s is below podman's "
			    "minimum of 6m", v);
			return -1;
		}
		o->memory = n;
		return 0;
	case OT_CPUS:
		if (parse_u64(v, 1024, &n, &end) == -1)
			goto badnum;
		if (*end == '.') {
			const char *f = end + 1;
			unsigned digits = 0;

			for (end = f; isdigit((unsigned char)*end) && digits < 3;
			    end++, digits++)
				frac = frac * 10 + (uint64_t)(*end - '0');
			if (digits == 0)
				goto badnum;
			while (digits++ < 3)
				frac *= 10;
		}
		if (*end != '\0')
			goto badnum;
		o->cpus_milli = (unsigned)(n * 1000 + frac);
		return 0;
	case OT_UINT:
		if (parse_u64(v, 1000000, &n, &end) == -1 || *end != '\0')
			goto badnum;
		o->pids = (unsigned)n;
		return 0;
	case OT_DURATION:
		if (parse_u64(v, 7 * 86400, &n, &end) == -1)
			goto badnum;
		if (*end == 'm')
			n *= 60, end++;
		else if (*end == 'h')
			n *= 3600, end++;
		else if (*end == 's')
			end++;
		if (*end != '\0' || n > 7 * 86400)
			goto badnum;
		o->timeout = (unsigned)n;
		return 0;
	default:
		break;
	}
	return 0;
badnum:
	snprintf(err, errlen, "%s: '%.32s' is not valid (%s)", d->name, v,
	    d->help);
	return -1;
}

/* true, yes, 1 or false, no, 0 */
static int
check_bool(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, char *err, size_t errlen)
{
	int	 b;

	if (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 ||
	    strcmp(v, "1") == 0)
		b = 1;
	else if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0 ||
	    strcmp(v, "0") == 0)
		b = 0;
	else {
		snprintf(err, errlen, "%s: '%.16s' is not true or false",
		    d->name, v);
		return -1;
	}
	if (id == LO_KEEP)
		o->keep = b;
	else if (id == LO_RECORD)
		o->record = b;
	else if (id == LO_HOST_CA)
		o->host_ca = b;
	else if (id == LO_QUIET)
		o->quiet = b;
	else if (id == LO_ALLOW_FROM_LOCKFILE)
		o->allow_from_lockfile = b;
	else if (id == LO_TRANSPARENT)
		o->transparent = b;
	else
		o->project_policy = b;
	return 0;
}

/* Checks one value for its type; fills the typed view for scalars. */
int
launch_opt_check(struct launch_opts *o, enum launch_opt_id id, const char *v,
    char *err, size_t errlen)
{
	const struct optdesc	*d = &launch_optdesc[id];
	size_t			 len = strlen(v);

	if (len > LAUNCH_MAX_VALUE) {
		snprintf(err, errlen, "%s: value longer than %d bytes", d->name,
		    LAUNCH_MAX_VALUE);
		return -1;
	}
	switch (d->type) {
	case OT_PATH:
		if (len == 0 && id != LO_POLICY) {
			snprintf(err, errlen, "%s: empty path", d->name);
			return -1;
		}
		return 0;
	case OT_CHOICE:
	case OT_NET:
		return check_choice(o, id, d, v, err, errlen);
	case OT_WORD:
		return check_word(o, id, d, v, len, err, errlen);
	case OT_LIST:
		return check_list(id, v, len, err, errlen);
	case OT_ENVLIST:
		return check_env(v, len, err, errlen);
	case OT_BOOL:
		return check_bool(o, id, d, v, err, errlen);
	default:
		return check_number(o, id, d, v, err, errlen);
	}
}

