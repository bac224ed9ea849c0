/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): the RC and UC transports and
 * RC requester pipelining (groups rc, rc_err, rc_wire, rc_pipe, uc,
 * uc_wire).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* RC transport                                                        */
/* ------------------------------------------------------------------ */

/*
 * Fast registration on B (REG_MR WQE over E.mr's pages), a WRITE from A
 * through the new rkey, SEND_WITH_INV from A invalidating it, and a WRITE
 * that then fails.
 */
static void rc_fast_reg(struct rcpair *P)
{
	static uint8_t want[2000];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct res r;
	uint32_t fkey, key;
	uint16_t idx;
	bool ok;

	fkey = need(alloc_mr(fx_pd, 16, 0x10, &r), &r, "ALLOC_MR (16 pages)");
	key = (fkey & ~0xffu) | 0x99;
	/* E.mr is a level-1 list of 16 pages: reuse it as the REG_MR list. */
	idx = post_reg_mr(&P->b, 0x5000000000ULL, 8 * 4096, key,
			  KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE, E.mr.pbl.addr, 8);
	tap(req_ok(&P->scq, P->b.qpn, idx, KITE_WQE_OP_REG_MR, 0),
	    "REG_MR WQE on RC QP B: REQ CQE");
	fill_pattern(SRC, 2000, 0x99, want);
	g[0] = sge(2000, E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0,
		      0x5000000000ULL + 4096 + 8, key, 0, 0, g, 1);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0) &&
	    mem_eq(T_IOVA - 0x100 + 4096 + 8, want, 2000),
	    "WRITE through the fast-registered rkey lands in the MR's second page");
	/* SEND_WITH_INV from A invalidates B's key. */
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P->b, g, 1);
	g[0] = sge(10, E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_SEND_INV | KITE_WQE_F_SIGNALED, key, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_SEND_INV, 0), "SEND_INV: REQ CQE");
	ok = tcq_next(&P->rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, P->b.qpn, 0) && c.byte_len == 10 &&
		 c.inv_rkey == key && (c.flags & KITE_CQE_F_INV),
		 "SEND_INV: RESP_SEND_INV, inv_rkey = the key, INV flag"))
		cqe_diag("recv", &c);
	g[0] = sge(16, E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0,
		      0x5000000000ULL, key, 0, 0, g, 1);
	ok = tcq_next(&P->scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P->a.qpn, KITE_SYND_REMOTE_ACCESS) &&
	    c.wqe_idx == idx, "WRITE through the invalidated rkey: REMOTE_ACCESS");
	/* The REG_MR WQE changed the tag; the allocation key still frees it. */
	cmd_obj(KITE_CMD_DEREG_MR, (fkey & ~0xffu) | 0x42, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of the fast-reg MR with a third tag -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, fkey, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the fast-reg MR by its allocation key after REG_MR retagged it");
	cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR again by its current key -> E_OBJECT");
}

static void rc_dm(void);

void g_rc(void)
{
	static uint8_t want[6000];
	struct kite_wqe_sge g[3];
	struct kite_cqe c;
	struct kite_cmd_modify_qp o;
	struct rcpair P;
	struct res r;
	uint16_t idx;
	bool ok;

	eng_setup();
	rc_keys();
	rc_pair(&P, MAC, 14, 7, 6);

	/* SEND, one packet. */
	fill_pattern(SRC, 100, 0x10, want);
	g[0] = sge(200, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED | KITE_WQE_F_SOLICITED, 0, 0,
		      0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0),
	    "RC SEND 100 bytes over loopback: REQ CQE after the ACK");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 100 &&
		 c.wqe_idx == 0 && c.flags == KITE_CQE_F_SOLICITED,
		 "RC receive CQE: RESP_SEND, byte_len 100, SOLICITED, no GRH"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 100), "RC SEND payload byte for byte");

	/* SEND 5000 bytes from 3 SGEs into 2: five packets at MTU 1024. */
	fill_pattern(SRC, 5000, 0x22, want);
	g[0] = sge(3000, E.lkey, RBUF);
	g[1] = sge(3000, E.lkey, RBUF + 4000);
	post_recv(&P.b, g, 2);
	g[0] = sge(1000, E.lkey, SRC);
	g[1] = sge(2500, E.lkey, SRC + 1000);
	g[2] = sge(1500, E.lkey, SRC + 3500);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 3);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "RC SEND 5000 bytes: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 5000 &&
		 c.wqe_idx == 1, "RC multi-packet SEND: one receive CQE, byte_len 5000"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 3000) && mem_eq(RBUF + 4000, want + 3000, 2000),
	    "5000-byte SEND scattered byte for byte across the two receive SGEs");
	need(query_qp(P.a.qpn, &o, &r), &r, "QUERY_QP A");
	tap(o.sq_psn == ((T_RC_PSN + 6) & 0xffffff),
	    "A's SQ PSN advanced by 1 + 5 packets, wrapping at 2^24 (0x%x)", o.sq_psn);

	/* SEND_WITH_IMM, inline-free, zero SGEs beyond one. */
	fill_pattern(SRC, 1500, 0x33, want);
	g[0] = sge(2048, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED, 0xdeadbeef, 0, 0, 0, 0,
		      g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0), "RC SEND_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, P.b.qpn, 0) && c.byte_len == 1500 &&
		 c.imm_data == 0xdeadbeef && (c.flags & KITE_CQE_F_IMM),
		 "RC SEND_IMM (2 packets): RESP_SEND_IMM, byte_len 1500, imm, IMM flag"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 1500), "SEND_IMM payload intact");

	/* RDMA WRITE, 3000 bytes: no receive CQE. */
	fill_pattern(SRC, 3000, 0x44, want);
	g[0] = sge(3000, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, DST, R.rkey, 0, 0,
		      g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0), "RC WRITE 3000: REQ CQE");
	tap(mem_eq(DST, want, 3000), "RC WRITE: 3000 bytes at the remote address");
	tap(tcq_drain(&P.rcq) == 0, "RC WRITE: no receive CQE");

	/* RDMA WRITE_WITH_IMM consumes an RQ WQE. */
	fill_pattern(SRC, 2100, 0x55, want);
	g[0] = sge(16, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(2100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE_IMM | KITE_WQE_F_SIGNALED, 0x01020304,
		      DST + 100, R.rkey, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0),
	    "RC WRITE_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, P.b.qpn, 0) &&
		 c.byte_len == 2100 && c.imm_data == 0x01020304 && (c.flags & KITE_CQE_F_IMM),
		 "RC WRITE_IMM: RESP_WRITE_IMM, byte_len 2100, imm"))
		cqe_diag("recv", &c);
	tap(mem_eq(DST + 100, want, 2100), "RC WRITE_IMM data at the remote address");

	/* RDMA READ, 4000 bytes into two SGEs. */
	fill_pattern(DST, 4000, 0x66, want);
	g[0] = sge(1500, E.lkey, RBUF);
	g[1] = sge(2500, E.lkey, RBUF + 2000);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_READ, 0, DST, R.rkey, 0, 0, g, 2);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_READ | KITE_WQE_F_SIGNALED, 0, DST, R.rkey, 0, 0,
		      g, 2);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_READ, 4000),
	    "RC READ 4000 (twice, first unsignaled): one REQ CQE, byte_len 4000");
	tap(mem_eq(RBUF, want, 1500) && mem_eq(RBUF + 2000, want + 1500, 2500),
	    "RC READ: data byte for byte in the local SGEs");

	/* Atomics. */
	set64(DST + 8, 0x1111111111111111ULL);
	set64(RBUF, 0);
	g[0] = sge(8, E.lkey, RBUF);
	idx = post_rc(&P.a, KITE_WQE_OP_ATOMIC_CS | KITE_WQE_F_SIGNALED, 0, DST + 8, R.rkey,
		      0x2222222222222222ULL, 0x1111111111111111ULL, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_CS, 8), "CMP_SWP: REQ CQE, byte_len 8");
	tap(mem64(DST + 8) == 0x2222222222222222ULL && mem64(RBUF) == 0x1111111111111111ULL,
	    "CMP_SWP equal: swapped, original returned");
	idx = post_rc(&P.a, KITE_WQE_OP_ATOMIC_CS | KITE_WQE_F_SIGNALED, 0, DST + 8, R.rkey,
		      0x3333333333333333ULL, 0x1111111111111111ULL, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_CS, 8) &&
	    mem64(DST + 8) == 0x2222222222222222ULL && mem64(RBUF) == 0x2222222222222222ULL,
	    "CMP_SWP not equal: unchanged, original returned");
	idx = post_rc(&P.a, KITE_WQE_OP_ATOMIC_FA | KITE_WQE_F_SIGNALED, 0, DST + 8, R.rkey,
		      5, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_FA, 8) &&
	    mem64(DST + 8) == 0x2222222222222227ULL && mem64(RBUF) == 0x2222222222222222ULL,
	    "FETCH_ADD 5: added, original returned");

	/* ATOMIC WRITE: the 8 bytes at once; needs REMOTE_WRITE, not ATOMIC. */
	idx = write_awrite(&P.a, SIG, DST + 16, R.rkey, 0x0123456789abcdefULL, true, 8, true);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_WRITE, 8) &&
	    mem64(DST + 16) == 0x0123456789abcdefULL,
	    "ATOMIC WRITE: REQ CQE, byte_len 8, the 8 bytes at the remote address");
	g[0] = sge(2000, E.lkey, SRC);
	fill_pattern(SRC, 2000, 0x3c, want);
	post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE, 0, DST + 4096, R.rkey, 0, 0, g, 1);
	idx = write_awrite(&P.a, SIG, DST + 24, R.rkey, 1, true, 8, true);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_WRITE, 8) && mem64(DST + 24) == 1 &&
	    mem_eq(DST + 4096, want, 2000) && tcq_drain(&P.scq) == 0,
	    "WRITE then ATOMIC WRITE of a flag: one CQE, the data and the flag in place");

	/* FLUSH: after a WRITE, of its range and then of the whole MR; no data. */
	g[0] = sge(2000, E.lkey, SRC);
	fill_pattern(SRC, 2000, 0x4d, want);
	post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE, 0, DST + 8192, R.rkey, 0, 0, g, 1);
	idx = write_flush(&P.a, SIG, DST + 8192, R.rkey, 2000, FETH_GLOBAL_RANGE, 0, true);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_FLUSH, 0) && mem_eq(DST + 8192, want, 2000) &&
	    tcq_drain(&P.scq) == 0,
	    "WRITE then FLUSH (global, range): one CQE, byte_len 0, the data in place");
	idx = write_flush(&P.a, SIG, 0, R.rkey, 0, FETH_GLOBAL_MR, 0, true);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_FLUSH, 0),
	    "FLUSH (global, the whole MR; no address or length): REQ CQE");

	/* RNR: no RQ WQE, then one posted; min_rnr_timer 12 = 0.64 ms. */
	fill_pattern(SRC, 64, 0x77, want);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	clock_step(100000);
	tap(tcq_drain(&P.scq) == 0 && qp_state(P.a.qpn) == KITE_QPS_RTS,
	    "SEND without an RQ WQE: RNR NAK, no CQE yet, A still RTS");
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	run_for(1000000);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0),
	    "RQ WQE posted: the SEND completes after the RNR retry");
	ok = tcq_next(&P.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 64 &&
	    mem_eq(RBUF, want, 64), "RNR-retried SEND delivered");

	rc_fast_reg(&P);
	rc_dm();
}

/*
 * Device memory (BAR4): REG_MR's checks of a KITE_MR_F_DM MR, and an MR
 * of it as the target and the source of every operation.
 */
#define DM_OFF	4096
#define DM_LEN	8192
#define DM_ALL	(KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
		 KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC)
#define RM_OFF(f)	((int)offsetof(struct kite_cmd_reg_mr, f))

static int reg_dm(uint64_t off, uint64_t len, uint32_t npages, uint32_t flags, struct res *r)
{
	struct kite_pbl p = { .addr = off, .npages = npages };

	return reg_mr(fx_pd, DM_ALL, KITE_MR_F_DM | flags, 0, 0, len, &p, r);
}

