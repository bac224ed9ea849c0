/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): fault injection, reset, and
 * RC under loss (groups fault, reset, rc_loss).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Group: fault injection                                              */
/* ------------------------------------------------------------------ */

void g_fault(void)
{
	struct res r, r2;
	struct kite_cmd c;
	const char *reply = "";
	unsigned mark;
	uint64_t buf, pat[18];
	const struct kite_eqe *e;
	uint32_t i1, i2, ck1, ck2, ci;
	int i;
	bool stuck;

	std_setup();
	if (!tap(qom_set("fault-cmd-status", "4", &reply), "qom-set fault-cmd-status"))
		diag("%.200s", reply);
	char op[16];
	snprintf(op, sizeof(op), "%d", KITE_CMD_ALLOC_PD);
	if (!tap(qom_set("fault-cmd-opcode", op, &reply), "qom-set fault-cmd-opcode ALLOC_PD"))
		diag("%.200s", reply);
	mark = neqlog;
	alloc_pd(0, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, -1, "faulted ALLOC_PD completes with the injected status");
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(e && e->data == r.status, "its CMD_DONE carries the injected status");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "other opcodes unaffected");
	qom_set("fault-cmd-opcode", "-1", NULL);
	alloc_pd(0, &r);
	tap(r.done && (r.status & 0xff) == 0 && r.result == 1,
	    "fault off: ALLOC_PD returns PDN 1, the faulted command had no effect (got %u)", r.result);

	buf = galloc(4096, 4096);
	memset(pat, 0x5c, sizeof(pat));
	memwrite(buf, pat, sizeof(pat));
	qom_set("fault-cmd-status", "10", NULL);
	snprintf(op, sizeof(op), "%d", KITE_CMD_QUERY_DEVICE);
	qom_set("fault-cmd-opcode", op, NULL);
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out), buf, &r);
	expect(&r, KITE_CMD_E_INTERNAL, -1, "faulted QUERY_DEVICE -> E_INTERNAL");
	memread(buf, pat, sizeof(pat));
	tap(pat[0] == 0x5c5c5c5c5c5c5c5cULL && pat[17] == 0x5c5c5c5c5c5c5c5cULL,
	    "faulted QUERY_DEVICE wrote no output");
	qom_set("fault-cmd-opcode", "-1", NULL);

	/* Hang */
	if (!tap(qom_set("fault-cmd-hang", "true", &reply), "qom-set fault-cmd-hang true"))
		diag("%.200s", reply);
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_NOP;
	ci = reg(RDMA(KITE_RDMA_CMDQ_CI));
	i1 = cmd_post(&c);
	ck1 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	i2 = cmd_post(&c);
	ck2 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	stuck = true;
	for (i = 0; i < 50; i++) {
		clock_step(POLL_STEP_NS * 10);
		if (reg(RDMA(KITE_RDMA_CMDQ_CI)) != ci)
			stuck = false;
	}
	cmd_collect(i1, ck1, &r);
	tap(stuck && !r.done, "fault-cmd-hang: commands stay pending, CI stops at %u", ci);
	qom_set("fault-cmd-hang", "false", NULL);
	tap(wait_ci(cmdq.pi, POLL_MAX), "unhang: pending commands complete without another doorbell (CI %u, PI %u)",
	    reg(RDMA(KITE_RDMA_CMDQ_CI)), cmdq.pi);
	if (reg(RDMA(KITE_RDMA_CMDQ_CI)) != cmdq.pi) {
		wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
		wait_ci(cmdq.pi, POLL_MAX);
	}
	cmd_collect(i1, ck1, &r);
	cmd_collect(i2, ck2, &r2);
	eq_drain(&eq0);
	tap(r.done && r2.done && !(r.status & 0xff) && !(r2.status & 0xff), "both pending NOPs completed OK");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel works after the hang");

	/* Pending commands are dropped by a disable. */
	qom_set("fault-cmd-hang", "true", NULL);
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_ALLOC_PD;
	c.in_len = sizeof(struct kite_cmd_obj);
	i1 = cmd_post(&c);
	ck1 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	clock_step(POLL_STEP_NS * 10);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 0);
	qom_set("fault-cmd-hang", "false", NULL);
	clock_step(POLL_STEP_NS * 10);
	cmd_collect(i1, ck1, &r);
	tap(!r.done && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0, "disable while hung: the pending command is dropped");
	if (!cmdq_enable(6))
		fatal("command queue does not re-enable");
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 2, "the dropped ALLOC_PD had no effect (next PDN %u, expected 2)", r.result);

	/* ... and by a reset. */
	qom_set("fault-cmd-hang", "true", NULL);
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_NOP;
	cmd_post(&c);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	memwrite(BAR4_ADDR + KITE_BAR_DM_SIZE - 8, "devmem!", 8);
	tap(rd64(BAR4_ADDR + KITE_BAR_DM_SIZE - 8) == 0x00216d656d766564ULL,
	    "device memory (BAR4) holds what the host wrote");
	wreg(KITE_REG_CTRL, KITE_CTRL_RESET);
	for (i = 0; i < 20; i++) {
		clock_step(RESET_NS / 4);
		if (reg(KITE_REG_STATUS) & KITE_STATUS_READY)
			break;
	}
	qom_set("fault-cmd-hang", "false", NULL);
	clock_step(POLL_STEP_NS * 10);
	tap((reg(KITE_REG_STATUS) & KITE_STATUS_READY) && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0 &&
	    !(reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE),
	    "reset while hung: READY, queue disabled, nothing completes");
	tap(rd64(BAR4_ADDR + KITE_BAR_DM_SIZE - 8) == 0, "the reset cleared device memory (BAR4)");
	memset(&eq0, 0, sizeof(eq0));
	std_setup();
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel works after reset");
}

