// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's WQE builders and MODIFY_QP translation.
 *
 * Every WQE is built into a stride pre-filled with a poison byte, then
 * read back field by field at the offsets prm_wqe.rst gives, with the
 * expected values written out here rather than computed by the driver;
 * the bytes after the last segment must be zero.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/string.h>

#include "kite_ib.h"

#define STRIDE		128
#define POISON		0xa5

/**
 * struct kite_wqe_test - per-test fixture
 * @buf: the stride the WQE is built in, plus a guard byte
 * @sge: SGEs the work requests point to
 * @ah: an address handle for UD work requests
 * @mr: a fast-registration MR for REG_MR work requests
 */
struct kite_wqe_test {
	u8 buf[1024 + 1];
	struct ib_sge sge[KITE_MAX_SGE + 2];
	struct kite_ib_ah ah;
	struct kite_ib_mr mr;
};

static int kite_wqe_test_init(struct kunit *test)
{
	struct kite_wqe_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	memset(t->buf, POISON, sizeof(t->buf));
	test->priv = t;
	return 0;
}

static const struct kite_wqe_ctrl *ctrl_of(struct kite_wqe_test *t)
{
	return (const struct kite_wqe_ctrl *)t->buf;
}

/* The bytes [@from, @to) of the stride are all zero, and the guard intact. */
static void expect_zero(struct kunit *test, struct kite_wqe_test *t,
			size_t from, size_t to)
{
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(t->buf + from, 0, to - from),
			    NULL);
}

static void expect_ctrl(struct kunit *test, struct kite_wqe_test *t,
			u32 opcode, u32 imm_or_key, u16 idx, u16 inline_len)
{
	const struct kite_wqe_ctrl *c = ctrl_of(t);

	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->opcode), opcode);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->inv_key), imm_or_key);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(c->wqe_idx), idx);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(c->inline_len), inline_len);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->xrc_srqn), 0);
}

static void expect_sge(struct kunit *test, struct kite_wqe_test *t,
		       size_t off, u32 length, u32 lkey, u64 addr)
{
	const struct kite_wqe_sge *s = (const void *)(t->buf + off);

	KUNIT_EXPECT_EQ(test, le32_to_cpu(s->length), length);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(s->lkey), lkey);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(s->addr), addr);
}

static void expect_raddr(struct kunit *test, struct kite_wqe_test *t,
			 u64 addr, u32 rkey)
{
	const struct kite_wqe_raddr *r = (const void *)(t->buf + 0x10);

	KUNIT_EXPECT_EQ(test, le64_to_cpu(r->remote_addr), addr);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->rkey), rkey);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->rsvd), 0);
}

static void set_sges(struct kite_wqe_test *t, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		t->sge[i].addr = 0x1000000ULL * (i + 1) + 0x10;
		t->sge[i].length = 0x100 + i;
		t->sge[i].lkey = 0xabc00 + i;
	}
}

/* SEND, SEND_WITH_IMM, SEND_WITH_INV on RC: control + SGEs at 0x10. */
static void kite_wqe_test_rc_send(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .sg_list = t->sge, .num_sge = 2,
	};

	set_sges(t, 2);
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr,
						     0x1234, KITE_QPT_RC, 64,
						     false), 0);
	expect_ctrl(test, t, 0x00020000, 0, 0x1234, 0);
	expect_sge(test, t, 0x10, 0x100, 0xabc00, 0x1000010);
	expect_sge(test, t, 0x20, 0x101, 0xabc01, 0x2000010);
	expect_zero(test, t, 0x30, STRIDE);
	KUNIT_EXPECT_EQ(test, t->buf[STRIDE], POISON);

	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.ex.imm_data = cpu_to_be32(0x11223344);
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 7,
						     KITE_QPT_RC, 64,
						     false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode), 0x00010001);
	KUNIT_EXPECT_EQ(test, t->buf[4], 0x11);	/* wire order */
	KUNIT_EXPECT_EQ(test, t->buf[7], 0x44);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(ctrl_of(t)->wqe_idx), 7);
	expect_sge(test, t, 0x10, 0x100, 0xabc00, 0x1000010);
	expect_zero(test, t, 0x20, STRIDE);

	wr.opcode = IB_WR_SEND_WITH_INV;
	wr.ex.invalidate_rkey = 0xdeadbe01;
	wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 8,
						     KITE_QPT_RC, 64,
						     false), 0);
	expect_ctrl(test, t, 0x02, 0xdeadbe01, 8, 0);
	expect_zero(test, t, 0x10, STRIDE);
}

/* Flags: SIGNALED from the WR or sig_all, SOLICITED, FENCE. */
static void kite_wqe_test_flags(struct kunit *test)
{
	static const struct {
		int send_flags;
		bool sig_all;
		u32 bits;
	} cases[] = {
		{ 0, false, 0 },
		{ IB_SEND_SIGNALED, false, BIT(8) },
		{ 0, true, BIT(8) },
		{ IB_SEND_SIGNALED, true, BIT(8) },
		{ IB_SEND_SOLICITED, false, BIT(9) },
		{ IB_SEND_FENCE, false, BIT(10) },
		{ IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_FENCE, false,
		  BIT(8) | BIT(9) | BIT(10) },
	};
	struct kite_wqe_test *t = test->priv;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		wr.send_flags = cases[i].send_flags;
		KUNIT_ASSERT_EQ(test,
				kite_ib_build_send_wqe(t->buf, 64, &wr, 0,
						       KITE_QPT_RC, 0,
						       cases[i].sig_all), 0);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(ctrl_of(t)->opcode),
				    cases[i].bits, "case %d", i);
	}
}

