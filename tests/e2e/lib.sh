# tests/e2e/lib.sh: the start and the end every podman end-to-end test
# shares.  A test opens with
#
#   set -euo pipefail
#   . "$(dirname "$0")/lib.sh"
#   e2e_start NAME [TOOL...]
#
# Sourcing sets PY (PYTHON, else python3; unless the test set it).
# e2e_start sets top_srcdir and top_builddir (unless make set them),
# build (the build folder, absolute), aisb and here (tests/integration);
# skips the test (77, saying why) unless it runs as root with AISB_E2E=1
# and podman and every TOOL are on PATH; then calls e2e_init NAME.  A
# test's own SKIP checks follow it (the EXIT trap keeps 77).  (image.sh,
# which asks for a base it cannot pull on purpose, opens with lines of its
# own: it says why.)
#
#   e2e_init NAME
#
# makes $tmp (also TMPDIR: whatever podman and aisb make goes
# there), a podman store of the test's own (CONTAINERS_STORAGE_CONF), the
# XDG cache, state and config folders under $tmp, $tmp/ws, pids=(),
# pass=0 fail=0, and the EXIT trap.  No test asks a registry: sessions
# name the offline base (AISB_IMAGE=offline, as_user's too; a test of
# another base names it), and podman on PATH is a wrapper that refuses
# every pull and notes it, which fails the test at its end.  The trap runs the test's own
# e2e_cleanup_more first when it defines one (named gates down, a user
# removed), kills and reaps "${pids[@]}", removes every container, volume
# and image of the store (the test's alone), unmounts what is left under
# $tmp, shows the last output ($tmp/out, $tmp/err) of a failed run, and
# removes $tmp, keeping the test's exit status.  Failure or not, nothing
# of the test stays.
#
#   e2e_seed_base
#   e2e_seed_image [PACKAGE...]
#
# (after e2e_init, in tests that do not test the image build itself): with
# AISB_E2E_SEED, a folder tests/run.sh makes for one run, e2e_seed_base
# loads the offline base into the test's store: the first test to ask
# builds it (with the plain image, aisb image build) under a lock and
# saves it there at once, the others wait for that and load it, so that
# mmdebstrap runs once a run, not once a test.  e2e_seed_image does the
# same for the image of a package set (the --package set of the test's
# sessions; none: the plain image), which several tests use (curl in
# six), saved with its base: each set is built once a run.  Tags are the hash
# of everything that shapes an image (launcher/image/), so aisb uses a
# loaded base or image only where it is the one it would build, and
# builds anything else as it would without a seed; a seed build that
# fails is left to the test's own first session to show.
#
#   e2e_user [--bare] NAME
#   e2e_user_pick USER
#
# (after the root sessions that built the images it needs): an ordinary
# user NAME<pid> for rootless sessions, its subordinate ids from useradd,
# /dev/net/tun opened to it (slirp4netns opens it as the user), an
# overlay store (a new user's is vfs here: seconds a container), aisb's
# binaries in its ~/bin, and the aisb images of the test's store handed
# over (podman save and load keep the ids the tags hash: nothing is
# rebuilt).  --bare: the store as podman makes it for a new user, and
# empty (no storage.conf, no image), for tests of that store.  Sets
# e2e_user_name, e2e_uid and e2e_home; as_user CMD... runs CMD as that
# user in a clean environment.  A test may make several: the last made
# is the one as_user runs as, until e2e_user_pick names another
# (e2e_user_name of its own).  The EXIT trap removes them all, their
# processes and their stores.
#
#   ok [MSG]  bad MSG  check MSG GOT WANT     count into $pass and $fail
#   wait_file FILE [TENTHS]     FILE not empty within TENTHS (100) tenths
#                               of a second, else FAIL and status 1
#   e2e_port NAME [TENTHS]      the port in $tmp/NAME.port, once it is
#                               there (wait_file); fails as wait_file does
#
#   e2e_servers [-t TENTHS] NAME...
#
# The host-side servers most tests talk to, each on 127.0.0.1 port 0, in
# pids, its port in $tmp/NAME.port and its log in $tmp/NAME.log; all
# started, then each waited for (wait_file, TENTHS: 100 unless given; a
# FAIL line and status 1 for one that never came up), then its port set
# in the test's variable:
#   dns   tests/integration/gate_dns.py answering from $tmp/zone.json
#         (the test writes it first): $dns
#   http  gate_upstream.py http: $http
#   echo  gate_upstream.py echo: $echo_port
#   udp   a UDP sink, a line "got N bytes" in its log a datagram: $udp
#
#   e2e_serve_dir DIR NAME
#
# A plain HTTP server of DIR's files on 127.0.0.1 port 0 (an apt
# repository, a pip index), in pids, its port in $tmp/NAME.port (e2e_port
# NAME), a line a request in $tmp/NAME.log.
#
#   sd=$(e2e_session [STATE])
#   e2e_sessions [STATE]
#   e2e_session_mark [STATE]
#
# The session a test looks into is the one it just ran, never "the newest
# folder listed": e2e_session prints the folder of the one session made
# under STATE (default $XDG_STATE_HOME) since the test last asked, and
# fails, naming what it found, when there is none or more than one (a
# session that made no folder, a session run in between that the test did
# not ask about).  e2e_sessions prints every session made since then, one
# a line; e2e_session_mark just takes note of them (sessions a test runs
# and does not look into).  What was seen is kept in $tmp, so the calls
# work from $(...).
#
#   e2e_images_of SESSION_DIR...
#
# The images those sessions ran and their bases, from their records, one
# a line (a folder without a record ran none); fails when there is none.
# What a test hands over to another store is what its sessions used, not
# whichever image a listing shows first.
#
# Sourcing this file also sources tests/errtrap.sh: a test that dies of a
# failing command says which, and where, before the EXIT trap.
#
#   e2e_tls_cert DIR CN [NAME...]
#
# DIR/ca.crt (a CA of the test's own, key ca.key) and DIR/srv.crt, srv.key
# for CN and the NAMEs, signed by it, valid 2 days.
#
# shellcheck shell=bash

