// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the Kite RDMA driver's command channel and event queues.
 *
 * The command channel runs against a fake device (struct kite_fake): its
 * ring is kzalloc'ed memory and its doorbell, depending on the test,
 * completes the posted entries at once (status DONE in the entry), later
 * from a work item through a CMD_DONE event (status only in the EQE), late
 * (after the time-out), or never.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kite_ib.h"

#define KITE_TEST_TIMEOUT_MS	200
#define KITE_TEST_RESULT	0x00c0ffee
#define KITE_TEST_OUT_BYTE	0xa5

/* A command executed from a work item, for tests that block it. */
struct kite_async {
	struct work_struct work;
	struct kite_ib_dev *dev;
	struct kite_ib_cmd cmd;
	u8 in[8];
	u8 out[8];
	int ret;
	struct completion done;
};

enum kite_fake_mode {
	KITE_FAKE_DONE,		/* complete in the entry, in the doorbell */
	KITE_FAKE_EVENT,	/* complete by a CMD_DONE event, from a work */
	KITE_FAKE_LATE,		/* complete after the time-out */
	KITE_FAKE_HOLD,		/* the test completes entries itself */
};

struct kite_fake {
	struct kite_ib_dev dev;
	struct kite_aux_dev *kadev;
	enum kite_fake_mode mode;
	u32 code;		/* KITE_CMD_STATUS_CODE to complete with */
	u32 syndrome;
	u32 pi;			/* last PI written */
	u32 done_pi;		/* entries before it were completed */
	unsigned int doorbells;
	unsigned int resets;
	unsigned int disables;
	unsigned int timeout_ms;	/* what the device reports; 0: invalid */
	size_t ring_size;
	struct work_struct event_work;
	struct delayed_work late_work;
	struct kite_async *asyncs[4];
	unsigned int nasyncs;
};

static struct kite_fake *to_fake(struct kite_ib_dev *dev)
{
	return container_of(dev, struct kite_fake, dev);
}

static struct kite_ib_dev *kite_test_dev(struct kunit *test)
{
	struct kite_fake *f = test->priv;

	return &f->dev;
}

static void *kite_fake_ring_alloc(struct kite_ib_dev *dev, size_t size,
				  dma_addr_t *dma)
{
	void *ring = kzalloc(size, GFP_KERNEL);

	to_fake(dev)->ring_size = size;
	*dma = (dma_addr_t)(uintptr_t)ring;
	return ring;
}

static void kite_fake_ring_free(struct kite_ib_dev *dev, size_t size,
				void *ring, dma_addr_t dma)
{
	kfree(ring);
}

static int kite_fake_enable(struct kite_ib_dev *dev, dma_addr_t dma,
			    unsigned int log_depth)
{
	return 0;
}

static void kite_fake_disable(struct kite_ib_dev *dev)
{
	to_fake(dev)->disables++;
}

static void kite_fake_reset(struct kite_ib_dev *dev)
{
	to_fake(dev)->resets++;
}

static int kite_fake_timeout(struct kite_ib_dev *dev, unsigned int *ms)
{
	*ms = to_fake(dev)->timeout_ms;
	return *ms ? 0 : -EIO;
}

static struct kite_cmd *kite_fake_entry(struct kite_fake *f, u32 index)
{
	return &f->dev.cmdq.ring[index & (f->dev.cmdq.depth - 1)];
}

static u32 kite_fake_status(struct kite_fake *f)
{
	return KITE_CMD_STATUS_DONE |
	       FIELD_PREP(KITE_CMD_STATUS_CODE, f->code) |
	       FIELD_PREP(KITE_CMD_STATUS_SYNDROME, f->syndrome);
}

/* What the device does before the status: output and result. */
static void kite_fake_execute(struct kite_fake *f, struct kite_cmd *e)
{
	if (f->code == KITE_CMD_OK) {
		memset(e->payload, KITE_TEST_OUT_BYTE, le16_to_cpu(e->out_len));
		e->result = cpu_to_le32(KITE_TEST_RESULT);
	}
}

/* Complete entry @index through a CMD_DONE event only. */
static void kite_fake_complete_event(struct kite_fake *f, u32 index)
{
	struct kite_cmd *e = kite_fake_entry(f, index);
	struct kite_eqe eqe = {
		.type_owner = cpu_to_le32(KITE_EQE_CMD_DONE | KITE_EQE_OWNER),
		.obj = e->cookie,
		.data = cpu_to_le32(kite_fake_status(f)),
	};

	kite_fake_execute(f, e);
	kite_ib_eq_dispatch(&f->dev, NULL, &eqe);
}

static void kite_fake_event_work(struct work_struct *work)
{
	struct kite_fake *f = container_of(work, struct kite_fake, event_work);
	u32 pi = READ_ONCE(f->pi);

	for (; f->done_pi != pi; f->done_pi++)
		kite_fake_complete_event(f, f->done_pi);
}

static void kite_fake_late_work(struct work_struct *work)
{
	struct kite_fake *f = container_of(to_delayed_work(work),
					   struct kite_fake, late_work);
	struct kite_cmd *e = kite_fake_entry(f, f->done_pi);

	kite_fake_execute(f, e);
	WRITE_ONCE(e->status, cpu_to_le32(kite_fake_status(f)));
	kite_ib_cmd_complete(&f->dev, le32_to_cpu(e->cookie),
			     kite_fake_status(f));
	f->done_pi++;
}

/* Called with the channel's lock held, like the register write. */
static void kite_fake_doorbell(struct kite_ib_dev *dev, u32 pi)
{
	struct kite_fake *f = to_fake(dev);
	struct kite_cmd *e;

	f->doorbells++;
	WRITE_ONCE(f->pi, pi);
	switch (f->mode) {
	case KITE_FAKE_DONE:
		for (; f->done_pi != pi; f->done_pi++) {
			e = kite_fake_entry(f, f->done_pi);
			kite_fake_execute(f, e);
			WRITE_ONCE(e->status,
				   cpu_to_le32(kite_fake_status(f)));
		}
		break;
	case KITE_FAKE_EVENT:
		queue_work(system_dfl_wq, &f->event_work);
		break;
	case KITE_FAKE_LATE:
		queue_delayed_work(system_dfl_wq, &f->late_work,
				   msecs_to_jiffies(2 * KITE_TEST_TIMEOUT_MS));
		break;
	case KITE_FAKE_HOLD:
		break;
	}
}

