// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: PCI function probe, removal,
 * resets and error recovery.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>

#include "kite_en.h"

/* How long the interrupt self-test waits for vector 0. */
#define KITE_EN_INTR_TEST_MS	1000
/* A reset waits this long, in steps, for the PCI device lock. */
#define KITE_EN_RESET_TRY_MS	100
#define KITE_EN_RESET_TRIES	100

static irqreturn_t kite_en_core_irq(int irq, void *data)
{
	struct kite_en_dev *en = data;
	u32 icr = kite_en_rd(en, KITE_REG_ICR);

	complete(&en->intr_test_done);
	if (icr & (KITE_INT_LINK | KITE_INT_FATAL))
		queue_work(system_dfl_wq, &en->link_work);
	return IRQ_HANDLED;
}

/*
 * A STATUS value that says the device failed, or that makes no sense, is
 * reported (kite_en_fatal(), once until the next reset). Return: true for
 * such a value.
 */
static bool kite_en_check_fatal(struct kite_en_dev *en, u32 status)
{
	char why[96];

	if (kite_en_status_bogus(status)) {
		/* Nothing read from the device can be trusted: reset it. */
		atomic64_inc(&en->bad_reg_status);
		snprintf(why, sizeof(why),
			 "bad device data (reg-status): STATUS reads %#x, resetting",
			 status);
		kite_en_fatal(en, why);
		return true;
	}
	if (status & KITE_STATUS_FATAL) {
		snprintf(why, sizeof(why),
			 "device reports a fatal error (code %lu)",
			 FIELD_GET(KITE_STATUS_FATAL_CODE, status));
		kite_en_fatal(en, why);
		return true;
	}
	return false;
}

static void kite_en_link_work(struct work_struct *work)
{
	struct kite_en_dev *en = container_of(work, struct kite_en_dev,
					      link_work);

	if (kite_en_check_fatal(en, kite_en_rd(en, KITE_REG_STATUS)))
		return;
	rtnl_lock();
	kite_en_update_link(en);
	rtnl_unlock();
}

/*
 * The health poll: a device that failed without raising its interrupt (or
 * whose interrupt was lost) is found within KITE_EN_HEALTH_POLL_MS. The
 * value read is the one judged: a STATUS that made no sense once is not
 * read again in the hope that it looks better (the next read may well).
 */
static void kite_en_health_work(struct work_struct *work)
{
	struct kite_en_dev *en = container_of(to_delayed_work(work),
					      struct kite_en_dev, health_work);

	if (!READ_ONCE(en->resetting) && !test_bit(0, &en->fatal_seen))
		kite_en_check_fatal(en, kite_en_rd(en, KITE_REG_STATUS));
	if (!READ_ONCE(en->removing))
		queue_delayed_work(system_dfl_wq, &en->health_work,
				   msecs_to_jiffies(KITE_EN_HEALTH_POLL_MS));
}

/*
 * Check that MSI-X delivery works before anything depends on it: ask the
 * device to raise vector 0 and wait for it. The vector stays requested for
 * device events.
 */
static int kite_en_core_irq_setup(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	int irq = pci_irq_vector(en->pdev, 0);
	int err;

	kite_en_wr(en, KITE_REG_IMR, 0);
	err = request_irq(irq, kite_en_core_irq, 0, KITE_EN_MODNAME, en);
	if (err) {
		dev_err(dev, "cannot request IRQ %d: %d\n", irq, err);
		return err;
	}
	reinit_completion(&en->intr_test_done);
	kite_en_wr(en, KITE_REG_INTR_TEST, FIELD_PREP(KITE_INTR_TEST_VECTOR, 0));
	if (!wait_for_completion_timeout(&en->intr_test_done,
					 msecs_to_jiffies(KITE_EN_INTR_TEST_MS))) {
		dev_err(dev, "MSI-X vector 0 did not fire in %u ms\n",
			KITE_EN_INTR_TEST_MS);
		free_irq(irq, en);
		return -EIO;
	}
	return 0;
}

