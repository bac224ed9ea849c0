// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_en's register decoding and resource policies, and
 * the fatal-error reporting through the devlink health reporter.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/io.h>
#include <linux/logic_iomem.h>
#include <linux/pci.h>
#include <net/devlink.h>

#include "kite_en.h"

static void kite_en_test_identity(struct kunit *test)
{
	u32 rev = FIELD_PREP(KITE_HW_REV_MAJOR, KITE_HW_REV_MAJOR_SUPPORTED) |
		  FIELD_PREP(KITE_HW_REV_MINOR, 7);

	KUNIT_EXPECT_EQ(test, kite_en_check_identity(KITE_ID_MAGIC, rev), 0);
	/* Minor revisions are compatible, major ones are not. */
	rev = FIELD_PREP(KITE_HW_REV_MAJOR, KITE_HW_REV_MAJOR_SUPPORTED + 1);
	KUNIT_EXPECT_EQ(test, kite_en_check_identity(KITE_ID_MAGIC, rev), -ENODEV);
	KUNIT_EXPECT_EQ(test, kite_en_check_identity(KITE_ID_MAGIC, 0), -ENODEV);
	rev = FIELD_PREP(KITE_HW_REV_MAJOR, KITE_HW_REV_MAJOR_SUPPORTED);
	KUNIT_EXPECT_EQ(test, kite_en_check_identity(0x4b495446, rev), -ENODEV);
	/* A function that fell off the bus reads all ones. */
	KUNIT_EXPECT_EQ(test, kite_en_check_identity(U32_MAX, U32_MAX), -ENODEV);
}

static void kite_en_test_status(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(KITE_STATUS_READY), 0);
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(0), -EAGAIN);
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(KITE_STATUS_RESETTING),
			-EAGAIN);
	/* READY is not trusted while a reset is still in progress. */
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(KITE_STATUS_READY |
						      KITE_STATUS_RESETTING),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(KITE_STATUS_FATAL), -EIO);
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(KITE_STATUS_READY |
		KITE_STATUS_FATAL | FIELD_PREP(KITE_STATUS_FATAL_CODE, 3)), -EIO);
	KUNIT_EXPECT_EQ(test, kite_en_status_to_errno(U32_MAX), -ENODEV);
}

/* STATUS values read while the device runs that make no sense. */
static void kite_en_test_status_bogus(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, kite_en_status_bogus(KITE_STATUS_READY));
	KUNIT_EXPECT_FALSE(test, kite_en_status_bogus(KITE_STATUS_READY |
						      KITE_STATUS_LINK_UP));
	KUNIT_EXPECT_FALSE(test, kite_en_status_bogus(KITE_STATUS_RESETTING));
	KUNIT_EXPECT_FALSE(test, kite_en_status_bogus(KITE_STATUS_FATAL |
		FIELD_PREP(KITE_STATUS_FATAL_CODE, 7)));
	/* Reserved bits, all ones, READY gone without a reason. */
	KUNIT_EXPECT_TRUE(test, kite_en_status_bogus(KITE_STATUS_READY | BIT(16)));
	KUNIT_EXPECT_TRUE(test, kite_en_status_bogus(BIT(31) | KITE_STATUS_LINK_UP));
	KUNIT_EXPECT_TRUE(test, kite_en_status_bogus(U32_MAX));
	KUNIT_EXPECT_TRUE(test, kite_en_status_bogus(0));
	KUNIT_EXPECT_TRUE(test, kite_en_status_bogus(KITE_STATUS_LINK_UP));
}

