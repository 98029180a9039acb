#!/usr/bin/env python3
"""Runs a command on a new pseudo-terminal, as a user at a terminal would:
waits for each EXPECT text in its output, then types the SEND line after
it.  Prints the whole output on stdout and exits with the command's own
status (124 when an EXPECT did not come within TIMEOUT seconds, the
output so far printed).

    ptyask.py TIMEOUT [EXPECT SEND]... -- COMMAND [ARG...]
"""
import os
import pty
import select
import sys
import time


def main():
    args = sys.argv[1:]
    if "--" not in args or len(args) < 3:
        sys.stderr.write(__doc__)
        return 64
    sep = args.index("--")
    timeout = float(args[0])
    pairs = args[1:sep]
    argv = args[sep + 1:]
    if len(pairs) % 2 != 0 or not argv:
        sys.stderr.write(__doc__)
        return 64
    steps = list(zip(pairs[0::2], pairs[1::2]))

    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)

    out = b""
    seen = 0		# where the next EXPECT is looked for
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            sys.stdout.write(out.decode("utf-8", "replace"))
            sys.stdout.write("\nptyask: timed out waiting for %r\n" %
                             (steps[0][0] if steps else "the end"))
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return 124
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:		# EIO: the child closed the terminal
            chunk = b""
        if not chunk:
            break
        out += chunk
        if steps:
            want = steps[0][0].encode()
            at = out.find(want, seen)
            if at != -1:
                seen = at + len(want)
                os.write(fd, steps[0][1].encode() + b"\n")
                steps.pop(0)
                deadline = time.monotonic() + timeout
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("utf-8", "replace"))
    if steps:
        sys.stdout.write("\nptyask: the command ended before %r\n" %
                         steps[0][0])
        return 124
    return os.waitstatus_to_exitcode(status) & 0xff


if __name__ == "__main__":
    sys.exit(main())
