/*
 * aisb-run.exe: runs one command in a fresh AppContainer inside a Job
 * (docs/windows.md).  main only wires argv (UTF-16 from Windows, UTF-8
 * for the pure logic), the options and the exit code; run_win32.c runs.
 *
 * Exit codes: the command's own when it ran to its end; 124 on the
 * timeout (EXIT_TIMEOUT), 130 when cancelled or the caller died, 64 on a
 * bad command line, 77 when the sandbox could not be set up (nothing ran).
 */
#include "config.h"

#include <windows.h>
#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/exitcode.h"
#include "win32/win32.h"

int
main(void)
{
	struct winrun_opts o;
	struct winrun_result r;
	wchar_t **wargv;
	char **argv, *test_env = NULL, err[512], doc[WINRUN_DOC_MAX], e2[256];
	wchar_t tv[64];
	int argc, i, rc, n;

	/* no error dialogs from the runner or, inherited, its children */
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	if ((wargv = CommandLineToArgvW(GetCommandLineW(), &argc)) == NULL ||
	    (argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL) {
		fprintf(stderr, "aisb-run: cannot read the command line\n");
		return EXIT_USAGE;
	}
	for (i = 0; i < argc; i++)
		if ((argv[i] = w32_utf8(wargv[i])) == NULL) {
			fprintf(stderr, "aisb-run: argument %d is not valid "
			    "UTF-16\n", i);
			return EXIT_USAGE;
		}
	LocalFree(wargv);

	if (argc >= 2 && strcmp(argv[1], "--self-test-child") == 0)
		return w32_self_test_child(argc - 2, argv + 2);

	n = (int)GetEnvironmentVariableW(L"" WINRUN_TEST_ENV, tv,
	    sizeof(tv) / sizeof(tv[0]));
	if (n > 0 && n < (int)(sizeof(tv) / sizeof(tv[0])))
		test_env = w32_utf8(tv);
	if (winrun_opts_parse(&o, argc, argv, test_env, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb-run: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.help) {
		fputs(winrun_usage, stdout);
		return 0;
	}
	if (o.version) {
		printf("aisb-run %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (o.self_test)
		return w32_self_test(&o);
	if (o.clean != NULL)
		return w32_clean(o.clean, o.stage_root);

	rc = w32_run(&o, &r);
	if ((n = winrun_result_encode(&r, doc, sizeof(doc))) == -1) {
		fprintf(stderr, "aisb-run: the result does not fit %d bytes\n",
		    WINRUN_DOC_MAX);
		w32_run_finished();
		return EXIT_ENFORCE;
	}
	if (w32_write_atomic(o.result, doc, (size_t)n, e2, sizeof(e2)) == -1) {
		fprintf(stderr, "aisb-run: writing the result: %s\n", e2);
		w32_run_finished();
		return EXIT_ENFORCE;
	}
	w32_run_finished();
	if (r.error[0] != '\0')
		fprintf(stderr, "aisb-run: %s\n", r.error);
	return rc;
}
