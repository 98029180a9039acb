# aisb-gate integration tests: real sockets in a network namespace of their
# own, a real DNS responder, real curl.  See tests/integration/gate_lib.sh.
GATE_TESTS = \
	tests/integration/gate_basic.sh \
	tests/integration/gate_dns.sh \
	tests/integration/gate_http.sh \
	tests/integration/gate_load.sh \
	tests/integration/gate_signals.sh
TESTS += $(GATE_TESTS)
EXTRA_DIST += $(GATE_TESTS) tests/integration/gate_lib.sh \
	tests/integration/gate_dns.py tests/integration/gate_upstream.py
