EXTRA_DIST += docs/policy.md docs/performance.md docs/threat-model.md
dist_man_MANS += docs/aisb.1
EXTRA_DIST += docs/launcher.md docs/seccomp.md docs/agents.md
EXTRA_DIST += docs/record.md
EXTRA_DIST += docs/windows.md
EXTRA_DIST += docs/snapshot.md
EXTRA_DIST += docs/kubernetes.md