/* ------------------------------------------------------------------ */
/* Group: reset discards objects                                       */
/* ------------------------------------------------------------------ */

static void reset_checks(const char *how, uint32_t u1, uint32_t qpn, uint32_t key, uint32_t eqn)
{
	struct res r;
	struct kite_cmd_query_cq_out o;
	uint64_t st[KITE_STAT_COUNT];

	tap(!(reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE), "%s: command queue disabled", how);
	tap(reg(KITE_REG_ETH_MTU) == 1500, "%s: ETH_MTU back to 1500", how);
	tap(reg(KITE_REG_ETH_MAC_LO) == reg(KITE_REG_MAC_LO) && reg(KITE_REG_ETH_MAC_HI) == reg(KITE_REG_MAC_HI) &&
	    reg(KITE_REG_IMR) == 0 && reg(KITE_REG_ETH_CTRL) == 0,
	    "%s: ETH_MAC factory, IMR 0, ETH_CTRL 0", how);
	memset(&eq0, 0, sizeof(eq0));
	if (!cmdq_enable(6))
		fatal("command queue does not enable after %s", how);
	create_eq(&eq0, 6, EQ0_VEC, true, &r);
	expect(&r, KITE_CMD_OK, -1, "%s: EQ0 can be created again", how);
	eq_drain(&eq0);
	stats(st);
	tap(st[KITE_STAT_CMDS] <= 3, "%s: stats reset (CMDS %" PRIu64 ")", how, st[KITE_STAT_CMDS]);
	cmd_obj(KITE_CMD_DEALLOC_PD, fx_pd, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old PD -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DESTROY_QP, qpn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old QP -> E_OBJECT", how);
	query_cq(fx_cq.cqn, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old CQ -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old MR -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old EQ -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old uctx -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DEL_GID, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: GID table emptied", how);
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == fx_pd, "%s: new PD gets the first PDN again (%u)", how, r.result);
}

void g_reset(void)
{
	struct res r;
	struct qpspec s;
	struct qbuf b;
	uint32_t u1, qpn, key;
	int i;

	fixture();
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP");
	b = mkbuf(0, 12, 1, false);
	key = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE, 0, 0, 0, 4096, &b.pbl, &r), &r, "REG_MR");
	wreg(KITE_REG_ETH_MTU, 4000);
	wreg(KITE_REG_ETH_MAC_LO, 0x01020304);
	wreg(KITE_REG_IMR, KITE_INT_LINK);
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);

	wreg(KITE_REG_CTRL, KITE_CTRL_RESET);
	for (i = 0; i < 20; i++) {
		clock_step(RESET_NS / 4);
		if (reg(KITE_REG_STATUS) & KITE_STATUS_READY)
			break;
	}
	tap(reg(KITE_REG_STATUS) & KITE_STATUS_READY, "CTRL.RESET completes");
	reset_checks("CTRL.RESET", u1, qpn, key, eq1.eqn);

	/* Function level reset */
	need(create_eq(&eq1, 6, EQ1_VEC, false, &r), &r, "CREATE_EQ (EQ1)");
	fx_pd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	fx_pd = 1;
	need(create_cq(&fx_cq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	need(add_gid(0, KITE_NET_ROCE_V2_IPV4, &r), &r, "ADD_GID 0");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP");
	key = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE, 0, 0, 0, 4096, &b.pbl, &r), &r, "REG_MR");
	cfg_wr16(0x80 + 8, 0x8000);	/* DEVCTL.BCR_FLR */
	dev_init();
	reset_checks("FLR", u1, qpn, key, eq1.eqn);
}

/* ------------------------------------------------------------------ */
/* RC under loss: duplicates, stale responses, loss on demand          */
/* ------------------------------------------------------------------ */

static void qom_diag(const char *prop)
{
	char buf[512];

	if (qom_get(prop, buf, sizeof(buf)))
		diag("%s: %s", prop, buf);
}

static bool qom_set_u(const char *prop, unsigned v)
{
	char s[32];

	snprintf(s, sizeof(s), "%u", v);
	return qom_set(prop, s, NULL);
}

/* A READ request (RETH) from the peer to QP @qpn. */
static void w_read_req(uint32_t qpn, uint32_t psn, uint64_t va, uint32_t key, uint32_t len)
{
	static uint8_t f[256];
	uint8_t ext[16];

	put32(ext, (uint32_t)(va >> 32));
	put32(ext + 4, (uint32_t)va);
	put32(ext + 8, key);
	put32(ext + 12, len);
	wire_send(f, w_frame(f, 0x0c, qpn, psn, true, ext, 16, NULL, 0));
}

/* A FETCH_ADD from the peer. */
static void w_fadd(uint32_t qpn, uint32_t psn, uint64_t va, uint32_t key, uint64_t add)
{
	static uint8_t f[256];
	uint8_t ext[28];

	memset(ext, 0, sizeof(ext));
	put32(ext, (uint32_t)(va >> 32));
	put32(ext + 4, (uint32_t)va);
	put32(ext + 8, key);
	put32(ext + 12, (uint32_t)(add >> 32));
	put32(ext + 16, (uint32_t)add);
	wire_send(f, w_frame(f, 0x14, qpn, psn, true, ext, 28, NULL, 0));
}

