// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_uverbs_test: kite_ib's user-object ABI from user space.
 *
 * Creates, resizes and destroys user CQs, creates, modifies, queries and
 * destroys user QPs and SRQs on a Kite device through the uverbs commands, with the
 * driver data of include/uapi/rdma/kite-abi.h built here, so that each
 * field can also be given a bad value: every bad request must fail with
 * the errno the driver documents and leave nothing behind. Then the same
 * through libkite's verbs, as an application would.
 *
 * Output: one line per check, "ok - <what>" or "not ok - <what>: <why>";
 * the exit status is the number of failed checks (at most 100).
 *
 * usage: kite_uverbs_test [DEVICE [--data | --hold N]]    (default: kite0)
 *   --data: also check that a UD send to the QP itself arrives (the
 *           device's loopback), with its GRH and payload, polled with
 *           ibv_poll_cq() and with the extended CQ API, that an armed
 *           extended CQ raises a completion event, every operation of
 *           the extended QP API (ibv_wr_*) over RC and UD QPs looped back,
 *           UD multicast to the attached QPs through the device,
 *           memory windows of both types bound, used, invalidated, and
 *           the NIC's PTP hardware clock with the completion timestamps
 *   --hold N: only connect an RC QP to itself, complete N 4096-byte RDMA
 *           WRITEs on it, print "held QPN" and keep the QP until standard
 *           input closes (for the QP's counters, rdma statistic qp)
 *   --await-fatal SECONDS: hold a PD, a CQ, an RC QP connected to
 *           itself, an MR of a dma-buf and (when the device has it)
 *           device memory under an MR, print "holding", and wait up to
 *           SECONDS for the context's asynchronous events: succeed when
 *           the device goes away as an application must see it
 *           (IBV_EVENT_DEVICE_FATAL, then ibv_alloc_pd() failing with
 *           EIO, and the context closed cleanly)
 *   --phc-near: only check that the PTP hardware clock of DEVICE's PCI
 *           function reads the system's time, within two seconds
 *
 * Copyright (c) 2026 Kite
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ptp_clock.h>
#include <linux/udmabuf.h>

#include <infiniband/driver.h>
#include <infiniband/verbs.h>
#include <rdma/kite-abi.h>
#include <util/mmio.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define CQE_SIZE	64	/* prm_cq.rst: 64-byte CQEs */
#define CQE_OP_INVALID	0xf	/* prm_cq.rst: opcode INVALID, op_own 7:4 */
#define RING_ALIGN	4096

static int failed;
static int passed;

static void report(int ok, const char *fmt, ...)
{
	va_list ap;

	printf(ok ? "ok - " : "not ok - ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

/* The request as the kernel sees it: core command, then driver data. */
struct cq_cmd {
	struct ibv_create_cq ibv_cmd;
	struct kite_ib_create_cq_req drv;
	uint8_t extra[8];	/* trailing bytes a newer library could send */
};

struct cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct kite_ib_create_cq_resp drv;
};

struct resize_cmd {
	struct ibv_resize_cq ibv_cmd;
	struct kite_ib_resize_cq_req drv;
};

struct qp_cmd {
	struct ibv_create_qp ibv_cmd;
	struct kite_ib_create_qp_req drv;
};

struct qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct kite_ib_create_qp_resp drv;
};

struct srq_cmd {
	struct ibv_create_srq ibv_cmd;
	struct kite_ib_create_srq_req drv;
};

struct srq_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct kite_ib_create_srq_resp drv;
};

struct srq_resize_cmd {
	struct ibv_modify_srq ibv_cmd;
	struct kite_ib_modify_srq_req drv;
};

/* A ring of @size bytes, 4 KiB aligned, every CQE slot marked INVALID. */
static void *ring_alloc(size_t size)
{
	void *p;
	size_t i;

	if (posix_memalign(&p, RING_ALIGN, size))
		return NULL;
	memset(p, 0, size);
	for (i = 0; i + CQE_SIZE <= size; i += CQE_SIZE)
		((uint32_t *)((char *)p + i))[0] = CQE_OP_INVALID << 4;
	return p;
}

struct ucq {
	struct ibv_cq cq;
	void *buf;
	uint64_t *dbrec;
	uint32_t cqn;
};

/*
 * Create a CQ of @cqe entries with 2^@log_depth slots; @tweak may spoil
 * the request. Returns 0 or a negative errno.
 */
static int cq_create(struct ibv_context *ctx, struct ucq *c, int cqe,
		     unsigned int log_depth,
		     void (*tweak)(struct cq_cmd *cmd, size_t *len))
{
	struct cq_resp resp = {};
	struct cq_cmd cmd = {};
	size_t len = sizeof(cmd) - sizeof(cmd.extra);
	int ret;

	memset(c, 0, sizeof(*c));
	c->buf = ring_alloc(((size_t)CQE_SIZE << (log_depth > 20 ? 1 : log_depth)));
	if (posix_memalign((void **)&c->dbrec, 64, 64))
		c->dbrec = NULL;
	if (!c->buf || !c->dbrec)
		return -ENOMEM;
	*c->dbrec = 0;
	cmd.drv.buf_addr = (uintptr_t)c->buf;
	cmd.drv.dbrec_addr = (uintptr_t)c->dbrec;
	cmd.drv.log_depth = log_depth;
	if (tweak)
		tweak(&cmd, &len);
	ret = ibv_cmd_create_cq(ctx, cqe, NULL, 0, &c->cq, &cmd.ibv_cmd, len,
				&resp.ibv_resp, sizeof(resp));
	if (!ret)
		c->cqn = resp.drv.cqn;
	return -ret;
}

static void cq_free(struct ucq *c)
{
	free(c->buf);
	free(c->dbrec);
	c->buf = NULL;
	c->dbrec = NULL;
}

/* The request is bad: creation must fail with @want. */
static void cq_bad(struct ibv_context *ctx, const char *what, int want,
		   int cqe, unsigned int log_depth,
		   void (*tweak)(struct cq_cmd *cmd, size_t *len))
{
	struct ucq c;
	int ret;

	ret = -cq_create(ctx, &c, cqe, log_depth, tweak);
	if (!ret) {
		report(0, "create CQ with %s: accepted (CQN %u)", what, c.cqn);
		ibv_cmd_destroy_cq(&c.cq);
	} else {
		report(ret == want, "create CQ with %s: %s (want %s)", what,
		       strerror(ret), strerror(want));
	}
	cq_free(&c);
}

static void tw_comp_mask(struct cq_cmd *cmd, size_t *len)
{
	cmd->drv.comp_mask = 1;
}

static void tw_extra_nonzero(struct cq_cmd *cmd, size_t *len)
{
	cmd->extra[3] = 1;
	*len = sizeof(*cmd);
}

static void tw_extra_zero(struct cq_cmd *cmd, size_t *len)
{
	*len = sizeof(*cmd);
}

static void tw_short(struct cq_cmd *cmd, size_t *len)
{
	*len = sizeof(cmd->ibv_cmd) + sizeof(cmd->drv) - 8;
}

static void tw_buf_misaligned(struct cq_cmd *cmd, size_t *len)
{
	cmd->drv.buf_addr += CQE_SIZE;
}

static void tw_buf_unmapped(struct cq_cmd *cmd, size_t *len)
{
	cmd->drv.buf_addr = 0x1000;
}

static void tw_dbrec_misaligned(struct cq_cmd *cmd, size_t *len)
{
	cmd->drv.dbrec_addr += 4;
}

static void tw_dbrec_null(struct cq_cmd *cmd, size_t *len)
{
	cmd->drv.dbrec_addr = 0;
}

static void *ro_page;

static void tw_buf_readonly(struct cq_cmd *cmd, size_t *len)
{
	cmd->drv.buf_addr = (uintptr_t)ro_page;
}

/* A resize that must fail with @want. */
static void cq_bad_resize(struct ucq *c, const char *what, int want,
			  unsigned int log_depth, uint32_t comp_mask, void *buf)
{
	struct ib_uverbs_resize_cq_resp resp = {};
	struct resize_cmd cmd = {};
	int ret;

	cmd.drv.buf_addr = (uintptr_t)buf;
	cmd.drv.log_depth = log_depth;
	cmd.drv.comp_mask = comp_mask;
	ret = ibv_cmd_resize_cq(&c->cq, 500, &cmd.ibv_cmd, sizeof(cmd),
				&resp, sizeof(resp));
	report(ret == want, "resize CQ %s: %s (want %s)", what, strerror(ret),
	       strerror(want));
}

static void test_cqs(struct ibv_context *ctx, const struct ibv_device_attr *da)
{
	struct ib_uverbs_resize_cq_resp rresp = {};
	struct resize_cmd rcmd = {};
	struct ucq c;
	void *nbuf;
	int ret;

	ret = -cq_create(ctx, &c, 100, 7, NULL);
	report(!ret && c.cqn, "create CQ of 100 CQEs in 128 slots: %s, CQN %u",
	       strerror(ret), c.cqn);
	if (ret) {
		cq_free(&c);
		return;
	}
	report(c.cq.cqe == 127, "CQ reports 127 usable CQEs (one slot for resize): %d",
	       c.cq.cqe);

	/* Resize to 512 slots. */
	nbuf = ring_alloc((size_t)CQE_SIZE << 9);
	rcmd.drv.buf_addr = (uintptr_t)nbuf;
	rcmd.drv.log_depth = 9;
	ret = ibv_cmd_resize_cq(&c.cq, 500, &rcmd.ibv_cmd, sizeof(rcmd),
				&rresp, sizeof(rresp));
	report(!ret && c.cq.cqe == 511, "resize CQ to 500 CQEs in 512 slots: %s, cqe %d",
	       strerror(ret), c.cq.cqe);
	if (!ret) {
		free(c.buf);
		c.buf = nbuf;
	} else {
		free(nbuf);
	}

	/* Resizes that cannot work leave the CQ as it is. */
	nbuf = ring_alloc((size_t)CQE_SIZE << 9);
	cq_bad_resize(&c, "to 500 CQEs in 256 slots", EINVAL, 8, 0, nbuf);
	cq_bad_resize(&c, "with an unknown comp_mask", EOPNOTSUPP, 9, 4, nbuf);
	free(nbuf);
	cq_bad_resize(&c, "to an unmapped ring", EFAULT, 9, 0,
		      (void *)0x2000);
	report(c.cq.cqe == 511, "the CQ is unchanged after failed resizes: cqe %d",
	       c.cq.cqe);

	ret = ibv_cmd_destroy_cq(&c.cq);
	report(!ret, "destroy CQ: %s", strerror(ret));
	cq_free(&c);

	cq_bad(ctx, "an unknown comp_mask bit", EOPNOTSUPP, 100, 7,
	       tw_comp_mask);
	cq_bad(ctx, "non-zero bytes after the request", EOPNOTSUPP, 100, 7,
	       tw_extra_nonzero);
	cq_bad(ctx, "a short request", EINVAL, 100, 7, tw_short);
	cq_bad(ctx, "log_depth 0", EINVAL, 1, 0, NULL);
	cq_bad(ctx, "0 CQEs", EINVAL, 0, 7, NULL);
	cq_bad(ctx, "log_depth 17", EINVAL, 100, 17, NULL);
	cq_bad(ctx, "128 slots for 128 CQEs (no free slot)", EINVAL, 128, 7,
	       NULL);
	cq_bad(ctx, "more CQEs than max_cqe", EINVAL, da->max_cqe + 1, 17,
	       NULL);
	cq_bad(ctx, "a ring not 4 KiB aligned", EINVAL, 100, 7,
	       tw_buf_misaligned);
	cq_bad(ctx, "an unmapped ring", EFAULT, 100, 7, tw_buf_unmapped);
	cq_bad(ctx, "a read-only ring", EFAULT, 32, 6, tw_buf_readonly);
	cq_bad(ctx, "a misaligned doorbell record", EINVAL, 100, 7,
	       tw_dbrec_misaligned);
	cq_bad(ctx, "no doorbell record", EINVAL, 100, 7, tw_dbrec_null);

	/* A longer request from a newer library is fine if zero-filled. */
	ret = -cq_create(ctx, &c, 100, 7, tw_extra_zero);
	report(!ret, "create CQ with zeroed bytes after the request: %s",
	       strerror(ret));
	if (!ret)
		ibv_cmd_destroy_cq(&c.cq);
	cq_free(&c);
}

struct uqp {
	struct ibv_qp qp;
	void *sq;
	void *rq;
};

struct qp_geom {
	unsigned int sq_log, sq_shift, rq_log, rq_shift;
	uint32_t comp_mask, reserved;
	int null_sq;
};

static int qp_create(struct ibv_pd *pd, struct ibv_cq *cq, struct uqp *q,
		     enum ibv_qp_type type, const struct ibv_qp_cap *cap,
		     const struct qp_geom *g)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = *cap,
		.qp_type = type,
	};
	struct qp_resp resp = {};
	struct qp_cmd cmd = {};
	unsigned int sq_log = g->sq_log > 16 ? 1 : g->sq_log;
	unsigned int rq_log = g->rq_log > 16 ? 1 : g->rq_log;
	unsigned int sq_shift = g->sq_shift > 12 ? 6 : g->sq_shift;
	unsigned int rq_shift = g->rq_shift > 12 ? 6 : g->rq_shift;

	memset(q, 0, sizeof(*q));
	if (posix_memalign(&q->sq, RING_ALIGN,
			   ((size_t)1 << sq_log << sq_shift) + RING_ALIGN) ||
	    posix_memalign(&q->rq, RING_ALIGN,
			   ((size_t)1 << rq_log << rq_shift) + RING_ALIGN))
		return -ENOMEM;
	cmd.drv.sq_buf_addr = g->null_sq ? 0 : (uintptr_t)q->sq;
	cmd.drv.rq_buf_addr = (uintptr_t)q->rq;
	cmd.drv.sq_log_depth = g->sq_log;
	cmd.drv.sq_wqe_shift = g->sq_shift;
	cmd.drv.rq_log_depth = g->rq_log;
	cmd.drv.rq_wqe_shift = g->rq_shift;
	cmd.drv.comp_mask = g->comp_mask;
	cmd.drv.reserved = g->reserved;
	return -ibv_cmd_create_qp(pd, &q->qp, &attr, &cmd.ibv_cmd,
				  sizeof(cmd), &resp.ibv_resp, sizeof(resp));
}

static void qp_free(struct uqp *q)
{
	free(q->sq);
	free(q->rq);
}

static void qp_bad(struct ibv_pd *pd, struct ibv_cq *cq, const char *what,
		   int want, const struct ibv_qp_cap *cap,
		   const struct qp_geom *g)
{
	struct uqp q;
	int ret;

	ret = -qp_create(pd, cq, &q, IBV_QPT_RC, cap, g);
	if (!ret) {
		report(0, "create QP with %s: accepted (QPN %u)", what,
		       q.qp.qp_num);
		ibv_cmd_destroy_qp(&q.qp);
	} else {
		report(ret == want, "create QP with %s: %s (want %s)", what,
		       strerror(ret), strerror(want));
	}
	qp_free(&q);
}

static int qp_modify(struct uqp *q, struct ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(&q->qp, attr, mask, &cmd, sizeof(cmd));
}

static void test_qps(struct ibv_context *ctx, const struct ibv_device_attr *da)
{
	/* RC send WQE: 16 control + 40 opcode segments + 2 SGEs = 88 -> 128. */
	const struct ibv_qp_cap cap = {
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 2, .max_recv_sge = 2,
	};
	const struct qp_geom good = {
		.sq_log = 4, .sq_shift = 7, .rq_log = 4, .rq_shift = 6,
	};
	struct ibv_qp_init_attr init = {};
	struct ib_uverbs_alloc_pd_resp presp;
	struct ibv_alloc_pd pcmd;
	struct ibv_qp_attr attr;
	struct qp_geom g;
	struct ibv_pd pd = {};
	struct ucq c;
	struct uqp q;
	int ret;

	ret = ibv_cmd_alloc_pd(ctx, &pd, &pcmd, sizeof(pcmd), &presp,
			       sizeof(presp));
	report(!ret, "allocate PD: %s", strerror(ret));
	if (ret)
		return;
	ret = -cq_create(ctx, &c, 100, 7, NULL);
	report(!ret, "create CQ for the QPs: %s", strerror(ret));
	if (ret)
		goto out_pd;

	ret = -qp_create(&pd, &c.cq, &q, IBV_QPT_RC, &cap, &good);
	report(!ret && q.qp.qp_num > 1, "create RC QP (SQ 16 x 128 B, RQ 16 x 64 B): %s, QPN %u",
	       strerror(ret), q.qp.qp_num);
	if (!ret) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_RTS;
		ret = qp_modify(&q, &attr, IBV_QP_STATE);
		report(ret == EINVAL, "RESET -> RTS refused: %s (want EINVAL)",
		       strerror(ret));
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		attr.pkey_index = 0;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ;
		ret = qp_modify(&q, &attr, IBV_QP_STATE | IBV_QP_PORT |
				IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS);
		report(!ret, "RESET -> INIT: %s", strerror(ret));
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 2;
		ret = qp_modify(&q, &attr, IBV_QP_STATE | IBV_QP_PORT);
		report(ret == EINVAL, "INIT -> INIT on port 2 refused: %s (want EINVAL)",
		       strerror(ret));
		memset(&attr, 0, sizeof(attr));
		{
			struct ibv_query_qp qcmd;

			ret = ibv_cmd_query_qp(&q.qp, &attr, IBV_QP_STATE,
					       &init, &qcmd, sizeof(qcmd));
		}
		report(!ret && attr.qp_state == IBV_QPS_INIT,
		       "query QP: %s, state %d (want INIT)", strerror(ret),
		       attr.qp_state);
		ret = ibv_cmd_destroy_qp(&q.qp);
		report(!ret, "destroy QP: %s", strerror(ret));
	}
	qp_free(&q);

	ret = -qp_create(&pd, &c.cq, &q, IBV_QPT_UD, &cap, &good);
	report(!ret, "create UD QP: %s", strerror(ret));
	if (!ret)
		ibv_cmd_destroy_qp(&q.qp);
	qp_free(&q);

	ret = -qp_create(&pd, &c.cq, &q, IBV_QPT_UC, &cap, &good);
	report(!ret, "create UC QP: %s", strerror(ret));
	if (!ret)
		ibv_cmd_destroy_qp(&q.qp);
	qp_free(&q);

	/* QP types Kite does not implement: unsupported, not bad input. */
	ret = -qp_create(&pd, &c.cq, &q, IBV_QPT_RAW_PACKET, &cap, &good);
	report(ret == EOPNOTSUPP || ret == EPERM,
	       "create RAW_PACKET QP: %s (want %s, or EPERM from the core)",
	       ret ? strerror(ret) : "accepted", strerror(EOPNOTSUPP));
	if (!ret)
		ibv_cmd_destroy_qp(&q.qp);
	qp_free(&q);

	g = good;
	g.comp_mask = 1;
	qp_bad(&pd, &c.cq, "an unknown comp_mask bit", EOPNOTSUPP, &cap, &g);
	g = good;
	g.reserved = 1;
	qp_bad(&pd, &c.cq, "a non-zero reserved field", EOPNOTSUPP, &cap, &g);
	g = good;
	g.sq_shift = 6;
	qp_bad(&pd, &c.cq, "64-byte send WQEs for 2 SGEs", EINVAL, &cap, &g);
	g = good;
	g.sq_shift = 11;
	qp_bad(&pd, &c.cq, "2 KiB send WQEs (beyond the largest)", EINVAL,
	       &cap, &g);
	g = good;
	g.rq_shift = 5;
	qp_bad(&pd, &c.cq, "32-byte receive WQEs", EINVAL, &cap, &g);
	g = good;
	g.sq_log = 3;
	qp_bad(&pd, &c.cq, "8 send WQEs for 16 work requests", EINVAL, &cap,
	       &g);
	g = good;
	g.rq_log = 13;
	qp_bad(&pd, &c.cq, "2^13 receive WQEs", EINVAL, &cap, &g);
	g = good;
	g.sq_log = 0;
	qp_bad(&pd, &c.cq, "sq_log_depth 0", EINVAL, &cap, &g);
	g = good;
	g.null_sq = 1;
	qp_bad(&pd, &c.cq, "no send queue buffer", EINVAL, &cap, &g);
	{
		struct ibv_qp_cap big = cap;

		big.max_send_wr = da->max_qp_wr + 1;
		qp_bad(&pd, &c.cq, "more work requests than max_qp_wr", EINVAL,
		       &big, &good);
		big = cap;
		big.max_send_sge = da->max_sge + 1;
		qp_bad(&pd, &c.cq, "more SGEs than max_sge", EINVAL, &big,
		       &good);
	}

	ret = ibv_cmd_destroy_cq(&c.cq);
	report(!ret, "destroy the QPs' CQ: %s", strerror(ret));
	cq_free(&c);
out_pd:
	ret = ibv_cmd_dealloc_pd(&pd);
	report(!ret, "deallocate PD: %s", strerror(ret));
}

struct srq_geom {
	unsigned int log, shift;
	uint32_t comp_mask, reserved;
	int null_buf;
	size_t len;		/* the request's length, 0: the whole */
};

/* A user SRQ with the driver data of @g; 0 or a negative errno. */
static int srq_create(struct ibv_pd *pd, struct ibv_srq *srq, void **buf,
		      uint32_t wr, uint32_t sge, uint32_t limit,
		      const struct srq_geom *g, uint32_t *srqn)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
	};
	unsigned int log = g->log > 16 ? 1 : g->log;
	unsigned int shift = g->shift > 12 ? 6 : g->shift;
	struct srq_resp resp = {};
	struct srq_cmd cmd = {};
	int ret;

	memset(srq, 0, sizeof(*srq));
	srq->context = pd->context;
	*buf = NULL;
	if (posix_memalign(buf, RING_ALIGN,
			   ((size_t)1 << log << shift) + RING_ALIGN))
		return -ENOMEM;
	cmd.drv.buf_addr = g->null_buf ? 0 : (uintptr_t)*buf;
	cmd.drv.log_depth = g->log;
	cmd.drv.wqe_shift = g->shift;
	cmd.drv.comp_mask = g->comp_mask;
	cmd.drv.reserved = g->reserved;
	ret = ibv_cmd_create_srq(pd, srq, &attr, &cmd.ibv_cmd,
				 g->len ? g->len : sizeof(cmd), &resp.ibv_resp,
				 sizeof(resp));
	if (!ret && srqn)
		*srqn = resp.drv.srqn;
	return -ret;
}

/*
 * Resize requests the kernel must refuse (struct kite_ib_modify_srq_req),
 * each leaving the SRQ (16 WQEs of 64 bytes) as it was.
 */
static void srq_resize_bad(struct ibv_srq *srq, const struct ibv_device_attr *da)
{
	static const struct {
		const char *what;
		uint32_t max_wr, log_depth, comp_mask;
		bool null_buf;
		int want;
	} bad[] = {
		{ "unknown comp_mask", 32, 5, 1, false, EOPNOTSUPP },
		{ "log_depth 0", 32, 0, 0, false, EINVAL },
		{ "log_depth 13", 32, 13, 0, false, EINVAL },
		{ "2^5 WQEs for 33", 33, 5, 0, false, EINVAL },
		{ "max_wr 0", 0, 5, 0, false, EINVAL },
		{ "no ring buffer", 32, 5, 0, true, EINVAL },
	};
	struct ibv_srq_attr sa;
	struct srq_resize_cmd cmd;
	unsigned int i;
	void *buf;
	int ret;

	if (!(da->device_cap_flags & IBV_DEVICE_SRQ_RESIZE)) {
		report(false, "the device reports IBV_DEVICE_SRQ_RESIZE");
		return;
	}
	if (posix_memalign(&buf, RING_ALIGN, (size_t)64 << 13))
		return;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&cmd, 0, sizeof(cmd));
		memset(&sa, 0, sizeof(sa));
		sa.max_wr = bad[i].max_wr;
		cmd.drv.buf_addr = bad[i].null_buf ? 0 : (uintptr_t)buf;
		cmd.drv.log_depth = bad[i].log_depth;
		cmd.drv.comp_mask = bad[i].comp_mask;
		ret = ibv_cmd_modify_srq(srq, &sa, IBV_SRQ_MAX_WR, &cmd.ibv_cmd,
					 sizeof(cmd));
		report(ret == bad[i].want, "resize SRQ with %s: %s (want %s)",
		       bad[i].what, strerror(ret), strerror(bad[i].want));
	}
	memset(&cmd, 0, sizeof(cmd));
	memset(&sa, 0, sizeof(sa));
	sa.max_wr = da->max_srq_wr + 1;
	cmd.drv.buf_addr = (uintptr_t)buf;
	cmd.drv.log_depth = 13;
	ret = ibv_cmd_modify_srq(srq, &sa, IBV_SRQ_MAX_WR, &cmd.ibv_cmd,
				 sizeof(cmd));
	report(ret == EINVAL, "resize SRQ to max_srq_wr + 1 (%d): %s (want EINVAL)",
	       da->max_srq_wr + 1, strerror(ret));
	free(buf);
}

static void srq_bad(struct ibv_pd *pd, const char *what, int want,
		    uint32_t wr, uint32_t sge, uint32_t limit,
		    const struct srq_geom *g)
{
	struct ibv_srq srq;
	void *buf;
	int ret;

	ret = -srq_create(pd, &srq, &buf, wr, sge, limit, g, NULL);
	if (!ret) {
		report(0, "create SRQ with %s: accepted", what);
		ibv_cmd_destroy_srq(&srq);
	} else {
		report(ret == want, "create SRQ with %s: %s (want %s)", what,
		       strerror(ret), strerror(want));
	}
	free(buf);
}

static void test_srqs(struct ibv_context *ctx, const struct ibv_device_attr *da)
{
	const struct srq_geom good = { .log = 4, .shift = 6 };
	const struct ibv_qp_cap cap = {
		.max_send_wr = 16, .max_send_sge = 2,
	};
	struct ib_uverbs_alloc_pd_resp presp;
	struct ibv_alloc_pd pcmd;
	struct ibv_srq srq;
	struct ibv_srq_attr sa;
	struct ibv_pd pd = {};
	struct srq_geom g;
	struct ucq c;
	uint32_t srqn = 0;
	void *buf;
	int ret;

	report(da->max_srq > 0 && da->max_srq_wr >= 16 && da->max_srq_sge >= 1,
	       "query device: max_srq %d, max_srq_wr %d, max_srq_sge %d",
	       da->max_srq, da->max_srq_wr, da->max_srq_sge);
	ret = ibv_cmd_alloc_pd(ctx, &pd, &pcmd, sizeof(pcmd), &presp,
			       sizeof(presp));
	report(!ret, "allocate PD for the SRQs: %s", strerror(ret));
	if (ret)
		return;

	ret = -srq_create(&pd, &srq, &buf, 16, 2, 0, &good, &srqn);
	report(!ret && srqn > 0, "create SRQ (16 x 64 B, 2 SGEs): %s, SRQN %u",
	       strerror(ret), srqn);
	if (!ret) {
		struct ibv_modify_srq mcmd;
		struct ibv_query_srq qcmd;

		sa.srq_limit = 4;
		ret = ibv_cmd_modify_srq(&srq, &sa, IBV_SRQ_LIMIT, &mcmd,
					 sizeof(mcmd));
		report(!ret, "modify SRQ limit 4: %s", strerror(ret));
		sa.srq_limit = 17;
		ret = ibv_cmd_modify_srq(&srq, &sa, IBV_SRQ_LIMIT, &mcmd,
					 sizeof(mcmd));
		report(ret == EINVAL, "modify SRQ limit 17 > 16 WQEs: %s (want EINVAL)",
		       strerror(ret));
		sa.max_wr = 32;
		ret = ibv_cmd_modify_srq(&srq, &sa, IBV_SRQ_MAX_WR, &mcmd,
					 sizeof(mcmd));
		report(ret == EOPNOTSUPP,
		       "resize SRQ without a new ring (no driver data): %s (want EOPNOTSUPP)",
		       strerror(ret));
		srq_resize_bad(&srq, da);
		memset(&sa, 0, sizeof(sa));
		ret = ibv_cmd_query_srq(&srq, &sa, &qcmd, sizeof(qcmd));
		report(!ret && sa.srq_limit == 4 && sa.max_wr == 16 &&
		       sa.max_sge == 3,
		       "query SRQ: %s, limit %u, max_wr %u, max_sge %u",
		       strerror(ret), sa.srq_limit, sa.max_wr, sa.max_sge);

		/* QPs on it: no RQ geometry. */
		ret = -cq_create(ctx, &c, 100, 7, NULL);
		report(!ret, "create CQ for the SRQ's QPs: %s", strerror(ret));
		if (!ret) {
			const struct qp_geom qg = { .sq_log = 4, .sq_shift = 7 };
			struct ibv_qp_init_attr attr = {
				.send_cq = &c.cq, .recv_cq = &c.cq,
				.srq = &srq, .cap = cap,
				.qp_type = IBV_QPT_RC,
			};
			struct qp_resp resp = {};
			struct qp_cmd cmd = {};
			struct uqp q;

			memset(&q, 0, sizeof(q));
			if (!posix_memalign(&q.sq, RING_ALIGN, 2 * 4096)) {
				cmd.drv.sq_buf_addr = (uintptr_t)q.sq;
				cmd.drv.sq_log_depth = qg.sq_log;
				cmd.drv.sq_wqe_shift = qg.sq_shift;
				ret = ibv_cmd_create_qp(&pd, &q.qp, &attr,
							&cmd.ibv_cmd, sizeof(cmd),
							&resp.ibv_resp,
							sizeof(resp));
				report(!ret, "create RC QP on the SRQ, no RQ: %s",
				       strerror(ret));
				if (!ret) {
					ret = ibv_cmd_destroy_srq(&srq);
					report(ret == EBUSY,
					       "destroy SRQ with a QP on it: %s (want EBUSY)",
					       strerror(ret));
					ibv_cmd_destroy_qp(&q.qp);
				}
				cmd.drv.rq_log_depth = 4;
				cmd.drv.rq_wqe_shift = 6;
				cmd.drv.rq_buf_addr = (uintptr_t)q.sq;
				ret = ibv_cmd_create_qp(&pd, &q.qp, &attr,
							&cmd.ibv_cmd, sizeof(cmd),
							&resp.ibv_resp,
							sizeof(resp));
				report(ret == EINVAL,
				       "create QP on the SRQ with an RQ too: %s (want EINVAL)",
				       strerror(ret));
				if (!ret)
					ibv_cmd_destroy_qp(&q.qp);
				free(q.sq);
			}
			ibv_cmd_destroy_cq(&c.cq);
			cq_free(&c);
		}
		ret = ibv_cmd_destroy_srq(&srq);
		report(!ret, "destroy SRQ: %s", strerror(ret));
	}
	free(buf);

	g = good;
	g.comp_mask = 1;
	srq_bad(&pd, "an unknown comp_mask bit", EOPNOTSUPP, 16, 2, 0, &g);
	g = good;
	g.reserved = 1;
	srq_bad(&pd, "a non-zero reserved field", EOPNOTSUPP, 16, 2, 0, &g);
	g = good;
	g.len = sizeof(struct srq_cmd) - 8;
	srq_bad(&pd, "a short request", EINVAL, 16, 2, 0, &g);
	g = good;
	g.log = 0;
	srq_bad(&pd, "log_depth 0", EINVAL, 16, 2, 0, &g);
	g = good;
	g.log = 13;
	srq_bad(&pd, "2^13 WQEs", EINVAL, 16, 2, 0, &g);
	g = good;
	g.log = 3;
	srq_bad(&pd, "8 WQEs for 16 work requests", EINVAL, 16, 2, 0, &g);
	g = good;
	g.shift = 5;
	srq_bad(&pd, "32-byte WQEs", EINVAL, 16, 2, 0, &g);
	g = good;
	g.shift = 11;
	srq_bad(&pd, "2 KiB WQEs (beyond the largest)", EINVAL, 16, 2, 0, &g);
	g = good;
	srq_bad(&pd, "64-byte WQEs for 4 SGEs", EINVAL, 16, 4, 0, &g);
	g = good;
	g.null_buf = 1;
	srq_bad(&pd, "no ring buffer", EINVAL, 16, 2, 0, &g);
	srq_bad(&pd, "a limit above max_wr", EINVAL, 16, 2, 17, &good);
	g = good;
	g.log = 12;
	srq_bad(&pd, "more work requests than max_srq_wr", EINVAL,
		da->max_srq_wr + 1, 1, 0, &g);
	srq_bad(&pd, "more SGEs than max_srq_sge", EINVAL, 16,
		da->max_srq_sge + 1, 0, &good);

	ret = ibv_cmd_dealloc_pd(&pd);
	report(!ret, "deallocate the SRQs' PD: %s", strerror(ret));
}

