#!/usr/bin/env python3
"""The Kubernetes manifests of contrib/kube/ against the tree's build
(tests/cli/kube_manifests.sh runs it; docs/kubernetes.md).

    kube_manifests.py --kube DIR --rootfs DIR --image REF --gate PROG
                      --enforce PROG --work DIR

Every YAML file parses, each document an object with apiVersion and kind;
each folder's kustomization lists exactly its manifests (examples,
*-example.yaml, aside).  In every pod (Pod, Deployment): each container but
"app" (the operator's) runs REF, the image `make gate-image` builds, and a
program its rootfs holds; each mount names a volume of the pod, each
volume a ConfigMap or Secret of the folder, each file the programs are
given lies under a mount whose source has that key; each port the
programs listen on off loopback is a containerPort, each probe names one,
and Prometheus' annotation the metrics port.  The uids hold the pattern:
the init container runs as root with CAP_NET_ADMIN alone, the gate as the
plan's gate-uid, every other container as another uid, non-root, with no
capability.  Services, budgets and network policies select the pods they
mean, on the ports those listen on.  Last, the programs themselves read
what they are given: each container's arguments, its files written out of
the ConfigMaps and Secrets under a scratch root, go to `aisb-gate -n` or
`aisb-enforce -n`, which must say OK.

Prints "ok - ..." / "not ok - ..." lines and the counts; exit 1 on any
failure.
"""
import argparse
import os
import re
import subprocess
import sys

import yaml

passed = 0
failed = 0


def ok(msg):
    global passed
    passed += 1
    print("ok - " + msg)


def bad(msg):
    global failed
    failed += 1
    print("not ok - " + msg)


def check(cond, msg):
    (ok if cond else bad)(msg)
    return cond


def load(kube):
    """{folder: [(file, doc), ...]} of every YAML file, parsed."""
    out = {}
    for root, _, files in sorted(os.walk(kube)):
        for f in sorted(files):
            if not f.endswith(".yaml"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, kube)
            try:
                with open(path) as fh:
                    docs = [d for d in yaml.safe_load_all(fh) if d is not None]
            except yaml.YAMLError as e:
                bad("%s: does not parse: %s" % (rel, e))
                continue
            good = all(isinstance(d, dict) and "apiVersion" in d and
                       "kind" in d for d in docs) and docs
            if check(good, "%s: %d document(s), each with apiVersion and "
                     "kind" % (rel, len(docs))):
                out.setdefault(root, []).extend((f, d) for d in docs)
    return out


def kustomizations(kube, folders):
    for root, docs in folders.items():
        rel = os.path.relpath(root, kube)
        kus = [d for f, d in docs if d["kind"] == "Kustomization"]
        files = sorted({f for f, d in docs if d["kind"] != "Kustomization" and
                        not f.endswith("-example.yaml")})
        if not check(len(kus) == 1, "%s: one kustomization" % rel):
            continue
        listed = sorted(kus[0].get("resources", []))
        check(listed == files, "%s: the kustomization lists %s (has %s)" %
              (rel, files, listed))


def objects(docs, kind):
    return {d["metadata"]["name"]: d for _, d in docs if d["kind"] == kind}


def pods(docs):
    """(name, pod metadata, pod spec) of every Pod and Deployment."""
    for _, d in docs:
        if d["kind"] == "Pod":
            yield d["metadata"]["name"], d["metadata"], d["spec"]
        elif d["kind"] == "Deployment":
            t = d["spec"]["template"]
            yield d["metadata"]["name"], t["metadata"], t["spec"]


def flag(args, name):
    """The value after flag name in args, or None."""
    for i, a in enumerate(args[:-1]):
        if a == name:
            return args[i + 1]
    return None


def port_of(addr):
    """"ADDR:PORT" -> (addr, port)."""
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


def source_keys(pod, vol, cms, secrets):
    """The keys (file names) a volume's ConfigMap or Secret provides."""
    if "configMap" in vol:
        cm = cms.get(vol["configMap"]["name"])
        return None if cm is None else set(cm.get("data", {}))
    if "secret" in vol:
        s = secrets.get(vol["secret"]["secretName"])
        return None if s is None else \
            set(s.get("stringData", {})) | set(s.get("data", {}))
    return None


def source_text(vol, key, cms, secrets):
    if "configMap" in vol:
        return cms[vol["configMap"]["name"]]["data"][key]
    s = secrets[vol["secret"]["secretName"]]
    return s["stringData"][key]


def plan_gate_uid(text):
    m = re.search(r"^gate-uid (\d+)$", text, re.M)
    return int(m.group(1)) if m else None


