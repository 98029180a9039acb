/*
 * Which program dialled a captured connection (tproxy.h): the client
 * end's address in /proc/net/tcp{,6} gives the socket's inode, and the
 * process holding that inode among /proc/PID/fd its name.  The relay runs
 * as the sandbox user, so it sees the command's descriptors and nothing
 * else; what it reads is bounded (PROC_NET_MAX, PROC_FD_MAX), and a name
 * it cannot find is "" (the gate then names none).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "enforcer/tproxy.h"

#define PROC_NET_MAX	(4 << 20)	/* bytes of /proc/net/tcp{,6} read */
#define PROC_FD_MAX	65536	/* descriptors looked at to name a tool */

/* The /proc/net/tcp{,6} spelling of a socket's local address:port. */
static void
proc_addr(const struct sockaddr_storage *ss, int six, char *out, size_t len)
{
	const struct sockaddr_in	*sin = (const void *)ss;
	const struct sockaddr_in6	*sin6 = (const void *)ss;
	uint32_t			 w[4];

	if (ss->ss_family == AF_INET && !six) {
		snprintf(out, len, "%08X:%04X", sin->sin_addr.s_addr,
		    ntohs(sin->sin_port));
		return;
	}
	if (ss->ss_family == AF_INET) {		/* a v4-mapped socket */
		w[0] = w[1] = 0;
		memcpy(&w[2], "\0\0\xff\xff", 4);
		w[3] = sin->sin_addr.s_addr;
		snprintf(out, len, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2],
		    w[3], ntohs(sin->sin_port));
		return;
	}
	memcpy(w, &sin6->sin6_addr, 16);
	snprintf(out, len, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
	    ntohs(sin6->sin6_port));
}

/* The inode of the socket whose local address is want, or 0. */
static unsigned long
socket_inode(const char *path, const char *want)
{
	char		 line[512];
	FILE		*f;
	size_t		 seen = 0;
	unsigned long	 inode = 0;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (seen < PROC_NET_MAX && fgets(line, sizeof(line), f) != NULL) {
		char		 local[64], rem[64];
		unsigned	 st, uid;
		unsigned long	 ino;

		seen += strlen(line);
		if (sscanf(line, " %*u: %63s %63s %x %*s %*s %*s %u %*u %lu",
		    local, rem, &st, &uid, &ino) != 5)
			continue;
		if (strcmp(local, want) == 0 && st != 10 /* LISTEN */ &&
		    ino != 0) {
			inode = ino;
			break;
		}
	}
	fclose(f);
	return inode;
}

/* The comm of the process holding socket inode, into tool ("" if none). */
static void
inode_owner(unsigned long inode, char *tool, size_t len)
{
	DIR		*proc, *fds;
	struct dirent	*p, *d;
	char		 path[64], link[64], want[40], comm[64];
	size_t		 looked = 0;
	ssize_t		 n;
	int		 fd;

	tool[0] = '\0';
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	if ((proc = opendir("/proc")) == NULL)
		return;
	while ((p = readdir(proc)) != NULL && looked < PROC_FD_MAX) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    strlen(p->d_name) > 10)
			continue;
		/* names of at most 10 characters (checked), said to gcc */
		snprintf(path, sizeof(path), "/proc/%.10s/fd", p->d_name);
		if ((fds = opendir(path)) == NULL)
			continue;	/* not ours to look at */
		while ((d = readdir(fds)) != NULL && looked++ < PROC_FD_MAX) {
			if (d->d_name[0] == '.' || strlen(d->d_name) > 10)
				continue;
			snprintf(path, sizeof(path), "/proc/%.10s/fd/%.10s",
			    p->d_name, d->d_name);
			if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, want) != 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%.10s/comm",
			    p->d_name);
			if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
				if ((n = read(fd, comm, sizeof(comm) - 1)) > 0) {
					comm[n] = '\0';
					enf_tproxy_tool_clean(comm, tool, len);
				}
				close(fd);
			}
			closedir(fds);
			closedir(proc);
			return;
		}
		closedir(fds);
	}
	closedir(proc);
}

void
enf_tproxy_tool_of(const struct sockaddr_storage *peer, char *tool, size_t len)
{
	char		 want[64];
	unsigned long	 inode;

	tool[0] = '\0';
	proc_addr(peer, 0, want, sizeof(want));
	inode = peer->ss_family == AF_INET ?
	    socket_inode("/proc/net/tcp", want) : 0;
	if (inode == 0) {
		proc_addr(peer, 1, want, sizeof(want));
		inode = socket_inode("/proc/net/tcp6", want);
	}
	if (inode != 0)
		inode_owner(inode, tool, len);
}
