# aisb-gate: the egress proxy.  See gate/gate.h for the file layout.
# GATE_SOURCES is all of it but main(), built once as a convenience library
# (as the enforcer's): the program, the fault-injected gate, the unit test
# and the fuzzers (tests/gate.mk) link the same objects.  A new gate file
# is one more line here.
GATE_SOURCES = \
	gate/gate.h gate/http.h gate/tls.h gate/ctlcmd.h gate/conn-int.h \
	gate/config.c gate/proc.c gate/conn.c gate/decide.c gate/relay.c \
	gate/splice.c gate/http.c gate/tls.c gate/dns.c gate/audit.c \
	gate/auth.c gate/control.c gate/ctlcmd.c \
	gate/metrics.c gate/users.c gate/record.c
# issue 16: the AISB-DNS entry
GATE_SOURCES += gate/dnsgate.c
GATE_SOURCES += gate/transparent.c
# issue 29: inspected hosts: TLS terminated, requests decided, secrets added
GATE_SOURCES += gate/inspect-int.h gate/inspect.c gate/inspect_http.c \
	gate/inject.h gate/inject.c gate/mint.c gate/secrets.c
GATE_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBEVENT_OPENSSL_CFLAGS) \
	$(CARES_CFLAGS) $(CRYPTO_CFLAGS) $(SSL_CFLAGS)
noinst_LIBRARIES += gate/libaisbgate.a
gate_libaisbgate_a_SOURCES = $(GATE_SOURCES)
gate_libaisbgate_a_CFLAGS = $(GATE_CFLAGS)
GATE_LIBS = gate/libaisbgate.a $(POLICY_LIBS) common/libaisbcommon.a \
	$(LIBEVENT_OPENSSL_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS) $(SSL_LIBS) \
	$(CRYPTO_LIBS)

bin_PROGRAMS += aisb-gate
aisb_gate_SOURCES = gate/main.c
aisb_gate_CFLAGS = $(GATE_CFLAGS)
aisb_gate_LDADD = $(GATE_LIBS)
dist_man_MANS += docs/aisb-gate.8
EXTRA_DIST += docs/gate.md

