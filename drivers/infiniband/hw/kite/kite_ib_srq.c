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
 * An XRC SRQ (KITE_FEAT_XRC) belongs to an XRC domain and has a CQ of its
 * own: the XRC target QPs of its domain hand it the SENDs that name it
 * (prm_qp.rst, "XRC"). XRC SRQs are user SRQs; the domains are here too.
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

/**
 * kite_ib_alloc_xrcd() - allocate an XRC domain on the device
 * @ibxrcd: the core's domain, embedded in &struct kite_ib_xrcd
 * @udata: no driver data in either direction
 *
 * The domain has no owner in the device: the core shares it between the
 * processes that open it, and their XRC SRQs and target QPs meet in it.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL for driver data, or the errno of ALLOC_XRCD.
 */
int kite_ib_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibxrcd->device);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_ALLOC_XRCD };
	int err;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	if (!cmd.result || cmd.result >= dev->caps.max_xrcd) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "ALLOC_XRCD returned bad domain %u\n",
				      cmd.result);
		kite_ib_cmd_destroy(dev, KITE_CMD_DEALLOC_XRCD, cmd.result);
		return -EIO;
	}
	to_kxrcd(ibxrcd)->xrcdn = cmd.result;
	return 0;
}

/**
 * kite_ib_dealloc_xrcd() - free an XRC domain
 * @ibxrcd: the domain; the core frees it after its last SRQ and QP
 * @udata: unused
 *
 * Context: process context, may sleep.
 * Return: 0, also when the device has failed.
 */
int kite_ib_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return kite_ib_cmd_destroy(to_kdev(ibxrcd->device),
				   KITE_CMD_DEALLOC_XRCD,
				   to_kxrcd(ibxrcd)->xrcdn);
}

/*
 * The type of SRQ @init_attr asks for, into @in: basic, or XRC (user SRQs
 * of a device with XRC; the device checks that the CQ is of the same
 * context).
 */
