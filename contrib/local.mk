policiesdir = $(pkgdatadir)/policies
dist_policies_DATA = contrib/policies/default.yaml contrib/policies/github.yaml \
	contrib/policies/pypi.yaml contrib/policies/ci-runner.yaml
EXTRA_DIST += contrib/quickstart.sh contrib/apt-install.sh contrib/debian-packages

# aisb's seccomp profile (docs/seccomp.md): installed as
# $(pkgdatadir)/seccomp.json, and copied next to aisb in the build tree,
# where an uninstalled aisb looks first.
dist_pkgdata_DATA = contrib/seccomp.json contrib/agents.yaml
noinst_DATA = aisb-seccomp.json aisb-default-policy.yaml aisb-agents.yaml
aisb-seccomp.json: $(srcdir)/contrib/seccomp.json
	$(AM_V_GEN)cp $(srcdir)/contrib/seccomp.json $@
CLEANFILES += aisb-seccomp.json

# The shipped default policy, likewise: an uninstalled aisb uses the copy
# next to it, an installed one $(policiesdir)/default.yaml (options.c).
aisb-default-policy.yaml: $(srcdir)/contrib/policies/default.yaml
	$(AM_V_GEN)cp $(srcdir)/contrib/policies/default.yaml $@
CLEANFILES += aisb-default-policy.yaml

# The agent recipes (docs/agents.md), likewise: $(pkgdatadir)/agents.yaml
# installed, aisb-agents.yaml next to an uninstalled aisb (agent.c).
aisb-agents.yaml: $(srcdir)/contrib/agents.yaml
	$(AM_V_GEN)cp $(srcdir)/contrib/agents.yaml $@
CLEANFILES += aisb-agents.yaml

# Shell completion: both ask the aisb being completed for its command
# table (aisb help --commands / --flags), so neither can drift from it.
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = contrib/completion/aisb
zshcompletiondir = $(datadir)/zsh/site-functions
dist_zshcompletion_DATA = contrib/completion/_aisb
