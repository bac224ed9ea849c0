// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's hardware counters: QUERY_STATS output into
 * the core's counter array, and a device that claims more counters than
 * exist.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>

#include "kite_ib.h"

static void kite_ib_test_stats_fill(struct kunit *test)
{
	__le64 out[KITE_STAT_COUNT];
	u64 value[KITE_STAT_COUNT];
	u32 i;

	for (i = 0; i < KITE_STAT_COUNT; i++)
		out[i] = cpu_to_le64(0x0102030405060000ull + i);
	memset(value, 0xff, sizeof(value));
	KUNIT_EXPECT_EQ(test, kite_ib_stats_fill(out, KITE_STAT_COUNT, value),
			KITE_STAT_COUNT);
	KUNIT_EXPECT_EQ(test, value[0], 0x0102030405060000ull);
	KUNIT_EXPECT_EQ(test, value[15], 0x010203040506000full);

	/* An older device with fewer counters: the rest stay untouched. */
	memset(value, 0, sizeof(value));
	KUNIT_EXPECT_EQ(test, kite_ib_stats_fill(out, 3, value), 3);
	KUNIT_EXPECT_EQ(test, value[2], 0x0102030405060002ull);
	KUNIT_EXPECT_EQ(test, value[3], 0ull);
}

static void kite_ib_test_stats_bad_count(struct kunit *test)
{
	__le64 out[KITE_STAT_COUNT + 1] = {};
	u64 value[KITE_STAT_COUNT] = {};

	KUNIT_EXPECT_EQ(test,
			kite_ib_stats_fill(out, KITE_STAT_COUNT + 1, value),
			-EIO);
	KUNIT_EXPECT_EQ(test, kite_ib_stats_fill(out, U32_MAX, value), -EIO);
}

static struct kunit_case kite_ib_res_test_cases[] = {
	KUNIT_CASE(kite_ib_test_stats_fill),
	KUNIT_CASE(kite_ib_test_stats_bad_count),
	{}
};

static struct kunit_suite kite_ib_res_test_suite = {
	.name = "kite_ib_res",
	.test_cases = kite_ib_res_test_cases,
};

kunit_test_suite(kite_ib_res_test_suite);
