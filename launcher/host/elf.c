/*
 * An executable's program interpreter, from its ELF program headers
 * (elf.h).  Only this machine's own class and byte order are read:
 * anything else could not run here anyway.  Every offset is checked
 * against the file's size before it is read, the number of headers is
 * bounded, and nothing is mapped or executed.
 */
#include "config.h"

#include <sys/stat.h>

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/elf.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELF_DATA_HERE	ELFDATA2LSB
#else
#define ELF_DATA_HERE	ELFDATA2MSB
#endif
#if __SIZEOF_POINTER__ == 8
#define ELF_CLASS_HERE	ELFCLASS64
#else
#define ELF_CLASS_HERE	ELFCLASS32
#endif

/* len bytes at off, all of them, or -1. */
static int
read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done,
		    (off_t)(off + done));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* The PT_INTERP path at ph, its bytes within the file, into interp. */
static int
read_interp(int fd, const ElfW(Phdr) *ph, uint64_t size, char *interp,
    size_t interplen)
{
	size_t	 n;

	if (interplen == 0)
		return 0;
	interp[0] = '\0';
	if (ph->p_offset > size || ph->p_filesz > size - ph->p_offset)
		return -1;
	n = ph->p_filesz < interplen - 1 ? (size_t)ph->p_filesz :
	    interplen - 1;
	if (read_at(fd, interp, n, ph->p_offset) == -1)
		return -1;
	interp[n] = '\0';
	interp[strcspn(interp, "\n")] = '\0';
	return 0;
}

int
launch_elf_interp(int fd, char *interp, size_t interplen, char *err,
    size_t errlen)
{
	ElfW(Ehdr)	 eh;
	ElfW(Phdr)	 ph;
	struct stat	 st;
	uint64_t	 size, off;
	size_t		 i;

	if (interplen > 0)
		interp[0] = '\0';
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	size = (uint64_t)st.st_size;
	if (size < sizeof(eh) || read_at(fd, &eh, sizeof(eh), 0) == -1 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		snprintf(err, errlen, "not an ELF file");
		return -1;
	}
	if (eh.e_ident[EI_CLASS] != ELF_CLASS_HERE ||
	    eh.e_ident[EI_DATA] != ELF_DATA_HERE ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		snprintf(err, errlen, "not an ELF executable of this machine");
		return -1;
	}
	/* PN_XNUM (0xffff) would move the count elsewhere: over the bound */
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum == 0 ||
	    eh.e_phnum > LAUNCH_ELF_PHNUM_MAX || eh.e_phoff > size ||
	    (uint64_t)eh.e_phnum * sizeof(ph) > size - eh.e_phoff) {
		snprintf(err, errlen, "program headers out of bounds (%u of "
		    "%u bytes at %llu; at most %d)", (unsigned)eh.e_phnum,
		    (unsigned)eh.e_phentsize, (unsigned long long)eh.e_phoff,
		    LAUNCH_ELF_PHNUM_MAX);
		return -1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		off = eh.e_phoff + i * sizeof(ph);
		if (read_at(fd, &ph, sizeof(ph), off) == -1) {
			snprintf(err, errlen, "program header %zu: cannot be "
			    "read", i);
			return -1;
		}
		if (ph.p_type != PT_INTERP)
			continue;
		if (read_interp(fd, &ph, size, interp, interplen) == -1) {
			snprintf(err, errlen, "PT_INTERP out of bounds");
			return -1;
		}
		return 1;
	}
	return 0;
}
