// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: QP-bound counters (rdma statistic qp).
 *
 * A bound counter is one of the device's QP counter sets: allocated when
 * the first QP is bound to it, freed with the counter. A bound QP counts
 * in its counter's set instead of the default set 0, whose counters are
 * the port's QP counters; the core adds every counter, running or freed,
 * to its port's values, so the port's totals stay whole. What a QP counted
 * before it was bound stays in set 0, what it counted while bound stays in
 * the counter.
 *
 * Copyright (c) 2026 Kite
 */
#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

#include "kite_ib.h"

/*
 * The core allocates counters at the driver's size; a Kite counter is the
 * core's struct alone (the device keeps the counts, counter->id names the
 * set).
 */
struct kite_ib_counter {
	struct rdma_counter rdma;
};

static void kite_ib_counter_init(struct rdma_counter *counter)
{
	/* Nothing beyond the core's struct, which the core initialises. */
}

static struct rdma_hw_stats *
kite_ib_counter_alloc_stats(struct rdma_counter *counter)
{
	struct rdma_hw_stats *stats = kite_ib_alloc_stats();
	unsigned int i;

	if (!stats)
		return NULL;
	/* A counter holds the QP counters of its set, nothing else. */
	for (i = 0; i < KITE_IB_STAT_QP; i++)
		set_bit(i, stats->is_disabled);
	return stats;
}

static int kite_ib_counter_bind_qp(struct rdma_counter *counter,
				   struct ib_qp *ibqp, u32 port)
{
	struct kite_ib_dev *dev = to_kdev(counter->device);
	u32 cntr = counter->id;
	int err;

	if (!cntr) {
		err = kite_ib_cntr_alloc(dev, &cntr);
		if (err)
			return err;
	}
	err = kite_ib_cntr_set_qp(dev, to_kqp(ibqp)->qpn, cntr);
	if (err)
		goto err_free_cntr;
	counter->id = cntr;
	ibqp->counter = counter;
	return 0;

err_free_cntr:
	if (!counter->id)
		kite_ib_cntr_free(dev, cntr);
	return err;
}

static int kite_ib_counter_unbind_qp(struct ib_qp *ibqp, u32 port)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	int err;

	err = kite_ib_cntr_set_qp(dev, to_kqp(ibqp)->qpn, 0);
	/* A dead device's QPs count nowhere any more. */
	if (err && !kite_ib_dead(dev))
		return err;
	ibqp->counter = NULL;
	return 0;
}

static int kite_ib_counter_dealloc(struct rdma_counter *counter)
{
	if (!counter->id)
		return 0;
	return kite_ib_cntr_free(to_kdev(counter->device), counter->id);
}

static int kite_ib_counter_update_stats(struct rdma_counter *counter)
{
	return kite_ib_cntr_query(to_kdev(counter->device), counter->id,
				  &counter->stats->value[KITE_IB_STAT_QP]);
}

static const struct ib_device_ops kite_ib_counter_ops = {
	.counter_alloc_stats = kite_ib_counter_alloc_stats,
	.counter_bind_qp = kite_ib_counter_bind_qp,
	.counter_dealloc = kite_ib_counter_dealloc,
	.counter_init = kite_ib_counter_init,
	.counter_unbind_qp = kite_ib_counter_unbind_qp,
	.counter_update_stats = kite_ib_counter_update_stats,

	INIT_RDMA_OBJ_SIZE(rdma_counter, kite_ib_counter, rdma),
};

/**
 * kite_ib_set_counter_ops() - add the QP-bound counter ops to a device
 * @dev: the device, before registration; it has QP counter sets
 */
void kite_ib_set_counter_ops(struct kite_ib_dev *dev)
{
	ib_set_device_ops(&dev->ibdev, &kite_ib_counter_ops);
}
