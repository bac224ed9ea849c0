/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libkite send work requests: one WQE builder (prm_wqe.rst) for
 * ibv_post_send() and for the extended QP API (ibv_create_qp_ex() with
 * send_ops_flags, ibv_wr_start(), ibv_wr_*(), ibv_wr_complete() and
 * ibv_wr_abort()).
 *
 * A WQE is opened for an operation (kite_send_open(): the control
 * segment, the slot's wr_id and completion opcode, the producer index
 * advanced), given its segments (remote address, atomic operands, UD
 * address vector, memory window binding, SGEs or inline data) and closed
 * (kite_send_close(): the checks that need the whole WQE). ibv_post_send() does the three steps for each ibv_send_wr;
 * the ibv_wr_*() calls do one step each, keep the first error and leave
 * every WQE of the batch unannounced until ibv_wr_complete() rings the
 * doorbell once, or forgets them all on an error or ibv_wr_abort().
 * ibv_bind_mw() (a type 1 window) posts a BIND_MW work request through
 * ibv_post_send(), as the verbs define it.
 *
 * Copyright (c) 2026 Kite
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <string.h>

#include <ccan/array_size.h>
#include <util/mmio.h>
#include <util/compiler.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "kite.h"

/* The QP types a send work request is defined for (kite_send_op.qp_types). */
#define KITE_SQPT_RC	BIT(0)
#define KITE_SQPT_UC	BIT(1)
#define KITE_SQPT_UD	BIT(2)
#define KITE_SQPT_CONN	(KITE_SQPT_RC | KITE_SQPT_UC)
/* XRC initiators have every RC operation. */
#define KITE_SQPT_ALL	(KITE_SQPT_CONN | KITE_SQPT_UD)

/* kite_send_op.flags */
#define KITE_SOP_AV		BIT(0)	/* a send: on UD, an address vector first */
#define KITE_SOP_NO_INLINE	BIT(1)	/* the data cannot be inline */
#define KITE_SOP_ATOMIC		BIT(2)	/* one SGE of 8 bytes, checked at the end */
/* ibv_wr_*() only: struct ibv_send_wr has no field for its operand. */
#define KITE_SOP_WR_ONLY	BIT(3)

/*
 * What a send work request is to the device, by ibv_wr_opcode: its WQE
 * opcode, the opcode of its work completion, the QP types that have it, and
 * where its data goes (0: it has none; on UD, sends have the address vector
 * before it). An entry with no QP type: Kite does not have the operation
 * (TSO). ATOMIC_WRITE's 8 bytes are its own segment (no data); FLUSH has
 * none.
 */
struct kite_send_op {
	uint8_t wqe_op;		/* KITE_WQE_OP_* */
	uint8_t wc_op;		/* enum ibv_wc_opcode */
	uint8_t qp_types;	/* KITE_SQPT_* */
	uint8_t flags;		/* KITE_SOP_* */
	uint16_t data_off;
};

#define KITE_CTRL_SZ	sizeof(struct kite_wqe_ctrl)
#define KITE_RADDR_SZ	sizeof(struct kite_wqe_raddr)

static const struct kite_send_op kite_send_ops[] = {
	[IBV_WR_SEND] = { KITE_WQE_OP_SEND, IBV_WC_SEND, KITE_SQPT_ALL,
			  KITE_SOP_AV, KITE_CTRL_SZ },
	[IBV_WR_SEND_WITH_IMM] = { KITE_WQE_OP_SEND_IMM, IBV_WC_SEND,
				   KITE_SQPT_ALL, KITE_SOP_AV, KITE_CTRL_SZ },
	[IBV_WR_SEND_WITH_INV] = { KITE_WQE_OP_SEND_INV, IBV_WC_SEND,
				   KITE_SQPT_RC, KITE_SOP_AV, KITE_CTRL_SZ },
	[IBV_WR_RDMA_WRITE] = { KITE_WQE_OP_RDMA_WRITE, IBV_WC_RDMA_WRITE,
				KITE_SQPT_CONN, 0,
				KITE_CTRL_SZ + KITE_RADDR_SZ },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { KITE_WQE_OP_RDMA_WRITE_IMM,
					 IBV_WC_RDMA_WRITE, KITE_SQPT_CONN, 0,
					 KITE_CTRL_SZ + KITE_RADDR_SZ },
	[IBV_WR_RDMA_READ] = { KITE_WQE_OP_RDMA_READ, IBV_WC_RDMA_READ,
			       KITE_SQPT_RC, KITE_SOP_NO_INLINE,
			       KITE_CTRL_SZ + KITE_RADDR_SZ },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = {
		KITE_WQE_OP_ATOMIC_CS, IBV_WC_COMP_SWAP, KITE_SQPT_RC,
		KITE_SOP_NO_INLINE | KITE_SOP_ATOMIC,
		KITE_CTRL_SZ + KITE_RADDR_SZ + sizeof(struct kite_wqe_atomic) },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = {
		KITE_WQE_OP_ATOMIC_FA, IBV_WC_FETCH_ADD, KITE_SQPT_RC,
		KITE_SOP_NO_INLINE | KITE_SOP_ATOMIC,
		KITE_CTRL_SZ + KITE_RADDR_SZ + sizeof(struct kite_wqe_atomic) },
	[IBV_WR_LOCAL_INV] = { KITE_WQE_OP_LOCAL_INV, IBV_WC_LOCAL_INV,
			       KITE_SQPT_CONN, 0, 0 },
	[IBV_WR_BIND_MW] = { KITE_WQE_OP_BIND_MW, IBV_WC_BIND_MW,
			     KITE_SQPT_CONN, 0, 0 },
	[IBV_WR_ATOMIC_WRITE] = { KITE_WQE_OP_ATOMIC_WRITE,
				  IBV_WC_ATOMIC_WRITE, KITE_SQPT_RC,
				  KITE_SOP_WR_ONLY, 0 },
	[IBV_WR_FLUSH] = { KITE_WQE_OP_FLUSH, IBV_WC_FLUSH, KITE_SQPT_RC,
			   KITE_SOP_WR_ONLY, 0 },
};

