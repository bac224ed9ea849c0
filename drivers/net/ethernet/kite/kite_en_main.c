// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: PCI function probe and removal.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/cpumask.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "kite_en.h"

/* How long the interrupt self-test waits for vector 0. */
#define KITE_EN_INTR_TEST_MS	1000

static irqreturn_t kite_en_core_irq(int irq, void *data)
{
	struct kite_en_dev *en = data;

	complete(&en->intr_test_done);
	return IRQ_HANDLED;
}

/*
 * Check that MSI-X delivery works before anything depends on it: ask the
 * device to raise vector 0 and wait for it.
 */
static int kite_en_intr_self_test(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	int irq = pci_irq_vector(en->pdev, 0);
	int err;

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
		err = -EIO;
	}
	free_irq(irq, en);
	return err;
}

static int kite_en_identify(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	u32 id = kite_en_rd(en, KITE_REG_ID);

	en->hw_rev = kite_en_rd(en, KITE_REG_HW_REV);
	if (kite_en_check_identity(id, en->hw_rev)) {
		dev_err(dev, "unsupported device: id %#x, interface revision %lu.%lu (driver supports %u.x)\n",
			id, FIELD_GET(KITE_HW_REV_MAJOR, en->hw_rev),
			FIELD_GET(KITE_HW_REV_MINOR, en->hw_rev),
			KITE_HW_REV_MAJOR_SUPPORTED);
		return -ENODEV;
	}
	kite_en_mac_from_regs(kite_en_rd(en, KITE_REG_MAC_HI),
			      kite_en_rd(en, KITE_REG_MAC_LO), en->mac);
	en->serial = (u64)kite_en_rd(en, KITE_REG_SERIAL_HI) << 32 |
		     kite_en_rd(en, KITE_REG_SERIAL_LO);
	return 0;
}

static int kite_en_alloc_vectors(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	unsigned int hw, want;
	int got;

	hw = FIELD_GET(KITE_CAPS_NUM_VECTORS, kite_en_rd(en, KITE_REG_CAPS));
	want = kite_en_vectors_wanted(min(hw, KITE_MAX_VECTORS),
				      num_online_cpus());
	if (!want) {
		dev_err(dev, "device reports %u MSI-X vectors, too few\n", hw);
		return -ENODEV;
	}
	got = pci_alloc_irq_vectors(en->pdev, KITE_EN_CORE_VECTORS +
				    KITE_EN_MIN_RDMA_VECTORS, want,
				    PCI_IRQ_MSIX);
	if (got < 0) {
		dev_err(dev, "cannot allocate MSI-X vectors: %d\n", got);
		return got;
	}
	en->num_vectors = got;
	if (got < want)
		dev_info(dev, "granted %d of %u MSI-X vectors\n", got, want);
	return 0;
}

static int kite_en_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct kite_en_dev *en;
	int err;

	en = kzalloc_obj(*en, GFP_KERNEL);
	if (!en)
		return -ENOMEM;
	en->pdev = pdev;
	init_completion(&en->intr_test_done);
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
	if (pci_resource_len(pdev, KITE_BAR_REGS) < KITE_BAR_REGS_SIZE) {
		dev_err(dev, "BAR%d is %llu bytes, expected %u\n", KITE_BAR_REGS,
			(u64)pci_resource_len(pdev, KITE_BAR_REGS),
			KITE_BAR_REGS_SIZE);
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
	err = kite_en_identify(en);
	if (err)
		goto err_unmap;
	err = kite_en_reset(en);
	if (err)
		goto err_unmap;
	pci_set_master(pdev);

	err = kite_en_alloc_vectors(en);
	if (err)
		goto err_clear_master;
	err = kite_en_intr_self_test(en);
	if (err)
		goto err_free_vectors;

	err = kite_en_rdma_add(en);
	if (err)
		goto err_free_vectors;

	dev_info(dev, "Kite NIC: interface %lu.%lu, firmware %s, MAC %pM, serial %016llx, %u MSI-X vectors\n",
		 FIELD_GET(KITE_HW_REV_MAJOR, en->hw_rev),
		 FIELD_GET(KITE_HW_REV_MINOR, en->hw_rev), en->fw_version,
		 en->mac, en->serial, en->num_vectors);
	return 0;

err_free_vectors:
	pci_free_irq_vectors(pdev);
err_clear_master:
	pci_clear_master(pdev);
	/* Stop whatever the device may have started. */
	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
err_unmap:
	pci_iounmap(pdev, en->regs);
err_release_regions:
	pci_release_mem_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_free:
	kfree(en);
	return err;
}

static void kite_en_remove(struct pci_dev *pdev)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);

	kite_en_rdma_del(en);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
	pci_iounmap(pdev, en->regs);
	pci_release_mem_regions(pdev);
	pci_disable_device(pdev);
	kfree(en);
}

static void kite_en_shutdown(struct pci_dev *pdev)
{
	struct kite_en_dev *en = pci_get_drvdata(pdev);

	/* Quiesce DMA before reboot or kexec; leave the driver bound. */
	pci_clear_master(pdev);
	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
}

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
};
module_pci_driver(kite_en_pci_driver);

MODULE_DESCRIPTION("Kite RoCEv2 Ethernet NIC core driver");
MODULE_LICENSE("GPL");
