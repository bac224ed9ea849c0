// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: completion queues.
 *
 * Documentation/networking/device_drivers/ethernet/kite/prm_cq.rst. A CQ
 * is a ring of 64-byte CQEs, every slot initialised with opcode INVALID so
 * that no slot looks valid whatever the pass, plus an 8-byte doorbell
 * record through which its consumer reports its counter and arm requests.
 *
 * Kernel CQs live in coherent DMA memory. Depth: the requested number of
 * CQEs rounded up to a power of two (at least 2). The device overflows
 * only when depth CQEs are outstanding, so all of them are usable and
 * ibcq->cqe = depth. The kernel has no resize verb (ib_resize_cq() is
 * gone from the core), so kernel CQs are never resized.
 *
 * User CQs (for libkite) live in the process's memory, pinned with
 * ib_umem; the library chooses a depth with a free slot for the RESIZE
 * CQE, so ibcq->cqe = depth - 1, and can resize them
 * (kite_ib_resize_user_cq()).
 *
 * Arm sequence number: the device ignores an arm request whose cmd_sn
 * equals the one of the arm that fired last. kite_ib_cq_event() advances
 * &kite_ib_cq.arm_sn for every completion event, under &kite_ib_cq.lock;
 * the EQ dispatch calls it before the CQ's comp_handler, so that an arm
 * issued from (or after) the handler carries the new number.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"

#define KITE_IB_CQE_SHIFT	6	/* 64-byte CQEs */
#define KITE_IB_CQ_MIN_DEPTH	BIT(KITE_CQ_MIN_LOG_DEPTH)
#define KITE_IB_CQ_MAX_DEPTH	BIT(KITE_CQ_MAX_LOG_DEPTH)

static_assert(BIT(KITE_IB_CQE_SHIFT) == KITE_CQE_SIZE);

/**
 * kite_ib_cq_max_cqe() - the largest CQ the verbs create (ib_device_attr.max_cqe)
 * @dev: the device
 *
 * The deepest ring is the device's largest CQ depth, within what the CQ
 * context encodes (a power of two). A user ring keeps one slot free (for
 * the RESIZE CQE), a kernel ring does not; the one limit advertised holds
 * for both: a CQ of exactly this many CQEs can be created from kernel and
 * user space, one more is refused with -EINVAL.
 *
 * Return: the depth of the deepest ring, less one.
 */
u32 kite_ib_cq_max_cqe(const struct kite_ib_dev *dev)
{
	return rounddown_pow_of_two(clamp_t(u32, dev->caps.max_cqe,
					    KITE_IB_CQ_MIN_DEPTH,
					    KITE_IB_CQ_MAX_DEPTH)) - 1;
}

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

/**
 * kite_ib_cqe_valid() - whether a CQE is new (owner rule and opcode)
 * @cqe: the CQE in slot @ci mod 2^@log_depth
 * @ci: the consumer counter (free-running, 24 bits)
 * @log_depth: log2 of the CQ's depth
 *
 * The device writes owner ((pi >> log_depth) & 1) ^ 1 and never the
 * opcode INVALID, with which the driver initialises every slot. Reads only
 * &kite_cqe.op_own: the caller issues dma_rmb() before reading the rest.
 *
 * Return: true if the slot holds CQE number @ci.
 */
bool kite_ib_cqe_valid(const struct kite_cqe *cqe, u32 ci,
		       unsigned int log_depth)
{
	u32 op_own = le32_to_cpu(READ_ONCE(cqe->op_own));
	bool owner = op_own & KITE_CQE_OWNER;
	bool expect = kite_owner_phase(ci, log_depth);

	return owner == expect &&
	       FIELD_GET(KITE_CQE_OPCODE, op_own) != KITE_CQE_OP_INVALID;
}

/**
 * kite_ib_syndrome_to_wc_status() - the work completion status of an error
 * @syndrome: KITE_CQE_SYNDROME of an error CQE, KITE_SYND_*
 *
 * Return: the matching IB_WC_* status; IB_WC_GENERAL_ERR for a syndrome
 * the driver does not know.
 */
enum ib_wc_status kite_ib_syndrome_to_wc_status(u8 syndrome)
{
	switch (syndrome) {
	case KITE_SYND_LOCAL_LENGTH:
		return IB_WC_LOC_LEN_ERR;
	case KITE_SYND_LOCAL_QP_OP:
		return IB_WC_LOC_QP_OP_ERR;
	case KITE_SYND_LOCAL_PROT:
		return IB_WC_LOC_PROT_ERR;
	case KITE_SYND_WR_FLUSH:
		return IB_WC_WR_FLUSH_ERR;
	case KITE_SYND_MW_BIND:
		return IB_WC_MW_BIND_ERR;
	case KITE_SYND_BAD_RESP:
		return IB_WC_BAD_RESP_ERR;
	case KITE_SYND_LOCAL_ACCESS:
		return IB_WC_LOC_ACCESS_ERR;
	case KITE_SYND_REMOTE_INVAL_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case KITE_SYND_REMOTE_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case KITE_SYND_REMOTE_OP:
		return IB_WC_REM_OP_ERR;
	case KITE_SYND_RETRY_EXC:
		return IB_WC_RETRY_EXC_ERR;
	case KITE_SYND_RNR_RETRY_EXC:
		return IB_WC_RNR_RETRY_EXC_ERR;
	case KITE_SYND_ABORTED:
		return IB_WC_REM_ABORT_ERR;
	default:
		return IB_WC_GENERAL_ERR;
	}
}

/**
 * kite_ib_cq_arm_word() - the doorbell record's arm word for an arm request
 * @ci: the consumer counter when arming (taken modulo 2^24)
 * @sn: the arm sequence number (taken modulo 4)
 * @solicited: arm for the next solicited or error CQE instead of any CQE
 *
 * Return: the arm word in CPU byte order.
 */
u32 kite_ib_cq_arm_word(u32 ci, u8 sn, bool solicited)
{
	u32 cmd = solicited ? KITE_CQ_ARM_SOLICITED : KITE_CQ_ARM_NEXT;

	return FIELD_PREP(KITE_CQ_DB_ARM_CI, ci & KITE_CQ_INDEX_MASK) |
	       FIELD_PREP(KITE_CQ_DB_ARM_CMD, cmd) |
	       FIELD_PREP(KITE_CQ_DB_ARM_CMD_SN, sn & KITE_CQ_ARM_SN_MASK);
}

