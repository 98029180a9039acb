// tls_get.js URL [VAR]: GET URL through the https_proxy of the
// environment as node itself would connect to a TLS server: a CONNECT by
// hand (node has no proxy support of its own), then TLS over that socket
// against node's own store (NODE_EXTRA_CA_CERTS is how a session adds
// the host's and an inspecting gate's CAs).  With VAR, its value is sent
// as the x-api-key header (a secret's placeholder).  Prints "node STATUS"
// and exits 0 once an answer came; else prints why and exits non-zero.
// For the e2e tests (hostca.sh, secrets.sh), run inside sessions.
const http = require("http"), tls = require("tls");
const p = new URL(process.env.https_proxy), t = new URL(process.argv[2]);
const key = process.argv[3] ? "x-api-key: " + process.env[process.argv[3]] + "\r\n" : "";
const auth = Buffer.from(decodeURIComponent(p.username) + ":" +
    decodeURIComponent(p.password)).toString("base64");
http.request({ host: p.hostname, port: p.port, method: "CONNECT",
    path: t.hostname + ":" + t.port,
    headers: { "Proxy-Authorization": "Basic " + auth } })
  .on("connect", (res, sock) => {
    if (res.statusCode !== 200) { console.log("node proxy " + res.statusCode); process.exit(2); }
    const s = tls.connect({ socket: sock, servername: t.hostname }, () => {
      s.write("GET " + t.pathname + " HTTP/1.1\r\nHost: " + t.host + "\r\n" + key +
          "Connection: close\r\n\r\n");
    });
    let body = "";
    s.on("data", d => body += d);
    s.on("end", () => { console.log("node " + body.split(" ")[1]); process.exit(0); });
    s.on("error", e => { console.log("node " + (e.code || e.message)); process.exit(1); });
  }).on("error", e => { console.log("node " + e.message); process.exit(3); }).end();
