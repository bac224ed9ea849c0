// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: queue pair verbs, post_send and post_recv.
 *
 * The send and receive queues are rings of fixed-stride WQEs: in coherent
 * DMA memory for kernel QPs (kite_ib_hwq_alloc()), whose WQEs are built by
 * the pure builders of kite_ib_wqe.c; in the library's memory, pinned
 * with ib_umem, for user QPs (kite_ib_hwq_alloc_user()). A QP
 * is published in &kite_ib_dev.qp_xa for EQE dispatch and withdrawn with
 * the protocol described at kite_ib_ref_get().
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <rdma/kite-abi.h>

#include "kite_ib.h"

/* Send WQE: the control segment, then the largest opcode segments. */
#define KITE_IB_SQ_RC_SEG_SIZE						\
	max(sizeof(struct kite_wqe_raddr) + sizeof(struct kite_wqe_atomic), \
	    sizeof(struct kite_wqe_reg_mr))
#define KITE_IB_SQ_UD_SEG_SIZE		sizeof(struct kite_wqe_ud)

/*
 * The bytes a send WQE of a @type QP has before its SGEs or inline data
 * (UC and XRC initiators are sized as RC: the remote address segment is
 * the one they use).
 */
static u32 kite_ib_sq_fixed_size(u32 type)
{
	return sizeof(struct kite_wqe_ctrl) +
	       (type == KITE_QPT_RC || type == KITE_QPT_UC ||
		type == KITE_QPT_XRC_INI ?
			KITE_IB_SQ_RC_SEG_SIZE : KITE_IB_SQ_UD_SEG_SIZE);
}

/**
 * kite_ib_wq_stride() - the WQE stride a send or receive queue needs
 * @send: the send queue (else the receive queue)
 * @type: KITE_QPT_RC, KITE_QPT_UC, KITE_QPT_UD, KITE_QPT_GSI or
 *	KITE_QPT_XRC_INI (send queues only)
 * @max_sge: SGEs a WQE must hold
 * @max_inline: send queues: inline bytes a WQE must hold
 *
 * A send WQE holds the control segment, the largest opcode segments of
 * its QP type (RC and UC: remote address and atomic, or REG_MR; UD and
 * GSI: the address vector) and then @max_sge SGEs or @max_inline bytes,
 * whichever is larger. A receive WQE holds its header and @max_sge SGEs. The
 * stride is the smallest power of two at least KITE_WQE_MIN_SHIFT wide
 * that holds that (prm_qp.rst).
 *
 * Return: the stride in bytes (64 .. 1024), or -EINVAL if the WQE does
 * not fit in the largest stride or @type is unknown.
 */
int kite_ib_wq_stride(bool send, u32 type, u32 max_sge, u32 max_inline)
{
	u64 size;

	if (type != KITE_QPT_RC && type != KITE_QPT_UC &&
	    type != KITE_QPT_UD && type != KITE_QPT_GSI &&
	    (type != KITE_QPT_XRC_INI || !send))
		return -EINVAL;
	if (send)
		size = (u64)kite_ib_sq_fixed_size(type) +
		       max_t(u64, (u64)max_sge * sizeof(struct kite_wqe_sge),
			     max_inline);
	else
		size = sizeof(struct kite_wqe_recv) +
		       (u64)max_sge * sizeof(struct kite_wqe_sge);
	if (size > BIT(KITE_WQE_MAX_SHIFT))
		return -EINVAL;
	return max_t(u32, roundup_pow_of_two((u32)size),
		     BIT(KITE_WQE_MIN_SHIFT));
}

/**
 * kite_ib_qp_db() - the doorbell word of a send or receive queue
 * @qpn: the QP's number
 * @type: KITE_DB_TYPE_SQ or KITE_DB_TYPE_RQ
 * @pi: the queue's producer counter (free-running; sent modulo 2^16)
 *
 * Return: the 64-bit value for kite_ib_ring_db().
 */
u64 kite_ib_qp_db(u32 qpn, u32 type, u32 pi)
{
	return FIELD_PREP(KITE_DB_OBJ, qpn & KITE_OBJ_MASK) |
	       FIELD_PREP(KITE_DB_TYPE, type) |
	       FIELD_PREP(KITE_DB_PI, pi & KITE_WQ_IDX_MASK);
}

/**
 * kite_ib_wq_full() - whether a work queue has no free entry
 * @pi: the producer counter
 * @ci: the consumer counter; either free-running or the 16-bit WQE index
 *	the device reports (&kite_cqe.wqe_idx)
 * @depth: the queue's depth, a power of two of at most 2^12
 *
 * The difference is taken modulo 2^16, so it is right across the wrap of
 * the 16-bit WQE index as well as of the 32-bit counters.
 *
 * Return: true if @depth WQEs (or, on corrupt counters, more) are
 * outstanding.
 */
bool kite_ib_wq_full(u32 pi, u32 ci, u32 depth)
{
	return ((pi - ci) & KITE_WQ_IDX_MASK) >= depth;
}

/* ------------------------------------------------------------------ */
/* Create and destroy                                                  */
/* ------------------------------------------------------------------ */