static void rc_dm(void)
{
	static uint8_t want[512], got[512];
	struct kite_wqe_sge g[1];
	struct rcpair pair, *P = &pair;
	struct kite_cqe c;
	uint32_t dm, k0;
	struct res r;
	uint16_t idx;
	bool ok;

	rc_pair(P, MAC, 14, 7, 6);
	memzero(BAR4_ADDR, KITE_BAR_DM_SIZE);
	reg_dm(KITE_BAR_DM_SIZE - 64, 128, 0, 0x51, &r);
	expect(&r, KITE_CMD_E_PARAM, RM_OFF(pbl.addr), "REG_MR DM past BAR4's end -> E_PARAM");
	reg_dm(KITE_BAR_DM_SIZE + 4096, 0, 0, 0x51, &r);
	expect(&r, KITE_CMD_E_PARAM, RM_OFF(pbl.addr), "REG_MR DM offset past BAR4 -> E_PARAM");
	reg_dm(0, KITE_BAR_DM_SIZE + 4, 0, 0x51, &r);
	expect(&r, KITE_CMD_E_PARAM, RM_OFF(length), "REG_MR DM longer than BAR4 -> E_PARAM");
	reg_dm(DM_OFF, 64, 1, 0x51, &r);
	expect(&r, KITE_CMD_E_PARAM, RM_OFF(pbl.npages), "REG_MR DM with a page count -> E_PARAM");
	reg_dm(DM_OFF, 64, 0, 0x51 | KITE_MR_F_PHYS, &r);
	expect(&r, KITE_CMD_E_PARAM, RM_OFF(flags), "REG_MR DM and PHYS at once -> E_PARAM");
	k0 = reg_dm(KITE_BAR_DM_SIZE, 0, 0, 0x52, &r) == KITE_CMD_OK ? r.result : 0;
	tap(k0, "REG_MR DM of length 0 at BAR4's end: a key");
	if (k0) {
		cmd_obj(KITE_CMD_DEREG_MR, k0, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the empty DM MR");
	}
	dm = need(reg_dm(DM_OFF, DM_LEN, 0, 0x53, &r), &r, "REG_MR DM 8 KiB at 4 KiB");
	rereg_mr(dm, KITE_REREG_F_ACCESS, 0, KITE_ACCESS_LOCAL_WRITE, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_STATE, (int)offsetof(struct kite_cmd_rereg_mr, key),
	       "REREG_MR of a DM MR -> E_STATE");

	/* READ from device memory the host wrote through BAR4. */
	for (unsigned i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(i * 7 + 3);
	memwrite(BAR4_ADDR + DM_OFF + 100, want, sizeof(want));
	g[0] = sge(sizeof(want), E.lkey, RBUF);
	idx = post_rc(&P->a, KITE_WQE_OP_RDMA_READ | KITE_WQE_F_SIGNALED, 0, 100, dm, 0, 0, g, 1);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_RDMA_READ, sizeof(want)) &&
	    mem_eq(RBUF, want, sizeof(want)), "READ from a DM MR (zero-based): the BAR4 bytes");

	/* WRITE into it: the bytes appear in BAR4 at the MR's offset. */
	fill_pattern(SRC, sizeof(want), 0x21, want);
	g[0] = sge(sizeof(want), E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, DM_LEN - 512, dm,
		      0, 0, g, 1);
	memread(BAR4_ADDR + DM_OFF + DM_LEN - 512, got, sizeof(got));
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0) &&
	    !memcmp(got, want, sizeof(want)), "WRITE to the last 512 bytes of a DM MR: in BAR4");

	/* SEND gathered from device memory, received into device memory. */
	g[0] = sge(300, dm, 1000);
	post_recv(&P->b, g, 1);
	memwrite(BAR4_ADDR + DM_OFF + 4000, want, 300);
	g[0] = sge(300, dm, 4000);
	idx = post_rc(&P->a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P->rcq, &c);
	memread(BAR4_ADDR + DM_OFF + 1000, got, 300);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_SEND, 0) && ok &&
	    cqe_is(&c, KITE_CQE_OP_RESP_SEND, P->b.qpn, 0) && c.byte_len == 300 &&
	    !memcmp(got, want, 300), "SEND from a DM SGE into a DM receive SGE");

	/* FETCH_ADD on device memory. */
	memwrite(BAR4_ADDR + DM_OFF + 64, "\x10\0\0\0\0\0\0\x80", 8);
	set64(RBUF, 0);
	g[0] = sge(8, E.lkey, RBUF);
	idx = post_rc(&P->a, KITE_WQE_OP_ATOMIC_FA | KITE_WQE_F_SIGNALED, 0, 64, dm, 7, 0, g, 1);
	memread(BAR4_ADDR + DM_OFF + 64, got, 8);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_ATOMIC_FA, 8) &&
	    mem64(RBUF) == 0x8000000000000010ULL && !memcmp(got, "\x17\0\0\0\0\0\0\x80", 8),
	    "FETCH_ADD on a DM MR: added in BAR4, original returned");
	memread(BAR4_ADDR + DM_OFF - 64, got, 64);
	memread(BAR4_ADDR + DM_OFF + DM_LEN, got + 64, 64);
	memset(want, 0, 128);
	tap(!memcmp(got, want, 128), "nothing written around the DM MR");
	cmd_obj(KITE_CMD_DEREG_MR, dm, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the DM MR");
}

/* Requester errors: a fresh pair each, A and B to ERR, flushes. */
static void rc_access_err(const char *what, uint64_t va, uint32_t rkey, unsigned op,
			  uint32_t feth)
{
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx, idx2;
	bool ok;

	rc_pair(&P, MAC, 14, 7, 6);
	g[0] = sge(op == KITE_WQE_OP_ATOMIC_FA ? 8 : 2000, E.lkey, SRC);
	if (op == KITE_WQE_OP_ATOMIC_WRITE)
		idx = write_awrite(&P.a, SIG, va, rkey, 1, true, 8, true);
	else if (op == KITE_WQE_OP_FLUSH)
		idx = write_flush(&P.a, SIG, va, rkey, 64, feth, 0, true);
	else
		idx = post_rc(&P.a, op | KITE_WQE_F_SIGNALED, 0, va, rkey, 1, 0, g, 1);
	idx2 = post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_REMOTE_ACCESS) &&
		 c.wqe_idx == idx && c.wqe_opcode == op,
		 "%s: requester REQ_ERR REMOTE_ACCESS", what))
		cqe_diag("send", &c);
	ok = tcq_next(&P.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_WR_FLUSH) && c.wqe_idx == idx2,
	    "%s: the next WQE flushed", what);
	tap(qp_state(P.a.qpn) == KITE_QPS_ERR && qp_state(P.b.qpn) == KITE_QPS_ERR,
	    "%s: requester and responder QPs in ERR", what);
}

void g_rc_err(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx, idx2;
	struct res r;
	uint32_t dm;
	bool ok;

	eng_setup();
	rc_keys();
	dm = need(reg_dm(DM_OFF, DM_LEN, 0, 0x53, &r), &r, "REG_MR DM");
	rc_access_err("WRITE past a DM MR's end", DM_LEN - 1000, dm, KITE_WQE_OP_RDMA_WRITE, 0);
	rc_access_err("READ past a DM MR's end", DM_LEN - 1000, dm, KITE_WQE_OP_RDMA_READ, 0);
	rc_access_err("WRITE with a bad R_Key", DST, R.rkey ^ 0x80, KITE_WQE_OP_RDMA_WRITE, 0);
	rc_access_err("WRITE past the MR's end", T_IOVA + T_MR_LEN - 1000, R.rkey,
		      KITE_WQE_OP_RDMA_WRITE, 0);
	rc_access_err("WRITE to an MR without REMOTE_WRITE", DST, R.rkey_nw,
		      KITE_WQE_OP_RDMA_WRITE, 0);
	rc_access_err("READ with a bad R_Key", DST, R.rkey ^ 0x100, KITE_WQE_OP_RDMA_READ, 0);
	rc_access_err("FETCH_ADD without REMOTE_ATOMIC", DST, R.rkey_nw, KITE_WQE_OP_ATOMIC_FA, 0);
	rc_access_err("ATOMIC WRITE without REMOTE_WRITE", DST, R.rkey_nw,
		      KITE_WQE_OP_ATOMIC_WRITE, 0);
	rc_access_err("ATOMIC WRITE past the MR's end", T_IOVA + T_MR_LEN, R.rkey,
		      KITE_WQE_OP_ATOMIC_WRITE, 0);

	rc_access_err("FLUSH without FLUSH_GLOBAL", DST, R.rkey_nw, KITE_WQE_OP_FLUSH,
		      FETH_GLOBAL_RANGE);
	rc_access_err("FLUSH past the MR's end", T_IOVA + T_MR_LEN - 32, R.rkey,
		      KITE_WQE_OP_FLUSH, FETH_GLOBAL_RANGE);
	rc_access_err("FLUSH to persistence (Kite has none)", DST, R.rkey, KITE_WQE_OP_FLUSH,
		      KITE_FLUSH_PLT_PERSISTENT);

	/* ATOMIC WRITE WQEs the requester refuses: nothing goes out. */
	{
		static const struct {
			uint64_t off;
			bool inl;
			unsigned ilen;
			const char *what;
		} bad[] = {
			{ 4, true, 8, "to an address not 8-byte aligned" },
			{ 0, false, 0, "without inline data" },
			{ 0, true, 4, "with 4 bytes inline" },
			{ 0, true, 16, "with 16 bytes inline" },
		};
		unsigned i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			rc_pair(&P, MAC, 14, 7, 6);
			set64(DST + 32, 5);
			g[0] = sge(8, E.lkey, SRC);
			idx = write_awrite(&P.a, SIG, DST + 32 + bad[i].off, R.rkey, 9,
					   bad[i].inl, bad[i].ilen, false);
			post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
			tap(req_err(&P.scq, P.a.qpn, idx, KITE_SYND_LOCAL_QP_OP) &&
			    req_err(&P.scq, P.a.qpn, (uint16_t)(idx + 1), KITE_SYND_WR_FLUSH) &&
			    mem64(DST + 32) == 5 && qp_state(P.b.qpn) == KITE_QPS_RTS,
			    "ATOMIC WRITE %s: REQ_ERR LOCAL_QP_OP, the next flushed, memory "
			    "untouched", bad[i].what);
		}
	}

	/* FLUSH WQEs the requester refuses. */
	{
		static const struct {
			uint32_t opw, feth;
			uint64_t rsvd;
			const char *what;
		} bad[] = {
			{ 0, 0, 0, "without a placement type" },
			{ 0, 4 | KITE_FLUSH_PLT_GLOBAL, 0, "with an undefined placement type bit" },
			{ 0, FIELD_PREP(KITE_FLUSH_SEL, 2) | KITE_FLUSH_PLT_GLOBAL, 0,
			  "with selectivity level 2" },
			{ 0, BIT(6) | KITE_FLUSH_PLT_GLOBAL, 0, "with a reserved FETH bit" },
			{ 0, KITE_FLUSH_PLT_GLOBAL, 1, "with its reserved word set" },
			{ FIELD_PREP(KITE_WQE_NUM_SGE, 1), KITE_FLUSH_PLT_GLOBAL, 0,
			  "with a data segment" },
			{ KITE_WQE_F_INLINE, KITE_FLUSH_PLT_GLOBAL, 0, "with the inline flag" },
		};
		unsigned i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			rc_pair(&P, MAC, 14, 7, 6);
			g[0] = sge(8, E.lkey, SRC);
			idx = write_flush(&P.a, SIG | bad[i].opw, DST, R.rkey, 64, bad[i].feth,
					  bad[i].rsvd, false);
			post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
			tap(req_err(&P.scq, P.a.qpn, idx, KITE_SYND_LOCAL_QP_OP) &&
			    req_err(&P.scq, P.a.qpn, (uint16_t)(idx + 1), KITE_SYND_WR_FLUSH) &&
			    qp_state(P.b.qpn) == KITE_QPS_RTS,
			    "FLUSH %s: REQ_ERR LOCAL_QP_OP, the next flushed, the responder untouched",
			    bad[i].what);
		}
	}

	/* A receive WQE too small: invalid request for the requester. */
	rc_pair(&P, MAC, 14, 7, 6);
	g[0] = sge(100, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_REMOTE_INVAL_REQ) &&
		 c.wqe_idx == idx, "SEND 1500 into a 100-byte RQ WQE: REQ_ERR REMOTE_INVAL_REQ"))
		cqe_diag("send", &c);
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, P.b.qpn, KITE_SYND_LOCAL_LENGTH) &&
		 c.wqe_idx == 0, "responder: RESP_ERR LOCAL_LENGTH for the RQ WQE"))
		cqe_diag("recv", &c);
	tap(qp_state(P.a.qpn) == KITE_QPS_ERR && qp_state(P.b.qpn) == KITE_QPS_ERR,
	    "too-small RQ WQE: both QPs in ERR");

	/* RNR retries exhausted: rnr_retry 1. */
	rc_pair(&P, MAC, 14, 7, 1);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(5000000);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_RNR_RETRY_EXC) &&
		 c.wqe_idx == idx, "RNR retry 1, no RQ WQE: RNR_RETRY_EXC"))
		cqe_diag("send", &c);
	tap(qp_state(P.a.qpn) == KITE_QPS_ERR && qp_state(P.b.qpn) == KITE_QPS_RTS,
	    "RNR_RETRY_EXC: requester in ERR, responder unaffected");

	/* Link down, peer MAC: nothing answers; timeout 8 (1 ms), retry 2. */
	rc_pair(&P, peer, 8, 2, 6);
	qmp_connect();
	tap(qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":false}}", NULL),
	    "QMP set_link k down");
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	idx2 = post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	tap(tcq_drain(&P.scq) == 0, "link down: no CQE after 2 ms (2 of 3 tries)");
	run_for(3000000);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_RETRY_EXC) &&
		 c.wqe_idx == idx, "link down: RETRY_EXC after 1 + 2 tries"))
		cqe_diag("send", &c);
	ok = tcq_next(&P.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_WR_FLUSH) &&
	    c.wqe_idx == idx2 && qp_state(P.a.qpn) == KITE_QPS_ERR,
	    "link down: the next WQE flushed, QP in ERR");
	qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":true}}", NULL);
}