static const struct kite_ib_cmdq_ops kite_fake_ops = {
	.ring_alloc = kite_fake_ring_alloc,
	.ring_free = kite_fake_ring_free,
	.enable = kite_fake_enable,
	.disable = kite_fake_disable,
	.doorbell = kite_fake_doorbell,
	.reset = kite_fake_reset,
	.timeout = kite_fake_timeout,
};

static int kite_fake_init(struct kunit *test)
{
	struct kite_fake *f;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->kadev = kunit_kzalloc(test, struct_size(f->kadev, irqs, 1),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->kadev);
	f->kadev->adev.dev.init_name = "kite_ib_test";
	f->kadev->num_vectors = 1;
	f->dev.kadev = f->kadev;
	f->timeout_ms = KITE_TEST_TIMEOUT_MS;
	/* A probed device; kite_cmd_probe_timeout clears it. */
	f->dev.running = true;
	xa_init_flags(&f->dev.cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&f->dev.qp_xa, XA_FLAGS_LOCK_IRQ);
	INIT_WORK(&f->event_work, kite_fake_event_work);
	INIT_DELAYED_WORK(&f->late_work, kite_fake_late_work);
	test->priv = f;
	return 0;
}

static void kite_fake_exit(struct kunit *test)
{
	struct kite_fake *f = test->priv;
	unsigned int i;

	/* A test that stopped early may leave commands waiting: end them. */
	for (i = 0; i < f->nasyncs; i++)
		if (!completion_done(&f->asyncs[i]->done))
			kite_ib_cmd_fatal(&f->dev, "test teardown");
	for (i = 0; i < f->nasyncs; i++)
		flush_work(&f->asyncs[i]->work);
	cancel_work_sync(&f->event_work);
	cancel_delayed_work_sync(&f->late_work);
	kite_ib_cmdq_destroy(&f->dev);
	xa_destroy(&f->dev.cq_xa);
	xa_destroy(&f->dev.qp_xa);
}

/* Set up the channel with a 2^@log_depth ring and the test time-out. */
static struct kite_fake *kite_fake_start(struct kunit *test,
					 unsigned int log_depth,
					 enum kite_fake_mode mode)
{
	struct kite_fake *f = test->priv;

	f->mode = mode;
	KUNIT_ASSERT_EQ(test, kite_ib_cmdq_init_ops(&f->dev, &kite_fake_ops,
						    log_depth), 0);
	KUNIT_ASSERT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_POLLING);
	KUNIT_ASSERT_EQ(test, f->ring_size,
			(size_t)KITE_CMD_ENTRY_SIZE << log_depth);
	/* The time-out is the device's (no cmd_timeout_ms in the tests). */
	KUNIT_ASSERT_EQ(test, f->dev.cmdq.timeout_ms, KITE_TEST_TIMEOUT_MS);
	return f;
}

/* The time-out is what the device reports; a device without one fails. */
static void kite_cmd_device_timeout(struct kunit *test)
{
	struct kite_fake *f = test->priv;

	f->timeout_ms = 0;
	KUNIT_EXPECT_EQ(test, kite_ib_cmdq_init_ops(&f->dev, &kite_fake_ops, 2),
			-EIO);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_DOWN);
	KUNIT_EXPECT_EQ(test, f->ring_size, (size_t)0);
	f->timeout_ms = 12345;
	KUNIT_ASSERT_EQ(test, kite_ib_cmdq_init_ops(&f->dev, &kite_fake_ops, 2),
			0);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.timeout_ms, 12345);
}

static void kite_async_fn(struct work_struct *work)
{
	struct kite_async *a = container_of(work, struct kite_async, work);

	a->ret = kite_ib_cmd_exec(a->dev, &a->cmd);
	complete(&a->done);
}

static struct kite_async *kite_async_start(struct kunit *test,
					   struct kite_ib_dev *dev)
{
	struct kite_fake *f = to_fake(dev);
	struct kite_async *a;

	KUNIT_ASSERT_LT(test, f->nasyncs, ARRAY_SIZE(f->asyncs));
	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	f->asyncs[f->nasyncs++] = a;
	INIT_WORK(&a->work, kite_async_fn);
	init_completion(&a->done);
	a->dev = dev;
	a->cmd.opcode = KITE_CMD_QUERY_CQ;
	a->cmd.in = a->in;
	a->cmd.in_len = sizeof(a->in);
	a->cmd.out = a->out;
	a->cmd.out_len = sizeof(a->out);
	queue_work(system_dfl_wq, &a->work);
	return a;
}

/* Wait (bounded) until the fake device has seen @n doorbells. */
static bool kite_fake_wait_doorbells(struct kite_fake *f, unsigned int n)
{
	int i;

	for (i = 0; i < 400; i++) {
		if (READ_ONCE(f->doorbells) >= n)
			return true;
		usleep_range(5000, 6000);
	}
	return false;
}

static bool kite_async_finished(struct kite_async *a, unsigned int ms)
{
	return wait_for_completion_timeout(&a->done, msecs_to_jiffies(ms));
}

/* ------------------------------------------------------------------ */
/* kite_ib_cmd                                                         */
/* ------------------------------------------------------------------ */

static void kite_cmd_errno_table(struct kunit *test)
{
	static const struct {
		u8 status;
		int err;
	} cases[] = {
		{ KITE_CMD_OK, 0 },
		{ KITE_CMD_E_OPCODE, -EOPNOTSUPP },
		{ KITE_CMD_E_PARAM, -EINVAL },
		{ KITE_CMD_E_LENGTH, -EINVAL },
		{ KITE_CMD_E_NO_RESOURCES, -ENOMEM },
		{ KITE_CMD_E_OBJECT, -ENOENT },
		{ KITE_CMD_E_STATE, -EINVAL },
		{ KITE_CMD_E_BUSY, -EBUSY },
		{ KITE_CMD_E_DMA, -EIO },
		{ KITE_CMD_E_PBL, -EINVAL },
		{ KITE_CMD_E_INTERNAL, -EIO },
		{ KITE_CMD_E_INTERNAL + 1, -EIO },
		{ 0xff, -EIO },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_cmd_errno(cases[i].status),
				    cases[i].err, "status 0x%02x",
				    cases[i].status);
}

