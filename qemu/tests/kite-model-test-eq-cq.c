/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): event queues, PBL validation,
 * completion queues, CQ arming and CQ events (groups eq, cq, cq_arm,
 * cq_events).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Group: event queues and PBL validation                              */
/* ------------------------------------------------------------------ */

static void pbl_err(const struct qbuf *b, unsigned log, unsigned code, const char *what)
{
	struct res r;

	create_eq_pbl(log, EQ1_VEC, false, &b->pbl, &r);
	if (code == KITE_CMD_E_PBL)
		expect(&r, code, offsetof(struct kite_cmd_create_eq, pbl), "CREATE_EQ: %s -> E_PBL, syndrome 8", what);
	else
		expect(&r, code, -1, "CREATE_EQ: %s -> %s", what, code_name(code));
	if (r.done && (r.status & 0xff) == KITE_CMD_OK)
		cmd_obj(KITE_CMD_DESTROY_EQ, r.result, 0, &r);
}

void g_eq(void)
{
	struct res r;
	struct qbuf b;
	struct eqs q, e15;
	struct kite_cmd_create_eq in;
	struct cq cq;
	uint32_t eqn, n;
	int c, i;

	std_setup();
	create_eq(&q, 6, EQ1_VEC, true, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "a second EQ with CTRL -> E_STATE");

	create_eq(&q, 6, EQ1_VEC, false, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_EQ log depth 6 (minimum)");
	tap(r.result == 1, "first completion EQ gets EQN 1 (got %u)", r.result);
	eqn = r.result;
	b = qbuf_for(16 << 5);
	create_eq_pbl(5, EQ1_VEC, false, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_EQ log depth 5 -> E_PARAM");
	b = qbuf_for(16 << 16);
	create_eq_pbl(16, EQ1_VEC, false, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_EQ log depth 16 -> E_PARAM");
	create_eq(&e15, 15, EQ1_VEC, false, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_EQ log depth 15 (maximum, level 1 PBL of 128 pages)");
	b = qbuf_for(16 << 6);
	create_eq_pbl(6, KITE_MAX_VECTORS, false, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_EQ vector 64 -> E_PARAM");
	create_eq(&q, 6, KITE_MAX_VECTORS - 1, false, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_EQ vector 63");
	memset(&in, 0, sizeof(in));
	in.cfg = 6 | BIT(20);
	in.pbl = b.pbl;
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "CREATE_EQ with a reserved cfg bit -> E_PARAM, syndrome 0");
	in.cfg = 6;
	in.moderation = BIT(24);
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_create_eq, moderation),
	       "CREATE_EQ with a reserved moderation bit -> E_PARAM, syndrome 4");
	in.cfg = 6 | KITE_EQ_CFG_CTRL;
	in.moderation = FIELD_PREP(KITE_EQ_MOD_MAX_US, 100);
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_create_eq, moderation),
	       "CREATE_EQ: moderation on the control EQ -> E_PARAM, syndrome 4");
	in.cfg = 6;
	in.moderation = 0;
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in) - 1, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_EQ with in_len 23 -> E_LENGTH");

	/* PBL validation. */
	b = qbuf_for(1024);
	b.pbl.cfg = pbl_cfg(3, 12);
	pbl_err(&b, 6, KITE_CMD_E_PBL, "PBL level 3");
	b.pbl.cfg = pbl_cfg(0, 11);
	pbl_err(&b, 6, KITE_CMD_E_PBL, "page shift 11");
	b.pbl.cfg = pbl_cfg(0, 22);
	pbl_err(&b, 6, KITE_CMD_E_PBL, "page shift 22");
	b.pbl.cfg = pbl_cfg(0, 12) | BIT(4);
	create_eq_pbl(6, EQ1_VEC, false, &b.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "CREATE_EQ: reserved bit in pbl.cfg -> E_PBL or E_PARAM");
	b = mkbuf(0, 12, 1, true);
	b.pbl.npages = 0;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "npages 0");
	b.pbl.npages = 2;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 0 with npages 2");
	b = mkbuf(0, 12, 1, true);
	b.pbl.addr += 0x800;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 0 data page not page aligned");
	b = mkbuf(0, 13, 1, true);
	b.pbl.addr += 0x1000;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 0 8 KiB page only 4 KiB aligned");
	b = mkbuf(0, 13, 1, true);
	pbl_err(&b, 6, KITE_CMD_OK, "level 0 8 KiB page holding a 1 KiB queue");
	pbl_err(&b, 10, KITE_CMD_E_PARAM, "level 0 page smaller than the queue (16 KiB in 8 KiB)");

	/* Level 1: 2 pages for log 9 (8 KiB). */
	b = mkbuf(1, 12, 2, true);
	pbl_err(&b, 9, KITE_CMD_OK, "level 1 PBL, 2 pages, LAST/NEXT_TO_LAST set");
	b = mkbuf(1, 12, 2, true);
	pte_set(&b, 1, pte_get(&b, 1) & ~KITE_PTE_VALID);
	pbl_err(&b, 9, KITE_CMD_E_PBL, "PTE without VALID");
	b = mkbuf(1, 12, 2, true);
	pte_set(&b, 1, pte_get(&b, 1) & ~KITE_PTE_LAST);
	pbl_err(&b, 9, KITE_CMD_E_PBL, "queue PBL without LAST on the last page");
	b = mkbuf(1, 12, 2, true);
	pte_set(&b, 0, pte_get(&b, 0) & ~KITE_PTE_NEXT_TO_LAST);
	pbl_err(&b, 9, KITE_CMD_E_PBL, "queue PBL without NEXT_TO_LAST on the page before the last");
	b = mkbuf(1, 12, 4, true);
	pte_set(&b, 0, pte_get(&b, 0) | KITE_PTE_LAST);
	pbl_err(&b, 10, KITE_CMD_E_PBL, "LAST on a page that is not the last");
	b = mkbuf(1, 12, 4, true);
	pte_set(&b, 1, pte_get(&b, 1) | KITE_PTE_NEXT_TO_LAST);
	pbl_err(&b, 10, KITE_CMD_E_PBL, "NEXT_TO_LAST on a page that is not next to last");
	b = mkbuf(1, 13, 2, true);
	pte_set(&b, 1, pte_get(&b, 1) + 0x1000);
	pbl_err(&b, 10, KITE_CMD_E_PBL, "PTE not aligned to the 8 KiB data page");
	b = mkbuf(1, 12, 2, true);
	b.pbl.addr += 8;
	pbl_err(&b, 9, KITE_CMD_E_PBL, "level 1 PTE page not 4 KiB aligned");
	b = mkbuf(1, 12, 2, true);
	b.pbl.addr = NOT_RAM;
	pbl_err(&b, 9, KITE_CMD_E_DMA, "level 1 PTE page outside guest RAM");
	b = mkbuf(1, 12, 2, true);
	pbl_err(&b, 10, KITE_CMD_E_PARAM, "npages 2 (8 KiB) for a 16 KiB queue");
	b = mkbuf(1, 12, 2, true);
	pbl_err(&b, 8, KITE_CMD_E_PARAM, "npages 2 (8 KiB) for a 4 KiB queue");
	b = mkbuf(1, 12, 1, true);
	pbl_err(&b, 6, KITE_CMD_E_PARAM, "level 1, one 4 KiB page for a 1 KiB queue");
	b = mkbuf(1, 12, 1, true);
	b.pbl.npages = KITE_PBL_ENTRIES + 1;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 1 with npages 513");

	/* Level 2: log 15 = 512 KiB = 128 pages behind one PDE. */
	b = mkbuf(2, 12, 128, true);
	pbl_err(&b, 15, KITE_CMD_OK, "level 2 PBL (1 PDE, 128 pages)");
	b = mkbuf(2, 12, 128, true);
	memwrite(b.pdes, &(uint64_t){ b.ptes }, 8);
	pbl_err(&b, 15, KITE_CMD_E_PBL, "level 2 PDE without VALID");
	b = mkbuf(2, 12, 128, true);
	memwrite(b.pdes, &(uint64_t){ b.ptes | KITE_PTE_VALID | KITE_PTE_LAST }, 8);
	pbl_err(&b, 15, KITE_CMD_E_PBL, "level 2 PDE carrying LAST");
	b = mkbuf(2, 12, 128, true);
	memwrite(b.pdes, &(uint64_t){ NOT_RAM | KITE_PTE_VALID }, 8);
	pbl_err(&b, 15, KITE_CMD_E_DMA, "level 2 PDE pointing outside guest RAM");
	b = mkbuf(2, 12, 128, true);
	pte_set(&b, 127, pte_get(&b, 127) & ~KITE_PTE_LAST);
	pbl_err(&b, 15, KITE_CMD_E_PBL, "level 2: last PTE without LAST");
	b = mkbuf(2, 21, 1, true);
	pbl_err(&b, 15, KITE_CMD_E_PARAM, "level 2 with one 2 MiB page for a 512 KiB queue");
	b = mkbuf(0, 21, 1, true);
	pbl_err(&b, 15, KITE_CMD_OK, "level 0 with a 2 MiB page (shift 21) for a 512 KiB queue");

	/* Destroy */
	cmd_obj(KITE_CMD_DESTROY_EQ, 40, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_EQ of a nonexistent EQ -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_EQ, 64, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_EQ 64 -> E_OBJECT");
	need(create_cq(&cq, 1, eqn, 0, &r), &r, "CREATE_CQ on EQ 1");
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_EQ while a CQ is bound -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq.cqn, 0, &r);
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_EQ once the CQ is gone");
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_EQ twice -> E_OBJECT");
	create_eq(&q, 6, EQ1_VEC, false, &r);
	tap(r.done && (r.status & 0xff) == 0 && r.result == eqn,
	    "CREATE_EQ reuses the lowest free EQN (%u)", r.result);

	/* Without EQ0 commands complete silently. */
	cmd_obj(KITE_CMD_DESTROY_EQ, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_EQ 0");
	{
		struct kite_eqe before[64], after[64];
		uint64_t buf0 = eq0.buf;

		eq0.on = false;
		memread(buf0, before, sizeof(before));
		nop(&r);
		memread(buf0, after, sizeof(after));
		tap(r.done && !memcmp(before, after, sizeof(before)), "without EQ0 a command posts no EQE");
		need(create_eq(&eq0, 6, EQ0_VEC, true, &r), &r, "CREATE_EQ (EQ0 again)");
		tap(r.result == 0, "EQ0 can be created again");
		eq_drain(&eq0);
	}

	/* Exhaustion: EQNs 1..63. */
	n = 0;
	c = KITE_CMD_OK;
	for (i = 0; i < 70; i++) {
		c = create_eq(&q, 6, EQ1_VEC, false, &r);
		if (c != KITE_CMD_OK)
			break;
		n++;
		if (r.result < 1 || r.result > 63) {
			diag("EQN %u out of 1..63", r.result);
			break;
		}
	}
	tap(c == KITE_CMD_E_NO_RESOURCES, "CREATE_EQ until full -> E_NO_RESOURCES (after %u more, %s)", n,
	    code_name((unsigned)c));
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "EQ0 still works with 64 EQs");
	(void)e15;
}