/* An ATOMIC WRITE from the peer to a new QP in RTS, expected to fail. */
static void rc_wire_awrite_bad(uint64_t va, uint32_t rkey, size_t len, uint8_t aeth,
			       const char *what)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[256], inj[256];
	uint8_t ext[16], val[16];
	struct tcq scq, rcq;
	struct tqp q;
	ssize_t n;

	rc_wire_qp(&q, &scq, &rcq, peer);
	set64(DST + 40, 3);
	memset(val, 0x5a, sizeof(val));
	put32(ext, (uint32_t)(va >> 32));
	put32(ext + 4, (uint32_t)va);
	put32(ext + 8, rkey);
	put32(ext + 12, 8);
	wire_send(inj, w_frame(inj, 0x1d, q.qpn, T_RC_PSN, true, ext, 16, val, len));
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == aeth && mem64(DST + 40) == 3 &&
	    qp_state(q.qpn) == KITE_QPS_ERR,
	    "ATOMIC WRITE %s: NAK (AETH 0x%02x), nothing written, QP in ERR", what, aeth);
}

/*
 * ATOMIC WRITE on the wire: what the requester sends and which answer
 * completes it, its place among the READ/atomic requests in flight and its
 * retransmission; the responder's write, answer, duplicate and refusals.
 */
static void rc_wire_awrite(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t two[2][3] = { { 0x1d, 0, 1 }, { 0x1d, 1, 1 } };
	static uint8_t f[2048], inj[256];
	const uint64_t v = 0x1122334455667788ULL, v2 = 0x0102030405060708ULL;
	uint32_t psn = T_RC_PSN;
	uint16_t i1, i2, i3;
	struct tcq scq, rcq;
	uint8_t ext[16];
	struct tqp q, q2;
	struct res r;
	unsigned n, k;
	bool ok;
	ssize_t len;
	size_t m;

	rc_wire_qp(&q, &scq, &rcq, peer);
	i1 = write_awrite(&q, SIG, 0x123456789ab8ULL, 0xabcd01, v, true, 8, true);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 16 + 8 + 4 && f[42] == 0x1d && be24(f + 51) == psn && (f[50] & 0x80) &&
	    be32(f + 54) == 0x1234 && be32(f + 58) == 0x56789ab8 && be32(f + 62) == 0xabcd01 &&
	    be32(f + 66) == 8 && !memcmp(f + 70, &v, 8),
	    "ATOMIC WRITE on the wire: opcode 0x1d, AckReq, RETH (va, rkey, 8), the 8 bytes");
	clock_step(POLL_STEP_NS);
	tap(tcq_drain(&scq) == 0, "ATOMIC WRITE: not complete before its answer");
	w_resp(q.qpn, 0x10, psn, (const uint8_t *)&v, 8);
	tap(tcq_drain(&scq) == 0 && qp_state(q.qpn) == KITE_QPS_RTS,
	    "a READ response with 8 bytes of data: dropped, still not complete");
	w_resp(q.qpn, 0x10, psn, (const uint8_t *)&v, 0);
	tap(req_ok(&scq, q.qpn, i1, KITE_WQE_OP_ATOMIC_WRITE, 8),
	    "READ_RESP_ONLY without data: the ATOMIC WRITE completes, byte_len 8");

	/* max_rd_atomic 2: it takes a READ/atomic slot; timeout 8 (1 ms). */
	need(tqp_create(&q2, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (max_rd_atomic 2)");
	rc_rts_rd(&q2, W_PEER_QPN, peer, 8, 7, 6, 2);
	i1 = write_awrite(&q2, SIG, 0x1000, 0xabcd01, 1, true, 8, false);
	i2 = write_awrite(&q2, SIG, 0x1008, 0xabcd01, 2, true, 8, false);
	i3 = write_awrite(&q2, SIG, 0x1010, 0xabcd01, 3, true, 8, false);
	ring_sq(&q2);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, T_RC_PSN, two, 2),
		 "max_rd_atomic 2: two ATOMIC WRITEs sent, the third waits"))
		wlog_diag(n);
	w_resp(q2.qpn, 0x10, T_RC_PSN, (const uint8_t *)&v, 0);
	ok = req_ok(&scq, q2.qpn, i1, KITE_WQE_OP_ATOMIC_WRITE, 8);
	/* The probe timer may send the second again before the third. */
	n = w_collect(false, 0, W_NONE);
	for (k = 0; k < n && !(wlog[k].op == 0x1d && wlog[k].psn == ((T_RC_PSN + 2) & 0xffffff));
	     k++)
		;
	if (!tap(ok && k < n, "the first answered: it completes, the third is sent"))
		wlog_diag(n);
	/* The second's answer lost: after the timeout both go again. */
	w_resp(q2.qpn, 0x10, T_RC_PSN + 2, (const uint8_t *)&v, 0);
	tap(tcq_drain(&scq) == 0, "the third answered before the second: nothing completes");
	run_for(3000000);
	n = w_collect(false, 0, W_NONE);
	if (!tap(n >= 1 && wlog[0].op == 0x1d && wlog[0].psn == T_RC_PSN + 1,
		 "its answer lost: the second ATOMIC WRITE is sent again (probe or timeout), same PSN"))
		wlog_diag(n);
	w_resp(q2.qpn, 0x10, T_RC_PSN + 1, (const uint8_t *)&v, 0);
	w_resp(q2.qpn, 0x10, T_RC_PSN + 2, (const uint8_t *)&v, 0);
	tap(req_ok(&scq, q2.qpn, i2, KITE_WQE_OP_ATOMIC_WRITE, 8) &&
	    req_ok(&scq, q2.qpn, i3, KITE_WQE_OP_ATOMIC_WRITE, 8),
	    "answered again: the second and third complete, in order");

	/* Responder: written, answered by READ_RESP_ONLY without data. */
	set64(DST + 24, 0);
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST + 24);
	put32(ext + 8, R.rkey);
	put32(ext + 12, 8);
	m = w_frame(inj, 0x1d, q.qpn, T_RC_PSN, true, ext, 16, (const uint8_t *)&v2, 8);
	wire_send(inj, m);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 4 && f[42] == 0x10 && be24(f + 51) == T_RC_PSN && f[54] == 0x1f &&
	    mem64(DST + 24) == v2,
	    "ATOMIC WRITE from the wire: written, READ_RESP_ONLY (AETH ACK, no data) at its PSN");
	set64(DST + 24, 7);
	wire_send(inj, m);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 4 && f[42] == 0x10 && be24(f + 51) == T_RC_PSN &&
	    mem64(DST + 24) == 7 && qp_state(q.qpn) == KITE_QPS_RTS,
	    "its duplicate: answered again, not written again");

	rc_wire_awrite_bad(DST + 40, R.rkey_nw, 8, 0x62, "without REMOTE_WRITE");
	rc_wire_awrite_bad(DST + 44, R.rkey, 8, 0x61, "to an unaligned address");
	rc_wire_awrite_bad(DST + 40, R.rkey, 4, 0x61, "with 4 bytes of payload");
	rc_wire_awrite_bad(T_IOVA + T_MR_LEN, R.rkey, 8, 0x62, "past the MR's end");
}

/*
 * A FLUSH (FETH @feth, range @va/@len, @rkey, @pl payload bytes) from the
 * peer to a new QP in RTS (with FLUSH_GLOBAL unless @no_qp_access),
 * expected to fail with the NAK @aeth.
 */
static void rc_wire_flush_bad(uint32_t feth, uint64_t va, uint32_t rkey, uint32_t len,
			      size_t pl, bool no_qp_access, uint8_t aeth, const char *what)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[256], inj[256];
	struct kite_cmd_modify_qp a;
	uint8_t ext[20], val[8] = { 0 };
	struct tcq scq, rcq;
	struct tqp q;
	struct res r;
	ssize_t n;

	rc_wire_qp(&q, &scq, &rcq, peer);
	if (no_qp_access) {
		a = attrs_valid(q.qpn);
		need(modify_qp(&a, KITE_QP_ATTR_ACCESS, 0, &r), &r,
		     "RC RTS: access without FLUSH_GLOBAL");
	}
	put32(ext, feth);
	put32(ext + 4, (uint32_t)(va >> 32));
	put32(ext + 8, (uint32_t)va);
	put32(ext + 12, rkey);
	put32(ext + 16, len);
	wire_send(inj, w_frame(inj, 0x1c, q.qpn, T_RC_PSN, true, ext, 20, val, pl));
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == aeth && qp_state(q.qpn) == KITE_QPS_ERR,
	    "FLUSH %s: NAK (AETH 0x%02x), QP in ERR", what, aeth);
}

/*
 * FLUSH on the wire: what the requester sends and which answer completes
 * it; the responder's answer, duplicate and refusals.
 */
static void rc_wire_flush(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[2048], inj[256];
	const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint32_t psn = T_RC_PSN;
	struct tcq scq, rcq;
	uint8_t ext[20];
	struct tqp q;
	uint16_t i1;
	ssize_t len;
	size_t m;

	rc_wire_qp(&q, &scq, &rcq, peer);
	i1 = write_flush(&q, SIG, 0x123456789ab8ULL, 0xabcd01, 4096, FETH_GLOBAL_RANGE, 0, true);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 16 + 4 && f[42] == 0x1c && be24(f + 51) == psn && (f[50] & 0x80) &&
	    be32(f + 54) == FETH_GLOBAL_RANGE && be32(f + 58) == 0x1234 &&
	    be32(f + 62) == 0x56789ab8 && be32(f + 66) == 0xabcd01 && be32(f + 70) == 4096,
	    "FLUSH on the wire: opcode 0x1c, AckReq, FETH (global, range), RETH (va, rkey, 4096)");
	clock_step(POLL_STEP_NS);
	tap(tcq_drain(&scq) == 0, "FLUSH: not complete before its answer");
	w_resp(q.qpn, 0x10, psn, data, 8);
	tap(tcq_drain(&scq) == 0 && qp_state(q.qpn) == KITE_QPS_RTS,
	    "a READ response with 8 bytes of data: dropped, still not complete");
	w_resp(q.qpn, 0x10, psn, data, 0);
	tap(req_ok(&scq, q.qpn, i1, KITE_WQE_OP_FLUSH, 0),
	    "READ_RESP_ONLY without data: the FLUSH completes, byte_len 0");
	psn = (psn + 1) & KITE_PSN_MASK;
	i1 = write_flush(&q, SIG, 0, 0xabcd01, 0,
			 KITE_FLUSH_PLT_GLOBAL | KITE_FLUSH_PLT_PERSISTENT |
			 FIELD_PREP(KITE_FLUSH_SEL, KITE_FLUSH_SEL_MR), 0, true);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 16 + 4 && f[42] == 0x1c && be24(f + 51) == psn &&
	    be32(f + 54) == 0x13 && be32(f + 70) == 0,
	    "FLUSH of the whole MR, global and persistent: FETH 0x13 as asked (the responder decides)");
	w_resp(q.qpn, 0x10, psn, data, 0);
	tap(req_ok(&scq, q.qpn, i1, KITE_WQE_OP_FLUSH, 0), "answered: it completes");

	/* Responder: answered by READ_RESP_ONLY without data at its PSN. */
	put32(ext, FETH_GLOBAL_RANGE);
	put32(ext + 4, (uint32_t)(DST >> 32));
	put32(ext + 8, (uint32_t)DST + 64);
	put32(ext + 12, R.rkey);
	put32(ext + 16, 512);
	m = w_frame(inj, 0x1c, q.qpn, T_RC_PSN, true, ext, 20, NULL, 0);
	wire_send(inj, m);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 4 && f[42] == 0x10 && be24(f + 51) == T_RC_PSN && f[54] == 0x1f &&
	    qp_state(q.qpn) == KITE_QPS_RTS,
	    "FLUSH from the wire: READ_RESP_ONLY (AETH ACK, no data) at its PSN");
	wire_send(inj, m);
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 4 && f[42] == 0x10 && be24(f + 51) == T_RC_PSN &&
	    qp_state(q.qpn) == KITE_QPS_RTS, "its duplicate: answered again");
	put32(ext, FETH_GLOBAL_MR | BIT(31));
	put32(ext + 4, 0);
	put32(ext + 8, 0);
	put32(ext + 16, 0);
	wire_send(inj, w_frame(inj, 0x1c, q.qpn, T_RC_PSN + 1, true, ext, 20, NULL, 0));
	len = w_next(f, sizeof(f));
	tap(len == 54 + 4 + 4 && f[42] == 0x10 && be24(f + 51) == ((T_RC_PSN + 1) & KITE_PSN_MASK) &&
	    qp_state(q.qpn) == KITE_QPS_RTS,
	    "FLUSH of the whole MR (no address; a reserved FETH bit, ignored): answered");

	rc_wire_flush_bad(FETH_GLOBAL_RANGE, DST, R.rkey_nw, 64, 0, false, 0x62,
			  "with an R_Key without FLUSH_GLOBAL");
	rc_wire_flush_bad(FETH_GLOBAL_RANGE, DST, R.rkey, 64, 0, true, 0x62,
			  "to a QP without FLUSH_GLOBAL");
	rc_wire_flush_bad(KITE_FLUSH_PLT_PERSISTENT, DST, R.rkey, 64, 0, false, 0x62,
			  "to persistence (Kite has none)");
	rc_wire_flush_bad(FETH_GLOBAL_RANGE, T_IOVA + T_MR_LEN - 32, R.rkey, 64, 0, false, 0x62,
			  "past the MR's end");
	rc_wire_flush_bad(0, DST, R.rkey, 64, 0, false, 0x61, "without a placement type");
	rc_wire_flush_bad(FIELD_PREP(KITE_FLUSH_SEL, 3) | KITE_FLUSH_PLT_GLOBAL, DST, R.rkey, 64,
			  0, false, 0x61, "with selectivity level 3");
	rc_wire_flush_bad(FETH_GLOBAL_RANGE, DST, R.rkey, 64, 8, false, 0x61,
			  "with 8 bytes of payload");
}

