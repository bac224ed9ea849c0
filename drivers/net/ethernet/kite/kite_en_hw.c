// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: register decoding, device reset
 * and resource policies.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/errno.h>
#include <linux/iopoll.h>
#include <linux/minmax.h>
#include <linux/pci.h>

#include "kite_en.h"

/* Interval between STATUS reads while waiting for the device. */
#define KITE_EN_POLL_US		1000

/**
 * kite_en_check_identity() - check that BAR0 belongs to a supported device
 * @id: value read from KITE_REG_ID
 * @hw_rev: value read from KITE_REG_HW_REV
 *
 * Return: 0 if the device speaks the interface this driver implements,
 * -ENODEV if the device is absent (all-ones reads), is not a Kite device, or
 * implements another major revision of the interface.
 */
int kite_en_check_identity(u32 id, u32 hw_rev)
{
	if (id != KITE_ID_MAGIC)
		return -ENODEV;
	if (FIELD_GET(KITE_HW_REV_MAJOR, hw_rev) != KITE_HW_REV_MAJOR_SUPPORTED)
		return -ENODEV;
	return 0;
}

/**
 * kite_en_status_to_errno() - classify a KITE_REG_STATUS value
 * @status: value read from KITE_REG_STATUS
 *
 * Return: 0 when the device is ready, -EAGAIN while it is still resetting
 * or booting, -EIO when it reports a fatal error, -ENODEV when the read
 * returned all ones (the function fell off the bus).
 */
int kite_en_status_to_errno(u32 status)
{
	if (status == U32_MAX)
		return -ENODEV;
	if (status & KITE_STATUS_FATAL)
		return -EIO;
	if ((status & (KITE_STATUS_READY | KITE_STATUS_RESETTING)) ==
	    KITE_STATUS_READY)
		return 0;
	return -EAGAIN;
}

/**
 * kite_en_status_bogus() - whether a KITE_REG_STATUS value read while the
 *	device runs makes no sense
 * @status: value read from KITE_REG_STATUS
 *
 * Return: true if reserved bits are set (all ones included), or if READY is
 * clear although neither a reset nor a fatal error is reported.
 */
bool kite_en_status_bogus(u32 status)
{
	const u32 defined = KITE_STATUS_READY | KITE_STATUS_FATAL |
			    KITE_STATUS_RESETTING | KITE_STATUS_LINK_UP |
			    KITE_STATUS_FATAL_CODE;

	if (status & ~defined)
		return true;
	return !(status & (KITE_STATUS_READY | KITE_STATUS_FATAL |
			   KITE_STATUS_RESETTING));
}

/**
 * kite_en_mac_from_regs() - decode the factory MAC address
 * @mac_hi: value read from KITE_REG_MAC_HI
 * @mac_lo: value read from KITE_REG_MAC_LO
 * @mac: ETH_ALEN bytes to fill, most significant byte first
 */
void kite_en_mac_from_regs(u32 mac_hi, u32 mac_lo, u8 *mac)
{
	u16 hi = FIELD_GET(KITE_MAC_HI_MASK, mac_hi);

	mac[0] = hi >> 8;
	mac[1] = hi & 0xff;
	mac[2] = mac_lo >> 24;
	mac[3] = (mac_lo >> 16) & 0xff;
	mac[4] = (mac_lo >> 8) & 0xff;
	mac[5] = mac_lo & 0xff;
}

/**
 * kite_en_fw_version() - format a KITE_REG_FW_VER value
 * @fw_ver: value read from KITE_REG_FW_VER
 * @buf: destination
 * @len: size of @buf; the string is truncated to fit
 */
void kite_en_fw_version(u32 fw_ver, char *buf, size_t len)
{
	snprintf(buf, len, "%lu.%lu.%lu",
		 FIELD_GET(KITE_FW_VER_MAJOR, fw_ver),
		 FIELD_GET(KITE_FW_VER_MINOR, fw_ver),
		 FIELD_GET(KITE_FW_VER_PATCH, fw_ver));
}

/**
 * kite_en_mac_to_regs() - encode a MAC address for KITE_REG_ETH_MAC_HI/LO
 * @mac: ETH_ALEN bytes, most significant byte first
 * @mac_hi: value for KITE_REG_ETH_MAC_HI
 * @mac_lo: value for KITE_REG_ETH_MAC_LO
 */
void kite_en_mac_to_regs(const u8 *mac, u32 *mac_hi, u32 *mac_lo)
{
	*mac_hi = FIELD_PREP(KITE_MAC_HI_MASK, mac[0] << 8 | mac[1]);
	*mac_lo = (u32)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5];
}

