/*
 * The lockfile and tool-configuration scanners
 * (launcher/policytools/lockfile*.c): a real-shaped sample of each format gives exactly the expected hosts,
 * in order; what a lockfile may not add (http without the flag, IP
 * literals, other ports, other schemes) is counted and left out; a
 * malformed or oversized input is one error naming its line, and no
 * error message carries a URL's credentials.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policytools/lockfile.h"

static struct lockfile_hosts	 H;

/* Parses text; the hosts must be want ("a:443 b:80", in order). */
static void
expect_hosts(enum lockfile_kind k, const char *text, unsigned flags,
    const char *goproxy, const char *want)
{
	char	 err[512], got[8192] = "";
	size_t	 i, o = 0;

	memset(&H, 0, sizeof(H));
	if (lockfile_parse(k, text, strlen(text), flags, goproxy, 0, &H, err,
	    sizeof(err)) == -1)
		fail_msg("%s: unexpected error: %s", lockfile_kind_name(k),
		    err);
	for (i = 0; i < H.n; i++)
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s:%u",
		    i ? " " : "", H.h[i].host, H.h[i].port);
	if (strcmp(got, want) != 0)
		fail_msg("%s: hosts '%s', expected '%s'", lockfile_kind_name(k),
		    got, want);
}

/* Parses text (len 0: strlen); it must fail with an error holding want. */
static void
expect_error(enum lockfile_kind k, const char *text, size_t len,
    const char *want)
{
	char	 err[512];

	if (len == 0)
		len = strlen(text);
	memset(&H, 0, sizeof(H));
	if (lockfile_parse(k, text, len, 0, NULL, 0, &H, err,
	    sizeof(err)) != -1)
		fail_msg("%s: no error, expected '%s'", lockfile_kind_name(k),
		    want);
	if (strstr(err, want) == NULL)
		fail_msg("%s: error '%s', expected '%s'", lockfile_kind_name(k),
		    err, want);
}

static const char npm_v3[] =
    "{\n"
    "  \"name\": \"demo\",\n"
    "  \"lockfileVersion\": 3,\n"
    "  \"requires\": true,\n"
    "  \"packages\": {\n"
    "    \"\": { \"name\": \"demo\", \"dependencies\": { \"left-pad\": "
    "\"^1.3.0\" } },\n"
    "    \"node_modules/left-pad\": {\n"
    "      \"version\": \"1.3.0\",\n"
    "      \"resolved\": \"https://registry.example.test/left-pad/-/"
    "left-pad-1.3.0.tgz\",\n"
    "      \"integrity\": \"sha512-abc\"\n"
    "    },\n"
    "    \"node_modules/@s\\/x\": {\n"
    "      \"version\": \"1.0.0\",\n"
    "      \"resolved\": \"https://user:tok@NPM.Pkg.example.test:443/@s/x/"
    "-/x-1.0.0.tgz\",\n"
    "      \"dev\": true, \"optional\": false, \"n\": -1.5e3, \"z\": null\n"
    "    },\n"
    "    \"node_modules/gitdep\": { \"resolved\": "
    "\"git+ssh://git@github.com/a/b.git#abc\" },\n"
    "    \"node_modules/githttps\": { \"resolved\": "
    "\"git+https://github.com/a/c.git#abc\" },\n"
    "    \"node_modules/plain\": { \"resolved\": "
    "\"http://plain.example.test/p.tgz\" },\n"
    "    \"node_modules/ip\": { \"resolved\": \"https://192.0.2.1/p.tgz\" },\n"
    "    \"node_modules/port\": { \"resolved\": "
    "\"https://port.example.test:8443/p.tgz\" },\n"
    "    \"packages/local\": { \"resolved\": \"packages/local\", "
    "\"link\": true },\n"
    "    \"node_modules/notresolved\": { \"version\": "
    "\"https://not-a-source.example.test/\" }\n"
    "  }\n"
    "}\n";