static void kite_cmd_polling_ok(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	u8 in[16], out[8] = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_PORT,
		.in = in,
		.in_len = sizeof(in),
		.out = out,
		.out_len = sizeof(out),
	};
	struct kite_cmd *e = kite_fake_entry(f, 0);
	u32 cookie0;
	unsigned int i;

	memset(in, 0x3c, sizeof(in));
	KUNIT_ASSERT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), 0);
	KUNIT_EXPECT_EQ(test, cmd.status, KITE_CMD_OK);
	KUNIT_EXPECT_EQ(test, cmd.result, KITE_TEST_RESULT);
	for (i = 0; i < sizeof(out); i++)
		KUNIT_EXPECT_EQ(test, out[i], KITE_TEST_OUT_BYTE);
	KUNIT_EXPECT_EQ(test, f->doorbells, 1);
	KUNIT_EXPECT_EQ(test, f->pi, 1);

	/* What the device was given. */
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e->opcode), KITE_CMD_QUERY_PORT);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(e->in_len), sizeof(in));
	KUNIT_EXPECT_EQ(test, le16_to_cpu(e->out_len), sizeof(out));
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e->out_addr), 0);
	/* Input beyond the output the device wrote, then zeroes. */
	KUNIT_EXPECT_EQ(test, e->payload[sizeof(out)], 0x3c);
	KUNIT_EXPECT_EQ(test, e->payload[sizeof(in) - 1], 0x3c);
	KUNIT_EXPECT_EQ(test, e->payload[sizeof(in)], 0);
	cookie0 = le32_to_cpu(e->cookie);
	KUNIT_EXPECT_EQ(test, FIELD_GET(KITE_IB_COOKIE_SLOT, cookie0), 0);

	/* The next entry, then the first one again with a new cookie. */
	KUNIT_ASSERT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), 0);
	KUNIT_EXPECT_EQ(test,
			FIELD_GET(KITE_IB_COOKIE_SLOT,
				  le32_to_cpu(kite_fake_entry(f, 1)->cookie)),
			1);
	KUNIT_ASSERT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), 0);
	KUNIT_EXPECT_NE(test, le32_to_cpu(e->cookie), cookie0);
	KUNIT_EXPECT_EQ(test, f->pi, 3);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.ci, 3);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_POLLING);
	KUNIT_EXPECT_EQ(test, f->resets, 0);
}

static void kite_cmd_events_ok(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 2, KITE_FAKE_EVENT);
	u8 out[KITE_CMD_PAYLOAD_SIZE] = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_DEVICE,
		.out = out,
		.out_len = sizeof(out),
	};

	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	KUNIT_ASSERT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_EVENTS);
	/* The status is only in the event: the entry never shows DONE. */
	KUNIT_ASSERT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), 0);
	KUNIT_EXPECT_EQ(test, cmd.result, KITE_TEST_RESULT);
	KUNIT_EXPECT_EQ(test, out[0], KITE_TEST_OUT_BYTE);
	KUNIT_EXPECT_EQ(test, out[sizeof(out) - 1], KITE_TEST_OUT_BYTE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(kite_fake_entry(f, 0)->status), 0);

	/* A device error reported by the event. */
	f->code = KITE_CMD_E_BUSY;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EBUSY);
	KUNIT_EXPECT_EQ(test, cmd.status, KITE_CMD_E_BUSY);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_EVENTS);
}

static void kite_cmd_device_errors(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	u8 out[4];
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_CREATE_CQ,
		.out = out,
		.out_len = sizeof(out),
	};
	u32 code;

	/* The last one is reserved for future errors: a failure too. */
	for (code = KITE_CMD_E_OPCODE; code <= KITE_CMD_E_INTERNAL + 1;
	     code++) {
		f->code = code;
		f->syndrome = 0x10 + code;
		memset(out, 0, sizeof(out));
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_cmd_exec(&f->dev, &cmd),
				    kite_ib_cmd_errno(code), "status 0x%02x",
				    code);
		KUNIT_EXPECT_EQ(test, cmd.status, code);
		KUNIT_EXPECT_EQ(test, cmd.syndrome, 0x10 + code);
		/* A failed command has no output. */
		KUNIT_EXPECT_EQ(test, out[0], 0);
	}
	/* Refused commands are not a device failure. */
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_POLLING);
	KUNIT_EXPECT_EQ(test, f->resets, 0);
}

/*
 * A status never returned: whether the command ran is unknown, and so is
 * the state of the device's objects. The device is declared fatal.
 */
static void kite_cmd_unknown_status(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_CREATE_CQ };

	f->code = KITE_CMD_E_NEVER + 0x42;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EIO);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->dev.bad[KITE_IB_BAD_CMD_STATUS]),
			1);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
	/* Later commands fail fast. */
	f->code = KITE_CMD_OK;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EIO);
}

/* A result beyond the device's limits: likewise. */
static void kite_cmd_result_out_of_range(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_CREATE_CQ };

	/* Within 2^24 while the limits are unknown. */
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), 0);
	KUNIT_EXPECT_EQ(test, cmd.result, KITE_TEST_RESULT);
	f->dev.caps.max_cq = 1024;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EIO);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->dev.bad[KITE_IB_BAD_CMD_RESULT]),
			1);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
}

static bool result_ok(const struct kite_ib_caps *caps, u8 opcode, u32 result,
		      u16 out_len)
{
	return kite_ib_cmd_result_ok(caps, opcode, result, out_len);
}