static int kite_ib_qp_type(enum ib_qp_type type, u32 *kite_type)
{
	switch (type) {
	case IB_QPT_RC:
		*kite_type = KITE_QPT_RC;
		return 0;
	case IB_QPT_UC:
		*kite_type = KITE_QPT_UC;
		return 0;
	case IB_QPT_UD:
		*kite_type = KITE_QPT_UD;
		return 0;
	case IB_QPT_GSI:
		*kite_type = KITE_QPT_GSI;
		return 0;
	case IB_QPT_XRC_INI:
		*kite_type = KITE_QPT_XRC_INI;
		return 0;
	case IB_QPT_XRC_TGT:
		*kite_type = KITE_QPT_XRC_TGT;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int kite_ib_check_caps(struct kite_ib_dev *dev,
			      const struct ib_qp_cap *cap)
{
	const struct kite_ib_caps *c = &dev->caps;

	if (cap->max_send_wr > c->max_qp_wr ||
	    cap->max_recv_wr > c->max_qp_wr ||
	    cap->max_send_sge > c->max_send_sge ||
	    cap->max_recv_sge > c->max_recv_sge ||
	    cap->max_inline_data > c->max_inline ||
	    cap->max_send_sge > KITE_MAX_SGE ||
	    cap->max_recv_sge > KITE_MAX_SGE ||
	    cap->max_inline_data > KITE_MAX_INLINE) {
		ibdev_dbg(&dev->ibdev,
			  "QP caps out of range: wr %u/%u sge %u/%u inline %u\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data);
		return -EINVAL;
	}
	return 0;
}

/* A queue's depth for @wr requested work requests: 2 .. 2^12, or 0. */
static u32 kite_ib_wq_depth(u32 wr)
{
	u32 depth = max_t(u32, roundup_pow_of_two(max_t(u32, wr, 1)), 2);

	return depth > BIT(KITE_WQ_MAX_LOG_DEPTH) ? 0 : depth;
}

static u32 kite_ib_wq_cfg(const struct kite_ib_wq *wq)
{
	return FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, ilog2(wq->hwq.depth)) |
	       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, wq->hwq.entry_shift);
}

static int kite_ib_wq_alloc(struct kite_ib_dev *dev, struct kite_ib_wq *wq,
			    u32 depth, int stride, bool send)
{
	int err;

	err = kite_ib_hwq_alloc(dev, &wq->hwq, depth, ilog2(stride));
	if (err)
		return err;
	wq->wr_id = kcalloc(depth, sizeof(*wq->wr_id), GFP_KERNEL);
	if (!wq->wr_id)
		goto err_free_hwq;
	if (!send) {
		wq->len = kcalloc(depth, sizeof(*wq->len), GFP_KERNEL);
		if (!wq->len)
			goto err_free_wr_id;
		return 0;
	}
	wq->opcode = kcalloc(depth, sizeof(*wq->opcode), GFP_KERNEL);
	if (!wq->opcode)
		goto err_free_wr_id;
	return 0;

err_free_wr_id:
	kfree(wq->wr_id);
	wq->wr_id = NULL;
err_free_hwq:
	kite_ib_hwq_free(dev, &wq->hwq);
	return -ENOMEM;
}

static void kite_ib_wq_free(struct kite_ib_dev *dev, struct kite_ib_wq *wq)
{
	kfree(wq->opcode);
	kfree(wq->len);
	kfree(wq->wr_id);
	kite_ib_hwq_free(dev, &wq->hwq);
}

/* QPN 1 is the GSI QP's, and only its; QPN 0 does not exist. */
static bool kite_ib_qpn_ok(u32 type, u32 qpn)
{
	if (!qpn || qpn > KITE_OBJ_MASK)
		return false;
	if (type == KITE_QPT_GSI)
		return qpn == 1;
	return qpn != 1;
}

/* The SGEs (or inline bytes) a send WQE of @stride bytes holds. */
static u32 kite_ib_sq_room(u32 type, int stride)
{
	return stride - kite_ib_sq_fixed_size(type);
}

/* A kernel QP's queues, sized for @cap. */
static int kite_ib_qp_alloc_kernel(struct kite_ib_dev *dev,
				   struct kite_ib_qp *qp,
				   const struct ib_qp_cap *cap, bool srq)
{
	int sq_stride, rq_stride, err;
	u32 sq_depth, rq_depth;

	sq_depth = kite_ib_wq_depth(cap->max_send_wr);
	rq_depth = kite_ib_wq_depth(cap->max_recv_wr);
	sq_stride = kite_ib_wq_stride(true, qp->type, cap->max_send_sge,
				      cap->max_inline_data);
	rq_stride = kite_ib_wq_stride(false, qp->type, cap->max_recv_sge, 0);
	if (srq) {
		/* No RQ: receives come from the SRQ. */
		if (!sq_depth || sq_stride < 0) {
			ibdev_dbg(&dev->ibdev,
				  "QP send queue too large: wr %u sge %u inline %u\n",
				  cap->max_send_wr, cap->max_send_sge,
				  cap->max_inline_data);
			return -EINVAL;
		}
		return kite_ib_wq_alloc(dev, &qp->sq, sq_depth, sq_stride,
					true);
	}
	if (!sq_depth || !rq_depth || sq_stride < 0 || rq_stride < 0) {
		ibdev_dbg(&dev->ibdev,
			  "QP queues too large: wr %u/%u sge %u/%u inline %u\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data);
		return -EINVAL;
	}
	err = kite_ib_wq_alloc(dev, &qp->sq, sq_depth, sq_stride, true);
	if (err)
		return err;
	err = kite_ib_wq_alloc(dev, &qp->rq, rq_depth, rq_stride, false);
	if (err)
		kite_ib_wq_free(dev, &qp->sq);
	return err;
}

/*
 * One queue of a user QP: the library's geometry must hold what was asked
 * for (@wr work requests, @need bytes per WQE) within the device's limits.
 */
static int kite_ib_user_wq(struct kite_ib_dev *dev, struct kite_ib_wq *wq,
			   const char *name, u64 addr, u32 log_depth,
			   u32 wqe_shift, u32 wr, int need)
{
	int err;

	if (need < 0 || !log_depth || log_depth > KITE_WQ_MAX_LOG_DEPTH ||
	    BIT(log_depth) < wr || wqe_shift < KITE_WQE_MIN_SHIFT ||
	    wqe_shift > KITE_WQE_MAX_SHIFT || BIT(wqe_shift) < need) {
		ibdev_dbg(&dev->ibdev,
			  "%s: 2^%u WQEs of 2^%u bytes cannot hold %u WQEs of %d bytes\n",
			  name, log_depth, wqe_shift, wr, need);
		return -EINVAL;
	}
	err = kite_ib_hwq_alloc_user(dev, &wq->hwq, addr,
				     (u64)BIT(wqe_shift) << log_depth,
				     BIT(log_depth), wqe_shift);
	if (err)
		ibdev_dbg(&dev->ibdev,
			  "%s: ring at %#llx unusable (%d)\n", name, addr, err);
	return err;
}

/* A user QP's queues, in the library's buffers (kite_ib_create_qp_req). */
static int kite_ib_qp_alloc_user(struct kite_ib_dev *dev,
				 struct kite_ib_qp *qp,
				 const struct ib_qp_cap *cap, bool srq,
				 struct ib_udata *udata)
{
	struct kite_ib_create_qp_req req;
	int err;

	err = ib_copy_validate_udata_in(udata, req, reserved);
	if (err)
		return err;
	if (req.comp_mask || req.reserved) {
		ibdev_dbg(&dev->ibdev,
			  "create QP: unknown comp_mask %#x or reserved %#x\n",
			  req.comp_mask, req.reserved);
		return -EOPNOTSUPP;
	}
	err = kite_ib_user_wq(dev, &qp->sq, "create QP SQ", req.sq_buf_addr,
			      req.sq_log_depth, req.sq_wqe_shift,
			      cap->max_send_wr,
			      kite_ib_wq_stride(true, qp->type,
						cap->max_send_sge,
						cap->max_inline_data));
	if (err)
		return err;
	if (srq) {
		if (req.rq_buf_addr || req.rq_log_depth || req.rq_wqe_shift) {
			ibdev_dbg(&dev->ibdev,
				  "create QP on an SRQ: RQ geometry given\n");
			kite_ib_hwq_free(dev, &qp->sq.hwq);
			return -EINVAL;
		}
		return 0;
	}
	err = kite_ib_user_wq(dev, &qp->rq, "create QP RQ", req.rq_buf_addr,
			      req.rq_log_depth, req.rq_wqe_shift,
			      cap->max_recv_wr,
			      kite_ib_wq_stride(false, qp->type,
						cap->max_recv_sge, 0));
	if (err)
		kite_ib_hwq_free(dev, &qp->sq.hwq);
	return err;
}

/* An XRC target QP has no queues, CQs or PD: only its domain. */
static int kite_ib_xrc_tgt_in(struct kite_ib_dev *dev,
			      const struct ib_qp_init_attr *attr,
			      struct kite_cmd_create_qp *in)
{
	if (!dev->caps.max_xrcd)
		return -EOPNOTSUPP;
	if (!attr->xrcd) {
		ibdev_dbg(&dev->ibdev, "XRC target QP without a domain\n");
		return -EINVAL;
	}
	in->type = cpu_to_le32(KITE_QPT_XRC_TGT);
	in->xrcd = cpu_to_le32(to_kxrcd(attr->xrcd)->xrcdn);
	return 0;
}

/*
 * The queues of a QP that has them (every type but the XRC target), and
 * the CREATE_QP input @in naming them, its CQs and PD. An XRC initiator
 * is a user QP with a send queue only.
 */
static int kite_ib_qp_queues(struct kite_ib_dev *dev, struct kite_ib_qp *qp,
			     struct ib_qp_init_attr *attr,
			     struct ib_udata *udata,
			     struct kite_cmd_create_qp *in)
{
	bool ini = qp->type == KITE_QPT_XRC_INI;
	struct ib_qp_cap *cap = &attr->cap;
	bool no_rq = attr->srq || ini;
	u32 room;
	int err;

	if (ini && (!udata || !dev->caps.max_xrcd)) {
		ibdev_dbg(&dev->ibdev, "XRC initiator QP not supported%s\n",
			  udata ? "" : " in the kernel");
		return -EOPNOTSUPP;
	}
	if (attr->xrcd) {
		ibdev_dbg(&dev->ibdev, "XRC domain for a QP of type %u\n",
			  qp->type);
		return -EINVAL;
	}
	if (attr->srq && qp->type == KITE_QPT_GSI) {
		ibdev_dbg(&dev->ibdev, "GSI QP on an SRQ\n");
		return -EOPNOTSUPP;
	}
	if (attr->srq && to_ksrq(attr->srq)->uctx != qp->uctx) {
		ibdev_dbg(&dev->ibdev,
			  "QP and SRQ of different contexts\n");
		return -EINVAL;
	}
	if (!attr->send_cq || (!attr->recv_cq && !ini))
		return -EINVAL;
	err = kite_ib_check_caps(dev, cap);
	if (err)
		return err;

	if (udata)
		err = kite_ib_qp_alloc_user(dev, qp, cap, no_rq, udata);
	else
		err = kite_ib_qp_alloc_kernel(dev, qp, cap, no_rq);
	if (err)
		return err;

	/* What the strides hold, within what the device allows. */
	room = kite_ib_sq_room(qp->type, BIT(qp->sq.hwq.entry_shift));
	qp->sq.max_sge = min_t(u32, room / sizeof(struct kite_wqe_sge),
			       dev->caps.max_send_sge);
	qp->sq.max_sge = min_t(u32, qp->sq.max_sge, KITE_MAX_SGE);
	qp->max_inline = min_t(u32, room, dev->caps.max_inline);
	if (!no_rq) {
		qp->rq.max_sge = min_t(u32, (BIT(qp->rq.hwq.entry_shift) -
					     sizeof(struct kite_wqe_recv)) /
					    sizeof(struct kite_wqe_sge),
				       dev->caps.max_recv_sge);
		qp->rq.max_sge = min_t(u32, qp->rq.max_sge, KITE_MAX_SGE);
	}
	qp->sq_sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;

	in->type = cpu_to_le32(qp->type);
	in->flags = cpu_to_le32((qp->sq_sig_all ? KITE_QP_F_SQ_SIG_ALL : 0) |
				(attr->srq ? KITE_QP_F_SRQ : 0));
	if (attr->srq)
		in->srqn = cpu_to_le32(to_ksrq(attr->srq)->srqn);
	in->pdn = cpu_to_le32(to_kpd(qp->ibqp.pd)->pdn);
	in->send_cqn = cpu_to_le32(to_kcq(attr->send_cq)->cqn);
	if (!ini)
		in->recv_cqn = cpu_to_le32(to_kcq(attr->recv_cq)->cqn);
	in->uctx = cpu_to_le32(qp->uctx);
	in->sq_cfg = cpu_to_le32(kite_ib_wq_cfg(&qp->sq));
	if (!no_rq)
		in->rq_cfg = cpu_to_le32(kite_ib_wq_cfg(&qp->rq));
	in->sq_pbl = qp->sq.hwq.pbl.desc;
	in->rq_pbl = qp->rq.hwq.pbl.desc;
	return 0;
}

/**
 * kite_ib_create_qp() - create a QP
 * @ibqp: the core's QP, with its PD set (but for an XRC target QP)
 * @attr: the requested type, CQs and capacities; on success the actual
 *	capacities are written back into @attr->cap
 * @udata: for a user QP, struct kite_ib_create_qp_req in and
 *	struct kite_ib_create_qp_resp out; NULL for a kernel QP, and for the
 *	XRC target QPs the core creates for users
 *
 * A kernel QP's queues are sized here, in coherent DMA memory; a user
 * QP's are the library's, checked against the capacities asked for. An
 * XRC initiator (user QPs only) has a send queue only, an XRC target no
 * queue at all: the core shares it between the processes that open it.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for other types, create flags, a GSI QP on an
 * SRQ, XRC QPs on a device without XRC, kernel XRC initiators or unknown
 * request bits; -EINVAL for capacities beyond the device's, a user
 * geometry that cannot hold them, a missing CQ or a missing or misplaced
 * XRC domain; -ENOMEM; -EFAULT; or the errno of CREATE_QP.
 */
int kite_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		      struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_create_qp_resp resp = {};
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct ib_qp_cap *cap = &attr->cap;
	struct kite_cmd_create_qp in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_CREATE_QP,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	err = kite_ib_qp_type(attr->qp_type, &qp->type);
	if (err)
		return err;
	if (attr->create_flags || (udata && qp->type == KITE_QPT_GSI))
		return -EOPNOTSUPP;

	/* Separate lock classes: kite_ib_qp_set_state() nests RQ in SQ. */
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	qp->uctx = kite_ib_uctx_of(udata);
	qp->state = IB_QPS_RESET;
	if (qp->type == KITE_QPT_XRC_TGT)
		err = kite_ib_xrc_tgt_in(dev, attr, &in);
	else
		err = kite_ib_qp_queues(dev, qp, attr, udata, &in);
	if (err)
		return err;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		goto err_free_wqs;

	qp->qpn = cmd.result;
	if (!kite_ib_qpn_ok(qp->type, qp->qpn)) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "CREATE_QP returned bad QPN %u for type %u\n",
				      qp->qpn, qp->type);
		err = -EIO;
		goto err_destroy_qp;
	}
	ibqp->qp_num = qp->qpn;

	err = kite_ib_ref_publish(&dev->qp_xa, qp->qpn, &qp->ref);
	if (err) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "QPN %u already in use (%d)\n", qp->qpn,
				      err);
		err = err == -EBUSY ? -EIO : err;
		goto err_destroy_qp;
	}
	if (udata) {
		err = ib_respond_udata(udata, resp);
		if (err)
			goto err_unpublish;
	}

	cap->max_send_wr = qp->sq.hwq.depth;
	cap->max_recv_wr = qp->rq.hwq.depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline;
	return 0;