static void kite_en_test_mac(struct kunit *test)
{
	static const u8 expect[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	u8 mac[ETH_ALEN];

	kite_en_mac_from_regs(0x5254, 0x00123456, mac);
	KUNIT_EXPECT_MEMEQ(test, mac, expect, ETH_ALEN);
	/* Reserved upper bits of MAC_HI are ignored. */
	kite_en_mac_from_regs(0xffff5254, 0x00123456, mac);
	KUNIT_EXPECT_MEMEQ(test, mac, expect, ETH_ALEN);
}

static void kite_en_test_fw_version(struct kunit *test)
{
	char buf[KITE_FW_VERSION_LEN];
	char small[4];

	kite_en_fw_version(FIELD_PREP(KITE_FW_VER_MAJOR, 1) |
			   FIELD_PREP(KITE_FW_VER_MINOR, 2) |
			   FIELD_PREP(KITE_FW_VER_PATCH, 3), buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "1.2.3");
	kite_en_fw_version(U32_MAX, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "255.255.65535");
	kite_en_fw_version(U32_MAX, small, sizeof(small));
	KUNIT_EXPECT_STREQ(test, small, "255");
}

static void kite_en_test_vectors(struct kunit *test)
{
	struct kite_en_vectors vec;

	/* core + one queue per CPU + RDMA control EQ + one EQ per CPU */
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 4, 2), 6);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 4, 1), 4);
	/* queues capped by the function, EQs still one per CPU */
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 4, 8), 14);
	/* total capped by the function */
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 4, 256),
			KITE_MAX_VECTORS);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(3, 4, 8), 3);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(2, 4, 8), 0);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 0, 8), 0);

	KUNIT_ASSERT_EQ(test, kite_en_split_vectors(6, 4, 2, &vec), 0);
	KUNIT_EXPECT_EQ(test, vec.eth, 2);
	KUNIT_EXPECT_EQ(test, vec.rdma, 3);
	/* fewer granted: RDMA keeps one, Ethernet shrinks first */
	KUNIT_ASSERT_EQ(test, kite_en_split_vectors(3, 4, 2, &vec), 0);
	KUNIT_EXPECT_EQ(test, vec.eth, 1);
	KUNIT_EXPECT_EQ(test, vec.rdma, 1);
	KUNIT_ASSERT_EQ(test, kite_en_split_vectors(4, 4, 2, &vec), 0);
	KUNIT_EXPECT_EQ(test, vec.eth, 2);
	KUNIT_EXPECT_EQ(test, vec.rdma, 1);
	KUNIT_ASSERT_EQ(test, kite_en_split_vectors(KITE_MAX_VECTORS, 4, 256,
						    &vec), 0);
	KUNIT_EXPECT_EQ(test, vec.eth, 4);
	KUNIT_EXPECT_EQ(test, vec.rdma, KITE_MAX_VECTORS - 5);
	KUNIT_EXPECT_EQ(test, kite_en_split_vectors(2, 4, 2, &vec), -ENOSPC);
	KUNIT_EXPECT_EQ(test, kite_en_split_vectors(0, 4, 2, &vec), -ENOSPC);
	KUNIT_EXPECT_EQ(test, kite_en_split_vectors(8, 0, 2, &vec), -ENOSPC);
}

static void kite_en_test_mac_to_regs(struct kunit *test)
{
	static const u8 mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	u8 back[ETH_ALEN];
	u32 hi, lo;

	kite_en_mac_to_regs(mac, &hi, &lo);
	KUNIT_EXPECT_EQ(test, hi, 0x5254);
	KUNIT_EXPECT_EQ(test, lo, 0x00123456);
	kite_en_mac_from_regs(hi, lo, back);
	KUNIT_EXPECT_MEMEQ(test, back, mac, ETH_ALEN);
}

static void kite_en_test_ring_used(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_en_ring_used(0, 0), 0);
	KUNIT_EXPECT_EQ(test, kite_en_ring_used(5, 2), 3);
	/* across the 16-bit wrap */
	KUNIT_EXPECT_EQ(test, kite_en_ring_used(3, 0xfffe), 5);
	KUNIT_EXPECT_EQ(test, kite_en_ring_used(0, 0xf000), 0x1000);
}

/* The fake reset: counts the health reporter's recoveries. */
static atomic_t kite_en_test_resets = ATOMIC_INIT(0);

