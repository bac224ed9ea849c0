// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: devlink instance, device
 * information and the enable_roce parameter.
 *
 * enable_roce is a driverinit parameter: it takes effect at
 * "devlink dev reload", which removes the RDMA auxiliary device and
 * creates it again if RoCE is enabled.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/pci.h>
#include <net/devlink.h>

#include "kite_en.h"

static int kite_en_info_get(struct devlink *devlink,
			    struct devlink_info_req *req,
			    struct netlink_ext_ack *extack)
{
	struct kite_en_dev *en = devlink_priv(devlink);
	char buf[32];
	int err;

	snprintf(buf, sizeof(buf), "%016llx", en->serial);
	err = devlink_info_serial_number_put(req, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%lu.%lu",
		 FIELD_GET(KITE_HW_REV_MAJOR, en->hw_rev),
		 FIELD_GET(KITE_HW_REV_MINOR, en->hw_rev));
	err = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_REV,
					     buf);
	if (err)
		return err;
	return devlink_info_version_running_put(req,
						DEVLINK_INFO_VERSION_GENERIC_FW,
						en->fw_version);
}

static int kite_en_reload_down(struct devlink *devlink, bool netns_change,
			       enum devlink_reload_action action,
			       enum devlink_reload_limit limit,
			       struct netlink_ext_ack *extack)
{
	struct kite_en_dev *en = devlink_priv(devlink);

	if (netns_change) {
		NL_SET_ERR_MSG_MOD(extack, "namespace change is not supported");
		return -EOPNOTSUPP;
	}
	mutex_lock(&en->rdma_lock);
	kite_en_rdma_del(en);
	mutex_unlock(&en->rdma_lock);
	return 0;
}

static int kite_en_reload_up(struct devlink *devlink,
			     enum devlink_reload_action action,
			     enum devlink_reload_limit limit,
			     u32 *actions_performed,
			     struct netlink_ext_ack *extack)
{
	struct kite_en_dev *en = devlink_priv(devlink);
	union devlink_param_value val;
	int err;

	*actions_performed = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT);
	err = devl_param_driverinit_value_get(devlink,
					      DEVLINK_PARAM_GENERIC_ID_ENABLE_ROCE,
					      &val);
	if (err)
		return err;
	mutex_lock(&en->rdma_lock);
	en->roce_enabled = val.vbool;
	err = en->roce_enabled ? kite_en_rdma_add(en) : 0;
	mutex_unlock(&en->rdma_lock);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "cannot create the RDMA device");
	return err;
}

static const struct devlink_ops kite_en_devlink_ops = {
	.info_get = kite_en_info_get,
	.reload_actions = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT),
	.reload_down = kite_en_reload_down,
	.reload_up = kite_en_reload_up,
};

static const struct devlink_param kite_en_devlink_params[] = {
	DEVLINK_PARAM_GENERIC(ENABLE_ROCE, BIT(DEVLINK_PARAM_CMODE_DRIVERINIT),
			      NULL, NULL, NULL),
};

/**
 * kite_en_devlink_alloc() - allocate the devlink instance and the device
 * @dev: the PCI function's device
 *
 * Return: the device structure, the devlink instance's private data, or
 * NULL.
 */
struct kite_en_dev *kite_en_devlink_alloc(struct device *dev)
{
	struct devlink *devlink;
	struct kite_en_dev *en;

	devlink = devlink_alloc(&kite_en_devlink_ops, sizeof(*en), dev);
	if (!devlink)
		return NULL;
	en = devlink_priv(devlink);
	en->devlink = devlink;
	return en;
}

/**
 * kite_en_devlink_free() - free the devlink instance and the device
 * @en: the device
 */
void kite_en_devlink_free(struct kite_en_dev *en)
{
	devlink_free(en->devlink);
}

/**
 * kite_en_devlink_register() - register parameters and the instance
 * @en: the device, fully probed
 *
 * Return: 0 or a negative errno.
 */
int kite_en_devlink_register(struct kite_en_dev *en)
{
	union devlink_param_value val = { .vbool = en->roce_enabled };
	struct devlink *devlink = en->devlink;
	int err;

	err = devlink_params_register(devlink, kite_en_devlink_params,
				      ARRAY_SIZE(kite_en_devlink_params));
	if (err)
		return err;
	devl_lock(devlink);
	devl_param_driverinit_value_set(devlink,
					DEVLINK_PARAM_GENERIC_ID_ENABLE_ROCE,
					&val);
	devl_unlock(devlink);
	devlink_register(devlink);
	return 0;
}

/**
 * kite_en_devlink_unregister() - undo kite_en_devlink_register()
 * @en: the device
 */
void kite_en_devlink_unregister(struct kite_en_dev *en)
{
	devlink_unregister(en->devlink);
	devlink_params_unregister(en->devlink, kite_en_devlink_params,
				  ARRAY_SIZE(kite_en_devlink_params));
}