static void kite_wqe_test_rdma(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	struct ib_rdma_wr rdma = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .sg_list = t->sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0x123456789abcdef0ULL,
		.rkey = 0x5566,
	};

	set_sges(t, 1);
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &rdma.wr,
						     1, KITE_QPT_RC, 0,
						     false), 0);
	expect_ctrl(test, t, 0x00010103, 0, 1, 0);
	expect_raddr(test, t, 0x123456789abcdef0ULL, 0x5566);
	expect_sge(test, t, 0x20, 0x100, 0xabc00, 0x1000010);
	expect_zero(test, t, 0x30, STRIDE);

	rdma.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	rdma.wr.ex.imm_data = cpu_to_be32(0xa1b2c3d4);
	rdma.wr.send_flags = IB_SEND_SOLICITED;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &rdma.wr,
						     2, KITE_QPT_RC, 0,
						     false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode), 0x00010204);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ctrl_of(t)->imm_data), 0xa1b2c3d4);
	expect_raddr(test, t, 0x123456789abcdef0ULL, 0x5566);

	rdma.wr.opcode = IB_WR_RDMA_READ;
	rdma.wr.send_flags = 0;
	rdma.wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &rdma.wr,
						     3, KITE_QPT_RC, 0,
						     false), 0);
	expect_ctrl(test, t, 0x05, 0, 3, 0);
	expect_raddr(test, t, 0x123456789abcdef0ULL, 0x5566);
	expect_zero(test, t, 0x20, STRIDE);

	/* RDMA READ cannot carry inline data */
	rdma.wr.send_flags = IB_SEND_INLINE;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &rdma.wr,
						     3, KITE_QPT_RC, 64,
						     false), -EINVAL);
}

static void kite_wqe_test_atomic(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	struct ib_atomic_wr at = {
		.wr = { .opcode = IB_WR_ATOMIC_CMP_AND_SWP, .sg_list = t->sge,
			.num_sge = 1, .send_flags = IB_SEND_FENCE },
		.remote_addr = 0xfedcba9876543210ULL,
		.compare_add = 0x1111222233334444ULL,
		.swap = 0x5555666677778888ULL,
		.rkey = 0x99aa,
	};
	const struct kite_wqe_atomic *a = (const void *)(t->buf + 0x20);

	t->sge[0] = (struct ib_sge){ .addr = 0x4000, .length = 8,
				     .lkey = 0x77 };
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &at.wr, 9,
						     KITE_QPT_RC, 0,
						     false), 0);
	expect_ctrl(test, t, 0x00010406, 0, 9, 0);
	expect_raddr(test, t, 0xfedcba9876543210ULL, 0x99aa);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(a->swap_add), 0x5555666677778888ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(a->compare), 0x1111222233334444ULL);
	expect_sge(test, t, 0x30, 8, 0x77, 0x4000);

	at.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	at.wr.send_flags = 0;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     10, KITE_QPT_RC, 0,
						     false), 0);
	expect_ctrl(test, t, 0x00010007, 0, 10, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(a->swap_add), 0x1111222233334444ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(a->compare), 0);
	expect_sge(test, t, 0x30, 8, 0x77, 0x4000);
	expect_zero(test, t, 0x40, STRIDE);

	/* misaligned remote address */
	at.remote_addr = 0x1004;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     0, KITE_QPT_RC, 0, false),
			-EINVAL);
	expect_zero(test, t, 0, STRIDE);
	at.remote_addr = 0x1008;
	/* the SGE must be exactly 8 bytes, and the only one */
	t->sge[0].length = 4;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     0, KITE_QPT_RC, 0, false),
			-EINVAL);
	t->sge[0].length = 16;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     0, KITE_QPT_RC, 0, false),
			-EINVAL);
	t->sge[0].length = 8;
	at.wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     0, KITE_QPT_RC, 0, false),
			-EINVAL);
	at.wr.num_sge = 0;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     0, KITE_QPT_RC, 0, false),
			-EINVAL);
	at.wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &at.wr,
						     0, KITE_QPT_RC, 0, false),
			0);
}

static void kite_wqe_test_local_inv_reg_mr(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV, .ex.invalidate_rkey = 0x00012345,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR },
		.mr = &t->mr.ibmr,
		.key = 0x00012346,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};
	const struct kite_wqe_reg_mr *r = (const void *)(t->buf + 0x10);

	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &inv, 4,
						     KITE_QPT_RC, 0,
						     false), 0);
	expect_ctrl(test, t, 0x108, 0x00012345, 4, 0);
	expect_zero(test, t, 0x10, 64);

	t->mr.ibmr.iova = 0x7f0000001200ULL;
	t->mr.ibmr.length = 0x3000;
	t->mr.ibmr.page_size = SZ_4K;
	t->mr.frpl.dma = 0x88000000ULL;
	t->mr.npages = 4;
	t->mr.max_pages = 16;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &reg.wr, 5,
						     KITE_QPT_RC, 0,
						     false), 0);
	expect_ctrl(test, t, 0x09, 0, 5, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(r->iova), 0x7f0000001200ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(r->length), 0x3000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->key), 0x00012346);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->access),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(r->pbl_addr), 0x88000000ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->npages), 4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->page_shift), 12);
	expect_zero(test, t, 0x38, 64);

	t->mr.ibmr.page_size = SZ_2M;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &reg.wr, 5,
						     KITE_QPT_RC, 0,
						     false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->page_shift), 21);
	/* An MR windows may be bound to. */
	reg.access |= IB_ACCESS_MW_BIND;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &reg.wr, 5,
						     KITE_QPT_RC, 0,
						     false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->access),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ |
			KITE_ACCESS_MW_BIND);
	t->mr.npages = 17;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &reg.wr, 5,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
}

