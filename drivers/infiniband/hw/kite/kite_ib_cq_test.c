// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's completion queues: the CQE owner rule, the arm
 * word and doorbell layout, the syndrome table, CQE to work completion
 * translation, and poll_cq and arm requests on a CQ in fake memory
 * (UML cannot map a fake doorbell page, so req_notify_cq itself is not
 * run).
 *
 * Expected values are written out by hand from prm_cq.rst, not computed
 * with the driver's macros.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/slab.h>

#include "kite_ib.h"

/* A CQE with the given opcode and owner bit. */
static void cqe_set(struct kite_cqe *cqe, u32 opcode, bool owner)
{
	cqe->op_own = cpu_to_le32((opcode << 4) | owner);
}

static void kite_ib_test_cqe_owner(struct kunit *test)
{
	struct kite_cqe cqe = {};
	u32 ci;

	/* Depth 4: passes of 4 CQEs, owner 1, 0, 1, ... */
	for (ci = 0; ci < 16; ci++) {
		bool first = !((ci / 4) & 1);

		cqe_set(&cqe, KITE_CQE_OP_REQ, first);
		KUNIT_EXPECT_TRUE_MSG(test, kite_ib_cqe_valid(&cqe, ci, 2),
				      "ci %u", ci);
		cqe_set(&cqe, KITE_CQE_OP_REQ, !first);
		KUNIT_EXPECT_FALSE_MSG(test, kite_ib_cqe_valid(&cqe, ci, 2),
				       "ci %u", ci);
		/* INVALID never looks valid, whatever the owner. */
		cqe_set(&cqe, 0xf, first);
		KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(&cqe, ci, 2));
		cqe_set(&cqe, 0xf, !first);
		KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(&cqe, ci, 2));
	}

	/* Zeroed memory is invalid on the first pass only. */
	cqe.op_own = 0;
	KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(&cqe, 0, 2));
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 4, 2));

	/* Other fields and reserved op_own bits do not matter. */
	memset(&cqe, 0xff, sizeof(cqe));
	cqe.op_own = cpu_to_le32(0xffffff0f & ~0xf0u);	/* opcode 0, owner 1 */
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 0, 2));

	/* The 24-bit counter wraps on a pass boundary: 0xfffffc is odd. */
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND, false);
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 0xfffffc, 2));
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 0xffffff, 2));
	KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(&cqe, 0, 2));
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND, true);
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 0, 2));

	/* Depth 65536 (log 16) and depth 2 (log 1). */
	cqe_set(&cqe, KITE_CQE_OP_REQ, true);
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 0xffff, 16));
	KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(&cqe, 0x10000, 16));
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 0x20000, 16));
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(&cqe, 1, 1));
	KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(&cqe, 2, 1));
}

static void kite_ib_test_arm_word(struct kunit *test)
{
	/* ARM_CI 23:0, CMD 25:24 (SOLICITED 1, NEXT 2), CMD_SN 29:28. */
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_word(0, 0, false), 0x02000000u);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_word(0, 0, true), 0x01000000u);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_word(0x123456, 1, false),
			0x12123456u);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_word(0xabcdef, 3, true),
			0x31abcdefu);
	/* The counter is 24 bits, the sequence number 2. */
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_word(0x1000005, 4, false),
			0x02000005u);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_word(0xffffffff, 6, true),
			0x21ffffffu);
}

static void kite_ib_test_arm_doorbell(struct kunit *test)
{
	u8 sn;

	/* OBJ 23:0, TYPE 27:24 (CQ_ARM 3), CMD 33:32, CMD_SN 37:36. */
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_doorbell(0x42, 0, false),
			0x0000000203000042ull);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_doorbell(0x42, 1, false),
			0x0000001203000042ull);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_doorbell(0x42, 2, true),
			0x0000002103000042ull);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_doorbell(0xffffff, 3, true),
			0x0000003103ffffffull);
	KUNIT_EXPECT_EQ(test, kite_ib_cq_arm_doorbell(7, 5, false),
			0x0000001203000007ull);

	/* The doorbell's CMD and CMD_SN equal the arm word's. */
	for (sn = 0; sn < 8; sn++) {
		u32 w0 = kite_ib_cq_arm_word(9, sn, false);
		u32 w1 = kite_ib_cq_arm_word(9, sn, true);
		u64 d0 = kite_ib_cq_arm_doorbell(9, sn, false);
		u64 d1 = kite_ib_cq_arm_doorbell(9, sn, true);

		KUNIT_EXPECT_EQ(test, (w0 >> 24) & 3, (u32)(d0 >> 32) & 3);
		KUNIT_EXPECT_EQ(test, (w0 >> 28) & 3, (u32)(d0 >> 36) & 3);
		KUNIT_EXPECT_EQ(test, (w1 >> 24) & 3, (u32)(d1 >> 32) & 3);
		KUNIT_EXPECT_EQ(test, (w1 >> 28) & 3, (u32)(d1 >> 36) & 3);
		KUNIT_EXPECT_EQ(test, (w0 >> 28) & 3, (u32)sn & 3);
	}
}