/**
 * kite_ib_cq_arm_doorbell() - the CQ_ARM doorbell for an arm request
 * @cqn: the CQ number
 * @sn: the arm sequence number (taken modulo 4); as in the arm word
 * @solicited: as in the arm word
 *
 * Return: the 64-bit doorbell word.
 */
u64 kite_ib_cq_arm_doorbell(u32 cqn, u8 sn, bool solicited)
{
	u64 cmd = solicited ? KITE_CQ_ARM_SOLICITED : KITE_CQ_ARM_NEXT;

	return FIELD_PREP(KITE_DB_OBJ, (u64)(cqn & KITE_OBJ_MASK)) |
	       FIELD_PREP(KITE_DB_TYPE, (u64)KITE_DB_TYPE_CQ_ARM) |
	       FIELD_PREP(KITE_DB_CQ_CMD, cmd) |
	       FIELD_PREP(KITE_DB_CQ_CMD_SN,
			  (u64)(sn & KITE_CQ_ARM_SN_MASK));
}

/*
 * The completion direction's one opcode table: the work completion opcode
 * of each send WQE opcode, for the requester's CQEs and for the work
 * requests the driver flushes itself. The send direction's table is
 * kite_ib_send_ops[] (kite_ib_wqe.c).
 */
static const struct {
	bool known;
	u8 wc_op;
} kite_ib_wc_ops[] = {
	[KITE_WQE_OP_SEND] = { true, IB_WC_SEND },
	[KITE_WQE_OP_SEND_IMM] = { true, IB_WC_SEND },
	[KITE_WQE_OP_SEND_INV] = { true, IB_WC_SEND },
	[KITE_WQE_OP_RDMA_WRITE] = { true, IB_WC_RDMA_WRITE },
	[KITE_WQE_OP_RDMA_WRITE_IMM] = { true, IB_WC_RDMA_WRITE },
	[KITE_WQE_OP_RDMA_READ] = { true, IB_WC_RDMA_READ },
	[KITE_WQE_OP_ATOMIC_CS] = { true, IB_WC_COMP_SWAP },
	[KITE_WQE_OP_ATOMIC_FA] = { true, IB_WC_FETCH_ADD },
	[KITE_WQE_OP_LOCAL_INV] = { true, IB_WC_LOCAL_INV },
	[KITE_WQE_OP_REG_MR] = { true, IB_WC_REG_MR },
};

/**
 * kite_ib_wc_opcode() - the work completion opcode of a send WQE
 * @wqe_op: the WQE's KITE_WQE_OP_* (from a CQE, or as posted)
 *
 * Return: the ib_wc_opcode, or -1 for an opcode the kernel's QPs never
 * post (a CQE naming one is bad device data).
 */
int kite_ib_wc_opcode(u8 wqe_op)
{
	if (wqe_op >= ARRAY_SIZE(kite_ib_wc_ops) || !kite_ib_wc_ops[wqe_op].known)
		return -1;
	return kite_ib_wc_ops[wqe_op].wc_op;
}

/* UD and GSI receives: the sender's address. */
static void kite_ib_cqe_to_wc_ud(const struct kite_cqe *cqe,
				 struct ib_wc *wc, u16 flags)
{
	u16 vlan = le16_to_cpu(cqe->vlan);

	wc->src_qp = le32_to_cpu(cqe->src_qpn) & KITE_OBJ_MASK;
	memcpy(wc->smac, cqe->smac, ETH_ALEN);
	wc->wc_flags |= IB_WC_WITH_SMAC;
	if (flags & KITE_CQE_F_VLAN) {
		wc->vlan_id = FIELD_GET(KITE_VLAN_ID, vlan);
		wc->sl = FIELD_GET(KITE_VLAN_PCP, vlan);
		wc->wc_flags |= IB_WC_WITH_VLAN;
	}
	switch (FIELD_GET(KITE_CQE_F_L3, flags)) {
	case KITE_NET_ROCE_V2_IPV4:
		wc->network_hdr_type = RDMA_NETWORK_IPV4;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		break;
	case KITE_NET_ROCE_V2_IPV6:
		wc->network_hdr_type = RDMA_NETWORK_IPV6;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		break;
	}
}

/**
 * kite_ib_cqe_to_wc() - translate a valid CQE into a work completion
 * @cqe: the CQE (already checked with kite_ib_cqe_valid(), after dma_rmb())
 * @wc: the work completion; overwritten
 * @wr_id: the work request's ID, from the QP's queue
 * @qp: the QP the CQE names, or NULL
 *
 * Requester CQEs take their opcode from &kite_cqe.wqe_opcode; responder
 * CQEs report IB_WC_RECV or IB_WC_RECV_RDMA_WITH_IMM with the immediate
 * data or invalidated key; UD and GSI receives add the sender's QPN, MAC,
 * VLAN and network header type. Error CQEs take their status from the
 * syndrome, with the vendor syndrome in &ib_wc.vendor_err. RESIZE CQEs are
 * not work completions: the caller handles them.
 *
 * Return: 0, or -EIO for an opcode (or a successful requester CQE's WQE
 * opcode) the driver does not know; @wc is then not meaningful.
 */