static void kite_wqe_test_ud(struct kunit *test)
{
	static const u8 dgid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };
	static const u8 dmac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct kite_wqe_test *t = test->priv;
	struct ib_ud_wr ud = {
		.wr = { .opcode = IB_WR_SEND_WITH_IMM, .sg_list = t->sge,
			.num_sge = 4, .ex.imm_data = cpu_to_be32(0x01020304) },
		.ah = &t->ah.ibah,
		.remote_qpn = 0x000abc,
		.remote_qkey = 0x80010000,
	};
	const struct kite_wqe_ud *av = (const void *)(t->buf + 0x10);

	memcpy(t->ah.av.dgid, dgid, 16);
	memcpy(t->ah.av.dmac, dmac, 6);
	t->ah.av.vlan = cpu_to_le16(KITE_VLAN_VALID | 100);
	t->ah.av.sgid_index = 3;
	t->ah.av.hop_limit = 64;
	t->ah.av.traffic_class = 0x68;
	t->ah.av.net_type = KITE_NET_ROCE_V2_IPV4;
	t->ah.av.flow_label = cpu_to_le32(0x12345);
	set_sges(t, 4);

	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &ud.wr,
						     11, KITE_QPT_UD, 0,
						     true), 0);
	expect_ctrl(test, t, 0x00040101, 0x04030201, 11, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av->remote_qpn), 0xabc);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av->qkey), 0x80010000);
	KUNIT_EXPECT_MEMEQ(test, av->dgid, dgid, 16);
	KUNIT_EXPECT_MEMEQ(test, av->dmac, dmac, 6);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(av->vlan), 0x8064);
	KUNIT_EXPECT_EQ(test, av->sgid_index, 3);
	KUNIT_EXPECT_EQ(test, av->hop_limit, 64);
	KUNIT_EXPECT_EQ(test, av->traffic_class, 0x68);
	KUNIT_EXPECT_EQ(test, av->net_type, KITE_NET_ROCE_V2_IPV4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av->flow_label), 0x12345);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av->rsvd[0]), 0);
	expect_sge(test, t, 0x40, 0x100, 0xabc00, 0x1000010);
	expect_sge(test, t, 0x70, 0x103, 0xabc03, 0x4000010);

	/* GSI: same layout; a 64-byte stride holds no SGE */
	ud.wr.opcode = IB_WR_SEND;
	ud.wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &ud.wr, 0,
						     KITE_QPT_GSI, 0, false),
			-EINVAL);
	ud.wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &ud.wr, 0,
						     KITE_QPT_GSI, 0,
						     false), 0);
	expect_ctrl(test, t, 0, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av->remote_qpn), 0xabc);

	/* five SGEs do not fit a 128-byte UD stride */
	ud.wr.num_sge = 5;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &ud.wr,
						     0, KITE_QPT_UD, 0, false),
			-EINVAL);
	ud.wr.num_sge = 1;
	ud.ah = NULL;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &ud.wr,
						     0, KITE_QPT_UD, 0, false),
			-EINVAL);
}

/* Only SEND and SEND_WITH_IMM on UD and GSI; unknown opcodes never. */
static void kite_wqe_test_opcode_qp_type(struct kunit *test)
{
	static const enum ib_wr_opcode rc_only[] = {
		IB_WR_SEND_WITH_INV, IB_WR_RDMA_WRITE,
		IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_RDMA_READ,
		IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD,
		IB_WR_LOCAL_INV, IB_WR_REG_MR,
	};
	struct kite_wqe_test *t = test->priv;
	struct ib_send_wr wr = {};
	int i;

	for (i = 0; i < ARRAY_SIZE(rc_only); i++) {
		wr.opcode = rc_only[i];
		KUNIT_EXPECT_EQ_MSG(test,
				    kite_ib_build_send_wqe(t->buf, STRIDE, &wr,
							   0, KITE_QPT_UD, 0,
							   false),
				    -EINVAL, "opcode %d", rc_only[i]);
		KUNIT_EXPECT_EQ(test,
				kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 0,
						       KITE_QPT_GSI, 0, false),
				-EINVAL);
	}
	wr.opcode = IB_WR_BIND_MW;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	wr.opcode = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	wr.opcode = IB_WR_SEND;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 0,
						     0, 0, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 0,
						     KITE_QPT_RC, 0, false), 0);
}

/*
 * The two opcode tables: each send work request's WQE opcode on each QP
 * type (written out here, not derived from the table), and the work
 * completion opcode of each WQE opcode; what is not in them refused.
 */