static void kite_en_test_reset_work(struct work_struct *work)
{
	atomic_inc(&kite_en_test_resets);
}

/*
 * The fake register file. Where readl() and writel() are plain loads and
 * stores, it is memory the driver's register pointer points at. Under
 * UML with PCI (the KUnit default), they go through lib/logic_iomem.c,
 * which WARNs on and returns all ones from any address that is not in a
 * region registered with it: there the file is such a region, registered
 * once (it cannot be unregistered, so only when this test is built in)
 * and mapped with ioremap().
 */
#define KITE_EN_TEST_REGS_LEN	(KITE_REG_ETH_MAC_HI + 4)

#if IS_ENABLED(CONFIG_INDIRECT_IOMEM)
#define KITE_EN_TEST_REGS_BASE	0x7e000000

static u32 *kite_en_test_regfile;

static unsigned long kite_en_test_io_read(void *priv, unsigned int offset,
					  int size)
{
	if (size != 4 || offset % 4 || offset >= KITE_EN_TEST_REGS_LEN ||
	    !kite_en_test_regfile)
		return ~0UL;
	return READ_ONCE(kite_en_test_regfile[offset / 4]);
}

static void kite_en_test_io_write(void *priv, unsigned int offset, int size,
				  unsigned long val)
{
	if (size == 4 && !(offset % 4) && offset < KITE_EN_TEST_REGS_LEN &&
	    kite_en_test_regfile)
		WRITE_ONCE(kite_en_test_regfile[offset / 4], val);
}

static const struct logic_iomem_ops kite_en_test_io_ops = {
	.read = kite_en_test_io_read,
	.write = kite_en_test_io_write,
};

static long kite_en_test_io_map(unsigned long offset, size_t size,
				const struct logic_iomem_ops **ops, void **priv)
{
	*ops = &kite_en_test_io_ops;
	return 0;
}

static const struct logic_iomem_region_ops kite_en_test_io_region = {
	.map = kite_en_test_io_map,
};

static struct resource kite_en_test_io_res =
	DEFINE_RES_MEM_NAMED(KITE_EN_TEST_REGS_BASE, KITE_EN_TEST_REGS_LEN,
			     "kite_en_test_regs");

static void kite_en_test_regs_unmap(void *data)
{
	iounmap((void __iomem __force *)data);
	kite_en_test_regfile = NULL;
}

static void __iomem *kite_en_test_regs_map(struct kunit *test, u32 *regs)
{
	static bool registered;
	void __iomem *io;

	if (!IS_BUILTIN(CONFIG_KITE_EN))
		kunit_skip(test, "UML: the fake registers need kite_en built in");
	if (!registered) {
		KUNIT_ASSERT_EQ(test, logic_iomem_add_region(&kite_en_test_io_res,
							     &kite_en_test_io_region), 0);
		registered = true;
	}
	io = ioremap(KITE_EN_TEST_REGS_BASE, KITE_EN_TEST_REGS_LEN);
	KUNIT_ASSERT_NOT_NULL(test, io);
	kite_en_test_regfile = regs;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kite_en_test_regs_unmap,
							(void __force *)io), 0);
	return io;
}
#else
static void __iomem *kite_en_test_regs_map(struct kunit *test, u32 *regs)
{
	return (void __iomem __force *)regs;
}
#endif

static void kite_en_test_health_exit(void *data)
{
	struct kite_en_dev *en = data;

	kite_en_health_destroy(en);
	devlink_unregister(en->devlink);
	kite_en_devlink_free(en);
}

/*
 * kite_en_fatal() and the "fw_fatal" reporter, on a registered devlink
 * instance with a fake register file and a fake reset: a fatal error is
 * reported once until the reset that recovers from it has completed, the
 * reporter's automatic recovery asks for that reset unless one is under
 * way, and nothing is reported while the device is being removed.
 */
