# aisb-gate: the egress proxy.  See gate/gate.h for the file layout.
bin_PROGRAMS += aisb-gate
aisb_gate_SOURCES = \
	gate/gate.h gate/http.h gate/tls.h gate/ctlcmd.h gate/conn-int.h \
	gate/main.c gate/config.c gate/conn.c gate/decide.c gate/relay.c gate/splice.c gate/http.c gate/tls.c gate/dns.c \
	gate/audit.c gate/auth.c gate/control.c gate/ctlcmd.c
aisb_gate_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(CARES_CFLAGS) $(CRYPTO_CFLAGS)
aisb_gate_LDADD = $(POLICY_LIBS) common/libaisbcommon.a $(LIBEVENT_LIBS) \
	$(CARES_LIBS) $(CRYPTO_LIBS)
dist_man_MANS += docs/aisb-gate.8
EXTRA_DIST += docs/gate.md
