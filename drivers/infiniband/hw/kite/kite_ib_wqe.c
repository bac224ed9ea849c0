// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: work queue entries and QP attribute commands.
 *
 * Pure translation functions: they build send and receive WQEs from verbs
 * work requests, and MODIFY_QP commands from struct ib_qp_attr, into memory
 * the caller provides. They do not touch the device, take no locks and do
 * not sleep, so the post_send/post_recv fast paths and the KUnit tests
 * call them alike. Formats: prm_wqe.rst and prm_qp.rst in
 * Documentation/networking/device_drivers/ethernet/kite/.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/if_vlan.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kite_ib.h"

/* IB path MTUs and QP states are numbered as the device numbers them. */
static_assert(KITE_MTU_256 == (int)IB_MTU_256);
static_assert(KITE_MTU_512 == (int)IB_MTU_512);
static_assert(KITE_MTU_1024 == (int)IB_MTU_1024);
static_assert(KITE_MTU_2048 == (int)IB_MTU_2048);
static_assert(KITE_MTU_4096 == (int)IB_MTU_4096);
static_assert(KITE_QPS_RESET == (int)IB_QPS_RESET);
static_assert(KITE_QPS_INIT == (int)IB_QPS_INIT);
static_assert(KITE_QPS_RTR == (int)IB_QPS_RTR);
static_assert(KITE_QPS_RTS == (int)IB_QPS_RTS);
static_assert(KITE_QPS_SQD == (int)IB_QPS_SQD);
static_assert(KITE_QPS_SQE == (int)IB_QPS_SQE);
static_assert(KITE_QPS_ERR == (int)IB_QPS_ERR);

#define KITE_SEG_SIZE		16	/* WQE segments are 16-byte aligned */

/**
 * kite_ib_access_to_hw() - translate IB access flags to KITE_ACCESS_*
 * @ib_access: IB_ACCESS_* flags
 *
 * IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_WRITE, IB_ACCESS_REMOTE_READ,
 * IB_ACCESS_REMOTE_ATOMIC and IB_ACCESS_FLUSH_GLOBAL are translated; other
 * flags (relaxed ordering, zero-based, on-demand paging, memory window
 * binding, persistent flushes, ...) are ignored here: a QP's access
 * attribute has only these bits, and callers that cannot honour the
 * others reject them first. A QP may be given IB_ACCESS_FLUSH_PERSISTENT:
 * Kite has no persistent memory, no MR of it grants that access, and a
 * FLUSH asking for it fails on the MR whatever the QP allows.
 *
 * Return: the KITE_ACCESS_* bits.
 */
u32 kite_ib_access_to_hw(int ib_access)
{
	u32 hw = 0;

	if (ib_access & IB_ACCESS_LOCAL_WRITE)
		hw |= KITE_ACCESS_LOCAL_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_WRITE)
		hw |= KITE_ACCESS_REMOTE_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_READ)
		hw |= KITE_ACCESS_REMOTE_READ;
	if (ib_access & IB_ACCESS_REMOTE_ATOMIC)
		hw |= KITE_ACCESS_REMOTE_ATOMIC;
	if (ib_access & IB_ACCESS_FLUSH_GLOBAL)
		hw |= KITE_ACCESS_FLUSH_GLOBAL;
	return hw;
}

/**
 * kite_ib_mr_access_to_hw() - translate an MR's IB access flags
 * @ib_access: IB_ACCESS_* flags
 *
 * As kite_ib_access_to_hw(), and IB_ACCESS_MW_BIND (an MR memory windows
 * may be bound to) as KITE_ACCESS_MW_BIND.
 *
 * Return: the KITE_ACCESS_* bits of REG_MR and of a REG_MR work request.
 */
u32 kite_ib_mr_access_to_hw(int ib_access)
{
	u32 hw = kite_ib_access_to_hw(ib_access);

	if (ib_access & IB_ACCESS_MW_BIND)
		hw |= KITE_ACCESS_MW_BIND;
	return hw;
}

#define KITE_IB_QPT_CONN	(BIT(KITE_QPT_RC) | BIT(KITE_QPT_UC))
#define KITE_IB_QPT_ALL		(KITE_IB_QPT_CONN | BIT(KITE_QPT_UD) | \
				 BIT(KITE_QPT_GSI))

/*
 * The send direction's one opcode table: for each send work request the
 * driver posts, the device's WQE opcode and the QP types (BIT(KITE_QPT_*))
 * that have it. An opcode with no entry (qp_types 0) is not supported.
 * The completion direction's table is kite_ib_wc_ops[] (kite_ib_cq.c).
 */