/*
 * Random RC packets with valid ICRCs at QP @q (requests and responses,
 * PSNs around the expected one, RETHs and AtomicETHs that sometimes name
 * real memory), with the QP brought back to RTS whenever it fails: the
 * model must neither crash nor stop answering.
 */
static void rc_wire_fuzz(struct tqp *q)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[2048], pl[1100];
	uint64_t x = 0x6b697465ULL;
	uint8_t ext[32];
	struct kite_wqe_sge g[1];
	unsigned i, j, resets = 0, sent = 0;
	size_t m;

	for (i = 0; i < 400; i++) {
		uint8_t op;
		uint32_t psn, len;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 40 == 0) {
			if (qp_state(q->qpn) != KITE_QPS_RTS) {
				tap(tqp_to(q, KITE_QPS_RESET) == KITE_CMD_OK,
				    "fuzz: QP %u back to RESET", q->qpn);
				q->spi = q->rpi = 0;
				rc_rts(q, W_PEER_QPN, peer, 14, 7, 6);
				resets++;
			}
			g[0] = sge(3000, E.lkey, RBUF);
			post_recv(q, g, 1);
		}
		op = (uint8_t)(x % 0x18);
		if (op == 0x17 && (x & (1ULL << 60)))
			op = 0x1d;                      /* ATOMIC WRITE */
		if (op == 0x15 && (x & (1ULL << 61)))
			op = 0x1c;                      /* FLUSH */
		psn = T_RC_PSN + (uint32_t)((x >> 8) % 8);
		len = (uint32_t)((x >> 16) % 1100);
		for (j = 0; j < sizeof(ext); j++)
			ext[j] = (uint8_t)(x >> (j % 8 * 8)) ^ (uint8_t)j;
		if (x & (1ULL << 40)) {
			put32(ext, (uint32_t)(DST >> 32));
			put32(ext + 4, (uint32_t)DST + (uint32_t)((x >> 41) % 64) * 8);
			put32(ext + 8, R.rkey);
			put32(ext + 12, (uint32_t)((x >> 48) % 5000));
		}
		if (op == 0x0c || op == 0x11 || op == 0x12 || op == 0x13 || op == 0x14)
			len = 0;
		m = w_frame(f, op, q->qpn, psn, x & (1ULL << 50), ext,
			    (size_t)((x >> 52) % 33), pl, len);
		wire_send(f, m);
		sent++;
		if (i % 20 == 19) {
			wire_settle();
			while (recv(wire_fd, f, sizeof(f), MSG_DONTWAIT) > 0)
				;
		}
	}
	wire_settle();
	while (recv(wire_fd, f, sizeof(f), MSG_DONTWAIT) > 0)
		;
	tap(sent == 400 && qp_state(q->qpn) >= KITE_QPS_RESET,
	    "RC fuzz: 400 random RC packets (%u QP recoveries), the model still answers", resets);
}

void g_rc_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[3000], f[2048], inj[2048], ext[32];
	struct kite_wqe_sge g[2];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a, b;
	struct res r;
	unsigned mark;
	uint32_t psn = T_RC_PSN, epsn = T_RC_PSN;
	uint16_t idx;
	ssize_t n;
	size_t m;
	int i;
	bool ok;

	eng_setup();
	rc_keys();
	rc_wire_qp(&a, &scq, &rcq, peer);

	/* WRITE 2500 bytes: FIRST (RETH), MIDDLE, LAST with AckReq. */
	fill_pattern(SRC, 2500, 0x5c, want);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, 0x123456789abcULL,
		      0xabcd01, 0, 0, g, 1);
	for (i = 0; i < 3; i++) {
		static const uint8_t ops[3] = { 0x06, 0x07, 0x08 };
		static const size_t lens[3] = { 1024, 1024, 452 };
		size_t hl = i ? 0 : 16;

		n = w_next(f, sizeof(f));
		if (!tap(n == (ssize_t)(54 + hl + lens[i] + 4),
			 "WRITE packet %d on the wire (%zd bytes)", i, n))
			return;
		tap(f[42] == ops[i] && be24(f + 47) == W_PEER_QPN &&
		    be24(f + 51) == ((psn + i) & 0xffffff) && !!(f[50] & 0x80) == (i == 2),
		    "WRITE packet %d: BTH opcode 0x%02x, dest QP, PSN 0x%x, AckReq %s", i, f[42],
		    be24(f + 51), i == 2 ? "set" : "clear");
		if (i == 0)
			tap(be32(f + 54) == 0x1234 && be32(f + 58) == 0x56789abc &&
			    be32(f + 62) == 0xabcd01 && be32(f + 66) == 2500,
			    "WRITE FIRST: RETH va 0x123456789abc, rkey 0xabcd01, DMA length 2500");
		tap(!memcmp(f + 54 + hl, want + 1024 * i, lens[i]) &&
		    (uint32_t)(f[n - 4] | f[n - 3] << 8 | f[n - 2] << 16 |
			       (uint32_t)f[n - 1] << 24) == t_icrc(f + 14, (size_t)n - 18, false),
		    "WRITE packet %d: payload and ICRC", i);
	}
	clock_step(POLL_STEP_NS);
	tap(tcq_drain(&scq) == 0, "WRITE not complete before its ACK");
	put32(ext, 0x1f000001);
	m = w_frame(inj, 0x11, a.qpn, psn + 2, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0),
	    "ACK (AETH 0x1f) for the last PSN from the wire: WRITE completes");
	psn += 3;

	/* READ 1500 bytes: one READ request with RETH; two responses. */
	fill_pattern(DST, 1500, 0x6d, want);
	memset(f, 0, 1500);
	memwrite(t_bus(RBUF), f, 1500);
	g[0] = sge(1500, E.lkey, RBUF);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_READ | KITE_WQE_F_SIGNALED, 0, 0x1000, 0x77aa01, 0, 0,
		      g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 16 + 4 && f[42] == 0x0c && be24(f + 51) == (psn & 0xffffff) &&
	    (f[50] & 0x80) && be32(f + 58) == 0x1000 && be32(f + 62) == 0x77aa01 &&
	    be32(f + 66) == 1500,
	    "READ request on the wire: opcode 0x0c, PSN, AckReq, RETH (va, rkey, 1500)");
	m = w_frame(inj, 0x0d, a.qpn, psn, false, ext, 4, want, 1024);
	wire_send(inj, m);
	m = w_frame(inj, 0x0f, a.qpn, psn + 1, false, ext, 4, want + 1024, 476);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_READ, 1500) && mem_eq(RBUF, want, 1500),
	    "READ responses FIRST + LAST from the wire: READ completes, 1500 bytes placed");
	psn += 2;

	/* No ACK: after the local ACK timeout (67 ms) the WRITE is sent again. */
	fill_pattern(SRC, 1500, 0x4b, want);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, 0x2000, 0xabcd01, 0, 0,
		      g, 1);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 16 + 1024 + 4 && f[42] == 0x06;
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 476 + 4 && f[42] == 0x08 && be24(f + 51) == ((psn + 1) & 0xffffff),
	    "WRITE 1500: FIRST and LAST sent");
	clock_step(70000000);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 16 + 1024 + 4 && f[42] == 0x06 && be24(f + 51) == (psn & 0xffffff);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 476 + 4 && f[42] == 0x08 && be24(f + 51) == ((psn + 1) & 0xffffff) &&
	    !memcmp(f + 54, want + 1024, 476),
	    "ACK timeout: the whole WRITE retransmitted from its first PSN (go-back-N)");
	/* A sequence NAK for PSN + 1: only the LAST packet again. */
	put32(ext, 0x60000000);
	m = w_frame(inj, 0x11, a.qpn, psn + 1, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 476 + 4 && f[42] == 0x08 && be24(f + 51) == ((psn + 1) & 0xffffff) &&
	    (f[50] & 0x80), "NAK sequence error for PSN + 1: retransmission from PSN + 1 only");
	tap(tcq_drain(&scq) == 0, "not complete after the NAK");
	put32(ext, 0x1f000003);
	m = w_frame(inj, 0x11, a.qpn, psn + 1, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0),
	    "ACK after the retransmissions: WRITE completes");
	psn += 2;

	/* RTS to SQD with a WRITE in flight: drained when it is acknowledged. */
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, 0x3000, 0xabcd01, 0, 0,
		      g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 16 + 100 + 4 && f[42] == 0x0a && (f[50] & 0x80),
	    "WRITE 100: RDMA WRITE ONLY (RETH) with AckReq");
	eq_drain(&eq0);
	mark = neqlog;
	tap(tqp_to(&a, KITE_QPS_SQD) == KITE_CMD_OK, "RTS to SQD with the WRITE in flight");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_SQ_DRAINED, a.qpn), "SQD: not drained before the ACK");
	put32(ext, 0x1f000004);
	m = w_frame(inj, 0x11, a.qpn, psn, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0), "SQD: the WRITE completes on its ACK");
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_SQ_DRAINED, a.qpn) != NULL,
	    "SQ_DRAINED (obj QPN) posted when the message in flight completes");
	tap(tqp_to(&a, KITE_QPS_RTS) == KITE_CMD_OK, "SQD to RTS");
	psn += 1;
	put32(ext, 0x1f000001);

	/* Responder: a SEND with a PSN gap gets a sequence NAK for the expected PSN. */
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);
	m = w_frame(inj, 0x04, a.qpn, epsn + 2, true, NULL, 0, (const uint8_t *)"gap", 3);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x60 && be24(f + 47) == W_PEER_QPN,
	    "SEND with a PSN gap: NAK (AETH 0x60, PSN sequence error) for the expected PSN");
	tap(tcq_drain(&rcq) == 0, "the out-of-order SEND is not delivered");
	/* The expected PSN: delivered and ACKed. */
	m = w_frame(inj, 0x04, a.qpn, epsn, true, NULL, 0, (const uint8_t *)"in order", 8);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x1f && be24(f + 55) == 1,
	    "SEND with the expected PSN: ACK (AETH 0x1f, MSN 1) for its PSN");
	ok = tcq_next(&rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, a.qpn, 0) && c.byte_len == 8,
	    "in-order SEND delivered (byte_len 8)");
	/* A duplicate: re-ACKed, not delivered again. */
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == (epsn & 0xffffff) && f[54] == 0x1f,
	    "duplicate SEND: ACKed again");
	tap(tcq_drain(&rcq) == 0, "duplicate SEND: not delivered twice");
	epsn++;

	/* Responder READ from the wire: 1500 bytes -> FIRST + LAST with AETH. */
	fill_pattern(DST, 1500, 0x7e, want);
	put32(ext, 0);
	put32(ext + 4, (uint32_t)((DST) >> 32));
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 8, R.rkey);
	put32(ext + 12, 1500);
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x1f && !memcmp(f + 58, want, 1024),
	    "READ request from the wire: READ_RESP_FIRST (AETH) with 1024 bytes");
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 476 + 4 && f[42] == 0x0f && be24(f + 51) == ((epsn + 1) & 0xffffff) &&
	    !memcmp(f + 58, want + 1024, 476),
	    "READ_RESP_LAST (AETH) with the remaining 476 bytes at PSN + 1");
	/* The same READ again (a duplicate): executed again. */
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == (epsn & 0xffffff);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f &&
	    be24(f + 51) == ((epsn + 1) & 0xffffff) && !memcmp(f + 58, want + 1024, 476),
	    "duplicate READ request: the responses are sent again");
	/* A requester that lost only the LAST re-requests from there on. */
	put32(ext + 4, (uint32_t)DST + 1024);
	put32(ext + 12, 476);
	m = w_frame(inj, 0x0c, a.qpn, epsn + 1, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 476 + 4 && f[42] == 0x10 && be24(f + 51) == ((epsn + 1) & 0xffffff) &&
	    !memcmp(f + 58, want + 1024, 476),
	    "duplicate READ from the middle (PSN + 1, RETH + 1024): READ_RESP_ONLY, 476 bytes");
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 12, 1500);
	epsn += 2;

	/* Two READ requests back to back: both answered, in order. */
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	put32(ext + 12, 100);
	m = w_frame(inj, 0x0c, a.qpn, epsn + 2, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == (epsn & 0xffffff);
	n = w_next(f, sizeof(f));
	ok = ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f;
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 100 + 4 && f[42] == 0x10 &&
	    be24(f + 51) == ((epsn + 2) & 0xffffff) && !memcmp(f + 58, want, 100),
	    "two READs back to back: FIRST, LAST, then READ_RESP_ONLY (100 bytes) at PSN + 2");
	epsn += 3;

	/* FETCH_ADD, then its duplicate: answered from the result cache. */
	set64(DST + 16, 100);
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)(DST + 16));
	put32(ext + 8, R.rkey);
	put32(ext + 12, 0);
	put32(ext + 16, 5);
	put32(ext + 20, 0);
	put32(ext + 24, 0);
	m = w_frame(inj, 0x14, a.qpn, epsn, true, ext, 28, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 12 + 4 && f[42] == 0x12 && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x1f && be32(f + 58) == 0 && be32(f + 62) == 100 && mem64(DST + 16) == 105,
	    "FETCH_ADD from the wire: ATOMIC ACK with the original 100, memory 105");
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 100 && mem64(DST + 16) == 105,
	    "duplicate FETCH_ADD: replayed from the cache (original 100), not added again");
	epsn++;

	/* A READ with a bad R_Key: NAK remote access error. */
	eq_drain(&eq0);
	mark = neqlog;
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 8, R.rkey ^ 0x80);
	put32(ext + 12, 1500);
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x62,
	    "READ with a bad R_Key: NAK remote access error (AETH 0x62)");
	tap(qp_state(a.qpn) == KITE_QPS_ERR, "responder access error: QP in ERR");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_ACCESS_ERR, a.qpn) != NULL,
	    "responder access error: QP_ACCESS_ERR (obj QPN) on EQ0");

	/* A QP in RTR: the first packet posts COMM_EST, and is ACKed. */
	need(tqp_create(&b, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (RTR only)");
	{
		struct kite_cmd_modify_qp at = attrs_valid(b.qpn);

		at.dest_qpn = W_PEER_QPN;
		memcpy(at.dmac, peer, 6);
		at.rq_psn = at.sq_psn = T_RC_PSN;
		need(modify_qp(&at, 0x0001d, KITE_QPS_INIT, &r), &r, "RC RESET to INIT");
		need(modify_qp(&at, 0x1a8c1, KITE_QPS_RTR, &r), &r, "RC INIT to RTR");
	}
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&b, g, 1);
	eq_drain(&eq0);
	mark = neqlog;
	m = w_frame(inj, 0x04, b.qpn, T_RC_PSN, true, NULL, 0, (const uint8_t *)"rtr", 3);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == T_RC_PSN && f[54] == 0x1f,
	    "QP in RTR: SEND delivered and ACKed");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_COMM_EST, b.qpn) != NULL,
	    "first packet in RTR: QP_COMM_EST (obj QPN) on EQ0");
	ok = tcq_next(&rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, b.qpn, 0) && c.byte_len == 3,
	    "RTR QP: RESP_SEND byte_len 3");

	rc_wire_awrite();
	rc_wire_flush();
	rc_wire_fuzz(&b);
}