static void kite_en_test_health(struct kunit *test)
{
	struct kite_en_dev *en;
	struct pci_dev *pdev;
	struct device *dev;
	void __iomem *io;
	u32 *regs;

	dev = kunit_device_register(test, "kite_en_health");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	pdev = kunit_kzalloc(test, sizeof(*pdev), GFP_KERNEL);
	regs = kunit_kzalloc(test, KITE_EN_TEST_REGS_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pdev);
	KUNIT_ASSERT_NOT_NULL(test, regs);
	pdev->dev.init_name = "kite_en_health";
	io = kite_en_test_regs_map(test, regs);
	en = kite_en_devlink_alloc(dev);
	KUNIT_ASSERT_NOT_NULL(test, en);
	en->pdev = pdev;
	en->regs = io;
	mutex_init(&en->rdma_lock);
	INIT_WORK(&en->reset_work, kite_en_test_reset_work);
	devlink_register(en->devlink);
	if (kite_en_health_create(en)) {
		devlink_unregister(en->devlink);
		kite_en_devlink_free(en);
		KUNIT_FAIL(test, "no health reporter");
		return;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kite_en_test_health_exit, en), 0);
	atomic_set(&kite_en_test_resets, 0);
	regs[KITE_REG_STATUS / 4] = KITE_STATUS_READY | KITE_STATUS_FATAL |
				    FIELD_PREP(KITE_STATUS_FATAL_CODE, 5);
	/* The driver reads the fake register file (the reporter's dump does). */
	KUNIT_EXPECT_EQ(test, kite_en_rd(en, KITE_REG_STATUS),
			regs[KITE_REG_STATUS / 4]);

	/* Reported and recovered by a reset. */
	kite_en_fatal(en, "kunit: fatal error 5");
	flush_work(&en->reset_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&kite_en_test_resets), 1);
	KUNIT_EXPECT_TRUE(test, test_bit(0, &en->fatal_seen));

	/* Seen again before the reset completed: not reported again. */
	kite_en_fatal(en, "kunit: fatal error 5 again");
	flush_work(&en->reset_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&kite_en_test_resets), 1);

	/* After the reset (which clears fatal_seen) a new error counts. */
	clear_bit(0, &en->fatal_seen);
	kite_en_fatal(en, "kunit: fatal error after the reset");
	flush_work(&en->reset_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&kite_en_test_resets), 2);

	/* A reset under way is the recovery: no second one is queued. */
	clear_bit(0, &en->fatal_seen);
	WRITE_ONCE(en->resetting, true);
	kite_en_fatal(en, "kunit: fatal error during a reset");
	flush_work(&en->reset_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&kite_en_test_resets), 2);
	KUNIT_EXPECT_TRUE(test, test_bit(0, &en->fatal_seen));
	WRITE_ONCE(en->resetting, false);

	/* While the device is removed nothing is reported. */
	clear_bit(0, &en->fatal_seen);
	WRITE_ONCE(en->removing, true);
	kite_en_fatal(en, "kunit: fatal error during removal");
	flush_work(&en->reset_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&kite_en_test_resets), 2);
	KUNIT_EXPECT_FALSE(test, test_bit(0, &en->fatal_seen));
}

static struct kunit_case kite_en_hw_cases[] = {
	KUNIT_CASE(kite_en_test_identity),
	KUNIT_CASE(kite_en_test_status),
	KUNIT_CASE(kite_en_test_status_bogus),
	KUNIT_CASE(kite_en_test_mac),
	KUNIT_CASE(kite_en_test_fw_version),
	KUNIT_CASE(kite_en_test_vectors),
	KUNIT_CASE(kite_en_test_mac_to_regs),
	KUNIT_CASE(kite_en_test_ring_used),
	KUNIT_CASE(kite_en_test_health),
	{}
};

static struct kunit_suite kite_en_hw_suite = {
	.name = "kite_en_hw",
	.test_cases = kite_en_hw_cases,
};

kunit_test_suite(kite_en_hw_suite);
