// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: what the RDMA netlink tools show beyond the
 * core's own fields: hardware counters (rdma statistic) from QUERY_STATS,
 * and restrack driver details (rdma res show ... -d) and raw device
 * contexts (rdma res show ... -r) of CQs, QPs and MRs.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "kite_ib.h"

/* ------------------------------------------------------------------ */
/* Hardware counters                                                   */
/* ------------------------------------------------------------------ */

/* Indexed by KITE_STAT_*: the counter's position in QUERY_STATS output. */
static const struct rdma_stat_desc kite_ib_stat_descs[] = {
	[KITE_STAT_TX_FRAMES] = { .name = "tx_frames" },
	[KITE_STAT_TX_BYTES] = { .name = "tx_bytes" },
	[KITE_STAT_RX_FRAMES] = { .name = "rx_frames" },
	[KITE_STAT_RX_BYTES] = { .name = "rx_bytes" },
	[KITE_STAT_RX_DROPS] = { .name = "rx_drops" },
	[KITE_STAT_ROCE_TX_PKTS] = { .name = "roce_tx_pkts" },
	[KITE_STAT_ROCE_RX_PKTS] = { .name = "roce_rx_pkts" },
	[KITE_STAT_ROCE_RX_DROPS] = { .name = "roce_rx_drops" },
	[KITE_STAT_CMDS] = { .name = "fw_cmds" },
	[KITE_STAT_CMD_ERRORS] = { .name = "fw_cmd_errors" },
	[KITE_STAT_BAD_DOORBELLS] = { .name = "bad_doorbells" },
	[KITE_STAT_EQES] = { .name = "eqes" },
	[KITE_STAT_EQ_OVERFLOWS] = { .name = "eq_overflows" },
	[KITE_STAT_CQES] = { .name = "cqes" },
	[KITE_STAT_CQ_OVERFLOWS] = { .name = "cq_overflows" },
	[KITE_STAT_DMA_ERRORS] = { .name = "dma_errors" },
	/* The driver's own: bad device data seen (kite_ib_guard.c). */
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_CQN] = { .name = "drv_bad_cqe_cqn" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_QPN] = { .name = "drv_bad_cqe_qpn" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_WQE_IDX] = { .name = "drv_bad_cqe_wqe_idx" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_OPCODE] = { .name = "drv_bad_cqe_opcode" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_LEN] = { .name = "drv_bad_cqe_len" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_OWNER] = { .name = "drv_bad_cqe_owner" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CQE_SYNDROME] = { .name = "drv_bad_cqe_syndrome" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_EQE_TYPE] = { .name = "drv_bad_eqe_type" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_EQE_OBJ] = { .name = "drv_bad_eqe_obj" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CMD_COOKIE] = { .name = "drv_bad_cmd_cookie" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CMD_STATUS] = { .name = "drv_bad_cmd_status" },
	[KITE_IB_STAT_BAD + KITE_IB_BAD_CMD_RESULT] = { .name = "drv_bad_cmd_result" },
	[KITE_IB_STAT_QPS_ISOLATED] = { .name = "drv_qps_isolated" },
	[KITE_IB_STAT_CQS_ISOLATED] = { .name = "drv_cqs_isolated" },
};

static_assert(ARRAY_SIZE(kite_ib_stat_descs) == KITE_IB_STAT_COUNT);