static void
npm_lockfile(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_NPM, npm_v3, 0, NULL, "registry.example.test:443 "
	    "npm.pkg.example.test:443 github.com:443");
	assert_int_equal(H.http, 1);
	assert_int_equal(H.ip, 1);
	assert_int_equal(H.port, 1);
	assert_int_equal(H.other, 2);	/* git+ssh, the link */
	assert_int_equal(H.h[0].line, 9);
	assert_int_equal(H.h[1].line, 14);
	expect_hosts(LOCKFILE_NPM, npm_v3, LOCKFILE_HTTP, NULL,
	    "registry.example.test:443 npm.pkg.example.test:443 "
	    "github.com:443 plain.example.test:80");
	/* v1: "dependencies" nested, the same key */
	expect_hosts(LOCKFILE_NPM, "{\"lockfileVersion\":1,\"dependencies\":{"
	    "\"a\":{\"version\":\"1.0.0\",\"resolved\":\"https://r1.example."
	    "test/a.tgz\",\"dependencies\":{\"b\":{\"resolved\":\"https://r2."
	    "example.test/b.tgz\"}}}}}", 0, NULL,
	    "r1.example.test:443 r2.example.test:443");
}

static void
npm_malformed(void **state)
{
	char	*big;
	size_t	 i;

	(void)state;
	expect_error(LOCKFILE_NPM, "[]", 0, "line 1: not a JSON object");
	expect_error(LOCKFILE_NPM, "", 0, "ends before its JSON object closes");
	expect_error(LOCKFILE_NPM, "{\n\"a\": [1, 2}\n", 0,
	    "line 2: a '}' that closes nothing");
	expect_error(LOCKFILE_NPM, "{\n\"a\": 1\n", 0,
	    "line 3: the file ends before");
	expect_error(LOCKFILE_NPM, "{} {}", 0, "text after the JSON object");
	expect_error(LOCKFILE_NPM, "{\"a\n\": 1}", 0,
	    "line 1: a control byte 0x0a in a string");
	expect_error(LOCKFILE_NPM, "{\"a\": \"\\q\"}", 0, "unknown escape");
	expect_error(LOCKFILE_NPM, "{\"a\": \"\\u12\"}", 0,
	    "\\u wants four hex digits");
	expect_error(LOCKFILE_NPM, "{\n\n\"resolved\": \"https://a b/\"}", 0,
	    "line 3: the host of a URL");
	/* never a wildcard, never a range */
	expect_error(LOCKFILE_NPM, "{\"resolved\": \"https://*.example.test/"
	    "x\"}", 0, "line 1: the host of a URL");
	expect_error(LOCKFILE_NPM, "{\"a\": @}", 0, "unexpected byte 0x40");
	/* nesting */
	big = malloc(LOCKFILE_MAX_LINE * 2 + 16);
	assert_non_null(big);
	big[0] = '{';
	for (i = 1; i <= LOCKFILE_MAX_DEPTH; i++)
		big[i] = '[';
	expect_error(LOCKFILE_NPM, big, i, "nested deeper than 256");
	/* a string over the bound */
	memcpy(big, "{\"a\": \"", 7);
	memset(big + 7, 'x', LOCKFILE_MAX_LINE + 1);
	memcpy(big + 7 + LOCKFILE_MAX_LINE + 1, "\"}", 2);
	expect_error(LOCKFILE_NPM, big, LOCKFILE_MAX_LINE + 10,
	    "the string is longer than 65536 bytes");
	free(big);
}

