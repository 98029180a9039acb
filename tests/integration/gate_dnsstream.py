#!/usr/bin/env python3
"""A client of the gate's AISB-DNS entry, for gate_dnsstream.sh.

    gate_dnsstream.py [--shut] PORT CRED|- QUERY...

Sends "AISB-DNS * HTTP/1.1" (with Proxy-Authorization: Basic CRED unless
CRED is "-") and then every QUERY as a DNS-over-TCP frame, all in one
write (pipelined), then reads an answer for each, or until the gate
closes.  With --shut it half-closes after the write and reads until the
gate closes (which it must, once all is answered).  Prints one line per
answer, in order:

    RCODE [ADDR...] [opt] [tc]

("NODATA" for NOERROR without records), checking that each answer's id is
its query's.  If the gate answers HTTP instead, prints its status line.

A QUERY is NAME/TYPE (TYPE: A, AAAA, TXT or a number), optionally with a
prefix: "edns:" (an OPT record, version 0), "badvers:" (version 1),
"notimp:" (opcode STATUS), "twoq:" (two questions: FORMERR), "cut:" (the
question cut short: FORMERR), "frame:N" (a bare frame of N zero bytes).
"many:N:QUERY" is QUERY N times; then only a summary is printed per run
of equal answers: "N x ANSWER".  The queries are written by a thread
while the answers are read, as RFC 7766 asks of a pipelining client.

    gate_dnsstream.py --synth NAME  prints the synthetic address of NAME

    gate_dnsstream.py --conns K PORT CRED QUERY...
        the same queries on K connections, one after another, each with
        CRED, "%d" in it replaced by the connection's number (0 to K-1):
        prints one line per connection (its answers, space separated),
        then "elapsed SECONDS" (from the first connection to the last
        answer).
"""
import base64
import socket
import struct
import sys
import threading
import time

TYPES = {"A": 1, "AAAA": 28, "TXT": 16, "CNAME": 5, "HTTPS": 65}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN",
          4: "NOTIMP", 5: "REFUSED", 16: "BADVERS"}


def synth(name):
    h = 2166136261
    for b in name.encode():
        h = ((h ^ b) * 16777619) & 0xffffffff
    a = (198 << 24 | 18 << 16) + h % 131070 + 1
    return socket.inet_ntoa(struct.pack(">I", a))


def qname(name):
    out = b""
    for label in filter(None, name.split(".")):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def build(qid, spec):
    if spec.startswith("frame:"):
        return b"\0" * int(spec[6:])
    kind = ""
    if ":" in spec:
        kind, spec = spec.split(":", 1)
    name, _, t = spec.partition("/")
    qtype = TYPES.get(t or "A") or int(t)
    flags = 0x0100
    qd, ar = 1, 0
    if kind == "notimp":
        flags |= 2 << 11
    if kind == "twoq":
        qd = 2
    q = qname(name) + struct.pack(">HH", qtype, 1)
    if kind == "cut":
        q = q[:-3]
    tail = b""
    if kind in ("edns", "badvers"):
        ar = 1
        ver = 1 if kind == "badvers" else 0
        tail = b"\0" + struct.pack(">HHBBHH", 41, 4096, 0, ver, 0, 0)
    return struct.pack(">HHHHHH", qid, flags, qd, 0, 0, ar) + q + tail


def parse(msg):
    qid, flags, qd, an, ns, ar = struct.unpack(">HHHHHH", msg[:12])
    off = 12
    for _ in range(qd):
        while msg[off] != 0:
            off += 1 + msg[off]
        off += 5
    addrs = []
    rcode = flags & 0x0f
    opt = False
    for i in range(an + ns + ar):
        if msg[off] & 0xc0 == 0xc0:
            off += 2
        else:
            while msg[off] != 0:
                off += 1 + msg[off]
            off += 1
        rtype, _, ttl, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        rdata = msg[off + 10:off + 10 + rdlen]
        if rtype == 1:
            addrs.append(socket.inet_ntoa(rdata) + "@" + str(ttl))
        elif rtype == 28:
            addrs.append(socket.inet_ntop(socket.AF_INET6, rdata))
        elif rtype == 41:
            opt = True
            rcode |= (ttl >> 24) << 4
        off += 10 + rdlen
    words = [RCODES.get(rcode, str(rcode))]
    if rcode == 0 and not addrs:
        words = ["NODATA"]
    words += addrs
    if opt:
        words.append("opt")
    if flags & 0x0200:
        words.append("tc")
    return qid, " ".join(words)


def main():
    if sys.argv[1] == "--synth":
        print(synth(sys.argv[2]))
        return
    args = sys.argv[1:]
    if args[0] == "--conns":
        t0 = time.monotonic()
        for i in range(int(args[1])):
            print(" ".join(run(False, int(args[2]),
                               args[3].replace("%d", str(i)), args[4:])))
        print("elapsed %.3f" % (time.monotonic() - t0))
        return
    shut = args[0] == "--shut"
    if shut:
        args = args[1:]
    for x in run(shut, int(args[0]), args[1], args[2:]):
        print(x)


def run(shut, port, cred, queries):
    """One connection: its answers, as the lines main prints."""
    specs = []
    summary = False
    for a in queries:
        if a.startswith("many:"):
            _, n, q = a.split(":", 2)
            specs += [q] * int(n)
            summary = True
        else:
            specs.append(a)
    head = b"AISB-DNS * HTTP/1.1\r\nHost: *\r\n"
    if cred != "-":
        head += (b"Proxy-Authorization: Basic " +
                 base64.b64encode(cred.encode()) + b"\r\n")
    head += b"\r\n"
    data = head
    for i, spec in enumerate(specs):
        m = build((0x100 + i) & 0xffff, spec)
        data += struct.pack(">H", len(m)) + m
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    def writer():
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    t = threading.Thread(target=writer)
    t.start()
    buf = b""

    def answers(buf):
        n = 0
        while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
            buf = buf[2 + struct.unpack(">H", buf[:2])[0]:]
            n += 1
        return n

    try:
        while shut or (answers(buf) < len(specs) and
                       not buf.startswith(b"HTTP/")):
            b = s.recv(65536)
            if not b:
                break
            buf += b
    except OSError as e:
        buf += ("error %s" % e).encode()
    t.join()
    s.close()
    if buf.startswith(b"HTTP/"):
        return [buf.split(b"\r\n", 1)[0].decode("latin-1")]
    i = 0
    lines = []
    cut = False
    while len(buf) >= 2:
        n = struct.unpack(">H", buf[:2])[0]
        if len(buf) < 2 + n:
            cut = True
            break
        qid, text = parse(buf[2:2 + n])
        if qid != (0x100 + i) & 0xffff:
            text += " id-mismatch"
        lines.append(text)
        buf = buf[2 + n:]
        i += 1
    if summary:
        runs = []
        for x in lines:
            if runs and runs[-1][1] == x:
                runs[-1][0] += 1
            else:
                runs.append([1, x])
        lines = ["%d x %s" % (n, x) for n, x in runs]
    if cut:
        lines.insert(0, "cut")
    if buf:
        lines.append("trailing")
    if i == 0:
        lines.append("closed")
    return lines


if __name__ == "__main__":
    main()