err_unpublish:
	kite_ib_ref_unpublish(&dev->qp_xa, qp->qpn, &qp->ref);
err_destroy_qp:
	kite_ib_cmd_destroy(dev, KITE_CMD_DESTROY_QP, qp->qpn);
err_free_wqs:
	kite_ib_wq_free(dev, &qp->rq);
	kite_ib_wq_free(dev, &qp->sq);
	return err;
}

/*
 * Drop a kernel QP's completions not yet polled from its CQs (see
 * kite_ib_cq_clean()); a user QP's library cleans the CQs it maps.
 */
static void kite_ib_qp_clean_cqs(struct kite_ib_qp *qp)
{
	struct ib_qp *ibqp = &qp->ibqp;

	if (ibqp->recv_cq)
		kite_ib_cq_clean(to_kcq(ibqp->recv_cq), qp->qpn,
				 ibqp->srq ? to_ksrq(ibqp->srq) : NULL);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		kite_ib_cq_clean(to_kcq(ibqp->send_cq), qp->qpn, NULL);
}

/**
 * kite_ib_destroy_qp() - destroy a QP
 * @ibqp: the QP
 * @udata: unused
 *
 * Withdraws the QP from EQE dispatch (waiting for dispatchers still
 * holding a reference), destroys it in the device and frees its queues. A
 * kernel QP's completions not yet polled are dropped from its CQs.
 *
 * Context: process context, may sleep.
 * Return: 0, or the errno of DESTROY_QP on a working device (the QP is
 * then left intact).
 */
