// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: devlink_health_reporter_create() takes no graceful period; it is
 * in the reporter's ops (7.x).
 */
#include <linux/module.h>
#include <net/devlink.h>

struct devlink_health_reporter *
kite_probe(struct devlink *devlink,
	   const struct devlink_health_reporter_ops *ops);
struct devlink_health_reporter *
kite_probe(struct devlink *devlink,
	   const struct devlink_health_reporter_ops *ops)
{
	return devlink_health_reporter_create(devlink, ops, NULL);
}
MODULE_LICENSE("GPL");