int kite_ib_cqe_to_wc(const struct kite_cqe *cqe, struct ib_wc *wc,
		      u64 wr_id, struct ib_qp *qp)
{
	u32 op = FIELD_GET(KITE_CQE_OPCODE, le32_to_cpu(cqe->op_own));
	u16 flags = le16_to_cpu(cqe->flags);
	bool ud = qp && (qp->qp_type == IB_QPT_UD || qp->qp_type == IB_QPT_GSI);
	u32 synd = le32_to_cpu(cqe->syndrome);
	int wc_op;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->qp = qp;
	wc->status = IB_WC_SUCCESS;
	wc->byte_len = le32_to_cpu(cqe->byte_len);

	switch (op) {
	case KITE_CQE_OP_REQ:
		wc_op = kite_ib_wc_opcode(cqe->wqe_opcode);
		if (wc_op < 0)
			return -EIO;
		wc->opcode = wc_op;
		return 0;
	case KITE_CQE_OP_RESP_SEND:
	case KITE_CQE_OP_RESP_SEND_IMM:
	case KITE_CQE_OP_RESP_SEND_INV:
		wc->opcode = IB_WC_RECV;
		if (op == KITE_CQE_OP_RESP_SEND_IMM) {
			wc->ex.imm_data = cqe->imm_data;
			wc->wc_flags |= IB_WC_WITH_IMM;
		} else if (op == KITE_CQE_OP_RESP_SEND_INV) {
			wc->ex.invalidate_rkey = le32_to_cpu(cqe->inv_rkey);
			wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		}
		if (flags & KITE_CQE_F_GRH)
			wc->wc_flags |= IB_WC_GRH;
		if (ud)
			kite_ib_cqe_to_wc_ud(cqe, wc, flags);
		return 0;
	case KITE_CQE_OP_RESP_WRITE_IMM:
		wc->opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
		return 0;
	case KITE_CQE_OP_REQ_ERR:
		wc_op = kite_ib_wc_opcode(cqe->wqe_opcode);
		wc->opcode = wc_op < 0 ? IB_WC_SEND : wc_op;
		break;
	case KITE_CQE_OP_RESP_ERR:
		wc->opcode = IB_WC_RECV;
		break;
	default:
		return -EIO;
	}

	/* Error CQEs carry no length. */
	wc->byte_len = 0;
	wc->status = kite_ib_syndrome_to_wc_status(FIELD_GET(KITE_CQE_SYNDROME,
							     synd));
	wc->vendor_err = FIELD_GET(KITE_CQE_VENDOR_SYNDROME, synd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Verbs                                                               */
/* ------------------------------------------------------------------ */

/* Make every slot of a new ring invalid whatever the pass. */
static void kite_ib_cq_ring_init(struct kite_ib_hwq *q)
{
	__le32 invalid = cpu_to_le32(FIELD_PREP(KITE_CQE_OPCODE,
						KITE_CQE_OP_INVALID));
	struct kite_cqe *cqe;
	u32 i;

	for (i = 0; i < q->depth; i++) {
		cqe = kite_ib_hwq_entry(q, i);
		cqe->op_own = invalid;
	}
}

/* The EQ and the counters every new CQ starts with. */
static int kite_ib_cq_init(struct kite_ib_dev *dev, struct kite_ib_cq *cq,
			   const struct ib_cq_init_attr *attr)
{
	cq->eq = kite_ib_comp_eq(dev, (int)attr->comp_vector);
	if (!cq->eq)
		return -ENODEV;
	spin_lock_init(&cq->lock);
	cq->ci = 0;
	cq->arm_sn = 0;
	mutex_init(&cq->resize_mutex);
	return 0;
}

/*
 * CREATE_CQ for a CQ whose ring and doorbell record are set up, then
 * publication for EQ dispatch. On failure the device holds no CQ; the
 * caller frees the memory.
 */
static int kite_ib_cq_create_hw(struct kite_ib_dev *dev,
				struct kite_ib_cq *cq, u32 uctx,
				dma_addr_t dbrec_dma)
{
	struct kite_cmd_create_cq in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_CREATE_CQ,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	in.cfg = cpu_to_le32(FIELD_PREP(KITE_CQ_CFG_LOG_DEPTH,
					ilog2(cq->hwq.depth)));
	in.eqn = cpu_to_le32(cq->eq->eqn);
	in.uctx = cpu_to_le32(uctx);
	in.dbrec_addr = cpu_to_le64(dbrec_dma);
	in.pbl = cq->hwq.pbl.desc;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	cq->cqn = cmd.result;
	if (!cq->cqn || cq->cqn > KITE_OBJ_MASK) {
		ibdev_err(&dev->ibdev,
			  "CREATE_CQ returned bad CQN %u\n", cq->cqn);
		return -EIO;
	}

	err = kite_ib_ref_publish(&dev->cq_xa, cq->cqn, &cq->ref);
	if (err) {
		ibdev_err(&dev->ibdev, "CQN %u already in use (%d)\n",
			  cq->cqn, err);
		kite_ib_cmd_destroy(dev, KITE_CMD_DESTROY_CQ, cq->cqn);
		return err == -EBUSY ? -EIO : err;
	}
	return 0;
}

/*
 * Pin the page holding a user CQ's doorbell record; its bus address goes
 * to @dma.
 */
static int kite_ib_cq_pin_dbrec(struct kite_ib_dev *dev, struct kite_ib_cq *cq,
				u64 addr, dma_addr_t *dma)
{
	struct ib_umem *umem;

	if (!addr || !IS_ALIGNED(addr, sizeof(struct kite_cq_dbrec)))
		return -EINVAL;
	umem = ib_umem_get_va(&dev->ibdev, addr, sizeof(struct kite_cq_dbrec),
			      IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	/* An aligned 8-byte record never crosses a page: one DMA block. */
	*dma = sg_dma_address(umem->sgt_append.sgt.sgl) +
	       ib_umem_offset(umem);
	cq->dbrec_umem = umem;
	return 0;
}

/* A user ring's depth: 2^log_depth slots for @cqe CQEs plus a free one. */
static int kite_ib_user_cq_depth(struct kite_ib_dev *dev, u32 log_depth,
				 u32 cqe, u32 *depth)
{
	u32 max_depth = kite_ib_cq_max_cqe(dev) + 1;

	/* At least one CQE, as for a kernel CQ (and rdma_rxe). */
	if (!cqe || log_depth < KITE_CQ_MIN_LOG_DEPTH ||
	    log_depth > KITE_CQ_MAX_LOG_DEPTH || BIT(log_depth) > max_depth ||
	    BIT(log_depth) <= cqe)
		return -EINVAL;
	*depth = BIT(log_depth);
	return 0;
}

static int kite_ib_create_user_cq(struct kite_ib_dev *dev,
				  struct kite_ib_cq *cq,
				  const struct ib_cq_init_attr *attr,
				  struct ib_udata *udata)
{
	struct kite_ib_create_cq_resp resp = {};
	struct kite_ib_create_cq_req req;
	dma_addr_t dbrec_dma;
	u32 depth;
	int err;

	err = ib_copy_validate_udata_in(udata, req, comp_mask);
	if (err)
		return err;
	if (req.comp_mask) {
		ibdev_dbg(&dev->ibdev,
			  "create CQ: unknown comp_mask %#x\n", req.comp_mask);
		return -EOPNOTSUPP;
	}
	err = kite_ib_user_cq_depth(dev, req.log_depth, attr->cqe, &depth);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "create CQ: log_depth %u cannot hold %u CQEs\n",
			  req.log_depth, attr->cqe);
		return err;
	}
	err = kite_ib_cq_init(dev, cq, attr);
	if (err)
		return err;
	err = kite_ib_hwq_alloc_user(dev, &cq->hwq, req.buf_addr,
				     (u64)depth << KITE_IB_CQE_SHIFT, depth,
				     KITE_IB_CQE_SHIFT);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "create CQ: ring at %#llx unusable (%d)\n",
			  req.buf_addr, err);
		return err;
	}
	err = kite_ib_cq_pin_dbrec(dev, cq, req.dbrec_addr, &dbrec_dma);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "create CQ: doorbell record at %#llx unusable (%d)\n",
			  req.dbrec_addr, err);
		goto err_free_hwq;
	}
	err = kite_ib_cq_create_hw(dev, cq, kite_ib_uctx_of(udata),
				   dbrec_dma);
	if (err)
		goto err_unpin_dbrec;

	resp.cqn = cq->cqn;
	err = ib_respond_udata(udata, resp);
	if (err)
		goto err_destroy;
	cq->ibcq.cqe = depth - 1;
	return 0;