static uint8_t kite_sqpt(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return KITE_SQPT_RC;
	case IBV_QPT_UC:
		return KITE_SQPT_UC;
	case IBV_QPT_UD:
		return KITE_SQPT_UD;
	default:
		return 0;
	}
}

/* The entry of @wr_op if a QP of @type has it, else NULL. */
static const struct kite_send_op *kite_send_op(enum ibv_wr_opcode wr_op,
					       enum ibv_qp_type type)
{
	if ((unsigned int)wr_op >= ARRAY_SIZE(kite_send_ops) ||
	    !(kite_send_ops[wr_op].qp_types & kite_sqpt(type)))
		return NULL;
	return &kite_send_ops[wr_op];
}

/* The work request opcode of each IBV_QP_EX_WITH_* flag, by bit. */
static const enum ibv_wr_opcode kite_qpx_ops[] = {
	[0] = IBV_WR_RDMA_WRITE,		/* IBV_QP_EX_WITH_RDMA_WRITE */
	[1] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[2] = IBV_WR_SEND,
	[3] = IBV_WR_SEND_WITH_IMM,
	[4] = IBV_WR_RDMA_READ,
	[5] = IBV_WR_ATOMIC_CMP_AND_SWP,
	[6] = IBV_WR_ATOMIC_FETCH_AND_ADD,
	[7] = IBV_WR_LOCAL_INV,
	[8] = IBV_WR_BIND_MW,
	[9] = IBV_WR_SEND_WITH_INV,
	[10] = IBV_WR_TSO,
	[11] = IBV_WR_FLUSH,			/* IBV_QP_EX_WITH_FLUSH */
	[12] = IBV_WR_ATOMIC_WRITE,		/* IBV_QP_EX_WITH_ATOMIC_WRITE */
};

/*
 * The send_ops_flags a device has only with a capability of its own, in
 * ibv_device_attr_ex.device_cap_flags_ex.
 */
static const struct {
	uint64_t send_op;
	uint64_t cap;
} kite_qpx_caps[] = {
	{ IBV_QP_EX_WITH_ATOMIC_WRITE, IB_UVERBS_DEVICE_ATOMIC_WRITE },
	/* Global visibility; a persistent FLUSH is the responder's choice. */
	{ IBV_QP_EX_WITH_FLUSH, IB_UVERBS_DEVICE_FLUSH_GLOBAL },
};

/*
 * ibv_qp_init_attr_ex.send_ops_flags for a QP of @type: 0; EINVAL for a
 * bit verbs does not define; EOPNOTSUPP for an operation the QP type or
 * Kite does not have (the same table as ibv_post_send()), or ATOMIC WRITE
 * or FLUSH on a device without it (kite_qpx_caps[], asked of @ibctx only
 * then). The ibv_wr_*() calls rely on it: they do not check the QP type
 * again.
 */
int kite_check_send_ops(struct ibv_context *ibctx, enum ibv_qp_type type,
			uint64_t send_ops_flags)
{
	struct ibv_device_attr_ex attr = {};
	bool queried = false;
	unsigned int bit, i;
	int ret;

	if (send_ops_flags >> ARRAY_SIZE(kite_qpx_ops))
		return EINVAL;
	for (bit = 0; bit < ARRAY_SIZE(kite_qpx_ops); bit++)
		if ((send_ops_flags & (1ULL << bit)) &&
		    !kite_send_op(kite_qpx_ops[bit], type))
			return EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(kite_qpx_caps); i++) {
		if (!(send_ops_flags & kite_qpx_caps[i].send_op))
			continue;
		if (!queried) {
			ret = ibv_query_device_ex(ibctx, NULL, &attr);
			if (ret)
				return ret;
			queried = true;
		}
		if (!(attr.device_cap_flags_ex & kite_qpx_caps[i].cap))
			return EOPNOTSUPP;
	}
	return 0;
}

/* The send flags that are control segment flags, as one index. */
#define KITE_SEND_CTRL_FLAGS	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
				 IBV_SEND_SOLICITED)
static_assert(KITE_SEND_CTRL_FLAGS == 7, "the three lowest ibv_send_flags");

#define KITE_SEND_CTRL(f)						\
	(((f) & IBV_SEND_FENCE ? KITE_WQE_F_FENCE : 0) |		\
	 ((f) & IBV_SEND_SIGNALED ? KITE_WQE_F_SIGNALED : 0) |		\
	 ((f) & IBV_SEND_SOLICITED ? KITE_WQE_F_SOLICITED : 0))

static const uint16_t kite_send_ctrl_flags[] = {
	KITE_SEND_CTRL(0), KITE_SEND_CTRL(1), KITE_SEND_CTRL(2),
	KITE_SEND_CTRL(3), KITE_SEND_CTRL(4), KITE_SEND_CTRL(5),
	KITE_SEND_CTRL(6), KITE_SEND_CTRL(7),
};

