// SPDX-License-Identifier: GPL-2.0-only
/* Probe: ib_umem_get_va() exists (it replaced ib_umem_get()). */
#include <linux/module.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

struct ib_umem *kite_probe(struct ib_device *dev);
struct ib_umem *kite_probe(struct ib_device *dev)
{
	return ib_umem_get_va(dev, 0, 4096, IB_ACCESS_LOCAL_WRITE);
}
MODULE_LICENSE("GPL");
