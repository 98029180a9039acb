#!/usr/bin/env python3
"""The "host" side of tests/integration/enforce_netns.sh.

Serves, until killed or --lifetime seconds pass:
  --tcp ADDR:PORT   accept, send "hello ADDR PORT\\n", close
  --udp ADDR:PORT   echo every datagram
  --dns ADDR:PORT   answer A and AAAA queries from --zone FILE, re-read on
                    every query: lines "NAME ADDRESS TTL"; other names get
                    NXDOMAIN, other types an empty answer.  A test changes
                    the file to change the answer.
  --dns-delay SECS  answer each DNS query only after SECS seconds (a slow
                    resolver; the whole server waits)
  --query-log FILE  append "NAME TYPE SOURCE-PORT" for every DNS query
                    received, flushed at once, so that a test can prove
                    which queries reached the server
IPv6 addresses are written in brackets.  Writes --ready FILE once every socket
is bound.  Python standard library only.
"""
import argparse
import os
import selectors
import socket
import struct
import sys
import time


def endpoint(s):
    if s.startswith("["):
        host, _, port = s[1:].partition("]:")
        return socket.AF_INET6, host, int(port)
    host, _, port = s.rpartition(":")
    return socket.AF_INET, host, int(port)


def bind(kind, spec):
    fam, host, port = endpoint(spec)
    s = socket.socket(fam, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    if kind == socket.SOCK_STREAM:
        s.listen(16)
    s.setblocking(False)
    return s, host, port


def load_zone(path):
    zone = {}
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 3:
                    zone.setdefault(w[0].lower().rstrip("."), []).append(
                        (w[1], int(w[2])))
    except OSError:
        pass
    return zone


def dns_answer(query, zone_path, log=None, peer=None):
    if len(query) < 12:
        return None
    qid, flags, qd = struct.unpack("!HHH", query[:6])
    if qd != 1:
        return None
    labels, off = [], 12
    while off < len(query) and query[off] != 0:
        n = query[off]
        labels.append(query[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n
    off += 1
    if off + 4 > len(query):
        return None
    qtype, qclass = struct.unpack("!HH", query[off:off + 4])
    question = query[12:off + 4]
    name = ".".join(labels).lower()
    if log is not None:
        log.write("%s %d %d\n" % (name, qtype, peer[1]))
        log.flush()
    zone = load_zone(zone_path)
    answers = b""
    count = 0
    rcode = 0
    if name not in zone:
        rcode = 3
    elif qtype in (1, 28):
        fam = socket.AF_INET if qtype == 1 else socket.AF_INET6
        for addr, ttl in zone[name]:
            if (":" in addr) != (fam == socket.AF_INET6):
                continue
            raw = socket.inet_pton(fam, addr)
            answers += struct.pack("!HHHIH", 0xC00C, qtype, 1, ttl, len(raw))
            answers += raw
            count += 1
    hdr = struct.pack("!HHHHHH", qid, 0x8180 | rcode, 1, count, 0, 0)
    return hdr + question + answers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcp", action="append", default=[])
    ap.add_argument("--udp", action="append", default=[])
    ap.add_argument("--dns", action="append", default=[])
    ap.add_argument("--zone")
    ap.add_argument("--query-log")
    ap.add_argument("--dns-delay", type=float, default=0)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    log = open(a.query_log, "a") if a.query_log else None

    sel = selectors.DefaultSelector()
    for spec in a.tcp:
        s, host, port = bind(socket.SOCK_STREAM, spec)
        sel.register(s, selectors.EVENT_READ, ("tcp", host, port))
    for spec in a.udp:
        s, host, port = bind(socket.SOCK_DGRAM, spec)
        sel.register(s, selectors.EVENT_READ, ("udp", host, port))
    for spec in a.dns:
        s, host, port = bind(socket.SOCK_DGRAM, spec)
        sel.register(s, selectors.EVENT_READ, ("dns", host, port))
    with open(a.ready, "w") as f:
        f.write("ready\n")

    deadline = time.monotonic() + a.lifetime
    while time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1.0):
            kind, host, port = key.data
            s = key.fileobj
            try:
                if kind == "tcp":
                    c, _ = s.accept()
                    c.sendall(b"hello %s %d\n" % (host.encode(), port))
                    c.close()
                elif kind == "udp":
                    data, peer = s.recvfrom(2048)
                    s.sendto(data, peer)
                else:
                    data, peer = s.recvfrom(2048)
                    ans = dns_answer(data, a.zone, log, peer)
                    if ans is not None:
                        time.sleep(a.dns_delay)
                        s.sendto(ans, peer)
            except OSError as e:
                print("enforce_peer: %s %s:%d: %s" % (kind, host, port, e),
                      file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