/* The control segment's flags of ibv_send_flags @send_flags. */
static inline uint32_t kite_send_flags(const struct kite_qp *qp,
				       unsigned int send_flags)
{
	return qp->sig_all |
	       kite_send_ctrl_flags[send_flags & KITE_SEND_CTRL_FLAGS];
}

/*
 * Open the WQE at the SQ's producer index for @sop, which the QP type has,
 * in an SQ that is not full, and move the producer index past it: the
 * control segment (no data yet), the slot's wr_id and completion opcode.
 * Not the whole slot cleared: each segment is written whole by its writer
 * (reserved fields included), and the device reads no byte past the SGEs
 * or inline data the opcode word announces. The device reads the WQE only
 * once a doorbell announces it, so it is written in any order; a WQE
 * dropped (kite_send_drop()) or a batch forgotten takes the producer index
 * back.
 */
static inline ALWAYS_INLINE void kite_send_open(struct kite_qp *qp,
						struct kite_send_wqe *b,
						const struct kite_send_op *sop,
						unsigned int send_flags,
						uint64_t wr_id, bool ud)
{
	uint32_t pi = qp->sq.pi;
	uint32_t slot = kite_ring_slot(&qp->sq.ring, pi);
	uint8_t *wqe = kite_ring_entry(&qp->sq.ring, pi);
	bool av = (sop->flags & KITE_SOP_AV) && ud;

	*(struct kite_wqe_ctrl *)wqe = (struct kite_wqe_ctrl){
		.opcode = htole32(FIELD_PREP(KITE_WQE_OPCODE, sop->wqe_op) |
				  kite_send_flags(qp, send_flags)),
		.wqe_idx = htole16((uint16_t)pi),
	};
	*b = (struct kite_send_wqe){
		.wqe = wqe,
		.data_off = sop->data_off +
			    (av ? sizeof(struct kite_wqe_ud) : 0),
		.op = sop->wqe_op,
		.flags = (sop->flags & KITE_SOP_NO_INLINE ?
			  0 : KITE_SWQE_INLINE_OK) |
			 (av ? KITE_SWQE_AV | KITE_SWQE_NEED_AV : 0) |
			 (sop->flags & KITE_SOP_ATOMIC ?
			  KITE_SWQE_NEED_ATOMIC : 0),
	};
	qp->sq.wr_id[slot] = wr_id;
	qp->sq.opcode[slot] = sop->wc_op;
	kite_wq_set_pi(&qp->sq, pi + 1);
}

/* Forget the open WQE (the last one opened): the producer index goes back. */
static void kite_send_drop(struct kite_qp *qp, struct kite_send_wqe *b)
{
	b->wqe = NULL;
	kite_wq_set_pi(&qp->sq, qp->sq.pi - 1);
}

/*
 * ibv_post_send()'s opening of a WQE for @wr_op: 0, or EINVAL (QP state,
 * an operation the QP type does not have) or ENOMEM (the SQ is full).
 */
static int kite_send_begin(struct kite_qp *qp, struct kite_send_wqe *b,
			   enum ibv_wr_opcode wr_op, unsigned int send_flags,
			   uint64_t wr_id)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	const struct kite_send_op *sop;

	b->wqe = NULL;
	/* RESET, INIT and RTR have no send queue yet. */
	if (ibqp->state < IBV_QPS_RTS)
		return EINVAL;
	if (kite_wq_full(&qp->sq))
		return ENOMEM;
	sop = kite_send_op(wr_op, ibqp->qp_type);
	if (!sop || (sop->flags & KITE_SOP_WR_ONLY))
		return EINVAL;
	kite_send_open(qp, b, sop, send_flags, wr_id, qp->ud);
	return 0;
}

static inline struct kite_wqe_ctrl *kite_send_ctrl(struct kite_send_wqe *b)
{
	return (struct kite_wqe_ctrl *)b->wqe;
}

/* The control segment's data fields: @num_sge SGEs, or inline data. */
static inline void kite_send_set_data(struct kite_send_wqe *b,
				      uint32_t num_sge, bool inl)
{
	struct kite_wqe_ctrl *ctrl = kite_send_ctrl(b);
	uint32_t opcode = le32toh(ctrl->opcode);

	opcode &= ~(KITE_WQE_NUM_SGE | KITE_WQE_F_INLINE);
	opcode |= FIELD_PREP(KITE_WQE_NUM_SGE, num_sge);
	if (inl)
		opcode |= KITE_WQE_F_INLINE;
	ctrl->opcode = htole32(opcode);
	ctrl->inline_len = 0;
}

/* SEND_IMM and RDMA_WRITE_IMM: the immediate data, as on the wire. */
static void kite_send_imm(struct kite_send_wqe *b, __be32 imm)
{
	kite_send_ctrl(b)->imm_data = imm;
}

/* SEND_INV and LOCAL_INV: the key to invalidate. */
static void kite_send_inv(struct kite_send_wqe *b, uint32_t key)
{
	kite_send_ctrl(b)->inv_key = htole32(key);
}

/* XRC initiators: the SRQ at the remote end (KITE_SWQE_NEED_SRQN). */
static int kite_send_xrc_srqn(struct kite_send_wqe *b, uint32_t remote_srqn)
{
	if (remote_srqn > KITE_OBJ_MASK)
		return EINVAL;
	kite_send_ctrl(b)->xrc_srqn = htole32(remote_srqn);
	b->flags &= ~KITE_SWQE_NEED_SRQN;
	return 0;
}