/* A READ response MIDDLE (no AETH) from the peer. */
static void w_mid(uint32_t qpn, uint32_t psn, const uint8_t *pl, size_t len)
{
	static uint8_t f[2048];

	wire_send(f, w_frame(f, 0x0e, qpn, psn, false, NULL, 0, pl, len));
	wire_settle();
}

#define F_VA	0x5000000000ULL
/* The E.mr offset where F_VA maps (its page 0), as an iova of E.mr. */
#define F_IOVA(off)	(T_IOVA - 0x100 + (off))

/* The model as the responder: duplicates after invalidation. */
static void rc_loss_responder(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[1500], f[2048], pl[128];
	const uint32_t acc = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			     KITE_ACCESS_REMOTE_READ;
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a;
	struct res r;
	uint32_t epsn = T_RC_PSN, fkey, key, key2;
	uint64_t d0, rp0;
	uint8_t ext[20];
	uint16_t idx;
	ssize_t n;
	bool ok;

	rc_wire_qp(&a, &scq, &rcq, peer);
	fkey = need(alloc_mr(fx_pd, 16, 0x10, &r), &r, "ALLOC_MR (16 pages)");
	key = (fkey & ~0xffu) | 0x9a;
	idx = post_reg_mr(&a, F_VA, 8 * 4096, key, acc, E.mr.pbl.addr, 8);
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_REG_MR, 0), "REG_MR WQE: fast-registered key");

	/* A READ of 1500 bytes through the fast-registered key. */
	fill_pattern(F_IOVA(6 * 4096), 1500, 0x31, want);
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 1500);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && !memcmp(f + 58, want, 1024);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f && !memcmp(f + 58, want + 1024, 476),
	    "READ through a fast-registered key: FIRST + LAST, data right");

	/* SEND with invalidate from the peer: the key is invalid now. */
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);
	put32(ext, key);
	wire_send(f, w_frame(f, 0x17, a.qpn, epsn + 2, true, ext, 4, (const uint8_t *)"inv", 3));
	n = w_next(f, sizeof(f));
	ok = tcq_next(&rcq, &c);
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f && ok &&
	    cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, a.qpn, 0) && c.inv_rkey == key,
	    "SEND_ONLY_INV for the key: ACKed, RESP_SEND_INV");

	/* The READ again (the requester went back): answered, the key is not re-checked. */
	d0 = qom_count("rc-counts", "dup-replays");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 1500);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == epsn &&
	     !memcmp(f + 58, want, 1024);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f && !memcmp(f + 58, want + 1024, 476) &&
	    qp_state(a.qpn) == KITE_QPS_RTS,
	    "duplicate READ after the key was invalidated: answered again (no NAK), QP RTS");
	w_read_req(a.qpn, (epsn + 1) & 0xffffff, F_VA + 6 * 4096 + 1024, key, 476);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 476 + 4 && f[42] == 0x10 && be24(f + 51) == ((epsn + 1) & 0xffffff) &&
	    !memcmp(f + 58, want + 1024, 476),
	    "duplicate READ from its middle after invalidation: READ_RESP_ONLY, 476 bytes");
	tap(qom_count("rc-counts", "dup-replays") == d0 + 2, "rc-counts: 2 duplicate READs replayed");

	/* Duplicates that do not match the accepted READ: dropped, never NAKed. */
	d0 = qom_count("rc-counts", "dup-dropped");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key ^ 0x100, 1500);
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 2000);
	w_read_req(a.qpn, epsn, F_VA + 5 * 4096, key, 1500);
	tap(w_next(f, sizeof(f)) < 0 && qp_state(a.qpn) == KITE_QPS_RTS &&
	    qom_count("rc-counts", "dup-dropped") == d0 + 3,
	    "duplicate READ with another key, a longer or another range: dropped, no NAK, QP RTS");

	/* The MR registered again: a duplicate of the old READ is no longer answered. */
	key2 = (fkey & ~0xffu) | 0x9b;
	idx = post_reg_mr(&a, F_VA, 8 * 4096, key2, acc, E.mr.pbl.addr, 8);
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_REG_MR, 0), "REG_MR WQE again (tag 0x9b)");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 1500);
	tap(w_next(f, sizeof(f)) < 0 && qp_state(a.qpn) == KITE_QPS_RTS,
	    "duplicate READ of a key whose MR was registered again: not answered, QP RTS");
	epsn = (epsn + 3) & 0xffffff;

	/* WRITE with immediate, its key invalidated, then a duplicate of it. */
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	memset(pl, 0x5e, sizeof(pl));
	put32(ext, (uint32_t)(F_VA >> 32));
	put32(ext + 4, (uint32_t)F_VA + 7 * 4096);
	put32(ext + 8, key2);
	put32(ext + 12, 100);
	put32(ext + 16, 0x1234abcd);
	wire_send(f, w_frame(f, 0x0b, a.qpn, epsn, true, ext, 20, pl, 100));
	n = w_next(f, sizeof(f));
	ok = tcq_next(&rcq, &c);
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f && ok &&
	    cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, a.qpn, 0) && mem_eq(F_IOVA(7 * 4096), pl, 100),
	    "WRITE_ONLY_IMM through the new key: ACK, RESP_WRITE_IMM, data");
	put32(ext, key2);
	wire_send(f, w_frame(f, 0x17, a.qpn, epsn + 1, true, ext, 4, (const uint8_t *)"inv", 3));
	n = w_next(f, sizeof(f));
	ok = tcq_next(&rcq, &c);
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, a.qpn, 0),
	    "SEND_ONLY_INV invalidates it");
	put32(ext, (uint32_t)(F_VA >> 32));
	put32(ext + 4, (uint32_t)F_VA + 7 * 4096);
	put32(ext + 8, key2);
	memset(pl, 0xa1, sizeof(pl));
	wire_send(f, w_frame(f, 0x0b, a.qpn, epsn, true, ext, 20, pl, 100));
	n = w_next(f, sizeof(f));
	memset(pl, 0x5e, sizeof(pl));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f &&
	    be24(f + 51) == ((epsn + 1) & 0xffffff) && tcq_drain(&rcq) == 0 &&
	    mem_eq(F_IOVA(7 * 4096), pl, 100) && qp_state(a.qpn) == KITE_QPS_RTS,
	    "duplicate WRITE_ONLY_IMM after invalidation: ACK of the last PSN, no CQE, "
	    "not written again, QP RTS");
	epsn = (epsn + 2) & 0xffffff;

	/* Two atomics, then duplicates of both (the older one too). */
	set64(DST + 64, 10);
	w_fadd(a.qpn, epsn, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 10;
	w_fadd(a.qpn, epsn + 1, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 11 && mem64(DST + 64) == 12,
	    "two FETCH_ADDs: originals 10 and 11, memory 12");
	w_fadd(a.qpn, epsn, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 12 + 4 && f[42] == 0x12 && be24(f + 51) == epsn && be32(f + 62) == 10;
	w_fadd(a.qpn, epsn + 1, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 11 && mem64(DST + 64) == 12,
	    "duplicates of both (the older first): originals 10 and 11 replayed, not executed");
	epsn = (epsn + 2) & 0xffffff;

	/* A new READ through the invalidated key is still an access error. */
	rp0 = qom_count("rc-counts", "dup-requests");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key2, 100);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x62 && qp_state(a.qpn) == KITE_QPS_ERR &&
	    qom_count("rc-counts", "dup-requests") == rp0,
	    "a new READ through the invalidated key: NAK remote access error, QP in ERR");
}

