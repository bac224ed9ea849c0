// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_rc_stream: a stream of RDMA WRITEs over one rdma_cm RC connection,
 * several in flight, for the tests that cut the wire under load.
 *
 * The server registers a buffer of SLOTS * SIZE bytes for remote writes,
 * hands its address and rkey to the client in the accept's private data
 * and waits for the client's final SEND_WITH_IMM, whose immediate is the
 * number of writes; then it checks that every slot holds the pattern of
 * the last write to it. The client writes message i (SIZE bytes, 32-bit
 * words i * 0x9e3779b1 + w) to slot i % SLOTS, keeping WINDOW writes
 * outstanding, every one signalled.
 *
 * With -e (expect a cut), the client succeeds only when the stream ends
 * the way IBA 10.7.3 / 11.6.2 say it must when the peer stops answering:
 * one completion with IBV_WC_RETRY_EXC_ERR, every later outstanding write
 * flushed (IBV_WC_WR_FLUSH_ERR), and the QP in the ERROR state.
 *
 * usage: kite_rc_stream -s ADDR [-P PORT] [-S SIZE] [-T SECONDS]
 *        kite_rc_stream -c ADDR [-P PORT] [-S SIZE] [-n WRITES] [-w WINDOW]
 *                       [-p PROGRESS_FILE] [-e] [-T SECONDS]
 * -p: the client writes the number of completed writes to this file
 * every 16 completions (the test cuts the wire once it grows).
 * -T: give up (exit status 2) after this many seconds.
 *
 * Copyright (c) 2026 Kite
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define SLOTS		64
#define MAX_WINDOW	64

/* The server's buffer, in the accept's private data (little endian). */
struct stream_target {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

static struct {
	const char *addr;
	const char *port;
	const char *progress;
	unsigned int size;
	unsigned long writes;
	unsigned int window;
	unsigned int timeout;
	int server;
	int expect_cut;
} opt = {
	.port = "18600",
	.size = 16384,
	.writes = 1000,
	.window = 16,
	.timeout = 120,
};

static void on_alarm(int sig)
{
	static const char msg[] = "kite_rc_stream: timed out\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static int fail(const char *what)
{
	fprintf(stderr, "kite_rc_stream: %s: %s\n", what, strerror(errno));
	return 1;
}

static void fill(uint32_t *p, unsigned long i, unsigned int size)
{
	unsigned int w;

	for (w = 0; w < size / 4; w++)
		p[w] = (uint32_t)(i * 0x9e3779b1u + w);
}

/* Slot j holds the last message i < n with i % SLOTS == j, if any. */
static int verify(const uint32_t *buf, unsigned long n, unsigned int size)
{
	unsigned long i, j, bad = 0, w;
	uint32_t *want = malloc(size);

	if (!want)
		return fail("malloc");
	for (j = 0; j < SLOTS && j < n; j++) {
		i = j + (n - 1 - j) / SLOTS * SLOTS;
		fill(want, i, size);
		for (w = 0; w < size / 4; w++)
			bad += buf[j * size / 4 + w] != want[w];
	}
	free(want);
	if (bad)
		fprintf(stderr, "kite_rc_stream: %lu words differ\n", bad);
	return bad != 0;
}

static struct rdma_cm_id *endpoint(int passive)
{
	struct rdma_addrinfo hints = {
		.ai_port_space = RDMA_PS_TCP,
		.ai_flags = passive ? RAI_PASSIVE : 0,
	};
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = MAX_WINDOW + 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id;
	int ret;

	ret = rdma_getaddrinfo(opt.addr, opt.port, &hints, &res);
	if (ret) {
		fail("rdma_getaddrinfo");
		return NULL;
	}
	ret = rdma_create_ep(&id, res, NULL, passive ? NULL : &qpia);
	rdma_freeaddrinfo(res);
	if (ret) {
		fail("rdma_create_ep");
		return NULL;
	}
	return id;
}

static int run_server(void)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_id *listen_id, *id;
	struct stream_target t;
	struct ibv_recv_wr wr = {}, *bad;
	size_t len = (size_t)SLOTS * opt.size;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	void *buf;
	int ret;

	listen_id = endpoint(1);
	if (!listen_id)
		return 1;
	if (rdma_listen(listen_id, 1))
		return fail("rdma_listen");
	if (rdma_get_request(listen_id, &id))
		return fail("rdma_get_request");
	if (rdma_create_qp(id, NULL, &qpia))
		return fail("rdma_create_qp");
	buf = calloc(1, len);
	if (!buf)
		return fail("calloc");
	mr = ibv_reg_mr(id->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		return fail("ibv_reg_mr");
	/* The final SEND_WITH_IMM carries no data. */
	if (ibv_post_recv(id->qp, &wr, &bad))
		return fail("ibv_post_recv");
	t.addr = htole64((uintptr_t)buf);
	t.rkey = htole32(mr->rkey);
	t.size = htole32(opt.size);
	param.private_data = &t;
	param.private_data_len = sizeof(t);
	if (rdma_accept(id, &param))
		return fail("rdma_accept");
	printf("server: connected, %zu bytes at rkey %#x\n", len, mr->rkey);
	fflush(stdout);
	ret = rdma_get_recv_comp(id, &wc);
	if (ret <= 0)
		return fail("rdma_get_recv_comp");
	if (wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
		fprintf(stderr, "kite_rc_stream: final message: %s, flags %#x\n",
			ibv_wc_status_str(wc.status), wc.wc_flags);
		return 1;
	}
	ret = verify(buf, be32toh(wc.imm_data), opt.size);
	printf("server: %u writes of %u bytes, data %s\n", be32toh(wc.imm_data),
	       opt.size, ret ? "WRONG" : "verified");
	rdma_disconnect(id);
	ibv_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen_id);
	free(buf);
	return ret;
}

/*
 * Written to a temporary file and renamed over the progress file, so that
 * a reader never sees it empty or half written.
 */
static void progress(unsigned long done)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (!opt.progress)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", opt.progress) >= (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", done);
	if (fclose(f) == 0)
		rename(tmp, opt.progress);
}

