/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libkite completion queues: the CQE ring and doorbell record in this
 * process's memory, polled with the owner rule and armed through the
 * doorbell record and the context's doorbell page (prm_cq.rst).
 *
 * Copyright (c) 2026 Kite
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/compiler.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "kite.h"

#define KITE_CQE_SHIFT		6
#define KITE_RING_ALIGN		4096

/*
 * Rings (CQs and work queues alike): 2^log_depth entries of 2^entry_shift
 * bytes, zeroed, starting on a 4 KiB boundary as the kernel requires. A
 * ring made for a parent domain with allocators comes from its alloc
 * (unless that answers IBV_ALLOCATOR_USE_DEFAULT) and holds a reference
 * on the parent domain until it is freed.
 */
int kite_ring_alloc(struct kite_ring *ring, uint32_t log_depth,
		    uint32_t entry_shift, struct kite_pd *pdom,
		    enum kite_res_type res_type)
{
	void *buf = IBV_ALLOCATOR_USE_DEFAULT;

	ring->size = align((size_t)1 << (log_depth + entry_shift),
			   KITE_RING_ALIGN);
	ring->log_depth = log_depth;
	ring->mask = (1U << log_depth) - 1;
	ring->entry_shift = entry_shift;
	ring->pdom = pdom;
	ring->pdom_buf = false;
	ring->res_type = res_type;
	if (pdom && pdom->alloc)
		buf = pdom->alloc(&pdom->ibv_pd, pdom->pd_context, ring->size,
				  KITE_RING_ALIGN, res_type);
	if (buf == IBV_ALLOCATOR_USE_DEFAULT) {
		if (posix_memalign(&buf, KITE_RING_ALIGN, ring->size))
			buf = NULL;
	} else if (buf) {
		ring->pdom_buf = true;
		/* The kernel maps whole pages from the ring's start. */
		if ((uintptr_t)buf & (KITE_RING_ALIGN - 1)) {
			pdom->free(&pdom->ibv_pd, pdom->pd_context, buf, res_type);
			ring->buf = NULL;
			return EINVAL;
		}
	}
	ring->buf = buf;
	if (!buf)
		return ENOMEM;
	memset(ring->buf, 0, ring->size);
	if (pdom)
		atomic_fetch_add(&pdom->refcount, 1);
	return 0;
}

void kite_ring_free(struct kite_ring *ring)
{
	struct kite_pd *pdom = ring->pdom;

	if (!ring->buf)
		return;
	if (ring->pdom_buf)
		pdom->free(&pdom->ibv_pd, pdom->pd_context, ring->buf,
			   ring->res_type);
	else
		free(ring->buf);
	if (pdom)
		atomic_fetch_sub(&pdom->refcount, 1);
	ring->buf = NULL;
}

static_assert(sizeof(struct kite_cqe) == 1 << KITE_CQE_SHIFT, "CQE size");

/* Every slot INVALID, so that no slot looks valid whatever the pass. */
static void kite_cq_ring_init(struct kite_ring *ring)
{
	uint32_t i;

	for (i = 0; i < 1U << ring->log_depth; i++) {
		struct kite_cqe *cqe = kite_ring_entry(ring, i);

		cqe->op_own = htole32(FIELD_PREP(KITE_CQE_OPCODE,
						 KITE_CQE_OP_INVALID));
	}
}

/*
 * The ring for @cqe CQEs: a power of two with one slot more, for the
 * RESIZE CQE (kite-abi.h).
 */
static int kite_cq_log_depth(uint32_t cqe, uint32_t *log_depth)
{
	uint32_t l = KITE_CQ_MIN_LOG_DEPTH;

	if (cqe < 1)
		return EINVAL;
	while ((1U << l) <= cqe) {
		if (++l > KITE_CQ_MAX_LOG_DEPTH)
			return EINVAL;
	}
	*log_depth = l;
	return 0;
}

/*
 * Whether a CQE whose last word is @op_own is new in a pass over the ring
 * whose owner bit is @phase (kite_owner_phase()): its owner bit is the
 * pass's and its opcode, put into @op, not INVALID. The one definition of
 * the rule for every reader of the ring.
 */
static inline ALWAYS_INLINE bool kite_cqe_new(uint32_t op_own, uint32_t phase,
					      uint32_t *op)
{
	*op = FIELD_GET(KITE_CQE_OPCODE, op_own);
	return (op_own & KITE_CQE_OWNER) == phase &&
	       *op != KITE_CQE_OP_INVALID;
}

static inline ALWAYS_INLINE uint32_t kite_cqe_op_own(const struct kite_cqe *cqe)
{
	return le32toh(*(volatile __le32 *)&cqe->op_own);
}

/*
 * The CQE at consumer counter @ci of @ring if the device has written it,
 * and its opcode; NULL if not. The CQE's body may be read once it is
 * returned.
 */
static inline ALWAYS_INLINE const struct kite_cqe *
kite_cqe_at(const struct kite_ring *ring, uint32_t ci, uint32_t *op)
{
	const struct kite_cqe *cqe = (const struct kite_cqe *)ring->buf +
				     kite_ring_slot(ring, ci);

	if (!kite_cqe_new(kite_cqe_op_own(cqe),
			  kite_owner_phase(ci, ring->log_depth), op))
		return NULL;
	/* The CQE's body only after its owner bit. */
	udma_from_device_barrier();
	return cqe;
}

/*
 * The lock of polling and resize: none for a CQ created
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED or on a parent domain with a thread
 * domain, whose application serializes them.
 * Arming and completion events (which may come from another thread, through
 * ibv_get_cq_event()) always lock.
 */
