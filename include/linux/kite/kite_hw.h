/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Kite NIC hardware programming interface.
 *
 * Register offsets and field masks of the Kite PCIe function. This header is
 * the single definition of the hardware interface: kite_en, kite_ib and the
 * QEMU device model all compile it. The Programmer's Reference
 * (Documentation/networking/device_drivers/ethernet/kite/prm.rst) describes
 * every item defined here.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _LINUX_KITE_HW_H
#define _LINUX_KITE_HW_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/types.h>
#endif

#define PCI_VENDOR_ID_KITE		0x1ee7
#define PCI_DEVICE_ID_KITE_NIC		0x4b01

/* BAR0: registers, MSI-X table and PBA. */
#define KITE_BAR_REGS			0
#define KITE_BAR_REGS_SIZE		0x4000
#define KITE_REGS_SIZE			0x1000
#define KITE_MSIX_TABLE_OFFSET		0x2000
#define KITE_MSIX_PBA_OFFSET		0x3000
/* MSI-X vectors the function implements. */
#define KITE_MAX_VECTORS		64

/* RO: identification, always KITE_ID_MAGIC. */
#define KITE_REG_ID			0x000
#define KITE_ID_MAGIC			0x4b495445	/* "KITE" */

/* RO: revision of this programming interface. */
#define KITE_REG_HW_REV			0x004
#define KITE_HW_REV_MAJOR		GENMASK(31, 16)
#define KITE_HW_REV_MINOR		GENMASK(15, 0)
/* The interface major revision the drivers implement. */
#define KITE_HW_REV_MAJOR_SUPPORTED	1

/* RO: firmware version, valid while KITE_STATUS_READY is set. */
#define KITE_REG_FW_VER			0x008
#define KITE_FW_VER_MAJOR		GENMASK(31, 24)
#define KITE_FW_VER_MINOR		GENMASK(23, 16)
#define KITE_FW_VER_PATCH		GENMASK(15, 0)

/* RO: function capabilities. */
#define KITE_REG_CAPS			0x00c
#define KITE_CAPS_NUM_VECTORS		GENMASK(7, 0)

/* RO: device status. */
#define KITE_REG_STATUS			0x010
#define KITE_STATUS_READY		BIT(0)
#define KITE_STATUS_FATAL		BIT(1)
#define KITE_STATUS_RESETTING		BIT(2)
#define KITE_STATUS_FATAL_CODE		GENMASK(15, 8)

/* WO: device control. Bits are self-clearing and read as zero. */
#define KITE_REG_CTRL			0x014
#define KITE_CTRL_RESET			BIT(0)

/* WO: raise the MSI-X vector written (interrupt self-test). */
#define KITE_REG_INTR_TEST		0x018
#define KITE_INTR_TEST_VECTOR		GENMASK(7, 0)

/* RO: the port's factory MAC address. */
#define KITE_REG_MAC_LO			0x020	/* bytes 2..5, byte 2 in 31:24 */
#define KITE_REG_MAC_HI			0x024	/* bytes 0..1, byte 0 in 15:8 */
#define KITE_MAC_HI_MASK		GENMASK(15, 0)

/* RO: board serial number. */
#define KITE_REG_SERIAL_LO		0x028
#define KITE_REG_SERIAL_HI		0x02c

/*
 * Time the device may take from a reset (KITE_CTRL_RESET, FLR or power-on)
 * until it sets KITE_STATUS_READY. A driver gives up after this long.
 */
#define KITE_RESET_TIMEOUT_MS		2000

#endif /* _LINUX_KITE_HW_H */
