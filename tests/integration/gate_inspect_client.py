#!/usr/bin/env python3
"""Clients for gate_inspect.sh that curl does not make (stdlib, and
python3-requests for "requests"):

  sse GATEPORT HOST PATH CA       CONNECT, TLS (trusting CA), GET PATH;
                                  prints "FIRST_MS TOTAL_MS EVENTS": when
                                  the first event arrived, when the last
  ws GATEPORT HOST CA             an upgrade (GET /ws, Upgrade: websocket),
                                  then bytes both ways: prints the status
                                  line and what came back
  raw GATEPORT HOST CA REQUEST    REQUEST (Python escapes: \\r\\n) inside
                                  the TLS; prints each status line got
  untrusting GATEPORT HOST        a TLS client that trusts only the
                                  system's CAs (the gate's is not among
                                  them): prints its error
  requests GATEPORT URL CA K=V..  python-requests through the gate, the
                                  headers K: V; prints status and body
  relay PORT GATEPORT             a relay as the sandbox's (AISB-
                                  TRANSPARENT): each connection to
                                  127.0.0.1:PORT goes to the gate behind
                                  the head, "X-Aisb-Tool: node"
"""
import json
import socket
import ssl
import sys
import threading
import time


def tunnel(port, host):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" %
              (host.encode(), host.encode()))
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            raise SystemExit("closed before the CONNECT answer")
        head += d
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit("CONNECT: " + head.split(b"\r\n")[0].decode())
    return s


def tls(port, host, ca):
    ctx = ssl.create_default_context(cafile=ca)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    return ctx.wrap_socket(tunnel(port, host), server_hostname=host)


def read_head(s):
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            break
        head += d
    return head


def cmd_sse(a):
    port, host, path, ca = int(a[0]), a[1], a[2], a[3]
    s = tls(port, host, ca)
    t0 = time.monotonic()
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(),
                                                        host.encode()))
    data, first = b"", None
    while not data.endswith(b"0\r\n\r\n"):
        d = s.recv(65536)
        if not d:
            break
        data += d
        if first is None and b"data: event 0" in data:
            first = time.monotonic()
    end = time.monotonic()
    n = data.count(b"data: event")
    print("%.1f %.1f %d" % (((first or end) - t0) * 1e3, (end - t0) * 1e3,
                            n))


def cmd_ws(a):
    port, host, ca = int(a[0]), a[1], a[2]
    s = tls(port, host, ca)
    s.sendall(b"GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
              b"Connection: Upgrade\r\n\r\n" % host.encode())
    head = read_head(s)
    print(head.split(b"\r\n")[0].decode())
    got = b""
    for msg in (b"frame-one", b"GET /not-a-request HTTP/1.1\r\n\r\n"):
        s.sendall(msg)
        want = len(got) + len(msg)
        while len(got) < want:
            d = s.recv(65536)
            if not d:
                break
            got += d
    print(json.dumps(got.decode("latin-1")))


def cmd_raw(a):
    port, host, ca = int(a[0]), a[1], a[2]
    req = a[3].encode().decode("unicode_escape").encode("latin-1")
    s = tls(port, host, ca)
    s.sendall(req)
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except (OSError, ssl.SSLError):
        pass
    for line in data.split(b"\r\n"):
        if line.startswith(b"HTTP/1."):
            print(line.decode("latin-1"))


def cmd_untrusting(a):
    port, host = int(a[0]), a[1]
    ctx = ssl.create_default_context()
    try:
        ctx.wrap_socket(tunnel(port, host), server_hostname=host)
        print("handshake completed")
    except ssl.SSLError as e:
        print("refused: %s" % e.reason)


def cmd_requests(a):
    import requests
    port, url, ca = int(a[0]), a[1], a[2]
    hdrs = dict(kv.split("=", 1) for kv in a[3:])
    proxy = "http://127.0.0.1:%d" % port
    r = requests.post(url, data=b"hello from requests", headers=hdrs,
                      proxies={"https": proxy}, verify=ca, timeout=10)
    print(r.status_code)
    print(r.text.strip())


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def cmd_relay(a):
    port, gate = int(a[0]), int(a[1])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(16)
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        g = socket.create_connection(("127.0.0.1", gate))
        g.sendall(b"AISB-TRANSPARENT 443 HTTP/1.1\r\nX-Aisb-Tool: node\r\n"
                  b"X-Aisb-Dialled: 127.0.0.1\r\n\r\n")
        threading.Thread(target=pipe, args=(c, g), daemon=True).start()
        threading.Thread(target=pipe, args=(g, c), daemon=True).start()


def main():
    cmds = {"sse": cmd_sse, "ws": cmd_ws, "raw": cmd_raw,
            "untrusting": cmd_untrusting, "requests": cmd_requests,
            "relay": cmd_relay}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 64
    cmds[sys.argv[1]](sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