# shellcheck source=tests/errtrap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../errtrap.sh"

PY=${PY:-${PYTHON:-python3}}

e2e_start() {
	local name=$1 t

	shift
	top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
	top_builddir=${top_builddir:-.}
	build=$(cd "$top_builddir" && pwd)
	aisb=$build/aisb
	# shellcheck disable=SC2034	# here: for the tests
	here=$top_srcdir/tests/integration
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rootful podman)"; exit 77; }
	[ -n "${AISB_E2E:-}" ] ||
	    { echo "SKIP: set AISB_E2E=1 (tests/run.sh does, once)"; exit 77; }
	for t in podman "$@"; do
		command -v "$t" >/dev/null || { echo "SKIP: $t not found"; exit 77; }
	done
	e2e_init "$name"
}

# wait_file FILE [TENTHS]: FILE not empty within TENTHS tenths of a
# second (default 100), else a FAIL line and 1
wait_file() {
	for _ in $(seq "${2:-100}"); do [ -s "$1" ] && return 0; sleep 0.1; done
	echo "FAIL: $1 never appeared" >&2
	return 1
}

# e2e_port NAME [TENTHS]: the port in $tmp/NAME.port, once it is there.
# One a line: in `a=$(e2e_port x) b=$(e2e_port y)` set -e sees y alone.
e2e_port() {
	wait_file "$tmp/$1.port" "${2:-100}" || return 1
	cat "$tmp/$1.port"
}