static void
yarn_lockfiles(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_YARN,
	    "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n"
	    "# yarn lockfile v1\n"
	    "\n"
	    "\n"
	    "\"@babel/code-frame@^7.0.0\", \"@babel/code-frame@^7.22.13\":\n"
	    "  version \"7.22.13\"\n"
	    "  resolved \"https://registry.example.test/@babel/code-frame/-/"
	    "code-frame-7.22.13.tgz#fe0f\"\n"
	    "  integrity sha512-XktuhWlJ5g+3TJXc5upd9Ks1HutSArik6jf2eAjYFyIOf4ej3\n"
	    "  dependencies:\n"
	    "    \"@babel/highlight\" \"^7.22.13\"\n"
	    "\n"
	    "left-pad@^1.3.0:\n"
	    "  version \"1.3.0\"\n"
	    "  resolved \"https://yarn.example.test/left-pad/-/left-pad-1.3.0."
	    "tgz#5b8a\"\n", 0, NULL,
	    "registry.example.test:443 yarn.example.test:443");
	assert_int_equal(H.h[1].line, 14);
	/* berry: registry packages name no host; URL packages do */
	expect_hosts(LOCKFILE_YARN,
	    "# This file is generated by running \"yarn install\" inside your "
	    "project.\n"
	    "# Manual changes might be lost - proceed with caution!\n"
	    "\n"
	    "__metadata:\n"
	    "  version: 8\n"
	    "  cacheKey: 10c0\n"
	    "\n"
	    "\"left-pad@npm:^1.3.0\":\n"
	    "  version: 1.3.0\n"
	    "  resolution: \"left-pad@npm:1.3.0\"\n"
	    "  checksum: 10c0/abc\n"
	    "  languageName: node\n"
	    "  linkType: hard\n"
	    "\n"
	    "\"tar@https://tarballs.example.test/tar-1.0.0.tgz\":\n"
	    "  version: 1.0.0\n"
	    "  resolution: \"tar@https://tarballs.example.test/tar-1.0.0.tgz\"\n"
	    "\n"
	    "\"@scope/x@https://scoped.example.test/x.tgz\":\n"
	    "  resolution: \"@scope/x@https://scoped.example.test/x.tgz\"\n", 0,
	    NULL, "tarballs.example.test:443 scoped.example.test:443");
	assert_true(H.notes & LOCKFILE_NOTE_NOURL);
	expect_error(LOCKFILE_YARN, "# c\nleft-pad@^1.3.0\n  version 1\n", 0,
	    "line 2: a top-level line of yarn.lock ends with ':'");
	expect_error(LOCKFILE_YARN, "a:\n  resolved \"https://x.example.test\n",
	    0, "line 2: a double quote that does not close");
}

static void
pnpm_lockfile(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_PNPM,
	    "lockfileVersion: '9.0'\n"
	    "\n"
	    "settings:\n"
	    "  autoInstallPeers: true\n"
	    "  excludeLinksFromLockfile: false\n"
	    "\n"
	    "packages:\n"
	    "\n"
	    "  left-pad@1.3.0:\n"
	    "    resolution: {integrity: sha512-abc}\n"
	    "\n"
	    "  tar@https://tarballs.example.test/tar-1.0.0.tgz:\n"
	    "    resolution: {tarball: https://tarballs.example.test/tar-1.0.0"
	    ".tgz}\n"
	    "    version: 1.0.0\n"
	    "\n"
	    "  mod@git+https://github.com/a/b.git#abc:\n"
	    "    resolution: {commit: abc, repo: https://github.com/a/b.git, "
	    "type: git}\n"
	    "\n"
	    "  q@1.0.0:\n"
	    "    resolution:\n"
	    "      tarball: 'https://quoted.example.test/q.tgz'\n", 0, NULL,
	    "tarballs.example.test:443 github.com:443 quoted.example.test:443");
	assert_true(H.notes & LOCKFILE_NOTE_NOURL);
	assert_int_equal(H.h[2].line, 21);
	expect_error(LOCKFILE_PNPM, "packages:\n  a: 1\n", 0,
	    "line 1: not a pnpm lockfile");
	expect_error(LOCKFILE_PNPM, "", 0, "not a pnpm lockfile");
}

static const char cargo_lock[] =
    "# This file is automatically @generated by Cargo.\n"
    "# It is not intended for manual editing.\n"
    "version = 3\n"
    "\n"
    "[[package]]\n"
    "name = \"demo\"\n"
    "version = \"0.1.0\"\n"
    "dependencies = [\n"
    " \"libc\",\n"
    " \"mine\",\n"
    " \"tokio\",\n"
    "]\n"
    "\n"
    "[[package]]\n"
    "name = \"libc\"\n"
    "version = \"0.2.150\"\n"
    "source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
    "checksum = \"89d92a4743f9a61002fae18374ed11e7973f530cb3a3255fb354818118"
    "b2203c\"\n"
    "\n"
    "[[package]]\n"
    "name = \"mine\"\n"
    "version = \"0.1.0\"\n"
    "source = \"sparse+https://cargo.example.test/index/\"\n"
    "\n"
    "[[package]]\n"
    "name = \"tokio\"\n"
    "version = \"1.0.0\"\n"
    "source = \"git+https://github.com/tokio-rs/tokio?branch=master#abc\"\n";