/* ------------------------------------------------------------------ */
/* RC requester pipelining                                             */
/* ------------------------------------------------------------------ */

/* Several messages in flight against the test as the peer. */
/*
 * Post an RDMA WRITE of 80 packets (8 SGEs of 10 KiB at SRC) on @q, ring,
 * and collect what goes out: into *@n the packets, into *@bad those not at
 * PSN @psn + k or without AckReq exactly on every @every-th. Returns the
 * WQE index.
 */
static uint16_t rc_write80(struct tqp *q, uint32_t psn, unsigned every,
			   unsigned *n, unsigned *bad)
{
	struct kite_wqe_sge g8[8];
	uint16_t idx;
	unsigned k;

	for (k = 0; k < 8; k++)
		g8[k] = sge(10240, E.lkey, SRC);
	idx = write_rc(q, WR | SIG, 0, 0x100000, 0xabcd01, 0, 0, g8, 8);
	ring_sq(q);
	*n = w_collect(false, 0, W_NONE);
	*bad = 0;
	for (k = 0; k < *n; k++)
		*bad += wlog[k].psn != ((psn + k) & 0xffffff) ||
			wlog[k].ackreq != (k % every == every - 1);
	return idx;
}

static void rc_pipe_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	/* AckReq only at the end: each message is followed by the next. */
	static const uint8_t batch[6][3] = {
		{ 0x06, 0, 0 }, { 0x08, 1, 0 }, { 0x0a, 2, 0 },
		{ 0x06, 3, 0 }, { 0x07, 4, 0 }, { 0x08, 5, 1 },
	};
	static const uint8_t nak[4][3] = {
		{ 0x07, 1, 0 }, { 0x08, 2, 1 }, { 0x06, 3, 0 }, { 0x08, 4, 1 },
	};
	static const uint8_t rd1[2][3] = { { 0x0c, 0, 1 }, { 0x14, 1, 1 } };
	static const uint8_t rd2[2][3] = { { 0x0c, 2, 1 }, { 0x04, 3, 1 } };
	static const uint8_t fence1[3][3] = { { 0x0a, 0, 1 }, { 0x0c, 1, 1 }, { 0x0a, 2, 1 } };
	static const uint8_t fence2[1][3] = { { 0x0a, 3, 1 } };
	/* Sent the first time, AckReq only at the end; resent, on each LAST/ONLY. */
	static const uint8_t to_first[5][3] = {
		{ 0x06, 0, 0 }, { 0x08, 1, 0 }, { 0x0a, 2, 0 }, { 0x0a, 3, 0 }, { 0x04, 4, 1 },
	};
	static const uint8_t to[5][3] = {
		{ 0x06, 0, 0 }, { 0x08, 1, 1 }, { 0x0a, 2, 1 }, { 0x0a, 3, 1 }, { 0x04, 4, 1 },
	};
	static uint8_t want[3000];
	struct kite_wqe_sge g[1];
	struct tcq scq, rcq;
	struct tqp a, a2, a3;
	struct res r;
	uint32_t psn = T_RC_PSN;
	uint16_t i1, i2, i3, i4, i5;
	uint8_t orig[8];
	unsigned n;

	rc_wire_qp(&a, &scq, &rcq, peer);

	/* Three WRITEs posted at once: 2 + 1 + 3 packets, the second unsignaled. */
	fill_pattern(SRC, 2500, 0x3c, want);
	g[0] = sge(1500, E.lkey, SRC);
	i1 = write_rc(&a, WR | SIG, 0, 0x10000, 0xabcd01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i2 = write_rc(&a, WR, 0, 0x20000, 0xabcd01, 0, 0, g, 1);
	g[0] = sge(2500, E.lkey, SRC);
	i3 = write_rc(&a, WR | SIG, 0, 0x30000, 0xabcd01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, batch, 6),
		 "three WRITEs posted at once: all 6 packets of the 3 messages before any ACK, "
		 "consecutive PSNs, AckReq only on the last message's LAST"))
		wlog_diag(n);
	tap(tcq_drain(&scq) == 0, "pipelined WRITEs: no completion before an ACK");
	w_ack(a.qpn, psn + 5, 0x1f);
	tap(req_ok(&scq, a.qpn, i1, WR, 0) && req_ok(&scq, a.qpn, i3, WR, 0) &&
	    tcq_drain(&scq) == 0,
	    "one ACK for the last PSN completes all three in order: CQE %u, CQE %u (%u unsignaled)",
	    i1, i3, i2);
	psn += 6;

	/* Ten one-packet WRITEs posted at once: the WQE window keeps moving. */
	{
		uint8_t ten[10][3];
		unsigned k;

		g[0] = sge(100, E.lkey, SRC);
		for (k = 0; k < 10; k++) {
			ten[k][0] = 0x0a;
			ten[k][1] = k;
			ten[k][2] = k == 7 || k == 9;
			i1 = write_rc(&a, WR | (k == 9 ? SIG : 0), 0, 0x60000 + k * 0x100,
				      0xabcd01, 0, 0, g, 1);
		}
		ring_sq(&a);
		n = w_collect(false, 0, W_NONE);
		if (!tap(wlog_is(0, n, psn, (const uint8_t (*)[3])ten, 10),
			 "ten one-packet WRITEs posted at once: AckReq on the 8th (half the "
			 "16-WQE window) and on the 10th only"))
			wlog_diag(n);
		w_ack(a.qpn, psn + 9, 0x1f);
		tap(req_ok(&scq, a.qpn, i1, WR, 0) && tcq_drain(&scq) == 0,
		    "one ACK for the last PSN completes the ten (one signaled)");
		psn += 10;
	}

	/* A sequence NAK in the middle of the first of two messages. */
	g[0] = sge(2500, E.lkey, SRC);
	i1 = write_rc(&a, WR | SIG, 0, 0x40000, 0xabcd01, 0, 0, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	i2 = write_rc(&a, WR | SIG, 0, 0x50000, 0xabcd01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	tap(n == 5, "WRITE 2500 + WRITE 1500: 5 packets in flight (%u)", n);
	w_ack(a.qpn, psn + 1, 0x60);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, nak, 4) && !memcmp(wlog[0].fr + 54, want + 1024, 1024) &&
		 !memcmp(wlog[2].fr + 54 + 16, want, 1024),
		 "NAK sequence error for PSN + 1: resent from there (MIDDLE, LAST), then the "
		 "second WRITE in full, payloads right"))
		wlog_diag(n);
	tap(tcq_drain(&scq) == 0, "after the NAK: nothing complete");
	w_ack(a.qpn, psn + 3, 0x1f);
	tap(req_ok(&scq, a.qpn, i1, WR, 0) && tcq_drain(&scq) == 0,
	    "ACK in the middle of the second WRITE: only the first completes");
	w_ack(a.qpn, psn + 4, 0x1f);
	tap(req_ok(&scq, a.qpn, i2, WR, 0), "ACK for its last PSN: the second completes");
	tap(w_collect(false, 0, W_NONE) == 0, "no retransmission after the ACKs");
	psn += 5;

	/*
	 * 80 packets (8 SGEs of 10 KiB) after the NAK above, which halved the
	 * congestion window from 64 to 32 PSNs: 32 in flight, AckReq every
	 * 16th (half the window).
	 */
	{
		unsigned k, bad;

		i1 = rc_write80(&a, psn, 16, &n, &bad);
		if (!tap(n == 32 && !bad,
			 "WRITE of 80 packets after a loss: 32 sent (the halved window), AckReq on "
			 "the 16th and 32nd"))
			wlog_diag(n);
		w_ack(a.qpn, psn + 15, 0x1f);
		n = w_collect(false, 0, W_NONE);
		bad = 0;
		for (k = 0; k < n; k++)
			bad += wlog[k].psn != ((psn + 32 + k) & 0xffffff) ||
			       wlog[k].ackreq != (k == 15);
		if (!tap(n == 16 && !bad && tcq_drain(&scq) == 0,
			 "ACK for the 16th: the window moves by 16, AckReq on the 48th"))
			wlog_diag(n);
		w_ack(a.qpn, psn + 47, 0x1f);
		n = w_collect(false, 0, W_NONE);
		bad = 0;
		for (k = 0; k < n; k++)
			bad += wlog[k].psn != ((psn + 48 + k) & 0xffffff) ||
			       wlog[k].ackreq != (k == 15 || k == 31);
		if (!tap(n == 32 && !bad && wlog[31].op == 0x08 && tcq_drain(&scq) == 0,
			 "ACK for the 48th: the last 32 go out, AckReq on the 64th and the LAST"))
			wlog_diag(n);
		w_ack(a.qpn, psn + 79, 0x1f);
		tap(req_ok(&scq, a.qpn, i1, WR, 0), "ACK for the last PSN: the WRITE completes");
		psn += 80;
	}

	/*
	 * The window grows back by one PSN per window's worth acknowledged:
	 * 80 PSNs at 32 make it 34. A second 80-packet WRITE: 34 in flight.
	 */
	{
		unsigned bad;

		i1 = rc_write80(&a, psn, 17, &n, &bad);
		if (!tap(n == 34 && !bad,
			 "the window grew back to 34: 34 sent, AckReq every 17th (%u)", n))
			wlog_diag(n);
		w_ack(a.qpn, psn + 33, 0x1f);
		n = w_collect(false, 0, W_NONE);
		w_ack(a.qpn, psn + 67, 0x1f);
		n += w_collect(false, 0, W_NONE);
		w_ack(a.qpn, psn + 79, 0x1f);
		tap(n == 46 && req_ok(&scq, a.qpn, i1, WR, 0),
		    "ACKs: the other 46 go out, the WRITE completes (%u)", n);
		psn += 80;
	}

	/* max_rd_atomic 2: a READ and an atomic in flight, the next READ waits. */
	need(tqp_create(&a2, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (max_rd_atomic 2)");
	rc_rts_rd(&a2, W_PEER_QPN, peer, 14, 7, 6, 2);
	psn = T_RC_PSN;
	memzero(t_bus(RBUF), 512);
	g[0] = sge(100, E.lkey, RBUF);
	i1 = write_rc(&a2, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(8, E.lkey, RBUF + 200);
	i2 = write_rc(&a2, KITE_WQE_OP_ATOMIC_FA | SIG, 0, 0x2000, 0x77aa01, 1, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF + 300);
	i3 = write_rc(&a2, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x3000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(10, E.lkey, SRC);
	i4 = write_rc(&a2, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	ring_sq(&a2);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, rd1, 2),
		 "max_rd_atomic 2: READ and FETCH_ADD sent; the second READ and the SEND after it wait"))
		wlog_diag(n);
	w_resp(a2.qpn, 0x10, psn, want, 100);
	tap(req_ok(&scq, a2.qpn, i1, KITE_WQE_OP_RDMA_READ, 100) && mem_eq(RBUF, want, 100),
	    "READ response: the first READ completes");
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, rd2, 2),
		 "one READ/atomic slot free: the second READ is sent, then the SEND"))
		wlog_diag(n);
	memset(orig, 0, 8);
	orig[7] = 42;
	w_resp(a2.qpn, 0x12, psn + 1, orig, 8);
	w_resp(a2.qpn, 0x10, psn + 2, want + 100, 100);
	w_ack(a2.qpn, psn + 3, 0x1f);
	tap(req_ok(&scq, a2.qpn, i2, KITE_WQE_OP_ATOMIC_FA, 8) &&
	    req_ok(&scq, a2.qpn, i3, KITE_WQE_OP_RDMA_READ, 100) &&
	    req_ok(&scq, a2.qpn, i4, KITE_WQE_OP_SEND, 0) && mem64(RBUF + 200) == 42 &&
	    mem_eq(RBUF + 300, want + 100, 100),
	    "atomic ACK, READ response, ACK: FETCH_ADD, READ and SEND complete in order");
	psn += 4;

	/* Fence: a WRITE passes an outstanding READ, a fenced one does not. */
	g[0] = sge(100, E.lkey, SRC);
	i1 = write_rc(&a2, WR | SIG, 0, 0x4000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF);
	i2 = write_rc(&a2, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x5000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i3 = write_rc(&a2, WR, 0, 0x6000, 0x77aa01, 0, 0, g, 1);
	i4 = write_rc(&a2, WR | SIG | KITE_WQE_F_FENCE, 0, 0x7000, 0x77aa01, 0, 0, g, 1);
	ring_sq(&a2);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, fence1, 3),
		 "WRITE, READ, WRITE sent; the fenced WRITE waits for the READ"))
		wlog_diag(n);
	w_resp(a2.qpn, 0x10, psn + 1, want, 100);
	tap(req_ok(&scq, a2.qpn, i1, WR, 0) && req_ok(&scq, a2.qpn, i2, KITE_WQE_OP_RDMA_READ, 100),
	    "the READ response implicitly acknowledges the WRITE before it: both complete");
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, fence2, 1), "READ complete: the fenced WRITE is sent"))
		wlog_diag(n);
	w_ack(a2.qpn, psn + 3, 0x1f);
	tap(req_ok(&scq, a2.qpn, i4, WR, 0) && tcq_drain(&scq) == 0,
	    "ACK: the unsignaled WRITE and the fenced one complete (%u silent)", i3);

	psn += 4;

	/*
	 * A REG_MR between two WRITEs: executed without waiting for the first
	 * WRITE's ACK, completed after it; going back N sends the WRITEs
	 * again, not the REG_MR (executed again, it would fail: the key is
	 * valid then).
	 */
	{
		static const uint8_t two[2][3] = { { 0x0a, 0, 1 }, { 0x0a, 1, 1 } };
		static const uint8_t second[1][3] = { { 0x0a, 1, 1 } };
		uint32_t fkey, key;
		uint16_t ir;

		fkey = need(alloc_mr(fx_pd, 16, 0x10, &r), &r, "ALLOC_MR (16 pages)");
		key = (fkey & ~0xffu) | 0x77;
		g[0] = sge(100, E.lkey, SRC);
		i1 = write_rc(&a2, WR | SIG, 0, 0x70000, 0xabcd01, 0, 0, g, 1);
		ring_sq(&a2);
		ir = post_reg_mr(&a2, 0x6000000000ULL, 4096, key, KITE_ACCESS_LOCAL_WRITE,
				 E.mr.pbl.addr, 1);
		i2 = write_rc(&a2, WR | SIG, 0, 0x70100, 0xabcd01, 0, 0, g, 1);
		ring_sq(&a2);
		n = w_collect(false, 0, W_NONE);
		if (!tap(wlog_is(0, n, psn, two, 2),
			 "WRITE, REG_MR, WRITE: the second WRITE is sent before the first's ACK"))
			wlog_diag(n);
		tap(tcq_drain(&scq) == 0, "... and nothing completes before an ACK");
		w_ack(a2.qpn, psn, 0x60);
		n = w_collect(false, 0, W_NONE);
		if (!tap(wlog_is(0, n, psn, two, 2) && tcq_drain(&scq) == 0,
			 "NAK sequence error for the first WRITE: both WRITEs sent again, "
			 "nothing completes"))
			wlog_diag(n);
		w_ack(a2.qpn, psn + 1, 0x60);
		n = w_collect(false, 0, W_NONE);
		tap(req_ok(&scq, a2.qpn, i1, WR, 0) &&
		    req_ok(&scq, a2.qpn, ir, KITE_WQE_OP_REG_MR, 0) && tcq_drain(&scq) == 0,
		    "NAK for the second WRITE: the first completes, then the REG_MR (once)");
		if (!tap(wlog_is(0, n, psn, second, 1), "... and the second WRITE is sent again"))
			wlog_diag(n);
		w_ack(a2.qpn, psn + 1, 0x1f);
		tap(req_ok(&scq, a2.qpn, i2, WR, 0) && tcq_drain(&scq) == 0,
		    "ACK for the second WRITE: it completes");
		psn += 2;
		cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the key the REG_MR registered");
	}

	/* ACK timeout with four WQEs outstanding; retry_cnt 1. */
	need(tqp_create(&a3, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (timeout 10, retry 1)");
	rc_rts(&a3, W_PEER_QPN, peer, 10, 1, 6);
	psn = T_RC_PSN;
	g[0] = sge(1500, E.lkey, SRC);
	i1 = write_rc(&a3, WR | SIG, 0, 0x8000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i2 = write_rc(&a3, WR, 0, 0x9000, 0x77aa01, 0, 0, g, 1);
	i3 = write_rc(&a3, WR | SIG, 0, 0xa000, 0x77aa01, 0, 0, g, 1);
	i4 = write_rc(&a3, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	ring_sq(&a3);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, to_first, 5),
		 "four WQEs in flight (5 packets), AckReq on the last one only, no ACK"))
		wlog_diag(n);
	run_for(4000000);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, to, 5),
		 "ACK timeout (4.2 ms): every outstanding WQE resent from the oldest PSN, "
		 "AckReq on each LAST/ONLY"))
		wlog_diag(n);
	run_for(5000000);
	tap(req_err(&scq, a3.qpn, i1, KITE_SYND_RETRY_EXC) &&
	    req_err(&scq, a3.qpn, i2, KITE_SYND_WR_FLUSH) &&
	    req_err(&scq, a3.qpn, i3, KITE_SYND_WR_FLUSH) &&
	    req_err(&scq, a3.qpn, i4, KITE_SYND_WR_FLUSH) && qp_state(a3.qpn) == KITE_QPS_ERR,
	    "retries exhausted: RETRY_EXC for the oldest, the three after it flushed, QP in ERR");
	i5 = post_rc(&a3, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	tap(req_err(&scq, a3.qpn, i5, KITE_SYND_WR_FLUSH), "a WQE posted in ERR is flushed");
}