static void kite_cq_lock(struct kite_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void kite_cq_unlock(struct kite_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/*
 * The work completion fields a CQE carries, so the ones ibv_create_cq_ex()
 * may ask for: the standard ones as kite_poll_cq() reports them (slid and
 * dlid_path_bits are 0 on RoCE, sl is the VLAN priority of a UD receive),
 * the completion timestamp, the device clock in nanoseconds
 * (ibv_device_attr_ex.hca_core_clock), and, from a device whose CQEs carry
 * the real-time clock (the NIC's PTP hardware clock, which the kernel sets
 * to the system's time), the wall-clock timestamp. Not: CVLAN (no verbs
 * flag would say whether the packet had a tag), flow tags and tag matching.
 */
#define KITE_CQ_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static int kite_cq_check_attr(struct ibv_context *ibctx,
			      const struct ibv_cq_init_attr_ex *attr)
{
	uint64_t wc_flags = attr->wc_flags, wc_flags_ok = KITE_CQ_WC_FLAGS;

	if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD)) {
		verbs_err(verbs_get_ctx(ibctx),
			  "create CQ: unknown comp_mask %#x\n", attr->comp_mask);
		return EINVAL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain ||
	     !kite_parent_domain(attr->parent_domain))) {
		verbs_err(verbs_get_ctx(ibctx),
			  "create CQ: parent_domain is not a parent domain\n");
		return EINVAL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		if (attr->flags & ~(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				    IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)) {
			verbs_err(verbs_get_ctx(ibctx),
				  "create CQ: unknown flags %#x\n", attr->flags);
			return EINVAL;
		}
		/* IGNORE_OVERRUN: the device always reports an overrun. */
		if (attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED) {
			verbs_err(verbs_get_ctx(ibctx),
				  "create CQ: unsupported flags %#x\n",
				  attr->flags);
			return EOPNOTSUPP;
		}
	}
	if (!to_kite_ctx(ibctx)->rtc)
		wc_flags_ok &= ~(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	if (wc_flags & ~wc_flags_ok) {
		verbs_err(verbs_get_ctx(ibctx),
			  "create CQ: unsupported wc_flags %#llx\n",
			  (unsigned long long)(wc_flags & ~wc_flags_ok));
		return EOPNOTSUPP;
	}
	return 0;
}

static void kite_cq_ex_set_ops(struct kite_cq *cq, uint64_t wc_flags);

/*
 * One creation path for ibv_create_cq() and ibv_create_cq_ex(): the
 * extended command carries the timestamp flag; the driver data is the same.
 */
