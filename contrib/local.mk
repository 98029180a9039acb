policiesdir = $(pkgdatadir)/policies
dist_policies_DATA = contrib/policies/default.yaml contrib/policies/github.yaml \
	contrib/policies/pypi.yaml contrib/policies/ci-runner.yaml
EXTRA_DIST += contrib/quickstart.sh contrib/apt-install.sh contrib/debian-packages