/*
 * The UD send to our own QP went through the device's loopback: a send
 * completion, and a receive completion whose buffer holds the 40-byte GRH
 * and then the 64 bytes sent.
 */
static void check_loopback(struct ibv_cq *cq, struct ibv_qp *qp,
			   const char *buf)
{
	struct ibv_wc wc[4];
	int n = 0, i, tries, send_ok = 0, recv_ok = 0, data_ok = 1;

	for (tries = 0; tries < 2000 && n < 2; tries++) {
		int got = ibv_poll_cq(cq, 4 - n, wc + n);

		if (got < 0)
			break;
		n += got;
		if (n < 2)
			usleep(1000);
	}
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id == 9 && wc[i].status == IBV_WC_SUCCESS &&
		    wc[i].opcode == IBV_WC_SEND)
			send_ok = 1;
		if (wc[i].wr_id == 7 && wc[i].status == IBV_WC_SUCCESS &&
		    wc[i].opcode == IBV_WC_RECV && wc[i].byte_len == 40 + 64 &&
		    (wc[i].wc_flags & IBV_WC_GRH) && wc[i].src_qp == qp->qp_num)
			recv_ok = 1;
	}
	for (i = 0; i < 64; i++)
		if (buf[40 + i] != (char)(0xa5 ^ i))
			data_ok = 0;
	report(send_ok, "libkite loopback: send completion (%d completions)", n);
	report(recv_ok, "libkite loopback: receive completion: 104 bytes with GRH from our QP");
	report(recv_ok && data_ok, "libkite loopback: payload after the GRH, byte for byte");
}

/*
 * The same objects through libkite (the provider's verbs): CQ create and
 * resize, RC and UD QPs through their states, receive and send work
 * requests posted (rings and doorbells), an address handle, teardown.
 */
static void test_provider(struct ibv_context *ctx, int data)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	struct ibv_send_wr swr = {}, *bad_swr;
	struct ibv_ah_attr aha = {};
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct ibv_ah *ah = NULL, *ah_fl;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	union ibv_gid gid;
	static char buf[4096];
	int ret;

	pd = ibv_alloc_pd(ctx);
	report(!!pd, "libkite: allocate PD");
	if (!pd)
		return;
	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	report(cq && cq->cqe == 127, "libkite: create CQ of 100 CQEs: %d usable",
	       cq ? cq->cqe : -1);
	if (!cq)
		goto out_pd;
	ret = ibv_resize_cq(cq, 1000);
	report(!ret && cq->cqe == 1023, "libkite: resize CQ to 1000: %s, %d usable",
	       strerror(ret), cq->cqe);
	ret = ibv_req_notify_cq(cq, 0);
	report(!ret, "libkite: arm CQ: %s", strerror(ret));
	report(ibv_poll_cq(cq, 1, &wc) == 0, "libkite: poll an empty CQ");

	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = ibv_create_qp(pd, &qpia);
	report(qp && qpia.cap.max_send_wr >= 8 && qpia.cap.max_recv_wr >= 8,
	       "libkite: create UD QP: %s", qp ? "ok" : strerror(errno));
	if (!qp)
		goto out_cq;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	report(!!mr, "libkite: register a 4 KiB MR: %s", mr ? "ok" : strerror(errno));
	if (!mr)
		goto out_qp;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = 0x11111111;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	report(!ret, "libkite: UD QP to INIT: %s", strerror(ret));
	sge.addr = (uintptr_t)buf;
	sge.length = 2048;
	sge.lkey = mr->lkey;
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ret = ibv_post_recv(qp, &rwr, &bad_rwr);
	report(!ret, "libkite: post a receive: %s", strerror(ret));
	rwr.num_sge = qpia.cap.max_recv_sge + 1;
	ret = ibv_post_recv(qp, &rwr, &bad_rwr);
	report(ret == EINVAL && bad_rwr == &rwr,
	       "libkite: a receive with more SGEs than the QP has is refused: %s",
	       strerror(ret));
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	report(!ret, "libkite: UD QP to RTR: %s", strerror(ret));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0x123;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	report(!ret, "libkite: UD QP to RTS: %s", strerror(ret));

	ret = ibv_query_gid(ctx, 1, 0, &gid);
	report(!ret, "libkite: GID 0: %s", strerror(ret));
	aha.is_global = 1;
	aha.grh.dgid = gid;
	aha.grh.sgid_index = 0;
	aha.grh.hop_limit = 64;
	aha.port_num = 1;
	ah = ibv_create_ah(pd, &aha);
	report(!!ah, "libkite: address handle to our own GID: %s",
	       ah ? "ok" : strerror(errno));
	if (ah) {
		struct ibv_sge ssge = {
			.addr = (uintptr_t)buf + 2048,
			.length = 64,
			.lkey = mr->lkey,
		};

		for (ret = 0; ret < 64; ret++)
			buf[2048 + ret] = (char)(0xa5 ^ ret);
		swr.wr_id = 9;
		swr.opcode = IBV_WR_SEND;
		swr.sg_list = &ssge;
		swr.num_sge = 1;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = qp->qp_num;
		swr.wr.ud.remote_qkey = 0x11111111;
		ret = ibv_post_send(qp, &swr, &bad_swr);
		report(!ret, "libkite: post a UD send to ourselves: %s",
		       strerror(ret));
		if (!ret && data)
			check_loopback(cq, qp, buf);
		/*
		 * A flow label wider than the 20 bits of the wire (UCX passes
		 * 0xFFFFFFFF): its low 20 bits are used, as by rxe and mlx5.
		 */
		aha.grh.flow_label = 0xffffffff;
		ah_fl = ibv_create_ah(pd, &aha);
		report(!!ah_fl, "libkite: address handle with flow label 0xFFFFFFFF: %s",
		       ah_fl ? "ok" : strerror(errno));
		if (ah_fl) {
			memset(buf, 0, 2048);
			rwr.num_sge = 1;
			ret = ibv_post_recv(qp, &rwr, &bad_rwr);
			report(!ret, "libkite: post another receive: %s",
			       strerror(ret));
			swr.wr.ud.ah = ah_fl;
			ret = ibv_post_send(qp, &swr, &bad_swr);
			report(!ret, "libkite: post a UD send through it: %s",
			       strerror(ret));
			if (!ret && data)
				check_loopback(cq, qp, buf);
			report(!ibv_destroy_ah(ah_fl),
			       "libkite: destroy the flow-label AH");
			swr.wr.ud.ah = ah;
		}
		swr.opcode = IBV_WR_RDMA_WRITE;
		ret = ibv_post_send(qp, &swr, &bad_swr);
		report(ret == EINVAL && bad_swr == &swr,
		       "libkite: RDMA WRITE on a UD QP is refused: %s",
		       strerror(ret));
	}

	if (ah)
		report(!ibv_destroy_ah(ah), "libkite: destroy AH");
	report(!ibv_dereg_mr(mr), "libkite: deregister MR");
out_qp:
	report(!ibv_destroy_qp(qp), "libkite: destroy QP");
out_cq:
	report(!ibv_destroy_cq(cq), "libkite: destroy CQ");
out_pd:
	report(!ibv_dealloc_pd(pd), "libkite: deallocate PD");
}

/* Poll @cq for one completion, at most 2 s; 1, 0 (none) or negative. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int tries, got = 0;

	for (tries = 0; tries < 2000; tries++) {
		got = ibv_poll_cq(cq, 1, wc);
		if (got)
			break;
		usleep(1000);
	}
	return got;
}

/*
 * Move @qp from RESET to RTS, connected to the QP @dest through @gid, open
 * to @access; INIT to RTR gives the attributes of @rtr_mask and RTR to RTS
 * those of @rts_mask besides the ones every connected QP has.
 */
static int qp_connect(struct ibv_qp *qp, uint32_t dest,
		      const union ibv_gid *gid, unsigned int access,
		      int rtr_mask, int rts_mask)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 0x321;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | rtr_mask);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x321;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | rts_mask);
}

/* The responder's and the requester's attributes of an RC QP. */
#define RC_RTR_MASK	(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS_MASK	(IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
			 IBV_QP_MAX_QP_RD_ATOMIC)

/*
 * Move an RC QP from RESET to RTS, connected to itself through GID 0,
 * open to remote writes, reads and atomics.
 */
static int rc_self_connect(struct ibv_qp *qp)
{
	union ibv_gid gid;
	int ret;

	ret = ibv_query_gid(qp->context, 1, 0, &gid);
	if (ret)
		return ret;
	return qp_connect(qp, qp->qp_num, &gid,
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
			  RC_RTR_MASK, RC_RTS_MASK);
}

/* Parent domain allocators that count what they are asked for. */
struct pd_alloc_log {
	int allocs[5], frees;	/* by resource type (1 CQ ... 4 SRQ) */
	size_t last_alignment;
	int misalign;		/* hand out a misaligned buffer */
	int use_default;	/* answer IBV_ALLOCATOR_USE_DEFAULT */
};

static void *pd_log_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			  size_t alignment, uint64_t resource_type)
{
	struct pd_alloc_log *log = pd_context;
	void *p;

	if (resource_type < 5)
		log->allocs[resource_type]++;
	log->last_alignment = alignment;
	if (log->use_default)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (posix_memalign(&p, 4096, size + 64))
		return NULL;
	return log->misalign ? (char *)p + 64 : p;
}

static void pd_log_free(struct ibv_pd *pd, void *pd_context, void *ptr,
			uint64_t resource_type)
{
	struct pd_alloc_log *log = pd_context;

	log->frees++;
	free((void *)((uintptr_t)ptr & ~(uintptr_t)4095));
}

/* ibv_alloc_parent_domain() with ATTR must fail with errno WANT. */
static void pdom_refused(struct ibv_context *ctx,
			 struct ibv_parent_domain_init_attr *attr, int want,
			 const char *what)
{
	struct ibv_pd *pd;

	errno = 0;
	pd = ibv_alloc_parent_domain(ctx, attr);
	report(!pd && errno == want, "parent domain: %s refused with %s (%s)",
	       what, strerror(want), strerror(errno));
	if (pd)
		ibv_dealloc_pd(pd);
}

/*
 * Parent domains through libkite: the allocators provide the rings of the
 * CQs, QPs and SRQs created with the parent domain, with the documented
 * alignment and resource types; bad input is refused with its errno, and
 * neither domain goes while something depends on it.
 */
static void test_parent_domain(struct ibv_context *ctx)
{
	struct pd_alloc_log log = {};
	struct ibv_parent_domain_init_attr pda = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pd_log_alloc,
		.free = pd_log_free,
		.pd_context = &log,
	};
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr srqia = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 16,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_pd *pd, *pdom;
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int ret;

	pd = ibv_alloc_pd(ctx);
	report(!!pd, "parent domain: a protection domain");
	if (!pd)
		return;
	pda.pd = pd;
	pda.free = NULL;
	pdom_refused(ctx, &pda, EINVAL, "allocators without a free");
	pda.free = pd_log_free;
	pda.comp_mask |= 1u << 7;
	pdom_refused(ctx, &pda, EINVAL, "an unknown comp_mask bit");
	pda.comp_mask &= ~(1u << 7);

	pdom = ibv_alloc_parent_domain(ctx, &pda);
	report(!!pdom, "parent domain: allocated with allocators and a context (%s)",
	       pdom ? "ok" : strerror(errno));
	if (!pdom)
		goto out_pd;
	report(pdom->handle == pd->handle,
	       "parent domain: shares its protection domain's handle");
	ret = ibv_dealloc_pd(pd);
	report(ret == EBUSY,
	       "parent domain: its protection domain cannot go first (EBUSY: %s)",
	       strerror(ret));
	pda.pd = pdom;
	pdom_refused(ctx, &pda, EINVAL, "one over a parent domain");

	/* A CQ with the parent domain, a QP and an SRQ on it. */
	cqa.parent_domain = pd;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &cqa);
	report(!cq && errno == EINVAL,
	       "parent domain: a CQ given a protection domain as parent domain: EINVAL (%s)",
	       strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	cqa.parent_domain = pdom;
	cq = ibv_create_cq_ex(ctx, &cqa);
	report(cq && log.allocs[1] == 1 && log.last_alignment == 4096,
	       "parent domain: the CQ's ring from its allocator (type 1, %d calls, alignment %zu)",
	       log.allocs[1], log.last_alignment);
	if (!cq)
		goto out_pdom;
	qpia.send_cq = ibv_cq_ex_to_cq(cq);
	qpia.recv_cq = ibv_cq_ex_to_cq(cq);
	qp = ibv_create_qp(pdom, &qpia);
	report(qp && log.allocs[2] == 1 && log.allocs[3] == 1,
	       "parent domain: the QP's send and receive rings from its allocator (types 2, 3: %d, %d)",
	       log.allocs[2], log.allocs[3]);
	srq = ibv_create_srq(pdom, &srqia);
	report(srq && log.allocs[4] == 1,
	       "parent domain: the SRQ's ring from its allocator (type 4: %d)",
	       log.allocs[4]);
	ret = ibv_dealloc_pd(pdom);
	report(ret == EBUSY,
	       "parent domain: cannot go while its rings are in use (EBUSY: %s)",
	       strerror(ret));
	if (srq)
		ibv_destroy_srq(srq);
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	report(log.frees == 4, "parent domain: every ring given back to its free (%d of 4)",
	       log.frees);

	/* A misaligned buffer fails the create; the default is honoured. */
	log.misalign = 1;
	errno = 0;
	qp = ibv_create_qp(pdom, &qpia);
	report(!qp && errno == EINVAL,
	       "parent domain: a ring not aligned to 4096 bytes fails the create with EINVAL (%s)",
	       strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	log.misalign = 0;
	log.use_default = 1;
	cq = ibv_create_cq_ex(ctx, &cqa);
	report(!!cq, "parent domain: IBV_ALLOCATOR_USE_DEFAULT gives libkite's own ring");
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
out_pdom:
	ret = ibv_dealloc_pd(pdom);
	report(!ret, "parent domain: deallocated once unused (%s)", strerror(ret));
out_pd:
	ret = ibv_dealloc_pd(pd);
	report(!ret, "parent domain: then its protection domain (%s)", strerror(ret));
}

/*
 * --hold N: an RC QP connected to itself completes N RDMA WRITEs of 4096
 * bytes, then stays until standard input closes, so that a test can read
 * what its counters hold. Returns the exit status.
 */
static int hold_qp(struct ibv_context *ctx, int n)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_send_wr swr = {}, *bad_swr;
	static char buf[8192];
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int i, ret;
	char c;

	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qpia) : NULL;
	mr = qp ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	ret = mr ? rc_self_connect(qp) : errno;
	if (ret) {
		fprintf(stderr, "hold: set-up failed: %s\n", strerror(ret));
		return 1;
	}
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 4096,
				.lkey = mr->lkey };
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	swr.wr.rdma.rkey = mr->rkey;
	for (i = 0; i < n; i++) {
		swr.wr_id = i;
		ret = ibv_post_send(qp, &swr, &bad_swr);
		ret = ret ? -ret : poll_one(cq, &wc);
		if (ret != 1 || wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "hold: WRITE %d failed (%d, %s)\n", i,
				ret, ret == 1 ? ibv_wc_status_str(wc.status) :
				"no completion");
			return 1;
		}
	}
	printf("held %u\n", qp->qp_num);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return 0;
}

static int udmabuf_new(size_t len, char **map);

/*
 * Move the XRC QP @qp to RTS, connected to @dest, the other end's QPN: a
 * target is a responder open to RDMA WRITE, an initiator a requester.
 */
static int xrc_connect(struct ibv_qp *qp, uint32_t dest,
		       const union ibv_gid *gid)
{
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		return qp_connect(qp, dest, gid, IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC |
				  IBV_ACCESS_FLUSH_GLOBAL, RC_RTR_MASK, 0);
	return qp_connect(qp, dest, gid, 0, 0, RC_RTS_MASK);
}

/*
 * The completion of a send on the initiator (@scq) and, unless @recv_cq
 * is NULL, of its receive on @recv_cq: one each, successful, the
 * receive's for the target QP @tgt_qpn with @wr_id and @len bytes.
 */
static int xrc_completions(struct ibv_cq *scq, struct ibv_cq *recv_cq,
			   uint32_t tgt_qpn, uint64_t wr_id, uint32_t len,
			   struct ibv_wc *rwc)
{
	int n = 0, i, sent = 0, recvd = 0;
	struct ibv_wc wc[2];

	/* One CQ for both: the two completions, in either order. */
	while (n < (recv_cq == scq ? 2 : 1) && poll_one(scq, wc + n) == 1)
		n++;
	for (i = 0; i < n; i++) {
		if (wc[i].opcode & IBV_WC_RECV) {
			*rwc = wc[i];
			recvd = 1;
		} else {
			sent = !wc[i].status;
		}
	}
	if (!recv_cq)
		return sent;
	if (recv_cq != scq)
		recvd = poll_one(recv_cq, rwc) == 1;
	return sent && recvd && !rwc->status && rwc->qp_num == tgt_qpn &&
	       rwc->wr_id == wr_id && rwc->byte_len == len;
}

/* Open an ibv_wr_*() request on XRC initiator @qpx: start it, signaled. */
static void xrc_wr_begin(struct ibv_qp_ex *qpx, uint64_t wr_id)
{
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
}

/*
 * Close the request of xrc_wr_begin() and its operation: name XRC SRQ
 * @srqn, add the SGE if @len, post, and take its completion from @cq.
 */
static int xrc_wr_end(struct ibv_qp_ex *qpx, struct ibv_cq *cq, uint32_t srqn,
		      uint32_t lkey, void *addr, uint32_t len, struct ibv_wc *wc)
{
	int ret;

	ibv_wr_set_xrc_srqn(qpx, srqn);
	if (len)
		ibv_wr_set_sge(qpx, lkey, (uintptr_t)addr, len);
	ret = ibv_wr_complete(qpx);
	return ret ?: poll_one(cq, wc) == 1 ? 0 : ETIMEDOUT;
}

/* What await_fatal() holds of XRC across the device's loss. */
struct xrc_held {
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *tgt, *ini;
};

/*
 * An XRC domain, an SRQ of it completing in @cq, a target and an initiator
 * connected to each other, one SEND of the first 1000 bytes of @mr (at
 * address 0) through them into the SRQ, and a receive left posted: live
 * XRC objects for await_fatal(). Returns 0 or an errno.
 */
static int xrc_hold(struct ibv_context *ctx, struct ibv_pd *pd,
		    struct ibv_cq *cq, struct ibv_mr *mr, struct xrc_held *h)
{
	struct ibv_xrcd_init_attr xia = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sia = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.cq = cq,
	};
	struct ibv_qp_init_attr_ex tia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_init_attr_ex iia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.send_cq = cq,
		.pd = pd,
	};
	struct ibv_sge ssge = { .addr = 0, .length = 1000, .lkey = mr->lkey };
	struct ibv_sge rsge = { .addr = 4096, .length = 4096, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr swr = {
		.wr_id = 7, .sg_list = &ssge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad_swr;
	union ibv_gid gid;
	struct ibv_wc rwc;
	uint32_t srqn;
	int ret, i;

	h->xrcd = ibv_open_xrcd(ctx, &xia);
	sia.xrcd = h->xrcd;
	h->srq = h->xrcd ? ibv_create_srq_ex(ctx, &sia) : NULL;
	tia.xrcd = h->xrcd;
	h->tgt = h->srq ? ibv_create_qp_ex(ctx, &tia) : NULL;
	h->ini = h->tgt ? ibv_create_qp_ex(ctx, &iia) : NULL;
	if (!h->ini)
		return errno;
	ret = ibv_get_srq_num(h->srq, &srqn) ?:
	      ibv_query_gid(ctx, 1, 0, &gid) ? errno :
	      xrc_connect(h->tgt, h->ini->qp_num, &gid) ?:
	      xrc_connect(h->ini, h->tgt->qp_num, &gid);
	for (i = 0; !ret && i < 2; i++) {
		rwr.wr_id = 100 + i;
		ret = ibv_post_srq_recv(h->srq, &rwr, &bad_rwr);
	}
	swr.qp_type.xrc.remote_srqn = srqn;
	ret = ret ?: ibv_post_send(h->ini, &swr, &bad_swr);
	if (!ret && !xrc_completions(cq, cq, h->tgt->qp_num, 100, 1000, &rwc))
		ret = EIO;
	return ret;
}

/*
 * Destroy what xrc_hold() made, initiator first: 0 when every destroy
 * succeeded (as they must after the device's loss too), else an errno.
 */
static int xrc_release(struct xrc_held *h)
{
	int ret[4] = {};

	if (h->ini)
		ret[0] = ibv_destroy_qp(h->ini);
	if (h->tgt)
		ret[1] = ibv_destroy_qp(h->tgt);
	if (h->srq)
		ret[2] = ibv_destroy_srq(h->srq);
	if (h->xrcd)
		ret[3] = ibv_close_xrcd(h->xrcd);
	return ret[0] ?: ret[1] ?: ret[2] ?: ret[3];
}

/*
 * --await-fatal SECONDS: what an application holding a context sees when
 * the device goes away (Documentation/infiniband/kite.rst): the async
 * event IBV_EVENT_DEVICE_FATAL, then a verb that needs the device
 * (ibv_alloc_pd()) failing with EIO, and a clean close. It also holds
 * device memory, mapped and under an MR: after the event a copy to it
 * fails with EIO, and an MR of a dma-buf, deregistered after the event.
 * On a device with XRC it holds a domain, an XRC SRQ with a receive
 * posted, a target and an initiator (xrc_hold()), all destroyed without
 * an error after the event. Returns the exit status.
 */
static int await_fatal(struct ibv_context *ctx, int seconds)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_alloc_dm_attr dma = { .length = 8192 };
	struct ibv_device_attr_ex da = {};
	struct ibv_mr *dmmr = NULL, *bufmr = NULL;
	struct xrc_held xrc = {};
	struct ibv_dm *dm = NULL;
	struct ibv_pd *pd, *pd2;
	char fill8k[8192], *map;
	int dmabuf = -1;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	int ret, fatal = 0, n;

	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qpia) : NULL;
	ret = qp ? rc_self_connect(qp) : errno;
	if (!ret && !ibv_query_device_ex(ctx, NULL, &da) && da.max_dm_size) {
		dm = ibv_alloc_dm(ctx, &dma);
		dmmr = dm ? ibv_reg_dm_mr(pd, dm, 0, 8192, IBV_ACCESS_ZERO_BASED |
					 IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE) : NULL;
		memset(fill8k, 0x6b, sizeof(fill8k));
		ret = dmmr ? ibv_memcpy_to_dm(dm, 0, fill8k, 8192) : errno;
	}
	if (!ret) {
		dmabuf = udmabuf_new(8192, &map);
		bufmr = dmabuf < 0 ? NULL :
			ibv_reg_dmabuf_mr(pd, 0, 8192, 0, dmabuf,
					  IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_WRITE);
		ret = bufmr ? 0 : dmabuf < 0 ? -dmabuf : errno;
	}
	if (!ret && (da.orig_attr.device_cap_flags & IBV_DEVICE_XRC))
		ret = xrc_hold(ctx, pd, cq, bufmr, &xrc);
	if (ret) {
		fprintf(stderr, "await-fatal: set-up failed: %s\n", strerror(ret));
		return 1;
	}
	printf("holding QP %u, an MR of a dma-buf%s%s\n", qp->qp_num,
	       dm ? ", 8 KiB of device memory under an MR" : "",
	       xrc.ini ? ", an XRC domain, SRQ, target and initiator" : "");
	fflush(stdout);
	/* Events until the fatal one; the others are printed too. */
	while (!fatal) {
		n = poll(&pfd, 1, seconds * 1000);
		if (n <= 0) {
			fprintf(stderr, "await-fatal: no fatal event within %d s\n",
				seconds);
			return 1;
		}
		if (ibv_get_async_event(ctx, &ev)) {
			fprintf(stderr, "await-fatal: ibv_get_async_event: %s\n",
				strerror(errno));
			return 1;
		}
		printf("event: %s\n", ibv_event_type_str(ev.event_type));
		fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	fflush(stdout);
	/* The device is gone: every verb that reaches the kernel fails. */
	errno = 0;
	pd2 = ibv_alloc_pd(ctx);
	ret = !pd2 && errno == EIO;
	printf("after the event: ibv_alloc_pd %s (%s)\n", pd2 ? "succeeded" : "failed",
	       strerror(errno));
	if (dm) {
		n = ibv_memcpy_to_dm(dm, 0, fill8k, 8);
		ret = ret && n == EIO;
		printf("after the event: ibv_memcpy_to_dm %s\n", strerror(n));
	}
	/*
	 * Not judged: after a fatal error the event comes before the device
	 * is unregistered, and until the context is disassociated a move to
	 * ERR succeeds without the device (kite_ib flushes a dead device's
	 * QPs itself); afterwards it fails with EIO.
	 */
	n = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	printf("after the event: ibv_modify_qp(ERR) %s (%s)\n", n ? "failed" : "succeeded",
	       strerror(n));
	if (xrc.xrcd) {
		n = xrc_release(&xrc);
		ret = ret && !n;
		printf("after the event: XRC initiator, target, SRQ and domain destroyed: %s\n",
		       strerror(n));
	}
	/* Closing is clean whatever the other destroys return. */
	if (dmmr)
		ibv_dereg_mr(dmmr);
	if (dm)
		ibv_free_dm(dm);
	ibv_dereg_mr(bufmr);
	close(dmabuf);
	munmap(map, 8192);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	if (pd2)
		ibv_dealloc_pd(pd2);
	n = ibv_close_device(ctx);
	printf("ibv_close_device: %s\n", n ? strerror(errno) : "ok");
	return !(ret && !n);
}

/*
 * UC through libkite: the IB attribute table of modify_qp (RTR needs AV,
 * PATH_MTU, DEST_QPN and RQ_PSN and refuses RC's MAX_DEST_RD_ATOMIC and
 * MIN_RNR_TIMER; RTS needs SQ_PSN and refuses RC's TIMEOUT, RETRY_CNT,
 * RNR_RETRY and MAX_QP_RD_ATOMIC), work requests UC does not have refused
 * with EINVAL, and with @data a QP connected to itself: SEND, SEND with
 * immediate, RDMA WRITE with immediate, data compared, and a SEND with
 * no receive posted dropped without an error on either side.
 */
static void test_uc(struct ibv_context *ctx, int data)
{
	static const struct {
		enum ibv_wr_opcode op;
		const char *name;
	} refused[] = {
		{ IBV_WR_RDMA_READ, "RDMA READ" },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" },
		{ IBV_WR_SEND_WITH_INV, "SEND_WITH_INV" },
		{ 0, NULL },
	};
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	struct ibv_send_wr swr = {}, *bad_swr;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a = {};
	struct ibv_sge ssge, rsge;
	struct ibv_wc wc[2];
	union ibv_gid gid;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	static char buf[16384];
	unsigned int i, bad = 0;
	int ret, got;

	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qpia) : NULL;
	report(!!qp, "UC: create a UC QP: %s", qp ? "ok" : strerror(errno));
	mr = qp ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr || ibv_query_gid(ctx, 1, 0, &gid))
		goto out;
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);
	report(!ret && ia.qp_type == IBV_QPT_UC && a.qp_state == IBV_QPS_RESET,
	       "UC: query_qp: type UC, RESET");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	report(ret == EINVAL, "UC: RESET -> INIT with QKEY instead of ACCESS_FLAGS: %s",
	       strerror(ret));
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	report(!ret, "UC: RESET -> INIT (PKEY_INDEX, PORT, ACCESS_FLAGS): %s",
	       strerror(ret));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0xfffff0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, rtr_mask | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	report(ret == EINVAL,
	       "UC: INIT -> RTR with RC's MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER: %s",
	       strerror(ret));
	ret = ibv_modify_qp(qp, &a, rtr_mask & ~IBV_QP_RQ_PSN);
	report(ret == EINVAL, "UC: INIT -> RTR without RQ_PSN: %s", strerror(ret));
	ret = ibv_modify_qp(qp, &a, rtr_mask & ~IBV_QP_AV);
	report(ret == EINVAL, "UC: INIT -> RTR without AV: %s", strerror(ret));
	ret = ibv_modify_qp(qp, &a, rtr_mask);
	report(!ret, "UC: INIT -> RTR (AV, PATH_MTU, DEST_QPN, RQ_PSN): %s",
	       strerror(ret));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0xfffff0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	report(ret == EINVAL,
	       "UC: RTR -> RTS with RC's TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC: %s",
	       strerror(ret));
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	report(ret == EINVAL, "UC: RTR -> RTS without SQ_PSN: %s", strerror(ret));
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	report(!ret, "UC: RTR -> RTS (SQ_PSN): %s", strerror(ret));
	if (ret)
		goto out;
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &ia);
	report(!ret && a.qp_state == IBV_QPS_RTS && a.dest_qp_num == qp->qp_num &&
	       a.rq_psn == 0xfffff0 && a.sq_psn == 0xfffff0,
	       "UC: query_qp: RTS, dest_qp_num, rq_psn, sq_psn as set");

	ssge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8,
				 .lkey = mr->lkey };
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + 8192;
	swr.wr.rdma.rkey = mr->rkey;
	for (i = 0; refused[i].name; i++) {
		swr.opcode = refused[i].op;
		bad_swr = NULL;
		ret = ibv_post_send(qp, &swr, &bad_swr);
		if (ret != EINVAL || bad_swr != &swr) {
			bad++;
			fprintf(stderr, "UC %s: %s\n", refused[i].name,
				strerror(ret));
		}
	}
	report(!bad,
	       "UC: READ, atomics, SEND_WITH_INV refused with EINVAL, bad_wr set");
	ret = poll_one(cq, wc);
	report(ret == 0, "UC: no completion for the refused work requests");
	if (!data)
		goto out;

	/* SEND with immediate to itself, 3000 bytes: 3 packets. */
	for (i = 0; i < 3000; i++)
		buf[i] = (char)(i * 7 + 1);
	memset(buf + 4096, 0, 4096);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096,
				 .length = 4096, .lkey = mr->lkey };
	rwr.wr_id = 1;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ssge.length = 3000;
	swr.wr_id = 2;
	swr.opcode = IBV_WR_SEND_WITH_IMM;
	swr.imm_data = htobe32(0x12345678);
	ret = ibv_post_recv(qp, &rwr, &bad_rwr) ?: ibv_post_send(qp, &swr, &bad_swr);
	got = ret ? 0 : poll_one(cq, wc);
	got += got == 1 ? poll_one(cq, wc + 1) : 0;
	report(got == 2 && !wc[0].status && !wc[1].status &&
	       !memcmp(buf, buf + 4096, 3000),
	       "UC: SEND_WITH_IMM of 3000 bytes to itself: two completions, data compared");
	for (i = 0; i < (unsigned int)got; i++)
		if (wc[i].wr_id == 1)
			report(wc[i].opcode == IBV_WC_RECV && wc[i].byte_len == 3000 &&
			       (wc[i].wc_flags & IBV_WC_WITH_IMM) &&
			       be32toh(wc[i].imm_data) == 0x12345678,
			       "UC: the receive completion: RECV, 3000 bytes, immediate data");

	/* RDMA WRITE with immediate: data at the address, a receive consumed. */
	memset(buf + 8192, 0, 4096);
	swr.wr_id = 3;
	swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	ret = ibv_post_recv(qp, &rwr, &bad_rwr) ?: ibv_post_send(qp, &swr, &bad_swr);
	got = ret ? 0 : poll_one(cq, wc);
	got += got == 1 ? poll_one(cq, wc + 1) : 0;
	report(got == 2 && !wc[0].status && !wc[1].status &&
	       !memcmp(buf, buf + 8192, 3000),
	       "UC: RDMA_WRITE_WITH_IMM of 3000 bytes: two completions, data compared");

	/* A SEND with no receive posted: dropped, the next one received. */
	swr.wr_id = 4;
	swr.opcode = IBV_WR_SEND;
	ssge.length = 64;
	ret = ibv_post_send(qp, &swr, &bad_swr);
	got = ret ? 0 : poll_one(cq, wc);
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);
	report(got == 1 && wc[0].wr_id == 4 && !wc[0].status && !ret &&
	       a.qp_state == IBV_QPS_RTS && poll_one(cq, wc + 1) == 0,
	       "UC: a SEND with no receive posted completes, is dropped, the QP stays RTS");
	memset(buf + 4096, 0, 64);
	ret = ibv_post_recv(qp, &rwr, &bad_rwr) ?: ibv_post_send(qp, &swr, &bad_swr);
	got = ret ? 0 : poll_one(cq, wc);
	got += got == 1 ? poll_one(cq, wc + 1) : 0;
	report(got == 2 && !wc[0].status && !wc[1].status &&
	       !memcmp(buf, buf + 4096, 64),
	       "UC: the next SEND is received, data compared");
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