static struct rdma_hw_stats *kite_ib_alloc_hw_port_stats(struct ib_device *ibdev,
							 u32 port)
{
	return rdma_alloc_hw_stats_struct(kite_ib_stat_descs,
					  ARRAY_SIZE(kite_ib_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * kite_ib_stats_fill() - copy QUERY_STATS output into a counter array
 * @out: the device's counters, little endian
 * @count: how many the device says it wrote (the command's result)
 * @value: the counter array, KITE_STAT_COUNT entries
 *
 * Never trust the device: a count beyond KITE_STAT_COUNT is refused.
 *
 * Return: the number of counters filled, or -EIO.
 */
int kite_ib_stats_fill(const __le64 *out, u32 count, u64 *value)
{
	u32 i;

	if (count > KITE_STAT_COUNT)
		return -EIO;
	for (i = 0; i < count; i++)
		value[i] = le64_to_cpu(out[i]);
	return count;
}

static int kite_ib_get_hw_stats(struct ib_device *ibdev,
				struct rdma_hw_stats *stats, u32 port,
				int index)
{
	struct kite_ib_dev *dev = to_kdev(ibdev);
	size_t len = KITE_STAT_COUNT * sizeof(__le64);
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_STATS,
		.out_len = len,
	};
	__le64 *out;
	int ret, i;

	if (stats->num_counters != KITE_IB_STAT_COUNT)
		return -EINVAL;
	/* The driver's counters, even when the device does not answer. */
	for (i = 0; i < KITE_IB_BAD_COUNT; i++)
		stats->value[KITE_IB_STAT_BAD + i] = atomic64_read(&dev->bad[i]);
	stats->value[KITE_IB_STAT_QPS_ISOLATED] =
		atomic64_read(&dev->qps_isolated);
	stats->value[KITE_IB_STAT_CQS_ISOLATED] =
		atomic64_read(&dev->cqs_isolated);
	out = dma_alloc_coherent(dev->dmadev, len, &cmd.out_dma, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	ret = kite_ib_cmd_exec(dev, &cmd);
	if (!ret) {
		ret = kite_ib_stats_fill(out, cmd.result, stats->value);
		if (ret < 0)
			dev_err_ratelimited(&ibdev->dev,
					    "QUERY_STATS reports %u counters, at most %u exist\n",
					    cmd.result, KITE_STAT_COUNT);
	}
	dma_free_coherent(dev->dmadev, len, out, cmd.out_dma);
	return ret < 0 ? ret : KITE_IB_STAT_COUNT;
}

/* ------------------------------------------------------------------ */
/* Restrack                                                            */
/* ------------------------------------------------------------------ */

/*
 * The device's own context of object @obj (QUERY_CQ or QUERY_QP output,
 * @len bytes) as the restrack raw attribute.
 */
static int kite_ib_put_raw(struct sk_buff *msg, struct kite_ib_dev *dev,
			   u8 opcode, u32 obj, u16 len)
{
	union {
		struct kite_cmd_query_cq_out cq;
		struct kite_cmd_modify_qp qp;
	} out = {};
	struct kite_cmd_obj in = { .obj = cpu_to_le32(obj) };
	struct kite_ib_cmd cmd = {
		.opcode = opcode,
		.in = &in,
		.in_len = sizeof(in),
		.out = &out,
		.out_len = len,
	};
	int err;

	if (WARN_ON_ONCE(len > sizeof(out)))
		return -EINVAL;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, len, &out);
}

static int kite_ib_put_pbl(struct sk_buff *msg, const char *prefix,
			   const struct kite_ib_pbl *pbl)
{
	char name[32];

	snprintf(name, sizeof(name), "%spbl_level", prefix);
	if (rdma_nl_put_driver_u32(msg, name, pbl->level))
		return -EMSGSIZE;
	snprintf(name, sizeof(name), "%spages", prefix);
	if (rdma_nl_put_driver_u32(msg, name, pbl->npages))
		return -EMSGSIZE;
	snprintf(name, sizeof(name), "%spage_size", prefix);
	if (rdma_nl_put_driver_u32_hex(msg, name, BIT(pbl->page_shift)))
		return -EMSGSIZE;
	return 0;
}

static int kite_ib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct kite_ib_cq *cq = to_kcq(ibcq);
	struct nlattr *table;

	int err = -EMSGSIZE;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	/* A user CQ's ring changes on resize. */
	mutex_lock(&cq->resize_mutex);
	if (rdma_nl_put_driver_u32(msg, "cqn", cq->cqn) ||
	    rdma_nl_put_driver_u32(msg, "eqn", cq->eq->eqn) ||
	    rdma_nl_put_driver_u32(msg, "depth", cq->hwq.depth) ||
	    (cq->dbrec && rdma_nl_put_driver_u32(msg, "ci", cq->ci)) ||
	    (cq->dbrec && rdma_nl_put_driver_u32(msg, "arm_sn", cq->arm_sn)) ||
	    kite_ib_put_pbl(msg, "", &cq->hwq.pbl))
		goto out_unlock;
	err = 0;
out_unlock:
	mutex_unlock(&cq->resize_mutex);
	if (err)
		nla_nest_cancel(msg, table);
	else
		nla_nest_end(msg, table);
	return err;
}

static int kite_ib_fill_res_cq_entry_raw(struct sk_buff *msg,
					 struct ib_cq *ibcq)
{
	return kite_ib_put_raw(msg, to_kdev(ibcq->device), KITE_CMD_QUERY_CQ,
			       to_kcq(ibcq)->cqn,
			       sizeof(struct kite_cmd_query_cq_out));
}

static int kite_ib_put_wq(struct sk_buff *msg, const char *prefix,
			  const struct kite_ib_wq *wq)
{
	char name[32];

	snprintf(name, sizeof(name), "%sdepth", prefix);
	if (rdma_nl_put_driver_u32(msg, name, wq->hwq.depth))
		return -EMSGSIZE;
	snprintf(name, sizeof(name), "%swqe_size", prefix);
	if (rdma_nl_put_driver_u32(msg, name, BIT(wq->hwq.entry_shift)))
		return -EMSGSIZE;
	snprintf(name, sizeof(name), "%smax_sge", prefix);
	if (rdma_nl_put_driver_u32(msg, name, wq->max_sge))
		return -EMSGSIZE;
	if (wq->wr_id) {
		snprintf(name, sizeof(name), "%spi", prefix);
		if (rdma_nl_put_driver_u32(msg, name, READ_ONCE(wq->pi)))
			return -EMSGSIZE;
		snprintf(name, sizeof(name), "%sci", prefix);
		if (rdma_nl_put_driver_u32(msg, name, READ_ONCE(wq->ci)))
			return -EMSGSIZE;
	}
	return kite_ib_put_pbl(msg, prefix, &wq->hwq.pbl);
}

static int kite_ib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct nlattr *table;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "max_inline", qp->max_inline) ||
	    rdma_nl_put_driver_u32(msg, "uctx", qp->uctx) ||
	    kite_ib_put_wq(msg, "sq_", &qp->sq) ||
	    kite_ib_put_wq(msg, "rq_", &qp->rq))
		goto err_cancel;
	nla_nest_end(msg, table);
	return 0;

