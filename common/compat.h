/*
 * What mingw-w64's C library lacks and libaisbsnap (snap/rules.c) and
 * common/buf.c use: forced into their Windows build with -include, so that
 * neither file changes.  Defined in common/compat_win32.c.
 */
#ifndef AISB_WIN32_COMPAT_H
#define AISB_WIN32_COMPAT_H

#include <stddef.h>

void	*memmem(const void *, size_t, const void *, size_t);
void	 explicit_bzero(void *, size_t);

#endif