err_destroy:
	kite_ib_ref_unpublish(&dev->cq_xa, cq->cqn, &cq->ref);
	kite_ib_cmd_destroy(dev, KITE_CMD_DESTROY_CQ, cq->cqn);
err_unpin_dbrec:
	ib_umem_release(cq->dbrec_umem);
	cq->dbrec_umem = NULL;
err_free_hwq:
	kite_ib_hwq_free(dev, &cq->hwq);
	return err;
}

/**
 * kite_ib_create_cq() - create a completion queue
 * @ibcq: the core's CQ, embedded in &struct kite_ib_cq
 * @attr: depth (&ib_cq_init_attr.cqe), completion vector; of the flags
 *	only IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (every CQE has the
 *	device clock's timestamp)
 * @attrs: the uverbs bundle of a user CQ (struct kite_ib_create_cq_req in
 *	its driver data), NULL for a kernel CQ
 *
 * A kernel CQ's ring holds attr->cqe rounded up to a power of two (at
 * least 2) CQEs in coherent DMA memory, all usable: &ib_cq.cqe is set to
 * that depth. A user CQ's ring and doorbell record are the library's
 * (struct kite_ib_create_cq_req); one slot stays free for a resize.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for other flags or unknown request bits; -EINVAL for
 * a depth outside 1 .. kite_ib_cq_max_cqe() or an unusable user buffer; -ENODEV without
 * a completion EQ; -ENOMEM; -EFAULT; or the errno of CREATE_CQ.
 */
int kite_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct uverbs_attr_bundle *attrs)
{
	struct kite_ib_dev *dev = to_kdev(ibcq->device);
	struct kite_ib_cq *cq = to_kcq(ibcq);
	u32 depth, max_cqe;
	int err;

	/*
	 * The device writes every CQE's timestamp, asked for or not; it
	 * always reports an overrun (no IGNORE_OVERRUN).
	 */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION) {
		ibdev_dbg(&dev->ibdev,
			  "create CQ: unsupported flags %#x\n", attr->flags);
		return -EOPNOTSUPP;
	}
	max_cqe = kite_ib_cq_max_cqe(dev);
	if (!attr->cqe || attr->cqe > max_cqe) {
		ibdev_dbg(&dev->ibdev,
			  "create CQ: %u CQEs, the device has 1 .. %u\n",
			  attr->cqe, max_cqe);
		return -EINVAL;
	}
	if (attrs)
		return kite_ib_create_user_cq(dev, cq, attr,
					      &attrs->driver_udata);

	/* At most max_cqe + 1, a power of two: the deepest ring. */
	depth = roundup_pow_of_two(max_t(u32, attr->cqe,
					 KITE_IB_CQ_MIN_DEPTH));
	err = kite_ib_cq_init(dev, cq, attr);
	if (err)
		return err;
	err = kite_ib_hwq_alloc(dev, &cq->hwq, depth, KITE_IB_CQE_SHIFT);
	if (err)
		return err;
	kite_ib_cq_ring_init(&cq->hwq);

	cq->dbrec = dma_alloc_coherent(dev->dmadev, sizeof(*cq->dbrec),
				       &cq->dbrec_dma, GFP_KERNEL);
	if (!cq->dbrec) {
		err = -ENOMEM;
		goto err_free_hwq;
	}
	err = kite_ib_cq_create_hw(dev, cq, 0, cq->dbrec_dma);
	if (err)
		goto err_free_dbrec;
	ibcq->cqe = depth;
	return 0;

err_free_dbrec:
	dma_free_coherent(dev->dmadev, sizeof(*cq->dbrec), cq->dbrec,
			  cq->dbrec_dma);
	cq->dbrec = NULL;
err_free_hwq:
	kite_ib_hwq_free(dev, &cq->hwq);
	return err;
}

/**
 * kite_ib_destroy_cq() - destroy a completion queue
 * @ibcq: the CQ
 * @udata: user data for a user CQ, NULL for a kernel one
 *
 * kite_ib_ref_destroy(): the CQN is withdrawn from EQE dispatch (waiting
 * for a dispatcher still holding a reference), then DESTROY_CQ (which
 * succeeds locally on a FATAL or DOWN channel) frees it in the device, so
 * that a concurrent create may get the same CQN; then the memory goes.
 *
 * Context: process context, may sleep.
 * Return: 0, or the errno of a DESTROY_CQ a working device refused (the
 * CQ is then left intact).
 */
int kite_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibcq->device);
	struct kite_ib_cq *cq = to_kcq(ibcq);
	int err;

	err = kite_ib_ref_destroy(dev, &dev->cq_xa, &cq->ref,
				  KITE_CMD_DESTROY_CQ, cq->cqn);
	if (err)
		return err;

	if (cq->dbrec)
		dma_free_coherent(dev->dmadev, sizeof(*cq->dbrec), cq->dbrec,
				  cq->dbrec_dma);
	cq->dbrec = NULL;
	if (cq->dbrec_umem)
		ib_umem_release(cq->dbrec_umem);
	cq->dbrec_umem = NULL;
	kite_ib_hwq_free(dev, &cq->hwq);
	return 0;
}

