/*
 * The fixture of the snap/ unit tests that stage a tree and compute its
 * change set: a temporary folder with src/ (the tree) and stage/, the
 * default rules and limits, and lookups in a change set.
 */
#ifndef AISB_TEST_SNAP_FX_H
#define AISB_TEST_SNAP_FX_H

#include "snap_util.h"

struct fx {
	char			*base;
	char			 src[4096], stage[4096];
	struct snap_rules	*rules;
	struct snap_limits	 lim;
	struct snap_manifest	*m;
	struct snap_changes	*c;
	char			 err[1024];
};

TU int
setup(void **state)
{
	struct fx	*f = calloc(1, sizeof(*f));

	f->base = tmpdir();
	xsnprintf(f->src, sizeof(f->src), "%s/src", f->base);
	xsnprintf(f->stage, sizeof(f->stage), "%s/stage", f->base);
	mkd(f->base, "src", 0755);
	f->rules = snap_rules_new();
	snap_limits_default(&f->lim);
	*state = f;
	return 0;
}

TU int
teardown(void **state)
{
	struct fx	*f = *state;

	rm_rf(f->base);
	free(f->base);
	snap_rules_free(f->rules);
	snap_manifest_free(f->m);
	snap_changes_free(f->c);
	free(f);
	return 0;
}

TU const struct snap_change *
change_at(const struct snap_changes *c, const char *path)
{
	const struct snap_change	*x;
	size_t				 i;

	for (i = 0; (x = snap_changes_get(c, i)) != NULL; i++)
		if (strcmp(x->path, path) == 0)
			return x;
	return NULL;
}

TU enum snap_change_kind
kind_at(const struct snap_changes *c, const char *path)
{
	const struct snap_change	*x = change_at(c, path);

	if (x == NULL)
		fail_msg("no change at %s", path);
	return x->kind;
}

#endif
