"""What the tests' HTTPS upstreams share (gate_inspect_server.py,
gate_pool_server.py; stdlib only): their common arguments and the server
itself, a thread per connection, its port written to a file once it
listens.

    --bind ADDR --port N --cert PEM --key PEM --port-file FILE

The port file is written beside, then renamed into place: a test that
sees it reads the whole number.
"""
import argparse
import os
import ssl
from http.server import ThreadingHTTPServer


def parser(default_port, description=None):
    """An ArgumentParser with the common arguments; the caller adds its
    own and parses."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bind", required=True)
    ap.add_argument("--port", type=int, default=default_port)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--port-file", required=True)
    return ap


def serve(a, handler, alpn=None, handshake_on_connect=True):
    """Serves handler over TLS on a.bind:a.port (a: parsed arguments of
    parser()) until interrupted, after writing the port to a.port_file.
    alpn: the protocols offered; handshake_on_connect=False leaves the
    handshake to the handler's own thread (its setup())."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    srv = ThreadingHTTPServer((a.bind, a.port), handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(
        srv.socket, server_side=True,
        do_handshake_on_connect=handshake_on_connect)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(a.port_file + ".tmp", a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
