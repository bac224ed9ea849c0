// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_dp_bench: a small harness for a provider's data path, to be run
 * under callgrind with --collect-atstart=no. It sends N UD messages from a
 * QP to itself (the device's loopback), one send and one receive posted per
 * message, in batches of DEPTH / 2: the batch is posted, the device given
 * time to complete it, then every completion is polled. Callgrind collects
 * only one region (-m): "post", each send post (ibv_post_send, or
 * ibv_wr_start .. ibv_wr_complete with -a wr), or "poll", each ibv_poll_cq
 * call. With -a wr-td the QP is created on, and the CQ with, a parent
 * domain that has a thread domain (ibv_alloc_td(): the provider may leave
 * its locks out). With -p ex the completions are polled through the
 * extended CQ API instead (ibv_start_poll .. ibv_end_poll, up to 16 at a
 * time, reading each one's wr_id, status and opcode: what the program uses
 * of a completion), on a CQ from ibv_create_cq_ex(). The collected
 * instructions divided by the count it prints give the instructions per
 * post or per completion
 * (scripts/guest/bench.sh does the division). Any device: libkite's and
 * librxe's figures are measured the same way.
 *
 * usage: kite_dp_bench [-d DEVICE] [-g GID_INDEX] [-n MESSAGES]
 *                      [-a post|wr|wr-td] [-m post|poll] [-p cq|ex]
 *
 * Copyright (c) 2026 Kite
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <valgrind/callgrind.h>

#define QKEY		0x11111111
#define MSG_SIZE	64
#define DEPTH		64
#define SLOT		(2 * MSG_SIZE + 40)

static int fail(const char *what)
{
	fprintf(stderr, "kite_dp_bench: %s: %s\n", what, strerror(errno));
	return 1;
}

struct bench {
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;	/* -p ex */
	struct ibv_pd *pd;
	struct ibv_td *td;	/* -a wr-td */
	struct ibv_pd *pdom;	/* -a wr-td: pd with td */
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* -a wr */
	struct ibv_ah *ah;
	char *buf;
	int collect_post, collect_poll;
	int ex;			/* -p ex */
};

/* Post the receive and the send of message @i. */
static int post(struct bench *b, unsigned long i)
{
	char *slot = b->buf + (i % DEPTH) * SLOT;
	struct ibv_sge rsge = {
		.addr = (uintptr_t)slot,
		.length = MSG_SIZE + 40,
		.lkey = b->mr->lkey,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)slot + MSG_SIZE + 40,
		.length = MSG_SIZE,
		.lkey = b->mr->lkey,
	};
	struct ibv_recv_wr rwr = {
		.wr_id = i, .sg_list = &rsge, .num_sge = 1,
	}, *bad_rwr;
	struct ibv_send_wr swr = {
		.wr_id = i, .sg_list = &ssge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = b->ah, .remote_qpn = b->qp->qp_num,
			   .remote_qkey = QKEY },
	}, *bad_swr;
	int err;

	if (ibv_post_recv(b->qp, &rwr, &bad_rwr))
		return -1;
	if (b->collect_post)
		CALLGRIND_TOGGLE_COLLECT;
	if (b->qpx) {
		ibv_wr_start(b->qpx);
		b->qpx->wr_id = i;
		b->qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(b->qpx);
		ibv_wr_set_ud_addr(b->qpx, b->ah, b->qp->qp_num, QKEY);
		ibv_wr_set_sge(b->qpx, ssge.lkey, ssge.addr, ssge.length);
		err = ibv_wr_complete(b->qpx);
	} else {
		err = ibv_post_send(b->qp, &swr, &bad_swr);
	}
	if (b->collect_post)
		CALLGRIND_TOGGLE_COLLECT;
	return err ? -1 : 0;
}