static void kite_wqe_test_opcode_tables(struct kunit *test)
{
	static const struct {
		enum ib_wr_opcode wr;
		int wqe;		/* KITE_WQE_OP_* */
		bool rc, uc, ud;	/* UD: and GSI */
		enum ib_wc_opcode wc;
	} ops[] = {
		{ IB_WR_SEND, KITE_WQE_OP_SEND, true, true, true, IB_WC_SEND },
		{ IB_WR_SEND_WITH_IMM, KITE_WQE_OP_SEND_IMM, true, true, true,
		  IB_WC_SEND },
		{ IB_WR_SEND_WITH_INV, KITE_WQE_OP_SEND_INV, true, false, false,
		  IB_WC_SEND },
		{ IB_WR_RDMA_WRITE, KITE_WQE_OP_RDMA_WRITE, true, true, false,
		  IB_WC_RDMA_WRITE },
		{ IB_WR_RDMA_WRITE_WITH_IMM, KITE_WQE_OP_RDMA_WRITE_IMM, true,
		  true, false, IB_WC_RDMA_WRITE },
		{ IB_WR_RDMA_READ, KITE_WQE_OP_RDMA_READ, true, false, false,
		  IB_WC_RDMA_READ },
		{ IB_WR_ATOMIC_CMP_AND_SWP, KITE_WQE_OP_ATOMIC_CS, true, false,
		  false, IB_WC_COMP_SWAP },
		{ IB_WR_ATOMIC_FETCH_AND_ADD, KITE_WQE_OP_ATOMIC_FA, true, false,
		  false, IB_WC_FETCH_ADD },
		{ IB_WR_LOCAL_INV, KITE_WQE_OP_LOCAL_INV, true, false, false,
		  IB_WC_LOCAL_INV },
		{ IB_WR_REG_MR, KITE_WQE_OP_REG_MR, true, false, false,
		  IB_WC_REG_MR },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_send_wqe_opcode(ops[i].wr,
								  KITE_QPT_RC),
				    ops[i].rc ? ops[i].wqe : -EINVAL,
				    "RC, opcode %d", ops[i].wr);
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_send_wqe_opcode(ops[i].wr,
								  KITE_QPT_UC),
				    ops[i].uc ? ops[i].wqe : -EINVAL,
				    "UC, opcode %d", ops[i].wr);
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_send_wqe_opcode(ops[i].wr,
								  KITE_QPT_UD),
				    ops[i].ud ? ops[i].wqe : -EINVAL,
				    "UD, opcode %d", ops[i].wr);
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_send_wqe_opcode(ops[i].wr,
								  KITE_QPT_GSI),
				    ops[i].ud ? ops[i].wqe : -EINVAL,
				    "GSI, opcode %d", ops[i].wr);
		KUNIT_EXPECT_EQ_MSG(test, kite_ib_wc_opcode(ops[i].wqe),
				    (int)ops[i].wc, "WQE opcode %d", ops[i].wqe);
	}
	KUNIT_EXPECT_EQ(test, kite_ib_send_wqe_opcode(IB_WR_BIND_MW, KITE_QPT_RC),
			-EINVAL);
	/* libkite's only (its 8 bytes have no field in struct ib_send_wr). */
	KUNIT_EXPECT_EQ(test, kite_ib_send_wqe_opcode(IB_WR_ATOMIC_WRITE,
						      KITE_QPT_RC), -EINVAL);
	/* libkite's only too (struct ib_send_wr has no FLUSH fields). */
	KUNIT_EXPECT_EQ(test, kite_ib_send_wqe_opcode(IB_WR_FLUSH, KITE_QPT_RC),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			kite_ib_send_wqe_opcode(IB_WR_MASKED_ATOMIC_FETCH_AND_ADD,
						KITE_QPT_RC), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_send_wqe_opcode((enum ib_wr_opcode)1000,
						      KITE_QPT_RC), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_send_wqe_opcode(IB_WR_SEND, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_send_wqe_opcode(IB_WR_SEND, 200),
			-EINVAL);
	/* Posted by no kernel QP, or no opcode at all. */
	KUNIT_EXPECT_EQ(test, kite_ib_wc_opcode(KITE_WQE_OP_BIND_MW), -1);
	KUNIT_EXPECT_EQ(test, kite_ib_wc_opcode(KITE_WQE_OP_ATOMIC_WRITE), -1);
	KUNIT_EXPECT_EQ(test, kite_ib_wc_opcode(KITE_WQE_OP_FLUSH), -1);
	KUNIT_EXPECT_EQ(test, kite_ib_wc_opcode(0xff), -1);
}

/*
 * UC: SEND and RDMA WRITE with or without immediate, laid out as on RC (no
 * address vector); READ, atomics, SEND with invalidate and the local
 * operations refused.
 */
static void kite_wqe_test_uc(struct kunit *test)
{
	static const enum ib_wr_opcode refused[] = {
		IB_WR_SEND_WITH_INV, IB_WR_RDMA_READ,
		IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD,
		IB_WR_LOCAL_INV, IB_WR_REG_MR, IB_WR_BIND_MW,
	};
	struct kite_wqe_test *t = test->priv;
	struct ib_rdma_wr rdma = {
		.wr = { .opcode = IB_WR_RDMA_WRITE_WITH_IMM, .sg_list = t->sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0x1122334455667788ULL,
		.rkey = 0x4242,
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM, .sg_list = t->sge, .num_sge = 2,
	};
	int i;

	set_sges(t, 2);
	wr.ex.imm_data = cpu_to_be32(0x55667788);
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 5,
						     KITE_QPT_UC, 0, false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode),
			0x00020000 | KITE_WQE_OP_SEND_IMM);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(ctrl_of(t)->wqe_idx), 5);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ctrl_of(t)->imm_data), 0x55667788);
	expect_sge(test, t, 0x10, 0x100, 0xabc00, 0x1000010);
	expect_sge(test, t, 0x20, 0x101, 0xabc01, 0x2000010);
	expect_zero(test, t, 0x30, STRIDE);

	wr.opcode = IB_WR_SEND;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &wr, 6,
						     KITE_QPT_UC, 0, false), 0);
	expect_ctrl(test, t, 0x00020000, 0, 6, 0);

	rdma.wr.ex.imm_data = cpu_to_be32(0xa1b2c3d4);
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &rdma.wr,
						     7, KITE_QPT_UC, 0,
						     false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode), 0x00010104);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ctrl_of(t)->imm_data), 0xa1b2c3d4);
	expect_raddr(test, t, 0x1122334455667788ULL, 0x4242);
	expect_sge(test, t, 0x20, 0x100, 0xabc00, 0x1000010);
	expect_zero(test, t, 0x30, STRIDE);

	rdma.wr.opcode = IB_WR_RDMA_WRITE;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, STRIDE, &rdma.wr,
						     8, KITE_QPT_UC, 0,
						     false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode), 0x00010103);
	expect_raddr(test, t, 0x1122334455667788ULL, 0x4242);

	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		rdma.wr.opcode = refused[i];
		KUNIT_EXPECT_EQ_MSG(test,
				    kite_ib_build_send_wqe(t->buf, STRIDE,
							   &rdma.wr, 0,
							   KITE_QPT_UC, 0,
							   false),
				    -EINVAL, "opcode %d", refused[i]);
	}
}

