// SPDX-License-Identifier: GPL-2.0-only
/* Probe: devl_param_driverinit_value_set() takes the value by pointer (7.x). */
#include <linux/module.h>
#include <net/devlink.h>

void kite_probe(struct devlink *devlink, union devlink_param_value *val);
void kite_probe(struct devlink *devlink, union devlink_param_value *val)
{
	devl_param_driverinit_value_set(devlink, 0, val);
}
MODULE_LICENSE("GPL");
