/*
 * The error collector the loading stages share (load-int.h), and its
 * text (policy.h).  Below every stage, so that load.c calls the stages
 * and none of them calls back into it.  At most POLICY_MAX_ERRORS are
 * kept, each message and hint cut to its field; the rest are counted.
 * A message quotes the file (a value, a key), which a repository may have
 * written: it is kept as termsafe.h shows text, for every reader prints
 * it (policy check, the gate's start and reload lines, doctor).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "load-int.h"
#include "termsafe.h"

void
policy_error_at(struct ctx *c, unsigned line, unsigned col, const char *hint,
    const char *fmt, ...)
{
	struct policy_error	*e;
	va_list			 ap;

	if (c->errs->count >= POLICY_MAX_ERRORS) {
		c->errs->dropped++;
		return;
	}
	e = &c->errs->err[c->errs->count++];
	e->line = line;
	e->column = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	term_clean_str(e->msg, 0);
	snprintf(e->hint, sizeof(e->hint), "%s", hint != NULL ? hint : "");
	term_clean_str(e->hint, 0);
}

size_t
policy_errors_format(const struct policy_errors *errs, char *buf, size_t len)
{
	char	 file[sizeof(errs->file)];
	size_t	 off = 0;
	unsigned i;
	int	 n;

	if (len > 0)
		buf[0] = '\0';
	/* the name as given; shown as termsafe.h shows a file's name */
	term_clean(file, sizeof(file), errs->file, strnlen(errs->file,
	    sizeof(errs->file)), 0, NULL);
	for (i = 0; i < errs->count && off < len; i++) {
		const struct policy_error *e = &errs->err[i];

		if (e->line > 0)
			n = snprintf(buf + off, len - off, "%s:%u:%u: error: %s\n",
			    file, e->line, e->column, e->msg);
		else
			n = snprintf(buf + off, len - off, "%s: error: %s\n",
			    file, e->msg);
		if (n < 0)
			break;
		off += (size_t)n;
		if (e->hint[0] != '\0' && off < len) {
			n = snprintf(buf + off, len - off, "  hint: %s\n", e->hint);
			if (n < 0)
				break;
			off += (size_t)n;
		}
	}
	if (errs->dropped > 0 && off < len) {
		n = snprintf(buf + off, len - off, "%s: %u more errors not shown\n",
		    file, errs->dropped);
		if (n > 0)
			off += (size_t)n;
	}
	return off < len ? off : len;
}