static void kite_ib_test_syndromes(struct kunit *test)
{
	static const struct {
		u8 synd;
		enum ib_wc_status status;
	} map[] = {
		{ 0x01, IB_WC_LOC_LEN_ERR },
		{ 0x02, IB_WC_LOC_QP_OP_ERR },
		{ 0x04, IB_WC_LOC_PROT_ERR },
		{ 0x05, IB_WC_WR_FLUSH_ERR },
		{ 0x06, IB_WC_MW_BIND_ERR },
		{ 0x10, IB_WC_BAD_RESP_ERR },
		{ 0x11, IB_WC_LOC_ACCESS_ERR },
		{ 0x12, IB_WC_REM_INV_REQ_ERR },
		{ 0x13, IB_WC_REM_ACCESS_ERR },
		{ 0x14, IB_WC_REM_OP_ERR },
		{ 0x15, IB_WC_RETRY_EXC_ERR },
		{ 0x16, IB_WC_RNR_RETRY_EXC_ERR },
		{ 0x22, IB_WC_REM_ABORT_ERR },
	};
	unsigned int i, v, known;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    kite_ib_syndrome_to_wc_status(map[i].synd),
				    map[i].status, "syndrome %#x", map[i].synd);

	/* Everything else, 0 included, is a general error. */
	for (v = 0; v < 256; v++) {
		known = 0;
		for (i = 0; i < ARRAY_SIZE(map); i++)
			known |= map[i].synd == v;
		if (!known)
			KUNIT_EXPECT_EQ_MSG(test,
					    kite_ib_syndrome_to_wc_status(v),
					    IB_WC_GENERAL_ERR, "syndrome %#x",
					    v);
	}
}

static void kite_ib_test_wc_req(struct kunit *test)
{
	static const struct {
		u8 wqe_op;
		enum ib_wc_opcode opcode;
	} map[] = {
		{ 0x00, IB_WC_SEND },
		{ 0x01, IB_WC_SEND },
		{ 0x02, IB_WC_SEND },
		{ 0x03, IB_WC_RDMA_WRITE },
		{ 0x04, IB_WC_RDMA_WRITE },
		{ 0x05, IB_WC_RDMA_READ },
		{ 0x06, IB_WC_COMP_SWAP },
		{ 0x07, IB_WC_FETCH_ADD },
		{ 0x08, IB_WC_LOCAL_INV },
		{ 0x09, IB_WC_REG_MR },
	};
	struct ib_qp qp = { .qp_type = IB_QPT_RC };
	struct kite_cqe cqe = {};
	struct ib_wc wc;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.qpn = cpu_to_le32(5);
		cqe.byte_len = cpu_to_le32(8);
		cqe.wqe_opcode = map[i].wqe_op;
		cqe_set(&cqe, KITE_CQE_OP_REQ, true);
		memset(&wc, 0xa5, sizeof(wc));
		KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 1000 + i, &qp),
				0);
		KUNIT_EXPECT_EQ(test, wc.opcode, map[i].opcode);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 1000ull + i);
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, &qp);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8u);
		KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);
		KUNIT_EXPECT_EQ(test, wc.slid, 0u);
		KUNIT_EXPECT_EQ(test, wc.src_qp, 0u);
		KUNIT_EXPECT_EQ(test, wc.vendor_err, 0u);
	}

	/* An unknown WQE opcode in a successful requester CQE. */
	cqe.wqe_opcode = 0x0a;
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 1, &qp), -EIO);
	cqe.wqe_opcode = 0xff;
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 1, &qp), -EIO);
}

static void kite_ib_test_wc_resp(struct kunit *test)
{
	struct ib_qp qp = { .qp_type = IB_QPT_RC };
	struct kite_cqe cqe = {};
	struct ib_wc wc;

	cqe.byte_len = cpu_to_le32(4096);
	cqe.flags = cpu_to_le16(KITE_CQE_F_SOLICITED);
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND, true);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 7, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 4096u);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ull);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);

	/* Immediate data stays in wire (big-endian) order. */
	cqe.imm_data = cpu_to_be32(0x11223344);
	cqe.flags = cpu_to_le16(KITE_CQE_F_IMM);
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND_IMM, true);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 8, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x11223344u);

	cqe.inv_rkey = cpu_to_le32(0xabcd0012);
	cqe.flags = cpu_to_le16(KITE_CQE_F_INV);
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND_INV, true);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 9, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, 0xabcd0012u);

	cqe.imm_data = cpu_to_be32(0xdeadbeef);
	cqe.byte_len = cpu_to_le32(100);
	cqe.flags = cpu_to_le16(KITE_CQE_F_IMM);
	cqe_set(&cqe, KITE_CQE_OP_RESP_WRITE_IMM, false);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 10, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xdeadbeefu);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100u);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0u);
}

