/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): memory regions, memory
 * windows and REREG_MR (groups mr, mw, rereg).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Group: memory regions                                               */
/* ------------------------------------------------------------------ */

void g_mr(void)
{
	const uint32_t LW = KITE_ACCESS_LOCAL_WRITE, RW = KITE_ACCESS_REMOTE_WRITE;
	const uint32_t RR = KITE_ACCESS_REMOTE_READ, RA = KITE_ACCESS_REMOTE_ATOMIC;
	struct res r;
	struct qbuf b0, b1, b2, bh, bx;
	struct kite_pbl junk = { .addr = NOT_RAM + 3, .npages = 0, .cfg = 0xffffffff };
	uint32_t k0, k1, k2, k, pd2;
	int c;

	fixture();
	b0 = mkbuf(0, 12, 1, false);
	k0 = need(reg_mr(fx_pd, LW | RW | RR, 0x5a, 0, 0x10000, 4096, &b0.pbl, &r), &r, "REG_MR level 0");
	tap(k0 == (1u << 8 | 0x5a), "key = index << 8 | tag: first MR is 0x15a (got 0x%x)", k0);
	b1 = mkbuf(1, 12, 4, false);
	c = reg_mr(fx_pd, LW, 0x01, 0, 0x20000100, 4 * 4096 - 0x100, &b1.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 1, 4 pages, iova offset 0x100, length to the end");
	k1 = c == KITE_CMD_OK ? r.result : 0;
	tap(FIELD_GET(KITE_KEY_INDEX, k1) == 2 && FIELD_GET(KITE_KEY_TAG, k1) == 1, "second MR: index 2, tag 1 (0x%x)", k1);
	b2 = mkbuf(2, 12, 1024, false);
	c = reg_mr(fx_pd, LW | RR, 0xff, 0, 0x7f0000000000ULL, 1024 * 4096, &b2.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 2, 1024 pages (2 PDEs)");
	k2 = c == KITE_CMD_OK ? r.result : 0;
	bh = mkbuf(1, 21, 2, false);
	reg_mr(fx_pd, LW, 0, 0, 0x40000000, 4ULL << 20, &bh.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 1 with 2 MiB pages");
	reg_mr(fx_pd, RR, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR remote-read only (no local write needed)");
	reg_mr(fx_pd, RW, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR remote-write without local-write -> E_PARAM");
	reg_mr(fx_pd, RA | RR, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR remote-atomic without local-write -> E_PARAM");
	reg_mr(fx_pd, KITE_ACCESS_FLUSH_GLOBAL, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR with FLUSH_GLOBAL only (no local write needed)");
	reg_mr(fx_pd, LW | BIT(6), 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR with an unknown access bit -> E_PARAM");
	reg_mr(fx_pd, LW, BIT(9), 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR with an unknown flag -> E_PARAM");
	reg_mr(fx_pd, LW, 0, 0, 0x10000, 0, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR with length 0 -> E_PARAM");
	reg_mr(777, LW, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "REG_MR with a nonexistent PD -> E_OBJECT");
	reg_mr(fx_pd, LW, 0, 33, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "REG_MR with an unallocated uctx -> E_OBJECT");
	reg_mr(fx_pd, LW | RW | RR | RA, KITE_MR_F_PHYS | 0x11, 0, 0, ~0ULL, &junk, &r);
	expect(&r, KITE_CMD_OK, -1, "PHYS MR, length 2^64-1, PBL ignored (garbage)");
	tap(FIELD_GET(KITE_KEY_TAG, r.result) == 0x11, "PHYS MR key carries the tag (0x%x)", r.result);
	{
		uint32_t u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");

		reg_mr(fx_pd, LW, KITE_MR_F_PHYS, u, 0, 4096, &junk, &r);
		expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_reg_mr, flags),
		       "PHYS MR for a user context -> E_PARAM, syndrome 8 (lead's requirement)");
		reg_mr(fx_pd, LW, 0, u, 0x10000, 4096, &b0.pbl, &r);
		expect(&r, KITE_CMD_OK, -1, "a non-PHYS MR for the same user context is fine");
	}

	/* iova/length must fit the PBL. */
	reg_mr(fx_pd, LW, 0, 0, 0x20000100, 4 * 4096 - 0x100 + 1, &b1.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR: iova offset + length one byte beyond npages pages refused");
	reg_mr(fx_pd, LW, 0, 0, 0x20000000, 4 * 4096 + 1, &b1.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR: length beyond npages pages refused");
	reg_mr(fx_pd, LW, 0, 0, 0x20000000, 4 * 4096, &b1.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR: length exactly npages pages");
	reg_mr(fx_pd, LW, 0, 0, 0x10800, 2048, &b0.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 0: offset 0x800 + 2 KiB fits");
	reg_mr(fx_pd, LW, 0, 0, 0x10800, 2049, &b0.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR level 0: offset 0x800 + 2049 refused");
	bx = mkbuf(1, 12, 4, false);
	pte_set(&bx, 2, pte_get(&bx, 2) & ~KITE_PTE_VALID);
	reg_mr(fx_pd, LW, 0, 0, 0, 4 * 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_reg_mr, pbl), "REG_MR with a PTE without VALID -> E_PBL, syndrome 32");
	bx = mkbuf(1, 13, 2, false);
	pte_set(&bx, 1, pte_get(&bx, 1) + 0x1000);
	reg_mr(fx_pd, LW, 0, 0, 0, 2 * 8192, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_reg_mr, pbl), "REG_MR with a PTE not aligned to the 8 KiB page -> E_PBL");
	bx = mkbuf(1, 12, 4, false);
	bx.pbl.addr = NOT_RAM;
	reg_mr(fx_pd, LW, 0, 0, 0, 4 * 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "REG_MR with the PTE page outside guest RAM -> E_DMA");
	bx = mkbuf(2, 12, 600, false);
	memwrite(bx.pdes + 8, &(uint64_t){ NOT_RAM | KITE_PTE_VALID }, 8);
	reg_mr(fx_pd, LW, 0, 0, 0, 600 * 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "REG_MR level 2 with the second PDE outside guest RAM -> E_DMA");
	bx = mkbuf(1, 12, 4, false);
	bx.pbl.npages = 513;
	reg_mr(fx_pd, LW, 0, 0, 0, 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_PBL, -1, "REG_MR level 1 with npages 513 -> E_PBL");

	/* The largest level 2 list: 512 PDEs x 512 PTEs, all aliasing one page. */
	{
		static uint64_t ents[KITE_PBL_ENTRIES];
		uint64_t data = galloc(2ULL << 20, 2ULL << 20);
		uint64_t ptp = galloc(4096, 4096), pdp = galloc(4096, 4096);
		struct kite_pbl big;
		unsigned i;

		for (i = 0; i < KITE_PBL_ENTRIES; i++)
			ents[i] = data | KITE_PTE_VALID;
		memwrite(ptp, ents, sizeof(ents));
		for (i = 0; i < KITE_PBL_ENTRIES; i++)
			ents[i] = ptp | KITE_PTE_VALID;
		memwrite(pdp, ents, sizeof(ents));
		big.addr = pdp;
		big.npages = KITE_PBL_ENTRIES * KITE_PBL_ENTRIES;
		big.cfg = pbl_cfg(2, 21);
		reg_mr(fx_pd, LW, 0, 0, 0, 1ULL << 39, &big, &r);
		expect(&r, KITE_CMD_OK, -1, "REG_MR level 2, 262144 x 2 MiB pages, length 2^39 (max_mr_size)");
		if (r.done && !(r.status & 0xff))
			cmd_obj(KITE_CMD_DEREG_MR, r.result, 0, &r);
		reg_mr(fx_pd, LW, 0, 0, 0x1000, 1ULL << 39, &big, &r);
		expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR 2^39 bytes at iova offset 0x1000 does not fit");
		big.npages++;
		reg_mr(fx_pd, LW, 0, 0, 0, 4096, &big, &r);
		expect(&r, KITE_CMD_E_PBL, -1, "REG_MR level 2 with npages 512*512+1 -> E_PBL");
	}

	/* DEREG */
	cmd_obj(KITE_CMD_DEREG_MR, k0 ^ 0x01, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR with the wrong tag -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, k0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR with the right key (MR survived the wrong-tag attempt)");
	cmd_obj(KITE_CMD_DEREG_MR, k0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, 0x5a, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of key index 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, 0xffffff00, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of key index 0xffffff -> E_OBJECT");
	k = need(reg_mr(fx_pd, LW, 0x77, 0, 0x10000, 4096, &b0.pbl, &r), &r, "REG_MR");
	tap(k == (1u << 8 | 0x77), "REG_MR reuses the lowest free index 1 (key 0x%x)", k);

	/* ALLOC_MR */
	alloc_mr(fx_pd, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ALLOC_MR max_pages 0 -> E_PARAM");
	alloc_mr(fx_pd, 513, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ALLOC_MR max_pages 513 -> E_PARAM");
	alloc_mr(fx_pd, 1, 0x33, &r);
	expect(&r, KITE_CMD_OK, -1, "ALLOC_MR max_pages 1");
	tap(FIELD_GET(KITE_KEY_TAG, r.result) == 0x33 && FIELD_GET(KITE_KEY_INDEX, r.result) >= 1,
	    "ALLOC_MR key: tag 0x33, index >= 1 (0x%x)", r.result);
	alloc_mr(fx_pd, 512, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "ALLOC_MR max_pages 512");
	alloc_mr(fx_pd, 4, KITE_MR_F_PHYS, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_alloc_mr, flags), "ALLOC_MR with a flag other than the tag -> E_PARAM, syndrome 8");
	alloc_mr(999, 4, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_MR with a nonexistent PD -> E_OBJECT");

	/* PD busy */
	pd2 = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	k = need(alloc_mr(pd2, 8, 0, &r), &r, "ALLOC_MR on PD 2");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd2, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while an MR uses it -> E_BUSY");
	cmd_obj(KITE_CMD_DEREG_MR, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of a fast-reg MR");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD once the MR is gone");
	(void)k1;
	(void)k2;
}

/* ------------------------------------------------------------------ */
/* Memory windows                                                      */
/* ------------------------------------------------------------------ */

#define T_WIN		(T_IOVA + 0x1000)	/* the windows' range in W.mr */
#define T_WIN_LEN	0x2000u
#define LW		KITE_ACCESS_LOCAL_WRITE
#define RWR		KITE_ACCESS_REMOTE_WRITE
#define RRD		KITE_ACCESS_REMOTE_READ
#define RAT		KITE_ACCESS_REMOTE_ATOMIC
#define MWB		KITE_ACCESS_MW_BIND

static struct {
	uint32_t mr;		/* LOCAL_WRITE | MW_BIND over E.mr's pages */
	uint32_t nobind;	/* LOCAL_WRITE, no MW_BIND */
	uint32_t nolw;		/* MW_BIND and REMOTE_READ, no LOCAL_WRITE */
	uint32_t pd2;		/* LOCAL_WRITE | MW_BIND, in PD 2 */
} W;

static uint32_t retag(uint32_t key, uint8_t tag)
{
	return (key & ~0xffu) | tag;
}

/* A BIND_MW WQE on @q, doorbell rung; returns its wqe_idx. */
static uint16_t post_bind_raw(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t addr,
			      uint64_t len, uint32_t mw_key, uint32_t mr_key, uint32_t access,
			      uint32_t flags)
{
	uint8_t w[256];
	struct kite_wqe_ctrl c;
	struct kite_wqe_bind_mw b;
	uint16_t idx = (uint16_t)q->spi;

	memset(w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_WQE_OP_BIND_MW | opw;
	c.imm_data = imm;
	c.wqe_idx = idx;
	memset(&b, 0, sizeof(b));
	b.addr = addr;
	b.length = len;
	b.mw_key = mw_key;
	b.mr_key = mr_key;
	b.access = access;
	b.flags = flags;
	memcpy(w, &c, 16);
	memcpy(w + 16, &b, sizeof(b));
	memwrite(q->sq.data + ((uint64_t)(q->spi & ((1u << q->slog) - 1)) << q->sshift),
		 w, 1u << q->sshift);
	q->spi++;
	ring_sq(q);
	return idx;
}

/* A signaled LOCAL_INV of @key on @q; returns its wqe_idx. */
static uint16_t post_local_inv(struct tqp *q, uint32_t key)
{
	return post_rc(q, KITE_WQE_OP_LOCAL_INV | KITE_WQE_F_SIGNALED, key, 0, 0, 0, 0, NULL, 0);
}

/* Bind on @q of pair @P, expected to succeed; returns the window's new key. */
static uint32_t bind_ok(struct rcpair *P, struct tqp *q, const char *what, uint64_t addr,
			uint64_t len, uint32_t mw_key, uint32_t mr_key, uint32_t access, uint8_t tag)
{
	uint16_t idx = post_bind_raw(q, KITE_WQE_F_SIGNALED, 0, addr, len, mw_key, mr_key,
				     access, tag);

	tap(req_ok(&P->scq, q->qpn, idx, KITE_WQE_OP_BIND_MW, 0),
	    "%s: REQ CQE, wqe_opcode BIND_MW", what);
	return retag(mw_key, tag);
}

/*
 * A bind on QP B of a new RC pair, expected to fail with @synd: its
 * REQ_ERR CQE names the BIND_MW WQE, B goes to ERR and its next WQE is
 * flushed.
 */
static void bind_fails(const char *what, unsigned synd, uint32_t opw, uint32_t imm,
		       uint64_t addr, uint64_t len, uint32_t mw_key, uint32_t mr_key,
		       uint32_t access, uint32_t flags)
{
	struct kite_wqe_sge g[1] = { sge(8, E.lkey, SRC) };
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx, idx2;
	bool ok;

	rc_pair(&P, MAC, 14, 7, 6);
	idx = post_bind_raw(&P.b, opw | KITE_WQE_F_SIGNALED, imm, addr, len, mw_key, mr_key,
			    access, flags);
	idx2 = post_rc(&P.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.b.qpn, synd) && c.wqe_idx == idx &&
		 c.wqe_opcode == KITE_WQE_OP_BIND_MW,
		 "bind %s: REQ_ERR %s", what,
		 synd == KITE_SYND_MW_BIND ? "MW_BIND" : "LOCAL_QP_OP"))
		cqe_diag("send", &c);
	tap(req_err(&P.scq, P.b.qpn, idx2, KITE_SYND_WR_FLUSH) &&
	    qp_state(P.b.qpn) == KITE_QPS_ERR, "bind %s: QP in ERR, the next WQE flushed", what);
}

/*
 * An RDMA operation from A to B of @P through @rkey at @va: 0 when it
 * completed and the data is right (WRITE: at @va; READ: into RBUF; FETCH_ADD
 * of 5: the word and the original value), else the error syndrome (0xff:
 * no CQE, 0xfe: wrong data).
 */
static unsigned mw_op(struct rcpair *P, unsigned op, uint64_t va, uint32_t rkey, uint32_t len,
		      uint8_t seed)
{
	static uint8_t want[4096];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	uint64_t orig = 0;
	uint16_t idx;

	if (op == KITE_WQE_OP_RDMA_WRITE) {
		fill_pattern(SRC, len, seed, want);
		g[0] = sge(len, E.lkey, SRC);
	} else if (op == KITE_WQE_OP_RDMA_READ) {
		fill_pattern(va, len, seed, want);
		g[0] = sge(len, E.lkey, RBUF);
	} else {
		orig = 0x1000ULL * seed + 7;
		set64(va, orig);
		g[0] = sge(8, E.lkey, RBUF);
		len = 8;
	}
	idx = post_rc(&P->a, op | KITE_WQE_F_SIGNALED, 0, va, rkey, 5, 0, g, 1);
	if (!tcq_next(&P->scq, &c) || c.qpn != P->a.qpn || c.wqe_idx != idx) {
		cqe_diag("send", &c);
		return 0xff;
	}
	if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_REQ)
		return FIELD_GET(KITE_CQE_SYNDROME, c.syndrome);
	if (op == KITE_WQE_OP_RDMA_WRITE)
		return mem_eq(va, want, len) ? 0 : 0xfe;
	if (op == KITE_WQE_OP_RDMA_READ)
		return mem_eq(RBUF, want, len) ? 0 : 0xfe;
	return mem64(va) == orig + 5 && mem64(RBUF) == orig ? 0 : 0xfe;
}

/* @op through @rkey fails with REMOTE_ACCESS, on a new pair; both QPs to ERR. */
static void mw_op_fails(const char *what, unsigned op, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct rcpair P;
	unsigned synd;

	rc_pair(&P, MAC, 14, 7, 6);
	synd = mw_op(&P, op, va, rkey, len, 0x44);
	tap(synd == KITE_SYND_REMOTE_ACCESS && qp_state(P.a.qpn) == KITE_QPS_ERR &&
	    qp_state(P.b.qpn) == KITE_QPS_ERR,
	    "%s: REMOTE_ACCESS, both QPs in ERR (syndrome 0x%x)", what, synd);
}

/* ALLOC_MW and DEALLOC_MW, valid and not. */
static void mw_commands(uint32_t *w1, uint32_t *w2)
{
	struct kite_cmd_alloc_mw in;
	struct res r;
	uint32_t k, pd3, u, pdu;

	*w1 = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x71, 0, &r), &r, "ALLOC_MW type 1");
	tap(FIELD_GET(KITE_KEY_INDEX, *w1) && FIELD_GET(KITE_KEY_TAG, *w1) == 0x71,
	    "ALLOC_MW: key 0x%x, an index and the tag given", *w1);
	*w2 = need(alloc_mw(fx_pd, KITE_MW_TYPE_2, 0x72, 0, &r), &r, "ALLOC_MW type 2");
	tap(FIELD_GET(KITE_KEY_INDEX, *w2) != FIELD_GET(KITE_KEY_INDEX, *w1),
	    "ALLOC_MW: each window its own index of the translation table");

	alloc_mw(fx_pd, 0, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "ALLOC_MW type 0 -> E_PARAM at type");
	alloc_mw(fx_pd, 3, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "ALLOC_MW type 3 -> E_PARAM at type");
	alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x100, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 8, "ALLOC_MW with a reserved flags bit -> E_PARAM at flags");
	alloc_mw(0, KITE_MW_TYPE_1, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW in PD 0 -> E_OBJECT at pdn");
	alloc_mw(777, KITE_MW_TYPE_2, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW in a PD that does not exist -> E_OBJECT");
	alloc_mw(fx_pd, KITE_MW_TYPE_1, 0, 33, &r);
	expect(&r, KITE_CMD_E_OBJECT, 12, "ALLOC_MW for a user context not allocated -> E_OBJECT at uctx");
	u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	alloc_mw(fx_pd, KITE_MW_TYPE_1, 0, u, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW for a user context in the kernel's PD -> E_OBJECT");
	pdu = need(alloc_pd(u, &r), &r, "ALLOC_PD of the user context");
	alloc_mw(pdu, KITE_MW_TYPE_2, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW for the kernel in a user PD -> E_OBJECT");
	k = need(alloc_mw(pdu, KITE_MW_TYPE_2, 0, u, &r), &r, "ALLOC_MW in the user PD");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while its window exists -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW of the user window");
	cmd_obj(KITE_CMD_DEALLOC_PD, pdu, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD of the user PD");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX");
	memset(&in, 0, sizeof(in));
	in.pdn = fx_pd;
	in.type = KITE_MW_TYPE_1;
	run(KITE_CMD_ALLOC_MW, &in, sizeof(in) - 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "ALLOC_MW with 12 bytes of input -> E_LENGTH");

	cmd_obj(KITE_CMD_DEALLOC_MW, W.mr, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW of an MR's key -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, *w1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of a window's key -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_MW, retag(*w1, 0x99), 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW with another tag -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_MW, *w1, 1, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "DEALLOC_MW with uctx set -> E_PARAM");
	cmd_obj(KITE_CMD_DEALLOC_MW, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW of key 0 -> E_OBJECT");

	pd3 = need(alloc_pd(0, &r), &r, "ALLOC_PD 3");
	k = need(alloc_mw(pd3, KITE_MW_TYPE_1, 0, 0, &r), &r, "ALLOC_MW in PD 3");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while a window of it exists -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW again -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "then DEALLOC_PD");
}

/* Type 1: bind, use, rebind (from any QP of the PD), unbind, refusals. */
static void mw_type1(uint32_t w1)
{
	struct rcpair P;
	struct res r;
	uint32_t k1, k1b, k1c, tmp;

	rc_pair(&P, MAC, 14, 7, 6);
	k1 = bind_ok(&P, &P.b, "type 1", T_WIN, T_WIN_LEN, w1, W.mr, RWR | RRD, 0x81);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + 100, k1, 3000, 0x31) == 0,
	    "WRITE 3000 bytes through the type 1 window: the data at the address");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN + T_WIN_LEN - 2000, k1, 2000, 0x32) == 0,
	    "READ the window's last 2000 bytes through its key");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k1, 1, 0x33) == 0 &&
	    mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + T_WIN_LEN - 1, k1, 1, 0x34) == 0,
	    "WRITE the window's first and last byte");
	/* The MR's own key has no remote rights: the window gives them. */
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, R.rkey, 64, 0x35) == 0,
	    "an MR key in the same pages still works beside the window");
	k1b = bind_ok(&P, &P.a, "type 1 rebound by the other QP of the PD", T_WIN, 4096, k1,
		      W.mr, RWR | RAT, 0x82);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + 4000, k1b, 96, 0x36) == 0,
	    "WRITE through the rebound window's new key");
	tap(mw_op(&P, KITE_WQE_OP_ATOMIC_FA, T_WIN + 8, k1b, 8, 3) == 0,
	    "FETCH_ADD through the window: the word and its original value");
	mw_op_fails("WRITE through the type 1 window's previous key", KITE_WQE_OP_RDMA_WRITE,
		    T_WIN, k1, 64);
	mw_op_fails("WRITE across the window's end (still in the MR)", KITE_WQE_OP_RDMA_WRITE,
		    T_WIN + 4096 - 32, k1b, 64);
	mw_op_fails("WRITE below the window's start", KITE_WQE_OP_RDMA_WRITE, T_WIN - 8, k1b, 16);
	mw_op_fails("READ through a window without REMOTE_READ", KITE_WQE_OP_RDMA_READ, T_WIN,
		    k1b, 64);
	mw_op_fails("WRITE through the window with the index of another", KITE_WQE_OP_RDMA_WRITE,
		    T_WIN, k1b + 0x100, 64);

	/* Unbind: length 0, a new tag; nothing works with either key. */
	rc_pair(&P, MAC, 14, 7, 6);
	k1c = bind_ok(&P, &P.b, "type 1 unbind (length 0)", 0, 0, k1b, 0, 0, 0x83);
	mw_op_fails("WRITE through the unbound window's new key", KITE_WQE_OP_RDMA_WRITE, T_WIN,
		    k1c, 64);
	mw_op_fails("WRITE through the unbound window's old key", KITE_WQE_OP_RDMA_WRITE, T_WIN,
		    k1b, 64);

	/* An MR with a window bound is not deregistered. */
	tmp = need(reg_mr(fx_pd, LW | MWB, 0x65, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, to deregister)");
	rc_pair(&P, MAC, 14, 7, 6);
	k1 = bind_ok(&P, &P.b, "type 1 bound to the MR to deregister", T_WIN, 64, k1c, tmp, RRD,
		     0x84);
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEREG_MR of an MR with a window bound -> E_BUSY");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k1, 64, 0x37) == 0,
	    "the window still works after the refused DEREG_MR");
	k1 = bind_ok(&P, &P.b, "type 1 rebound to another MR", T_WIN, 64, k1, W.mr, RRD, 0x85);
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR once the window left it");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k1, 64, 0x38) == 0,
	    "READ through the window on its new MR");
	k1 = bind_ok(&P, &P.b, "type 1 unbound again", 0, 0, k1, 0, 0, 0x86);
	(void)k1;
}

/* Type 2: bound to one QP, invalidated locally and remotely, freed with its QP. */
static void mw_type2(uint32_t w2, uint32_t w1_key)
{
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P, Q;
	struct res r;
	uint32_t k2, tmp;
	uint16_t idx;
	bool ok;

	rc_pair(&P, MAC, 14, 7, 6);
	/* An unbound type 2 window has no usable key: its tag is not checked. */
	k2 = bind_ok(&P, &P.b, "type 2 on QP B, named with another tag", T_WIN, T_WIN_LEN,
		     retag(w2, 0x55), W.mr, RWR | RRD, 0x91);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + 10, k2, 2500, 0x41) == 0,
	    "WRITE through the type 2 window to its QP: the data at the address");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN + 10, k2, 2500, 0x42) == 0,
	    "READ through the type 2 window from its QP");
	mw_op_fails("WRITE through a type 2 window to another QP of the PD",
		    KITE_WQE_OP_RDMA_WRITE, T_WIN, k2, 64);
	bind_fails("of a bound type 2 window again (o10-37.2.30)", KITE_SYND_MW_BIND, 0, 0, T_WIN,
		   64, k2, W.mr, RRD, 0x92);

	/* LOCAL_INV: only the window's QP, only type 2, only its key. */
	rc_pair(&Q, MAC, 14, 7, 6);
	idx = post_local_inv(&Q.a, k2);
	tap(req_err(&Q.scq, Q.a.qpn, idx, KITE_SYND_LOCAL_PROT),
	    "LOCAL_INV of a type 2 window by another QP of the PD: LOCAL_PROT");
	rc_pair(&Q, MAC, 14, 7, 6);
	idx = post_local_inv(&Q.a, w1_key);
	tap(req_err(&Q.scq, Q.a.qpn, idx, KITE_SYND_LOCAL_PROT),
	    "LOCAL_INV of a type 1 window (o10-37.2.26): LOCAL_PROT");
	idx = post_local_inv(&P.b, k2);
	tap(req_ok(&P.scq, P.b.qpn, idx, KITE_WQE_OP_LOCAL_INV, 0),
	    "LOCAL_INV of the type 2 window on its QP: REQ CQE");
	ok = mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k2, 64, 0x43) == KITE_SYND_REMOTE_ACCESS;
	tap(ok, "WRITE through the invalidated type 2 window: REMOTE_ACCESS");

	/* Free again: bound anew on another QP, then SEND_WITH_INV from the peer. */
	rc_pair(&P, MAC, 14, 7, 6);
	k2 = bind_ok(&P, &P.b, "type 2 bound again after LOCAL_INV", T_WIN, 64, k2, W.mr, RWR,
		     0x93);
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(16, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_INV | KITE_WQE_F_SIGNALED, k2, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND_INV, 0),
	    "SEND_WITH_INV of the type 2 window's key: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, P.b.qpn, 0) && c.byte_len == 16 &&
		 c.inv_rkey == k2 && (c.flags & KITE_CQE_F_INV),
		 "SEND_WITH_INV: RESP_SEND_INV with the window's key and the INV flag"))
		cqe_diag("recv", &c);
	ok = mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k2, 16, 0x44) == KITE_SYND_REMOTE_ACCESS;
	tap(ok, "WRITE through the remotely invalidated window: REMOTE_ACCESS");

	/* SEND_WITH_INV of a type 1 window's key: the responder refuses it. */
	rc_pair(&P, MAC, 14, 7, 6);
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(16, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_INV | KITE_WQE_F_SIGNALED, w1_key, 0, 0, 0, 0, g, 1);
	tap(req_err(&P.scq, P.a.qpn, idx, KITE_SYND_REMOTE_INVAL_REQ),
	    "SEND_WITH_INV of a type 1 window's key: REMOTE_INVAL_REQ");

	/* Destroying the QP invalidates its type 2 windows and frees the MR. */
	tmp = need(reg_mr(fx_pd, LW | MWB, 0x66, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, for the QP's window)");
	rc_pair(&P, MAC, 14, 7, 6);
	k2 = bind_ok(&P, &P.b, "type 2 on a QP to destroy", T_WIN, 64, k2, tmp, RRD, 0x94);
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEREG_MR under a type 2 window -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, P.b.qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of the window's QP");
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR once the window's QP is gone");
	rc_pair(&P, MAC, 14, 7, 6);
	k2 = bind_ok(&P, &P.b, "type 2 free again after its QP's destruction", T_WIN, 64, k2,
		     W.mr, RRD, 0x95);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k2, 64, 0x45) == 0,
	    "READ through it on the new QP");
	/* DEALLOC_MW unbinds. */
	tmp = need(reg_mr(fx_pd, LW | MWB, 0x67, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, for DEALLOC_MW)");
	idx = post_local_inv(&P.b, k2);
	tap(req_ok(&P.scq, P.b.qpn, idx, KITE_WQE_OP_LOCAL_INV, 0), "LOCAL_INV again");
	k2 = bind_ok(&P, &P.b, "type 2 on the MR for DEALLOC_MW", T_WIN, 64, k2, tmp, RRD, 0x96);
	cmd_obj(KITE_CMD_DEALLOC_MW, w2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW of a bound window by its allocation key");
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of its MR afterwards");
	mw_op_fails("WRITE through a deallocated window's key", KITE_WQE_OP_RDMA_WRITE, T_WIN,
		    k2, 16);
}

/* UC: a type 2 window bound on a UC QP, written through, invalidated. */
static void mw_uc(void)
{
	static uint8_t want[3000];
	struct kite_wqe_sge g[1];
	struct rcpair U;
	struct res r;
	uint32_t w, k;
	uint16_t idx;

	w = need(alloc_mw(fx_pd, KITE_MW_TYPE_2, 0x30, 0, &r), &r, "ALLOC_MW type 2 (UC)");
	uc_pair(&U, KITE_MTU_1024);
	k = bind_ok(&U, &U.b, "type 2 on a UC QP", T_WIN, T_WIN_LEN, w, W.mr, RWR, 0x31);
	fill_pattern(SRC, 3000, 0x51, want);
	g[0] = sge(3000, E.lkey, SRC);
	idx = post_rc(&U.a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, T_WIN + 7, k, 0, 0,
		      g, 1);
	tap(req_ok(&U.scq, U.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0), "UC WRITE through the window");
	run_for(1000000);
	tap(mem_eq(T_WIN + 7, want, 3000), "UC WRITE through the window: the data at the address");
	idx = post_local_inv(&U.b, k);
	tap(req_ok(&U.scq, U.b.qpn, idx, KITE_WQE_OP_LOCAL_INV, 0),
	    "UC LOCAL_INV of the type 2 window");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW by its current key");
}

/* Every way a bind is refused; the window is unchanged afterwards. */
static void mw_bind_errors(uint32_t wpd2)
{
	struct rcpair P;
	struct res r;
	uint32_t we, wt2, wro, k;
	struct tqp *ud = &E.b;
	uint16_t idx;

	we = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x20, 0, &r), &r, "ALLOC_MW type 1 (errors)");
	wt2 = need(alloc_mw(fx_pd, KITE_MW_TYPE_2, 0x21, 0, &r), &r, "ALLOC_MW type 2 (errors)");
	bind_fails("to an MR without MW_BIND (C10-73)", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we,
		   W.nobind, RRD, 1);
	bind_fails("writable, to an MR without LOCAL_WRITE (C10-74)", KITE_SYND_MW_BIND, 0, 0, T_WIN,
		   64, we, W.nolw, RWR, 1);
	bind_fails("atomic, to an MR without LOCAL_WRITE (C10-74)", KITE_SYND_MW_BIND, 0, 0, T_WIN,
		   64, we, W.nolw, RAT, 1);
	bind_fails("starting below the MR (C10-75)", KITE_SYND_MW_BIND, 0, 0, T_IOVA - 1, 64, we,
		   W.mr, RRD, 1);
	bind_fails("ending past the MR (C10-75)", KITE_SYND_MW_BIND, 0, 0, T_IOVA + T_MR_LEN - 63,
		   64, we, W.mr, RRD, 1);
	bind_fails("longer than the MR", KITE_SYND_MW_BIND, 0, 0, T_IOVA, T_MR_LEN + 1, we, W.mr,
		   RRD, 1);
	bind_fails("with a wrapping range", KITE_SYND_MW_BIND, 0, 0, ~0ULL - 8, 64, we, W.mr, RRD,
		   1);
	bind_fails("of a window of another PD", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, wpd2, W.mr,
		   RRD, 1);
	bind_fails("to an MR of another PD", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we, W.pd2, RRD,
		   1);
	bind_fails("of a type 1 window by a stale key", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   retag(we, 0x19), W.mr, RRD, 1);
	bind_fails("of a type 2 window with length 0 (o10-37.2.40)", KITE_SYND_MW_BIND, 0, 0,
		   T_WIN, 0, wt2, W.mr, RRD, 1);
	bind_fails("with LOCAL_WRITE in the window's rights", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   we, W.mr, RRD | LW, 1);
	bind_fails("with MW_BIND in the window's rights", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we,
		   W.mr, MWB, 1);
	bind_fails("to a window's key as the MR", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we, wt2, RRD,
		   1);
	bind_fails("of an MR's key as the window", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, W.mr, W.mr,
		   RRD, 1);
	bind_fails("of key 0", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, 0, W.mr, RRD, 1);
	bind_fails("of a key index past the table", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   0xffffff00u, W.mr, RRD, 1);
	bind_fails("to an MR by a stale key", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we,
		   W.mr ^ 0x80, RRD, 1);
	bind_fails("to the DMA MR", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we, E.lkey_phys, RRD, 1);
	bind_fails("with a reserved flags bit", KITE_SYND_LOCAL_QP_OP, 0, 0, T_WIN, 64, we, W.mr,
		   RRD, 0x100);
	bind_fails("with FLUSH_GLOBAL in the window's rights", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   we, W.mr, RRD | KITE_ACCESS_FLUSH_GLOBAL, 1);
	bind_fails("with a reserved access bit", KITE_SYND_LOCAL_QP_OP, 0, 0, T_WIN, 64, we, W.mr,
		   RRD | BIT(6), 1);
	bind_fails("with an SGE count", KITE_SYND_LOCAL_QP_OP,
		   (uint32_t)FIELD_PREP(KITE_WQE_NUM_SGE, 1), 0, T_WIN, 64, we, W.mr, RRD, 1);
	bind_fails("with inline data", KITE_SYND_LOCAL_QP_OP, KITE_WQE_F_INLINE, 0, T_WIN, 64, we,
		   W.mr, RRD, 1);
	bind_fails("with immediate data", KITE_SYND_LOCAL_QP_OP, 0, 0x1234, T_WIN, 64, we, W.mr,
		   RRD, 1);

	/* A UD QP has no BIND_MW. */
	idx = post_bind_raw(ud, KITE_WQE_F_SIGNALED, 0, T_WIN, 64, we, W.mr, RRD, 1);
	tap(req_err(&E.scq, ud->qpn, idx, KITE_SYND_LOCAL_QP_OP) &&
	    qp_state(ud->qpn) == KITE_QPS_SQE, "bind on a UD QP: REQ_ERR LOCAL_QP_OP, QP in SQE");
	tap(tqp_to(ud, KITE_QPS_RTS) == KITE_CMD_OK, "UD QP: SQE to RTS");

	/* The refused binds changed nothing: the windows bind as allocated. */
	rc_pair(&P, MAC, 14, 7, 6);
	k = bind_ok(&P, &P.b, "type 1 after every refusal, by its allocation key", T_WIN, 64, we,
		    W.mr, RRD, 0x22);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k, 64, 0x61) == 0, "and it reads");
	/* REMOTE_READ needs no LOCAL_WRITE. */
	wro = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x23, 0, &r), &r, "ALLOC_MW type 1 (read only)");
	k = bind_ok(&P, &P.b, "read-only window on an MR without LOCAL_WRITE", T_WIN, 64, wro,
		    W.nolw, RRD, 0x24);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k, 64, 0x62) == 0,
	    "READ through the window on the MR without LOCAL_WRITE");
	k = bind_ok(&P, &P.b, "type 2 after the refusals", T_WIN, 64, wt2, W.mr, RWR, 0x25);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k, 64, 0x63) == 0, "and it writes");
	cmd_obj(KITE_CMD_DEALLOC_MW, we, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW type 1 (errors)");
	cmd_obj(KITE_CMD_DEALLOC_MW, wt2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW type 2 (errors)");
	cmd_obj(KITE_CMD_DEALLOC_MW, wro, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW type 1 (read only)");
}

/*
 * Random binds and invalidations on a UC QP (an error moves it to SQE,
 * from which it returns to RTS): every WQE completes, successfully or
 * with a bind, QP operation or protection error, and afterwards every
 * window deallocates and every MR deregisters (the device's count of
 * bound windows is consistent).
 */
static void mw_random(void)
{
	const char *seed = getenv("KITE_SEED");
	struct rcpair U;
	struct res r;
	struct kite_cqe c;
	uint32_t mrs[3], mws[4], keys[12], mw_key, mr_key, access, flags;
	unsigned i, n = 300, ok = 0, err = 0, bad = 0, busy = 0, nkeys;
	uint64_t addr, len;
	uint16_t idx;

	rng_state = seed ? strtoull(seed, NULL, 0) * 31 + 11 : 0x6d77ULL;
	diag("seed 0x%" PRIx64, rng_state);
	mrs[0] = need(reg_mr(fx_pd, LW | MWB, 0x01, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR r0");
	mrs[1] = need(reg_mr(fx_pd, MWB | RRD, 0x02, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR r1");
	mrs[2] = need(reg_mr(fx_pd, LW, 0x03, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR r2");
	for (i = 0; i < 4; i++)
		mws[i] = need(alloc_mw(fx_pd, 1 + i % 2, 0x10 + i, 0, &r), &r, "ALLOC_MW random");
	uc_pair(&U, KITE_MTU_1024);
	for (i = 0; i < n; i++) {
		nkeys = 0;
		memcpy(keys, mrs, sizeof(mrs));
		memcpy(keys + 3, mws, sizeof(mws));
		nkeys = 7;
		keys[nkeys++] = (uint32_t)rnd();
		keys[nkeys++] = retag(mws[rndn(4)], (uint8_t)rnd());
		/* Mostly plausible: windows, MRs that allow binding, small ranges. */
		mw_key = rndn(3) ? mws[rndn(4)] : keys[rndn(nkeys)];
		mr_key = rndn(3) ? mrs[rndn(2)] : keys[rndn(nkeys)];
		addr = rndn(4) ? T_IOVA + rndn(T_MR_LEN - 8192) : rnd();
		len = rndn(4) ? rndn(8192) : (rndn(2) ? 0 : rnd());
		access = rndn(8) ? (uint32_t)rndn(16) & ~LW : (uint32_t)rndn(64);
		flags = rndn(16) ? (uint32_t)rndn(256) : (uint32_t)rnd();
		if (rndn(5)) {
			idx = post_bind_raw(&U.b, KITE_WQE_F_SIGNALED, rndn(32) ? 0 : 1, addr, len,
					    mw_key, mr_key, access, flags);
		} else {
			idx = post_local_inv(&U.b, rndn(2) ? retag(mw_key, (uint8_t)flags) : mw_key);
		}
		if (!tcq_next(&U.scq, &c) || c.qpn != U.b.qpn || c.wqe_idx != idx) {
			bad++;
			cqe_diag("random", &c);
			break;
		}
		if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_REQ) {
			ok++;
			/* Bound windows: remember their keys for the next ones. */
			if (c.wqe_opcode == KITE_WQE_OP_BIND_MW) {
				unsigned j;

				for (j = 0; j < 4; j++)
					if (FIELD_GET(KITE_KEY_INDEX, mws[j]) ==
					    FIELD_GET(KITE_KEY_INDEX, mw_key))
						mws[j] = retag(mw_key, (uint8_t)flags);
			}
			continue;
		}
		err++;
		switch (FIELD_GET(KITE_CQE_SYNDROME, c.syndrome)) {
		case KITE_SYND_MW_BIND:
		case KITE_SYND_LOCAL_QP_OP:
		case KITE_SYND_LOCAL_PROT:
			break;
		default:
			bad++;
			cqe_diag("random", &c);
		}
		if (qp_state(U.b.qpn) != KITE_QPS_SQE || tqp_to(&U.b, KITE_QPS_RTS) != KITE_CMD_OK) {
			bad++;
			diag("random: QP not in SQE after an error, or not back to RTS");
			break;
		}
	}
	tap(!bad && ok + err == n && ok && err,
	    "%u random binds and invalidations: %u completed, %u refused (bind, QP operation or protection errors), none else",
	    n, ok, err);
	for (i = 0; i < 3; i++) {
		cmd_obj(KITE_CMD_DEREG_MR, mrs[i], 0, &r);
		if (r.done && FIELD_GET(KITE_CMD_STATUS_CODE, r.status) == KITE_CMD_E_BUSY)
			busy++;
		else if (!r.done || FIELD_GET(KITE_CMD_STATUS_CODE, r.status) != KITE_CMD_OK)
			bad++;
		else
			mrs[i] = 0;
	}
	for (i = 0; i < 4; i++) {
		/* A window's allocation key always works. */
		cmd_obj(KITE_CMD_DEALLOC_MW, retag(mws[i], 0x10 + i), 0, &r);
		if (!r.done || FIELD_GET(KITE_CMD_STATUS_CODE, r.status) != KITE_CMD_OK)
			bad++;
	}
	for (i = 0; i < 3; i++) {
		if (!mrs[i])
			continue;
		cmd_obj(KITE_CMD_DEREG_MR, mrs[i], 0, &r);
		if (!r.done || FIELD_GET(KITE_CMD_STATUS_CODE, r.status) != KITE_CMD_OK)
			bad++;
	}
	tap(!bad, "afterwards every window deallocates and every MR deregisters (%u were busy with windows)",
	    busy);
}

void g_mw(void)
{
	struct res r;
	uint32_t w1, w2, wpd2;

	eng_setup();
	rc_keys();
	W.mr = need(reg_mr(fx_pd, LW | MWB, 0x61, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		    "REG_MR with MW_BIND");
	W.nobind = need(reg_mr(fx_pd, LW | RWR | RRD, 0x62, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r),
			&r, "REG_MR without MW_BIND");
	W.nolw = need(reg_mr(fx_pd, MWB | RRD, 0x63, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		      "REG_MR with MW_BIND, no LOCAL_WRITE");
	W.pd2 = need(reg_mr(E.pd2, LW | MWB, 0x64, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		     "REG_MR with MW_BIND in PD 2");
	wpd2 = need(alloc_mw(E.pd2, KITE_MW_TYPE_1, 0x70, 0, &r), &r, "ALLOC_MW in PD 2");

	mw_commands(&w1, &w2);
	mw_type1(w1);
	/* mw_type1() leaves w1 unbound with the tag 0x86. */
	mw_type2(w2, retag(w1, 0x86));
	mw_uc();
	mw_bind_errors(wpd2);
	mw_random();
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "after the windows: the channel answers");
}

/* ------------------------------------------------------------------ */
/* REREG_MR                                                            */
/* ------------------------------------------------------------------ */

#define T_IOVA2		0x710000000200ULL	/* a reregistered MR's new range */
#define RR_OFF(f)	((int)offsetof(struct kite_cmd_rereg_mr, f))

/*
 * RDMA WRITE @len bytes of a pattern from SRC to @va through @rkey on a new
 * pair; the requester's syndrome (0: success, 0xff: no CQE). The pattern
 * in @want.
 */
static unsigned rr_write(uint64_t va, uint32_t rkey, uint32_t len, uint8_t seed, uint8_t *want)
{
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx;

	rc_pair(&P, MAC, 14, 7, 6);
	fill_pattern(SRC, len, seed, want);
	g[0] = sge(len, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, va, rkey, 0, 0, g,
		      1);
	if (!tcq_next(&P.scq, &c) || c.qpn != P.a.qpn || c.wqe_idx != idx) {
		cqe_diag("rereg write", &c);
		return 0xff;
	}
	if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_REQ)
		return FIELD_GET(KITE_CQE_SYNDROME, c.syndrome);
	return 0;
}

/* Access, PD and translation changed in place; the key keeps working. */
static void rereg_valid(uint32_t k)
{
	static uint8_t want[4096], got[4096];
	struct rcpair P;
	struct qbuf b2;
	struct res r;

	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, k, 256, 0x51) == 0,
	    "WRITE through the MR's key before REREG_MR");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, LW | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR ACCESS: REMOTE_WRITE taken away");
	tap(r.result == 0, "REREG_MR: result 0 (the key is unchanged)");
	mw_op_fails("WRITE through the same key without REMOTE_WRITE", KITE_WQE_OP_RDMA_WRITE,
		    DST, k, 256);
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, DST, k, 256, 0x52) == 0,
	    "READ through the same key: REMOTE_READ kept");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, LW | RWR | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR ACCESS: REMOTE_WRITE given back");
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, k, 256, 0x53) == 0,
	    "WRITE through the same key again: the data at the address");

	rereg_mr(k, KITE_REREG_F_PD, E.pd2, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR PD: into PD 2");
	mw_op_fails("WRITE through the key of an MR now in another PD than the QP's",
		    KITE_WQE_OP_RDMA_WRITE, DST, k, 64);
	rereg_mr(k, KITE_REREG_F_PD, fx_pd, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR PD: back into the QP's PD");
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, k, 64, 0x54) == 0,
	    "WRITE through the key in its PD again");

	b2 = mkbuf(KITE_PBL_LEVEL_1, 12, 2, false);
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA2, 2 * 4096 - 0x200, &b2.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR TRANS: two new pages at a new iova");
	tap(rr_write(T_IOVA2 + 4000, k, 1000, 0x55, want) == 0,
	    "WRITE 1000 bytes across the new pages through the same key");
	memread(b2.data + 0x200 + 4000, got, 1000);
	tap(!memcmp(got, want, 1000), "the data is in the new pages, at the new iova's offset");
	tap(rr_write(DST, k, 64, 0x56, want) == KITE_SYND_REMOTE_ACCESS,
	    "WRITE to the old range through the key: REMOTE_ACCESS");
	tap(rr_write(T_IOVA2 + 2 * 4096 - 0x200 - 8, k, 16, 0x57, want) == KITE_SYND_REMOTE_ACCESS,
	    "WRITE across the new length's end: REMOTE_ACCESS");

	rereg_mr(k, KITE_REREG_F_TRANS | KITE_REREG_F_PD | KITE_REREG_F_ACCESS, fx_pd,
		 LW | RWR, T_IOVA, T_MR_LEN, &E.mr.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR of all three at once: back to the first pages");
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST + 512, k, 2048, 0x58) == 0,
	    "WRITE through the key into the first pages again");
}

/* Bad input: each error leaves the MR as it was. */
static void rereg_errors(uint32_t k)
{
	static uint8_t want[64];
	uint32_t fast, w, u, pdu, key;
	struct kite_pbl bad;
	struct rcpair P;
	struct res r;

	rereg_mr(0, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR key 0 -> E_OBJECT");
	rereg_mr(retag(k, 0x99), KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR with a stale tag -> E_OBJECT");
	rereg_mr(0xffffff00u | (k & 0xff), KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR index beyond the table -> E_OBJECT");
	fast = need(alloc_mr(fx_pd, 4, 0x41, &r), &r, "ALLOC_MR (fast)");
	rereg_mr(fast, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR of a fast-registration MR -> E_OBJECT");
	w = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x42, 0, &r), &r, "ALLOC_MW");
	rereg_mr(w, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR of a window's key -> E_OBJECT");
	rereg_mr(E.lkey_phys, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_STATE, RR_OFF(key), "REREG_MR of a DMA MR -> E_STATE");
	rereg_mr(k, 0, 0, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(flags), "REREG_MR with no flag -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_ACCESS | BIT(3), 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(flags), "REREG_MR with a reserved flag -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_PD, 999, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(pdn), "REREG_MR into no such PD -> E_OBJECT");
	u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	pdu = need(alloc_pd(u, &r), &r, "ALLOC_PD of the user context");
	rereg_mr(k, KITE_REREG_F_PD, pdu, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(pdn),
	       "REREG_MR of a kernel MR into a user context's PD -> E_OBJECT");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, LW | BIT(6), 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(access), "REREG_MR access with a reserved bit -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, RWR | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(access),
	       "REREG_MR REMOTE_WRITE without LOCAL_WRITE -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA, 0, &E.mr.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(length), "REREG_MR TRANS length 0 -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_TRANS | KITE_REREG_F_ACCESS, 0, LW, T_IOVA, T_MR_LEN + 1,
		 &E.mr.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(length),
	       "REREG_MR TRANS beyond its pages (with ACCESS) -> E_PARAM");
	bad = E.mr.pbl;
	bad.npages = 0;
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA, 4096, &bad, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REREG_MR TRANS with a PBL of no page");
	bad = E.mr.pbl;
	bad.addr = 0xfff0000000000000ULL;
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA, 4096, &bad, &r);
	expect2(&r, KITE_CMD_E_DMA, KITE_CMD_E_PBL, "REREG_MR TRANS with a PBL outside RAM");
	rereg_mr(k, KITE_REREG_F_PD | KITE_REREG_F_TRANS, 999, 0, T_IOVA2, 4096, &E.mr.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(pdn), "REREG_MR TRANS into no such PD -> E_OBJECT");
	tap(rr_write(DST, k, 64, 0x61, want) == 0 && mem_eq(DST, want, 64),
	    "after the refused commands the MR is as it was: WRITE through its key works");

	/* Windows bound to the MR: not reregistered (as DEREG_MR). */
	key = need(reg_mr(fx_pd, LW | MWB, 0x67, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, to reregister)");
	rc_pair(&P, MAC, 14, 7, 6);
	w = bind_ok(&P, &P.b, "type 1 bound to the MR to reregister", T_WIN, 64, w, key, RRD,
		    0x43);
	rereg_mr(key, KITE_REREG_F_ACCESS, 0, LW | MWB | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_BUSY, RR_OFF(key), "REREG_MR of an MR with a window bound -> E_BUSY");
	w = bind_ok(&P, &P.b, "the window unbound", 0, 0, w, 0, 0, 0x44);
	rereg_mr(key, KITE_REREG_F_ACCESS, 0, LW | MWB | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR once the window left it");
	cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the reregistered MR by its key");
	(void)w;
}

/* Random REREG_MR commands: each one answered, the device whole after. */
static void rereg_random(void)
{
	const char *seed = getenv("KITE_SEED");
	uint32_t keys[4], key, flags, access, pdn;
	unsigned i, n = 400, ok = 0, refused = 0, bad = 0;
	uint64_t iova, len;
	struct kite_pbl pbl;
	struct res r;

	rng_state = seed ? strtoull(seed, NULL, 0) * 37 + 5 : 0x7272ULL;
	diag("seed 0x%" PRIx64, rng_state);
	for (i = 0; i < 3; i++)
		keys[i] = need(reg_mr(fx_pd, LW, 0x20 + i, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r),
			       &r, "REG_MR random");
	keys[3] = E.lkey_phys;
	for (i = 0; i < n; i++) {
		key = rndn(4) ? keys[rndn(4)] : (uint32_t)rnd();
		flags = rndn(8) ? 1 + rndn(7) : (uint32_t)rnd();
		pdn = rndn(4) ? (rndn(2) ? fx_pd : E.pd2) : (uint32_t)rnd();
		access = rndn(4) ? (uint32_t)rndn(32) : (uint32_t)rnd();
		iova = rndn(2) ? T_IOVA + rndn(4096) : rnd();
		len = rndn(4) ? 1 + rndn(T_MR_LEN) : rnd();
		pbl = E.mr.pbl;
		if (!rndn(4))
			pbl.npages = (uint32_t)rnd();
		if (!rndn(8))
			pbl.addr = rnd();
		if (!rndn(8))
			pbl.cfg = (uint32_t)rnd();
		rereg_mr(key, flags, pdn, access, iova, len, &pbl, &r);
		if (!r.done)
			bad++;
		else if ((r.status & 0xff) == KITE_CMD_OK)
			ok++;
		else
			refused++;
		if (bad)
			break;
	}
	tap(!bad && ok + refused == n, "%u random REREG_MR: every one answered (%u done, %u refused)",
	    n, ok, refused);
	tap(ok > 0 && refused > 0, "random REREG_MR: both outcomes seen");
	for (i = 0; i < 3; i++) {
		rereg_mr(keys[i], KITE_REREG_F_TRANS | KITE_REREG_F_PD | KITE_REREG_F_ACCESS, fx_pd,
			 LW, T_IOVA, T_MR_LEN, &E.mr.pbl, &r);
		expect(&r, KITE_CMD_OK, -1, "after the random ones: REREG_MR %u restores it", i);
		cmd_obj(KITE_CMD_DEREG_MR, keys[i], 0, &r);
		expect(&r, KITE_CMD_OK, -1, "after the random ones: DEREG_MR %u", i);
	}
}

void g_rereg(void)
{
	struct res r;
	uint32_t k;

	eng_setup();
	rc_keys();
	k = need(reg_mr(fx_pd, LW | RWR | RRD, 0x66, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		 "REG_MR (to reregister)");
	rereg_valid(k);
	rereg_errors(k);
	rereg_random();
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "after REREG_MR: the channel answers");
}
