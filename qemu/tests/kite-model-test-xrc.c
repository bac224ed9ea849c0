/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): XRC (group xrc): XRC
 * domains, XRC SRQs, initiator and target QPs, and traffic between them
 * over loopback.
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

#define SRQ_OFF(f)	offsetof(struct kite_cmd_create_srq, f)
#define CQP_OFF(f)	offsetof(struct kite_cmd_create_qp, f)

/* RC bring-up masks (rc_rts_rd()) less what an XRC QP may leave out. */
#define XRC_INIT_MASK	0x0001du
#define XRC_RTR_MASK	0x1a8c1u
#define XRC_RTS_MASK	0x05701u
#define INI_RTR_MASK	(XRC_RTR_MASK & ~(KITE_QP_ATTR_MAX_DEST_RD_ATOMIC | \
					  KITE_QP_ATTR_MIN_RNR_TIMER))
#define TGT_RTS_MASK	(XRC_RTS_MASK & ~(KITE_QP_ATTR_RETRY_CNT | \
					  KITE_QP_ATTR_RNR_RETRY | \
					  KITE_QP_ATTR_MAX_QP_RD_ATOMIC))

static int xrcd_alloc(struct res *r)
{
	return run(KITE_CMD_ALLOC_XRCD, NULL, 0, 0, 0, r);
}

/* An XRC SRQ (@flags KITE_SRQ_F_XRC) or a malformed variant, via @in. */
static int xsrq_create(struct tsrq *q, uint32_t pdn, uint32_t uctx, uint32_t flags,
		       uint32_t xrcd, uint32_t cqn, uint32_t rsvd, struct res *r)
{
	struct kite_cmd_create_srq in = srq_in(q, pdn, 5, 7, 0);
	int c;

	in.uctx = uctx;
	in.flags = flags;
	in.xrcd = xrcd;
	in.cqn = cqn;
	in.rsvd = rsvd;
	c = srq_create_in(&in, sizeof(in), r);
	if (c == KITE_CMD_OK)
		q->srqn = r->result;
	return c;
}

/* An XRC initiator: an SQ of 16 WQEs of 256 bytes, no RQ, no receive CQ. */
static struct kite_cmd_create_qp ini_in(struct tqp *q, uint32_t pdn, uint32_t scqn)
{
	struct kite_cmd_create_qp in;

	memset(q, 0, sizeof(*q));
	q->type = KITE_QPT_XRC_INI;
	q->slog = 4;
	q->sshift = 8;
	q->sq = qbuf_for(1ULL << (q->slog + q->sshift));
	memset(&in, 0, sizeof(in));
	in.type = KITE_QPT_XRC_INI;
	in.pdn = pdn;
	in.send_cqn = scqn;
	in.sq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, q->slog) |
			       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, q->sshift));
	in.sq_pbl = q->sq.pbl;
	return in;
}

static int qp_create_in(struct tqp *q, const struct kite_cmd_create_qp *in, size_t len,
			struct res *r)
{
	int c = run(KITE_CMD_CREATE_QP, in, len, 0, 0, r);

	if (c == KITE_CMD_OK)
		q->qpn = r->result;
	return c;
}

static struct kite_cmd_create_qp tgt_in(struct tqp *q, uint32_t xrcd)
{
	struct kite_cmd_create_qp in;

	memset(q, 0, sizeof(*q));
	q->type = KITE_QPT_XRC_TGT;
	memset(&in, 0, sizeof(in));
	in.type = KITE_QPT_XRC_TGT;
	in.xrcd = xrcd;
	return in;
}

/*
 * An XRC WQE on initiator @q for the remote XRC SRQ @srqn (the raw
 * xrc_srqn word), doorbell rung; returns its wqe_idx. Also for other QP
 * types, to check that they refuse it.
 */
static uint16_t post_xrc(struct tqp *q, uint32_t srqn, uint32_t opw, uint32_t imm, uint64_t va,
			 uint32_t rkey, uint64_t swap, uint64_t cmp,
			 const struct kite_wqe_sge *g, unsigned n)
{
	uint16_t idx = write_rc(q, opw, imm, va, rkey, swap, cmp, g, n);

	setmem32(q->sq.data + ((uint64_t)(idx & ((1u << q->slog) - 1)) << q->sshift) +
		 offsetof(struct kite_wqe_ctrl, xrc_srqn), srqn);
	ring_sq(q);
	return idx;
}