static void kite_ib_test_wc_ud(struct kunit *test)
{
	static const u8 mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct ib_qp qp = { .qp_type = IB_QPT_UD };
	struct kite_cqe cqe = {};
	struct ib_wc wc;

	cqe.byte_len = cpu_to_le32(40 + 256);
	cqe.src_qpn = cpu_to_le32(0xff000123);	/* high bits reserved */
	memcpy(cqe.smac, mac, sizeof(mac));
	/* VALID, PCP 5, VID 0x123; GRH; L3 IPv6 (2). */
	cqe.vlan = cpu_to_le16(0x8000 | (5 << 12) | 0x123);
	cqe.flags = cpu_to_le16(KITE_CQE_F_GRH | KITE_CQE_F_VLAN | (2 << 5));
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND, true);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 11, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 296u);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0x123u);
	KUNIT_EXPECT_EQ(test, wc.slid, 0u);
	KUNIT_EXPECT_MEMEQ(test, wc.smac, mac, sizeof(mac));
	KUNIT_EXPECT_EQ(test, wc.vlan_id, 0x123);
	KUNIT_EXPECT_EQ(test, wc.sl, 5);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, wc.wc_flags,
			IB_WC_GRH | IB_WC_WITH_SMAC | IB_WC_WITH_VLAN |
			IB_WC_WITH_NETWORK_HDR_TYPE);

	/* GSI, with immediate, IPv4, no VLAN. */
	qp.qp_type = IB_QPT_GSI;
	cqe.imm_data = cpu_to_be32(1);
	cqe.flags = cpu_to_le16(KITE_CQE_F_GRH | KITE_CQE_F_IMM | (1 << 5));
	cqe_set(&cqe, KITE_CQE_OP_RESP_SEND_IMM, true);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 12, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.vlan_id, 0);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, wc.wc_flags,
			IB_WC_GRH | IB_WC_WITH_IMM | IB_WC_WITH_SMAC |
			IB_WC_WITH_NETWORK_HDR_TYPE);

	/* The same CQE on an RC QP reports no address. */
	qp.qp_type = IB_QPT_RC;
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 12, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0u);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_GRH | IB_WC_WITH_IMM);
}

static void kite_ib_test_wc_err(struct kunit *test)
{
	struct ib_qp qp = { .qp_type = IB_QPT_RC };
	struct kite_cqe cqe = {};
	struct ib_wc wc;

	cqe.byte_len = cpu_to_le32(99);
	cqe.wqe_opcode = 0x05;	/* RDMA READ */
	cqe.syndrome = cpu_to_le32(0xabcd0000 | (0x7e << 8) | 0x15);
	cqe_set(&cqe, KITE_CQE_OP_REQ_ERR, true);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 13, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, wc.vendor_err, 0x7eu);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 13ull);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0u);

	/* A flushed WQE with an opcode the driver does not know. */
	cqe.wqe_opcode = 0xee;
	cqe.syndrome = cpu_to_le32(0x05);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 14, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);

	cqe.syndrome = cpu_to_le32(0x11);
	cqe_set(&cqe, KITE_CQE_OP_RESP_ERR, false);
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 15, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);

	/* Syndrome 0 in an error CQE is not a success. */
	cqe.syndrome = 0;
	KUNIT_ASSERT_EQ(test, kite_ib_cqe_to_wc(&cqe, &wc, 16, &qp), 0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_GENERAL_ERR);
}

static void kite_ib_test_wc_unknown(struct kunit *test)
{
	struct ib_qp qp = { .qp_type = IB_QPT_RC };
	struct kite_cqe cqe = {};
	struct ib_wc wc;
	u32 op;

	/* RESIZE and INVALID are not work completions either. */
	for (op = 0x5; op <= 0xf; op++) {
		if (op == KITE_CQE_OP_REQ_ERR || op == KITE_CQE_OP_RESP_ERR)
			continue;
		cqe_set(&cqe, op, true);
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_cqe_to_wc(&cqe, &wc, 0, &qp),
				    -EIO, "opcode %#x", op);
	}
}

/* ------------------------------------------------------------------ */
/* poll_cq and arm requests on fake memory                             */
/* ------------------------------------------------------------------ */

static int fake_page_alloc(void *ctx, struct kite_ib_dma_page *page)
{
	static dma_addr_t next = 0x100000;

	page->va = kzalloc(4096, GFP_KERNEL);
	if (!page->va)
		return -ENOMEM;
	page->dma = next;
	next += 4096;
	return 0;
}

static void fake_page_free(void *ctx, struct kite_ib_dma_page *page)
{
	kfree(page->va);
	page->va = NULL;
}

static const struct kite_ib_page_ops fake_page_ops = {
	.alloc = fake_page_alloc,
	.free = fake_page_free,
};

