// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_dp_bench: a small harness for the provider's data path, to be run
 * under callgrind. It sends N UD messages from a QP to itself (the
 * device's loopback), one ibv_post_send and one ibv_post_recv per message,
 * and polls every completion, then prints how many times it called
 * ibv_post_send and ibv_poll_cq; callgrind's inclusive instruction counts
 * of libkite's kite_post_send and kite_poll_cq divided by those give the
 * instructions per call (scripts/guest/bench.sh does the division).
 *
 * usage: kite_dp_bench [-d DEVICE] [-g GID_INDEX] [-n MESSAGES]
 *
 * Copyright (c) 2026 Kite
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define QKEY		0x11111111
#define MSG_SIZE	64
#define DEPTH		64

static int fail(const char *what)
{
	fprintf(stderr, "kite_dp_bench: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	const char *name = "kite0";
	struct ibv_device **list, *dev = NULL;
	unsigned long posts = 0, polls = 0, hits = 0, done = 0, recvd = 0;
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {};
	struct ibv_ah_attr aha = {};
	struct ibv_context *ctx;
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	int gidx = 1, n = 1000, i, c, inflight = 0;
	char *buf;

	while ((c = getopt(argc, argv, "d:g:n:")) != -1) {
		switch (c) {
		case 'd':
			name = optarg;
			break;
		case 'g':
			gidx = atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: kite_dp_bench [-d DEVICE] [-g GID_INDEX] [-n MESSAGES]\n");
			return 2;
		}
	}
	list = ibv_get_device_list(&c);
	for (i = 0; list && i < c; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev)
		return fail("no such device");
	ctx = ibv_open_device(dev);
	if (!ctx)
		return fail("open");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	buf = calloc(DEPTH + 1, 2 * MSG_SIZE + 40);
	if (!pd || !cq || !buf)
		return fail("PD, CQ or buffer");
	mr = ibv_reg_mr(pd, buf, (DEPTH + 1) * (2 * MSG_SIZE + 40),
			IBV_ACCESS_LOCAL_WRITE);
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = mr ? ibv_create_qp(pd, &qpia) : NULL;
	if (!qp)
		return fail("MR or QP");
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = QKEY;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return fail("INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		return fail("RTR");
	attr.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return fail("RTS");
	aha.is_global = 1;
	aha.port_num = 1;
	aha.grh.sgid_index = gidx;
	aha.grh.hop_limit = 64;
	if (ibv_query_gid(ctx, 1, gidx, &aha.grh.dgid))
		return fail("GID");
	ah = ibv_create_ah(pd, &aha);
	if (!ah)
		return fail("AH");

	while (done < (unsigned long)n || recvd < (unsigned long)n) {
		if (posts < (unsigned long)n && inflight < DEPTH / 2) {
			char *slot = buf + (posts % DEPTH) * (2 * MSG_SIZE + 40);
			struct ibv_sge rsge = {
				.addr = (uintptr_t)slot,
				.length = MSG_SIZE + 40,
				.lkey = mr->lkey,
			};
			struct ibv_sge ssge = {
				.addr = (uintptr_t)slot + MSG_SIZE + 40,
				.length = MSG_SIZE,
				.lkey = mr->lkey,
			};
			struct ibv_recv_wr rwr = {
				.wr_id = posts, .sg_list = &rsge, .num_sge = 1,
			}, *bad_rwr;
			struct ibv_send_wr swr = {
				.wr_id = posts, .sg_list = &ssge, .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.wr.ud = { .ah = ah, .remote_qpn = qp->qp_num,
					   .remote_qkey = QKEY },
			}, *bad_swr;

			if (ibv_post_recv(qp, &rwr, &bad_rwr) ||
			    ibv_post_send(qp, &swr, &bad_swr))
				return fail("post");
			posts++;
			inflight++;
			continue;
		}
		c = ibv_poll_cq(cq, 16, wc);
		polls++;
		if (c < 0)
			return fail("poll");
		hits += c > 0;
		for (i = 0; i < c; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "kite_dp_bench: completion %s\n",
					ibv_wc_status_str(wc[i].status));
				return 1;
			}
			if (wc[i].opcode == IBV_WC_RECV) {
				recvd++;
				inflight--;
			} else {
				done++;
			}
		}
	}
	printf("messages %d post_send_calls %lu poll_cq_calls %lu",
	       n, posts, polls);
	printf(" poll_cq_nonempty %lu completions %lu\n", hits, done + recvd);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
