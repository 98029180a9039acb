/*
 * snap/fs.h for Windows (docs/windows.md, "Writeback"): the snapshot
 * core's operating system calls on Win32, so that the same stage, change
 * set and transaction code runs on both.  Paths are UTF-8, converted to
 * UTF-16 here.  Links: no function follows a reparse point in its last
 * component (every open passes FILE_FLAG_OPEN_REPARSE_POINT); a reparse
 * point is reported as SNAP_FS_LINK, and links are never created
 * (snap_fs_symlink fails with EPERM: a stage refuses them anyway).
 * Win32 errors are mapped to errno values (errno_of).
 */
#include "config.h"

#include <windows.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"

struct snap_file {
	HANDLE	h;
};

struct snap_dir {
	HANDLE			 find;
	WIN32_FIND_DATAW	 fd;
	int			 first;		/* fd holds an unread entry */
	char			*name;		/* the last one returned */
};

static int
errno_of(DWORD e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_NAME:
	case ERROR_BAD_NETPATH:
		return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
	case ERROR_LOCK_VIOLATION:
	case ERROR_PRIVILEGE_NOT_HELD:
		return EACCES;
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_DIR_NOT_EMPTY:
		return ENOTEMPTY;
	case ERROR_DIRECTORY:
		return ENOTDIR;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ENOMEM;
	case ERROR_DISK_FULL:
	case ERROR_HANDLE_DISK_FULL:
		return ENOSPC;
	case ERROR_NOT_SAME_DEVICE:
		return EXDEV;
	case ERROR_FILENAME_EXCED_RANGE:
		return ENAMETOOLONG;
	case ERROR_WRITE_PROTECT:
		return EROFS;
	case ERROR_NOT_SUPPORTED:
	case ERROR_INVALID_FUNCTION:
		return EOPNOTSUPP;
	default:
		return EIO;
	}
}

static int
fail_win(void)
{
	errno = errno_of(GetLastError());
	return -1;
}

static wchar_t *
wide(const char *s)
{
	wchar_t *w;
	int n;

	n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	if (n <= 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((w = malloc((size_t)n * sizeof(wchar_t))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		errno = EINVAL;
		return NULL;
	}
	return w;
}

static char *
narrow(const wchar_t *w)
{
	char *s;
	int n;

	n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, NULL, 0,
	    NULL, NULL);
	if (n <= 0 || (s = malloc((size_t)n)) == NULL) {
		errno = n <= 0 ? EILSEQ : ENOMEM;
		return NULL;
	}
	WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, s, n, NULL,
	    NULL);
	return s;
}

/* FILETIME (100 ns since 1601) -> ns since 1970 */
static int64_t
ns_of(FILETIME ft)
{
	int64_t t = (int64_t)((uint64_t)ft.dwHighDateTime << 32 |
	    ft.dwLowDateTime);

	return (t - 116444736000000000LL) * 100;
}

