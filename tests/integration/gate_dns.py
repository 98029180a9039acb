#!/usr/bin/env python3
"""A tiny authoritative DNS responder for the gate tests (stdlib only).

    gate_dns.py --zone ZONE.json --port-file FILE [--log FILE] [--bind ADDR]
                [--port N]

Listens on UDP ADDR (default 127.0.0.1) port N (default 0: any) and writes
the port to FILE.  ZONE.json is read again for every query, so a test changes answers
mid-run by rewriting it (write a temporary file, then rename):

    {"name.test": {"A": ["192.0.2.10"], "AAAA": ["2001:db8::1"], "ttl": 1},
     "gone.test": {"rcode": "NXDOMAIN"},
     "slow.test": {"rcode": "DROP"}}

Unknown names answer NXDOMAIN.  Every query is appended to the log as
"NAME TYPE" so a test can count look-ups.  Queries are bounded to 512 bytes
and one question; anything else is ignored.
"""
import argparse
import ipaddress
import json
import os
import socket
import struct
import sys

TYPES = {1: "A", 28: "AAAA"}
RCODES = {"NOERROR": 0, "SERVFAIL": 2, "NXDOMAIN": 3, "REFUSED": 5}


def parse_name(pkt, off):
    labels = []
    while True:
        if off >= len(pkt):
            raise ValueError("truncated name")
        n = pkt[off]
        off += 1
        if n == 0:
            break
        if n & 0xC0 or len(labels) > 127:
            raise ValueError("compressed or long name in a question")
        labels.append(pkt[off:off + n].decode("ascii", "replace"))
        off += n
    return ".".join(labels).lower(), off


def answer(pkt, zone):
    if len(pkt) < 12 or len(pkt) > 512:
        return None, None
    qid, flags, qd, _an, _ns, _ar = struct.unpack("!HHHHHH", pkt[:12])
    if flags & 0x8000 or qd != 1:
        return None, None
    name, off = parse_name(pkt, 12)
    qtype, qclass = struct.unpack("!HH", pkt[off:off + 4])
    question = pkt[12:off + 4]
    entry = zone.get(name)
    rcode = 3
    records = []
    if entry is not None:
        rcode = RCODES.get(entry.get("rcode", "NOERROR"), None)
        if entry.get("rcode") == "DROP":
            return name, None
        ttl = int(entry.get("ttl", 1))
        tname = TYPES.get(qtype)
        for addr in entry.get(tname, []) if tname else []:
            data = ipaddress.ip_address(addr).packed
            records.append(struct.pack("!HHHIH", 0xC00C, qtype, 1, ttl,
                                       len(data)) + data)
    rflags = 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080 | (rcode or 0)
    hdr = struct.pack("!HHHHHH", qid, rflags, 1, len(records), 0, 0)
    return name + " " + TYPES.get(qtype, str(qtype)), \
        hdr + question + b"".join(records)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zone", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()

    fam = socket.AF_INET6 if ":" in a.bind else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((a.bind, a.port))
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(tmp, a.port_file)
    log = open(a.log, "a", buffering=1) if a.log else None
    while True:
        pkt, peer = s.recvfrom(4096)
        try:
            with open(a.zone) as f:
                zone = {k.lower().rstrip("."): v
                        for k, v in json.load(f).items()}
            what, resp = answer(pkt, zone)
        except (ValueError, struct.error, OSError) as e:
            print("gate_dns: %s" % e, file=sys.stderr)
            continue
        if log and what:
            log.write(what + "\n")
        if resp is not None:
            s.sendto(resp, peer)


if __name__ == "__main__":
    main()
