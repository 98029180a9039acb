#!/bin/bash
# End to end: a direct (bind) session's command cannot plant what the
# host's git, shell or editor runs (docs/launcher.md, "The workspace";
# issue 27), in real podman, as root in a root-owned 0700 repository
# (rootful: the idmapped workspace) and as an ordinary user in that
# user's 0700 repository (rootless, keep-id).  Each repository has a
# submodule and a linked worktree.
#
# For each planted class (a hook, a hook where the repository's own
# core.hooksPath points, core.fsmonitor, core.hooksPath into the tree,
# core.sshCommand, a filter driver with a .gitattributes,
# include.path, credential.helper, a submodule's hook and config, a
# worktree's config.worktree, a .git file pointed elsewhere) the host's
# git then runs status, add, commit, a fetch from a local bare repository,
# a checkout in the submodule, credential fill and an ssh fetch, and no marker file the planted
# command would make appears.  Ordinary git work inside (commit, branch,
# checkout -b, remote add, fetch from a bare repository mounted with
# --mount, push -u into a bare one in the workspace) is on the host
# afterwards; the offered config keys are printed, and written when the
# person says yes at a terminal.  Also: a home per workspace mode (a
# snapshot session's ~/.gitconfig is not a direct session's),
# --quarantine, --read-only, --mount and protect:.
#
# --net none: nothing talks to any network (an ssh fetch to 127.0.0.1:1
# on the host is refused at once).  Needs root, podman, mmdebstrap, git
# and AISB_E2E=1 (tests/run.sh sets it).  Everything it makes is removed
# by the EXIT trap (tests/e2e/lib.sh, which makes and removes the test user).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start gitguard mmdebstrap git useradd userdel runuser python3 timeout
ptyask=$(cd "$top_srcdir" && pwd)/tests/e2e/ptyask.py
e2e_seed_image git
user=aisbgg

printf 'version: 1\nallow:\n  - host: allowed.test\n' >"$tmp/policy.yaml"
chmod 0644 "$tmp/policy.yaml"
pkgs=(--package git)
run_as=()		# empty: root; else the test user (as_user)

# G: git as the owner, with an identity and no system or global config
G() { "${run_as[@]}" env GIT_CONFIG_NOSYSTEM=1 git -c user.name=t \
    -c user.email=t@example.test -c protocol.file.allow=always "$@"; }

# make_repos TOP: TOP/ws (0700) with a commit, a submodule, a linked
# worktree wt, husky's hooks (core.hooksPath .husky) and a bare push.git;
# TOP/remote.git outside it; TOP/markers; all made by the owner
repos='set -e
t=$1
g() { GIT_CONFIG_NOSYSTEM=1 git -c user.name=t -c user.email=t@example.test \
    -c protocol.file.allow=always "$@"; }
g init -q --bare -b main "$t/remote.git"
g init -q -b main "$t/src"
echo r >"$t/src/r"
g -C "$t/src" add r
g -C "$t/src" commit -qm r
g -C "$t/src" push -q "$t/remote.git" main
g init -q -b main "$t/ws"
chmod 0700 "$t/ws"
echo a >"$t/ws/a"
printf "all:\n\ttrue\n" >"$t/ws/Makefile"
g -C "$t/ws" add a Makefile
g -C "$t/ws" commit -qm one
g -C "$t/ws" submodule add -q "$t/remote.git" sub
g -C "$t/ws" commit -qm sub
g -C "$t/ws" worktree add -q wt
mkdir "$t/ws/.husky"
printf "#!/bin/sh\ntrue\n" >"$t/ws/.husky/pre-commit"
chmod +x "$t/ws/.husky/pre-commit"
g -C "$t/ws" add .husky
g -C "$t/ws" commit -qm husky
g -C "$t/ws" config core.hooksPath .husky
g init -q --bare -b main "$t/ws/push.git"
printf "push.git/\n" >>"$t/ws/.git/info/exclude"
mkdir -p "$t/markers"'
make_repos() { "${run_as[@]}" sh -c "$repos" sh "$1"; }

# The planted classes, in one session: each writes a command that would
# touch a marker in M (a host folder the sandbox does not see).
plant='M=$1
printf "#!/bin/sh\ntouch $M/husky\n" >.husky/pre-commit 2>/dev/null &&
    echo "planted .husky/pre-commit, where core.hooksPath points"