/**
 * struct kite_cq_test - per-test fixture for poll_cq and arm requests
 * @dev: a device with only what the CQ paths touch
 * @cq: a 4-entry CQ in fake memory
 * @qp: an RC QP with 4-entry queues, registered as QPN 9
 * @dbrec: the CQ's doorbell record
 * @other: another CQ, for a QP that does not complete on @cq
 * @sq_wr_id: the SQ's wr_id array
 * @sq_opcode: the SQ's opcode array
 * @rq_wr_id: the RQ's wr_id array
 * @rq_len: the RQ's posted lengths
 */
struct kite_cq_test {
	struct kite_ib_dev dev;
	struct kite_ib_cq cq;
	struct kite_ib_qp qp;
	struct kite_cq_dbrec dbrec;
	struct kite_ib_cq other;
	u64 sq_wr_id[4];
	u8 sq_opcode[4];
	u64 rq_wr_id[4];
	u32 rq_len[4];
};

/* Set up the fixture for the tests that use one; exit tears it down. */
static struct kite_cq_test *kite_cq_fixture(struct kunit *test)
{
	struct kite_cq_test *t;
	unsigned int i;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	test->priv = t;
	xa_init_flags(&t->dev.qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&t->dev.cq_xa, XA_FLAGS_LOCK_IRQ);
	kite_ib_guard_init(&t->dev);
	/* A device that works (kite_ib_dead() is false). */
	t->dev.cmdq.state = KITE_CMDQ_EVENTS;
	/* QPNs below 64 are the device's; beyond, a CQE is corrupt. */
	t->dev.caps.max_qp = 64;
	t->cq.ibcq.device = &t->dev.ibdev;
	t->cq.cqn = 0x42;
	t->cq.dbrec = &t->dbrec;
	spin_lock_init(&t->cq.lock);
	KUNIT_ASSERT_EQ(test,
			kite_ib_hwq_alloc_pages(&t->cq.hwq, 4, 6,
						&fake_page_ops, NULL), 0);
	for (i = 0; i < 4; i++)
		cqe_set(kite_ib_hwq_entry(&t->cq.hwq, i), 0xf, false);

	t->qp.qpn = 9;
	t->qp.ibqp.qp_type = IB_QPT_RC;
	t->qp.ibqp.device = &t->dev.ibdev;
	t->qp.ibqp.send_cq = &t->cq.ibcq;
	t->qp.ibqp.recv_cq = &t->cq.ibcq;
	refcount_set(&t->qp.ref.refcount, 1);
	init_completion(&t->qp.ref.free);
	spin_lock_init(&t->qp.sq.lock);
	spin_lock_init(&t->qp.rq.lock);
	t->qp.sq.hwq.depth = 4;
	t->qp.sq.wr_id = t->sq_wr_id;
	t->qp.sq.opcode = t->sq_opcode;
	t->qp.rq.hwq.depth = 4;
	t->qp.rq.wr_id = t->rq_wr_id;
	t->qp.rq.len = t->rq_len;
	memset(t->rq_len, 0xff, sizeof(t->rq_len));
	KUNIT_ASSERT_EQ(test, xa_insert(&t->dev.qp_xa, 9, &t->qp.ref, GFP_KERNEL),
			0);
	return t;
}

static void kite_cq_test_exit(struct kunit *test)
{
	struct kite_cq_test *t = test->priv;

	if (!t)
		return;
	/* The isolation work skips the fixture's QP (RESET): wait for it. */
	kite_ib_guard_stop(&t->dev);
	kite_ib_hwq_free_pages(&t->cq.hwq, &fake_page_ops, NULL);
	xa_destroy(&t->dev.qp_xa);
	xa_destroy(&t->dev.cq_xa);
}

static struct kite_cqe *fake_cqe(struct kite_cq_test *t, u32 pi, u32 qpn,
				 u32 op, u16 idx)
{
	struct kite_cqe *cqe = kite_ib_hwq_entry(&t->cq.hwq, pi);

	memset(cqe, 0, sizeof(*cqe));
	cqe->qpn = cpu_to_le32(qpn);
	cqe->wqe_idx = cpu_to_le16(idx);
	cqe_set(cqe, op, !((pi >> 2) & 1));
	return cqe;
}