static int
stat_handle(HANDLE h, struct snap_stat *st)
{
	BY_HANDLE_FILE_INFORMATION bi;
	FILE_ATTRIBUTE_TAG_INFO tag;
	FILE_BASIC_INFO basic;

	if (!GetFileInformationByHandle(h, &bi))
		return fail_win();
	memset(st, 0, sizeof(*st));
	if (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
		st->type = SNAP_FS_LINK;
	else if (bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
		st->type = SNAP_FS_DIR;
	else if (GetFileType(h) == FILE_TYPE_DISK)
		st->type = SNAP_FS_FILE;
	else
		st->type = SNAP_FS_OTHER;
	/* a reparse point that is not a link (e.g. dedup) is still not
	 * followed: it is reported as one, and the stage refuses it */
	if (st->type == SNAP_FS_LINK &&
	    GetFileInformationByHandleEx(h, FileAttributeTagInfo, &tag,
	    sizeof(tag)) && tag.ReparseTag == 0)
		st->type = SNAP_FS_FILE;
	st->mode = bi.dwFileAttributes & FILE_ATTRIBUTE_READONLY ? 0444 : 0644;
	if (st->type == SNAP_FS_DIR)
		st->mode |= 0111;
	st->size = (uint64_t)bi.nFileSizeHigh << 32 | bi.nFileSizeLow;
	st->mtime_ns = ns_of(bi.ftLastWriteTime);
	/* the change time (attributes, renames, writes) where the system
	 * gives it: an identity that a write putting the mtime back still
	 * moves (snap_fs_same) */
	if (GetFileInformationByHandleEx(h, FileBasicInfo, &basic,
	    sizeof(basic)))
		st->ctime_ns = ns_of((FILETIME){
		    .dwLowDateTime = (DWORD)basic.ChangeTime.QuadPart,
		    .dwHighDateTime = (DWORD)(basic.ChangeTime.QuadPart >> 32) });
	else
		st->ctime_ns = st->mtime_ns;
	st->dev = bi.dwVolumeSerialNumber;
	st->ino = (uint64_t)bi.nFileIndexHigh << 32 | bi.nFileIndexLow;
	st->nlink = bi.nNumberOfLinks;
	return 0;
}

/* A handle on path itself (never its link's target), for reading. */
static HANDLE
open_self(const char *path, DWORD access)
{
	wchar_t *w;
	HANDLE h;

	if ((w = wide(path)) == NULL)
		return INVALID_HANDLE_VALUE;
	h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE |
	    FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	    FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE)
		errno = errno_of(GetLastError());
	free(w);
	return h;
}

int
snap_fs_lstat(const char *path, struct snap_stat *st)
{
	HANDLE h = open_self(path, FILE_READ_ATTRIBUTES);
	int rc;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	rc = stat_handle(h, st);
	CloseHandle(h);
	return rc;
}

struct snap_dir *
snap_fs_opendir(const char *path)
{
	struct snap_dir *d;
	wchar_t *w;
	size_t n;

	if ((d = calloc(1, sizeof(*d))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	n = strlen(path);
	if ((w = malloc((n + 3) * sizeof(wchar_t))) == NULL) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	{
		wchar_t *p = wide(path);

		if (p == NULL) {
			free(w);
			free(d);
			return NULL;
		}
		swprintf(w, n + 3, L"%ls\\*", p);
		free(p);
	}
	d->find = FindFirstFileExW(w, FindExInfoBasic, &d->fd,
	    FindExSearchNameMatch, NULL, 0);
	free(w);
	if (d->find == INVALID_HANDLE_VALUE) {
		fail_win();
		free(d);
		return NULL;
	}
	d->first = 1;
	return d;
}

const char *
snap_fs_readdir(struct snap_dir *d)
{
	for (;;) {
		if (!d->first && !FindNextFileW(d->find, &d->fd)) {
			errno = GetLastError() == ERROR_NO_MORE_FILES ? 0 :
			    errno_of(GetLastError());
			return NULL;
		}
		d->first = 0;
		if (wcscmp(d->fd.cFileName, L".") == 0 ||
		    wcscmp(d->fd.cFileName, L"..") == 0)
			continue;
		free(d->name);
		if ((d->name = narrow(d->fd.cFileName)) == NULL)
			return NULL;
		return d->name;
	}
}

void
snap_fs_closedir(struct snap_dir *d)
{
	if (d == NULL)
		return;
	FindClose(d->find);
	free(d->name);
	free(d);
}

static struct snap_file *
file_of(HANDLE h)
{
	struct snap_file *f;

	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	if ((f = malloc(sizeof(*f))) == NULL) {
		CloseHandle(h);
		errno = ENOMEM;
		return NULL;
	}
	f->h = h;
	return f;
}

/* An existing regular file, never through a link. */
static struct snap_file *
open_regular(const char *path, DWORD access)
{
	struct snap_stat st;
	HANDLE h;

	h = open_self(path, access);
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	if (stat_handle(h, &st) == -1 || st.type != SNAP_FS_FILE) {
		CloseHandle(h);
		errno = st.type == SNAP_FS_DIR ? EISDIR : st.type ==
		    SNAP_FS_LINK ? ELOOP : EINVAL;
		return NULL;
	}
	return file_of(h);
}

struct snap_file *
snap_fs_open_read(const char *path)
{
	return open_regular(path, GENERIC_READ);
}

struct snap_file *
snap_fs_open_follow(const char *path)
{
	struct snap_stat st;
	wchar_t *w;
	HANDLE h;

	if ((w = wide(path)) == NULL)
		return NULL;
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE |
	    FILE_SHARE_DELETE, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		fail_win();
		return NULL;
	}
	if (stat_handle(h, &st) == -1 || st.type != SNAP_FS_FILE) {
		CloseHandle(h);
		errno = st.type == SNAP_FS_DIR ? EISDIR : EINVAL;
		return NULL;
	}
	return file_of(h);
}

struct snap_file *
snap_fs_create(const char *path, uint32_t mode)
{
	wchar_t *w;
	HANDLE h;

	if ((w = wide(path)) == NULL)
		return NULL;
	/*
	 * Written through: a batch's durability (snap_fs_sync_fs) cannot be
	 * had without administrator rights here, so each write is durable
	 * when it returns.
	 */
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ, NULL,
	    CREATE_NEW, ((mode & 0222) ? FILE_ATTRIBUTE_NORMAL :
	    FILE_ATTRIBUTE_READONLY) | FILE_FLAG_WRITE_THROUGH, NULL);
	if (h == INVALID_HANDLE_VALUE)
		fail_win();
	free(w);
	return file_of(h);
}

struct snap_file *
snap_fs_open_append(const char *path)
{
	struct snap_file *f = open_regular(path, GENERIC_READ | GENERIC_WRITE);
	LARGE_INTEGER zero = { .QuadPart = 0 };

	if (f != NULL && !SetFilePointerEx(f->h, zero, NULL, FILE_END)) {
		fail_win();
		CloseHandle(f->h);
		free(f);
		return NULL;
	}
	return f;
}

long
snap_fs_read(struct snap_file *f, void *buf, size_t len)
{
	DWORD got;

	if (len > 0x40000000)
		len = 0x40000000;
	if (!ReadFile(f->h, buf, (DWORD)len, &got, NULL))
		return fail_win();
	return (long)got;
}

int
snap_fs_write(struct snap_file *f, const void *buf, size_t len)
{
	const char *p = buf;
	DWORD done;

	while (len > 0) {
		DWORD n = len > 0x40000000 ? 0x40000000 : (DWORD)len;

		if (!WriteFile(f->h, p, n, &done, NULL))
			return fail_win();
		if (done == 0) {
			errno = EIO;
			return -1;
		}
		p += done;
		len -= done;
	}
	return 0;
}

int
snap_fs_fstat(struct snap_file *f, struct snap_stat *st)
{
	return stat_handle(f->h, st);
}

int
snap_fs_fsync(struct snap_file *f)
{
	return FlushFileBuffers(f->h) ? 0 : fail_win();
}

int
snap_fs_close(struct snap_file *f)
{
	int rc = 0;

	if (f == NULL)
		return 0;
	if (!CloseHandle(f->h))
		rc = fail_win();
	free(f);
	return rc;
}

int
snap_fs_clone(struct snap_file *src, struct snap_file *dst)
{
	/* ReFS block cloning (FSCTL_DUPLICATE_EXTENTS_TO_FILE) is not
	 * used yet: the caller copies */
	errno = EOPNOTSUPP;
	return -1;
}

int
snap_fs_mkdir(const char *path, uint32_t mode)
{
	wchar_t *w = wide(path);
	int rc;

	if (w == NULL)
		return -1;
	rc = CreateDirectoryW(w, NULL) ? 0 : fail_win();
	free(w);
	return rc;
}

int
snap_fs_rmdir(const char *path)
{
	wchar_t *w = wide(path);
	int rc;

	if (w == NULL)
		return -1;
	rc = RemoveDirectoryW(w) ? 0 : fail_win();
	free(w);
	return rc;
}

int
snap_fs_unlink(const char *path)
{
	wchar_t *w = wide(path);
	DWORD attr;
	int rc;

	if (w == NULL)
		return -1;
	/* POSIX removes a read-only file's name; Windows needs the bit off */
	attr = GetFileAttributesW(w);
	if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_READONLY))
		SetFileAttributesW(w, attr & ~FILE_ATTRIBUTE_READONLY);
	rc = DeleteFileW(w) ? 0 : fail_win();
	free(w);
	return rc;
}