/* ------------------------------------------------------------------ */
/* Group: completion queues                                            */
/* ------------------------------------------------------------------ */

void g_cq(void)
{
	struct res r;
	struct cq cq, cq2;
	struct qbuf b, nb, nb2;
	struct kite_cmd_query_cq_out o;
	struct kite_cmd_modify_cq m;
	struct kite_cqe cqe;
	struct eqs q2;
	uint64_t dbrec = galloc(64, 64);
	uint32_t cqn, qpn;
	struct qpspec s;

	fixture();
	need(create_eq(&q2, 6, EQ2_VEC, false, &r), &r, "CREATE_EQ (EQ2)");

	b = qbuf_for(64 << 6);
	create_cq_full(6, 0, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "CREATE_CQ on EQ0 -> E_OBJECT");
	create_cq_full(6, 9, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "CREATE_CQ on a nonexistent EQ -> E_OBJECT");
	create_cq_full(6, eq1.eqn, 0, 0, 0, 0, dbrec + 4, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ with a dbrec not 8-byte aligned -> E_PARAM");
	create_cq_full(6, eq1.eqn, 0, 0, 0, 0, 0, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ with dbrec 0 -> E_PARAM");
	create_cq_full(0, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ log depth 0 -> E_PARAM");
	create_cq_full(17, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ log depth 17 -> E_PARAM");
	create_cq_full(6, eq1.eqn, BIT(12), 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "CREATE_CQ with a reserved cfg bit -> E_PARAM, syndrome 0");
	create_cq_full(6, eq1.eqn, 0, 9, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "CREATE_CQ with an unallocated uctx -> E_OBJECT");
	b = mkbuf(1, 12, 1, true);
	create_cq_full(6, eq1.eqn, KITE_CQ_CFG_CQE_128, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ CQE_128 with a buffer sized for 64-byte CQEs -> E_PARAM");
	b = mkbuf(1, 12, 2, true);
	create_cq_full(6, eq1.eqn, KITE_CQ_CFG_CQE_128, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_CQ CQE_128, log 6, 8 KiB buffer");
	if (r.done && !(r.status & 0xff)) {
		cqn = r.result;
		query_cq(cqn, &o, &r);
		tap(o.cfg == (6 | KITE_CQ_CFG_CQE_128), "QUERY_CQ cfg shows CQE_128 (0x%x)", o.cfg);
		cmd_obj(KITE_CMD_DESTROY_CQ, cqn, 0, &r);
	}
	b = mkbuf(1, 12, 1, true);
	create_cq_full(7, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ log 7 (8 KiB) with a 4 KiB buffer -> E_PARAM");
	b = mkbuf(2, 12, 1024, true);
	create_cq_full(16, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_CQ log depth 16 with a level 2 PBL (1024 pages, 2 PDEs)");
	if (r.done && !(r.status & 0xff))
		cmd_obj(KITE_CMD_DESTROY_CQ, r.result, 0, &r);

	/* Query / modify */
	cq.dbrec = galloc(64, 64);
	cq.log = 2;
	cq.b = qbuf_for(64 << 2);
	cqn = need(create_cq_full(2, eq1.eqn, 0, 0, 3, 7, cq.dbrec, &cq.b.pbl, &r), &r, "CREATE_CQ");
	tap(cqn >= 1, "CQN >= 1 (%u)", cqn);
	query_cq(cqn, &o, &r);
	tap(r.done && !(r.status & 0xff) && o.state == KITE_CQ_STATE_OK && o.arm == 0 &&
	    o.eqn == eq1.eqn && o.cfg == 2 && o.pi == 0 && o.ci == 0 && o.mod_count == 3 &&
	    o.mod_period == 7,
	    "QUERY_CQ: state OK, disarmed, eqn, cfg, pi 0, ci 0, moderation as created");
	if (r.done && (r.status & 0xff))
		res_diag(&r);
	else
		diag("state %u arm 0x%x eqn %u cfg 0x%x pi %u ci %u mod %u/%u", o.state, o.arm,
		     o.eqn, o.cfg, o.pi, o.ci, o.mod_count, o.mod_period);
	query_cq(999, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_CQ of a nonexistent CQ -> E_OBJECT");
	run(KITE_CMD_QUERY_CQ, &(struct kite_cmd_obj){ .obj = cqn }, 8, sizeof(o) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_CQ with out_len 31 -> E_LENGTH");

	memset(&m, 0, sizeof(m));
	m.cqn = cqn;
	m.mask = KITE_MODIFY_CQ_MODERATION;
	m.mod_count = 100;
	m.mod_period = 2000;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_CQ MODERATION");
	query_cq(cqn, &o, &r);
	tap(o.mod_count == 100 && o.mod_period == 2000, "QUERY_CQ shows the new moderation (%u/%u)",
	    o.mod_count, o.mod_period);
	m.mask = KITE_MODIFY_CQ_EQN;
	m.eqn = q2.eqn;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_CQ EQN to EQ %u", q2.eqn);
	query_cq(cqn, &o, &r);
	tap(o.eqn == q2.eqn, "QUERY_CQ shows the new EQ (%u)", o.eqn);
	m.eqn = 0;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_CQ EQN to EQ0 -> E_OBJECT");
	m.eqn = 50;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_CQ EQN to a nonexistent EQ -> E_OBJECT");
	query_cq(cqn, &o, &r);
	tap(o.eqn == q2.eqn, "failed remaps leave the EQ unchanged (%u)", o.eqn);
	cmd_obj(KITE_CMD_DESTROY_EQ, q2.eqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_EQ of the remapped-to EQ -> E_BUSY");
	m.mask = KITE_MODIFY_CQ_MODERATION;
	m.rsvd = 1;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_modify_cq, rsvd),
	       "MODIFY_CQ with rsvd non-zero -> E_PARAM, syndrome 28");
	m.rsvd = 0;
	m.mask = BIT(3);
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "MODIFY_CQ with an unknown mask bit -> E_PARAM");
	m.mask = KITE_MODIFY_CQ_MODERATION;
	m.cqn = 999;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_CQ of a nonexistent CQ -> E_OBJECT");

	/* RESIZE: depth 4 -> 8; the RESIZE CQE goes to the old buffer at pi (0), owner 1. */
	nb = qbuf_for(64 << 3);
	memset(&m, 0, sizeof(m));
	m.cqn = cqn;
	m.mask = KITE_MODIFY_CQ_RESIZE;
	m.cfg = 3;
	m.pbl = nb.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_CQ RESIZE depth 4 -> 8");
	memread(cq.b.data, &cqe, sizeof(cqe));
	tap(FIELD_GET(KITE_CQE_OPCODE, cqe.op_own) == KITE_CQE_OP_RESIZE &&
	    (cqe.op_own & KITE_CQE_OWNER) == 1,
	    "RESIZE CQE in the old buffer at index 0 with owner 1 (op_own 0x%x)", cqe.op_own);
	memread(nb.data, &cqe, sizeof(cqe));
	tap(cqe.op_own == 0, "new buffer untouched (op_own 0x%x)", cqe.op_own);
	query_cq(cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_CFG_LOG_DEPTH, o.cfg) == 3 && o.pi == 0,
	    "QUERY_CQ after RESIZE: log depth 3, pi unchanged (cfg 0x%x, pi %u)", o.cfg, o.pi);
	nb2 = mkbuf(1, 12, 1, true);
	m.cfg = 5;
	m.pbl = nb2.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RESIZE with a buffer that does not match the new depth -> E_PARAM");
	memread(nb.data, &cqe, sizeof(cqe));
	tap(cqe.op_own == 0, "failed RESIZE writes no RESIZE CQE (op_own 0x%x)", cqe.op_own);
	m.cfg = 0;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RESIZE to log depth 0 -> E_PARAM");
	m.cfg = 4;
	m.pbl = nb2.pbl;
	m.pbl.cfg = pbl_cfg(3, 12);
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_modify_cq, pbl),
	       "RESIZE with a malformed PBL -> E_PBL, syndrome 24");
	nb2 = mkbuf(2, 12, 1024, true);
	m.cfg = 16;
	m.pbl = nb2.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RESIZE 8 -> 65536 with a level 2 PBL");
	memread(nb.data, &cqe, sizeof(cqe));
	tap(FIELD_GET(KITE_CQE_OPCODE, cqe.op_own) == KITE_CQE_OP_RESIZE && (cqe.op_own & 1) == 1,
	    "second RESIZE CQE written in the depth-8 buffer (op_own 0x%x)", cqe.op_own);

	/* DESTROY busy while a QP uses the CQ. */
	need(create_cq(&cq2, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rcqn = cq2.cqn;
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq2.cqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_CQ while a QP uses it as recv CQ -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_CQ, fx_cq.cqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_CQ while a QP uses it as send CQ -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq2.cqn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_CQ once the QP is gone");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq2.cqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_CQ twice -> E_OBJECT");
	query_cq(cq2.cqn, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_CQ of a destroyed CQ -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_CQ, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_CQ 0 -> E_OBJECT");
}

/* ------------------------------------------------------------------ */
/* Group: CQ arming                                                    */
/* ------------------------------------------------------------------ */

static bool debug_cqe(uint32_t cqn)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", cqn);
	return qom_set("debug-cqe", v, NULL);
}

void g_cq_arm(void)
{
	struct res r;
	struct cq cq, c2, c3;
	struct kite_cmd_query_cq_out o;
	struct kite_cqe cqe;
	const char *reply = "";
	uint64_t rtc = 1700000000123456789ULL, clk;
	uint32_t i;
	unsigned n;

	fixture();
	need(create_cq(&cq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);

	dbrec_arm(&cq, 0, KITE_CQ_ARM_NEXT, 1);
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_NEXT, 2));
	bad_db_check(1, "arm doorbell whose CMD_SN differs from the dbrec arm word is counted");
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_SOLICITED, 1));
	bad_db_check(1, "arm doorbell whose CMD differs from the dbrec arm word is counted");
	query_cq(cq.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_DISARMED,
	    "mismatched arm doorbells are ignored: CQ still disarmed (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_NEXT, 1));
	bad_db_check(0, "matching arm doorbell accepted");
	query_cq(cq.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_NEXT &&
	    FIELD_GET(KITE_CQ_ARM_LAST_SN, o.arm) == 1,
	    "QUERY_CQ after arm NEXT sn 1: state NEXT, last sn 1 (arm 0x%x)", o.arm);
	tap(eq1_count(KITE_EQE_COMPLETION, cq.cqn) == 0, "arming an empty CQ posts no event");
	dbrec_arm(&cq, 0, KITE_CQ_ARM_SOLICITED, 2);
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_SOLICITED, 2));
	clock_step(POLL_STEP_NS);
	query_cq(cq.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_NEXT &&
	    FIELD_GET(KITE_CQ_ARM_LAST_SN, o.arm) == 2,
	    "SOLICITED arm while NEXT: stays NEXT, last sn 2 (arm 0x%x)", o.arm);
	need(create_cq(&c2, 3, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	dbrec_arm(&c2, 0, KITE_CQ_ARM_SOLICITED, 0);
	wr64(db_addr(0), db_cq_arm(c2.cqn, KITE_CQ_ARM_SOLICITED, 0));
	clock_step(POLL_STEP_NS);
	query_cq(c2.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_SOLICITED,
	    "arm SOLICITED: state SOLICITED (arm 0x%x)", o.arm);
	dbrec_arm(&c2, 0, KITE_CQ_ARM_NEXT, 1);
	wr64(db_addr(0), db_cq_arm(c2.cqn, KITE_CQ_ARM_NEXT, 1));
	clock_step(POLL_STEP_NS);
	query_cq(c2.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_NEXT,
	    "arm NEXT after SOLICITED: state NEXT (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(900, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(1, "arm doorbell of a nonexistent CQ counted");

	/* With a CQE source (optional debug-cqe property). */
	need(create_cq(&c3, 2, eq1.eqn, 0, &r), &r, "CREATE_CQ depth 4");
	/* The CQE carries both clocks (prm_cq.rst): set the real-time one. */
	wreg(KITE_REG_RTC_ARG_LO, (uint32_t)rtc);
	wreg(KITE_REG_RTC_ARG_HI, rtc >> 32);
	wreg(KITE_REG_RTC_CMD, KITE_RTC_OP_SET);
	clk = (uint64_t)reg(KITE_RDMA_REGS_OFFSET + KITE_RDMA_CLOCK_HI) << 32 |
	      reg(KITE_RDMA_REGS_OFFSET + KITE_RDMA_CLOCK_LO);
	if (!debug_cqe(c3.cqn)) {
		qom_set("debug-cqe", "1", &reply);
		skip("model has no debug-cqe property", "CQE-driven arm/fire/overflow tests");
		diag("qom-set debug-cqe: %.160s", reply);
		return;
	}
	clock_step(POLL_STEP_NS);
	memread(c3.b.data, &cqe, sizeof(cqe));
	query_cq(c3.cqn, &o, &r);
	tap((cqe.op_own & KITE_CQE_OWNER) == 1 && o.pi == 1, "debug CQE written at index 0 with owner 1, pi 1");
	tap(cqe.timestamp >= clk && cqe.rtc - rtc == cqe.timestamp - clk,
	    "CQE timestamp and rtc: the device clock and the real-time clock at one instant");
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0, "disarmed CQ: no event for a new CQE");
	dbrec_arm(&c3, 0, KITE_CQ_ARM_NEXT, 0);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 0));
	clock_step(POLL_STEP_NS);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 1, "arm NEXT with a CQE beyond ARM_CI fires at once");
	query_cq(c3.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_FIRED, "state FIRED (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 0));
	clock_step(POLL_STEP_NS);
	query_cq(c3.cqn, &o, &r);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0 &&
	    FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_FIRED,
	    "duplicate arm (same sn after fire) ignored");
	/*
	 * Software saw the event and wrote its next arm word (sn 1) before
	 * a duplicate's doorbell (sn 0) reached the device: still a duplicate.
	 */
	setmem32(c3.dbrec, 1);
	dbrec_arm(&c3, 1, KITE_CQ_ARM_NEXT, 1);
	bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(0, "duplicate arm whose record holds the next request: not counted");
	query_cq(c3.cqn, &o, &r);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0 &&
	    FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_FIRED,
	    "... and ignored: CQ still FIRED (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 1));
	clock_step(POLL_STEP_NS);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0, "arm NEXT with ARM_CI == pi: no event yet");
	debug_cqe(c3.cqn);
	clock_step(POLL_STEP_NS);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 1, "the next CQE fires the armed CQ");
	for (i = 0; i < 3; i++)
		debug_cqe(c3.cqn);
	clock_step(POLL_STEP_NS);
	memread(c3.b.data, &cqe, sizeof(cqe));
	query_cq(c3.cqn, &o, &r);
	tap(o.pi == 5 && (cqe.op_own & KITE_CQE_OWNER) == 0,
	    "CQE 4 (second pass, index 0) has owner 0 (pi %u, op_own 0x%x)", o.pi, cqe.op_own);
	n = neqlog;
	debug_cqe(c3.cqn);	/* pi 5, ci 1: 4 outstanding = depth -> overflow */
	clock_step(POLL_STEP_NS);
	query_cq(c3.cqn, &o, &r);
	tap(o.state == KITE_CQ_STATE_ERROR, "CQ overflow puts the CQ in ERROR (state %u, pi %u)", o.state, o.pi);
	eq_drain(&eq0);
	tap(eqe_find(n, KITE_EQE_CQ_ERROR, c3.cqn) != NULL, "CQ_ERROR event on EQ0 for the overflow");
}

