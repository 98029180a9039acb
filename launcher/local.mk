bin_PROGRAMS += aisb
aisb_SOURCES = launcher/main.c launcher/cmd_policy.c launcher/derive.c \
	launcher/options.c launcher/options.h launcher/run.c launcher/launch.h \
	launcher/session.c launcher/session.h launcher/proc.c launcher/proc.h \
	launcher/podman.c launcher/podman.h launcher/manage.c \
	launcher/gates.c launcher/gates.h
aisb_SOURCES += launcher/image.c launcher/image.h launcher/doctor.c \
	launcher/ids.c launcher/ids.h
aisb_CPPFLAGS = $(AM_CPPFLAGS) -DAISB_POLICYDIR='"$(pkgdatadir)/policies"'
aisb_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(CRYPTO_CFLAGS)
aisb_LDADD = $(POLICY_LIBS) common/libaisbcommon.a $(CRYPTO_LIBS)
