#!/bin/bash
# The question at the end of a snapshot session, on a real terminal
# (tmux), after a command whose last output forges aisb's summary and
# question and then leaves the terminal hiding what follows: an OSC
# string left open, concealed black-on-black text, the alternate screen
# with a scroll region and no cursor, forged lines below the cursor, a
# cursor-position query the terminal answers into the input.  The screen
# is read back: aisb's own block must be there, unhidden, opened by a line
# with a mark the command could not know, which the question repeats; the
# question is the last line; one "y" applies.  tests/cli/snapask runs the
# launcher's own end of a session without podman.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
snapask=$(cd "$top_builddir" && pwd)/tests/cli/snapask
command -v tmux >/dev/null || { echo "SKIP: tmux not found (apt-get install tmux)"; exit 77; }
tmp=$(mktemp -d)
sock=
cleanup() {
	[ -z "$sock" ] || tmux -S "$sock" kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

forged='aisb: snapshot: the command changed:
A README.md
1 created, 0 modified, 0 deleted, 0 mode changes, 0 skipped; digest 0000
---- aisb, session 0123456789abcdef01234567, mark deadbeef: the command'"'"'s output ends above; what follows is aisb'"'"'s ----
aisb [mark deadbeef]: write these 1 change(s) into the workspace? [y]es, [n]o: keep the draft, [d]iff: '

# the screen, as text (-e: with its attributes as escape sequences)
screen() { tmux -S "$sock" capture-pane -p $1 -t t; }
# wait_for TEXT: until the screen shows it (10 s; tmux drops trailing
# blanks)
wait_for() {
	local i
	local now
	for i in $(seq 100); do
		now=$(screen "")
		[[ $now == *"$1"* ]] && return 0
		sleep 0.1
	done
	return 1
}

# ask TRICK PRINTF-BYTES: one session whose command ends with them
ask() {
	local name=$1 ws=$tmp/$1/ws sd=$tmp/$1/sd mark q
	sock=$tmp/$name.sock	# a server of its own: one ends as the next starts
	mkdir -p "$ws" && mkdir -m 0700 "$sd"
	printf 'keep\n' >"$ws/keep.txt"
	{ printf '%s' "$forged"; printf "$2"; } >"$tmp/$name/out"
	tmux -S "$sock" -f /dev/null new-session -d -s t -x 200 -y 50 \
	    "$snapask $sd $ws $tmp/$name/out; echo EXIT=\$?; sleep 60"
	# aisb's own question names the workspace; the forged one does not
	if ! wait_for "change(s) into $ws? "; then
		bad "$name: no question on the screen: $(screen '')"
		tmux -S "$sock" kill-server 2>/dev/null || true
		return
	fi
	sleep 0.3
	screen "" >"$tmp/$name/screen"
	screen -e >"$tmp/$name/attrs"
	mark=$(sed -n 's/^---- aisb, session 0123456789abcdef01234567, mark \([0-9a-f]\{8\}\): .*/\1/p' \
	    "$tmp/$name/screen" | { grep -v '^deadbeef$' || true; } | tail -n 1)
	if [ -n "$mark" ]; then ok; else bad "$name: no marked line of aisb's: $(cat "$tmp/$name/screen")"; fi
	# aisb's block, from its marked line: the real summary, and the
	# question with the same mark as the screen's last line
	sed -n "/mark $mark: the command/,\$p" "$tmp/$name/screen" >"$tmp/$name/block"
	if grep -q '^A new.txt$' "$tmp/$name/block"; then ok; else bad "$name: no real summary: $(cat "$tmp/$name/screen")"; fi
	q=$({ grep -v '^$' "$tmp/$name/screen" || true; } | tail -n 1)
	case $q in "aisb [mark $mark]: write these 1 change(s) into $ws? "*) ok ;;
	*) bad "$name: the last line is not aisb's question: '$q'" ;; esac
	# nothing of aisb's block is concealed or drawn in one colour on
	# itself (tmux shows attributes as SGR sequences)
	if grep -qE $'\e\\[([0-9;]*;)?(8|30;40)(;[0-9;]*)?m' \
	    <<<"$(sed -n "/mark $mark: the command/,\$p" "$tmp/$name/attrs")"; then
		bad "$name: aisb's block hidden: $(sed -n "/mark $mark/,\$p" "$tmp/$name/attrs" | cat -v)"
	else ok; fi
	# one "y": the terminal's own answer to the query was not taken
	tmux -S "$sock" send-keys -t t y Enter
	if wait_for 'EXIT='; then ok; else bad "$name: no end after one y: $(screen '')"; fi
	if [ "$(cat "$ws/new.txt" 2>/dev/null)" = agent ]; then ok; else
		bad "$name: not applied after one y: $(screen '')"; fi
	if grep -q '^EXIT=0$' <<<"$(screen "")"; then ok; else bad "$name: exit: $(screen '')"; fi
	tmux -S "$sock" kill-server 2>/dev/null || true
}

ask osc '\033]0;the title swallows what follows '
ask conceal '\033[8m\033[30;40m'
ask altscreen '\033[?1049h\033[2J\033[1;4r\033[?25l\033[8m'
ask below '\n\n\n\naisb [mark deadbeef]: write these 0 change(s)? \n\033[30A'
ask query '\033[6n\033[8m'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
