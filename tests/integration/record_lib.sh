# Reading a session's or a gate's capture back with tshark, for the tests
# of --record: tests/integration/gate_record.sh and tests/e2e/record.sh.
# Sourced, not run; the caller has $tmp, $PY, and ok and bad (which count).
#
# tshark_r FILE [ARGS...]: tshark -n -r FILE ARGS on stdout; its stderr in
# $tmp/tshark.err, without the notice it gives whenever it runs as root
# (which is not a warning about the file).
#
# follow FILE STREAM OUT: the bytes of both directions of a TCP stream,
# from tshark's "follow,tcp,raw", into OUT.0 (client to destination) and
# OUT.1.
#
# same WHAT FILE1 FILE2: ok when the files are identical and not empty,
# else bad naming both sizes.
# shellcheck shell=bash

tshark_r() {
	local f=$1
	shift
	tshark -n -r "$f" "$@" 2>"$tmp/tshark.err.raw"
	grep -v -e '^Running as user "root" and group "root". This could be dangerous.$' \
	    "$tmp/tshark.err.raw" >"$tmp/tshark.err" || true
}

follow() {
	tshark_r "$1" -q -z "follow,tcp,raw,$2" >"$3.follow"
	"$PY" - "$3" <<'PY'
import binascii, sys
out = sys.argv[1]
data = [bytearray(), bytearray()]
body = False
for line in open(out + ".follow"):
    line = line.rstrip("\n")
    if line.startswith("Node 1:"):
        body = True
        continue
    if not body or not line or line.startswith("="):
        continue
    side = 1 if line.startswith("\t") else 0
    data[side] += binascii.unhexlify(line.strip())
for i in (0, 1):
    open("%s.%d" % (out, i), "wb").write(data[i])
PY
}

same() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then ok; else
		bad "$1: $2 ($(stat -c %s "$2" 2>/dev/null) bytes) and $3 ($(stat -c %s "$3" 2>/dev/null) bytes) differ"
	fi
}