static const struct {
	u8 wqe_op;
	u8 qp_types;
} kite_ib_send_ops[] = {
	[IB_WR_SEND] = { KITE_WQE_OP_SEND, KITE_IB_QPT_ALL },
	[IB_WR_SEND_WITH_IMM] = { KITE_WQE_OP_SEND_IMM, KITE_IB_QPT_ALL },
	[IB_WR_SEND_WITH_INV] = { KITE_WQE_OP_SEND_INV, BIT(KITE_QPT_RC) },
	[IB_WR_RDMA_WRITE] = { KITE_WQE_OP_RDMA_WRITE, KITE_IB_QPT_CONN },
	[IB_WR_RDMA_WRITE_WITH_IMM] = { KITE_WQE_OP_RDMA_WRITE_IMM,
					KITE_IB_QPT_CONN },
	[IB_WR_RDMA_READ] = { KITE_WQE_OP_RDMA_READ, BIT(KITE_QPT_RC) },
	[IB_WR_ATOMIC_CMP_AND_SWP] = { KITE_WQE_OP_ATOMIC_CS, BIT(KITE_QPT_RC) },
	[IB_WR_ATOMIC_FETCH_AND_ADD] = { KITE_WQE_OP_ATOMIC_FA,
					 BIT(KITE_QPT_RC) },
	[IB_WR_LOCAL_INV] = { KITE_WQE_OP_LOCAL_INV, BIT(KITE_QPT_RC) },
	[IB_WR_REG_MR] = { KITE_WQE_OP_REG_MR, BIT(KITE_QPT_RC) },
};

/**
 * kite_ib_send_wqe_opcode() - the WQE opcode of a send work request
 * @opcode: the work request's opcode
 * @qp_type: the QP's KITE_QPT_* type
 *
 * Return: the KITE_WQE_OP_* for @opcode on a QP of type @qp_type, or
 * -EINVAL when the QP type does not have that operation (or Kite does not
 * have it at all).
 */
int kite_ib_send_wqe_opcode(enum ib_wr_opcode opcode, u32 qp_type)
{
	if ((unsigned int)opcode >= ARRAY_SIZE(kite_ib_send_ops) ||
	    qp_type >= BITS_PER_BYTE ||
	    !(kite_ib_send_ops[opcode].qp_types & BIT(qp_type)))
		return -EINVAL;
	return kite_ib_send_ops[opcode].wqe_op;
}

/* Write @num_sge SGEs at @seg; the caller checked that they fit. */
static void kite_ib_write_sges(struct kite_wqe_sge *seg,
			       const struct ib_sge *sg, int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		seg[i].length = cpu_to_le32(sg[i].length);
		seg[i].lkey = cpu_to_le32(sg[i].lkey);
		seg[i].addr = cpu_to_le64(sg[i].addr);
	}
}

/* The data of a send WQE at @off: SGEs, or inline data. */
static int kite_ib_send_data(void *wqe, size_t wqe_size, size_t off,
			     const struct ib_send_wr *wr, u32 max_inline,
			     bool inline_ok, u32 *opcode,
			     struct kite_wqe_ctrl *ctrl)
{
	size_t total = 0;
	u8 *dst;
	int i;

	if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
		return -EINVAL;

	if (!(wr->send_flags & IB_SEND_INLINE)) {
		if (wr->num_sge > KITE_MAX_SGE ||
		    (size_t)wr->num_sge > (wqe_size - off) / KITE_SEG_SIZE)
			return -EINVAL;
		kite_ib_write_sges(wqe + off, wr->sg_list, wr->num_sge);
		*opcode |= FIELD_PREP(KITE_WQE_NUM_SGE, wr->num_sge);
		return 0;
	}

	if (!inline_ok)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (total > max_inline || total > KITE_MAX_INLINE ||
		    total > wqe_size - off)
			return -EINVAL;
	}
	dst = wqe + off;
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
	*opcode |= KITE_WQE_F_INLINE;
	ctrl->inline_len = cpu_to_le16(total);
	return 0;
}

