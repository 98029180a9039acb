/*
 * The launcher's cache of podman's answers (cache.h).  A cache file is
 *
 *	aisb-cache 1 <key: 64 hex digits>\n
 *	<body>
 *
 * mode 0600 in a 0700 folder of the state folder, written to a temporary
 * name and renamed, so that a reader sees a whole file or none.  Read
 * back only when it is a regular file of the effective user, writable by
 * no one else, at most its bound, under the key asked for, with a body
 * that parses; anything else is a miss.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "host/cache.h"
#include "file.h"
#include "host/paths.h"
#include "host/proc.h"

#define CACHE_MAGIC		"aisb-cache 1 "
#define IMAGES_CACHE_MAX	(1024u * 1024)	/* as image.c's listing */
#define INFO_TIMEOUT_MS		(60 * 1000)

int
launch_cache_path(char **envp, const char *name, char *out, size_t len)
{
	char	 base[PATH_MAX];
	int	 n;

	if (launch_state_dir(envp, base, sizeof(base)) == -1)
		return -1;
	n = snprintf(out, len, "%s/cache/%s", base, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
valid_key(const char *key)
{
	size_t	 i;

	for (i = 0; i < LAUNCH_CACHE_KEYHEX; i++)
		if (!((key[i] >= '0' && key[i] <= '9') ||
		    (key[i] >= 'a' && key[i] <= 'f')))
			return 0;
	return key[i] == '\0';
}

char *
launch_cache_read(const char *path, const char *key, size_t max, size_t *len)
{
	struct stat	 st;
	char		*text = NULL;
	size_t		 hl = sizeof(CACHE_MAGIC) - 1, off = 0;
	ssize_t		 n;
	int		 fd;

	if (!valid_key(key) ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022) != 0 ||
	    st.st_size < (off_t)(hl + LAUNCH_CACHE_KEYHEX + 1) ||
	    (size_t)st.st_size > max)
		goto fail;
	if ((text = malloc((size_t)st.st_size + 1)) == NULL)
		goto fail;
	while (off < (size_t)st.st_size) {
		n = read(fd, text + off, (size_t)st.st_size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	text[off] = '\0';
	if (memcmp(text, CACHE_MAGIC, hl) != 0 ||
	    memcmp(text + hl, key, LAUNCH_CACHE_KEYHEX) != 0 ||
	    text[hl + LAUNCH_CACHE_KEYHEX] != '\n' || strlen(text) != off)
		goto fail;
	close(fd);
	*len = off - hl - LAUNCH_CACHE_KEYHEX - 1;
	memmove(text, text + hl + LAUNCH_CACHE_KEYHEX + 1, *len + 1);
	return text;
fail:
	free(text);
	close(fd);
	return NULL;
}

int
launch_cache_write(const char *path, const char *key, const char *body,
    size_t len)
{
	char	 dir[PATH_MAX], *slash, *text;
	size_t	 hl = sizeof(CACHE_MAGIC) - 1 + LAUNCH_CACHE_KEYHEX + 1;
	int	 rc;

	if (!valid_key(key) || snprintf(dir, sizeof(dir), "%s", path) >=
	    (int)sizeof(dir) || (slash = strrchr(dir, '/')) == NULL ||
	    slash == dir)
		return -1;
	*slash = '\0';
	if (launch_mkdirs(dir) == -1 || len > SIZE_MAX - hl ||
	    (text = malloc(hl + len)) == NULL)
		return -1;
	/* the key line, then the body: one file, replaced whole */
	memcpy(text, CACHE_MAGIC, sizeof(CACHE_MAGIC) - 1);
	memcpy(text + sizeof(CACHE_MAGIC) - 1, key, LAUNCH_CACHE_KEYHEX);
	text[hl - 1] = '\n';
	memcpy(text + hl, body, len);
	rc = file_write_atomic(path, text, hl + len, 0600, (gid_t)-1);
	free(text);
	return rc;
}

/* ---- keys ------------------------------------------------------------ */

static void
key_bytes(EVP_MD_CTX *ctx, const void *p, size_t len)
{
	uint64_t	 l = len;

	/* length-prefixed: no two inputs hash alike */
	EVP_DigestUpdate(ctx, &l, sizeof(l));
	EVP_DigestUpdate(ctx, p, len);
}

static void
key_str(EVP_MD_CTX *ctx, const char *s)
{
	key_bytes(ctx, s != NULL ? s : "", s != NULL ? strlen(s) + 1 : 0);
}

/* A file's identity: replaced, edited, or touched files hash anew. */
static void
key_file(EVP_MD_CTX *ctx, const char *path)
{
	struct stat	 st;
	uint64_t	 v[9];

	key_str(ctx, path);
	memset(v, 0, sizeof(v));
	if (path != NULL && stat(path, &st) == 0) {
		v[0] = 1;
		v[1] = (uint64_t)st.st_dev;
		v[2] = (uint64_t)st.st_ino;
		v[3] = (uint64_t)st.st_size;
		v[4] = (uint64_t)st.st_mtim.tv_sec;
		v[5] = (uint64_t)st.st_mtim.tv_nsec;
		v[6] = (uint64_t)st.st_ctim.tv_sec;
		v[7] = (uint64_t)st.st_ctim.tv_nsec;
		v[8] = (uint64_t)st.st_mode;
	}
	key_bytes(ctx, v, sizeof(v));
}

static int
key_done(EVP_MD_CTX *ctx, char hex[LAUNCH_CACHE_KEYHEX + 1])
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned	 mdlen = 0, i;

	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
		return -1;
	for (i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

int
launch_sha256_fd(int fd, unsigned long long max,
    char hex[LAUNCH_CACHE_KEYHEX + 1], char *err, size_t errlen)
{
	unsigned char		 buf[16384];
	unsigned long long	 total = 0;
	EVP_MD_CTX		*ctx;
	ssize_t			 n;
	int			 rc = -1;

	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		snprintf(err, errlen, "SHA-256: out of memory");
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s", strerror(errno));
			goto out;
		}
		if ((total += (unsigned long long)n) > max) {
			snprintf(err, errlen, "larger than %llu MiB", max >> 20);
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	}
	if ((rc = key_done(ctx, hex)) == -1)
		snprintf(err, errlen, "SHA-256 failed");
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

/*
 * The environment podman reads to choose its configuration and store
 * (containers-storage.conf(5), containers.conf(5)), and where a user's
 * own configuration lives.
 */
static const char *const key_env[] = {
	"CONTAINERS_STORAGE_CONF", "CONTAINERS_CONF", "CONTAINERS_CONF_OVERRIDE",
	"STORAGE_DRIVER", "STORAGE_OPTS", "CONTAINER_HOST",
	"CONTAINER_CONNECTION", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"XDG_RUNTIME_DIR", "HOME",
};

static const char *const key_files[] = {
	"/etc/containers/storage.conf", "/usr/share/containers/storage.conf",
	"/etc/containers/containers.conf", "/usr/share/containers/containers.conf",
	"/etc/containers/containers.conf.d",
	"/usr/share/containers/containers.conf.d",
};

int
launch_cache_podman_key(const char *podman, char **envp,
    char hex[LAUNCH_CACHE_KEYHEX + 1])
{
	EVP_MD_CTX	*ctx;
	const char	*v;
	char		 path[PATH_MAX];
	uint64_t	 uid = geteuid();
	size_t		 i;
	int		 rc;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return -1;
	}
	key_str(ctx, "aisb podman facts 1");
	key_bytes(ctx, &uid, sizeof(uid));
	key_file(ctx, podman);
	for (i = 0; i < sizeof(key_env) / sizeof(key_env[0]); i++) {
		v = launch_getenv(envp, key_env[i], strlen(key_env[i]));
		key_str(ctx, key_env[i]);
		key_str(ctx, v);
	}
	for (i = 0; i < sizeof(key_files) / sizeof(key_files[0]); i++)
		key_file(ctx, key_files[i]);
	for (i = 0; i < 3; i++) {
		static const char *const names[] = { "CONTAINERS_STORAGE_CONF",
		    "CONTAINERS_CONF", "CONTAINERS_CONF_OVERRIDE" };

		key_file(ctx, launch_getenv(envp, names[i], strlen(names[i])));
	}
	/* the user's own files, as podman finds them */
	if (launch_config_home(envp, "containers", path, sizeof(path)) == 0) {
		size_t	 l = strlen(path);

		key_file(ctx, path);
		snprintf(path + l, sizeof(path) - l, "/storage.conf");
		key_file(ctx, path);
		snprintf(path + l, sizeof(path) - l, "/containers.conf");
		key_file(ctx, path);
		snprintf(path + l, sizeof(path) - l, "/containers.conf.d");
		key_file(ctx, path);
	}
	rc = key_done(ctx, hex);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* ---- podman's facts -------------------------------------------------- */

static int
valid_version(const char *s)
{
	size_t	 n = strspn(s, "0123456789.-+~abcdefghijklmnopqrstuvwxyz");

	return s[0] >= '0' && s[0] <= '9' && s[n] == '\0' && n < 32;
}

static int
valid_abs(const char *s)
{
	return s[0] == '/' && strlen(s) < PATH_MAX && strstr(s, "/../") ==
	    NULL && s[strcspn(s, "\n\r")] == '\0';
}

static int
valid_driver(const char *s)
{
	size_t	 n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	return n > 0 && n < 32 && s[n] == '\0';
}

/*
 * "version V\ngraphroot P\ndriver D\nvolume_path P\n", each line once, in
 * this order, each value valid.  0 or -1.
 */
static int
facts_parse(char *text, struct launch_podman_facts *f)
{
	static const char *const names[] = { "version ", "graphroot ",
	    "driver ", "volume_path " };
	char	*line = text, *nl;
	char	*vals[4];
	size_t	 i, nl_len;

	for (i = 0; i < 4; i++) {
		nl_len = strlen(names[i]);
		if (strncmp(line, names[i], nl_len) != 0 ||
		    (nl = strchr(line, '\n')) == NULL)
			return -1;
		*nl = '\0';
		vals[i] = line + nl_len;
		line = nl + 1;
	}
	if (*line != '\0' || !valid_version(vals[0]) || !valid_abs(vals[1]) ||
	    !valid_driver(vals[2]) || !valid_abs(vals[3]))
		return -1;
	memset(f, 0, sizeof(*f));
	snprintf(f->version, sizeof(f->version), "%s", vals[0]);
	snprintf(f->graphroot, sizeof(f->graphroot), "%s", vals[1]);
	snprintf(f->driver, sizeof(f->driver), "%s", vals[2]);
	snprintf(f->volume_path, sizeof(f->volume_path), "%s", vals[3]);
	return 0;
}

static int
facts_ask(const char *podman, struct launch_podman_facts *f, char *err,
    size_t errlen)
{
	char *const	 argv[] = { (char *)podman, "info", "--format",
	    "version {{.Version.Version}}\ngraphroot {{.Store.GraphRoot}}\n"
	    "driver {{.Store.GraphDriverName}}\n"
	    "volume_path {{.Store.VolumePath}}", NULL };
	char		 out[3 * PATH_MAX];
	size_t		 n;
	int		 rc;

	if ((rc = launch_exec(argv, NULL, 0, out, sizeof(out),
	    INFO_TIMEOUT_MS, 0, err, errlen)) != 0) {
		if (rc > 0 && err[0] == '\0')
			snprintf(err, errlen, "podman info: status %d", rc);
		return -1;
	}
	n = strlen(out);
	if (n == 0 || out[n - 1] != '\n') {
		if (n + 1 >= sizeof(out))
			goto bad;
		out[n++] = '\n';
		out[n] = '\0';
	}
	if (facts_parse(out, f) == 0)
		return 0;
bad:
	snprintf(err, errlen, "podman info: an answer aisb cannot read");
	return -1;
}

static struct {
	int				 have;
	char				 key[LAUNCH_CACHE_KEYHEX + 1];
	struct launch_podman_facts	 f;
} memo;

void
launch_cache_forget(void)
{
	memset(&memo, 0, sizeof(memo));
}

int
launch_cache_podman_facts(const char *podman, char **envp, int refresh,
    struct launch_podman_facts *f, char *err, size_t errlen)
{
	char	 key[LAUNCH_CACHE_KEYHEX + 1], path[PATH_MAX], *text, *body;
	size_t	 len;
	int	 n, have_key, have_path;

	if (errlen > 0)
		err[0] = '\0';
	have_key = launch_cache_podman_key(podman, envp, key) == 0;
	if (have_key && !refresh && memo.have && strcmp(memo.key, key) == 0) {
		*f = memo.f;
		return 0;
	}
	have_path = have_key && launch_cache_path(envp, "podman", path,
	    sizeof(path)) == 0;
	if (have_path && !refresh && (text = launch_cache_read(path, key,
	    LAUNCH_CACHE_MAX, &len)) != NULL) {
		n = facts_parse(text, f);
		free(text);
		if (n == 0)
			goto done;
	}
	if (facts_ask(podman, f, err, errlen) == -1)
		return -1;
	if (have_path && asprintf(&body, "version %s\ngraphroot %s\ndriver "
	    "%s\nvolume_path %s\n", f->version, f->graphroot, f->driver,
	    f->volume_path) != -1) {
		(void)launch_cache_write(path, key, body, strlen(body));
		free(body);
	}
done:
	if (have_key) {
		memo.have = 1;
		memcpy(memo.key, key, sizeof(key));
		memo.f = *f;
	}
	return 0;
}

/* ---- the image listing ---------------------------------------------- */

/* The store's image list, rewritten (a new file) on every change. */
static int
images_json(const struct launch_podman_facts *f, char *path, size_t len)
{
	int	 n = snprintf(path, len, "%s/%s-images/images.json",
		    f->graphroot, f->driver);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
images_key(const char *podman, char **envp, const char *json,
    char hex[LAUNCH_CACHE_KEYHEX + 1])
{
	EVP_MD_CTX	*ctx;
	char		 pk[LAUNCH_CACHE_KEYHEX + 1];
	int		 rc = -1;

	if (launch_cache_podman_key(podman, envp, pk) == -1 ||
	    (ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1) {
		key_str(ctx, "aisb images 1");
		key_str(ctx, pk);
		key_file(ctx, json);
		rc = key_done(ctx, hex);
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* Lines of "REF sha256:ID", nothing else. */
static int
listing_valid(const char *text)
{
	const char	*p = text, *sp;
	size_t		 n;

	while (*p != '\0') {
		n = strcspn(p, "\n");
		if (p[n] != '\n' || (sp = memchr(p, ' ', n)) == NULL ||
		    sp == p || memchr(p, '\r', n) != NULL ||
		    strncmp(sp + 1, "sha256:", 7) != 0)
			return 0;
		p += n + 1;
	}
	return 1;
}

int
launch_cache_images(const char *podman, char **envp, char *buf, size_t len,
    char *err, size_t errlen)
{
	char *const	 argv[] = { (char *)podman, "images", "--no-trunc",
	    "--noheading", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}",
	    NULL };
	struct launch_podman_facts f;
	char		 json[PATH_MAX], path[PATH_MAX], perr[256];
	char		 before[LAUNCH_CACHE_KEYHEX + 1];
	char		 after[LAUNCH_CACHE_KEYHEX + 1], *text;
	size_t		 tlen, max = len < IMAGES_CACHE_MAX ? len :
			    IMAGES_CACHE_MAX;
	int		 cached, rc;

	cached = launch_cache_podman_facts(podman, envp, 0, &f, perr,
	    sizeof(perr)) == 0 && images_json(&f, json, sizeof(json)) == 0 &&
	    access(json, R_OK) == 0 &&
	    launch_cache_path(envp, "images", path, sizeof(path)) == 0 &&
	    images_key(podman, envp, json, before) == 0;
	if (cached && (text = launch_cache_read(path, before, max, &tlen)) !=
	    NULL) {
		if (tlen < len && listing_valid(text)) {
			memcpy(buf, text, tlen + 1);
			free(text);
			return 0;
		}
		free(text);
	}
	rc = launch_exec(argv, NULL, 0, buf, len, INFO_TIMEOUT_MS, 0, err,
	    errlen);
	if (rc != 0) {
		if (rc > 0 && err[0] == '\0')
			snprintf(err, errlen, "podman images: status %d", rc);
		return -1;
	}
	tlen = strlen(buf);
	if (tlen >= len - 1) {
		snprintf(err, errlen, "podman images: more than %zu bytes",
		    len - 1);
		return -1;
	}
	/* kept only when the list did not change while podman read it */
	if (cached && tlen < max && listing_valid(buf) &&
	    images_key(podman, envp, json, after) == 0 &&
	    strcmp(before, after) == 0)
		(void)launch_cache_write(path, before, buf, tlen);
	return 0;
}

int
launch_cache_volume_known(const char *podman, char **envp, const char *name)
{
	struct launch_podman_facts f;
	struct stat	 st;
	char		 path[PATH_MAX], err[256];
	int		 n;

	if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL ||
	    launch_cache_podman_facts(podman, envp, 0, &f, err,
	    sizeof(err)) == -1)
		return 0;
	n = snprintf(path, sizeof(path), "%s/%s/_data", f.volume_path, name);
	return n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode);
}