# e2e_servers NAME...: see above
e2e_servers() {
	local s tenths=100

	[ "$1" != -t ] || { tenths=$2; shift 2; }
	for s; do
		case $s in
		dns)	"$PY" "$here/gate_dns.py" --zone "$tmp/zone.json" \
			    --port-file "$tmp/dns.port" --log "$tmp/dns.log" & ;;
		http|echo)
			"$PY" "$here/gate_upstream.py" "$s" --bind 127.0.0.1 \
			    --port-file "$tmp/$s.port" --log "$tmp/$s.log" & ;;
		udp)	"$PY" - "$tmp/udp.port" "$tmp/udp.log" <<-'EOF' &
			import os, socket, sys
			s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
			s.bind(("127.0.0.1", 0))
			open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
			os.rename(sys.argv[1] + ".tmp", sys.argv[1])
			while True:
			    d, a = s.recvfrom(2048)
			    with open(sys.argv[2], "a") as f:
			        f.write("got %d bytes\n" % len(d))
			EOF
			;;
		*)	echo "e2e_servers: no server '$s'" >&2
			return 1 ;;
		esac
		pids+=($!)
	done
	for s; do
		wait_file "$tmp/$s.port" "$tenths" || return 1
		# shellcheck disable=SC2034	# for the tests
		case $s in
		dns)	dns=$(cat "$tmp/dns.port") ;;
		http)	http=$(cat "$tmp/http.port") ;;
		echo)	echo_port=$(cat "$tmp/echo.port") ;;
		udp)	udp=$(cat "$tmp/udp.port") ;;
		esac
	done
}

# e2e_serve_dir DIR NAME: see above
e2e_serve_dir() {
	"$PY" - "$1" "$tmp/$2.port" "$tmp/$2.log" <<-'EOF' &
	import functools, http.server, os, sys
	class H(http.server.SimpleHTTPRequestHandler):
	    def log_message(self, fmt, *a):
	        with open(sys.argv[3], "a") as f:
	            f.write("%s\n" % (fmt % a))
	s = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
	    functools.partial(H, directory=sys.argv[1]))
	open(sys.argv[2] + ".tmp", "w").write("%d\n" % s.server_address[1])
	os.rename(sys.argv[2] + ".tmp", sys.argv[2])
	s.serve_forever()
	EOF
	pids+=($!)
}

e2e_init() {
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/aisb-e2e-$1.XXXXXX")
	export TMPDIR=$tmp
	printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' \
	    "$tmp" "$tmp" >"$tmp/storage.conf"
	export CONTAINERS_STORAGE_CONF=$tmp/storage.conf
	export XDG_CACHE_HOME=$tmp/cache XDG_STATE_HOME=$tmp/state
	export XDG_CONFIG_HOME=$tmp/config
	mkdir -p "$XDG_CONFIG_HOME" "$tmp/ws"
	export AISB_IMAGE=offline
	e2e_podman=$(command -v podman || true)
	# a folder of its own: tests put their own tools in $tmp/bin (one
	# wraps podman in turn, and there it would exec itself forever)
	e2e_podman_wrapper "$tmp/podman-wrap" "$tmp/pulls"
	export PATH=$tmp/podman-wrap:$PATH
	pids=()
	pass=0 fail=0
	trap e2e_cleanup EXIT
}

# e2e_podman_wrapper DIR LOG: DIR/podman runs the real one, but for a
# pull (podman pull, podman image pull), which it refuses (125, podman's
# own error status) after a line in LOG.
e2e_podman_wrapper() {
	local real=${e2e_podman:-}

	[ -n "$real" ] || return 0
	mkdir -p "$1"
	cat >"$1/podman" <<-EOF
	#!/bin/sh
	case "\$1 \${2:-}" in
	"pull "*|"image pull")
		printf '%s\\n' "podman \$*" >>'$2'
		echo "podman: a test asked a registry (podman \$*)" >&2
		exit 125 ;;
	esac
	exec '$real' "\$@"
	EOF
	chmod 0755 "$1/podman"
}

# The pulls the wrappers refused fail the test, whatever it said.
e2e_pulls_check() {
	[ -s "$tmp/pulls" ] || return 0
	echo "not ok - the test asked a registry: $(head -n 1 "$tmp/pulls")" \
	    "(sessions name the offline base: AISB_IMAGE=offline)"
	return 1
}

