# aisb image and doctor, end to end with real podman: builds the offline
# base with mmdebstrap in a podman store of its own (needs root and
# mmdebstrap; skips with 77 otherwise).  About 4 minutes on 2 cores.
TESTS += tests/e2e/image.sh
EXTRA_DIST += tests/e2e/image.sh
