/*
 * The lease and result documents: one JSON object each, written by the
 * runner and read by the caller and by aisb clean.
 *
 * The reader takes only what the writer writes: one object (at most
 * WINRUN_DOC_MAX bytes, nesting depth 2) whose values are strings (at
 * most WINRUN_PATH_MAX bytes decoded), unsigned integers (at most 2^64-1),
 * true/false, arrays of strings, and one level of objects; a nested key
 * is seen as "outer.inner".  Anything else is an error, named with its
 * byte offset.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "win32/winrun.h"

/* ---- writing ------------------------------------------------------- */

struct out {
	char	*buf;
	size_t	 len, off;
	int	 full;
};

static void put(struct out *, const char *, ...) WINRUN_PRINTF(2, 3);

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off)
		o->full = 1;
	else
		o->off += (size_t)n;
}

static void
putstr(struct out *o, const char *key, const char *s)
{
	const unsigned char *p;

	put(o, "\"%s\":\"", key);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			put(o, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			put(o, "\\u%04x", *p);
		else
			put(o, "%c", *p);
	}
	put(o, "\"");
}

static int
finish(struct out *o)
{
	put(o, "}\n");
	if (o->full || o->off > WINRUN_DOC_MAX)
		return -1;
	return (int)o->off;
}

int
winrun_lease_encode(const struct winrun_lease *l, char *buf, size_t len)
{
	struct out o = { buf, len, 0, len == 0 };

	put(&o, "{\"protocol\":%d,\"kind\":\"aisb-run-lease\",", WINRUN_PROTOCOL);
	putstr(&o, "run_id", l->run_id);
	put(&o, ",\"runner_pid\":%lu,\"runner_start\":%llu,",
	    (unsigned long)l->runner_pid, (unsigned long long)l->runner_start);
	putstr(&o, "profile", l->profile);
	put(&o, ",");
	putstr(&o, "stage", l->stage);
	put(&o, ",");
	putstr(&o, "drive", l->drive);
	put(&o, ",");
	putstr(&o, "drive_target", l->drive_target);
	return finish(&o);
}

const char *
winrun_cleanup_name(enum winrun_cleanup c)
{
	switch (c) {
	case WINRUN_CLEAN_REMOVED:
		return "removed";
	case WINRUN_CLEAN_KEPT:
		return "kept";
	case WINRUN_CLEAN_FAILED:
		return "failed";
	default:
		return "none";
	}
}

const char *
winrun_state_name(enum winrun_state s)
{
	switch (s) {
	case WINRUN_EXITED:
		return "exited";
	case WINRUN_KILLED:
		return "killed";
	default:
		return "failed";
	}
}

static const struct {
	uint32_t	 bit;
	const char	*name;
} hitnames[] = {
	{ WINRUN_HIT_TIMEOUT, "timeout" }, { WINRUN_HIT_MEMORY, "memory" },
	{ WINRUN_HIT_PROCS, "processes" }, { WINRUN_HIT_CPU, "cpu" },
	{ WINRUN_HIT_CANCEL, "cancel" }, { WINRUN_HIT_PARENT, "parent" },
};
#define NHITS	(sizeof(hitnames) / sizeof(hitnames[0]))

int
winrun_result_encode(const struct winrun_result *r, char *buf, size_t len)
{
	struct out o = { buf, len, 0, len == 0 };
	size_t i;
	int first = 1;

	put(&o, "{\"protocol\":%d,\"kind\":\"aisb-run-result\",",
	    WINRUN_PROTOCOL);
	putstr(&o, "run_id", r->run_id);
	put(&o, ",\"state\":\"%s\",\"exit_code\":%lu,\"limits_hit\":[",
	    winrun_state_name(r->state), (unsigned long)r->exit_code);
	for (i = 0; i < NHITS; i++) {
		if ((r->hits & hitnames[i].bit) == 0)
			continue;
		put(&o, "%s\"%s\"", first ? "" : ",", hitnames[i].name);
		first = 0;
	}
	put(&o, "],\"wall_ms\":%llu,\"user_ms\":%llu,\"kernel_ms\":%llu,"
	    "\"peak_processes\":%lu,\"peak_memory\":%llu,"
	    "\"appcontainer\":%s,\"cleanup\":{\"profile\":\"%s\","
	    "\"stage\":\"%s\",\"drive\":\"%s\"},",
	    (unsigned long long)r->wall_ms, (unsigned long long)r->user_ms,
	    (unsigned long long)r->kernel_ms, (unsigned long)r->peak_procs,
	    (unsigned long long)r->peak_memory,
	    r->appcontainer ? "true" : "false",
	    winrun_cleanup_name(r->profile_cleanup),
	    winrun_cleanup_name(r->stage_cleanup),
	    winrun_cleanup_name(r->drive_cleanup));
	putstr(&o, "error", r->error);
	return finish(&o);
}