/* ------------------------------------------------------------------ */
/* Group: CQ events driven by the model's debug-cqe property           */
/* ------------------------------------------------------------------ */

/* kite_int.h: debug-cqe value = CQN | these flags (model extension). */
#define DBG_SOLICITED	BIT(24)

void g_cq_events(void)
{
	struct res r;
	struct cq a, b, c, d, e, f, g, h, o128;
	struct kite_cmd_query_cq_out o;
	struct kite_cmd_modify_cq m;
	struct kite_cqe q1, q2;
	struct eqs eq2;
	struct qpspec s;
	struct qbuf nb;
	uint64_t oldbuf, ov0;
	uint32_t qpn, i;
	unsigned mark, n;
	const char *reply = "";

	fixture();
	if (!qom_set("debug-cqe", "0", &reply)) {
		skip("model has no debug-cqe property", "CQE-driven tests");
		diag("%.160s", reply);
		return;
	}

	/* EQ1 armed: the completion event raises its vector. */
	mkcq(&a, 4, eq1.eqn, 0, 0, 0);
	msi_take(EQ1_VEC);
	eq_doorbell(&eq1, true);
	arm_cq(&a, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(a.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, a.cqn) == 1 && msi_take(EQ1_VEC),
	    "armed CQ + armed EQ1: COMPLETION event and MSI-X vector %d", EQ1_VEC);

	/* SOLICITED arming. */
	mkcq(&b, 4, eq1.eqn, 0, 0, 0);
	arm_cq(&b, 0, KITE_CQ_ARM_SOLICITED, 0);
	dcqe(b.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 0, "armed SOLICITED: an unsolicited CQE does not fire");
	dcqe(b.cqn, DBG_SOLICITED);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 1, "armed SOLICITED: a solicited CQE fires");
	arm_cq(&b, 2, KITE_CQ_ARM_SOLICITED, 1);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 0, "re-arm SOLICITED past the solicited CQE: no event");
	dcqe(b.cqn, DBG_ERROR);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 1, "armed SOLICITED: an error CQE fires");
	q1 = cqe_at(&b, b.b.data, 2);
	tap(FIELD_GET(KITE_CQE_OPCODE, q1.op_own) == KITE_CQE_OP_REQ_ERR, "error CQE has opcode REQ_ERR (0x%x)", q1.op_own);

	/* Arm requests that find CQEs already there. */
	mkcq(&c, 4, eq1.eqn, 0, 0, 0);
	dcqe(c.cqn, 0);
	dcqe(c.cqn, DBG_SOLICITED);
	dcqe(c.cqn, 0);
	arm_cq(&c, 0, KITE_CQ_ARM_SOLICITED, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, c.cqn) == 1, "arm SOLICITED with a solicited CQE beyond ARM_CI fires at once");
	mkcq(&d, 4, eq1.eqn, 0, 0, 0);
	dcqe(d.cqn, 0);
	dcqe(d.cqn, 0);
	arm_cq(&d, 0, KITE_CQ_ARM_SOLICITED, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, d.cqn) == 0, "arm SOLICITED with only unsolicited CQEs: no event");
	arm_cq(&d, 1, KITE_CQ_ARM_NEXT, 1);
	tap(eq1_count(KITE_EQE_COMPLETION, d.cqn) == 1, "arm NEXT with CQEs beyond ARM_CI fires at once");
	arm_cq(&d, 2, KITE_CQ_ARM_NEXT, 2);
	tap(eq1_count(KITE_EQE_COMPLETION, d.cqn) == 0, "arm NEXT with ARM_CI == pi: no event");

	/* ARM_CI more than depth behind pi: CQEs with index >= ARM_CI exist. */
	mkcq(&e, 1, eq1.eqn, 0, 0, 0);
	for (i = 0; i < 4; i++) {
		dcqe(e.cqn, 0);
		setmem32(e.dbrec, i + 1);
	}
	arm_cq(&e, 0, KITE_CQ_ARM_NEXT, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 1,
	    "arm NEXT with ARM_CI 0 at pi 4 (depth 2): (pi - ARM_CI) > 0, fires at once");

	/* Moderation. */
	mkcq(&e, 4, eq1.eqn, 0, 3, 0);
	arm_cq(&e, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(e.cqn, 0);
	dcqe(e.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 0, "mod_count 3: no event after 2 CQEs");
	dcqe(e.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 1, "mod_count 3: event after the 3rd CQE");
	dcqe(e.cqn, 0);
	arm_cq(&e, 3, KITE_CQ_ARM_NEXT, 1);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 1, "moderated CQ: arm finding a CQE fires immediately");
	mkcq(&f, 4, eq1.eqn, 0, 0, 100);
	arm_cq(&f, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(f.cqn, 0);
	clock_step(50000);
	tap(eq1_count(KITE_EQE_COMPLETION, f.cqn) == 0, "mod_period 100 us: no event 50 us after the CQE");
	dcqe(f.cqn, 0);
	clock_step(60000);
	tap(eq1_count(KITE_EQE_COMPLETION, f.cqn) == 1, "mod_period 100 us: event ~110 us after the first CQE");
	mkcq(&g, 4, eq1.eqn, 0, 2, 1000);
	arm_cq(&g, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(g.cqn, 0);
	dcqe(g.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, g.cqn) == 1, "count 2 / period 1 ms: the count comes first");
	clock_step(2000000);
	tap(eq1_count(KITE_EQE_COMPLETION, g.cqn) == 0, "no second event from the period timer");

	/* RESIZE with CQEs: owner bits per old and new depth. */
	mkcq(&h, 1, eq1.eqn, 0, 0, 0);
	dcqe(h.cqn, 0);
	dcqe(h.cqn, 0);
	setmem32(h.dbrec, 2);
	oldbuf = h.b.data;
	nb = qbuf_for(64 << 2);
	memset(&m, 0, sizeof(m));
	m.cqn = h.cqn;
	m.mask = KITE_MODIFY_CQ_RESIZE;
	m.cfg = 2;
	m.pbl = nb.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RESIZE depth 2 -> 4 at pi 2");
	h.log = 1;
	q1 = cqe_at(&h, oldbuf, 2);
	tap(FIELD_GET(KITE_CQE_OPCODE, q1.op_own) == KITE_CQE_OP_RESIZE && (q1.op_own & 1) == 0,
	    "RESIZE CQE at old index 0 with owner 0 (second pass of depth 2) (op_own 0x%x)", q1.op_own);
	h.log = 2;
	h.b = nb;
	dcqe(h.cqn, 0);
	q2 = cqe_at(&h, nb.data, 2);
	query_cq(h.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQE_OPCODE, q2.op_own) == KITE_CQE_OP_REQ && (q2.op_own & 1) == 1 && o.pi == 3,
	    "next CQE in the new buffer at index 2, owner 1 (first pass of depth 4), pi 3 (op_own 0x%x, pi %u)",
	    q2.op_own, o.pi);
	tap(o.ci == 2, "QUERY_CQ ci is the consumer index last read from the dbrec (%u)", o.ci);
	setmem32(h.dbrec, 0);
	nb = qbuf_for(64 << 1);
	m.cfg = 1;
	m.pbl = nb.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RESIZE to depth 2 with 3 unconsumed CQEs -> E_PARAM");
	setmem32(h.dbrec, 2);
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RESIZE to depth 2 with 1 unconsumed CQE");

	/* CQE_128 slots. */
	mkcq(&o128, 2, eq1.eqn, KITE_CQ_CFG_CQE_128, 0, 0);
	dcqe(o128.cqn, 0);
	dcqe(o128.cqn, 0);
	q1 = cqe_at(&o128, o128.b.data, 0);
	q2 = cqe_at(&o128, o128.b.data, 1);
	tap((q1.op_own & 1) && (q2.op_own & 1) && q2.wqe_idx == 1,
	    "CQE_128: CQEs at 0 and 128 bytes, owner 1 (0x%x 0x%x)", q1.op_own, q2.op_own);

	/* Overflow: CQ ERROR, QPs to ERR with QP_FATAL. */
	mkcq(&a, 1, eq1.eqn, 0, 0, 0);
	s = qps(KITE_QPT_RC, fx_pd, a.cqn, 0);
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP on the small CQ");
	ov0 = stat1(KITE_STAT_CQ_OVERFLOWS);
	mark = neqlog;
	dcqe(a.cqn, 0);
	dcqe(a.cqn, 0);
	dcqe(a.cqn, 0);
	query_cq(a.cqn, &o, &r);
	eq_drain(&eq0);
	tap(o.state == KITE_CQ_STATE_ERROR && o.pi == 2, "third CQE into a depth-2 CQ without consumption: ERROR, pi 2");
	{
		const struct kite_eqe *ev = eqe_find(mark, KITE_EQE_CQ_ERROR, a.cqn);

		tap(ev && ev->data == KITE_CQ_ERR_OVERFLOW, "CQ_ERROR event with data OVERFLOW on EQ0");
	}
	tap(eqe_find(mark, KITE_EQE_QP_FATAL, qpn) != NULL, "QP_FATAL event for the QP using the CQ");
	tap(qp_state(qpn) == KITE_QPS_ERR, "the QP is in ERR");
	tap(stat1(KITE_STAT_CQ_OVERFLOWS) > ov0, "KITE_STAT_CQ_OVERFLOWS counted");
	dcqe(a.cqn, 0);
	query_cq(a.cqn, &o, &r);
	tap(o.pi == 2, "no CQEs written in ERROR");

	/* dbrec unreachable: CQ ERROR with data DMA. */
	memset(&b, 0, sizeof(b));
	b.log = 2;
	b.b = qbuf_for(64 << 2);
	b.cqn = need(create_cq_full(2, eq1.eqn, 0, 0, 0, 0, NOT_RAM, &b.b.pbl, &r), &r, "CREATE_CQ with dbrec outside RAM");
	mark = neqlog;
	dcqe(b.cqn, 0);
	eq_drain(&eq0);
	query_cq(b.cqn, &o, &r);
	{
		const struct kite_eqe *ev = eqe_find(mark, KITE_EQE_CQ_ERROR, b.cqn);

		tap(o.state == KITE_CQ_STATE_ERROR && ev && ev->data == KITE_CQ_ERR_DMA,
		    "dbrec outside RAM: CQ ERROR, CQ_ERROR data DMA");
	}

	/* CQ buffer outside RAM: the CQE write fails -> ERROR, data DMA. */
	memset(&b, 0, sizeof(b));
	b.log = 2;
	b.b = mkbuf(0, 12, 1, true);
	b.b.pbl.addr = NOT_RAM;
	b.dbrec = galloc(64, 64);
	b.cqn = need(create_cq_full(2, eq1.eqn, 0, 0, 0, 0, b.dbrec, &b.b.pbl, &r), &r, "CREATE_CQ with its page outside RAM");
	mark = neqlog;
	ov0 = stat1(KITE_STAT_DMA_ERRORS);
	dcqe(b.cqn, 0);
	eq_drain(&eq0);
	query_cq(b.cqn, &o, &r);
	{
		const struct kite_eqe *ev = eqe_find(mark, KITE_EQE_CQ_ERROR, b.cqn);

		tap(o.state == KITE_CQ_STATE_ERROR && ev && ev->data == KITE_CQ_ERR_DMA && o.pi == 0,
		    "CQ page outside RAM: CQ ERROR, CQ_ERROR data DMA, pi 0");
	}
	tap(stat1(KITE_STAT_DMA_ERRORS) > ov0, "KITE_STAT_DMA_ERRORS counted");

	/* EQ page outside RAM: the event is lost, counted, nothing breaks. */
	{
		struct qbuf eb = mkbuf(0, 12, 1, true);
		uint32_t beqn;

		eb.pbl.addr = NOT_RAM;
		beqn = need(create_eq_pbl(6, EQ2_VEC, false, &eb.pbl, &r), &r, "CREATE_EQ with its page outside RAM");
		mkcq(&d, 2, beqn, 0, 0, 0);
		ov0 = stat1(KITE_STAT_DMA_ERRORS);
		arm_cq(&d, 0, KITE_CQ_ARM_NEXT, 0);
		dcqe(d.cqn, 0);
		tap(stat1(KITE_STAT_DMA_ERRORS) > ov0, "EQE write outside RAM counted as a DMA error");
		nop(&r);
		expect(&r, KITE_CMD_OK, -1, "device fine after the failed EQE write");
	}

	/* Completion EQ overflow -> EQ_OVERFLOW on EQ0. */
	need(create_eq(&eq2, 6, EQ2_VEC, false, &r), &r, "CREATE_EQ (EQ2)");
	mkcq(&c, 8, eq2.eqn, 0, 0, 0);
	mark = neqlog;
	ov0 = stat1(KITE_STAT_EQ_OVERFLOWS);
	for (i = 0; i < 66; i++) {
		arm_cq(&c, i, KITE_CQ_ARM_NEXT, i & 3);
		dcqe(c.cqn, 0);
		setmem32(c.dbrec, i + 1);
	}
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_EQ_OVERFLOW, eq2.eqn) != NULL, "66 events into a 64-entry EQ: EQ_OVERFLOW (obj EQN %u) on EQ0", eq2.eqn);
	tap(stat1(KITE_STAT_EQ_OVERFLOWS) > ov0, "EQ overflow counted");
	eq2.autodb = true;
	n = eq_drain(&eq2);
	tap(n == 64, "EQ2 holds exactly 64 events (%u)", n);
	arm_cq(&c, 66, KITE_CQ_ARM_NEXT, 66 & 3);
	dcqe(c.cqn, 0);
	tap(eq_drain(&eq2) == 1, "after consuming, the overflowed EQ works again");
}