static void kite_send_raddr(struct kite_send_wqe *b, uint64_t remote_addr,
			    uint32_t rkey)
{
	struct kite_wqe_raddr *raddr =
		(struct kite_wqe_raddr *)(b->wqe + sizeof(struct kite_wqe_ctrl));

	raddr->remote_addr = htole64(remote_addr);
	raddr->rkey = htole32(rkey);
	raddr->rsvd = 0;
}

/* The remote word must be 8-byte aligned (EINVAL). */
static int kite_send_atomic(struct kite_send_wqe *b, uint64_t remote_addr,
			    uint32_t rkey, uint64_t swap_add, uint64_t compare)
{
	struct kite_wqe_atomic *aseg =
		(struct kite_wqe_atomic *)(b->wqe +
					   sizeof(struct kite_wqe_ctrl) +
					   sizeof(struct kite_wqe_raddr));

	if (remote_addr & 7)
		return EINVAL;
	kite_send_raddr(b, remote_addr, rkey);
	aseg->swap_add = htole64(swap_add);
	aseg->compare = htole64(compare);
	return 0;
}

/*
 * ATOMIC WRITE: the 8 bytes at @val, inline after the remote address
 * (prm_wqe.rst), for the 8-byte aligned @remote_addr (EINVAL).
 */
static int kite_send_atomic_write(struct kite_send_wqe *b,
				  uint64_t remote_addr, uint32_t rkey,
				  const void *val)
{
	if (!val || (remote_addr & (KITE_ATOMIC_WRITE_LEN - 1)))
		return EINVAL;
	kite_send_raddr(b, remote_addr, rkey);
	kite_send_set_data(b, 0, true);
	memcpy(b->wqe + KITE_CTRL_SZ + KITE_RADDR_SZ, val,
	       KITE_ATOMIC_WRITE_LEN);
	kite_send_ctrl(b)->inline_len = htole16(KITE_ATOMIC_WRITE_LEN);
	return 0;
}

/*
 * FLUSH (prm_wqe.rst): of @len bytes at @remote_addr (IBV_FLUSH_RANGE) or of
 * the whole MR of @rkey (IBV_FLUSH_MR), to the placement @type names. The
 * responder decides which placement types it has; EINVAL here for what is
 * no FLUSH at all: no placement type, an undefined one or level, or a
 * range the 32-bit RETH length cannot carry.
 */
static int kite_send_flush(struct kite_send_wqe *b, uint32_t rkey,
			   uint64_t remote_addr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct kite_wqe_flush *fseg =
		(struct kite_wqe_flush *)(b->wqe + KITE_CTRL_SZ +
					  KITE_RADDR_SZ);

	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR) ||
	    len > UINT32_MAX)
		return EINVAL;
	kite_send_raddr(b, remote_addr, rkey);
	fseg->length = htole32(len);
	fseg->feth = htole32(FIELD_PREP(KITE_FLUSH_PLT, type) |
			     FIELD_PREP(KITE_FLUSH_SEL, level));
	fseg->rsvd = 0;
	return 0;
}

/* The access rights a memory window may be bound with. */
#define KITE_MW_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * BIND_MW: bind @mw to @info's range of @info->mr with @info's rights, its
 * key becoming @rkey (the device takes the tag, the low 8 bits: the index
 * is the window's). A length of 0 unbinds a type 1 window. The window is
 * named by its key: a type 1 window's current one (ibv_bind_mw() keeps
 * it), a type 2 window's index. EINVAL: no window; rights other than
 * local write (which a window does not grant: it is dropped) and remote
 * write, read and atomic (a zero-based window, for one); a length without
 * an MR. What only the device knows (the window's state, the MR's access,
 * the range) completes with IBV_WC_MW_BIND_ERR.
 */
static int kite_send_bind(struct kite_send_wqe *b, struct ibv_mw *mw,
			  uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct kite_wqe_bind_mw *seg =
		(struct kite_wqe_bind_mw *)(b->wqe +
					    sizeof(struct kite_wqe_ctrl));
	uint32_t access = 0;

	if (!mw || !info || (info->mw_access_flags & ~KITE_MW_ACCESS) ||
	    (info->length && !info->mr))
		return EINVAL;
	memset(seg, 0, sizeof(*seg));
	if (info->mw_access_flags & IBV_ACCESS_REMOTE_WRITE)
		access |= KITE_ACCESS_REMOTE_WRITE;
	if (info->mw_access_flags & IBV_ACCESS_REMOTE_READ)
		access |= KITE_ACCESS_REMOTE_READ;
	if (info->mw_access_flags & IBV_ACCESS_REMOTE_ATOMIC)
		access |= KITE_ACCESS_REMOTE_ATOMIC;
	seg->mw_key = htole32(mw->rkey);
	seg->flags = htole32(FIELD_PREP(KITE_BIND_MW_TAG, rkey & 0xff));
	if (info->length) {
		seg->addr = htole64(info->addr);
		seg->length = htole64(info->length);
		seg->mr_key = htole32(info->mr->lkey);
		seg->access = htole32(access);
	}
	return 0;
}