# /dev/net/tun opened to every user (slirp4netns opens it as the rootless
# user) while any e2e test needs it.  Tests run two at a time: each holds
# a shared flock on E2E_TUN_LOCK from e2e_tun_open to its cleanup, and
# the last one out puts back the mode the first one in saw; both steps
# under E2E_TUN_SAVE_LOCK, so that one test's restore never lands between
# another's chmod and its lock.  (Before, each test restored the mode it
# had seen: one test ending broke another's rootless sessions.)
E2E_TUN_LOCK=/run/aisb-e2e-tun.lock
E2E_TUN_SAVE_LOCK=/run/aisb-e2e-tun.save.lock
E2E_TUN_SAVED=/run/aisb-e2e-tun.mode
e2e_tun_fd=
e2e_tun_open() {
	local s
	[ -z "$e2e_tun_fd" ] || return 0
	exec {s}>>"$E2E_TUN_SAVE_LOCK"
	flock -x "$s"
	[ -s "$E2E_TUN_SAVED" ] || stat -c %a /dev/net/tun >"$E2E_TUN_SAVED"
	chmod 0666 /dev/net/tun
	exec {e2e_tun_fd}>>"$E2E_TUN_LOCK"
	flock -s "$e2e_tun_fd"
	exec {s}>&-
}
e2e_tun_close() {
	local s
	[ -n "$e2e_tun_fd" ] || return 0
	exec {s}>>"$E2E_TUN_SAVE_LOCK"
	flock -x "$s"
	flock -u "$e2e_tun_fd"
	if flock -x -n "$e2e_tun_fd"; then
		[ -s "$E2E_TUN_SAVED" ] &&
		    chmod "$(cat "$E2E_TUN_SAVED")" /dev/net/tun 2>/dev/null
		rm -f "$E2E_TUN_SAVED"
	fi
	exec {e2e_tun_fd}>&-
	e2e_tun_fd=
	exec {s}>&-
}

e2e_cleanup() {
	local rc=$? p m

	if declare -F e2e_cleanup_more >/dev/null; then
		e2e_cleanup_more || true
	fi
	e2e_user_remove || true
	e2e_tun_close || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	podman rm -af -t 0 >/dev/null 2>&1 || true
	[ -z "${e2e_seed:-}" ] || e2e_seed_save || true
	podman volume rm -af >/dev/null 2>&1 || true
	podman rmi -af >/dev/null 2>&1 || true
	e2e_pulls_check || case $rc in 0|77) rc=1 ;; esac
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v p="$tmp/" 'index($2, p) == 1 { print $2 }' \
	    /proc/self/mounts | sort -r)
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "--- last output" >&2
		cat "$tmp/out" "$tmp/err" >&2 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}

