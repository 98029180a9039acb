# aisb-gate: the egress proxy.  See gate/gate.h for the file layout.
# GATE_SOURCES is all of it but main(), built once as a convenience library
# (as the enforcer's): the program, the fault-injected gate, the unit test
# and the fuzzers (tests/gate.mk) link the same objects.  A new gate file
# is one more line here.
GATE_SOURCES = \
	gate/gate.h gate/http.h gate/tls.h gate/ctlcmd.h \
	gate/config.c gate/proc.c gate/http.c gate/tls.c gate/dns.c \
	gate/audit.c gate/auth.c gate/control.c gate/ctlcmd.c \
	gate/metrics.c gate/users.c gate/sockaddr.c gate/health.c \
	gate/watch.c
# The connection object, one struct gate_conn across the files of
# gate/conn/ (conn-int.h): they call each other, and nothing else in the
# tree may.
GATE_SOURCES += gate/conn/conn-int.h gate/conn/conn.c gate/conn/decide.c \
	gate/conn/relay.c gate/conn/splice.c gate/conn/record.c \
	gate/conn/dnsgate.c gate/conn/transparent.c gate/conn/socks.c \
	gate/conn/recheck.c gate/conn/view.c gate/conn/ask.c
# issue 29, inspected hosts: TLS terminated, requests decided, secrets
# added; the connection's side in gate/conn/ (inspect-int.h), the CA, the
# header rewriting and the secrets' store beside the other gate files
GATE_SOURCES += gate/conn/inspect-int.h gate/conn/inspect.c \
	gate/conn/inspect_http.c \
	gate/conn/inspect_pool.c \
	gate/mint.h gate/mint.c gate/inject.h gate/inject.c gate/secrets.c \
	gate/override.h gate/override.c
# issue 31: the names behind the synthetic addresses AISB-DNS hands out
# (any TCP port by name); SOCKS5's messages (pure, fuzzed)
GATE_SOURCES += gate/synth.c gate/socksmsg.h gate/socksmsg.c
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