int
snap_fs_rename(const char *from, const char *to)
{
	wchar_t *wf = wide(from), *wt = wide(to);
	int rc = -1;

	/* replacing, and durable before it returns; not atomic against a
	 * crash the way rename(2) is (docs/windows.md) */
	if (wf != NULL && wt != NULL)
		rc = MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING |
		    MOVEFILE_WRITE_THROUGH) ? 0 : fail_win();
	free(wf);
	free(wt);
	return rc;
}

int
snap_fs_rename_new(const char *from, const char *to)
{
	wchar_t *wf = wide(from), *wt = wide(to);
	int rc = -1;

	/* without MOVEFILE_REPLACE_EXISTING: an existing `to` is
	 * ERROR_ALREADY_EXISTS, EEXIST (errno_of) */
	if (wf != NULL && wt != NULL)
		rc = MoveFileExW(wf, wt, MOVEFILE_WRITE_THROUGH) ? 0 :
		    fail_win();
	free(wf);
	free(wt);
	return rc;
}

int
snap_fs_exchange(const char *a, const char *b)
{
	(void)a;
	(void)b;
	errno = ENOSYS;		/* no atomic swap of two names here */
	return -1;
}

/*
 * The handle opened for the check is the one renamed: nobody else may
 * write or delete path while it is held (no FILE_SHARE_WRITE or
 * FILE_SHARE_DELETE), so the entry compared is the entry moved.  A
 * writer that holds it open already makes the open fail: EBUSY.
 */