int kite_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_qp *qp = to_kqp(ibqp);
	int err;

	/* Bad device data had marked it for isolation (kite_ib_guard.c). */
	if (xa_get_mark(&dev->qp_xa, qp->qpn, KITE_IB_XA_ISOLATE))
		ibdev_info_ratelimited(&dev->ibdev,
				       "QP %u destroyed before it was isolated\n",
				       qp->qpn);
	err = kite_ib_ref_destroy(dev, &dev->qp_xa, &qp->ref,
				  KITE_CMD_DESTROY_QP, qp->qpn);
	if (err)
		return err;

	if (!qp->uctx)
		kite_ib_qp_clean_cqs(qp);
	kite_ib_wq_free(dev, &qp->rq);
	kite_ib_wq_free(dev, &qp->sq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Modify and query                                                    */
/* ------------------------------------------------------------------ */

/* Zero a kernel queue's ring (the device forgot it at RESET). */
static void kite_ib_hwq_zero(struct kite_ib_hwq *q)
{
	u32 i;

	for (i = 0; i < q->pbl.npages; i++)
		memset(q->pages[i].va, 0, KITE_PBL_PAGE_SIZE);
}

/**
 * kite_ib_qp_set_state() - record a QP's new state
 * @qp: the QP; the device has accepted the transition
 * @state: the new state
 *
 * To RESET (from ERROR too, to reuse the QP) the queues start over: the
 * software counters go back to 0 and a kernel QP's rings are zeroed, as
 * the device forgot them (a user QP's library resets its own rings). The
 * send and receive queue locks are taken so that a post_send or post_recv
 * sees either the old state with the old counters or the new state with
 * the new ones.
 *
 * Context: process context; callers serialise modify_qp on a QP.
 */
void kite_ib_qp_set_state(struct kite_ib_qp *qp, enum ib_qp_state state)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	spin_lock(&qp->rq.lock);
	WRITE_ONCE(qp->state, state);
	if (state == IB_QPS_RESET) {
		qp->sq.pi = 0;
		WRITE_ONCE(qp->sq.ci, 0);
		qp->rq.pi = 0;
		WRITE_ONCE(qp->rq.ci, 0);
	}
	spin_unlock(&qp->rq.lock);
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	/*
	 * Nothing can be posted in RESET: zero a kernel QP's rings unlocked
	 * (a user QP's library resets its own).
	 */
	if (state == IB_QPS_RESET && !qp->uctx) {
		kite_ib_hwq_zero(&qp->sq.hwq);
		kite_ib_hwq_zero(&qp->rq.hwq);
		kite_ib_qp_clean_cqs(qp);
	}
}

