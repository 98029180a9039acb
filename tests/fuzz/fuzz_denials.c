/*
 * libFuzzer: the launcher's audit-log reader and denial summary
 * (launcher/policytools/denials.c).  Any bytes as the log, line by line:
 * nothing crashes or reads past a line, the table stays within LAUNCH_DENY_MAX,
 * every denial is counted once (listed or "more"), and the summary holds
 * only printable ASCII and newlines, whatever the names were.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policytools/denials.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct launch_denials	 d;
	static char			 out[1 << 16];
	const char			*p = (const char *)data, *nl;
	char				*line;
	unsigned long			 sum = 0;
	size_t				 i, n, lines = 0;
	FILE				*f;

	launch_denials_init(&d);
	while (len > 0) {
		nl = memchr(p, '\n', len);
		n = nl != NULL ? (size_t)(nl - p) : len;
		/* a copy of exactly the line: reads past it are caught */
		if ((line = malloc(n ? n : 1)) == NULL)
			return 0;
		memcpy(line, p, n);
		launch_denials_add(&d, line, n);
		free(line);
		lines++;
		p += n + (nl != NULL);
		len -= n + (nl != NULL);
	}
	/*
	 * A line is one allowed, failed or malformed at most; a DNS line of
	 * queries over the rate bound counts its "refused":N denials, so
	 * denials are checked against their table, not the line count.
	 */
	if (d.n > LAUNCH_DENY_MAX ||
	    d.allowed + d.failed + d.malformed > lines)
		abort();
	for (i = 0; i < d.n; i++)
		sum += d.d[i].count;
	if (sum + d.more != d.denied)
		abort();
	for (sum = 0, i = 0; i < d.nf; i++)
		sum += d.f[i].count;
	if (sum + d.fmore != d.failed)
		abort();
	for (sum = 0, i = 0; i < d.nm; i++)
		sum += d.m[i].count;
	if (sum + d.mmore != d.malformed)
		abort();
	memset(out, 0, sizeof(out));
	if ((f = fmemopen(out, sizeof(out) - 1, "w")) == NULL)
		return 0;
	launch_denials_print(&d, f, "aisb: ", "/audit.jsonl");
	fclose(f);
	for (i = 0; out[i] != '\0'; i++)
		if (out[i] != '\n' && (out[i] < 0x20 || out[i] >= 0x7f))
			abort();
	return 0;
}