/* A UD send's destination: the AH's address vector, QPN and Q_Key. */
static int kite_send_ud(struct kite_send_wqe *b, struct ibv_ah *ah,
			uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct kite_wqe_ud *av =
		(struct kite_wqe_ud *)(b->wqe + sizeof(struct kite_wqe_ctrl));

	if (!(b->flags & KITE_SWQE_AV) || !ah)
		return EINVAL;
	*av = to_kite_ah(ah)->av;
	av->remote_qpn = htole32(remote_qpn);
	av->qkey = htole32(remote_qkey);
	b->flags &= ~KITE_SWQE_NEED_AV;
	return 0;
}

/* The data as @num_sge SGEs, instead of any given before. */
static int kite_send_sges(struct kite_qp *qp, struct kite_send_wqe *b,
			  const struct ibv_sge *sg, size_t num_sge)
{
	size_t room = (1U << qp->sq.ring.entry_shift) - b->data_off;

	if (!b->data_off || num_sge > qp->sq.max_sge ||
	    num_sge > KITE_MAX_SGE ||
	    num_sge > room / sizeof(struct kite_wqe_sge) || (num_sge && !sg))
		return EINVAL;
	kite_write_sges((struct kite_wqe_sge *)(b->wqe + b->data_off), sg,
			num_sge);
	kite_send_set_data(b, num_sge, false);
	return 0;
}

/* The data inline, instead of any given before: none yet. */
static int kite_send_inline_start(struct kite_send_wqe *b)
{
	if (!b->data_off || !(b->flags & KITE_SWQE_INLINE_OK))
		return EINVAL;
	kite_send_set_data(b, 0, true);
	return 0;
}

/* Append @len bytes to the inline data (EINVAL beyond what fits). */
static int kite_send_inline_add(struct kite_qp *qp, struct kite_send_wqe *b,
				const void *addr, size_t len)
{
	struct kite_wqe_ctrl *ctrl = kite_send_ctrl(b);
	size_t room = (1U << qp->sq.ring.entry_shift) - b->data_off;
	size_t cur = le16toh(ctrl->inline_len);

	if (room > qp->max_inline)
		room = qp->max_inline;
	if (room > KITE_MAX_INLINE)
		room = KITE_MAX_INLINE;
	if (len > room - cur)
		return EINVAL;
	memcpy(b->wqe + b->data_off + cur, addr, len);
	ctrl->inline_len = htole16(cur + len);
	return 0;
}

/* An atomic operation has one SGE of 8 bytes. */
static int kite_send_check_atomic(struct kite_send_wqe *b)
{
	const struct kite_wqe_sge *seg =
		(const struct kite_wqe_sge *)(b->wqe + b->data_off);
	uint32_t opcode = le32toh(kite_send_ctrl(b)->opcode);

	return FIELD_GET(KITE_WQE_NUM_SGE, opcode) == 1 &&
	       !(opcode & KITE_WQE_F_INLINE) &&
	       le32toh(seg->length) == 8 ? 0 : EINVAL;
}

/* The pending checks of a WQE (KITE_SWQE_PENDING): 0 or EINVAL. */
static int kite_send_check_pending(struct kite_send_wqe *b)
{
	if (b->flags & (KITE_SWQE_NEED_AV | KITE_SWQE_NEED_SRQN))
		return EINVAL;
	return kite_send_check_atomic(b);
}

/*
 * Close the open WQE: the checks that need all of it (a UD send has its
 * address, an XRC request its remote SRQ, an atomic one SGE of 8 bytes).
 * EINVAL: the WQE is dropped.
 */
static inline ALWAYS_INLINE int kite_send_close(struct kite_qp *qp,
						struct kite_send_wqe *b)
{
	if (unlikely(b->flags & KITE_SWQE_PENDING) &&
	    kite_send_check_pending(b)) {
		kite_send_drop(qp, b);
		return EINVAL;
	}
	b->wqe = NULL;
	return 0;
}

/* Announce the WQEs from @start to the producer index, if any. */
static inline ALWAYS_INLINE void kite_send_doorbell(struct kite_qp *qp,
						    uint32_t start)
{
	if (qp->sq.pi == start)
		return;
	/* The WQEs before the doorbell that makes the device read them. */
	udma_to_device_barrier();
	mmio_write64_le(qp->db, htole64(qp->sq_db |
					FIELD_PREP(KITE_DB_PI,
						   qp->sq.pi & KITE_WQ_IDX_MASK)));
}

/* The data of @wr: SGEs, or with IBV_SEND_INLINE the bytes they point to. */
static int kite_send_wr_data(struct kite_qp *qp, struct kite_send_wqe *b,
			     const struct ibv_send_wr *wr)
{
	int i, ret;

	if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
		return EINVAL;
	if (!(wr->send_flags & IBV_SEND_INLINE))
		return kite_send_sges(qp, b, wr->sg_list, wr->num_sge);
	ret = kite_send_inline_start(b);
	for (i = 0; !ret && i < wr->num_sge; i++)
		ret = kite_send_inline_add(qp, b,
					   (void *)(uintptr_t)wr->sg_list[i].addr,
					   wr->sg_list[i].length);
	return ret;
}

