#!/usr/bin/env python3
"""A relay's side of AISB-TRANSPARENT, for gate_transparent.sh and the
bench (stdlib only): one connection to the gate, the head, then the
client's own stream.

    gate_transparent.py GATE-PORT DIALLED-PORT tls [--sni NAME] --ca PEM
        [--auth USER:SECRET] [--tool T] [--dialled A] [--path P] [--pipelined]
    gate_transparent.py GATE-PORT DIALLED-PORT raw --data BYTES
        [--auth USER:SECRET] [--tool T] [--dialled A]

tls: writes the head, then a real TLS handshake (server name NAME, none
     without --sni; the server's certificate must verify against PEM),
     then "GET P" inside it.  Prints "tls STATUS-LINE" and the answer's
     body on the next line, or "alert REASON" when the handshake failed
     (REASON as OpenSSL names the alert or error), or "closed".
     --pipelined: the head and the ClientHello in one write, as a relay
     sends them (the gate has both at once).
raw: writes the head and BYTES (Python escapes, e.g. \\r\\n) in one write,
     then prints the first line of what comes back, "alert-record HEX"
     for a TLS alert, or "closed".
"""
import argparse
import base64
import codecs
import socket
import ssl
import sys


def head(a):
    h = b"AISB-TRANSPARENT %s HTTP/1.1\r\n" % a.dport.encode()
    if a.auth:
        h += b"Proxy-Authorization: Basic %s\r\n" % base64.b64encode(
            a.auth.encode())
    if a.tool:
        h += b"X-Aisb-Tool: %s\r\n" % a.tool.encode()
    if a.dialled:
        h += b"X-Aisb-Dialled: %s\r\n" % a.dialled.encode()
    return h + b"\r\n"


def read_all(s):
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    return data


def pipelined(s, ctx, a):
    """As a relay sends it: the head and the ClientHello in one write, the
    TLS driven through memory BIOs from there."""
    rbio, wbio = ssl.MemoryBIO(), ssl.MemoryBIO()
    t = ctx.wrap_bio(rbio, wbio, server_hostname=a.sni)
    first = True
    data = b""

    def step(fn, *args):
        nonlocal first
        while True:
            done = True
            try:
                r = fn(*args)
            except ssl.SSLWantReadError:
                done = False
            out = wbio.read()
            if out:
                s.sendall((head(a) if first else b"") + out)
                first = False
            if done:
                return r
            d = s.recv(65536)
            if d:
                rbio.write(d)
            else:
                rbio.write_eof()

    try:
        step(t.do_handshake)
        step(t.write, b"GET %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0"
             b"\r\n\r\n" % (a.path.encode(), (a.sni or "none").encode()))
        while True:
            try:
                d = step(t.read, 65536)
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                break
            if not d:
                break
            data += d
    except ssl.SSLError as e:
        if not data:
            print("alert %s" % (e.reason or e))
            return
    hd, _, body = data.partition(b"\r\n\r\n")
    print("tls " + hd.split(b"\r\n", 1)[0].decode("latin-1"))
    print(body.decode("latin-1").strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gport")
    ap.add_argument("dport")
    ap.add_argument("mode", choices=["tls", "raw"])
    ap.add_argument("--sni")
    ap.add_argument("--pipelined", action="store_true")
    ap.add_argument("--ca")
    ap.add_argument("--path", default="/")
    ap.add_argument("--data", default="")
    ap.add_argument("--auth")
    ap.add_argument("--tool")
    ap.add_argument("--dialled")
    a = ap.parse_args()

    s = socket.create_connection(("127.0.0.1", int(a.gport)), timeout=15)
    if a.mode == "raw":
        data = codecs.escape_decode(a.data.encode())[0]
        s.sendall(head(a) + data)
        got = read_all(s)
        if got[:1] == b"\x15":	# a TLS alert record: its bytes, in hex
            print("alert-record " + got.hex())
            return
        line = got.split(b"\r\n", 1)[0].decode("latin-1")
        print(line if line else "closed")
        return
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(a.ca)
    if not a.sni:
        ctx.check_hostname = False	# no name: nothing to check it against
    if a.pipelined:
        pipelined(s, ctx, a)
        return
    s.sendall(head(a))
    try:
        t = ctx.wrap_socket(s, server_hostname=a.sni)
    except ssl.SSLError as e:
        print("alert %s" % (e.reason or e))
        return
    except OSError:
        print("closed")
        return
    host = (a.sni or "none").encode()
    t.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n"
              % (a.path.encode(), host))
    data = read_all(t)
    if not data:
        print("closed")
        return
    hd, _, body = data.partition(b"\r\n\r\n")
    print("tls " + hd.split(b"\r\n", 1)[0].decode("latin-1"))
    print(body.decode("latin-1").strip())


if __name__ == "__main__":
    sys.exit(main())