e2e_sessions() {
	local d=${1:-$XDG_STATE_HOME}/aisb/sessions seen=$tmp/e2e-sessions.seen s

	touch "$seen"
	[ -d "$d" ] || return 0
	for s in "$d"/*; do
		[ -d "$s" ] && ! grep -qxF -- "$s" "$seen" || continue
		printf '%s\n' "$s" | tee -a "$seen"
	done
}
e2e_session_mark() { e2e_sessions "$@" >/dev/null; }
e2e_session() {
	local new

	new=$(e2e_sessions "$@")
	case $new in
	'') echo "e2e_session: no session since the last one under ${1:-$XDG_STATE_HOME}" >&2
	    return 1 ;;
	*$'\n'*) echo "e2e_session: $(wc -l <<<"$new") sessions since the last one, want one: $(paste -sd ' ' <<<"$new")" >&2
	    return 1 ;;
	esac
	printf '%s\n' "$new"
}
e2e_images_of() {
	local d

	for d; do
		[ ! -e "$d/record" ] || e2e_record_field '\(image\|base\)' "$d/record"
	done | grep -vx -- - | sort -u
}
# e2e_record_field NAME RECORD: the values of NAME (a sed pattern) in what
# RECORD says of its session; the options it ends with (the upstream
# --image, say) are not the session's
e2e_record_field() { sed -n "/^# options/q; s/^$1 //p" "$2"; }

e2e_tls_cert() {
	local d=$1 cn=$2 san="" n
	shift 2
	for n in "$cn" "$@"; do san="$san${san:+,}DNS:$n"; done
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
	    -subj "/CN=aisb e2e test CA $$" -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" \
	    -keyout "$d/srv.key" -out "$d/srv.csr" 2>/dev/null
	printf 'subjectAltName=%s\n' "$san" >"$d/srv.ext"
	openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
	    -CAcreateserial -days 2 -extfile "$d/srv.ext" -out "$d/srv.crt" 2>/dev/null
}

ok()  { pass=$((pass + 1)); [ $# -eq 0 ] || echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }

e2e_seed_base() {
	e2e_seed=${AISB_E2E_SEED:-}
	if [ -z "$e2e_seed" ] || [ ! -d "$e2e_seed" ]; then
		e2e_seed=
		return 0
	fi
	# the first test builds it, with the plain image (image.tar)
	[ -s "$e2e_seed/base.tar" ] ||
	    e2e_seed_build "$e2e_seed/image.tar" 9>"$e2e_seed/image.tar.lock" || true
	if [ -s "$e2e_seed/base.tar" ] && [ -z "${e2e_seed_built:-}" ]; then
		podman load -q -i "$e2e_seed/base.tar" >/dev/null 2>&1 || true
	fi
}

e2e_seed_image() {
	local f key

	e2e_seed=${AISB_E2E_SEED:-}
	if [ -z "$e2e_seed" ] || [ ! -d "$e2e_seed" ]; then
		e2e_seed=
		return 0
	fi
	# image.tar (no package), image-curl.tar, image-curl+git.tar
	[ $# = 0 ] || key=-$(printf '%s\n' "$@" | sort -u | paste -sd+)
	f=$e2e_seed/image${key:-}.tar
	if [ ! -s "$f" ]; then
		e2e_seed_base
		e2e_seed_build "$f" "$@" 9>"$f.lock" || true
	fi
	# (its base is in it)
	if [ -s "$f" ] && [ "$f" != "${e2e_seed_built:-}" ]; then
		podman load -q -i "$f" >/dev/null 2>&1 || true
	fi
}

# e2e_seed_build FILE PACKAGE... (fd 9 open on FILE.lock): the image of
# the package set (and the base, when the store has none) built in this
# test's store and saved with its base into FILE, the base alone into
# base.tar, unless a test that held the lock before did that already.
# The lock is not passed on: nothing the build starts may keep it.
e2e_seed_build() {
	local f=$1 p tag base args=()

	flock 9
	[ -s "$f" ] && return 0
	shift
	for p; do args+=(--package "$p"); done
	tag=$("${aisb:?}" image build "${args[@]}" </dev/null 2>/dev/null 9>&- |
	    tail -n 1) || return 0
	base=$(podman image inspect --format '{{index .Labels "io.aisb.base"}}' \
	    "$tag" 2>/dev/null 9>&-) || return 0
	podman save -q -m -o "$f.$$" "$base" "$tag" >/dev/null 2>&1 9>&- &&
	    mv "$f.$$" "$f" && e2e_seed_built=$f
	rm -f "$f.$$"
	e2e_seed_save "$base" 9>&-
}

# e2e_seed_save [BASE]: the offline base into the seed folder, once
# (flock: tests run two at a time).  BASE, or else the one base the
# test's own sessions ran on (their records say which); a store that
# holds other bases as well gives nothing else away.
e2e_seed_save() {
	local img=${1:-} kind d

	[ -s "$e2e_seed/base.tar" ] && return 0
	if [ -z "$img" ]; then
		img=$(for d in "$XDG_STATE_HOME"/aisb/sessions/*/record; do
			[ ! -e "$d" ] || e2e_record_field base "$d"
		done | sort -u) || return 0
		case $img in -|*$'\n'*) return 0 ;; esac
	fi
	[ -n "$img" ] || return 0
	kind=$(podman image inspect --format '{{index .Labels "io.aisb.kind"}}' \
	    "$img" 2>/dev/null) || return 0
	[ "$kind" = base ] || return 0
	(
		flock 9
		[ -s "$e2e_seed/base.tar" ] && exit 0
		podman save -q -o "$e2e_seed/base.tar.$$" "$img" >/dev/null 2>&1 &&
		    mv "$e2e_seed/base.tar.$$" "$e2e_seed/base.tar"
	) 9>"$e2e_seed/lock"
	rm -f "$e2e_seed/base.tar.$$"
}