/* The WQE of @wr, from opening to closing. */
static int kite_build_send(struct kite_qp *qp, struct kite_send_wqe *b,
			   const struct ibv_send_wr *wr)
{
	int ret;

	ret = kite_send_begin(qp, b, wr->opcode, wr->send_flags, wr->wr_id);
	if (ret)
		return ret;

	switch (b->op) {
	case KITE_WQE_OP_SEND_IMM:
	case KITE_WQE_OP_RDMA_WRITE_IMM:
		kite_send_imm(b, wr->imm_data);
		break;
	case KITE_WQE_OP_SEND_INV:
	case KITE_WQE_OP_LOCAL_INV:
		kite_send_inv(b, wr->invalidate_rkey);
		break;
	}
	/* XRC initiators: every request with a remote end names its SRQ. */
	if (unlikely(qp->xrc) && b->op != KITE_WQE_OP_LOCAL_INV &&
	    b->op != KITE_WQE_OP_BIND_MW &&
	    kite_send_xrc_srqn(b, wr->qp_type.xrc.remote_srqn)) {
		kite_send_drop(qp, b);
		return EINVAL;
	}

	switch (b->op) {
	case KITE_WQE_OP_SEND:
	case KITE_WQE_OP_SEND_IMM:
		if (b->flags & KITE_SWQE_AV)
			ret = kite_send_ud(b, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
					   wr->wr.ud.remote_qkey);
		break;
	case KITE_WQE_OP_RDMA_WRITE:
	case KITE_WQE_OP_RDMA_WRITE_IMM:
	case KITE_WQE_OP_RDMA_READ:
		kite_send_raddr(b, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		break;
	case KITE_WQE_OP_ATOMIC_CS:
		ret = kite_send_atomic(b, wr->wr.atomic.remote_addr,
				       wr->wr.atomic.rkey, wr->wr.atomic.swap,
				       wr->wr.atomic.compare_add);
		break;
	case KITE_WQE_OP_ATOMIC_FA:
		ret = kite_send_atomic(b, wr->wr.atomic.remote_addr,
				       wr->wr.atomic.rkey,
				       wr->wr.atomic.compare_add, 0);
		break;
	case KITE_WQE_OP_BIND_MW:
		ret = kite_send_bind(b, wr->bind_mw.mw, wr->bind_mw.rkey,
				     &wr->bind_mw.bind_info);
		break;
	}

	if (!ret && b->data_off)
		ret = kite_send_wr_data(qp, b, wr);
	if (ret) {
		kite_send_drop(qp, b);
		return ret;
	}
	return kite_send_close(qp, b);
}

int kite_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct kite_qp *qp = to_kite_qp(ibqp);
	struct kite_send_wqe b;
	uint32_t start;
	int ret = 0;

	/* Nothing posted now would ever complete. */
	if (kite_dev_dead(to_kite_ctx(ibqp->context))) {
		*bad_wr = wr;
		return EIO;
	}
	kite_lock(&qp->sq.lock);
	start = qp->sq.pi;
	for (; wr; wr = wr->next) {
		ret = kite_build_send(qp, &b, wr);
		if (ret)
			break;
	}
	kite_send_doorbell(qp, start);
	kite_unlock(&qp->sq.lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * The extended QP API. Each operation the QP was created with is one
 * function, with its kite_send_ops entry known when it is compiled, and
 * no QP type check: kite_check_send_ops() made it at creation.
 */

static struct kite_qp *qpx_to_kite_qp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct kite_qp, vqp.qp_ex);
}

/* Keep the first error of the batch; the open WQE is dropped. */
static void kite_wr_fail(struct kite_qp *qp, int ret)
{
	if (!qp->wr_err)
		qp->wr_err = ret;
	qp->wr_cur.wqe = NULL;
}

static void kite_wr_check(struct kite_qp *qp, int ret)
{
	if (ret)
		kite_wr_fail(qp, ret);
}

/*
 * Close the open WQE, if any, and open one for @wr_op on a QP that is UD
 * (@ud) or not; NULL after an error (no WQE is open then).
 */
static inline ALWAYS_INLINE struct kite_send_wqe *
kite_wr_begin_type(struct ibv_qp_ex *qpx, enum ibv_wr_opcode wr_op, bool ud)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);
	struct kite_send_wqe *b = &qp->wr_cur;
	int ret;

	if (b->wqe) {
		ret = kite_send_close(qp, b);
		if (ret) {
			kite_wr_fail(qp, ret);
			return NULL;
		}
	}
	if (qp->wr_err)
		return NULL;
	/* RESET, INIT and RTR have no send queue yet. */
	if (qp->vqp.qp.state < IBV_QPS_RTS) {
		kite_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (kite_wq_full(&qp->sq)) {
		kite_wr_fail(qp, ENOMEM);
		return NULL;
	}
	kite_send_open(qp, b, &kite_send_ops[wr_op], qpx->wr_flags,
		       qpx->wr_id, ud);
	return b;
}

/* kite_wr_begin_type() for an operation only connected QPs have. */
static inline ALWAYS_INLINE struct kite_send_wqe *
kite_wr_begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode wr_op)
{
	return kite_wr_begin_type(qpx, wr_op, false);
}

/* The open WQE, for its segments; NULL (and EINVAL) if there is none. */
static inline ALWAYS_INLINE struct kite_send_wqe *kite_wr_cur(struct ibv_qp_ex *qpx)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);

	if (!qp->wr_cur.wqe) {
		/* After an error no WQE is open: that error is kept. */
		kite_wr_fail(qp, EINVAL);
		return NULL;
	}
	return &qp->wr_cur;
}

/*
 * SEND and SEND_IMM, which UD QPs have too, come in two versions:
 * kite_set_wr_ops() takes the one of the QP's type.
 */
static void kite_wr_send(struct ibv_qp_ex *qpx)
{
	kite_wr_begin(qpx, IBV_WR_SEND);
}

static void kite_wr_send_ud(struct ibv_qp_ex *qpx)
{
	kite_wr_begin_type(qpx, IBV_WR_SEND, true);
}