def run_programs(where, c, mounts, vols, cms, secrets, a, root):
    """The container's program on its own files, under a scratch root."""
    args = list(c.get("command", ["/usr/bin/aisb-gate"])[1:]) + \
        list(c.get("args", []))
    prog = c.get("command", ["/usr/bin/aisb-gate"])[0]
    # the mounts' files, paths inside them rewritten to the scratch root
    for m in mounts:
        v = vols[m["name"]]
        for key in source_keys(None, v, cms, secrets) or ():
            dst = root + m["mountPath"] + "/" + key
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            text = source_text(v, key, cms, secrets)
            for m2 in mounts:
                text = text.replace(m2["mountPath"] + "/",
                                    root + m2["mountPath"] + "/")
            with open(dst, "w") as fh:
                fh.write(text)
            os.chmod(dst, 0o600)
    args = [root + x if x.startswith("/") else x for x in args]
    if prog.endswith("/aisb-enforce"):
        cmd = [a.enforce] + args + ["-n"]
        want = "plan OK"
    else:
        cmd = [a.gate, "-n"] + args
        want = "configuration OK"
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    out = p.stdout + p.stderr
    check(p.returncode == 0 and want in out,
          "%s: %s -n reads what it is given (%s)" %
          (where, os.path.basename(prog), out.strip().splitlines()[-1]
           if out.strip() else "no output"))


def check_container(where, c, spec, meta, vols, cms, secrets, a, kind):
    image = c.get("image", "")
    if c["name"] == "app":
        return
    check(image == a.image, "%s: image %s (make gate-image builds %s)" %
          (where, image, a.image))
    check(c.get("imagePullPolicy") == "IfNotPresent",
          "%s: imagePullPolicy IfNotPresent" % where)
    prog = c.get("command", ["/usr/bin/aisb-gate"])[0]
    check(os.access(a.rootfs + prog, os.X_OK),
          "%s: %s is a program of the image" % (where, prog))
    mounts = c.get("volumeMounts", [])
    for m in mounts:
        check(m["name"] in vols, "%s: mount %s names a volume of the pod" %
              (where, m["name"]))
        check(m.get("readOnly") is True, "%s: mount %s read-only" %
              (where, m["name"]))
    args = list(c.get("command", [])[1:]) + list(c.get("args", []))
    for x in args:
        if not x.startswith("/"):
            continue
        under = [m for m in mounts if x.startswith(m["mountPath"] + "/")]
        if not check(len(under) == 1, "%s: %s lies under a mount" %
                     (where, x)):
            continue
        key = x[len(under[0]["mountPath"]) + 1:]
        keys = source_keys(None, vols.get(under[0]["name"], {}), cms, secrets)
        check(keys is not None and key in keys,
              "%s: %s is a key of the volume %s's source" %
              (where, x, under[0]["name"]))
    ports = {p["containerPort"]: p.get("name") for p in c.get("ports", [])}
    names = {v: k for k, v in ports.items() if v}
    for opt in ("-l", "--metrics"):
        v = flag(args, opt)
        if v is None:
            continue
        host, port = port_of(v)
        if host.startswith("127."):
            check(port not in ports, "%s: %s %s on loopback, not a "
                  "containerPort" % (where, opt, v))
        else:
            check(port in ports, "%s: %s %s is a containerPort" %
                  (where, opt, v))
    metrics = flag(args, "--metrics")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        pr = c.get(probe)
        if pr is None:
            continue
        p = pr["httpGet"]["port"]
        num = names.get(p, p)
        check(num in ports, "%s: %s's port %s is a containerPort" %
              (where, probe, p))
        check(metrics is not None and port_of(metrics)[1] == num,
              "%s: %s asks the metrics listener" % (where, probe))
        path = pr["httpGet"]["path"]
        check(path == ("/healthz" if probe == "livenessProbe" else "/readyz"),
              "%s: %s GET %s" % (where, probe, path))
    ann = meta.get("annotations", {})
    if "prometheus.io/port" in ann:
        check(metrics is not None and
              int(ann["prometheus.io/port"]) == port_of(metrics)[1],
              "%s: prometheus.io/port is the metrics port" % where)
    sc = c.get("securityContext", {})
    psc = spec.get("securityContext", {})
    caps = sc.get("capabilities", {})
    check(caps.get("drop") == ["ALL"], "%s: capabilities drop ALL" % where)
    check(sc.get("allowPrivilegeEscalation") is False,
          "%s: no privilege escalation" % where)
    check(sc.get("readOnlyRootFilesystem") is True,
          "%s: read-only root" % where)
    if kind == "init":
        check(caps.get("add") == ["NET_ADMIN"] and sc.get("runAsUser") == 0,
              "%s: root with CAP_NET_ADMIN alone" % where)
    else:
        check(not caps.get("add"), "%s: no capability added" % where)
        check(sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True,
              "%s: runAsNonRoot" % where)
    root = os.path.join(a.work, where.replace("/", "_").replace(" ", "_"))
    run_programs(where, c, mounts, vols, cms, secrets, a, root)