err_cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

static int kite_ib_fill_res_qp_entry_raw(struct sk_buff *msg,
					 struct ib_qp *ibqp)
{
	return kite_ib_put_raw(msg, to_kdev(ibqp->device), KITE_CMD_QUERY_QP,
			       to_kqp(ibqp)->qpn, sizeof(struct kite_cmd_modify_qp));
}

static int kite_ib_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct kite_ib_mr *mr = to_kmr(ibmr);
	struct nlattr *table;

	/* DMA MRs have no page list. */
	if (!mr->umem && !mr->max_pages)
		return 0;
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (mr->umem) {
		if (kite_ib_put_pbl(msg, "", &mr->pbl))
			goto err_cancel;
	} else if (rdma_nl_put_driver_u32(msg, "max_pages", mr->max_pages) ||
		   rdma_nl_put_driver_u32(msg, "mapped_pages", mr->npages)) {
		goto err_cancel;
	}
	nla_nest_end(msg, table);
	return 0;

err_cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

static const struct ib_device_ops kite_ib_res_ops = {
	.alloc_hw_port_stats = kite_ib_alloc_hw_port_stats,
	.get_hw_stats = kite_ib_get_hw_stats,
	.fill_res_cq_entry = kite_ib_fill_res_cq_entry,
	.fill_res_cq_entry_raw = kite_ib_fill_res_cq_entry_raw,
	.fill_res_mr_entry = kite_ib_fill_res_mr_entry,
	.fill_res_qp_entry = kite_ib_fill_res_qp_entry,
	.fill_res_qp_entry_raw = kite_ib_fill_res_qp_entry_raw,
};

/**
 * kite_ib_set_res_ops() - add the counter and restrack ops to a device
 * @dev: the device, before registration
 */
void kite_ib_set_res_ops(struct kite_ib_dev *dev)
{
	ib_set_device_ops(&dev->ibdev, &kite_ib_res_ops);
}
