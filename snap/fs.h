/*
 * The operating system calls of libaisbsnap, and nothing else: the rest of
 * snap/ is portable C over these.  snap/fs_posix.c implements them for
 * Linux and other POSIX systems; a Windows backend implements the same.
 *
 * Paths are UTF-8 strings.  No function here follows a symbolic link in
 * its last component (open, stat, chmod, remove); callers walk trees
 * entry by entry.  On POSIX (fs_posix.c) no function goes through a link
 * in any other component either: a link on the way is -1 with ELOOP, so
 * roots are given as real paths (docs/snapshot.md, "Links on the way";
 * the Windows backend does not check the components yet).  Failures
 * return -1 with errno set (a Windows backend maps its errors to errno
 * values).
 */
#ifndef AISB_SNAP_FS_H
#define AISB_SNAP_FS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifndef ESTALE
#define ESTALE		EAGAIN	/* mingw has none: "not the entry checked" */
#endif

enum snap_fs_type {
	SNAP_FS_FILE = 1,
	SNAP_FS_DIR,
	SNAP_FS_LINK,
	SNAP_FS_OTHER		/* device, fifo, socket */
};

struct snap_stat {
	int		type;		/* enum snap_fs_type */
	uint32_t	mode;		/* permission bits, 07777 */
	uint64_t	size;
	int64_t		mtime_ns;
	int64_t		ctime_ns;	/* on Windows: the change time */
	uint64_t	dev;
	uint64_t	ino;		/* on Windows: the file index */
	uint64_t	nlink;
	uint32_t	uid, gid;	/* owner; 0 on Windows */
};

struct snap_file;	/* an open file */
struct snap_dir;	/* an open folder listing */

int	 snap_fs_lstat(const char *path, struct snap_stat *);

/* Folder listing without "." and "..": next returns the name (valid until
 * the next call), NULL at the end (errno 0) or on error (errno set). */
struct snap_dir	*snap_fs_opendir(const char *path);
const char	*snap_fs_readdir(struct snap_dir *);
void		 snap_fs_closedir(struct snap_dir *);

/* A regular file for reading, never through a link. */
struct snap_file *snap_fs_open_read(const char *path);
/* A regular file for reading with links followed, as any program opens
 * it: only for what git reads outside the trees aisb writes (a user's
 * ~/.gitconfig is often a link into a dotfiles folder). */
struct snap_file *snap_fs_open_follow(const char *path);
/* A new file (it must not exist) for writing, with mode. */
struct snap_file *snap_fs_create(const char *path, uint32_t mode);
/* An existing regular file for appending (a journal), never through a
 * link. */
struct snap_file *snap_fs_open_append(const char *path);
/* >0 bytes, 0 at the end, -1. */
long	 snap_fs_read(struct snap_file *, void *, size_t);
int	 snap_fs_write(struct snap_file *, const void *, size_t);
int	 snap_fs_fstat(struct snap_file *, struct snap_stat *);
int	 snap_fs_fsync(struct snap_file *);
/* 0, or -1 when close reported an error; the file is closed either way. */
int	 snap_fs_close(struct snap_file *);
/* dst shares src's blocks (reflink): 0, or -1 (errno EOPNOTSUPP, EXDEV,
 * ... when the filesystem cannot: the caller copies instead). */
int	 snap_fs_clone(struct snap_file *src, struct snap_file *dst);
/* The rest of src (from its offset) appended to dst inside the kernel
 * (copy_file_range): 0, or -1 (errno EXDEV, ENOSYS, EINVAL, EOPNOTSUPP
 * when it cannot: the caller reads and writes instead, from where the
 * offsets are). */
int	 snap_fs_copy(struct snap_file *src, struct snap_file *dst);

/* The stat of an open folder listing (POSIX; -1 ENOSYS elsewhere). */
int	 snap_fs_dirstat(struct snap_dir *, struct snap_stat *);

