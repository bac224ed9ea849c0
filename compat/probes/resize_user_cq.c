// SPDX-License-Identifier: GPL-2.0-only
/* Probe: ib_device_ops.resize_user_cq, for user CQs only (Linux 7.x). */
#include <linux/module.h>
#include <rdma/ib_verbs.h>

static int kite_probe_resize(struct ib_cq *cq, unsigned int cqe,
			     struct ib_udata *udata)
{
	return 0;
}

const struct ib_device_ops kite_probe_ops = {
	.resize_user_cq = kite_probe_resize,
};
MODULE_LICENSE("GPL");