static inline ALWAYS_INLINE void
kite_wr_send_imm_type(struct ibv_qp_ex *qpx, __be32 imm_data, bool ud)
{
	struct kite_send_wqe *b =
		kite_wr_begin_type(qpx, IBV_WR_SEND_WITH_IMM, ud);

	if (b)
		kite_send_imm(b, imm_data);
}

static void kite_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	kite_wr_send_imm_type(qpx, imm_data, false);
}

static void kite_wr_send_imm_ud(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	kite_wr_send_imm_type(qpx, imm_data, true);
}

static void kite_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_SEND_WITH_INV);

	if (b)
		kite_send_inv(b, invalidate_rkey);
}

static void kite_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_RDMA_WRITE);

	if (b)
		kite_send_raddr(b, remote_addr, rkey);
}

static void kite_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	struct kite_send_wqe *b =
		kite_wr_begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (b) {
		kite_send_raddr(b, remote_addr, rkey);
		kite_send_imm(b, imm_data);
	}
}

static void kite_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_RDMA_READ);

	if (b)
		kite_send_raddr(b, remote_addr, rkey);
}

static void kite_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_atomic(b, remote_addr, rkey, swap,
					       compare));
}

static void kite_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	struct kite_send_wqe *b =
		kite_wr_begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_atomic(b, remote_addr, rkey, add, 0));
}

static void kite_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_ATOMIC_WRITE);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_atomic_write(b, remote_addr, rkey,
						     atomic_wr));
}

static void kite_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_FLUSH);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_flush(b, rkey, remote_addr, len, type,
					      level));
}

static void kite_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_LOCAL_INV);

	if (b)
		kite_send_inv(b, invalidate_rkey);
}

static void kite_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct kite_send_wqe *b = kite_wr_begin(qpx, IBV_WR_BIND_MW);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_bind(b, mw, rkey, info));
}

/*
 * XRC initiators have the RC operations, of which those with a remote end
 * leave their WQE needing its remote SRQ (ibv_wr_set_xrc_srqn()) before it
 * closes: kite_set_wr_ops() gives them these versions, so that no other QP
 * pays for the check.
 */
static void kite_wr_xrc_need(struct ibv_qp_ex *qpx)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);

	if (qp->wr_cur.wqe)
		qp->wr_cur.flags |= KITE_SWQE_NEED_SRQN;
}

#define KITE_WR_XRC(op, params, ...)					\
	static void kite_wr_##op##_xrc params				\
	{								\
		kite_wr_##op(__VA_ARGS__);				\
		kite_wr_xrc_need(qpx);					\
	}

KITE_WR_XRC(send, (struct ibv_qp_ex *qpx), qpx)
KITE_WR_XRC(send_imm, (struct ibv_qp_ex *qpx, __be32 imm), qpx, imm)
KITE_WR_XRC(send_inv, (struct ibv_qp_ex *qpx, uint32_t rkey), qpx, rkey)
KITE_WR_XRC(rdma_write, (struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va),
	    qpx, rkey, va)
KITE_WR_XRC(rdma_write_imm, (struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t va, __be32 imm), qpx, rkey, va, imm)
KITE_WR_XRC(rdma_read, (struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va),
	    qpx, rkey, va)
KITE_WR_XRC(atomic_cmp_swp, (struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t va, uint64_t compare, uint64_t swap),
	    qpx, rkey, va, compare, swap)
KITE_WR_XRC(atomic_fetch_add, (struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t va, uint64_t add), qpx, rkey, va, add)
KITE_WR_XRC(atomic_write, (struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va,
			   const void *data), qpx, rkey, va, data)
KITE_WR_XRC(flush, (struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va,
		    size_t len, uint8_t type, uint8_t level),
	    qpx, rkey, va, len, type, level)

static void kite_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct kite_send_wqe *b = kite_wr_cur(qpx);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_ud(b, ah, remote_qpn, remote_qkey));
}

static void kite_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct kite_send_wqe *b = kite_wr_cur(qpx);

	if (b)
		kite_wr_check(qpx_to_kite_qp(qpx),
			      kite_send_xrc_srqn(b, remote_srqn));
}

static void kite_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);
	struct kite_send_wqe *b = kite_wr_cur(qpx);

	if (b)
		kite_wr_check(qp, kite_send_sges(qp, b, sg_list, num_sge));
}

/*
 * One SGE, the common case, written without kite_send_sges()'s general
 * checks: kite_set_wr_ops() takes it only if the QP was created with at
 * least one send SGE and the WQE has room for it after any operation's
 * segments (sq_sge_ok); kite_wr_set_sge_checked() otherwise.
 */
static void kite_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);
	struct kite_send_wqe *b = kite_wr_cur(qpx);
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	if (!b)
		return;
	if (!b->data_off) {
		kite_wr_fail(qp, EINVAL);
		return;
	}
	kite_write_sges((struct kite_wqe_sge *)(b->wqe + b->data_off), &sge, 1);
	kite_send_set_data(b, 1, false);
}

/* One SGE with kite_send_sges()'s checks: EINVAL where it does not fit. */
static void kite_wr_set_sge_checked(struct ibv_qp_ex *qpx, uint32_t lkey,
				    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	kite_wr_set_sge_list(qpx, 1, &sge);
}

