noinst_LIBRARIES += common/libaisbcommon.a
common_libaisbcommon_a_SOURCES = common/log.c common/log.h common/exitcode.h \
	common/file.c common/file.h common/buf.c common/buf.h \
	common/pcapng.c common/pcapng.h
# A bounded YAML tree: the policy library's and the agent recipes' reader
common_libaisbcommon_a_SOURCES += common/yamltree.c common/yamltree.h
common_libaisbcommon_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS)
# DNS messages (issue 16): the enforcer's stub and the gate's AISB-DNS entry
common_libaisbcommon_a_SOURCES += common/dnsmsg.c common/dnsmsg.h
# hex digits and the bounded JSON string reader (issue 28: one copy each)
common_libaisbcommon_a_SOURCES += common/hex.c common/hex.h \
	common/json.c common/json.h
# "did you mean": the nearest key or flag (policy schema, the launcher)
common_libaisbcommon_a_SOURCES += common/near.c common/near.h
# what a sandbox- or file-chosen string may put on a terminal (termsafe.h)
common_libaisbcommon_a_SOURCES += common/termsafe.c common/termsafe.h

# The special-purpose address table, alone: the policy library and the
# enforcer link it, and it needs nothing but libc (the enforcer is carried
# into the image with its shared libraries; this adds none).
noinst_LIBRARIES += common/libaisbaddr.a
common_libaisbaddr_a_SOURCES = common/addrclass.c common/addrclass.h