static int kite_ib_srq_type(struct kite_ib_dev *dev,
			    const struct ib_srq_init_attr *init_attr,
			    u32 uctx, struct kite_cmd_create_srq *in)
{
	if (init_attr->srq_type == IB_SRQT_BASIC)
		return 0;
	if (init_attr->srq_type != IB_SRQT_XRC || !dev->caps.max_xrcd ||
	    !uctx) {
		ibdev_dbg(&dev->ibdev, "SRQ type %d not supported%s\n",
			  init_attr->srq_type, uctx ? "" : " in the kernel");
		return -EOPNOTSUPP;
	}
	if (!init_attr->ext.cq || !init_attr->ext.xrc.xrcd)
		return -EINVAL;
	in->flags = cpu_to_le32(KITE_SRQ_F_XRC);
	in->xrcd = cpu_to_le32(to_kxrcd(init_attr->ext.xrc.xrcd)->xrcdn);
	in->cqn = cpu_to_le32(to_kcq(init_attr->ext.cq)->cqn);
	return 0;
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

/* A kernel SRQ's tag tables (struct kite_ib_srq), for @n tags. */
struct kite_ib_srq_tags {
	u64 *wr_id;
	u32 *len;
	unsigned long *busy;
	u16 *free;
};

static void kite_ib_srq_tags_free(struct kite_ib_srq_tags *t)
{
	bitmap_free(t->busy);
	kfree(t->free);
	kfree(t->len);
	kfree(t->wr_id);
}

static int kite_ib_srq_tags_alloc(struct kite_ib_srq_tags *t, u32 n)
{
	t->wr_id = kcalloc(n, sizeof(*t->wr_id), GFP_KERNEL);
	t->len = kcalloc(n, sizeof(*t->len), GFP_KERNEL);
	t->free = kcalloc(n, sizeof(*t->free), GFP_KERNEL);
	t->busy = bitmap_zalloc(n, GFP_KERNEL);
	if (!t->wr_id || !t->len || !t->free || !t->busy) {
		kite_ib_srq_tags_free(t);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Give @srq the tables @t of @n tags, copying the outstanding ones; the
 * new tags go under the free ones, so tags keep being reused in the same
 * order. @t receives the old tables. Called with &kite_ib_srq.lock held.
 */
static void kite_ib_srq_tags_grow(struct kite_ib_srq *srq,
				  struct kite_ib_srq_tags *t, u32 n)
{
	u32 i, old = srq->ntags;

	memcpy(t->wr_id, srq->wr_id, old * sizeof(*t->wr_id));
	memcpy(t->len, srq->len, old * sizeof(*t->len));
	bitmap_copy(t->busy, srq->busy, old);
	for (i = 0; i < n - old; i++)
		t->free[i] = n - 1 - i;
	memcpy(t->free + n - old, srq->free, srq->nfree * sizeof(*t->free));
	swap(srq->wr_id, t->wr_id);
	swap(srq->len, t->len);
	swap(srq->busy, t->busy);
	swap(srq->free, t->free);
	srq->nfree += n - old;
	srq->ntags = n;
}

static void kite_ib_srq_free(struct kite_ib_dev *dev, struct kite_ib_srq *srq)
{
	struct kite_ib_srq_tags t = {
		.wr_id = srq->wr_id,
		.len = srq->len,
		.busy = srq->busy,
		.free = srq->free,
	};

	kite_ib_srq_tags_free(&t);
	kite_ib_hwq_free(dev, &srq->hwq);
}

/* A kernel SRQ's ring and tag table, for @depth WQEs of @stride bytes. */
static int kite_ib_srq_alloc_kernel(struct kite_ib_dev *dev,
				    struct kite_ib_srq *srq, u32 depth,
				    int stride)
{
	struct kite_ib_srq_tags t;
	int err;

	err = kite_ib_hwq_alloc(dev, &srq->hwq, depth, ilog2(stride));
	if (err)
		return err;
	err = kite_ib_srq_tags_alloc(&t, depth);
	if (err) {
		kite_ib_hwq_free(dev, &srq->hwq);
		return err;
	}
	/* All depth tags free, tag 0 on top. */
	kite_ib_srq_tags_grow(srq, &t, depth);
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
 * Return: 0; -EOPNOTSUPP for tag-matching SRQs, XRC SRQs of the kernel or
 * of a device without XRC, a device without SRQs or unknown request bits;
 * -EINVAL for capacities beyond the device's, a limit above max_wr, a
 * user geometry that cannot hold them or an XRC SRQ without a CQ or
 * domain; -ENOMEM; -EFAULT; or the errno of CREATE_SRQ.
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

	if (!(dev->caps.features & KITE_FEAT_SRQ))
		return -EOPNOTSUPP;
	srq->uctx = kite_ib_uctx_of(udata);
	err = kite_ib_srq_type(dev, init_attr, srq->uctx, &in);
	if (err)
		return err;
	err = kite_ib_srq_check_attr(dev, attr);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
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
	if (init_attr->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;
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
	mutex_init(&srq->resize_mutex);
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

/* The new ring of a user SRQ's resize: kite_ib_modify_srq_req. */
static int kite_ib_srq_resize_user(struct kite_ib_dev *dev,
				   struct kite_ib_srq *srq, u32 max_wr,
				   struct ib_udata *udata,
				   struct kite_ib_hwq *new)
{
	struct kite_ib_modify_srq_req req;
	int err;

	if (!udata || !udata->inlen) {
		ibdev_dbg(&dev->ibdev,
			  "resize SRQ %u: no new ring from the library\n",
			  srq->srqn);
		return -EOPNOTSUPP;
	}
	err = ib_copy_validate_udata_in(udata, req, comp_mask);
	if (err)
		return err;
	if (req.comp_mask) {
		ibdev_dbg(&dev->ibdev,
			  "resize SRQ %u: unknown comp_mask %#x\n", srq->srqn,
			  req.comp_mask);
		return -EOPNOTSUPP;
	}
	if (!req.log_depth || req.log_depth > KITE_WQ_MAX_LOG_DEPTH ||
	    BIT(req.log_depth) < max_wr) {
		ibdev_dbg(&dev->ibdev,
			  "resize SRQ %u: 2^%u WQEs cannot hold %u\n", srq->srqn,
			  req.log_depth, max_wr);
		return -EINVAL;
	}
	err = kite_ib_hwq_alloc_user(dev, new, req.buf_addr,
				     (u64)BIT(srq->hwq.entry_shift) <<
					     req.log_depth,
				     BIT(req.log_depth), srq->hwq.entry_shift);
	if (err)
		ibdev_dbg(&dev->ibdev,
			  "resize SRQ %u: ring at %#llx unusable (%d)\n",
			  srq->srqn, req.buf_addr, err);
	return err;
}

/*
 * A kernel SRQ's resize, up to the command: the new ring @new gets the
 * last WQEs posted (every one not yet taken) and, until
 * kite_ib_srq_resize_end(), every new one; the tag tables grow to the new
 * depth. -EINVAL if more WQEs are outstanding than @new holds.
 */
static int kite_ib_srq_resize_begin(struct kite_ib_dev *dev,
				    struct kite_ib_srq *srq,
				    struct kite_ib_hwq *new, u32 max_wr)
{
	u32 depth = max_t(u32, roundup_pow_of_two(max_wr), 2);
	struct kite_ib_srq_tags t = {};
	unsigned long flags;
	u32 i, n, idx;
	int err;

	if (depth > BIT(KITE_WQ_MAX_LOG_DEPTH))
		return -EINVAL;
	err = kite_ib_hwq_alloc(dev, new, depth, srq->hwq.entry_shift);
	if (err)
		return err;
	/* Under the lock the tables may only grow: allocate them before. */
	if (depth > srq->ntags) {
		err = kite_ib_srq_tags_alloc(&t, depth);
		if (err)
			goto err_free_ring;
	}
	spin_lock_irqsave(&srq->lock, flags);
	if (srq->outstanding > depth) {
		spin_unlock_irqrestore(&srq->lock, flags);
		ibdev_dbg(&dev->ibdev,
			  "resize SRQ %u: %u WQEs outstanding, %u asked\n",
			  srq->srqn, srq->outstanding, max_wr);
		err = -EINVAL;
		goto err_free_tags;
	}
	if (t.wr_id)
		kite_ib_srq_tags_grow(srq, &t, depth);
	n = min(srq->hwq.depth, depth);
	for (i = 0; i < n; i++) {
		idx = srq->pi - n + i;
		memcpy(kite_ib_hwq_entry(new, idx),
		       kite_ib_hwq_entry(&srq->hwq, idx),
		       BIT(srq->hwq.entry_shift));
	}
	srq->next = new;
	spin_unlock_irqrestore(&srq->lock, flags);
	/* The old tables, if replaced. */
	kite_ib_srq_tags_free(&t);
	return 0;

err_free_tags:
	kite_ib_srq_tags_free(&t);
err_free_ring:
	kite_ib_hwq_free(dev, new);
	return err;
}

/* The command done: @new becomes the ring (@ok) or is dropped. */
static void kite_ib_srq_resize_end(struct kite_ib_srq *srq,
				   struct kite_ib_hwq *new, bool ok)
{
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	srq->next = NULL;
	if (ok)
		swap(srq->hwq, *new);
	spin_unlock_irqrestore(&srq->lock, flags);
}

/**
 * kite_ib_modify_srq() - arm an SRQ's limit event or resize it
 * @ibsrq: the SRQ
 * @attr: IB_SRQ_LIMIT: the new limit (0 disarms); IB_SRQ_MAX_WR: the
 *	WQEs the SRQ must hold
 * @attr_mask: IB_SRQ_LIMIT and IB_SRQ_MAX_WR
 * @udata: user SRQs: struct kite_ib_modify_srq_req with IB_SRQ_MAX_WR (the
 *	library's new ring, holding the WQEs not yet taken), else no driver
 *	data
 *
 * A resize moves the SRQ to a new ring (MODIFY_SRQ with
 * KITE_MODIFY_SRQ_RESIZE, prm_srq.rst "Resize"), larger or smaller; WQEs
 * posted and not yet completed stay valid. A kernel SRQ copies its WQEs
 * to the new ring and, while the command runs, posts to both.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for a resize on a device without it, a user
 * resize without a new ring, unknown request bits or driver data; -EINVAL
 * for unknown mask bits, a size of 0 or beyond the device's, fewer WQEs
 * than are outstanding, or a limit above the (new) depth; -ENOMEM;
 * -EFAULT; or the errno of MODIFY_SRQ.
 */
int kite_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibsrq->device);
	struct kite_ib_srq *srq = to_ksrq(ibsrq);
	bool resize = attr_mask & IB_SRQ_MAX_WR;
	struct kite_cmd_modify_srq in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_MODIFY_SRQ,
		.in = &in,
		.in_len = sizeof(in),
	};
	struct kite_ib_hwq new = {};
	u32 depth;
	int err;

	if (attr_mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR)) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: unknown attributes %#x\n", srq->srqn,
			  attr_mask);
		return -EINVAL;
	}
	if (!resize) {
		err = ib_is_udata_in_empty(udata);
		if (err) {
			ibdev_dbg(&dev->ibdev,
				  "modify SRQ %u: driver data: %d\n", srq->srqn,
				  err);
			return err;
		}
		if (!(attr_mask & IB_SRQ_LIMIT))
			return 0;
	} else if (!(dev->caps.features & KITE_FEAT_SRQ_RESIZE)) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: the device cannot resize\n",
			  srq->srqn);
		return -EOPNOTSUPP;
	} else if (!attr->max_wr || attr->max_wr > dev->caps.max_srq_wr) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: %u WQEs, the device has 1 .. %u\n",
			  srq->srqn, attr->max_wr, dev->caps.max_srq_wr);
		return -EINVAL;
	}

	mutex_lock(&srq->resize_mutex);
	if (resize) {
		if (srq->uctx)
			err = kite_ib_srq_resize_user(dev, srq, attr->max_wr,
						      udata, &new);
		else
			err = kite_ib_srq_resize_begin(dev, srq, &new,
						       attr->max_wr);
		if (err)
			goto out_unlock;
		in.mask |= cpu_to_le32(KITE_MODIFY_SRQ_RESIZE);
		in.cfg = cpu_to_le32(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH,
						ilog2(new.depth)) |
				     FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT,
						new.entry_shift));
		in.pbl = new.pbl.desc;
	}
	depth = resize ? new.depth : srq->hwq.depth;
	if ((attr_mask & IB_SRQ_LIMIT) && attr->srq_limit > depth) {
		ibdev_dbg(&dev->ibdev,
			  "modify SRQ %u: limit %u above depth %u\n", srq->srqn,
			  attr->srq_limit, depth);
		err = -EINVAL;
		goto out_end;
	}
	in.srqn = cpu_to_le32(srq->srqn);
	if (attr_mask & IB_SRQ_LIMIT) {
		in.mask |= cpu_to_le32(KITE_MODIFY_SRQ_LIMIT);
		in.limit = cpu_to_le32(attr->srq_limit);
	}
	err = kite_ib_cmd_exec(dev, &cmd);