/**
 * kite_ib_resize_user_cq() - move a user CQ to a new ring
 * @ibcq: the CQ
 * @cqe: CQEs the new ring must hold
 * @udata: struct kite_ib_resize_cq_req: the new ring, set up like the
 *	first (prm_cq.rst, "Resize")
 *
 * Pins the new ring and issues MODIFY_CQ with KITE_MODIFY_CQ_RESIZE. The
 * device stops using the old ring when the command completes, so the old
 * ring is unpinned then; the library still reads it up to the RESIZE CQE.
 * A CQ holding more unconsumed CQEs than the new ring takes is refused by
 * the device (-EINVAL) and left unchanged.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for a kernel CQ, a device without resize or
 * unknown request bits; -EINVAL for a bad size or buffer; -ENOMEM;
 * -EFAULT; or the errno of MODIFY_CQ.
 */
int kite_ib_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
			   struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibcq->device);
	struct kite_ib_cq *cq = to_kcq(ibcq);
	struct kite_ib_resize_cq_req req;
	struct kite_cmd_modify_cq in = {
		.cqn = cpu_to_le32(cq->cqn),
		.mask = cpu_to_le32(KITE_MODIFY_CQ_RESIZE),
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_MODIFY_CQ,
		.in = &in,
		.in_len = sizeof(in),
	};
	struct kite_ib_hwq new;
	u32 depth;
	int err;

	if (!udata || !cq->dbrec_umem)
		return -EOPNOTSUPP;
	if (!(dev->caps.features & KITE_FEAT_CQ_RESIZE))
		return -EOPNOTSUPP;
	err = ib_copy_validate_udata_in(udata, req, comp_mask);
	if (err)
		return err;
	if (req.comp_mask)
		return -EOPNOTSUPP;
	if (!cqe || cqe > kite_ib_cq_max_cqe(dev)) {
		ibdev_dbg(&dev->ibdev,
			  "resize CQ %u: %u CQEs, the device has 1 .. %u\n",
			  cq->cqn, cqe, kite_ib_cq_max_cqe(dev));
		return -EINVAL;
	}
	err = kite_ib_user_cq_depth(dev, req.log_depth, cqe, &depth);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "resize CQ %u: log_depth %u cannot hold %u CQEs\n",
			  cq->cqn, req.log_depth, cqe);
		return err;
	}

	mutex_lock(&cq->resize_mutex);
	err = kite_ib_hwq_alloc_user(dev, &new, req.buf_addr,
				     (u64)depth << KITE_IB_CQE_SHIFT, depth,
				     KITE_IB_CQE_SHIFT);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "resize CQ %u: ring at %#llx unusable (%d)\n",
			  cq->cqn, req.buf_addr, err);
		goto out_unlock;
	}
	in.cfg = cpu_to_le32(FIELD_PREP(KITE_CQ_CFG_LOG_DEPTH,
					req.log_depth));
	in.pbl = new.pbl.desc;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err) {
		kite_ib_hwq_free(dev, &new);
		goto out_unlock;
	}
	swap(cq->hwq, new);
	kite_ib_hwq_free(dev, &new);
	ibcq->cqe = depth - 1;
out_unlock:
	mutex_unlock(&cq->resize_mutex);
	return err;
}

/**
 * kite_ib_modify_cq() - change a CQ's event moderation
 * @ibcq: the CQ
 * @count: CQEs per event, 0 for no count moderation
 * @period: microseconds, 0 for no period moderation
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP if the device has no moderation; -EINVAL for
 * values beyond the device's limits; or the errno of MODIFY_CQ.
 */
int kite_ib_modify_cq(struct ib_cq *ibcq, u16 count, u16 period)
{
	struct kite_ib_dev *dev = to_kdev(ibcq->device);
	struct kite_ib_cq *cq = to_kcq(ibcq);
	struct kite_cmd_modify_cq in = {
		.cqn = cpu_to_le32(cq->cqn),
		.mask = cpu_to_le32(KITE_MODIFY_CQ_MODERATION),
		.mod_count = cpu_to_le16(count),
		.mod_period = cpu_to_le16(period),
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_MODIFY_CQ,
		.in = &in,
		.in_len = sizeof(in),
	};

	if (!(dev->caps.features & KITE_FEAT_CQ_MODERATION))
		return -EOPNOTSUPP;
	if (count > dev->caps.max_cq_moderation_count ||
	    period > dev->caps.max_cq_moderation_period)
		return -EINVAL;
	return kite_ib_cmd_exec(dev, &cmd);
}

/**
 * kite_ib_cq_event() - account for a completion event of a CQ
 * @cq: the CQ, with a reference held (kite_ib_cq_get())
 *
 * Advances the arm sequence number (prm_cq.rst, "cmd_sn"): an arm request
 * made after this carries a number the device has not fired with, and so
 * is not taken for a duplicate. The EQ dispatch calls this for every
 * KITE_EQE_COMPLETION, before the CQ's comp_handler.
 *
 * Context: any context.
 */
void kite_ib_cq_event(struct kite_ib_cq *cq)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->arm_sn = (cq->arm_sn + 1) & KITE_CQ_ARM_SN_MASK;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Complete the WQE a CQE names: @idx is its 16-bit counter. Work requests
 * complete in order on each queue (an SQ CQE also completes the unsignaled
 * WQEs before it), so the queue's consumer counter moves past @idx.
 * Called with &kite_ib_wq.lock held (inside &kite_ib_cq.lock), so that
 * the counters are consistent with posting and with a QP reset.
 * Returns false if @idx is not an outstanding WQE of @wq; else its wr_id
 * and, for a kernel RQ, the bytes it can take (U32_MAX otherwise).
 */
static bool kite_ib_wq_complete(struct kite_ib_wq *wq, u16 idx, u64 *wr_id,
				u32 *len)
{
	u32 pi = wq->pi;
	u32 ci = wq->ci;
	u32 depth = wq->hwq.depth;
	u32 outstanding = pi - ci;
	u16 off = idx - (u16)ci;

	if (!wq->wr_id || !depth || outstanding > depth || off >= outstanding)
		return false;
	*wr_id = wq->wr_id[idx & (depth - 1)];
	*len = wq->len ? wq->len[idx & (depth - 1)] : U32_MAX;
	WRITE_ONCE(wq->ci, ci + off + 1);
	return true;
}

