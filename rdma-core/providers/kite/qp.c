/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libkite queue pairs and address handles: work queues in this process's
 * memory, WQEs in the formats of prm_wqe.rst, doorbells through the
 * context's doorbell page.
 *
 * Copyright (c) 2026 Kite
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "kite.h"

/* Send WQE: the control segment, then the largest opcode segments. */
static uint32_t kite_sq_fixed_size(enum ibv_qp_type type)
{
	size_t rc = sizeof(struct kite_wqe_raddr) +
		    sizeof(struct kite_wqe_atomic);

	if (rc < sizeof(struct kite_wqe_reg_mr))
		rc = sizeof(struct kite_wqe_reg_mr);
	/* UC and XRC initiators are sized as RC, as the kernel sizes them. */
	return sizeof(struct kite_wqe_ctrl) +
	       (type == IBV_QPT_RC || type == IBV_QPT_UC ||
		type == IBV_QPT_XRC_SEND ? rc : sizeof(struct kite_wqe_ud));
}

/* The smallest WQE size (a power of two, 64 .. 1024) holding @size bytes. */
static int kite_wqe_shift(uint64_t size, uint32_t *shift)
{
	uint32_t s = KITE_WQE_MIN_SHIFT;

	while ((1ULL << s) < size) {
		if (++s > KITE_WQE_MAX_SHIFT)
			return EINVAL;
	}
	*shift = s;
	return 0;
}

/* A queue of at least @wr WQEs: 2 .. 2^KITE_WQ_MAX_LOG_DEPTH. */
static int kite_wq_log_depth(uint32_t wr, uint32_t *log_depth)
{
	uint32_t l = 1;

	while ((1U << l) < wr) {
		if (++l > KITE_WQ_MAX_LOG_DEPTH)
			return EINVAL;
	}
	*log_depth = l;
	return 0;
}

static int kite_wq_alloc(struct kite_wq *wq, uint32_t wr, uint64_t wqe_size,
			 bool send, struct kite_pd *pdom, bool need_lock)
{
	uint32_t log_depth, shift;
	int ret;

	ret = kite_wq_log_depth(wr, &log_depth);
	if (!ret)
		ret = kite_wqe_shift(wqe_size, &shift);
	if (ret)
		return ret;
	ret = kite_lock_init(&wq->lock, need_lock);
	if (ret)
		return ret;
	ret = kite_ring_alloc(&wq->ring, log_depth, shift, pdom,
			      send ? KITE_RES_SQ : KITE_RES_RQ);
	if (ret)
		goto err_lock;
	wq->wr_id = calloc(1U << log_depth, sizeof(*wq->wr_id));
	if (!wq->wr_id)
		goto err_ring;
	if (send) {
		wq->opcode = calloc(1U << log_depth, sizeof(*wq->opcode));
		if (!wq->opcode)
			goto err_wr_id;
	}
	return 0;

err_wr_id:
	free(wq->wr_id);
err_ring:
	kite_ring_free(&wq->ring);
err_lock:
	kite_lock_destroy(&wq->lock);
	return ret ? ret : ENOMEM;
}

static void kite_wq_free(struct kite_wq *wq)
{
	free(wq->opcode);
	free(wq->wr_id);
	kite_ring_free(&wq->ring);
	kite_lock_destroy(&wq->lock);
}

/* ibv_qp_init_attr_ex.comp_mask bits verbs defines. */
#define KITE_QP_INIT_ATTR_DEFINED	(2 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS - 1)
/* ... and those Kite takes (create_flags must be 0). */
#define KITE_QP_INIT_ATTR_SUPPORTED	(IBV_QP_INIT_ATTR_PD | \
					 IBV_QP_INIT_ATTR_XRCD | \
					 IBV_QP_INIT_ATTR_CREATE_FLAGS | \
					 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
/* ibv_qp_create_flags verbs defines. */
#define KITE_QP_CREATE_DEFINED	(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | \
				 IBV_QP_CREATE_SCATTER_FCS | \
				 IBV_QP_CREATE_CVLAN_STRIPPING | \
				 IBV_QP_CREATE_SOURCE_QPN | \
				 IBV_QP_CREATE_PCI_WRITE_END_PADDING)

