// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_qp_recover: an RC QP between two hosts that goes to ERROR and is
 * used again, as seed 001's ERNIC flow and IBA 10.3.1 allow: ERR -> RESET
 * -> INIT -> RTR -> RTS on the same QP, with its rings starting over, and
 * traffic again, data compared. Run it on both hosts, like
 * ibv_rc_pingpong: the server without an address, the client with the
 * server's. QP numbers, PSNs, GIDs and buffers are exchanged over TCP.
 *
 * Every round carries traffic both ways: 64 RDMA WRITEs of SIZE bytes
 * (a pattern of the round and the message) and a SEND with immediate that
 * tells the peer to check them; then, in every round but the last, both
 * QPs go to ERROR in one of three ways, in turn:
 * - remote access: the client writes with a wrong rkey; its completion is
 *   IBV_WC_REM_ACCESS_ERR and its QP goes to ERROR (the server's
 *   responder goes there too, or is moved there);
 * - retry exceeded: the server moves its QP to ERROR, so it answers
 *   nothing, and the client's write ends with IBV_WC_RETRY_EXC_ERR;
 * - flush: both sides move their QPs to ERROR.
 * Every receive posted and not consumed must come back as
 * IBV_WC_WR_FLUSH_ERR, and nothing else; then RESET and the next round
 * with new PSNs. The SQ has fewer entries than a round posts, so the
 * rings wrap in every round.
 *
 * With -a (on both sides) the QP comes from ibv_create_qp_ex() and every
 * round, after the writes, flushes them to global visibility with
 * ibv_wr_flush() (IBA 1.5 FLUSH, of the range written) and then publishes
 * an 8-byte flag with ibv_wr_atomic_write() (IBA 1.5 ATOMIC WRITE), which
 * the peer checks with the data: the write, flush, publish pattern of
 * remote persistent-memory libraries.
 *
 * usage: kite_qp_recover [-a] [-d DEV] [-g GID_INDEX] [-p PORT] [-s SIZE]
 *                        [-r ROUNDS] [SERVER]
 * Exit status 0 when every round's data was right and every error ended
 * as above; 1 otherwise; 2 on a time-out (-T, default 60 s).
 *
 * Copyright (c) 2026 Kite
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#define MSGS		64	/* RDMA WRITEs per round and direction */
#define SQ_DEPTH	16	/* fewer than a round posts: the ring wraps */
#define RECVS		8	/* receives posted per round, one consumed */
#define CQ_DEPTH	(SQ_DEPTH + RECVS + 8)
#define RECV_ID		1000	/* receives' wr_ids: RECV_ID + 0 ... RECVS - 1 */
#define WAIT_MS		20000

enum { ERR_NONE, ERR_ACCESS, ERR_RETRY, ERR_FLUSH, ERR_KINDS };

static const char *const kind_name[] = {
	[ERR_NONE] = "none",
	[ERR_ACCESS] = "remote access error",
	[ERR_RETRY] = "retry exceeded",
	[ERR_FLUSH] = "flush",
};

/* What each side tells the other before connecting (big endian). */
struct peer_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t qpn;
	uint32_t psn;
	uint32_t mtu;
	uint8_t gid[16];
};

static struct {
	const char *dev;
	const char *server;
	const char *port;
	unsigned int gidx;
	unsigned int size;
	unsigned int rounds;
	unsigned int timeout;
	int awrite;		/* -a: a FLUSH and an ATOMIC WRITE after the writes */
} opt = {
	.port = "18515",
	.gidx = 0,
	.size = 4096,
	.rounds = 4,
	.timeout = 60,
};

static struct {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* -a */
	struct ibv_mr *mr;	/* buf, for the peer's writes (and flag) */
	struct ibv_mr *smr;	/* src */
	uint32_t *buf;		/* the peer writes here */
	uint32_t *src;		/* this side writes from here */
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint64_t peer_addr;
	uint32_t peer_rkey;
	unsigned int recvs;	/* receives posted and not completed */
	unsigned int sends;	/* sends posted and not completed */
	long got_imm;		/* the last SEND's immediate, -1: none yet */
	int sock;
} k;