/*
 * XRC (IBA annex A14): one initiator QP reaches every XRC SRQ of a domain
 * through one target QP. On one device connected to itself: a domain, two
 * XRC SRQs completing in two CQs, a target and an initiator; SENDs to each
 * SRQ through ibv_post_send() and through the ibv_wr_*() API, an RDMA
 * WRITE and READ, FETCH_ADD, ATOMIC_WRITE and FLUSH; what is refused (a
 * request naming no SRQ, receives on XRC QPs, an ibv_wr_*() request
 * without its SRQ, a domain still in use); a second handle on the target
 * (ibv_open_qp()).
 */
static void test_xrc(struct ibv_context *ctx, const struct ibv_device_attr *da,
		     int data)
{
	struct ibv_xrcd_init_attr xia = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sia = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	struct ibv_qp_init_attr_ex tia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_init_attr_ex iia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_FLUSH,
	};
	struct ibv_qp *tgt = NULL, *ini = NULL, *opened = NULL, *bad_qp;
	struct ibv_srq *srq[2] = {}, *bad_srq;
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	struct ibv_send_wr swr = {}, *bad_swr;
	struct ibv_cq *cq = NULL, *cq2 = NULL;
	struct ibv_qp_open_attr oa = {};
	struct ibv_sge ssge, rsge;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_xrcd *xrcd;
	struct ibv_mr *mr = NULL;
	struct ibv_qp_ex *qpx;
	uint32_t srqn[2] = {};
	static char buf[5 * 4096];
	struct ibv_pd *pd = NULL;
	struct ibv_wc wc, rwc;
	union ibv_gid gid;
	int ret, i;

	if (!(da->device_cap_flags & IBV_DEVICE_XRC)) {
		report(0, "XRC: the device announces IBV_DEVICE_XRC");
		return;
	}
	xrcd = ibv_open_xrcd(ctx, &xia);
	report(!!xrcd, "XRC: open an XRC domain without a file: %s",
	       xrcd ? "ok" : strerror(errno));
	if (!xrcd)
		return;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	cq2 = cq ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (!cq2)
		goto out;
	sia.pd = pd;
	sia.xrcd = xrcd;
	sia.comp_mask &= ~IBV_SRQ_INIT_ATTR_CQ;
	bad_srq = ibv_create_srq_ex(ctx, &sia);
	report(!bad_srq && errno == EINVAL,
	       "XRC: an XRC SRQ without a CQ is refused: %s",
	       bad_srq ? "created" : strerror(errno));
	sia.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	for (i = 0; i < 2; i++) {
		sia.cq = i ? cq2 : cq;
		srq[i] = ibv_create_srq_ex(ctx, &sia);
		ret = srq[i] ? ibv_get_srq_num(srq[i], &srqn[i]) : errno;
		report(!ret && srqn[i], "XRC: XRC SRQ %d (CQ %d): %s, SRQN %u",
		       i, i, strerror(ret), srqn[i]);
		if (ret)
			goto out;
	}
	report(srqn[0] != srqn[1], "XRC: the two SRQs have different numbers");

	tia.xrcd = NULL;
	bad_qp = ibv_create_qp_ex(ctx, &tia);
	report(!bad_qp && errno == EINVAL,
	       "XRC: a target QP without a domain is refused: %s",
	       bad_qp ? "created" : strerror(errno));
	tia.xrcd = xrcd;
	tgt = ibv_create_qp_ex(ctx, &tia);
	report(!!tgt, "XRC: create a target QP (XRC_RECV): %s",
	       tgt ? "ok" : strerror(errno));
	iia.send_cq = cq;
	iia.comp_mask &= ~IBV_QP_INIT_ATTR_PD;
	bad_qp = ibv_create_qp_ex(ctx, &iia);
	report(!bad_qp && errno == EINVAL,
	       "XRC: an initiator QP without a PD is refused: %s",
	       bad_qp ? "created" : strerror(errno));
	iia.comp_mask |= IBV_QP_INIT_ATTR_PD;
	iia.pd = pd;
	ini = ibv_create_qp_ex(ctx, &iia);
	report(!!ini, "XRC: create an initiator QP (XRC_SEND): %s",
	       ini ? "ok" : strerror(errno));
	mr = ini ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC |
			      IBV_ACCESS_FLUSH_GLOBAL) : NULL;
	if (!tgt || !mr || ibv_query_gid(ctx, 1, 0, &gid))
		goto out;
	ret = xrc_connect(tgt, ini->qp_num, &gid);
	report(!ret, "XRC: the target to RTS, connected to the initiator: %s",
	       strerror(ret));
	ret = ret ?: xrc_connect(ini, tgt->qp_num, &gid);
	report(!ret, "XRC: the initiator to RTS, connected to the target: %s",
	       strerror(ret));
	if (ret)
		goto out;
	ret = ibv_query_qp(tgt, &a, IBV_QP_STATE | IBV_QP_DEST_QPN, &ia);
	report(!ret && a.qp_state == IBV_QPS_RTS && a.dest_qp_num == ini->qp_num &&
	       ia.qp_type == IBV_QPT_XRC_RECV,
	       "XRC: query the target: XRC_RECV, RTS, connected to the initiator");

	rsge = (struct ibv_sge){ .length = 4096, .lkey = mr->lkey };
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ret = ibv_post_recv(ini, &rwr, &bad_rwr);
	report(ret == EINVAL, "XRC: post_recv on the initiator: %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	ret = ibv_post_recv(tgt, &rwr, &bad_rwr);
	report(ret == EINVAL, "XRC: post_recv on the target: %s (want %s)",
	       strerror(ret), strerror(EINVAL));

	oa = (struct ibv_qp_open_attr){
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt->qp_num,
		.xrcd = xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	opened = ibv_open_qp(ctx, &oa);
	ret = opened ? ibv_query_qp(opened, &a, IBV_QP_STATE, &ia) : errno;
	report(!ret && a.qp_state == IBV_QPS_RTS,
	       "XRC: open the target by its number, query it: %s, RTS",
	       strerror(ret));
	if (opened) {
		ret = ibv_destroy_qp(opened);
		ret = ret ?: ibv_query_qp(tgt, &a, IBV_QP_STATE, &ia);
		report(!ret && a.qp_state == IBV_QPS_RTS,
		       "XRC: the opened handle destroyed, the target is still RTS: %s",
		       strerror(ret));
	}
	ret = ibv_close_xrcd(xrcd);
	report(ret == EBUSY, "XRC: closing the domain in use: %s (want %s)",
	       strerror(ret), strerror(EBUSY));
	if (!data)
		goto out;

	/* A SEND to each SRQ, its receive in that SRQ's CQ. */
	for (i = 0; i < 3 * 4096; i++)
		buf[i] = (char)(i * 13 + 5);
	for (i = 0; i < 2; i++) {
		rsge.addr = (uintptr_t)buf + 4096 * (3 + i);
		rwr.wr_id = 100 + i;
		memset(buf + 4096 * (3 + i), 0, 4096);
		ret = ibv_post_srq_recv(srq[i], &rwr, &bad_rwr);
		report(!ret, "XRC: post a receive to SRQ %d: %s", i, strerror(ret));
	}
	ssge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 3000,
				 .lkey = mr->lkey };
	swr = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &ssge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(0xabcd),
		.send_flags = IBV_SEND_SIGNALED,
	};
	swr.qp_type.xrc.remote_srqn = srqn[1];
	ret = ibv_post_send(ini, &swr, &bad_swr);
	report(!ret && xrc_completions(cq, cq2, tgt->qp_num, 101, 3000, &rwc) &&
	       rwc.opcode == IBV_WC_RECV && (rwc.wc_flags & IBV_WC_WITH_IMM) &&
	       be32toh(rwc.imm_data) == 0xabcd &&
	       !memcmp(buf, buf + 4 * 4096, 3000),
	       "XRC: post_send SEND_WITH_IMM of 3000 bytes to SRQ 1: its receive in CQ 1, for the target, data compared");

	qpx = ibv_qp_to_qp_ex(ini);
	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf + 4096, 2000);
	ret = ibv_wr_complete(qpx);
	report(ret == EINVAL && poll_one(cq, &wc) == 0,
	       "XRC: an ibv_wr_send() without ibv_wr_set_xrc_srqn() fails at ibv_wr_complete(): %s",
	       strerror(ret));
	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, srqn[0]);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf + 4096, 2000);
	ret = ibv_wr_complete(qpx);
	report(!ret && xrc_completions(cq, cq, tgt->qp_num, 100, 2000, &rwc) &&
	       !memcmp(buf + 4096, buf + 3 * 4096, 2000),
	       "XRC: ibv_wr_send() of 2000 bytes to SRQ 0: its receive in CQ 0, data compared: %s",
	       strerror(ret));

	/* An RDMA WRITE through the target, checked against SRQ 0's PD. */
	memset(buf + 3 * 4096, 0, 4096);
	ibv_wr_start(qpx);
	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, mr->rkey, (uintptr_t)buf + 3 * 4096);
	ibv_wr_set_xrc_srqn(qpx, srqn[0]);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf + 2 * 4096, 4096);
	ret = ibv_wr_complete(qpx);
	report(!ret && xrc_completions(cq, NULL, 0, 0, 0, &rwc) &&
	       !memcmp(buf + 2 * 4096, buf + 3 * 4096, 4096),
	       "XRC: an RDMA WRITE of 4096 bytes through the target: data compared: %s",
	       strerror(ret));

	/* READ, atomics and FLUSH through the target, against SRQ 1's PD. */
	memset(buf + 3 * 4096, 0, 4096);
	xrc_wr_begin(qpx, 6);
	ibv_wr_rdma_read(qpx, mr->rkey, (uintptr_t)buf + 2 * 4096);
	ret = xrc_wr_end(qpx, cq, srqn[1], mr->lkey, buf + 3 * 4096, 4096,
			 &wc);
	report(!ret && wc.wr_id == 6 && !wc.status &&
	       wc.opcode == IBV_WC_RDMA_READ &&
	       !memcmp(buf + 2 * 4096, buf + 3 * 4096, 4096),
	       "XRC: an RDMA READ of 4096 bytes through the target: data compared: %s",
	       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	{
		uint64_t *word = (uint64_t *)(buf + 4 * 4096);
		uint8_t val[8];

		word[0] = 1000;
		word[1] = 0;
		xrc_wr_begin(qpx, 7);
		ibv_wr_atomic_fetch_add(qpx, mr->rkey, (uintptr_t)word, 234);
		ret = xrc_wr_end(qpx, cq, srqn[0], mr->lkey, word + 1, 8, &wc);
		report(!ret && wc.wr_id == 7 && !wc.status &&
		       wc.opcode == IBV_WC_FETCH_ADD && word[0] == 1234 &&
		       word[1] == 1000,
		       "XRC: FETCH_ADD through the target: 1000 + 234, the old value returned: %s",
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
		memcpy(val, &(uint64_t){ 0x1122334455667788ULL }, 8);
		xrc_wr_begin(qpx, 8);
		ibv_wr_atomic_write(qpx, mr->rkey, (uintptr_t)word, val);
		ret = xrc_wr_end(qpx, cq, srqn[1], 0, NULL, 0, &wc);
		report(!ret && wc.wr_id == 8 && !wc.status &&
		       wc.opcode == IBV_WC_ATOMIC_WRITE &&
		       word[0] == 0x1122334455667788ULL,
		       "XRC: ATOMIC_WRITE through the target: the 8 bytes written: %s",
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	}
	xrc_wr_begin(qpx, 9);
	ibv_wr_flush(qpx, mr->rkey, (uintptr_t)buf, 4096, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	ret = xrc_wr_end(qpx, cq, srqn[0], 0, NULL, 0, &wc);
	report(!ret && wc.wr_id == 9 && !wc.status && wc.opcode == IBV_WC_FLUSH,
	       "XRC: FLUSH of a range through the target completes: %s",
	       ret ? strerror(ret) : ibv_wc_status_str(wc.status));

	/* A request naming no SRQ: NAK, the initiator's WR fails. */
	swr.wr_id = 5;
	swr.opcode = IBV_WR_SEND;
	swr.qp_type.xrc.remote_srqn = (srqn[0] > srqn[1] ? srqn[0] : srqn[1]) + 1;
	ret = ibv_post_send(ini, &swr, &bad_swr);
	ret = ret ?: poll_one(cq, &wc) == 1 ? 0 : ETIMEDOUT;
	report(!ret && wc.wr_id == 5 && wc.status == IBV_WC_REM_INV_REQ_ERR,
	       "XRC: a SEND naming no SRQ completes with %s (want %s)",
	       ret ? strerror(ret) : ibv_wc_status_str(wc.status),
	       ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
	ret = ibv_query_qp(tgt, &a, IBV_QP_STATE, &ia);
	report(!ret && a.qp_state == IBV_QPS_ERR,
	       "XRC: the target that refused it is in ERR");
out:
	if (ini)
		ibv_destroy_qp(ini);
	if (tgt)
		ibv_destroy_qp(tgt);
	for (i = 0; i < 2; i++)
		if (srq[i])
			ibv_destroy_srq(srq[i]);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq2)
		ibv_destroy_cq(cq2);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ret = ibv_close_xrcd(xrcd);
	report(!ret, "XRC: close the domain: %s", strerror(ret));
}

/*
 * The uverbs POST_SEND, POST_RECV and POST_SRQ_RECV commands, which would
 * hand user objects to the kernel's post verbs: a user QP's and SRQ's
 * rings are the library's, not mapped in the kernel, and an XRC target
 * has none. The core offers them only to drivers that set them in
 * uverbs_cmd_mask (the software devices); kite_ib does not, so each is
 * refused with EOPNOTSUPP, also on a QP in RTS, and nothing is posted.
 */
static void test_kernel_post(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ibv_xrcd_init_attr xia = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex tia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	struct ibv_send_wr swr = {}, *bad_swr;
	struct ibv_qp *qp = NULL, *tgt = NULL;
	struct ibv_xrcd *xrcd = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	static char buf[64];
	struct ibv_sge sge;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	int ret;

	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qpia) : NULL;
	mr = qp ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	ret = mr ? rc_self_connect(qp) : errno;
	report(!ret, "kernel post: a user RC QP in RTS: %s", strerror(ret));
	if (ret)
		goto out;
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8,
				.lkey = mr->lkey };
	swr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	rwr = (struct ibv_recv_wr){ .sg_list = &sge, .num_sge = 1 };
	bad_swr = NULL;
	ret = ibv_cmd_post_send(qp, &swr, &bad_swr);
	report(ret == EOPNOTSUPP && bad_swr == &swr,
	       "kernel post: POST_SEND on a user QP: %s (want %s), bad_wr set",
	       strerror(ret), strerror(EOPNOTSUPP));
	bad_rwr = NULL;
	ret = ibv_cmd_post_recv(qp, &rwr, &bad_rwr);
	report(ret == EOPNOTSUPP && bad_rwr == &rwr,
	       "kernel post: POST_RECV on a user QP: %s (want %s), bad_wr set",
	       strerror(ret), strerror(EOPNOTSUPP));
	report(poll_one(cq, &wc) == 0,
	       "kernel post: nothing was posted, nothing completes");
	srq = ibv_create_srq(pd, &sia);
	bad_rwr = NULL;
	ret = srq ? ibv_cmd_post_srq_recv(srq, &rwr, &bad_rwr) : errno;
	report(ret == EOPNOTSUPP,
	       "kernel post: POST_SRQ_RECV on a user SRQ: %s (want %s)",
	       strerror(ret), strerror(EOPNOTSUPP));
	xrcd = ibv_open_xrcd(ctx, &xia);
	tia.xrcd = xrcd;
	tgt = xrcd ? ibv_create_qp_ex(ctx, &tia) : NULL;
	bad_swr = NULL;
	ret = tgt ? ibv_cmd_post_send(tgt, &swr, &bad_swr) : errno;
	report(ret == EOPNOTSUPP,
	       "kernel post: POST_SEND on an XRC target QP: %s (want %s)",
	       strerror(ret), strerror(EOPNOTSUPP));
	ret = tgt ? ibv_cmd_post_recv(tgt, &rwr, &bad_rwr) : errno;
	report(ret == EOPNOTSUPP,
	       "kernel post: POST_RECV on an XRC target QP: %s (want %s)",
	       strerror(ret), strerror(EOPNOTSUPP));
out:
	if (tgt)
		ibv_destroy_qp(tgt);
	if (xrcd)
		ibv_close_xrcd(xrcd);
	if (srq)
		ibv_destroy_srq(srq);
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

/*
 * QP error recovery: an RC QP connected to itself goes to ERROR on a
 * remote access error (an RDMA WRITE with a key that names nothing), then
 * is reused: RESET (libkite and the device start its rings over, empty),
 * INIT, RTR, RTS, and carries SENDs again, more of them than its 16-entry
 * rings hold, data compared.
 */
static void test_qp_recover(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	struct ibv_send_wr swr = {}, *bad_swr;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr attr;
	struct ibv_sge ssge, rsge;
	struct ibv_wc wc;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	static char buf[8192];
	int i, ret, good = 0;

	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qpia) : NULL;
	mr = qp ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	report(!!mr, "QP recovery: PD, CQ, RC QP and MR: %s",
	       mr ? "ok" : strerror(errno));
	if (!mr)
		goto out;
	ret = rc_self_connect(qp);
	report(!ret, "QP recovery: RC QP connected to itself, RTS: %s",
	       strerror(ret));
	if (ret)
		goto out;

	ssge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 64,
				 .lkey = mr->lkey };
	swr.wr_id = 1;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	swr.wr.rdma.rkey = mr->rkey ^ 0x5a5a00;
	ret = ibv_post_send(qp, &swr, &bad_swr);
	ret = ret ? -ret : poll_one(cq, &wc);
	report(ret == 1 && wc.status == IBV_WC_REM_ACCESS_ERR,
	       "QP recovery: an RDMA WRITE with a bad rkey completes with a remote access error (%s)",
	       ret == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &ia);
	report(!ret && attr.qp_state == IBV_QPS_ERR, "QP recovery: the QP is in ERROR");

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	report(!ret, "QP recovery: ERROR -> RESET: %s", strerror(ret));
	ret = ret ? ret : rc_self_connect(qp);
	report(!ret, "QP recovery: RESET -> INIT -> RTR -> RTS: %s",
	       strerror(ret));
	if (ret)
		goto out;

	rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096,
				 .length = 4096, .lkey = mr->lkey };
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ssge.length = 256;
	swr.opcode = IBV_WR_SEND;
	for (i = 0; i < 40; i++) {
		int got = 0;

		memset(buf, i + 1, 256);
		memset(buf + 4096, 0, 256);
		rwr.wr_id = 100 + i;
		swr.wr_id = 200 + i;
		if (ibv_post_recv(qp, &rwr, &bad_rwr) ||
		    ibv_post_send(qp, &swr, &bad_swr))
			break;
		while (got < 2 && poll_one(cq, &wc) == 1 &&
		       wc.status == IBV_WC_SUCCESS)
			got++;
		if (got < 2 || memcmp(buf, buf + 4096, 256))
			break;
		good++;
	}
	report(good == 40,
	       "QP recovery: the QP carries 40 SENDs of 256 bytes again, data compared (%d good)",
	       good);
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

/*
 * A UD QP in RTS on @cq with a registered buffer and an address handle to
 * its own GID, for sends that come back through the device's loopback.
 */
struct ud_loop {
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	char buf[4096];
};

#define UD_LOOP_QKEY	0x11111111

static void ud_loop_free(struct ud_loop *u)
{
	if (u->ah)
		ibv_destroy_ah(u->ah);
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	memset(u, 0, sizeof(*u));
}

/*
 * Move the UD QP @qp to RTS (Q_Key UD_LOOP_QKEY) and create in @pd an
 * address handle to its own GID 0; 0 or an errno.
 */
static int ud_up(struct ibv_qp *qp, struct ibv_pd *pd, struct ibv_ah **ah)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = UD_LOOP_QKEY,
	};
	struct ibv_ah_attr aha = {
		.is_global = 1,
		.grh.hop_limit = 64,
		.port_num = 1,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	attr.qp_state = IBV_QPS_RTR;
	ret = ret ?: ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	ret = ret ?: ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	ret = ret ?: ibv_query_gid(qp->context, 1, 0, &aha.grh.dgid);
	if (ret)
		return ret;
	*ah = ibv_create_ah(pd, &aha);
	return *ah ? 0 : (errno ? errno : EIO);
}

/* Returns 0 or an errno; on failure nothing is left allocated. */
static int ud_loop_init(struct ibv_context *ctx, struct ibv_cq *cq,
			struct ud_loop *u)
{
	struct ibv_qp_init_attr qpia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int ret;

	memset(u, 0, sizeof(*u));
	u->pd = ibv_alloc_pd(ctx);
	u->mr = u->pd ? ibv_reg_mr(u->pd, u->buf, sizeof(u->buf),
				   IBV_ACCESS_LOCAL_WRITE) : NULL;
	u->qp = u->mr ? ibv_create_qp(u->pd, &qpia) : NULL;
	ret = u->qp ? ud_up(u->qp, u->pd, &u->ah) : (errno ? errno : EIO);
	if (ret)
		ud_loop_free(u);
	return ret;
}

/*
 * Post a receive of the buffer's first half (wr_id @rx_id) and a signaled
 * send of @len bytes from its second half to the QP itself (wr_id @tx_id),
 * with immediate data @imm unless it is 0. The payload is i ^ 0x5a.
 */
static int ud_loop_post(struct ud_loop *u, uint64_t rx_id, uint64_t tx_id,
			uint32_t len, uint32_t imm)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)u->buf,
		.length = 2048,
		.lkey = u->mr->lkey,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)u->buf + 2048,
		.length = len,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr rwr = {
		.wr_id = rx_id, .sg_list = &rsge, .num_sge = 1,
	}, *bad_rwr;
	struct ibv_send_wr swr = {
		.wr_id = tx_id,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
		.wr.ud = { .ah = u->ah, .remote_qpn = u->qp->qp_num,
			   .remote_qkey = UD_LOOP_QKEY },
	}, *bad_swr;
	uint32_t i;
	int ret;

	memset(u->buf, 0, 2048);
	for (i = 0; i < len; i++)
		u->buf[2048 + i] = (char)(i ^ 0x5a);
	ret = ibv_post_recv(u->qp, &rwr, &bad_rwr);
	return ret ?: ibv_post_send(u->qp, &swr, &bad_swr);
}

/*
 * A user CQ its process does not poll overflows: the device moves it to
 * the error state and its owner gets IBV_EVENT_CQ_ERR. The kernel log gets
 * no warning (test-rdma.sh checks): kite_ib once warned for every user
 * CQ's overflow (found by kite_uverbs_fuzz), so a process could fill the
 * log.
 */
static void test_cq_overflow(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ud_loop u;
	int i, got = 0;

	if (!cq || ud_loop_init(ctx, cq, &u)) {
		report(0, "CQ overflow: a UD QP on a CQ of %d CQEs",
		       cq ? cq->cqe : 0);
		if (cq)
			ibv_destroy_cq(cq);
		return;
	}
	/* Eight CQEs for a ring of two slots. */
	for (i = 0; i < 4; i++)
		ud_loop_post(&u, i, 100 + i, 16, 0);
	while (!got && poll(&pfd, 1, 5000) == 1 &&
	       !ibv_get_async_event(ctx, &ev)) {
		got = ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq;
		ibv_ack_async_event(&ev);
	}
	report(got, "CQ overflow: IBV_EVENT_CQ_ERR delivered to the owner");
	ud_loop_free(&u);
	ibv_destroy_cq(cq);
}

/* What the extended poll API said of one completion. */
struct ex_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, src_qp, slid;
	unsigned int wc_flags;
	uint32_t imm;
	uint8_t sl, dlid_path_bits;
	uint64_t ts, wall;
};

static void ex_wc_read(struct ibv_cq_ex *cq, struct ex_wc *w)
{
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->qp_num = ibv_wc_read_qp_num(cq);
	w->src_qp = ibv_wc_read_src_qp(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	w->imm = (w->wc_flags & IBV_WC_WITH_IMM) ?
		 be32toh(ibv_wc_read_imm_data(cq)) : 0;
	w->slid = ibv_wc_read_slid(cq);
	w->sl = ibv_wc_read_sl(cq);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	w->ts = ibv_wc_read_completion_ts(cq);
	/* Only a CQ created with the wall-clock flag has the function. */
	w->wall = cq->read_completion_wallclock_ns ?
		  ibv_wc_read_completion_wallclock_ns(cq) : 0;
}

/*
 * Up to @max completions with start_poll/next_poll/end_poll, waiting up
 * to two seconds for @want of them. Returns how many, or -errno if a poll
 * call failed otherwise than with ENOENT.
 */
static int ex_poll(struct ibv_cq_ex *cq, struct ex_wc *w, int want, int max)
{
	struct ibv_poll_cq_attr pattr = {};
	int n = 0, tries, ret;

	for (tries = 0; tries < 2000 && n < want; tries++) {
		ret = ibv_start_poll(cq, &pattr);
		if (ret == ENOENT) {
			usleep(1000);
			continue;
		}
		if (ret)
			return -ret;
		do {
			ex_wc_read(cq, &w[n++]);
			ret = n < max ? ibv_next_poll(cq) : ENOENT;
		} while (!ret);
		ibv_end_poll(cq);
		if (ret != ENOENT)
			return -ret;
	}
	return n;
}

#define CQ_EX_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/*
 * ibv_create_cq_ex() with @comp_mask, @flags and @wc_flags fails with
 * @want (and creates nothing), or with @want 0 succeeds.
 */
static void cq_ex_attr(struct ibv_context *ctx, const char *what,
		       uint32_t comp_mask, uint32_t flags, uint64_t wc_flags,
		       int want)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 16,
		.wc_flags = wc_flags,
		.comp_mask = comp_mask,
		.flags = flags,
	};
	struct ibv_cq_ex *cq;
	int err;

	errno = 0;
	cq = ibv_create_cq_ex(ctx, &attr);
	err = cq ? 0 : errno;
	report(err == want, "cq_ex: %s: %s (want %s)", what, strerror(err),
	       strerror(want));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* What ibv_poll_cq() said of one completion, as ex_wc_read() puts it. */
static void ex_wc_from(const struct ibv_wc *wc, struct ex_wc *w)
{
	*w = (struct ex_wc){
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.byte_len = wc->byte_len,
		.qp_num = wc->qp_num,
		.src_qp = wc->src_qp,
		.slid = wc->slid,
		.wc_flags = wc->wc_flags,
		.imm = (wc->wc_flags & IBV_WC_WITH_IMM) ?
		       be32toh(wc->imm_data) : 0,
		.sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
	};
}

/* Whether two reports of a completion agree on all but the timestamps. */
static int ex_wc_same(const struct ex_wc *a, const struct ex_wc *b)
{
	return a->wr_id == b->wr_id && a->status == b->status &&
	       a->opcode == b->opcode && a->byte_len == b->byte_len &&
	       a->qp_num == b->qp_num && a->src_qp == b->src_qp &&
	       a->slid == b->slid && a->wc_flags == b->wc_flags &&
	       a->imm == b->imm && a->sl == b->sl &&
	       a->dlid_path_bits == b->dlid_path_bits;
}

/*
 * One message of @len bytes (with immediate @imm if not 0) sent twice,
 * its completions polled once through the extended API and once with
 * ibv_poll_cq(): each field reads the same both ways. libkite reads a
 * plain send's and receive's fields from the CQE only when asked, and
 * parses any other CQE whole.
 */
static void cq_ex_same(struct ibv_cq_ex *cq, struct ud_loop *u,
		       const char *what, uint32_t len, uint32_t imm)
{
	struct ex_wc x[4] = {}, p[2] = {}, *rx = NULL;
	int ret, n, got = 0, tries, i, j, same = 0;
	struct ibv_wc wc;

	ret = ud_loop_post(u, 41, 42, len, imm);
	n = ret ? 0 : ex_poll(cq, x, 2, 4);
	ret = ret ?: ud_loop_post(u, 41, 42, len, imm);
	for (tries = 0; !ret && tries < 2000 && got < 2; tries++) {
		int c = ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc);

		if (c < 0)
			break;
		if (c)
			ex_wc_from(&wc, &p[got++]);
		else
			usleep(1000);
	}
	for (i = 0; n == 2 && i < 2; i++)
		for (j = 0; j < got; j++)
			if (p[j].wr_id == x[i].wr_id)
				same += ex_wc_same(&x[i], &p[j]);
	report(n == 2 && got == 2 && same == 2,
	       "cq_ex loopback: %s: the send and the receive read through the extended API as ibv_poll_cq() reports them (%d, %d, %d agree)",
	       what, n, got, same);
	for (i = 0; i < n; i++)
		if (x[i].wr_id == 41)
			rx = &x[i];
	report(rx && rx->opcode == IBV_WC_RECV && rx->byte_len == 40 + len &&
	       rx->src_qp == u->qp->qp_num && (rx->wc_flags & IBV_WC_GRH),
	       "cq_ex loopback: %s: receive: opcode %d, %u bytes, src_qp %u, flags %#x",
	       what, rx ? (int)rx->opcode : -1, rx ? rx->byte_len : 0,
	       rx ? rx->src_qp : 0, rx ? rx->wc_flags : 0);
}

