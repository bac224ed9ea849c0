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
 * @en: the device, with its MSI-X vectors allocated
 *
 * Hands every vector after kite_en's own to the RDMA driver.
 *
 * Return: 0 on success or a negative errno.
 */
int kite_en_rdma_add(struct kite_en_dev *en)
{
	unsigned int i, n = kite_en_rdma_vectors(en->num_vectors);
	struct kite_aux_dev *kadev;
	int id, err;

	if (!n) {
		dev_err(&en->pdev->dev, "no MSI-X vector left for RDMA\n");
		return -ENOSPC;
	}
	kadev = kzalloc_flex(*kadev, irqs, n, GFP_KERNEL);
	if (!kadev)
		return -ENOMEM;
	kadev->num_vectors = n;
	kadev->pdev = en->pdev;
	kadev->hw_rev = en->hw_rev;
	strscpy(kadev->fw_version, en->fw_version);
	for (i = 0; i < n; i++)
		kadev->irqs[i] = pci_irq_vector(en->pdev, KITE_EN_CORE_VECTORS + i);

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
 * Context: process context; returns after the RDMA driver's remove has run.
 */
void kite_en_rdma_del(struct kite_en_dev *en)
{
	struct kite_aux_dev *kadev = en->rdma;

	if (!kadev)
		return;
	en->rdma = NULL;
	auxiliary_device_delete(&kadev->adev);
	auxiliary_device_uninit(&kadev->adev);
}
