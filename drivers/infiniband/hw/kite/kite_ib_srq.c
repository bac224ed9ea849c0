// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: shared receive queue verbs and post_srq_recv.
 *
 * An SRQ is a ring of receive WQEs, in coherent DMA memory for kernel SRQs
 * and in the library's memory for user SRQs, which the device hands to the
 * RC and UD QPs created on it, one per message (prm_srq.rst). The device
 * takes WQEs in ring order, but they complete on the receive CQs of
 * different QPs, in any order: each WQE carries a tag, an index in the
 * SRQ's wr_id table, which its CQE returns. A kernel SRQ keeps a stack of
 * free tags and never has more than depth WQEs outstanding, so the ring
 * slot at its producer counter is always one the device has taken.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include <rdma/kite-abi.h>

#include "kite_ib.h"

/**
 * kite_ib_srq_stride() - the WQE stride an SRQ needs for @max_sge SGEs
 * @max_sge: SGEs a WQE must hold
 *
 * Return: the smallest power of two, at least 2^KITE_WQE_MIN_SHIFT, that
 * holds the header and @max_sge data segments; -EINVAL if that exceeds
 * 2^KITE_WQE_MAX_SHIFT.
 */
int kite_ib_srq_stride(u32 max_sge)
{
	u64 size = sizeof(struct kite_wqe_srq_recv) +
		   (u64)max_sge * sizeof(struct kite_wqe_sge);

	if (size > BIT(KITE_WQE_MAX_SHIFT))
		return -EINVAL;
	return max_t(u32, roundup_pow_of_two((u32)size),
		     BIT(KITE_WQE_MIN_SHIFT));
}

/**
 * kite_ib_srq_db() - the doorbell word of an SRQ
 * @srqn: the SRQ's number
 * @pi: its producer counter (free-running; sent modulo 2^16)
 *
 * Return: the 64-bit value for kite_ib_ring_db().
 */
u64 kite_ib_srq_db(u32 srqn, u32 pi)
{
	return FIELD_PREP(KITE_DB_OBJ, srqn & KITE_OBJ_MASK) |
	       FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_SRQ) |
	       FIELD_PREP(KITE_DB_PI, pi & KITE_WQ_IDX_MASK);
}

static int kite_ib_srq_check_attr(struct kite_ib_dev *dev,
				  const struct ib_srq_attr *attr)
{
	const struct kite_ib_caps *c = &dev->caps;

	if (!attr->max_wr || attr->max_wr > c->max_srq_wr ||
	    attr->max_sge > c->max_srq_sge || attr->max_sge > KITE_MAX_SGE ||
	    attr->srq_limit > attr->max_wr) {
		ibdev_dbg(&dev->ibdev,
			  "SRQ attributes out of range: wr %u sge %u limit %u\n",
			  attr->max_wr, attr->max_sge, attr->srq_limit);
		return -EINVAL;
	}
	return 0;
}

static void kite_ib_srq_free(struct kite_ib_dev *dev, struct kite_ib_srq *srq)
{
	bitmap_free(srq->busy);
	kfree(srq->free);
	kfree(srq->len);
	kfree(srq->wr_id);
	kite_ib_hwq_free(dev, &srq->hwq);
}

/* A kernel SRQ's ring and tag table, for @depth WQEs of @stride bytes. */
static int kite_ib_srq_alloc_kernel(struct kite_ib_dev *dev,
				    struct kite_ib_srq *srq, u32 depth,
				    int stride)
{
	u32 i;
	int err;

	err = kite_ib_hwq_alloc(dev, &srq->hwq, depth, ilog2(stride));
	if (err)
		return err;
	srq->wr_id = kcalloc(depth, sizeof(*srq->wr_id), GFP_KERNEL);
	srq->len = kcalloc(depth, sizeof(*srq->len), GFP_KERNEL);
	srq->free = kcalloc(depth, sizeof(*srq->free), GFP_KERNEL);
	srq->busy = bitmap_zalloc(depth, GFP_KERNEL);
	if (!srq->wr_id || !srq->len || !srq->free || !srq->busy) {
		kite_ib_srq_free(dev, srq);
		return -ENOMEM;
	}
	/* Tag 0 on top. */
	for (i = 0; i < depth; i++)
		srq->free[i] = depth - 1 - i;
	srq->nfree = depth;
	return 0;
}

