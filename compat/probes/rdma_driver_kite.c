// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: enum rdma_driver_id names Kite (the upstream form of the series
 * adds RDMA_DRIVER_KITE after RDMA_DRIVER_IONIC).
 */
#include <linux/module.h>
#include <rdma/ib_user_ioctl_verbs.h>

unsigned int kite_probe(void);
unsigned int kite_probe(void)
{
	return RDMA_DRIVER_KITE;
}
MODULE_LICENSE("GPL");
