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

#define KITE_SEG_SIZE		16
#define KITE_WQ_IDX_MASK	0xffffu

/* Send WQE: the control segment, then the largest opcode segments. */
static uint32_t kite_sq_fixed_size(enum ibv_qp_type type)
{
	size_t rc = sizeof(struct kite_wqe_raddr) +
		    sizeof(struct kite_wqe_atomic);

	if (rc < sizeof(struct kite_wqe_reg_mr))
		rc = sizeof(struct kite_wqe_reg_mr);
	return sizeof(struct kite_wqe_ctrl) +
	       (type == IBV_QPT_RC ? rc : sizeof(struct kite_wqe_ud));
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
			 bool send)
{
	uint32_t log_depth, shift;
	int ret;

	ret = kite_wq_log_depth(wr, &log_depth);
	if (!ret)
		ret = kite_wqe_shift(wqe_size, &shift);
	if (ret)
		return ret;
	if (pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE))
		return ENOMEM;
	ret = kite_ring_alloc(&wq->ring, log_depth, shift);
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
	pthread_spin_destroy(&wq->lock);
	return ENOMEM;
}

static void kite_wq_free(struct kite_wq *wq)
{
	free(wq->opcode);
	free(wq->wr_id);
	kite_ring_free(&wq->ring);
	pthread_spin_destroy(&wq->lock);
}

struct kite_qp *kite_find_qp(struct kite_context *ctx, uint32_t qpn)
{
	struct kite_qp **leaf;

	if (qpn > KITE_OBJ_MASK)
		return NULL;
	leaf = ctx->qp_table[qpn >> KITE_QP_TABLE_SHIFT];
	return leaf ? leaf[qpn & (KITE_QP_TABLE_LEAF - 1)] : NULL;
}

static int kite_qp_table_set(struct kite_context *ctx, uint32_t qpn,
			     struct kite_qp *qp)
{
	struct kite_qp ***leaf;
	int ret = 0;

	if (qpn > KITE_OBJ_MASK)
		return EPROTO;
	pthread_mutex_lock(&ctx->qp_table_mutex);
	leaf = &ctx->qp_table[qpn >> KITE_QP_TABLE_SHIFT];
	if (!*leaf && qp)
		*leaf = calloc(KITE_QP_TABLE_LEAF, sizeof(**leaf));
	if (*leaf)
		(*leaf)[qpn & (KITE_QP_TABLE_LEAF - 1)] = qp;
	else if (qp)
		ret = ENOMEM;
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return ret;
}

