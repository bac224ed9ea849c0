// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_churn: create and destroy verbs objects as fast as possible from
 * several threads at once, so that the driver hands out and takes back
 * object numbers (PDNs, CQNs, QPNs, SRQNs, keys, user contexts)
 * concurrently. A number handed out while still in use shows as a failed
 * create ("... already in use" in the kernel log) or a failed destroy.
 *
 * Each thread repeats: on every 16th round a context of its own is opened
 * (and closed at the round's end); a PD, a CQ of a varying depth, an RC QP
 * moved to INIT, a UD QP moved to RTS, an SRQ (when the device has them)
 * and an MR; then all of it destroyed, the SRQ and MR before the QPs every
 * other round and after them otherwise (the verbs allow both for what no
 * other object uses).
 *
 * usage: kite_churn DEVICE THREADS ROUNDS
 * Output: one line, "ok - ..." or "not ok - ...: <first failure>"; the
 * exit status is 0 when every create and destroy succeeded.
 *
 * Copyright (c) 2026 Kite
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static struct ibv_device *dev;
static struct ibv_context *shared_ctx;
static int rounds, has_srq;
static atomic_long objects, failures;
static char first_failure[256];
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;

/* Record a failure; the first one is reported. Returns -1. */
static int fail(const char *what, int err)
{
	pthread_mutex_lock(&failure_lock);
	if (!failures++)
		snprintf(first_failure, sizeof(first_failure), "%s: %s", what,
			 strerror(err));
	pthread_mutex_unlock(&failure_lock);
	return -1;
}

struct objs {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *rc, *ud;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
};

/* Create the round's objects; stop at the first failure. */
static int create_objs(struct ibv_context *ctx, struct objs *o, char *buf,
		       int round)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
	};
	struct ibv_qp_attr a = {};

	o->pd = ibv_alloc_pd(ctx);
	if (!o->pd)
		return fail("alloc PD", errno);
	o->cq = ibv_create_cq(ctx, 16 << (round % 4), NULL, NULL, 0);
	if (!o->cq)
		return fail("create CQ", errno);
	qa.send_cq = o->cq;
	qa.recv_cq = o->cq;
	qa.qp_type = IBV_QPT_RC;
	o->rc = ibv_create_qp(o->pd, &qa);
	if (!o->rc)
		return fail("create RC QP", errno);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(o->rc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("RC QP to INIT", errno);
	qa.qp_type = IBV_QPT_UD;
	o->ud = ibv_create_qp(o->pd, &qa);
	if (!o->ud)
		return fail("create UD QP", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	if (ibv_modify_qp(o->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return fail("UD QP to INIT", errno);
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(o->ud, &a, IBV_QP_STATE))
		return fail("UD QP to RTR", errno);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = round;
	if (ibv_modify_qp(o->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return fail("UD QP to RTS", errno);
	if (has_srq) {
		o->srq = ibv_create_srq(o->pd, &sa);
		if (!o->srq)
			return fail("create SRQ", errno);
	}
	o->mr = ibv_reg_mr(o->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!o->mr)
		return fail("register MR", errno);
	return 0;
}

static void destroy_qp(struct ibv_qp *qp, const char *what)
{
	int err = qp ? ibv_destroy_qp(qp) : 0;

	if (err)
		fail(what, err);
}

static void destroy_srq_mr(struct objs *o)
{
	int err = o->srq ? ibv_destroy_srq(o->srq) : 0;

	if (err)
		fail("destroy SRQ", err);
	err = o->mr ? ibv_dereg_mr(o->mr) : 0;
	if (err)
		fail("deregister MR", err);
}

/* What nothing else uses goes first, in either order; then CQ and PD. */
static void destroy_objs(struct objs *o, int reverse)
{
	int err;

	if (reverse)
		destroy_srq_mr(o);
	destroy_qp(o->ud, "destroy UD QP");
	destroy_qp(o->rc, "destroy RC QP");
	if (!reverse)
		destroy_srq_mr(o);
	err = o->cq ? ibv_destroy_cq(o->cq) : 0;
	if (err)
		fail("destroy CQ", err);
	err = o->pd ? ibv_dealloc_pd(o->pd) : 0;
	if (err)
		fail("deallocate PD", err);
	objects += !!o->pd + !!o->cq + !!o->rc + !!o->ud + !!o->srq + !!o->mr;
}

static void *churn(void *arg)
{
	char *buf = malloc(4096);
	int round;

	if (!buf) {
		fail("allocate a buffer", ENOMEM);
		return NULL;
	}
	for (round = 0; round < rounds; round++) {
		struct ibv_context *ctx = shared_ctx;
		struct objs o = {};

		if (round % 16 == (long)arg % 16) {
			ctx = ibv_open_device(dev);
			if (!ctx) {
				fail("open a context", errno);
				continue;
			}
		}
		create_objs(ctx, &o, buf, round);
		destroy_objs(&o, round & 1);
		if (ctx != shared_ctx && ibv_close_device(ctx))
			fail("close a context", errno);
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_device_attr da;
	pthread_t *tids;
	int i, n, nthreads;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE THREADS ROUNDS\n", argv[0]);
		return 2;
	}
	nthreads = atoi(argv[2]);
	rounds = atoi(argv[3]);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	shared_ctx = dev ? ibv_open_device(dev) : NULL;
	if (!shared_ctx || ibv_query_device(shared_ctx, &da) || nthreads < 1) {
		printf("not ok - churn: cannot open %s\n", argv[1]);
		return 1;
	}
	has_srq = da.max_srq > 0;
	tids = calloc(nthreads, sizeof(*tids));
	for (i = 0; tids && i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, churn, (void *)(long)i))
			fail("start a thread", errno);
	for (i = 0; tids && i < nthreads; i++)
		pthread_join(tids[i], NULL);
	ibv_close_device(shared_ctx);
	ibv_free_device_list(list);
	if (failures) {
		printf("not ok - churn: %d threads x %d rounds: %ld failures, the first: %s\n",
		       nthreads, rounds, (long)failures, first_failure);
		return 1;
	}
	printf("ok - churn: %d threads x %d rounds, %ld objects created and destroyed\n",
	       nthreads, rounds, (long)objects);
	return 0;
}
