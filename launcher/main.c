/*
 * aisb: wires argv to the subcommands.  Nothing else lives here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gates.h"
#include "image.h"
#include "launch.h"
#include "log.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: aisb [flags] [--] COMMAND [ARGS...]\n"
	    "       aisb [flags] --dry-run | --print-config | --print-policy |\n"
	    "            --print-plan | --print-containerfile\n"
	    "       aisb [flags] --gate NAME [--] COMMAND [ARGS...]\n"
	    "       aisb gate up NAME [--idle SECONDS|Nm|Nh] [--policy FILE]\n"
	    "       aisb gate down NAME | ls | status NAME\n"
	    "       aisb image build|ls\n"
	    "       aisb sessions ls | show ID\n"
	    "       aisb clean [--all] [--volumes[=GLOB]]\n"
	    "       aisb doctor\n"
	    "       aisb policy check FILE\n"
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
	if (strcmp(argv[1], "image") == 0)
		return launch_cmd_image(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return launch_cmd_doctor(argc - 1, argv + 1);
	if (strcmp(argv[1], "sessions") == 0)
		return launch_cmd_sessions(argc - 1, argv + 1);
	if (strcmp(argv[1], "clean") == 0)
		return launch_cmd_clean(argc - 1, argv + 1);
	if (strcmp(argv[1], "gate") == 0)
		return launch_cmd_gate(argc - 1, argv + 1);
	return launch_cmd_run(argc, argv);
}
