#!/usr/bin/env python3
"""An HTTPS upstream for gate_inspect_pool.sh (stdlib only) that says
which of its TCP connections answered: every answer is JSON with the
connection's number ("conn", counted from 1 as they are accepted) and
the request's on it, so that the test sees whether the gate reused an
upstream connection.

    gate_pool_server.py --bind ADDR --port N --cert PEM --key PEM
        --port-file FILE

(https_upstream.py: the arguments and the server, with gate_inspect_server.py)

HTTP/1.1 with keep-alive; by path:

  /close        an answer with a length and "Connection: close", the
                connection kept open all the same (a server that closes
                late: the gate must not keep it)
  /client-close an answer; the request's "Connection: close" not honoured
                (the gate passed it on: it must not keep the connection)
  /untilclose   a body ended by the server's close (no length)
  /idle?ms=N    an answer, then the connection closes after N ms idle
  /arm          an answer; the next request on this connection is read
                whole (head and body) and the connection closed without
                an answer: the stale race of a kept connection
  anything else the answer: conn, request, method, body length
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler

import https_upstream

LOCK = threading.Lock()
CONNS = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        # the handshake in this connection's thread, not the accepting one
        self.request.do_handshake()
        super().setup()
        sys.stderr.write("conn %d up\n" % (CONNS[0] + 1))
        with LOCK:
            CONNS[0] += 1
            self.conn_no = CONNS[0]
        self.nreq = 0
        self.drop_next = False

    def log_message(self, fmt, *args):
        sys.stderr.write("conn %d: %s\n" % (self.conn_no, fmt % args))

    def answer(self, extra=(), body=None, length=True):
        out = body if body is not None else (json.dumps(
            {"conn": self.conn_no, "request": self.nreq,
             "method": self.command, "path": self.path,
             "body_len": self.body_len}) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if length:
            self.send_header("Content-Length", str(len(out)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    def handle_any(self):
        self.nreq += 1
        n = int(self.headers.get("Content-Length", "0") or "0")
        self.body_len = len(self.rfile.read(n)) if n else 0
        sys.stderr.write("conn %d request %d %s %s%s\n" % (
            self.conn_no, self.nreq, self.command, self.path,
            " (dropped)" if self.drop_next else ""))
        sys.stderr.flush()
        if self.drop_next:
            # read whole, never answered: the connection closes now
            self.close_connection = True
            return
        path = self.path.split("?")[0]
        if path == "/close":
            # says it closes, and does not at once: the gate must not
            # keep a connection its server said is ending
            self.answer([("Connection", "close")])
            self.close_connection = False
        elif path == "/client-close":
            # the client's Connection: close, not honoured: the gate
            # passed it on, so it must not keep the connection either
            self.answer()
            self.close_connection = False
        elif path == "/untilclose":
            self.answer([("Connection", "close")], length=False)
            self.close_connection = True
        elif path == "/idle":
            ms = int(self.path.split("ms=")[1]) if "ms=" in self.path \
                else 200
            self.answer()
            self.wfile.flush()
            self.connection.settimeout(ms / 1000.0)
        elif path == "/arm":
            self.answer()
            self.drop_next = True
        else:
            self.answer()

    do_GET = do_POST = do_HEAD = do_PUT = handle_any


def main():
    https_upstream.serve(https_upstream.parser(0).parse_args(), Handler,
                         handshake_on_connect=False)


if __name__ == "__main__":
    main()
