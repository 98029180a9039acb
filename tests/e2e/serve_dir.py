#!/usr/bin/python3
"""A folder served over HTTPS on 127.0.0.1, port 0, for the e2e tests
that need a server of their own on the host's loopback (ask.sh, deny.sh):

    serve_dir.py CERT KEY PORTFILE DIR

PORTFILE gets the port once it listens (written whole: a rename).
"""
import functools
import http.server
import os
import ssl
import sys


class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


cert, key, portfile, folder = sys.argv[1:5]
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                    functools.partial(H, directory=folder))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % s.server_address[1])
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
