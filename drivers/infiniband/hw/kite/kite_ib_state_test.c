// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's device-loss and recovery state: the device
 * status page user contexts map (ALIVE until the device fails or goes
 * away), and a QP's queues starting over when it is reset, from ERROR
 * too, to be reused.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>

#include "kite_ib.h"

static void kite_state_test_status_page(struct kunit *test)
{
	struct kite_ib_dev *dev;

	dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	/* Without a page (probe failed before it): nothing to clear. */
	kite_ib_status_set_dead(dev);

	KUNIT_ASSERT_EQ(test, kite_ib_status_alloc(dev), 0);
	KUNIT_EXPECT_EQ(test, dev->status->state, KITE_IB_DEV_STATE_ALIVE);
	KUNIT_EXPECT_EQ(test, dev->status->reserved, 0);
	KUNIT_EXPECT_EQ(test, offset_in_page(dev->status), 0);

	kite_ib_status_set_dead(dev);
	KUNIT_EXPECT_EQ(test, dev->status->state, 0);
	/* Dead stays dead. */
	kite_ib_status_set_dead(dev);
	KUNIT_EXPECT_EQ(test, dev->status->state, 0);
	kite_ib_status_free(dev);
	KUNIT_EXPECT_NULL(test, dev->status);
}

/*
 * A fatal device error clears the page at once: user space stops waiting
 * for completions before the device is unregistered. An unregistered
 * device (reference count 0) gets no event dispatched.
 */
static void kite_state_test_fatal_clears_status(struct kunit *test)
{
	struct kite_ib_dev *dev;

	dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_EQ(test, kite_ib_status_alloc(dev), 0);
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	kite_ib_guard_init(dev);
	kite_ib_dispatch_fatal(dev);
	KUNIT_EXPECT_TRUE(test, dev->fatal);
	KUNIT_EXPECT_EQ(test, dev->status->state, 0);
	kite_ib_guard_stop(dev);
	kite_ib_status_free(dev);
}

/* The ABI: the state word first, and a page's worth of room. */
static void kite_state_test_status_abi(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kite_ib_dev_status, state), 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct kite_ib_dev_status), 8);
	KUNIT_EXPECT_NE(test, KITE_IB_DEV_STATE_ALIVE, 0);
	/* An older library's response ends with the doorbell page. */
	KUNIT_EXPECT_EQ(test, offsetofend(struct kite_ib_alloc_ucontext_resp,
					  db_mmap_offset), 16);
	/* One that ends with the status page still gets it. */
	KUNIT_EXPECT_EQ(test, offsetofend(struct kite_ib_alloc_ucontext_resp,
					  status_mmap_offset), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct kite_ib_alloc_ucontext_resp,
				       caps), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct kite_ib_alloc_ucontext_resp), 40);
}

/* A kernel QP with one-page rings, both queues used and counters moved. */
static struct kite_ib_qp *kite_state_test_qp(struct kunit *test, u32 uctx)
{
	struct kite_ib_qp *qp;
	struct kite_ib_wq *wq[2];
	int i;

	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	wq[0] = &qp->sq;
	wq[1] = &qp->rq;
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	for (i = 0; i < 2; i++) {
		wq[i]->hwq.depth = 64;
		wq[i]->hwq.pbl.npages = 1;
		wq[i]->hwq.pages = kunit_kzalloc(test, sizeof(*wq[i]->hwq.pages),
						 GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, wq[i]->hwq.pages);
		wq[i]->hwq.pages[0].va = kunit_kzalloc(test, KITE_PBL_PAGE_SIZE,
						       GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, wq[i]->hwq.pages[0].va);
		memset(wq[i]->hwq.pages[0].va, 0xa5, KITE_PBL_PAGE_SIZE);
		wq[i]->pi = 70 + i;
		wq[i]->ci = 65 + i;
	}
	qp->uctx = uctx;
	qp->state = IB_QPS_ERR;
	return qp;
}

static bool kite_state_test_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* ERROR -> RESET: counters to 0, rings zeroed. */
static void kite_state_test_qp_reset(struct kunit *test)
{
	struct kite_ib_qp *qp = kite_state_test_qp(test, 0);

	kite_ib_qp_set_state(qp, IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, qp->sq.pi, 0);
	KUNIT_EXPECT_EQ(test, qp->sq.ci, 0);
	KUNIT_EXPECT_EQ(test, qp->rq.pi, 0);
	KUNIT_EXPECT_EQ(test, qp->rq.ci, 0);
	KUNIT_EXPECT_TRUE(test, kite_state_test_zero(qp->sq.hwq.pages[0].va,
						     KITE_PBL_PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, kite_state_test_zero(qp->rq.hwq.pages[0].va,
						     KITE_PBL_PAGE_SIZE));
}

/* Other states keep the queues as they are (ERROR is flushed by the device). */
static void kite_state_test_qp_err_keeps(struct kunit *test)
{
	struct kite_ib_qp *qp = kite_state_test_qp(test, 0);

	qp->state = IB_QPS_RTS;
	kite_ib_qp_set_state(qp, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, qp->sq.pi, 70);
	KUNIT_EXPECT_EQ(test, qp->rq.ci, 66);
	KUNIT_EXPECT_EQ(test, *(u8 *)qp->sq.hwq.pages[0].va, 0xa5);
	kite_ib_qp_set_state(qp, IB_QPS_INIT);
	KUNIT_EXPECT_EQ(test, qp->sq.pi, 70);
}

/* A user QP: counters to 0; its rings are the library's, left alone. */
static void kite_state_test_qp_reset_user(struct kunit *test)
{
	struct kite_ib_qp *qp = kite_state_test_qp(test, 3);

	kite_ib_qp_set_state(qp, IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, qp->sq.pi, 0);
	KUNIT_EXPECT_EQ(test, qp->rq.ci, 0);
	KUNIT_EXPECT_EQ(test, *(u8 *)qp->sq.hwq.pages[0].va, 0xa5);
	KUNIT_EXPECT_EQ(test, *(u8 *)qp->rq.hwq.pages[0].va, 0xa5);
}

static struct kunit_case kite_ib_state_test_cases[] = {
	KUNIT_CASE(kite_state_test_status_page),
	KUNIT_CASE(kite_state_test_fatal_clears_status),
	KUNIT_CASE(kite_state_test_status_abi),
	KUNIT_CASE(kite_state_test_qp_reset),
	KUNIT_CASE(kite_state_test_qp_err_keeps),
	KUNIT_CASE(kite_state_test_qp_reset_user),
	{}
};

static struct kunit_suite kite_ib_state_test_suite = {
	.name = "kite_ib_state",
	.test_cases = kite_ib_state_test_cases,
};

kunit_test_suite(kite_ib_state_test_suite);