static void kite_cmd_result_ok_rules(struct kunit *test)
{
	struct kite_ib_caps caps = {
		.max_eq = 8, .max_cq = 16, .max_qp = 32, .max_pd = 4,
		.max_mr = 64, .max_cntr = 64,
	};
	struct kite_ib_caps none = {};

	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_CREATE_EQ, 7, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_CREATE_EQ, 8, 0));
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_CREATE_CQ, 15, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_CREATE_CQ, 16, 0));
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_CREATE_QP, 31, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_CREATE_QP, BIT(31) | 3, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_PD, 4, 0));
	/* Keys: the index counts, the tag does not. */
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_REG_MR, 63 << 8 | 0xff, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_MR, 64 << 8, 0));
	/* Memory windows take their keys from the MRs' table. */
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_ALLOC_MW, 63 << 8 | 0x80, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_MW, 64 << 8 | 1, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_MW, BIT(31), 0));
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_ALLOC_UCTX, KITE_DB_PAGES - 1, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_UCTX, KITE_DB_PAGES, 0));
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_QUERY_STATS, 4, 32));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_QUERY_STATS, 5, 32));
	/* QP counter sets: never the default set 0, below max_cntr. */
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_ALLOC_CNTR, 63, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_CNTR, 64, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_ALLOC_CNTR, 0, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&none, KITE_CMD_ALLOC_CNTR, 1, 0));
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_QUERY_CNTR,
					  KITE_QP_STAT_COUNT,
					  KITE_QP_STAT_COUNT * sizeof(__le64)));
	KUNIT_EXPECT_FALSE(test, result_ok(&caps, KITE_CMD_QUERY_CNTR,
					   KITE_QP_STAT_COUNT + 1,
					   KITE_QP_STAT_COUNT * sizeof(__le64)));
	/* Results nobody uses. */
	KUNIT_EXPECT_TRUE(test, result_ok(&caps, KITE_CMD_MODIFY_QP, U32_MAX, 0));
	/* Before QUERY_DEVICE: numbers of 24 bits. */
	KUNIT_EXPECT_TRUE(test, result_ok(&none, KITE_CMD_CREATE_EQ, KITE_OBJ_MASK, 0));
	KUNIT_EXPECT_FALSE(test, result_ok(&none, KITE_CMD_CREATE_EQ, KITE_OBJ_MASK + 1, 0));
}

static void kite_cmd_bad_lengths(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	u8 buf[KITE_CMD_PAYLOAD_SIZE + 1];
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_NOP,
		.in = buf,
		.in_len = sizeof(buf),
	};

	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EINVAL);
	cmd.in_len = 0;
	cmd.out = buf;
	cmd.out_len = sizeof(buf);
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EINVAL);
	KUNIT_EXPECT_EQ(test, f->doorbells, 0);
}

static void kite_cmd_timeout_fatal(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_HOLD);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_NOP };

	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
	KUNIT_EXPECT_EQ(test, f->doorbells, 1);

	/* Fail fast, without touching the ring. */
	f->mode = KITE_FAKE_DONE;
	memset(kite_fake_entry(f, 1), 0x5a, sizeof(struct kite_cmd));
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EIO);
	KUNIT_EXPECT_EQ(test, f->doorbells, 1);
	KUNIT_EXPECT_EQ(test, kite_fake_entry(f, 1)->payload[0], 0x5a);

	/* Destroys succeed locally. */
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_destroy(&f->dev, KITE_CMD_DESTROY_CQ,
						  7), 0);
	KUNIT_EXPECT_EQ(test, f->doorbells, 1);

	/* Fatal is reported once; only teardown leaves FATAL. */
	kite_ib_cmd_fatal(&f->dev, "test");
	KUNIT_EXPECT_EQ(test, f->resets, 1);
	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	kite_ib_cmdq_destroy(&f->dev);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_DOWN);
	KUNIT_EXPECT_EQ(test, f->disables, 1);
}

/* A device that fails during probe fails the probe; it is not reset. */
static void kite_cmd_probe_timeout(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_HOLD);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_NOP };

	f->dev.running = false;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 0);
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -EIO);
	KUNIT_EXPECT_EQ(test, f->resets, 0);
}

static void kite_cmd_late_completion(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_LATE);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_NOP };

	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	/* The completion arrives after the waiter left: ignored. */
	flush_delayed_work(&f->late_work);
	KUNIT_EXPECT_EQ(test, f->done_pi, 1);
	KUNIT_EXPECT_NULL(test, f->dev.cmdq.waiters[0]);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
}

static void kite_cmd_destroy_timeout(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_HOLD);

	/* A destroy that times out still succeeds, after going FATAL. */
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_destroy(&f->dev, KITE_CMD_DESTROY_QP,
						  5), 0);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(kite_fake_entry(f, 0)->opcode),
			KITE_CMD_DESTROY_QP);
	KUNIT_EXPECT_EQ(test, kite_fake_entry(f, 0)->payload[0], 5);
}

static void kite_cmd_destroy_errors(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_NOP };

	/* A working device's refusal is reported. */
	f->code = KITE_CMD_E_BUSY;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_destroy(&f->dev, KITE_CMD_DESTROY_EQ,
						  1), -EBUSY);
	f->code = KITE_CMD_OK;
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_destroy(&f->dev, KITE_CMD_DESTROY_EQ,
						  1), 0);
	KUNIT_EXPECT_EQ(test, f->doorbells, 2);

	/* A channel that is down: destroys succeed, commands fail. */
	kite_ib_cmdq_destroy(&f->dev);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_DOWN);
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_destroy(&f->dev, KITE_CMD_DESTROY_EQ,
						  1), 0);
	KUNIT_EXPECT_EQ(test, kite_ib_cmd_exec(&f->dev, &cmd), -ENODEV);
	KUNIT_EXPECT_EQ(test, f->doorbells, 2);
	KUNIT_EXPECT_EQ(test, f->resets, 0);
}

