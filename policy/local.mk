noinst_LIBRARIES += policy/libaisbpolicy.a
policy_libaisbpolicy_a_SOURCES = \
	policy/policy.h policy/policy-int.h \
	policy/load-int.h policy/load.c policy/errors.c policy/yaml.c policy/schema.c \
	policy/compile.c policy/info.c policy/target.c policy/addr.c \
	policy/match.c policy/regex.c policy/dump.c policy/fix.c
# issue 16: is a name allowed on any port (the gate's DNS entry)
policy_libaisbpolicy_a_SOURCES += policy/anyport.c
# issue 29: inspected hosts: inspect:, requests:, secrets:
policy_libaisbpolicy_a_SOURCES += policy/inspect.c policy/request.c
policy_libaisbpolicy_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(PCRE2_CFLAGS) $(CRYPTO_CFLAGS)
# common/libaisbcommon.a for the string builder (buf.c, fix.c's): libc
# only, nothing of it in policy.h
POLICY_LIBS = policy/libaisbpolicy.a common/libaisbcommon.a \
	common/libaisbaddr.a $(YAML_LIBS) $(PCRE2_LIBS) $(CRYPTO_LIBS)