/**
 * kite_en_vectors_wanted() - number of MSI-X vectors to ask the PCI core for
 * @hw_vectors: vectors the function implements (KITE_CAPS_NUM_VECTORS)
 * @hw_queues: Ethernet queue pairs it implements (KITE_CAPS_NUM_QUEUES)
 * @online_cpus: number of online CPUs
 *
 * kite_en keeps KITE_EN_CORE_VECTORS for device events and wants one vector
 * per Ethernet queue pair, up to one per CPU. The RDMA driver wants one
 * vector for its control event queue plus one completion event queue per
 * CPU. The function's own limit caps the total.
 *
 * Return: the number of vectors to request, 0 if the function has too few
 * to run at all.
 */
unsigned int kite_en_vectors_wanted(unsigned int hw_vectors,
				    unsigned int hw_queues,
				    unsigned int online_cpus)
{
	unsigned int want = KITE_EN_CORE_VECTORS + min(hw_queues, online_cpus) +
			    1 + online_cpus;

	if (!hw_queues || hw_vectors < KITE_EN_CORE_VECTORS +
	    KITE_EN_MIN_ETH_VECTORS + KITE_EN_MIN_RDMA_VECTORS)
		return 0;
	return min(want, hw_vectors);
}

/**
 * kite_en_split_vectors() - divide the granted vectors
 * @granted: vectors the PCI core granted
 * @hw_queues: Ethernet queue pairs the function implements
 * @online_cpus: number of online CPUs
 * @vec: the result
 *
 * After kite_en's own vector, Ethernet gets one vector per queue pair (up
 * to one per CPU) as long as one is left for the RDMA driver; the RDMA
 * driver gets all the rest.
 *
 * Return: 0, or -ENOSPC if @granted cannot give each user one vector.
 */
int kite_en_split_vectors(unsigned int granted, unsigned int hw_queues,
			  unsigned int online_cpus, struct kite_en_vectors *vec)
{
	unsigned int left;

	if (granted < KITE_EN_CORE_VECTORS + KITE_EN_MIN_ETH_VECTORS +
	    KITE_EN_MIN_RDMA_VECTORS || !hw_queues)
		return -ENOSPC;
	left = granted - KITE_EN_CORE_VECTORS;
	vec->eth = min3(hw_queues, online_cpus ?: 1,
			left - KITE_EN_MIN_RDMA_VECTORS);
	vec->rdma = left - vec->eth;
	return 0;
}

/**
 * kite_en_ring_used() - descriptors posted and not yet completed
 * @tail: producer index (16-bit free-running counter)
 * @head: consumer index
 *
 * Return: @tail - @head modulo 2^16.
 */
unsigned int kite_en_ring_used(u16 tail, u16 head)
{
	return (u16)(tail - head);
}

static int kite_en_reset_once(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	u32 status;
	int err;

	kite_en_wr(en, KITE_REG_CTRL, KITE_CTRL_RESET);
	err = read_poll_timeout(kite_en_rd, status,
				kite_en_status_to_errno(status) != -EAGAIN,
				KITE_EN_POLL_US, KITE_RESET_TIMEOUT_MS * 1000,
				false, en, KITE_REG_STATUS);
	if (err) {
		dev_err(dev, "device not ready %u ms after reset (status %#x)\n",
			KITE_RESET_TIMEOUT_MS, status);
		return err;
	}
	err = kite_en_status_to_errno(status);
	if (err) {
		dev_err(dev, "device failed to reset (status %#x, fatal code %lu)\n",
			status, FIELD_GET(KITE_STATUS_FATAL_CODE, status));
		return err;
	}
	return 0;
}

/**
 * kite_en_reset() - reset the device and wait until it is ready
 * @en: the device
 *
 * Writes KITE_CTRL_RESET and polls KITE_REG_STATUS, sleeping, for at most
 * KITE_RESET_TIMEOUT_MS. The interface revision is checked against the one
 * read at probe (once more after a second reset if it differs: a read that
 * makes no sense), and the firmware version is re-read, since a reset may
 * have activated new firmware.
 *
 * Context: process context, may sleep.
 * Return: 0 on success, -ETIMEDOUT if the device never became ready, -EIO
 * if it reported a fatal error or another interface revision twice, -ENODEV
 * if it stopped answering.
 */
int kite_en_reset(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	unsigned int attempt;
	u32 hw_rev;
	int err;

	for (attempt = 0;; attempt++) {
		err = kite_en_reset_once(en);
		if (err)
			return err;
		/* The interface revision cannot change: once more if it did. */
		hw_rev = kite_en_rd(en, KITE_REG_HW_REV);
		if (!en->hw_rev || hw_rev == en->hw_rev)
			break;
		atomic64_inc(&en->bad_reg_version);
		dev_err(dev, "bad device data (reg-version): interface revision %#x after reset, %#x at probe%s\n",
			hw_rev, en->hw_rev,
			attempt ? ": giving up" : ": resetting again");
		if (attempt)
			return -EIO;
	}
	en->fw_ver = kite_en_rd(en, KITE_REG_FW_VER);
	kite_en_fw_version(en->fw_ver, en->fw_version, sizeof(en->fw_version));
	return 0;
}
