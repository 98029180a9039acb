/*
 * The launcher unit tests' one scratch folder: the includer defines
 *
 *	static char dir[] = "/tmp/aisb-NAME-XXXXXX";
 *
 * first, and passes setup and teardown to cmocka_run_group_tests: the
 * folder is made before the group and removed, whatever it holds, after.
 */
#ifndef AISB_TEST_TMPDIR_H
#define AISB_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char	 cmd[64 + sizeof(dir)];

	(void)state;
	/* the test's own folder, made by mkdtemp: no quote in it */
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