static struct kite_cq *kite_cq_create(struct ibv_context *ibctx,
				      const struct ibv_cq_init_attr_ex *attr)
{
	struct ukite_create_cq_resp resp = {};
	struct ukite_create_cq cmd = {};
	struct kite_cq *cq;
	uint32_t log_depth;
	int ret;

	ret = kite_cq_check_attr(ibctx, attr);
	if (!ret)
		ret = kite_cq_log_depth(attr->cqe, &log_depth);
	if (ret) {
		errno = ret;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE))
		goto err_free;
	cq->single_threaded =
		((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		 (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
		((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
		 !kite_pd_need_lock(attr->parent_domain));
	ret = kite_ring_alloc(&cq->ring, log_depth, KITE_CQE_SHIFT,
			      (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ?
			      kite_parent_domain(attr->parent_domain) : NULL,
			      KITE_RES_CQ);
	if (ret)
		goto err_lock;
	kite_cq_ring_init(&cq->ring);
	if (posix_memalign((void **)&cq->dbrec, 64, 64)) {
		ret = ENOMEM;
		goto err_ring;
	}
	memset(cq->dbrec, 0, 64);

	cmd.buf_addr = (uintptr_t)cq->ring.buf;
	cmd.dbrec_addr = (uintptr_t)cq->dbrec;
	cmd.log_depth = log_depth;
	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (ret)
		goto err_dbrec;
	if (resp.comp_mask || !resp.cqn) {
		verbs_err(verbs_get_ctx(ibctx),
			  "create CQ: unexpected response (comp_mask %#x, CQN %u)\n",
			  resp.comp_mask, resp.cqn);
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		ret = EPROTO;
		goto err_dbrec;
	}
	cq->cqn = resp.cqn;
	cq->ctx = to_kite_ctx(ibctx);
	kite_cq_ex_set_ops(cq, attr->wc_flags);
	return cq;

err_dbrec:
	free(cq->dbrec);
err_ring:
	kite_ring_free(&cq->ring);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
	errno = ret ? ret : ENOMEM;
	return NULL;
}

struct ibv_cq *kite_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe < 0 ? 0 : (uint32_t)cqe,
		.channel = channel,
		.comp_vector = comp_vector,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct kite_cq *cq = kite_cq_create(ibctx, &attr);

	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *kite_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct kite_cq *cq = kite_cq_create(ibctx, attr);

	return cq ? &cq->vcq.cq_ex : NULL;
}

int kite_destroy_cq(struct ibv_cq *ibcq)
{
	struct kite_cq *cq = to_kite_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	free(cq->dbrec);
	kite_ring_free(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/*
 * After a resize command: the CQEs between ci and the RESIZE CQE are still
 * in the old ring. Move them to the same counters in the new one, with the
 * owner bit of the new depth (prm_cq.rst, "Resize"). Returns false if the
 * RESIZE CQE is not there (the device broke the protocol).
 */
static bool kite_cq_move_cqes(struct kite_cq *cq, struct kite_ring *old)
{
	uint32_t ci = cq->ci, n, op;

	for (n = 0; n < 1U << old->log_depth; n++, ci++) {
		const struct kite_cqe *src = kite_cqe_at(old, ci, &op);
		struct kite_cqe *dst = kite_ring_entry(&cq->ring, ci);
		uint32_t op_own;

		if (!src)
			return false;
		if (op == KITE_CQE_OP_RESIZE)
			return true;
		op_own = le32toh(src->op_own);
		memcpy(dst, src, sizeof(*dst));
		op_own &= ~KITE_CQE_OWNER;
		if (kite_owner_phase(ci, cq->ring.log_depth))
			op_own |= KITE_CQE_OWNER;
		dst->op_own = htole32(op_own);
	}
	return false;
}

int kite_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct kite_cq *cq = to_kite_cq(ibcq);
	struct ib_uverbs_resize_cq_resp resp = {};
	struct ukite_resize_cq cmd = {};
	struct kite_ring ring, old;
	uint32_t log_depth;
	int ret;

	ret = kite_cq_log_depth(cqe, &log_depth);
	if (ret)
		return ret;
	ret = kite_ring_alloc(&ring, log_depth, KITE_CQE_SHIFT, cq->ring.pdom,
			      KITE_RES_CQ);
	if (ret)
		return ret;
	kite_cq_ring_init(&ring);
	cmd.buf_addr = (uintptr_t)ring.buf;
	cmd.log_depth = log_depth;

	/* No poll while the rings change. */
	kite_cq_lock(cq);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd), &resp,
				sizeof(resp));
	if (ret) {
		kite_cq_unlock(cq);
		kite_ring_free(&ring);
		return ret;
	}
	old = cq->ring;
	cq->ring = ring;
	if (!kite_cq_move_cqes(cq, &old))
		verbs_err(verbs_get_ctx(ibcq->context),
			  "CQ %u: no RESIZE CQE in the old ring; completions may be lost\n",
			  cq->cqn);
	kite_cq_unlock(cq);
	kite_ring_free(&old);
	return 0;
}

static enum ibv_wc_status kite_syndrome_to_status(uint32_t syndrome)
{
	switch (syndrome) {
	case KITE_SYND_LOCAL_LENGTH:
		return IBV_WC_LOC_LEN_ERR;
	case KITE_SYND_LOCAL_QP_OP:
		return IBV_WC_LOC_QP_OP_ERR;
	case KITE_SYND_LOCAL_PROT:
		return IBV_WC_LOC_PROT_ERR;
	case KITE_SYND_WR_FLUSH:
		return IBV_WC_WR_FLUSH_ERR;
	case KITE_SYND_MW_BIND:
		return IBV_WC_MW_BIND_ERR;
	case KITE_SYND_BAD_RESP:
		return IBV_WC_BAD_RESP_ERR;
	case KITE_SYND_LOCAL_ACCESS:
		return IBV_WC_LOC_ACCESS_ERR;
	case KITE_SYND_REMOTE_INVAL_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case KITE_SYND_REMOTE_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case KITE_SYND_REMOTE_OP:
		return IBV_WC_REM_OP_ERR;
	case KITE_SYND_RETRY_EXC:
		return IBV_WC_RETRY_EXC_ERR;
	case KITE_SYND_RNR_RETRY_EXC:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case KITE_SYND_ABORTED:
		return IBV_WC_REM_ABORT_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

/*
 * Complete the WQE with 16-bit index @idx on @wq and take its wr_id; WQEs
 * complete in order, so the consumer counter moves past it. False if @idx
 * is not outstanding. The poller's side of the queue: no lock (struct
 * kite_wq).
 */
static inline bool kite_wq_complete(struct kite_wq *wq, uint16_t idx,
				    uint32_t *slot, uint64_t *wr_id)
{
	uint32_t ci = wq->ci;
	/* At most the queue's depth: the poster never fills it beyond. */
	uint32_t outstanding = kite_wq_pi(wq) - ci;
	uint16_t off = idx - (uint16_t)ci;

	if (off >= outstanding)
		return false;
	*slot = kite_ring_slot(&wq->ring, idx);
	*wr_id = wq->wr_id[*slot];
	/* The slot's wr_id is read before the poster may reuse it. */
	kite_wq_set_ci(wq, ci + off + 1);
	return true;
}

/*
 * Of a receive's CQE flags @flags, for ibv_poll_cq() and the extended
 * API's lazy reader alike: the wc_flags of a plain receive
 * (KITE_CQE_OP_RESP_SEND), and on a UD QP the source QP and, of a tagged
 * packet, the service level (its VLAN priority).
 */
static inline ALWAYS_INLINE unsigned int kite_recv_wc_flags(uint16_t flags)
{
	return flags & KITE_CQE_F_GRH ? IBV_WC_GRH : 0;
}

static inline ALWAYS_INLINE uint32_t kite_recv_src_qp(const struct kite_cqe *cqe)
{
	return le32toh(cqe->src_qpn) & KITE_OBJ_MASK;
}

static inline ALWAYS_INLINE uint8_t kite_recv_sl(const struct kite_cqe *cqe,
						 uint16_t flags)
{
	if (!(flags & KITE_CQE_F_VLAN))
		return 0;
	return FIELD_GET(KITE_VLAN_PCP, le16toh(cqe->vlan));
}

/* The completion of a receive that succeeded, CQE opcode @op. */
static inline ALWAYS_INLINE void kite_recv_wc(bool ud,
					      const struct kite_cqe *cqe,
					      uint32_t op, uint32_t qpn,
					      uint64_t wr_id,
					      struct ibv_wc *restrict wc)
{
	uint16_t flags = le16toh(cqe->flags);

	/* Every field: the application's array is not cleared. */
	*wc = (struct ibv_wc){
		.wr_id = wr_id,
		.opcode = IBV_WC_RECV,
		.byte_len = le32toh(cqe->byte_len),
		.qp_num = qpn,
		.wc_flags = kite_recv_wc_flags(flags),
	};
	if (unlikely(op != KITE_CQE_OP_RESP_SEND)) {
		if (op == KITE_CQE_OP_RESP_WRITE_IMM)
			wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		if (op == KITE_CQE_OP_RESP_SEND_INV) {
			wc->invalidated_rkey = le32toh(cqe->inv_rkey);
			wc->wc_flags |= IBV_WC_WITH_INV;
		} else {
			wc->imm_data = cqe->imm_data;
			wc->wc_flags |= IBV_WC_WITH_IMM;
		}
	}
	if (ud) {
		wc->src_qp = kite_recv_src_qp(cqe);
		if (flags & KITE_CQE_F_VLAN)
			wc->sl = kite_recv_sl(cqe, flags);
	}
}

/* What a CQE opcode is to the poller (kite_cqe_kinds[]). */
#define KITE_CQK_SEND		BIT(0)	/* it completes a send WQE */
#define KITE_CQK_RECV_OK	BIT(1)	/* a successful receive */
#define KITE_CQK_ERR		BIT(2)	/* an error CQE: the syndrome counts */
#define KITE_CQK_RESIZE		BIT(3)	/* a resize marker, not a completion */

/*
 * By CQE opcode. An opcode the device does not define completes a receive
 * with IBV_WC_GENERAL_ERR (kind 0); KITE_CQE_OP_INVALID never gets here
 * (kite_cqe_at() stops at it).
 */
static const uint8_t kite_cqe_kinds[16] = {
	[KITE_CQE_OP_REQ] = KITE_CQK_SEND,
	[KITE_CQE_OP_RESP_SEND] = KITE_CQK_RECV_OK,
	[KITE_CQE_OP_RESP_SEND_IMM] = KITE_CQK_RECV_OK,
	[KITE_CQE_OP_RESP_SEND_INV] = KITE_CQK_RECV_OK,
	[KITE_CQE_OP_RESP_WRITE_IMM] = KITE_CQK_RECV_OK,
	[KITE_CQE_OP_RESIZE] = KITE_CQK_RESIZE,
	[KITE_CQE_OP_REQ_ERR] = KITE_CQK_SEND | KITE_CQK_ERR,
	[KITE_CQE_OP_RESP_ERR] = KITE_CQK_ERR,
};

static inline ALWAYS_INLINE void kite_cq_cursor_start(struct kite_cq *cq,
						      struct kite_cq_cursor *cur)
{
	uint32_t ci = cq->ci, slot = kite_ring_slot(&cq->ring, ci);

	cur->first = cq->ring.buf;
	cur->end = cur->first + cq->ring.mask + 1;
	cur->base = ci - slot;
	cur->cqe = cur->first + slot;
	cur->phase = kite_owner_phase(ci, cq->ring.log_depth);
	cur->qp = cq->last_qp;
	cur->qpn = cur->qp ? cur->qp->vqp.qp.qp_num : KITE_QPN_NONE;
}

/* The consumer counter at the cursor. */
static inline ALWAYS_INLINE uint32_t
kite_cq_cursor_ci(const struct kite_cq_cursor *cur)
{
	return cur->base + (uint32_t)(cur->cqe - cur->first);
}

static inline ALWAYS_INLINE void kite_cq_cursor_end(struct kite_cq *cq,
						    const struct kite_cq_cursor *cur)
{
	cq->ci = kite_cq_cursor_ci(cur);
	cq->last_qp = cur->qp;
}

/*
 * Past @cqe, the CQE at the cursor: the next slot, the next pass at the
 * end. The caller's @cqe spares a load after its stores to the CQ.
 */
static inline ALWAYS_INLINE void
kite_cq_cursor_next(struct kite_cq_cursor *cur, const struct kite_cqe *cqe)
{
	cur->cqe = cqe + 1;
	if (unlikely(cur->cqe == cur->end)) {
		cur->base += (uint32_t)(cur->end - cur->first);
		cur->cqe = cur->first;
		cur->phase ^= KITE_CQE_OWNER;
	}
}

/* The QP of a CQE's QPN, or NULL: the last one's if it is the same. */
static inline ALWAYS_INLINE struct kite_qp *kite_cq_qp(struct kite_cq *cq,
						       struct kite_cq_cursor *cur,
						       uint32_t qpn)
{
	if (likely(qpn == cur->qpn))
		return cur->qp;
	cur->qp = kite_find_qp(cq->ctx, qpn);
	cur->qpn = cur->qp ? qpn : KITE_QPN_NONE;
	return cur->qp;
}

/*
 * A CQE that completes no WQE of @qp (NULL: no such QP), or of the XRC SRQ
 * @srqn (not 0), is skipped.
 */
static void kite_cqe_skip(struct kite_cq *cq, const struct kite_cqe *cqe,
			  const struct kite_qp *qp, uint32_t qpn, uint32_t op,
			  uint32_t srqn)
{
	if (srqn)
		verbs_warn(verbs_get_ctx(cq->vcq.cq.context),
			   "CQ %u: QP %u CQE for XRC SRQ %u tag %u not outstanding, skipped\n",
			   cq->cqn, qpn, srqn, le16toh(cqe->wqe_idx));
	else if (!qp)
		verbs_warn(verbs_get_ctx(cq->vcq.cq.context),
			   "CQ %u: CQE (opcode %#x) for unknown QP %u skipped\n",
			   cq->cqn, op, qpn);
	else
		verbs_warn(verbs_get_ctx(cq->vcq.cq.context),
			   "CQ %u: QP %u CQE for WQE %u not outstanding, skipped\n",
			   cq->cqn, qpn, le16toh(cqe->wqe_idx));
}

/* The completion of a send WQE that succeeded. */
static inline ALWAYS_INLINE void kite_send_wc(const struct kite_qp *qp,
					      const struct kite_cqe *cqe,
					      uint32_t qpn, uint32_t slot,
					      uint64_t wr_id,
					      struct ibv_wc *restrict wc)
{
	/* Every field: the application's array is not cleared. */
	*wc = (struct ibv_wc){
		.wr_id = wr_id,
		.opcode = qp->sq.opcode[slot],
		.byte_len = le32toh(cqe->byte_len),
		.qp_num = qpn,
	};
}

/*
 * Fill @wc from a valid CQE of kind @kind for QP @qpn, @qp (NULL: none);
 * false if the CQE is skipped. Every kind (kite_cq_fast_wc() has the most
 * frequent ones inline).
 */
static bool kite_cqe_to_wc(struct kite_cq *cq, struct kite_qp *qp,
			   uint32_t qpn, const struct kite_cqe *cqe,
			   uint32_t op, uint32_t kind,
			   struct ibv_wc *restrict wc)
{
	uint32_t srqn = le32toh(cqe->srqn) & KITE_OBJ_MASK;
	struct kite_srq *srq;
	uint64_t wr_id = 0;
	uint32_t slot = 0;
	bool ok = false;

	if (srqn && !(kind & KITE_CQK_SEND)) {
		/*
		 * An XRC target's receive: the SRQ is this context's, the
		 * target QP need not be (it is in no QP table).
		 */
		srq = kite_find_srq(cq->ctx, srqn);
		ok = srq && kite_srq_complete(srq, le16toh(cqe->wqe_idx),
					      &wr_id);
	} else if (likely(qp)) {
		if (kind & KITE_CQK_SEND)
			ok = kite_wq_complete(&qp->sq, le16toh(cqe->wqe_idx),
					      &slot, &wr_id);
		else if (qp->srq)
			/* From the SRQ: wqe_idx is the WQE's tag. */
			ok = kite_srq_complete(qp->srq, le16toh(cqe->wqe_idx),
					       &wr_id);
		else
			ok = kite_wq_complete(&qp->rq, le16toh(cqe->wqe_idx),
					      &slot, &wr_id);
	}
	if (unlikely(!ok)) {
		kite_cqe_skip(cq, cqe, qp, qpn, op,
			      kind & KITE_CQK_SEND ? 0 : srqn);
		return false;
	}

	if (kind == KITE_CQK_SEND) {
		kite_send_wc(qp, cqe, qpn, slot, wr_id, wc);
		return true;
	}
	if (kind == KITE_CQK_RECV_OK) {
		kite_recv_wc(qp && qp->ud, cqe, op, qpn, wr_id, wc);
		return true;
	}
	/* Every field: the application's array is not cleared. */
	*wc = (struct ibv_wc){
		.wr_id = wr_id,
		.qp_num = qpn,
	};
	if (kind & KITE_CQK_ERR) {
		uint32_t synd = le32toh(cqe->syndrome);

		wc->opcode = kind & KITE_CQK_SEND ? qp->sq.opcode[slot] :
						    IBV_WC_RECV;
		wc->status = kite_syndrome_to_status(FIELD_GET(KITE_CQE_SYNDROME,
							       synd));
		wc->vendor_err = FIELD_GET(KITE_CQE_VENDOR_SYNDROME, synd);
	} else {
		/* An opcode the device does not define: it fails. */
		wc->byte_len = le32toh(cqe->byte_len);
		wc->status = IBV_WC_GENERAL_ERR;
	}
	return true;
}

/* The op_own bits of a new CQE of opcode @op in the pass of owner @phase. */
static inline ALWAYS_INLINE uint32_t kite_cqe_bits(uint32_t op, uint32_t phase)
{
	return FIELD_PREP(KITE_CQE_OPCODE, op) | phase;
}

/* The CQE's timestamps; read after its owner bit, as its other fields. */
static inline void kite_cqe_ts(const struct kite_cqe *cqe,
			       struct kite_wc_ts *ts)
{
	ts->clock = le64toh(cqe->timestamp);
	ts->rtc = le64toh(cqe->rtc);
}

/*
 * The fast path of kite_cq_next_wc(), for the most frequent CQEs: a
 * send's, or a receive's from the QP's own RQ, on the QP of the CQE
 * before. The caller has seen the CQE new, with opcode KITE_CQE_OP_REQ
 * (@send) or KITE_CQE_OP_RESP_SEND. Returns true if it filled @wc and moved
 * the cursor on; false leaves both to the full path.
 */
static inline ALWAYS_INLINE bool kite_cq_fast_wc(struct kite_cq_cursor *cur,
						 const struct kite_cqe *cqe,
						 bool send,
						 struct ibv_wc *restrict wc,
						 struct kite_wc_ts *ts)
{
	struct kite_qp *qp = cur->qp;
	uint64_t wr_id;
	uint32_t slot;

	/* The CQE's body only after its owner bit. */
	udma_from_device_barrier();
	if (unlikely((le32toh(cqe->qpn) & KITE_OBJ_MASK) != cur->qpn))
		return false;
	if (send) {
		if (unlikely(!kite_wq_complete(&qp->sq, le16toh(cqe->wqe_idx),
					       &slot, &wr_id)))
			return false;
		kite_send_wc(qp, cqe, cur->qpn, slot, wr_id, wc);
	} else {
		if (unlikely(qp->srq ||
			     !kite_wq_complete(&qp->rq, le16toh(cqe->wqe_idx),
					       &slot, &wr_id)))
			return false;
		kite_recv_wc(qp->ud, cqe, KITE_CQE_OP_RESP_SEND, cur->qpn,
			     wr_id, wc);
	}
	kite_cqe_ts(cqe, ts);
	kite_cq_cursor_next(cur, cqe);
	return true;
}

/*
 * The next completion from the cursor on, into @wc, and the CQE's
 * timestamp into @ts, moving the cursor past it: CQEs that complete nothing
 * are consumed and skipped. The poll paths' one CQE reader, called with the
 * CQ locked. Returns 0, ENOENT when no completion is there, or EIO for a
 * RESIZE CQE outside a resize (left in place).
 */
static inline ALWAYS_INLINE int kite_cq_next_wc(struct kite_cq *cq,
						struct kite_cq_cursor *cur,
						struct ibv_wc *restrict wc,
						struct kite_wc_ts *ts)
{
	for (;;) {
		const struct kite_cqe *cqe = cur->cqe;
		uint32_t op_own = kite_cqe_op_own(cqe), op, kind, qpn;
		uint32_t bits = op_own & (KITE_CQE_OPCODE | KITE_CQE_OWNER);
		bool ok;

		/* kite_cqe_new() for the two most frequent CQEs, at once. */
		if (likely(bits == kite_cqe_bits(KITE_CQE_OP_REQ, cur->phase))) {
			if (likely(kite_cq_fast_wc(cur, cqe, true, wc, ts)))
				return 0;
		} else if (bits == kite_cqe_bits(KITE_CQE_OP_RESP_SEND,
						 cur->phase)) {
			if (likely(kite_cq_fast_wc(cur, cqe, false, wc, ts)))
				return 0;
		}
		if (!kite_cqe_new(op_own, cur->phase, &op))
			return ENOENT;
		kind = kite_cqe_kinds[op];
		if (unlikely(kind & KITE_CQK_RESIZE)) {
			/* resize moves past these; one here is a device bug. */
			verbs_err(verbs_get_ctx(cq->vcq.cq.context),
				  "CQ %u: RESIZE CQE at %u outside a resize\n",
				  cq->cqn, kite_cq_cursor_ci(cur));
			return EIO;
		}
		/* The CQE's body only after its owner bit. */
		udma_from_device_barrier();
		qpn = le32toh(cqe->qpn) & KITE_OBJ_MASK;
		ok = kite_cqe_to_wc(cq, kite_cq_qp(cq, cur, qpn), qpn, cqe, op,
				    kind, wc);
		kite_cqe_ts(cqe, ts);
		kite_cq_cursor_next(cur, cqe);
		if (likely(ok))
			return 0;
	}
}

/* Report the CQEs consumed since @start to the device. */
static void kite_cq_update_ci(struct kite_cq *cq, uint32_t start)
{
	if (cq->ci == start)
		return;
	/* Done reading the CQEs before the device may reuse them. */
	udma_to_device_barrier();
	cq->dbrec->ci = htole32(cq->ci & KITE_CQ_DB_CI);
}

/* The CQE (of opcode @op) is for kite_cq_clean()'s QP @qpn or XRC @srq. */
static bool kite_cqe_of(const struct kite_cqe *cqe, uint32_t op,
			uint32_t qpn, const struct kite_srq *srq)
{
	if (qpn != KITE_QPN_NONE)
		return (le32toh(cqe->qpn) & KITE_OBJ_MASK) == qpn;
	return op != KITE_CQE_OP_REQ && op != KITE_CQE_OP_REQ_ERR &&
	       (le32toh(cqe->srqn) & KITE_OBJ_MASK) == srq->srqn;
}

/*
 * Drop the CQEs of QP @qpn still in @cq, for a QP being reset or destroyed:
 * they complete WQEs that no longer exist, and a QP number and WQE index
 * reused later would match them. The receives they complete go back to
 * @srq, if given. With @qpn KITE_QPN_NONE, the receives of the XRC SRQ @srq
 * being destroyed are dropped instead. The CQEs of other QPs move up over
 * them, each slot keeping the owner bit of its index; ci advances by the
 * number dropped.
 */
void kite_cq_clean(struct kite_cq *cq, uint32_t qpn, struct kite_srq *srq)
{
	uint32_t depth = 1U << cq->ring.log_depth, end, n, dropped = 0, end_op;
	uint64_t wr_id;

	kite_cq_lock(cq);
	/* The QP may be going away: the next poll looks its QPs up. */
	cq->last_qp = NULL;
	/* kite_cqe_at(): the CQEs' bodies are read after their owner bits. */
	for (end = cq->ci; end - cq->ci < depth; end++)
		if (!kite_cqe_at(&cq->ring, end, &end_op))
			break;
	for (n = end - cq->ci; n--;) {
		uint32_t idx = cq->ci + n;
		struct kite_cqe *cqe = kite_ring_entry(&cq->ring, idx);
		uint32_t op_own = le32toh(cqe->op_own);
		uint32_t op = FIELD_GET(KITE_CQE_OPCODE, op_own);
		struct kite_cqe *dst;
		uint32_t own;

		if (op != KITE_CQE_OP_RESIZE &&
		    kite_cqe_of(cqe, op, qpn, srq)) {
			if (srq && op != KITE_CQE_OP_REQ &&
			    op != KITE_CQE_OP_REQ_ERR)
				kite_srq_complete(srq, le16toh(cqe->wqe_idx),
						  &wr_id);
			dropped++;
			continue;
		}
		if (!dropped)
			continue;
		dst = kite_ring_entry(&cq->ring, idx + dropped);
		own = le32toh(dst->op_own) & KITE_CQE_OWNER;
		memcpy(dst, cqe, sizeof(*dst));
		dst->op_own = htole32((op_own & ~KITE_CQE_OWNER) | own);
	}
	if (dropped) {
		cq->ci += dropped;
		/* The moves are done before the device may reuse the slots. */
		udma_to_device_barrier();
		cq->dbrec->ci = htole32(cq->ci & KITE_CQ_DB_CI);
	}
	kite_cq_unlock(cq);
}

int kite_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct kite_cq *cq = to_kite_cq(ibcq);
	struct kite_cq_cursor cur;
	struct kite_wc_ts ts;
	uint32_t start;
	int n = 0;

	kite_cq_lock(cq);
	start = cq->ci;
	kite_cq_cursor_start(cq, &cur);
	while (n < num_entries && !kite_cq_next_wc(cq, &cur, &wc[n], &ts))
		n++;
	kite_cq_cursor_end(cq, &cur);
	kite_cq_update_ci(cq, start);
	kite_cq_unlock(cq);
	/* What the device wrote is reported first; then only the error. */
	if (!n && num_entries > 0 &&
	    kite_dev_dead(to_kite_ctx(ibcq->context))) {
		errno = EIO;
		return -EIO;
	}
	return n;
}

/*
 * ibv_cq_ex: start_poll locks the CQ (unless single-threaded), takes the
 * cursor and reads the first completion; next_poll reads the next; end_poll
 * gives the cursor back, reports what was consumed and unlocks. A
 * start_poll that fails does that itself: the application does not call
 * end_poll then.
 *
 * Reading a completion sets only what the API has as fields (wr_id and
 * status), and the opcode, for the two most frequent CQEs, as
 * kite_cq_fast_wc() finds them; the read_* functions take the rest from
 * the CQE when asked (the lazy reader). Every other CQE goes through
 * kite_cq_next_wc(), as for ibv_poll_cq(), into cur_wc. As on mlx5, no QP
 * of the CQ may be reset or destroyed between start_poll and end_poll
 * (kite_cq_clean() would wait for the CQ's lock, and a single-threaded
 * CQ's cursor would keep the QP).
 */
/*
 * kite_cq_ex_next() for every CQE its fast path leaves: out of line, so
 * that the fast path needs few registers.
 */
static int __attribute__((noinline)) kite_cq_ex_next_full(struct kite_cq *cq)
{
	int ret;

	ret = kite_cq_next_wc(cq, &cq->pcur, &cq->cur_wc, &cq->cur_ts);
	if (ret)
		return ret;
	cq->cur_cqe = NULL;
	cq->cur_opcode = cq->cur_wc.opcode;
	cq->vcq.cq_ex.status = cq->cur_wc.status;
	cq->vcq.cq_ex.wr_id = cq->cur_wc.wr_id;
	return 0;
}

static inline ALWAYS_INLINE int kite_cq_ex_next(struct kite_cq *cq)
{
	struct kite_cq_cursor *cur = &cq->pcur;
	const struct kite_cqe *cqe = cur->cqe;
	uint32_t bits = kite_cqe_op_own(cqe) &
			(KITE_CQE_OPCODE | KITE_CQE_OWNER);
	struct kite_qp *qp = cur->qp;
	uint32_t slot;
	uint64_t wr_id;

	/* kite_cqe_new() for the two most frequent CQEs, at once. */
	if (likely(bits == kite_cqe_bits(KITE_CQE_OP_REQ, cur->phase))) {
		/* The CQE's body only after its owner bit. */
		udma_from_device_barrier();
		/* cur->qpn is KITE_QPN_NONE without a QP: never a match. */
		if (unlikely((le32toh(cqe->qpn) & KITE_OBJ_MASK) != cur->qpn ||
			     !kite_wq_complete(&qp->sq, le16toh(cqe->wqe_idx),
					       &slot, &wr_id)))
			return kite_cq_ex_next_full(cq);
		cq->cur_opcode = qp->sq.opcode[slot];
	} else if (bits == kite_cqe_bits(KITE_CQE_OP_RESP_SEND, cur->phase)) {
		udma_from_device_barrier();
		if (unlikely((le32toh(cqe->qpn) & KITE_OBJ_MASK) != cur->qpn ||
			     qp->srq ||
			     !kite_wq_complete(&qp->rq, le16toh(cqe->wqe_idx),
					       &slot, &wr_id)))
			return kite_cq_ex_next_full(cq);
		cq->cur_opcode = IBV_WC_RECV;
	} else {
		return kite_cq_ex_next_full(cq);
	}
	cq->cur_cqe = cqe;
	cq->vcq.cq_ex.wr_id = wr_id;
	cq->vcq.cq_ex.status = IBV_WC_SUCCESS;
	kite_cq_cursor_next(cur, cqe);
	return 0;
}

static int kite_start_poll(struct ibv_cq_ex *ibcq,
			   struct ibv_poll_cq_attr *attr)
{
	struct kite_cq *cq = to_kite_cq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	kite_cq_lock(cq);
	cq->poll_ci = cq->ci;
	kite_cq_cursor_start(cq, &cq->pcur);
	ret = kite_cq_ex_next(cq);
	if (ret) {
		kite_cq_cursor_end(cq, &cq->pcur);
		kite_cq_update_ci(cq, cq->poll_ci);
		kite_cq_unlock(cq);
		if (ret == ENOENT &&
		    kite_dev_dead(to_kite_ctx(ibcq->context)))
			ret = EIO;
	}
	return ret;
}

static int kite_next_poll(struct ibv_cq_ex *ibcq)
{
	return kite_cq_ex_next(to_kite_cq_ex(ibcq));
}

static void kite_end_poll(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq = to_kite_cq_ex(ibcq);

	kite_cq_cursor_end(cq, &cq->pcur);
	kite_cq_update_ci(cq, cq->poll_ci);
	kite_cq_unlock(cq);
}

/*
 * The lazy reader's CQE (a successful send's or plain receive's, on the
 * cursor's QP), or NULL: then cur_wc has the completion.
 */
static inline const struct kite_cqe *kite_cq_ex_cqe(struct ibv_cq_ex *ibcq,
						    struct kite_cq **cqp)
{
	*cqp = to_kite_cq_ex(ibcq);
	return (*cqp)->cur_cqe;
}

static enum ibv_wc_opcode kite_wc_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_kite_cq_ex(ibcq)->cur_opcode;
}

static unsigned int kite_wc_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	if (!cqe)
		return cq->cur_wc.wc_flags;
	return cq->cur_opcode == IBV_WC_RECV ?
	       kite_recv_wc_flags(le16toh(cqe->flags)) : 0;
}

static uint32_t kite_wc_read_byte_len(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	return cqe ? le32toh(cqe->byte_len) : cq->cur_wc.byte_len;
}

static uint32_t kite_wc_read_qp_num(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	return cqe ? cq->pcur.qpn : cq->cur_wc.qp_num;
}

static uint32_t kite_wc_read_src_qp(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	if (!cqe)
		return cq->cur_wc.src_qp;
	return cq->cur_opcode == IBV_WC_RECV && cq->pcur.qp->ud ?
	       kite_recv_src_qp(cqe) : 0;
}

static uint8_t kite_wc_read_sl(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	if (!cqe)
		return cq->cur_wc.sl;
	return cq->cur_opcode == IBV_WC_RECV && cq->pcur.qp->ud ?
	       kite_recv_sl(cqe, le16toh(cqe->flags)) : 0;
}

static uint64_t kite_wc_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	return cqe ? le64toh(cqe->timestamp) : cq->cur_ts.clock;
}

