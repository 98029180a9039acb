#!/bin/bash
# End to end: a pip CLI installed into an image layer by a gated sandbox
# session (docs/launcher.md, "Tools"), from a package index the test
# serves on the host's loopback as pypi.test (the test's DNS server),
# named to pip the way users do (PIP_INDEX_URL).
#
#   aisb --pip aisbhello==1.0 -- aisbhello   runs the wheel's console script
#   /opt/aisb/pip is root's and read-only to the sandbox user; pip's report
#   with the wheel's sha256 is in the image
#   the install went through the gate (the index served it, the install
#   session's audit allowed it); a local find-links path is not passed in
#   --pip aisbhello==1.1 is another tag; the 1.0 image stays
#   a wheel whose sha256 is not the one the index gives fails the install
#   with the step and the session named, and nothing is tagged
#
# The wheels are made here (zipfile, no setuptools).  Needs root, podman,
# mmdebstrap; builds in a podman store of its own, which the EXIT trap
# removes, failure or not.  Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start pip mmdebstrap "$PY"
e2e_seed_base
unset PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE
mkdir -p "$tmp/idx"
tag_of() { sed -n 's/^aisb: image \(localhost\/aisb:[0-9a-f]*\) built in .*/\1/p' "$1" | tail -1; }

# --- wheels and a PEP 503 index of them -----------------------------------
# args: index root, name, version, "bad" to give the index a wrong sha256
cat >"$tmp/mkwheel.py" <<'EOF'
import base64, hashlib, os, sys, zipfile
root, name, ver, how = sys.argv[1:5]
files = {
    f"{name}/__init__.py": f'def main():\n    print("{name} {ver} from the test index")\n',
    f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n",
    f"{name}-{ver}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: aisb-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    f"{name}-{ver}.dist-info/entry_points.txt": f"[console_scripts]\n{name} = {name}:main\n",
}
def rec(data):
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={d},{len(data)}"
record = "".join(f"{p},{rec(c.encode())}\n" for p, c in files.items())
files[f"{name}-{ver}.dist-info/RECORD"] = record + f"{name}-{ver}.dist-info/RECORD,,\n"
whl = f"{name}-{ver}-py3-none-any.whl"
os.makedirs(f"{root}/files", exist_ok=True)
with zipfile.ZipFile(f"{root}/files/{whl}", "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
h = hashlib.sha256(open(f"{root}/files/{whl}", "rb").read()).hexdigest()
if how == "bad":
    h = hashlib.sha256(b"not the wheel").hexdigest()
os.makedirs(f"{root}/simple/{name}", exist_ok=True)
with open(f"{root}/simple/{name}/index.html", "a") as f:
    f.write(f'<a href="../../files/{whl}#sha256={h}">{whl}</a>\n')
print(h)
EOF
sum10=$("$PY" "$tmp/mkwheel.py" "$tmp/idx" aisbhello 1.0 good)
"$PY" "$tmp/mkwheel.py" "$tmp/idx" aisbhello 1.1 good >/dev/null
"$PY" "$tmp/mkwheel.py" "$tmp/idx" aisbhello 1.2 bad >/dev/null

e2e_serve_dir "$tmp/idx" idx
cat >"$tmp/zone.json" <<'EOF'
{"pypi.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers dns
port=$(e2e_port idx)
# what `aisb policy derive pip` allows for this index, plus the test's DNS
# server and the loopback range the index is on
cat >"$tmp/install.yaml" <<EOF
version: 1
allow:
  - host: pypi.test
    ports: [$port]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF
cat >"$tmp/none.yaml" <<'EOF'
version: 1
allow: []
EOF
export AISB_INSTALL_POLICY=$tmp/install.yaml
export PIP_INDEX_URL=http://pypi.test:$port/simple PIP_TRUSTED_HOST=pypi.test:$port
# a local path: it means nothing inside, and must not be passed in
export PIP_FIND_LINKS=$tmp/no-such-wheels

rc=0; derived=$("$aisb" policy derive pip 2>&1) || rc=$?
if [ "$rc" = 0 ] && grep -q "host: pypi.test" <<<"$derived"; then
	ok "aisb policy derive pip names the test's index"
else
	bad "derive pip (exit $rc): $derived"
fi

echo "# building the base, the pip builder image, the install, the layer"
rc=0
t0=$(date +%s)
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --pip aisbhello==1.0 \
    -- aisbhello) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
t1=$(date +%s)
check "aisb --pip aisbhello==1.0 -- aisbhello: exit" "$rc" 0
check "... runs the console script" "$(cat "$tmp/out")" "aisbhello 1.0 from the test index"
echo "# first run with every image built: $((t1 - t0)) s"
tag10=$(tag_of "$tmp/err")
if grep -q 'tools layer, no network' "$tmp/err" && [ -n "$tag10" ]; then
	ok "the tools layer was built without network ($tag10)"
else
	bad "no tools layer build in: $(cat "$tmp/err")"
fi
if grep -Eq '"GET /files/aisbhello-1.0-py3-none-any.whl HTTP' "$tmp/idx.log"; then
	ok "the index served the wheel"
else
	bad "index log: $(cat "$tmp/idx.log")"
fi
sid=$("$aisb" sessions ls | awk '$5 == "python3" && $8 == "install" { print $1 }' | tail -1)
if [ -n "$sid" ] && "$aisb" sessions show "$sid" >"$tmp/show" 2>&1 &&
    grep -Eq '^# audit: [1-9][0-9]* allowed, 0 denied' "$tmp/show"; then
	ok "the install session is in aisb sessions, its requests allowed by the gate"
else
	bad "install session '$sid': $(grep '^# audit' "$tmp/show" 2>/dev/null)"
fi
# pip says "Looking in links: ..." whenever it is given find-links
if grep -q '^Looking in indexes: http://pypi.test:' "$tmp/err" &&
    ! grep -q 'Looking in links' "$tmp/err"; then
	ok "the index is passed in, a local find-links path is not"
else
	bad "pip's sources: $(grep 'Looking in' "$tmp/err")"
fi

cat >"$tmp/ws/inside.sh" <<'EOF'
#!/bin/sh
stat -c '%u:%g %a' /opt/aisb/pip /opt/aisb/pip/bin/aisbhello /opt/aisb/pip/aisbhello/__init__.py
if touch /opt/aisb/pip/x 2>/dev/null || touch /opt/aisb/pip/aisbhello/__init__.py 2>/dev/null; then
	echo writable
else
	echo readonly
fi
find /opt/aisb/pip ! -user 0 | wc -l
grep -o 'sha256=[0-9a-f]*' /opt/aisb/pip/pip-report.json
command -v aisbhello
python3 -c 'import aisbhello; print(aisbhello.__file__)'
EOF
chmod 0755 "$tmp/ws/inside.sh"
rc=0
(cd "$tmp/ws" && "$aisb" --quiet --policy "$tmp/none.yaml" \
    --pip aisbhello==1.0 -- ./inside.sh) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "the same spec again: exit" "$rc" 0
if grep -q 'installing pip tools' "$tmp/err"; then bad "installed again"
else ok "the same spec reuses the image"; fi
check "/opt/aisb/pip is root's, 0755" "$(sed -n 1p "$tmp/out")" "0:0 755"
check "the console script is root's, 0755" "$(sed -n 2p "$tmp/out")" "0:0 755"
check "a module is root's, 0644" "$(sed -n 3p "$tmp/out")" "0:0 644"
check "the sandbox user cannot write the tree" "$(sed -n 4p "$tmp/out")" readonly
check "no file of the tree is anyone's but root's" "$(sed -n 5p "$tmp/out")" 0
check "pip's report holds the wheel's sha256" "$(sed -n 6p "$tmp/out")" "sha256=$sum10"
check "aisbhello is found through PATH" "$(sed -n 7p "$tmp/out")" /opt/aisb/pip/bin/aisbhello
check "the system python imports the tool's modules (the .pth)" \
    "$(sed -n 8p "$tmp/out")" /opt/aisb/pip/aisbhello/__init__.py

rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --pip aisbhello==1.1 \
    -- aisbhello) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "--pip aisbhello==1.1: exit" "$rc" 0