static void
cargo_lockfile(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_CARGO, cargo_lock, 0, NULL, "index.crates.io:443 "
	    "static.crates.io:443 cargo.example.test:443 github.com:443");
	assert_true(H.notes & LOCKFILE_NOTE_CRATES);
	assert_true(H.notes & LOCKFILE_NOTE_REGISTRY);
	assert_int_equal(H.h[2].line, 23);
	expect_error(LOCKFILE_CARGO, "[[package]\nname = \"a\"\n", 0,
	    "line 1: a [table] header without its ']'");
	expect_error(LOCKFILE_CARGO, "[[package]]\nsource = \"registry+https"
	    "://x\n", 0, "line 2: a string that does not close");
	expect_error(LOCKFILE_CARGO, "version = 3\n\n[[package]]\n"
	    "dependencies = [\n \"a\",\n", 0,
	    "line 4: an array, table or string opened here does not close");
	expect_error(LOCKFILE_CARGO, "this is not toml\n", 0,
	    "line 1: not a key = value");
}

static void
poetry_lockfile(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_POETRY,
	    "# This file is automatically @generated by Poetry 1.7.1 and "
	    "should not be changed by hand.\n"
	    "\n"
	    "[[package]]\n"
	    "name = \"certifi\"\n"
	    "version = \"2023.11.17\"\n"
	    "description = \"Python package for providing Mozilla's CA Bundle.\"\n"
	    "optional = false\n"
	    "python-versions = \">=3.6\"\n"
	    "files = [\n"
	    "    {file = \"certifi-2023.11.17-py3-none-any.whl\", hash = "
	    "\"sha256:e036\"},\n"
	    "    {file = \"certifi-2023.11.17.tar.gz\", hash = "
	    "\"sha256:9b46\"},\n"
	    "]\n"
	    "\n"
	    "[package.extras]\n"
	    "test = [\"pytest (>=6)\"]\n"
	    "\n"
	    "[[package]]\n"
	    "name = \"internal\"\n"
	    "version = \"1.0\"\n"
	    "description = \"\"\"A long\n"
	    "description [with brackets\n"
	    "\"\"\"\n"
	    "optional = false\n"
	    "python-versions = \"*\"\n"
	    "files = []\n"
	    "\n"
	    "[package.source]\n"
	    "type = \"legacy\"\n"
	    "url = \"https://pypi.example.test/simple\"\n"
	    "reference = \"internal\"\n"
	    "\n"
	    "[metadata]\n"
	    "lock-version = \"2.0\"\n"
	    "python-versions = \"^3.11\"\n"
	    "content-hash = \"abc\"\n", 0, NULL,
	    "pypi.example.test:443 pypi.org:443 files.pythonhosted.org:443");
	assert_true(H.notes & LOCKFILE_NOTE_PYPI);
	/* every package from a named source: no PyPI */
	expect_hosts(LOCKFILE_POETRY,
	    "[[package]]\nname = \"a\"\n\n[package.source]\ntype = \"git\"\n"
	    "url = \"https://git.example.test/a.git\"\n"
	    "resolved_reference = \"abc\"\n\n[[package]]\nname = \"b\"\n\n"
	    "[package.source]\ntype = \"directory\"\nurl = \"../b\"\n", 0, NULL,
	    "git.example.test:443");
	assert_int_equal(H.notes, 0);
	assert_int_equal(H.other, 1);
	expect_error(LOCKFILE_POETRY, "[[package]]\nname = \"a\"\n"
	    "description = \"\"\"open\n", 0,
	    "line 3: an array, table or string opened here");
}

