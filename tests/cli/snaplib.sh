# What the snapshot tests that run tests/cli/snapdraft share (sourced by
# snapshot_draft.sh, snapshot_conf.sh, snapshot_policy.sh): the programs,
# a temporary HOME, XDG folders and workspace ($ws, the current folder),
# the counters (tests/cli/lib.sh), and session FLAGS... -- COMMAND, which
# runs one session as aisb does ($id its id, $rc, $tmp/out, $tmp/err).
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

. "$(dirname "$0")/lib.sh"
build=$(cd "$top_builddir" && pwd)
snapdraft=$build/tests/cli/snapdraft
command -v flock >/dev/null || { echo "SKIP: flock not found"; exit 77; }
mkdir -p "$tmp/home/.config/aisb"
sessions=$XDG_STATE_HOME/aisb/sessions
mkdir -p "$sessions"
ws=$(cd "$tmp/ws" && pwd -P)
cd "$ws"

said() { if grep -q -- "$2" "$tmp/err"; then ok; else bad "$1: $(cat "$tmp/err")"; fi; }
n=0 id=
session() {
	n=$((n + 1))
	id=$(printf '%024x' "$n")
	run "$snapdraft" "$sessions/$id" "$@"
}
