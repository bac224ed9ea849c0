// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: devlink instance, device
 * information and the enable_roce parameter.
 *
 * enable_roce is a driverinit parameter: it takes effect at
 * "devlink dev reload", which removes the RDMA auxiliary device and
 * creates it again if RoCE is enabled.
 *
 * The health reporter "fw_fatal" reports the device's fatal errors
 * (STATUS.FATAL, seen by the vector 0 interrupt or by the health poll, and
 * STATUS reads that make no sense): "devlink health show" counts them,
 * "devlink health dump show" gives the device's state captured at the
 * error, and recovery, automatic by default, is a function reset, after
 * which the RDMA device is registered again.
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

/* The device's state, for dump and diagnose. */
static void kite_en_health_fill(struct kite_en_dev *en,
				struct devlink_fmsg *fmsg)
{
	u32 status = kite_en_rd(en, KITE_REG_STATUS);

	devlink_fmsg_u32_pair_put(fmsg, "status", status);
	devlink_fmsg_bool_pair_put(fmsg, "ready", status & KITE_STATUS_READY);
	devlink_fmsg_bool_pair_put(fmsg, "fatal", status & KITE_STATUS_FATAL);
	devlink_fmsg_u32_pair_put(fmsg, "fatal_code",
				  FIELD_GET(KITE_STATUS_FATAL_CODE, status));
	devlink_fmsg_bool_pair_put(fmsg, "resetting",
				   status & KITE_STATUS_RESETTING);
	devlink_fmsg_bool_pair_put(fmsg, "link_up",
				   status & KITE_STATUS_LINK_UP);
	devlink_fmsg_u32_pair_put(fmsg, "imr", kite_en_rd(en, KITE_REG_IMR));
	devlink_fmsg_string_pair_put(fmsg, "fw_version", en->fw_version);
	devlink_fmsg_u32_pair_put(fmsg, "hw_rev", en->hw_rev);
	devlink_fmsg_bool_pair_put(fmsg, "rdma_device", READ_ONCE(en->rdma));
	devlink_fmsg_u64_pair_put(fmsg, "resets", READ_ONCE(en->resets));
}

static int kite_en_fw_dump(struct devlink_health_reporter *reporter,
			   struct devlink_fmsg *fmsg, void *priv_ctx,
			   struct netlink_ext_ack *extack)
{
	kite_en_health_fill(devlink_health_reporter_priv(reporter), fmsg);
	return 0;
}

static int kite_en_fw_diagnose(struct devlink_health_reporter *reporter,
			       struct devlink_fmsg *fmsg,
			       struct netlink_ext_ack *extack)
{
	kite_en_health_fill(devlink_health_reporter_priv(reporter), fmsg);
	return 0;
}

/*
 * Called with the devlink instance locked: the reset, which takes the
 * PCI device lock, runs in reset_work, not here. A reset already under
 * way (one the RDMA driver asked for) is the recovery.
 */
static int kite_en_fw_recover(struct devlink_health_reporter *reporter,
			      void *priv_ctx, struct netlink_ext_ack *extack)
{
	struct kite_en_dev *en = devlink_health_reporter_priv(reporter);

	if (READ_ONCE(en->removing)) {
		NL_SET_ERR_MSG_MOD(extack, "the device is being removed");
		return -ENODEV;
	}
	if (!READ_ONCE(en->resetting))
		queue_work(system_dfl_wq, &en->reset_work);
	return 0;
}

static const struct devlink_health_reporter_ops kite_en_fw_reporter_ops = {
	.name = "fw_fatal",
	.recover = kite_en_fw_recover,
	.dump = kite_en_fw_dump,
	.diagnose = kite_en_fw_diagnose,
};

/**
 * kite_en_health_create() - create the "fw_fatal" health reporter
 * @en: the device
 *
 * Return: 0 or a negative errno.
 */
int kite_en_health_create(struct kite_en_dev *en)
{
	struct devlink_health_reporter *reporter;

	reporter = devlink_health_reporter_create(en->devlink,
						  &kite_en_fw_reporter_ops,
						  en);
	if (IS_ERR(reporter))
		return PTR_ERR(reporter);
	en->fw_reporter = reporter;
	return 0;
}

/**
 * kite_en_health_destroy() - destroy the health reporter
 * @en: the device; nothing reports to it any more (kite_en_fatal() is not
 *	called once @en->removing is set and the works are cancelled)
 */
void kite_en_health_destroy(struct kite_en_dev *en)
{
	devlink_health_reporter_destroy(en->fw_reporter);
	en->fw_reporter = NULL;
}

/**
 * kite_en_fatal() - the device failed: tell the RDMA driver, report, reset
 * @en: the device
 * @why: what was seen, for the log and the health report
 *
 * Reported once until a reset completes. The RDMA driver is told at once
 * (IB_EVENT_DEVICE_FATAL to its consumers); the health reporter counts the
 * error, captures a dump and, with auto-recovery on (the default), resets
 * the function. With auto-recovery off the device stays failed until
 * "devlink health recover".
 *
 * Context: process context.
 */
void kite_en_fatal(struct kite_en_dev *en, const char *why)
{
	if (READ_ONCE(en->removing) || test_and_set_bit(0, &en->fatal_seen))
		return;
	dev_err(&en->pdev->dev, "%s\n", why);
	kite_en_rdma_event(en, KITE_AUX_EVENT_FATAL);
	devlink_health_report(en->fw_reporter, why, en);
}

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
