# The launcher's modules as a convenience library, so that the unit tests
# link the very code aisb runs (doctor's checks build a session's argv).
# One folder per layer, each including only those below it
# (docs/launcher.md, "Layout"; tests/cli/layout.sh checks it):
#   main.c -> cmd/ -> session/ -> image/, win32/ -> policytools/, draft/ -> host/
noinst_LIBRARIES += launcher/libaisblauncher.a
# cmd/: the commands, their parser and help
launcher_libaisblauncher_a_SOURCES = launcher/cmd/cmd.h \
	launcher/cmd/cli.c launcher/cmd/cli.h launcher/cmd/run.c launcher/cmd/policy.c \
	launcher/cmd/sessions.c launcher/cmd/clean.c launcher/cmd/gate.c launcher/cmd/image.c \
	launcher/cmd/doctor.c launcher/cmd/doctorid.c launcher/cmd/agents.c launcher/cmd/snapshot.c \
	launcher/cmd/draft.c launcher/cmd/trust.c launcher/cmd/ask.c
# session/: one session, in the order it runs
launcher_libaisblauncher_a_SOURCES += \
	launcher/session/options.c launcher/session/options.h \
	launcher/session/options-int.h launcher/session/optvalue.c \
	launcher/session/optproject.c launcher/session/optconfig.c \
	launcher/session/spec.c launcher/session/spec.h \
	launcher/session/prepare.c launcher/session/prepare.h \
	launcher/session/run.c launcher/session/run.h \
	launcher/session/folder.c launcher/session/folder.h \
	launcher/session/gates.c launcher/session/gates.h \
	launcher/session/gates-int.h \
	launcher/session/podman.c launcher/session/podman.h \
	launcher/session/ids.c launcher/session/ids.h \
	launcher/session/seccomp.c launcher/session/seccomp.h \
	launcher/session/hostcas.c launcher/session/hostcas.h \
	launcher/session/gateproc.c launcher/session/gateproc.h \
	launcher/session/watch.c launcher/session/watch.h \
	launcher/session/recording.c launcher/session/recording.h \
	launcher/session/snapshot.c launcher/session/snapshot.h \
	launcher/session/enforcer.c launcher/session/enforcer.h \
	launcher/session/trust.c launcher/session/trust.h \
	launcher/session/wsmode.c launcher/session/wsmode.h \
	launcher/session/wsscan.c launcher/session/wsscan.h \
	launcher/session/gitguard.c launcher/session/gitguard.h \
	launcher/session/gitguard-int.h launcher/session/gitback.c \
	launcher/session/gitoffer.c launcher/session/protect.c \
	launcher/session/protect.h launcher/session/mounts.c \
	launcher/session/mounts.h \
	launcher/session/secrets.c launcher/session/secrets.h \
	launcher/session/writer.c launcher/session/writer.h \
	launcher/session/retain.c launcher/session/retain.h \
	launcher/session/ask.c launcher/session/ask.h \
	launcher/session/watchline.c launcher/session/watchline.h
# image/: the sandbox image, its tools and the agent recipes
launcher_libaisblauncher_a_SOURCES += \
	launcher/image/names.c launcher/image/names.h \
	launcher/image/pkgof.c launcher/image/pkgof.h \
	launcher/image/image.c launcher/image/image.h \
	launcher/image/image-t.h launcher/image/image-int.h \
	launcher/image/build.c launcher/image/base.c launcher/image/layer.c \
	launcher/image/agent.c launcher/image/agent.h \
	launcher/image/agent-int.h launcher/image/agent_files.c \
	launcher/image/agent_merge.c \
	launcher/image/tools.c launcher/image/tools.h \
	launcher/image/install_why.c launcher/image/install_why.h \
	launcher/image/store.c launcher/image/store.h
# policytools/: policies written from what a host, a workspace or a
# session shows
launcher_libaisblauncher_a_SOURCES += \
	launcher/policytools/derive.c launcher/policytools/derive_lock.c \
	launcher/policytools/derive.h \
	launcher/policytools/lockfile.c launcher/policytools/lockfile.h \
	launcher/policytools/lockfile-int.h \
	launcher/policytools/lockfile_formats.c \
	launcher/policytools/suggest.c launcher/policytools/suggest.h \
	launcher/policytools/polyaml.c launcher/policytools/polyaml.h \
	launcher/policytools/polyedit.c launcher/policytools/polyedit.h \
	launcher/policytools/denials.c launcher/policytools/denials.h \
	launcher/policytools/psl.c launcher/policytools/psl.h \
	launcher/policytools/reach.c launcher/policytools/reach.h
# draft/: a snapshot session's draft, shared with the Windows launcher
launcher_libaisblauncher_a_SOURCES += \
	launcher/draft/draft.c launcher/draft/draft.h \
	launcher/draft/draft-int.h launcher/draft/stage.c \
	launcher/draft/draft_posix.c launcher/draft/draft_ask.c \
	launcher/draft/undo.c launcher/draft/persist.c \
	launcher/draft/retire.c
# host/: plumbing that knows no launcher domain
launcher_libaisblauncher_a_SOURCES += \
	launcher/host/paths.c launcher/host/paths.h \
	launcher/host/proc.c launcher/host/proc.h \
	launcher/host/cache.c launcher/host/cache.h \
	launcher/host/facts.c launcher/host/facts.h \
	launcher/host/storage.c launcher/host/storage.h \
	launcher/host/elf.c launcher/host/elf.h
launcher_libaisblauncher_a_CPPFLAGS = $(LAUNCHER_CPPFLAGS) \
	-DAISB_POLICYDIR='"$(pkgdatadir)/policies"' \
	-DAISB_SECCOMP_PROFILE='"$(pkgdatadir)/seccomp.json"' \
	-DAISB_AGENTS_FILE='"$(pkgdatadir)/agents.yaml"'
launcher_libaisblauncher_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(CRYPTO_CFLAGS) \
	$(PSL_CFLAGS)
LAUNCHER_LIBS = launcher/libaisblauncher.a snap/libaisbsnap.a $(POLICY_LIBS) \
	common/libaisbcommon.a $(CRYPTO_LIBS) $(PSL_LIBS)

bin_PROGRAMS += aisb
aisb_SOURCES = launcher/main.c
aisb_CPPFLAGS = $(LAUNCHER_CPPFLAGS) \
	-DAISB_POLICYDIR='"$(pkgdatadir)/policies"'
aisb_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(CRYPTO_CFLAGS)
aisb_LDADD = $(LAUNCHER_LIBS)