static void kite_ib_test_poll(struct kunit *test)
{
	struct kite_cq_test *t = kite_cq_fixture(test);
	struct ib_wc wc[8];
	u32 pi;

	/* Three SQ WQEs posted (counters 0xfffe..0x10000), two RQ WQEs. */
	t->qp.sq.pi = 0x10001;
	t->qp.sq.ci = 0xfffe;
	t->sq_wr_id[0xfffe & 3] = 100;
	t->sq_wr_id[0xffff & 3] = 101;
	t->sq_wr_id[0x10000 & 3] = 102;
	t->qp.rq.pi = 2;
	t->rq_wr_id[0] = 200;
	t->rq_wr_id[1] = 201;

	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);

	/* Only the last SQ WQE signalled: it completes the others too. */
	fake_cqe(t, 0, 9, KITE_CQE_OP_REQ, 0x0000)->wqe_opcode = 0x03;
	fake_cqe(t, 1, 9, KITE_CQE_OP_RESP_SEND, 0);
	fake_cqe(t, 2, 77, KITE_CQE_OP_RESP_SEND, 1);	/* beyond max_qp */
	fake_cqe(t, 3, 9, KITE_CQE_OP_RESP_SEND, 1);
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 2, wc), 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 102ull);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, &t->qp.ibqp);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 200ull);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, t->qp.sq.ci, 0x10001u);
	KUNIT_EXPECT_EQ(test, t->qp.rq.ci, 1u);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 2u);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.ci), 2u);

	/*
	 * The CQE for a QPN beyond the device's range is consumed, skipped
	 * and counted; the CQ lost a completion, so its QPs are isolated.
	 */
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 201ull);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 4u);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.ci), 4u);
	KUNIT_EXPECT_EQ(test, t->qp.rq.ci, 2u);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->dev.bad[KITE_IB_BAD_CQE_QPN]), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->dev.cqs_isolated), 1);

	/* A CQE for a WQE that is not outstanding is skipped and counted. */
	fake_cqe(t, 4, 9, KITE_CQE_OP_RESP_SEND, 2);
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 5u);
	KUNIT_EXPECT_EQ(test, t->qp.rq.ci, 2u);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->dev.bad[KITE_IB_BAD_CQE_WQE_IDX]), 1);

	/* Second pass, an error CQE; nothing beyond it. */
	t->qp.rq.pi = 3;
	t->rq_wr_id[2] = 202;
	pi = 5;
	fake_cqe(t, pi, 9, KITE_CQE_OP_RESP_ERR, 2)->syndrome =
		cpu_to_le32(0x05);
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 202ull);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.ci), 6u);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->qp.ref.refcount), 1u);
}

/*
 * A QP reset or destroyed: its CQEs leave the CQ, the others move up in
 * order, each slot keeping the owner bit of its index, across the wrap.
 */
static void kite_ib_test_cq_clean(struct kunit *test)
{
	struct kite_cq_test *t = kite_cq_fixture(test);
	struct kite_cqe *cqe;
	struct ib_wc wc[4];
	u32 i;

	/* Two CQEs consumed, so that the next four wrap. */
	t->cq.ci = 2;
	fake_cqe(t, 2, 9, KITE_CQE_OP_RESP_SEND, 0);
	fake_cqe(t, 3, 5, KITE_CQE_OP_REQ, 0x10);
	fake_cqe(t, 4, 9, KITE_CQE_OP_REQ, 0);
	fake_cqe(t, 5, 5, KITE_CQE_OP_RESP_SEND, 0x11);
	/* Slot 6 (2 of the next pass) is not valid: the CQEs end at 5. */
	kite_ib_cq_clean(&t->cq, 9, NULL);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 4u);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.ci), 4u);
	/* CQE 3 moved to 4, across the wrap: the owner bit is slot 4's. */
	for (i = 4; i < 6; i++) {
		cqe = kite_ib_hwq_entry(&t->cq.hwq, i);
		KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(cqe, i, 2));
		KUNIT_EXPECT_EQ(test, le32_to_cpu(cqe->qpn), 5u);
		KUNIT_EXPECT_EQ(test, le16_to_cpu(cqe->wqe_idx), 0xc + i);
	}
	cqe = kite_ib_hwq_entry(&t->cq.hwq, 4);
	KUNIT_EXPECT_EQ(test, FIELD_GET(KITE_CQE_OPCODE,
					le32_to_cpu(cqe->op_own)),
			KITE_CQE_OP_REQ);
	KUNIT_EXPECT_FALSE(test,
			   kite_ib_cqe_valid(kite_ib_hwq_entry(&t->cq.hwq, 6),
					     6, 2));

	/* Nothing of QP 9 left: nothing moves. */
	kite_ib_cq_clean(&t->cq, 9, NULL);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 4u);
	/* QP 5 is gone: polling skips its two CQEs, none is lost. */
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 4, wc), 0);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 6u);

	/* Only CQEs of the QP: all dropped, ci past them. */
	fake_cqe(t, 6, 9, KITE_CQE_OP_REQ, 0);
	fake_cqe(t, 7, 9, KITE_CQE_OP_RESP_ERR, 0);
	kite_ib_cq_clean(&t->cq, 9, NULL);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 8u);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.ci), 8u);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->dev.cqs_isolated), 0);
}

/*
 * A QP on an SRQ reset: its receive CQEs give their SRQ WQEs back (free
 * for the next post), its send CQEs and a receive CQE naming a WQE that is
 * not outstanding take nothing, and another QP's receive stays.
 */