out_end:
	if (resize) {
		if (!srq->uctx)
			kite_ib_srq_resize_end(srq, &new, !err);
		else if (!err)
			swap(srq->hwq, new);
		/* The old ring after a resize, else the unused new one. */
		kite_ib_hwq_free(dev, &new);
	}
out_unlock:
	mutex_unlock(&srq->resize_mutex);
	return err;
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

	mutex_lock(&srq->resize_mutex);
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		goto out_unlock;
	limit = le32_to_cpu(out.limit);
	if (limit > srq->hwq.depth) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "QUERY_SRQ of SRQ %u: bad limit %u from the device\n",
				      srq->srqn, limit);
		err = -EIO;
		goto out_unlock;
	}
	attr->max_wr = srq->hwq.depth;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = (le32_to_cpu(out.flags) & KITE_SRQ_F_ARMED) ? limit :
									 0;
out_unlock:
	mutex_unlock(&srq->resize_mutex);
	return err;
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
	mutex_destroy(&srq->resize_mutex);
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
	u32 posted = 0, room;
	int err = 0;
	u16 tag;

	if (srq->uctx || !srq->wr_id) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	/* A resize in progress: the slot at pi must be free in both rings. */
	room = srq->next ? min(srq->hwq.depth, srq->next->depth) :
			   srq->hwq.depth;
	for (; wr; wr = wr->next) {
		if (srq->outstanding >= room || !srq->nfree) {
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
		if (srq->next)
			memcpy(kite_ib_hwq_entry(srq->next, srq->pi), hdr,
			       stride);
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
	if (srq->busy && tag < srq->ntags && test_bit(tag, srq->busy)) {
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