/**
 * kite_ib_modify_qp() - change a QP's state and attributes
 * @ibqp: the QP
 * @attr: the attributes
 * @attr_mask: IB_QP_* attributes given in @attr
 * @udata: user QPs: must carry no driver data
 *
 * The transition and its attributes are checked with ib_modify_qp_is_ok()
 * and then by the device. To RESET, the software counters go back to 0
 * and the rings are zeroed; to ERR the state is only recorded (flushing is
 * the data engine's job). On a dead device (kite_ib_dead()) these two
 * transitions take no command and succeed, and poll_cq flushes. Callers
 * serialise modify_qp on a QP.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a transition or attributes the IB rules do not
 * allow; -EOPNOTSUPP for driver data; or the errno of MODIFY_QP.
 */
int kite_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int attr_mask, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct kite_cmd_modify_qp in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_MODIFY_QP,
		.in = &in,
		.in_len = sizeof(in),
	};
	enum ib_qp_state cur, next;
	int err;

	err = ib_is_udata_in_empty(udata);
	if (err)
		return err;

	cur = attr_mask & IB_QP_CUR_STATE ? attr->cur_qp_state :
					    READ_ONCE(qp->state);
	next = attr_mask & IB_QP_STATE ? attr->qp_state : cur;
	/* ib_modify_qp_is_ok() indexes its table with both states. */
	if ((u32)cur > IB_QPS_ERR || (u32)next > IB_QPS_ERR) {
		ibdev_dbg(&dev->ibdev,
			  "QP %u: no such QP state (%d -> %d)\n",
			  qp->qpn, cur, next);
		return -EINVAL;
	}
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, attr_mask)) {
		ibdev_dbg(&dev->ibdev,
			  "QP %u: invalid modify %d -> %d, type %d, mask %#x\n",
			  qp->qpn, cur, next, ibqp->qp_type, attr_mask);
		return -EINVAL;
	}

	if (((attr_mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	     attr->max_rd_atomic > dev->caps.max_qp_init_rd_atom) ||
	    ((attr_mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	     attr->max_dest_rd_atomic > dev->caps.max_qp_rd_atom)) {
		ibdev_dbg(&dev->ibdev,
			  "QP %u: RDMA READ/atomic depths %u/%u beyond %u/%u\n",
			  qp->qpn, attr->max_rd_atomic, attr->max_dest_rd_atomic,
			  dev->caps.max_qp_init_rd_atom,
			  dev->caps.max_qp_rd_atom);
		return -EINVAL;
	}
	err = kite_ib_qp_attr_to_cmd(attr, attr_mask, &in);
	if (err)
		return err;
	/* A device without FLUSH has no such access to grant: not asked. */
	if (!(dev->caps.features & KITE_FEAT_FLUSH))
		in.access &= ~cpu_to_le32(KITE_ACCESS_FLUSH_GLOBAL);
	if (kite_ib_dead(dev) && (attr_mask & IB_QP_STATE) &&
	    (next == IB_QPS_ERR || next == IB_QPS_RESET)) {
		/*
		 * The device is gone with the QP's context: the QP is in
		 * error whatever it was, and its work requests are flushed
		 * by poll_cq. Consumers tearing down (ib_drain_qp()) go on.
		 */
		kite_ib_qp_set_state(qp, next);
		if (!qp->uctx)
			kite_ib_dead_kick(dev);
		return 0;
	}
	in.qpn = cpu_to_le32(qp->qpn);
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;

	if (attr_mask & IB_QP_STATE)
		kite_ib_qp_set_state(qp, next);
	return 0;
}

static int kite_ib_qps_to_ib(u8 state, enum ib_qp_state *out)
{
	static const enum ib_qp_state map[] = {
		[KITE_QPS_RESET] = IB_QPS_RESET,
		[KITE_QPS_INIT] = IB_QPS_INIT,
		[KITE_QPS_RTR] = IB_QPS_RTR,
		[KITE_QPS_RTS] = IB_QPS_RTS,
		[KITE_QPS_SQD] = IB_QPS_SQD,
		[KITE_QPS_SQE] = IB_QPS_SQE,
		[KITE_QPS_ERR] = IB_QPS_ERR,
	};

	if (state >= ARRAY_SIZE(map))
		return -EIO;
	*out = map[state];
	return 0;
}

static int kite_ib_mtu_to_ib(u8 mtu, enum ib_mtu *out)
{
	switch (mtu) {
	case KITE_MTU_256:
		*out = IB_MTU_256;
		return 0;
	case KITE_MTU_512:
		*out = IB_MTU_512;
		return 0;
	case KITE_MTU_1024:
		*out = IB_MTU_1024;
		return 0;
	case KITE_MTU_2048:
		*out = IB_MTU_2048;
		return 0;
	case KITE_MTU_4096:
		*out = IB_MTU_4096;
		return 0;
	default:
		return -EIO;
	}
}

static int kite_ib_access_to_ib(u32 access, int *out)
{
	const u32 known = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			  KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC |
			  KITE_ACCESS_FLUSH_GLOBAL;

	if (access & ~known)
		return -EIO;
	*out = (access & KITE_ACCESS_LOCAL_WRITE ? IB_ACCESS_LOCAL_WRITE : 0) |
	       (access & KITE_ACCESS_REMOTE_WRITE ? IB_ACCESS_REMOTE_WRITE : 0) |
	       (access & KITE_ACCESS_REMOTE_READ ? IB_ACCESS_REMOTE_READ : 0) |
	       (access & KITE_ACCESS_REMOTE_ATOMIC ?
			IB_ACCESS_REMOTE_ATOMIC : 0) |
	       (access & KITE_ACCESS_FLUSH_GLOBAL ? IB_ACCESS_FLUSH_GLOBAL : 0);
	return 0;
}

/*
 * The address vector of QUERY_QP's output as the RoCE address it was set
 * from (kite_ib_av_to_cmd()), without a reference to the source GID
 * attribute: the caller gets the GID index, as from any query_qp.
 */
static int kite_ib_av_from_cmd(struct kite_ib_dev *dev,
			       const struct kite_cmd_modify_qp *out,
			       struct rdma_ah_attr *ah)
{
	u32 flow_label = le32_to_cpu(out->flow_label);
	u16 vlan = le16_to_cpu(out->vlan);
	union ib_gid dgid;

	if (out->sgid_index >= dev->caps.gid_tbl_len ||
	    (out->net_type != KITE_NET_ROCE_V2_IPV4 &&
	     out->net_type != KITE_NET_ROCE_V2_IPV6) ||
	    (flow_label & ~KITE_FLOW_LABEL))
		return -EIO;
	memcpy(dgid.raw, out->dgid, sizeof(dgid.raw));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &dgid, flow_label, out->sgid_index, out->hop_limit,
			out->traffic_class);
	if (vlan & KITE_VLAN_VALID)
		rdma_ah_set_sl(ah, FIELD_GET(KITE_VLAN_PCP, vlan));
	memcpy(ah->roce.dmac, out->dmac, sizeof(ah->roce.dmac));
	return 0;
}

