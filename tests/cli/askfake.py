#!/usr/bin/python3
"""A gate's control socket as a gate run with --ask answers it, for
tests/cli/ask.sh: the launcher's half of held requests (aisb pending,
approve, deny) tested without a gate.  The protocol is session/ask.h's.

    askfake.py LOG SOCKET...

serves each SOCKET (a unix stream socket, mode 0600), one command per
connection, and writes each command it is given to LOG, one a line.
Besides the gate's commands, the test's own:
    hold ID HOST PORT HOW USER|-    a request held, 60 s to go
    refuse HOST PORT HOW USER|- N   N requests denied unheld (the
                                    bounds), HOST:PORT the last
which are announced on every watch stream as the gate would, and
    (a request held for full.test: "approve N session" answers "full",
    as a gate whose session grants are full)
    junk                            a watch line longer than the
                                    launcher's bound (its tail a valid
                                    "answered" line), then an "answered"
                                    line without an id
"""
import json
import os
import socket
import sys
import threading
import time

LOG, SOCKS = sys.argv[1], sys.argv[2:]
held = {p: {} for p in SOCKS}
refused = {p: None for p in SOCKS}
watchers = {p: [] for p in SOCKS}
lock = threading.Lock()


def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


def entry(h):
    now = time.monotonic()
    return {"id": h["id"], "host": h["host"], "port": h["port"],
            "how": h["how"], "user": h["user"], "method": None,
            "age_ms": int((now - h["t"]) * 1000),
            "left_ms": int((h["t"] + 60 - now) * 1000)}


def announce(path, obj):
    send(path, (json.dumps(obj, separators=(",", ":")) + "\n").encode())


def send(path, line):
    for w in list(watchers[path]):
        try:
            w.sendall(line)
        except OSError:
            watchers[path].remove(w)


def answer(path, verb, n, how):
    with lock:
        if n not in held[path]:
            return {verb: "gone"}
        del held[path][n]
        announce(path, {"answered": {"id": n, "answer": how}})
        return {verb: "ok"}


def serve(path, conn):
    line = b""
    while not line.endswith(b"\n") and len(line) < 512:
        b = conn.recv(512)
        if not b:
            break
        line += b
    words = line.decode().split()
    log(" ".join(words))
    out = {"error": "unknown command"}
    if words == ["pending"]:
        with lock:
            out = {"pending": [entry(h) for h in held[path].values()],
                   "refused": refused[path]}
    elif len(words) == 3 and words[0] == "approve" and \
            words[2] == "session" and \
            held[path].get(int(words[1]), {}).get("host") == "full.test":
        out = {"approve": "full"}   # the gate's grants full: still held
    elif len(words) == 3 and words[0] == "approve" and \
            words[2] in ("once", "session"):
        out = answer(path, "approve", int(words[1]), words[2])
    elif len(words) == 2 and words[0] == "deny":
        out = answer(path, "deny", int(words[1]), "deny")
    elif words == ["watch"]:
        with lock:
            watchers[path].append(conn)
        return
    elif words == ["junk"]:
        with lock:
            send(path, b"x" * 4096 +
                 b'{"answered":{"id":99,"answer":"deny"}}\n' +
                 b'{"answered":{"answer":"deny"}}\n')
        out = {"junk": "ok"}
    elif len(words) == 6 and words[0] == "hold":
        h = {"id": int(words[1]), "host": words[2], "port": int(words[3]),
             "how": words[4], "user": None if words[5] == "-" else words[5],
             "t": time.monotonic()}
        with lock:
            held[path][h["id"]] = h
            announce(path, {"held": entry(h)})
        out = {"hold": "ok"}
    elif len(words) == 6 and words[0] == "refuse":
        r = {"host": words[1], "port": int(words[2]), "how": words[3],
             "user": None if words[4] == "-" else words[4], "method": None,
             "count": int(words[5]), "ago_ms": 2000}
        with lock:
            total = r["count"] + (refused[path] or {"count": 0})["count"]
            refused[path] = dict(r, count=total)
            announce(path, {"refused": r})
        out = {"refuse": "ok"}
    conn.sendall((json.dumps(out, separators=(",", ":")) + "\n").encode())
    conn.close()


def listen(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    s.bind(path)
    os.umask(old)
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(path, c), daemon=True).start()


for p in SOCKS:
    threading.Thread(target=listen, args=(p,), daemon=True).start()
log("ready")
while True:
    time.sleep(3600)