static int kite_ib_fill_send_wqe(void *wqe, size_t wqe_size,
				 const struct ib_send_wr *wr, u16 idx,
				 u32 qp_type, u32 max_inline, bool sig_all)
{
	struct kite_wqe_ctrl *ctrl = wqe;
	size_t off = sizeof(*ctrl);
	bool data = true, inline_ok = true;
	u32 opcode;
	int op, ret;

	op = kite_ib_send_wqe_opcode(wr->opcode, qp_type);
	if (op < 0)
		return op;
	opcode = FIELD_PREP(KITE_WQE_OPCODE, op);
	if ((wr->send_flags & IB_SEND_SIGNALED) || sig_all)
		opcode |= KITE_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		opcode |= KITE_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		opcode |= KITE_WQE_F_FENCE;
	ctrl->wqe_idx = cpu_to_le16(idx);

	switch (op) {
	case KITE_WQE_OP_SEND_IMM:
	case KITE_WQE_OP_RDMA_WRITE_IMM:
		ctrl->imm_data = wr->ex.imm_data;
		break;
	case KITE_WQE_OP_SEND_INV:
	case KITE_WQE_OP_LOCAL_INV:
		ctrl->inv_key = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	}

	switch (op) {
	case KITE_WQE_OP_SEND:
	case KITE_WQE_OP_SEND_IMM:
		if (qp_type == KITE_QPT_UD || qp_type == KITE_QPT_GSI) {
			const struct ib_ud_wr *ud = ud_wr(wr);
			struct kite_wqe_ud *av = wqe + off;

			if (!ud->ah || wqe_size < off + sizeof(*av))
				return -EINVAL;
			*av = to_kah(ud->ah)->av;
			av->remote_qpn = cpu_to_le32(ud->remote_qpn);
			av->qkey = cpu_to_le32(ud->remote_qkey);
			off += sizeof(*av);
		}
		break;
	case KITE_WQE_OP_RDMA_WRITE:
	case KITE_WQE_OP_RDMA_WRITE_IMM:
	case KITE_WQE_OP_RDMA_READ: {
		const struct ib_rdma_wr *rdma = rdma_wr(wr);
		struct kite_wqe_raddr *raddr = wqe + off;

		raddr->remote_addr = cpu_to_le64(rdma->remote_addr);
		raddr->rkey = cpu_to_le32(rdma->rkey);
		off += sizeof(*raddr);
		inline_ok = op != KITE_WQE_OP_RDMA_READ;
		break;
	}
	case KITE_WQE_OP_ATOMIC_CS:
	case KITE_WQE_OP_ATOMIC_FA: {
		const struct ib_atomic_wr *atomic = atomic_wr(wr);
		struct kite_wqe_raddr *raddr = wqe + off;
		struct kite_wqe_atomic *aseg = wqe + off + sizeof(*raddr);

		if (!IS_ALIGNED(atomic->remote_addr, 8) || wr->num_sge != 1 ||
		    !wr->sg_list || wr->sg_list[0].length != 8 ||
		    (wr->send_flags & IB_SEND_INLINE))
			return -EINVAL;
		raddr->remote_addr = cpu_to_le64(atomic->remote_addr);
		raddr->rkey = cpu_to_le32(atomic->rkey);
		if (op == KITE_WQE_OP_ATOMIC_CS) {
			aseg->swap_add = cpu_to_le64(atomic->swap);
			aseg->compare = cpu_to_le64(atomic->compare_add);
		} else {
			aseg->swap_add = cpu_to_le64(atomic->compare_add);
		}
		off += sizeof(*raddr) + sizeof(*aseg);
		inline_ok = false;
		break;
	}
	case KITE_WQE_OP_LOCAL_INV:
		data = false;
		break;
	case KITE_WQE_OP_REG_MR: {
		const struct ib_reg_wr *reg = reg_wr(wr);
		struct kite_wqe_reg_mr *seg = wqe + off;
		const struct kite_ib_mr *mr;

		if (!reg->mr || wqe_size < off + sizeof(*seg))
			return -EINVAL;
		mr = to_kmr(reg->mr);
		if (!is_power_of_2(mr->ibmr.page_size) || !mr->npages ||
		    mr->npages > mr->max_pages)
			return -EINVAL;
		seg->iova = cpu_to_le64(mr->ibmr.iova);
		seg->length = cpu_to_le64(mr->ibmr.length);
		seg->key = cpu_to_le32(reg->key);
		seg->access = cpu_to_le32(kite_ib_mr_access_to_hw(reg->access));
		seg->pbl_addr = cpu_to_le64(mr->frpl.dma);
		seg->npages = cpu_to_le32(mr->npages);
		seg->page_shift = cpu_to_le32(ilog2(mr->ibmr.page_size));
		data = false;
		break;
	}
	}

	if (data) {
		ret = kite_ib_send_data(wqe, wqe_size, off, wr, max_inline,
					inline_ok, &opcode, ctrl);
		if (ret)
			return ret;
	}
	ctrl->opcode = cpu_to_le32(opcode);
	return 0;
}