static void
requirements_txt(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_PIPREQ,
	    "#\n"
	    "# This file is autogenerated by pip-compile with Python 3.11\n"
	    "#\n"
	    "--index-url https://pypi.example.test/simple\n"
	    "--extra-index-url=https://extra.example.test/simple\n"
	    "--trusted-host extra.example.test\n"
	    "\n"
	    "certifi==2023.11.17 \\\n"
	    "    --hash=sha256:e036ab49d5b79556f99cfc2d9320b34cfbe5be05c5871b51de9"
	    "329f0603b0474 \\\n"
	    "    --hash=sha256:9b469f3a900bf28dc19b8cfbf8019bf47f7fdd1a65a1d4ffb98"
	    "fc14166beb4d1\n"
	    "    # via requests\n"
	    "mypkg @ https://files.example.test/mypkg-1.0-py3-none-any.whl ; "
	    "python_version >= \"3.8\"\n"
	    "git+https://github.com/a/b.git@v1#egg=b\n"
	    "-e git+https://git.example.test/c/d.git#egg=d\n"
	    "-r other.txt\n"
	    "./local/pkg\n", 0, NULL, "pypi.example.test:443 "
	    "extra.example.test:443 files.example.test:443 github.com:443 "
	    "git.example.test:443");
	assert_true(H.notes & LOCKFILE_NOTE_INCLUDE);
	assert_false(H.notes & LOCKFILE_NOTE_PYPI);
	assert_int_equal(H.h[2].line, 12);
	assert_int_equal(H.other, 1);
	/* names only: pip's default index */
	expect_hosts(LOCKFILE_PIPREQ, "requests==2.31.0\nidna>=3 # comment\n",
	    0, NULL, "pypi.org:443 files.pythonhosted.org:443");
	assert_true(H.notes & LOCKFILE_NOTE_PYPI);
	expect_hosts(LOCKFILE_PIPREQ, "--no-index\n-f ./wheels\nrequests\n", 0,
	    NULL, "");
	/* white space other than " \t" (the fuzzer's find: a read before
	   the line) */
	expect_hosts(LOCKFILE_PIPREQ, "-a\v# c\n--index-url\v https://v."
	    "example.test/\v\n", 0, NULL, "v.example.test:443");
	expect_error(LOCKFILE_PIPREQ, "requests\n--index-url\n", 0,
	    "line 2: --index-url needs a value");
	expect_error(LOCKFILE_PIPREQ, "-i https://user:s3cret@/simple\n", 0,
	    "line 1: a URL without a host");
}

static void
requirements_no_credentials_in_errors(void **state)
{
	char	 err[512];
	const char *t = "-i https://user:s3cret@bad_host!/simple\n";

	(void)state;
	memset(&H, 0, sizeof(H));
	assert_int_equal(lockfile_parse(LOCKFILE_PIPREQ, t, strlen(t), 0, NULL,
	    0, &H, err, sizeof(err)), -1);
	assert_null(strstr(err, "s3cret"));
	assert_non_null(strstr(err, "line 1"));
	t = "-i https://user:s3cret@/simple\n";
	assert_int_equal(lockfile_parse(LOCKFILE_PIPREQ, t, strlen(t), 0, NULL,
	    0, &H, err, sizeof(err)), -1);
	assert_null(strstr(err, "s3cret"));
}

static const char go_sum[] =
    "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5Uw"
    "LGTwt4=\n"
    "github.com/pkg/errors v0.9.1/go.mod h1:bwawxfHBFNV+L2hUp1rHADufV3IMtnD"
    "Rdf1r5NINEl0=\n"
    "golang.org/x/net v0.19.0 h1:zTwKpTd2XuCqf8huc7Fo2iSy+4RHPd10s4KzeTnVr1c=\n"
    "golang.org/x/net v0.19.0/go.mod h1:CfAk/cbD4CthTvqiEl8NpboMuiuOYsAr/7NOj"
    "ZJtv1U=\n";