/* A user SRQ's ring, in the library's buffer (kite_ib_create_srq_req). */
static int kite_ib_srq_alloc_user(struct kite_ib_dev *dev,
				  struct kite_ib_srq *srq,
				  const struct ib_srq_attr *attr,
				  struct ib_udata *udata)
{
	struct kite_ib_create_srq_req req;
	int need = kite_ib_srq_stride(attr->max_sge);
	int err;

	err = ib_copy_validate_udata_in(udata, req, reserved);
	if (err)
		return err;
	if (req.comp_mask || req.reserved) {
		ibdev_dbg(&dev->ibdev,
			  "create SRQ: unknown comp_mask %#x or reserved %#x\n",
			  req.comp_mask, req.reserved);
		return -EOPNOTSUPP;
	}
	if (need < 0 || !req.log_depth ||
	    req.log_depth > KITE_WQ_MAX_LOG_DEPTH ||
	    BIT(req.log_depth) < attr->max_wr ||
	    req.wqe_shift < KITE_WQE_MIN_SHIFT ||
	    req.wqe_shift > KITE_WQE_MAX_SHIFT || BIT(req.wqe_shift) < need) {
		ibdev_dbg(&dev->ibdev,
			  "create SRQ: 2^%u WQEs of 2^%u bytes cannot hold %u WQEs of %d bytes\n",
			  req.log_depth, req.wqe_shift, attr->max_wr, need);
		return -EINVAL;
	}
	err = kite_ib_hwq_alloc_user(dev, &srq->hwq, req.buf_addr,
				     (u64)BIT(req.wqe_shift) << req.log_depth,
				     BIT(req.log_depth), req.wqe_shift);
	if (err)
		ibdev_dbg(&dev->ibdev,
			  "create SRQ: ring at %#llx unusable (%d)\n",
			  req.buf_addr, err);
	return err;
}

/**
 * kite_ib_create_srq() - create a shared receive queue
 * @ibsrq: the core's SRQ, with its PD set
 * @init_attr: the type and the requested capacities; on success the
 *	actual capacities are written back into @init_attr->attr
 * @udata: for a user SRQ, struct kite_ib_create_srq_req in and
 *	struct kite_ib_create_srq_resp out; NULL for a kernel SRQ
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for XRC and tag-matching SRQs, a device without
 * SRQs or unknown request bits; -EINVAL for capacities beyond the
 * device's, a limit above max_wr or a user geometry that cannot hold
 * them; -ENOMEM; -EFAULT; or the errno of CREATE_SRQ.
 */
int kite_ib_create_srq(struct ib_srq *ibsrq,
		       struct ib_srq_init_attr *init_attr,
		       struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibsrq->device);
	struct kite_ib_srq *srq = to_ksrq(ibsrq);
	struct ib_srq_attr *attr = &init_attr->attr;
	struct kite_ib_create_srq_resp resp = {};
	struct kite_cmd_create_srq in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_CREATE_SRQ,
		.in = &in,
		.in_len = sizeof(in),
	};
	int stride, err;
	u32 depth;

	if (init_attr->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(&dev->ibdev, "SRQ type %d not supported\n",
			  init_attr->srq_type);
		return -EOPNOTSUPP;
	}
	if (!(dev->caps.features & KITE_FEAT_SRQ))
		return -EOPNOTSUPP;
	err = kite_ib_srq_check_attr(dev, attr);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	srq->uctx = kite_ib_uctx_of(udata);
	if (udata) {
		err = kite_ib_srq_alloc_user(dev, srq, attr, udata);
	} else {
		depth = max_t(u32, roundup_pow_of_two(attr->max_wr), 2);
		stride = kite_ib_srq_stride(attr->max_sge);
		if (depth > BIT(KITE_WQ_MAX_LOG_DEPTH) || stride < 0)
			return -EINVAL;
		err = kite_ib_srq_alloc_kernel(dev, srq, depth, stride);
	}
	if (err)
		return err;
	srq->max_sge = min_t(u32, (BIT(srq->hwq.entry_shift) -
				   sizeof(struct kite_wqe_srq_recv)) /
				  sizeof(struct kite_wqe_sge),
			     min_t(u32, dev->caps.max_srq_sge, KITE_MAX_SGE));

	in.pdn = cpu_to_le32(to_kpd(ibsrq->pd)->pdn);
	in.uctx = cpu_to_le32(srq->uctx);
	in.cfg = cpu_to_le32(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH,
					ilog2(srq->hwq.depth)) |
			     FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT,
					srq->hwq.entry_shift));
	in.limit = cpu_to_le32(attr->srq_limit);
	in.pbl = srq->hwq.pbl.desc;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		goto err_free;
	srq->srqn = cmd.result;
	if (!srq->srqn) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "CREATE_SRQ returned SRQN 0\n");
		err = -EIO;
		goto err_destroy;
	}
	err = kite_ib_ref_publish(&dev->srq_xa, srq->srqn, &srq->ref);
	if (err) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "SRQN %u already in use (%d)\n", srq->srqn,
				      err);
		err = err == -EBUSY ? -EIO : err;
		goto err_destroy;
	}
	if (udata) {
		resp.srqn = srq->srqn;
		err = ib_respond_udata(udata, resp);
		if (err)
			goto err_unpublish;
	}
	attr->max_wr = srq->hwq.depth;
	attr->max_sge = srq->max_sge;
	return 0;

