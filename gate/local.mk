# aisb-gate: the egress proxy.  See gate/gate.h for the file layout.
# GATE_SOURCES is all of it but main(): the fuzzer of the connection state
# machine (tests/gate.mk) links the same files as the program.
GATE_SOURCES = \
	gate/gate.h gate/http.h gate/tls.h gate/ctlcmd.h gate/conn-int.h \
	gate/config.c gate/proc.c gate/conn.c gate/decide.c gate/relay.c \
	gate/splice.c gate/http.c gate/tls.c gate/dns.c gate/audit.c \
	gate/auth.c gate/control.c gate/ctlcmd.c
bin_PROGRAMS += aisb-gate
aisb_gate_SOURCES = gate/main.c $(GATE_SOURCES)
aisb_gate_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(CARES_CFLAGS) $(CRYPTO_CFLAGS)
aisb_gate_LDADD = $(POLICY_LIBS) common/libaisbcommon.a $(LIBEVENT_LIBS) \
	$(CARES_LIBS) $(CRYPTO_LIBS)
dist_man_MANS += docs/aisb-gate.8
EXTRA_DIST += docs/gate.md

# --record (recgate): one more gate file, and its document
GATE_SOURCES += gate/record.c
EXTRA_DIST += docs/record.md