int
snap_fs_move_checked(const char *path, const char *aside,
    const struct snap_stat *was)
{
	FILE_RENAME_INFO *ri = NULL;
	struct snap_stat st;
	wchar_t *w = NULL, *wa = NULL;
	HANDLE h = INVALID_HANDLE_VALUE;
	size_t n, size;
	int rc = -1;

	if ((w = wide(path)) == NULL || (wa = wide(aside)) == NULL)
		goto out;
	h = CreateFileW(w, DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
	    FILE_SHARE_READ, NULL, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT |
	    FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		errno = GetLastError() == ERROR_SHARING_VIOLATION ? EBUSY :
		    errno_of(GetLastError());
		goto out;
	}
	if (stat_handle(h, &st) == -1)
		goto out;
	if (!snap_fs_same(&st, was, SNAP_SAME_CTIME)) {
		errno = ESTALE;
		goto out;
	}
	n = wcslen(wa) * sizeof(wchar_t);
	size = sizeof(*ri) + n;
	if ((ri = calloc(1, size)) == NULL) {
		errno = ENOMEM;
		goto out;
	}
	ri->ReplaceIfExists = FALSE;
	ri->RootDirectory = NULL;
	ri->FileNameLength = (DWORD)n;
	memcpy(ri->FileName, wa, n);
	if (!SetFileInformationByHandle(h, FileRenameInfo, ri, (DWORD)size)) {
		fail_win();
		goto out;
	}
	rc = 0;
out:
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(ri);
	free(w);
	free(wa);
	return rc;
}

int
snap_fs_chmod(const char *path, uint32_t mode)
{
	struct snap_stat st;
	wchar_t *w;
	DWORD attr;
	int rc;

	if (snap_fs_lstat(path, &st) == -1)
		return -1;
	if (st.type == SNAP_FS_LINK) {
		errno = ELOOP;
		return -1;
	}
	if ((w = wide(path)) == NULL)
		return -1;
	attr = GetFileAttributesW(w);
	if (attr == INVALID_FILE_ATTRIBUTES)
		rc = fail_win();
	else {
		attr = (mode & 0222) ? attr & ~FILE_ATTRIBUTE_READONLY :
		    attr | FILE_ATTRIBUTE_READONLY;
		rc = SetFileAttributesW(w, attr) ? 0 : fail_win();
	}
	free(w);
	return rc;
}

long
snap_fs_readlink(const char *path, char *buf, size_t len)
{
	/* the stage copies no link on Windows: never asked for a target */
	errno = EINVAL;
	return -1;
}

int
snap_fs_symlink(const char *target, const char *path)
{
	errno = EPERM;
	return -1;
}

/* No in-kernel copy here: the caller reads and writes. */
int
snap_fs_copy(struct snap_file *src, struct snap_file *dst)
{
	(void)src;
	(void)dst;
	errno = ENOSYS;
	return -1;
}

/*
 * Flushing a volume needs administrator rights; every file this core
 * creates is written through (snap_fs_create) and renames pass
 * MOVEFILE_WRITE_THROUGH, so nothing is left to flush.
 */
int
snap_fs_sync_fs(const char *path)
{
	(void)path;
	return 0;
}

int
snap_fs_fsync_dir(const char *path)
{
	/* NTFS journals its metadata; a folder handle cannot be flushed
	 * without administrator rights.  Documented in docs/windows.md. */
	return 0;
}

/* ---- the reader (fs.h): the launcher runs as the user: the system checks */

struct snap_reader {
	int	self;
};

int
snap_fs_dirstat(struct snap_dir *d, struct snap_stat *st)
{
	(void)d;
	(void)st;
	errno = ENOSYS;
	return -1;
}

struct snap_reader *
snap_fs_reader_new(uint32_t uid, uint32_t gid)
{
	struct snap_reader *r;

	(void)uid;
	(void)gid;
	if ((r = calloc(1, sizeof(*r))) != NULL)
		r->self = 1;
	return r;
}

void
snap_fs_reader_free(struct snap_reader *r)
{
	free(r);
}

int
snap_fs_reader_self(const struct snap_reader *r)
{
	return r->self;
}

int
snap_fs_reader_file(struct snap_reader *r, struct snap_file *f)
{
	(void)r;
	(void)f;
	return 1;
}

int
snap_fs_reader_dir(struct snap_reader *r, struct snap_dir *d)
{
	(void)r;
	(void)d;
	return 1;
}