/*
 * Translate QUERY_QP's output into @attr, checking every value: only the
 * attributes in @out->mask are meaningful (those set since RESET).
 * Return: 0, or -EIO with @what naming the bad field.
 */
static int kite_ib_query_out_to_attr(struct kite_ib_dev *dev,
				     const struct kite_cmd_modify_qp *out,
				     struct ib_qp_attr *attr,
				     const char **what)
{
	u32 mask = le32_to_cpu(out->mask);

	*what = "mask";
	if (mask & ~GENMASK(16, 0))
		return -EIO;
	*what = "state";
	if (kite_ib_qps_to_ib(out->state, &attr->qp_state))
		return -EIO;
	attr->cur_qp_state = attr->qp_state;

	*what = "path_mtu";
	if ((mask & KITE_QP_ATTR_PATH_MTU) &&
	    kite_ib_mtu_to_ib(out->path_mtu, &attr->path_mtu))
		return -EIO;
	*what = "access";
	if ((mask & KITE_QP_ATTR_ACCESS) &&
	    kite_ib_access_to_ib(le32_to_cpu(out->access),
				 &attr->qp_access_flags))
		return -EIO;
	*what = "port";
	if (mask & KITE_QP_ATTR_PORT) {
		if (out->port != 1)
			return -EIO;
		attr->port_num = out->port;
	}
	*what = "pkey_index";
	if (mask & KITE_QP_ATTR_PKEY_INDEX) {
		if (le16_to_cpu(out->pkey_index))
			return -EIO;
		attr->pkey_index = 0;
	}
	if (mask & KITE_QP_ATTR_QKEY)
		attr->qkey = le32_to_cpu(out->qkey);

	*what = "psn or dest_qpn";
	attr->rq_psn = le32_to_cpu(out->rq_psn);
	attr->sq_psn = le32_to_cpu(out->sq_psn);
	attr->dest_qp_num = le32_to_cpu(out->dest_qpn);
	if (attr->rq_psn > KITE_PSN_MASK || attr->sq_psn > KITE_PSN_MASK ||
	    attr->dest_qp_num > KITE_OBJ_MASK)
		return -EIO;

	*what = "timers or retries";
	if (out->timeout > 31 || out->min_rnr_timer > 31 ||
	    out->retry_cnt > 7 || out->rnr_retry > 7)
		return -EIO;
	attr->timeout = out->timeout;
	attr->min_rnr_timer = out->min_rnr_timer;
	attr->retry_cnt = out->retry_cnt;
	attr->rnr_retry = out->rnr_retry;

	*what = "rd_atomic";
	if (out->max_rd_atomic > dev->caps.max_qp_init_rd_atom ||
	    out->max_dest_rd_atomic > dev->caps.max_qp_rd_atom)
		return -EIO;
	attr->max_rd_atomic = out->max_rd_atomic;
	attr->max_dest_rd_atomic = out->max_dest_rd_atomic;

	*what = "address vector";
	if (mask & KITE_QP_ATTR_AV)
		return kite_ib_av_from_cmd(dev, out, &attr->ah_attr);
	return 0;
}