/* Does a CQE of opcode @op complete a receive WQE? */
static bool kite_ib_cqe_is_recv(u32 op)
{
	switch (op) {
	case KITE_CQE_OP_RESP_SEND:
	case KITE_CQE_OP_RESP_SEND_IMM:
	case KITE_CQE_OP_RESP_SEND_INV:
	case KITE_CQE_OP_RESP_WRITE_IMM:
	case KITE_CQE_OP_RESP_ERR:
		return true;
	default:
		return false;
	}
}

/* Which queue of @qp a CQE of opcode @op completes; NULL if neither. */
static struct kite_ib_wq *kite_ib_cqe_wq(struct kite_ib_qp *qp, u32 op)
{
	if (op == KITE_CQE_OP_REQ || op == KITE_CQE_OP_REQ_ERR)
		return &qp->sq;
	return kite_ib_cqe_is_recv(op) ? &qp->rq : NULL;
}

/**
 * kite_ib_cqe_check_wc() - check a work completion against the posted WQE
 * @wc: the work completion kite_ib_cqe_to_wc() filled
 * @synd: the CQE's &kite_cqe.syndrome (CPU order)
 * @posted_len: the bytes the WQE's buffers can take (receives), or U32_MAX
 *
 * Return: KITE_IB_BAD_COUNT if the completion is plausible, else the class
 * of bad device data it shows: an error with a syndrome the driver does not
 * know (KITE_IB_BAD_CQE_SYNDROME), or a received SEND longer than its
 * buffers (KITE_IB_BAD_CQE_LEN; an RDMA WRITE with immediate is not bounded
 * by the receive WQE it consumes).
 */
enum kite_ib_bad kite_ib_cqe_check_wc(const struct ib_wc *wc, u32 synd,
				      u32 posted_len)
{
	if (wc->status != IB_WC_SUCCESS &&
	    !kite_ib_syndrome_known(FIELD_GET(KITE_CQE_SYNDROME, synd)))
		return KITE_IB_BAD_CQE_SYNDROME;
	if (wc->status == IB_WC_SUCCESS && wc->opcode == IB_WC_RECV &&
	    wc->byte_len > posted_len)
		return KITE_IB_BAD_CQE_LEN;
	return KITE_IB_BAD_COUNT;
}

/*
 * Consume the CQE at cq->ci (valid, after dma_rmb()). Returns true if it
 * filled @wc; false if it was skipped. A CQE that makes no sense is counted
 * and logged, and its QP (or, when no QP of this CQ can be named, the CQ) is
 * isolated (kite_ib_guard.c).
 */
static bool kite_ib_poll_one(struct kite_ib_dev *dev, struct kite_ib_cq *cq,
			     const struct kite_cqe *cqe, u32 op,
			     struct ib_wc *wc)
{
	u32 qpn = le32_to_cpu(cqe->qpn) & KITE_OBJ_MASK;
	u16 idx = le16_to_cpu(cqe->wqe_idx);
	enum kite_ib_bad bad = KITE_IB_BAD_COUNT;
	struct kite_ib_wq *wq;
	struct kite_ib_qp *qp;
	struct ib_cq *own_cq;
	bool filled = false;
	u32 posted_len;
	bool done;
	u64 wr_id;

	qp = kite_ib_qp_get(dev, qpn);
	if (!qp && qpn < dev->caps.max_qp) {
		/* A QP destroyed with CQEs outstanding: nothing is lost. */
		ibdev_dbg(&dev->ibdev,
			  "CQ %u: CQE for QP %u, which is gone, skipped\n",
			  cq->cqn, qpn);
		return false;
	}
	if (!qp) {
		kite_ib_bad(dev, KITE_IB_BAD_CQE_QPN);
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-qpn): CQ %u: CQE for QP %u, beyond the device's range, skipped\n",
				      cq->cqn, qpn);
		kite_ib_cq_isolate(dev, cq);
		return false;
	}
	wq = kite_ib_cqe_wq(qp, op);
	if (!wq) {
		kite_ib_bad(dev, KITE_IB_BAD_CQE_OPCODE);
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-opcode): CQ %u: QP %u CQE with unknown opcode %#x skipped\n",
				      cq->cqn, qpn, op);
		goto isolate;
	}
	own_cq = wq == &qp->sq ? qp->ibqp.send_cq : qp->ibqp.recv_cq;
	if (own_cq != &cq->ibcq) {
		kite_ib_bad(dev, KITE_IB_BAD_CQE_CQN);
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-cqn): CQ %u: CQE for QP %u, which completes on CQ %u, skipped\n",
				      cq->cqn, qpn,
				      own_cq ? to_kcq(own_cq)->cqn : 0);
		goto isolate;
	}
	if (wq == &qp->rq && qp->ibqp.srq) {
		/* A receive from the SRQ: @idx is the WQE's tag. */
		done = kite_ib_srq_complete(to_ksrq(qp->ibqp.srq), idx, &wr_id,
					    &posted_len);
	} else {
		spin_lock(&wq->lock);
		done = kite_ib_wq_complete(wq, idx, &wr_id, &posted_len);
		spin_unlock(&wq->lock);
	}
	if (!done) {
		kite_ib_bad(dev, KITE_IB_BAD_CQE_WQE_IDX);
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-wqe-idx): CQ %u: QP %u %s CQE for WQE %u not outstanding, skipped\n",
				      cq->cqn, qpn, wq == &qp->sq ? "SQ" :
				      qp->ibqp.srq ? "SRQ" : "RQ", idx);
		goto isolate;
	}
	filled = true;
	if (kite_ib_cqe_to_wc(cqe, wc, wr_id, &qp->ibqp)) {
		/* The WQE is done; tell its owner it failed. */
		kite_ib_bad(dev, KITE_IB_BAD_CQE_OPCODE);
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-opcode): CQ %u: QP %u CQE with unknown WQE opcode %#x\n",
				      cq->cqn, qpn, cqe->wqe_opcode);
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = wr_id;
		wc->qp = &qp->ibqp;
		wc->status = IB_WC_GENERAL_ERR;
		goto isolate;
	}
	bad = kite_ib_cqe_check_wc(wc, le32_to_cpu(cqe->syndrome), posted_len);
	if (bad == KITE_IB_BAD_COUNT)
		goto out;
	kite_ib_bad(dev, bad);
	if (bad == KITE_IB_BAD_CQE_LEN) {
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-len): CQ %u: QP %u WQE %u: %u bytes received, %u posted\n",
				      cq->cqn, qpn, idx, wc->byte_len,
				      posted_len);
		wc->status = IB_WC_LOC_LEN_ERR;
		wc->byte_len = 0;
	} else {
		ibdev_err_ratelimited(&dev->ibdev,
				      "bad device data (cqe-syndrome): CQ %u: QP %u WQE %u: unknown syndrome %#x\n",
				      cq->cqn, qpn, idx,
				      le32_to_cpu(cqe->syndrome));
	}
