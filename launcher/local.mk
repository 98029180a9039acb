# The launcher's modules as a convenience library, so that the unit tests
# link the very code aisb runs (doctor's checks build a session's argv).
noinst_LIBRARIES += launcher/libaisblauncher.a
launcher_libaisblauncher_a_SOURCES = launcher/cmd_policy.c launcher/derive.c \
	launcher/denials.c launcher/denials.h \
	launcher/options.c launcher/options.h launcher/run.c launcher/launch.h \
	launcher/session.c launcher/session.h launcher/proc.c launcher/proc.h \
	launcher/podman.c launcher/podman.h launcher/manage.c \
	launcher/gates.c launcher/gates.h launcher/gates-int.h \
	launcher/cmd_gate.c \
	launcher/image.c launcher/image.h launcher/cmd_image.c \
	launcher/doctor.c launcher/doctor.h \
	launcher/ids.c launcher/ids.h launcher/seccomp.c launcher/seccomp.h \
	launcher/watch.c launcher/cache.c launcher/cache.h \
	launcher/hostca.c launcher/hostca.h launcher/cli.c launcher/cli.h \
	launcher/agent.c launcher/agent.h \
	launcher/tools.c launcher/tools.h launcher/spec.c launcher/spec.h \
	launcher/record.c launcher/record.h \
	launcher/lockfile.c launcher/lockfile.h launcher/derive_lock.c
# --learn: aisb policy suggest, the learning session's summary
launcher_libaisblauncher_a_SOURCES += launcher/suggest.c launcher/suggest.h \
	launcher/psl.c launcher/psl.h
# snapshot sessions: the launcher's side of libaisbsnap (snap/)
launcher_libaisblauncher_a_SOURCES += launcher/snapshot.c launcher/snapshot.h \
	launcher/draft.c launcher/draft.h launcher/draft_posix.c \
	launcher/draft_ask.c
# a policy with hosts added, as YAML (agent recipes, --allow-from-lockfile)
launcher_libaisblauncher_a_SOURCES += launcher/polyaml.c
launcher_libaisblauncher_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/snap \
	-DAISB_POLICYDIR='"$(pkgdatadir)/policies"' \
	-DAISB_SECCOMP_PROFILE='"$(pkgdatadir)/seccomp.json"' \
	-DAISB_AGENTS_FILE='"$(pkgdatadir)/agents.yaml"'
launcher_libaisblauncher_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(CRYPTO_CFLAGS) \
	$(PSL_CFLAGS)
LAUNCHER_LIBS = launcher/libaisblauncher.a snap/libaisbsnap.a $(POLICY_LIBS) \
	common/libaisbcommon.a $(CRYPTO_LIBS) $(PSL_LIBS)

bin_PROGRAMS += aisb
aisb_SOURCES = launcher/main.c
aisb_CPPFLAGS = $(AM_CPPFLAGS) -DAISB_POLICYDIR='"$(pkgdatadir)/policies"'
aisb_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(CRYPTO_CFLAGS)
aisb_LDADD = $(LAUNCHER_LIBS)
