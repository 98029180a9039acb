/*
 * --record in the launcher: a session's recording folder, its manifest
 * (the SHA-256 of each file of the record and of each TCP stream of the
 * capture per direction), and the check that the files still match it
 * (aisb sessions verify).  The layout and the manifest's format are in
 * docs/record.md.
 */
#ifndef AISB_SESSION_RECORDING_H
#define AISB_SESSION_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct buf;

/*
 * SESSION/recording/ (0700): the capture and the manifest.  Not
 * "record/": SESSION/record is the session's record file (sessions ls).
 */
#define LAUNCH_RECORDING_DIR	"recording"
#define LAUNCH_RECORDING_CAPTURE	"capture.pcapng"
#define LAUNCH_RECORDING_MANIFEST	"manifest"

/* --record-max: the default, and the largest a session may ask for */
#define LAUNCH_RECORD_MAX_DEFAULT	"1G"
#define LAUNCH_RECORD_MAX_LIMIT		(UINT64_C(64) << 30)

/* Bounds of what a manifest is made from and read back */
#define LAUNCH_RECORD_READ_MAX	(LAUNCH_RECORD_MAX_LIMIT + (1 << 20))
					/* bytes of a capture read */
#define LAUNCH_RECORD_STREAMS	16384	/* TCP streams hashed one by one */
#define LAUNCH_RECORD_MANIFEST_MAX (8 * 1024 * 1024) /* bytes of a manifest */

/*
 * Makes dir/recording (0700; an existing one is refused: a session's
 * record is never mixed with another's) and puts the capture's path in
 * capture.  0, or -1 with err.
 */
int	 launch_record_prepare(const char *sessdir, char *capture,
	    size_t caplen, char *err, size_t errlen);

/*
 * The stream lines of the capture at path into out:
 *   stream CONNID CLIENT DEST up|down BYTES SHA256
 * one pair per TCP stream in the order of its first packet, CONNID from
 * the first "aisb conn=ID" comment of the stream ("-": none), the
 * payload bytes of each direction hashed in capture order.  A capture
 * with more than LAUNCH_RECORD_STREAMS streams gives one line
 * "streams-over LIMIT" instead.  0, or -1 with err (a capture that does
 * not parse).
 */
int	 launch_record_streams(const char *path, struct buf *out, char *err,
	    size_t errlen);

/*
 * The manifest of the session in sessdir, as text into out: its files
 * (the capture, the audit log, the session record) and the streams.
 * 0, or -1 with err.
 */
int	 launch_record_manifest_text(const char *sessdir, struct buf *out,
	    char *err, size_t errlen);
/* The same, written to sessdir/recording/manifest (0600, atomically). */
int	 launch_record_write_manifest(const char *sessdir, char *err,
	    size_t errlen);

/*
 * Recomputes the manifest and compares: one line on out for each file
 * or stream that changed, is missing or was added.  0 when all match, 1
 * when anything differs, -1 with err when there is no manifest or it
 * cannot be read (the caller exits 78).
 */
int	 launch_record_verify(const char *sessdir, FILE *out, char *err,
	    size_t errlen);

/* aisb sessions show: whether there is a record, its files and sizes. */
void	 launch_record_show(const char *sessdir, FILE *out);

#endif