/* Stop device events; afterwards no link work runs or gets queued. */
static void kite_en_events_off(struct kite_en_dev *en)
{
	kite_en_wr(en, KITE_REG_IMR, 0);
	synchronize_irq(pci_irq_vector(en->pdev, 0));
	cancel_work_sync(&en->link_work);
}

static int kite_en_identify(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	u32 id = kite_en_rd(en, KITE_REG_ID), caps;

	en->hw_rev = kite_en_rd(en, KITE_REG_HW_REV);
	if (kite_en_check_identity(id, en->hw_rev)) {
		dev_err(dev, "unsupported device: id %#x, interface revision %lu.%lu (driver supports %u.x)\n",
			id, FIELD_GET(KITE_HW_REV_MAJOR, en->hw_rev),
			FIELD_GET(KITE_HW_REV_MINOR, en->hw_rev),
			KITE_HW_REV_MAJOR_SUPPORTED);
		return -ENODEV;
	}
	caps = kite_en_rd(en, KITE_REG_CAPS);
	en->hw_queues = min(FIELD_GET(KITE_CAPS_NUM_QUEUES, caps),
			    KITE_ETH_MAX_QUEUES);
	kite_en_mac_from_regs(kite_en_rd(en, KITE_REG_MAC_HI),
			      kite_en_rd(en, KITE_REG_MAC_LO), en->mac);
	if (!is_valid_ether_addr(en->mac)) {
		dev_warn(dev, "invalid factory MAC %pM, using a random one\n",
			 en->mac);
		eth_random_addr(en->mac);
	}
	en->serial = (u64)kite_en_rd(en, KITE_REG_SERIAL_HI) << 32 |
		     kite_en_rd(en, KITE_REG_SERIAL_LO);
	return 0;
}

static int kite_en_alloc_vectors(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	unsigned int hw, want, cpus = num_online_cpus();
	int got;

	hw = FIELD_GET(KITE_CAPS_NUM_VECTORS, kite_en_rd(en, KITE_REG_CAPS));
	want = kite_en_vectors_wanted(min(hw, KITE_MAX_VECTORS), en->hw_queues,
				      cpus);
	if (!want) {
		dev_err(dev, "device reports %u MSI-X vectors and %u queues, too few\n",
			hw, en->hw_queues);
		return -ENODEV;
	}
	got = pci_alloc_irq_vectors(en->pdev, KITE_EN_CORE_VECTORS +
				    KITE_EN_MIN_ETH_VECTORS +
				    KITE_EN_MIN_RDMA_VECTORS, want, PCI_IRQ_MSIX);
	if (got < 0) {
		dev_err(dev, "cannot allocate MSI-X vectors: %d\n", got);
		return got;
	}
	en->num_vectors = got;
	if (kite_en_split_vectors(got, en->hw_queues, cpus, &en->vec)) {
		pci_free_irq_vectors(en->pdev);
		return -ENOSPC;
	}
	if (got < want)
		dev_info(dev, "granted %d of %u MSI-X vectors\n", got, want);
	return 0;
}

/* Restore what the device forgets in a reset. */
static void kite_en_restore_config(struct kite_en_dev *en)
{
	u32 hi, lo;

	kite_en_mac_to_regs(en->netdev->dev_addr, &hi, &lo);
	kite_en_wr(en, KITE_REG_ETH_MAC_LO, lo);
	kite_en_wr(en, KITE_REG_ETH_MAC_HI, hi);
	kite_en_wr(en, KITE_REG_ETH_MTU, en->netdev->mtu);
	kite_en_wr(en, KITE_REG_IMR, KITE_INT_LINK | KITE_INT_FATAL);
	kite_en_ptp_restore(en);
}

/*
 * Before a reset: remove the RDMA side first (it uses the Ethernet
 * function's vectors and registers), then stop the interface.
 */