static void kite_wqe_test_sge_limits(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .sg_list = t->sge };
	struct ib_rdma_wr rdma = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .sg_list = t->sge },
	};

	set_sges(t, KITE_MAX_SGE + 1);
	/* 64 bytes: RC SEND 3, RDMA WRITE 2; 128 bytes: 7 and 6 */
	wr.num_sge = 3;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &wr, 0,
						     KITE_QPT_RC, 0, false), 0);
	expect_sge(test, t, 0x30, 0x102, 0xabc02, 0x3000010);
	KUNIT_EXPECT_EQ(test, t->buf[64], POISON);
	wr.num_sge = 4;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	expect_zero(test, t, 0, 64);
	KUNIT_EXPECT_EQ(test, t->buf[64], POISON);
	rdma.wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &rdma.wr, 0,
						     KITE_QPT_RC, 0, false), 0);
	rdma.wr.num_sge = 3;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &rdma.wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	wr.num_sge = 7;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 128, &wr, 0,
						     KITE_QPT_RC, 0, false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode), 0x00070000);
	wr.num_sge = 8;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 128, &wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	rdma.wr.num_sge = 6;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 128, &rdma.wr, 0,
						     KITE_QPT_RC, 0, false), 0);
	rdma.wr.num_sge = 7;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 128, &rdma.wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	/* KITE_MAX_SGE bounds even a large stride */
	wr.num_sge = KITE_MAX_SGE;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 1024, &wr, 0,
						     KITE_QPT_RC, 0, false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctrl_of(t)->opcode), 0x00080000);
	wr.num_sge = KITE_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 1024, &wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
	wr.num_sge = -1;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 1024, &wr, 0,
						     KITE_QPT_RC, 0, false),
			-EINVAL);
}

static void kite_wqe_test_inline(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	u8 *a, *b;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .sg_list = t->sge, .num_sge = 2,
		.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED,
	};
	struct ib_rdma_wr rdma = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .sg_list = t->sge,
			.num_sge = 1, .send_flags = IB_SEND_INLINE },
		.remote_addr = 0x10000, .rkey = 3,
	};
	int i;

	a = kunit_kzalloc(test, 512, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	b = a + 256;
	for (i = 0; i < 512; i++)
		a[i] = i * 7 + 1;
	t->sge[0] = (struct ib_sge){ .addr = (uintptr_t)a, .length = 5,
				     .lkey = 1 };
	t->sge[1] = (struct ib_sge){ .addr = (uintptr_t)b, .length = 20,
				     .lkey = 2 };

	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &wr, 6,
						     KITE_QPT_RC, 48, false),
			0);
	expect_ctrl(test, t, 0x900, 0, 6, 25);
	KUNIT_EXPECT_MEMEQ(test, t->buf + 0x10, a, 5);
	KUNIT_EXPECT_MEMEQ(test, t->buf + 0x15, b, 20);
	expect_zero(test, t, 0x10 + 25, 64);

	/* exactly filling the stride and max_inline */
	t->sge[1].length = 43;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &wr, 6,
						     KITE_QPT_RC, 48, false),
			0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(ctrl_of(t)->inline_len), 48);
	KUNIT_EXPECT_MEMEQ(test, t->buf + 0x15, b, 43);
	KUNIT_EXPECT_EQ(test, t->buf[64], POISON);
	/* over max_inline */
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &wr, 6,
						     KITE_QPT_RC, 47, false),
			-EINVAL);
	/* over the stride */
	t->sge[1].length = 44;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &wr, 6,
						     KITE_QPT_RC, 256, false),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, t->buf[64], POISON);
	/* over KITE_MAX_INLINE even if max_inline and the stride allow it */
	t->sge[0].length = 200;
	t->sge[1].length = 57;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 1024, &wr, 6,
						     KITE_QPT_RC, 1000, false),
			-EINVAL);
	t->sge[1].length = 56;
	KUNIT_EXPECT_EQ(test, kite_ib_build_send_wqe(t->buf, 1024, &wr, 6,
						     KITE_QPT_RC, 1000, false),
			0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(ctrl_of(t)->inline_len), 256);

	/* RDMA WRITE: inline data at 0x20 */
	t->sge[0].length = 9;
	KUNIT_ASSERT_EQ(test, kite_ib_build_send_wqe(t->buf, 64, &rdma.wr, 2,
						     KITE_QPT_RC, 32, false),
			0);
	expect_ctrl(test, t, 0x803, 0, 2, 9);
	expect_raddr(test, t, 0x10000, 3);
	KUNIT_EXPECT_MEMEQ(test, t->buf + 0x20, a, 9);
	expect_zero(test, t, 0x29, 64);

	/* UD: inline data at 0x40 */
	{
		struct ib_ud_wr ud = {
			.wr = { .opcode = IB_WR_SEND, .sg_list = t->sge,
				.num_sge = 1, .send_flags = IB_SEND_INLINE },
			.ah = &t->ah.ibah, .remote_qpn = 5, .remote_qkey = 6,
		};

		KUNIT_ASSERT_EQ(test,
				kite_ib_build_send_wqe(t->buf, 128, &ud.wr, 0,
						       KITE_QPT_UD, 64, false),
				0);
		expect_ctrl(test, t, 0x800, 0, 0, 9);
		KUNIT_EXPECT_MEMEQ(test, t->buf + 0x40, a, 9);
		expect_zero(test, t, 0x49, 128);
	}
}