static void xrcd_and_srq_commands(void)
{
	struct kite_cmd_create_srq in;
	struct kite_cmd_query_srq_out o;
	struct kite_cmd_obj qo;
	struct tsrq a, b, t;
	struct cq ucq;
	struct res r;
	uint32_t x1, x2, u1, pd_u1, n, cqn;

	/* ALLOC_XRCD, DEALLOC_XRCD. */
	x1 = need(xrcd_alloc(&r), &r, "ALLOC_XRCD");
	x2 = need(xrcd_alloc(&r), &r, "ALLOC_XRCD again");
	tap(x1 >= 1 && x1 < 256 && x2 >= 1 && x2 < 256 && x1 != x2,
	    "ALLOC_XRCD: domains %u and %u in 1..255", x1, x2);
	cmd_obj(KITE_CMD_DEALLOC_XRCD, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_XRCD 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_XRCD, 256, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_XRCD 256 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_XRCD, 0x80000000u | x1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_XRCD with high bits -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_XRCD, x1, 1, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "DEALLOC_XRCD with uctx 1 -> E_PARAM");
	need(cmd_obj(KITE_CMD_DEALLOC_XRCD, x2, 0, &r), &r, "DEALLOC_XRCD");
	cmd_obj(KITE_CMD_DEALLOC_XRCD, x2, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_XRCD twice -> E_OBJECT");
	memset(&qo, 0, sizeof(qo));
	run(KITE_CMD_DEALLOC_XRCD, &qo, 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "DEALLOC_XRCD with in_len 4 -> E_LENGTH");
	for (n = 0; n < 300 && xrcd_alloc(&r) == KITE_CMD_OK; n++)
		;
	tap((r.status & 0xff) == KITE_CMD_E_NO_RESOURCES && n == 254,
	    "ALLOC_XRCD until full: %u more, then E_NO_RESOURCES", n);
	for (n = 1; n < 256; n++)
		if (n != x1)
			cmd_obj(KITE_CMD_DEALLOC_XRCD, n, 0, &r);
	x2 = need(xrcd_alloc(&r), &r, "ALLOC_XRCD after freeing");

	/* CREATE_SRQ: the 32-byte input is a basic SRQ. */
	in = srq_in(&t, fx_pd, 5, 7, 0);
	need(srq_create_in(&in, KITE_CMD_CREATE_SRQ_V0_LEN, &r), &r,
	     "CREATE_SRQ with in_len KITE_CMD_CREATE_SRQ_V0_LEN");
	t.srqn = r.result;
	srq_query(t.srqn, &o, &r);
	tap(o.flags == 0, "QUERY_SRQ of a basic SRQ: no KITE_SRQ_F_XRC");
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r), &r, "DESTROY_SRQ (basic)");

	/* XRC SRQs and their errors. */
	cqn = need(create_cq(&ucq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	need(xsrq_create(&a, fx_pd, 0, KITE_SRQ_F_XRC, x1, cqn, 0, &r), &r, "CREATE_SRQ XRC");
	srq_query(a.srqn, &o, &r);
	tap((r.status & 0xff) == KITE_CMD_OK && o.flags == KITE_SRQ_F_XRC && o.nqp == 0 &&
	    o.pdn == fx_pd, "QUERY_SRQ: KITE_SRQ_F_XRC, PD, nqp 0");
	xsrq_create(&b, fx_pd, 0, KITE_SRQ_F_XRC | BIT(2), x1, cqn, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(flags), "CREATE_SRQ reserved flags bit -> E_PARAM");
	xsrq_create(&b, fx_pd, 0, 0, x1, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(xrcd), "CREATE_SRQ xrcd without XRC -> E_PARAM");
	xsrq_create(&b, fx_pd, 0, 0, 0, cqn, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cqn), "CREATE_SRQ cqn without XRC -> E_PARAM");
	xsrq_create(&b, fx_pd, 0, KITE_SRQ_F_XRC, x1, cqn, 1, &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(rsvd), "CREATE_SRQ rsvd not zero -> E_PARAM");
	xsrq_create(&b, fx_pd, 0, KITE_SRQ_F_XRC, 0, cqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(xrcd), "CREATE_SRQ XRC in domain 0 -> E_OBJECT");
	xsrq_create(&b, fx_pd, 0, KITE_SRQ_F_XRC, 200, cqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(xrcd),
	       "CREATE_SRQ XRC in a free domain -> E_OBJECT");
	xsrq_create(&b, fx_pd, 0, KITE_SRQ_F_XRC, 9999, cqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(xrcd), "CREATE_SRQ XRC in domain 9999 -> E_OBJECT");
	xsrq_create(&b, fx_pd, 0, KITE_SRQ_F_XRC, x1, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(cqn), "CREATE_SRQ XRC with CQ 0 -> E_OBJECT");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	pd_u1 = need(alloc_pd(u1, &r), &r, "ALLOC_PD (user)");
	xsrq_create(&b, pd_u1, u1, KITE_SRQ_F_XRC, x1, cqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(cqn),
	       "CREATE_SRQ XRC (user) with the kernel's CQ -> E_OBJECT");
	n = need(create_cq(&ucq, 6, eq1.eqn, u1, &r), &r, "CREATE_CQ (user)");
	need(xsrq_create(&b, pd_u1, u1, KITE_SRQ_F_XRC, x1, n, 0, &r), &r,
	     "CREATE_SRQ XRC (user) with its own CQ, in the kernel's domain");
	cmd_obj(KITE_CMD_DESTROY_CQ, n, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_CQ of an XRC SRQ's CQ -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_XRCD, x1, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_XRCD with XRC SRQs in it -> E_BUSY");
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, b.srqn, 0, &r), &r, "DESTROY_SRQ XRC (user)");
	need(cmd_obj(KITE_CMD_DESTROY_CQ, n, 0, &r), &r, "DESTROY_CQ once the SRQ is gone");

	/* CREATE_QP: targets. */
	{
		struct kite_cmd_create_qp qin;
		struct tqp q, ini;

		qin = tgt_in(&q, x1);
		need(qp_create_in(&q, &qin, sizeof(qin), &r), &r, "CREATE_QP XRC_TGT");
		cmd_obj(KITE_CMD_DEALLOC_XRCD, x2, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "DEALLOC_XRCD of an empty domain");
		need(cmd_obj(KITE_CMD_DESTROY_SRQ, a.srqn, 0, &r), &r, "DESTROY_SRQ XRC");
		cmd_obj(KITE_CMD_DEALLOC_XRCD, x1, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_XRCD with a target QP in it -> E_BUSY");
		{
			struct kite_cmd_modify_qp m = attrs_valid(q.qpn);

			m.dest_qpn = 2;
			tap(modify_qp(&m, XRC_INIT_MASK, KITE_QPS_INIT, &r) == KITE_CMD_OK &&
			    modify_qp(&m, XRC_RTR_MASK, KITE_QPS_RTR, &r) == KITE_CMD_OK &&
			    modify_qp(&m, TGT_RTS_MASK, KITE_QPS_RTS, &r) == KITE_CMD_OK,
			    "XRC_TGT to RTS without RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC");
		}
		bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, q.qpn, 1));
		bad_db_check(1, "SQ doorbell for an XRC target: ignored");
		need(cmd_obj(KITE_CMD_DESTROY_QP, q.qpn, 0, &r), &r, "DESTROY_QP XRC_TGT");
		need(cmd_obj(KITE_CMD_DEALLOC_XRCD, x1, 0, &r), &r, "DEALLOC_XRCD once it is empty");
		x1 = need(xrcd_alloc(&r), &r, "ALLOC_XRCD");

		qin = tgt_in(&q, x1);
		qp_create_in(&q, &qin, KITE_CMD_CREATE_QP_V0_LEN, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_QP XRC_TGT with in_len 64 -> E_LENGTH");
		qin.pdn = fx_pd;
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(pdn), "CREATE_QP XRC_TGT with a PD -> E_PARAM");
		qin = tgt_in(&q, x1);
		qin.flags = KITE_QP_F_SQ_SIG_ALL;
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(flags), "CREATE_QP XRC_TGT with flags -> E_PARAM");
		qin = tgt_in(&q, x1);
		qin.recv_cqn = cqn;
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(recv_cqn),
		       "CREATE_QP XRC_TGT with a CQ -> E_PARAM");
		qin = tgt_in(&q, x1);
		qin.rq_dbrec_addr = 4096;
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(rq_dbrec_addr),
		       "CREATE_QP XRC_TGT with an RQ doorbell record -> E_PARAM");
		qin = tgt_in(&q, 0);
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(xrcd), "CREATE_QP XRC_TGT in domain 0 -> E_OBJECT");
		qin = tgt_in(&q, 77);
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(xrcd),
		       "CREATE_QP XRC_TGT in a free domain -> E_OBJECT");
		qin = tgt_in(&q, x1);
		qin.uctx = 200;
		qp_create_in(&q, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(uctx),
		       "CREATE_QP XRC_TGT for a free UCTX -> E_OBJECT");

		/* Initiators. */
		qin = ini_in(&ini, fx_pd, cqn);
		need(qp_create_in(&ini, &qin, sizeof(qin), &r), &r, "CREATE_QP XRC_INI");
		{
			struct kite_cmd_modify_qp m = attrs_valid(ini.qpn);

			m.dest_qpn = 2;
			tap(modify_qp(&m, XRC_INIT_MASK, KITE_QPS_INIT, &r) == KITE_CMD_OK &&
			    modify_qp(&m, INI_RTR_MASK, KITE_QPS_RTR, &r) == KITE_CMD_OK,
			    "XRC_INI to RTR without MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER");
			modify_qp(&m, TGT_RTS_MASK, KITE_QPS_RTS, &r);
			expect(&r, KITE_CMD_E_PARAM, -1,
			       "XRC_INI to RTS without RETRY_CNT etc. -> E_PARAM");
		}
		bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, ini.qpn, 1));
		bad_db_check(1, "RQ doorbell for an XRC initiator: ignored");
		need(cmd_obj(KITE_CMD_DESTROY_QP, ini.qpn, 0, &r), &r, "DESTROY_QP XRC_INI");
		qin = ini_in(&ini, fx_pd, cqn);
		qin.recv_cqn = cqn;
		qp_create_in(&ini, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(recv_cqn),
		       "CREATE_QP XRC_INI with a receive CQ -> E_PARAM");
		qin = ini_in(&ini, fx_pd, cqn);
		qin.rq_cfg = qin.sq_cfg;
		qp_create_in(&ini, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(rq_cfg), "CREATE_QP XRC_INI with an RQ -> E_PARAM");
		qin = ini_in(&ini, fx_pd, cqn);
		qin.flags = KITE_QP_F_SRQ;
		qp_create_in(&ini, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(flags),
		       "CREATE_QP XRC_INI with KITE_QP_F_SRQ -> E_PARAM");
		qin = ini_in(&ini, fx_pd, cqn);
		qin.xrcd = x1;
		qp_create_in(&ini, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(xrcd), "CREATE_QP XRC_INI with xrcd -> E_PARAM");
		qin = ini_in(&ini, fx_pd, cqn);
		qin.type = 7;
		qp_create_in(&ini, &qin, sizeof(qin), &r);
		expect(&r, KITE_CMD_E_PARAM, CQP_OFF(type), "CREATE_QP type 7 -> E_PARAM");

		/* An RC QP on an XRC SRQ. */
		need(xsrq_create(&a, fx_pd, 0, KITE_SRQ_F_XRC, x1, cqn, 0, &r), &r,
		     "CREATE_SRQ XRC");
		tqp_create_srq(&q, KITE_QPT_RC, fx_pd, cqn, cqn, a.srqn, &r);
		expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn),
		       "CREATE_QP RC with KITE_QP_F_SRQ on an XRC SRQ -> E_OBJECT");
		need(cmd_obj(KITE_CMD_DESTROY_SRQ, a.srqn, 0, &r), &r, "DESTROY_SRQ XRC");
	}
}