/*
 * What Kite does not implement is unsupported (EOPNOTSUPP), what no
 * device could take is bad input (EINVAL).
 */
static int kite_check_qp_init_attr(struct kite_context *ctx,
				   const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	int ret;

	if (attr->comp_mask & ~KITE_QP_INIT_ATTR_DEFINED) {
		verbs_debug(&ctx->ibv_ctx, "create QP: unknown comp_mask 0x%x\n",
			    attr->comp_mask);
		return EINVAL;
	}
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_XRC_SEND &&
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		verbs_debug(&ctx->ibv_ctx, "create QP: QP type %d not supported\n",
			    attr->qp_type);
		return EOPNOTSUPP;
	}
	if (attr->comp_mask & ~KITE_QP_INIT_ATTR_SUPPORTED) {
		verbs_debug(&ctx->ibv_ctx, "create QP: comp_mask 0x%x not supported\n",
			    attr->comp_mask);
		return EOPNOTSUPP;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		/* An XRC target: a domain, no PD, queues, CQs or SRQ. */
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
		    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
			verbs_debug(&ctx->ibv_ctx,
				    "create QP: XRC target without a domain, or with send operations\n");
			return EINVAL;
		}
	} else if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
		   (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD)) {
		verbs_debug(&ctx->ibv_ctx, "create QP: no PD, or an XRC domain\n");
		return EINVAL;
	}
	if (attr->qp_type == IBV_QPT_XRC_SEND && attr->srq) {
		verbs_debug(&ctx->ibv_ctx, "create QP: XRC initiator on an SRQ\n");
		return EINVAL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags) {
		verbs_debug(&ctx->ibv_ctx, "create QP: create_flags 0x%x\n",
			    attr->create_flags);
		return attr->create_flags & ~KITE_QP_CREATE_DEFINED ?
			EINVAL : EOPNOTSUPP;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = kite_check_send_ops(&ctx->ibv_ctx.context,
					  attr->qp_type, attr->send_ops_flags);
		if (ret) {
			verbs_debug(&ctx->ibv_ctx,
				    "create QP: send_ops_flags 0x%llx: %d\n",
				    (unsigned long long)attr->send_ops_flags,
				    ret);
			return ret;
		}
	}
	if (cap->max_send_sge > KITE_MAX_SGE ||
	    (!attr->srq && cap->max_recv_sge > KITE_MAX_SGE) ||
	    cap->max_inline_data > KITE_MAX_INLINE) {
		verbs_debug(&ctx->ibv_ctx,
			    "create QP: SGEs %u/%u or inline %u beyond the device's\n",
			    cap->max_send_sge, cap->max_recv_sge,
			    cap->max_inline_data);
		return EINVAL;
	}
	return 0;
}

/*
 * An XRC target QP (created, or opened by its number): the kernel's,
 * shared through its XRC domain, with no queues or CQs. It is not in the
 * QP table: its receives complete in the CQs of the XRC SRQs, by SRQ
 * number, in the contexts that have those. Only its handle is here, for
 * modify, query and destroy.
 */
static struct ibv_qp *kite_xrc_tgt_new(struct ibv_context *ibctx,
				       struct ibv_qp_init_attr_ex *attr,
				       struct ibv_qp_open_attr *open)
{
	struct ib_uverbs_create_qp_resp oresp;
	struct ukite_create_qp_resp resp = {};
	struct ukite_create_qp cmd = {};
	struct ibv_open_qp ocmd;
	struct kite_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->xrc_tgt = true;
	if (open)
		ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), open,
				      &ocmd, sizeof(ocmd), &oresp,
				      sizeof(oresp));
	else
		ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
					   sizeof(cmd), &resp.ibv_resp,
					   sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

struct ibv_qp *kite_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr)
{
	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	return kite_xrc_tgt_new(ibctx, NULL, attr);
}