static void kite_en_quiesce(struct kite_en_dev *en)
{
	WRITE_ONCE(en->resetting, true);
	/*
	 * A reset the RDMA driver asked for when the device failed may get
	 * here before link_work has seen STATUS: report the failure now,
	 * before the reset clears it (the reset in progress is its recovery).
	 */
	kite_en_check_fatal(en, kite_en_rd(en, KITE_REG_STATUS));
	mutex_lock(&en->rdma_lock);
	kite_en_rdma_del(en);
	mutex_unlock(&en->rdma_lock);
	rtnl_lock();
	if (netif_running(en->netdev))
		kite_en_rings_stop(en);
	netif_device_detach(en->netdev);
	rtnl_unlock();
	kite_en_wr(en, KITE_REG_IMR, 0);
}

/* After a reset: reprogram, restart the interface, bring RDMA back. */
static int kite_en_resume_all(struct kite_en_dev *en)
{
	int err;

	err = kite_en_reset(en);
	WRITE_ONCE(en->resetting, false);
	if (err)
		return err;
	en->resets++;
	/* A new failure is reported again. */
	clear_bit(0, &en->fatal_seen);
	kite_en_restore_config(en);
	rtnl_lock();
	/* Rings first: attaching wakes the TX queues of a running netdev. */
	if (netif_running(en->netdev) && kite_en_rings_start(en))
		dev_close(en->netdev);
	netif_device_attach(en->netdev);
	kite_en_update_link(en);
	rtnl_unlock();
	mutex_lock(&en->rdma_lock);
	if (en->roce_enabled)
		err = kite_en_rdma_add(en);
	mutex_unlock(&en->rdma_lock);
	return err;
}

static void kite_en_fatal_work(struct work_struct *work)
{
	kite_en_fatal(container_of(work, struct kite_en_dev, fatal_work),
		      "the RDMA driver found the device failed");
}

static void kite_en_reset_work(struct work_struct *work)
{
	struct kite_en_dev *en = container_of(work, struct kite_en_dev,
					      reset_work);
	int err = -EAGAIN;
	int i;

	/*
	 * Runs reset_prepare/reset_done below around a function reset.
	 * Not pci_reset_function(), which waits for the PCI device lock:
	 * remove() holds it while it cancels this work, and would wait for
	 * us forever. Try the lock, and give up when remove() has begun.
	 */
	for (i = 0; i < KITE_EN_RESET_TRIES && err == -EAGAIN; i++) {
		if (READ_ONCE(en->removing))
			return;
		if (i)
			msleep(KITE_EN_RESET_TRY_MS);
		err = pci_try_reset_function(en->pdev);
	}
	if (err)
		dev_err(&en->pdev->dev, "function reset failed: %d\n", err);
}