git config core.fsmonitor "touch $M/fsmonitor"
git config core.hooksPath .githooks
mkdir -p .githooks
printf "#!/bin/sh\ntouch $M/hookspath\n" >.githooks/pre-commit
chmod +x .githooks/pre-commit
git config core.sshCommand "touch $M/sshcommand; false"
git config filter.evil.clean "touch $M/filter; cat"
git config filter.evil.smudge "touch $M/filter; cat"
echo "* filter=evil" >.gitattributes
git config include.path ../planted.cfg
printf "[core]\n\tfsmonitor = touch $M/include\n" >planted.cfg
git config credential.helper "!touch $M/credential; false"
for h in pre-commit post-checkout post-commit reference-transaction; do
	printf "#!/bin/sh\ntouch $M/hook\n" >.git/hooks/$h 2>/dev/null &&
	    echo "planted .git/hooks/$h"
done
printf "#!/bin/sh\ntouch $M/subhook\n" >.git/modules/sub/hooks/post-checkout \
    2>/dev/null && echo "planted the submodule hook"
git -C sub config core.fsmonitor "touch $M/subfsmonitor"
git config extensions.worktreeConfig true
git -C wt config --worktree core.fsmonitor "touch $M/worktree"
printf "[core]\n\tfsmonitor = touch $M/worktree2\n" \
    >.git/worktrees/wt/config.worktree
echo "gitdir: ../planted-git" >sub/.git 2>/dev/null && echo "redirected sub/.git"
echo "touch $M/envrc" >.envrc
git status >/dev/null 2>&1
echo plant-done'

# Ordinary git work, as an agent does it.
work='set -e
git config --global user.name t; git config --global user.email t@example.test
git checkout -q -b feature
echo w >work.txt
git add work.txt
git commit -qm work
git branch side
git remote add origin /srv/remote.git
git fetch -q origin
git remote add gh https://example.org/proj.git
git remote add pushr ./push.git
git push -q -u pushr feature
git -C sub status >/dev/null
git -C wt status >/dev/null
echo worked'

