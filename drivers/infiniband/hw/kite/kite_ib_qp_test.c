// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's QP helpers: the WQE stride a queue needs, the
 * SQ/RQ doorbell word and the queue-full arithmetic.
 *
 * Expected values are computed here from the segment sizes of prm_wqe.rst
 * (control 16, UD address vector 48, remote address + atomic 32, REG_MR
 * 40, SGE 16, receive header 16), not by the driver.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>
#include <linux/bitfield.h>

#include "kite_ib.h"

static void kite_qp_test_stride_rc(struct kunit *test)
{
	/* 16 + 40 + 16 = 72 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 1, 0), 128);
	/* 16 + 40 + 0 = 56: the minimum stride */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 0, 0), 64);
	/* 16 + 40 + 4 * 16 = 120 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 4, 0), 128);
	/* 16 + 40 + 5 * 16 = 136 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 5, 0), 256);
	/* inline larger than the SGEs: 16 + 40 + 72 = 128 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 1, 72), 128);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 1, 73), 256);
	/* SGEs larger than the inline data */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 8, 64), 256);
	/* the largest inline: 16 + 40 + 256 = 312 */
	KUNIT_EXPECT_EQ(test,
			kite_ib_wq_stride(true, KITE_QPT_RC, 8, KITE_MAX_INLINE),
			512);
}

/* UC WQEs have the RC layout: the same strides. */
static void kite_qp_test_stride_uc(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UC, 0, 0), 64);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UC, 1, 0), 128);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UC, 5, 0), 256);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UC, 1, 73), 256);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_UC, 3, 0), 64);
	/* 7 is no QP type */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, 7, 1, 0), -EINVAL);
}

/*
 * An XRC initiator's send WQEs have the RC layout; it has no receive
 * queue, and an XRC target no queue at all.
 */
static void kite_qp_test_stride_xrc(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_XRC_INI, 0, 0),
			64);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_XRC_INI, 1, 0),
			128);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_XRC_INI, 1, 73),
			256);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_XRC_INI, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_XRC_TGT, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_XRC_TGT, 1, 0),
			-EINVAL);
}

static void kite_qp_test_stride_ud(struct kunit *test)
{
	/* 16 + 48 + 0 = 64 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 0, 0), 64);
	/* 16 + 48 + 16 = 80 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 1, 0), 128);
	/* prm_qp.rst: a UD SEND with 4 SGEs needs 128 bytes */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 4, 0), 128);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 4, 65), 256);
	/* GSI WQEs have the UD layout */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_GSI, 4, 0), 128);
	KUNIT_EXPECT_EQ(test,
			kite_ib_wq_stride(true, KITE_QPT_GSI, 8, KITE_MAX_INLINE),
			512);
}

static void kite_qp_test_stride_recv(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_RC, 0, 0), 64);
	/* 16 + 3 * 16 = 64 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_RC, 3, 0), 64);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_UD, 4, 0), 128);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_UD, 8, 0), 256);
	/* receive queues ignore the inline size */
	KUNIT_EXPECT_EQ(test,
			kite_ib_wq_stride(false, KITE_QPT_RC, 1, KITE_MAX_INLINE),
			64);
}

static void kite_qp_test_stride_limits(struct kunit *test)
{
	/* 16 + 63 * 16 = 1024: the largest stride, exactly */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_RC, 63, 0),
			1024);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, KITE_QPT_RC, 64, 0),
			-EINVAL);
	/* 16 + 48 + 960 = 1024 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 60, 0),
			1024);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 61, 0),
			-EINVAL);
	/* 16 + 40 + 968 = 1024 */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 0, 968),
			1024);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, 0, 969),
			-EINVAL);
	/* no overflow with absurd requests */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_RC, U32_MAX, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, KITE_QPT_UD, 0, U32_MAX),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			kite_ib_wq_stride(false, KITE_QPT_UD, U32_MAX, 0),
			-EINVAL);
	/* unknown QP types */
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(true, 0, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_wq_stride(false, 5, 1, 0), -EINVAL);
}

static void kite_qp_test_doorbell(struct kunit *test)
{
	/* prm_doorbells.rst: the SQ of QP 5 with producer counter 0x1234 */
	KUNIT_EXPECT_EQ(test, kite_ib_qp_db(5, KITE_DB_TYPE_SQ, 0x1234),
			0x0000123401000005ULL);
	KUNIT_EXPECT_EQ(test, kite_ib_qp_db(5, KITE_DB_TYPE_RQ, 0x1234),
			0x0000123402000005ULL);
	/* the producer counter is sent modulo 2^16 */
	KUNIT_EXPECT_EQ(test, kite_ib_qp_db(1, KITE_DB_TYPE_SQ, 0x12345678),
			0x0000567801000001ULL);
	KUNIT_EXPECT_EQ(test, kite_ib_qp_db(1, KITE_DB_TYPE_RQ, 0x10000),
			0x0000000002000001ULL);
	/* the largest QPN; nothing spills into the type or reserved bits */
	KUNIT_EXPECT_EQ(test,
			kite_ib_qp_db(KITE_OBJ_MASK, KITE_DB_TYPE_RQ, 0xffff),
			0x0000ffff02ffffffULL);
	KUNIT_EXPECT_EQ(test,
			FIELD_GET(GENMASK_ULL(63, 48),
				  kite_ib_qp_db(U32_MAX, KITE_DB_TYPE_SQ,
						U32_MAX)),
			0ULL);
	KUNIT_EXPECT_EQ(test,
			FIELD_GET(KITE_DB_TYPE,
				  kite_ib_qp_db(U32_MAX, KITE_DB_TYPE_SQ,
						U32_MAX)),
			(u64)KITE_DB_TYPE_SQ);
}

