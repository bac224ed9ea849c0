/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite auxiliary-bus interface between kite_en (the PCI/Ethernet core
 * driver) and kite_ib (the RDMA driver).
 *
 * This header is the only one that crosses the module boundary: kite_ib
 * never includes kite_en's private headers. The functions kite_en exports
 * for the RDMA driver are in the "KITE" symbol namespace.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _LINUX_KITE_AUXDEV_H
#define _LINUX_KITE_AUXDEV_H

#include <linux/auxiliary_bus.h>
#include <linux/types.h>

struct net_device;
struct pci_dev;

/* kite_en creates one auxiliary device named KITE_EN_MODNAME ".rdma.<N>". */
#define KITE_EN_MODNAME			"kite_en"
#define KITE_AUX_RDMA_NAME		"rdma"

/* Room for a firmware version string "major.minor.patch". */
#define KITE_FW_VERSION_LEN		32

struct ptp_system_timestamp;

/**
 * enum kite_aux_event - what kite_en tells the bound RDMA driver
 * @KITE_AUX_EVENT_LINK_UP: the Ethernet link came up
 * @KITE_AUX_EVENT_LINK_DOWN: the Ethernet link went down
 * @KITE_AUX_EVENT_MTU_CHANGE: the netdev's MTU changed
 * @KITE_AUX_EVENT_MAC_CHANGE: the netdev's MAC address changed
 * @KITE_AUX_EVENT_FATAL: the device failed; the auxiliary device is
 *	removed right after this event and re-created once the device has
 *	been reset
 *
 * A reset of any kind (PCI reset, error recovery, a requested reset) is
 * delivered as the removal of the auxiliary device before the reset and a
 * new auxiliary device after it, so the RDMA driver sees remove and probe.
 */
enum kite_aux_event {
	KITE_AUX_EVENT_LINK_UP,
	KITE_AUX_EVENT_LINK_DOWN,
	KITE_AUX_EVENT_MTU_CHANGE,
	KITE_AUX_EVENT_MAC_CHANGE,
	KITE_AUX_EVENT_FATAL,
};

/**
 * struct kite_aux_dev - what kite_en hands to the RDMA driver
 * @adev: the auxiliary device, named kite_en.rdma.<N>
 * @pdev: the PCI function; the RDMA driver uses it for DMA mappings only
 * @netdev: the function's net_device, valid while the RDMA driver is bound
 * @hw_rev: programming interface revision (KITE_REG_HW_REV)
 * @fw_version: firmware version as "major.minor.patch"
 * @rdma_regs: the RDMA register block (BAR0 + KITE_RDMA_REGS_OFFSET,
 *	KITE_RDMA_REGS_SIZE bytes), owned by the RDMA driver
 * @kernel_db: doorbell page 0 (BAR2), the kernel's doorbell page
 * @db_phys: bus address of doorbell page 0; page N is at
 *	@db_phys + N * KITE_DB_PAGE_SIZE, for mapping into user contexts
 * @db_pages: number of doorbell pages, KITE_DB_PAGES
 * @dm_phys: bus address of the device memory (BAR4), for mapping it into
 *	user contexts and the kernel
 * @dm_len: length of BAR4 in bytes; 0 if the function has none
 * @rtc: the function has the real-time clock (KITE_CAPS_RTC), which
 *	kite_en sets to the system's time, and its CQEs carry it
 * @first_vector: MSI-X table index of the first of them, which is what
 *	the device is told (vector i is at @first_vector + i)
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
	struct net_device *netdev;
	u32 hw_rev;
	char fw_version[KITE_FW_VERSION_LEN];
	void __iomem *rdma_regs;
	void __iomem *kernel_db;
	phys_addr_t db_phys;
	unsigned int db_pages;
	phys_addr_t dm_phys;
	resource_size_t dm_len;
	bool rtc;
	unsigned int first_vector;
	unsigned int num_vectors;
	int irqs[] __counted_by(num_vectors);
};

/**
 * struct kite_aux_driver - an RDMA driver for kite_en's auxiliary device
 * @adrv: the auxiliary driver
 * @event: called in process context, with the auxiliary device's lock held,
 *	while the driver is bound; may be NULL
 */
struct kite_aux_driver {
	struct auxiliary_driver adrv;
	void (*event)(struct kite_aux_dev *kadev, enum kite_aux_event event);
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

int kite_en_request_reset(struct kite_aux_dev *kadev);
/**
 * kite_en_clock_read() - read a 64-bit device clock split over two registers
 * @regs: the register block the offsets are relative to
 * @lo: the offset of the clock's bits 31:0
 * @hi: the offset of the clock's bits 63:32
 * @sts: system timestamps to take around the low half's read, or NULL
 *
 * Return: the clock's value; U64_MAX when the device does not answer, or
 * when its clock's high half changed at each of a few tries.
 */
u64 kite_en_clock_read(void __iomem *regs, u32 lo, u32 hi,
		       struct ptp_system_timestamp *sts);

#endif /* _LINUX_KITE_AUXDEV_H */