/* Two QPs of the model through the test as a lossy switch. */
static void rc_pipe_relay(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[5000];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	struct res r;
	unsigned n, i, nak = 0, from_a = 0, resent_at = 0;
	uint32_t psn = T_RC_PSN;
	uint16_t i1, i2;
	bool ok, seen_nak = false, first_again = false;

	tcq_make(&P.scq, 6);
	tcq_make(&P.rcq, 6);
	need(tqp_create(&P.a, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create(&P.b, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC B");
	rc_rts(&P.a, P.b.qpn, peer, 14, 7, 6);
	rc_rts(&P.b, P.a.qpn, peer, 14, 7, 6);

	fill_pattern(SRC, 4500, 0x2d, want);
	g[0] = sge(3000, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(3000, E.lkey, RBUF + 4000);
	post_recv(&P.b, g, 1);
	g[0] = sge(2500, E.lkey, SRC);
	i1 = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	g[0] = sge(2000, E.lkey, SRC + 2500);
	i2 = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	ring_sq(&P.a);
	/* Lose the SEND MIDDLE (PSN + 1) of the first message. */
	n = w_collect(true, P.b.qpn, (psn + 1) & 0xffffff);
	for (i = 0; i < n; i++) {
		const struct wpkt *k = &wlog[i];

		if (k->dqpn == P.a.qpn && k->op == 0x11 && k->aeth == 0x60 &&
		    k->psn == ((psn + 1) & 0xffffff)) {
			nak++;
			seen_nak = true;
			continue;
		}
		if (k->dqpn != P.b.qpn)
			continue;
		from_a++;
		if (seen_nak && !resent_at)
			resent_at = i;
		if (seen_nak && k->psn == (psn & 0xffffff))
			first_again = true;
	}
	ok = nak == 1 && from_a == 9 && resent_at && wlog[resent_at].op == 0x01 &&
	     wlog[resent_at].psn == ((psn + 1) & 0xffffff) && !first_again;
	if (!tap(ok, "lost SEND MIDDLE: one sequence NAK from B, A resends from that PSN "
		 "(not the message's first), 5 + 4 packets in all"))
		wlog_diag(n);
	tap(req_ok(&P.scq, P.a.qpn, i1, KITE_WQE_OP_SEND, 0) &&
	    req_ok(&P.scq, P.a.qpn, i2, KITE_WQE_OP_SEND, 0), "both SENDs complete, in order");
	ok = tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
	     c.byte_len == 2500 && c.wqe_idx == 0;
	ok = ok && tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
	     c.byte_len == 2000 && c.wqe_idx == 1;
	tap(ok && tcq_drain(&P.rcq) == 0 && mem_eq(RBUF, want, 2500) &&
	    mem_eq(RBUF + 4000, want + 2500, 2000),
	    "B: each message delivered once, byte for byte");
}

/* Over loopback: unsignaled WQEs in a batch, and an RNR NAK in the middle of one. */
static void rc_pipe_loop(void)
{
	static uint8_t want[8 * 700];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx[8];
	unsigned i;
	bool ok = true;

	rc_pair(&P, MAC, 14, 7, 7);
	fill_pattern(SRC, sizeof(want), 0x4e, want);
	for (i = 0; i < 8; i++) {
		g[0] = sge(1024, E.lkey, RBUF + 1024 * i);
		post_recv(&P.b, g, 1);
	}
	for (i = 0; i < 8; i++) {
		g[0] = sge(700, E.lkey, SRC + 700 * i);
		idx[i] = write_rc(&P.a, KITE_WQE_OP_SEND | (i % 3 == 2 ? SIG : 0), 0, 0, 0, 0, 0,
				  g, 1);
	}
	ring_sq(&P.a);
	for (i = 2; i < 8; i += 3)
		ok = ok && req_ok(&P.scq, P.a.qpn, idx[i], KITE_WQE_OP_SEND, 0);
	tap(ok && tcq_drain(&P.scq) == 0,
	    "8 SENDs at once, every third signaled: exactly the CQEs for %u and %u, in order",
	    idx[2], idx[5]);
	for (i = 0; i < 8; i++) {
		ok = tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
		     c.byte_len == 700 && c.wqe_idx == i && mem_eq(RBUF + 1024 * i, want + 700 * i, 700);
		if (!ok)
			break;
	}
	tap(ok, "8 receive CQEs in order, each message byte for byte");
	/* The SQ consumer moved past the unsignaled ones: 16 more fit the 16-deep SQ. */
	for (i = 0; i < 16; i++) {
		g[0] = sge(16, E.lkey, SRC);
		idx[i % 8] = write_rc(&P.a, WR | (i == 15 ? SIG : 0), 0, DST, R.rkey, 0, 0, g, 1);
	}
	ring_sq(&P.a);
	tap(req_ok(&P.scq, P.a.qpn, idx[7], WR, 0) && tcq_drain(&P.scq) == 0,
	    "16 WRITEs filling the SQ, only the last signaled: one CQE");

	/* Three SENDs, no RQ WQE: RNR NAK for the first, none is lost. */
	for (i = 0; i < 3; i++) {
		g[0] = sge(700, E.lkey, SRC + 700 * i);
		idx[i] = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	}
	ring_sq(&P.a);
	clock_step(100000);
	tap(tcq_drain(&P.scq) == 0 && qp_state(P.a.qpn) == KITE_QPS_RTS,
	    "pipelined SENDs without RQ WQEs: RNR NAK, nothing completes, A still RTS");
	for (i = 0; i < 3; i++) {
		g[0] = sge(1024, E.lkey, RBUF + 1024 * i);
		post_recv(&P.b, g, 1);
	}
	run_for(2000000);
	ok = true;
	for (i = 0; i < 3; i++)
		ok = ok && req_ok(&P.scq, P.a.qpn, idx[i], KITE_WQE_OP_SEND, 0);
	tap(ok, "RQ WQEs posted: the three SENDs complete in order after the RNR back-off");
	for (i = 0; i < 3; i++) {
		ok = ok && tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
		     c.byte_len == 700 && mem_eq(RBUF + 1024 * i, want + 700 * i, 700);
	}
	tap(ok && tcq_drain(&P.rcq) == 0, "each delivered once, in order");
}

void g_rc_pipe(void)
{
	eng_setup();
	rc_keys();
	rc_pipe_loop();
	rc_pipe_wire();
	rc_pipe_relay();
}

/* ------------------------------------------------------------------ */
/* UC transport                                                        */
/* ------------------------------------------------------------------ */

/* A receive CQE of @qpn: @op, @len bytes, RQ WQE @idx. */
static bool recv_is(struct tcq *q, uint32_t qpn, unsigned op, uint32_t len, uint16_t idx)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c) && cqe_is(&c, op, qpn, 0) && c.byte_len == len &&
		  c.wqe_idx == idx;

	if (!ok)
		cqe_diag("recv", &c);
	return ok;
}

/* UC over loopback: every opcode, data compared; the ones UC refuses. */
void g_uc(void)
{
	static uint8_t want[24000];
	struct kite_wqe_sge g[3];
	struct kite_cqe c;
	struct kite_cmd_modify_qp a, o;
	struct rcpair P, Q;
	struct res r;
	uint64_t d0;
	uint16_t idx;
	bool ok;

	eng_setup();
	rc_keys();
	uc_pair(&P, KITE_MTU_1024);

	/* SEND, one packet; 5000 bytes from 3 SGEs into 2 (5 packets). */
	fill_pattern(SRC, 100, 0x10, want);
	g[0] = sge(200, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG | KITE_WQE_F_SOLICITED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "UC SEND 100 bytes: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 100 &&
		 c.wqe_idx == 0 && c.flags == KITE_CQE_F_SOLICITED,
		 "UC receive CQE: RESP_SEND, byte_len 100, SOLICITED"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 100), "UC SEND payload byte for byte");

	fill_pattern(SRC, 5000, 0x22, want);
	g[0] = sge(3000, E.lkey, RBUF);
	g[1] = sge(3000, E.lkey, RBUF + 4000);
	post_recv(&P.b, g, 2);
	g[0] = sge(1000, E.lkey, SRC);
	g[1] = sge(2500, E.lkey, SRC + 1000);
	g[2] = sge(1500, E.lkey, SRC + 3500);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 3);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "UC SEND 5000 bytes: REQ CQE");
	tap(recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 5000, 1) &&
	    mem_eq(RBUF, want, 3000) && mem_eq(RBUF + 4000, want + 3000, 2000),
	    "UC 5-packet SEND: one receive CQE, byte_len 5000, data byte for byte");
	need(query_qp(P.a.qpn, &o, &r), &r, "QUERY_QP A");
	tap(o.sq_psn == ((T_RC_PSN + 6) & 0xffffff),
	    "UC SQ PSN advanced by 1 + 5 packets, wrapping at 2^24 (0x%x)", o.sq_psn);

	/* SEND with immediate, two packets. */
	fill_pattern(SRC, 1500, 0x33, want);
	g[0] = sge(2048, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_IMM | SIG, 0xdeadbeef, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0), "UC SEND_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, P.b.qpn, 0) && c.byte_len == 1500 &&
		 c.imm_data == 0xdeadbeef && (c.flags & KITE_CQE_F_IMM) && mem_eq(RBUF, want, 1500),
		 "UC SEND_IMM (2 packets): RESP_SEND_IMM, byte_len 1500, imm, data"))
		cqe_diag("recv", &c);

	/* RDMA WRITE: no receive CQE; WRITE with immediate consumes an RQ WQE. */
	fill_pattern(SRC, 3000, 0x44, want);
	g[0] = sge(3000, E.lkey, SRC);
	idx = post_rc(&P.a, WR | SIG, 0, DST, R.rkey, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, WR, 0) && mem_eq(DST, want, 3000) &&
	    tcq_drain(&P.rcq) == 0,
	    "UC WRITE 3000: REQ CQE, data at the remote address, no receive CQE");
	fill_pattern(SRC, 2100, 0x55, want);
	g[0] = sge(16, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(2100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE_IMM | SIG, 0x01020304, DST + 100, R.rkey, 0,
		      0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0),
	    "UC WRITE_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, P.b.qpn, 0) &&
		 c.byte_len == 2100 && c.imm_data == 0x01020304 && c.wqe_idx == 3 &&
		 mem_eq(DST + 100, want, 2100),
		 "UC WRITE_IMM: RESP_WRITE_IMM, byte_len 2100, imm, data"))
		cqe_diag("recv", &c);

	/* No RQ WQE: the SEND completes at the requester, the responder drops it. */
	d0 = qom_count("rc-counts", "uc-dropped");
	fill_pattern(SRC, 64, 0x77, want);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0) && tcq_drain(&P.rcq) == 0 &&
	    qp_state(P.a.qpn) == KITE_QPS_RTS && qp_state(P.b.qpn) == KITE_QPS_RTS &&
	    qom_count("rc-counts", "uc-dropped") == d0 + 1,
	    "UC SEND without an RQ WQE: REQ CQE at once (no RNR), dropped by B, both RTS");
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	tcq_drain(&P.scq);
	tap(recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 64, 4) && mem_eq(RBUF, want, 64),
	    "the next SEND lands in the RQ WQE posted since");

	/* WRITE to a bad rkey, or without REMOTE_WRITE: dropped silently. */
	memset(want, 0xee, 512);
	memwrite(t_bus(DST), want, 512);
	g[0] = sge(512, E.lkey, SRC);
	post_rc(&P.a, WR, 0, DST, R.rkey ^ 0x100, 0, 0, g, 1);
	post_rc(&P.a, WR, 0, DST, R.rkey_nw, 0, 0, g, 1);
	idx = post_rc(&P.a, WR | SIG, 0, DST + 1ULL * T_MR_LEN, R.rkey, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, WR, 0) && mem_eq(DST, want, 512) &&
	    qp_state(P.b.qpn) == KITE_QPS_RTS && tcq_drain(&P.rcq) == 0 &&
	    qom_count("rc-counts", "uc-dropped") == d0 + 4,
	    "UC WRITEs to a bad rkey, a key without REMOTE_WRITE, out of bounds: complete at A, "
	    "memory untouched, B still RTS, no CQE");

	/* A receive WQE too small: the message is dropped, the WQE reused. */
	fill_pattern(SRC, 300, 0x5a, want);
	g[0] = sge(100, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(300, E.lkey, SRC);
	post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	g[0] = sge(80, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0) &&
	    recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 80, 5) && mem_eq(RBUF, want, 80) &&
	    qp_state(P.b.qpn) == KITE_QPS_RTS,
	    "UC SEND of 300 into a 100-byte RQ WQE dropped; the next SEND (80) in the same WQE");

	/* READ, atomics and SEND with invalidate are not UC operations. */
	{
		static const struct { unsigned op; const char *name; } bad[] = {
			{ KITE_WQE_OP_RDMA_READ, "RDMA READ" },
			{ KITE_WQE_OP_ATOMIC_CS, "CMP_SWAP" },
			{ KITE_WQE_OP_ATOMIC_FA, "FETCH_ADD" },
			{ KITE_WQE_OP_SEND_INV, "SEND_INV" },
			{ KITE_WQE_OP_ATOMIC_WRITE, "ATOMIC WRITE" },
			{ KITE_WQE_OP_FLUSH, "FLUSH" },
		};
		unsigned i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			g[0] = sge(8, E.lkey, RBUF);
			if (bad[i].op == KITE_WQE_OP_ATOMIC_WRITE)
				idx = write_awrite(&P.a, 0, DST, R.rkey, 1, true, 8, true);
			else if (bad[i].op == KITE_WQE_OP_FLUSH)
				idx = write_flush(&P.a, 0, DST, R.rkey, 64, FETH_GLOBAL_RANGE, 0, true);
			else
				idx = post_rc(&P.a, bad[i].op, 0, DST, R.rkey, 0, 0, g, 1);
			post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
			ok = req_err(&P.scq, P.a.qpn, idx, KITE_SYND_LOCAL_QP_OP) &&
			     req_err(&P.scq, P.a.qpn, (uint16_t)(idx + 1), KITE_SYND_WR_FLUSH) &&
			     qp_state(P.a.qpn) == KITE_QPS_SQE;
			tap(ok, "UC %s WQE: REQ_ERR LOCAL_QP_OP, the next flushed, QP in SQE",
			    bad[i].name);
			if (i == 0) {
				/* In SQE the QP still receives (B sends to A). */
				g[0] = sge(64, E.lkey, RBUF + 8192);
				post_recv(&P.a, g, 1);
				g[0] = sge(64, E.lkey, SRC);
				post_rc(&P.b, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
				tap(recv_is(&P.rcq, P.a.qpn, KITE_CQE_OP_RESP_SEND, 64, 0),
				    "UC QP in SQE: receives go on");
			}
			a = attrs_valid(P.a.qpn);
			need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_RTS, &r), &r,
			     "UC SQE to RTS");
		}
		g[0] = sge(64, E.lkey, RBUF);
		post_recv(&P.b, g, 1);
		g[0] = sge(64, E.lkey, SRC);
		idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
		tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0) &&
		    recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 64, 6),
		    "UC SQE to RTS: SENDs work again");
	}

	/* 20000 bytes at MTU 256: 79 packets, beyond RC's 64-PSN window, no ACKs. */
	uc_pair(&Q, KITE_MTU_256);
	fill_pattern(SRC, 20000, 0x66, want);
	g[0] = sge(20000, E.lkey, SRC);
	idx = post_rc(&Q.a, WR | SIG, 0, RBUF, R.rkey, 0, 0, g, 1);
	run_for(2000000);
	tap(req_ok(&Q.scq, Q.a.qpn, idx, WR, 0) && mem_eq(RBUF, want, 20000),
	    "UC WRITE 20000 bytes at MTU 256 (79 packets): completes, data byte for byte");
	g[0] = sge(20000, E.lkey, RBUF);
	post_recv(&Q.b, g, 1);
	fill_pattern(SRC, 20000, 0x67, want);
	g[0] = sge(20000, E.lkey, SRC);
	idx = post_rc(&Q.a, KITE_WQE_OP_SEND_IMM | SIG, 0x0badcafe, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	tap(req_ok(&Q.scq, Q.a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0) &&
	    recv_is(&Q.rcq, Q.b.qpn, KITE_CQE_OP_RESP_SEND_IMM, 20000, 0) &&
	    mem_eq(RBUF, want, 20000),
	    "UC SEND_IMM 20000 bytes at MTU 256: one receive CQE, data byte for byte");

	/* A UC QP on an SRQ, connected to itself: the SRQ WQE's tag, reuse. */
	{
		struct tsrq sq;
		struct tqp u;

		need(srq_create(&sq, fx_pd, 4, 6, 0, &r), &r, "CREATE_SRQ");
		need(tqp_create_srq(&u, KITE_QPT_UC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn,
				    sq.srqn, &r), &r, "CREATE_QP UC on the SRQ");
		uc_rts(&u, u.qpn, MAC, KITE_MTU_1024);
		fill_pattern(SRC, 2000, 0x71, want);
		g[0] = sge(4000, E.lkey, RBUF);
		srq_post(&sq, 0x1234, g, 1);
		g[0] = sge(2000, E.lkey, SRC);
		idx = post_rc(&u, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
		tap(req_ok(&P.scq, u.qpn, idx, KITE_WQE_OP_SEND, 0) &&
		    recv_is(&P.rcq, u.qpn, KITE_CQE_OP_RESP_SEND, 2000, 0x1234) &&
		    mem_eq(RBUF, want, 2000),
		    "UC on an SRQ (to itself): SEND 2000 in the SRQ WQE tagged 0x1234, data");
		g[0] = sge(100, E.lkey, RBUF);
		srq_post(&sq, 0x2345, g, 1);
		g[0] = sge(300, E.lkey, SRC);
		post_rc(&u, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
		fill_pattern(SRC, 90, 0x72, want);
		g[0] = sge(90, E.lkey, SRC);
		idx = post_rc(&u, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
		tap(req_ok(&P.scq, u.qpn, idx, KITE_WQE_OP_SEND, 0) &&
		    recv_is(&P.rcq, u.qpn, KITE_CQE_OP_RESP_SEND, 90, 0x2345) &&
		    mem_eq(RBUF, want, 90) && qp_state(u.qpn) == KITE_QPS_RTS,
		    "UC on an SRQ: a SEND too long for the SRQ WQE dropped, the WQE (0x2345) "
		    "takes the next one");
	}

	/* SQD: drained at once once the message in progress is sent. */
	a = attrs_valid(P.a.qpn);
	d0 = neqlog;
	need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_SQD, &r), &r, "UC RTS to SQD");
	eq_drain(&eq0);
	tap(eqe_find((unsigned)d0, KITE_EQE_SQ_DRAINED, P.a.qpn) != NULL,
	    "UC RTS to SQD with nothing outstanding: SQ_DRAINED event");
}

/* A UC frame from the wire's peer to QP @qpn. */
static void w_uc(uint32_t qpn, uint8_t op, uint32_t psn, bool ackreq, const uint8_t *ext,
		 size_t ext_len, const uint8_t *pl, size_t len)
{
	static uint8_t f[2048];

	wire_send(f, w_frame(f, op, qpn, psn, ackreq, ext, ext_len, pl, len));
}

/* RoCE frames QEMU sent since the last call (none expected from a UC responder). */
static unsigned w_quiet(void)
{
	static uint8_t f[2048];
	unsigned n = 0;
	ssize_t len;

	wire_settle();
	while ((len = recv(wire_fd, f, sizeof(f), MSG_DONTWAIT)) > 0)
		if (len >= 54 && be16(f + 36) == 4791)
			n++;
	return n;
}

/* UC against the test wire: the packets, the receive PSN rule, no answers. */
void g_uc_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[4096], f[2048], ext[32];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a;
	struct res r;
	uint32_t psn = T_RC_PSN;
	uint64_t d0, x = 0x75632d77ULL;
	uint16_t idx;
	unsigned i;
	ssize_t n;
	bool ok;

	eng_setup();
	rc_keys();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	tcq_make(&scq, 6);
	tcq_make(&rcq, 6);
	need(tqp_create(&a, KITE_QPT_UC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UC");
	uc_rts(&a, W_PEER_QPN, peer, KITE_MTU_1024);

	/* Requester: SEND 2500 = FIRST, MIDDLE, LAST (0x20-0x22), no AckReq. */
	fill_pattern(SRC, 2500, 0x5c, want);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_SEND_IMM | SIG, 0x11223344, 0, 0, 0, 0, g, 1);
	for (i = 0; i < 3; i++) {
		static const uint8_t ops[3] = { 0x20, 0x21, 0x23 };
		static const size_t lens[3] = { 1024, 1024, 452 };
		size_t hl = i == 2 ? 4 : 0;

		n = w_next(f, sizeof(f));
		if (!tap(n == (ssize_t)(54 + hl + lens[i] + 4),
			 "UC SEND_IMM packet %u on the wire (%zd bytes)", i, n))
			return;
		tap(f[42] == ops[i] && be24(f + 47) == W_PEER_QPN &&
		    be24(f + 51) == ((psn + i) & 0xffffff) && !(f[50] & 0x80) &&
		    !memcmp(f + 54 + hl, want + 1024 * i, lens[i]) &&
		    (i < 2 || be32(f + 54) == 0x44332211),
		    "UC SEND_IMM packet %u: opcode 0x%02x, PSN 0x%x, no AckReq, payload%s", i,
		    f[42], be24(f + 51), i == 2 ? ", ImmDt" : "");
	}
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0),
	    "UC SEND completes once sent, without any ACK");
	psn += 3;
	/* WRITE_ONLY with RETH (0x2a). */
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x123456789abcULL, 0xabcd01, 0, 0, g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 16 + 100 + 4 && f[42] == 0x2a && be24(f + 51) == (psn & 0xffffff) &&
	    !(f[50] & 0x80) && be32(f + 58) == 0x56789abc && be32(f + 62) == 0xabcd01 &&
	    be32(f + 66) == 100 && req_ok(&scq, a.qpn, idx, WR, 0),
	    "UC WRITE_ONLY 0x2a: RETH, no AckReq, completes once sent");
	tap(w_quiet() == 0, "nothing else on the wire");

	/* Responder: FIRST, MIDDLE, LAST at the expected PSNs, AckReq set: no ACK. */
	psn = T_RC_PSN;
	fill_pattern(SRC, 3000, 0x21, want);
	g[0] = sge(4000, E.lkey, RBUF);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	w_uc(a.qpn, 0x20, psn, true, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x21, psn + 1, true, NULL, 0, want + 1024, 1024);
	w_uc(a.qpn, 0x22, psn + 2, true, NULL, 0, want + 2048, 952);
	wire_settle();
	tap(recv_is(&rcq, a.qpn, KITE_CQE_OP_RESP_SEND, 3000, 0) && mem_eq(RBUF, want, 3000),
	    "UC responder: SEND FIRST/MIDDLE/LAST received, data byte for byte");
	tap(w_quiet() == 0, "UC responder: no ACK even with AckReq set");
	psn += 3;

	/* A lost MIDDLE: the LAST is dropped, the next message received. */
	d0 = qom_count("rc-counts", "uc-dropped");
	fill_pattern(SRC, 3000, 0x31, want);
	w_uc(a.qpn, 0x20, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn + 2, false, NULL, 0, want + 2048, 952);
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 1,
	    "UC: MIDDLE lost, LAST (PSN gap) dropped, no CQE");
	w_uc(a.qpn, 0x21, psn + 1, false, NULL, 0, want + 1024, 1024);
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 2,
	    "UC: the lost MIDDLE arriving late is dropped too (the message is abandoned)");
	fill_pattern(SRC, 700, 0x32, want);
	w_uc(a.qpn, 0x04, psn + 3, false, NULL, 0, want, 700);
	w_uc(a.qpn, 0x24, psn + 3, false, NULL, 0, want, 700);
	wire_settle();
	tap(recv_is(&rcq, a.qpn, KITE_CQE_OP_RESP_SEND, 700, 1) && mem_eq(RBUF, want, 700) &&
	    tcq_drain(&rcq) == 0,
	    "UC: the next message (SEND_ONLY) is received in the RQ WQE the cut one had; "
	    "an RC opcode to the UC QP ignored");
	psn += 4;

	/* A gap before a message's first packet: it starts the message anyway. */
	fill_pattern(SRC, 1500, 0x33, want);
	put32(ext, 0xcafef00d);
	w_uc(a.qpn, 0x20, psn + 10, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x23, psn + 11, false, ext, 4, want + 1024, 476);
	wire_settle();
	ok = tcq_next(&rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, a.qpn, 0) && c.byte_len == 1500 &&
		 c.imm_data == 0x0df0feca && c.wqe_idx == 2 && mem_eq(RBUF, want, 1500),
		 "UC: FIRST after a PSN gap of 10 accepted (PSNs resync), SEND_LAST_IMM completes"))
		cqe_diag("recv", &c);
	psn += 12;

	/* FIRST, then FIRST again (the LAST lost): the second message wins. */
	g[0] = sge(4000, E.lkey, RBUF);
	post_recv(&a, g, 1);
	fill_pattern(SRC, 2000, 0x34, want);
	w_uc(a.qpn, 0x20, psn, false, NULL, 0, want + 1000, 1024);
	w_uc(a.qpn, 0x20, psn + 1, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn + 2, false, NULL, 0, want + 1024, 976);
	wire_settle();
	tap(recv_is(&rcq, a.qpn, KITE_CQE_OP_RESP_SEND, 2000, 3) && mem_eq(RBUF, want, 2000),
	    "UC: a FIRST inside a SEND abandons it; the new message fills the WQE from its start");
	psn += 3;

	/* Out-of-sequence opcodes and PSNs: MIDDLE/LAST outside a message. */
	d0 = qom_count("rc-counts", "uc-dropped");
	w_uc(a.qpn, 0x21, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn, false, NULL, 0, want, 10);
	w_uc(a.qpn, 0x27, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x28, psn, false, NULL, 0, want, 10);
	w_uc(a.qpn, 0x2c, psn, false, ext, 16, NULL, 0);	/* "UC READ": not parsed */
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 4 &&
	    qp_state(a.qpn) == KITE_QPS_RTS,
	    "UC: MIDDLE and LAST of SEND and WRITE outside a message dropped, opcode 0x2c "
	    "ignored, QP RTS");
	/* A WRITE whose MIDDLE is in a SEND: dropped. */
	g[0] = sge(4000, E.lkey, RBUF);
	post_recv(&a, g, 1);
	w_uc(a.qpn, 0x20, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x27, psn + 1, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn + 2, false, NULL, 0, want, 10);
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 6,
	    "UC: WRITE MIDDLE inside a SEND drops the SEND (and its LAST)");
	psn += 3;

	/* WRITE to a bad rkey: silently dropped, no NAK, QP still RTS. */
	memset(want, 0xee, 512);
	memwrite(t_bus(DST), want, 512);
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 8, R.rkey ^ 0x100);
	put32(ext + 12, 200);
	w_uc(a.qpn, 0x2a, psn, true, ext, 16, f, 200);
	put32(ext + 8, R.rkey_nw);
	w_uc(a.qpn, 0x2a, psn + 1, true, ext, 16, f, 200);
	wire_settle();
	tap(mem_eq(DST, want, 512) && qp_state(a.qpn) == KITE_QPS_RTS && w_quiet() == 0,
	    "UC WRITE to a bad rkey, to a key without REMOTE_WRITE: dropped, no NAK, QP RTS");
	/* A good WRITE_ONLY_IMM then. */
	fill_pattern(SRC, 200, 0x35, want);
	put32(ext + 8, R.rkey);
	put32(ext + 16, 0x01020304);
	w_uc(a.qpn, 0x2b, psn + 2, false, ext, 20, want, 200);
	wire_settle();
	ok = tcq_next(&rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, a.qpn, 0) && c.byte_len == 200 &&
		 c.imm_data == 0x04030201 && c.wqe_idx == 4 && mem_eq(DST, want, 200),
		 "UC WRITE_ONLY_IMM: RESP_WRITE_IMM, imm, data at the remote address, in the "
		 "RQ WQE the dropped SEND had taken"))
		cqe_diag("recv", &c);
	psn += 3;

	/* Random UC packets: no crash, no answer, the QP goes on. */
	for (i = 0; i < 300; i++) {
		uint8_t op;
		uint32_t len;
		unsigned j;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 30 == 0) {
			g[0] = sge(3000, E.lkey, RBUF);
			post_recv(&a, g, 1);
		}
		op = (uint8_t)(0x20 + x % 0x10);
		len = (uint32_t)((x >> 16) % 1100);
		for (j = 0; j < sizeof(ext); j++)
			ext[j] = (uint8_t)(x >> (j % 8 * 8)) ^ (uint8_t)j;
		if (x & (1ULL << 40)) {
			put32(ext, (uint32_t)(DST >> 32));
			put32(ext + 4, (uint32_t)DST + (uint32_t)((x >> 41) % 64) * 8);
			put32(ext + 8, R.rkey);
			put32(ext + 12, (uint32_t)((x >> 48) % 5000));
		}
		w_uc(a.qpn, op, psn + (uint32_t)((x >> 8) % 4), x & (1ULL << 50), ext,
		     (size_t)((x >> 52) % 21), f, len);
		if (i % 20 == 19)
			wire_settle();
		psn += (uint32_t)((x >> 12) & 1);
	}
	tcq_drain(&rcq);
	tap(w_quiet() == 0 && (qp_state(a.qpn) == KITE_QPS_RTS || qp_state(a.qpn) == KITE_QPS_ERR),
	    "UC fuzz: 300 random UC packets, nothing sent back, QP %s",
	    st_name((unsigned)qp_state(a.qpn)));
	fill_pattern(SRC, 64, 0x36, want);
	if (qp_state(a.qpn) != KITE_QPS_RTS) {
		tqp_to(&a, KITE_QPS_RESET);
		a.spi = a.rpi = 0;
		uc_rts(&a, W_PEER_QPN, peer, KITE_MTU_1024);
		psn = T_RC_PSN;
	}
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 64 + 4 && f[42] == 0x24 && req_ok(&scq, a.qpn, idx, KITE_WQE_OP_SEND, 0),
	    "UC after the fuzz: a SEND_ONLY goes out and completes");
}