err_unpublish:
	kite_ib_ref_unpublish(&dev->srq_xa, srq->srqn, &srq->ref);
err_destroy:
	kite_ib_cmd_destroy(dev, KITE_CMD_DESTROY_SRQ, srq->srqn);
err_free:
	kite_ib_srq_free(dev, srq);
	return err;
}

/**
 * kite_ib_modify_srq() - arm an SRQ's limit event
 * @ibsrq: the SRQ
 * @attr: IB_SRQ_LIMIT: the new limit (0 disarms)
 * @attr_mask: IB_SRQ_LIMIT only; IB_SRQ_MAX_WR (resize) is not supported
 * @udata: user SRQs: must carry no driver data
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for a resize or driver data; -EINVAL for a limit
 * above the SRQ's depth or unknown mask bits; or the errno of MODIFY_SRQ.
 */
int kite_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibsrq->device);
	struct kite_ib_srq *srq = to_ksrq(ibsrq);
	struct kite_cmd_modify_srq in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_MODIFY_SRQ,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	err = ib_is_udata_in_empty(udata);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: driver data: %d\n", srq->srqn, err);
		return err;
	}
	if (attr_mask & IB_SRQ_MAX_WR) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: resize not supported\n", srq->srqn);
		return -EOPNOTSUPP;
	}
	if (attr_mask & ~IB_SRQ_LIMIT) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: unknown attributes %#x\n", srq->srqn,
			  attr_mask);
		return -EINVAL;
	}
	if (!(attr_mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->hwq.depth) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: limit %u above depth %u\n", srq->srqn,
			  attr->srq_limit, srq->hwq.depth);
		return -EINVAL;
	}
	in.srqn = cpu_to_le32(srq->srqn);
	in.mask = cpu_to_le32(KITE_MODIFY_SRQ_LIMIT);
	in.limit = cpu_to_le32(attr->srq_limit);
	return kite_ib_cmd_exec(dev, &cmd);
}

/**
 * kite_ib_query_srq() - an SRQ's capacities and armed limit
 * @ibsrq: the SRQ
 * @attr: receives max_wr, max_sge and srq_limit (0 when not armed)
 *
 * Context: process context, may sleep.
 * Return: 0, -EIO for output the device may not give, or the errno of
 * QUERY_SRQ.
 */
int kite_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct kite_ib_dev *dev = to_kdev(ibsrq->device);
	struct kite_ib_srq *srq = to_ksrq(ibsrq);
	struct kite_cmd_query_srq_out out = {};
	struct kite_cmd_obj in = { .obj = cpu_to_le32(srq->srqn) };
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_SRQ,
		.in = &in,
		.in_len = sizeof(in),
		.out = &out,
		.out_len = sizeof(out),
	};
	u32 limit;
	int err;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	limit = le32_to_cpu(out.limit);
	if (limit > srq->hwq.depth) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "QUERY_SRQ of SRQ %u: bad limit %u from the device\n",
				      srq->srqn, limit);
		return -EIO;
	}
	attr->max_wr = srq->hwq.depth;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = (le32_to_cpu(out.flags) & KITE_SRQ_F_ARMED) ? limit :
									 0;
	return 0;
}

/**
 * kite_ib_destroy_srq() - destroy an SRQ
 * @ibsrq: the SRQ; the core has checked no QP uses it
 * @udata: unused
 *
 * Context: process context, may sleep.
 * Return: 0, or the errno of DESTROY_SRQ on a working device (the SRQ is
 * then left intact).
 */