static void kite_ib_test_cq_clean_srq(struct kunit *test)
{
	struct kite_cq_test *t = kite_cq_fixture(test);
	struct kite_ib_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	unsigned long busy[1] = {};
	u64 wr_id[4] = {};
	u32 len[4] = {};
	u16 free[4] = {};
	struct kite_cqe *cqe;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	spin_lock_init(&srq->lock);
	srq->hwq.depth = 4;
	srq->ntags = 4;
	srq->wr_id = wr_id;
	srq->len = len;
	srq->busy = busy;
	srq->free = free;
	srq->outstanding = 4;
	bitmap_fill(busy, 4);

	fake_cqe(t, 0, 9, KITE_CQE_OP_RESP_SEND, 1);
	fake_cqe(t, 1, 5, KITE_CQE_OP_RESP_SEND, 2);
	fake_cqe(t, 2, 9, KITE_CQE_OP_REQ, 0);
	fake_cqe(t, 3, 9, KITE_CQE_OP_RESP_WRITE_IMM, 3);
	kite_ib_cq_clean(&t->cq, 9, srq);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 3u);
	KUNIT_EXPECT_EQ(test, srq->outstanding, 2u);
	KUNIT_EXPECT_EQ(test, srq->nfree, 2u);
	/* Newest first: WQE 3, then WQE 1. */
	KUNIT_EXPECT_EQ(test, free[0], 3);
	KUNIT_EXPECT_EQ(test, free[1], 1);
	KUNIT_EXPECT_FALSE(test, test_bit(1, busy));
	KUNIT_EXPECT_TRUE(test, test_bit(2, busy));
	KUNIT_EXPECT_FALSE(test, test_bit(3, busy));
	/* QP 5's receive moved to the last slot, still naming WQE 2. */
	cqe = kite_ib_hwq_entry(&t->cq.hwq, 3);
	KUNIT_EXPECT_TRUE(test, kite_ib_cqe_valid(cqe, 3, 2));
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cqe->qpn), 5u);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cqe->wqe_idx), 2);

	/* A receive CQE naming a WQE already free gives nothing back twice. */
	fake_cqe(t, 4, 9, KITE_CQE_OP_RESP_ERR, 1);
	kite_ib_cq_clean(&t->cq, 9, srq);
	KUNIT_EXPECT_EQ(test, srq->outstanding, 2u);
	KUNIT_EXPECT_EQ(test, srq->nfree, 2u);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 4u);
}

/* How often bad device data of class @what was counted. */
static s64 bad(struct kite_cq_test *t, enum kite_ib_bad what)
{
	return atomic64_read(&t->dev.bad[what]);
}

static int qp_fatal_events;

static void count_qp_fatal(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_QP_FATAL)
		qp_fatal_events++;
}

/* QPs isolated so far, after the isolation work ran. */
static s64 isolated(struct kite_cq_test *t)
{
	flush_work(&t->dev.isolate_work);
	return atomic64_read(&t->dev.qps_isolated);
}

/* Each field of a corrupt CQE: counted, skipped or failed, QP isolated. */
static void kite_ib_test_poll_corrupt(struct kunit *test)
{
	struct kite_cq_test *t = kite_cq_fixture(test);
	struct kite_cqe *cqe;
	struct ib_wc wc[8];

	/* In ERR already: the isolation work only reports QP_FATAL. */
	t->qp.state = IB_QPS_ERR;
	t->qp.ibqp.event_handler = count_qp_fatal;
	qp_fatal_events = 0;
	t->qp.rq.pi = 4;
	t->rq_wr_id[0] = 300;
	t->rq_wr_id[1] = 301;
	t->rq_wr_id[2] = 302;
	t->rq_wr_id[3] = 303;
	t->rq_len[0] = 100;
	t->rq_len[1] = 100;
	t->rq_len[2] = 100;

	/* A QPN of the device's range that is gone: skipped, not counted. */
	fake_cqe(t, 0, 5, KITE_CQE_OP_RESP_SEND, 0);
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_QPN), 0);
	KUNIT_EXPECT_EQ(test, isolated(t), 0);

	/* The QP's receive queue completes on another CQ. */
	t->qp.ibqp.recv_cq = &t->other.ibcq;
	fake_cqe(t, 1, 9, KITE_CQE_OP_RESP_SEND, 0);
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_CQN), 1);
	KUNIT_EXPECT_EQ(test, t->qp.rq.ci, 0u);
	KUNIT_EXPECT_EQ(test, isolated(t), 1);
	KUNIT_EXPECT_EQ(test, qp_fatal_events, 1);
	t->qp.ibqp.recv_cq = &t->cq.ibcq;

	/* An opcode the driver does not know. */
	fake_cqe(t, 2, 9, 0x7, 0);
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_OPCODE), 1);
	KUNIT_EXPECT_EQ(test, isolated(t), 2);

	/* A receive longer than its buffers: an error completion. */
	cqe = fake_cqe(t, 3, 9, KITE_CQE_OP_RESP_SEND, 0);
	cqe->byte_len = cpu_to_le32(0x80001234);
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 300ull);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, wc[0].byte_len, 0u);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_LEN), 1);
	KUNIT_EXPECT_EQ(test, isolated(t), 3);

	/* At most the posted length is fine. */
	cqe = fake_cqe(t, 4, 9, KITE_CQE_OP_RESP_SEND, 1);
	cqe->byte_len = cpu_to_le32(100);
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[0].byte_len, 100u);
	KUNIT_EXPECT_EQ(test, isolated(t), 3);

	/* An error with a syndrome nobody defined. */
	cqe = fake_cqe(t, 5, 9, KITE_CQE_OP_RESP_ERR, 2);
	cqe->syndrome = cpu_to_le32(0x9977);
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 302ull);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_GENERAL_ERR);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_SYNDROME), 1);
	KUNIT_EXPECT_EQ(test, isolated(t), 4);

	/*
	 * Slot 6 keeps the first pass's owner (written out of turn), slot 7
	 * holds CQE number 7: slot 6 is skipped, the CQ reported.
	 */
	fake_cqe(t, 6, 9, KITE_CQE_OP_RESP_SEND, 3);
	cqe_set(kite_ib_hwq_entry(&t->cq.hwq, 6), KITE_CQE_OP_RESP_SEND, true);
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 6u);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_OWNER), 0);
	fake_cqe(t, 7, 9, KITE_CQE_OP_RESP_SEND, 3);
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 303ull);
	KUNIT_EXPECT_EQ(test, t->cq.ci, 8u);
	KUNIT_EXPECT_EQ(test, bad(t, KITE_IB_BAD_CQE_OWNER), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->dev.cqs_isolated), 1);
	/* The skipped slot (its owner bit is pass 2's) cannot pass for CQE 10. */
	cqe = kite_ib_hwq_entry(&t->cq.hwq, 10);
	KUNIT_EXPECT_FALSE(test, kite_ib_cqe_valid(cqe, 10, 2));
	KUNIT_EXPECT_EQ(test, FIELD_GET(KITE_CQE_OPCODE, le32_to_cpu(cqe->op_own)),
			KITE_CQE_OP_INVALID);
	/* The CQ's QP: isolated through the CQ. */
	KUNIT_EXPECT_EQ(test, isolated(t), 5);
	KUNIT_EXPECT_EQ(test, qp_fatal_events, 5);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->qp.ref.refcount), 1u);
}