static void kite_cmd_bogus_cookies(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);
	u32 done = KITE_CMD_STATUS_DONE;
	struct kite_ib_cmd nop = { .opcode = KITE_CMD_NOP };
	struct kite_async *a;
	u32 old, cookie;

	/* Entries 0 and 1 complete; entry 0 then holds a command. */
	KUNIT_ASSERT_EQ(test, kite_ib_cmd_exec(&f->dev, &nop), 0);
	old = le32_to_cpu(kite_fake_entry(f, 0)->cookie);
	KUNIT_ASSERT_EQ(test, kite_ib_cmd_exec(&f->dev, &nop), 0);
	f->dev.cmdq.timeout_ms = 5000;
	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	f->mode = KITE_FAKE_HOLD;
	a = kite_async_start(test, &f->dev);
	KUNIT_ASSERT_TRUE(test, kite_fake_wait_doorbells(f, 3));
	cookie = le32_to_cpu(kite_fake_entry(f, 2)->cookie);
	KUNIT_ASSERT_EQ(test, FIELD_GET(KITE_IB_COOKIE_SLOT, cookie), 0);

	/* Slot out of range, stale generation, wrong slot, reaped one. */
	kite_ib_cmd_complete(&f->dev, cookie | KITE_IB_COOKIE_SLOT, done);
	kite_ib_cmd_complete(&f->dev, old, done);
	kite_ib_cmd_complete(&f->dev, cookie ^ BIT(8), done);
	kite_ib_cmd_complete(&f->dev, cookie | 1, done);
	kite_ib_cmd_complete(&f->dev, 0, done);
	KUNIT_EXPECT_FALSE(test, kite_async_finished(a, 50));
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_EVENTS);

	/* The right cookie completes it. */
	f->mode = KITE_FAKE_EVENT;
	kite_fake_event_work(&f->event_work);
	KUNIT_ASSERT_TRUE(test, kite_async_finished(a, 2000));
	KUNIT_EXPECT_EQ(test, a->ret, 0);
	KUNIT_EXPECT_EQ(test, a->cmd.result, KITE_TEST_RESULT);
	KUNIT_EXPECT_EQ(test, a->out[0], KITE_TEST_OUT_BYTE);

	/* A second event for it is ignored as well. */
	kite_ib_cmd_complete(&f->dev, cookie, done);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_EVENTS);
	KUNIT_EXPECT_EQ(test, f->resets, 0);
}

static void kite_cmd_inflight_bound(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_HOLD);
	struct kite_async *a[3];
	int i;

	f->dev.cmdq.timeout_ms = 5000;
	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	for (i = 0; i < 3; i++)
		a[i] = kite_async_start(test, &f->dev);
	KUNIT_ASSERT_TRUE(test, kite_fake_wait_doorbells(f, 2));
	msleep(50);
	/* Two entries: the third command waits for one. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(f->doorbells), 2);

	/* Entry 1 completing first does not free entry 0 for reuse. */
	f->done_pi = 1;
	kite_fake_complete_event(f, 1);
	msleep(50);
	KUNIT_EXPECT_EQ(test, READ_ONCE(f->doorbells), 2);

	/* Entry 0 completing lets the third command in. */
	kite_fake_complete_event(f, 0);
	KUNIT_EXPECT_TRUE(test, kite_fake_wait_doorbells(f, 3));
	kite_fake_complete_event(f, 2);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_TRUE(test, kite_async_finished(a[i], 2000));
		KUNIT_EXPECT_EQ(test, a[i]->ret, 0);
	}
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.ci, 3);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.pi, 3);
}

static void kite_cmd_fatal_wakes_waiters(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_HOLD);
	struct kite_async *a;

	f->dev.cmdq.timeout_ms = 10000;
	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	a = kite_async_start(test, &f->dev);
	KUNIT_ASSERT_TRUE(test, kite_fake_wait_doorbells(f, 1));
	kite_ib_cmd_fatal(&f->dev, "test");
	KUNIT_ASSERT_TRUE(test, kite_async_finished(a, 2000));
	KUNIT_EXPECT_EQ(test, a->ret, -EIO);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
}

static struct kunit_case kite_ib_cmd_cases[] = {
	KUNIT_CASE(kite_cmd_errno_table),
	KUNIT_CASE(kite_cmd_device_timeout),
	KUNIT_CASE(kite_cmd_polling_ok),
	KUNIT_CASE(kite_cmd_events_ok),
	KUNIT_CASE(kite_cmd_device_errors),
	KUNIT_CASE(kite_cmd_unknown_status),
	KUNIT_CASE(kite_cmd_result_out_of_range),
	KUNIT_CASE(kite_cmd_result_ok_rules),
	KUNIT_CASE(kite_cmd_bad_lengths),
	KUNIT_CASE(kite_cmd_timeout_fatal),
	KUNIT_CASE(kite_cmd_probe_timeout),
	KUNIT_CASE(kite_cmd_late_completion),
	KUNIT_CASE(kite_cmd_destroy_timeout),
	KUNIT_CASE(kite_cmd_destroy_errors),
	KUNIT_CASE(kite_cmd_bogus_cookies),
	KUNIT_CASE(kite_cmd_inflight_bound),
	KUNIT_CASE(kite_cmd_fatal_wakes_waiters),
	{}
};

static struct kunit_suite kite_ib_cmd_suite = {
	.name = "kite_ib_cmd",
	.init = kite_fake_init,
	.exit = kite_fake_exit,
	.test_cases = kite_ib_cmd_cases,
};

/* ------------------------------------------------------------------ */
/* kite_ib_eq                                                          */
/* ------------------------------------------------------------------ */

static void kite_eqe_set(struct kite_eqe *eqe, u32 type, bool owner, u32 obj,
			 u32 data)
{
	eqe->obj = cpu_to_le32(obj);
	eqe->data = cpu_to_le32(data);
	eqe->type_owner = cpu_to_le32(FIELD_PREP(KITE_EQE_TYPE, type) |
				      (owner ? KITE_EQE_OWNER : 0));
}

