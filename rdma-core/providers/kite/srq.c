/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libkite shared receive queues: a ring of receive WQEs in this process's
 * memory (struct kite_wqe_srq_recv and its data segments, prm_srq.rst)
 * and the SRQ doorbell in the context's doorbell page.
 *
 * The device takes WQEs in ring order, but they complete on the CQs of
 * the QPs that took them (an XRC SRQ's, on its own CQ), in any order. Each WQE carries a tag, an index
 * in the wr_id table, which its CQE returns; free tags are kept on a
 * stack. At most depth WQEs are outstanding, so the slot at the producer
 * counter is always one the device has taken.
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

/* The log2 of the ring for @max_wr WQEs (at least 2); EINVAL if too many. */
static int kite_srq_log_depth(uint32_t max_wr, uint32_t *log_depth)
{
	uint32_t log = 1;

	while ((1U << log) < max_wr)
		if (++log > KITE_WQ_MAX_LOG_DEPTH)
			return EINVAL;
	*log_depth = log;
	return 0;
}

static void kite_srq_free(struct kite_srq *srq)
{
	free(srq->busy);
	free(srq->free);
	free(srq->wr_id);
	kite_ring_free(&srq->ring);
	kite_lock_destroy(&srq->lock);
	free(srq);
}

/*
 * Tag tables of @n tags for @srq, with its outstanding tags; the new tags
 * go under the free ones (at creation, all @n of them, tag 0 on top).
 * Called with the SRQ's lock held; frees the old tables. ENOMEM leaves the
 * SRQ as it was.
 */
static int kite_srq_grow_tags(struct kite_srq *srq, uint32_t n)
{
	uint64_t *wr_id = calloc(n, sizeof(*wr_id));
	uint16_t *free_tags = calloc(n, sizeof(*free_tags));
	uint8_t *busy = calloc(n, sizeof(*busy));
	uint32_t i, added = n - srq->ntags;

	if (!wr_id || !free_tags || !busy) {
		free(wr_id);
		free(free_tags);
		free(busy);
		return ENOMEM;
	}
	if (srq->ntags) {
		memcpy(wr_id, srq->wr_id, srq->ntags * sizeof(*wr_id));
		memcpy(busy, srq->busy, srq->ntags * sizeof(*busy));
		memcpy(free_tags + added, srq->free,
		       srq->nfree * sizeof(*free_tags));
	}
	for (i = 0; i < added; i++)
		free_tags[i] = n - 1 - i;
	free(srq->wr_id);
	free(srq->free);
	free(srq->busy);
	srq->wr_id = wr_id;
	srq->free = free_tags;
	srq->busy = busy;
	srq->nfree += added;
	srq->ntags = n;
	return 0;
}

/*
 * A new SRQ's ring and tags for @attr, and the request naming the ring;
 * NULL with errno set.
 */
static struct kite_srq *kite_srq_prepare(struct ibv_pd *pd,
					 const struct ibv_srq_attr *attr,
					 struct kite_ib_create_srq_req *req)
{
	uint32_t log_depth, shift = KITE_WQE_MIN_SHIFT;
	struct kite_srq *srq;
	uint64_t size;
	int ret;

	if (!attr->max_wr || attr->max_sge > KITE_MAX_SGE ||
	    attr->srq_limit > attr->max_wr ||
	    kite_srq_log_depth(attr->max_wr, &log_depth)) {
		errno = EINVAL;
		return NULL;
	}
	size = sizeof(struct kite_wqe_srq_recv) +
	       (uint64_t)attr->max_sge * sizeof(struct kite_wqe_sge);
	while ((1ULL << shift) < size)
		shift++;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	ret = kite_lock_init(&srq->lock, kite_pd_need_lock(pd));
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	ret = kite_ring_alloc(&srq->ring, log_depth, shift,
			      kite_parent_domain(pd), KITE_RES_SRQ);
	if (!ret)
		ret = kite_srq_grow_tags(srq, 1U << log_depth);
	if (ret) {
		kite_srq_free(srq);
		errno = ret;
		return NULL;
	}
	req->buf_addr = (uintptr_t)srq->ring.buf;
	req->log_depth = log_depth;
	req->wqe_shift = shift;
	return srq;
}

/*
 * The kernel created @srq (@ret 0, else its error): check its answer and
 * give @attr what the SRQ holds. NULL with errno set and the SRQ freed
 * (destroyed first if the kernel had created it).
 */
static struct ibv_srq *kite_srq_created(struct kite_srq *srq, int ret,
					const struct kite_ib_create_srq_resp *resp,
					struct ibv_srq_attr *attr)
{
	struct ibv_srq *ibsrq = &srq->vsrq.srq;

	if (ret)
		goto err_free;
	if (resp->comp_mask || !resp->srqn || resp->srqn > KITE_OBJ_MASK) {
		verbs_err(verbs_get_ctx(ibsrq->context),
			  "create SRQ: bad response (comp_mask %#x, SRQN %u)\n",
			  resp->comp_mask, resp->srqn);
		ret = EPROTO;
		goto err_destroy;
	}
	srq->srqn = resp->srqn;
	if (srq->xrc) {
		ret = kite_table_set(to_kite_ctx(ibsrq->context),
				     to_kite_ctx(ibsrq->context)->srq_table,
				     srq->srqn, srq);
		if (ret)
			goto err_destroy;
	}
	srq->max_sge = ((1U << srq->ring.entry_shift) -
			sizeof(struct kite_wqe_srq_recv)) /
		       sizeof(struct kite_wqe_sge);
	if (srq->max_sge > KITE_MAX_SGE)
		srq->max_sge = KITE_MAX_SGE;
	attr->max_wr = srq->ring.mask + 1;
	attr->max_sge = srq->max_sge;
	return ibsrq;

err_destroy:
	ibv_cmd_destroy_srq(ibsrq);
err_free:
	kite_srq_free(srq);
	errno = ret;
	return NULL;
}

struct ibv_srq *kite_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct ukite_create_srq_resp resp = {};
	struct ukite_create_srq cmd = {};
	struct kite_srq *srq;
	int ret;

	srq = kite_srq_prepare(pd, &attr->attr, &cmd.drv_payload);
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	return kite_srq_created(srq, ret, &resp.drv_payload, &attr->attr);
}