/* The loopback round of test_cq_ex(): a UD send with immediate data. */
static void cq_ex_loopback(struct ibv_context *ctx, struct ibv_cq_ex *cq)
{
	struct ex_wc w[4] = {}, *tx = NULL, *rx = NULL;
	struct ud_loop u;
	int ret, n, i, data_ok = 1;

	ret = ud_loop_init(ctx, ibv_cq_ex_to_cq(cq), &u);
	report(!ret, "cq_ex loopback: UD QP in RTS with an AH to itself: %s",
	       strerror(ret));
	if (ret)
		return;
	ret = ud_loop_post(&u, 21, 22, 100, 0xc0ffee);
	report(!ret, "cq_ex loopback: post a receive and a send with immediate: %s",
	       strerror(ret));
	n = ret ? 0 : ex_poll(cq, w, 2, 4);
	report(n == 2, "cq_ex loopback: two completions through start/next/end_poll (%d)",
	       n);
	for (i = 0; i < n; i++) {
		if (w[i].wr_id == 22)
			tx = &w[i];
		if (w[i].wr_id == 21)
			rx = &w[i];
	}
	report(tx && tx->status == IBV_WC_SUCCESS && tx->opcode == IBV_WC_SEND &&
	       tx->qp_num == u.qp->qp_num && !(tx->wc_flags & IBV_WC_WITH_IMM),
	       "cq_ex loopback: send completion: status %d opcode %d qp %u flags %#x",
	       tx ? (int)tx->status : -1, tx ? (int)tx->opcode : -1,
	       tx ? tx->qp_num : 0, tx ? tx->wc_flags : 0);
	report(rx && rx->status == IBV_WC_SUCCESS && rx->opcode == IBV_WC_RECV &&
	       rx->byte_len == 40 + 100 && rx->qp_num == u.qp->qp_num &&
	       rx->src_qp == u.qp->qp_num &&
	       (rx->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM)) ==
	       (IBV_WC_GRH | IBV_WC_WITH_IMM) && rx->imm == 0xc0ffee,
	       "cq_ex loopback: receive completion: status %d opcode %d %u bytes qp %u src_qp %u flags %#x imm %#x",
	       rx ? (int)rx->status : -1, rx ? (int)rx->opcode : -1,
	       rx ? rx->byte_len : 0, rx ? rx->qp_num : 0,
	       rx ? rx->src_qp : 0, rx ? rx->wc_flags : 0, rx ? rx->imm : 0);
	report(rx && !rx->slid && !rx->dlid_path_bits && !rx->sl,
	       "cq_ex loopback: RoCE: slid, dlid_path_bits 0, sl 0 (no VLAN)");
	report(n == 2 && w[0].ts && w[1].ts >= w[0].ts,
	       "cq_ex loopback: completion timestamps set, in order (%llu, %llu)",
	       (unsigned long long)w[0].ts, (unsigned long long)w[1].ts);
	/* Both clocks stamp one CQE at one instant; rates differ by <= 10 %. */
	report(n == 2 && w[0].wall && w[1].wall >= w[0].wall &&
	       llabs((long long)(w[1].wall - w[0].wall) -
		     (long long)(w[1].ts - w[0].ts)) <=
	       (long long)(w[1].ts - w[0].ts) / 10 + 1000,
	       "cq_ex loopback: wall-clock timestamps set, in order, as far apart as the device clock's (%llu, %llu)",
	       (unsigned long long)w[0].wall, (unsigned long long)w[1].wall);
	for (i = 0; i < 100; i++)
		if (u.buf[40 + i] != (char)(i ^ 0x5a))
			data_ok = 0;
	report(rx && data_ok, "cq_ex loopback: payload after the GRH, byte for byte");

	/* The same CQ through the classic poll: both share the CQ's state. */
	ret = ud_loop_post(&u, 23, 24, 10, 0);
	for (i = 0, n = 0; !ret && i < 2000 && n < 2; i++) {
		struct ibv_wc wc;
		int got = ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc);

		if (got < 0)
			break;
		if (got && wc.status == IBV_WC_SUCCESS &&
		    (wc.wr_id == 24 || (wc.wr_id == 23 && wc.byte_len == 50 &&
					!(wc.wc_flags & IBV_WC_WITH_IMM))))
			n++;
		if (!got)
			usleep(1000);
	}
	report(n == 2, "cq_ex loopback: ibv_poll_cq on the same CQ: %d of 2 completions",
	       n);
	cq_ex_same(cq, &u, "a plain send", 77, 0);
	cq_ex_same(cq, &u, "a send with immediate data", 33, 0xabcd);
	ud_loop_free(&u);
}

/*
 * A CQ with a completion channel: armed through ibv_cq_ex_to_cq(), the
 * event arrives for this CQ, and the completion is then polled with the
 * extended API.
 */
static void cq_ex_events(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 16,
		.channel = ch,
		.wc_flags = CQ_EX_WC_FLAGS,
		.cq_context = &attr,
	};
	struct ibv_cq *ev_cq = NULL;
	struct ex_wc w[4] = {};
	struct ibv_cq_ex *cq;
	void *ev_ctx = NULL;
	struct pollfd pfd;
	struct ud_loop u;
	int ret, n;

	report(!!ch, "cq_ex events: create a completion channel: %s",
	       ch ? "ok" : strerror(errno));
	if (!ch)
		return;
	cq = ibv_create_cq_ex(ctx, &attr);
	report(!!cq, "cq_ex events: create a CQ on the channel: %s",
	       cq ? "ok" : strerror(errno));
	if (!cq)
		goto out_ch;
	ret = ud_loop_init(ctx, ibv_cq_ex_to_cq(cq), &u);
	report(!ret, "cq_ex events: UD QP: %s", strerror(ret));
	if (ret)
		goto out_cq;
	ret = ibv_req_notify_cq(ibv_cq_ex_to_cq(cq), 0);
	report(!ret, "cq_ex events: arm through ibv_cq_ex_to_cq(): %s",
	       strerror(ret));
	ret = ret ?: ud_loop_post(&u, 31, 32, 8, 0);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	ret = ret ?: (poll(&pfd, 1, 5000) == 1 ? 0 : ETIMEDOUT);
	ret = ret ?: ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	report(!ret && ev_cq == ibv_cq_ex_to_cq(cq) && ev_ctx == &attr,
	       "cq_ex events: completion event for this CQ and its context: %s",
	       strerror(ret));
	if (!ret)
		ibv_ack_cq_events(ev_cq, 1);
	/* Both completions may not be there yet when the event comes. */
	n = ex_poll(cq, w, 2, 4);
	report(n == 2 && w[0].qp_num == u.qp->qp_num,
	       "cq_ex events: the completions polled after the event (%d)", n);
	ud_loop_free(&u);
out_cq:
	report(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "cq_ex events: destroy CQ");
out_ch:
	report(!ibv_destroy_comp_channel(ch), "cq_ex events: destroy channel");
}

/*
 * The extended CQ: the attributes libkite accepts and refuses (with the
 * errno of rdma-core's convention: EINVAL for what is not defined,
 * EOPNOTSUPP for what is defined but not supported), the clock the
 * timestamps count, polling an empty CQ, and (@data) completions through
 * the extended poll API and completion events.
 */
static void test_cq_ex(struct ibv_context *ctx, int data)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 100,
		.wc_flags = CQ_EX_WC_FLAGS,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_device_attr_ex dax = {};
	struct ibv_cq_ex *cq;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &dax);
	report(!ret && dax.completion_timestamp_mask == UINT64_MAX &&
	       dax.hca_core_clock == 1000000,
	       "cq_ex: the device reports a 64-bit nanosecond CQE clock (mask %#llx, %llu kHz): %s",
	       (unsigned long long)dax.completion_timestamp_mask,
	       (unsigned long long)dax.hca_core_clock, strerror(ret));

	cq_ex_attr(ctx, "standard wc_flags and the completion timestamp", 0, 0,
		   CQ_EX_WC_FLAGS, 0);
	cq_ex_attr(ctx, "no wc_flags at all", 0, 0, 0, 0);
	cq_ex_attr(ctx, "IBV_CREATE_CQ_ATTR_SINGLE_THREADED",
		   IBV_CQ_INIT_ATTR_MASK_FLAGS,
		   IBV_CREATE_CQ_ATTR_SINGLE_THREADED, CQ_EX_WC_FLAGS, 0);
	cq_ex_attr(ctx, "wall-clock timestamps alone", 0, 0,
		   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, 0);
	cq_ex_attr(ctx, "CVLAN refused", 0, 0, IBV_WC_EX_WITH_CVLAN,
		   EOPNOTSUPP);
	cq_ex_attr(ctx, "flow tag refused", 0, 0, IBV_WC_EX_WITH_FLOW_TAG,
		   EOPNOTSUPP);
	cq_ex_attr(ctx, "tag matching info refused", 0, 0,
		   IBV_WC_EX_WITH_TM_INFO, EOPNOTSUPP);
	cq_ex_attr(ctx, "IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN refused",
		   IBV_CQ_INIT_ATTR_MASK_FLAGS,
		   IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, 0, EOPNOTSUPP);
	cq_ex_attr(ctx, "an undefined creation flag refused",
		   IBV_CQ_INIT_ATTR_MASK_FLAGS, 1U << 7, 0, EINVAL);
	cq_ex_attr(ctx, "IBV_CQ_INIT_ATTR_MASK_PD without a parent domain refused",
		   IBV_CQ_INIT_ATTR_MASK_PD, 0, 0, EINVAL);
	cq_ex_attr(ctx, "an undefined comp_mask bit refused", 1U << 6, 0, 0,
		   EINVAL);

	attr.cqe = 0;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &attr);
	report(!cq && errno == EINVAL, "cq_ex: 0 CQEs refused: %s",
	       strerror(errno));
	attr.cqe = 100;
	cq = ibv_create_cq_ex(ctx, &attr);
	report(cq && cq->cqe == 127, "cq_ex: create a CQ of 100 CQEs: %s, %d usable",
	       cq ? "ok" : strerror(errno), cq ? cq->cqe : -1);
	if (!cq)
		return;
	ret = ibv_start_poll(cq, &pattr);
	report(ret == ENOENT, "cq_ex: start_poll on an empty CQ: %s",
	       strerror(ret));
	/* Had the failed start_poll kept the CQ's lock, this would hang. */
	ret = ibv_start_poll(cq, &pattr);
	report(ret == ENOENT, "cq_ex: start_poll on an empty CQ again: %s",
	       strerror(ret));
	pattr.comp_mask = 1;
	ret = ibv_start_poll(cq, &pattr);
	report(ret == EINVAL, "cq_ex: start_poll with an unknown comp_mask: %s",
	       strerror(ret));
	ret = ibv_resize_cq(ibv_cq_ex_to_cq(cq), 300);
	report(!ret && cq->cqe == 511, "cq_ex: resize to 300: %s, %d usable",
	       strerror(ret), cq->cqe);
	if (data)
		cq_ex_loopback(ctx, cq);
	report(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "cq_ex: destroy CQ");
	if (data)
		cq_ex_events(ctx);
}

/*
 * ibv_modify_cq (IBV_CQ_ATTR_MODERATE) through libkite: values within the
 * device's cq_mod_caps are taken, values beyond them and an empty or
 * unknown attribute mask are refused.
 */
static void test_modify_cq(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dax = {};
	struct ibv_modify_cq_attr ma = {};
	struct ibv_cq *cq;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &dax);
	report(!ret && dax.cq_mod_caps.max_cq_count &&
	       dax.cq_mod_caps.max_cq_period,
	       "modify_cq: the device reports moderation limits (%u CQEs, %u us): %s",
	       dax.cq_mod_caps.max_cq_count, dax.cq_mod_caps.max_cq_period,
	       strerror(ret));
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	report(!!cq, "modify_cq: create CQ: %s", cq ? "ok" : strerror(errno));
	if (!cq)
		return;
	ma.attr_mask = IBV_CQ_ATTR_MODERATE;
	ma.moderate.cq_count = 4;
	ma.moderate.cq_period = 10;
	ret = ibv_modify_cq(cq, &ma);
	report(!ret, "modify_cq: 4 CQEs / 10 us: %s", strerror(ret));
	ma.moderate.cq_count = dax.cq_mod_caps.max_cq_count;
	ma.moderate.cq_period = dax.cq_mod_caps.max_cq_period;
	ret = ibv_modify_cq(cq, &ma);
	report(!ret, "modify_cq: at the device's limits: %s", strerror(ret));
	ma.moderate.cq_period = 0;
	ma.moderate.cq_count = 0;
	ret = ibv_modify_cq(cq, &ma);
	report(!ret, "modify_cq: moderation off (0, 0): %s", strerror(ret));
	if (dax.cq_mod_caps.max_cq_count < UINT16_MAX) {
		ma.moderate.cq_count = dax.cq_mod_caps.max_cq_count + 1;
		ret = ibv_modify_cq(cq, &ma);
		report(ret == EINVAL, "modify_cq: max_cq_count + 1 CQEs: %s (want %s)",
		       strerror(ret), strerror(EINVAL));
		ma.moderate.cq_count = 0;
	}
	if (dax.cq_mod_caps.max_cq_period < UINT16_MAX) {
		ma.moderate.cq_period = dax.cq_mod_caps.max_cq_period + 1;
		ret = ibv_modify_cq(cq, &ma);
		report(ret == EINVAL, "modify_cq: max_cq_period + 1 us: %s (want %s)",
		       strerror(ret), strerror(EINVAL));
		ma.moderate.cq_period = 0;
	}
	ma.attr_mask = 0;
	ret = ibv_modify_cq(cq, &ma);
	report(ret == EINVAL, "modify_cq: empty attribute mask: %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	ma.attr_mask = IBV_CQ_ATTR_MODERATE << 1;
	ret = ibv_modify_cq(cq, &ma);
	report(ret == EINVAL || ret == EOPNOTSUPP,
	       "modify_cq: unknown attribute mask bit: %s (want an error)",
	       strerror(ret));
	report(!ibv_destroy_cq(cq), "modify_cq: destroy CQ");
}

/*
 * The extended QP API: ibv_create_qp_ex() with send_ops_flags and the
 * ibv_wr_*() calls. What create_qp_ex refuses and with which errno; then,
 * with --data, every operation Kite has over an RC QP connected to itself
 * and UD sends to a UD QP itself, data compared, and batches that fail or
 * are aborted, which must leave nothing posted.
 */
#define QPX_RC_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_SEND_WITH_INV | \
			 IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			 IBV_QP_EX_WITH_ATOMIC_WRITE | \
			 IBV_QP_EX_WITH_LOCAL_INV)
#define QPX_UD_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define QPX_MASK	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
#define QPX_MAX_SGE	8	/* prm_wqe.rst: KITE_MAX_SGE */

/* ibv_create_qp_ex() of a @type QP on @pd and @cq; NULL with errno. */
static struct ibv_qp *qpx_create(struct ibv_pd *pd, struct ibv_cq *cq,
				 enum ibv_qp_type type, uint32_t comp_mask,
				 uint32_t create_flags, uint64_t ops,
				 struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = comp_mask,
		.pd = pd,
		.create_flags = create_flags,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(pd->context, &a);

	if (qp && cap)
		*cap = a.cap;
	return qp;
}

/* ibv_create_qp_ex() fails with @want and creates nothing, or succeeds. */
static void qpx_bad(struct ibv_pd *pd, struct ibv_cq *cq, const char *what,
		    enum ibv_qp_type type, uint32_t comp_mask,
		    uint32_t create_flags, uint64_t ops, int want)
{
	struct ibv_qp *qp;
	int err;

	errno = 0;
	qp = qpx_create(pd, cq, type, comp_mask, create_flags, ops, NULL);
	err = qp ? 0 : errno;
	if (qp && want)
		err = -1;
	report(err == want, "qp_ex: %s: %s (want %s)", what,
	       err < 0 ? "created" : strerror(err), strerror(want));
	if (qp)
		ibv_destroy_qp(qp);
}

static void test_qp_ex_create(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp;

	report(!!cq, "qp_ex: PD and CQ: %s", cq ? "ok" : strerror(errno));
	if (!cq)
		goto out;
	qpx_bad(pd, cq, "RC with every operation Kite has", IBV_QPT_RC,
		QPX_MASK, 0, QPX_RC_OPS, 0);
	qpx_bad(pd, cq, "UD with send and send with immediate", IBV_QPT_UD,
		QPX_MASK, 0, QPX_UD_OPS, 0);
	qpx_bad(pd, cq, "RC, create flags 0", IBV_QPT_RC,
		QPX_MASK | IBV_QP_INIT_ATTR_CREATE_FLAGS, 0,
		IBV_QP_EX_WITH_SEND, 0);
	qpx_bad(pd, cq, "RC with bind_mw", IBV_QPT_RC, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW, 0);
	qpx_bad(pd, cq, "UC with bind_mw and local invalidate", IBV_QPT_UC,
		QPX_MASK, 0, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW |
		IBV_QP_EX_WITH_LOCAL_INV, 0);
	qpx_bad(pd, cq, "UD with bind_mw", IBV_QPT_UD, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW, EOPNOTSUPP);
	qpx_bad(pd, cq, "RC with TSO", IBV_QPT_RC, QPX_MASK, 0,
		IBV_QP_EX_WITH_TSO, EOPNOTSUPP);
	qpx_bad(pd, cq, "RC with flush", IBV_QPT_RC, QPX_MASK, 0,
		IBV_QP_EX_WITH_FLUSH, 0);
	qpx_bad(pd, cq, "UC with flush", IBV_QPT_UC, QPX_MASK, 0,
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_FLUSH, EOPNOTSUPP);
	qpx_bad(pd, cq, "UD with flush", IBV_QPT_UD, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_FLUSH, EOPNOTSUPP);
	qpx_bad(pd, cq, "UC with atomic write", IBV_QPT_UC, QPX_MASK, 0,
		IBV_QP_EX_WITH_ATOMIC_WRITE, EOPNOTSUPP);
	qpx_bad(pd, cq, "UD with atomic write", IBV_QPT_UD, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE, EOPNOTSUPP);
	qpx_bad(pd, cq, "UD with RDMA write", IBV_QPT_UD, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE, EOPNOTSUPP);
	qpx_bad(pd, cq, "UD with local invalidate", IBV_QPT_UD, QPX_MASK, 0,
		IBV_QP_EX_WITH_LOCAL_INV, EOPNOTSUPP);
	qpx_bad(pd, cq, "an undefined send_ops_flags bit", IBV_QPT_RC,
		QPX_MASK, 0, IBV_QP_EX_WITH_SEND | (1ULL << 40), EINVAL);
	qpx_bad(pd, cq, "an undefined comp_mask bit", IBV_QPT_RC,
		QPX_MASK | (1U << 20), 0, IBV_QP_EX_WITH_SEND, EINVAL);
	qpx_bad(pd, cq, "no PD", IBV_QPT_RC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		0, IBV_QP_EX_WITH_SEND, EINVAL);
	qpx_bad(pd, cq, "create flag SCATTER_FCS", IBV_QPT_RC,
		QPX_MASK | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		IBV_QP_CREATE_SCATTER_FCS, IBV_QP_EX_WITH_SEND, EOPNOTSUPP);
	qpx_bad(pd, cq, "an undefined create flag", IBV_QPT_RC,
		QPX_MASK | IBV_QP_INIT_ATTR_CREATE_FLAGS, 1U << 30,
		IBV_QP_EX_WITH_SEND, EINVAL);
	qpx_bad(pd, cq, "max TSO header", IBV_QPT_RC,
		QPX_MASK | IBV_QP_INIT_ATTR_MAX_TSO_HEADER, 0,
		IBV_QP_EX_WITH_SEND, EOPNOTSUPP);
	qpx_bad(pd, cq, "UC with SEND and RDMA WRITE, with immediate or not",
		IBV_QPT_UC, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		0);
	qpx_bad(pd, cq, "UC with RDMA read", IBV_QPT_UC, QPX_MASK, 0,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ, EOPNOTSUPP);
	qpx_bad(pd, cq, "UC with compare and swap", IBV_QPT_UC, QPX_MASK, 0,
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, EOPNOTSUPP);
	qpx_bad(pd, cq, "UC with send with invalidate", IBV_QPT_UC, QPX_MASK,
		0, IBV_QP_EX_WITH_SEND_WITH_INV, EOPNOTSUPP);

	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = ibv_create_qp(pd, &qpia);
	report(qp && !ibv_qp_to_qp_ex(qp),
	       "qp_ex: a QP of ibv_create_qp() has no ibv_qp_ex");
	if (qp)
		ibv_destroy_qp(qp);
	qp = qpx_create(pd, cq, IBV_QPT_RC, QPX_MASK, 0, IBV_QP_EX_WITH_SEND,
			NULL);
	report(qp && ibv_qp_to_qp_ex(qp) &&
	       ibv_qp_to_qp_ex(qp)->wr_send && !ibv_qp_to_qp_ex(qp)->wr_rdma_write,
	       "qp_ex: an ibv_qp_ex with the operations asked for");
	if (qp)
		ibv_destroy_qp(qp);
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

/*
 * Poll @cq until the completions of the @n work requests @ids have come
 * (into @wc, in the order of @ids), waiting at most 2 s for each. Returns
 * how many came, or -1 if a completion of another work request came.
 */
static int poll_ids(struct ibv_cq *cq, const uint64_t *ids,
		    struct ibv_wc *wc, int n)
{
	struct ibv_wc w;
	int got = 0, i;

	while (got < n && poll_one(cq, &w) == 1) {
		for (i = 0; i < n && ids[i] != w.wr_id; i++)
			;
		if (i == n)
			return -1;
		wc[i] = w;
		got++;
	}
	return got;
}

static int wc_is(const struct ibv_wc *wc, enum ibv_wc_opcode op)
{
	return wc->status == IBV_WC_SUCCESS && wc->opcode == op;
}

static void fill(char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(i * 7 + seed);
}

/* A QP of the extended API on its own PD, CQ and MR. */
struct qpx_loop {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	struct ibv_ah *ah;		/* UD: to our own GID */
	struct ibv_qp_cap cap;
	uint32_t lkey, rkey;
	char *buf;			/* 16 KiB */
	char *rcv;			/* where receives land: 2 KiB */
};

static void qpx_loop_free(struct qpx_loop *l)
{
	if (l->ah)
		ibv_destroy_ah(l->ah);
	if (l->mr)
		ibv_dereg_mr(l->mr);
	if (l->qp)
		ibv_destroy_qp(l->qp);
	if (l->cq)
		ibv_destroy_cq(l->cq);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
}

/*
 * PD, CQ, a @type QP with the operations @ops, and an MR over @buf with
 * @access; 0 or an errno (the caller frees what was made).
 */
static int qpx_loop_init(struct ibv_context *ctx, struct qpx_loop *l,
			 enum ibv_qp_type type, uint64_t ops, char *buf,
			 size_t len, int access)
{
	l->buf = buf;
	l->rcv = buf + 8192;
	l->pd = ibv_alloc_pd(ctx);
	l->cq = l->pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	l->qp = l->cq ? qpx_create(l->pd, l->cq, type, QPX_MASK, 0, ops,
				   &l->cap) : NULL;
	l->mr = l->qp ? ibv_reg_mr(l->pd, buf, len, access) : NULL;
	if (!l->mr)
		return errno;
	l->qpx = ibv_qp_to_qp_ex(l->qp);
	l->lkey = l->mr->lkey;
	l->rkey = l->mr->rkey;
	return l->qpx ? 0 : EPROTO;
}

/* A receive of 2 KiB into l->rcv, zeroed first (wr_id @id). */
static int qpx_recv(struct qpx_loop *l, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)l->rcv, .length = 2048,
			       .lkey = l->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(l->rcv, 0, 2048);
	return ibv_post_recv(l->qp, &wr, &bad);
}

/* Start a batch whose first work request is @id, signaled. */
static void qpx_start(struct ibv_qp_ex *qpx, uint64_t id)
{
	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
}

/*
 * Complete the batch the caller built, whose last work request is @id;
 * with @recv, a receive (wr_id @id + 100) is posted first. Returns how
 * many of the completions of @id and the receive came (into @wc), and
 * the errno of posting in @err.
 */
static int qpx_go(struct qpx_loop *l, uint64_t id, bool recv,
		  struct ibv_wc *wc, int *err)
{
	uint64_t ids[2] = { id, id + 100 };

	*err = recv ? qpx_recv(l, id + 100) : 0;
	if (*err) {
		ibv_wr_abort(l->qpx);
		return 0;
	}
	*err = ibv_wr_complete(l->qpx);
	return *err ? 0 : poll_ids(l->cq, ids, wc, recv ? 2 : 1);
}

/*
 * One send of 32 bytes (wr_id @id) gets through, and its completions are
 * the first the CQ has: what failed or was aborted before it left nothing
 * posted.
 */
static void qpx_nothing_posted(struct qpx_loop *l, uint64_t id,
			       const char *what)
{
	struct ibv_wc wc[2];
	int ret, n;

	qpx_start(l->qpx, id);
	ibv_wr_send(l->qpx);
	if (l->ah)
		ibv_wr_set_ud_addr(l->qpx, l->ah, l->qp->qp_num, UD_LOOP_QKEY);
	ibv_wr_set_sge(l->qpx, l->lkey, (uintptr_t)l->buf, 32);
	n = qpx_go(l, id, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_SEND) &&
	       wc_is(&wc[1], IBV_WC_RECV),
	       "qp_ex: %s: nothing was posted, the next send is the first completion (%s, %d)",
	       what, strerror(ret), n);
}

/* ibv_wr_complete() of a batch built by the caller fails with @want. */
static void qpx_fails(struct qpx_loop *l, int want, const char *what)
{
	int ret = ibv_wr_complete(l->qpx);

	report(ret == want, "qp_ex: %s: wr_complete %s (want %s)", what,
	       strerror(ret), strerror(want));
}

/* The RC operations, each with its data compared. */
static void qpx_rc_ops(struct qpx_loop *l)
{
	struct ibv_qp_ex *qpx = l->qpx;
	char *src = l->buf, *dst = l->buf + 4096, *rcv = l->rcv;
	uint64_t *word = (uint64_t *)(l->buf + 12288), *res = word + 1;
	struct ibv_data_buf bufs[2] = {
		{ .addr = src + 100, .length = 10 },
		{ .addr = src + 300, .length = 20 },
	};
	struct ibv_sge sgl[2] = {
		{ .addr = (uintptr_t)src, .length = 128, .lkey = l->lkey },
		{ .addr = (uintptr_t)src + 512, .length = 128, .lkey = l->lkey },
	};
	struct ibv_send_wr swr = {}, *bad_swr;
	uint64_t ids[3] = { 20, 21, 22 };
	struct ibv_wc wc[3];
	struct ibv_sge sge;
	int ret, n;

	fill(src, 4096, 1);
	qpx_start(qpx, 1);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)src, 256);
	n = qpx_go(l, 1, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_SEND) &&
	       wc_is(&wc[1], IBV_WC_RECV) && wc[1].byte_len == 256 &&
	       !memcmp(src, rcv, 256),
	       "qp_ex RC: wr_send + wr_set_sge: 256 bytes arrive (%s, %d)",
	       strerror(ret), n);

	qpx_start(qpx, 2);
	ibv_wr_send_imm(qpx, htobe32(0x12345678));
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	n = qpx_go(l, 2, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_SEND) &&
	       wc_is(&wc[1], IBV_WC_RECV) && wc[1].byte_len == 30 &&
	       (wc[1].wc_flags & IBV_WC_WITH_IMM) &&
	       be32toh(wc[1].imm_data) == 0x12345678 &&
	       !memcmp(rcv, src + 100, 10) && !memcmp(rcv + 10, src + 300, 20),
	       "qp_ex RC: wr_send_imm + wr_set_inline_data_list: 30 bytes and the immediate arrive (%s, %d)",
	       strerror(ret), n);

	memset(dst, 0, 4096);
	qpx_start(qpx, 3);
	ibv_wr_rdma_write(qpx, l->rkey, (uintptr_t)dst);
	ibv_wr_set_sge_list(qpx, 2, sgl);
	n = qpx_go(l, 3, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       !memcmp(dst, src, 128) && !memcmp(dst + 128, src + 512, 128),
	       "qp_ex RC: wr_rdma_write + wr_set_sge_list: 2 SGEs written (%s, %d)",
	       strerror(ret), n);

	memset(dst, 0, 4096);
	qpx_start(qpx, 4);
	ibv_wr_rdma_write(qpx, l->rkey, (uintptr_t)dst + 8);
	ibv_wr_set_inline_data(qpx, src + 1000, 40);
	n = qpx_go(l, 4, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       !memcmp(dst + 8, src + 1000, 40) && !dst[0] && !dst[48],
	       "qp_ex RC: wr_rdma_write + wr_set_inline_data: 40 bytes written (%s, %d)",
	       strerror(ret), n);

	memset(dst, 0, 4096);
	qpx_start(qpx, 5);
	ibv_wr_rdma_write_imm(qpx, l->rkey, (uintptr_t)dst, htobe32(0xabcd));
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)src + 64, 64);
	n = qpx_go(l, 5, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       wc_is(&wc[1], IBV_WC_RECV_RDMA_WITH_IMM) &&
	       (wc[1].wc_flags & IBV_WC_WITH_IMM) &&
	       be32toh(wc[1].imm_data) == 0xabcd && !memcmp(dst, src + 64, 64),
	       "qp_ex RC: wr_rdma_write_imm: data written, the immediate delivered (%s, %d)",
	       strerror(ret), n);

	fill(dst + 1024, 512, 9);
	memset(rcv, 0, 2048);
	qpx_start(qpx, 6);
	ibv_wr_rdma_read(qpx, l->rkey, (uintptr_t)dst + 1024);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)rcv, 512);
	n = qpx_go(l, 6, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_READ) &&
	       !memcmp(rcv, dst + 1024, 512),
	       "qp_ex RC: wr_rdma_read: 512 bytes read (%s, %d)",
	       strerror(ret), n);

	*word = 5;
	*res = 0;
	qpx_start(qpx, 7);
	ibv_wr_atomic_cmp_swp(qpx, l->rkey, (uintptr_t)word, 5, 9);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)res, 8);
	n = qpx_go(l, 7, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_COMP_SWAP) && *res == 5 &&
	       *word == 9,
	       "qp_ex RC: wr_atomic_cmp_swp: 5 -> 9, the old value returned (%s, %d, %llu, %llu)",
	       strerror(ret), n, (unsigned long long)*res,
	       (unsigned long long)*word);
	qpx_start(qpx, 8);
	ibv_wr_atomic_fetch_add(qpx, l->rkey, (uintptr_t)word, 3);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)res, 8);
	n = qpx_go(l, 8, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_FETCH_ADD) && *res == 9 &&
	       *word == 12,
	       "qp_ex RC: wr_atomic_fetch_add: 9 + 3, the old value returned (%s, %d, %llu, %llu)",
	       strerror(ret), n, (unsigned long long)*res,
	       (unsigned long long)*word);
	{
		const uint64_t v = 0x0123456789abcdefULL;

		qpx_start(qpx, 9);
		ibv_wr_atomic_write(qpx, l->rkey, (uintptr_t)word, &v);
		n = qpx_go(l, 9, false, wc, &ret);
		report(n == 1 && wc_is(&wc[0], IBV_WC_ATOMIC_WRITE) &&
		       wc[0].byte_len == 8 && *word == v,
		       "qp_ex RC: wr_atomic_write: the 8 bytes written, byte_len 8 (%s, %d, %#llx)",
		       strerror(ret), n, (unsigned long long)*word);
	}

	/* Three work requests in one batch, completed in order. */
	memset(dst, 0, 4096);
	memset(rcv, 0, 2048);
	qpx_start(qpx, 20);
	ibv_wr_rdma_write(qpx, l->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)src, 100);
	qpx->wr_id = 21;
	ibv_wr_rdma_write(qpx, l->rkey, (uintptr_t)dst + 100);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)src + 100, 100);
	qpx->wr_id = 22;
	ibv_wr_rdma_read(qpx, l->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)rcv, 200);
	ret = ibv_wr_complete(qpx);
	n = ret ? 0 : poll_ids(l->cq, ids, wc, 3);
	report(n == 3 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       wc_is(&wc[1], IBV_WC_RDMA_WRITE) &&
	       wc_is(&wc[2], IBV_WC_RDMA_READ) && !memcmp(rcv, src, 200),
	       "qp_ex RC: a batch of write, write, read: one doorbell, in order (%s, %d)",
	       strerror(ret), n);

	/* ibv_post_send() on the same QP: the same WQE builder. */
	memset(dst, 0, 4096);
	sge = (struct ibv_sge){ .addr = (uintptr_t)src, .length = 48,
				.lkey = l->lkey };
	swr.wr_id = 23;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)dst;
	swr.wr.rdma.rkey = l->rkey;
	ret = ibv_post_send(l->qp, &swr, &bad_swr);
	n = ret ? 0 : poll_ids(l->cq, &swr.wr_id, wc, 1);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       !memcmp(dst, src, 48),
	       "qp_ex RC: ibv_post_send() on the QP still works (%s, %d)",
	       strerror(ret), n);
	/* struct ibv_send_wr has no field for an ATOMIC WRITE's 8 bytes. */
	swr.wr_id = 24;
	swr.opcode = IBV_WR_ATOMIC_WRITE;
	bad_swr = NULL;
	ret = ibv_post_send(l->qp, &swr, &bad_swr);
	report(ret == EINVAL && bad_swr == &swr,
	       "qp_ex RC: ibv_post_send() with IBV_WR_ATOMIC_WRITE: %s (want EINVAL: wr API only)",
	       strerror(ret));
}

