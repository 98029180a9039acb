/*
 * Whether an executable names a program interpreter: the one question
 * the launcher asks of an ELF file (the enforcer it mounts must be
 * static, docs/enforcer.md).  Nothing here knows what the file is for.
 */
#ifndef AISB_HOST_ELF_H
#define AISB_HOST_ELF_H

#include <stddef.h>

/* Program headers read, at most; an executable has a dozen or so. */
#define LAUNCH_ELF_PHNUM_MAX	256
/* Bytes of a PT_INTERP path kept for the message, at most. */
#define LAUNCH_ELF_INTERP_MAX	256

/*
 * Reads the ELF header and the program headers of the open file fd
 * (pread: the offset is not moved), for this machine's class and byte
 * order only.  1 when a PT_INTERP header names a loader (its path, cut
 * to interplen - 1 bytes, into interp): a dynamically linked program;
 * 0 when there is none: a static one; -1 with err when fd is not an ELF
 * executable of this machine or cannot be read.  Bounded by
 * LAUNCH_ELF_PHNUM_MAX headers and the file's size.
 */
int	 launch_elf_interp(int fd, char *interp, size_t interplen, char *err,
	    size_t errlen);

#endif