struct ibv_qp *kite_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct kite_context *ctx = to_kite_ctx(pd->context);
	struct ukite_create_qp_resp resp = {};
	struct ukite_create_qp cmd = {};
	struct ibv_qp_cap *cap = &attr->cap;
	uint64_t sq_data, sq_size, rq_size;
	struct kite_qp *qp;
	int ret;

	/* What Kite does not implement is unsupported, not bad input. */
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UD) {
		verbs_debug(&ctx->ibv_ctx, "create QP: QP type %d not supported\n",
			    attr->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (cap->max_send_sge > KITE_MAX_SGE ||
	    (!attr->srq && cap->max_recv_sge > KITE_MAX_SGE) ||
	    cap->max_inline_data > KITE_MAX_INLINE) {
		verbs_debug(&ctx->ibv_ctx,
			    "create QP: SGEs %u/%u or inline %u beyond the device's\n",
			    cap->max_send_sge, cap->max_recv_sge,
			    cap->max_inline_data);
		errno = EINVAL;
		return NULL;
	}
	sq_data = (uint64_t)cap->max_send_sge * KITE_SEG_SIZE;
	if (sq_data < cap->max_inline_data)
		sq_data = cap->max_inline_data;
	sq_size = kite_sq_fixed_size(attr->qp_type) + sq_data;
	rq_size = sizeof(struct kite_wqe_recv) +
		  (uint64_t)cap->max_recv_sge * KITE_SEG_SIZE;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = kite_wq_alloc(&qp->sq, cap->max_send_wr, sq_size, true);
	if (ret)
		goto err_free;
	if (attr->srq) {
		/* No RQ: the rq_* fields stay zero. */
		qp->srq = to_kite_srq(attr->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		ret = kite_wq_alloc(&qp->rq, 0, 0, false);
	} else {
		ret = kite_wq_alloc(&qp->rq, cap->max_recv_wr, rq_size,
				    false);
	}
	if (ret)
		goto err_sq;

	cmd.sq_buf_addr = (uintptr_t)qp->sq.ring.buf;
	cmd.sq_log_depth = qp->sq.ring.log_depth;
	cmd.sq_wqe_shift = qp->sq.ring.entry_shift;
	if (!attr->srq) {
		cmd.rq_buf_addr = (uintptr_t)qp->rq.ring.buf;
		cmd.rq_log_depth = qp->rq.ring.log_depth;
		cmd.rq_wqe_shift = qp->rq.ring.entry_shift;
	}
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_rq;
	/* The kernel answered with what the queues hold. */
	qp->sq.max_sge = attr->cap.max_send_sge;
	qp->rq.max_sge = attr->cap.max_recv_sge;
	qp->max_inline = attr->cap.max_inline_data;
	qp->sq_sig_all = attr->sq_sig_all;
	ret = kite_qp_table_set(ctx, qp->vqp.qp.qp_num, qp);
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

int kite_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct kite_qp *qp = to_kite_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET)
		return ret;
	/* The device forgot the queues: start them over, empty. */
	pthread_spin_lock(&qp->sq.lock);
	pthread_spin_lock(&qp->rq.lock);
	qp->sq.pi = qp->sq.ci = 0;
	qp->rq.pi = qp->rq.ci = 0;
	memset(qp->sq.ring.buf, 0, qp->sq.ring.size);
	memset(qp->rq.ring.buf, 0, qp->rq.ring.size);
	pthread_spin_unlock(&qp->rq.lock);
	pthread_spin_unlock(&qp->sq.lock);
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
	kite_qp_table_set(ctx, ibqp->qp_num, NULL);
	kite_wq_free(&qp->rq);
	kite_wq_free(&qp->sq);
	free(qp);
	return 0;
}

/* The WQE opcode and work completion opcode of a send work request. */
static int kite_wqe_opcode(enum ibv_wr_opcode op, enum ibv_qp_type type,
			   enum ibv_wc_opcode *wc_op)
{
	bool rc = type == IBV_QPT_RC;

	switch (op) {
	case IBV_WR_SEND:
		*wc_op = IBV_WC_SEND;
		return KITE_WQE_OP_SEND;
	case IBV_WR_SEND_WITH_IMM:
		*wc_op = IBV_WC_SEND;
		return KITE_WQE_OP_SEND_IMM;
	case IBV_WR_SEND_WITH_INV:
		*wc_op = IBV_WC_SEND;
		return rc ? KITE_WQE_OP_SEND_INV : -1;
	case IBV_WR_RDMA_WRITE:
		*wc_op = IBV_WC_RDMA_WRITE;
		return rc ? KITE_WQE_OP_RDMA_WRITE : -1;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*wc_op = IBV_WC_RDMA_WRITE;
		return rc ? KITE_WQE_OP_RDMA_WRITE_IMM : -1;
	case IBV_WR_RDMA_READ:
		*wc_op = IBV_WC_RDMA_READ;
		return rc ? KITE_WQE_OP_RDMA_READ : -1;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		*wc_op = IBV_WC_COMP_SWAP;
		return rc ? KITE_WQE_OP_ATOMIC_CS : -1;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		*wc_op = IBV_WC_FETCH_ADD;
		return rc ? KITE_WQE_OP_ATOMIC_FA : -1;
	case IBV_WR_LOCAL_INV:
		*wc_op = IBV_WC_LOCAL_INV;
		return rc ? KITE_WQE_OP_LOCAL_INV : -1;
	default:
		return -1;
	}
}

/* Write @num_sge data segments; the caller checked that they fit. */
static void kite_write_sges(struct kite_wqe_sge *seg, const struct ibv_sge *sg,
			    int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		seg[i].length = htole32(sg[i].length);
		seg[i].lkey = htole32(sg[i].lkey);
		seg[i].addr = htole64(sg[i].addr);
	}
}