/* Batches that must fail, or are aborted: nothing of them is posted. */
static void qpx_rc_bad(struct qpx_loop *l)
{
	struct ibv_qp_ex *qpx = l->qpx;
	uint64_t word = (uintptr_t)l->buf + 12288;
	struct ibv_sge sgl[QPX_MAX_SGE + 1];
	static char big[1024];
	unsigned int i;

	for (i = 0; i < QPX_MAX_SGE + 1; i++)
		sgl[i] = (struct ibv_sge){ .addr = (uintptr_t)l->buf + 64 * i,
					   .length = 8, .lkey = l->lkey };

	qpx_start(qpx, 30);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)l->buf, 32);
	ibv_wr_abort(qpx);
	qpx_nothing_posted(l, 31, "RC: wr_abort");

	qpx_start(qpx, 32);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, l->cap.max_send_sge + 1, sgl);
	qpx_fails(l, EINVAL, "max_send_sge + 1 SGEs");

	qpx_start(qpx, 33);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, big, l->cap.max_inline_data + 1);
	qpx_fails(l, EINVAL, "max_inline_data + 1 bytes inline");

	qpx_start(qpx, 34);
	ibv_wr_rdma_read(qpx, l->rkey, (uintptr_t)l->buf + 4096);
	ibv_wr_set_inline_data(qpx, big, 8);
	qpx_fails(l, EINVAL, "RDMA READ with inline data");

	qpx_start(qpx, 35);
	ibv_wr_atomic_fetch_add(qpx, l->rkey, word, 1);
	ibv_wr_set_sge(qpx, l->lkey, word + 8, 4);
	qpx_fails(l, EINVAL, "an atomic with a 4-byte SGE");

	qpx_start(qpx, 36);
	ibv_wr_atomic_cmp_swp(qpx, l->rkey, word + 4, 0, 1);
	ibv_wr_set_sge(qpx, l->lkey, word + 8, 8);
	qpx_fails(l, EINVAL, "an atomic on a misaligned word");

	qpx_start(qpx, 37);
	ibv_wr_atomic_fetch_add(qpx, l->rkey, word, 1);
	qpx_fails(l, EINVAL, "an atomic without its SGE");

	qpx_start(qpx, 47);
	ibv_wr_atomic_write(qpx, l->rkey, word + 4, &word);
	qpx_fails(l, EINVAL, "an atomic write to a misaligned word");

	qpx_start(qpx, 48);
	ibv_wr_atomic_write(qpx, l->rkey, word, NULL);
	qpx_fails(l, EINVAL, "an atomic write without its value");

	qpx_start(qpx, 49);
	ibv_wr_atomic_write(qpx, l->rkey, word, &word);
	ibv_wr_set_sge(qpx, l->lkey, word + 8, 8);
	qpx_fails(l, EINVAL, "an atomic write with an SGE");

	qpx_start(qpx, 38);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)l->buf, 32);
	qpx_fails(l, EINVAL, "an SGE before any work request");

	qpx_start(qpx, 39);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, NULL, 1, 1);
	qpx_fails(l, EINVAL, "a UD address on an RC QP");

	/* A good request, then a bad one: neither is posted. */
	qpx_start(qpx, 40);
	ibv_wr_rdma_write(qpx, l->rkey, (uintptr_t)l->buf + 4096);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)l->buf, 32);
	qpx->wr_id = 41;
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, l->cap.max_send_sge + 1, sgl);
	qpx_fails(l, EINVAL, "a good write, then a send with too many SGEs");
	qpx_nothing_posted(l, 42, "RC: after the failed batches");

	/* More work requests than the SQ holds (it is empty now). */
	qpx_start(qpx, 43);
	for (i = 0; i <= l->cap.max_send_wr; i++) {
		ibv_wr_rdma_write(qpx, l->rkey, (uintptr_t)l->buf + 4096);
		ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)l->buf, 8);
	}
	qpx_fails(l, ENOMEM, "max_send_wr + 1 work requests in a batch");
	qpx_nothing_posted(l, 44, "RC: after the SQ overflow");
}

/*
 * Invalidation from user space can only fail (no fast-registration MRs
 * here), but the failure shows the opcode and key reached the device:
 * SEND with invalidate of a plain MR's rkey is refused by the responder,
 * LOCAL_INV of a plain MR's lkey is a local protection error.
 */
static void qpx_rc_inv(struct qpx_loop *l)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_ex *qpx = l->qpx;
	struct ibv_wc wc[2];
	int ret, n;

	qpx_start(qpx, 50);
	ibv_wr_send_inv(qpx, l->rkey);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)l->buf, 16);
	n = qpx_go(l, 50, true, wc, &ret);
	report(n >= 1 && wc[0].status == IBV_WC_REM_INV_REQ_ERR,
	       "qp_ex RC: wr_send_inv of a plain MR's rkey: remote invalid request (%s, %d, %s)",
	       strerror(ret), n,
	       n >= 1 ? ibv_wc_status_str(wc[0].status) : "-");

	ret = ibv_modify_qp(l->qp, &attr, IBV_QP_STATE);
	ret = ret ?: rc_self_connect(l->qp);
	report(!ret, "qp_ex RC: ERROR -> RESET -> RTS: %s", strerror(ret));
	if (ret)
		return;
	qpx_start(qpx, 51);
	ibv_wr_local_inv(qpx, l->lkey);
	n = qpx_go(l, 51, false, wc, &ret);
	report(n == 1 && wc[0].status == IBV_WC_LOC_PROT_ERR,
	       "qp_ex RC: wr_local_inv of a plain MR's lkey: local protection error (%s, %d, %s)",
	       strerror(ret), n,
	       n == 1 ? ibv_wc_status_str(wc[0].status) : "-");

	/* A QP in RESET takes no work request. */
	ibv_modify_qp(l->qp, &attr, IBV_QP_STATE);
	qpx_start(qpx, 52);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, l->lkey, (uintptr_t)l->buf, 16);
	qpx_fails(l, EINVAL, "a QP in RESET");
}

static void test_qp_ex_rc(struct ibv_context *ctx)
{
	static char buf[16384];
	struct qpx_loop l = {};
	int ret;

	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC, QPX_RC_OPS, buf, sizeof(buf),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	ret = ret ?: rc_self_connect(l.qp);
	report(!ret, "qp_ex RC: QP with every operation, MR, connected to itself: %s",
	       strerror(ret));
	if (!ret) {
		qpx_rc_ops(&l);
		qpx_rc_bad(&l);
		qpx_rc_inv(&l);
	}
	qpx_loop_free(&l);
}

/* The QP back to RESET and connected to itself again, with @access. */
static int qpx_flush_reconnect(struct qpx_loop *l, int access)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	int ret;

	ret = ibv_modify_qp(l->qp, &attr, IBV_QP_STATE);
	ret = ret ?: rc_self_connect(l->qp);
	if (ret)
		return ret;
	attr.qp_access_flags = access;
	return ibv_modify_qp(l->qp, &attr, IBV_QP_ACCESS_FLAGS);
}

/* A FLUSH that must complete with @want; the QP is reconnected after. */
static void qpx_flush_remote_err(struct qpx_loop *l, uint32_t rkey,
				 uint8_t type, int qp_access,
				 enum ibv_wc_status want, const char *what)
{
	struct ibv_wc wc[1];
	int ret, n;

	ret = qpx_flush_reconnect(l, qp_access);
	qpx_start(l->qpx, 70);
	ibv_wr_flush(l->qpx, rkey, (uintptr_t)l->buf, 64, type,
		     IBV_FLUSH_RANGE);
	n = ret ? 0 : qpx_go(l, 70, false, wc, &ret);
	report(n == 1 && wc[0].status == want,
	       "qp_ex FLUSH %s: completes with %s (%s, %d, %s)", what,
	       ibv_wc_status_str(want), strerror(ret), n,
	       n == 1 ? ibv_wc_status_str(wc[0].status) : "no completion");
}

/*
 * FLUSH (IBA 1.5) over an RC QP connected to itself: the device claims
 * global visibility only (IB_UVERBS_DEVICE_FLUSH_GLOBAL, not PERSISTENT),
 * MRs and QPs take IBV_ACCESS_FLUSH_GLOBAL, a write then a flush of its
 * range and of the whole MR complete as IBV_WC_FLUSH; what is no FLUSH is
 * refused at wr_complete, what the responder refuses (no access, a
 * persistent placement Kite has not) completes with a remote access error.
 */
static void test_qp_ex_flush(struct ibv_context *ctx)
{
	const int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			      IBV_ACCESS_FLUSH_GLOBAL;
	struct ibv_device_attr_ex da = {};
	struct ibv_send_wr swr = {}, *bad_swr;
	struct ibv_qp_init_attr init;
	static char buf[16384];
	struct qpx_loop l = {};
	struct ibv_qp_attr qa;
	struct ibv_mr *mr;
	struct ibv_wc wc[1];
	int ret, n;

	ret = ibv_query_device_ex(ctx, NULL, &da);
	report(!ret && (da.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL) &&
	       !(da.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_PERSISTENT),
	       "FLUSH: the device has global flushes, not persistent ones (%s, %#llx)",
	       strerror(ret), (unsigned long long)da.device_cap_flags_ex);

	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC,
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_FLUSH,
			    buf, sizeof(buf),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_FLUSH_GLOBAL);
	report(!ret, "FLUSH: MR with IBV_ACCESS_FLUSH_GLOBAL, QP with wr_flush: %s",
	       strerror(ret));
	if (ret)
		goto out;
	errno = 0;
	mr = ibv_reg_mr(l.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_FLUSH_PERSISTENT);
	report(!mr && errno == EOPNOTSUPP,
	       "FLUSH: an MR with IBV_ACCESS_FLUSH_PERSISTENT: %s (want %s)",
	       mr ? "registered" : strerror(errno), strerror(EOPNOTSUPP));
	if (mr)
		ibv_dereg_mr(mr);

	/* As pyverbs connects: persistent access asked too, global granted. */
	ret = qpx_flush_reconnect(&l, qp_access | IBV_ACCESS_FLUSH_PERSISTENT);
	ret = ret ?: ibv_query_qp(l.qp, &qa, IBV_QP_ACCESS_FLAGS, &init);
	report(!ret && (qa.qp_access_flags & IBV_ACCESS_FLUSH_GLOBAL),
	       "FLUSH: QP connected to itself with the FLUSH access flags, global kept (%s, %#x)",
	       strerror(ret), ret ? 0 : qa.qp_access_flags);
	if (ret)
		goto out;

	memset(buf, 0, 4096);
	fill(buf + 4096, 256, 3);
	/* One batch: the write unsignaled, the flush signaled. */
	qpx_start(l.qpx, 60);
	l.qpx->wr_flags = 0;
	ibv_wr_rdma_write(l.qpx, l.rkey, (uintptr_t)buf + 512);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 4096, 256);
	l.qpx->wr_id = 61;
	l.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(l.qpx, l.rkey, (uintptr_t)buf + 512, 256, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	n = qpx_go(&l, 61, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_FLUSH) &&
	       !memcmp(buf + 512, buf + 4096, 256),
	       "qp_ex RC: wr_rdma_write then wr_flush of its range: IBV_WC_FLUSH, the data in place (%s, %d)",
	       strerror(ret), n);
	qpx_start(l.qpx, 62);
	ibv_wr_flush(l.qpx, l.rkey, 0, 0, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
	n = qpx_go(&l, 62, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_FLUSH),
	       "qp_ex RC: wr_flush of the whole MR: IBV_WC_FLUSH (%s, %d)",
	       strerror(ret), n);

	/* What is no FLUSH: refused before anything is posted. */
	qpx_start(l.qpx, 63);
	ibv_wr_flush(l.qpx, l.rkey, (uintptr_t)buf, 64, 0, IBV_FLUSH_RANGE);
	qpx_fails(&l, EINVAL, "a flush without a placement type");
	qpx_start(l.qpx, 64);
	ibv_wr_flush(l.qpx, l.rkey, (uintptr_t)buf, 64, 4, IBV_FLUSH_RANGE);
	qpx_fails(&l, EINVAL, "a flush with an undefined placement type");
	qpx_start(l.qpx, 65);
	ibv_wr_flush(l.qpx, l.rkey, (uintptr_t)buf, 64, IBV_FLUSH_GLOBAL, 2);
	qpx_fails(&l, EINVAL, "a flush with an undefined level");
	qpx_start(l.qpx, 66);
	ibv_wr_flush(l.qpx, l.rkey, (uintptr_t)buf, 1ULL << 32,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	qpx_fails(&l, EINVAL, "a flush of 4 GiB (the RETH length has 32 bits)");
	qpx_start(l.qpx, 67);
	ibv_wr_flush(l.qpx, l.rkey, (uintptr_t)buf, 64, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 8);
	qpx_fails(&l, EINVAL, "a flush with an SGE");
	swr.wr_id = 68;
	swr.opcode = IBV_WR_FLUSH;
	swr.send_flags = IBV_SEND_SIGNALED;
	bad_swr = NULL;
	ret = ibv_post_send(l.qp, &swr, &bad_swr);
	report(ret == EINVAL && bad_swr == &swr,
	       "qp_ex RC: ibv_post_send() with IBV_WR_FLUSH: %s (want EINVAL: wr API only)",
	       strerror(ret));
	qpx_start(l.qpx, 69);
	ibv_wr_rdma_write(l.qpx, l.rkey, (uintptr_t)buf + 512);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 4096, 8);
	n = qpx_go(&l, 69, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE),
	       "qp_ex RC: after the refused flushes nothing was posted: the next write completes first (%s, %d)",
	       strerror(ret), n);

	/* What the responder refuses: a remote access error each. */
	qpx_flush_remote_err(&l, l.rkey, IBV_FLUSH_PERSISTENT,
			     qp_access | IBV_ACCESS_FLUSH_PERSISTENT,
			     IBV_WC_REM_ACCESS_ERR, "to persistence (Kite has none)");
	qpx_flush_remote_err(&l, l.rkey, IBV_FLUSH_GLOBAL,
			     qp_access & ~IBV_ACCESS_FLUSH_GLOBAL,
			     IBV_WC_REM_ACCESS_ERR, "to a QP without FLUSH_GLOBAL");
	mr = ibv_reg_mr(l.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (mr) {
		qpx_flush_remote_err(&l, mr->rkey, IBV_FLUSH_GLOBAL, qp_access,
				     IBV_WC_REM_ACCESS_ERR,
				     "with the R_Key of an MR without FLUSH_GLOBAL");
		ibv_dereg_mr(mr);
	} else {
		report(0, "FLUSH: a second MR: %s", strerror(errno));
	}
out:
	qpx_loop_free(&l);
}

/* ibv_alloc_dm() of @len bytes; errno of the failure in @err. */
static struct ibv_dm *dm_alloc(struct ibv_context *ctx, uint64_t len,
			       uint32_t comp_mask, int *err)
{
	struct ibv_alloc_dm_attr a = { .length = len, .comp_mask = comp_mask };
	struct ibv_dm *dm;

	errno = 0;
	dm = ibv_alloc_dm(ctx, &a);
	*err = dm ? 0 : errno;
	return dm;
}

/* Allocations, copies and their bounds; no MR. */
static void test_dm_api(struct ibv_context *ctx, uint64_t max)
{
	struct ibv_dm *dm, *all[8] = {};
	char in[128], out[128];
	int ret, n, i;

	dm = dm_alloc(ctx, 100, 1, &ret);
	report(!dm && ret == EINVAL, "DM: a comp_mask: %s (want EINVAL)",
	       strerror(ret));
	dm = dm_alloc(ctx, max + 1, 0, &ret);
	report(!dm && ret == EINVAL, "DM: max_dm_size + 1 bytes: %s (want EINVAL)",
	       strerror(ret));
	dm = dm_alloc(ctx, 100, 0, &ret);
	report(!!dm, "DM: 100 bytes: %s", strerror(ret));
	if (!dm)
		return;
	fill(in, sizeof(in), 9);
	ret = ibv_memcpy_to_dm(dm, 0, in, 100);
	ret = ret ?: ibv_memcpy_from_dm(out, dm, 0, 100);
	report(!ret && !memcmp(in, out, 100),
	       "DM: 100 bytes copied in and read back: %s", strerror(ret));
	ret = ibv_memcpy_to_dm(dm, 8, in + 1, 20);
	ret = ret ?: ibv_memcpy_from_dm(out + 3, dm, 4, 28);
	report(!ret && !memcmp(out + 3, in + 4, 4) &&
	       !memcmp(out + 7, in + 1, 20) && !memcmp(out + 27, in + 28, 4),
	       "DM: copies at offsets, host buffers unaligned: %s", strerror(ret));
	report(ibv_memcpy_to_dm(dm, 2, in, 8) == EINVAL &&
	       ibv_memcpy_from_dm(out, dm, 4, 6) == EINVAL,
	       "DM: an offset or length not a multiple of 4: EINVAL");
	report(ibv_memcpy_to_dm(dm, 96, in, 8) == EFAULT &&
	       ibv_memcpy_from_dm(out, dm, 104, 4) == EFAULT &&
	       ibv_memcpy_to_dm(dm, UINT64_MAX - 3, in, 8) == EFAULT,
	       "DM: a copy past the 100 bytes allocated (also wrapping): EFAULT");
	ret = ibv_free_dm(dm);
	report(!ret, "DM: freed: %s", strerror(ret));

	/* All of it in 1/4s, then nothing left, then a quarter again. */
	for (n = 0; n < 8; n++) {
		all[n] = dm_alloc(ctx, max / 4, 0, &ret);
		if (!all[n])
			break;
	}
	report(n == 4 && ret == ENOMEM,
	       "DM: the device memory in quarters: %d allocations, then %s (want 4, ENOMEM)",
	       n, strerror(ret));
	if (n) {
		fill(in, sizeof(in), 11);
		ibv_memcpy_to_dm(all[0], max / 4 - 128, in, 128);
		ibv_free_dm(all[0]);
		all[0] = dm_alloc(ctx, max / 4, 0, &ret);
		memset(out, 0x5a, sizeof(out));
		ret = ret ?: ibv_memcpy_from_dm(out, all[0], max / 4 - 128, 128);
		memset(in, 0, sizeof(in));
		report(!ret && !memcmp(out, in, 128),
		       "DM: a quarter freed and allocated again reads zeros, not the previous owner's data: %s",
		       strerror(ret));
	}
	for (i = 0; i < 8; i++)
		if (all[i])
			ibv_free_dm(all[i]);
}

/*
 * Device memory (ibv_alloc_dm()): the size the device reports, the
 * library's copies and their bounds, allocation until none is left, and
 * MRs over it (ibv_reg_dm_mr(), zero-based) as the target and source of
 * RDMA WRITE, READ and FETCH_ADD on an RC QP connected to itself.
 */
static void test_dm(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex da = {};
	static char buf[16384];
	struct qpx_loop l = {};
	struct ibv_mr *mr = NULL;
	struct ibv_dm *dm = NULL;
	uint64_t word = 0, max;
	struct ibv_wc wc[1];
	char got[512];
	int ret, n;

	ret = ibv_query_device_ex(ctx, NULL, &da);
	max = da.max_dm_size;
	report(!ret && max == 262144, "DM: the device has 256 KiB of device memory (%s, %llu)",
	       strerror(ret), (unsigned long long)max);
	if (ret || !max)
		return;
	test_dm_api(ctx, max);

	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC, QPX_RC_OPS, buf, sizeof(buf),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	ret = ret ?: rc_self_connect(l.qp);
	dm = ret ? NULL : dm_alloc(ctx, 4096, 0, &ret);
	report(!!dm, "DM: an RC QP connected to itself and 4 KiB of device memory: %s",
	       strerror(ret));
	if (!dm)
		goto out;
	errno = 0;
	mr = ibv_reg_dm_mr(l.pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE);
	report(!mr && errno == EINVAL, "DM: an MR that is not zero-based: %s (want EINVAL)",
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_dm_mr(l.pd, dm, 2048, 4096, IBV_ACCESS_ZERO_BASED |
			   IBV_ACCESS_LOCAL_WRITE);
	report(!mr && errno == EINVAL, "DM: an MR past the allocation's end: %s (want EINVAL)",
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_dm_mr(l.pd, dm, 1024, 2048, IBV_ACCESS_ZERO_BASED |
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	report(!!mr, "DM: a zero-based MR over 2 KiB from offset 1 KiB: %s",
	       mr ? "registered" : strerror(errno));
	if (!mr)
		goto out;
	ret = ibv_free_dm(dm);
	report(ret == EBUSY, "DM: freeing it while an MR holds it: %s (want EBUSY)",
	       strerror(ret));

	/* WRITE host -> device memory at MR address 512 (DM offset 1536). */
	fill(buf, 512, 21);
	qpx_start(l.qpx, 80);
	ibv_wr_rdma_write(l.qpx, mr->rkey, 512);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 512);
	n = qpx_go(&l, 80, false, wc, &ret);
	ret = ret ?: ibv_memcpy_from_dm(got, dm, 1536, 512);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) && !memcmp(got, buf, 512),
	       "DM: RDMA WRITE into the DM MR lands in device memory (%s, %d)",
	       strerror(ret), n);
	/* READ device memory -> host, what the library wrote. */
	fill(got, 256, 22);
	ret = ibv_memcpy_to_dm(dm, 1024 + 2048 - 256, got, 256);
	qpx_start(l.qpx, 81);
	ibv_wr_rdma_read(l.qpx, mr->rkey, 2048 - 256);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 4096, 256);
	n = ret ? 0 : qpx_go(&l, 81, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_READ) && !memcmp(buf + 4096, got, 256),
	       "DM: RDMA READ of the DM MR's last 256 bytes (%s, %d)", strerror(ret), n);
	/* FETCH_ADD on device memory; the original comes back. */
	word = 0x0102030405060708ULL;
	ret = ibv_memcpy_to_dm(dm, 1024 + 8, &word, 8);
	qpx_start(l.qpx, 82);
	ibv_wr_atomic_fetch_add(l.qpx, mr->rkey, 8, 0x10);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 8192, 8);
	n = ret ? 0 : qpx_go(&l, 82, false, wc, &ret);
	ret = ret ?: ibv_memcpy_from_dm(&word, dm, 1024 + 8, 8);
	report(n == 1 && wc_is(&wc[0], IBV_WC_FETCH_ADD) &&
	       word == 0x0102030405060718ULL &&
	       !memcmp(buf + 8192, "\x08\x07\x06\x05\x04\x03\x02\x01", 8),
	       "DM: FETCH_ADD on the DM MR: added in device memory, original returned (%s, %d)",
	       strerror(ret), n);
	/* An SGE in device memory, through the MR's lkey. */
	qpx_start(l.qpx, 83);
	ibv_wr_rdma_write(l.qpx, l.rkey, (uintptr_t)buf + 12288);
	ibv_wr_set_sge(l.qpx, mr->lkey, 512, 512);
	n = qpx_go(&l, 83, false, wc, &ret);
	ret = ret ?: ibv_memcpy_from_dm(got, dm, 1536, 512);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) && !memcmp(buf + 12288, got, 512),
	       "DM: an SGE of the DM MR as the source of an RDMA WRITE (%s, %d)",
	       strerror(ret), n);
	/* Past the MR's 2 KiB: a remote access error, nothing written. */
	qpx_start(l.qpx, 84);
	ibv_wr_rdma_write(l.qpx, mr->rkey, 2048 - 8);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 16);
	n = qpx_go(&l, 84, false, wc, &ret);
	report(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
	       "DM: an RDMA WRITE past the DM MR's end: %s (%s, %d)",
	       n == 1 ? ibv_wc_status_str(wc[0].status) : "no completion",
	       strerror(ret), n);
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (dm) {
		ret = ibv_free_dm(dm);
		report(!ret, "DM: freed after its MR: %s", strerror(ret));
	}
	qpx_loop_free(&l);
}

/*
 * A dma-buf of @len bytes from udmabuf (the kernel's exporter of memfd
 * pages, CONFIG_UDMABUF), with the pages mapped at *@map for the CPU's
 * view. Returns the dma-buf's file descriptor or -errno.
 */
static int udmabuf_new(size_t len, char **map)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC,
				    .size = len };
	int memfd, dev, fd = -1, err;

	memfd = memfd_create("kite-dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	*map = MAP_FAILED;
	dev = -1;
	if (ftruncate(memfd, len) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		goto out;
	*map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (*map == MAP_FAILED)
		goto out;
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		goto out;
	c.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
out:
	err = errno;
	if (dev >= 0)
		close(dev);
	close(memfd);
	if (fd >= 0)
		return fd;
	if (*map != MAP_FAILED)
		munmap(*map, len);
	return -err;
}

static int rr_raw(struct ibv_mr *mr, uint32_t flags, uint64_t start,
		  uint64_t len, uint32_t pd_handle, uint32_t access,
		  uint64_t drv);

/* ibv_reg_dmabuf_mr() that must fail with @want. */
static void dmabuf_mr_bad(struct ibv_pd *pd, uint64_t off, size_t len,
			  uint64_t iova, int fd, int access, int want,
			  const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);
	report(!mr && errno == want, "dma-buf MR: %s: %s (want %s)", what,
	       mr ? "registered" : strerror(errno), strerror(want));
	if (mr)
		ibv_dereg_mr(mr);
}

#define DMABUF_LEN	(64 * 1024)
#define DMABUF_OFF	8192		/* where the MR starts in the buffer */
#define DMABUF_MR_LEN	(32 * 1024)
#define DMABUF_IOVA	0x7e0000000000ULL

/*
 * Memory a dma-buf exports, registered with ibv_reg_dmabuf_mr(): the
 * kernel's refusals, then with the buffer's descriptor closed (the MR
 * holds the buffer) RDMA WRITE into it over several pages, READ from it,
 * its lkey as the source of a WRITE, FETCH_ADD on it, an access rights
 * change in place (REREG_MR: the pages are not pinned again), and a
 * WRITE past its end refused; what the device wrote is what the CPU sees
 * in the memfd's pages.
 */
static void test_dmabuf(struct ibv_context *ctx)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	static char buf[32768];
	struct ibv_mr *mr = NULL, *ro = NULL;
	char *map = MAP_FAILED, *win;
	struct qpx_loop l = {};
	uint64_t word;
	struct ibv_wc wc[1];
	int ret, n, fd;

	fd = udmabuf_new(DMABUF_LEN, &map);
	report(fd >= 0, "dma-buf: 64 KiB from /dev/udmabuf: %s",
	       fd >= 0 ? "ok" : strerror(-fd));
	if (fd < 0)
		return;
	win = map + DMABUF_OFF;
	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC, QPX_RC_OPS, buf, sizeof(buf),
			    rw);
	ret = ret ?: rc_self_connect(l.qp);
	report(!ret, "dma-buf: an RC QP connected to itself: %s", strerror(ret));
	if (ret)
		goto out;

	dmabuf_mr_bad(l.pd, 0, 4096, 0, -1, rw, EBADF, "no file");
	dmabuf_mr_bad(l.pd, 0, 4096, 0, ctx->cmd_fd, rw, EINVAL,
		      "a file that is no dma-buf (the verbs device)");
	dmabuf_mr_bad(l.pd, DMABUF_LEN - 4096, 8192, 0, fd, rw, EINVAL,
		      "past the buffer's end");
	dmabuf_mr_bad(l.pd, UINT64_MAX - 4095, 8192, 0, fd, rw, EINVAL,
		      "an offset whose end wraps");
	dmabuf_mr_bad(l.pd, 0, 0, 0, fd, rw, EINVAL, "length 0");
	dmabuf_mr_bad(l.pd, 100, 4096, 200, fd, rw, EINVAL,
		      "iova at another offset in its page than the region");
	dmabuf_mr_bad(l.pd, 0, 4096, 0, fd, IBV_ACCESS_REMOTE_WRITE, EINVAL,
		      "remote write without local write");

	mr = ibv_reg_dmabuf_mr(l.pd, DMABUF_OFF, DMABUF_MR_LEN, DMABUF_IOVA,
			       fd, rw);
	ro = ibv_reg_dmabuf_mr(l.pd, DMABUF_OFF, 4096, DMABUF_IOVA, fd,
			       IBV_ACCESS_REMOTE_READ);
	report(mr && ro, "dma-buf: MRs over 32 KiB from offset 8 KiB, and 4 KiB read-only: %s",
	       mr && ro ? "registered" : strerror(errno));
	/* The MRs hold the buffer: the descriptor is not needed any more. */
	close(fd);
	fd = -1;
	if (!mr || !ro)
		goto out;

	/* WRITE of 16 KiB from the host buffer at iova + 100: five pages. */
	fill(buf, 16384, 31);
	memset(win, 0, DMABUF_MR_LEN);
	qpx_start(l.qpx, 90);
	ibv_wr_rdma_write(l.qpx, mr->rkey, DMABUF_IOVA + 100);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 16384);
	n = qpx_go(&l, 90, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       !memcmp(win + 100, buf, 16384) && !win[99] && !win[100 + 16384],
	       "dma-buf: RDMA WRITE of 16 KiB into the MR lands in the buffer's pages (%s, %d)",
	       strerror(ret), n);
	/* READ of the MR's last 256 bytes, written by the CPU. */
	fill(win + DMABUF_MR_LEN - 256, 256, 32);
	qpx_start(l.qpx, 91);
	ibv_wr_rdma_read(l.qpx, mr->rkey, DMABUF_IOVA + DMABUF_MR_LEN - 256);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 16384, 256);
	n = qpx_go(&l, 91, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_READ) &&
	       !memcmp(buf + 16384, win + DMABUF_MR_LEN - 256, 256),
	       "dma-buf: RDMA READ of the MR's last 256 bytes (%s, %d)",
	       strerror(ret), n);
	/* The MR's lkey as the source of a WRITE into the host buffer. */
	qpx_start(l.qpx, 92);
	ibv_wr_rdma_write(l.qpx, l.rkey, (uintptr_t)buf + 20480);
	ibv_wr_set_sge(l.qpx, mr->lkey, DMABUF_IOVA + 4000, 1024);
	n = qpx_go(&l, 92, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       !memcmp(buf + 20480, win + 4000, 1024),
	       "dma-buf: an SGE of the MR, across a page boundary, as a WRITE's source (%s, %d)",
	       strerror(ret), n);
	/* FETCH_ADD on a word of the buffer. */
	word = 0x1112131415161718ULL;
	memcpy(win + 8192, &word, 8);
	qpx_start(l.qpx, 93);
	ibv_wr_atomic_fetch_add(l.qpx, mr->rkey, DMABUF_IOVA + 8192, 0x100);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 24576, 8);
	n = qpx_go(&l, 93, false, wc, &ret);
	memcpy(&word, win + 8192, 8);
	report(n == 1 && wc_is(&wc[0], IBV_WC_FETCH_ADD) &&
	       word == 0x1112131415161818ULL &&
	       !memcmp(buf + 24576, "\x18\x17\x16\x15\x14\x13\x12\x11", 8),
	       "dma-buf: FETCH_ADD on the MR: added in the buffer, original returned (%s, %d)",
	       strerror(ret), n);
	/*
	 * Read-only made writable in place: the same pages, now written.
	 * libibverbs re-registers only MRs of user memory; the command can
	 * name any MR.
	 */
	ret = rr_raw(ro, IBV_REREG_MR_CHANGE_ACCESS, 0, 0, 0,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	report(!ret, "dma-buf: the read-only MR made writable (REREG_MR, access only): %s",
	       ret < 0 ? "new keys" : strerror(ret));
	n = 0;
	if (!ret) {
		qpx_start(l.qpx, 94);
		ibv_wr_rdma_write(l.qpx, ro->rkey, DMABUF_IOVA + 64);
		ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf + 1000, 128);
		n = qpx_go(&l, 94, false, wc, &ret);
	}
	report(n == 1 && wc_is(&wc[0], IBV_WC_RDMA_WRITE) &&
	       !memcmp(win + 64, buf + 1000, 128),
	       "dma-buf: an RDMA WRITE through the re-registered MR (%s, %d)",
	       strerror(ret), n);
	/* Past the MR's end: a remote access error, nothing written. */
	memset(map + DMABUF_OFF + DMABUF_MR_LEN, 0, 64);
	qpx_start(l.qpx, 95);
	ibv_wr_rdma_write(l.qpx, mr->rkey, DMABUF_IOVA + DMABUF_MR_LEN - 8);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 16);
	n = qpx_go(&l, 95, false, wc, &ret);
	report(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR &&
	       !map[DMABUF_OFF + DMABUF_MR_LEN],
	       "dma-buf: an RDMA WRITE past the MR's end: %s (%s, %d)",
	       n == 1 ? ibv_wc_status_str(wc[0].status) : "no completion",
	       strerror(ret), n);