static int kite_en_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct kite_en_dev *en;
	int err;

	en = kite_en_devlink_alloc(dev);
	if (!en)
		return -ENOMEM;
	en->pdev = pdev;
	en->roce_enabled = true;
	init_completion(&en->intr_test_done);
	mutex_init(&en->rdma_lock);
	INIT_WORK(&en->link_work, kite_en_link_work);
	INIT_WORK(&en->reset_work, kite_en_reset_work);
	INIT_WORK(&en->fatal_work, kite_en_fatal_work);
	INIT_WORK(&en->event_work, kite_en_event_work);
	INIT_DELAYED_WORK(&en->health_work, kite_en_health_work);
	pci_set_drvdata(pdev, en);

	err = pci_enable_device_mem(pdev);
	if (err) {
		dev_err(dev, "cannot enable PCI device: %d\n", err);
		goto err_free;
	}
	err = pci_request_mem_regions(pdev, KITE_EN_MODNAME);
	if (err) {
		dev_err(dev, "cannot claim memory BARs: %d\n", err);
		goto err_disable;
	}
	if (pci_resource_len(pdev, KITE_BAR_REGS) < KITE_BAR_REGS_SIZE ||
	    pci_resource_len(pdev, KITE_BAR_DB) < KITE_BAR_DB_SIZE) {
		dev_err(dev, "BARs too small: BAR%d %llu bytes, BAR%d %llu bytes\n",
			KITE_BAR_REGS, (u64)pci_resource_len(pdev, KITE_BAR_REGS),
			KITE_BAR_DB, (u64)pci_resource_len(pdev, KITE_BAR_DB));
		err = -ENODEV;
		goto err_release_regions;
	}
	err = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (err) {
		dev_err(dev, "no usable 64-bit DMA configuration: %d\n", err);
		goto err_release_regions;
	}
	en->regs = pci_iomap(pdev, KITE_BAR_REGS, KITE_REGS_SIZE);
	if (!en->regs) {
		dev_err(dev, "cannot map BAR%d\n", KITE_BAR_REGS);
		err = -ENOMEM;
		goto err_release_regions;
	}
	en->kernel_db = pci_iomap_range(pdev, KITE_BAR_DB, 0, KITE_DB_PAGE_SIZE);
	if (!en->kernel_db) {
		dev_err(dev, "cannot map BAR%d\n", KITE_BAR_DB);
		err = -ENOMEM;
		goto err_unmap_regs;
	}
	err = kite_en_identify(en);
	if (err)
		goto err_unmap_db;
	err = kite_en_reset(en);
	if (err)
		goto err_unmap_db;
	pci_set_master(pdev);
	pci_save_state(pdev);

	err = kite_en_alloc_vectors(en);
	if (err)
		goto err_clear_master;
	err = kite_en_core_irq_setup(en);
	if (err)
		goto err_free_vectors;
	err = kite_en_netdev_create(en);
	if (err)
		goto err_free_core_irq;
	err = kite_en_ptp_create(en);
	if (err)
		goto err_netdev_destroy;
	/* Before the first event: link_work reports fatal errors to it. */
	err = kite_en_health_create(en);
	if (err)
		goto err_ptp_destroy;

	/* Device events need the netdev; pick up the current link state. */
	kite_en_wr(en, KITE_REG_IMR, KITE_INT_LINK | KITE_INT_FATAL);
	queue_work(system_dfl_wq, &en->link_work);

	mutex_lock(&en->rdma_lock);
	err = kite_en_rdma_add(en);
	mutex_unlock(&en->rdma_lock);
	if (err)
		goto err_events_off;
	err = kite_en_devlink_register(en);
	if (err)
		goto err_rdma_del;
	queue_delayed_work(system_dfl_wq, &en->health_work,
			   msecs_to_jiffies(KITE_EN_HEALTH_POLL_MS));

	dev_info(dev, "Kite NIC: interface %lu.%lu, firmware %s, MAC %pM, serial %016llx, %u MSI-X vectors (%u Ethernet, %u RDMA)\n",
		 FIELD_GET(KITE_HW_REV_MAJOR, en->hw_rev),
		 FIELD_GET(KITE_HW_REV_MINOR, en->hw_rev), en->fw_version,
		 en->mac, en->serial, en->num_vectors, en->vec.eth,
		 en->vec.rdma);
	return 0;

err_rdma_del:
	mutex_lock(&en->rdma_lock);
	kite_en_rdma_del(en);
	mutex_unlock(&en->rdma_lock);
err_events_off:
	WRITE_ONCE(en->removing, true);
	kite_en_events_off(en);
	cancel_work_sync(&en->event_work);
	cancel_work_sync(&en->fatal_work);
	kite_en_health_destroy(en);
err_ptp_destroy:
	kite_en_ptp_destroy(en);
err_netdev_destroy:
	kite_en_netdev_destroy(en);
err_free_core_irq:
	free_irq(pci_irq_vector(pdev, 0), en);
err_free_vectors:
	pci_free_irq_vectors(pdev);
err_clear_master:
	pci_clear_master(pdev);
	/* Stop whatever the device may have started. */
	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
err_unmap_db:
	pci_iounmap(pdev, en->kernel_db);
err_unmap_regs:
	pci_iounmap(pdev, en->regs);