static uint64_t kite_wc_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq;
	const struct kite_cqe *cqe = kite_cq_ex_cqe(ibcq, &cq);

	return cqe ? le64toh(cqe->rtc) : cq->cur_ts.rtc;
}

/*
 * What the lazy reader's CQEs never have (an error, immediate data or an
 * invalidated key, a LID): 0 for them, which cur_wc has too (it is
 * cleared for each CQE it gets).
 */
#define KITE_WC_READ(name, type, field)					\
	static type kite_wc_read_##name(struct ibv_cq_ex *ibcq)		\
	{								\
		struct kite_cq *cq;					\
									\
		return kite_cq_ex_cqe(ibcq, &cq) ? 0 : cq->cur_wc.field; \
	}

KITE_WC_READ(vendor_err, uint32_t, vendor_err)
KITE_WC_READ(imm_data, __be32, imm_data)
KITE_WC_READ(slid, uint32_t, slid)
KITE_WC_READ(dlid_path_bits, uint8_t, dlid_path_bits)

/*
 * The read_* functions of the fields asked for; like every provider, none
 * for the others (the application may call only those it asked for).
 */
static void kite_cq_ex_set_ops(struct kite_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	ex->start_poll = kite_start_poll;
	ex->next_poll = kite_next_poll;
	ex->end_poll = kite_end_poll;
	ex->read_opcode = kite_wc_read_opcode;
	ex->read_vendor_err = kite_wc_read_vendor_err;
	ex->read_wc_flags = kite_wc_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = kite_wc_read_byte_len;
	/* Also ibv_wc_read_invalidated_rkey(): ibv_wc has them in a union. */
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = kite_wc_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = kite_wc_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = kite_wc_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = kite_wc_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = kite_wc_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = kite_wc_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = kite_wc_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		ex->read_completion_wallclock_ns =
			kite_wc_read_completion_wallclock_ns;
}