out:
	if (ro) {
		ret = ibv_dereg_mr(ro);
		report(!ret, "dma-buf: the second MR deregistered: %s", strerror(ret));
	}
	if (mr) {
		ret = ibv_dereg_mr(mr);
		report(!ret, "dma-buf: the MR deregistered: %s", strerror(ret));
	}
	if (fd >= 0)
		close(fd);
	qpx_loop_free(&l);
	munmap(map, DMABUF_LEN);
}

/* An RDMA WRITE of @len bytes on an RC QP connected to itself; 0 or why not. */
static int write_self(struct ibv_qp *qp, struct ibv_cq *cq, uint32_t lkey,
		      const void *src, uint32_t rkey, void *dst, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x1e, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst, .rkey = rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	ret = poll_one(cq, &wc) == 1 ? 0 : ETIMEDOUT;
	if (!ret && (wc.status != IBV_WC_SUCCESS || wc.wr_id != 0x1e))
		ret = EIO;
	return ret;
}

/* ibv_import_pd() that must fail with @want. */
static void import_pd_bad(struct ibv_context *ctx, uint32_t handle, int want,
			  const char *what)
{
	struct ibv_pd *pd;

	errno = 0;
	pd = ibv_import_pd(ctx, handle);
	report(!pd && errno == want, "import: PD of %s: %s (want %s)", what,
	       pd ? "imported" : strerror(errno), strerror(want));
	if (pd)
		ibv_unimport_pd(pd);
}

/*
 * One user context in two: a duplicate of the command file imported as a
 * second context (ibv_import_device()), the first one's PD, MR and device
 * memory imported into it and used there (a QP of the second context on
 * the imported PD writes with the imported MR's keys; copies through one
 * DM handle read back through the other), an MR registered through the
 * second imported into the first, handles that are no such object
 * refused, and after the unimports and the second context's close the
 * first one's objects still work.
 */
static void test_import(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_alloc_dm_attr dma = { .length = 8192 };
	struct ibv_device_attr_ex da = {};
	struct ibv_mr *mr2 = NULL, *mrb = NULL, *mrb1 = NULL;
	struct ibv_dm *dm = NULL, *dm2 = NULL;
	struct ibv_context *ctx2 = NULL;
	static char buf[16384], bufb[4096];
	struct ibv_pd *pd2 = NULL;
	struct ibv_qp *qp2 = NULL;
	struct ibv_cq *cq2 = NULL;
	struct qpx_loop l = {};
	char got[256];
	int ret, fd;

	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC, QPX_RC_OPS, buf, sizeof(buf),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ret = ret ?: rc_self_connect(l.qp);
	report(!ret, "import: a PD, an MR and an RC QP in the first context: %s",
	       strerror(ret));
	if (ret)
		goto out;

	errno = 0;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ctx2 = fd < 0 ? NULL : ibv_import_device(fd);
	report(!ctx2, "import: ibv_import_device() of a file that is no verbs device fails (%s)",
	       ctx2 ? "imported" : strerror(errno));
	if (ctx2)
		ibv_close_device(ctx2);
	close(fd);
	fd = dup(ctx->cmd_fd);
	ctx2 = fd < 0 ? NULL : ibv_import_device(fd);
	report(!!ctx2, "import: a duplicate of the command file imported as a second context: %s",
	       ctx2 ? "ok" : strerror(errno));
	if (!ctx2) {
		if (fd >= 0)
			close(fd);
		goto out;
	}

	import_pd_bad(ctx2, 0x7fffff, ENOENT, "a handle no object has");
	import_pd_bad(ctx2, l.mr->handle, EINVAL, "an MR's handle");
	pd2 = ibv_import_pd(ctx2, l.pd->handle);
	errno = 0;
	mr2 = pd2 ? ibv_import_mr(pd2, 0x7fffff) : NULL;
	report(pd2 && !mr2 && errno == ENOENT,
	       "import: an MR of a handle no object has: %s (want ENOENT)",
	       mr2 ? "imported" : strerror(errno));
	if (mr2)
		ibv_unimport_mr(mr2);
	mr2 = pd2 ? ibv_import_mr(pd2, l.mr->handle) : NULL;
	report(pd2 && pd2->handle == l.pd->handle && mr2 &&
	       mr2->lkey == l.mr->lkey && mr2->rkey == l.mr->rkey &&
	       mr2->length == sizeof(buf) && mr2->pd == pd2,
	       "import: the PD and the MR: the same handle, keys and length (%s)",
	       mr2 ? "ok" : strerror(errno));
	if (!mr2)
		goto out;

	/* The second context's own QP, on the imported PD and MR. */
	cq2 = ibv_create_cq(ctx2, 8, NULL, NULL, 0);
	qa.send_cq = cq2;
	qa.recv_cq = cq2;
	qp2 = cq2 ? ibv_create_qp(pd2, &qa) : NULL;
	ret = qp2 ? rc_self_connect(qp2) : errno;
	fill(buf, 4096, 41);
	memset(buf + 4096, 0, 4096);
	ret = ret ?: write_self(qp2, cq2, mr2->lkey, buf, mr2->rkey,
				buf + 4096, 4096);
	report(!ret && !memcmp(buf, buf + 4096, 4096),
	       "import: the second context's QP on the imported PD writes with the MR's keys: %s",
	       strerror(ret));

	/* The other way: an MR of the second context, imported into the first. */
	mrb = ibv_reg_mr(pd2, bufb, sizeof(bufb), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	mrb1 = mrb ? ibv_import_mr(l.pd, mrb->handle) : NULL;
	memset(bufb, 0, sizeof(bufb));
	ret = mrb1 ? write_self(l.qp, l.cq, l.lkey, buf, mrb1->rkey, bufb,
				sizeof(bufb)) : errno;
	report(!ret && !memcmp(bufb, buf, sizeof(bufb)),
	       "import: an MR of the second context, imported into the first, takes a WRITE: %s",
	       strerror(ret));

	if (!ibv_query_device_ex(ctx, NULL, &da) && da.max_dm_size)
		dm = ibv_alloc_dm(ctx, &dma);
	errno = 0;
	dm2 = dm ? ibv_import_dm(ctx2, 0x7fffff) : NULL;
	report(dm && !dm2 && errno == ENOENT,
	       "import: device memory of a handle no object has: %s (want ENOENT)",
	       dm2 ? "imported" : strerror(errno));
	if (dm2)
		ibv_unimport_dm(dm2);
	dm2 = dm ? ibv_import_dm(ctx2, dm->handle) : NULL;
	fill(buf, 256, 42);
	ret = dm2 ? ibv_memcpy_to_dm(dm, 8192 - 256, buf, 256) : errno;
	ret = ret ?: ibv_memcpy_from_dm(got, dm2, 8192 - 256, 256);
	report(!ret && !memcmp(got, buf, 256),
	       "import: 8 KiB of device memory imported: what one handle wrote the other reads: %s",
	       strerror(ret));
	ret = dm2 ? ibv_memcpy_to_dm(dm2, 8192, buf, 4) : 0;
	report(ret == EFAULT,
	       "import: the imported DM keeps the allocation's bounds: %s (want EFAULT)",
	       strerror(ret));
out:
	if (dm2)
		ibv_unimport_dm(dm2);
	if (mrb1)
		ibv_unimport_mr(mrb1);
	if (mrb)
		ibv_dereg_mr(mrb);
	if (qp2)
		ibv_destroy_qp(qp2);
	if (cq2)
		ibv_destroy_cq(cq2);
	if (mr2)
		ibv_unimport_mr(mr2);
	if (pd2)
		ibv_unimport_pd(pd2);
	if (ctx2) {
		ret = ibv_close_device(ctx2);
		report(!ret, "import: the second context closed: %s",
		       strerror(ret ? errno : 0));
		/* The first context and its objects are still there. */
		memset(buf + 8192, 0, 4096);
		ret = write_self(l.qp, l.cq, l.lkey, buf, l.rkey, buf + 8192,
				 4096);
		report(!ret && !memcmp(buf, buf + 8192, 4096),
		       "import: the first context's QP and MR work after the second closed: %s",
		       strerror(ret));
	}
	if (dm) {
		ret = ibv_free_dm(dm);
		report(!ret, "import: the device memory freed: %s", strerror(ret));
	}
	qpx_loop_free(&l);
}

/*
 * A UD QP created without send SGEs or inline data: its WQE is the control
 * segment and the address vector, with no room for data. The kernel says
 * so (max_send_sge 0), and an SGE is refused (EINVAL).
 */
static void qpx_ud_no_sge(struct qpx_loop *l)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = l->cq,
		.recv_cq = l->cq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_recv_sge = 1 },
		.comp_mask = QPX_MASK,
		.pd = l->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct qpx_loop n = *l;
	struct ibv_ah *ah = NULL;
	int ret;

	n.qp = ibv_create_qp_ex(l->pd->context, &a);
	ret = n.qp ? ud_up(n.qp, n.pd, &ah) : errno;
	n.qpx = n.qp ? ibv_qp_to_qp_ex(n.qp) : NULL;
	report(!ret && n.qpx && !a.cap.max_send_sge && !a.cap.max_inline_data,
	       "qp_ex UD: a QP without send SGEs or inline data, in RTS: %s, %u SGEs, %u bytes inline",
	       strerror(ret), a.cap.max_send_sge, a.cap.max_inline_data);
	if (!ret && n.qpx) {
		qpx_start(n.qpx, 6);
		ibv_wr_send(n.qpx);
		ibv_wr_set_ud_addr(n.qpx, l->ah, n.qp->qp_num, UD_LOOP_QKEY);
		ibv_wr_set_sge(n.qpx, n.lkey, (uintptr_t)n.buf, 16);
		qpx_fails(&n, EINVAL, "an SGE on a UD QP without send SGEs");
	}
	if (ah)
		ibv_destroy_ah(ah);
	if (n.qp)
		ibv_destroy_qp(n.qp);
}

/* The dynamic clock ID of an open PHC (clock_gettime(2) on its file). */
#define PHC_CLOCKID(fd)		((~(clockid_t)(fd) << 3) | 3)
#define NSEC			1000000000LL

/* The PTP hardware clock of device @name's PCI function (kite_en's). */
static int phc_open(const char *name)
{
	char pat[160], dev[64];
	glob_t g;
	int fd = -1;

	snprintf(pat, sizeof(pat), "/sys/class/infiniband/%s/device/../ptp/ptp*",
		 name);
	if (!glob(pat, 0, NULL, &g) && g.gl_pathc == 1) {
		snprintf(dev, sizeof(dev), "/dev/%s",
			 strrchr(g.gl_pathv[0], '/') + 1);
		fd = open(dev, O_RDWR | O_CLOEXEC);
	} else {
		errno = ENOENT;
	}
	globfree(&g);
	return fd;
}

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return -1;
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/* clock_adjtime(2) of the PHC: step by @ns, or (@freq) set the rate. */
static int phc_adj(int fd, long long ns, long freq, int set_freq)
{
	struct timex tx = {};

	if (set_freq) {
		tx.modes = ADJ_FREQUENCY;
		tx.freq = freq;
	} else {
		tx.modes = ADJ_SETOFFSET | ADJ_NANO;
		tx.time.tv_sec = ns / NSEC;
		tx.time.tv_usec = ns % NSEC;
		if (tx.time.tv_usec < 0) {
			tx.time.tv_sec--;
			tx.time.tv_usec += NSEC;
		}
	}
	return clock_adjtime(PHC_CLOCKID(fd), &tx) < 0 ? errno : 0;
}

/*
 * One reading of the PHC placed on CLOCK_MONOTONIC: the tightest of a few
 * (monotonic, PHC, monotonic) brackets.  *@mono is the bracket's middle,
 * *@err half its width: a vCPU stalled between two reads (a loaded debug
 * kernel) widens the bracket instead of skewing the result.
 */
static long long phc_sample(int fd, long long *mono, long long *err)
{
	long long best = -1, a, p, b;
	int i;

	for (i = 0; i < 8; i++) {
		a = clock_ns(CLOCK_MONOTONIC);
		p = clock_ns(PHC_CLOCKID(fd));
		b = clock_ns(CLOCK_MONOTONIC);
		if (best < 0 || b - a < 2 * *err) {
			best = p;
			*mono = a + (b - a) / 2;
			*err = (b - a) / 2;
		}
	}
	return best;
}

/*
 * The PHC's rate against CLOCK_MONOTONIC over @us microseconds, measured
 * again (up to 5 times) while the brackets leave it uncertain by more than
 * 0.005.
 */
static double phc_rate(int fd, unsigned int us)
{
	long long m0, m1, e0, e1, p0, p1;
	double rate = 0;
	int i;

	for (i = 0; i < 5; i++) {
		p0 = phc_sample(fd, &m0, &e0);
		usleep(us);
		p1 = phc_sample(fd, &m1, &e1);
		if (m1 <= m0)
			continue;
		rate = (double)(p1 - p0) / (double)(m1 - m0);
		if ((double)(e0 + e1) / (double)(m1 - m0) < 0.005)
			break;
	}
	return rate;
}

/*
 * The NIC's real-time clock as a PTP hardware clock (kite_en): set to the
 * system's time, set, stepped and slewed through the PHC API, and its
 * limits enforced; it is given back the system's time and rate at the end.
 */
static void test_phc(const char *name)
{
	struct ptp_sys_offset_extended ext = { .n_samples = 3 };
	struct ptp_clock_caps caps = {};
	long max = 100000L << 16;	/* 10 %, in scaled ppm */
	struct timespec ts = { .tv_sec = 2000000000 };
	long long p0, p1, r;
	int fd = phc_open(name), ret, i, ok;
	double rate;

	report(fd >= 0, "phc: the PTP hardware clock of %s's PCI function: %s",
	       name, fd >= 0 ? "open" : strerror(errno));
	if (fd < 0)
		return;
	ret = ioctl(fd, PTP_CLOCK_GETCAPS, &caps) ? errno : 0;
	report(!ret && caps.max_adj == 100000000,
	       "phc: PTP_CLOCK_GETCAPS: max_adj %d ppb: %s", caps.max_adj,
	       strerror(ret));
	p0 = clock_ns(PHC_CLOCKID(fd));
	r = clock_ns(CLOCK_REALTIME);
	report(p0 > 0 && llabs(p0 - r) < 5 * NSEC,
	       "phc: the driver set it to the system's time (%lld ns apart)",
	       p0 - r);

	ret = clock_settime(PHC_CLOCKID(fd), &ts) ? errno : 0;
	p0 = clock_ns(PHC_CLOCKID(fd));
	report(!ret && p0 >= ts.tv_sec * NSEC && p0 < ts.tv_sec * NSEC + NSEC / 2,
	       "phc: clock_settime: reads %lld: %s", p0, strerror(ret));
	p0 = clock_ns(PHC_CLOCKID(fd));
	ret = phc_adj(fd, 1500000000LL, 0, 0);
	p1 = clock_ns(PHC_CLOCKID(fd));
	report(!ret && p1 - p0 >= 1500000000LL && p1 - p0 < 1700000000LL,
	       "phc: step by +1.5 s (ADJ_SETOFFSET): %lld ns later: %s",
	       p1 - p0, strerror(ret));
	p0 = clock_ns(PHC_CLOCKID(fd));
	ret = phc_adj(fd, -1500000000LL, 0, 0);
	p1 = clock_ns(PHC_CLOCKID(fd));
	report(!ret && p0 - p1 <= 1500000000LL && p0 - p1 > 1300000000LL,
	       "phc: step by -1.5 s: %lld ns earlier: %s", p0 - p1,
	       strerror(ret));

	ret = phc_adj(fd, 0, max, 1);
	rate = ret ? 0 : phc_rate(fd, 300000);
	report(!ret && rate > 1.07 && rate < 1.13,
	       "phc: rate +10 %% (ADJ_FREQUENCY): runs %.4f times CLOCK_MONOTONIC: %s",
	       rate, strerror(ret));
	ret = phc_adj(fd, 0, -max, 1);
	rate = ret ? 0 : phc_rate(fd, 300000);
	report(!ret && rate > 0.87 && rate < 0.93,
	       "phc: rate -10 %%: runs %.4f times CLOCK_MONOTONIC: %s", rate,
	       strerror(ret));
	ret = phc_adj(fd, 0, max + (1L << 16), 1);
	report(ret == ERANGE, "phc: a rate beyond max_adj refused: %s",
	       strerror(ret));
	ret = phc_adj(fd, 0, 0, 1);
	rate = ret ? 0 : phc_rate(fd, 300000);
	report(!ret && rate > 0.98 && rate < 1.02,
	       "phc: the refused rate left no trace; nominal again: %.4f: %s",
	       rate, strerror(ret));

	ret = ioctl(fd, PTP_SYS_OFFSET_EXTENDED, &ext) ? errno : 0;
	for (i = 0, ok = !ret; ok && i < (int)ext.n_samples; i++) {
		long long pre = ext.ts[i][0].sec * NSEC + ext.ts[i][0].nsec;
		long long phc = ext.ts[i][1].sec * NSEC + ext.ts[i][1].nsec;
		long long post = ext.ts[i][2].sec * NSEC + ext.ts[i][2].nsec;

		ok = pre <= post && phc > ts.tv_sec * NSEC &&
		     phc < (ts.tv_sec + 60) * NSEC;
	}
	report(ok, "phc: PTP_SYS_OFFSET_EXTENDED: %u samples, PHC reads between system reads: %s",
	       ext.n_samples, strerror(ret));

	ret = clock_gettime(CLOCK_REALTIME, &ts) ?: clock_settime(PHC_CLOCKID(fd), &ts);
	report(!ret, "phc: given back the system's time: %s",
	       strerror(ret ? errno : 0));
	close(fd);
}

/*
 * --phc-near: the PHC of device @name reads the system's time, within
 * two seconds (kite_en sets it at probe and after a reset, when the device
 * has started its clock again at 0). Returns the number of failed checks.
 */
static int phc_near(const char *name)
{
	int fd = phc_open(name);
	long long p = fd < 0 ? -1 : clock_ns(PHC_CLOCKID(fd));
	long long r = clock_ns(CLOCK_REALTIME);

	report(p > 0 && llabs(p - r) < 2 * NSEC,
	       "phc: %s's PHC reads the system's time (%lld ns apart)%s%s",
	       name, p - r, fd < 0 ? ": " : "", fd < 0 ? strerror(errno) : "");
	if (fd >= 0)
		close(fd);
	return failed;
}

/* ibv_query_rt_values_ex() for the raw clock: its value, or 0. */
static uint64_t rt_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) ||
	    v.comp_mask != IBV_VALUES_MASK_RAW_CLOCK || v.raw_clock.tv_sec)
		return 0;
	return v.raw_clock.tv_nsec;
}

/*
 * Completion timestamps against the clocks they come from: the device
 * clock (ibv_query_rt_values_ex() before and after) and the real-time
 * clock, the PHC (clock_gettime() on it before and after), also once the
 * PHC has been stepped: what steers the PHC steers the completions.
 */
static void test_timestamps(struct ibv_context *ctx, const char *name)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 16,
		.wc_flags = CQ_EX_WC_FLAGS,
	};
	struct ibv_values_ex v = { .comp_mask = 1U << 1 };
	long long step = 1000 * NSEC, off, p0, p1, r;
	uint64_t c0, c1;
	struct ex_wc w[4];
	struct ibv_cq_ex *cq;
	struct ud_loop u;
	int fd, ret, n, i, stepped = 0;

	c0 = rt_clock(ctx);
	c1 = rt_clock(ctx);
	report(c0 && c1 > c0,
	       "timestamps: ibv_query_rt_values_ex: the device clock, raw_clock.tv_nsec, going on (%llu, %llu)",
	       (unsigned long long)c0, (unsigned long long)c1);
	ret = ibv_query_rt_values_ex(ctx, &v);
	report(ret == EINVAL, "timestamps: ibv_query_rt_values_ex, an unknown comp_mask bit: %s",
	       strerror(ret));
	v.comp_mask = 0;
	ret = ibv_query_rt_values_ex(ctx, &v);
	report(!ret && !v.comp_mask,
	       "timestamps: ibv_query_rt_values_ex asking nothing: %s",
	       strerror(ret));

	fd = phc_open(name);
	report(fd >= 0, "timestamps: the PHC of %s: %s", name,
	       fd >= 0 ? "open" : strerror(errno));
	cq = ibv_create_cq_ex(ctx, &attr);
	ret = cq ? ud_loop_init(ctx, ibv_cq_ex_to_cq(cq), &u) : errno;
	report(!ret, "timestamps: CQ with both timestamps, UD QP to itself: %s",
	       strerror(ret));
	for (off = 0; !ret && fd >= 0 && off <= step; off += step) {
		if (off) {
			stepped = !phc_adj(fd, step, 0, 0);
			report(stepped, "timestamps: the PHC stepped by %+lld s",
			       step / NSEC);
			if (!stepped)
				break;
		}
		memset(w, 0, sizeof(w));
		c0 = rt_clock(ctx);
		p0 = clock_ns(PHC_CLOCKID(fd));
		r = clock_ns(CLOCK_REALTIME);
		n = ud_loop_post(&u, 41, 42, 64, 0) ? 0 : ex_poll(cq, w, 2, 4);
		p1 = clock_ns(PHC_CLOCKID(fd));
		c1 = rt_clock(ctx);
		report(n == 2, "timestamps (PHC %+lld s): two completions (%d)",
		       off / NSEC, n);
		for (i = 0; i < n; i++) {
			report(w[i].ts >= c0 && w[i].ts <= c1,
			       "timestamps (PHC %+lld s): completion %d's timestamp between two device clock readings",
			       off / NSEC, i);
			report(w[i].wall >= (uint64_t)p0 && w[i].wall <= (uint64_t)p1,
			       "timestamps (PHC %+lld s): completion %d's wall-clock time between two PHC readings",
			       off / NSEC, i);
			report(llabs((long long)w[i].wall - (r + off)) < 5 * NSEC,
			       "timestamps (PHC %+lld s): completion %d's wall-clock time is the system's %+lld s (%lld ns apart)",
			       off / NSEC, i, off / NSEC,
			       (long long)w[i].wall - (r + off));
		}
	}
	if (stepped)
		report(!phc_adj(fd, -step, 0, 0),
		       "timestamps: the PHC stepped back");
	if (fd >= 0)
		close(fd);
	if (!ret)
		ud_loop_free(&u);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* UD sends to the QP itself: the address, SGEs or inline data. */
static void test_qp_ex_ud(struct ibv_context *ctx)
{
	static char buf[16384];
	struct qpx_loop l = {};
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc[2];
	int ret, n;

	ret = qpx_loop_init(ctx, &l, IBV_QPT_UD, QPX_UD_OPS, buf, sizeof(buf),
			    IBV_ACCESS_LOCAL_WRITE);
	ret = ret ?: ud_up(l.qp, l.pd, &l.ah);
	report(!ret, "qp_ex UD: QP in RTS, MR, AH to our GID: %s",
	       strerror(ret));
	if (ret)
		goto out;
	qpx = l.qpx;

	fill(buf, 4096, 3);
	qpx_start(qpx, 1);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, l.ah, l.qp->qp_num, UD_LOOP_QKEY);
	ibv_wr_set_sge(qpx, l.lkey, (uintptr_t)buf, 64);
	n = qpx_go(&l, 1, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_SEND) &&
	       wc_is(&wc[1], IBV_WC_RECV) && wc[1].byte_len == 40 + 64 &&
	       wc[1].src_qp == l.qp->qp_num && !memcmp(l.rcv + 40, buf, 64),
	       "qp_ex UD: wr_send + wr_set_ud_addr + wr_set_sge: 64 bytes after the GRH (%s, %d)",
	       strerror(ret), n);

	qpx_start(qpx, 2);
	ibv_wr_send_imm(qpx, htobe32(0x5150));
	ibv_wr_set_inline_data(qpx, buf + 200, 32);
	ibv_wr_set_ud_addr(qpx, l.ah, l.qp->qp_num, UD_LOOP_QKEY);
	n = qpx_go(&l, 2, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_SEND) &&
	       wc_is(&wc[1], IBV_WC_RECV) && wc[1].byte_len == 40 + 32 &&
	       (wc[1].wc_flags & IBV_WC_WITH_IMM) &&
	       be32toh(wc[1].imm_data) == 0x5150 &&
	       !memcmp(l.rcv + 40, buf + 200, 32),
	       "qp_ex UD: wr_send_imm + inline data + wr_set_ud_addr: 32 bytes and the immediate (%s, %d)",
	       strerror(ret), n);

	qpx_start(qpx, 3);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, l.lkey, (uintptr_t)buf, 64);
	qpx_fails(&l, EINVAL, "UD send without wr_set_ud_addr");
	qpx_start(qpx, 4);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, NULL, l.qp->qp_num, UD_LOOP_QKEY);
	qpx_fails(&l, EINVAL, "UD send with no AH");
	qpx_nothing_posted(&l, 5, "UD: after the refused sends");
	qpx_ud_no_sge(&l);
out:
	qpx_loop_free(&l);
}

#define TD_MSGS		16
#define TD_LEN		64
#define TD_SLOT		128	/* a receive: the GRH and TD_LEN bytes */

/*
 * What an SRQ's receivers see: a CQ, an SRQ and a UD QP of the extended
 * API on @pd send TD_MSGS messages of TD_LEN bytes to the QP itself in one
 * ibv_wr_* batch, all posted and polled from this thread; each message
 * (its first byte its number, then i ^ number) arrives once and whole.
 * @what names the case: "thread domain" (@pd a parent domain with a
 * thread domain, the CQ created with it as the thread domain promises) or
 * "SRQ resize" (@pd a PD; the SRQ is made for half the receives and
 * resized with them posted, then shrunk once they completed).
 */
static void srq_ud_data(struct ibv_context *ctx, struct ibv_pd *pd,
			const char *what)
{
	bool resize = !strcmp(what, "SRQ resize");
	static char buf[TD_MSGS * TD_LEN + TD_MSGS * TD_SLOT];
	char *rcv = buf + TD_MSGS * TD_LEN;
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 4 * TD_MSGS,
		.comp_mask = resize ? 0 : IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = resize ? NULL : pd,
	};
	struct ibv_srq_init_attr srqia = {
		.attr = { .max_wr = resize ? TD_MSGS / 2 : TD_MSGS, .max_sge = 1 },
	};
	struct ibv_srq_attr sa = { .max_wr = 2 * TD_MSGS };
	struct ibv_qp_init_attr_ex qpa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = TD_MSGS, .max_send_sge = 1 },
		.comp_mask = QPX_MASK,
		.pd = pd,
		.send_ops_flags = QPX_UD_OPS,
	};
	unsigned int seen = 0, sends = 0, recvs = 0, bad = 0, i, j, m;
	struct ibv_recv_wr rwr = { .num_sge = 1 }, *bad_rwr;
	struct ibv_sge rsge = { .length = TD_SLOT };
	struct ibv_ah *ah = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_qp_ex *qpx;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc;
	int ret;

	cq = ibv_create_cq_ex(ctx, &cqa);
	if (cq) {
		srq = ibv_create_srq(pd, &srqia);
		qpa.send_cq = ibv_cq_ex_to_cq(cq);
		qpa.recv_cq = ibv_cq_ex_to_cq(cq);
		qpa.srq = srq;
	}
	qp = srq ? ibv_create_qp_ex(ctx, &qpa) : NULL;
	mr = qp ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	ret = mr ? ud_up(qp, pd, &ah) : (errno ? errno : EIO);
	report(!ret, "%s: a CQ, an SRQ and a UD QP on its PD, in RTS (%s)",
	       what, strerror(ret));
	if (ret)
		goto out;

	memset(rcv, 0, TD_MSGS * TD_SLOT);
	rsge.lkey = mr->lkey;
	for (i = 0; i < TD_MSGS && !ret; i++) {
		for (j = 0; j < TD_LEN; j++)
			buf[i * TD_LEN + j] = (char)(j ? j ^ i : i);
		rsge.addr = (uintptr_t)(rcv + i * TD_SLOT);
		rwr.wr_id = 100 + i;
		rwr.sg_list = &rsge;
		ret = ibv_post_srq_recv(srq, &rwr, &bad_rwr);
		if (resize && !ret && i == TD_MSGS / 2 - 1) {
			/* Full: the rest go to the new ring. */
			ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
			report(!ret, "%s: %d receives posted, resized to %d (%s)",
			       what, TD_MSGS / 2, sa.max_wr, strerror(ret));
		}
	}
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	for (i = 0; i < TD_MSGS; i++) {
		qpx->wr_id = i;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		ibv_wr_set_ud_addr(qpx, ah, qp->qp_num, UD_LOOP_QKEY);
		ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)(buf + i * TD_LEN),
			       TD_LEN);
	}
	ret = ret ?: ibv_wr_complete(qpx);
	report(!ret, "%s: %d receives on the SRQ, %d sends in one ibv_wr_* batch (%s)",
	       what, TD_MSGS, TD_MSGS, strerror(ret));
	if (ret)
		goto out;
	while (sends + recvs < 2 * TD_MSGS &&
	       poll_one(ibv_cq_ex_to_cq(cq), &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS) {
			bad++;
		} else if (wc.opcode == IBV_WC_SEND && wc.wr_id < TD_MSGS) {
			sends++;
		} else if (wc.opcode == IBV_WC_RECV && wc.wr_id >= 100 &&
			   wc.wr_id < 100 + TD_MSGS &&
			   wc.byte_len == 40 + TD_LEN) {
			const char *p = rcv + (wc.wr_id - 100) * TD_SLOT + 40;

			recvs++;
			m = (unsigned char)p[0];
			for (j = 1; j < TD_LEN && p[j] == (char)(j ^ m); j++)
				;
			if (m < TD_MSGS && j == TD_LEN && !(seen & (1U << m)))
				seen |= 1U << m;
			else
				bad++;
		} else {
			bad++;
		}
	}
	report(sends == TD_MSGS && recvs == TD_MSGS && !bad &&
	       seen == (1U << TD_MSGS) - 1,
	       "%s: %u sends and %u receives completed, every message once and whole (%u bad)",
	       what, sends, recvs, bad);
	if (resize) {
		memset(&sa, 0, sizeof(sa));
		ret = ibv_query_srq(srq, &sa);
		report(!ret && sa.max_wr == 2 * TD_MSGS,
		       "%s: query SRQ: max_wr %u (%s)", what, sa.max_wr,
		       strerror(ret));
		sa.max_wr = 2;
		ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
		report(!ret, "%s: shrunk to 2 once empty (%s)", what,
		       strerror(ret));
		for (i = 0; i < 3 && !ret; i++) {
			rwr.wr_id = 200 + i;
			ret = ibv_post_srq_recv(srq, &rwr, &bad_rwr);
		}
		report(ret == ENOMEM && i == 3,
		       "%s: the third receive on 2 WQEs refused (ENOMEM: %s)",
		       what, strerror(ret));
		sa.max_wr = 1;
		ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
		report(!ret, "%s: resized to 1 (a ring of 2) with 2 outstanding (%s)",
		       what, strerror(ret));
	}