struct ibv_qp *kite_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct kite_context *ctx = to_kite_ctx(ibctx);
	struct ukite_create_qp_resp resp = {};
	struct ukite_create_qp cmd = {};
	struct ibv_qp_init_attr_ex cattr;
	struct ibv_qp_cap *cap = &attr->cap;
	uint64_t sq_data, sq_size, rq_size;
	bool need_lock, no_rq;
	struct kite_qp *qp;
	int ret;

	ret = kite_check_qp_init_attr(ctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return kite_xrc_tgt_new(ibctx, attr, NULL);
	/* With an SRQ, or an XRC initiator: a send queue only. */
	no_rq = attr->srq || attr->qp_type == IBV_QPT_XRC_SEND;
	sq_data = (uint64_t)cap->max_send_sge * sizeof(struct kite_wqe_sge);
	if (sq_data < cap->max_inline_data)
		sq_data = cap->max_inline_data;
	sq_size = kite_sq_fixed_size(attr->qp_type) + sq_data;
	rq_size = sizeof(struct kite_wqe_recv) +
		  (uint64_t)cap->max_recv_sge * sizeof(struct kite_wqe_sge);

	need_lock = kite_pd_need_lock(attr->pd);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = kite_wq_alloc(&qp->sq, cap->max_send_wr, sq_size, true,
			    kite_parent_domain(attr->pd), need_lock);
	if (ret)
		goto err_free;
	if (no_rq) {
		/* No RQ: the rq_* fields stay zero. */
		qp->srq = attr->srq ? to_kite_srq(attr->srq) : NULL;
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		ret = kite_wq_alloc(&qp->rq, 0, 0, false, NULL, need_lock);
	} else {
		ret = kite_wq_alloc(&qp->rq, cap->max_recv_wr, rq_size,
				    false, kite_parent_domain(attr->pd), need_lock);
	}
	if (ret)
		goto err_sq;

	cmd.sq_buf_addr = (uintptr_t)qp->sq.ring.buf;
	cmd.sq_log_depth = qp->sq.ring.log_depth;
	cmd.sq_wqe_shift = qp->sq.ring.entry_shift;
	if (!no_rq) {
		cmd.rq_buf_addr = (uintptr_t)qp->rq.ring.buf;
		cmd.rq_log_depth = qp->rq.ring.log_depth;
		cmd.rq_wqe_shift = qp->rq.ring.entry_shift;
	}
	/* The checks above took the (zero) create flags. */
	cattr = *attr;
	cattr.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &cattr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_rq;
	/* The kernel answered with what the queues hold. */
	*cap = cattr.cap;
	qp->sq.max_sge = cap->max_send_sge;
	qp->rq.max_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	qp->ctx = ctx;
	qp->db = kite_db_addr(ctx);
	qp->sq_db = FIELD_PREP(KITE_DB_OBJ, qp->vqp.qp.qp_num) |
		    FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_SQ);
	qp->sig_all = attr->sq_sig_all ? KITE_WQE_F_SIGNALED : 0;
	qp->ud = attr->qp_type == IBV_QPT_UD;
	qp->xrc = attr->qp_type == IBV_QPT_XRC_SEND;
	qp->sq_sge_ok = cap->max_send_sge &&
			(1U << qp->sq.ring.entry_shift) >=
			kite_sq_fixed_size(attr->qp_type) +
			sizeof(struct kite_wqe_sge);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		kite_set_wr_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	ret = kite_table_set(ctx, ctx->qp_table, qp->vqp.qp.qp_num, qp);
	if (ret) {
		verbs_err(&ctx->ibv_ctx, "cannot track QPN %u: %d\n",
			  qp->vqp.qp.qp_num, ret);
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_rq;
	}
	return &qp->vqp.qp;

err_rq:
	kite_wq_free(&qp->rq);
err_sq:
	kite_wq_free(&qp->sq);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *kite_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = kite_create_qp_ex(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

/*
 * The completions of @qp that no one polled are dropped from its CQs when
 * it is reset or destroyed (its receives from an SRQ go back to the SRQ):
 * otherwise a WQE index counted again from 0, or the QP number reused,
 * would match them.
 */
static void kite_qp_clean_cqs(struct kite_qp *qp)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;

	if (ibqp->recv_cq)
		kite_cq_clean(to_kite_cq(ibqp->recv_cq), ibqp->qp_num, qp->srq);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		kite_cq_clean(to_kite_cq(ibqp->send_cq), ibqp->qp_num, NULL);
}

