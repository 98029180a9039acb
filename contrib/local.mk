EXTRA_DIST += contrib/policies
