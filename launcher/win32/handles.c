/*
 * The handle list a child inherits (PROC_THREAD_ATTRIBUTE_HANDLE_LIST):
 * only its standard handles, so that no other inheritable handle of the
 * runner (the job, the lease, a pipe of the caller) leaks into the
 * sandbox.  The attribute fails on a repeated handle (stdout and stderr
 * are often the same), so duplicates are dropped here.
 */
#include "config.h"

#include "win32/winrun.h"

size_t
winrun_handle_list(uintptr_t in, uintptr_t out, uintptr_t errh,
    uintptr_t invalid, uintptr_t list[3])
{
	uintptr_t h[3] = { in, out, errh };
	size_t n = 0, i, j;

	for (i = 0; i < 3; i++) {
		if (h[i] == 0 || h[i] == invalid)
			continue;
		for (j = 0; j < n; j++)
			if (list[j] == h[i])
				break;
		if (j == n)
			list[n++] = h[i];
	}
	return n;
}