/* SGEs, or with IBV_SEND_INLINE the bytes they point to, at @off. */
static int kite_send_data(uint8_t *wqe, size_t wqe_size, size_t off,
			  const struct ibv_send_wr *wr, uint32_t max_inline,
			  bool inline_ok, uint32_t *opcode,
			  struct kite_wqe_ctrl *ctrl)
{
	struct kite_wqe_sge *seg = (struct kite_wqe_sge *)(wqe + off);
	size_t total = 0;
	int i;

	if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
		return EINVAL;
	if (!(wr->send_flags & IBV_SEND_INLINE)) {
		if (wr->num_sge > KITE_MAX_SGE ||
		    (size_t)wr->num_sge > (wqe_size - off) / KITE_SEG_SIZE)
			return EINVAL;
		kite_write_sges(seg, wr->sg_list, wr->num_sge);
		*opcode |= FIELD_PREP(KITE_WQE_NUM_SGE, wr->num_sge);
		return 0;
	}
	if (!inline_ok)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (total > max_inline || total > KITE_MAX_INLINE ||
		    total > wqe_size - off)
			return EINVAL;
	}
	for (i = 0, total = 0; i < wr->num_sge; i++) {
		memcpy(wqe + off + total,
		       (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		total += wr->sg_list[i].length;
	}
	*opcode |= KITE_WQE_F_INLINE;
	ctrl->inline_len = htole16(total);
	return 0;
}

/* Build the send WQE of @wr in @wqe (zeroed, @wqe_size bytes). */
static int kite_build_send(struct kite_qp *qp, uint8_t *wqe, size_t wqe_size,
			   const struct ibv_send_wr *wr, uint16_t idx,
			   enum ibv_wc_opcode *wc_op)
{
	struct kite_wqe_ctrl *ctrl = (struct kite_wqe_ctrl *)wqe;
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	size_t off = sizeof(*ctrl);
	bool data = true, inline_ok = true;
	uint32_t opcode;
	int op;

	op = kite_wqe_opcode(wr->opcode, type, wc_op);
	if (op < 0)
		return EINVAL;
	opcode = FIELD_PREP(KITE_WQE_OPCODE, op);
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		opcode |= KITE_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		opcode |= KITE_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		opcode |= KITE_WQE_F_FENCE;
	ctrl->wqe_idx = htole16(idx);

	switch (op) {
	case KITE_WQE_OP_SEND_IMM:
	case KITE_WQE_OP_RDMA_WRITE_IMM:
		ctrl->imm_data = wr->imm_data;
		break;
	case KITE_WQE_OP_SEND_INV:
	case KITE_WQE_OP_LOCAL_INV:
		ctrl->inv_key = htole32(wr->invalidate_rkey);
		break;
	}

	switch (op) {
	case KITE_WQE_OP_SEND:
	case KITE_WQE_OP_SEND_IMM:
		if (type == IBV_QPT_UD) {
			struct kite_wqe_ud *av = (struct kite_wqe_ud *)(wqe + off);

			if (!wr->wr.ud.ah)
				return EINVAL;
			*av = to_kite_ah(wr->wr.ud.ah)->av;
			av->remote_qpn = htole32(wr->wr.ud.remote_qpn);
			av->qkey = htole32(wr->wr.ud.remote_qkey);
			off += sizeof(*av);
		}
		break;
	case KITE_WQE_OP_RDMA_WRITE:
	case KITE_WQE_OP_RDMA_WRITE_IMM:
	case KITE_WQE_OP_RDMA_READ: {
		struct kite_wqe_raddr *raddr =
			(struct kite_wqe_raddr *)(wqe + off);

		raddr->remote_addr = htole64(wr->wr.rdma.remote_addr);
		raddr->rkey = htole32(wr->wr.rdma.rkey);
		off += sizeof(*raddr);
		inline_ok = op != KITE_WQE_OP_RDMA_READ;
		break;
	}
	case KITE_WQE_OP_ATOMIC_CS:
	case KITE_WQE_OP_ATOMIC_FA: {
		struct kite_wqe_raddr *raddr =
			(struct kite_wqe_raddr *)(wqe + off);
		struct kite_wqe_atomic *aseg =
			(struct kite_wqe_atomic *)(wqe + off + sizeof(*raddr));

		if (wr->wr.atomic.remote_addr & 7 || wr->num_sge != 1 ||
		    !wr->sg_list || wr->sg_list[0].length != 8 ||
		    (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		raddr->remote_addr = htole64(wr->wr.atomic.remote_addr);
		raddr->rkey = htole32(wr->wr.atomic.rkey);
		if (op == KITE_WQE_OP_ATOMIC_CS) {
			aseg->swap_add = htole64(wr->wr.atomic.swap);
			aseg->compare = htole64(wr->wr.atomic.compare_add);
		} else {
			aseg->swap_add = htole64(wr->wr.atomic.compare_add);
		}
		off += sizeof(*raddr) + sizeof(*aseg);
		inline_ok = false;
		break;
	}
	case KITE_WQE_OP_LOCAL_INV:
		data = false;
		break;
	}

	if (data) {
		int ret = kite_send_data(wqe, wqe_size, off, wr, qp->max_inline,
					 inline_ok, &opcode, ctrl);

		if (ret)
			return ret;
	}
	ctrl->opcode = htole32(opcode);
	return 0;
}

static uint64_t kite_qp_db(uint32_t qpn, uint32_t type, uint32_t pi)
{
	return FIELD_PREP(KITE_DB_OBJ, qpn) | FIELD_PREP(KITE_DB_TYPE, type) |
	       FIELD_PREP(KITE_DB_PI, pi & KITE_WQ_IDX_MASK);
}

static bool kite_wq_full(const struct kite_wq *wq)
{
	return ((wq->pi - wq->ci) & KITE_WQ_IDX_MASK) >=
	       1U << wq->ring.log_depth;
}

int kite_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct kite_context *ctx = to_kite_ctx(ibqp->context);
	struct kite_qp *qp = to_kite_qp(ibqp);
	size_t wqe_size = 1U << qp->sq.ring.entry_shift;
	uint32_t start;
	int ret = 0;

	/* Nothing posted now would ever complete. */
	if (kite_dev_dead(ctx)) {
		*bad_wr = wr;
		return EIO;
	}
	pthread_spin_lock(&qp->sq.lock);
	start = qp->sq.pi;
	for (; wr; wr = wr->next) {
		uint32_t slot = qp->sq.pi & ((1U << qp->sq.ring.log_depth) - 1);
		uint8_t *wqe = kite_ring_entry(&qp->sq.ring, qp->sq.pi);
		enum ibv_wc_opcode wc_op;

		if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_INIT ||
		    ibqp->state == IBV_QPS_RTR) {
			ret = EINVAL;
			break;
		}
		if (kite_wq_full(&qp->sq)) {
			ret = ENOMEM;
			break;
		}
		memset(wqe, 0, wqe_size);
		ret = kite_build_send(qp, wqe, wqe_size, wr,
				      (uint16_t)qp->sq.pi, &wc_op);
		if (ret) {
			memset(wqe, 0, wqe_size);
			break;
		}
		qp->sq.wr_id[slot] = wr->wr_id;
		qp->sq.opcode[slot] = wc_op;
		qp->sq.pi++;
	}
	if (qp->sq.pi != start) {
		/* The WQEs before the doorbell that makes the device read them. */
		udma_to_device_barrier();
		kite_ring_db(ctx, kite_qp_db(ibqp->qp_num, KITE_DB_TYPE_SQ,
					     qp->sq.pi));
	}
	pthread_spin_unlock(&qp->sq.lock);
	if (ret)
		*bad_wr = wr;
	return ret;
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
	if (qp->srq) {
		/* Receives go to the SRQ (ibv_post_srq_recv). */
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	start = qp->rq.pi;
	for (; wr; wr = wr->next) {
		uint32_t slot = qp->rq.pi & ((1U << qp->rq.ring.log_depth) - 1);
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
		qp->rq.pi++;
	}
	if (qp->rq.pi != start) {
		udma_to_device_barrier();
		kite_ring_db(ctx, kite_qp_db(ibqp->qp_num, KITE_DB_TYPE_RQ,
					     qp->rq.pi));
	}
	pthread_spin_unlock(&qp->rq.lock);
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
