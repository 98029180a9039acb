/*
 * The NETLINK_NETFILTER socket, below both the table's builder (nft.c,
 * batch.c) and its read-back (verify.c): opened with a receive timeout,
 * one request and its answers, table inet aisb as the kernel has it.
 * nft_send() and nft_table_owner() (nft.h) are here too: the batch sent
 * with every ACK counted, and who owns the table when the kernel says
 * EPERM.
 */
#ifndef AISB_ENF_NETLINK_H
#define AISB_ENF_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <libnftnl/table.h>

/* Opens and binds a NETLINK_NETFILTER socket with a receive timeout. */
struct mnl_socket	*nft_socket_open(char *err, size_t errlen);

/*
 * One request and its answers.  The request is already built in buf (bufsz
 * bytes, reused for the answers); cb parses each answer.  Returns 0, or -1
 * with errno (ENOENT: no such object).
 */
int	nft_query(struct mnl_socket *nl, char *buf, size_t bufsz, uint32_t seq,
	    mnl_cb_t cb, void *data);

/* The table named by want (family, name) as the kernel has it, into got:
 * 0, or -1 with errno (ENOENT: there is none). */
int	nft_query_table(struct mnl_socket *nl, char *buf, size_t bufsz,
	    uint32_t seq, const struct nftnl_table *want,
	    struct nftnl_table *got);

#endif
