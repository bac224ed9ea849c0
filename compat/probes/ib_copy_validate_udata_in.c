// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: the core's driver udata helpers, ib_copy_validate_udata_in() and
 * ib_respond_udata() (Linux 7.x).
 */
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

struct kite_probe_req {
	u32 comp_mask;
	u32 reserved;
};

static int kite_probe_udata(struct ib_udata *udata)
{
	struct kite_probe_req req;
	int err = ib_copy_validate_udata_in(udata, req, reserved);

	return err ?: ib_respond_udata(udata, req);
}

int (*kite_probe_fn)(struct ib_udata *udata) = kite_probe_udata;
MODULE_LICENSE("GPL");
