/*
 * The enforcer a session mounts must be static (session/enforcer.c):
 * launch_elf_interp() on ELF files made here (static, with a
 * PT_INTERP, truncated, out of bounds, another class, not ELF at all)
 * and on this dynamically linked test itself; launch_enforcer_check()
 * on the file's type, its mode and its linking.
 */
#include "config.h"

#include <sys/stat.h>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/elf.h"
#include "session/enforcer.h"

static char	 dir[] = "/tmp/aisb-elf-XXXXXX";

#include "tmpdir.h"

/*
 * An executable of this machine: the ELF header, nph program headers
 * right after it (the first a PT_LOAD; with interp, a PT_INTERP naming
 * it, its bytes after the headers), written to dir/name with mode.
 */
static void
make_elf(const char *name, mode_t mode, const char *interp, size_t nph,
    void (*edit)(ElfW(Ehdr) *, ElfW(Phdr) *))
{
	ElfW(Ehdr)	 eh;
	ElfW(Phdr)	*ph;
	char		 path[128];
	size_t		 ilen = interp != NULL ? strlen(interp) + 1 : 0;
	int		 fd;

	assert_true(nph >= 2 && nph <= 0xfffe);
	ph = calloc(nph, sizeof(ph[0]));
	assert_non_null(ph);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = __SIZEOF_POINTER__ == 8 ? ELFCLASS64 :
	    ELFCLASS32;
	eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
	    ELFDATA2LSB : ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph[0]);
	eh.e_phnum = (uint16_t)nph;
	eh.e_ehsize = sizeof(eh);
	ph[0].p_type = PT_LOAD;
	if (interp != NULL) {
		ph[nph - 1].p_type = PT_INTERP;
		ph[nph - 1].p_offset = sizeof(eh) + nph * sizeof(ph[0]);
		ph[nph - 1].p_filesz = ilen;
	}
	if (edit != NULL)
		edit(&eh, ph);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd != -1);
	assert_int_equal(write(fd, &eh, sizeof(eh)), sizeof(eh));
	assert_int_equal(write(fd, ph, nph * sizeof(ph[0])),
	    (ssize_t)(nph * sizeof(ph[0])));
	if (ilen > 0)
		assert_int_equal(write(fd, interp, ilen), (ssize_t)ilen);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	free(ph);
}

/* launch_elf_interp() of dir/name; its interpreter into interp. */
static int
interp_of(const char *name, char *interp, size_t len, char *err,
    size_t errlen)
{
	char	 path[128];
	int	 fd, rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	assert_true(fd != -1);
	rc = launch_elf_interp(fd, interp, len, err, errlen);
	close(fd);
	return rc;
}

static void
phoff_far(ElfW(Ehdr) *eh, ElfW(Phdr) *ph)
{
	(void)ph;
	eh->e_phoff = 1u << 20;
}

static void
phnum_xnum(ElfW(Ehdr) *eh, ElfW(Phdr) *ph)
{
	(void)ph;
	eh->e_phnum = 0xffff;	/* PN_XNUM: the count would be elsewhere */
}

static void
other_class(ElfW(Ehdr) *eh, ElfW(Phdr) *ph)
{
	(void)ph;
	eh->e_ident[EI_CLASS] = __SIZEOF_POINTER__ == 8 ? ELFCLASS32 :
	    ELFCLASS64;
}

static void
relocatable(ElfW(Ehdr) *eh, ElfW(Phdr) *ph)
{
	(void)ph;
	eh->e_type = ET_REL;
}

static void
interp_far(ElfW(Ehdr) *eh, ElfW(Phdr) *ph)
{
	(void)eh;
	ph[1].p_filesz = 1u << 20;
}