/* ------------------------------------------------------------------ */
/* Traffic over loopback                                               */
/* ------------------------------------------------------------------ */

static struct {
	uint32_t xrcd, xrcd2, lkey2, rkey2;
	struct tcq scq, cq1, cq2;
	struct tsrq s1, s2, s_other, s_basic;
	struct tqp ini, tgt;
} X;

/* A fresh initiator and target, connected, in RTS. */
static void xrc_pair(void)
{
	struct kite_cmd_create_qp in;
	struct res r;

	if (X.ini.qpn)
		need(cmd_obj(KITE_CMD_DESTROY_QP, X.ini.qpn, 0, &r), &r, "DESTROY_QP XRC_INI");
	if (X.tgt.qpn)
		need(cmd_obj(KITE_CMD_DESTROY_QP, X.tgt.qpn, 0, &r), &r, "DESTROY_QP XRC_TGT");
	in = ini_in(&X.ini, fx_pd, X.scq.c.cqn);
	need(qp_create_in(&X.ini, &in, sizeof(in), &r), &r, "CREATE_QP XRC_INI");
	in = tgt_in(&X.tgt, X.xrcd);
	need(qp_create_in(&X.tgt, &in, sizeof(in), &r), &r, "CREATE_QP XRC_TGT");
	/* RNR retries without end: an SRQ runs empty on purpose. */
	rc_rts(&X.ini, X.tgt.qpn, MAC, 14, 7, 7);
	rc_rts(&X.tgt, X.ini.qpn, MAC, 14, 7, 7);
}

