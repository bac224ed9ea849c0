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
	/* The QPs' counters: a port's counter set 0, a bound counter's set. */
	[KITE_IB_STAT_QP + KITE_QP_STAT_TX_PKTS] = { .name = "qp_tx_pkts" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_TX_BYTES] = { .name = "qp_tx_bytes" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_RX_PKTS] = { .name = "qp_rx_pkts" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_RX_BYTES] = { .name = "qp_rx_bytes" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_RX_DROPS] = { .name = "qp_rx_drops" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_RETRIES] = { .name = "qp_retries" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_ACK_TIMEOUTS] = { .name = "qp_ack_timeouts" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_SEQ_NAKS_RCVD] = { .name = "qp_seq_naks_rcvd" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_RNR_NAKS_RCVD] = { .name = "qp_rnr_naks_rcvd" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_SEQ_NAKS_SENT] = { .name = "qp_seq_naks_sent" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_RNR_NAKS_SENT] = { .name = "qp_rnr_naks_sent" },
	[KITE_IB_STAT_QP + KITE_QP_STAT_DUP_REQUESTS] = { .name = "qp_dup_requests" },
};

static_assert(ARRAY_SIZE(kite_ib_stat_descs) == KITE_IB_STAT_COUNT);

/**
 * kite_ib_alloc_stats() - allocate a counter array of the device's layout
 *
 * The core adds a bound counter's values to its port's, index by index
 * (rdma_counter_get_hwstat_value()), so every counter array of a device
 * has the port's layout. The caller hides what it does not fill.
 *
 * Return: the array, or NULL.
 */
struct rdma_hw_stats *kite_ib_alloc_stats(void)
{
	return rdma_alloc_hw_stats_struct(kite_ib_stat_descs,
					  ARRAY_SIZE(kite_ib_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static struct rdma_hw_stats *kite_ib_alloc_hw_port_stats(struct ib_device *ibdev,
							 u32 port)
{
	return kite_ib_alloc_stats();
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
			ibdev_err_ratelimited(ibdev,
					      "QUERY_STATS reports %u counters, at most %u exist\n",
					      cmd.result, KITE_STAT_COUNT);
	}
	dma_free_coherent(dev->dmadev, len, out, cmd.out_dma);
	if (ret >= 0 && dev->caps.max_cntr)
		ret = kite_ib_cntr_query(dev, 0, &stats->value[KITE_IB_STAT_QP]);
	/*
	 * A device that does not answer leaves the last values read in
	 * place, as bnxt_re does: a monitoring tool keeps working through a
	 * device reset, and ib_register_device() does not fail on a
	 * counter read (its hw_counters set-up also leaks on that path).
	 */
	if (ret < 0)
		ibdev_warn_ratelimited(ibdev,
				       "counters not read from the device (%pe), the last values stand\n",
				       ERR_PTR(ret));
	return KITE_IB_STAT_COUNT;
}

/**
 * kite_ib_cntr_query() - read a QP counter set
 * @dev: the device
 * @cntr: the set, 0 for the default one
 * @value: KITE_QP_STAT_COUNT counters; those the device does not report
 *	are left as they were
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_cntr_query(struct kite_ib_dev *dev, u32 cntr, u64 *value)
{
	struct kite_cmd_obj in = { .obj = cpu_to_le32(cntr) };
	__le64 out[KITE_QP_STAT_COUNT] = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_CNTR,
		.in = &in,
		.in_len = sizeof(in),
		.out = out,
		.out_len = sizeof(out),
	};
	u32 i;
	int err;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	/* kite_ib_cmd_result_ok() bounded the count by out_len. */
	for (i = 0; i < cmd.result; i++)
		value[i] = le64_to_cpu(out[i]);
	return 0;
}

/**
 * kite_ib_cntr_alloc() - allocate a QP counter set, its counters zero
 * @dev: the device
 * @cntr: the new set's number
 *
 * Return: 0, -ENOSPC when the device has no set left, or a negative errno.
 */
int kite_ib_cntr_alloc(struct kite_ib_dev *dev, u32 *cntr)
{
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_ALLOC_CNTR };
	int err;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err == -ENOMEM ? -ENOSPC : err;
	*cntr = cmd.result;
	return 0;
}

/**
 * kite_ib_cntr_free() - free a QP counter set no QP counts in any more
 * @dev: the device
 * @cntr: the set
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_cntr_free(struct kite_ib_dev *dev, u32 cntr)
{
	return kite_ib_cmd_destroy(dev, KITE_CMD_DEALLOC_CNTR, cntr);
}

/**
 * kite_ib_cntr_set_qp() - make a QP count in another counter set
 * @dev: the device
 * @qpn: the QP
 * @cntr: the set, 0 for the default one
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_cntr_set_qp(struct kite_ib_dev *dev, u32 qpn, u32 cntr)
{
	struct kite_cmd_set_qp_cntr in = {
		.qpn = cpu_to_le32(qpn),
		.cntr = cpu_to_le32(cntr),
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_SET_QP_CNTR,
		.in = &in,
		.in_len = sizeof(in),
	};

	return kite_ib_cmd_exec(dev, &cmd);
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
