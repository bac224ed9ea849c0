// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: the auxiliary device for the RDMA
 * driver.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/idr.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kite_en.h"

/* Numbers the auxiliary devices kite_en.rdma.<N>. */
static DEFINE_IDA(kite_en_rdma_ida);

static void kite_en_rdma_release(struct device *dev)
{
	struct auxiliary_device *adev = to_auxiliary_dev(dev);

	ida_free(&kite_en_rdma_ida, adev->id);
	kfree(to_kite_aux_dev(adev));
}

/**
 * kite_en_rdma_add() - create the auxiliary device kite_en.rdma.<N>
 * @en: the device, with its MSI-X vectors allocated and split
 *
 * Hands the RDMA driver its vectors (those after kite_en's own and the
 * Ethernet queues'), its register block and the doorbell BAR.
 *
 * Context: process context, @en->rdma_lock held.
 * Return: 0 on success or a negative errno.
 */
int kite_en_rdma_add(struct kite_en_dev *en)
{
	unsigned int i, n = en->vec.rdma;
	unsigned int first = KITE_EN_CORE_VECTORS + en->vec.eth;
	struct kite_aux_dev *kadev;
	int id, err;

	lockdep_assert_held(&en->rdma_lock);
	if (en->rdma)
		return 0;
	if (!n) {
		dev_err(&en->pdev->dev, "no MSI-X vector left for RDMA\n");
		return -ENOSPC;
	}
	kadev = kzalloc_flex(*kadev, irqs, n, GFP_KERNEL);
	if (!kadev)
		return -ENOMEM;
	kadev->num_vectors = n;
	kadev->pdev = en->pdev;
	kadev->netdev = en->netdev;
	kadev->hw_rev = en->hw_rev;
	strscpy(kadev->fw_version, en->fw_version);
	kadev->rdma_regs = en->regs + KITE_RDMA_REGS_OFFSET;
	kadev->kernel_db = en->kernel_db;
	kadev->db_phys = pci_resource_start(en->pdev, KITE_BAR_DB);
	kadev->db_pages = KITE_DB_PAGES;
	/* Absent on a device without KITE_FEAT_DM: length 0. */
	kadev->dm_phys = pci_resource_start(en->pdev, KITE_BAR_DM);
	kadev->dm_len = pci_resource_len(en->pdev, KITE_BAR_DM);
	kadev->rtc = en->rtc;
	kadev->first_vector = first;
	for (i = 0; i < n; i++)
		kadev->irqs[i] = pci_irq_vector(en->pdev, first + i);

	id = ida_alloc(&kite_en_rdma_ida, GFP_KERNEL);
	if (id < 0) {
		err = id;
		goto err_free;
	}
	kadev->adev.name = KITE_AUX_RDMA_NAME;
	kadev->adev.id = id;
	kadev->adev.dev.parent = &en->pdev->dev;
	kadev->adev.dev.release = kite_en_rdma_release;

	err = auxiliary_device_init(&kadev->adev);
	if (err)
		goto err_free_id;
	err = auxiliary_device_add(&kadev->adev);
	if (err)
		goto err_uninit;
	en->rdma = kadev;
	return 0;

err_uninit:
	/* The release callback frees the id and kadev. */
	auxiliary_device_uninit(&kadev->adev);
	return err;
err_free_id:
	ida_free(&kite_en_rdma_ida, id);
err_free:
	kfree(kadev);
	return err;
}

/**
 * kite_en_rdma_del() - remove the auxiliary device, unbinding the RDMA driver
 * @en: the device
 *
 * Context: process context, @en->rdma_lock held; returns after the RDMA
 * driver's remove has run.
 */
void kite_en_rdma_del(struct kite_en_dev *en)
{
	struct kite_aux_dev *kadev = en->rdma;

	lockdep_assert_held(&en->rdma_lock);
	if (!kadev)
		return;
	en->rdma = NULL;
	auxiliary_device_delete(&kadev->adev);
	auxiliary_device_uninit(&kadev->adev);
}

/**
 * kite_en_rdma_event() - tell the bound RDMA driver about an event
 * @en: the device
 * @event: what happened
 *
 * Context: process context; takes @en->rdma_lock and the auxiliary
 * device's lock, so the caller must hold neither.
 */
void kite_en_rdma_event(struct kite_en_dev *en, enum kite_aux_event event)
{
	struct kite_aux_driver *kdrv;
	struct device *dev;

	mutex_lock(&en->rdma_lock);
	if (!en->rdma)
		goto out;
	dev = &en->rdma->adev.dev;
	device_lock(dev);
	if (dev->driver) {
		kdrv = container_of(to_auxiliary_drv(dev->driver),
				    struct kite_aux_driver, adrv);
		if (kdrv->event)
			kdrv->event(en->rdma, event);
	}
	device_unlock(dev);
out:
	mutex_unlock(&en->rdma_lock);
}

/**
 * kite_en_rdma_event_defer() - tell the RDMA driver from a work item
 * @en: the device
 * @event: what happened
 *
 * For callers holding RTNL: the RDMA driver's remove may need RTNL while
 * @en->rdma_lock is held, so events are not delivered under RTNL.
 */
void kite_en_rdma_event_defer(struct kite_en_dev *en,
			      enum kite_aux_event event)
{
	set_bit(event, &en->pending_events);
	queue_work(system_dfl_wq, &en->event_work);
}

/**
 * kite_en_event_work() - deliver deferred events
 * @work: &kite_en_dev.event_work
 */
void kite_en_event_work(struct work_struct *work)
{
	struct kite_en_dev *en = container_of(work, struct kite_en_dev,
					      event_work);
	unsigned int ev;

	for (ev = 0; ev < BITS_PER_LONG; ev++)
		if (test_and_clear_bit(ev, &en->pending_events))
			kite_en_rdma_event(en, ev);
}

/**
 * kite_en_request_reset() - ask kite_en to reset the device
 * @kadev: the RDMA driver's auxiliary device
 *
 * For an RDMA driver that found the device unresponsive or failed. The
 * failure is reported from a work item to the devlink health reporter
 * (kite_en_fatal()), whose recovery, automatic unless turned off, is the
 * reset: it removes the auxiliary device (the RDMA driver's remove runs),
 * resets the function and creates a new auxiliary device. A request made
 * while a reset is under way (from the RDMA driver's remove during it) is
 * covered by that reset.
 *
 * Context: any context.
 * Return: 0, or -ENODEV if the function is gone.
 */
int kite_en_request_reset(struct kite_aux_dev *kadev)
{
	struct kite_en_dev *en = pci_get_drvdata(kadev->pdev);

	if (!en || READ_ONCE(en->removing))
		return -ENODEV;
	if (READ_ONCE(en->resetting)) {
		dev_dbg(&en->pdev->dev, "reset request covered by the reset in progress\n");
		return 0;
	}
	dev_warn(&en->pdev->dev, "reset requested by the RDMA driver\n");
	queue_work(system_dfl_wq, &en->fatal_work);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kite_en_request_reset, "KITE");