/* After the first error: account for the writes still outstanding. */
static int client_cut(struct rdma_cm_id *id, const struct ibv_wc *first,
		      unsigned int outstanding, unsigned long done)
{
	unsigned int flushed = 0, other = 0;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	int n;

	printf("client: write %lu of the stream: %s (vendor_err %#x) after %lu completed\n",
	       (unsigned long)first->wr_id, ibv_wc_status_str(first->status),
	       first->vendor_err, done);
	while (outstanding) {
		n = ibv_poll_cq(id->send_cq, 1, &wc);
		if (n < 0)
			return fail("ibv_poll_cq");
		if (!n) {
			usleep(1000);
			continue;
		}
		outstanding--;
		if (wc.status == IBV_WC_WR_FLUSH_ERR)
			flushed++;
		else
			other++;
	}
	if (ibv_query_qp(id->qp, &attr, IBV_QP_STATE, &init))
		return fail("ibv_query_qp");
	printf("client: %u outstanding writes flushed, %u other completions, QP state %s\n",
	       flushed, other, attr.qp_state == IBV_QPS_ERR ? "ERR" : "not ERR");
	return !(first->status == IBV_WC_RETRY_EXC_ERR && !other &&
		 attr.qp_state == IBV_QPS_ERR);
}

static int run_client(void)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	unsigned long posted = 0, done = 0;
	const struct stream_target *t;
	unsigned int outstanding = 0;
	struct ibv_send_wr wr, *bad;
	struct rdma_cm_id *id;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint64_t raddr;
	uint32_t rkey;
	char *buf;
	int n;

	id = endpoint(0);
	if (!id)
		return 1;
	if (rdma_connect(id, &param))
		return fail("rdma_connect");
	if (!id->event || id->event->param.conn.private_data_len < sizeof(*t)) {
		fprintf(stderr, "kite_rc_stream: no target in the accept\n");
		return 1;
	}
	t = id->event->param.conn.private_data;
	raddr = le64toh(t->addr);
	rkey = le32toh(t->rkey);
	if (le32toh(t->size) != opt.size) {
		fprintf(stderr, "kite_rc_stream: server uses -S %u\n", le32toh(t->size));
		return 1;
	}
	buf = malloc((size_t)MAX_WINDOW * opt.size);
	if (!buf)
		return fail("malloc");
	mr = ibv_reg_mr(id->pd, buf, (size_t)MAX_WINDOW * opt.size,
			IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return fail("ibv_reg_mr");
	printf("client: connected, %lu writes of %u bytes, %u in flight\n",
	       opt.writes, opt.size, opt.window);
	fflush(stdout);

	while (done < opt.writes) {
		while (posted < opt.writes && outstanding < opt.window) {
			char *src = buf + (posted % MAX_WINDOW) * opt.size;

			fill((uint32_t *)src, posted, opt.size);
			sge = (struct ibv_sge){ (uintptr_t)src, opt.size, mr->lkey };
			wr = (struct ibv_send_wr){
				.wr_id = posted,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma.remote_addr = raddr + (posted % SLOTS) * opt.size,
				.wr.rdma.rkey = rkey,
			};
			if (ibv_post_send(id->qp, &wr, &bad))
				return fail("ibv_post_send");
			posted++;
			outstanding++;
		}
		n = ibv_poll_cq(id->send_cq, 1, &wc);
		if (n < 0)
			return fail("ibv_poll_cq");
		if (!n) {
			usleep(100);
			continue;
		}
		outstanding--;
		if (wc.status != IBV_WC_SUCCESS) {
			n = client_cut(id, &wc, outstanding, done);
			if (!opt.expect_cut)
				return 1;
			printf("client: the stream ended as a cut wire must end it: %s\n",
			       n ? "NO" : "yes");
			return n;
		}
		if (wc.wr_id != done) {
			fprintf(stderr, "kite_rc_stream: write %lu completed before %lu\n",
				(unsigned long)wc.wr_id, done);
			return 1;
		}
		if (++done % 16 == 0)
			progress(done);
	}
	if (opt.expect_cut) {
		fprintf(stderr, "kite_rc_stream: all %lu writes completed: no cut\n", done);
		return 1;
	}
	/* Tell the server how many writes to check. */
	wr = (struct ibv_send_wr){
		.wr_id = posted,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32((uint32_t)done),
	};
	if (ibv_post_send(id->qp, &wr, &bad))
		return fail("ibv_post_send");
	if (rdma_get_send_comp(id, &wc) <= 0)
		return fail("rdma_get_send_comp");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "kite_rc_stream: final send: %s\n", ibv_wc_status_str(wc.status));
		return 1;
	}
	printf("client: %lu writes completed in order\n", done);
	rdma_disconnect(id);
	ibv_dereg_mr(mr);
	rdma_destroy_ep(id);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "s:c:P:S:n:w:p:eT:")) != -1) {
		switch (c) {
		case 's':
		case 'c':
			opt.server = c == 's';
			opt.addr = optarg;
			break;
		case 'P':
			opt.port = optarg;
			break;
		case 'S':
			opt.size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			opt.writes = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			opt.window = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			opt.progress = optarg;
			break;
		case 'e':
			opt.expect_cut = 1;
			break;
		case 'T':
			opt.timeout = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!opt.addr || !opt.size || opt.size % 4 || opt.size > (1u << 24) ||
	    !opt.window || opt.window > MAX_WINDOW || !opt.writes ||
	    opt.writes > UINT32_MAX)
		goto usage;
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return opt.server ? run_server() : run_client();
usage:
	fprintf(stderr, "usage: %s -s ADDR | -c ADDR [-P PORT] [-S SIZE] [-n WRITES]\n"
		"       [-w WINDOW] [-p FILE] [-e] [-T SECONDS]\n", argv[0]);
	return 2;
}
