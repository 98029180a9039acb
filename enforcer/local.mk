# aisb-enforce: nftables inside the sandbox, then every privilege dropped.
# The library holds everything but main() so that tests link the same code.
noinst_LIBRARIES += enforcer/libaisbenforce.a
enforcer_libaisbenforce_a_SOURCES = \
	enforcer/plan.c enforcer/plan.h \
	enforcer/nft.c enforcer/nft_expr.c enforcer/nft_nat.c \
	enforcer/nft.h enforcer/nft-int.h enforcer/batch.c \
	enforcer/verify.c enforcer/netlink.c enforcer/netlink.h \
	enforcer/privdrop.c enforcer/privdrop.h \
	enforcer/refresh.c enforcer/refresh.h \
	enforcer/record.c enforcer/record.h \
	enforcer/supervise.c enforcer/supervise.h \
	enforcer/stub.c enforcer/stub.h \
	enforcer/envfile.c enforcer/envfile.h \
	enforcer/hostca.c enforcer/hostca.h \
	enforcer/tproxy.c enforcer/tproxy.h enforcer/tproxy_head.c \
	enforcer/tproxy_tool.c
enforcer_libaisbenforce_a_CFLAGS = $(AM_CFLAGS) $(NFTNL_CFLAGS) $(CARES_CFLAGS)
# libnftnl from its static archive, its libmnl calls answered by mnl.c:
# one netlink layer in every build, the one a session runs (mnl.c).
noinst_LIBRARIES += enforcer/libaisbmnl.a
enforcer_libaisbmnl_a_SOURCES = enforcer/mnl.c
enforcer_libaisbmnl_a_CFLAGS = $(AM_CFLAGS) $(NFTNL_CFLAGS)
ENFORCE_LIBS = enforcer/libaisbenforce.a common/libaisbcommon.a common/libaisbaddr.a \
	$(NFTNL_A) enforcer/libaisbmnl.a $(CARES_LIBS)

bin_PROGRAMS += aisb-enforce
aisb_enforce_SOURCES = enforcer/main.c enforcer/nonss.c
aisb_enforce_CFLAGS = $(AM_CFLAGS) $(NFTNL_CFLAGS) $(CARES_CFLAGS)
# static (configure: ENFORCE_LDFLAGS), and never into glibc's NSS: c-ares'
# service look-ups are answered by nonss.c
aisb_enforce_LDFLAGS = $(ENFORCE_LDFLAGS) \
	-Wl,--wrap=getservbyname -Wl,--wrap=getservbyport_r
aisb_enforce_LDADD = $(ENFORCE_LIBS)

dist_man_MANS += docs/aisb-enforce.8
EXTRA_DIST += docs/enforcer.md
# docs/record.md: its "Direct mode" section is the recorder's (record.c)
EXTRA_DIST += docs/record.md