/**
 * kite_ib_build_send_wqe() - build a send WQE from a work request
 * @wqe: the WQE's slot in the SQ
 * @wqe_size: the SQ's stride in bytes (64 .. 1024)
 * @wr: the work request; only @wr itself is read, not @wr->next
 * @idx: the SQ producer counter of this WQE (stored modulo 2^16)
 * @qp_type: KITE_QPT_RC, KITE_QPT_UC, KITE_QPT_UD or KITE_QPT_GSI
 * @max_inline: the QP's inline data limit in bytes
 * @sig_all: the QP signals every WQE (IB_SIGNAL_ALL_WR)
 *
 * Writes the control segment, the segments @wr->opcode needs (remote
 * address, atomic, UD address vector from the AH with @wr's remote QPN and
 * Q_Key, fast registration) and the data: the SGEs, or with
 * IB_SEND_INLINE the bytes the SGEs point to, read through their
 * addresses as kernel virtual addresses. Bytes of the stride that no
 * segment uses are zeroed. No device access, no locks; any context.
 *
 * UD and GSI QPs accept IB_WR_SEND and IB_WR_SEND_WITH_IMM only (prm_qp.rst
 * lists LOCAL_INV and REG_MR for UD in the WQE table but not in the QP
 * types; the stricter rule is applied). UC QPs accept SEND and RDMA WRITE,
 * each with or without immediate data, and nothing else (no READ, atomics
 * or SEND with invalidate on UC; the local operations are kept for RC,
 * where the kernel's users of fast registration are). LOCAL_INV and
 * REG_MR carry no data:
 * @wr's SGEs and IB_SEND_INLINE are ignored for them.
 *
 * Context: any.
 * Return: 0; -EINVAL for an opcode the QP type does not allow or that
 * Kite does not have for the kernel (IB_WR_BIND_MW: kernel consumers have
 * no memory windows; user space binds its own), an atomic whose remote address is not 8-byte
 * aligned or that does not have exactly one SGE of 8 bytes, inline data
 * with RDMA READ or atomics, inline data longer than @max_inline,
 * KITE_MAX_INLINE or the stride, more SGEs than KITE_MAX_SGE or the
 * stride holds, a UD work request without an AH, or a REG_MR whose MR has
 * no mapped pages or a page size that is not a power of two, or a
 * @wqe_size below 64. On error after @wqe_size was checked, the stride is
 * left zeroed.
 */
int kite_ib_build_send_wqe(void *wqe, size_t wqe_size,
			   const struct ib_send_wr *wr, u16 idx, u32 qp_type,
			   u32 max_inline, bool sig_all)
{
	int ret;

	if (wqe_size < sizeof(struct kite_wqe_ctrl) + KITE_SEG_SIZE * 3)
		return -EINVAL;
	memset(wqe, 0, wqe_size);
	ret = kite_ib_fill_send_wqe(wqe, wqe_size, wr, idx, qp_type,
				    max_inline, sig_all);
	if (ret)
		memset(wqe, 0, wqe_size);
	return ret;
}

/**
 * kite_ib_build_recv_wqe() - build a receive WQE from a work request
 * @wqe: the WQE's slot in the RQ
 * @wqe_size: the RQ's stride in bytes (64 .. 1024)
 * @wr: the work request; only @wr itself is read, not @wr->next
 * @max_sge: the RQ's SGE limit (struct kite_ib_wq.max_sge)
 *
 * Writes the receive header and @wr's SGEs and zeroes the rest of the
 * stride.
 *
 * Context: any.
 * Return: 0, or -EINVAL if @wr has more SGEs than @max_sge, KITE_MAX_SGE
 * or the stride holds (the stride is then left untouched).
 */
int kite_ib_build_recv_wqe(void *wqe, size_t wqe_size,
			   const struct ib_recv_wr *wr, u32 max_sge)
{
	struct kite_wqe_recv *hdr = wqe;

	if (wqe_size < sizeof(*hdr) || wr->num_sge < 0 ||
	    (wr->num_sge && !wr->sg_list) || wr->num_sge > max_sge ||
	    wr->num_sge > KITE_MAX_SGE ||
	    wr->num_sge > (wqe_size - sizeof(*hdr)) / KITE_SEG_SIZE)
		return -EINVAL;

	memset(wqe, 0, wqe_size);
	hdr->num_sge = cpu_to_le32(wr->num_sge);
	kite_ib_write_sges(wqe + sizeof(*hdr), wr->sg_list, wr->num_sge);
	return 0;
}