/* ---- reading ------------------------------------------------------- */

enum jtype { J_STR, J_NUM, J_BOOL, J_ELEM };

typedef int (*jfield)(void *ctx, const char *key, enum jtype,
    const char *s, uint64_t n, char *err, size_t errlen);

struct in {
	const char	*p, *start, *end;
	char		*err;
	size_t		 errlen;
};

static int
bad(struct in *in, const char *what)
{
	snprintf(in->err, in->errlen, "byte %zu: %s",
	    (size_t)(in->p - in->start), what);
	return -1;
}

static void
ws(struct in *in)
{
	while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' ||
	    *in->p == '\n' || *in->p == '\r'))
		in->p++;
}

/*
 * A string into s (WINRUN_PATH_MAX bytes), by the one JSON string reader
 * (common/json.c): \u escapes as UTF-8, a surrogate pair as its one
 * character, refused when it does not fit.
 */
static int
jstring(struct in *in, char *s)
{
	char		 e[192];
	const char	*why = e;
	ssize_t		 n;

	n = json_string(in->p, (size_t)(in->end - in->p), s, WINRUN_PATH_MAX,
	    NULL, 0, e, sizeof(e));
	if (n == 0)
		return bad(in, "unterminated string");
	if (n == -1) {
		/* bad() says where the string starts */
		if (strncmp(e, "byte ", 5) == 0 && strchr(e, ':') != NULL)
			why = strchr(e, ':') + 2;
		return bad(in, why);
	}
	in->p += n;
	return 0;
}

static int
jobject(struct in *in, const char *prefix, int depth, jfield cb, void *ctx)
{
	char key[WINRUN_PATH_MAX], full[2 * WINRUN_PATH_MAX], s[WINRUN_PATH_MAX];
	uint64_t n;

	ws(in);
	if (in->p >= in->end || *in->p != '{')
		return bad(in, "an object was expected");
	in->p++;
	ws(in);
	if (in->p < in->end && *in->p == '}') {
		in->p++;
		return 0;
	}
	for (;;) {
		ws(in);
		if (jstring(in, key) == -1)
			return -1;
		snprintf(full, sizeof(full), "%s%s%s", prefix,
		    *prefix ? "." : "", key);
		ws(in);
		if (in->p >= in->end || *in->p != ':')
			return bad(in, "':' was expected");
		in->p++;
		ws(in);
		if (in->p >= in->end)
			return bad(in, "a value was expected");
		if (*in->p == '"') {
			if (jstring(in, s) == -1 ||
			    cb(ctx, full, J_STR, s, 0, in->err, in->errlen) == -1)
				return -1;
		} else if (*in->p >= '0' && *in->p <= '9') {
			for (n = 0; in->p < in->end && *in->p >= '0' &&
			    *in->p <= '9'; in->p++) {
				if (n > (UINT64_MAX - 9) / 10)
					return bad(in, "number too large");
				n = n * 10 + (uint64_t)(*in->p - '0');
			}
			if (cb(ctx, full, J_NUM, NULL, n, in->err,
			    in->errlen) == -1)
				return -1;
		} else if (in->end - in->p >= 4 && memcmp(in->p, "true", 4) == 0) {
			in->p += 4;
			if (cb(ctx, full, J_BOOL, NULL, 1, in->err,
			    in->errlen) == -1)
				return -1;
		} else if (in->end - in->p >= 5 &&
		    memcmp(in->p, "false", 5) == 0) {
			in->p += 5;
			if (cb(ctx, full, J_BOOL, NULL, 0, in->err,
			    in->errlen) == -1)
				return -1;
		} else if (*in->p == '[') {
			in->p++;
			ws(in);
			if (in->p < in->end && *in->p == ']')
				in->p++;
			else for (;;) {
				ws(in);
				if (jstring(in, s) == -1 || cb(ctx, full, J_ELEM,
				    s, 0, in->err, in->errlen) == -1)
					return -1;
				ws(in);
				if (in->p < in->end && *in->p == ',') {
					in->p++;
					continue;
				}
				if (in->p < in->end && *in->p == ']') {
					in->p++;
					break;
				}
				return bad(in, "',' or ']' was expected");
			}
		} else if (*in->p == '{') {
			if (depth >= 2)
				return bad(in, "objects nested too deep");
			if (jobject(in, full, depth + 1, cb, ctx) == -1)
				return -1;
		} else
			return bad(in, "unexpected value");
		ws(in);
		if (in->p < in->end && *in->p == ',') {
			in->p++;
			continue;
		}
		if (in->p < in->end && *in->p == '}') {
			in->p++;
			return 0;
		}
		return bad(in, "',' or '}' was expected");
	}
}