out:
	if (ah)
		ibv_destroy_ah(ah);
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* SRQ resize through libkite, with data (srq_ud_data()). */
static void test_srq_resize(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	report(!!pd, "SRQ resize: allocate a PD (%s)",
	       pd ? "ok" : strerror(errno));
	if (!pd)
		return;
	srq_ud_data(ctx, pd, "SRQ resize");
	ibv_dealloc_pd(pd);
}

/*
 * Thread domains through libkite: ibv_alloc_td() and what it refuses, a
 * parent domain that carries one (not another context's), and neither
 * going while the other depends on it; with @data, srq_ud_data().
 */
static void test_thread_domain(struct ibv_context *ctx, int data)
{
	struct ibv_parent_domain_init_attr pda = {};
	struct ibv_td_init_attr tda = { .comp_mask = 1 };
	struct ibv_td *td, *other_td = NULL;
	struct ibv_context *other;
	struct ibv_pd *pd, *pdom;
	int ret;

	errno = 0;
	td = ibv_alloc_td(ctx, &tda);
	report(!td && errno == EINVAL,
	       "thread domain: an unknown comp_mask bit refused with EINVAL (%s)",
	       strerror(errno));
	if (td)
		ibv_dealloc_td(td);
	tda.comp_mask = 0;
	td = ibv_alloc_td(ctx, &tda);
	report(!!td, "thread domain: allocated (%s)", td ? "ok" : strerror(errno));
	if (!td)
		return;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		goto out_td;
	pda.pd = pd;

	other = ibv_open_device(ctx->device);
	if (other)
		other_td = ibv_alloc_td(other, &tda);
	report(!!other_td, "thread domain: one of a second context of the device (%s)",
	       other_td ? "ok" : strerror(errno));
	if (other_td) {
		pda.td = other_td;
		pdom_refused(ctx, &pda, EINVAL, "another context's thread domain");
		ibv_dealloc_td(other_td);
	}
	if (other)
		ibv_close_device(other);

	pda.td = td;
	pdom = ibv_alloc_parent_domain(ctx, &pda);
	report(!!pdom, "thread domain: a parent domain carries it (%s)",
	       pdom ? "ok" : strerror(errno));
	if (!pdom)
		goto out_pd;
	ret = ibv_dealloc_td(td);
	report(ret == EBUSY,
	       "thread domain: cannot go while a parent domain carries it (EBUSY: %s)",
	       strerror(ret));
	if (data)
		srq_ud_data(ctx, pdom, "thread domain");
	ret = ibv_dealloc_pd(pdom);
	report(!ret, "thread domain: its parent domain deallocated (%s)",
	       strerror(ret));
out_pd:
	ibv_dealloc_pd(pd);
out_td:
	ret = ibv_dealloc_td(td);
	report(!ret, "thread domain: deallocated once no parent domain carries it (%s)",
	       strerror(ret));
}

/*
 * Memory windows through libkite: the device's capabilities, ibv_alloc_mw()
 * and what it refuses; with @data, over an RC QP connected to itself with
 * an MR that allows binding (and no remote access of its own): a type 1
 * window bound with ibv_bind_mw(), a type 2 window with IBV_WR_BIND_MW and
 * with ibv_wr_bind_mw(); RDMA WRITE, READ and atomics through their keys,
 * data compared; accesses outside a window, through a stale or unbound
 * key, after LOCAL_INV or SEND with invalidate: remote access errors;
 * binds the device refuses: IBV_WC_MW_BIND_ERR; binds libkite or
 * libibverbs refuse: their errno; ibv_dereg_mr() of an MR with a window
 * bound: EBUSY.
 */
#define MW_QP_OPS	(QPX_RC_OPS | IBV_QP_EX_WITH_BIND_MW)
#define MW_WIN		4096		/* the window: buf[4096 .. 8192) */

/* A QP in ERROR after a failed work request, back to RTS. */
static int mw_recover(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	int ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);

	return ret ?: rc_self_connect(qp);
}

/* Post one signaled work request and wait for its completion. */
static int mw_post1(struct qpx_loop *l, struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;
	int ret;

	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(l->qp, wr, &bad);
	if (ret)
		return -ret;
	return poll_ids(l->cq, &wr->wr_id, wc, 1) == 1 ? 0 : -ETIMEDOUT;
}

/*
 * An RDMA @op of @len bytes at @raddr through @rkey: the completion's
 * status, data compared on success (WRITE from buf[0..], READ into
 * buf[12288..], FETCH_ADD of 1 into buf[12288]); -1 for wrong data,
 * another negative value if nothing completed. A failure leaves the QP
 * in RTS again.
 */
static int mw_rdma(struct qpx_loop *l, enum ibv_wr_opcode op, char *raddr,
		   uint32_t rkey, uint32_t len, int seed)
{
	char *src = l->buf, *dst = l->buf + 12288;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len,
			       .lkey = l->lkey };
	struct ibv_send_wr wr = { .wr_id = 700 + seed, .sg_list = &sge,
				  .num_sge = 1, .opcode = op };
	uint64_t orig = 0x100 + seed;
	struct ibv_wc wc;
	int ret;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		memcpy(raddr, &orig, 8);
		sge.addr = (uintptr_t)dst;
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = rkey;
		if (op == IBV_WR_RDMA_READ) {
			fill(raddr, len, seed);
			memset(dst, 0, len);
			sge.addr = (uintptr_t)dst;
		} else {
			fill(src, len, seed);
			memset(raddr, 0, len);
		}
	}
	ret = mw_post1(l, &wr, &wc);
	if (ret)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		if (mw_recover(l->qp))
			return -EPROTO;
		return wc.status;
	}
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		uint64_t now, got;

		memcpy(&now, raddr, 8);
		memcpy(&got, dst, 8);
		return now == orig + 1 && got == orig ? 0 : -1;
	}
	if (op == IBV_WR_RDMA_READ)
		return memcmp(dst, raddr, len) ? -1 : 0;
	return memcmp(raddr, src, len) ? -1 : 0;
}

static const char *mw_res(int r)
{
	static char s[32];

	if (r >= 0)
		return ibv_wc_status_str(r);
	snprintf(s, sizeof(s), "%d", r);
	return s;
}

/* A BIND_MW work request through ibv_post_send(); its completion's status. */
static int mw_bind_wr(struct qpx_loop *l, struct ibv_mw *mw, uint32_t rkey,
		      struct ibv_mr *mr, char *addr, uint64_t len, int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 650, .opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = mr, .addr = (uintptr_t)addr,
					    .length = len,
					    .mw_access_flags = access } },
	};
	struct ibv_wc wc;
	int ret = mw_post1(l, &wr, &wc);

	if (ret)
		return ret;
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
		return -EPROTO;
	if (wc.status != IBV_WC_SUCCESS && mw_recover(l->qp))
		return -EPROTO;
	return wc.status;
}

static void test_mw(struct ibv_context *ctx, const struct ibv_device_attr *da,
		    int data)
{
	static char buf[16384];
	char *win = buf + MW_WIN;
	struct qpx_loop l = {};
	struct ibv_pd *pd2 = NULL;
	struct ibv_mw *mw1 = NULL, *mw2 = NULL, *mw;
	struct ibv_mr *nobind = NULL, *mr2 = NULL;
	struct ibv_mw_bind bind = {};
	struct ibv_send_wr wr;
	struct ibv_qp *ud = NULL;
	struct ibv_wc wc[2];
	uint32_t k, old;
	int ret, n;

	report((da->device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	       (da->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	       da->max_mw > 0,
	       "MW: the device has memory windows, types 1 and 2B, %d at most",
	       da->max_mw);

	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC, MW_QP_OPS, buf, sizeof(buf),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	report(!ret, "MW: RC QP with bind_mw, MR with MW_BIND (no remote access): %s",
	       strerror(ret));
	if (ret)
		goto out;
	mw1 = ibv_alloc_mw(l.pd, IBV_MW_TYPE_1);
	report(!!mw1, "MW: alloc type 1: %s", mw1 ? "ok" : strerror(errno));
	mw2 = ibv_alloc_mw(l.pd, IBV_MW_TYPE_2);
	report(mw2 && mw1 && (mw2->rkey >> 8) != (mw1->rkey >> 8),
	       "MW: alloc type 2, a key of its own: %s",
	       mw2 ? "ok" : strerror(errno));
	errno = 0;
	mw = ibv_alloc_mw(l.pd, (enum ibv_mw_type)3);
	report(!mw && errno == EINVAL, "MW: alloc type 3: %s (want %s)",
	       mw ? "allocated" : strerror(errno), strerror(EINVAL));
	if (mw)
		ibv_dealloc_mw(mw);
	errno = 0;
	mw = ibv_alloc_mw(l.pd, (enum ibv_mw_type)0);
	report(!mw && errno == EINVAL, "MW: alloc type 0: %s (want %s)",
	       mw ? "allocated" : strerror(errno), strerror(EINVAL));
	if (mw)
		ibv_dealloc_mw(mw);
	mw = ibv_alloc_mw(l.pd, IBV_MW_TYPE_1);
	ret = mw ? ibv_dealloc_mw(mw) : errno;
	report(!ret, "MW: alloc and dealloc: %s", strerror(ret));
	nobind = ibv_reg_mr(l.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	pd2 = ibv_alloc_pd(ctx);
	mr2 = pd2 ? ibv_reg_mr(pd2, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_MW_BIND) : NULL;
	report(nobind && mr2, "MW: an MR without MW_BIND, and one in another PD");
	if (!mw1 || !mw2 || !nobind || !mr2 || !data)
		goto out;
	ret = rc_self_connect(l.qp);
	report(!ret, "MW: QP connected to itself: %s", strerror(ret));
	if (ret)
		goto out;

	/* Type 1: ibv_bind_mw(). */
	old = mw1->rkey;
	bind.wr_id = 600;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = l.mr;
	bind.bind_info.addr = (uintptr_t)win;
	bind.bind_info.length = MW_WIN;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_ATOMIC |
					 IBV_ACCESS_LOCAL_WRITE;
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	n = ret ? 0 : poll_ids(l.cq, &bind.wr_id, wc, 1);
	report(!ret && n == 1 && wc_is(&wc[0], IBV_WC_BIND_MW) &&
	       mw1->rkey == ibv_inc_rkey(old),
	       "MW: ibv_bind_mw type 1: IBV_WC_BIND_MW, rkey 0x%x -> 0x%x (%s, %d)",
	       old, mw1->rkey, strerror(ret), n);
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win + 100, mw1->rkey, 1000, 1);
	report(!ret, "MW type 1: RDMA WRITE 1000 bytes through the window: %s",
	       mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_READ, win + MW_WIN - 512, mw1->rkey, 512, 2);
	report(!ret, "MW type 1: RDMA READ the window's last 512 bytes: %s",
	       mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_ATOMIC_FETCH_AND_ADD, win + 64, mw1->rkey, 8, 3);
	report(!ret, "MW type 1: FETCH_ADD through the window: %s", mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win + MW_WIN - 8, mw1->rkey, 16, 4);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 1: WRITE across the window's end: %s (want remote access error)",
	       mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win - 16, mw1->rkey, 16, 5);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 1: WRITE before the window's start: %s (want remote access error)",
	       mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win, old, 16, 6);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 1: WRITE through the key before the bind: %s (want remote access error)",
	       mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win, l.mr->rkey, 16, 7);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 1: WRITE through the MR's own key (no remote access): %s (want remote access error)",
	       mw_res(ret));

	ret = ibv_dereg_mr(l.mr);
	report(ret == EBUSY, "MW: ibv_dereg_mr of the MR with a window bound: %s (want %s)",
	       ret ? strerror(ret) : "deregistered", strerror(EBUSY));
	if (!ret)
		l.mr = NULL;

	/* Unbind: length 0, no MR; then nothing goes through. */
	old = mw1->rkey;
	memset(&bind.bind_info, 0, sizeof(bind.bind_info));
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	n = ret ? 0 : poll_ids(l.cq, &bind.wr_id, wc, 1);
	report(!ret && n == 1 && wc_is(&wc[0], IBV_WC_BIND_MW),
	       "MW: ibv_bind_mw type 1 of length 0 (unbind): %s, %d", strerror(ret), n);
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win, mw1->rkey, 16, 8);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 1: WRITE through the unbound window: %s (want remote access error)",
	       mw_res(ret));

	/* Binds the device refuses. */
	bind.bind_info.mr = nobind;
	bind.bind_info.addr = (uintptr_t)win;
	bind.bind_info.length = 64;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	old = mw1->rkey;
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	n = ret ? 0 : poll_ids(l.cq, &bind.wr_id, wc, 1);
	report(!ret && n == 1 && wc[0].status == IBV_WC_MW_BIND_ERR,
	       "MW: bind to an MR without MW_BIND: %s (want %s)",
	       n == 1 ? ibv_wc_status_str(wc[0].status) : strerror(ret),
	       ibv_wc_status_str(IBV_WC_MW_BIND_ERR));
	/* As ibv_bind_mw(3) says: the failed bind's key is put back. */
	mw1->rkey = old;
	ret = mw_recover(l.qp);
	report(!ret, "MW: QP back to RTS after the bind error: %s", strerror(ret));
	bind.bind_info.mr = l.mr;
	bind.bind_info.addr = (uintptr_t)buf + sizeof(buf) - 32;
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	n = ret ? 0 : poll_ids(l.cq, &bind.wr_id, wc, 1);
	report(!ret && n == 1 && wc[0].status == IBV_WC_MW_BIND_ERR,
	       "MW: bind past the MR's end: %s (want %s)",
	       n == 1 ? ibv_wc_status_str(wc[0].status) : strerror(ret),
	       ibv_wc_status_str(IBV_WC_MW_BIND_ERR));
	mw1->rkey = old;
	mw_recover(l.qp);
	ret = mw_bind_wr(&l, mw2, ibv_inc_rkey(mw2->rkey), l.mr, win, 0, 0);
	report(ret == IBV_WC_MW_BIND_ERR,
	       "MW: type 2 bind of length 0: %s (want %s)", mw_res(ret),
	       ibv_wc_status_str(IBV_WC_MW_BIND_ERR));

	/* Binds refused before they are posted. */
	bind.bind_info.addr = (uintptr_t)win;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED;
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	report(ret == EINVAL && mw1->rkey == old,
	       "MW: zero-based bind: %s (want %s), key unchanged", strerror(ret),
	       strerror(EINVAL));
	bind.bind_info.mw_access_flags = IBV_ACCESS_MW_BIND;
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	report(ret == EINVAL, "MW: bind with IBV_ACCESS_MW_BIND as a right: %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	ret = ibv_bind_mw(l.qp, mw2, &bind);
	report(ret == EINVAL, "MW: ibv_bind_mw of a type 2 window: %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	bind.bind_info.mr = mr2;
	ret = ibv_bind_mw(l.qp, mw1, &bind);
	report(ret == EPERM, "MW: ibv_bind_mw to an MR of another PD: %s (want %s)",
	       strerror(ret), strerror(EPERM));
	ret = mw_bind_wr(&l, mw2, 0, NULL, win, 64, IBV_ACCESS_REMOTE_READ);
	report(ret == -EINVAL, "MW: IBV_WR_BIND_MW of a length without an MR: %s (want %d)",
	       mw_res(ret), -EINVAL);
	ud = qpx_create(l.pd, l.cq, IBV_QPT_UD, QPX_MASK, 0, IBV_QP_EX_WITH_SEND, NULL);
	if (ud) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qkey = 1 };

		ret = ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY);
		a.qp_state = IBV_QPS_RTR;
		ret = ret ?: ibv_modify_qp(ud, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		ret = ret ?: ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		bind.bind_info.mr = l.mr;
		ret = ret ?: ibv_bind_mw(ud, mw1, &bind);
	} else {
		ret = errno;
	}
	report(ret == EINVAL, "MW: ibv_bind_mw on a UD QP: %s (want %s)",
	       strerror(ret), strerror(EINVAL));

	/* Type 2: IBV_WR_BIND_MW through ibv_post_send(), LOCAL_INV. */
	k = ibv_inc_rkey(mw2->rkey);
	ret = mw_bind_wr(&l, mw2, k, l.mr, win, MW_WIN,
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	report(ret == IBV_WC_SUCCESS, "MW type 2: IBV_WR_BIND_MW: %s", mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win + 2000, k, 2000, 9);
	report(!ret, "MW type 2: RDMA WRITE through the window: %s", mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_RDMA_READ, win, k, 1024, 10);
	report(!ret, "MW type 2: RDMA READ through the window: %s", mw_res(ret));
	ret = mw_rdma(&l, IBV_WR_ATOMIC_FETCH_AND_ADD, win + 8, k, 8, 11);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 2: FETCH_ADD without the atomic right: %s (want remote access error)",
	       mw_res(ret));
	ret = mw_bind_wr(&l, mw2, ibv_inc_rkey(k), l.mr, win, 64,
			 IBV_ACCESS_REMOTE_READ);
	report(ret == IBV_WC_MW_BIND_ERR,
	       "MW type 2: bound again while bound: %s (want %s)", mw_res(ret),
	       ibv_wc_status_str(IBV_WC_MW_BIND_ERR));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 660;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = k;
	ret = mw_post1(&l, &wr, wc);
	report(!ret && wc_is(&wc[0], IBV_WC_LOCAL_INV),
	       "MW type 2: IBV_WR_LOCAL_INV of its key: %s",
	       ret ? strerror(-ret) : ibv_wc_status_str(wc[0].status));
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win, k, 16, 12);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 2: WRITE after LOCAL_INV: %s (want remote access error)",
	       mw_res(ret));
	wr.wr_id = 661;
	ret = mw_post1(&l, &wr, wc);
	report(!ret && wc[0].status == IBV_WC_LOC_PROT_ERR,
	       "MW type 2: LOCAL_INV of the invalidated key again: %s (want %s)",
	       ret ? strerror(-ret) : ibv_wc_status_str(wc[0].status),
	       ibv_wc_status_str(IBV_WC_LOC_PROT_ERR));
	mw_recover(l.qp);

	/* Type 2: ibv_wr_bind_mw(), then SEND with invalidate of its key. */
	k = ibv_inc_rkey(k);
	bind.bind_info.mr = l.mr;
	bind.bind_info.addr = (uintptr_t)win;
	bind.bind_info.length = MW_WIN;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	qpx_start(l.qpx, 670);
	ibv_wr_bind_mw(l.qpx, mw2, k, &bind.bind_info);
	n = qpx_go(&l, 670, false, wc, &ret);
	report(n == 1 && wc_is(&wc[0], IBV_WC_BIND_MW),
	       "MW type 2: ibv_wr_bind_mw: %s, %d", strerror(ret), n);
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win + 8, k, 256, 13);
	report(!ret, "MW type 2: WRITE through the window bound by ibv_wr_bind_mw: %s",
	       mw_res(ret));
	qpx_start(l.qpx, 671);
	ibv_wr_send_inv(l.qpx, k);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 16);
	n = qpx_go(&l, 671, true, wc, &ret);
	report(n == 2 && wc_is(&wc[0], IBV_WC_SEND) && wc_is(&wc[1], IBV_WC_RECV) &&
	       (wc[1].wc_flags & IBV_WC_WITH_INV) && wc[1].invalidated_rkey == k,
	       "MW type 2: SEND with invalidate of its key: received with IBV_WC_WITH_INV and the key (%s, %d)",
	       strerror(ret), n);
	ret = mw_rdma(&l, IBV_WR_RDMA_WRITE, win, k, 16, 14);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW type 2: WRITE after SEND with invalidate: %s (want remote access error)",
	       mw_res(ret));
	qpx_start(l.qpx, 672);
	ibv_wr_bind_mw(l.qpx, mw2, k, &bind.bind_info);
	ibv_wr_set_sge(l.qpx, l.lkey, (uintptr_t)buf, 16);
	qpx_fails(&l, EINVAL, "MW: ibv_wr_bind_mw with an SGE");
	bind.bind_info.mw_access_flags = IBV_ACCESS_ZERO_BASED;
	qpx_start(l.qpx, 673);
	ibv_wr_bind_mw(l.qpx, mw2, k, &bind.bind_info);
	qpx_fails(&l, EINVAL, "MW: ibv_wr_bind_mw zero-based");

	/* Deallocation unbinds: the MR deregisters afterwards. */
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	ret = mw_bind_wr(&l, mw2, ibv_inc_rkey(k), l.mr, win, 64,
			 IBV_ACCESS_REMOTE_READ);
	report(ret == IBV_WC_SUCCESS, "MW type 2: bound again after the invalidation: %s",
	       mw_res(ret));
	ret = ibv_dealloc_mw(mw2);
	report(!ret, "MW: ibv_dealloc_mw of a bound window: %s", strerror(ret));
	mw2 = NULL;
	ret = mw_rdma(&l, IBV_WR_RDMA_READ, win, ibv_inc_rkey(k), 16, 15);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "MW: READ through a deallocated window's key: %s (want remote access error)",
	       mw_res(ret));
	ret = ibv_dereg_mr(l.mr);
	report(!ret, "MW: ibv_dereg_mr once no window is bound: %s", strerror(ret));
	if (!ret)
		l.mr = NULL;
out:
	if (ud)
		ibv_destroy_qp(ud);
	if (mw1)
		ibv_dealloc_mw(mw1);
	if (mw2)
		ibv_dealloc_mw(mw2);
	if (nobind)
		ibv_dereg_mr(nobind);
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	qpx_loop_free(&l);
}

/*
 * ibv_rereg_mr(): the MR changes in place under its keys. Bad input (raw
 * commands where libibverbs would refuse first): driver data, lengths,
 * unmapped pages, access flags; each refusal leaves the MR as it was.
 * With --data, on an RC QP connected to itself: access taken away and
 * given back, new pages, another PD, pages pinned read-only made
 * writable, all through the same rkey; EBUSY while a window is bound.
 */
static int rr_raw(struct ibv_mr *mr, uint32_t flags, uint64_t start,
		  uint64_t len, uint32_t pd_handle, uint32_t access,
		  uint64_t drv)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr body;
		uint64_t drv;
	} req = {
		.hdr = { .command = IB_USER_VERBS_CMD_REREG_MR,
			 .in_words = sizeof(req) / 4,
			 .out_words = sizeof(resp) / 4 },
		.body = { .response = (uintptr_t)&resp,
			  .mr_handle = mr->handle, .flags = flags,
			  .start = start, .length = len, .hca_va = start,
			  .pd_handle = pd_handle, .access_flags = access },
		.drv = drv,
	};

	if (write(mr->context->cmd_fd, &req, sizeof(req)) == sizeof(req))
		return resp.lkey == mr->lkey && resp.rkey == mr->rkey ? 0 : -1;
	return errno;
}

#define RR_RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static void test_rereg_data(struct qpx_loop *l, struct ibv_mr *t, char *tbuf,
			    struct ibv_pd *pd2)
{
	uint32_t rkey = t->rkey, lkey = t->lkey;
	struct ibv_mw *mw;
	struct ibv_mr *ro;
	char *page, *nbuf;
	int ret;

	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, tbuf + 100, rkey, 500, 21);
	report(!ret, "rereg: WRITE through the MR before: %s", mw_res(ret));
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	report(!ret && t->rkey == rkey && t->lkey == lkey,
	       "rereg: REMOTE_WRITE taken away, keys kept (0x%x): %d, %s",
	       t->rkey, ret, strerror(ret ? errno : 0));
	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, tbuf + 100, rkey, 500, 22);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "rereg: WRITE through the same rkey: %s (want remote access error)",
	       mw_res(ret));
	ret = mw_rdma(l, IBV_WR_RDMA_READ, tbuf + 100, rkey, 500, 23);
	report(!ret, "rereg: READ through the same rkey still works: %s", mw_res(ret));
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RR_RW);
	report(!ret, "rereg: REMOTE_WRITE given back: %d", ret);
	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, tbuf + 200, rkey, 500, 24);
	report(!ret, "rereg: WRITE through the same rkey again: %s", mw_res(ret));

	if (posix_memalign((void **)&nbuf, 4096, 8192)) {
		report(0, "rereg: 8 KiB of new pages");
		return;
	}
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nbuf,
			   8192, 0);
	report(!ret && t->rkey == rkey && t->addr == nbuf,
	       "rereg: new pages, the same rkey: %d, %s", ret,
	       strerror(ret ? errno : 0));
	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, nbuf + 3000, rkey, 2000, 25);
	report(!ret, "rereg: WRITE 2000 bytes across the new pages: %s", mw_res(ret));
	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, tbuf + 100, rkey, 64, 26);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "rereg: WRITE to the old pages: %s (want remote access error)",
	       mw_res(ret));

	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_TRANSLATION,
			   pd2, tbuf, 16384, 0);
	report(!ret && t->pd == pd2, "rereg: the first pages, in another PD: %d", ret);
	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, tbuf + 100, rkey, 64, 27);
	report(ret == IBV_WC_REM_ACCESS_ERR,
	       "rereg: WRITE from a QP of the old PD: %s (want remote access error)",
	       mw_res(ret));
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_PD, l->pd, NULL, 0, 0);
	report(!ret, "rereg: back into the QP's PD: %d", ret);
	ret = mw_rdma(l, IBV_WR_RDMA_WRITE, tbuf + 100, rkey, 64, 28);
	report(!ret, "rereg: WRITE from the QP of its PD again: %s", mw_res(ret));

	/* Pinned read-only (untouched pages), made writable: pinned again. */
	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = page != MAP_FAILED ? ibv_reg_mr(l->pd, page, 8192, 0) : NULL;
	report(!!ro, "rereg: an MR over untouched pages, read-only: %s",
	       ro ? "ok" : strerror(errno));
	if (ro) {
		ret = ibv_rereg_mr(ro, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				   RR_RW);
		report(!ret, "rereg: read-only pages made writable: %d", ret);
		ret = mw_rdma(l, IBV_WR_RDMA_WRITE, page + 4000, ro->rkey, 300, 29);
		report(!ret, "rereg: WRITE into them reaches the process's pages: %s",
		       mw_res(ret));
		ibv_dereg_mr(ro);
	}
	if (page != MAP_FAILED)
		munmap(page, 8192);

	/* A window bound to the MR: not reregistered (EBUSY). */
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   RR_RW | IBV_ACCESS_MW_BIND);
	report(!ret, "rereg: windows may be bound (MW_BIND): %d", ret);
	mw = ibv_alloc_mw(l->pd, IBV_MW_TYPE_2);
	ret = mw ? mw_bind_wr(l, mw, ibv_inc_rkey(mw->rkey), t, tbuf, 64,
			      IBV_ACCESS_REMOTE_READ) : -ENOMEM;
	report(ret == IBV_WC_SUCCESS, "rereg: a type 2 window bound to the MR: %s",
	       mw_res(ret));
	errno = 0;
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   RR_RW | IBV_ACCESS_MW_BIND);
	report(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY,
	       "rereg: with a window bound: %d, %s (want %s)", ret,
	       strerror(errno), strerror(EBUSY));
	if (mw)
		ibv_dealloc_mw(mw);
	ret = ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RR_RW);
	report(!ret, "rereg: once the window is gone: %d", ret);
	free(nbuf);
}