static void xrc_setup(void)
{
	struct res r;

	memset(&X, 0, sizeof(X));
	X.lkey2 = need(reg_mr(E.pd2, KITE_ACCESS_LOCAL_WRITE, 0x61, 0, T_IOVA, T_MR_LEN,
			      &E.mr.pbl, &r), &r, "REG_MR (PD 2)");
	X.rkey2 = need(reg_mr(E.pd2, KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			      KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC, 0x62, 0,
			      T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR (PD 2, remote)");
	X.xrcd = need(xrcd_alloc(&r), &r, "ALLOC_XRCD");
	X.xrcd2 = need(xrcd_alloc(&r), &r, "ALLOC_XRCD 2");
	tcq_make(&X.scq, 6);
	tcq_make(&X.cq1, 6);
	tcq_make(&X.cq2, 6);
	need(xsrq_create(&X.s1, fx_pd, 0, KITE_SRQ_F_XRC, X.xrcd, X.cq1.c.cqn, 0, &r), &r,
	     "CREATE_SRQ XRC 1 (PD 1, CQ 1)");
	need(xsrq_create(&X.s2, E.pd2, 0, KITE_SRQ_F_XRC, X.xrcd, X.cq2.c.cqn, 0, &r), &r,
	     "CREATE_SRQ XRC 2 (PD 2, CQ 2)");
	need(xsrq_create(&X.s_other, fx_pd, 0, KITE_SRQ_F_XRC, X.xrcd2, X.cq1.c.cqn, 0, &r), &r,
	     "CREATE_SRQ XRC in domain 2");
	need(srq_create(&X.s_basic, fx_pd, 5, 7, 0, &r), &r, "CREATE_SRQ (basic)");
	xrc_pair();
}

/* The next CQE of @q is a receive CQE @op of target @qpn via @srqn. */
static bool recv_cqe_ok(struct tcq *q, unsigned op, uint32_t qpn, uint32_t srqn, uint16_t tag,
			uint32_t len)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c);

	ok = ok && cqe_is(&c, op, qpn, 0) && c.srqn == srqn && c.wqe_idx == tag &&
	     c.byte_len == len;
	if (!ok)
		cqe_diag("recv", &c);
	return ok;
}

/* A request naming @srqn is refused: NAK Invalid Request, target to ERR. */
static void xrceth_refused(uint32_t srqn, const char *what)
{
	struct kite_wqe_sge g = sge(16, E.lkey, SRC);
	struct kite_cqe c;
	unsigned mark;
	uint16_t idx;
	bool ok;

	xrc_pair();
	eq_drain(&eq0);
	mark = neqlog;
	idx = post_xrc(&X.ini, srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, &g, 1);
	ok = tcq_next(&X.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, X.ini.qpn, KITE_SYND_REMOTE_INVAL_REQ) &&
		 c.wqe_idx == idx, "%s: initiator REQ_ERR REMOTE_INVAL_REQ (NAK)", what))
		cqe_diag("send", &c);
	tap(qp_state(X.tgt.qpn) == KITE_QPS_ERR && qp_state(X.ini.qpn) == KITE_QPS_ERR,
	    "%s: target and initiator in ERR", what);
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_REQ_ERR, X.tgt.qpn) != NULL,
	    "%s: KITE_EQE_QP_REQ_ERR for the target", what);
	tap(tcq_drain(&X.cq1) == 0 && tcq_drain(&X.cq2) == 0, "%s: no receive CQE", what);
}