static const char *role(void)
{
	return opt.server ? "client" : "server";
}

static int fail(const char *what)
{
	fprintf(stderr, "kite_qp_recover %s: %s: %s\n", role(), what,
		strerror(errno));
	return 1;
}

static int wrong(const char *fmt, const char *what, long a, long b)
{
	fprintf(stderr, "kite_qp_recover %s: ", role());
	fprintf(stderr, fmt, what, a, b);
	fputc('\n', stderr);
	return 1;
}

static void on_alarm(int sig)
{
	static const char msg[] = "kite_qp_recover: timed out\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static int full_io(int write_it, void *p, size_t len)
{
	char *c = p;
	ssize_t n;

	while (len) {
		n = write_it ? write(k.sock, c, len) : read(k.sock, c, len);
		if (n <= 0) {
			if (!n)
				errno = ECONNRESET;
			return -1;
		}
		c += n;
		len -= n;
	}
	return 0;
}

/* Both sides reach the same step: each sends its tag and reads the peer's. */
static int sync_peer(uint32_t tag)
{
	uint32_t mine = htobe32(tag), theirs;

	if (full_io(1, &mine, sizeof(mine)) || full_io(0, &theirs, sizeof(theirs)))
		return fail("sync");
	if (be32toh(theirs) != tag)
		return wrong("%s: the peer is at step %ld, this side at %ld",
			     "sync", be32toh(theirs), tag);
	return 0;
}

static int tcp_connect(void)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *a;
	int fd = -1, one = 1, lfd;

	if (!opt.server)
		hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(opt.server, opt.port, &hints, &res)) {
		errno = EINVAL;
		return fail("getaddrinfo");
	}
	for (a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		if (opt.server) {
			if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
				break;
		} else {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1) == 0)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(opt.server ? "connect" : "listen");
	if (!opt.server) {
		lfd = fd;
		fd = accept(lfd, NULL, NULL);
		close(lfd);
		if (fd < 0)
			return fail("accept");
	}
	k.sock = fd;
	return 0;
}

static int open_device(void)
{
	struct ibv_device **list, **d;
	struct ibv_port_attr port;
	/* The writes' bytes, then the flag (256-byte aligned: MSGS * 4n). */
	size_t len = (size_t)MSGS * opt.size + sizeof(uint64_t);

	list = ibv_get_device_list(NULL);
	if (!list)
		return fail("ibv_get_device_list");
	for (d = list; *d; d++)
		if (!opt.dev || !strcmp(ibv_get_device_name(*d), opt.dev))
			break;
	if (*d)
		k.ctx = ibv_open_device(*d);
	ibv_free_device_list(list);
	if (!k.ctx)
		return fail("ibv_open_device");
	if (ibv_query_port(k.ctx, 1, &port) || ibv_query_gid(k.ctx, 1, opt.gidx, &k.gid))
		return fail("ibv_query_port/gid");
	k.mtu = port.active_mtu;
	k.ch = ibv_create_comp_channel(k.ctx);
	k.pd = ibv_alloc_pd(k.ctx);
	if (!k.ch || !k.pd)
		return fail("ibv_create_comp_channel/alloc_pd");
	k.cq = ibv_create_cq(k.ctx, CQ_DEPTH, NULL, k.ch, 0);
	if (!k.cq)
		return fail("ibv_create_cq");
	k.buf = calloc(1, len);
	k.src = calloc(1, len);
	if (!k.buf || !k.src)
		return fail("calloc");
	k.mr = ibv_reg_mr(k.pd, k.buf, len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE |
			  (opt.awrite ? IBV_ACCESS_FLUSH_GLOBAL : 0));
	k.smr = ibv_reg_mr(k.pd, k.src, len, 0);
	if (!k.mr || !k.smr)
		return fail("ibv_reg_mr");
	return 0;
}