static void kite_wqe_test_recv(struct kunit *test)
{
	struct kite_wqe_test *t = test->priv;
	struct ib_recv_wr wr = { .sg_list = t->sge, .num_sge = 3 };
	const struct kite_wqe_recv *h = (const void *)t->buf;

	set_sges(t, KITE_MAX_SGE + 1);
	KUNIT_ASSERT_EQ(test, kite_ib_build_recv_wqe(t->buf, 64, &wr, 8), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(h->num_sge), 3);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(h->rsvd[0]), 0);
	expect_sge(test, t, 0x10, 0x100, 0xabc00, 0x1000010);
	expect_sge(test, t, 0x30, 0x102, 0xabc02, 0x3000010);
	KUNIT_EXPECT_EQ(test, t->buf[64], POISON);

	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, kite_ib_build_recv_wqe(t->buf, 128, &wr, 8), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(h->num_sge), 1);
	expect_zero(test, t, 0x20, 128);

	wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, kite_ib_build_recv_wqe(t->buf, 64, &wr, 8), 0);
	expect_zero(test, t, 0, 64);

	wr.num_sge = 4;		/* the stride */
	KUNIT_EXPECT_EQ(test, kite_ib_build_recv_wqe(t->buf, 64, &wr, 8),
			-EINVAL);
	wr.num_sge = 3;		/* max_sge */
	KUNIT_EXPECT_EQ(test, kite_ib_build_recv_wqe(t->buf, 128, &wr, 2),
			-EINVAL);
	wr.num_sge = 7;
	KUNIT_EXPECT_EQ(test, kite_ib_build_recv_wqe(t->buf, 128, &wr, 8), 0);
	expect_sge(test, t, 0x70, 0x106, 0xabc06, 0x7000010);
	wr.num_sge = 9;		/* KITE_MAX_SGE */
	KUNIT_EXPECT_EQ(test, kite_ib_build_recv_wqe(t->buf, 1024, &wr, 16),
			-EINVAL);
}

static void kite_wqe_test_access(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(0), 0);
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_LOCAL_WRITE), 1);
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_REMOTE_WRITE), 2);
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_REMOTE_READ), 4);
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_REMOTE_ATOMIC),
			8);
	KUNIT_EXPECT_EQ(test,
			kite_ib_access_to_hw(IB_ACCESS_LOCAL_WRITE |
					     IB_ACCESS_REMOTE_WRITE |
					     IB_ACCESS_REMOTE_READ |
					     IB_ACCESS_REMOTE_ATOMIC |
					     IB_ACCESS_RELAXED_ORDERING), 0xf);
	/* Global flushes; persistent ones are no access Kite grants. */
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_FLUSH_GLOBAL),
			KITE_ACCESS_FLUSH_GLOBAL);
	KUNIT_EXPECT_EQ(test, KITE_ACCESS_FLUSH_GLOBAL, 0x20);
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_FLUSH_PERSISTENT),
			0);
	/* A QP's access attribute has no window binding bit. */
	KUNIT_EXPECT_EQ(test, kite_ib_access_to_hw(IB_ACCESS_MW_BIND), 0);
	/* An MR's has. */
	KUNIT_EXPECT_EQ(test, kite_ib_mr_access_to_hw(IB_ACCESS_MW_BIND),
			KITE_ACCESS_MW_BIND);
	KUNIT_EXPECT_EQ(test, KITE_ACCESS_MW_BIND, 0x10);
	KUNIT_EXPECT_EQ(test,
			kite_ib_mr_access_to_hw(IB_ACCESS_LOCAL_WRITE |
						IB_ACCESS_REMOTE_WRITE |
						IB_ACCESS_REMOTE_READ |
						IB_ACCESS_REMOTE_ATOMIC |
						IB_ACCESS_MW_BIND |
						IB_ACCESS_RELAXED_ORDERING),
			0x1f);
}

/* REREG_MR: only what changes is named, and only its fields are set. */
static void kite_wqe_test_rereg_mr(struct kunit *test)
{
	struct kite_pbl pbl = {
		.addr = cpu_to_le64(0x123456789000ULL),
		.cfg = cpu_to_le32(0x0c01),
		.npages = cpu_to_le32(3),
	};
	struct kite_cmd_rereg_mr in;

	memset(&in, 0xa5, sizeof(in));
	kite_ib_rereg_mr_in(0x1234c2, IB_MR_REREG_ACCESS, 9,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND,
			    0x1000, 0x2000, &pbl, &in);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.key), 0x1234c2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.flags), KITE_REREG_F_ACCESS);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.access),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_MW_BIND);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.pdn), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(in.iova), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(in.length), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(in.pbl.addr), 0);

	kite_ib_rereg_mr_in(0x55, IB_MR_REREG_PD, 9, IB_ACCESS_REMOTE_READ,
			    0x1000, 0x2000, &pbl, &in);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.flags), KITE_REREG_F_PD);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.pdn), 9);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.access), 0);

	kite_ib_rereg_mr_in(0x55, IB_MR_REREG_TRANS | IB_MR_REREG_PD |
			    IB_MR_REREG_ACCESS, 4, IB_ACCESS_LOCAL_WRITE |
			    IB_ACCESS_REMOTE_WRITE, 0x7f0000001100ULL, 0x2f00,
			    &pbl, &in);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.flags),
			KITE_REREG_F_TRANS | KITE_REREG_F_PD |
			KITE_REREG_F_ACCESS);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.access),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(in.iova), 0x7f0000001100ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(in.length), 0x2f00);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(in.pbl.addr), 0x123456789000ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.pbl.cfg), 0x0c01);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.pbl.npages), 3);
}

