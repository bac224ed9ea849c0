// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: driver-sized counter objects (size_rdma_counter, counter_init) and
 * counter_bind_qp with a port (Linux 7.x).
 */
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

struct kite_probe_counter {
	struct rdma_counter rdma;
};

static void kite_probe_init(struct rdma_counter *counter)
{
}

static int kite_probe_bind(struct rdma_counter *counter, struct ib_qp *qp,
			   u32 port)
{
	return 0;
}

const struct ib_device_ops kite_probe_ops = {
	.counter_bind_qp = kite_probe_bind,
	.counter_init = kite_probe_init,
	INIT_RDMA_OBJ_SIZE(rdma_counter, kite_probe_counter, rdma),
};
MODULE_LICENSE("GPL");