/* Unconsumed CQEs into @q until it overflows: it is in ERROR. */
static bool tcq_overflow(struct tcq *q)
{
	struct kite_cmd_query_cq_out o;
	struct res r;
	unsigned i;

	for (i = 0; i <= 1U << q->c.log; i++)
		dcqe(q->c.cqn, 0);
	query_cq(q->c.cqn, &o, &r);
	return o.state == KITE_CQ_STATE_ERROR;
}

/* A SEND from the initiator into XRC SRQ @q, which has a WQE posted. */
static void xrc_send_into(struct tsrq *q, uint32_t lkey, uint16_t tag)
{
	struct kite_wqe_sge g[1];

	g[0] = sge(64, lkey, RBUF + 12288);
	srq_post(q, tag, g, 1);
	g[0] = sge(64, E.lkey, SRC);
	post_xrc(&X.ini, q->srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
}

/*
 * An XRC SRQ's CQ in ERROR (prm_cq.rst, "CQ errors"): the target whose
 * last request named the SRQ goes to ERR with it; a target that names
 * the SRQ later goes to ERR then; a target of another SRQ does not.
 */
static void xrc_cq_error(void)
{
	struct kite_cqe c;
	struct res r;
	unsigned mark;

	/* The target's last request named SRQ 2: CQ 1's error leaves it. */
	xrc_pair();
	xrc_send_into(&X.s2, X.lkey2, 0x25);
	tap(tcq_next(&X.cq2, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, X.tgt.qpn, 0) &&
	    c.srqn == X.s2.srqn, "CQ error: a SEND into SRQ 2 completes in CQ 2");
	tcq_drain(&X.scq);
	eq_drain(&eq0);
	mark = neqlog;
	tap(tcq_overflow(&X.cq1), "CQ error: SRQ 1's CQ overflows into ERROR");
	eq_drain(&eq0);
	tap(qp_state(X.tgt.qpn) == KITE_QPS_RTS &&
	    !eqe_find(mark, KITE_EQE_QP_FATAL, X.tgt.qpn),
	    "CQ error: the target of SRQ 2 stays in RTS");
	/* Its next request names SRQ 1. */
	xrc_send_into(&X.s1, E.lkey, 0x15);
	eq_drain(&eq0);
	tap(qp_state(X.tgt.qpn) == KITE_QPS_ERR &&
	    eqe_find(mark, KITE_EQE_QP_FATAL, X.tgt.qpn) != NULL,
	    "CQ error: a request naming SRQ 1 moves the target to ERR, QP_FATAL");

	/* A target whose last request named SRQ 2 when CQ 2 fails. */
	xrc_pair();
	xrc_send_into(&X.s2, X.lkey2, 0x26);
	tap(tcq_next(&X.cq2, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, X.tgt.qpn, 0),
	    "CQ error: a new target's SEND into SRQ 2");
	eq_drain(&eq0);
	mark = neqlog;
	tap(tcq_overflow(&X.cq2), "CQ error: SRQ 2's CQ overflows into ERROR");
	eq_drain(&eq0);
	tap(qp_state(X.tgt.qpn) == KITE_QPS_ERR &&
	    eqe_find(mark, KITE_EQE_QP_FATAL, X.tgt.qpn) != NULL,
	    "CQ error: the target of SRQ 2 goes to ERR with its CQ, QP_FATAL");
	tap(qp_state(X.ini.qpn) == KITE_QPS_RTS, "CQ error: its initiator stays in RTS");
	need(cmd_obj(KITE_CMD_DESTROY_QP, X.tgt.qpn, 0, &r), &r, "DESTROY_QP XRC_TGT in ERR");
	X.tgt.qpn = 0;
}

static void xrc_traffic(void)
{
	static uint8_t want[6000];
	struct kite_cmd_query_srq_out o;
	struct kite_wqe_sge g[2];
	struct kite_cqe c;
	struct res r;
	uint16_t idx;
	bool ok;

	xrc_setup();

	/* SENDs into two SRQs of the domain through one target. */
	g[0] = sge(1000, E.lkey, RBUF);
	srq_post(&X.s1, 0x11, g, 1);
	g[0] = sge(1000, X.lkey2, RBUF + 4096);
	srq_post(&X.s2, 0x22, g, 1);
	fill_pattern(SRC, 300, 0x31, want);
	g[0] = sge(300, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s1.srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0,
		       g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_SEND, 0), "SEND to SRQ 1: initiator CQE");
	tap(recv_cqe_ok(&X.cq1, KITE_CQE_OP_RESP_SEND, X.tgt.qpn, X.s1.srqn, 0x11, 300),
	    "SEND to SRQ 1: CQE in SRQ 1's CQ, qpn the target, srqn, tag 0x11");
	tap(mem_eq(RBUF, want, 300), "SEND to SRQ 1: payload byte for byte");
	fill_pattern(SRC, 200, 0x44, want);
	g[0] = sge(200, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s2.srqn, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED,
		       0x12345678, 0, 0, 0, 0, g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_SEND_IMM, 0),
	    "SEND_IMM to SRQ 2: initiator CQE");
	ok = tcq_next(&X.cq2, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, X.tgt.qpn, 0) &&
		 c.srqn == X.s2.srqn && c.wqe_idx == 0x22 && c.byte_len == 200 &&
		 c.imm_data == 0x12345678 && (c.flags & KITE_CQE_F_IMM),
		 "SEND_IMM to SRQ 2 (PD 2): CQE in SRQ 2's CQ with srqn, tag and immediate"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 4096, want, 200), "SEND_IMM to SRQ 2: payload byte for byte");
	tap(tcq_drain(&X.cq1) == 0 && tcq_drain(&X.cq2) == 0, "one CQE per SEND, no other");

	/* A SEND of five packets. */
	g[0] = sge(3000, E.lkey, RBUF);
	g[1] = sge(3000, E.lkey, RBUF + 8192);
	srq_post(&X.s1, 0x13, g, 2);
	fill_pattern(SRC, 5000, 0x55, want);
	g[0] = sge(5000, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s1.srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0,
		       g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_SEND, 0), "SEND 5000 bytes: initiator CQE");
	tap(recv_cqe_ok(&X.cq1, KITE_CQE_OP_RESP_SEND, X.tgt.qpn, X.s1.srqn, 0x13, 5000),
	    "SEND 5000 bytes (5 packets): one CQE in SRQ 1's CQ");
	tap(mem_eq(RBUF, want, 3000) && mem_eq(RBUF + 8192, want + 3000, 2000),
	    "SEND 5000 bytes: scattered byte for byte");

	/* RDMA WRITE, READ and an atomic, checked against the SRQ's PD. */
	fill_pattern(SRC, 2500, 0x66, want);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s1.srqn, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, DST,
		       R.rkey, 0, 0, g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0) && mem_eq(DST, want, 2500),
	    "RDMA WRITE naming SRQ 1 with an R_Key of its PD: data byte for byte");
	g[0] = sge(64, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s2.srqn, KITE_WQE_OP_RDMA_WRITE_IMM | KITE_WQE_F_SIGNALED,
		       0xcafe, DST, X.rkey2, 0, 0, g, 1);
	run_for(2000000);
	tap(tcq_drain(&X.cq2) == 0 && tcq_drain(&X.scq) == 0,
	    "RDMA WRITE_IMM naming SRQ 2 (empty): no CQE yet (RNR NAK)");
	g[0] = sge(8, X.lkey2, RBUF);
	srq_post(&X.s2, 0x23, g, 1);
	run_for(50000000);
	ok = tcq_next(&X.cq2, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, X.tgt.qpn, 0) &&
		 c.srqn == X.s2.srqn && c.wqe_idx == 0x23 && c.imm_data == 0xcafe,
		 "after the RNR back-off: RESP_WRITE_IMM in SRQ 2's CQ, srqn, tag 0x23"))
		cqe_diag("recv", &c);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0),
	    "and the WRITE_IMM completes at the initiator");
	fill_pattern(DST, 1500, 0x77, want);
	g[0] = sge(1500, E.lkey, RBUF);
	idx = post_xrc(&X.ini, X.s1.srqn, KITE_WQE_OP_RDMA_READ | KITE_WQE_F_SIGNALED, 0, DST,
		       R.rkey, 0, 0, g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_RDMA_READ, 1500) &&
	    mem_eq(RBUF, want, 1500), "RDMA READ naming SRQ 1: 1500 bytes byte for byte");
	set64(DST + 64, 100);
	g[0] = sge(8, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s2.srqn, KITE_WQE_OP_ATOMIC_FA | KITE_WQE_F_SIGNALED, 0,
		       DST + 64, X.rkey2, 5, 0, g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_ATOMIC_FA, 8) && mem64(SRC) == 100 &&
	    mem64(DST + 64) == 105, "FETCH_ADD naming SRQ 2 (an R_Key of PD 2): 100 + 5");
	srq_query(X.s1.srqn, &o, &r);
	tap(o.flags == KITE_SRQ_F_XRC && o.pi == 2 && o.ci == 2 && o.nqp == 0,
	    "QUERY_SRQ 1: XRC, pi 2, ci 2, no target holding a WQE");
	tap(tcq_drain(&X.cq1) == 0, "no receive CQE for WRITE, READ, atomic");

	/* An R_Key of another PD than the named SRQ's: NAK remote access. */
	{
		unsigned mark;

		eq_drain(&eq0);
		mark = neqlog;
		g[0] = sge(16, E.lkey, SRC);
		idx = post_xrc(&X.ini, X.s2.srqn, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0,
			       DST, R.rkey, 0, 0, g, 1);
		ok = tcq_next(&X.scq, &c);
		if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, X.ini.qpn,
				      KITE_SYND_REMOTE_ACCESS) && c.wqe_idx == idx,
			 "WRITE naming SRQ 2 with an R_Key of PD 1: REMOTE_ACCESS at the initiator"))
			cqe_diag("send", &c);
		tap(qp_state(X.tgt.qpn) == KITE_QPS_ERR, "and the target in ERR");
		clock_step(POLL_STEP_NS);
		eq_drain(&eq0);
		tap(eqe_find(mark, KITE_EQE_QP_ACCESS_ERR, X.tgt.qpn) != NULL,
		    "KITE_EQE_QP_ACCESS_ERR for the target");
	}

	/* XRCETHs the target refuses. */
	xrceth_refused(X.s_basic.srqn, "XRCETH naming a basic SRQ");
	xrceth_refused(X.s_other.srqn, "XRCETH naming an XRC SRQ of another domain");
	xrceth_refused(200, "XRCETH naming no SRQ");

	/* xrc_srqn: bits 31:24 on an initiator, anything on RC. */
	xrc_pair();
	g[0] = sge(16, E.lkey, SRC);
	idx = post_xrc(&X.ini, BIT(24) | X.s1.srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0,
		       0, 0, 0, g, 1);
	ok = tcq_next(&X.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, X.ini.qpn, KITE_SYND_LOCAL_QP_OP) &&
		 c.wqe_idx == idx, "initiator WQE with xrc_srqn bit 24: LOCAL_QP_OP"))
		cqe_diag("send", &c);
	tap(qp_state(X.ini.qpn) == KITE_QPS_ERR, "and the initiator in ERR");
	{
		struct rcpair p;

		rc_pair(&p, MAC, 14, 7, 7);
		idx = post_xrc(&p.a, X.s1.srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0,
			       0, g, 1);
		ok = tcq_next(&p.scq, &c);
		if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, p.a.qpn, KITE_SYND_LOCAL_QP_OP) &&
			 c.wqe_idx == idx, "RC WQE with xrc_srqn: LOCAL_QP_OP"))
			cqe_diag("send", &c);
	}

	/* A target taken back to RESET and RTS works again. */
	xrc_pair();
	g[0] = sge(100, E.lkey, RBUF);
	srq_post(&X.s1, 0x14, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_xrc(&X.ini, X.s1.srqn, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0,
		       g, 1);
	tap(req_ok(&X.scq, X.ini.qpn, idx, KITE_WQE_OP_SEND, 0) &&
	    recv_cqe_ok(&X.cq1, KITE_CQE_OP_RESP_SEND, X.tgt.qpn, X.s1.srqn, 0x14, 100),
	    "a new pair in the domain: SEND into SRQ 1");
	tap(tqp_to(&X.tgt, KITE_QPS_ERR) == KITE_CMD_OK && tcq_drain(&X.cq1) == 0,
	    "target to ERR holding no WQE: no flush CQE");
	need(cmd_obj(KITE_CMD_DESTROY_QP, X.tgt.qpn, 0, &r), &r, "DESTROY_QP XRC_TGT");
	X.tgt.qpn = 0;
	xrc_cq_error();
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, X.s1.srqn, 0, &r), &r, "DESTROY_SRQ XRC 1");
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, X.s2.srqn, 0, &r), &r, "DESTROY_SRQ XRC 2");
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, X.s_other.srqn, 0, &r), &r, "DESTROY_SRQ XRC other");
	need(cmd_obj(KITE_CMD_DEALLOC_XRCD, X.xrcd, 0, &r), &r, "DEALLOC_XRCD, now empty");
}