/* ------------------------------------------------------------------ */
/* Group: adaptive interrupt moderation of a completion EQ             */
/* ------------------------------------------------------------------ */

/* The moderated EQ, its CQ and the CQ's counts. */
static struct eqs meq;
static struct cq mcq;
static uint32_t mcq_pi;
static unsigned mcq_sn;

/* A CQE on the moderated EQ's CQ, then 1 us of virtual time. */
static void mod_cqe(void)
{
	char v[32];
	const char *reply = "";

	snprintf(v, sizeof(v), "%u", mcq.cqn);
	if (!qom_set("debug-cqe", v, &reply))
		fatal("qom-set debug-cqe %s failed: %.120s", v, reply);
	mcq_pi++;
	setmem32(mcq.dbrec, mcq_pi);
	clock_step(1000);
}

/* What a driver does after an interrupt: EQEs consumed, EQ and CQ armed. */
static void mod_rearm(void)
{
	eq_drain(&meq);
	eq_doorbell(&meq, true);
	dbrec_arm(&mcq, mcq_pi, KITE_CQ_ARM_NEXT, mcq_sn);
	wr64(db_addr(0), db_cq_arm(mcq.cqn, KITE_CQ_ARM_NEXT, mcq_sn));
	mcq_sn = (mcq_sn + 1) & KITE_CQ_ARM_SN_MASK;
	clock_step(1000);
}