int kite_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibsrq->device);
	struct kite_ib_srq *srq = to_ksrq(ibsrq);
	int err;

	err = kite_ib_ref_destroy(dev, &dev->srq_xa, &srq->ref,
				  KITE_CMD_DESTROY_SRQ, srq->srqn);
	if (err)
		return err;
	kite_ib_srq_free(dev, srq);
	return 0;
}

/**
 * kite_ib_post_srq_recv() - post receive work requests to a kernel SRQ
 * @ibsrq: the SRQ
 * @wr: the first work request
 * @bad_wr: on error, the first work request not posted
 *
 * Context: any context.
 * Return: 0; -EINVAL for a malformed work request or a user SRQ; -ENOMEM
 * if depth WQEs are outstanding.
 */
int kite_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct kite_ib_dev *dev = to_kdev(ibsrq->device);
	struct kite_ib_srq *srq = to_ksrq(ibsrq);
	size_t stride = BIT(srq->hwq.entry_shift);
	struct kite_wqe_srq_recv *hdr;
	unsigned long flags;
	u32 posted = 0;
	int err = 0;
	u16 tag;

	if (srq->uctx || !srq->wr_id) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (srq->outstanding >= srq->hwq.depth || !srq->nfree) {
			err = -ENOMEM;
			break;
		}
		hdr = kite_ib_hwq_entry(&srq->hwq, srq->pi);
		/* The SRQ header is the RQ header with the tag in rsvd. */
		err = kite_ib_build_recv_wqe(hdr, stride, wr, srq->max_sge);
		if (err)
			break;
		tag = srq->free[--srq->nfree];
		hdr->tag = cpu_to_le16(tag);
		srq->wr_id[tag] = wr->wr_id;
		srq->len[tag] = kite_ib_recv_wr_len(wr);
		__set_bit(tag, srq->busy);
		srq->outstanding++;
		srq->pi++;
		posted++;
	}
	if (posted) {
		/* The WQEs must be visible before the doorbell names them. */
		dma_wmb();
		kite_ib_ring_db(dev, kite_ib_srq_db(srq->srqn, srq->pi));
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * kite_ib_srq_complete() - complete the SRQ WQE a receive CQE names
 * @srq: a kernel SRQ
 * @tag: the CQE's wqe_idx: the WQE's tag
 * @wr_id: receives the WQE's wr_id
 * @len: receives the bytes the WQE could take
 *
 * Never trusts the device: @tag must name an outstanding WQE.
 *
 * Context: any context; takes &kite_ib_srq.lock.
 * Return: true if @tag was outstanding (it is free again), else false.
 */
bool kite_ib_srq_complete(struct kite_ib_srq *srq, u16 tag, u64 *wr_id,
			  u32 *len)
{
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->busy && tag < srq->hwq.depth && test_bit(tag, srq->busy)) {
		__clear_bit(tag, srq->busy);
		*wr_id = srq->wr_id[tag];
		*len = srq->len[tag];
		srq->free[srq->nfree++] = tag;
		srq->outstanding--;
		ok = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return ok;
}

/**
 * kite_ib_eq_srq_event() - report an SRQ event to the SRQ's owner
 * @dev: the device
 * @srqn: the EQE's object number
 * @type: IB_EVENT_SRQ_LIMIT_REACHED or IB_EVENT_SRQ_ERR
 *
 * Context: softirq (EQ0's tasklet).
 */
void kite_ib_eq_srq_event(struct kite_ib_dev *dev, u32 srqn,
			  enum ib_event_type type)
{
	struct kite_ib_ref *ref = kite_ib_ref_get(&dev->srq_xa, srqn);
	struct kite_ib_srq *srq;
	struct ib_event ev;

	if (!ref && srqn && srqn <= dev->caps.max_srq) {
		ibdev_dbg(&dev->ibdev,
			  "event %d for unknown SRQ %u\n", type, srqn);
		return;
	}
	if (!ref) {
		kite_ib_bad(dev, KITE_IB_BAD_EQE_OBJ);
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (eqe-obj): SRQ event %d for SRQ %u, beyond the device's range, dropped\n",
				      type, srqn);
		return;
	}
	srq = container_of(ref, struct kite_ib_srq, ref);
	if (type == IB_EVENT_SRQ_ERR)
		ibdev_warn_ratelimited(&dev->ibdev,
				       "SRQ %u entered the error state\n", srqn);
	if (srq->ibsrq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.srq = &srq->ibsrq;
		ev.event = type;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	kite_ib_ref_put(ref);
}
