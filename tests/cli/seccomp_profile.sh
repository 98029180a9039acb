#!/bin/bash
# aisb's seccomp profile as a file (docs/seccomp.md), and the launcher's
# refusal to run without it.  No podman here: tests/e2e/seccomp.sh runs
# sessions under the profile.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "SKIP: $PY not found"; exit 77; }
profile=$top_srcdir/contrib/seccomp.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# The file: each line of the checker's output is one verdict.
"$PY" - "$profile" >"$tmp/out" 2>&1 <<'PYEOF' || bad "checker failed: $(cat "$tmp/out")"
import json, sys

p = json.load(open(sys.argv[1]))
def say(ok, what):
    print(("ok " if ok else "FAIL ") + what)

say(p.get("defaultAction") == "SCMP_ACT_ERRNO" and p.get("defaultErrnoRet") == 1,
    "deny by default with EPERM")
say(sorted(a["architecture"] for a in p["archMap"]) ==
    ["SCMP_ARCH_AARCH64", "SCMP_ARCH_X86_64"] and
    all(a.get("subArchitectures") == [] for a in p["archMap"]),
    "x86_64 and aarch64, native ABI only")
allow, deny, filtered = set(), {}, set()
for s in p["syscalls"]:
    for n in s["names"]:
        if s["action"] == "SCMP_ACT_ALLOW" and not s.get("args"):
            say(n not in allow, "%s listed once" % n)
            allow.add(n)
        elif s["action"] == "SCMP_ACT_ALLOW":
            filtered.add(n)
        else:
            say(s["action"] == "SCMP_ACT_ERRNO", "%s: ERRNO" % n)
            deny[n] = s.get("errnoRet")
say(not (allow & set(deny)) and not (filtered & set(deny)) and
    not (allow & filtered), "no call both allowed and denied")
for n in ("keyctl", "add_key", "request_key", "unshare", "setns", "bpf",
          "perf_event_open", "userfaultfd", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "kexec_load",
          "kexec_file_load", "open_by_handle_at"):
    say(deny.get(n) == 1, "%s denied with EPERM" % n)
say(deny.get("clone3") == 38, "clone3 answered ENOSYS")
for n in ("mount", "umount2", "pivot_root", "fsopen", "open_tree",
          "move_mount", "reboot", "syslog", "vmsplice"):
    say(n not in allow and n not in filtered, "%s not allowed" % n)
# what the enforcer and ordinary work need
for n in ("setresuid", "setresgid", "setgroups", "capset", "capget",
          "prctl", "fork", "execve", "bind", "sendmsg", "recvmsg",
          "signalfd4", "kill", "wait4", "ptrace", "futex", "rseq"):
    say(n in allow or n in filtered, "%s allowed" % n)
# clone: allowed only with no CLONE_NEW* flag, tested on argument 0
NEW = {"NS": 0x00020000, "CGROUP": 0x02000000, "UTS": 0x04000000,
       "IPC": 0x08000000, "USER": 0x10000000, "PID": 0x20000000,
       "NET": 0x40000000}
mask = 0
for v in NEW.values():
    mask |= v
cl = [s for s in p["syscalls"] if "clone" in s["names"]]
say(len(cl) == 1 and cl[0]["action"] == "SCMP_ACT_ALLOW" and
    cl[0]["args"] == [{"index": 0, "value": mask, "valueTwo": 0,
                       "op": "SCMP_CMP_MASKED_EQ"}],
    "clone allowed only with (flags & 0x%x) == 0" % mask)
PYEOF
while read -r verdict what; do
	if [ "$verdict" = ok ]; then ok; else bad "profile: $what"; fi
done <"$tmp/out"
[ "$pass" -gt 40 ] || bad "the checker said too little: $(cat "$tmp/out")"

# The launcher: the build tree's copy is the file, and it is what a
# session is given; without it nothing runs (exit 77, the places named).
aisb=$(cd "$top_builddir" && pwd)/aisb
if cmp -s "$profile" "$top_builddir/aisb-seccomp.json"; then ok; else
	bad "aisb-seccomp.json next to aisb is not contrib/seccomp.json"; fi
printf 'version: 1\nallow:\n  - host: example.test\n' >"$tmp/p.yaml"
rc=0; "$aisb" --policy "$tmp/p.yaml" --dry-run -- true >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q -- "--security-opt=seccomp=$top_builddir/aisb-seccomp.json\|--security-opt=seccomp=$(cd "$top_builddir" && pwd)/aisb-seccomp.json" "$tmp/out"; then
	ok; else bad "dry-run (rc $rc) lacks the profile: $(cat "$tmp/out")"; fi
# a copy of aisb alone in a folder: no profile next to it, and (unless
# make install put one there) none installed
mkdir "$tmp/bin"
cp "$aisb" "$tmp/bin/aisb"
# the enforcer a session mounts is found beside aisb too (it is checked
# after the profile)
cp "$(dirname "$aisb")/aisb-enforce" "$tmp/bin/aisb-enforce"
installed=$(grep -aoE -m1 '/[[:graph:]]*/seccomp\.json' "$aisb" | sed -n 1p || true)
if [ -n "$installed" ] && [ -e "$installed" ]; then
	echo "note: $installed exists; the missing-profile case is not checked"
else
	rc=0; "$tmp/bin/aisb" --policy "$tmp/p.yaml" --dry-run -- true >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" = 77 ] && grep -q "no seccomp profile: looked for $tmp/bin/aisb-seccomp.json and " "$tmp/out" &&
	    ! grep -q -- '--security-opt' "$tmp/out"; then ok; else
		bad "no profile: rc $rc: $(cat "$tmp/out")"; fi
	# a session stops before its folder, gate or container exists
	rc=0; (cd "$tmp" && XDG_STATE_HOME=$tmp/state "$tmp/bin/aisb" \
	    --policy "$tmp/p.yaml" -- true) >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" = 77 ] && grep -q "no seccomp profile" "$tmp/out" &&
	    [ ! -e "$tmp/state" ]; then ok; else
		bad "no profile, a session: rc $rc: $(cat "$tmp/out")"; fi
fi
# a profile any user could rewrite is refused
cp "$profile" "$tmp/bin/aisb-seccomp.json"
chmod 0666 "$tmp/bin/aisb-seccomp.json"
rc=0; "$tmp/bin/aisb" --policy "$tmp/p.yaml" --dry-run -- true >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 77 ] && grep -q "writable by every user" "$tmp/out"; then ok; else
	bad "o+w profile: rc $rc: $(cat "$tmp/out")"; fi
chmod 0644 "$tmp/bin/aisb-seccomp.json"
rc=0; "$tmp/bin/aisb" --policy "$tmp/p.yaml" --dry-run -- true >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q -- "--security-opt=seccomp=$tmp/bin/aisb-seccomp.json" "$tmp/out"; then ok; else
	bad "profile next to a copy of aisb: rc $rc: $(cat "$tmp/out")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
