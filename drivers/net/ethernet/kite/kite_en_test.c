// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_en's register decoding and resource policies.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>
#include <linux/bitfield.h>

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
	/* core vector + RDMA control EQ + one completion EQ per CPU */
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 2), 4);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 1), 3);
	/* capped by what the function implements */
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(KITE_MAX_VECTORS, 256),
			KITE_MAX_VECTORS);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(2, 8), 2);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(1, 8), 0);
	KUNIT_EXPECT_EQ(test, kite_en_vectors_wanted(0, 8), 0);

	KUNIT_EXPECT_EQ(test, kite_en_rdma_vectors(0), 0);
	KUNIT_EXPECT_EQ(test, kite_en_rdma_vectors(1), 0);
	KUNIT_EXPECT_EQ(test, kite_en_rdma_vectors(2), 1);
	KUNIT_EXPECT_EQ(test, kite_en_rdma_vectors(KITE_MAX_VECTORS),
			KITE_MAX_VECTORS - 1);
}

static struct kunit_case kite_en_hw_cases[] = {
	KUNIT_CASE(kite_en_test_identity),
	KUNIT_CASE(kite_en_test_status),
	KUNIT_CASE(kite_en_test_mac),
	KUNIT_CASE(kite_en_test_fw_version),
	KUNIT_CASE(kite_en_test_vectors),
	{}
};

static struct kunit_suite kite_en_hw_suite = {
	.name = "kite_en_hw",
	.test_cases = kite_en_hw_cases,
};

kunit_test_suite(kite_en_hw_suite);