/**
 * kite_ib_query_qp() - read a QP's state and attributes from the device
 * @ibqp: the QP
 * @attr: filled with the state and attributes
 * @attr_mask: the attributes wanted (all are returned)
 * @init_attr: filled with the creation attributes and actual capacities
 *
 * The address vector is returned with its source GID index and no
 * reference to the GID attribute.
 *
 * Context: process context, may sleep.
 * Return: 0; -EIO if the device returned a value out of range; or the
 * errno of QUERY_QP.
 */
int kite_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int attr_mask, struct ib_qp_init_attr *init_attr)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct kite_cmd_obj in = { .obj = cpu_to_le32(qp->qpn) };
	struct kite_cmd_modify_qp out = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_QP,
		.in = &in,
		.in_len = sizeof(in),
		.out = &out,
		.out_len = sizeof(out),
	};
	const char *what;
	int err;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	err = kite_ib_query_out_to_attr(dev, &out, attr, &what);
	if (err) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "QUERY_QP of QP %u: bad %s from the device\n",
				      qp->qpn, what);
		return err;
	}
	attr->cap.max_send_wr = qp->sq.hwq.depth;
	attr->cap.max_recv_wr = qp->rq.hwq.depth;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->event_handler = ibqp->event_handler;
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->srq = ibqp->srq;
	init_attr->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
						  IB_SIGNAL_REQ_WR;
	init_attr->cap = attr->cap;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Posting                                                             */
