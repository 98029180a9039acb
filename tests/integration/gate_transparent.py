#!/usr/bin/env python3
"""A relay's side of AISB-TRANSPARENT, for gate_transparent.sh and the
bench (stdlib only): one connection to the gate, the head, then the
client's own stream.

    gate_transparent.py GATE-PORT DIALLED-PORT tls [--sni NAME] --ca PEM
        [--auth USER:SECRET] [--tool T] [--dialled A] [--path P] [--pipelined | --split]
    gate_transparent.py GATE-PORT DIALLED-PORT raw --data BYTES [--shut]
        [--auth USER:SECRET] [--tool T] [--dialled A]
    gate_transparent.py GATE-PORT DIALLED-PORT hello [--ext NAMES]...
        [--auth USER:SECRET]
    gate_transparent.py GATE-PORT DIALLED-PORT banner --data BYTES
        [--auth USER:SECRET] [--dialled A]

tls: writes the head, then a real TLS handshake (server name NAME, none
     without --sni; the server's certificate must verify against PEM),
     then "GET P" inside it.  Prints "tls STATUS-LINE" and the answer's
     body on the next line, or "alert REASON" when the handshake failed
     (REASON as OpenSSL names the alert or error), or "closed".
     --pipelined: the head and the ClientHello in one write, as a relay
     sends them (the gate has both at once).  --split: the head alone,
     then the ClientHello in three writes 0.2 s apart (cut inside the
     record header, then inside the server name): the gate must wait for
     it whole.
raw: writes the head and BYTES (Python escapes, e.g. \\r\\n) in one write
     (--shut: then half-closes), then prints the first line of what
     comes back, "alert-record HEX" for a TLS alert, or "closed".
banner: writes the head alone and waits for the server to speak first
     (ssh, SMTP); prints "banner LINE" with its first line, then writes
     BYTES, half-closes and prints "echo REST" with all that came back
     after the first line; "closed" when nothing came.
hello: writes the head and a TLS 1.2 ClientHello made here, byte by byte,
     so that its server names can be what no TLS library sends: one
     server_name extension per --ext, NAMES its host_name entries, comma
     separated, Python escapes for other bytes (e.g. 'w\\xc3\\xa9b.test');
     no --ext, no extension.  Prints "alert-record HEX" for a TLS alert,
     "server-hello" when a ServerHello came back (the stream reached a TLS
     server), or "closed".
"""
import argparse
import base64
import codecs
import socket
import ssl
import struct
import sys
import time


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


def client_hello(exts):
    """A TLS 1.2 ClientHello record that a TLS server answers (ECDHE-RSA
    with AES-GCM), with one server_name extension per entry of exts."""
    def v16(b):
        return struct.pack(">H", len(b)) + b

    ext = b""
    for names in exts:
        lst = b""
        for n in names.split(","):
            lst += b"\0" + v16(codecs.escape_decode(n.encode())[0])
        ext += struct.pack(">H", 0) + v16(v16(lst))
    ext += struct.pack(">H", 10) + v16(v16(struct.pack(">HH", 29, 23)))
    ext += struct.pack(">H", 11) + v16(b"\1\0")
    ext += struct.pack(">H", 13) + v16(v16(struct.pack(">HHH", 0x0804,
                                                       0x0401, 0x0403)))
    body = (b"\3\3" + bytes(range(32)) + b"\0" +
            v16(struct.pack(">HH", 0xc02f, 0xc02b)) + b"\1\0" + v16(ext))
    hs = b"\1" + struct.pack(">I", len(body))[1:] + body
    return b"\x16\3\1" + v16(hs)


def first_record(s):
    """Reads until the first TLS record is whole (or EOF): its bytes."""
    data = b""
    try:
        while len(data) < 5 or len(data) < 5 + struct.unpack(
                ">H", data[3:5])[0]:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    return data


def hello(s, a):
    s.sendall(head(a) + client_hello(a.ext or []))
    got = first_record(s)
    if got[:1] == b"\x15":
        print("alert-record " + got.hex())
    elif got[:1] == b"\x16" and got[5:6] == b"\2":
        print("server-hello")
    else:
        print("closed" if not got else "other " + got[:16].hex())


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
            if out and first and a.split:
                # cut in the record header, then inside the server name
                i = out.find((a.sni or "").encode()) if a.sni else -1
                cut = i + len(a.sni) // 2 if i > 3 else len(out) // 2
                s.sendall(head(a))
                for part in (out[:3], out[3:cut], out[cut:]):
                    time.sleep(0.2)
                    s.sendall(part)
            elif out:
                s.sendall((head(a) if first else b"") + out)
            first = first and not out
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


def banner(s, a):
    s.sendall(head(a))
    got = b""
    try:
        while b"\r\n" not in got:
            b = s.recv(4096)
            if not b:
                break
            got += b
    except OSError:
        pass
    if b"\r\n" not in got:
        print("closed")
        return
    line, _, rest = got.partition(b"\r\n")
    print("banner " + line.decode("latin-1"))
    s.sendall(codecs.escape_decode(a.data.encode())[0])
    s.shutdown(socket.SHUT_WR)
    rest += read_all(s)
    print("echo " + rest.decode("latin-1").strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gport")
    ap.add_argument("dport")
    ap.add_argument("mode", choices=["tls", "raw", "hello", "banner"])
    ap.add_argument("--sni")
    ap.add_argument("--ext", action="append")
    ap.add_argument("--pipelined", action="store_true")
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--ca")
    ap.add_argument("--path", default="/")
    ap.add_argument("--data", default="")
    ap.add_argument("--shut", action="store_true")
    ap.add_argument("--auth")
    ap.add_argument("--tool")
    ap.add_argument("--dialled")
    a = ap.parse_args()

    s = socket.create_connection(("127.0.0.1", int(a.gport)), timeout=15)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if a.mode == "hello":
        hello(s, a)
        return
    if a.mode == "banner":
        banner(s, a)
        return
    if a.mode == "raw":
        data = codecs.escape_decode(a.data.encode())[0]
        s.sendall(head(a) + data)
        if a.shut:
            s.shutdown(socket.SHUT_WR)
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
    if a.pipelined or a.split:
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