static int setup(struct bench *b, struct ibv_device *dev, int gidx, int wr,
		 int td, int ex)
{
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 2 * DEPTH,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_parent_domain_init_attr pda = {};
	struct ibv_td_init_attr tda = {};
	struct ibv_qp_init_attr_ex qpia = {
		.qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp_attr attr = {};
	struct ibv_ah_attr aha = {};

	b->ctx = ibv_open_device(dev);
	if (!b->ctx)
		return fail("open");
	b->pd = ibv_alloc_pd(b->ctx);
	if (b->pd && td) {
		b->td = ibv_alloc_td(b->ctx, &tda);
		if (!b->td)
			return fail("thread domain");
		pda.pd = b->pd;
		pda.td = b->td;
		b->pdom = ibv_alloc_parent_domain(b->ctx, &pda);
		if (!b->pdom)
			return fail("parent domain");
		cqa.parent_domain = b->pdom;
		b->cqx = ibv_create_cq_ex(b->ctx, &cqa);
	} else if (ex) {
		cqa.comp_mask = 0;
		b->cqx = ibv_create_cq_ex(b->ctx, &cqa);
	} else {
		b->cq = ibv_create_cq(b->ctx, 2 * DEPTH, NULL, NULL, 0);
	}
	if (b->cqx)
		b->cq = ibv_cq_ex_to_cq(b->cqx);
	b->buf = calloc(DEPTH + 1, SLOT);
	if (!b->pd || !b->cq || !b->buf)
		return fail("PD, CQ or buffer");
	b->mr = ibv_reg_mr(b->pd, b->buf, (DEPTH + 1) * SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	qpia.send_cq = b->cq;
	qpia.recv_cq = b->cq;
	qpia.pd = b->pdom ? b->pdom : b->pd;
	if (wr) {
		qpia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qpia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	}
	b->qp = b->mr ? ibv_create_qp_ex(b->ctx, &qpia) : NULL;
	if (!b->qp)
		return fail("MR or QP");
	if (wr) {
		b->qpx = ibv_qp_to_qp_ex(b->qp);
		if (!b->qpx)
			return fail("ibv_qp_to_qp_ex");
	}
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = QKEY;
	if (ibv_modify_qp(b->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return fail("INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(b->qp, &attr, IBV_QP_STATE))
		return fail("RTR");
	attr.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(b->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return fail("RTS");
	aha.is_global = 1;
	aha.port_num = 1;
	aha.grh.sgid_index = gidx;
	aha.grh.hop_limit = 64;
	if (ibv_query_gid(b->ctx, 1, gidx, &aha.grh.dgid))
		return fail("GID");
	b->ah = ibv_create_ah(b->pd, &aha);
	if (!b->ah)
		return fail("AH");
	return 0;
}

static void teardown(struct bench *b)
{
	ibv_destroy_ah(b->ah);
	ibv_destroy_qp(b->qp);
	ibv_dereg_mr(b->mr);
	ibv_destroy_cq(b->cq);
	if (b->pdom)
		ibv_dealloc_pd(b->pdom);
	if (b->td)
		ibv_dealloc_td(b->td);
	ibv_dealloc_pd(b->pd);
	ibv_close_device(b->ctx);
	free(b->buf);
}

/*
 * Up to @max completions into @wc: with ibv_poll_cq(), or through the
 * extended API (what the program reads of each: wr_id, status, opcode).
 * Only this is collected with -m poll.
 */
static int poll(struct bench *b, int max, struct ibv_wc *wc)
{
	int c = 0, ret;

	if (b->collect_poll)
		CALLGRIND_TOGGLE_COLLECT;
	if (!b->ex) {
		c = ibv_poll_cq(b->cq, max, wc);
	} else {
		ret = ibv_start_poll(b->cqx, &(struct ibv_poll_cq_attr){});
		while (!ret) {
			wc[c].wr_id = b->cqx->wr_id;
			wc[c].status = b->cqx->status;
			wc[c].opcode = ibv_wc_read_opcode(b->cqx);
			ret = ++c < max ? ibv_next_poll(b->cqx) : ENOENT;
		}
		if (c)
			ibv_end_poll(b->cqx);
		if (ret != ENOENT)
			c = -1;
	}
	if (b->collect_poll)
		CALLGRIND_TOGGLE_COLLECT;
	return c;
}

int main(int argc, char **argv)
{
	const char *name = "kite0", *api = "post", *region = "post", *papi = "cq";
	unsigned long posts = 0, polls = 0, empty = 0, done = 0, recvd = 0;
	struct ibv_device **list, *dev = NULL;
	struct bench b = {};
	struct ibv_wc wc[16];
	int gidx = 1, n = 1000, i, c;

	while ((c = getopt(argc, argv, "d:g:n:a:m:p:")) != -1) {
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
		case 'a':
			api = optarg;
			break;
		case 'm':
			region = optarg;
			break;
		case 'p':
			papi = optarg;
			break;
		default:
			goto usage;
		}
	}
	if ((strcmp(api, "post") && strcmp(api, "wr") && strcmp(api, "wr-td")) ||
	    (strcmp(region, "post") && strcmp(region, "poll")) ||
	    (strcmp(papi, "cq") && strcmp(papi, "ex")))
		goto usage;
	b.ex = !strcmp(papi, "ex");
	b.collect_post = !strcmp(region, "post");
	b.collect_poll = !strcmp(region, "poll");
	list = ibv_get_device_list(&c);
	for (i = 0; list && i < c; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev)
		return fail("no such device");
	if (setup(&b, dev, gidx, strcmp(api, "post"), !strcmp(api, "wr-td"),
		  b.ex))
		return 1;

	while (done < (unsigned long)n || recvd < (unsigned long)n) {
		unsigned long batch = 0;

		/* A batch posted, then completed by the device, then polled. */
		while (posts < (unsigned long)n && batch < DEPTH / 2) {
			if (post(&b, posts))
				return fail("post");
			posts++;
			batch++;
		}
		usleep(1000);
		while (done < posts || recvd < posts) {
			c = poll(&b, 16, wc);
			polls++;
			if (c < 0)
				return fail("poll");
			if (!c) {
				empty++;
				usleep(1000);
			}
			for (i = 0; i < c; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					fprintf(stderr, "kite_dp_bench: completion %s\n",
						ibv_wc_status_str(wc[i].status));
					return 1;
				}
				if (wc[i].opcode == IBV_WC_RECV)
					recvd++;
				else
					done++;
			}
		}
	}
	printf("device %s api %s poll %s region %s messages %d", name, api,
	       papi, region, n);
	printf(" posts %lu polls %lu empty_polls %lu completions %lu\n",
	       posts, polls, empty, done + recvd);
	teardown(&b);
	ibv_free_device_list(list);
	return 0;
usage:
	fprintf(stderr, "usage: kite_dp_bench [-d DEVICE] [-g GID_INDEX] [-n MESSAGES]");
	fprintf(stderr, " [-a post|wr|wr-td] [-m post|poll] [-p cq|ex]\n");
	return 2;
}
