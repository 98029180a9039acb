/*
 * What the two POSIX files of snap/fs.h share: the open file and folder
 * listing (fs_posix.c makes them, fs_reader.c passes them to the reader
 * helper).  Only they include this.
 */
#ifndef AISB_SNAP_FS_POSIX_H
#define AISB_SNAP_FS_POSIX_H

#include <dirent.h>

struct snap_file {
	int	fd;
};

struct snap_dir {
	DIR	*d;
};

#endif
