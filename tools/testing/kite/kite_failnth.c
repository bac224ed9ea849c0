// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_failnth: every allocation kite_ib makes on a verb's path, failed
 * in turn.
 *
 * For each verb below the program fails the 1st, then the 2nd, ... kernel
 * allocation made while kite_ib's code is on the stack, through the
 * kernel's per-task fault injection (/proc/thread-self/fail-nth, with
 * failslab and fail_page_alloc restricted to kite_ib's text by their
 * stack-trace filter; the caller sets that up), until the verb completes
 * without reaching the armed allocation. Every injected failure must make
 * the verb fail with an errno and leave nothing behind (the caller checks
 * "rdma res" and kmemleak); the verb must succeed afterwards.
 *
 * Output: "ok - ..." / "not ok - ..." lines, one per verb, with the
 * number of failures injected; the exit status is the number of failed
 * checks.
 *
 * usage: kite_failnth [DEVICE [GID_INDEX [VERB [N]]]] (default: kite0, 0, all)
 *        kite_failnth --list                          (the verbs, one a line)
 * VERB sweeps only the verb of that name, so that the caller can check for
 * leaks verb by verb (a leaked reference to the process shows only once
 * it has exited); with N, only its Nth allocation is failed, once, so that
 * a leak can be pinned to one failed allocation.
 *
 * Copyright (c) 2026 Kite
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Bound on allocations per verb: a verb that makes more is reported. */
#define MAX_NTH		400

static int failed;

static void report(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%s - failnth: %s: ", ok ? "ok" : "not ok", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failed++;
}

static int nth_fd = -1;

static void nth_arm(int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (pwrite(nth_fd, buf, len, 0) != len) {
		perror("fail-nth");
		exit(100);
	}
}

/* 1 if the armed failure was injected; disarms. */
static int nth_fired(void)
{
	char buf[16] = "";
	int fired;

	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) <= 0) {
		perror("fail-nth");
		exit(100);
	}
	fired = atoi(buf) == 0;
	nth_arm(0);
	return fired;
}

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	void *buf;
	int gid_index;
	union ibv_gid gid;
	struct ibv_port_attr port;
};

/*
 * A verb under test: make() makes the object (0, or an errno), undo()
 * destroys what make() made.
 */
struct verb {
	const char *name;
	int (*make)(struct env *e, void **obj);
	void (*undo)(struct env *e, void *obj);
};

static int make_ctx(struct env *e, void **obj)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]),
			    ibv_get_device_name(e->ctx->device)))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	*obj = ctx;
	return ctx ? 0 : (errno ? errno : EIO);
}

static void undo_ctx(struct env *e, void *obj)
{
	ibv_close_device(obj);
}

static int make_pd(struct env *e, void **obj)
{
	*obj = ibv_alloc_pd(e->ctx);
	return *obj ? 0 : errno;
}

static void undo_pd(struct env *e, void *obj)
{
	ibv_dealloc_pd(obj);
}

static int make_mr(struct env *e, void **obj)
{
	*obj = ibv_reg_mr(e->pd, e->buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return *obj ? 0 : errno;
}

static void undo_mr(struct env *e, void *obj)
{
	ibv_dereg_mr(obj);
}

static int make_cq(struct env *e, void **obj)
{
	*obj = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	return *obj ? 0 : errno;
}

static void undo_cq(struct env *e, void *obj)
{
	ibv_destroy_cq(obj);
}

static int make_cq_ex(struct env *e, void **obj)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(e->ctx, &attr);

	*obj = cq ? ibv_cq_ex_to_cq(cq) : NULL;
	return *obj ? 0 : errno;
}

static int resize_cq(struct env *e, void **obj)
{
	static int cqe = 512;
	int err;

	/* Alternate sizes, so that every call really resizes. */
	err = ibv_resize_cq(e->cq, cqe);
	if (!err)
		cqe = cqe == 512 ? 128 : 512;
	*obj = NULL;
	return err;
}

static void undo_nothing(struct env *e, void *obj)
{
}

static int make_srq(struct env *e, void **obj)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};

	*obj = ibv_create_srq(e->pd, &attr);
	return *obj ? 0 : errno;
}

static void undo_srq(struct env *e, void *obj)
{
	ibv_destroy_srq(obj);
}

static int resize_srq(struct env *e, void **obj)
{
	static uint32_t max_wr = 512;
	struct ibv_srq_attr attr = { .max_wr = max_wr };
	int err;

	/* Alternate sizes, so that every call really resizes. */
	err = ibv_modify_srq(e->srq, &attr, IBV_SRQ_MAX_WR);
	if (!err)
		max_wr = max_wr == 512 ? 64 : 512;
	*obj = NULL;
	return err;
}

static struct ibv_qp *qp_create(struct env *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 64,
		},
	};

	return ibv_create_qp(e->pd, &attr);
}

static int make_qp_rc(struct env *e, void **obj)
{
	*obj = qp_create(e, IBV_QPT_RC);
	return *obj ? 0 : errno;
}

static int make_qp_ud(struct env *e, void **obj)
{
	*obj = qp_create(e, IBV_QPT_UD);
	return *obj ? 0 : errno;
}

static void undo_qp(struct env *e, void *obj)
{
	ibv_destroy_qp(obj);
}