static void kite_qp_test_full(struct kunit *test)
{
	/* empty, partly used and full */
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0, 0, 2));
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(1, 0, 2));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(2, 0, 2));
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(4095, 0, 4096));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(4096, 0, 4096));

	/* free-running 32-bit counters across the 32-bit wrap */
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(2, U32_MAX - 4, 8));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(3, U32_MAX - 4, 8));

	/* a 32-bit producer against a 16-bit consumer index (wqe_idx) */
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0x10003, 0xfffc, 8));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(0x10004, 0xfffc, 8));
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0x2fffe, 0xfffe, 4096));
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0x20ffe, 0xffff, 4096));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(0x20fff, 0xffff, 4096));

	/* both at the 16-bit wrap, and the free-running counters beyond */
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0xffff, 0xffff, 64));
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0x10000, 0xffff, 64));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(0x1003f, 0xffff, 64));
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(0x3003f, 0x2ffff, 64));
	KUNIT_EXPECT_FALSE(test, kite_ib_wq_full(0x3003e, 0x2ffff, 64));

	/* more outstanding than the depth (corrupt counters): full */
	KUNIT_EXPECT_TRUE(test, kite_ib_wq_full(100, 0, 64));
}

static void kite_qp_test_srq_stride(struct kunit *test)
{
	/* the 16-byte header and 16-byte data segments, at least 64 bytes */
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(0), 64);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(1), 64);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(3), 64);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(4), 128);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(KITE_MAX_SGE), 256);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(63), 1024);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(64), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_stride(U32_MAX), -EINVAL);
}

static void kite_qp_test_srq_doorbell(struct kunit *test)
{
	/* prm_srq.rst: type 5, the SRQN in OBJ, the producer counter in PI */
	KUNIT_EXPECT_EQ(test, kite_ib_srq_db(3, 0x1234), 0x0000123405000003ULL);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_db(3, 0x12345678),
			0x0000567805000003ULL);
	KUNIT_EXPECT_EQ(test, kite_ib_srq_db(U32_MAX, U32_MAX),
			0x0000ffff05ffffffULL);
}

static void kite_qp_test_srq_complete(struct kunit *test)
{
	struct kite_ib_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	unsigned long busy[1] = {};
	u64 wr_id[4] = { 10, 11, 12, 13 };
	u32 len[4] = { 100, 101, 102, 103 };
	u16 free[4] = {};
	u64 id = 0;
	u32 l = 0;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	spin_lock_init(&srq->lock);
	srq->hwq.depth = 4;
	srq->ntags = 4;
	srq->wr_id = wr_id;
	srq->len = len;
	srq->busy = busy;
	srq->free = free;
	srq->nfree = 2;
	srq->outstanding = 2;
	__set_bit(1, busy);
	__set_bit(3, busy);

	/* an outstanding tag completes once */
	KUNIT_EXPECT_TRUE(test, kite_ib_srq_complete(srq, 3, &id, &l));
	KUNIT_EXPECT_EQ(test, id, 13ULL);
	KUNIT_EXPECT_EQ(test, l, 103U);
	KUNIT_EXPECT_EQ(test, srq->outstanding, 1U);
	KUNIT_EXPECT_EQ(test, srq->nfree, 3U);
	KUNIT_EXPECT_EQ(test, free[2], 3);
	KUNIT_EXPECT_FALSE(test, kite_ib_srq_complete(srq, 3, &id, &l));
	/* tags never posted, and beyond the depth, are refused */
	KUNIT_EXPECT_FALSE(test, kite_ib_srq_complete(srq, 0, &id, &l));
	KUNIT_EXPECT_FALSE(test, kite_ib_srq_complete(srq, 4, &id, &l));
	KUNIT_EXPECT_FALSE(test, kite_ib_srq_complete(srq, 0xffff, &id, &l));
	KUNIT_EXPECT_EQ(test, srq->outstanding, 1U);
	KUNIT_EXPECT_TRUE(test, kite_ib_srq_complete(srq, 1, &id, &l));
	KUNIT_EXPECT_EQ(test, id, 11ULL);
	KUNIT_EXPECT_EQ(test, srq->outstanding, 0U);
}

static struct kunit_case kite_ib_qp_test_cases[] = {
	KUNIT_CASE(kite_qp_test_srq_stride),
	KUNIT_CASE(kite_qp_test_srq_doorbell),
	KUNIT_CASE(kite_qp_test_srq_complete),
	KUNIT_CASE(kite_qp_test_stride_rc),
	KUNIT_CASE(kite_qp_test_stride_uc),
	KUNIT_CASE(kite_qp_test_stride_xrc),
	KUNIT_CASE(kite_qp_test_stride_ud),
	KUNIT_CASE(kite_qp_test_stride_recv),
	KUNIT_CASE(kite_qp_test_stride_limits),
	KUNIT_CASE(kite_qp_test_doorbell),
	KUNIT_CASE(kite_qp_test_full),
	{}
};

static struct kunit_suite kite_ib_qp_test_suite = {
	.name = "kite_ib_qp",
	.test_cases = kite_ib_qp_test_cases,
};

kunit_test_suite(kite_ib_qp_test_suite);
