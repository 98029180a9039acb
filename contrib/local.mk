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

# Service units (docs/gate.md, "Running as a service"): a hardened system
# unit for the standalone gate, a user unit for named gates, a podman
# quadlet, the logrotate snippet.  Made from their .in at make time, with
# the install paths in them; the unit folders come from configure
# (--with-systemdsystemunitdir, --with-systemduserunitdir, --with-quadletdir).
AISB_UNITS = contrib/systemd/aisb-gate.service \
	contrib/systemd/aisb-gate@.service contrib/quadlet/aisb-gate.container \
	contrib/logrotate/aisb-gate
EXTRA_DIST += $(AISB_UNITS:=.in)
CLEANFILES += $(AISB_UNITS)
noinst_DATA += $(AISB_UNITS)
aisb_unit_gen = $(AM_V_GEN)$(MKDIR_P) $(@D) && sed \
	-e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	$(srcdir)/$@.in >$@.tmp && mv $@.tmp $@
contrib/systemd/aisb-gate.service: contrib/systemd/aisb-gate.service.in Makefile
	$(aisb_unit_gen)
contrib/systemd/aisb-gate@.service: contrib/systemd/aisb-gate@.service.in Makefile
	$(aisb_unit_gen)
contrib/quadlet/aisb-gate.container: contrib/quadlet/aisb-gate.container.in Makefile
	$(aisb_unit_gen)
contrib/logrotate/aisb-gate: contrib/logrotate/aisb-gate.in Makefile
	$(aisb_unit_gen)
if HAVE_SYSTEMD_SYSTEM
systemdsystemunit_DATA = contrib/systemd/aisb-gate.service
endif
if HAVE_SYSTEMD_USER
systemduserunit_DATA = contrib/systemd/aisb-gate@.service
endif
if HAVE_QUADLET
quadlet_DATA = contrib/quadlet/aisb-gate.container
endif
logrotatedir = $(sysconfdir)/logrotate.d
logrotate_DATA = contrib/logrotate/aisb-gate

# The gate's OCI image and the Kubernetes manifests (docs/kubernetes.md):
# `make gate-image` builds localhost/aisb-gate:VERSION offline, FROM
# scratch (contrib/gate-image/build.sh), the tag the manifests of
# contrib/kube/ name; tests/cli/kube_manifests.sh holds them to it.
AISB_GATE_IMAGE = localhost/aisb-gate:$(PACKAGE_VERSION)
# (folders: a manifest added is distributed without a line here)
EXTRA_DIST += contrib/gate-image contrib/kube
gate-image: aisb-gate aisb-enforce
	$(SHELL) $(srcdir)/contrib/gate-image/build.sh $(AISB_GATE_IMAGE) \
	    aisb-gate aisb-enforce
.PHONY: gate-image
