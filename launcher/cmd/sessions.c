/*
 * aisb sessions ls|show|verify ID: the sessions of the state folder
 * (session/folder.c), their records, their gates' decisions.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "file.h"
#include "policytools/denials.h"
#include "session/folder.h"
#include "session/recording.h"
#include "session/snapshot.h"

#define MANAGE_MAX_RECORD	(64 * 1024)	/* bytes of a record read */

/* The value of "key value" in a record, into out. */
static const char *
record_field(const char *rec, const char *key, char *out, size_t len)
{
	size_t		 klen = strlen(key);
	const char	*p = rec, *eol;

	out[0] = '\0';
	while (p != NULL && *p != '\0') {
		eol = strchr(p, '\n');
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			size_t n = eol != NULL ? (size_t)(eol - p - klen - 1) :
			    strlen(p + klen + 1);

			snprintf(out, len, "%.*s", (int)n, p + klen + 1);
			break;
		}
		p = eol != NULL ? eol + 1 : NULL;
	}
	return out;
}

static int
sessions_ls(void)
{
	struct launch_sess	*v;
	char			 dir[PATH_MAX], path[PATH_MAX], when[32];
	char			 cmd[256], start[32], err[PATH_MAX + 64], *rec;
	char			 exitc[16];
	size_t			 n, i, len;
	time_t			 t;

	if (launch_sessions_dir(dir, sizeof(dir)) == -1)
		return EXIT_CONFIG;
	if ((v = launch_sessions_list(dir, &n)) == NULL)
		return 1;
	printf("%-24s  %-20s  %-7s  %s\n", "SESSION", "STARTED (UTC)", "EXIT",
	    "COMMAND");
	for (i = 0; i < n; i++) {
		if (file_path_join(path, sizeof(path), dir, v[i].id) == -1)
			continue;
		rec = file_read_in(path, "record", MANAGE_MAX_RECORD, &len, err,
		    sizeof(err));
		t = v[i].mtime;
		if (rec == NULL && errno != ENOENT) {
			fprintf(stderr, "aisb: %s\n", err);
			snprintf(exitc, sizeof(exitc), "?");
			snprintf(cmd, sizeof(cmd), "?");
		} else if (rec != NULL) {
			record_field(rec, "started", start, sizeof(start));
			t = (time_t)strtoll(start, NULL, 10);
			record_field(rec, "exit", exitc, sizeof(exitc));
			record_field(rec, "command", cmd, sizeof(cmd));
		} else {
			/* no record: running, or its launcher was killed */
			snprintf(exitc, sizeof(exitc), "%s",
			    launch_session_launcher(dir, v[i].id) == 0 ?
			    "killed" : "running");
			snprintf(cmd, sizeof(cmd), "?");
		}
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime(&t));
		printf("%-24s  %-20s  %-7s  %s\n", v[i].id, when, exitc, cmd);
		free(rec);
	}
	free(v);
	return 0;
}

/*
 * A record as it is, but its times (seconds since the epoch in the file,
 * for programs) as people read them: "started 2026-11-30 23:10:04 UTC".
 */
static void
print_record(const char *rec)
{
	const char	*line, *nl;
	char		*end, when[40];
	long long	 secs;
	time_t		 t;
	struct tm	 tm;
	size_t		 len;

	for (line = rec; *line != '\0'; line = nl != NULL ? nl + 1 :
	    line + len) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		if ((strncmp(line, "started ", 8) == 0 ||
		    strncmp(line, "ended ", 6) == 0) &&
		    (secs = strtoll(strchr(line, ' ') + 1, &end, 10)) >= 0 &&
		    end == line + len && end[-1] != ' ' &&
		    (t = (time_t)secs, gmtime_r(&t, &tm) != NULL) &&
		    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC",
		    &tm) > 0) {
			printf("%.*s %s\n", (int)(strchr(line, ' ') - line),
			    line, when);
			continue;
		}
		printf("%.*s\n", (int)len, line);
	}
}

/* aisb sessions verify ID: 0 all match, 1 something differs, 78 no record */
static int
sessions_verify(const char *want)
{
	char	 path[PATH_MAX], err[PATH_MAX + 256];
	int	 rc;

	if ((rc = launch_session_find(want, path, sizeof(path))) != 0)
		return rc;
	if ((rc = launch_record_verify(path, stdout, err, sizeof(err))) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_CONFIG;
	}
	return rc;
}

static int
sessions_show(const char *want)
{
	struct launch_denials	*d;
	char			 path[PATH_MAX], logpath[PATH_MAX], *rec;
	char			 err[PATH_MAX + 64];
	size_t			 len;
	int			 rc;

	if ((rc = launch_session_find(want, path, sizeof(path))) != 0)
		return rc;
	printf("folder %s\n", path);
	if ((rec = file_read_in(path, "record", MANAGE_MAX_RECORD, &len, err,
	    sizeof(err))) != NULL)
		print_record(rec);
	else if (errno != ENOENT)
		printf("(record refused: %s)\n", err);
	else
		printf("(no record: the session is running, or its launcher "
		    "was killed)\n");
	launch_record_show(path, stdout);
	launch_snap_show(path, stdout);	/* a snapshot session's draft now */
	if (file_path_join(logpath, sizeof(logpath), path,
	    "audit.jsonl") == 0 &&
	    (d = malloc(sizeof(*d))) != NULL) {
		launch_denials_init(d);
		if (launch_denials_read(d, logpath) == 0) {
			printf("# audit: %lu allowed, %lu denied, %lu failed",
			    d->allowed, d->denied, d->failed);
			if (d->malformed > 0)
				printf(", %lu malformed", d->malformed);
			printf("; lines in %s\n", logpath);
			/* the very lines the session ended with */
			launch_denials_print(d, stdout, "# ", NULL);
			launch_denials_print_tools(d, stdout, "# ");
		}
		free(d);
	}
	free(rec);
	return 0;
}

int
launch_cmd_sessions(int argc, char **argv)
{
	struct cli_args	 a;
	char		 name[32];
	int		 rc;

	if ((rc = launch_cli_group("sessions", argc, argv)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	snprintf(name, sizeof(name), "sessions %s", argv[1]);
	if ((rc = launch_cli_parse(name, argc - 2, argv + 2, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[1], "ls") == 0)
		return sessions_ls();
	if (strcmp(argv[1], "verify") == 0)
		return sessions_verify(a.pos[0]);
	return sessions_show(a.pos[0]);
}
