/*
 * The command's parent, in every mode.  The command runs in a process
 * group of its own (the terminal's foreground group when the enforcer was
 * in the foreground), and what the container's init passes on reaches
 * that whole group: a shell waiting for its foreground child gets its
 * signal together with that child, as at a terminal.
 *
 * Why a parent at all: the container's init (catatonit, podman --init)
 * runs as the container's root and forwards a stop signal only to its own
 * child, by pid.  Without CAP_KILL it cannot signal the command's uid;
 * with it, it still reaches one pid, not the group.  The parent keeps
 * CAP_KILL and nothing else, and the command cannot signal or trace it
 * (another uid, no capability).
 */
#ifndef AISB_ENF_SUPERVISE_H
#define AISB_ENF_SUPERVISE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "enforcer/privdrop.h"

/* What the parent passes on to the command's group. */
extern const int	enf_forwarded[];
extern const size_t	enf_nforwarded;

/*
 * The forked child: waits for one byte on go (the parent has dropped),
 * moves into a process group of its own (made the terminal's foreground
 * group when fg), drops every privilege, ties its life to parent's
 * (PR_SET_PDEATHSIG SIGKILL, checked against getppid) and execs cmd with
 * oldmask restored.  Never returns.
 */
void	enf_cmd_child(int go, const sigset_t *oldmask, pid_t parent, int fg,
	    const struct enf_creds *creds, const int *keep, size_t nkeep,
	    char **cmd) __attribute__((noreturn));

/*
 * Says why cmd could not be exec'd (errno e) and what to do: one line on
 * stderr (a package to add, the file's mode, a noexec mount, a missing
 * #! interpreter).  Returns the exit status, the shell's: 127 when
 * nothing was found to run, 126 when it was found but cannot be run.
 */
int	enf_exec_failed(const char *name, int e);

/* True when the enforcer's group owns the terminal on stdin. */
int	enf_is_foreground(void);

/* sig to the command's process group, and to the command if it left it. */
void	enf_forward(pid_t cmd, int sig);

/*
 * Reaps every exited child; 1 once cmd has exited, its status (the code,
 * or 128 + the signal) in *status.
 */
int	enf_reap(pid_t cmd, int *status);

/*
 * Gate and none modes: forks the command (enf_cmd_child) and stays as its
 * parent with CAP_KILL only, forwarding enf_forwarded[] and reaping.
 * Returns the command's status, or 77 when it could not be started.
 */
int	enf_supervise(const struct enf_creds *creds, const int *keep,
	    size_t nkeep, char **cmd);

#endif