/**
 * kite_ib_av_to_cmd() - translate a RoCEv2 address vector
 * @ah: the address: RoCE, with a GRH and a source GID attribute
 * @cmd: receives dgid, dmac, vlan, sgid_index, hop_limit, traffic_class,
 *	net_type and flow_label (the KITE_QP_ATTR_AV fields); address handles
 *	copy the same fields into their &struct kite_wqe_ud
 *
 * Return: 0, -EINVAL for an address the device cannot use, or the error
 * of rdma_read_gid_l2_fields().
 */
int kite_ib_av_to_cmd(const struct rdma_ah_attr *ah,
		      struct kite_cmd_modify_qp *cmd)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid;
	u16 vlan_id;
	int ret;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	sgid = grh->sgid_attr;
	if (!sgid)
		return -EINVAL;

	switch (rdma_gid_attr_network_type(sgid)) {
	case RDMA_NETWORK_IPV4:
		cmd->net_type = KITE_NET_ROCE_V2_IPV4;
		break;
	case RDMA_NETWORK_IPV6:
		cmd->net_type = KITE_NET_ROCE_V2_IPV6;
		break;
	default:	/* RoCE v1 and IB GIDs */
		return -EINVAL;
	}

	ret = rdma_read_gid_l2_fields(sgid, &vlan_id, NULL);
	if (ret)
		return ret;
	if (vlan_id < VLAN_N_VID)
		cmd->vlan = cpu_to_le16(KITE_VLAN_VALID |
					FIELD_PREP(KITE_VLAN_ID, vlan_id) |
					FIELD_PREP(KITE_VLAN_PCP,
						   rdma_ah_get_sl(ah)));

	memcpy(cmd->dgid, grh->dgid.raw, sizeof(cmd->dgid));
	cmd->sgid_index = grh->sgid_index;
	cmd->hop_limit = grh->hop_limit;
	cmd->traffic_class = grh->traffic_class;
	/* Wider values keep their low 20 bits, as rdma_rxe and mlx5 do. */
	cmd->flow_label = cpu_to_le32(grh->flow_label & KITE_FLOW_LABEL);
	/* rdma_ah_retrieve_dmac() without casting away const: type is ROCE */
	memcpy(cmd->dmac, ah->roce.dmac, sizeof(cmd->dmac));
	return 0;
}

/* The IB_QP_* attributes kite_ib_qp_attr_to_cmd() translates. */
#define KITE_IB_QP_ATTR_SUPPORTED					\
	(IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS |		\
	 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY | IB_QP_AV |	\
	 IB_QP_PATH_MTU | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |		\
	 IB_QP_RNR_RETRY | IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |	\
	 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN |				\
	 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN)

static bool kite_ib_qps_valid(enum ib_qp_state state)
{
	return (unsigned int)state <= IB_QPS_ERR;
}

/**
 * kite_ib_qp_attr_to_cmd() - translate modify_qp attributes to MODIFY_QP
 * @attr: the attributes
 * @attr_mask: IB_QP_* bits naming the attributes of @attr to apply
 * @cmd: the command to fill; every field but @cmd->qpn is overwritten
 *
 * Sets the KITE_QP_ATTR_* bit of every attribute in @attr_mask and the
 * attribute's value in device format, little-endian; fields of attributes
 * not in @attr_mask are zero. IB QP states and path MTUs are numbered as
 * the device numbers them. The address vector (IB_QP_AV) must be a RoCEv2
 * path with a GRH and a source GID attribute; the VLAN tag comes from the
 * source GID's net device (rdma_read_gid_l2_fields()) and its priority
 * from the AH's service level. Which attributes a transition requires or
 * allows is left to the device, which enforces the table of prm_qp.rst.
 *
 * Context: any (the GID's net device is read under RCU).
 * Return: 0; -EOPNOTSUPP for IB_QP_* bits Kite does not have (alternate
 * path, path migration, capabilities, rate limit, SQD async notification,
 * ...); -EINVAL for an unknown QP state, a port above 255, PSNs or a
 * destination QPN that do not fit in 24 bits, a flow label above 20 bits,
 * or an address vector that is not RoCEv2 with a GRH; the error of
 * rdma_read_gid_l2_fields() if the source GID has no net device.
 */