/*
 * A completion event: @before CQEs while the CQ is not armed, the driver's
 * re-arm, then the CQE that raises the event (an interrupt of before + 1).
 */
static void mod_event(unsigned int before)
{
	while (before--)
		mod_cqe();
	mod_rearm();
	mod_cqe();
}

void g_eq_mod(void)
{
	struct kite_cmd_create_eq in = {};
	struct qbuf b = qbuf_for(KITE_EQE_SIZE << 6);
	const char *reply = "";
	struct res r;
	bool fired;
	int i;

	fixture();
	if (!qom_set("debug-cqe", "0", &reply)) {
		skip("model has no debug-cqe property", "EQ moderation tests");
		return;
	}
	/* At most 1 ms held, 4 CQEs per interrupt aimed at. */
	in.cfg = FIELD_PREP(KITE_EQ_CFG_LOG_DEPTH, 6) |
		 FIELD_PREP(KITE_EQ_CFG_VECTOR, EQ2_VEC);
	in.moderation = FIELD_PREP(KITE_EQ_MOD_MAX_US, 1000) |
			FIELD_PREP(KITE_EQ_MOD_TARGET, 4);
	in.pbl = b.pbl;
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, &r);
	if (!expect(&r, KITE_CMD_OK, -1, "CREATE_EQ with moderation (1000 us, 4 CQEs)"))
		return;
	meq = (struct eqs){ .on = true, .eqn = r.result, .log = 6, .buf = b.data };
	mkcq(&mcq, 10, meq.eqn, 0, 0, 0);
	mcq_pi = 0;
	mcq_sn = 0;
	msi_take(EQ2_VEC);

	mod_event(0);
	tap(msi_take(EQ2_VEC), "no hold-off yet: the first completion event interrupts at once");

	/* Two more CQEs while the CQ is not armed: an interrupt of 3 CQEs. */
	mod_event(2);
	tap(msi_take(EQ2_VEC), "an interrupt covering 3 CQEs is raised at once (and starts a 32 us hold-off)");

	/* Within 32 us of it: held; CQEs keep coming to its end: doubled. */
	mod_event(0);
	tap(!msi_take(EQ2_VEC), "an event 2 us after the last interrupt is held");
	clock_step(10000);
	mod_cqe();
	clock_step(10000);
	mod_cqe();
	tap(!msi_take(EQ2_VEC), "still held 24 us after the last interrupt");
	clock_step(15000);
	tap(msi_take(EQ2_VEC), "raised at the end of the 32 us hold-off");

	/* Now 64 us; one CQE, then a pause: raised at the quiet time. */
	mod_event(0);
	fired = msi_take(EQ2_VEC);
	mod_cqe();
	clock_step(6000);
	tap(!fired && !msi_take(EQ2_VEC), "the hold-off doubled: held, one CQE 1 us into the hold");
	clock_step(3000);
	tap(msi_take(EQ2_VEC),
	    "the CQEs paused: raised 8 us (the least quiet time) after the last, long before the 64 us");

	/* Three CQEs 5 us apart, then a pause: raised 4 x 5 us after the last. */
	mod_event(0);
	fired = msi_take(EQ2_VEC);
	for (i = 0; i < 3; i++) {
		clock_step(4000);
		mod_cqe();
	}
	clock_step(18000);
	tap(!fired && !msi_take(EQ2_VEC), "three CQEs 5 us apart in a hold: still held 19 us after the last");
	clock_step(2000);
	tap(msi_take(EQ2_VEC), "raised 20 us (4 times their spacing) after the last: the burst ended");

	/* CQEs every 3 us through the whole hold-off, 4 x target: halved. */
	mod_event(0);
	fired = msi_take(EQ2_VEC);
	for (i = 0; i < 30; i++) {
		clock_step(2000);
		mod_cqe();
		if (msi_take(EQ2_VEC))
			break;
	}
	tap(!fired && i >= 19 && i < 30,
	    "CQEs 3 us apart: held to the end of the kept 64 us hold-off (%d CQEs)", i + 1);
	mod_event(0);
	clock_step(12000);
	fired = msi_take(EQ2_VEC);
	clock_step(6000);
	tap(!fired && msi_take(EQ2_VEC),
	    "a hold of 2 x target CQEs halved the hold-off: a hold with no CQE ends at 16 us, half of 32");

	/* A held interrupt nothing else came in: no hold-off any more. */
	mod_event(0);
	tap(msi_take(EQ2_VEC), "nothing came during the last hold: the next event interrupts at once");

	/* Interrupts of 3 CQEs further apart than the hold-off: it doubles. */
	mod_event(2);
	fired = msi_take(EQ2_VEC);
	clock_step(40000);
	mod_event(2);
	tap(fired && msi_take(EQ2_VEC), "two interrupts of 3 CQEs, 45 us apart: both at once (hold-off 32 us)");
	mod_event(0);
	clock_step(20000);
	fired = msi_take(EQ2_VEC);
	clock_step(13000);
	tap(!fired && msi_take(EQ2_VEC),
	    "the second doubled the hold-off: a hold with no CQE ends at 32 us, half of 64");

	/*
	 * Request and response, one at a time: each interrupt covers the
	 * CQE that raised it and the one after the last (2 CQEs), and a
	 * hold-off never starts, however close together they come.
	 */
	mod_event(0);
	fired = msi_take(EQ2_VEC);
	for (i = 0; i < 10; i++) {
		mod_event(1);
		if (!msi_take(EQ2_VEC))
			fired = false;
	}
	tap(fired, "ten exchanges of 2 CQEs each, 3 us apart: every event interrupts at once");
}
