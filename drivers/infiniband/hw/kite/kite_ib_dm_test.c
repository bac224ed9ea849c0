// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's device memory: what an ibv_alloc_dm() request
 * takes of it (whole pages, the alignment asked for) and what is refused.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>

#include "kite_ib.h"

#define DM_SIZE		(64 * PAGE_SIZE)

static void kite_ib_test_dm_pages(struct kunit *test)
{
	size_t size, align;

	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, 100, 0, &size, &align), 0);
	KUNIT_EXPECT_EQ(test, size, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, align, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, PAGE_SIZE + 4, 6, &size,
					       &align), 0);
	KUNIT_EXPECT_EQ(test, size, 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, align, PAGE_SIZE);
	/* All of it, at an alignment of all of it. */
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, DM_SIZE,
					       ilog2(DM_SIZE), &size, &align), 0);
	KUNIT_EXPECT_EQ(test, size, DM_SIZE);
	KUNIT_EXPECT_EQ(test, align, DM_SIZE);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, 8, PAGE_SHIFT + 1,
					       &size, &align), 0);
	KUNIT_EXPECT_EQ(test, align, 2 * PAGE_SIZE);
}

static void kite_ib_test_dm_pages_refused(struct kunit *test)
{
	size_t size = 0, align = 0;

	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(0, 100, 0, &size, &align),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, 0, 0, &size, &align),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, DM_SIZE + 1, 0, &size,
					       &align), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, U64_MAX, 0, &size,
					       &align), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, 100,
					       ilog2(DM_SIZE) + 1, &size,
					       &align), -EINVAL);
	/* Shift counts that would be undefined in C. */
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, 100, 64, &size, &align),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_dm_pages(DM_SIZE, 100, U32_MAX, &size,
					       &align), -EINVAL);
	/* Nothing written on a refusal. */
	KUNIT_EXPECT_EQ(test, size, 0);
	KUNIT_EXPECT_EQ(test, align, 0);
}

static struct kunit_case kite_ib_dm_test_cases[] = {
	KUNIT_CASE(kite_ib_test_dm_pages),
	KUNIT_CASE(kite_ib_test_dm_pages_refused),
	{}
};

static struct kunit_suite kite_ib_dm_test_suite = {
	.name = "kite_ib_dm",
	.test_cases = kite_ib_dm_test_cases,
};

kunit_test_suite(kite_ib_dm_test_suite);
