#!/usr/bin/env python3
"""Upstream servers for the gate tests (stdlib only).

    gate_upstream.py MODE --bind ADDR --port-file FILE [--log FILE] [--port N]

MODE echo: every byte received is sent back; an EOF is answered by closing.
MODE banner: speaks first, "SSH-2.0-aisb-test" and CRLF (as an ssh or
           SMTP server does), then echoes as MODE echo.
MODE http: HTTP/1.0; the answer's body is JSON describing the request
           (method, path, headers, body length) so the test sees what the
           gate forwarded.  A path ending in /slow gets its answer in two
           parts 0.4 s apart.
MODE hold: accepts and never reads nor answers (a stuck upstream).
MODE keepalive: answers one request "200 ok" and keeps the connection
           open, "Connection: close" or not (a misbehaving upstream).
MODE capture: reads until the client is silent for 0.5 s, then answers
           HTTP/1.0 200 with every byte it received as the body (to see
           exactly what the gate sent, smuggled bytes included), and logs
           them too, as "recv LOCALADDR JSON-STRING" (Latin-1), so that a
           test sees them whatever became of the answer.

Each accepted connection is logged as "accept LOCALADDR" so that a test can
prove an address was never dialled.  Bounds: request heads of 64 KiB, bodies
of 16 MiB.
"""
import argparse
import json
import os
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = None
LOCK = threading.Lock()


def note(sock):
    if LOG is None:
        return
    with LOCK:
        LOG.write("accept %s\n" % sock.getsockname()[0])
        LOG.flush()


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        note(self.request)
        while True:
            try:
                data = self.request.recv(65536)
            except OSError:
                return
            if not data:
                return
            self.request.sendall(data)


class Banner(Echo):
    def handle(self):
        try:
            self.request.sendall(b"SSH-2.0-aisb-test\r\n")
        except OSError:
            return
        Echo.handle(self)


class Capture(socketserver.BaseRequestHandler):
    def handle(self):
        note(self.request)
        self.request.settimeout(0.5)
        data = b""
        while len(data) < 1 << 20:
            try:
                b = self.request.recv(65536)
            except (socket.timeout, OSError):
                break
            if not b:
                break
            data += b
        if LOG is not None:
            with LOCK:
                LOG.write("recv %s %s\n" % (self.request.getsockname()[0],
                                            json.dumps(data.decode("latin-1"))))
                LOG.flush()
        self.request.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n"
                             b"Connection: close\r\n\r\n" % len(data) + data)


class KeepAlive(socketserver.BaseRequestHandler):
    def handle(self):
        note(self.request)
        self.request.settimeout(60)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                b = self.request.recv(65536)
                if not b:
                    return
                data += b
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                                 b"\r\nok")
            while self.request.recv(65536):
                pass
        except OSError:
            pass


class Hold(socketserver.BaseRequestHandler):
    def handle(self):
        note(self.request)
        threading.Event().wait(120)


class Http(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        note(self.connection)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline(3)
                if len(body) > 16 << 20:
                    raise ValueError("body too large")
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(min(n, 16 << 20))

    def answer(self):
        body = self.read_body()
        out = json.dumps({
            "method": self.command, "path": self.path,
            "version": self.request_version,
            "headers": [[k, v] for k, v in self.headers.items()],
            "body_len": len(body), "body": body[:256].decode("latin-1"),
        }).encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.path.endswith("/slow"):
            # the answer in two parts, 0.4 s apart
            self.wfile.write(out[:8])
            self.wfile.flush()
            threading.Event().wait(0.4)
            out = out[8:]
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = answer


class TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True


def main():
    global LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["echo", "http", "hold", "capture",
                                     "keepalive", "banner"])
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    a = ap.parse_args()
    if a.log:
        LOG = open(a.log, "a")
    fam = socket.AF_INET6 if ":" in a.bind else socket.AF_INET
    cls = {"echo": (TCPServer, Echo), "hold": (TCPServer, Hold),
           "banner": (TCPServer, Banner),
           "capture": (TCPServer, Capture),
           "keepalive": (TCPServer, KeepAlive),
           "http": (HTTPServer, Http)}[a.mode]
    cls[0].address_family = fam
    srv = cls[0]((a.bind, a.port), cls[1])
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
