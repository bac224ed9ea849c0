/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite auxiliary-bus interface between kite_en (the PCI/Ethernet core
 * driver) and kite_ib (the RDMA driver).
 *
 * This header is the only one that crosses the module boundary: kite_ib
 * never includes kite_en's private headers.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _LINUX_KITE_AUXDEV_H
#define _LINUX_KITE_AUXDEV_H

#include <linux/auxiliary_bus.h>
#include <linux/types.h>

struct pci_dev;

/* kite_en creates one auxiliary device named KITE_EN_MODNAME ".rdma.<N>". */
#define KITE_EN_MODNAME			"kite_en"
#define KITE_AUX_RDMA_NAME		"rdma"

/* Room for a firmware version string "major.minor.patch". */
#define KITE_FW_VERSION_LEN		32

/**
 * struct kite_aux_dev - what kite_en hands to the RDMA driver
 * @adev: the auxiliary device, named kite_en.rdma.<N>
 * @pdev: the PCI function; the RDMA driver uses it for DMA mappings only
 * @hw_rev: programming interface revision (KITE_REG_HW_REV)
 * @fw_version: firmware version as "major.minor.patch"
 * @num_vectors: number of MSI-X vectors reserved for the RDMA driver
 * @irqs: Linux IRQ numbers of those vectors, @num_vectors of them
 *
 * kite_en allocates this structure, keeps it valid from the creation of the
 * auxiliary device until its release, and never changes it while an RDMA
 * driver is bound.
 */
struct kite_aux_dev {
	struct auxiliary_device adev;
	struct pci_dev *pdev;
	u32 hw_rev;
	char fw_version[KITE_FW_VERSION_LEN];
	unsigned int num_vectors;
	int irqs[] __counted_by(num_vectors);
};

/**
 * to_kite_aux_dev() - the &struct kite_aux_dev of an auxiliary device
 * @adev: an auxiliary device created by kite_en
 *
 * Return: the structure containing @adev.
 */
static inline struct kite_aux_dev *to_kite_aux_dev(struct auxiliary_device *adev)
{
	return container_of(adev, struct kite_aux_dev, adev);
}

#endif /* _LINUX_KITE_AUXDEV_H */