/* ------------------------------------------------------------------ */

/**
 * kite_ib_post_send() - post send work requests to a kernel QP
 * @ibqp: the QP
 * @wr: the first work request
 * @bad_wr: on error, the first work request not posted
 *
 * The WQEs are written at the SQ's producer counter and made visible to
 * the device before one doorbell for the whole list.
 *
 * Context: any context.
 * Return: 0; -EINVAL if the QP is in RESET or INIT, or for a malformed
 * work request; -ENOMEM if the SQ is full.
 */
int kite_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct kite_ib_wq *sq = &qp->sq;
	size_t stride = BIT(sq->hwq.entry_shift);
	enum ib_qp_state state;
	unsigned long flags;
	u32 posted = 0;
	int err = 0;

	/*
	 * sq->lock serialises posters: the producer counter, the ring slots
	 * and the tracking arrays, and keeps the absolute doorbells in order.
	 */
	spin_lock_irqsave(&sq->lock, flags);
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_RESET || state == IB_QPS_INIT) {
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		u32 slot = sq->pi & (sq->hwq.depth - 1);
		int opcode;

		if (kite_ib_wq_full(sq->pi, READ_ONCE(sq->ci),
				    sq->hwq.depth)) {
			err = -ENOMEM;
			break;
		}
		opcode = kite_ib_send_wqe_opcode(wr->opcode, qp->type);
		if (opcode < 0 || wr->num_sge < 0 ||
		    wr->num_sge > sq->max_sge) {
			err = -EINVAL;
			break;
		}
		err = kite_ib_build_send_wqe(kite_ib_hwq_entry(&sq->hwq,
							       sq->pi),
					     stride, wr,
					     sq->pi & KITE_WQ_IDX_MASK,
					     qp->type, qp->max_inline,
					     qp->sq_sig_all);
		if (err)
			break;
		sq->wr_id[slot] = wr->wr_id;
		sq->opcode[slot] = opcode;
		sq->pi++;
		posted++;
	}
	if (posted) {
		/* The WQEs must be visible before the doorbell names them. */
		dma_wmb();
		kite_ib_ring_db(dev, kite_ib_qp_db(qp->qpn, KITE_DB_TYPE_SQ,
						   sq->pi));
		/* A dead device completes nothing: poll_cq flushes them. */
		if (unlikely(kite_ib_dead(dev)))
			kite_ib_dead_kick(dev);
	}
out:
	spin_unlock_irqrestore(&sq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * kite_ib_post_recv() - post receive work requests to a kernel QP
 * @ibqp: the QP
 * @wr: the first work request
 * @bad_wr: on error, the first work request not posted
 *
 * Context: any context.
 * Return: 0; -EINVAL if the QP is in RESET, or for a malformed work
 * request; -ENOMEM if the RQ is full.
 */
int kite_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct kite_ib_wq *rq = &qp->rq;
	size_t stride = BIT(rq->hwq.entry_shift);
	unsigned long flags;
	u32 posted = 0;
	int err = 0;

	if (ibqp->srq) {
		ibdev_dbg(&dev->ibdev,
			  "post_recv on QP %u, which receives from an SRQ\n",
			  qp->qpn);
		*bad_wr = wr;
		return -EINVAL;
	}
	/* rq->lock: as sq->lock in kite_ib_post_send(). */
	spin_lock_irqsave(&rq->lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (kite_ib_wq_full(rq->pi, READ_ONCE(rq->ci),
				    rq->hwq.depth)) {
			err = -ENOMEM;
			break;
		}
		err = kite_ib_build_recv_wqe(kite_ib_hwq_entry(&rq->hwq,
							       rq->pi),
					     stride, wr, rq->max_sge);
		if (err)
			break;
		rq->wr_id[rq->pi & (rq->hwq.depth - 1)] = wr->wr_id;
		rq->len[rq->pi & (rq->hwq.depth - 1)] = kite_ib_recv_wr_len(wr);
		rq->pi++;
		posted++;
	}
	if (posted) {
		/* The WQEs must be visible before the doorbell names them. */
		dma_wmb();
		kite_ib_ring_db(dev, kite_ib_qp_db(qp->qpn, KITE_DB_TYPE_RQ,
						   rq->pi));
		if (unlikely(kite_ib_dead(dev)))
			kite_ib_dead_kick(dev);
	}
out:
	spin_unlock_irqrestore(&rq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}
