# shellcheck shell=bash
# tests/errtrap.sh: sourced by every test that runs under set -e.  A test
# that dies of a failing command, or of a command killed by a signal,
# says which command, where, and with what status, before its EXIT trap
# cleans up:
#
#   FATAL: tests/e2e/identity.sh:232: status 141 (SIGPIPE): img=$(podman images ...)
#   FATAL:   in hand_over, called from tests/e2e/identity.sh:240
#
# Without it set -e ends the test with the command's status and nothing
# else: a pipe that died of SIGPIPE under pipefail was a bare exit 141
# after minutes of output that all looked fine (issue 35).
#
# set -E hands the trap down to functions, command substitutions and
# subshells.  Bash runs no ERR trap where set -e would not exit either
# (the condition of if, while or until, a command before && or ||, a
# pipeline after !, anything inside a function or subshell called in
# such a place), so a failure a test provokes on purpose says nothing.
# Inside a command substitution set -e is off (bash without
# inherit_errexit) and the trap still runs: there it keeps quiet, since
# a failure decides nothing until the substitution's own status does, and
# that one reaches the caller's trap.  A subshell that dies says so, and
# so does the command that ran it: the first line names the command that
# failed, the next the line that started it.  Of a pipeline bash names
# the last command, with the status pipefail gave the whole pipeline.
# The trap leaves $? to set -e, so the test's exit status, and its EXIT
# trap, are unchanged.  The verdict line a test ends with ([ "$fail" = 0 ]
# after its counts) is no death and says nothing.

# tests_errtrap STATUS LINE COMMAND: the trap (not called directly)
tests_errtrap() {
	local st=$1 line=$2 cmd=$3 why i

	case $- in *e*) ;; *) return 0 ;; esac
	# the verdict a test ends with, its counts printed just before
	case $cmd in '[ "$fail" = 0 ]' | '[ "$fail" -eq 0 ]' | '[ "$failed" = 0 ]') return 0 ;; esac
	why="status $st"
	if [ "$st" -gt 128 ] && [ "$st" -lt 160 ]; then
		why="$why (SIG$(kill -l "$((st - 128))" 2>/dev/null || echo "$((st - 128))"))"
	fi
	# a long command, a here-document's text: its first line is enough
	cmd=${cmd%%$'\n'*}
	[ "${#cmd}" -le 200 ] || cmd="${cmd:0:200}..."
	printf 'FATAL: %s:%s: %s: %s\n' "${BASH_SOURCE[1]:-?}" "$line" "$why" "$cmd" >&2
	for ((i = 1; i < ${#FUNCNAME[@]} - 1; i++)); do
		printf 'FATAL:   in %s, called from %s:%s\n' "${FUNCNAME[i]}" \
		    "${BASH_SOURCE[i + 1]:-?}" "${BASH_LINENO[i]}" >&2
	done
	return 0
}
set -E
trap 'tests_errtrap "$?" "$LINENO" "$BASH_COMMAND"' ERR