static void kite_eq_eqe_valid_wrap(struct kunit *test)
{
	struct kite_eqe ring[4] = {};
	unsigned int i;

	/* Zeroed memory is never valid on the first pass. */
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_FALSE(test, kite_ib_eqe_valid(&ring[i], i, 2));
	/* First pass: owner 1. */
	for (i = 0; i < 4; i++) {
		kite_eqe_set(&ring[i], KITE_EQE_COMPLETION, true, i, 0);
		KUNIT_EXPECT_TRUE(test, kite_ib_eqe_valid(&ring[i], i, 2));
	}
	/* Second pass: the old entries are stale until rewritten. */
	for (i = 4; i < 8; i++) {
		KUNIT_EXPECT_FALSE(test, kite_ib_eqe_valid(&ring[i % 4], i, 2));
		kite_eqe_set(&ring[i % 4], KITE_EQE_CMD_DONE, false, i, 0);
		KUNIT_EXPECT_TRUE(test, kite_ib_eqe_valid(&ring[i % 4], i, 2));
	}
	/* Third pass expects owner 1 again. */
	KUNIT_EXPECT_FALSE(test, kite_ib_eqe_valid(&ring[0], 8, 2));
	kite_eqe_set(&ring[0], 0xff, true, 8, 0);
	KUNIT_EXPECT_TRUE(test, kite_ib_eqe_valid(&ring[0], 8, 2));
	/* The counter wraps at 2^32: pass parity follows ci. */
	kite_eqe_set(&ring[3], 0, true, 0, 0);
	KUNIT_EXPECT_FALSE(test, kite_ib_eqe_valid(&ring[3], 0xffffffff, 2));
	kite_eqe_set(&ring[3], 0, false, 0, 0);
	KUNIT_EXPECT_TRUE(test, kite_ib_eqe_valid(&ring[3], 0xffffffff, 2));
	/* The depth used is the one given. */
	kite_eqe_set(&ring[0], 0, true, 0, 0);
	KUNIT_EXPECT_TRUE(test, kite_ib_eqe_valid(&ring[0], 1024,
						  KITE_IB_EQ_LOG_DEPTH + 1));
	KUNIT_EXPECT_FALSE(test, kite_ib_eqe_valid(&ring[0], 1024,
						   KITE_IB_EQ_LOG_DEPTH));
}

static void kite_eq_doorbell_encoding(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ib_eq_doorbell(5, 0x1234, false),
			0x0000123404000005ULL);
	KUNIT_EXPECT_EQ(test, kite_ib_eq_doorbell(5, 0x1234, true),
			0x0001123404000005ULL);
	/* The counter is sent modulo 2^16. */
	KUNIT_EXPECT_EQ(test, kite_ib_eq_doorbell(63, 0x12345, true),
			0x000123450400003fULL);
	KUNIT_EXPECT_EQ(test, kite_ib_eq_doorbell(0, 0, false),
			0x0000000004000000ULL);
	KUNIT_EXPECT_EQ(test,
			FIELD_GET(KITE_DB_TYPE, kite_ib_eq_doorbell(1, 2, true)),
			KITE_DB_TYPE_EQ);
}

struct kite_test_cq {
	struct kite_ib_cq cq;
	struct kunit *test;
	unsigned int calls;
	unsigned int events;
	enum ib_event_type last_event;
	bool destroy_in_handler;
};

static void kite_test_comp_handler(struct ib_cq *ibcq, void *ctx)
{
	struct kite_test_cq *t = ctx;
	struct kite_ib_dev *dev = kite_test_dev(t->test);

	t->calls++;
	KUNIT_EXPECT_PTR_EQ(t->test, ibcq, &t->cq.ibcq);
	if (!t->destroy_in_handler)
		return;
	/* Destroy the CQ while the dispatch holds a reference. */
	xa_erase(&dev->cq_xa, t->cq.cqn);
	kite_ib_cq_put(&t->cq);
	KUNIT_EXPECT_FALSE(t->test, completion_done(&t->cq.ref.free));
	KUNIT_EXPECT_EQ(t->test, refcount_read(&t->cq.ref.refcount), 1);
}

static void kite_test_cq_event(struct ib_event *ev, void *ctx)
{
	struct kite_test_cq *t = ctx;

	t->events++;
	t->last_event = ev->event;
	KUNIT_EXPECT_PTR_EQ(t->test, ev->element.cq, &t->cq.ibcq);
}

static struct kite_test_cq *kite_test_add_cq(struct kunit *test, u32 cqn)
{
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_test_cq *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->test = test;
	t->cq.cqn = cqn;
	t->cq.ibcq.comp_handler = kite_test_comp_handler;
	t->cq.ibcq.event_handler = kite_test_cq_event;
	t->cq.ibcq.cq_context = t;
	refcount_set(&t->cq.ref.refcount, 1);
	init_completion(&t->cq.ref.free);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&dev->cq_xa, cqn, &t->cq.ref,
					      GFP_KERNEL)), 0);
	return t;
}

static void kite_eq_dispatch(struct kite_ib_dev *dev, u32 type, u32 obj,
			     u32 data)
{
	struct kite_eqe eqe;

	kite_eqe_set(&eqe, type, true, obj, data);
	kite_ib_eq_dispatch(dev, NULL, &eqe);
}

static void kite_eq_dispatch_completion(struct kunit *test)
{
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_test_cq *t = kite_test_add_cq(test, 3);

	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 3, 0);
	KUNIT_EXPECT_EQ(test, t->calls, 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->cq.ref.refcount), 1);
	KUNIT_EXPECT_FALSE(test, completion_done(&t->cq.ref.free));

	/* A CQ error goes to the CQ's event handler. */
	kite_eq_dispatch(dev, KITE_EQE_CQ_ERROR, 3, KITE_CQ_ERR_OVERFLOW);
	KUNIT_EXPECT_EQ(test, t->events, 1);
	KUNIT_EXPECT_EQ(test, t->last_event, IB_EVENT_CQ_ERR);
	KUNIT_EXPECT_EQ(test, t->calls, 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->cq.ref.refcount), 1);

	/* No handler: nothing to call, the reference is still dropped. */
	t->cq.ibcq.comp_handler = NULL;
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 3, 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->cq.ref.refcount), 1);
}