static void test_rereg(struct ibv_context *ctx, const struct ibv_device_attr *da,
		       int data)
{
	struct qpx_loop l = {};
	struct ibv_pd *pd2 = NULL;
	struct ibv_mr *t = NULL;
	char *buf, *tbuf;
	void *none;
	int ret;

	if (posix_memalign((void **)&buf, 4096, 2 * 16384)) {
		report(0, "rereg: 32 KiB of pages");
		return;
	}
	tbuf = buf + 16384;
	ret = qpx_loop_init(ctx, &l, IBV_QPT_RC, MW_QP_OPS, buf, 16384,
			    RR_RW | IBV_ACCESS_MW_BIND);
	pd2 = ibv_alloc_pd(ctx);
	t = ret || !pd2 ? NULL :
	    ibv_reg_mr(l.pd, tbuf, 16384, RR_RW | IBV_ACCESS_MW_BIND);
	report(!!t, "rereg: QP, PDs and the MR to reregister: %s",
	       strerror(t ? 0 : ret ?: errno));
	if (!t)
		goto out;
	ret = rr_raw(t, IBV_REREG_MR_CHANGE_ACCESS, 0, 0, 0, RR_RW, 1);
	report(ret == EOPNOTSUPP, "rereg: non-zero driver data: %s (want %s)",
	       strerror(ret), strerror(EOPNOTSUPP));
	ret = rr_raw(t, IBV_REREG_MR_CHANGE_ACCESS, 0, 0, 0, RR_RW, 0);
	report(!ret, "rereg: zero driver data (a newer library): %s, keys kept",
	       ret < 0 ? "new keys" : strerror(ret));
	ret = rr_raw(t, IBV_REREG_MR_CHANGE_TRANSLATION, (uintptr_t)tbuf, 0, 0,
		     0, 0);
	report(ret == EINVAL, "rereg: new pages of length 0: %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	ret = rr_raw(t, IBV_REREG_MR_CHANGE_TRANSLATION, (uintptr_t)tbuf,
		     da->max_mr_size + 4096, 0, 0, 0);
	report(ret == EINVAL, "rereg: new pages beyond max_mr_size: %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	none = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = none == MAP_FAILED ? -1 :
	      rr_raw(t, IBV_REREG_MR_CHANGE_TRANSLATION, (uintptr_t)none, 8192,
		     0, 0, 0);
	report(ret == EFAULT, "rereg: new pages not accessible: %s (want %s)",
	       strerror(ret), strerror(EFAULT));
	if (none != MAP_FAILED)
		munmap(none, 8192);
	ret = rr_raw(t, IBV_REREG_MR_CHANGE_ACCESS, 0, 0, 0,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED, 0);
	report(ret == EOPNOTSUPP, "rereg: zero-based access: %s (want %s)",
	       strerror(ret), strerror(EOPNOTSUPP));
	ret = rr_raw(t, IBV_REREG_MR_CHANGE_ACCESS | IBV_REREG_MR_CHANGE_PD, 0,
		     0, pd2->handle, IBV_ACCESS_REMOTE_WRITE, 0);
	report(ret == EINVAL,
	       "rereg: REMOTE_WRITE without LOCAL_WRITE (and a new PD): %s (want %s)",
	       strerror(ret), strerror(EINVAL));
	if (!data)
		goto out;
	ret = rc_self_connect(l.qp);
	report(!ret, "rereg: QP connected to itself: %s", strerror(ret));
	if (!ret)
		test_rereg_data(&l, t, tbuf, pd2);
out:
	if (t)
		ibv_dereg_mr(t);
	if (pd2)
		ibv_dealloc_pd(pd2);
	qpx_loop_free(&l);
	free(buf);
}

/*
 * Isolation between contexts: a context's mmap offsets reach only its own
 * doorbell page, and a doorbell written to one context's page for another
 * context's QP is ignored by the device (the guest script checks that the
 * device counted it as a bad doorbell).
 */
static void test_isolation(struct ibv_device *dev)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *a, *b;
	struct ibv_qp_attr attr = {};
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	void *page;
	int i, n = 0;

	a = ibv_open_device(dev);
	b = ibv_open_device(dev);
	report(a && b, "isolation: two contexts open");
	if (!a || !b)
		goto out;

	/*
	 * A context's mmap entries: the doorbell page at offset 0, then the
	 * device status page (read-only) at 4096.
	 */
	page = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, a->cmd_fd, 0);
	report(page != MAP_FAILED, "isolation: mmap of the context's own doorbell page");
	report(mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, a->cmd_fd, 3 * 4096) ==
	       MAP_FAILED && errno == EINVAL,
	       "isolation: mmap at an offset the context does not have: EINVAL");
	report(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, a->cmd_fd,
		    4096) == MAP_FAILED && errno == EPERM,
	       "isolation: the device status page cannot be mapped writable: EPERM");
	{
		const struct kite_ib_dev_status *st;

		st = mmap(NULL, 4096, PROT_READ, MAP_SHARED, a->cmd_fd, 4096);
		/* The kernel writes it at any time: one real load. */
		report(st != MAP_FAILED &&
		       __atomic_load_n(&st->state, __ATOMIC_ACQUIRE) ==
		       KITE_IB_DEV_STATE_ALIVE,
		       "isolation: the device status page maps read-only and reads ALIVE");
		if (st != MAP_FAILED)
			munmap((void *)st, 4096);
	}
	report(mmap(NULL, 8192, PROT_WRITE, MAP_SHARED, a->cmd_fd, 0) ==
	       MAP_FAILED, "isolation: mmap larger than the doorbell page refused");
	if (page == MAP_FAILED)
		goto out;

	/* A UD QP of context b in RTS, with an empty CQ. */
	pd = ibv_alloc_pd(b);
	cq = pd ? ibv_create_cq(b, 8, NULL, NULL, 0) : NULL;
	qpia.send_cq = cq;
	qpia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qpia) : NULL;
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = 0x1234;
	if (qp && !ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY)) {
		attr.qp_state = IBV_QPS_RTR;
		ibv_modify_qp(qp, &attr, IBV_QP_STATE);
		attr.qp_state = IBV_QPS_RTS;
		ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	report(qp && qp->state == IBV_QPS_RTS,
	       "isolation: a UD QP of the other context in RTS");
	if (qp) {
		/*
		 * Context a rings b's SQ doorbell as if 3 WQEs had been posted
		 * (they are zeroed slots: executed, they would fail with error
		 * completions and move the QP out of RTS).
		 */
		uint64_t db = (uint64_t)(qp->qp_num & 0xffffff) |
			      (uint64_t)1 << 24 | (uint64_t)3 << 32;

		mmio_write64_le(page, htole64(db));
		for (i = 0; i < 30; i++) {
			n += ibv_poll_cq(cq, 1, &wc);
			usleep(10000);
		}
		memset(&attr, 0, sizeof(attr));
		ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
		report(n == 0 && attr.qp_state == IBV_QPS_RTS,
		       "isolation: the other context's QP ignores the doorbell (%d completions, state %d)",
		       n, attr.qp_state);
		printf("# isolation: wrote a doorbell for QP %u on another context's page\n",
		       qp->qp_num);
		ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	munmap(page, 4096);
out:
	if (a)
		ibv_close_device(a);
	if (b)
		ibv_close_device(b);
}

/* The request as the kernel sees it: core command, then driver data. */
struct mr_cmd {
	struct ibv_reg_mr ibv_cmd;
	uint64_t drv[2];
};

/*
 * Register @len bytes at @buf through the uverbs command with @access and
 * @drv_len bytes of driver data (@drv_val in its last byte); an accepted
 * MR is deregistered. Returns 0 or the errno.
 */
static int mr_try(struct ibv_pd *pd, void *buf, size_t len, int access,
		  size_t drv_len, uint8_t drv_val)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct mr_cmd cmd = {};
	struct verbs_mr vmr = {};
	int ret;

	if (drv_len)
		((uint8_t *)cmd.drv)[drv_len - 1] = drv_val;
	ret = ibv_cmd_reg_mr(pd, buf, len, (uintptr_t)buf, access, &vmr,
			     &cmd.ibv_cmd, sizeof(cmd.ibv_cmd) + drv_len,
			     &resp, sizeof(resp));
	if (!ret)
		ibv_cmd_dereg_mr(&vmr);
	return ret;
}

/*
 * User MRs with what kite_ib does not implement: EOPNOTSUPP, not EINVAL
 * (found by kite_uverbs_fuzz: flags and driver data Kite does not know
 * were refused as bad input).
 */
static void test_mr_flags(struct ibv_context *ctx)
{
	static const struct {
		const char *what;
		int access;
		size_t drv_len;
		uint8_t drv_val;
		int want;
	} tests[] = {
		{ "local write", IBV_ACCESS_LOCAL_WRITE, 0, 0, 0 },
		{ "memory window binding", IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_MW_BIND, 0, 0, 0 },
		{ "zero-based", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED,
		  0, 0, EOPNOTSUPP },
		{ "remote write without local write", IBV_ACCESS_REMOTE_WRITE,
		  0, 0, EINVAL },
		{ "8 bytes of zero driver data", IBV_ACCESS_LOCAL_WRITE, 8, 0,
		  0 },
		{ "16 bytes of driver data, not zero", IBV_ACCESS_LOCAL_WRITE,
		  16, 1, EOPNOTSUPP },
		{ NULL },
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	void *buf = NULL;
	unsigned int i;
	int ret;

	if (!pd || posix_memalign(&buf, 4096, 4096)) {
		report(0, "MR flags: PD and buffer");
		goto out;
	}
	for (i = 0; tests[i].what; i++) {
		ret = mr_try(pd, buf, 4096, tests[i].access, tests[i].drv_len,
			     tests[i].drv_val);
		report(ret == tests[i].want, "register MR with %s: %s (want %s)",
		       tests[i].what, ret ? strerror(ret) : "accepted",
		       tests[i].want ? strerror(tests[i].want) : "accepted");
	}
out:
	free(buf);
	if (pd)
		ibv_dealloc_pd(pd);
}

/* The smallest log2 of a ring with more slots than @n. */
static unsigned int log_above(unsigned int n)
{
	unsigned int l = 0;

	while (l < 31 && (1U << l) <= n)
		l++;
	return l;
}

/* libkite's QP create with @cap must fail with @want. */
static void lk_qp_bad(struct ibv_pd *pd, struct ibv_cq *cq,
		      enum ibv_qp_type type, const struct ibv_qp_cap *cap,
		      const char *what, int want)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type, .cap = *cap,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &a);
	report(!qp && errno == want, "libkite: create QP with %s: %s (want %s)",
	       what, qp ? "accepted" : strerror(errno), strerror(want));
	if (qp)
		ibv_destroy_qp(qp);
}

/*
 * The advertised limits are honest, through the ABI and through libkite: a
 * CQ of exactly max_cqe CQEs and RC and UD QPs of exactly max_qp_wr work
 * requests and max_sge SGEs are created; one more is refused with EINVAL.
 * What Kite does not implement (raw packet QPs) is
 * refused with EOPNOTSUPP, as applications and rdma-core's tests expect.
 */
static void test_limits(struct ibv_context *ctx,
			const struct ibv_device_attr *da)
{
	static const struct {
		enum ibv_qp_type type;
		const char *name;
	} unsupported[] = {
		{ IBV_QPT_RAW_PACKET, "type RAW_PACKET" },
		{ IBV_QPT_DRIVER, "type DRIVER" },
		{ 0, NULL },
	};
	const struct ibv_qp_cap max = {
		.max_send_wr = da->max_qp_wr, .max_recv_wr = da->max_qp_wr,
		.max_send_sge = da->max_sge, .max_recv_sge = da->max_sge,
	};
	unsigned int l = log_above(da->max_cqe), i;
	struct ibv_qp_init_attr a = {};
	struct ibv_qp_cap cap;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ucq c;
	int ret;

	/* The ABI: max_cqe CQEs in the deepest ring (one slot free). */
	ret = -cq_create(ctx, &c, da->max_cqe, l, NULL);
	report(!ret && c.cq.cqe >= da->max_cqe,
	       "create CQ of max_cqe = %d CQEs in 2^%u slots: %s, cqe %d",
	       da->max_cqe, l, strerror(ret), c.cq.cqe);
	if (!ret)
		ibv_cmd_destroy_cq(&c.cq);
	cq_free(&c);
	cq_bad(ctx, "max_cqe + 1 CQEs in the deepest ring", EINVAL,
	       da->max_cqe + 1, l, NULL);

	/* libkite. */
	cq = ibv_create_cq(ctx, da->max_cqe, NULL, NULL, 0);
	report(cq && cq->cqe >= da->max_cqe,
	       "libkite: create CQ of max_cqe = %d CQEs: %s, cqe %d",
	       da->max_cqe, cq ? "ok" : strerror(errno), cq ? cq->cqe : 0);
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(ctx, da->max_cqe + 1, NULL, NULL, 0);
	report(!cq && errno == EINVAL,
	       "libkite: create CQ of max_cqe + 1 CQEs: %s (want %s)",
	       cq ? "accepted" : strerror(errno), strerror(EINVAL));
	if (cq)
		ibv_destroy_cq(cq);

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		report(0, "limits: PD and CQ: %s", strerror(errno));
		goto out;
	}
	a.send_cq = cq;
	a.recv_cq = cq;
	for (i = 0; i < 2; i++) {
		const char *t = i ? "UD" : "RC";

		a.qp_type = i ? IBV_QPT_UD : IBV_QPT_RC;
		a.cap = max;
		qp = ibv_create_qp(pd, &a);
		report(qp && a.cap.max_send_wr >= max.max_send_wr &&
		       a.cap.max_recv_wr >= max.max_recv_wr &&
		       a.cap.max_send_sge >= max.max_send_sge &&
		       a.cap.max_recv_sge >= max.max_recv_sge,
		       "libkite: create %s QP of max_qp_wr = %d WRs and max_sge = %d SGEs: %s",
		       t, da->max_qp_wr, da->max_sge,
		       qp ? "ok" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
		cap = max;
		cap.max_send_wr++;
		lk_qp_bad(pd, cq, a.qp_type, &cap, i ? "UD max_qp_wr + 1 send WRs" :
			  "RC max_qp_wr + 1 send WRs", EINVAL);
		cap = max;
		cap.max_recv_wr++;
		lk_qp_bad(pd, cq, a.qp_type, &cap, i ? "UD max_qp_wr + 1 receive WRs" :
			  "RC max_qp_wr + 1 receive WRs", EINVAL);
		cap = max;
		cap.max_send_sge++;
		lk_qp_bad(pd, cq, a.qp_type, &cap, i ? "UD max_sge + 1 send SGEs" :
			  "RC max_sge + 1 send SGEs", EINVAL);
		cap = max;
		cap.max_recv_sge++;
		lk_qp_bad(pd, cq, a.qp_type, &cap, i ? "UD max_sge + 1 receive SGEs" :
			  "RC max_sge + 1 receive SGEs", EINVAL);
	}
	cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
				   .max_send_sge = 1, .max_recv_sge = 1 };
	for (i = 0; unsupported[i].name; i++)
		lk_qp_bad(pd, cq, unsupported[i].type, &cap,
			  unsupported[i].name, EOPNOTSUPP);
	{
		/* SRQs at the advertised limits, and one beyond. */
		struct ibv_device_attr da = {};
		struct ibv_srq_init_attr sa = {};
		struct ibv_srq *srq;

		ibv_query_device(pd->context, &da);
		sa.attr.max_wr = da.max_srq_wr;
		sa.attr.max_sge = da.max_srq_sge;
		srq = ibv_create_srq(pd, &sa);
		report(!!srq,
		       "libkite: create SRQ of max_srq_wr (%d) WRs, max_srq_sge (%d) SGEs: %s",
		       da.max_srq_wr, da.max_srq_sge, srq ? "accepted" : strerror(errno));
		if (srq)
			ibv_destroy_srq(srq);
		sa.attr.max_wr = da.max_srq_wr + 1;
		errno = 0;
		srq = ibv_create_srq(pd, &sa);
		report(!srq && errno == EINVAL,
		       "libkite: create SRQ of max_srq_wr + 1 WRs: %s (want %s)",
		       srq ? "accepted" : strerror(errno), strerror(EINVAL));
		if (srq)
			ibv_destroy_srq(srq);
	}
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

/*
 * One child of test_number_reuse(): create and destroy a CQ and a UD QP on
 * it @n times in a context of its own. Exits with the number of failed
 * creates and destroys (at most 100).
 */
static void number_reuse_child(struct ibv_device *dev, int n)
{
	struct ibv_qp_init_attr qpia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	int i, bad = 0;

	if (!pd)
		_exit(100);
	for (i = 0; i < n && bad < 100; i++) {
		struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		struct ibv_qp *qp;

		if (!cq) {
			printf("# number reuse: create CQ %d: %s\n", i,
			       strerror(errno));
			bad++;
			continue;
		}
		qpia.send_cq = cq;
		qpia.recv_cq = cq;
		qp = ibv_create_qp(pd, &qpia);
		if (!qp) {
			printf("# number reuse: create QP %d: %s\n", i,
			       strerror(errno));
			bad++;
		} else if (ibv_destroy_qp(qp)) {
			bad++;
		}
		if (ibv_destroy_cq(cq))
			bad++;
	}
	fflush(stdout);
	_exit(bad);
}

/*
 * Two processes create and destroy CQs and QPs as fast as they can: the
 * device hands a number it has just freed in one context to the other
 * one's next object at once. Every create must succeed: kite_ib once
 * withdrew a CQ or QP from its lookup table only after the device had
 * destroyed it, and a create that got the number in between failed with
 * EIO ("CQN n already in use").
 */
static void test_number_reuse(struct ibv_device *dev)
{
	int i, st, bad = 0, n = 150;
	pid_t pid[2];

	fflush(stdout);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i])
			number_reuse_child(dev, n);
	}
	for (i = 0; i < 2; i++) {
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i] ||
		    !WIFEXITED(st))
			bad += 100;
		else
			bad += WEXITSTATUS(st);
	}
	report(!bad, "number reuse: 2 processes x %d CQ+QP create/destroy, %d failed",
	       n, bad);
}

/*
 * UD multicast: ibv_attach_mcast() and ibv_detach_mcast() (libkite passes
 * them to the kernel, IB_USER_VERBS_CMD_ATTACH_MCAST / DETACH_MCAST) with
 * good and bad arguments, the device's limits, detaching at QP destroy,
 * and with --data a send to a group that every attached QP with the
 * group's Q_Key receives through the device's multicast loopback.
 */
static void mc_gid(union ibv_gid *gid, int v6, unsigned int n)
{
	memset(gid, 0, sizeof(*gid));
	if (v6) {
		gid->raw[0] = 0xff;
		gid->raw[1] = 0x0e;
	} else {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		gid->raw[12] = 239;
		gid->raw[13] = 77;
	}
	gid->raw[14] = n >> 8;
	gid->raw[15] = n & 0xff;
}

/* The index of an IPv4 (IPv4-mapped) or IPv6 RoCE v2 GID, or -1. */
static int mc_sgid(struct ibv_context *ctx, int v6)
{
	static const uint8_t v4mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};
	struct ibv_gid_entry e;
	int i;

	for (i = 0; i < 16; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (!memcmp(e.gid.raw, v4mapped, 12) == !v6)
			return i;
	}
	return -1;
}

/* A raw IB_USER_VERBS_CMD_ATTACH_MCAST or DETACH_MCAST: 0 or an errno. */
static int mc_raw(struct ibv_context *ctx, uint32_t cmd, uint32_t qp_handle,
		  const union ibv_gid *gid, uint16_t mlid, uint16_t rsvd)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_attach_mcast body;
	} req = {
		.hdr = { .command = cmd, .in_words = sizeof(req) / 4 },
		.body = { .qp_handle = qp_handle, .mlid = mlid,
			  .reserved = rsvd },
	};

	memcpy(req.body.gid, gid->raw, 16);
	if (write(ctx->cmd_fd, &req, sizeof(req)) == sizeof(req))
		return 0;
	return errno;
}

/* Send @len bytes from @from to group @gid through @ah; 0 or an errno. */
static int mc_send(struct ud_loop *from, struct ibv_ah *ah, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)from->buf + 2048,
		.length = len,
		.lkey = from->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x5e,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = 0xffffff,
			   .remote_qkey = UD_LOOP_QKEY },
	}, *bad;
	uint32_t i;

	for (i = 0; i < len; i++)
		from->buf[2048 + i] = (char)(i * 3 + 1);
	return ibv_post_send(from->qp, &wr, &bad);
}

static int mc_recv(struct ud_loop *u, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)u->buf,
		.length = 2048,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
		*bad;

	memset(u->buf, 0, 2048);
	return ibv_post_recv(u->qp, &wr, &bad);
}

static void test_mcast_data(struct ibv_context *ctx, int v6)
{
	const char *fam = v6 ? "IPv6 ff0e::100" : "IPv4 239.77.1.0";
	struct ud_loop u[3];
	struct ibv_ah_attr aha = {
		.is_global = 1,
		.grh.hop_limit = 8,
		.port_num = 1,
	};
	struct ibv_qp_attr qa = { .qkey = 0x22222222 };
	struct ibv_ah *ah = NULL;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	unsigned int got = 0, bad = 0, n = 0, i;
	int ret, sgid = mc_sgid(ctx, v6);

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	memset(u, 0, sizeof(u));
	if (!cq || sgid < 0) {
		report(0, "mcast %s: CQ and a RoCE v2 source GID (%d)", fam, sgid);
		if (cq)
			ibv_destroy_cq(cq);
		return;
	}
	mc_gid(&aha.grh.dgid, v6, 0x100);
	aha.grh.sgid_index = sgid;
	ret = 0;
	for (i = 0; i < 3 && !ret; i++)
		ret = ud_loop_init(ctx, cq, &u[i]);
	/* QP 2 has another Q_Key: its copy is dropped. */
	ret = ret ?: ibv_modify_qp(u[2].qp, &qa, IBV_QP_QKEY);
	for (i = 0; i < 3 && !ret; i++)
		ret = ibv_attach_mcast(u[i].qp, &aha.grh.dgid, 0) ?:
		      mc_recv(&u[i], 100 + i);
	if (!ret) {
		ah = ibv_create_ah(u[0].pd, &aha);
		ret = ah ? 0 : errno;
	}
	ret = ret ?: mc_send(&u[0], ah, 300);
	if (ret) {
		report(0, "mcast %s: three attached QPs, a send to the group: %s",
		       fam, strerror(ret));
		goto out;
	}
	/* The send, QP 0's own copy and QP 1's; QP 2 gets nothing. */
	while (n < 3 && poll_one(cq, &wc) == 1) {
		n++;
		if (wc.status != IBV_WC_SUCCESS) {
			bad++;
		} else if (wc.opcode == IBV_WC_SEND) {
			got |= 1;
		} else if (wc.opcode == IBV_WC_RECV && wc.byte_len == 340 &&
			   wc.src_qp == u[0].qp->qp_num &&
			   (wc.wc_flags & IBV_WC_GRH) &&
			   (wc.wr_id == 100 || wc.wr_id == 101) &&
			   wc.qp_num == u[wc.wr_id - 100].qp->qp_num &&
			   !memcmp(u[wc.wr_id - 100].buf + 40, u[0].buf + 2048,
				   300)) {
			got |= 2 << (wc.wr_id - 100);
		} else {
			bad++;
		}
	}
	report(got == 7 && !bad && poll_one(cq, &wc) == 0,
	       "mcast %s: sent to the group, received by both QPs with its Q_Key (0x%x, %u bad)",
	       fam, got, bad);
	/* QP 1 leaves: with receives posted on QPs 0 and 1, only QP 0 gets one. */
	ret = ibv_detach_mcast(u[1].qp, &aha.grh.dgid, 0) ?:
	      mc_recv(&u[0], 100) ?: mc_recv(&u[1], 101) ?:
	      mc_send(&u[0], ah, 100);
	got = 0;
	for (n = 0; !ret && n < 3 && poll_one(cq, &wc) == 1; n++)
		got |= wc.opcode == IBV_WC_SEND ? 1 :
		       wc.wr_id == 100 || wc.wr_id == 101 ?
		       2 << (wc.wr_id - 100) : 8;
	report(!ret && got == 3,
	       "mcast %s: after QP 1 detaches only QP 0 receives (0x%x): %s",
	       fam, got, strerror(ret));
out:
	if (ah)
		ibv_destroy_ah(ah);
	for (i = 0; i < 3; i++)
		if (u[i].qp)
			ud_loop_free(&u[i]);
	ibv_destroy_cq(cq);
}

/*
 * Open another context on @dev, attach a UD QP of it to 64 groups and close
 * the context with the QP alive and attached; 0 or an errno.
 */
static int mc_fill_and_close(struct ibv_device *dev)
{
	struct ibv_qp_init_attr ud = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *b = ibv_open_device(dev);
	struct ibv_pd *pd = b ? ibv_alloc_pd(b) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(b, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp;
	union ibv_gid gid;
	unsigned int i;
	int ret = 0;

	ud.send_cq = cq;
	ud.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &ud) : NULL;
	if (!qp)
		ret = errno ? errno : EIO;
	for (i = 0; i < 64 && !ret; i++) {
		mc_gid(&gid, 0, 3000 + i);
		ret = ibv_attach_mcast(qp, &gid, 0);
	}
	if (b && ibv_close_device(b) && !ret)
		ret = EIO;
	return ret;
}

static void test_mcast(struct ibv_context *ctx, const struct ibv_device_attr *da,
		       int data)
{
	struct ibv_qp_init_attr ud = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr rc;
	struct ibv_qp *qp, *qp2, *rcqp;
	union ibv_gid gid, own;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	unsigned int i, n;
	int ret;

	report(da->max_mcast_grp == 64 && da->max_mcast_qp_attach == 32 &&
	       da->max_total_mcast_qp_attach == 512,
	       "mcast: query device: groups %d, QPs a group %d, attachments %d",
	       da->max_mcast_grp, da->max_mcast_qp_attach,
	       da->max_total_mcast_qp_attach);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ud.send_cq = cq;
	ud.recv_cq = cq;
	rc = ud;
	rc.qp_type = IBV_QPT_RC;
	qp = pd && cq ? ibv_create_qp(pd, &ud) : NULL;
	qp2 = qp ? ibv_create_qp(pd, &ud) : NULL;
	rcqp = qp2 ? ibv_create_qp(pd, &rc) : NULL;
	if (!rcqp || ibv_query_gid(ctx, 1, 0, &own)) {
		report(0, "mcast: PD, CQ, two UD QPs and an RC QP: %s",
		       strerror(errno));
		goto out;
	}

	mc_gid(&gid, 0, 1);
	ret = ibv_attach_mcast(qp, &gid, 0);
	report(!ret, "mcast: attach a UD QP (RESET) to 239.77.0.1: %s",
	       strerror(ret));
	ret = ibv_attach_mcast(qp, &gid, 0);
	report(!ret, "mcast: attaching again succeeds, once (uverbs keeps the list): %s",
	       strerror(ret));
	ret = ibv_attach_mcast(qp2, &gid, 0);
	report(!ret, "mcast: a second UD QP in the same group: %s",
	       strerror(ret));
	ret = ibv_attach_mcast(rcqp, &gid, 0);
	report(ret == EINVAL, "mcast: attach an RC QP: EINVAL (%s)",
	       strerror(ret));
	ret = ibv_attach_mcast(qp, &own, 0);
	report(ret == EINVAL, "mcast: attach to the port's own unicast GID: EINVAL (%s)",
	       strerror(ret));
	gid.raw[12] = 240;
	ret = ibv_attach_mcast(qp, &gid, 0);
	report(ret == EINVAL, "mcast: attach to ::ffff:240.77.0.1 (not multicast): EINVAL (%s)",
	       strerror(ret));
	mc_gid(&gid, 0, 1);
	ret = mc_raw(ctx, IB_USER_VERBS_CMD_ATTACH_MCAST, 0x7fffffff, &gid, 0, 0);
	report(ret == ENOENT, "mcast: raw ATTACH_MCAST, a handle of no QP: ENOENT (%s)",
	       strerror(ret));
	ret = mc_raw(ctx, IB_USER_VERBS_CMD_DETACH_MCAST, 0x7fffffff, &gid, 0, 0);
	report(ret == ENOENT, "mcast: raw DETACH_MCAST, a handle of no QP: ENOENT (%s)",
	       strerror(ret));
	ret = mc_raw(ctx, IB_USER_VERBS_CMD_ATTACH_MCAST, qp->handle, &gid, 0, 0);
	report(!ret, "mcast: raw ATTACH_MCAST to the group again: succeeds once (%s)",
	       strerror(ret));
	mc_gid(&gid, 1, 2);
	ret = mc_raw(ctx, IB_USER_VERBS_CMD_ATTACH_MCAST, rcqp->handle, &gid, 0, 0);
	report(ret == EINVAL, "mcast: raw ATTACH_MCAST of an RC QP to ff0e::2: EINVAL (%s)",
	       strerror(ret));
	ret = mc_raw(ctx, IB_USER_VERBS_CMD_DETACH_MCAST, qp->handle, &gid, 0, 0);
	report(ret == EINVAL, "mcast: raw DETACH_MCAST from a group the QP is not in: EINVAL (%s)",
	       strerror(ret));

	mc_gid(&gid, 1, 3);
	ret = ibv_detach_mcast(qp, &gid, 0);
	report(ret == EINVAL, "mcast: detach from a group nobody joined: EINVAL (%s)",
	       strerror(ret));
	mc_gid(&gid, 0, 1);
	ret = ibv_detach_mcast(qp, &gid, 0);
	report(!ret, "mcast: detach: %s", strerror(ret));
	ret = ibv_detach_mcast(qp, &gid, 0);
	report(ret == EINVAL, "mcast: detach again: EINVAL (%s)", strerror(ret));
	ret = ibv_detach_mcast(rcqp, &gid, 0);
	report(ret == EINVAL, "mcast: detach an RC QP: EINVAL (%s)",
	       strerror(ret));

	/* 64 groups: qp2 is in one, 63 more fill the table. */
	for (i = 2, ret = 0; i <= 64 && !ret; i++) {
		mc_gid(&gid, i & 1, i);
		ret = ibv_attach_mcast(qp2, &gid, 0);
	}
	report(i == 65 && !ret, "mcast: a QP in 64 groups (%u): %s", i - 1,
	       strerror(ret));
	mc_gid(&gid, 1, 1000);
	ret = ibv_attach_mcast(qp, &gid, 0);
	report(ret == ENOMEM, "mcast: a 65th group: ENOMEM (%s)", strerror(ret));
	/* The core refuses a user destroy of an attached QP; it stays intact. */
	ret = ibv_destroy_qp(qp2);
	report(ret == EBUSY, "mcast: destroy a QP attached to 64 groups: EBUSY (%s)",
	       strerror(ret));
	mc_gid(&gid, 0, 1);
	ret = ibv_detach_mcast(qp2, &gid, 0);
	for (i = 2; i <= 64 && !ret; i++) {
		mc_gid(&gid, i & 1, i);
		ret = ibv_detach_mcast(qp2, &gid, 0);
	}
	ret = ret ?: ibv_destroy_qp(qp2);
	report(!ret, "mcast: detached from its 64 groups, it is destroyed: %s",
	       strerror(ret));
	if (!ret)
		qp2 = NULL;
	/*
	 * A context closed with a QP in 64 groups: the kernel detaches it
	 * (kite_ib's detach_mcast) before destroying it, so the device's
	 * table is free for 64 new groups.
	 */
	ret = mc_fill_and_close(ctx->device);
	report(!ret, "mcast: a second context's QP joins 64 groups, the context closes: %s",
	       strerror(ret));
	for (n = 0, ret = 0; n < 64 && !ret; n++) {
		mc_gid(&gid, 1, 2000 + n);
		ret = ibv_attach_mcast(qp, &gid, 0);
	}
	report(n == 64 && !ret, "mcast: its groups were freed: a QP joins 64 new ones (%u): %s",
	       n, strerror(ret));
	for (i = 0, ret = 0; i < 64 && !ret; i++) {
		mc_gid(&gid, 1, 2000 + i);
		ret = ibv_detach_mcast(qp, &gid, 0);
	}
	report(i == 64 && !ret, "mcast: and leaves them: %s", strerror(ret));
	if (data) {
		test_mcast_data(ctx, 0);
		test_mcast_data(ctx, 1);
	}
out:
	if (rcqp)
		ibv_destroy_qp(rcqp);
	if (qp2)
		ibv_destroy_qp(qp2);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

int main(int argc, char **argv)
{
	int data = argc > 2 && !strcmp(argv[2], "--data");
	const char *name = argc > 1 ? argv[1] : "kite0";
	struct ibv_device **list, *dev = NULL;
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	int i, n, ret;

	if (argc > 2 && !strcmp(argv[2], "--phc-near"))
		return phc_near(name);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		report(0, "device %s found", name);
		return 1;
	}
	ctx = ibv_open_device(dev);
	if (argc > 3 && !strcmp(argv[2], "--hold"))
		return ctx ? hold_qp(ctx, atoi(argv[3])) : 1;
	if (argc > 3 && !strcmp(argv[2], "--await-fatal"))
		return ctx ? await_fatal(ctx, atoi(argv[3])) : 1;
	report(!!ctx, "open %s", name);
	if (!ctx)
		return 1;
	ret = ibv_query_device(ctx, &da);
	report(!ret, "query device: %s", strerror(ret));
	if (ret)
		return 1;

	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (ro_page == MAP_FAILED)
		ro_page = NULL;

	test_cqs(ctx, &da);
	test_qps(ctx, &da);
	test_srqs(ctx, &da);
	test_provider(ctx, data);
	test_cq_ex(ctx, data);
	test_modify_cq(ctx);
	test_qp_ex_create(ctx);
	test_parent_domain(ctx);
	test_thread_domain(ctx, data);
	if (data)
		test_srq_resize(ctx);
	test_uc(ctx, data);
	test_xrc(ctx, &da, data);
	test_kernel_post(ctx);
	if (data) {
		test_cq_overflow(ctx);
		test_qp_recover(ctx);
		test_qp_ex_rc(ctx);
		test_qp_ex_flush(ctx);
		test_qp_ex_ud(ctx);
		test_dm(ctx);
		test_dmabuf(ctx);
		test_import(ctx);
		test_phc(name);
		test_timestamps(ctx, name);
	}
	test_mw(ctx, &da, data);
	test_rereg(ctx, &da, data);
	test_isolation(dev);
	test_number_reuse(dev);
	test_mr_flags(ctx);
	test_limits(ctx, &da);
	test_mcast(ctx, &da, data);

	ret = ibv_close_device(ctx);
	report(!ret, "close %s", name);
	ibv_free_device_list(list);
	printf("%d passed, %d failed\n", passed, failed);
	return failed > 100 ? 100 : failed;
}
