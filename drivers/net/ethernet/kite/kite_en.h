/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite RoCEv2 Ethernet NIC core driver: private definitions.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _KITE_EN_H_
#define _KITE_EN_H_

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/io.h>
#include <linux/kite/auxdev.h>
#include <linux/kite/kite_hw.h>
#include <linux/types.h>

struct pci_dev;

/* Vector 0 belongs to kite_en (device events); the rest go to RDMA. */
#define KITE_EN_CORE_VECTORS		1
/* The RDMA driver needs at least its control event queue's vector. */
#define KITE_EN_MIN_RDMA_VECTORS	1

/**
 * struct kite_en_dev - one Kite PCI function
 * @pdev: the PCI function
 * @regs: BAR0 register block (KITE_REGS_SIZE bytes)
 * @hw_rev: KITE_REG_HW_REV as read at probe
 * @fw_ver: KITE_REG_FW_VER as read after the last reset
 * @fw_version: @fw_ver formatted as "major.minor.patch"
 * @serial: board serial number
 * @mac: the port's factory MAC address
 * @num_vectors: MSI-X vectors granted by the PCI core
 * @intr_test_done: completed by the vector 0 handler during the self-test
 * @rdma: the auxiliary device for the RDMA driver, NULL when absent
 *
 * Probe and remove are serialised by the driver core; nothing here is
 * changed after probe, so no lock is needed yet.
 */
struct kite_en_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 hw_rev;
	u32 fw_ver;
	char fw_version[KITE_FW_VERSION_LEN];
	u64 serial;
	u8 mac[ETH_ALEN];
	unsigned int num_vectors;
	struct completion intr_test_done;
	struct kite_aux_dev *rdma;
};

static inline u32 kite_en_rd(struct kite_en_dev *en, u32 reg)
{
	return readl(en->regs + reg);
}

static inline void kite_en_wr(struct kite_en_dev *en, u32 reg, u32 val)
{
	writel(val, en->regs + reg);
}

/* kite_en_hw.c: register decoding and policies (unit-tested) */
int kite_en_check_identity(u32 id, u32 hw_rev);
int kite_en_status_to_errno(u32 status);
void kite_en_mac_from_regs(u32 mac_hi, u32 mac_lo, u8 *mac);
void kite_en_fw_version(u32 fw_ver, char *buf, size_t len);
unsigned int kite_en_vectors_wanted(unsigned int hw_vectors,
				    unsigned int online_cpus);
unsigned int kite_en_rdma_vectors(unsigned int granted);
int kite_en_reset(struct kite_en_dev *en);

/* kite_en_aux.c */
int kite_en_rdma_add(struct kite_en_dev *en);
void kite_en_rdma_del(struct kite_en_dev *en);

#endif /* _KITE_EN_H_ */