static void kite_eq_dispatch_bogus_cqn(struct kunit *test)
{
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_test_cq *t = kite_test_add_cq(test, 2);
	struct kite_test_cq *dying = kite_test_add_cq(test, 9);

	/* Being destroyed: its table reference is gone. */
	refcount_set(&dying->cq.ref.refcount, 0);

	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 2 | BIT(24), 0);
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 0xffffffff, 0);
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 0, 0);
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 7, 0);
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 9, 0);
	kite_eq_dispatch(dev, KITE_EQE_CQ_ERROR, 7, 0);
	KUNIT_EXPECT_EQ(test, t->calls, 0);
	KUNIT_EXPECT_EQ(test, t->events, 0);
	KUNIT_EXPECT_EQ(test, dying->calls, 0);
	KUNIT_EXPECT_EQ(test, dying->events, 0);
	KUNIT_EXPECT_NULL(test, kite_ib_cq_get(dev, 2 | BIT(24)));
	KUNIT_EXPECT_NULL(test, kite_ib_cq_get(dev, 9));
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_cq_get(dev, 2), &t->cq);
	kite_ib_cq_put(&t->cq);
}

/*
 * Events that make no sense: an unknown type, or a CQN beyond the device's
 * range, on a completion EQ. Counted, and every CQ of that EQ gets an event
 * in case the lost one was its; an unknown CQN within the range (a CQ that
 * is gone) is not counted.
 */
static void kite_eq_dispatch_bad_events(struct kunit *test)
{
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_test_cq *mine = kite_test_add_cq(test, 3);
	struct kite_test_cq *other = kite_test_add_cq(test, 5);
	struct kite_ib_eq eq = { .eqn = 1 }, eq2 = { .eqn = 2 };
	struct kite_eqe eqe;

	dev->caps.max_cq = 16;
	spin_lock_init(&mine->cq.lock);
	spin_lock_init(&other->cq.lock);
	mine->cq.eq = &eq;
	other->cq.eq = &eq2;

	kite_eqe_set(&eqe, 0x99, true, 3, 0);
	kite_ib_eq_dispatch(dev, &eq, &eqe);
	KUNIT_EXPECT_EQ(test, atomic64_read(&dev->bad[KITE_IB_BAD_EQE_TYPE]), 1);
	KUNIT_EXPECT_EQ(test, mine->calls, 1);
	KUNIT_EXPECT_EQ(test, other->calls, 0);
	/* The next arm carries a new sequence number. */
	KUNIT_EXPECT_EQ(test, mine->cq.arm_sn, 1);

	kite_eqe_set(&eqe, KITE_EQE_COMPLETION, true, BIT(31) | 3, 0);
	kite_ib_eq_dispatch(dev, &eq, &eqe);
	KUNIT_EXPECT_EQ(test, atomic64_read(&dev->bad[KITE_IB_BAD_EQE_OBJ]), 1);
	KUNIT_EXPECT_EQ(test, mine->calls, 2);
	KUNIT_EXPECT_EQ(test, other->calls, 0);

	kite_eqe_set(&eqe, KITE_EQE_COMPLETION, true, 7, 0);
	kite_ib_eq_dispatch(dev, &eq, &eqe);
	KUNIT_EXPECT_EQ(test, atomic64_read(&dev->bad[KITE_IB_BAD_EQE_OBJ]), 1);
	KUNIT_EXPECT_EQ(test, mine->calls, 2);

	/* A QP event for a QPN beyond the range: counted, nothing called. */
	dev->caps.max_qp = 16;
	kite_eqe_set(&eqe, KITE_EQE_QP_FATAL, true, 1000, 0);
	kite_ib_eq_dispatch(dev, &eq, &eqe);
	KUNIT_EXPECT_EQ(test, atomic64_read(&dev->bad[KITE_IB_BAD_EQE_OBJ]), 2);
	KUNIT_EXPECT_EQ(test, refcount_read(&mine->cq.ref.refcount), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&other->cq.ref.refcount), 1);
}

static void kite_eq_dispatch_cq_destroyed(struct kunit *test)
{
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_test_cq *t = kite_test_add_cq(test, 4);

	t->destroy_in_handler = true;
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 4, 0);
	KUNIT_EXPECT_EQ(test, t->calls, 1);
	/* The dispatch's reference was the last one. */
	KUNIT_EXPECT_TRUE(test, completion_done(&t->cq.ref.free));
	KUNIT_EXPECT_EQ(test, refcount_read(&t->cq.ref.refcount), 0);
	/* Gone from the table: later events find nothing. */
	kite_eq_dispatch(dev, KITE_EQE_COMPLETION, 4, 0);
	KUNIT_EXPECT_EQ(test, t->calls, 1);
}

struct kite_test_qp {
	struct kite_ib_qp qp;
	struct kunit *test;
	unsigned int events;
	enum ib_event_type last_event;
};

static void kite_test_qp_event(struct ib_event *ev, void *ctx)
{
	struct kite_test_qp *t = ctx;

	t->events++;
	t->last_event = ev->event;
	KUNIT_EXPECT_PTR_EQ(t->test, ev->element.qp, &t->qp.ibqp);
}