check "... runs 1.1" "$(cat "$tmp/out")" "aisbhello 1.1 from the test index"
tag11=$(tag_of "$tmp/err")
if [ -n "$tag11" ] && [ "$tag11" != "$tag10" ]; then ok "another version, another tag"
else bad "tags: 1.0 '$tag10', 1.1 '$tag11'"; fi
if podman image exists "$tag10"; then ok "the 1.0 image stays"
else bad "the 1.0 image is gone"; fi
images=$("$aisb" image ls)
if grep -q "pip:aisbhello==1.1" <<<"$images"; then ok "aisb image ls shows pip tools"
else bad "image ls: $images"; fi

# the index's sha256 is not the wheel's: pip refuses it, nothing tagged
rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --pip aisbhello==1.2 \
    -- aisbhello) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok "a wheel that does not match its hash fails ($rc)"
else bad "a wheel with a wrong hash was installed"; fi
if grep -q 'HASHES' "$tmp/err"; then ok "... pip says the hashes do not match"
else bad "pip's message: $(grep -i hash "$tmp/err")"; fi
if grep -Eq '^aisb: install: pip install in session [0-9a-f]{24} exited with status [0-9]+ ' "$tmp/err"; then
	ok "... one line names the step and the session"
else
	bad "no step/session line in: $(tail -3 "$tmp/err")"
fi
images=$("$aisb" image ls)
if grep -q "aisbhello==1.2" <<<"$images"; then bad "a 1.2 image was tagged"
else ok "nothing half-built is tagged"; fi
check "no scratch folder is left" "$(ls -A "$XDG_STATE_HOME/aisb/install" | wc -l)" 0

rc=0
"$aisb" --pip aisbhello -- true >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "--pip without ==VERSION: exit" "$rc" 78

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