/* ibv_srq_init_attr_ex.comp_mask bits verbs defines, and those Kite takes. */
#define KITE_SRQ_INIT_ATTR_DEFINED	(2 * IBV_SRQ_INIT_ATTR_TM - 1)
#define KITE_SRQ_INIT_ATTR_SUPPORTED	(IBV_SRQ_INIT_ATTR_TYPE | \
					 IBV_SRQ_INIT_ATTR_PD | \
					 IBV_SRQ_INIT_ATTR_XRCD | \
					 IBV_SRQ_INIT_ATTR_CQ)

/*
 * ibv_create_srq_ex(): a basic SRQ, or an XRC SRQ (its domain and CQ
 * given), whose receives the XRC target QPs of the domain complete in its
 * CQ. Tag matching SRQs are not Kite's (EOPNOTSUPP).
 */
struct ibv_srq *kite_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;
	struct ukite_create_xsrq_resp resp = {};
	struct ukite_create_xsrq cmd = {};
	struct ibv_srq_init_attr basic;
	struct ibv_srq *ibsrq;
	struct kite_srq *srq;
	int ret;

	if (mask & ~KITE_SRQ_INIT_ATTR_DEFINED) {
		errno = EINVAL;
		return NULL;
	}
	if ((mask & ~KITE_SRQ_INIT_ATTR_SUPPORTED) ||
	    ((mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC &&
	     attr->srq_type != IBV_SRQT_XRC)) {
		verbs_debug(verbs_get_ctx(ibctx),
			    "create SRQ: comp_mask %#x, type %d not supported\n",
			    mask, attr->srq_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if (!(mask & IBV_SRQ_INIT_ATTR_TYPE) ||
	    attr->srq_type == IBV_SRQT_BASIC) {
		basic = (struct ibv_srq_init_attr){
			.srq_context = attr->srq_context,
			.attr = attr->attr,
		};
		ibsrq = kite_create_srq(attr->pd, &basic);
		if (ibsrq)
			attr->attr = basic.attr;
		return ibsrq;
	}
	if (!(mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	    !(mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}
	srq = kite_srq_prepare(attr->pd, &attr->attr, &cmd.drv_payload);
	if (!srq)
		return NULL;
	srq->xrc = true;
	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	return kite_srq_created(srq, ret, &resp.drv_payload, &attr->attr);
}

int kite_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_kite_srq(ibsrq)->srqn;
	return 0;
}

/*
 * Move @srq to a new ring for attr->max_wr WQEs (kite_ib_modify_srq_req):
 * the last WQEs posted, which include every one the device has not taken,
 * are copied into it first, and nothing is posted until the kernel has
 * switched the device to it.
 */
static int kite_resize_srq(struct kite_srq *srq, struct ibv_srq_attr *attr,
			   int attr_mask)
{
	struct verbs_context *vctx = verbs_get_ctx(srq->vsrq.srq.context);
	struct ukite_modify_srq cmd = {};
	struct kite_ring ring, old;
	uint32_t log_depth, depth, n, i, idx;
	int ret;

	if (!attr->max_wr || kite_srq_log_depth(attr->max_wr, &log_depth)) {
		verbs_err(vctx, "resize SRQ %u: %u WQEs out of range\n",
			  srq->srqn, attr->max_wr);
		return EINVAL;
	}
	depth = 1U << log_depth;
	ret = kite_ring_alloc(&ring, log_depth, srq->ring.entry_shift,
			      srq->ring.pdom, KITE_RES_SRQ);
	if (ret)
		return ret;

	kite_lock(&srq->lock);
	if (srq->outstanding > depth) {
		verbs_err(vctx, "resize SRQ %u: %u WQEs outstanding, %u asked\n",
			  srq->srqn, srq->outstanding, attr->max_wr);
		ret = EINVAL;
		goto out_unlock;
	}
	/* Tags for the new depth first: their failure changes nothing. */
	if (depth > srq->ntags) {
		ret = kite_srq_grow_tags(srq, depth);
		if (ret)
			goto out_unlock;
	}
	n = depth < srq->ring.mask + 1 ? depth : srq->ring.mask + 1;
	for (i = 0; i < n; i++) {
		idx = srq->pi - n + i;
		memcpy(kite_ring_entry(&ring, idx),
		       kite_ring_entry(&srq->ring, idx),
		       1U << srq->ring.entry_shift);
	}
	cmd.buf_addr = (uintptr_t)ring.buf;
	cmd.log_depth = log_depth;
	ret = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (ret)
		goto out_unlock;
	old = srq->ring;
	srq->ring = ring;
	ring = old;
out_unlock:
	kite_unlock(&srq->lock);
	/* The old ring after a resize, else the unused new one. */
	kite_ring_free(&ring);
	return ret;
}

int kite_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd;

	if (attr_mask & IBV_SRQ_MAX_WR)
		return kite_resize_srq(to_kite_srq(ibsrq), attr, attr_mask);
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int kite_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int kite_destroy_srq(struct ibv_srq *ibsrq)
{
	struct kite_context *ctx = to_kite_ctx(ibsrq->context);
	struct kite_srq *srq = to_kite_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	if (srq->xrc) {
		/* Its receives left in its CQ: an SRQN reused would match. */
		kite_cq_clean(to_kite_cq(srq->vsrq.cq), KITE_QPN_NONE, srq);
		kite_table_set(ctx, ctx->srq_table, srq->srqn, NULL);
	}
	kite_srq_free(srq);
	return 0;
}

int kite_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct kite_context *ctx = to_kite_ctx(ibsrq->context);
	struct kite_srq *srq = to_kite_srq(ibsrq);
	size_t wqe_size = 1U << srq->ring.entry_shift;
	uint32_t start, depth;
	int ret = 0;

	kite_lock(&srq->lock);
	/* Under the lock: a resize replaces the ring. */
	depth = srq->ring.mask + 1;
	start = srq->pi;
	for (; wr; wr = wr->next) {
		uint8_t *wqe = kite_ring_entry(&srq->ring, srq->pi);
		struct kite_wqe_srq_recv *hdr = (struct kite_wqe_srq_recv *)wqe;
		struct kite_wqe_sge *seg = (struct kite_wqe_sge *)(hdr + 1);
		uint16_t tag;
		int i;

		if (srq->outstanding >= depth || !srq->nfree) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			ret = EINVAL;
			break;
		}
		tag = srq->free[--srq->nfree];
		memset(wqe, 0, wqe_size);
		hdr->num_sge = htole32(wr->num_sge);
		hdr->tag = htole16(tag);
		for (i = 0; i < wr->num_sge; i++) {
			seg[i].length = htole32(wr->sg_list[i].length);
			seg[i].lkey = htole32(wr->sg_list[i].lkey);
			seg[i].addr = htole64(wr->sg_list[i].addr);
		}
		srq->wr_id[tag] = wr->wr_id;
		srq->busy[tag] = 1;
		srq->outstanding++;
		srq->pi++;
	}
	if (srq->pi != start) {
		udma_to_device_barrier();
		kite_ring_db(ctx, FIELD_PREP(KITE_DB_OBJ, srq->srqn) |
				  FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_SRQ) |
				  FIELD_PREP(KITE_DB_PI,
					     srq->pi & KITE_WQ_IDX_MASK));
	}
	kite_unlock(&srq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

bool kite_srq_complete(struct kite_srq *srq, uint16_t tag, uint64_t *wr_id)
{
	bool ok = false;

	kite_lock(&srq->lock);
	if (tag < srq->ntags && srq->busy[tag]) {
		srq->busy[tag] = 0;
		*wr_id = srq->wr_id[tag];
		srq->free[srq->nfree++] = tag;
		srq->outstanding--;
		ok = true;
	}
	kite_unlock(&srq->lock);
	return ok;
}