int kite_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct kite_qp *qp = to_kite_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET || qp->xrc_tgt)
		return ret;
	/* The device forgot the queues: start them over, empty. */
	kite_qp_clean_cqs(qp);
	kite_lock(&qp->sq.lock);
	kite_lock(&qp->rq.lock);
	/* No poll of the QP's CQs is at it: kite_qp_clean_cqs() waited. */
	kite_wq_set_pi(&qp->sq, 0);
	kite_wq_set_ci(&qp->sq, 0);
	kite_wq_set_pi(&qp->rq, 0);
	kite_wq_set_ci(&qp->rq, 0);
	memset(qp->sq.ring.buf, 0, qp->sq.ring.size);
	memset(qp->rq.ring.buf, 0, qp->rq.ring.size);
	kite_unlock(&qp->rq.lock);
	kite_unlock(&qp->sq.lock);
	return 0;
}

int kite_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int kite_destroy_qp(struct ibv_qp *ibqp)
{
	struct kite_context *ctx = to_kite_ctx(ibqp->context);
	struct kite_qp *qp = to_kite_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	if (qp->xrc_tgt) {
		free(qp);
		return 0;
	}
	kite_qp_clean_cqs(qp);
	kite_table_set(ctx, ctx->qp_table, ibqp->qp_num, NULL);
	kite_wq_free(&qp->rq);
	kite_wq_free(&qp->sq);
	free(qp);
	return 0;
}

int kite_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct kite_context *ctx = to_kite_ctx(ibqp->context);
	struct kite_qp *qp = to_kite_qp(ibqp);
	size_t wqe_size = 1U << qp->rq.ring.entry_shift;
	uint32_t start;
	int ret = 0;

	/* Nothing posted now would ever complete. */
	if (kite_dev_dead(ctx)) {
		*bad_wr = wr;
		return EIO;
	}
	if (qp->srq || ibqp->qp_type == IBV_QPT_XRC_SEND || qp->xrc_tgt) {
		/* Receives go to an SRQ (ibv_post_srq_recv). */
		*bad_wr = wr;
		return EINVAL;
	}
	kite_lock(&qp->rq.lock);
	start = qp->rq.pi;
	for (; wr; wr = wr->next) {
		uint32_t slot = kite_ring_slot(&qp->rq.ring, qp->rq.pi);
		uint8_t *wqe = kite_ring_entry(&qp->rq.ring, qp->rq.pi);
		struct kite_wqe_recv *hdr = (struct kite_wqe_recv *)wqe;
		struct kite_wqe_sge *seg = (struct kite_wqe_sge *)(hdr + 1);

		if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_ERR) {
			ret = EINVAL;
			break;
		}
		if (kite_wq_full(&qp->rq)) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->rq.max_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			ret = EINVAL;
			break;
		}
		memset(wqe, 0, wqe_size);
		hdr->num_sge = htole32(wr->num_sge);
		kite_write_sges(seg, wr->sg_list, wr->num_sge);
		qp->rq.wr_id[slot] = wr->wr_id;
		kite_wq_set_pi(&qp->rq, qp->rq.pi + 1);
	}
	if (qp->rq.pi != start) {
		udma_to_device_barrier();
		kite_ring_db(ctx, kite_qp_db(ibqp->qp_num, KITE_DB_TYPE_RQ,
					     qp->rq.pi));
	}
	kite_unlock(&qp->rq.lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

struct ibv_ah *kite_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ukite_create_ah_resp resp = {};
	struct kite_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	if (resp.comp_mask) {
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		free(ah);
		errno = EPROTO;
		return NULL;
	}
	memcpy(&ah->av, resp.av, sizeof(ah->av));
	return &ah->ibv_ah;
}

int kite_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;
	free(to_kite_ah(ibah));
	return 0;
}