# host_git T: what the owner does next on the host; no marker may appear
host_git() {
	local t=$1 w=$1/ws
	(cd "$w" && G status >/dev/null 2>&1 || true
	 G -C "$w" add -A >/dev/null 2>&1 || true
	 G -C "$w" commit -qm host >/dev/null 2>&1 || true
	 G -C "$w" fetch -q "$t/remote.git" >/dev/null 2>&1 || true
	 G -C "$w/sub" status >/dev/null 2>&1 || true
	 G -C "$w/sub" checkout -q --detach >/dev/null 2>&1 || true
	 G -C "$w/wt" status >/dev/null 2>&1 || true
	 printf 'protocol=https\nhost=example.org\n\n' | "${run_as[@]}" env \
	     GIT_TERMINAL_PROMPT=0 git -C "$w" credential fill >/dev/null 2>&1 || true
	 "${run_as[@]}" timeout 20 git -C "$w" fetch -q \
	     ssh://aisbtest@127.0.0.1:1/x >/dev/null 2>&1 || true)
}

# guard LABEL T AISB...: the planted session, the host's git, the work
# session and what it left on the host
guard() {
	local label=$1 t=$2 rc
	shift 2
	rc=0; (cd "$t/ws" && "$@" --net none --policy "$policy" "${pkgs[@]}" \
	    -- sh -c "$plant" sh "$t/markers") >"$tmp/out" 2>"$tmp/err" \
	    </dev/null || rc=$?
	check "$label: plant: exit" "$rc" 0
	check "$label: plant: ran" "$(tail -n 1 "$tmp/out")" plant-done
	if grep -E '^(planted |redirected)' "$tmp/out"; then
		bad "$label: the command wrote a hook or a .git file"
	else ok; fi
	for k in core.fsmonitor core.hookspath core.sshcommand filter.evil.clean \
	    include.path credential.helper; do
		if grep -q "^aisb:   $k  NOT OFFERED" "$tmp/err"; then ok; else
			bad "$label: $k not named: $(grep -i "$k" "$tmp/err")"; fi
	done
	for f in .envrc .gitattributes; do
		if grep -q "^aisb:   A $f  \[!\]" "$tmp/err"; then ok; else
			bad "$label: $f not listed at the end"; fi
	done
	if grep -q 'touch' "$tmp/err"; then
		bad "$label: a value of a key not offered was printed"; else ok; fi
	host_git "$t"
	check "$label: nothing ran on the host" "$(ls "$t/markers")" ""
	check "$label: host config" "$(G -C "$t/ws" config --file .git/config \
	    --get-regexp 'fsmonitor|hookspath|sshcommand|filter|include|credential' || true)" \
	    "core.hookspath .husky"
	check "$label: sub config" "$(G -C "$t/ws" config --file \
	    .git/modules/sub/config --get core.fsmonitor || true)" ""
	[ -e "$t/ws/.git/worktrees/wt/config.worktree" ] &&
	    bad "$label: config.worktree written back" || ok
	[ -e "$t/ws/.git/hooks/pre-commit" ] && bad "$label: hook written" || ok
	[ -e "$t/ws/.git/modules/sub/hooks/post-checkout" ] &&
	    bad "$label: submodule hook written" || ok
	check "$label: sub/.git" "$(cat "$t/ws/sub/.git")" "gitdir: ../.git/modules/sub"

	rc=0; (cd "$t/ws" && "$@" --net none --policy "$policy" "${pkgs[@]}" \
	    --mount "$t/remote.git:/srv/remote.git" -- sh -c "$work") \
	    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "$label: work: exit" "$rc" 0
	check "$label: work: ran" "$(tail -n 1 "$tmp/out")" worked
	check "$label: HEAD back" "$(cat "$t/ws/.git/HEAD")" "ref: refs/heads/feature"
	check "$label: the commit" "$(G -C "$t/ws" log -1 --format=%s feature)" work
	check "$label: index back" "$(G -C "$t/ws" diff --cached --name-only | wc -l)" 0
	check "$label: branch" "$(G -C "$t/ws" rev-parse -q --verify side >/dev/null && echo yes)" yes
	check "$label: fetched" "$(G -C "$t/ws" rev-parse -q --verify \
	    refs/remotes/origin/main >/dev/null && echo yes)" yes
	check "$label: pushed" "$(G -C "$t/ws/push.git" log -1 --format=%s feature)" work
	check "$label: owner of new objects" "$(find "$t/ws/.git/objects" -newer \
	    "$t/ws/a" -type f -printf '%u\n' | sort -u | tr '\n' ' ')" "$owner "
	if grep -q "^aisb:   remote.gh.url = https://example.org/proj.git  (offered" \
	    "$tmp/err" && grep -q "^aisb:   remote.origin.url  NOT OFFERED: a local" \
	    "$tmp/err" && grep -q "^    git config --file '$t/ws/.git/config' --replace-all 'remote.gh.url'" \
	    "$tmp/err"; then ok; else bad "$label: offers: $(grep git "$tmp/err")"; fi
	check "$label: the config as it was" "$(G -C "$t/ws" config --get remote.gh.url || true)" ""
	check "$label: after work: nothing ran" "$(ls "$t/markers")" ""
}

# --- 1. root, in a root-owned 0700 repository ---------------------------
owner=root
policy=$tmp/policy.yaml
make_repos "$tmp/r"
guard root "$tmp/r" "$aisb"

# the offered keys written when the person says yes, behind aisb's mark
rc=0; (cd "$tmp/r/ws" && python3 "$ptyask" 300 '[n]o: ' y -- "$aisb" \
    --net none --policy "$policy" "${pkgs[@]}" -- sh -c \
    'git remote add up https://example.org/up.git; git config core.pager "touch x"') \
    >"$tmp/pty" 2>&1 || rc=$?
check "ask: exit" "$rc" 0
check "ask: written" "$(G -C "$tmp/r/ws" config --get remote.up.url)" https://example.org/up.git
check "ask: not the rest" "$(G -C "$tmp/r/ws" config --get core.pager || true)" ""
if grep -q 'aisb \[mark [0-9a-f]*\]: write these 2 key(s)' "$tmp/pty"; then ok; else
	bad "ask: the question: $(tail -n 5 "$tmp/pty")"; fi
check "ask: owner kept" "$(stat -c %u "$tmp/r/ws/.git/config")" 0

# the home: one per workspace mode (issue 27, 4)
rc=0; (cd "$tmp/r/ws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$policy" "${pkgs[@]}" -- sh -c \
    'git config --global core.fsmonitor "echo ran >\$HOME/fsmonitor-ran"; echo x >~/.planted') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "home: snapshot session" "$rc" 0
rc=0; (cd "$tmp/r/ws" && "$aisb" --net none --policy "$policy" "${pkgs[@]}" -- \
    sh -c 'git status >/dev/null 2>&1; test -e ~/.planted && echo shared || echo apart;
    test -e ~/fsmonitor-ran && echo fsmonitor-ran || true') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "home: direct session" "$rc" 0
check "home: apart" "$(cat "$tmp/out")" apart
sd=$(ls -dt "$XDG_STATE_HOME"/aisb/sessions/* | awk 'NR == 1')
case $(awk '$1 == "home_volume" && NF == 2 { print $2 }' "$sd/record") in
aisb-home-????????????-direct) ok ;;
*) bad "home: name: $(grep home_volume "$sd/record")" ;;
esac

# --quarantine: no network, read-only, a home that goes, a warning
printf '#!/bin/sh\ntrue\n' >"$tmp/r/ws/.git/hooks/post-merge"
chmod +x "$tmp/r/ws/.git/hooks/post-merge"
rc=0; (cd "$tmp/r/ws" && "$aisb" --quarantine --policy "$policy" "${pkgs[@]}" -- \
    sh -c 'touch q 2>/dev/null && echo wrote || echo ro; echo h >~/h;
    cat /proc/net/route | wc -l') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "quarantine: exit" "$rc" 0
check "quarantine: read-only" "$(sed -n 1p "$tmp/out")" ro
check "quarantine: no route" "$(sed -n 2p "$tmp/out")" 1
for w in '.git/hooks/post-merge  git runs it' '.envrc  direnv' \
    'git config/submodule.sub.url  may run code' 'sub/.git  git follows'; do
	grep -qF "aisb:   $w" "$tmp/err" && ok || bad "quarantine: warns of $w: $(cat "$tmp/err")"
done
rc=0; (cd "$tmp/r/ws" && "$aisb" --quarantine --policy "$policy" "${pkgs[@]}" -- \
    sh -c 'test -e ~/h && echo kept || echo gone') >"$tmp/out" 2>"$tmp/err" \
    </dev/null || rc=$?
check "quarantine: the home went" "$(cat "$tmp/out")" gone
rc=0; (cd "$tmp/r/ws" && "$aisb" --quarantine --net gate --policy "$policy" -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "quarantine: --net gate refused" "$rc" 78
[ -e "$tmp/r/ws/q" ] && bad "quarantine: wrote the workspace" || ok

# --read-only
rc=0; (cd "$tmp/r/ws" && "$aisb" --read-only --net none --policy "$policy" \
    "${pkgs[@]}" -- sh -c 'touch ro 2>/dev/null && echo wrote || echo ro') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "read-only" "$rc:$(cat "$tmp/out")" 0:ro

# --mount: read-only unless :rw, never over aisb's paths or the workspace,
# never from a project config
mkdir -p "$tmp/skills" "$tmp/rw"
echo s >"$tmp/skills/s"
rc=0; (cd "$tmp/r/ws" && "$aisb" --net none --policy "$policy" "${pkgs[@]}" \
    --mount "$tmp/skills:/home/sandbox/skills" --mount "$tmp/rw:/opt/rw:rw" -- \
    sh -c 'cat ~/skills/s; touch ~/skills/t 2>/dev/null && echo wrote || echo ro;
    echo w >/opt/rw/w') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "mount: exit" "$rc" 0
check "mount: read, read-only" "$(paste -sd' ' "$tmp/out")" "s ro"
check "mount: rw, the owner's" "$(stat -c '%u %s' "$tmp/rw/w" 2>&1)" "0 2"
for m in "$tmp/skills:/run/aisb/x" "$tmp/skills:/run" "$tmp/r/ws:/opt/ws" \
    "$tmp/skills:$tmp/r/ws/x" "$tmp/r:/opt/r" "$tmp/skills:/home/sandbox"; do
	rc=0; (cd "$tmp/r/ws" && "$aisb" --net none --policy "$policy" --mount "$m" \
	    -- true) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "mount $m: refused" "$rc" 78
done
printf 'mount: [%s:/opt/s]\n' "$tmp/skills" >"$tmp/r/ws/.aisb.yaml"
rc=0; (cd "$tmp/r/ws" && "$aisb" --net none --policy "$policy" -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "mount from a project config: refused" "$rc" 78
rm -f "$tmp/r/ws/.aisb.yaml"
check "no mount left" "$(grep -c " $tmp/state" /proc/self/mounts || true)" 0

# protect: read-only where it exists, listed when made
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'protect: [Makefile, notes.txt]\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
rc=0; (cd "$tmp/r/ws" && "$aisb" --net none --policy "$policy" "${pkgs[@]}" -- \
    sh -c 'echo x >>Makefile 2>/dev/null && echo wrote || echo ro; echo n >notes.txt') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
rm -f "$XDG_CONFIG_HOME/aisb/config.yaml"
check "protect: exit" "$rc" 0
check "protect: read-only" "$(cat "$tmp/out")" ro
grep -q '^aisb:   A notes.txt  \[!\] protected' "$tmp/err" && ok ||
    bad "protect: notes.txt not listed: $(cat "$tmp/err")"

# --- 2. an ordinary user, rootless podman, in that user's 0700 repository
e2e_user "$user"
user=$e2e_user_name home=$e2e_home
install -m 0644 -o "$user" "$tmp/policy.yaml" "$home/policy.yaml"
run_as=(as_user)
owner=$user
policy=$home/policy.yaml
install -d -m 0700 -o "$user" -g "$user" "$home/t"
make_repos "$home/t"
guard user "$home/t" as_user aisb

echo "gitguard: $pass passed, $fail failed"
[ "$fail" = 0 ]