static int create_qp(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = k.cq,
		.recv_cq = k.cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	/* -a: the same QP, with the extended API's FLUSH and ATOMIC WRITE. */
	struct ibv_qp_init_attr_ex ex = {
		.send_cq = k.cq,
		.recv_cq = k.cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = init.cap,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = k.pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_FLUSH,
	};

	if (!opt.awrite) {
		k.qp = ibv_create_qp(k.pd, &init);
		return k.qp ? 0 : fail("ibv_create_qp");
	}
	k.qp = ibv_create_qp_ex(k.ctx, &ex);
	if (!k.qp)
		return fail("ibv_create_qp_ex(IBV_QP_EX_WITH_FLUSH | _ATOMIC_WRITE)");
	k.qpx = ibv_qp_to_qp_ex(k.qp);
	return k.qpx ? 0 : fail("ibv_qp_to_qp_ex");
}

static enum ibv_qp_state qp_state(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(k.qp, &attr, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return attr.qp_state;
}

static int to_state(enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	errno = ibv_modify_qp(k.qp, &attr, IBV_QP_STATE);
	return errno ? fail("ibv_modify_qp") : 0;
}

/*
 * The next completion, within WAIT_MS: through completion events, so that
 * neither side spins on a shared CPU.
 */
static int next_wc(struct ibv_wc *wc)
{
	struct pollfd pfd = { .fd = k.ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(k.cq, 1, wc);
		if (n)
			return n < 0 ? fail("ibv_poll_cq") : 0;
		if (ibv_req_notify_cq(k.cq, 0))
			return fail("ibv_req_notify_cq");
		n = ibv_poll_cq(k.cq, 1, wc);
		if (n)
			return n < 0 ? fail("ibv_poll_cq") : 0;
		n = poll(&pfd, 1, WAIT_MS);
		if (n <= 0) {
			errno = n ? errno : ETIMEDOUT;
			return fail("waiting for a completion");
		}
		if (ibv_get_cq_event(k.ch, &cq, &cq_ctx))
			return fail("ibv_get_cq_event");
		ibv_ack_cq_events(cq, 1);
	}
}

static int post_recvs(void)
{
	struct ibv_recv_wr wr = {}, *bad;

	while (k.recvs < RECVS) {
		wr.wr_id = RECV_ID + k.recvs;
		if (ibv_post_recv(k.qp, &wr, &bad))
			return fail("ibv_post_recv");
		k.recvs++;
	}
	return 0;
}

/* RESET -> INIT -> RTR -> RTS towards the peer, with new PSNs each round. */
static int connect_qp(unsigned int round, int retry_cnt)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   (opt.awrite ? IBV_ACCESS_FLUSH_GLOBAL : 0),
	};
	struct peer_info me = {}, peer;
	uint32_t psn = (uint32_t)(lrand48() & 0xffffff);

	if (ibv_modify_qp(k.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("ibv_modify_qp(INIT)");
	if (post_recvs())
		return 1;
	me.addr = htobe64((uintptr_t)k.buf);
	me.rkey = htobe32(k.mr->rkey);
	me.qpn = htobe32(k.qp->qp_num);
	me.psn = htobe32(psn);
	me.mtu = htobe32(k.mtu);
	memcpy(me.gid, k.gid.raw, sizeof(me.gid));
	if (full_io(1, &me, sizeof(me)) || full_io(0, &peer, sizeof(peer)))
		return fail("exchanging the QP's address");

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = be32toh(peer.mtu) < k.mtu ? be32toh(peer.mtu) : k.mtu;
	attr.dest_qp_num = be32toh(peer.qpn);
	attr.rq_psn = be32toh(peer.psn);
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.grh.sgid_index = opt.gidx;
	memcpy(attr.ah_attr.grh.dgid.raw, peer.gid, sizeof(peer.gid));
	if (ibv_modify_qp(k.qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("ibv_modify_qp(RTR)");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = retry_cnt;
	attr.rnr_retry = 7;
	attr.sq_psn = psn;
	attr.max_rd_atomic = 1;
	if (ibv_modify_qp(k.qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("ibv_modify_qp(RTS)");
	/* The peer's buffer, for this round's writes. */
	k.peer_addr = be64toh(peer.addr);
	k.peer_rkey = be32toh(peer.rkey);
	printf("%s: round %u: QP %#x connected to QP %#x, PSN %#x\n", role(),
	       round, k.qp->qp_num, be32toh(peer.qpn), psn);
	return sync_peer(0x100 + round);
}

static uint32_t word(unsigned int round, unsigned int msg, unsigned int w,
		     int from_client)
{
	return ((uint32_t)round << 24 | (uint32_t)from_client << 23) ^
	       (msg * 0x9e3779b1u + w);
}

/* -a: the round's flag from the client (@from_client) or the server. */
static uint64_t flag(unsigned int round, int from_client)
{
	return (uint64_t)word(round, MSGS, 0, from_client) << 32 |
	       word(round, MSGS, 1, from_client);
}

/* The peer's flag, after its writes' bytes (read once its SEND is in). */
static uint64_t peer_flag(void)
{
	uint64_t v;

	memcpy(&v, k.buf + (size_t)MSGS * (opt.size / 4), sizeof(v));
	return v;
}

/*
 * -a: one batch of two work requests (wr_id MSGS and MSGS + 1): the
 * round's writes flushed to global visibility with ibv_wr_flush(), then
 * the round's flag to the peer's with ibv_wr_atomic_write().
 */
static int post_flag(unsigned int round)
{
	uint64_t val = flag(round, !!opt.server);

	ibv_wr_start(k.qpx);
	k.qpx->wr_id = MSGS;
	k.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(k.qpx, k.peer_rkey, k.peer_addr,
		     (size_t)MSGS * opt.size, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	k.qpx->wr_id = MSGS + 1;
	ibv_wr_atomic_write(k.qpx, k.peer_rkey,
			    k.peer_addr + (uint64_t)MSGS * opt.size, &val);
	return ibv_wr_complete(k.qpx) ?
	       fail("ibv_wr_flush + ibv_wr_atomic_write") : 0;
}

/*
 * A receive's completion. Only wr_id, status, qp_num and vendor_err are
 * valid in a completion with an error (ibv_poll_cq(3)): not the opcode.
 */
static int is_recv(const struct ibv_wc *wc)
{
	return wc->wr_id >= RECV_ID && wc->wr_id < RECV_ID + RECVS;
}

/* A receive completed: the peer's SEND with immediate, or an error. */
static int got_recv(const struct ibv_wc *wc)
{
	if (!k.recvs)
		return wrong("%s: %ld receives posted, one more completed (%ld)",
			     "receive", 0, wc->status);
	k.recvs--;
	if (wc->status != IBV_WC_SUCCESS || !(wc->wc_flags & IBV_WC_WITH_IMM))
		return wrong("%s: status %ld, flags %#lx", "receive",
			     wc->status, wc->wc_flags);
	k.got_imm = be32toh(wc->imm_data);
	return 0;
}

/*
 * The next completion of this side's own work: a receive completed on the
 * way (the peer's SEND may overtake this side's last ACK) is noted.
 */
static int next_send_wc(struct ibv_wc *wc)
{
	for (;;) {
		if (next_wc(wc))
			return 1;
		if (!is_recv(wc))
			break;
		if (got_recv(wc))
			return 1;
	}
	if (!k.sends)
		return wrong("%s: %ld sends posted, one more completed (%ld)",
			     "send", 0, wc->status);
	k.sends--;
	return 0;
}

/*
 * MSGS RDMA WRITEs into the peer's buffer (with -a then their FLUSH and the
 * ATOMIC WRITE of the flag), then a SEND with the round.
 */
static int send_stream(unsigned int round)
{
	unsigned int words = opt.size / 4, i, w, posted = 0, done = 0;
	unsigned int last = MSGS + 2 * !!opt.awrite;	/* the SEND's wr_id */
	struct ibv_sge sge = { .lkey = k.smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	for (i = 0; i < MSGS; i++)
		for (w = 0; w < words; w++)
			k.src[i * words + w] = word(round, i, w, !!opt.server);
	while (done <= last) {
		while (posted <= last && k.sends < SQ_DEPTH) {
			wr.wr_id = posted;
			if (posted < last && posted == MSGS) {
				if (k.sends + 2 > SQ_DEPTH)
					break;
				if (post_flag(round))
					return 1;
				k.sends += 2;
				posted += 2;
				continue;
			}
			if (posted < MSGS) {
				wr.opcode = IBV_WR_RDMA_WRITE;
				sge.addr = (uintptr_t)(k.src + posted * words);
				sge.length = opt.size;
				wr.wr.rdma.remote_addr = k.peer_addr + (uint64_t)posted * opt.size;
				wr.wr.rdma.rkey = k.peer_rkey;
			} else {
				wr.opcode = IBV_WR_SEND_WITH_IMM;
				wr.imm_data = htobe32(round);
				sge.length = 0;
				wr.num_sge = 0;
			}
			if (ibv_post_send(k.qp, &wr, &bad))
				return fail("ibv_post_send");
			k.sends++;
			posted++;
		}
		if (next_send_wc(&wc))
			return 1;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != done)
			return wrong("%s: message %ld: %s", "send_stream",
				     (long)wc.wr_id, (long)wc.status);
		done++;
	}
	return 0;
}

/* The peer's SEND for this round, then its writes checked. */
static int recv_stream(unsigned int round)
{
	unsigned int words = opt.size / 4, i, w;
	unsigned long bad = 0;
	struct ibv_wc wc;

	while (k.got_imm != round) {
		if (next_wc(&wc))
			return 1;
		if (!is_recv(&wc))
			return wrong("%s: an unexpected completion, status %ld wr_id %ld",
				     "recv_stream", wc.status, (long)wc.wr_id);
		if (got_recv(&wc))
			return 1;
	}
	for (i = 0; i < MSGS; i++)
		for (w = 0; w < words; w++)
			bad += k.buf[i * words + w] != word(round, i, w, !opt.server);
	if (bad)
		return wrong("%s: round %ld: %ld words differ", "recv_stream",
			     round, bad);
	if (opt.awrite && peer_flag() != flag(round, !opt.server))
		return wrong("%s: round %ld: the ATOMIC WRITE's flag is %#lx",
			     "recv_stream", round, (long)peer_flag());
	return 0;
}

/* The client's one failing WRITE: its completion must have status WANT. */
static int failing_write(enum ibv_wc_status want, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)k.src, .length = opt.size,
			       .lkey = k.smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 4242, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE }, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = k.peer_addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(k.qp, &wr, &bad))
		return fail("ibv_post_send");
	k.sends++;
	if (next_send_wc(&wc))
		return 1;
	printf("client: the write completed with %s (vendor_err %#x)\n",
	       ibv_wc_status_str(wc.status), wc.vendor_err);
	if (wc.status != want || wc.wr_id != 4242)
		return wrong("%s: status %ld, expected %ld", "failing write",
			     wc.status, want);
	return 0;
}

/* Both QPs into ERROR, the way KIND says. */
static int to_error(int kind, unsigned int round)
{
	int client = !!opt.server, ret = 0;

	switch (kind) {
	case ERR_ACCESS:
		if (client)
			ret = failing_write(IBV_WC_REM_ACCESS_ERR, k.peer_rkey ^ 0x00ffff00);
		if (!ret)
			ret = sync_peer(0x200 + round);
		if (!ret && !client)
			printf("server: after the remote access error the QP is %s\n",
			       qp_state() == IBV_QPS_ERR ? "in ERR" : "not in ERR (moved there)");
		break;
	case ERR_RETRY:
		if (!client)
			ret = to_state(IBV_QPS_ERR);
		if (!ret)
			ret = sync_peer(0x200 + round);
		if (!ret && client)
			ret = failing_write(IBV_WC_RETRY_EXC_ERR, k.peer_rkey);
		if (!ret)
			ret = sync_peer(0x300 + round);
		break;
	}
	if (ret)
		return ret;
	if (kind != ERR_FLUSH && qp_state() != IBV_QPS_ERR && client)
		return wrong("%s: after the error the client's QP is in state %ld, not ERR (%ld)",
			     kind_name[kind], qp_state(), IBV_QPS_ERR);
	return to_state(IBV_QPS_ERR);
}

/*
 * Every receive not consumed comes back flushed, and nothing else; then
 * RESET, from which the next round connects the same QP again.
 */
static int recover(unsigned int round)
{
	unsigned int flushed = 0;
	struct ibv_wc wc;

	while (k.recvs) {
		if (next_wc(&wc))
			return 1;
		if (!is_recv(&wc) || wc.status != IBV_WC_WR_FLUSH_ERR)
			return wrong("%s: status %ld, wr_id %ld instead of a flushed receive",
				     "recover", wc.status, (long)wc.wr_id);
		k.recvs--;
		flushed++;
	}
	if (ibv_poll_cq(k.cq, 1, &wc))
		return wrong("%s: a completion after the flushed receives (status %ld, wr_id %ld)",
			     "recover", wc.status, (long)wc.wr_id);
	if (to_state(IBV_QPS_RESET))
		return 1;
	if (qp_state() != IBV_QPS_RESET)
		return wrong("%s: state %ld after ERR -> RESET (RESET is %ld)", "recover",
			     qp_state(), IBV_QPS_RESET);
	printf("%s: round %u: %u receives flushed, QP %#x back in RESET\n", role(),
	       round, flushed, k.qp->qp_num);
	return sync_peer(0x400 + round);
}

static int print_usage(void)
{
	fprintf(stderr, "usage: kite_qp_recover [-a] [-d DEV] [-g GID_INDEX] [-p PORT] [-s SIZE]\n"
		"                       [-r ROUNDS] [-T SECONDS] [SERVER]\n");
	return 1;
}

int main(int argc, char **argv)
{
	unsigned int round, recovered = 0;
	int c, kind;

	while ((c = getopt(argc, argv, "ad:g:p:s:r:T:")) != -1) {
		switch (c) {
		case 'a':
			opt.awrite = 1;
			break;
		case 'd':
			opt.dev = optarg;
			break;
		case 'g':
			opt.gidx = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			opt.port = optarg;
			break;
		case 's':
			opt.size = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			opt.rounds = strtoul(optarg, NULL, 0);
			break;
		case 'T':
			opt.timeout = strtoul(optarg, NULL, 0);
			break;
		default:
			return print_usage();
		}
	}
	if (optind < argc)
		opt.server = argv[optind];
	if (!opt.rounds || opt.size < 4 || opt.size % 4 || opt.size > (1u << 20))
		return print_usage();
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout);
	srand48(getpid() ^ time(NULL));
	k.got_imm = -1;

	if (open_device() || tcp_connect() || create_qp())
		return 1;
	for (round = 0; round < opt.rounds; round++) {
		kind = round + 1 < opt.rounds ? 1 + round % (ERR_KINDS - 1) : ERR_NONE;
		if (connect_qp(round, kind == ERR_RETRY ? 1 : 7))
			return 1;
		if (opt.server ? send_stream(round) || recv_stream(round) :
				 recv_stream(round) || send_stream(round))
			return 1;
		printf("%s: round %u: %u writes of %u bytes each way%s, data compared\n",
		       role(), round, MSGS, opt.size,
		       opt.awrite ? " and an ATOMIC WRITE" : "");
		/* Every write of both sides acknowledged before any error. */
		if (sync_peer(0x180 + round))
			return 1;
		if (kind == ERR_NONE)
			break;
		if (to_error(kind, round) || recover(round))
			return 1;
		printf("%s: round %u: recovered from %s\n", role(), round, kind_name[kind]);
		recovered++;
	}
	printf("%s: %u rounds, the QP recovered %u times from ERROR, every round's data compared\n",
	       role(), opt.rounds, recovered);
	fflush(stdout);
	/* The peer must not tear down while this side's last ACKs are owed. */
	if (sync_peer(0x500))
		return 1;
	ibv_destroy_qp(k.qp);
	ibv_dereg_mr(k.smr);
	ibv_dereg_mr(k.mr);
	ibv_destroy_cq(k.cq);
	ibv_destroy_comp_channel(k.ch);
	ibv_dealloc_pd(k.pd);
	ibv_close_device(k.ctx);
	close(k.sock);
	free(k.buf);
	free(k.src);
	return 0;
}