static void kite_eq_dispatch_qp_events(struct kunit *test)
{
	static const struct {
		u32 type;
		enum ib_event_type event;
	} cases[] = {
		{ KITE_EQE_QP_FATAL, IB_EVENT_QP_FATAL },
		{ KITE_EQE_QP_REQ_ERR, IB_EVENT_QP_REQ_ERR },
		{ KITE_EQE_QP_ACCESS_ERR, IB_EVENT_QP_ACCESS_ERR },
		{ KITE_EQE_QP_LAST_WQE, IB_EVENT_QP_LAST_WQE_REACHED },
		{ KITE_EQE_QP_COMM_EST, IB_EVENT_COMM_EST },
		{ KITE_EQE_SQ_DRAINED, IB_EVENT_SQ_DRAINED },
	};
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_test_qp *t;
	unsigned int i;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->test = test;
	t->qp.qpn = 12;
	t->qp.ibqp.event_handler = kite_test_qp_event;
	t->qp.ibqp.qp_context = t;
	refcount_set(&t->qp.ref.refcount, 1);
	init_completion(&t->qp.ref.free);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&dev->qp_xa, 12, &t->qp.ref,
					      GFP_KERNEL)), 0);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kite_eq_dispatch(dev, cases[i].type, 12, 0);
		KUNIT_EXPECT_EQ(test, t->events, i + 1);
		KUNIT_EXPECT_EQ(test, t->last_event, cases[i].event);
	}
	/* Unknown QPs and unknown event types: nothing happens. */
	kite_eq_dispatch(dev, KITE_EQE_QP_FATAL, 13, 0);
	kite_eq_dispatch(dev, KITE_EQE_QP_FATAL, 12 | BIT(24), 0);
	kite_eq_dispatch(dev, 0x7f, 12, 0);
	KUNIT_EXPECT_EQ(test, t->events, ARRAY_SIZE(cases));
	KUNIT_EXPECT_EQ(test, refcount_read(&t->qp.ref.refcount), 1);

	/* A QP on its way out is not reported to. */
	xa_erase(&dev->qp_xa, 12);
	kite_ib_qp_put(&t->qp);
	KUNIT_EXPECT_TRUE(test, completion_done(&t->qp.ref.free));
	kite_eq_dispatch(dev, KITE_EQE_QP_FATAL, 12, 0);
	KUNIT_EXPECT_EQ(test, t->events, ARRAY_SIZE(cases));
}

static void kite_eq_dispatch_cmd_done(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_HOLD);
	struct kite_async *a;
	u32 cookie;

	f->dev.cmdq.timeout_ms = 5000;
	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	a = kite_async_start(test, &f->dev);
	KUNIT_ASSERT_TRUE(test, kite_fake_wait_doorbells(f, 1));
	cookie = le32_to_cpu(kite_fake_entry(f, 0)->cookie);
	kite_fake_entry(f, 0)->result = cpu_to_le32(77);
	kite_eq_dispatch(&f->dev, KITE_EQE_CMD_DONE, cookie,
			 KITE_CMD_STATUS_DONE |
			 FIELD_PREP(KITE_CMD_STATUS_CODE, KITE_CMD_E_OBJECT));
	KUNIT_ASSERT_TRUE(test, kite_async_finished(a, 2000));
	KUNIT_EXPECT_EQ(test, a->ret, -ENOENT);
	KUNIT_EXPECT_EQ(test, a->cmd.status, KITE_CMD_E_OBJECT);
	KUNIT_EXPECT_EQ(test, a->cmd.result, 77);
}

static void kite_eq_dispatch_fatal(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);

	kite_ib_cmdq_set_state(&f->dev, KITE_CMDQ_EVENTS);
	/* A completion EQ's overflow is survivable. */
	kite_eq_dispatch(&f->dev, KITE_EQE_EQ_OVERFLOW, 3, 0);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_EVENTS);
	kite_eq_dispatch(&f->dev, KITE_EQE_DEVICE_FATAL, 0,
			 FIELD_PREP(KITE_STATUS_FATAL_CODE, 0x42));
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
	/* Reported once. */
	kite_eq_dispatch(&f->dev, KITE_EQE_EQ_OVERFLOW, 0, 0);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
}

static void kite_eq_control_overflow(struct kunit *test)
{
	struct kite_fake *f = kite_fake_start(test, 1, KITE_FAKE_DONE);

	/* Lost control events cannot be recovered: reset. */
	kite_eq_dispatch(&f->dev, KITE_EQE_EQ_OVERFLOW, 0, 0);
	KUNIT_EXPECT_EQ(test, f->dev.cmdq.state, KITE_CMDQ_FATAL);
	KUNIT_EXPECT_EQ(test, f->resets, 1);
}

static void kite_eq_comp_vector(struct kunit *test)
{
	struct kite_ib_dev *dev = kite_test_dev(test);
	struct kite_ib_eq *eqs;
	unsigned int seen = 0;
	int i;

	KUNIT_EXPECT_NULL(test, kite_ib_comp_eq(dev, 0));
	eqs = kunit_kcalloc(test, 5, sizeof(*eqs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, eqs);
	dev->eqs = eqs;
	dev->num_eqs = 5;
	dev->ibdev.num_comp_vectors = 4;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_PTR_EQ(test, kite_ib_comp_eq(dev, i), &eqs[1 + i]);
	/* Out of range: round-robin over the completion EQs, never EQ0. */
	for (i = 0; i < 8; i++) {
		struct kite_ib_eq *eq = kite_ib_comp_eq(dev, i & 1 ? -1 : 4);

		KUNIT_ASSERT_TRUE(test, eq > &eqs[0] && eq <= &eqs[4]);
		seen |= BIT(eq - eqs);
	}
	KUNIT_EXPECT_EQ(test, seen, 0x1e);
	dev->eqs = NULL;
	dev->num_eqs = 0;
}

static struct kunit_case kite_ib_eq_cases[] = {
	KUNIT_CASE(kite_eq_eqe_valid_wrap),
	KUNIT_CASE(kite_eq_doorbell_encoding),
	KUNIT_CASE(kite_eq_dispatch_completion),
	KUNIT_CASE(kite_eq_dispatch_bogus_cqn),
	KUNIT_CASE(kite_eq_dispatch_cq_destroyed),
	KUNIT_CASE(kite_eq_dispatch_bad_events),
	KUNIT_CASE(kite_eq_dispatch_qp_events),
	KUNIT_CASE(kite_eq_dispatch_cmd_done),
	KUNIT_CASE(kite_eq_dispatch_fatal),
	KUNIT_CASE(kite_eq_control_overflow),
	KUNIT_CASE(kite_eq_comp_vector),
	{}
};

static struct kunit_suite kite_ib_eq_suite = {
	.name = "kite_ib_eq",
	.init = kite_fake_init,
	.exit = kite_fake_exit,
	.test_cases = kite_ib_eq_cases,
};

kunit_test_suites(&kite_ib_cmd_suite, &kite_ib_eq_suite);