/*
 * CQs @scq and @rcq and RC QP @a at RTS towards the wire's peer, the model
 * as requester: local ACK timeout @timeout, retry_cnt @retry.
 */
static void rc_req_qp(struct tqp *a, struct tcq *scq, struct tcq *rcq, uint8_t timeout,
		      uint8_t retry, const char *what)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	struct res r;

	tcq_make(scq, 6);
	tcq_make(rcq, 6);
	need(tqp_create(a, KITE_QPT_RC, fx_pd, scq->c.cqn, rcq->c.cqn, 0, &r), &r, what);
	rc_rts_rd(a, W_PEER_QPN, peer, timeout, retry, 6, 4);
}

/* The model as the requester: gaps, stale responses, reordered ACKs. */
static void rc_loss_requester(void)
{
	static uint8_t want[4000];
	struct kite_wqe_sge g[1];
	struct tcq scq, rcq;
	struct tqp a;
	uint32_t psn = T_RC_PSN;
	uint64_t t0, e0, s0;
	uint16_t i1, i2, i3;
	unsigned n, k;
	bool ok;

	rc_req_qp(&a, &scq, &rcq, 14, 1, "CREATE_QP RC (retry_cnt 1)");

	/* A READ of 4 responses; the second is lost. */
	fill_pattern(DST, 4000, 0x47, want);
	memzero(t_bus(RBUF), 4000);
	g[0] = sge(4000, E.lkey, RBUF);
	i1 = post_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x9000, 0x77aa01, 0, 0, g, 1);
	n = w_collect(false, 0, W_NONE);
	tap(n == 1 && wlog[0].op == 0x0c && wlog[0].psn == psn, "READ 4000: one READ request");
	t0 = qom_count("rc-counts", "timeouts");
	e0 = qom_count("rc-counts", "early-retries");
	w_resp(a.qpn, 0x0d, psn, want, 1024);
	w_mid(a.qpn, psn + 2, want + 2048, 1024);
	w_resp(a.qpn, 0x0f, psn + 3, want + 3072, 928);
	n = w_collect(false, 0, W_NONE);
	ok = n == 1 && wlog[0].op == 0x0c && wlog[0].psn == ((psn + 1) & 0xffffff) &&
	     be32(wlog[0].fr + 58) == 0x9000 + 1024 && be32(wlog[0].fr + 66) == 2976;
	if (!tap(ok && qom_count("rc-counts", "timeouts") == t0 &&
		 qom_count("rc-counts", "early-retries") == e0 + 1,
		 "gap in the READ responses: asked again at once from the first missing PSN "
		 "(PSN + 1, va + 1024, 2976 bytes), one retry, no timeout"))
		wlog_diag(n);
	w_mid(a.qpn, psn + 1, want + 1024, 1024);
	w_mid(a.qpn, psn + 2, want + 2048, 1024);
	w_resp(a.qpn, 0x0f, psn + 3, want + 3072, 928);
	tap(req_ok(&scq, a.qpn, i1, KITE_WQE_OP_RDMA_READ, 4000) && mem_eq(RBUF, want, 4000),
	    "the rest of the READ: completes, 4000 bytes right");

	/* Stale responses and ACKs for it: dropped without effect. */
	s0 = qom_count("rc-counts", "stale");
	w_resp(a.qpn, 0x0d, psn, want, 1024);
	w_mid(a.qpn, psn + 2, want + 2048, 1024);
	w_ack(a.qpn, psn + 3, 0x1f);
	w_ack(a.qpn, psn + 1, 0x60);
	n = w_collect(false, 0, W_NONE);
	tap(n == 0 && tcq_drain(&scq) == 0 && qp_state(a.qpn) == KITE_QPS_RTS &&
	    qom_count("rc-counts", "stale") == s0 + 4,
	    "stale READ responses, ACK and NAK after completion: ignored (4 stale), nothing sent");
	psn += 4;

	/* Three READs; the first answer is lost: one go-back, not three (retry_cnt 1). */
	g[0] = sge(100, E.lkey, RBUF);
	i1 = write_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF + 100);
	i2 = write_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1100, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF + 200);
	i3 = write_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1200, 0x77aa01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	tap(n == 3, "three READs in flight (%u requests)", n);
	w_resp(a.qpn, 0x10, psn + 1, want + 100, 100);
	w_resp(a.qpn, 0x10, psn + 2, want + 200, 100);
	n = w_collect(false, 0, W_NONE);
	ok = n == 3;
	for (k = 0; ok && k < 3; k++)
		ok = wlog[k].op == 0x0c && wlog[k].psn == ((psn + k) & 0xffffff);
	if (!tap(ok && qp_state(a.qpn) == KITE_QPS_RTS,
		 "answers to the 2nd and 3rd READ, the 1st lost: the three asked again once, "
		 "QP RTS with retry_cnt 1"))
		wlog_diag(n);
	w_resp(a.qpn, 0x10, psn, want, 100);
	w_resp(a.qpn, 0x10, psn + 1, want + 100, 100);
	w_resp(a.qpn, 0x10, psn + 2, want + 200, 100);
	tap(req_ok(&scq, a.qpn, i1, KITE_WQE_OP_RDMA_READ, 100) &&
	    req_ok(&scq, a.qpn, i2, KITE_WQE_OP_RDMA_READ, 100) &&
	    req_ok(&scq, a.qpn, i3, KITE_WQE_OP_RDMA_READ, 100) && mem_eq(RBUF, want, 300),
	    "answered again: the three complete in order, data right");
	psn += 3;

	/* Three WRITEs (2 + 1 + 3 packets); ACKs reordered, a stale NAK. */
	g[0] = sge(1500, E.lkey, SRC);
	i1 = write_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i2 = write_rc(&a, WR | SIG, 0, 0x20000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(2500, E.lkey, SRC);
	i3 = write_rc(&a, WR | SIG, 0, 0x30000, 0x77aa01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	tap(n == 6, "three WRITEs: 6 packets (%u)", n);
	w_ack(a.qpn, psn + 2, 0x1f);
	w_ack(a.qpn, psn + 1, 0x1f);
	tap(req_ok(&scq, a.qpn, i1, WR, 0) && req_ok(&scq, a.qpn, i2, WR, 0) &&
	    tcq_drain(&scq) == 0, "ACK for PSN + 2, then a reordered older ACK: two complete, once");
	w_ack(a.qpn, psn + 5, 0x1f);
	w_ack(a.qpn, psn + 3, 0x1f);
	w_ack(a.qpn, psn + 4, 0x60);
	n = w_collect(false, 0, W_NONE);
	tap(req_ok(&scq, a.qpn, i3, WR, 0) && tcq_drain(&scq) == 0 && n == 0 &&
	    qp_state(a.qpn) == KITE_QPS_RTS,
	    "ACK for the last PSN, then an older ACK and a NAK: the third completes, nothing resent");
}

/*
 * Take the RoCEv2 frames the model sends into wlog[@n...]: until at least
 * @want have come (or 5 s of real time passed) and then none for @idle_ms.
 * Virtual time does not move. Returns the new count.
 */
static unsigned w_drain(unsigned n, unsigned want, unsigned idle_ms)
{
	static uint8_t f[2048];
	unsigned idle = 0, waited = 0;
	ssize_t len;

	while ((n < want && waited < 5000) || idle < idle_ms) {
		usleep(1000);
		waited++;
		idle++;
		while ((len = recv(wire_fd, f, sizeof(f), MSG_DONTWAIT)) > 0) {
			if (!w_roce(f, len))
				continue;
			if (n < ARRAY_SIZE(wlog))
				wlog_add(n, f, len);
			n++;
			idle = 0;
		}
	}
	return n;
}

/*
 * The RoCEv2 frames the model sends while virtual time moves on by @ns in
 * steps of @step (0: now only), logged in wlog. Unlike w_collect(), the
 * clock moves by the steps alone: after each, the frames are taken until
 * none came for 10 ms of real time.
 */
static unsigned w_collect_for(uint64_t ns, uint64_t step)
{
	unsigned n = 0;
	uint64_t t = 0;

	for (;;) {
		n = w_drain(n, 0, 10);
		if (t >= ns)
			return n;
		clock_step(step);
		t += step;
	}
}

/*
 * The responder's queue of responses owed is a ring of 257 entries: its
 * head and count must wrap at 257, not at 256. Bursts of three READ
 * requests of 16 packets keep responses queued while the head goes round
 * the ring twice; the responses must leave in PSN order, each from its
 * own request.
 */
static void rc_loss_rsp_ring(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[16384];
	struct tcq scq, rcq;
	struct tqp a;
	uint32_t epsn = T_RC_PSN, bad_psn = 0;
	unsigned burst, k, n = 0, bad = 0;

	rc_wire_qp(&a, &scq, &rcq, peer);
	fill_pattern(DST, sizeof(want), 0x5d, want);
	for (burst = 0; burst < 180 && !bad; burst++) {
		for (k = 0; k < 3; k++)
			w_read_req(a.qpn, (epsn + 16 * k) & 0xffffff, DST, R.rkey, sizeof(want));
		n = w_drain(0, 48, 10);
		for (k = 0; k < 48 && !bad; k++) {
			if (n != 48 || wlog[k].psn != ((epsn + k) & 0xffffff) ||
			    memcmp(wlog[k].fr + 54 + (k % 16 == 0 || k % 16 == 15 ? 4 : 0),
				   want + (k % 16) * 1024, 64)) {
				bad = burst * 48 + k + 1;
				bad_psn = k < n ? wlog[k].psn : 0;
			}
		}
		epsn = (epsn + 48) & 0xffffff;
	}
	if (!tap(!bad && qp_state(a.qpn) == KITE_QPS_RTS,
		 "540 READ requests of 16 KiB in bursts of 3 (the response ring wraps twice): "
		 "answered in PSN order with the right data (first wrong: frame #%u, PSN 0x%06x, "
		 "%u frames in its burst)", bad, bad_psn, n))
		wlog_diag(n < 64 ? n : 64);
}

/*
 * Adaptive retransmission (prm_qp.rst): a lost packet is probed for after
 * max(2 ms, SRTT + 4 RTTVAR), twice as long for each further probe, without
 * counting a retry; the local ACK timeout (4.3 s here, retry_cnt 0) still
 * ends a QP whose peer stopped answering. With "rc-rto-adaptive" off only
 * the timeout retransmits.
 */
static void rc_loss_probe(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[100];
	struct kite_wqe_sge g[1];
	struct tcq scq, rcq;
	struct tqp a, b;
	struct res r;
	uint32_t psn = T_RC_PSN;
	uint64_t p0, t0, r0;
	unsigned n, n2, n3, k;
	uint16_t idx;
	bool ok;

	rc_req_qp(&a, &scq, &rcq, 20, 0, "CREATE_QP RC (local ACK timeout 4.3 s, retry_cnt 0)");
	g[0] = sge(100, E.lkey, SRC);

	/* The first round trip: a WRITE acknowledged after 100 us. */
	idx = post_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	clock_step(100000);
	w_ack(a.qpn, psn, 0x1f);
	tap(n == 1 && req_ok(&scq, a.qpn, idx, WR, 0),
	    "probe: a WRITE acknowledged after 100 us completes (round trip measured)");
	psn = (psn + 1) & 0xffffff;

	/* The next one is lost: probed after 2 ms, not after 4.3 s. */
	p0 = qom_count("rc-counts", "probes");
	t0 = qom_count("rc-counts", "timeouts");
	r0 = qom_count("rc-counts", "retries");
	idx = post_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	n2 = w_collect_for(1500000, 500000);
	n3 = w_collect_for(1000000, 500000);
	ok = n == 1 && n2 == 0 && n3 == 1 && wlog[0].psn == psn && wlog[0].op == 0x0a;
	if (!tap(ok && qom_count("rc-counts", "probes") == p0 + 1 &&
		 qom_count("rc-counts", "retries") == r0 &&
		 qom_count("rc-counts", "timeouts") == t0,
		 "probe: a lost WRITE is sent again 2 ms later (not at 1.5 ms), counted as a "
		 "probe, no retry or timeout counted (%u, %u, %u frames)", n, n2, n3))
		wlog_diag(n3);
	/* Lost again: the second probe waits twice as long. */
	n2 = w_collect_for(3000000, 500000);
	n3 = w_collect_for(1000000, 500000);
	tap(n2 == 0 && n3 == 1 && wlog[0].psn == psn &&
	    qom_count("rc-counts", "probes") == p0 + 2,
	    "probe: lost again, the second probe comes 4 ms later (%u, %u frames)", n2, n3);
	w_ack(a.qpn, psn, 0x1f);
	tap(req_ok(&scq, a.qpn, idx, WR, 0) && qp_state(a.qpn) == KITE_QPS_RTS,
	    "probe: acknowledged, the WRITE completes with retry_cnt 0: probes are no retries");
	psn = (psn + 1) & 0xffffff;

	/* A lost READ request: probed, answered, completes. */
	fill_pattern(DST, 100, 0x52, want);
	memzero(t_bus(RBUF), 100);
	g[0] = sge(100, E.lkey, RBUF);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x9000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	n3 = w_collect_for(5000000, 500000);
	ok = n == 1 && n3 == 1 && wlog[0].op == 0x0c && wlog[0].psn == psn;
	w_resp(a.qpn, 0x10, psn, want, 100);
	if (!tap(ok && req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_READ, 100) &&
		 mem_eq(RBUF, want, 100),
		 "probe: a lost READ request is asked again within 5 ms; answered, the READ "
		 "completes (%u, %u frames)", n, n3))
		wlog_diag(n3);
	psn = (psn + 1) & 0xffffff;

	/* A peer that stopped answering: 8 probes, then RETRY_EXC at the timeout. */
	p0 = qom_count("rc-counts", "probes");
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	n2 = w_collect_for(4000000000ULL, 10000000);
	ok = tcq_drain(&scq) == 0;
	n3 = w_collect_for(400000000ULL, 10000000);
	tap(n == 1 && n2 == 8 && ok && qom_count("rc-counts", "probes") == p0 + 8 &&
	    req_err(&scq, a.qpn, idx, KITE_SYND_RETRY_EXC) && qp_state(a.qpn) == KITE_QPS_ERR,
	    "probe: no answer at all: 8 probes, nothing completes before the 4.3 s timeout, "
	    "then RETRY_EXC with retry_cnt 0 (%u probes, %u frames after 4 s)", n2, n3);

	/* rc-rto-adaptive off: only the local ACK timer retransmits. */
	need(tqp_create(&b, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (local ACK timeout 67 ms)");
	rc_rts_rd(&b, W_PEER_QPN, peer, 14, 1, 6, 4);
	psn = T_RC_PSN;
	ok = qom_set("rc-rto-adaptive", "false", NULL);
	for (k = 0; k < 2; k++) {
		idx = post_rc(&b, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
		n = w_collect_for(0, 0);
		if (k)
			n2 = w_collect_for(60000000, 1000000);
		n3 = w_collect_for(10000000, 1000000);
		w_ack(b.qpn, psn, 0x1f);
		ok = ok && n == 1 && req_ok(&scq, b.qpn, idx, WR, 0);
		psn = (psn + 1) & 0xffffff;
	}
	tap(ok && n2 == 0 && n3 == 1,
	    "probe: rc-rto-adaptive off: a lost WRITE is sent again only at the 67 ms timeout "
	    "(%u frames before, %u after)", n2, n3);
	qom_set("rc-rto-adaptive", "true", NULL);
}

/* The loss properties on the wire paths, deterministic settings. */
static void rc_loss_props(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[2048];
	static const uint8_t swapped[3][3] = { { 0x07, 1, 0 }, { 0x06, 0, 0 }, { 0x08, 2, 1 } };
	const char *reply = "";
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a;
	uint32_t epsn = T_RC_PSN;
	uint16_t idx;
	ssize_t n;
	unsigned k;
	bool ok;

	tap(!qom_set("loss-rx-drop", "1001", &reply) && strstr(reply, "per mille"),
	    "loss-rx-drop=1001: refused (per mille)");
	tap(qom_set_u("loss-seed", 7) && qom_count("loss-counts", "rx-dropped") == 0,
	    "loss-seed set; loss-counts readable, all 0");
	rc_wire_qp(&a, &scq, &rcq, peer);
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);

	/* rx drop 1000: a SEND from the wire is lost. */
	qom_set_u("loss-rx-drop", 1000);
	wire_send(f, w_frame(f, 0x04, a.qpn, epsn, true, NULL, 0, (const uint8_t *)"lost", 4));
	wire_settle();
	tap(w_next(f, sizeof(f)) < 0 && qom_count("loss-counts", "rx-dropped") == 1,
	    "loss-rx-drop=1000: the SEND is lost (no ACK), rx-dropped=1");
	qom_set_u("loss-rx-drop", 0);

	/* rx dup 1000: delivered twice, executed once; the ACKs coalesce. */
	qom_set_u("loss-rx-dup", 1000);
	k = (unsigned)qom_count("rc-counts", "dup-requests");
	wire_send(f, w_frame(f, 0x04, a.qpn, epsn, true, NULL, 0, (const uint8_t *)"twice", 5));
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f && be24(f + 51) == epsn;
	tap(ok && tcq_next(&rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, a.qpn, 0) &&
	    tcq_drain(&rcq) == 0 && qom_count("loss-counts", "rx-duplicated") == 1 &&
	    qom_count("rc-counts", "dup-requests") == k + 1,
	    "loss-rx-dup=1000: the SEND arrives twice: executed once (one CQE), the second a "
	    "duplicate, ACKed");
	while (w_next(f, sizeof(f)) > 0)
		;
	qom_set_u("loss-rx-dup", 0);

	/* tx reorder 1000: frames leave pairwise swapped, the last one after 100 us. */
	qom_set_u("loss-tx-reorder", 1000);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	n = w_collect(false, 0, W_NONE);
	qom_set_u("loss-tx-reorder", 0);
	if (!tap(wlog_is(0, n, T_RC_PSN, swapped, 3) &&
		 qom_count("loss-counts", "tx-reordered") == 2,
		 "loss-tx-reorder=1000: WRITE MIDDLE before FIRST, LAST released by the timer"))
		wlog_diag(n);
	w_ack(a.qpn, T_RC_PSN + 2, 0x1f);
	tap(req_ok(&scq, a.qpn, idx, WR, 0), "the WRITE completes");

	/* tx drop 1000: nothing leaves; the retransmission after it does. */
	qom_set_u("loss-tx-drop", 1000);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	n = w_collect(false, 0, W_NONE);
	ok = n == 0 && qom_count("loss-counts", "tx-dropped") == 1;
	qom_set_u("loss-tx-drop", 0);
	run_for(70000000);
	n = w_collect(false, 0, W_NONE);
	for (k = 0; k < n && wlog[k].op != 0x0a; k++)
		;
	tap(ok && k < n, "loss-tx-drop=1000: the WRITE is lost; after the timeout it is resent");
	w_ack(a.qpn, T_RC_PSN + 3, 0x1f);
	tap(req_ok(&scq, a.qpn, idx, WR, 0), "and completes");
}

/* The next @n CQEs of @q, waiting up to @max_ns of virtual time. */
static unsigned wait_cqes(struct tcq *q, struct kite_cqe *out, unsigned n, uint64_t max_ns)
{
	unsigned got = 0;
	uint64_t t = 0;

	while (got < n && t <= max_ns) {
		struct kite_cqe c = cqe_at(&q->c, q->c.b.data, q->ci);
		uint32_t want = ((q->ci >> q->c.log) & 1) ^ 1;

		if ((c.op_own & KITE_CQE_OWNER) == want &&
		    FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_INVALID) {
			q->ci++;
			setmem32(q->c.dbrec, q->ci & KITE_CQ_INDEX_MASK);
			out[got++] = c;
			continue;
		}
		clock_step(100000);
		t += 100000;
	}
	return got;
}

/*
 * Two QPs over the loopback with loss on the tx path: batches of WRITE,
 * READ (4 packets each), SEND (2) and FETCH_ADD, data compared.
 */
static void rc_loss_run(unsigned drop, unsigned dup, unsigned reorder, unsigned batches)
{
	static uint8_t wr[2][4000], rd[4000], sd[2][2000];
	struct kite_cqe cq[16];
	struct kite_wqe_sge g[1];
	struct rcpair P;
	struct res r;
	uint64_t counter = 0, r0 = qom_count("rc-counts", "retries");
	uint64_t t0 = qom_count("rc-counts", "timeouts");
	uint64_t d0 = qom_count("loss-counts", "tx-dropped");
	unsigned b, k, ok_wqes = 0, bad = 0, got;
	uint16_t idx[8];

	tcq_make(&P.scq, 6);
	tcq_make(&P.rcq, 6);
	need(tqp_create(&P.a, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create(&P.b, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC B");
	/* Local ACK timeout 1 ms (8), retry_cnt 7, rnr_retry 7. */
	rc_rts(&P.a, P.b.qpn, MAC, 8, 7, 7);
	rc_rts(&P.b, P.a.qpn, MAC, 8, 7, 7);
	set64(DST + 12288, 0);
	qom_set_u("loss-tx-drop", drop);
	qom_set_u("loss-tx-dup", dup);
	qom_set_u("loss-tx-reorder", reorder);
	for (b = 0; b < batches && !bad; b++) {
		fill_pattern(DST + 4096, 4000, (uint8_t)(0x61 + b), rd);
		for (k = 0; k < 2; k++) {
			fill_pattern(SRC + k * 4096, 4000, (uint8_t)(0x10 + b * 2 + k), wr[k]);
			fill_pattern(SRC + 8192 + k * 2048, 2000, (uint8_t)(0x90 + b * 2 + k), sd[k]);
			memzero(t_bus(RBUF + k * 4096), 4000);
			g[0] = sge(2048, E.lkey, RBUF + 8192 + k * 2048);
			post_recv(&P.b, g, 1);
		}
		for (k = 0; k < 2; k++) {
			g[0] = sge(4000, E.lkey, SRC + k * 4096);
			idx[4 * k] = write_rc(&P.a, WR | SIG, 0, DST + k * 8192, R.rkey, 0, 0, g, 1);
			g[0] = sge(4000, E.lkey, RBUF + k * 4096);
			idx[4 * k + 1] = write_rc(&P.a, KITE_WQE_OP_RDMA_READ | SIG, 0, DST + 4096,
						  R.rkey, 0, 0, g, 1);
			g[0] = sge(2000, E.lkey, SRC + 8192 + k * 2048);
			idx[4 * k + 2] = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
			g[0] = sge(8, E.lkey, SRC + 12288 + k * 8);
			idx[4 * k + 3] = write_rc(&P.a, KITE_WQE_OP_ATOMIC_FA | SIG, 0, DST + 12288,
						  R.rkey, 1, 0, g, 1);
		}
		ring_sq(&P.a);
		got = wait_cqes(&P.scq, cq, 8, 2000000000ULL);
		for (k = 0; k < got; k++) {
			if (FIELD_GET(KITE_CQE_OPCODE, cq[k].op_own) != KITE_CQE_OP_REQ ||
			    cq[k].wqe_idx != idx[k]) {
				cqe_diag("send", &cq[k]);
				bad++;
			} else {
				ok_wqes++;
			}
		}
		bad += got != 8;
		got = wait_cqes(&P.rcq, cq, 2, 100000000ULL);
		for (k = 0; k < got; k++)
			bad += FIELD_GET(KITE_CQE_OPCODE, cq[k].op_own) != KITE_CQE_OP_RESP_SEND ||
			       cq[k].byte_len != 2000;
		bad += got != 2;
		for (k = 0; k < 2 && !bad; k++) {
			bad += !mem_eq(DST + k * 8192, wr[k], 4000);
			bad += !mem_eq(RBUF + k * 4096, rd, 4000);
			bad += !mem_eq(RBUF + 8192 + k * 2048, sd[k], 2000);
			bad += mem64(SRC + 12288 + k * 8) != counter++;
		}
		if (bad)
			diag("batch %u: %u WQEs completed, %u problems", b, got, bad);
	}
	qom_set_u("loss-tx-drop", 0);
	qom_set_u("loss-tx-dup", 0);
	qom_set_u("loss-tx-reorder", 0);
	tap(!bad && mem64(DST + 12288) == counter && qp_state(P.a.qpn) == KITE_QPS_RTS &&
	    qp_state(P.b.qpn) == KITE_QPS_RTS,
	    "%u.%u%% loss (dup %u, reorder %u per mille), loopback: %u WQEs (WRITE, READ, SEND, "
	    "FETCH_ADD) complete without error, data and atomic results right, both QPs RTS",
	    drop / 10, drop % 10, dup, reorder, ok_wqes);
	diag("frames dropped %" PRIu64 ", go-back-N %" PRIu64 " (timeouts %" PRIu64 ")",
	     qom_count("loss-counts", "tx-dropped") - d0, qom_count("rc-counts", "retries") - r0,
	     qom_count("rc-counts", "timeouts") - t0);
}

void g_rc_loss(void)
{
	eng_setup();
	rc_keys();
	rc_loss_responder();
	rc_loss_requester();
	rc_loss_probe();
	rc_loss_rsp_ring();
	rc_loss_props();
	rc_loss_run(10, 0, 0, 20);
	rc_loss_run(50, 0, 0, 20);
	rc_loss_run(100, 0, 0, 20);
	rc_loss_run(50, 20, 20, 20);
	qom_diag("loss-counts");
	qom_diag("rc-counts");
}