err_release_regions:
	pci_release_mem_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_free:
	mutex_destroy(&en->rdma_lock);
	kite_en_devlink_free(en);
	return err;
}

static void kite_en_remove(struct pci_dev *pdev)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);

	/*
	 * The RDMA driver's remove may ask for a reset: refuse it now. Stop
	 * the health poll and link_work, which report to the health
	 * reporter, before destroying it.
	 */
	WRITE_ONCE(en->removing, true);
	cancel_delayed_work_sync(&en->health_work);
	kite_en_events_off(en);
	cancel_work_sync(&en->fatal_work);
	kite_en_health_destroy(en);
	kite_en_devlink_unregister(en);
	cancel_work_sync(&en->reset_work);
	mutex_lock(&en->rdma_lock);
	kite_en_rdma_del(en);
	mutex_unlock(&en->rdma_lock);
	cancel_work_sync(&en->event_work);
	kite_en_ptp_destroy(en);
	kite_en_netdev_destroy(en);
	free_irq(pci_irq_vector(pdev, 0), en);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
	pci_iounmap(pdev, en->kernel_db);
	pci_iounmap(pdev, en->regs);
	pci_release_mem_regions(pdev);
	pci_disable_device(pdev);
	mutex_destroy(&en->rdma_lock);
	kite_en_devlink_free(en);
}

static void kite_en_shutdown(struct pci_dev *pdev)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);

	/* Quiesce DMA before reboot or kexec; leave the driver bound. */
	pci_clear_master(pdev);
	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
}

/* FLR or another function reset through the PCI core (sysfs "reset"). */
static void kite_en_reset_prepare(struct pci_dev *pdev)
{
	kite_en_quiesce(pci_get_drvdata(pdev));
}

static void kite_en_reset_done(struct pci_dev *pdev)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);
	int err = kite_en_resume_all(en);

	if (err)
		dev_err(&pdev->dev, "device did not come back after reset: %d\n",
			err);
	else
		dev_info(&pdev->dev, "reset complete\n");
}

static pci_ers_result_t kite_en_error_detected(struct pci_dev *pdev,
					       pci_channel_state_t state)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);

	dev_err(&pdev->dev, "PCI error detected, channel state %d\n", state);
	kite_en_quiesce(en);
	if (state == pci_channel_io_perm_failure)
		return PCI_ERS_RESULT_DISCONNECT;
	pci_disable_device(pdev);
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t kite_en_slot_reset(struct pci_dev *pdev)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);

	if (pci_enable_device_mem(pdev)) {
		dev_err(&pdev->dev, "cannot re-enable the device after reset\n");
		return PCI_ERS_RESULT_DISCONNECT;
	}
	pci_set_master(pdev);
	pci_restore_state(pdev);
	pci_save_state(pdev);
	if (kite_en_reset(en))
		return PCI_ERS_RESULT_DISCONNECT;
	return PCI_ERS_RESULT_RECOVERED;
}

static void kite_en_io_resume(struct pci_dev *pdev)
{
	kite_en_reset_done(pdev);
}

static const struct pci_error_handlers kite_en_err_handlers = {
	.error_detected = kite_en_error_detected,
	.slot_reset = kite_en_slot_reset,
	.resume = kite_en_io_resume,
	.reset_prepare = kite_en_reset_prepare,
	.reset_done = kite_en_reset_done,
};

static const struct pci_device_id kite_en_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_KITE, PCI_DEVICE_ID_KITE_NIC) },
	{ }
};
MODULE_DEVICE_TABLE(pci, kite_en_pci_ids);

static struct pci_driver kite_en_pci_driver = {
	.name = KITE_EN_MODNAME,
	.id_table = kite_en_pci_ids,
	.probe = kite_en_probe,
	.remove = kite_en_remove,
	.shutdown = kite_en_shutdown,
	.err_handler = &kite_en_err_handlers,
};
module_pci_driver(kite_en_pci_driver);

MODULE_DESCRIPTION("Kite RoCEv2 Ethernet NIC core driver");
MODULE_LICENSE("GPL");