int kite_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct kite_context *ctx = to_kite_ctx(ibcq->context);
	struct kite_cq *cq = to_kite_cq(ibcq);
	uint64_t cmd = solicited_only ? KITE_CQ_ARM_SOLICITED :
					KITE_CQ_ARM_NEXT;
	uint8_t sn;

	pthread_spin_lock(&cq->lock);
	sn = cq->arm_sn & KITE_CQ_ARM_SN_MASK;
	cq->dbrec->arm = htole32(FIELD_PREP(KITE_CQ_DB_ARM_CI,
					    cq->ci & KITE_CQ_INDEX_MASK) |
				 FIELD_PREP(KITE_CQ_DB_ARM_CMD, cmd) |
				 FIELD_PREP(KITE_CQ_DB_ARM_CMD_SN, sn));
	/* The record before the doorbell that makes the device read it. */
	udma_to_device_barrier();
	kite_ring_db(ctx, FIELD_PREP(KITE_DB_OBJ, cq->cqn) |
			  FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_CQ_ARM) |
			  FIELD_PREP(KITE_DB_CQ_CMD, cmd) |
			  FIELD_PREP(KITE_DB_CQ_CMD_SN, sn));
	pthread_spin_unlock(&cq->lock);
	return 0;
}

void kite_cq_event(struct ibv_cq *ibcq)
{
	struct kite_cq *cq = to_kite_cq(ibcq);

	pthread_spin_lock(&cq->lock);
	cq->arm_sn = (cq->arm_sn + 1) & KITE_CQ_ARM_SN_MASK;
	pthread_spin_unlock(&cq->lock);
}

/*
 * Event moderation (IBV_CQ_ATTR_MODERATE): the kernel checks the values
 * against the device's limits (query_device_ex's cq_mod_caps).
 */
int kite_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}