isolate:
	kite_ib_qp_isolate(dev, qpn);
out:
	kite_ib_qp_put(qp);
	return filled;
}

/*
 * The slot at @ci is not valid: was it skipped? If the next slot holds CQE
 * number @ci + 1, the device wrote slot @ci before it (CQEs are written in
 * order), with an owner bit out of turn.
 */
static bool kite_ib_cqe_skipped(struct kite_ib_cq *cq, u32 ci,
				unsigned int log_depth)
{
	u32 next = (ci + 1) & KITE_CQ_INDEX_MASK;

	if (!kite_ib_cqe_valid(kite_ib_hwq_entry(&cq->hwq, next), next,
			       log_depth))
		return false;
	/* The next slot before this one's second look. */
	dma_rmb();
	return !kite_ib_cqe_valid(kite_ib_hwq_entry(&cq->hwq, ci), ci,
				  log_depth);
}

/*
 * Flush @wq's outstanding work requests into @wc (at most @num), in order,
 * as the device flushes a QP in the error state: every WQE, signalled or
 * not, completes with IB_WC_WR_FLUSH_ERR. Returns the number written.
 */
static int kite_ib_wq_flush(struct kite_ib_qp *qp, struct kite_ib_wq *wq,
			    struct ib_wc *wc, int num)
{
	u32 mask = wq->hwq.depth - 1;
	int n = 0, op;

	spin_lock(&wq->lock);
	while (n < num && wq->ci != wq->pi) {
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = wq->wr_id[wq->ci & mask];
		wc[n].status = IB_WC_WR_FLUSH_ERR;
		if (wq == &qp->sq) {
			op = kite_ib_wc_opcode(wq->opcode[wq->ci & mask]);
			wc[n].opcode = op < 0 ? IB_WC_SEND : op;
		} else {
			wc[n].opcode = IB_WC_RECV;
		}
		wc[n].qp = &qp->ibqp;
		WRITE_ONCE(wq->ci, wq->ci + 1);
		n++;
	}
	spin_unlock(&wq->lock);
	return n;
}

/*
 * The device is dead (kite_ib_dead()): no CQE will come for the work
 * requests still outstanding on the kernel QPs completing on @cq. Flush
 * them here, into @wc (at most @num). Called with &kite_ib_cq.lock held.
 * Returns the number written.
 */
static int kite_ib_cq_flush_dead(struct kite_ib_dev *dev,
				 struct kite_ib_cq *cq, struct ib_wc *wc,
				 int num)
{
	struct kite_ib_ref *ref;
	struct kite_ib_qp *qp;
	unsigned long index;
	int n = 0;

	/* Published QPs are alive while the table's lock is held. */
	xa_lock(&dev->qp_xa);
	xa_for_each(&dev->qp_xa, index, ref) {
		qp = container_of(ref, struct kite_ib_qp, ref);
		if (qp->uctx)
			continue;
		if (qp->ibqp.send_cq == &cq->ibcq)
			n += kite_ib_wq_flush(qp, &qp->sq, wc + n, num - n);
		/* An SRQ's receives are not the QP's to flush. */
		if (qp->ibqp.recv_cq == &cq->ibcq && !qp->ibqp.srq)
			n += kite_ib_wq_flush(qp, &qp->rq, wc + n, num - n);
		if (n == num)
			break;
	}
	xa_unlock(&dev->qp_xa);
	return n;
}

/**
 * kite_ib_cq_clean() - drop a kernel QP's completions from one of its CQs
 * @cq: a kernel CQ of the QP
 * @qpn: the QP, being reset or destroyed
 * @srq: the QP's SRQ, to which the receives dropped return; or NULL
 *
 * The CQEs of @qpn not yet polled complete WQEs that no longer exist: the
 * QP's counters start again from 0 at RESET, and its number may be reused
 * after destroy, so they would match new WQEs (or be taken for bad device
 * data). They are dropped; the CQEs of other QPs after them move up, each
 * slot keeping the owner bit of its index, and the consumer counter
 * advances by the number dropped. Only valid CQEs move, so a CQE the device
 * writes meanwhile lands beyond them.
 *
 * Context: process or softirq context; takes &kite_ib_cq.lock.
 */
