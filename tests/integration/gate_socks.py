#!/usr/bin/env python3
"""SOCKS5 clients for tests/integration/gate_socks.sh.

    gate_socks.py GATE-PORT pysocks TARGET PORT [--auth USER:PASS] [--data D]
    gate_socks.py GATE-PORT raw TARGET PORT [--auth USER:PASS]
        [--methods 0,2] [--cmd N] [--atyp name|v4|v6] [--data D]

pysocks: PySocks (Debian's python3-socks), as an application would use it:
     the name resolved by the proxy (rdns), an address as its own type.
     Sends D, half-closes, prints "echo ANSWER"; "error CODE" when the
     proxy refused (PySocks' SOCKS5 reply code, "auth" for a failed
     RFC 1929 exchange, "method" for no acceptable method).
raw: the bytes written here, one message at a time, so that each answer
     is seen: "method XX" (the method the gate chose), "auth XX" (RFC
     1929's status), "reply XX" (the request's reply code), then with D
     "echo ANSWER"; "closed" where the gate closed without a word.
"""
import argparse
import ipaddress
import socket
import sys

from gate_transparent import read_all


def read_n(s, n):
    got = b""
    while len(got) < n:
        b = s.recv(n - len(got))
        if not b:
            return None
        got += b
    return got


def echo(s, data):
    s.sendall(data.encode())
    s.shutdown(socket.SHUT_WR)
    print("echo " + read_all(s).decode("latin-1").strip())


def pysocks(a):
    import socks
    user, _, pw = (a.auth or "").partition(":")
    # the socket is the one to the proxy (IPv4); the target may be IPv6
    s = socks.socksocket(socket.AF_INET)
    s.set_proxy(socks.SOCKS5, "127.0.0.1", int(a.gport), rdns=True,
                username=user or None, password=pw or None)
    s.settimeout(10)
    try:
        s.connect((a.target, int(a.port)))
    except socks.ProxyError as e:
        # PySocks wraps the SOCKS5 errors into GeneralProxyError's text
        m = str(e)
        if "were rejected" in m:
            print("error method")
        elif "authentication failed" in m:
            print("error auth")
        elif "0x" in m:
            print("error " + m[m.index("0x"):m.index("0x") + 4])
        else:
            print("error " + m)
        return
    echo(s, a.data)


def target_bytes(a):
    port = int(a.port).to_bytes(2, "big")
    if a.atyp == "v4":
        return b"\x01" + ipaddress.IPv4Address(a.target).packed + port
    if a.atyp == "v6":
        return b"\x04" + ipaddress.IPv6Address(a.target).packed + port
    n = a.target.encode()
    return b"\x03" + bytes([len(n)]) + n + port


def raw(a):
    s = socket.create_connection(("127.0.0.1", int(a.gport)), timeout=10)
    methods = bytes(int(m) for m in a.methods.split(","))
    s.sendall(b"\x05" + bytes([len(methods)]) + methods)
    ans = read_n(s, 2)
    if ans is None:
        print("closed")
        return
    print("method %02x" % ans[1])
    if ans[1] == 0xff:
        print("closed" if read_all(s) == b"" else "more")
        return
    if ans[1] == 2:
        user, _, pw = (a.auth or "").partition(":")
        u, p = user.encode(), pw.encode()
        s.sendall(b"\x01" + bytes([len(u)]) + u + bytes([len(p)]) + p)
        ans = read_n(s, 2)
        if ans is None:
            print("closed")
            return
        print("auth %02x" % ans[1])
        if ans[1] != 0:
            print("closed" if read_all(s) == b"" else "more")
            return
    s.sendall(b"\x05" + bytes([a.cmd, 0]) + target_bytes(a))
    ans = read_n(s, 10)
    if ans is None:
        print("closed")
        return
    print("reply %02x" % ans[1])
    if ans[1] == 0 and a.data:
        echo(s, a.data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gport")
    ap.add_argument("mode", choices=["pysocks", "raw"])
    ap.add_argument("target")
    ap.add_argument("port")
    ap.add_argument("--auth")
    ap.add_argument("--data", default="")
    ap.add_argument("--methods", default="0,2")
    ap.add_argument("--cmd", type=int, default=1)
    ap.add_argument("--atyp", choices=["name", "v4", "v6"], default="name")
    a = ap.parse_args()
    if a.mode == "pysocks":
        pysocks(a)
    else:
        raw(a)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