/* ALLOC_MW: IB window types 1 and 2 (2B), the tag, the owner. */
static void kite_wqe_test_alloc_mw(struct kunit *test)
{
	struct kite_cmd_alloc_mw in;

	memset(&in, 0xa5, sizeof(in));
	KUNIT_ASSERT_EQ(test, kite_ib_alloc_mw_in(IB_MW_TYPE_1, 7, 3, 0x1c2,
						  &in), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.pdn), 7);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.type), KITE_MW_TYPE_1);
	/* Only the tag's 8 bits. */
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.flags), 0xc2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.uctx), 3);
	KUNIT_ASSERT_EQ(test, kite_ib_alloc_mw_in(IB_MW_TYPE_2, 1, 255, 0,
						  &in), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.type), KITE_MW_TYPE_2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.flags), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(in.uctx), 255);
	KUNIT_EXPECT_EQ(test, kite_ib_alloc_mw_in((enum ib_mw_type)3, 1, 1, 0,
						  &in), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, kite_ib_alloc_mw_in((enum ib_mw_type)0, 1, 1, 0,
						  &in), -EOPNOTSUPP);
}

static void kite_wqe_test_qp_reset_to_init(struct kunit *test)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ,
		.pkey_index = 0,
		.port_num = 1,
	};
	struct kite_cmd_modify_qp cmd;

	memset(&cmd, POISON, sizeof(cmd));
	cmd.qpn = cpu_to_le32(0x42);
	KUNIT_ASSERT_EQ(test,
			kite_ib_qp_attr_to_cmd(&attr, IB_QP_STATE |
					       IB_QP_ACCESS_FLAGS |
					       IB_QP_PKEY_INDEX | IB_QP_PORT,
					       &cmd), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.qpn), 0x42);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.mask), 0x1d);
	KUNIT_EXPECT_EQ(test, cmd.state, KITE_QPS_INIT);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, 0);
	KUNIT_EXPECT_EQ(test, cmd.port, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.access), 6);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cmd.pkey_index), 0);
	/* everything after access is zero */
	KUNIT_EXPECT_PTR_EQ(test,
			    memchr_inv(&cmd.pkey_index, 0,
				       sizeof(cmd) -
				       offsetof(struct kite_cmd_modify_qp,
						pkey_index)), NULL);
}

static void kite_wqe_test_qp_init_to_rtr(struct kunit *test)
{
	static const u8 dgid[16] = { [10] = 0xff, [11] = 0xff,
				     192, 168, 1, 20 };
	static const u8 dmac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };
	struct ib_gid_attr *sgid;
	struct net_device *ndev;
	struct kite_cmd_modify_qp cmd = {};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = 0x123,
		.rq_psn = 0xabcdef,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
	};
	const int mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			 IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;

	ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	sgid = kunit_kzalloc(test, sizeof(*sgid), GFP_KERNEL);
	if (!sgid) {
		free_netdev(ndev);
		KUNIT_FAIL_AND_ABORT(test, "no memory");
	}
	/* an IPv4-mapped RoCEv2 source GID on a net device without VLAN */
	sgid->gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;
	sgid->gid.raw[10] = 0xff;
	sgid->gid.raw[11] = 0xff;
	sgid->gid.raw[12] = 192;
	RCU_INIT_POINTER(sgid->ndev, ndev);

	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_grh(&attr.ah_attr, NULL, 0xabcde, 2, 63, 0x88);
	memcpy(attr.ah_attr.grh.dgid.raw, dgid, sizeof(dgid));
	attr.ah_attr.grh.sgid_attr = sgid;
	memcpy(attr.ah_attr.roce.dmac, dmac, 6);

	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.mask), 0x1a8c1);
	KUNIT_EXPECT_EQ(test, cmd.state, KITE_QPS_RTR);
	KUNIT_EXPECT_EQ(test, cmd.path_mtu, KITE_MTU_1024);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.dest_qpn), 0x123);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.rq_psn), 0xabcdef);
	KUNIT_EXPECT_EQ(test, cmd.max_dest_rd_atomic, 4);
	KUNIT_EXPECT_EQ(test, cmd.min_rnr_timer, 12);
	KUNIT_EXPECT_EQ(test, cmd.sgid_index, 2);
	KUNIT_EXPECT_EQ(test, cmd.hop_limit, 63);
	KUNIT_EXPECT_EQ(test, cmd.traffic_class, 0x88);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flow_label), 0xabcde);
	KUNIT_EXPECT_EQ(test, cmd.net_type, KITE_NET_ROCE_V2_IPV4);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cmd.vlan), 0);
	KUNIT_EXPECT_MEMEQ(test, cmd.dmac, dmac, 6);
	KUNIT_EXPECT_MEMEQ(test, cmd.dgid, dgid, 16);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.sq_psn), 0);
	KUNIT_EXPECT_EQ(test, cmd.timeout, 0);

	/* an IPv6 source GID */
	sgid->gid.raw[10] = 0;
	sgid->gid.raw[0] = 0xfe;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd), 0);
	KUNIT_EXPECT_EQ(test, cmd.net_type, KITE_NET_ROCE_V2_IPV6);

	/* a flow label wider than 20 bits keeps its low 20 (UCX: all ones) */
	attr.ah_attr.grh.flow_label = 0xffffffff;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flow_label), 0xfffff);
	attr.ah_attr.grh.flow_label = 0xabcde;

	/* RoCE v1 and IB GIDs are refused */
	sgid->gid_type = IB_GID_TYPE_ROCE;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-EINVAL);
	sgid->gid_type = IB_GID_TYPE_IB;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-EINVAL);
	sgid->gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;

	/* no net device behind the GID */
	RCU_INIT_POINTER(sgid->ndev, NULL);
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-ENODEV);
	RCU_INIT_POINTER(sgid->ndev, ndev);

	/* no GRH, no sgid attribute, not RoCE */
	attr.ah_attr.grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-EINVAL);
	attr.ah_attr.grh.sgid_attr = sgid;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-EINVAL);
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	attr.ah_attr.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-EINVAL);
	attr.ah_attr.ah_flags = IB_AH_GRH;

	/* destination QPN beyond 24 bits */
	attr.dest_qp_num = 0x1000000;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, mask, &cmd),
			-EINVAL);

	free_netdev(ndev);
}

