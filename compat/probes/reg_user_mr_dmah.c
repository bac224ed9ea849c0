// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: ib_device_ops.reg_user_mr and reg_user_mr_dmabuf take a struct
 * ib_dmah (Linux 6.17+, one change for both).
 */
#include <linux/module.h>
#include <rdma/ib_verbs.h>

static struct ib_mr *kite_probe_reg(struct ib_pd *pd, u64 start, u64 length,
				    u64 iova, int access, struct ib_dmah *dmah,
				    struct ib_udata *udata)
{
	return NULL;
}

static struct ib_mr *kite_probe_reg_dmabuf(struct ib_pd *pd, u64 offset,
					   u64 length, u64 iova, int fd,
					   int access, struct ib_dmah *dmah,
					   struct uverbs_attr_bundle *attrs)
{
	return NULL;
}

const struct ib_device_ops kite_probe_ops = {
	.reg_user_mr = kite_probe_reg,
	.reg_user_mr_dmabuf = kite_probe_reg_dmabuf,
};
MODULE_LICENSE("GPL");
