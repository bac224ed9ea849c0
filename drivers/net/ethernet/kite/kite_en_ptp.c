// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite NIC core driver: the PTP hardware clock
 *
 * With KITE_CAPS_RTC the device keeps a real-time clock in nanoseconds
 * (prm.rst, "Real-time clock") and stamps every CQE with it. kite_en
 * registers it as a PTP hardware clock (/dev/ptpN, ethtool -T): the driver
 * sets it to the system's time when the device comes up, and phc2sys or
 * ptp4l steer it from there, so that the wall-clock completion timestamps
 * the RDMA driver hands out follow the time the host keeps.
 *
 * Copyright (c) 2026 Kite
 */

#include <linux/bitfield.h>
#include <linux/kite/kite_hw.h>
#include <linux/pci.h>
#include <linux/ptp_clock_kernel.h>

#include "kite_en.h"

/*
 * Reads of a split clock before kite_en_clock_read() gives up: the high
 * half changes once every 4.3 seconds, so a second try always succeeds
 * on a device that works.
 */
#define KITE_EN_CLOCK_READ_TRIES	3

/*
 * kite_en_clock_read() (kernel-doc in auxdev.h): the device does not latch
 * the halves (prm.rst): read HI, LO and HI again, and start again when the
 * low half wrapped in between - a bounded number of times, so that a device
 * whose high half never holds still cannot keep the CPU here. A device that
 * does not answer reads all ones, U64_MAX, which no clock gets to.
 */
u64 kite_en_clock_read(void __iomem *regs, u32 lo, u32 hi,
		       struct ptp_system_timestamp *sts)
{
	u32 h0, h1, l;
	int tries;

	h1 = readl(regs + hi);
	for (tries = 0; tries < KITE_EN_CLOCK_READ_TRIES; tries++) {
		h0 = h1;
		ptp_read_system_prets(sts);
		l = readl(regs + lo);
		ptp_read_system_postts(sts);
		h1 = readl(regs + hi);
		if (h1 == h0)
			return (u64)h1 << 32 | l;
	}
	return U64_MAX;
}
EXPORT_SYMBOL_NS_GPL(kite_en_clock_read, "KITE");

/* Caller holds ptp_lock: the argument and the command go together. */
static void kite_en_rtc_cmd(struct kite_en_dev *en, u32 op, u64 arg)
{
	lockdep_assert_held(&en->ptp_lock);
	kite_en_wr(en, KITE_REG_RTC_ARG_LO, lower_32_bits(arg));
	kite_en_wr(en, KITE_REG_RTC_ARG_HI, upper_32_bits(arg));
	kite_en_wr(en, KITE_REG_RTC_CMD, FIELD_PREP(KITE_RTC_CMD_OP, op));
}

static struct kite_en_dev *kite_en_from_ptp(struct ptp_clock_info *info)
{
	return container_of(info, struct kite_en_dev, ptp_info);
}

static int kite_en_ptp_gettimex64(struct ptp_clock_info *info,
				  struct timespec64 *ts,
				  struct ptp_system_timestamp *sts)
{
	struct kite_en_dev *en = kite_en_from_ptp(info);
	u64 ns;

	ns = kite_en_clock_read(en->regs, KITE_REG_RTC_LO, KITE_REG_RTC_HI,
				sts);
	if (ns == U64_MAX)
		return -EIO;
	*ts = ns_to_timespec64(ns);
	return 0;
}

static int kite_en_ptp_settime64(struct ptp_clock_info *info,
				 const struct timespec64 *ts)
{
	struct kite_en_dev *en = kite_en_from_ptp(info);
	unsigned long flags;

	spin_lock_irqsave(&en->ptp_lock, flags);
	kite_en_rtc_cmd(en, KITE_RTC_OP_SET, timespec64_to_ns(ts));
	spin_unlock_irqrestore(&en->ptp_lock, flags);
	return 0;
}

