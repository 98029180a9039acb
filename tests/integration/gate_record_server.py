#!/usr/bin/env python3
"""An upstream for gate_record.sh that keeps the exact bytes of each
connection, as they were on the wire, so that a capture can be compared
with them (stdlib only).

    gate_record_server.py MODE --bind ADDR --port-file FILE --dir DIR
        [--cert PEM --key PEM]

MODE http: reads one HTTP/1.x request (head, then Content-Length bytes of
           body) and answers 200 with a body naming what it got.
MODE tls:  the same inside TLS, terminated through memory BIOs so that
           the TLS records themselves are kept.
MODE echo: sends back every byte received until the client's EOF.

Connection N (from 1, in accept order) leaves DIR/MODE.N.in (the bytes
received) and DIR/MODE.N.out (the bytes sent), written once the connection
is closed.  Bounds: 1 MiB of head, 64 MiB a connection.
"""
import argparse
import os
import socket
import ssl
import sys
import threading

LIMIT = 64 << 20
LOCK = threading.Lock()
COUNT = [0]


def save(d, mode, n, inb, outb):
    for suffix, data in (("in", inb), ("out", outb)):
        p = os.path.join(d, "%s.%d.%s" % (mode, n, suffix))
        with open(p + ".tmp", "wb") as f:
            f.write(data)
        os.rename(p + ".tmp", p)


def answer(req):
    """The answer to a complete request (head + body), or None for more."""
    end = req.find(b"\r\n\r\n")
    if end < 0:
        return None
    length = 0
    for line in req[:end].split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    if len(req) < end + 4 + length:
        return None
    body = b"got %d bytes of body: %s\n" % (length, req[end + 4:][:64])
    return (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n"
            b"\r\n" % len(body)) + body


def serve_plain(sock, mode):
    inb, outb = bytearray(), bytearray()
    req = bytearray()
    while len(inb) < LIMIT:
        d = sock.recv(65536)
        if not d:
            break
        inb += d
        if mode == "echo":
            sock.sendall(d)
            outb += d
            continue
        req += d
        a = answer(bytes(req))
        if a is not None:
            sock.sendall(a)
            outb += a
            sock.shutdown(socket.SHUT_WR)
            # the client's close (the gate passes it on)
            while sock.recv(65536):
                pass
            break
    return inb, outb


def serve_tls(sock, ctx):
    inb, outb = bytearray(), bytearray()
    rbio, wbio = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(rbio, wbio, server_side=True)

    def flush():
        d = wbio.read()
        if d:
            sock.sendall(d)
            outb.extend(d)

    def pull():
        d = sock.recv(65536)
        if d:
            inb.extend(d)
            rbio.write(d)
        else:
            rbio.write_eof()
        return d

    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            flush()
            if not pull():
                return inb, outb
    flush()
    req = b""
    while True:
        try:
            req += tls.read(65536)
        except ssl.SSLWantReadError:
            flush()
            if not pull():
                return inb, outb
            continue
        a = answer(req)
        if a is not None:
            break
    tls.write(a)
    try:
        tls.unwrap()
    except (ssl.SSLWantReadError, ssl.SSLError):
        pass
    flush()
    sock.shutdown(socket.SHUT_WR)
    while pull():
        pass
    return inb, outb


def handle(sock, a, ctx):
    with LOCK:
        COUNT[0] += 1
        n = COUNT[0]
    try:
        if a.mode == "tls":
            inb, outb = serve_tls(sock, ctx)
        else:
            inb, outb = serve_plain(sock, a.mode)
    except OSError:
        inb, outb = b"", b""
    sock.close()
    save(a.dir, a.mode, n, bytes(inb), bytes(outb))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["http", "tls", "echo"])
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    a = ap.parse_args()
    ctx = None
    if a.mode == "tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
    fam = socket.AF_INET6 if ":" in a.bind else socket.AF_INET
    srv = socket.socket(fam, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((a.bind, 0))
    srv.listen(64)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(a.port_file + ".tmp", a.port_file)
    while True:
        s, _ = srv.accept()
        threading.Thread(target=handle, args=(s, a, ctx), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