static void kite_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);
	struct kite_send_wqe *b = kite_wr_cur(qpx);
	size_t i;
	int ret;

	if (!b)
		return;
	ret = kite_send_inline_start(b);
	if (!ret && num_buf && !buf_list)
		ret = EINVAL;
	for (i = 0; !ret && i < num_buf; i++)
		ret = kite_send_inline_add(qp, b, buf_list[i].addr,
					   buf_list[i].length);
	kite_wr_check(qp, ret);
}

static void kite_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	kite_wr_set_inline_data_list(qpx, 1, &buf);
}

/*
 * wr_start, wr_complete and wr_abort come in two versions, which
 * kite_set_wr_ops() picks by the SQ's kite_lock.need_lock: a QP under a
 * thread domain gets the ones without the lock, and not even the test of
 * need_lock is left in them.
 */
static inline ALWAYS_INLINE void kite_wr_start_lock(struct ibv_qp_ex *qpx,
						    bool lock)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);

	if (lock)
		pthread_spin_lock(&qp->sq.lock.lock);
	qp->wr_start_pi = qp->sq.pi;
	qp->wr_cur.wqe = NULL;
	/* Nothing posted now would ever complete. */
	qp->wr_err = kite_dev_dead(qp->ctx) ? EIO : 0;
}

static inline ALWAYS_INLINE int kite_wr_complete_lock(struct ibv_qp_ex *qpx,
						      bool lock)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);
	int ret;

	if (qp->wr_cur.wqe)
		kite_wr_check(qp, kite_send_close(qp, &qp->wr_cur));
	ret = qp->wr_err;
	if (ret)
		/* All or nothing: the batch's WQEs were never announced. */
		kite_wq_set_pi(&qp->sq, qp->wr_start_pi);
	else
		kite_send_doorbell(qp, qp->wr_start_pi);
	if (lock)
		pthread_spin_unlock(&qp->sq.lock.lock);
	return ret;
}

static inline ALWAYS_INLINE void kite_wr_abort_lock(struct ibv_qp_ex *qpx,
						    bool lock)
{
	struct kite_qp *qp = qpx_to_kite_qp(qpx);

	kite_wq_set_pi(&qp->sq, qp->wr_start_pi);
	qp->wr_cur.wqe = NULL;
	if (lock)
		pthread_spin_unlock(&qp->sq.lock.lock);
}

static void kite_wr_start(struct ibv_qp_ex *qpx)
{
	kite_wr_start_lock(qpx, true);
}

static int kite_wr_complete(struct ibv_qp_ex *qpx)
{
	return kite_wr_complete_lock(qpx, true);
}

static void kite_wr_abort(struct ibv_qp_ex *qpx)
{
	kite_wr_abort_lock(qpx, true);
}

static void kite_wr_start_td(struct ibv_qp_ex *qpx)
{
	kite_wr_start_lock(qpx, false);
}

static int kite_wr_complete_td(struct ibv_qp_ex *qpx)
{
	return kite_wr_complete_lock(qpx, false);
}

static void kite_wr_abort_td(struct ibv_qp_ex *qpx)
{
	kite_wr_abort_lock(qpx, false);
}

/* The operation @op for @qp: its XRC version on an XRC initiator. */
#define KITE_WR_OP(qp, op)	((qp)->xrc ? kite_wr_##op##_xrc : kite_wr_##op)

/* The ibv_qp_ex operations of @send_ops_flags (kite_check_send_ops()). */
void kite_set_wr_ops(struct kite_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = qp->ud ? kite_wr_send_ud : KITE_WR_OP(qp, send);
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = qp->ud ? kite_wr_send_imm_ud :
					    KITE_WR_OP(qp, send_imm);
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = KITE_WR_OP(qp, send_inv);
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = KITE_WR_OP(qp, rdma_write);
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = KITE_WR_OP(qp, rdma_write_imm);
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = KITE_WR_OP(qp, rdma_read);
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = KITE_WR_OP(qp, atomic_cmp_swp);
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = KITE_WR_OP(qp, atomic_fetch_add);
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = KITE_WR_OP(qp, atomic_write);
	if (send_ops_flags & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = KITE_WR_OP(qp, flush);
	/* No remote end, no SRQ to name: the RC versions on XRC too. */
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = kite_wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = kite_wr_bind_mw;

	qpx->wr_set_ud_addr = kite_wr_set_ud_addr;
	if (qp->xrc)
		qpx->wr_set_xrc_srqn = kite_wr_set_xrc_srqn;
	qpx->wr_set_sge = qp->sq_sge_ok ? kite_wr_set_sge :
					  kite_wr_set_sge_checked;
	qpx->wr_set_sge_list = kite_wr_set_sge_list;
	qpx->wr_set_inline_data = kite_wr_set_inline_data;
	qpx->wr_set_inline_data_list = kite_wr_set_inline_data_list;
	if (qp->sq.lock.need_lock) {
		qpx->wr_start = kite_wr_start;
		qpx->wr_complete = kite_wr_complete;
		qpx->wr_abort = kite_wr_abort;
	} else {
		qpx->wr_start = kite_wr_start_td;
		qpx->wr_complete = kite_wr_complete_td;
		qpx->wr_abort = kite_wr_abort_td;
	}
}

/*
 * ibv_bind_mw(): bind a type 1 window (libibverbs checked the type, and
 * the MR's PD). A BIND_MW work request with the window's next key,
 * ibv_inc_rkey() of its current one, which the window takes at once:
 * should the bind complete in error, the application puts the old key
 * back (ibv_bind_mw(3)).
 */
int kite_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	ret = kite_post_send(ibqp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