static void
gosum(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_GOSUM, go_sum, 0, NULL, "proxy.golang.org:443");
	assert_true(H.notes & LOCKFILE_NOTE_GOFALLBACK);
	assert_int_equal(H.h[0].line, 0);
	expect_hosts(LOCKFILE_GOSUM, go_sum, 0,
	    "https://goproxy.example.test|https://proxy2.example.test,direct",
	    "goproxy.example.test:443 proxy2.example.test:443");
	expect_hosts(LOCKFILE_GOSUM, go_sum, 0, "direct",
	    "github.com:443 golang.org:443");
	assert_true(H.notes & LOCKFILE_NOTE_GODIRECT);
	expect_hosts(LOCKFILE_GOSUM, go_sum, 0, "off", "");
	/* a module path on an address: counted, never a host to allow */
	expect_hosts(LOCKFILE_GOSUM, "1.2.3.4/x v1.0.0 h1:abc=\n"
	    "169.254.169.254/y v1.0.0 h1:abc=\ngithub.com/a v1 h1:x=\n", 0,
	    "direct", "github.com:443");
	assert_int_equal(H.ip, 2);
	expect_hosts(LOCKFILE_GOSUM, "", 0, NULL, "");
	expect_error(LOCKFILE_GOSUM, "github.com/a v1 h1:x\nnot a go sum line\n",
	    0, "line 2: not 'MODULE VERSION h1:HASH'");
}

static void
gemfile_lock(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_GEMFILE,
	    "GIT\n"
	    "  remote: https://github.com/rails/rails.git\n"
	    "  revision: 0123456789abcdef\n"
	    "  specs:\n"
	    "    rails (7.1.0)\n"
	    "\n"
	    "PATH\n"
	    "  remote: .\n"
	    "  specs:\n"
	    "    mygem (0.1.0)\n"
	    "\n"
	    "GEM\n"
	    "  remote: https://rubygems.org/\n"
	    "  remote: https://gems.example.test/private/\n"
	    "  specs:\n"
	    "    rake (13.1.0)\n"
	    "\n"
	    "PLATFORMS\n"
	    "  x86_64-linux\n"
	    "\n"
	    "DEPENDENCIES\n"
	    "  rake\n"
	    "\n"
	    "BUNDLED WITH\n"
	    "   2.4.22\n", 0, NULL,
	    "github.com:443 rubygems.org:443 gems.example.test:443");
	assert_int_equal(H.other, 1);
	expect_error(LOCKFILE_GEMFILE, "GEM\n  remote: https://rubygems.org/\n"
	    "gem 'rails'\n", 0, "line 3: not a Gemfile.lock section");
}

static void
tool_configs(void **state)
{
	(void)state;
	expect_hosts(LOCKFILE_NPMRC,
	    "; user config\n"
	    "registry=https://npm.example.test/\n"
	    "@corp:registry = \"https://corp.example.test/npm/\"\n"
	    "//corp.example.test/npm/:_authToken=s3cret\n"
	    "@env:registry=https://${REGISTRY_HOST}/\n"
	    "strict-ssl=true\n", 0, NULL,
	    "npm.example.test:443 corp.example.test:443");
	assert_true(H.notes & LOCKFILE_NOTE_VARIABLE);
	expect_hosts(LOCKFILE_YARNRC,
	    "nodeLinker: node-modules\n"
	    "npmRegistryServer: \"https://yarn.example.test\"\n"
	    "npmScopes:\n"
	    "  corp:\n"
	    "    npmRegistryServer: \"https://corp.example.test\"\n"
	    "    npmAuthToken: \"s3cret\"\n", 0, NULL,
	    "yarn.example.test:443 corp.example.test:443");
	expect_hosts(LOCKFILE_CARGOCFG,
	    "[source.crates-io]\n"
	    "replace-with = \"mirror\"\n"
	    "\n"
	    "[source.mirror]\n"
	    "registry = \"sparse+https://mirror.example.test/index/\"\n"
	    "\n"
	    "[registries.corp]\n"
	    "index = \"https://git.example.test/corp-index\"\n"
	    "\n"
	    "[net]\n"
	    "git-fetch-with-cli = true\n"
	    "[build]\n"
	    "rustflags = [\"-C\", \"target-cpu=native\"]\n", 0, NULL,
	    "mirror.example.test:443 git.example.test:443");
	expect_hosts(LOCKFILE_GITCONFIG,
	    "[user]\n"
	    "\tname = A User\n"
	    "[url \"https://mirror.example.test/github/\"]\n"
	    "\tinsteadOf = https://github.com/\n"
	    "\tinsteadOf = git://github.com/\n"
	    "[url \"git@github.com:\"]\n"
	    "\tpushInsteadOf = https://github.com/\n"
	    "[url \"https://unused.example.test/\"]\n", 0, NULL,
	    "mirror.example.test:443");
	assert_int_equal(H.other, 1);
	expect_error(LOCKFILE_GITCONFIG, "[url \"https://x.example.test/\"\n",
	    0, "line 1: a [section] without its ']'");
}