void kite_ib_cq_clean(struct kite_ib_cq *cq, u32 qpn, struct kite_ib_srq *srq)
{
	unsigned int log_depth = ilog2(cq->hwq.depth);
	u32 end, n, idx, op, op_own, own, dropped = 0;
	struct kite_cqe *cqe, *dst;
	unsigned long flags;
	u32 posted_len;
	u64 wr_id;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < cq->hwq.depth; n++) {
		end = (cq->ci + n) & KITE_CQ_INDEX_MASK;
		if (!kite_ib_cqe_valid(kite_ib_hwq_entry(&cq->hwq, end), end,
				       log_depth))
			break;
	}
	/* The CQEs' bodies only after their owner bits. */
	dma_rmb();
	while (n--) {
		idx = (cq->ci + n) & KITE_CQ_INDEX_MASK;
		cqe = kite_ib_hwq_entry(&cq->hwq, idx);
		op_own = le32_to_cpu(cqe->op_own);
		op = FIELD_GET(KITE_CQE_OPCODE, op_own);
		if (op != KITE_CQE_OP_RESIZE &&
		    (le32_to_cpu(cqe->qpn) & KITE_OBJ_MASK) == qpn) {
			if (srq && kite_ib_cqe_is_recv(op))
				kite_ib_srq_complete(srq,
						     le16_to_cpu(cqe->wqe_idx),
						     &wr_id, &posted_len);
			dropped++;
			continue;
		}
		if (!dropped)
			continue;
		dst = kite_ib_hwq_entry(&cq->hwq,
					(idx + dropped) & KITE_CQ_INDEX_MASK);
		own = le32_to_cpu(dst->op_own) & KITE_CQE_OWNER;
		memcpy(dst, cqe, sizeof(*dst));
		dst->op_own = cpu_to_le32((op_own & ~KITE_CQE_OWNER) | own);
	}
	if (dropped) {
		cq->ci = (cq->ci + dropped) & KITE_CQ_INDEX_MASK;
		/* The moves are done before the device may reuse the slots. */
		dma_mb();
		WRITE_ONCE(cq->dbrec->ci, cpu_to_le32(cq->ci & KITE_CQ_DB_CI));
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * kite_ib_poll_cq() - poll a kernel CQ for work completions
 * @ibcq: the CQ
 * @num_entries: the capacity of @wc
 * @wc: the work completions
 *
 * Consumes valid CQEs at the consumer counter while @wc has room, then
 * reports the counter in the doorbell record. CQEs that make no sense (an
 * unknown QP, a QP of another CQ, a WQE that is not outstanding, an unknown
 * opcode) are consumed and skipped, a slot the owner rule skipped likewise;
 * unknown syndromes and receives longer than their buffers become error
 * completions. Each is counted and logged, and its QP or the CQ isolated.
 * Polling stops at a RESIZE CQE, which a kernel CQ never asks for. On a
 * dead device (kite_ib_dead()) the work requests still outstanding on the
 * CQ's kernel QPs follow, flushed (IB_WC_WR_FLUSH_ERR).
 *
 * Context: any context.
 * Return: the number of work completions written.
 */
int kite_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct kite_ib_dev *dev = to_kdev(ibcq->device);
	struct kite_ib_cq *cq = to_kcq(ibcq);
	struct kite_cqe *cqe;
	unsigned long flags;
	u32 start, op;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	start = cq->ci;
	while (n < num_entries) {
		cqe = kite_ib_hwq_entry(&cq->hwq, cq->ci);
		if (!kite_ib_cqe_valid(cqe, cq->ci, ilog2(cq->hwq.depth))) {
			if (!kite_ib_cqe_skipped(cq, cq->ci,
						 ilog2(cq->hwq.depth)))
				break;
			/*
			 * Its completion is lost: skip it, isolate. Its owner
			 * bit is the next pass's: make the slot invalid, or it
			 * would pass for CQE ci + depth before the device
			 * writes that.
			 */
			WRITE_ONCE(cqe->op_own,
				   cpu_to_le32(FIELD_PREP(KITE_CQE_OPCODE,
							  KITE_CQE_OP_INVALID)));
			kite_ib_bad(dev, KITE_IB_BAD_CQE_OWNER);
			ibdev_err_ratelimited(&dev->ibdev,
					      "bad device data (cqe-owner): CQ %u: CQE %u skipped by the owner rule\n",
					      cq->cqn, cq->ci);
			kite_ib_cq_isolate(dev, cq);
			cq->ci = (cq->ci + 1) & KITE_CQ_INDEX_MASK;
			continue;
		}
		dma_rmb();
		op = FIELD_GET(KITE_CQE_OPCODE, le32_to_cpu(cqe->op_own));
		if (op == KITE_CQE_OP_RESIZE) {
			/*
			 * Kernel CQs are never resized, and a RESIZE CQE does
			 * not count: the device is confused. Stop here rather
			 * than lose track of its counter.
			 */
			ibdev_err_ratelimited(&dev->ibdev,
					      "CQ %u: RESIZE CQE at %u but no resize was asked for\n",
					      cq->cqn, cq->ci);
			break;
		}
		if (kite_ib_poll_one(dev, cq, cqe, op, &wc[n]))
			n++;
		cq->ci = (cq->ci + 1) & KITE_CQ_INDEX_MASK;
	}
	if (cq->ci != start) {
		/* Done reading the CQEs before the device may reuse them. */
		dma_mb();
		WRITE_ONCE(cq->dbrec->ci,
			   cpu_to_le32(cq->ci & KITE_CQ_DB_CI));
	}
	if (unlikely(kite_ib_dead(dev)) && n < num_entries)
		n += kite_ib_cq_flush_dead(dev, cq, wc + n, num_entries - n);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * kite_ib_cq_arm() - write an arm request into a CQ's doorbell record
 * @cq: a kernel CQ, with &kite_ib_cq.lock held
 * @solicited: arm for the next solicited or error CQE instead of any CQE
 *
 * Writes the arm word (consumer counter, command, current arm sequence
 * number) and issues wmb(), so that the record is visible before the
 * doorbell the caller then rings.
 *
 * Return: the CQ_ARM doorbell word, with the same command and number.
 */
u64 kite_ib_cq_arm(struct kite_ib_cq *cq, bool solicited)
{
	u8 sn = cq->arm_sn;

	lockdep_assert_held(&cq->lock);
	WRITE_ONCE(cq->dbrec->arm,
		   cpu_to_le32(kite_ib_cq_arm_word(cq->ci, sn, solicited)));
	/* The record before the doorbell that makes the device read it. */
	wmb();
	return kite_ib_cq_arm_doorbell(cq->cqn, sn, solicited);
}

/**
 * kite_ib_req_notify_cq() - request a completion event
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Writes the arm request into the doorbell record (kite_ib_cq_arm()), then
 * rings the CQ_ARM doorbell. The device fires at once for CQEs beyond the
 * consumer counter, so no event is lost.
 *
 * Context: any context.
 * Return: 1 if IB_CQ_REPORT_MISSED_EVENTS was given and a CQE is already
 * waiting, else 0.
 */
int kite_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct kite_ib_dev *dev = to_kdev(ibcq->device);
	struct kite_ib_cq *cq = to_kcq(ibcq);
	bool solicited = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	kite_ib_ring_db(dev, kite_ib_cq_arm(cq, solicited));
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    kite_ib_cqe_valid(kite_ib_hwq_entry(&cq->hwq, cq->ci), cq->ci,
			      ilog2(cq->hwq.depth)))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