static void kite_ib_test_check_wc(struct kunit *test)
{
	struct ib_wc wc = { .status = IB_WC_SUCCESS, .opcode = IB_WC_RECV };

	wc.byte_len = 4096;
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, 0, 4096),
			KITE_IB_BAD_COUNT);
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, 0, 4095),
			KITE_IB_BAD_CQE_LEN);
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, 0, U32_MAX),
			KITE_IB_BAD_COUNT);
	/* RDMA WRITE with immediate: not bounded by the receive WQE. */
	wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, 0, 0),
			KITE_IB_BAD_COUNT);
	/* Every defined syndrome is accepted, an undefined one is not. */
	wc.status = IB_WC_WR_FLUSH_ERR;
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, KITE_SYND_WR_FLUSH, 0),
			KITE_IB_BAD_COUNT);
	KUNIT_EXPECT_EQ(test,
			kite_ib_cqe_check_wc(&wc, KITE_SYND_ABORTED | 0x4200, 0),
			KITE_IB_BAD_COUNT);
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, 0x30, 0),
			KITE_IB_BAD_CQE_SYNDROME);
	KUNIT_EXPECT_EQ(test, kite_ib_cqe_check_wc(&wc, 0, 0),
			KITE_IB_BAD_CQE_SYNDROME);
}

static void kite_ib_test_recv_wr_len(struct kunit *test)
{
	struct ib_sge sge[3] = {
		{ .length = 100 }, { .length = 200 }, { .length = U32_MAX },
	};
	struct ib_recv_wr wr = { .sg_list = sge, .num_sge = 2 };

	KUNIT_EXPECT_EQ(test, kite_ib_recv_wr_len(&wr), 300u);
	wr.num_sge = 3;
	KUNIT_EXPECT_EQ(test, kite_ib_recv_wr_len(&wr), U32_MAX);
	wr.num_sge = 0;
	KUNIT_EXPECT_EQ(test, kite_ib_recv_wr_len(&wr), 0u);
}

static void kite_ib_test_notify(struct kunit *test)
{
	struct kite_cq_test *t = kite_cq_fixture(test);
	unsigned long flags;
	u64 db;

	spin_lock_irqsave(&t->cq.lock, flags);
	t->cq.ci = 0x123;
	db = kite_ib_cq_arm(&t->cq, false);
	spin_unlock_irqrestore(&t->cq.lock, flags);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.arm), 0x02000123u);
	KUNIT_EXPECT_EQ(test, db, 0x0000000203000042ull);

	/* A completion event advances the sequence number. */
	kite_ib_cq_event(&t->cq);
	spin_lock_irqsave(&t->cq.lock, flags);
	db = kite_ib_cq_arm(&t->cq, true);
	spin_unlock_irqrestore(&t->cq.lock, flags);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.arm), 0x11000123u);
	KUNIT_EXPECT_EQ(test, db, 0x0000001103000042ull);

	/* Four events wrap it. */
	kite_ib_cq_event(&t->cq);
	kite_ib_cq_event(&t->cq);
	kite_ib_cq_event(&t->cq);
	KUNIT_EXPECT_EQ(test, t->cq.arm_sn, 0);
	spin_lock_irqsave(&t->cq.lock, flags);
	t->cq.ci = 0x1000000;	/* counter 0 after the 24-bit wrap */
	db = kite_ib_cq_arm(&t->cq, false);
	spin_unlock_irqrestore(&t->cq.lock, flags);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dbrec.arm), 0x02000000u);
	KUNIT_EXPECT_EQ(test, db, 0x0000000203000042ull);
}

