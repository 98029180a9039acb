bin_PROGRAMS += aisb
aisb_SOURCES = launcher/main.c launcher/cmd_policy.c launcher/derive.c launcher/launch.h
aisb_LDADD = $(POLICY_LIBS) common/libaisbcommon.a