static void
bounds(void **state)
{
	char	*big, name[64];
	size_t	 i, o;

	(void)state;
	big = calloc(1, LOCKFILE_MAX_SIZE + 2);
	assert_non_null(big);
	/* a line over the bound, in every line-based format */
	memset(big, 'a', LOCKFILE_MAX_LINE + 1);
	expect_error(LOCKFILE_YARN, big, LOCKFILE_MAX_LINE + 1,
	    "line 1: longer than 65536 bytes");
	expect_error(LOCKFILE_CARGO, big, LOCKFILE_MAX_LINE + 1,
	    "line 1: longer than 65536 bytes");
	expect_error(LOCKFILE_GOSUM, big, LOCKFILE_MAX_LINE + 1,
	    "line 1: longer than 65536 bytes");
	/* a NUL byte: not a text file */
	expect_error(LOCKFILE_GEMFILE, "GEM\n  remote: x\0y\n", 17,
	    "line 2: a NUL byte");
	/* the file bound */
	memset(big, ' ', LOCKFILE_MAX_SIZE + 1);
	expect_error(LOCKFILE_NPM, big, LOCKFILE_MAX_SIZE + 1,
	    "larger than 33554432 bytes");
	/* the host bound: one error, not a policy of 256 hosts */
	for (i = 0, o = 0; i <= LOCKFILE_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "--extra-index-url https://h%zu."
		    "example.test/\n", i);
		memcpy(big + o, name, strlen(name));
		o += strlen(name);
	}
	expect_error(LOCKFILE_PIPREQ, big, o, "line 257: more than 256 hosts");
	/* requirements: a joined line over the bound */
	o = 0;
	for (i = 0; i < 4; i++) {
		memset(big + o, 'a', 20000);
		o += 20000;
		memcpy(big + o, "\\\n", 2);
		o += 2;
	}
	expect_error(LOCKFILE_PIPREQ, big, o, "joined by '\\' longer than");
	free(big);
}

static void
kinds(void **state)
{
	(void)state;
	assert_int_equal(lockfile_kind_of("/a/package-lock.json"), LOCKFILE_NPM);
	assert_int_equal(lockfile_kind_of("npm-shrinkwrap.json"), LOCKFILE_NPM);
	assert_int_equal(lockfile_kind_of("x/yarn.lock"), LOCKFILE_YARN);
	assert_int_equal(lockfile_kind_of("pnpm-lock.yaml"), LOCKFILE_PNPM);
	assert_int_equal(lockfile_kind_of("Cargo.lock"), LOCKFILE_CARGO);
	assert_int_equal(lockfile_kind_of("poetry.lock"), LOCKFILE_POETRY);
	assert_int_equal(lockfile_kind_of("requirements-dev.txt"),
	    LOCKFILE_PIPREQ);
	assert_int_equal(lockfile_kind_of("go.sum"), LOCKFILE_GOSUM);
	assert_int_equal(lockfile_kind_of("Gemfile.lock"), LOCKFILE_GEMFILE);
	assert_int_equal(lockfile_kind_of(".npmrc"), LOCKFILE_NPMRC);
	assert_int_equal(lockfile_kind_of("package.json"), -1);
	assert_int_equal(lockfile_kind_of("requirements"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(npm_lockfile),
		cmocka_unit_test(npm_malformed),
		cmocka_unit_test(yarn_lockfiles),
		cmocka_unit_test(pnpm_lockfile),
		cmocka_unit_test(cargo_lockfile),
		cmocka_unit_test(poetry_lockfile),
		cmocka_unit_test(requirements_txt),
		cmocka_unit_test(requirements_no_credentials_in_errors),
		cmocka_unit_test(gosum),
		cmocka_unit_test(gemfile_lock),
		cmocka_unit_test(tool_configs),
		cmocka_unit_test(bounds),
		cmocka_unit_test(kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
