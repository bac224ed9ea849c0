// SPDX-License-Identifier: GPL-2.0-only
/* Probe: ib_dispatch_port_state_event() (Linux 6.13+). */
#include <linux/module.h>
#include <rdma/ib_verbs.h>

void kite_probe(struct ib_device *ibdev, struct net_device *ndev);
void kite_probe(struct ib_device *ibdev, struct net_device *ndev)
{
	ib_dispatch_port_state_event(ibdev, ndev);
}
MODULE_LICENSE("GPL");