static struct ibv_ah_attr ah_attr(struct env *e)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.port_num = 1,
		.grh = {
			.dgid = e->gid,
			.sgid_index = e->gid_index,
			.hop_limit = 64,
		},
	};

	return ah;
}

/* RESET -> INIT -> RTR -> RTS of an RC QP connected to itself. */
static int modify_rc(struct env *e, void **obj)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int err;

	*obj = NULL;
	err = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		goto reset;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = e->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr = ah_attr(e);
	err = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		goto reset;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
reset:
	/* Back to RESET for the next round (or the next verb). */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE) && !err)
		err = EIO;
	return err;
}

static int make_ah(struct env *e, void **obj)
{
	struct ibv_ah_attr a = ah_attr(e);

	*obj = ibv_create_ah(e->pd, &a);
	return *obj ? 0 : errno;
}

static void undo_ah(struct env *e, void *obj)
{
	ibv_destroy_ah(obj);
}

static int make_mw(struct env *e, void **obj)
{
	*obj = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);
	return *obj ? 0 : errno;
}

static void undo_mw(struct env *e, void *obj)
{
	ibv_dealloc_mw(obj);
}

static const struct verb verbs[] = {
	{ "open_device (alloc_ucontext)", make_ctx, undo_ctx },
	{ "alloc_pd", make_pd, undo_pd },
	{ "reg_mr 1 MiB", make_mr, undo_mr },
	{ "create_cq", make_cq, undo_cq },
	{ "create_cq_ex", make_cq_ex, undo_cq },
	{ "resize_cq", resize_cq, undo_nothing },
	{ "create_srq", make_srq, undo_srq },
	{ "resize_srq (modify_srq IBV_SRQ_MAX_WR)", resize_srq, undo_nothing },
	{ "create_qp RC", make_qp_rc, undo_qp },
	{ "create_qp UD", make_qp_ud, undo_qp },
	{ "modify_qp RC to RTS", modify_rc, undo_nothing },
	{ "create_ah", make_ah, undo_ah },
	{ "alloc_mw", make_mw, undo_mw },
};

/*
 * Fail the 1st, 2nd, ... allocation of @v until one run makes no armed
 * allocation; that run must succeed.
 */
static void sweep(struct env *e, const struct verb *v)
{
	int n, err, fired, silent = 0;
	void *obj;

	for (n = 1; n <= MAX_NTH; n++) {
		nth_arm(n);
		err = v->make(e, &obj);
		fired = nth_fired();
		if (!fired) {
			report(!err, v->name,
			       "%d allocations failed in turn, each unwound; then it succeeds (errno %d)",
			       n - 1, err);
			if (!err)
				v->undo(e, obj);
			if (silent)
				report(1, v->name,
				       "%d injected failures absorbed by a fallback",
				       silent);
			return;
		}
		if (!err) {
			/* A failure the driver (or the core) recovered from. */
			silent++;
			v->undo(e, obj);
		}
	}
	report(0, v->name, "more than %d allocations", MAX_NTH);
}

/* Fail only allocation @n of @v, once; print what happened. */
static void fail_one(struct env *e, const struct verb *v, int n)
{
	void *obj;
	int err, fired;

	nth_arm(n);
	err = v->make(e, &obj);
	fired = nth_fired();
	if (!err)
		v->undo(e, obj);
	/* A diagnostic, not a check: the sweep checks the outcome. */
	printf("# failnth: %s: allocation %d %s; the verb %s (errno %d)\n",
	       v->name, n, fired ? "failed" : "not reached",
	       err ? "failed" : "succeeded", err);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "kite0";
	const char *only = argc > 3 ? argv[3] : NULL;
	int one = argc > 4 ? atoi(argv[4]) : 0;
	struct ibv_device **list;
	struct env e = { .gid_index = argc > 2 ? atoi(argv[2]) : 0 };
	unsigned int i;
	void *obj;

	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < ARRAY_SIZE(verbs); i++)
			printf("%s\n", verbs[i].name);
		return 0;
	}
	for (i = 0; only && i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(verbs[i].name, only))
			break;
	if (only && i == ARRAY_SIZE(verbs)) {
		fprintf(stderr, "kite_failnth: no verb '%s' (--list)\n", only);
		return 100;
	}
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0) {
		perror("/proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
		return 100;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			e.ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!e.ctx) {
		fprintf(stderr, "kite_failnth: cannot open %s\n", name);
		return 100;
	}
	e.buf = aligned_alloc(4096, 1 << 20);
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = ibv_create_cq(e.ctx, 256, NULL, NULL, 0);
	if (!e.buf || !e.pd || !e.cq ||
	    ibv_query_gid(e.ctx, 1, e.gid_index, &e.gid)) {
		fprintf(stderr, "kite_failnth: set-up failed\n");
		return 100;
	}
	e.qp = qp_create(&e, IBV_QPT_RC);
	if (!make_srq(&e, &obj))
		e.srq = obj;
	if (!e.qp || !e.srq) {
		fprintf(stderr, "kite_failnth: set-up QP or SRQ failed\n");
		return 100;
	}
	for (i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (only && strcmp(verbs[i].name, only))
			continue;
		if (one > 0)
			fail_one(&e, &verbs[i], one);
		else
			sweep(&e, &verbs[i]);
	}
	ibv_destroy_srq(e.srq);
	ibv_destroy_qp(e.qp);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	free(e.buf);
	return failed > 100 ? 100 : failed;
}
