#!/usr/bin/env python3
"""HTTPS upstreams for gate_inspect.sh (stdlib only): what an inspecting
gate talks to, with a certificate of a CA the test made.

    gate_inspect_server.py --bind ADDR --port N --cert PEM --key PEM
        --port-file FILE --log FILE [--git-root DIR]

(https_upstream.py: the arguments and the server, with gate_pool_server.py)

One server, HTTP/1.1 with keep-alive, answering by path:

  /sse?n=N&gap=MS   N server-sent events, chunked, MS milliseconds apart
                    (0: at once), each "data: event K" (the TTFB bench
                    reads the first)
  /bytes?n=N        N bytes of 'x' with a Content-Length (bulk)
  /close            a body ended by the server's close (no length)
  /ws               with "Upgrade: websocket": 101, then every byte
                    received is sent back until the client's EOF
  /NAME.git/...     git's smart HTTP: git http-backend as a CGI, under
                    --git-root (push needs no user: http.receivepack is
                    on for the test's repositories)
  anything else     JSON: method, path, headers, body length and its
                    SHA-256 (a chunked request body is read chunk by
                    chunk), the connection's number and its request count;
                    the values of credential fields (Authorization,
                    X-Api-Key, ...) and the query as their SHA-256 only, so
                    that what the client reads never holds a secret the
                    gate added

Every request is logged as one JSON line (method, path, headers as
received: the test reads what the upstream saw, the real secret among
them) with the connection's number and whether its TLS session was
resumed.  Bounds: heads as the stdlib's
http.server reads them (64 KiB lines, 100 fields), bodies of 64 MiB.
"""
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

import https_upstream

LIMIT = 64 << 20
LOG = None
LOCK = threading.Lock()
CONNS = [0]
GIT_ROOT = None


CREDENTIALS = ("authorization", "x-api-key", "x-goog-api-key", "cookie")


def shown(headers):
    """The fields for the client: credentials by their SHA-256 only."""
    out = []
    for k, v in headers.items():
        if k.lower() in CREDENTIALS:
            v = "sha256:" + hashlib.sha256(v.encode("latin-1")).hexdigest()
        out.append([k, v])
    return out


def log(obj):
    with LOCK:
        LOG.write(json.dumps(obj) + "\n")
        LOG.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with LOCK:
            CONNS[0] += 1
            self.conn_no = CONNS[0]
        self.nreq = 0

    def log_message(self, fmt, *args):
        pass

    def body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if te.lower() == "chunked":
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline(16)
                if len(out) > LIMIT:
                    raise ValueError("body too large")
        n = int(self.headers.get("Content-Length", "0"))
        if n > LIMIT:
            raise ValueError("body too large")
        return self.rfile.read(n) if n else b""

    def send(self, code, body, ctype="application/json", close=False):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        self.nreq += 1
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        log({"conn": self.conn_no, "method": self.command,
             "path": self.path, "headers": [[k, v] for k, v in
                                            self.headers.items()],
             "resumed": self.connection.session_reused})
        if GIT_ROOT is not None and ".git/" in u.path:
            return self.git(u)
        if u.path == "/sse":
            return self.sse(int(q.get("n", ["3"])[0]),
                            int(q.get("gap", ["0"])[0]))
        if u.path == "/bytes":
            n = int(q.get("n", ["0"])[0])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                self.wfile.write(chunk[:min(n, len(chunk))])
                n -= min(n, len(chunk))
            return
        if u.path == "/close":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"until the close\n")
            self.close_connection = True
            return
        if u.path == "/ws" and self.headers.get("Upgrade"):
            # ?as=PROTO: the 101 names PROTO, whatever was asked
            return self.ws(q.get("as", ["websocket"])[0])
        data = self.body()
        out = {"method": self.command, "path": u.path,
               "query_sha256": hashlib.sha256(u.query.encode()).hexdigest(),
               "headers": shown(self.headers),
               "body_len": len(data),
               "body_sha256": hashlib.sha256(data).hexdigest(),
               "conn": self.conn_no, "request": self.nreq}
        self.send(200, json.dumps(out).encode() + b"\n")

    def sse(self, n, gap):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for k in range(n):
            ev = b"data: event %d\n\n" % k
            self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
            self.wfile.flush()
            if gap:
                time.sleep(gap / 1000.0)
        self.wfile.write(b"0\r\n\r\n")

    def ws(self, proto):
        self.send_response(101)
        self.send_header("Upgrade", proto)
        self.send_header("Connection", "Upgrade")
        self.end_headers()
        self.wfile.flush()
        while True:
            d = self.connection.recv(65536)
            if not d:
                break
            self.connection.sendall(d)
        self.close_connection = True

    def git(self, u):
        data = self.body()
        env = {"GIT_PROJECT_ROOT": GIT_ROOT, "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": urllib.parse.unquote(u.path),
               "QUERY_STRING": u.query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(data)),
               "REMOTE_USER": "tester", "REMOTE_ADDR": "192.0.2.1",
               "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "GIT_CONFIG_NOSYSTEM": "1", "HOME": GIT_ROOT}
        enc = self.headers.get("Content-Encoding")
        if enc:
            env["HTTP_CONTENT_ENCODING"] = enc
        p = subprocess.run(["git", "http-backend"], input=data, env=env,
                           capture_output=True, check=False)
        head, _, body = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, body = p.stdout.partition(b"\n\n")
        code, fields = 200, []
        for line in head.splitlines():
            k, _, v = line.decode("latin-1").partition(":")
            if k.lower() == "status":
                code = int(v.strip().split()[0])
            elif k:
                fields.append((k, v.strip()))
        self.send_response(code)
        for k, v in fields:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = handle_any
    do_TRACE = do_TRACK = handle_any    # an echo, as a TRACE answer is


def main():
    global LOG, GIT_ROOT
    ap = https_upstream.parser(443)
    ap.add_argument("--log", required=True)
    ap.add_argument("--git-root")
    a = ap.parse_args()
    LOG = open(a.log, "a")
    GIT_ROOT = a.git_root
    https_upstream.serve(a, Handler, alpn=["h2", "http/1.1"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