def check_pod(folder, name, meta, spec, cms, secrets, a):
    where = "%s/%s" % (os.path.basename(folder), name)
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for v in vols.values():
        check(source_keys(None, v, cms, secrets) is not None,
              "%s: volume %s's ConfigMap or Secret is in the folder" %
              (where, v["name"]))
    check(spec.get("automountServiceAccountToken") is False,
          "%s: no service account token" % where)
    inits = spec.get("initContainers", [])
    for c in inits:
        check_container("%s %s" % (where, c["name"]), c, spec, meta, vols,
                        cms, secrets, a, "init")
    for c in spec["containers"]:
        check_container("%s %s" % (where, c["name"]), c, spec, meta, vols,
                        cms, secrets, a, "main")
    # the uids: the plan's gate-uid is the gate's, and nobody else's
    psc = spec.get("securityContext", {})
    uid = {c["name"]: c.get("securityContext", {}).get(
        "runAsUser", psc.get("runAsUser")) for c in spec["containers"]}
    for c in inits:
        plan = flag(c.get("command", []) + c.get("args", []), "--plan")
        for m in c.get("volumeMounts", []):
            if plan and plan.startswith(m["mountPath"] + "/"):
                text = source_text(vols[m["name"]],
                                   plan[len(m["mountPath"]) + 1:], cms,
                                   secrets)
                g = plan_gate_uid(text)
                gates = [n for n, c2 in uid.items() if n != "app"]
                check(g is not None and all(uid[n] == g for n in gates),
                      "%s: the gate runs as the plan's gate-uid %s" %
                      (where, g))
                check(g is not None and all(u != g and u not in (None, 0)
                                            for n, u in uid.items()
                                            if n not in gates),
                      "%s: no other container runs as %s or as root" %
                      (where, g))


def selects(sel, labels):
    return all(labels.get(k) == v for k, v in sel.items())


def check_services(folder, docs):
    where = os.path.basename(folder)
    deps = objects(docs, "Deployment")
    pod_labels = [(n, d["spec"]["template"]["metadata"]["labels"],
                   d["spec"]["template"]["spec"]) for n, d in deps.items()]
    for name, s in objects(docs, "Service").items():
        hit = [(n, sp) for n, l, sp in pod_labels
               if selects(s["spec"]["selector"], l)]
        if not check(hit, "%s: service %s selects a deployment's pods" %
                     (where, name)):
            continue
        cports = {p.get("name"): p["containerPort"] for c in
                  hit[0][1]["containers"] for p in c.get("ports", [])}
        for p in s["spec"]["ports"]:
            check(p["targetPort"] in cports or
                  p["targetPort"] in cports.values(),
                  "%s: service %s targets containerPort %s" %
                  (where, name, p["targetPort"]))
    for name, b in objects(docs, "PodDisruptionBudget").items():
        check(any(selects(b["spec"]["selector"]["matchLabels"], l)
                  for _, l, _ in pod_labels),
              "%s: budget %s selects the deployment's pods" % (where, name))
    proxy_ports = {p["containerPort"] for _, _, sp in pod_labels
                   for c in sp["containers"] for p in c.get("ports", [])}
    examples = [d["metadata"].get("labels", {}) for f, d in docs
                if f.endswith("-example.yaml") and d["kind"] == "Pod"]
    for name, n in objects(docs, "NetworkPolicy").items():
        sel = n["spec"]["podSelector"].get("matchLabels", {})
        gate_side = any(selects(sel, l) for _, l, _ in pod_labels)
        client_side = any(selects(sel, l) for l in examples)
        check(gate_side or client_side, "%s: network policy %s selects the "
              "gate's pods or the example client's" % (where, name))
        for rule in n["spec"].get("egress", []) + n["spec"].get("ingress", []):
            for p in rule.get("ports", []):
                check(p["port"] in proxy_ports, "%s: network policy %s: "
                      "port %s is the gate's" % (where, name, p["port"]))
            for peer in rule.get("to", []) + rule.get("from", []):
                ps = peer.get("podSelector", {}).get("matchLabels")
                if ps:
                    check(any(selects(ps, l) for _, l, _ in pod_labels) or
                          any(selects(ps, l) for l in examples),
                          "%s: network policy %s: its peer %s is a pod of "
                          "the folder" % (where, name, ps))


def main():
    ap = argparse.ArgumentParser()
    for o in ("kube", "rootfs", "image", "gate", "enforce", "work"):
        ap.add_argument("--" + o, required=True)
    a = ap.parse_args()
    folders = load(a.kube)
    kustomizations(a.kube, folders)
    for folder, docs in sorted(folders.items()):
        cms = objects(docs, "ConfigMap")
        secrets = objects(docs, "Secret")
        for name, meta, spec in pods(docs):
            check_pod(folder, name, meta, spec, cms, secrets, a)
        check_services(folder, docs)
    print("# kube_manifests: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
