/*
 * The question at the end of a snapshot session (launcher/draft.h,
 * draft_end_ask; docs/snapshot.md, "Approval"), shared by both launchers:
 * the terminal the command's output may have left hiding text put back
 * in order, aisb's block opened by a line with a mark the command cannot
 * know, the summary, and the question, which repeats the mark.  Portable
 * C: the terminal itself through draft_os_*.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "draft/draft.h"

/*
 * What puts a terminal back where what aisb prints is seen as printed,
 * whatever the command's last output left: a sequence cut short (CAN), a
 * string that swallows text (an OSC, DCS or APC left open: ST), a shifted
 * or line-drawing character set, concealed or same-colour text, a hidden
 * cursor, origin or insert mode (DECSTR, and each on its own for
 * terminals without it), the alternate screen, a scroll region, a link
 * left open (OSC 8), mouse reports that would type into the answer,
 * output held back (synchronized updates); then a fresh line, and what
 * the command left right of and below the cursor erased, so no forged
 * line stands after aisb's.  Nothing above the cursor moves or goes: the
 * command's own output stays to be read.
 */
static const char term_reset[] =
	"\030\033\\\017\033(B\033[!p\033[0m\033[?25h"
	/* the normal screen (the cursor saved first: outside the alternate
	 * screen, 1049l restores a saved cursor, home by default) */
	"\0337\033[?1049l\033[?47l"
	/* margins reset, which homes the cursor: saved and restored */
	"\0337\033[r\0338"
	"\033[?7h\033[4l\033]8;;\033\\\033[?1000l\033[?1002l\033[?1003l"
	"\033[?1006l\033[?2004l\033[?2026l\033[K\r\n\033[J";

/*
 * Before the summary at a terminal: the terminal reset, and a line that
 * opens aisb's block with a mark drawn now, after the command ended, so
 * that no output of the command can carry it; the question repeats it.
 * A forged summary and question printed by the command stay above this
 * line, without the mark.
 */
void
draft_ask_header(const char *id, const char *mark)
{
	fputs(term_reset, stderr);
	fprintf(stderr, "---- aisb, session %s, mark %s: the command's output "
	    "ends above; what follows is aisb's ----\n", id, mark);
}

int
draft_ask_answer(FILE *in, const char *mark, const char *question,
    const char *name, const char *choices)
{
	char	 line[DRAFT_ANSWER];
	int	 c;

	if (mark[0] != '\0')
		fprintf(stderr, "aisb [mark %s]: ", mark);
	else
		fputs("aisb: ", stderr);
	/* the name escaped, as the summary's names are */
	fputs(question, stderr);
	snap_print_name(stderr, name);
	fputs(choices, stderr);
	fflush(stderr);
	if (fgets(line, sizeof(line), in) == NULL)
		return EOF;
	if (strchr(line, '\n') == NULL)
		while ((c = fgetc(in)) != EOF && c != '\n')
			;
	c = (unsigned char)line[0];
	return c == '\r' ? '\n' : c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/*
 * The question at the end of a session, asked on in (draft_os_terminal):
 * 1 apply, 0 keep.  mark (may be "") is draft_ask_header's.
 */
static int
ask_apply(const char *sdir, const char *workspace, const char *stage,
    unsigned long long nchanges, FILE *in, const char *mark)
{
	struct snap_changes	*ch = NULL;
	char			 path[DRAFT_PATH_MAX], err[2048], q[64];
	int			 c, yes = 0;

	snprintf(q, sizeof(q), "write these %llu change(s) into ", nchanges);
	for (;;) {
		if ((c = draft_ask_answer(in, mark, q, workspace,
		    "? [y]es, [n]o: keep the draft, [d]iff: ")) == EOF)
			break;
		if (c == 'y') {
			yes = 1;
			break;
		}
		if (c == 'n' || c == '\n')
			break;
		if (c != 'd')
			continue;
		snprintf(err, sizeof(err), "%s/changes: path too long", sdir);
		if (ch == NULL && (snprintf(path, sizeof(path), "%s/changes",
		    sdir) >= (int)sizeof(path) || snap_changes_load(path, &ch,
		    err, sizeof(err)) != SNAP_OK)) {
			fprintf(stderr, "aisb: %s\n", err);
			continue;
		}
		if (snap_changes_print_diff(ch, workspace, stage, 0, stderr,
		    err, sizeof(err)) != SNAP_OK)
			fprintf(stderr, "aisb: diff: %s\n", err);
	}
	snap_changes_free(ch);
	return yes;
}

int
draft_end_ask(const char *sdir, const char *id, const char *workspace,
    const char *stage, unsigned long long nchanges,
    const struct snap_changes *ch, enum draft_apply apply, int quiet)
{
	char	 mark[DRAFT_MARK_HEX + 1] = "";
	FILE	*in;
	int	 yes;

	in = apply != DRAFT_APPLY_NEVER ?
	    draft_os_terminal(apply == DRAFT_APPLY_ASK) : NULL;
	if (in != NULL && draft_os_is_terminal(stderr)) {
		if (draft_os_random_hex(mark, DRAFT_MARK_HEX) == -1) {
			fprintf(stderr, "aisb: snapshot: no random mark for the "
			    "question; not asked\n");
			fclose(in);
			in = NULL;
		} else
			draft_ask_header(id, mark);
	}
	if (!quiet) {
		fprintf(stderr, "aisb: snapshot: the command changed:\n");
		(void)snap_changes_print_summary(ch, stderr, DRAFT_SUMMARY);
	}
	if (in == NULL) {
		if (apply == DRAFT_APPLY_ASK)
			fprintf(stderr, "aisb: --apply=ask: no terminal to ask "
			    "on; the draft is kept\n");
		return 0;
	}
	yes = ask_apply(sdir, workspace, stage, nchanges, in, mark);
	fclose(in);
	return yes;
}