/*
 * On a dead device the work requests outstanding on the CQ's kernel QPs
 * are flushed by poll_cq, in order, each once, signalled or not, after the
 * valid CQEs; a user QP's are not the driver's to flush.
 */
static void kite_ib_test_poll_dead(struct kunit *test)
{
	struct kite_cq_test *t = kite_cq_fixture(test);
	struct kite_ib_qp user = {};
	struct ib_wc wc[8];

	t->qp.sq.pi = 0x10001;
	t->qp.sq.ci = 0xfffe;
	t->sq_wr_id[0xfffe & 3] = 100;
	t->sq_wr_id[0xffff & 3] = 101;
	t->sq_wr_id[0x10000 & 3] = 102;
	t->sq_opcode[0xfffe & 3] = KITE_WQE_OP_SEND_IMM;
	t->sq_opcode[0xffff & 3] = KITE_WQE_OP_RDMA_WRITE;
	t->sq_opcode[0x10000 & 3] = KITE_WQE_OP_RDMA_READ;
	t->qp.rq.pi = 2;
	t->rq_wr_id[0] = 200;
	t->rq_wr_id[1] = 201;
	/* A user QP on the same CQ, with WQEs outstanding in its rings. */
	user.qpn = 10;
	user.uctx = 3;
	user.ibqp.send_cq = &t->cq.ibcq;
	user.ibqp.recv_cq = &t->cq.ibcq;
	user.sq.pi = 5;
	spin_lock_init(&user.sq.lock);
	spin_lock_init(&user.rq.lock);
	KUNIT_ASSERT_EQ(test, xa_insert(&t->dev.qp_xa, 10, &user.ref,
					GFP_KERNEL), 0);

	/* One valid CQE first: the receive of WQE 0. */
	fake_cqe(t, 0, 9, KITE_CQE_OP_RESP_SEND, 0);
	t->dev.cmdq.state = KITE_CMDQ_FATAL;
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 2, wc), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 200ull);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 100ull);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_SEND);
	KUNIT_EXPECT_PTR_EQ(test, wc[1].qp, &t->qp.ibqp);

	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 3);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 101ull);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 102ull);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 201ull);
	KUNIT_EXPECT_EQ(test, wc[2].opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc[2].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, t->qp.sq.ci, 0x10001u);
	KUNIT_EXPECT_EQ(test, t->qp.rq.ci, 2u);
	KUNIT_EXPECT_EQ(test, user.sq.ci, 0u);

	/* Each once: nothing more until something is posted. */
	KUNIT_EXPECT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 0);
	t->sq_wr_id[0x10001 & 3] = 103;
	t->qp.sq.pi++;
	KUNIT_ASSERT_EQ(test, kite_ib_poll_cq(&t->cq.ibcq, 8, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 103ull);
	xa_erase(&t->dev.qp_xa, 10);
}

static struct kunit_case kite_ib_cq_test_cases[] = {
	KUNIT_CASE(kite_ib_test_cqe_owner),
	KUNIT_CASE(kite_ib_test_arm_word),
	KUNIT_CASE(kite_ib_test_arm_doorbell),
	KUNIT_CASE(kite_ib_test_syndromes),
	KUNIT_CASE(kite_ib_test_wc_req),
	KUNIT_CASE(kite_ib_test_wc_resp),
	KUNIT_CASE(kite_ib_test_wc_ud),
	KUNIT_CASE(kite_ib_test_wc_err),
	KUNIT_CASE(kite_ib_test_wc_unknown),
	KUNIT_CASE(kite_ib_test_poll),
	KUNIT_CASE(kite_ib_test_poll_corrupt),
	KUNIT_CASE(kite_ib_test_poll_dead),
	KUNIT_CASE(kite_ib_test_cq_clean),
	KUNIT_CASE(kite_ib_test_cq_clean_srq),
	KUNIT_CASE(kite_ib_test_check_wc),
	KUNIT_CASE(kite_ib_test_recv_wr_len),
	KUNIT_CASE(kite_ib_test_notify),
	{}
};

static struct kunit_suite kite_ib_cq_test_suite = {
	.name = "kite_ib_cq",
	.exit = kite_cq_test_exit,
	.test_cases = kite_ib_cq_test_cases,
};

kunit_test_suite(kite_ib_cq_test_suite);
