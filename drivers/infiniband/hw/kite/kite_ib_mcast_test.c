// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's multicast commands: the ATTACH_MCAST and
 * DETACH_MCAST input encoding, and the GIDs and QPNs it refuses.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>

#include "kite_ib.h"

static void kite_ib_test_gid(union ib_gid *gid, const u8 *raw)
{
	memcpy(gid->raw, raw, sizeof(gid->raw));
}

static void kite_ib_test_mcast_ipv4(struct kunit *test)
{
	static const u8 raw[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				    239, 1, 2, 3 };
	struct kite_cmd_mcast in;
	union ib_gid gid;

	kite_ib_test_gid(&gid, raw);
	memset(&in, 0xa5, sizeof(in));
	KUNIT_ASSERT_EQ(test, kite_ib_mcast_in(&in, 0x123456, &gid), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.qpn), 0x123456u);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.rsvd), 0u);
	/* The GID as on the wire: network byte order, untouched. */
	KUNIT_EXPECT_MEMEQ(test, in.gid, raw, sizeof(raw));
	KUNIT_EXPECT_EQ(test, sizeof(in), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct kite_cmd_mcast, gid), 8);
}

static void kite_ib_test_mcast_ipv6(struct kunit *test)
{
	static const u8 raw[16] = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				    0, 0, 0x12, 0x34 };
	struct kite_cmd_mcast in;
	union ib_gid gid;

	kite_ib_test_gid(&gid, raw);
	KUNIT_ASSERT_EQ(test, kite_ib_mcast_in(&in, 2, &gid), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.qpn), 2u);
	KUNIT_EXPECT_MEMEQ(test, in.gid, raw, sizeof(raw));
}

static void kite_ib_test_mcast_refused(struct kunit *test)
{
	static const u8 v4_unicast[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
					   0xff, 10, 0, 0, 1 };
	static const u8 v4_class_e[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
					   0xff, 240, 0, 0, 1 };
	static const u8 v6_link[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 1 };
	static const u8 v4_mc[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				      224, 0, 0, 1 };
	struct kite_cmd_mcast in;
	union ib_gid gid;

	kite_ib_test_gid(&gid, v4_unicast);
	KUNIT_EXPECT_EQ(test, kite_ib_mcast_in(&in, 2, &gid), -EINVAL);
	kite_ib_test_gid(&gid, v4_class_e);
	KUNIT_EXPECT_EQ(test, kite_ib_mcast_in(&in, 2, &gid), -EINVAL);
	kite_ib_test_gid(&gid, v6_link);
	KUNIT_EXPECT_EQ(test, kite_ib_mcast_in(&in, 2, &gid), -EINVAL);
	memset(&gid, 0, sizeof(gid));
	KUNIT_EXPECT_EQ(test, kite_ib_mcast_in(&in, 2, &gid), -EINVAL);
	/* A multicast GID, but a QPN the device cannot have. */
	kite_ib_test_gid(&gid, v4_mc);
	KUNIT_EXPECT_EQ(test, kite_ib_mcast_in(&in, KITE_MCAST_QPN + 1, &gid),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_mcast_in(&in, 2, &gid), 0);
}

static struct kunit_case kite_ib_mcast_test_cases[] = {
	KUNIT_CASE(kite_ib_test_mcast_ipv4),
	KUNIT_CASE(kite_ib_test_mcast_ipv6),
	KUNIT_CASE(kite_ib_test_mcast_refused),
	{}
};

static struct kunit_suite kite_ib_mcast_test_suite = {
	.name = "kite_ib_mcast",
	.test_cases = kite_ib_mcast_test_cases,
};

kunit_test_suite(kite_ib_mcast_test_suite);