static void kite_wqe_test_qp_rtr_to_rts(struct kunit *test)
{
	struct kite_cmd_modify_qp cmd = {};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.cur_qp_state = IB_QPS_RTR,
		.sq_psn = 0xffffff,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 6,
		.max_rd_atomic = 16,
		.qkey = 0x80010000,
	};

	KUNIT_ASSERT_EQ(test,
			kite_ib_qp_attr_to_cmd(&attr, IB_QP_STATE |
					       IB_QP_SQ_PSN | IB_QP_TIMEOUT |
					       IB_QP_RETRY_CNT |
					       IB_QP_RNR_RETRY |
					       IB_QP_MAX_QP_RD_ATOMIC, &cmd),
			0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.mask), 0x05701);
	KUNIT_EXPECT_EQ(test, cmd.state, KITE_QPS_RTS);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.sq_psn), 0xffffff);
	KUNIT_EXPECT_EQ(test, cmd.timeout, 14);
	KUNIT_EXPECT_EQ(test, cmd.retry_cnt, 7);
	KUNIT_EXPECT_EQ(test, cmd.rnr_retry, 6);
	KUNIT_EXPECT_EQ(test, cmd.max_rd_atomic, 16);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.qkey), 0);

	/* CUR_STATE and QKEY, and the other states */
	KUNIT_ASSERT_EQ(test,
			kite_ib_qp_attr_to_cmd(&attr, IB_QP_STATE |
					       IB_QP_CUR_STATE | IB_QP_QKEY,
					       &cmd), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.mask), 0x23);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, KITE_QPS_RTR);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.qkey), 0x80010000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.sq_psn), 0);
	attr.qp_state = IB_QPS_ERR;
	KUNIT_ASSERT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_STATE, &cmd),
			0);
	KUNIT_EXPECT_EQ(test, cmd.state, 6);
	attr.qp_state = IB_QPS_SQD;
	KUNIT_ASSERT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_STATE, &cmd),
			0);
	KUNIT_EXPECT_EQ(test, cmd.state, 4);
	attr.qp_state = IB_QPS_ERR + 1;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_STATE, &cmd),
			-EINVAL);
}

static void kite_wqe_test_qp_bad_psn(struct kunit *test)
{
	struct kite_cmd_modify_qp cmd = {};
	struct ib_qp_attr attr = { .sq_psn = 0x1000000, .rq_psn = 0x1000000 };

	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_SQ_PSN,
						     &cmd), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_RQ_PSN,
						     &cmd), -EINVAL);
	attr.sq_psn = 0xffffffff;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_SQ_PSN,
						     &cmd), -EINVAL);
	attr.rq_psn = 0;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_RQ_PSN,
						     &cmd), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.mask), KITE_QP_ATTR_RQ_PSN);
	attr.port_num = 257;
	KUNIT_EXPECT_EQ(test, kite_ib_qp_attr_to_cmd(&attr, IB_QP_PORT, &cmd),
			-EINVAL);
}

static void kite_wqe_test_qp_unsupported(struct kunit *test)
{
	static const int bad[] = {
		IB_QP_ALT_PATH, IB_QP_PATH_MIG_STATE, IB_QP_CAP,
		IB_QP_EN_SQD_ASYNC_NOTIFY, IB_QP_RATE_LIMIT,
	};
	struct kite_cmd_modify_qp cmd = {};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    kite_ib_qp_attr_to_cmd(&attr,
							   IB_QP_STATE | bad[i],
							   &cmd),
				    -EOPNOTSUPP, "mask %#x", bad[i]);
}

static struct kunit_case kite_ib_wqe_cases[] = {
	KUNIT_CASE(kite_wqe_test_rc_send),
	KUNIT_CASE(kite_wqe_test_flags),
	KUNIT_CASE(kite_wqe_test_rdma),
	KUNIT_CASE(kite_wqe_test_atomic),
	KUNIT_CASE(kite_wqe_test_local_inv_reg_mr),
	KUNIT_CASE(kite_wqe_test_ud),
	KUNIT_CASE(kite_wqe_test_opcode_qp_type),
	KUNIT_CASE(kite_wqe_test_opcode_tables),
	KUNIT_CASE(kite_wqe_test_uc),
	KUNIT_CASE(kite_wqe_test_sge_limits),
	KUNIT_CASE(kite_wqe_test_inline),
	KUNIT_CASE(kite_wqe_test_recv),
	KUNIT_CASE(kite_wqe_test_access),
	KUNIT_CASE(kite_wqe_test_alloc_mw),
	KUNIT_CASE(kite_wqe_test_rereg_mr),
	KUNIT_CASE(kite_wqe_test_qp_reset_to_init),
	KUNIT_CASE(kite_wqe_test_qp_init_to_rtr),
	KUNIT_CASE(kite_wqe_test_qp_rtr_to_rts),
	KUNIT_CASE(kite_wqe_test_qp_bad_psn),
	KUNIT_CASE(kite_wqe_test_qp_unsupported),
	{}
};

static struct kunit_suite kite_ib_wqe_suite = {
	.name = "kite_ib_wqe",
	.init = kite_wqe_test_init,
	.test_cases = kite_ib_wqe_cases,
};

kunit_test_suite(kite_ib_wqe_suite);