static void
test_interp(void **state)
{
	char	 interp[LAUNCH_ELF_INTERP_MAX], err[256];
	char	 path[128];
	int	 fd;

	(void)state;
	/* static: no PT_INTERP among its headers */
	make_elf("static", 0755, NULL, 3, NULL);
	assert_int_equal(interp_of("static", interp, sizeof(interp), err,
	    sizeof(err)), 0);
	assert_string_equal(interp, "");

	/* dynamic: the loader it names */
	make_elf("dynamic", 0755, "/lib/ld-evil.so.2", 2, NULL);
	assert_int_equal(interp_of("dynamic", interp, sizeof(interp), err,
	    sizeof(err)), 1);
	assert_string_equal(interp, "/lib/ld-evil.so.2");
	/* a short buffer cuts the name, never overruns */
	assert_int_equal(interp_of("dynamic", interp, 5, err, sizeof(err)),
	    1);
	assert_string_equal(interp, "/lib");

	/* this test itself, linked as the build links programs */
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd != -1);
	assert_int_equal(launch_elf_interp(fd, interp, sizeof(interp), err,
	    sizeof(err)), 1);
	assert_non_null(strstr(interp, "ld"));
	close(fd);

	/* what is refused, with a reason */
	make_elf("phoff", 0755, NULL, 2, phoff_far);
	assert_int_equal(interp_of("phoff", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "out of bounds"));
	make_elf("xnum", 0755, NULL, 2, phnum_xnum);
	assert_int_equal(interp_of("xnum", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "at most"));
	/*
	 * More headers than the bound, all in the file, the loader last:
	 * refused unread, not taken for static nor read to the end.
	 */
	make_elf("many", 0755, "/lib/ld.so", LAUNCH_ELF_PHNUM_MAX + 1, NULL);
	assert_int_equal(interp_of("many", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "at most"));
	make_elf("bound", 0755, "/lib/ld.so", LAUNCH_ELF_PHNUM_MAX, NULL);
	assert_int_equal(interp_of("bound", interp, sizeof(interp), err,
	    sizeof(err)), 1);
	make_elf("class", 0755, NULL, 2, other_class);
	assert_int_equal(interp_of("class", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "this machine"));
	make_elf("rel", 0755, NULL, 2, relocatable);
	assert_int_equal(interp_of("rel", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	make_elf("ifar", 0755, "/lib/ld.so", 2, interp_far);
	assert_int_equal(interp_of("ifar", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "PT_INTERP"));

	/* not ELF; shorter than a header */
	snprintf(path, sizeof(path), "%s/script", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	assert_int_equal(interp_of("script", interp, sizeof(interp), err,
	    sizeof(err)), -1);
	assert_string_equal(err, "not an ELF file");
	snprintf(path, sizeof(path), "%s/short", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(fd != -1);
	assert_int_equal(write(fd, ELFMAG, SELFMAG), SELFMAG);
	close(fd);
	assert_int_equal(interp_of("short", interp, sizeof(interp), err,
	    sizeof(err)), -1);
}

/* launch_enforcer_check(dir/name): 0 or -1, err in err */
static int
check(const char *name, char *err, size_t errlen)
{
	char	 path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return launch_enforcer_check(path, err, errlen);
}

static void
test_enforcer_check(void **state)
{
	char	 err[1024], path[128];

	(void)state;
	make_elf("enforce-ok", 0755, NULL, 2, NULL);
	assert_int_equal(check("enforce-ok", err, sizeof(err)), 0);

	/* dynamic: refused, naming the loader and how to build a static one */
	make_elf("enforce-dyn", 0755, "/lib64/ld-linux-x86-64.so.2", 2, NULL);
	assert_int_equal(check("enforce-dyn", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "dynamically linked"));
	assert_non_null(strstr(err, "/lib64/ld-linux-x86-64.so.2"));
	assert_non_null(strstr(err, "--disable-static-enforcer"));

	/* modes: the container's root must run it, nobody else rewrite it */
	make_elf("enforce-0700", 0700, NULL, 2, NULL);
	assert_int_equal(check("enforce-0700", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mode 700"));
	make_elf("enforce-0757", 0757, NULL, 2, NULL);
	assert_int_equal(check("enforce-0757", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "chmod 0755"));

	/* not a file; not there */
	assert_int_equal(check("", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(check("missing", err, sizeof(err)), -1);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_non_null(strstr(err, path));

	/* the list podman drops starts with the tunables themselves */
	assert_string_equal(launch_enforcer_unsetenv[0], "GLIBC_TUNABLES");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interp),
		cmocka_unit_test(test_enforcer_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