static int
jparse(const char *doc, size_t len, jfield cb, void *ctx, char *err,
    size_t errlen)
{
	struct in in = { doc, doc, doc + len, err, errlen };

	if (len > WINRUN_DOC_MAX) {
		snprintf(err, errlen, "document is %zu bytes; at most %d", len,
		    WINRUN_DOC_MAX);
		return -1;
	}
	if (jobject(&in, "", 1, cb, ctx) == -1)
		return -1;
	ws(&in);
	if (in.p != in.end)
		return bad(&in, "bytes after the object");
	return 0;
}

/* Which keys were seen: each decoder names its required ones. */
struct seen {
	void		*obj;
	unsigned	 mask;
};

static int
want(enum jtype t, enum jtype is, const char *key, char *err, size_t errlen)
{
	if (t == is)
		return 0;
	snprintf(err, errlen, "\"%s\" has the wrong type", key);
	return -1;
}

static int
copystr(char *dst, size_t size, const char *s, const char *key, char *err,
    size_t errlen)
{
	if (strlen(s) >= size) {
		snprintf(err, errlen, "\"%s\" is too long", key);
		return -1;
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

#define HEAD_PROTOCOL	1
#define HEAD_RUN_ID	2

/*
 * "protocol" and "run_id", which the lease and the result (what: "lease",
 * "result") both hold: HEAD_PROTOCOL or HEAD_RUN_ID when key is one of
 * them, taken into *protocol or run_id[WINRUN_RUNID_LEN + 1]; 0 when key
 * is another; -1 with err when its value is wrong.
 */
static int
head_field(const char *what, const char *key, enum jtype t, const char *s,
    uint64_t n, int *protocol, char *run_id, char *err, size_t errlen)
{
	if (strcmp(key, "protocol") == 0) {
		if (want(t, J_NUM, key, err, errlen) == -1)
			return -1;
		if (n != WINRUN_PROTOCOL) {
			snprintf(err, errlen, "%s protocol %llu; this aisb "
			    "reads %d", what, (unsigned long long)n,
			    WINRUN_PROTOCOL);
			return -1;
		}
		*protocol = (int)n;
		return HEAD_PROTOCOL;
	}
	if (strcmp(key, "run_id") == 0) {
		if (want(t, J_STR, key, err, errlen) == -1)
			return -1;
		if (!winrun_runid_valid(s)) {
			snprintf(err, errlen, "\"run_id\" is not %d hex digits",
			    WINRUN_RUNID_LEN);
			return -1;
		}
		memcpy(run_id, s, WINRUN_RUNID_LEN + 1);
		return HEAD_RUN_ID;
	}
	return 0;
}

#define L_PROTO		0x01
#define L_RUNID		0x02
#define L_PID		0x04
#define L_START		0x08
#define L_PROFILE	0x10
#define L_STAGE		0x20
#define L_ALL		0x3f

static int
lease_field(void *ctx, const char *key, enum jtype t, const char *s,
    uint64_t n, char *err, size_t errlen)
{
	struct seen *sn = ctx;
	struct winrun_lease *l = sn->obj;
	int h;

	if ((h = head_field("lease", key, t, s, n, &l->protocol, l->run_id,
	    err, errlen)) != 0) {
		if (h > 0)
			sn->mask |= h == HEAD_PROTOCOL ? L_PROTO : L_RUNID;
		return h == -1 ? -1 : 0;
	}
	if (strcmp(key, "runner_pid") == 0) {
		if (want(t, J_NUM, key, err, errlen) == -1)
			return -1;
		if (n == 0 || n > UINT32_MAX) {
			snprintf(err, errlen, "\"runner_pid\" out of range");
			return -1;
		}
		l->runner_pid = (uint32_t)n;
		sn->mask |= L_PID;
	} else if (strcmp(key, "runner_start") == 0) {
		if (want(t, J_NUM, key, err, errlen) == -1)
			return -1;
		l->runner_start = n;
		sn->mask |= L_START;
	} else if (strcmp(key, "profile") == 0) {
		if (want(t, J_STR, key, err, errlen) == -1 ||
		    copystr(l->profile, sizeof(l->profile), s, key, err,
		    errlen) == -1)
			return -1;
		sn->mask |= L_PROFILE;
	} else if (strcmp(key, "stage") == 0) {
		if (want(t, J_STR, key, err, errlen) == -1 ||
		    copystr(l->stage, sizeof(l->stage), s, key, err,
		    errlen) == -1)
			return -1;
		sn->mask |= L_STAGE;
	} else if (strcmp(key, "drive") == 0) {
		/* optional: a lease of a run without a drive has "" */
		if (want(t, J_STR, key, err, errlen) == -1 ||
		    copystr(l->drive, sizeof(l->drive), s, key, err,
		    errlen) == -1)
			return -1;
	} else if (strcmp(key, "drive_target") == 0) {
		if (want(t, J_STR, key, err, errlen) == -1 ||
		    copystr(l->drive_target, sizeof(l->drive_target), s, key,
		    err, errlen) == -1)
			return -1;
	}
	return 0;
}

static int
missing(unsigned mask, unsigned all, const char *const *names, char *err,
    size_t errlen)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if ((all & (1u << i)) && !(mask & (1u << i))) {
			snprintf(err, errlen, "\"%s\" is missing", names[i]);
			return -1;
		}
	return 0;
}

int
winrun_lease_decode(const char *doc, size_t len, struct winrun_lease *l,
    char *err, size_t errlen)
{
	static const char *const names[] = { "protocol", "run_id",
	    "runner_pid", "runner_start", "profile", "stage", NULL };
	struct seen sn = { l, 0 };

	memset(l, 0, sizeof(*l));
	if (jparse(doc, len, lease_field, &sn, err, errlen) == -1)
		return -1;
	return missing(sn.mask, L_ALL, names, err, errlen);
}

#define R_PROTO		0x001
#define R_RUNID		0x002
#define R_STATE		0x004
#define R_EXIT		0x008
#define R_HITS		0x010
#define R_WALL		0x020
#define R_USER		0x040
#define R_KERNEL	0x080
#define R_PROCS		0x100
#define R_MEM		0x200
#define R_APPC		0x400
#define R_CPROF		0x800
#define R_CSTAGE	0x1000
#define R_ERROR		0x2000
#define R_ALL		0x3fff

static int
cleanup_value(const char *s, enum winrun_cleanup *c)
{
	enum winrun_cleanup k;

	for (k = WINRUN_CLEAN_NONE; k <= WINRUN_CLEAN_FAILED; k++)
		if (strcmp(s, winrun_cleanup_name(k)) == 0) {
			*c = k;
			return 0;
		}
	return -1;
}

static int
result_field(void *ctx, const char *key, enum jtype t, const char *s,
    uint64_t n, char *err, size_t errlen)
{
	static const struct { const char *key; unsigned bit; } nums[] = {
		{ "exit_code", R_EXIT }, { "wall_ms", R_WALL },
		{ "user_ms", R_USER }, { "kernel_ms", R_KERNEL },
		{ "peak_processes", R_PROCS }, { "peak_memory", R_MEM },
	};
	struct seen *sn = ctx;
	struct winrun_result *r = sn->obj;
	enum winrun_state st;
	size_t i;
	int h;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strcmp(key, nums[i].key) != 0)
			continue;
		if (want(t, J_NUM, key, err, errlen) == -1)
			return -1;
		if ((nums[i].bit == R_EXIT || nums[i].bit == R_PROCS) &&
		    n > UINT32_MAX) {
			snprintf(err, errlen, "\"%s\" out of range", key);
			return -1;
		}
		switch (nums[i].bit) {
		case R_EXIT: r->exit_code = (uint32_t)n; break;
		case R_WALL: r->wall_ms = n; break;
		case R_USER: r->user_ms = n; break;
		case R_KERNEL: r->kernel_ms = n; break;
		case R_PROCS: r->peak_procs = (uint32_t)n; break;
		default: r->peak_memory = n; break;
		}
		sn->mask |= nums[i].bit;
		return 0;
	}
	if ((h = head_field("result", key, t, s, n, &r->protocol, r->run_id,
	    err, errlen)) != 0) {
		if (h > 0)
			sn->mask |= h == HEAD_PROTOCOL ? R_PROTO : R_RUNID;
		return h == -1 ? -1 : 0;
	}
	if (strcmp(key, "state") == 0) {
		if (want(t, J_STR, key, err, errlen) == -1)
			return -1;
		for (st = WINRUN_EXITED; st <= WINRUN_FAILED; st++)
			if (strcmp(s, winrun_state_name(st)) == 0)
				break;
		if (st > WINRUN_FAILED) {
			snprintf(err, errlen, "unknown \"state\"");
			return -1;
		}
		r->state = st;
		sn->mask |= R_STATE;
	} else if (strcmp(key, "limits_hit") == 0) {
		if (want(t, J_ELEM, key, err, errlen) == -1)
			return -1;
		for (i = 0; i < NHITS; i++)
			if (strcmp(s, hitnames[i].name) == 0)
				break;
		if (i == NHITS) {
			snprintf(err, errlen, "unknown limit in \"limits_hit\"");
			return -1;
		}
		r->hits |= hitnames[i].bit;
		sn->mask |= R_HITS;
	} else if (strcmp(key, "appcontainer") == 0) {
		if (want(t, J_BOOL, key, err, errlen) == -1)
			return -1;
		r->appcontainer = (int)n;
		sn->mask |= R_APPC;
	} else if (strcmp(key, "cleanup.profile") == 0 ||
	    strcmp(key, "cleanup.stage") == 0) {
		int prof = strcmp(key, "cleanup.profile") == 0;

		if (want(t, J_STR, key, err, errlen) == -1)
			return -1;
		if (cleanup_value(s, prof ? &r->profile_cleanup :
		    &r->stage_cleanup) == -1) {
			snprintf(err, errlen, "unknown \"%s\"", key);
			return -1;
		}
		sn->mask |= prof ? R_CPROF : R_CSTAGE;
	} else if (strcmp(key, "cleanup.drive") == 0) {
		/* optional: "none" when absent */
		if (want(t, J_STR, key, err, errlen) == -1)
			return -1;
		if (cleanup_value(s, &r->drive_cleanup) == -1) {
			snprintf(err, errlen, "unknown \"%s\"", key);
			return -1;
		}
	} else if (strcmp(key, "error") == 0) {
		if (want(t, J_STR, key, err, errlen) == -1 ||
		    copystr(r->error, sizeof(r->error), s, key, err,
		    errlen) == -1)
			return -1;
		sn->mask |= R_ERROR;
	}
	return 0;
}

int
winrun_result_decode(const char *doc, size_t len, struct winrun_result *r,
    char *err, size_t errlen)
{
	static const char *const names[] = { "protocol", "run_id", "state",
	    "exit_code", "limits_hit", "wall_ms", "user_ms", "kernel_ms",
	    "peak_processes", "peak_memory", "appcontainer",
	    "cleanup.profile", "cleanup.stage", "error", NULL };
	struct seen sn = { r, 0 };

	memset(r, 0, sizeof(*r));
	if (jparse(doc, len, result_field, &sn, err, errlen) == -1)
		return -1;
	/* an empty limits_hit array names no element: not required */
	return missing(sn.mask | R_HITS, R_ALL, names, err, errlen);
}
