noinst_LIBRARIES += common/libaisbcommon.a
common_libaisbcommon_a_SOURCES = common/log.c common/log.h \
	common/file.c common/file.h