/*
 * Whose reading a stage is limited to (docs/snapshot.md, "Who may
 * read"): uid:gid and no other group, as a bind session's sandbox reads
 * the workspace.  Where this process is not root, or uid is root, the
 * kernel already refuses what it may not read: every answer is yes
 * (snap_fs_reader_self).  Else a helper process running with exactly
 * those ids answers for each open file or folder passed to it (its
 * access(2) on the descriptor: ACLs and all); what uid owns is readable
 * without asking (its owner may chmod it).  POSIX; on Windows the
 * launcher runs as the user: always self.
 */
struct snap_reader;
/* NULL with errno when the helper cannot be started. */
struct snap_reader *snap_fs_reader_new(uint32_t uid, uint32_t gid);
void	 snap_fs_reader_free(struct snap_reader *);
int	 snap_fs_reader_self(const struct snap_reader *);
/* 1 may read (a folder: list and enter), 0 may not, -1 error (errno). */
int	 snap_fs_reader_file(struct snap_reader *, struct snap_file *);
int	 snap_fs_reader_dir(struct snap_reader *, struct snap_dir *);

int	 snap_fs_mkdir(const char *path, uint32_t mode);
int	 snap_fs_rmdir(const char *path);
int	 snap_fs_unlink(const char *path);
/* Replaces to when it exists (a file or link; atomic on POSIX). */
int	 snap_fs_rename(const char *from, const char *to);
/*
 * The write-back's renames (docs/snapshot.md, "Checked again at each
 * write"): each one refuses to take the place of an entry other than the
 * one the transaction checked, as close to the rename as the system
 * allows.
 *
 * snap_fs_rename_new: from renamed to `to` only while `to` does not
 * exist; -1 EEXIST otherwise (POSIX renameat2 RENAME_NOREPLACE, or a
 * link and an unlink where the filesystem has no such flag; Windows
 * MoveFileExW without MOVEFILE_REPLACE_EXISTING).
 *
 * snap_fs_exchange: a and b (one folder) swapped in one step (renameat2
 * RENAME_EXCHANGE): nobody sees either name missing.  -1 ENOSYS where
 * the system or the filesystem cannot (Windows; NFS): the caller moves
 * the old entry aside instead.
 *
 * snap_fs_move_checked: path renamed to aside (its folder; aside must
 * not exist) only while path is the entry was (snap_fs_same, with the
 * ctime); -1 ESTALE when it is another (path left as it is), EBUSY when
 * another program has it open for writing (Windows).  Windows compares
 * the identity on the handle it then renames (nothing can come between
 * the two); POSIX compares lstat's, renames, and compares the entry now
 * at aside again (without the ctime, which the rename changes), putting
 * it back when another one was taken.
 */
int	 snap_fs_rename_new(const char *from, const char *to);
int	 snap_fs_exchange(const char *a, const char *b);
int	 snap_fs_move_checked(const char *path, const char *aside,
	    const struct snap_stat *was);
/*
 * 1 when a and b are the same entry unchanged: type, device, inode (file
 * index), and for files and links size and mtime, and with ctime the
 * change time too (a write that puts the mtime back still moves it).  A
 * folder is its type, device and inode (its times follow its entries).
 */
#define SNAP_SAME_CTIME	0x01
int	 snap_fs_same(const struct snap_stat *a, const struct snap_stat *b,
	    int flags);
int	 snap_fs_chmod(const char *path, uint32_t mode);
/* The entry itself (a link is not followed) given to uid:gid.  POSIX
 * only: the Linux launcher's hand-back of what root applied. */
int	 snap_fs_lchown(const char *path, uint32_t uid, uint32_t gid);
/* The target into buf[len], NUL-terminated: its length, or -1
 * (ENAMETOOLONG when it does not fit). */
long	 snap_fs_readlink(const char *path, char *buf, size_t len);
int	 snap_fs_symlink(const char *target, const char *path);
/* Makes a folder's entries (creations, renames, removals) durable. */
int	 snap_fs_fsync_dir(const char *path);
/* Makes everything written to the filesystem that holds path durable
 * (syncfs; where there is none, sync): one call for a batch of writes. */
int	 snap_fs_sync_fs(const char *path);

#endif