e2e_user_name='' e2e_uid='' e2e_home='' e2e_users=()
e2e_user() {
	local bare='' bin tags

	[ "$1" != --bare ] || { bare=1; shift; }
	bin=$(dirname "${aisb:?}")
	e2e_user_name=$1$$
	# other suites add and remove users alongside: /etc/passwd may be locked
	for _ in $(seq 40); do
		useradd -m -s /bin/bash "$e2e_user_name" 2>"$tmp/useradd.err" && break
		grep -q 'cannot lock' "$tmp/useradd.err" || {
			cat "$tmp/useradd.err" >&2; return 1; }
		sleep 0.5
	done
	e2e_users+=("$e2e_user_name")
	e2e_user_pick "$e2e_user_name"
	e2e_tun_open
	install -d -m 0755 -o "$e2e_user_name" -g "$e2e_user_name" "$e2e_home/bin"
	install -m 0755 "$bin/aisb" "$bin/aisb-gate" "$bin/aisb-enforce" \
	    "$e2e_home/bin/"
	install -m 0644 "$bin/aisb-seccomp.json" "$bin/aisb-default-policy.yaml" \
	    "$e2e_home/bin/"
	e2e_podman_wrapper "$e2e_home/bin" "$e2e_home/pulls"
	[ -z "$bare" ] || return 0
	install -d -m 0755 -o "$e2e_user_name" -g "$e2e_user_name" \
	    "$e2e_home/.config" "$e2e_home/.config/containers"
	printf '[storage]\ndriver = "overlay"\n' \
	    >"$e2e_home/.config/containers/storage.conf"
	chown "$e2e_user_name:" "$e2e_home/.config/containers/storage.conf"
	mapfile -t tags < <(podman images --filter label=io.aisb.managed=1 \
	    --format '{{.Repository}}:{{.Tag}}')
	[ "${#tags[@]}" -gt 0 ] || return 0
	podman save -q -m -o "$e2e_home/img.tar" "${tags[@]}"
	chown "$e2e_user_name" "$e2e_home/img.tar"
	as_user podman load -q -i "$e2e_home/img.tar" >/dev/null
	rm -f "$e2e_home/img.tar"
}
e2e_user_pick() {
	e2e_user_name=$1
	# shellcheck disable=SC2034	# e2e_uid: for the tests
	e2e_uid=$(id -u "$1")
	e2e_home=$(getent passwd "$1" | cut -d: -f6)
}

as_user() {
	runuser -u "$e2e_user_name" -- env -i HOME="$e2e_home" \
	    USER="$e2e_user_name" LOGNAME="$e2e_user_name" AISB_IMAGE=offline \
	    PATH="$e2e_home/bin:/usr/local/bin:/usr/bin:/bin" "$@"
}

# The users e2e_user made: their processes, rootless stores and homes.
e2e_user_remove() {
	local u uid home

	for u in "${e2e_users[@]}"; do
		uid=$(id -u "$u" 2>/dev/null) || continue
		home=$(getent passwd "$u" | cut -d: -f6)
		# the user's refused pulls (e2e_podman_wrapper) are the test's
		cat "$home/pulls" >>"$tmp/pulls" 2>/dev/null || true
		# userdel fails while another suite holds /etc/passwd's lock
		# (they add and remove users alongside) or while a process of
		# the user is still ending: again, bounded; said if it stays
		for _ in $(seq 40); do
			pkill -KILL -u "$uid" 2>/dev/null || true
			sleep 0.5
			userdel -r "$u" >/dev/null 2>&1 || true
			id -u "$u" >/dev/null 2>&1 || break
		done
		if id -u "$u" >/dev/null 2>&1; then
			echo "e2e: user $u could not be removed (userdel)" >&2
		else
			case $home in /home/?*) rm -rf "$home" ;; esac
		fi
		rm -rf "/tmp/podman-run-$uid" "/tmp/containers-user-$uid" \
		    "/tmp/run-$uid" 2>/dev/null
	done
	e2e_users=()
}