int kite_ib_qp_attr_to_cmd(const struct ib_qp_attr *attr, int attr_mask,
			   struct kite_cmd_modify_qp *cmd)
{
	__le32 qpn = cmd->qpn;
	u32 mask = 0;
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	cmd->qpn = qpn;

	if (attr_mask & ~KITE_IB_QP_ATTR_SUPPORTED)
		return -EOPNOTSUPP;

	if (attr_mask & IB_QP_STATE) {
		if (!kite_ib_qps_valid(attr->qp_state))
			return -EINVAL;
		cmd->state = attr->qp_state;
		mask |= KITE_QP_ATTR_STATE;
	}
	if (attr_mask & IB_QP_CUR_STATE) {
		if (!kite_ib_qps_valid(attr->cur_qp_state))
			return -EINVAL;
		cmd->cur_state = attr->cur_qp_state;
		mask |= KITE_QP_ATTR_CUR_STATE;
	}
	if (attr_mask & IB_QP_ACCESS_FLAGS) {
		cmd->access =
			cpu_to_le32(kite_ib_access_to_hw(attr->qp_access_flags));
		mask |= KITE_QP_ATTR_ACCESS;
	}
	if (attr_mask & IB_QP_PKEY_INDEX) {
		cmd->pkey_index = cpu_to_le16(attr->pkey_index);
		mask |= KITE_QP_ATTR_PKEY_INDEX;
	}
	if (attr_mask & IB_QP_PORT) {
		if (attr->port_num > U8_MAX)
			return -EINVAL;
		cmd->port = attr->port_num;
		mask |= KITE_QP_ATTR_PORT;
	}
	if (attr_mask & IB_QP_QKEY) {
		cmd->qkey = cpu_to_le32(attr->qkey);
		mask |= KITE_QP_ATTR_QKEY;
	}
	if (attr_mask & IB_QP_AV) {
		ret = kite_ib_av_to_cmd(&attr->ah_attr, cmd);
		if (ret)
			return ret;
		mask |= KITE_QP_ATTR_AV;
	}
	if (attr_mask & IB_QP_PATH_MTU) {
		cmd->path_mtu = attr->path_mtu;
		mask |= KITE_QP_ATTR_PATH_MTU;
	}
	if (attr_mask & IB_QP_TIMEOUT) {
		cmd->timeout = attr->timeout;
		mask |= KITE_QP_ATTR_TIMEOUT;
	}
	if (attr_mask & IB_QP_RETRY_CNT) {
		cmd->retry_cnt = attr->retry_cnt;
		mask |= KITE_QP_ATTR_RETRY_CNT;
	}
	if (attr_mask & IB_QP_RNR_RETRY) {
		cmd->rnr_retry = attr->rnr_retry;
		mask |= KITE_QP_ATTR_RNR_RETRY;
	}
	if (attr_mask & IB_QP_RQ_PSN) {
		if (attr->rq_psn & ~KITE_PSN_MASK)
			return -EINVAL;
		cmd->rq_psn = cpu_to_le32(attr->rq_psn);
		mask |= KITE_QP_ATTR_RQ_PSN;
	}
	if (attr_mask & IB_QP_SQ_PSN) {
		if (attr->sq_psn & ~KITE_PSN_MASK)
			return -EINVAL;
		cmd->sq_psn = cpu_to_le32(attr->sq_psn);
		mask |= KITE_QP_ATTR_SQ_PSN;
	}
	if (attr_mask & IB_QP_MAX_QP_RD_ATOMIC) {
		cmd->max_rd_atomic = attr->max_rd_atomic;
		mask |= KITE_QP_ATTR_MAX_QP_RD_ATOMIC;
	}
	if (attr_mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		cmd->max_dest_rd_atomic = attr->max_dest_rd_atomic;
		mask |= KITE_QP_ATTR_MAX_DEST_RD_ATOMIC;
	}
	if (attr_mask & IB_QP_MIN_RNR_TIMER) {
		cmd->min_rnr_timer = attr->min_rnr_timer;
		mask |= KITE_QP_ATTR_MIN_RNR_TIMER;
	}
	if (attr_mask & IB_QP_DEST_QPN) {
		if (attr->dest_qp_num & ~KITE_OBJ_MASK)
			return -EINVAL;
		cmd->dest_qpn = cpu_to_le32(attr->dest_qp_num);
		mask |= KITE_QP_ATTR_DEST_QPN;
	}
	cmd->mask = cpu_to_le32(mask);
	return 0;
}