static int kite_en_ptp_adjtime(struct ptp_clock_info *info, s64 delta)
{
	struct kite_en_dev *en = kite_en_from_ptp(info);
	unsigned long flags;

	spin_lock_irqsave(&en->ptp_lock, flags);
	kite_en_rtc_cmd(en, KITE_RTC_OP_ADJ, delta);
	spin_unlock_irqrestore(&en->ptp_lock, flags);
	return 0;
}

static int kite_en_ptp_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct kite_en_dev *en = kite_en_from_ptp(info);
	s32 ppb = scaled_ppm_to_ppb(scaled_ppm);
	unsigned long flags;

	/* The PTP core keeps ppb within max_adj: KITE_RTC_MAX_PPB. */
	spin_lock_irqsave(&en->ptp_lock, flags);
	en->ptp_ppb = ppb;
	kite_en_rtc_cmd(en, KITE_RTC_OP_FREQ, (u32)ppb);
	spin_unlock_irqrestore(&en->ptp_lock, flags);
	return 0;
}

static const struct ptp_clock_info kite_en_ptp_ops = {
	.owner = THIS_MODULE,
	.max_adj = KITE_RTC_MAX_PPB,
	.adjfine = kite_en_ptp_adjfine,
	.adjtime = kite_en_ptp_adjtime,
	.gettimex64 = kite_en_ptp_gettimex64,
	.settime64 = kite_en_ptp_settime64,
};

/**
 * kite_en_ptp_restore() - set the real-time clock after a reset
 * @en: the function
 *
 * A reset starts the device's clock again at 0 at its nominal rate: set
 * it to the system's time and give it back the rate offset it had, which
 * time synchronisation software will correct from there.
 */
void kite_en_ptp_restore(struct kite_en_dev *en)
{
	unsigned long flags;

	if (!en->rtc)
		return;
	spin_lock_irqsave(&en->ptp_lock, flags);
	kite_en_rtc_cmd(en, KITE_RTC_OP_SET, ktime_get_real_ns());
	kite_en_rtc_cmd(en, KITE_RTC_OP_FREQ, (u32)en->ptp_ppb);
	spin_unlock_irqrestore(&en->ptp_lock, flags);
}

/**
 * kite_en_ptp_create() - set the real-time clock, register it as a PHC
 * @en: the function, out of reset
 *
 * A function without KITE_CAPS_RTC has no PHC, nor has a kernel without
 * PTP clock support (the clock is still set to the system's time, for the
 * CQEs); neither is an error.
 *
 * Return: 0, or a negative errno from ptp_clock_register().
 */
int kite_en_ptp_create(struct kite_en_dev *en)
{
	struct device *dev = &en->pdev->dev;
	struct ptp_clock *ptp;

	spin_lock_init(&en->ptp_lock);
	en->rtc = kite_en_rd(en, KITE_REG_CAPS) & KITE_CAPS_RTC;
	if (!en->rtc)
		return 0;
	kite_en_ptp_restore(en);
	en->ptp_info = kite_en_ptp_ops;
	snprintf(en->ptp_info.name, sizeof(en->ptp_info.name), "kite %s",
		 pci_name(en->pdev));
	ptp = ptp_clock_register(&en->ptp_info, dev);
	if (IS_ERR(ptp)) {
		dev_err(dev, "cannot register the PTP clock: %pe\n", ptp);
		return PTR_ERR(ptp);
	}
	/* NULL: the kernel has no PTP clock support. */
	en->ptp = ptp;
	return 0;
}

/**
 * kite_en_ptp_destroy() - unregister the PHC, if there is one
 * @en: the function
 */
void kite_en_ptp_destroy(struct kite_en_dev *en)
{
	if (!en->ptp)
		return;
	ptp_clock_unregister(en->ptp);
	en->ptp = NULL;
}

/**
 * kite_en_ptp_index() - the PHC's index, for ethtool's timestamping info
 * @en: the function
 *
 * Return: N of /dev/ptpN, or -1 without a PHC.
 */
int kite_en_ptp_index(struct kite_en_dev *en)
{
	return en->ptp ? ptp_clock_index(en->ptp) : -1;
}