void g_xrc(void)
{
	eng_setup();
	rc_keys();
	xrcd_and_srq_commands();
	xrc_traffic();
}

/* ------------------------------------------------------------------ */
/* The wire: XRC packets as sent, and crafted                          */
/* ------------------------------------------------------------------ */

static const uint8_t xpeer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

/* A target in the domain connected to the wire's peer. */
static void wire_tgt(struct tqp *t)
{
	struct kite_cmd_create_qp in = tgt_in(t, X.xrcd);
	struct res r;

	need(qp_create_in(t, &in, sizeof(in), &r), &r, "CREATE_QP XRC_TGT (wire)");
	rc_rts(t, W_PEER_QPN, xpeer, 14, 7, 7);
}

/* Send the XRC request @op (RC opcode) naming @srqn to @t from the wire. */
static void wire_xrc(const struct tqp *t, uint8_t op, uint32_t psn, bool ackreq, uint32_t srqn,
		     const uint8_t *pl, size_t len)
{
	static uint8_t inj[2048];
	uint8_t xrceth[4];

	put32(xrceth, srqn);
	wire_send(inj, w_frame(inj, (uint8_t)(0xa0 + op), t->qpn, psn, ackreq, xrceth, 4, pl,
			       len));
}

void g_xrc_wire(void)
{
	static uint8_t f[2048], pl[1024];
	struct kite_cmd_query_srq_out o;
	struct kite_wqe_sge g;
	struct tqp ini, t;
	struct kite_cqe c;
	struct tsrq s3;
	struct res r;
	unsigned mark;
	uint16_t idx;
	uint8_t aeth[4];
	ssize_t n;
	bool ok;

	eng_setup();
	rc_keys();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	xrc_setup();

	/* An initiator's SEND: opcode 0xa4, XRCETH, payload; XRC ACK. */
	{
		struct kite_cmd_create_qp in = ini_in(&ini, fx_pd, X.scq.c.cqn);

		need(qp_create_in(&ini, &in, sizeof(in), &r), &r, "CREATE_QP XRC_INI (wire)");
		rc_rts(&ini, W_PEER_QPN, xpeer, 14, 7, 7);
	}
	fill_pattern(SRC, 100, 0x12, pl);
	g = sge(100, E.lkey, SRC);
	idx = post_xrc(&ini, 0x123, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, &g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 100 + 4 && f[42] == 0xa4 && be24(f + 47) == W_PEER_QPN &&
	    be32(f + 54) == 0x123 && !memcmp(f + 58, pl, 100),
	    "initiator SEND on the wire: SEND_ONLY 0xa4, XRCETH 0x123, then the payload");
	put32(aeth, 0x1f000001);
	{
		static uint8_t inj[128];

		wire_send(inj, w_frame(inj, 0x11, ini.qpn, T_RC_PSN, false, aeth, 4, NULL, 0));
		clock_step(POLL_STEP_NS);
		tap(tcq_drain(&X.scq) == 0, "an RC ACK to an XRC initiator: dropped");
		wire_send(inj, w_frame(inj, 0xb1, ini.qpn, T_RC_PSN, false, aeth, 4, NULL, 0));
	}
	tap(req_ok(&X.scq, ini.qpn, idx, KITE_WQE_OP_SEND, 0), "XRC ACK 0xb1: the SEND completes");

	/* A target's answers carry XRC opcodes and no XRCETH. */
	wire_tgt(&t);
	g = sge(4096, E.lkey, RBUF);
	srq_post(&X.s1, 0x31, &g, 1);
	memset(pl, 0x5a, sizeof(pl));
	wire_xrc(&t, 0x04, T_RC_PSN, true, X.s1.srqn, pl, 100);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0xb1 && f[54] == 0x1f && be24(f + 47) == W_PEER_QPN,
	    "target ACKs an XRC SEND_ONLY with 0xb1, AETH ACK, no XRCETH");
	tap(recv_cqe_ok(&X.cq1, KITE_CQE_OP_RESP_SEND, t.qpn, X.s1.srqn, 0x31, 100) &&
	    mem_eq(RBUF, pl, 100), "and the SEND lands in SRQ 1 (CQE with srqn)");
	{
		static uint8_t inj[256];
		uint64_t drops = stat1(KITE_STAT_ROCE_RX_DROPS);

		wire_send(inj, w_frame(inj, 0x04, t.qpn, T_RC_PSN + 1, true, NULL, 0, pl, 16));
		clock_step(POLL_STEP_NS);
		tap(stat1(KITE_STAT_ROCE_RX_DROPS) == drops + 1 && tcq_drain(&X.cq1) == 0,
		    "an RC SEND to an XRC target: dropped");
	}

	/* Another SRQ named in the middle of a SEND: NAK, error CQE. */
	eq_drain(&eq0);
	mark = neqlog;
	srq_post(&X.s1, 0x32, &g, 1);
	wire_xrc(&t, 0x00, T_RC_PSN + 1, false, X.s1.srqn, pl, 1024);
	clock_step(POLL_STEP_NS);
	srq_query(X.s1.srqn, &o, &r);
	tap(o.nqp == 1, "SEND_FIRST taken: QUERY_SRQ nqp 1 (a target holds a WQE)");
	wire_xrc(&t, 0x01, T_RC_PSN + 2, false, X.s2.srqn, pl, 1024);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0xb1 && f[54] == 0x61,
	    "SEND_MIDDLE naming another SRQ: NAK Invalid Request");
	ok = tcq_next(&X.cq1, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, t.qpn, KITE_SYND_REMOTE_INVAL_REQ) &&
		 c.srqn == X.s1.srqn && c.wqe_idx == 0x32,
		 "the held WQE completes in error in SRQ 1's CQ (srqn, tag 0x32)"))
		cqe_diag("recv", &c);
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(qp_state(t.qpn) == KITE_QPS_ERR && eqe_find(mark, KITE_EQE_QP_REQ_ERR, t.qpn),
	    "target in ERR, KITE_EQE_QP_REQ_ERR");

	/* A target moved to ERR holding a WQE: flushed, no last-WQE event. */
	wire_tgt(&t);
	srq_post(&X.s1, 0x33, &g, 1);
	wire_xrc(&t, 0x00, T_RC_PSN, false, X.s1.srqn, pl, 1024);
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	mark = neqlog;
	tap(tqp_to(&t, KITE_QPS_ERR) == KITE_CMD_OK, "MODIFY_QP target to ERR in a SEND");
	ok = tcq_next(&X.cq1, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, t.qpn, KITE_SYND_WR_FLUSH) &&
		 c.srqn == X.s1.srqn && c.wqe_idx == 0x33,
		 "the held WQE is flushed in SRQ 1's CQ (WR_FLUSH, srqn, tag 0x33)"))
		cqe_diag("recv", &c);
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_QP_LAST_WQE, t.qpn) && tcq_drain(&X.cq1) == 0,
	    "no KITE_EQE_QP_LAST_WQE for a target, one CQE only");

	/* DESTROY_SRQ under a SEND in progress. */
	wire_tgt(&t);
	need(xsrq_create(&s3, fx_pd, 0, KITE_SRQ_F_XRC, X.xrcd, X.cq1.c.cqn, 0, &r), &r,
	     "CREATE_SRQ XRC 3");
	srq_post(&s3, 0x41, &g, 1);
	wire_xrc(&t, 0x00, T_RC_PSN, false, s3.srqn, pl, 1024);
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	mark = neqlog;
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, s3.srqn, 0, &r), &r,
	     "DESTROY_SRQ of an XRC SRQ whose WQE a target holds: done at once");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(qp_state(t.qpn) == KITE_QPS_ERR && eqe_find(mark, KITE_EQE_QP_REQ_ERR, t.qpn),
	    "the target goes to ERR with KITE_EQE_QP_REQ_ERR");
	tap(tcq_drain(&X.cq1) == 0, "the WQE is dropped without a CQE");
	wire_xrc(&t, 0x01, T_RC_PSN + 1, true, s3.srqn, pl, 1024);
	clock_step(POLL_STEP_NS);
	tap(tcq_drain(&X.cq1) == 0, "the rest of the message: dropped (target in ERR)");
}
