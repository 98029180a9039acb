/*
 * aisb: wires argv to the subcommands.  Nothing else lives here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "launch.h"
#include "log.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: aisb policy check FILE\n"
	    "       aisb policy print FILE\n"
	    "       aisb policy test FILE HOST[:PORT] [IP]\n"
	    "       aisb policy derive apt [--root DIR] | npm\n"
	    "       aisb version\n");
}

int
main(int argc, char **argv)
{
	log_init("aisb", 0);
	if (argc < 2) {
		usage(stderr);
		return EXIT_CONFIG;
	}
	if (strcmp(argv[1], "policy") == 0)
		return launch_cmd_policy(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 ||
	    strcmp(argv[1], "--version") == 0) {
		printf("aisb %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "aisb: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_CONFIG;
}
