// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: binding to the core driver's auxiliary device.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/kite/auxdev.h>
#include <linux/kite/kite_hw.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

/**
 * struct kite_ib_dev - the RDMA side of one Kite function
 * @kadev: what kite_en handed over; valid while bound
 */
struct kite_ib_dev {
	struct kite_aux_dev *kadev;
};

static int kite_ib_probe(struct auxiliary_device *adev,
			 const struct auxiliary_device_id *id)
{
	struct kite_aux_dev *kadev = to_kite_aux_dev(adev);
	struct device *dev = &adev->dev;
	struct kite_ib_dev *ibdev;

	if (!kadev->pdev || !kadev->num_vectors) {
		dev_err(dev, "core driver gave no PCI function or no MSI-X vector\n");
		return -EINVAL;
	}
	ibdev = kzalloc_obj(*ibdev, GFP_KERNEL);
	if (!ibdev)
		return -ENOMEM;
	ibdev->kadev = kadev;
	auxiliary_set_drvdata(adev, ibdev);

	dev_info(dev, "bound to %s: interface %lu.%lu, firmware %s, %u MSI-X vectors (IRQs %d..%d)\n",
		 pci_name(kadev->pdev),
		 FIELD_GET(KITE_HW_REV_MAJOR, kadev->hw_rev),
		 FIELD_GET(KITE_HW_REV_MINOR, kadev->hw_rev),
		 kadev->fw_version, kadev->num_vectors, kadev->irqs[0],
		 kadev->irqs[kadev->num_vectors - 1]);
	return 0;
}

static const char * const kite_ib_event_names[] = {
	[KITE_AUX_EVENT_LINK_UP] = "link up",
	[KITE_AUX_EVENT_LINK_DOWN] = "link down",
	[KITE_AUX_EVENT_MTU_CHANGE] = "MTU change",
	[KITE_AUX_EVENT_MAC_CHANGE] = "MAC change",
	[KITE_AUX_EVENT_FATAL] = "device fatal",
};

static void kite_ib_event(struct kite_aux_dev *kadev, enum kite_aux_event event)
{
	const char *name = event < ARRAY_SIZE(kite_ib_event_names) ?
			   kite_ib_event_names[event] : NULL;

	if (!name) {
		dev_warn(&kadev->adev.dev, "unknown event %d\n", event);
		return;
	}
	dev_info(&kadev->adev.dev, "event: %s\n", name);
}

static void kite_ib_remove(struct auxiliary_device *adev)
{
	struct kite_ib_dev *ibdev = auxiliary_get_drvdata(adev);

	dev_info(&adev->dev, "unbound\n");
	kfree(ibdev);
}

static const struct auxiliary_device_id kite_ib_id_table[] = {
	{ .name = KITE_EN_MODNAME "." KITE_AUX_RDMA_NAME },
	{}
};
MODULE_DEVICE_TABLE(auxiliary, kite_ib_id_table);

static struct kite_aux_driver kite_ib_driver = {
	.adrv = {
		.name = "kite_ib",
		.probe = kite_ib_probe,
		.remove = kite_ib_remove,
		.id_table = kite_ib_id_table,
	},
	.event = kite_ib_event,
};

static int __init kite_ib_init(void)
{
	return auxiliary_driver_register(&kite_ib_driver.adrv);
}

static void __exit kite_ib_exit(void)
{
	auxiliary_driver_unregister(&kite_ib_driver.adrv);
}

module_init(kite_ib_init);
module_exit(kite_ib_exit);

MODULE_DESCRIPTION("Kite RoCEv2 RDMA driver");
MODULE_LICENSE("GPL");
