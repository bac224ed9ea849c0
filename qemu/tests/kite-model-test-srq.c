/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): shared receive queues (groups
 * srq, srq_engine, srq_random).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Groups: shared receive queues                                       */
/* ------------------------------------------------------------------ */

static int srq_modify(uint32_t srqn, uint32_t mask, uint32_t limit, uint32_t cfg,
		      struct res *r)
{
	struct kite_cmd_modify_srq in = { .srqn = srqn, .mask = mask, .limit = limit,
					  .cfg = cfg };

	return run(KITE_CMD_MODIFY_SRQ, &in, sizeof(in), 0, 0, r);
}

/*
 * Move @q to a new ring of 2^@log WQEs as software does (prm_srq.rst,
 * "Resize"): the last min(old, new depth) WQEs posted are copied to the
 * new ring first. On success @q describes the new ring.
 */
static int srq_resize(struct tsrq *q, unsigned log, uint32_t mask, uint32_t limit,
		      struct res *r)
{
	struct kite_cmd_create_srq ring;
	struct kite_cmd_modify_srq in;
	uint32_t stride = 1u << q->shift, n, i, idx;
	uint8_t w[1024];
	struct tsrq t;
	int c;

	ring = srq_in(&t, fx_pd, log, q->shift, 0);
	n = q->log < log ? 1u << q->log : 1u << log;
	for (i = 0; i < n; i++) {
		idx = q->pi - n + i;
		memread(q->q.data + ((uint64_t)(idx & ((1u << q->log) - 1)) << q->shift), w,
			stride);
		memwrite(t.q.data + ((uint64_t)(idx & ((1u << log) - 1)) << q->shift), w,
			 stride);
	}
	memset(&in, 0, sizeof(in));
	in.srqn = q->srqn;
	in.mask = KITE_MODIFY_SRQ_RESIZE | mask;
	in.limit = limit;
	in.cfg = ring.cfg;
	in.pbl = ring.pbl;
	c = run(KITE_CMD_MODIFY_SRQ, &in, sizeof(in), 0, 0, r);
	if (c == KITE_CMD_OK) {
		q->q = t.q;
		q->log = log;
	}
	return c;
}

int srq_query(uint32_t srqn, struct kite_cmd_query_srq_out *o, struct res *r)
{
	struct kite_cmd_obj in = { .obj = srqn };
	int c = run(KITE_CMD_QUERY_SRQ, &in, sizeof(in), sizeof(*o), 0, r);

	memset(o, 0, sizeof(*o));
	if (c == KITE_CMD_OK)
		memcpy(o, r->out, sizeof(*o));
	return c;
}

#define SRQ_OFF(f)	offsetof(struct kite_cmd_create_srq, f)
#define MSRQ_OFF(f)	offsetof(struct kite_cmd_modify_srq, f)
#define CQP_OFF(f)	offsetof(struct kite_cmd_create_qp, f)

void g_srq(void)
{
	struct kite_cmd_create_srq in;
	struct kite_cmd_create_qp qin;
	struct kite_cmd_query_srq_out o;
	struct qpspec qs;
	struct tsrq a, b, t;
	struct tqp q;
	struct res r;
	uint32_t u1, pd_u1, n;
	uint64_t bad0;

	fixture();

	/* Valid: create, query, modify, destroy. */
	need(srq_create(&a, fx_pd, 6, 6, 0, &r), &r, "CREATE_SRQ 64 x 64 bytes");
	tap(a.srqn >= 1 && a.srqn < 256, "CREATE_SRQ: SRQN %u in 1..255", a.srqn);
	srq_query(a.srqn, &o, &r);
	tap((r.status & 0xff) == KITE_CMD_OK && o.state == KITE_SRQ_STATE_OK && o.flags == 0 &&
	    o.pdn == fx_pd && o.limit == 0 && o.pi == 0 && o.ci == 0 && o.nqp == 0 &&
	    o.cfg == (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
				FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6)),
	    "QUERY_SRQ: state OK, not armed, PD, cfg, pi = ci = 0, no QP");
	need(srq_create(&b, fx_pd, 12, 10, 4096, &r), &r, "CREATE_SRQ 4096 x 1024 bytes, limit 4096");
	srq_query(b.srqn, &o, &r);
	tap(o.flags == KITE_SRQ_F_ARMED && o.limit == 4096,
	    "CREATE_SRQ with a limit: armed at creation (limit %u)", o.limit);
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 10, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ LIMIT 10");
	srq_query(a.srqn, &o, &r);
	tap(o.flags == KITE_SRQ_F_ARMED && o.limit == 10, "QUERY_SRQ: armed, limit 10");
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 0, 0, &r);
	srq_query(a.srqn, &o, &r);
	tap((r.status & 0xff) == KITE_CMD_OK && !o.flags && !o.limit, "MODIFY_SRQ LIMIT 0 disarms");
	srq_modify(a.srqn, 0, 5, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ with an empty mask: nothing changes");
	srq_query(a.srqn, &o, &r);
	tap(!o.flags && !o.limit, "empty mask: limit still 0");

	/* Invalid CREATE_SRQ input. */
	in = srq_in(&t, fx_pd, 6, 6, 0);
	srq_create_in(&in, KITE_CMD_CREATE_SRQ_V0_LEN - 1, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_SRQ with in_len 31 -> E_LENGTH");
	in.pdn = 0;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(pdn), "CREATE_SRQ on PD 0 -> E_OBJECT");
	in.pdn = 999;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(pdn), "CREATE_SRQ on a free PDN -> E_OBJECT");
	in.pdn = 5000;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(pdn), "CREATE_SRQ on PDN 5000 -> E_OBJECT");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.uctx = 7;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(uctx), "CREATE_SRQ for a free UCTX -> E_OBJECT");
	in = srq_in(&t, fx_pd, 0, 6, 0);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ depth 2^0 -> E_PARAM");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 13) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6));
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ depth 2^13 -> E_PARAM");
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 5));
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ WQE size 32 -> E_PARAM");
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 11));
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ WQE size 2048 -> E_PARAM");
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6)) | BIT(20);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ with a reserved cfg bit -> E_PARAM");
	in = srq_in(&t, fx_pd, 6, 6, 65);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(limit), "CREATE_SRQ limit 65 > depth 64 -> E_PARAM");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.pbl.cfg = pbl_cfg(0, 25);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PBL, SRQ_OFF(pbl), "CREATE_SRQ with a malformed PBL -> E_PBL");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.pbl.npages = 3;
	srq_create_in(&in, sizeof(in), &r);
	tap((r.status & 0xff) == KITE_CMD_E_PBL, "CREATE_SRQ whose PBL does not describe the ring -> E_PBL");

	/* Invalid MODIFY/QUERY/DESTROY. */
	srq_modify(0, KITE_MODIFY_SRQ_LIMIT, 1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "MODIFY_SRQ of SRQN 0 -> E_OBJECT");
	srq_modify(200, KITE_MODIFY_SRQ_LIMIT, 1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "MODIFY_SRQ of a free SRQN -> E_OBJECT");
	srq_modify(0xffffff, KITE_MODIFY_SRQ_LIMIT, 1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "MODIFY_SRQ of SRQN 0xffffff -> E_OBJECT");
	srq_modify(a.srqn, BIT(2), 1, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(mask),
	       "MODIFY_SRQ with an undefined mask bit -> E_PARAM");
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 65, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(limit),
	       "MODIFY_SRQ limit 65 > depth 64 -> E_PARAM");
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 1, 1, &r);
	expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(cfg),
	       "MODIFY_SRQ with cfg but no RESIZE -> E_PARAM");
	{
		struct kite_cmd_modify_srq m = { .srqn = a.srqn, .mask = KITE_MODIFY_SRQ_LIMIT,
						 .limit = 1 };

		m.pbl.npages = 1;
		run(KITE_CMD_MODIFY_SRQ, &m, sizeof(m), 0, 0, &r);
		expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(pbl),
		       "MODIFY_SRQ with a PBL but no RESIZE -> E_PARAM");
		m.pbl.npages = 0;
		run(KITE_CMD_MODIFY_SRQ, &m, KITE_CMD_MODIFY_SRQ_V0_LEN, 0, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ LIMIT with in_len 16 (no PBL) -> OK");
		srq_query(a.srqn, &o, &r);
		tap(o.flags == KITE_SRQ_F_ARMED && o.limit == 1, "16-byte MODIFY_SRQ: armed, limit 1");
		srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 0, 0, &r);
		m.mask = KITE_MODIFY_SRQ_RESIZE;
		m.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 7) |
				   FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6));
		run(KITE_CMD_MODIFY_SRQ, &m, KITE_CMD_MODIFY_SRQ_V0_LEN, 0, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "MODIFY_SRQ RESIZE with in_len 16 -> E_LENGTH");
	}
	run(KITE_CMD_MODIFY_SRQ, NULL, 8, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "MODIFY_SRQ with in_len 8 -> E_LENGTH");

	/* Resize (prm_srq.rst, "Resize"): the input checked, nothing changed on failure. */
	{
		struct kite_cmd_create_srq ring = srq_in(&t, fx_pd, 7, 6, 0);
		struct kite_cmd_modify_srq m = { .srqn = a.srqn, .mask = KITE_MODIFY_SRQ_RESIZE,
						 .cfg = ring.cfg, .pbl = ring.pbl };
		static const struct {
			uint32_t cfg;
			const char *what;
		} bad[] = {
			{ FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 0) | FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6),
			  "depth 2^0" },
			{ FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 13) | FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6),
			  "depth 2^13" },
			{ FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 7) | FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 7),
			  "another WQE stride" },
			{ FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 7) | FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6) |
			  BIT(20), "a reserved cfg bit" },
		};

		for (n = 0; n < ARRAY_SIZE(bad); n++) {
			m.cfg = bad[n].cfg;
			run(KITE_CMD_MODIFY_SRQ, &m, sizeof(m), 0, 0, &r);
			expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(cfg), "MODIFY_SRQ RESIZE to %s -> E_PARAM",
			       bad[n].what);
		}
		m.cfg = ring.cfg;
		m.mask = KITE_MODIFY_SRQ_RESIZE | KITE_MODIFY_SRQ_LIMIT;
		m.limit = 129;
		run(KITE_CMD_MODIFY_SRQ, &m, sizeof(m), 0, 0, &r);
		expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(limit),
		       "MODIFY_SRQ RESIZE to 128 with limit 129 -> E_PARAM");
		m.limit = 0;
		m.pbl.cfg = pbl_cfg(0, 25);
		run(KITE_CMD_MODIFY_SRQ, &m, sizeof(m), 0, 0, &r);
		expect(&r, KITE_CMD_E_PBL, MSRQ_OFF(pbl), "MODIFY_SRQ RESIZE with a malformed PBL -> E_PBL");
		m.pbl = ring.pbl;
		m.pbl.npages = 1;
		run(KITE_CMD_MODIFY_SRQ, &m, sizeof(m), 0, 0, &r);
		expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(pbl),
		       "MODIFY_SRQ RESIZE whose PBL is smaller than the ring -> E_PARAM");
		srq_query(a.srqn, &o, &r);
		tap(o.cfg == (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
					FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6)) && !o.flags,
		    "after the failed resizes: still 64 WQEs, limit unchanged");
		/* 40 WQEs not taken (no QP attached): a ring of 32 cannot hold them. */
		wr64(db_addr(0), db_srq(a.srqn, 40));
		clock_step(POLL_STEP_NS);
		a.pi = 40;
		srq_resize(&a, 5, 0, 0, &r);
		expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(cfg),
		       "MODIFY_SRQ RESIZE to 32 with 40 WQEs not taken -> E_PARAM");
		srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 50, 0, &r);
		srq_resize(&a, 7, 0, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ RESIZE 64 -> 128 with 40 WQEs not taken -> OK");
		srq_query(a.srqn, &o, &r);
		tap(o.cfg == (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 7) |
					FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6)) &&
		    o.pi == 40 && o.ci == 0 && o.flags == KITE_SRQ_F_ARMED && o.limit == 50,
		    "QUERY_SRQ after the resize: 128 WQEs, pi 40, ci 0, limit 50 still armed");
		wr64(db_addr(0), db_srq(a.srqn, 100));
		clock_step(POLL_STEP_NS);
		srq_query(a.srqn, &o, &r);
		tap(o.pi == 100, "a doorbell 100 ahead is checked against the new depth: accepted");
		a.pi = 100;
		srq_resize(&a, 6, 0, 0, &r);
		expect(&r, KITE_CMD_E_PARAM, MSRQ_OFF(cfg),
		       "MODIFY_SRQ RESIZE to 64 with 100 WQEs not taken -> E_PARAM");
		srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 0, 0, &r);
	}
	{
		struct kite_cmd_obj oin = { .obj = a.srqn };

		run(KITE_CMD_QUERY_SRQ, &oin, sizeof(oin), sizeof(o) - 1, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_SRQ with out_len 31 -> E_LENGTH");
	}
	srq_query(77, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_SRQ of a free SRQN -> E_OBJECT");
	cmd_obj(KITE_CMD_QUERY_SRQ, a.srqn, 3, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "QUERY_SRQ with uctx set -> E_PARAM");
	cmd_obj(KITE_CMD_DESTROY_SRQ, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_SRQ of SRQN 0 -> E_OBJECT");

	/* QPs on an SRQ. */
	need(tqp_create_srq(&q, KITE_QPT_RC, fx_pd, fx_cq.cqn, fx_cq.cqn, a.srqn, &r), &r,
	     "CREATE_QP RC on the SRQ");
	tap(true, "CREATE_QP RC with KITE_QP_F_SRQ and no RQ -> OK");
	srq_query(a.srqn, &o, &r);
	tap(o.nqp == 1, "QUERY_SRQ: one QP attached");
	cmd_obj(KITE_CMD_DESTROY_SRQ, a.srqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_SRQ with a QP attached -> E_BUSY");
	bad0 = stat1(KITE_STAT_BAD_DOORBELLS);
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, q.qpn, 1));
	clock_step(POLL_STEP_NS);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == bad0 + 1,
	    "RQ doorbell of a QP with an SRQ: ignored, BAD_DOORBELLS +1");
	need(tqp_create_srq(&q, KITE_QPT_UD, fx_pd, fx_cq.cqn, fx_cq.cqn,
			    a.srqn, &r), &r, "CREATE_QP UD on the SRQ");
	srq_query(a.srqn, &o, &r);
	tap(o.nqp == 2, "QUERY_SRQ: two QPs attached (RC and UD)");
	cmd_obj(KITE_CMD_DESTROY_QP, q.qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of the UD QP on the SRQ");

	qs = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	qin = qp_in(&qs);
	qin.flags = KITE_QP_F_SRQ;
	qin.srqn = a.srqn;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(rq_cfg), "CREATE_QP with an SRQ and an RQ -> E_PARAM");
	qin.rq_cfg = 0;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, CQP_OFF(rq_pbl), "CREATE_QP with an SRQ and an RQ PBL -> E_PBL");
	memset(&qin.rq_pbl, 0, sizeof(qin.rq_pbl));
	qin.srqn = 200;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn), "CREATE_QP on a free SRQN -> E_OBJECT");
	qin.srqn = 0;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn), "CREATE_QP with KITE_QP_F_SRQ on SRQN 0 -> E_OBJECT");
	qin.srqn = a.srqn;
	run(KITE_CMD_CREATE_QP, &qin, KITE_CMD_CREATE_QP_V0_LEN, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_QP with KITE_QP_F_SRQ and in_len 64 -> E_LENGTH");
	qin.type = KITE_QPT_GSI;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(flags), "CREATE_QP GSI with an SRQ -> E_PARAM");
	qin = qp_in(&qs);
	qin.srqn = a.srqn;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(srqn), "CREATE_QP with srqn but no KITE_QP_F_SRQ -> E_PARAM");
	qin = qp_in(&qs);
	qin.flags |= KITE_QP_F_RQ_DBREC << 1;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(flags), "CREATE_QP with reserved flag bits -> E_PARAM");
	qin = qp_in(&qs);
	qin.flags = KITE_QP_F_SRQ | KITE_QP_F_RQ_DBREC;
	qin.srqn = a.srqn;
	qin.rq_dbrec_addr = 4096;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(flags),
	       "CREATE_QP with an SRQ and an RQ doorbell record -> E_PARAM");

	/* A user context's SRQ: doorbells only in its page, QPs of that context. */
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	pd_u1 = need(alloc_pd(u1, &r), &r, "ALLOC_PD (user)");
	in = srq_in(&t, pd_u1, 4, 6, 0);
	in.uctx = u1;
	need(srq_create_in(&in, sizeof(in), &r), &r, "CREATE_SRQ (user)");
	t.srqn = r.result;
	bad0 = stat1(KITE_STAT_BAD_DOORBELLS);
	wr64(db_addr(0), db_srq(t.srqn, 1));
	wr64(db_addr(u1 + 1), db_srq(t.srqn, 1));
	wr64(db_addr(u1), db_srq(t.srqn, 17));
	wr64(db_addr(u1), db_srq(a.srqn, 1));
	wr64(db_addr(u1), db_srq(250, 1));
	clock_step(POLL_STEP_NS);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == bad0 + 5,
	    "SRQ doorbells: another page, PI more than depth ahead, another context's SRQ, "
	    "a free SRQN -> ignored, BAD_DOORBELLS +5");
	wr64(db_addr(u1), db_srq(t.srqn, 16));
	clock_step(POLL_STEP_NS);
	srq_query(t.srqn, &o, &r);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == bad0 + 5 && o.pi == 16,
	    "SRQ doorbell in its context's page with PI = depth: accepted (pi %u)", o.pi);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while its SRQ exists -> E_BUSY");
	qs = qps(KITE_QPT_UD, pd_u1, fx_cq.cqn, 0);
	qin = qp_in(&qs);
	qin.flags = KITE_QP_F_SRQ;
	qin.srqn = t.srqn;
	qin.rq_cfg = 0;
	memset(&qin.rq_pbl, 0, sizeof(qin.rq_pbl));
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn), "kernel QP on a user context's SRQ -> E_OBJECT");
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r), &r, "DESTROY_SRQ (user)");
	cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_SRQ twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd_u1, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD (user) after its SRQ is gone");
	need(cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r), &r, "DEALLOC_UCTX");

	/* PD busy while an SRQ uses it; the table fills at 255. */
	{
		uint32_t pd3 = need(alloc_pd(0, &r), &r, "ALLOC_PD 3");

		in = srq_in(&t, pd3, 1, 6, 0);
		need(srq_create_in(&in, sizeof(in), &r), &r, "CREATE_SRQ on PD 3");
		t.srqn = r.result;
		cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while an SRQ uses it -> E_BUSY");
		need(cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r), &r, "DESTROY_SRQ on PD 3");
		need(cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r), &r, "DEALLOC_PD 3");
	}
	n = 0;
	for (;;) {
		in = srq_in(&t, fx_pd, 1, 6, 0);
		if (srq_create_in(&in, sizeof(in), &r) != KITE_CMD_OK)
			break;
		if (++n > 300)
			break;
	}
	tap((r.status & 0xff) == KITE_CMD_E_NO_RESOURCES && n == 255 - 2,
	    "CREATE_SRQ until the table is full: %u more, then E_NO_RESOURCES", n);
	cmd_obj(KITE_CMD_DESTROY_QP, q.qpn, 0, &r);
}

/* The SRQ engine fixture: a UD pair and an RC pair whose B sides use one SRQ. */
static struct {
	struct tsrq s;
	struct tcq scq, rcq;
	struct tqp ua, ub, ub2, ra, rb;
} S;

static void srq_setup(unsigned log, uint32_t limit)
{
	struct res r;

	eng_setup();
	rc_keys();
	need(srq_create(&S.s, fx_pd, log, 7, limit, &r), &r, "CREATE_SRQ");
	tcq_make(&S.scq, 6);
	tcq_make(&S.rcq, 8);
	need(tqp_create(&S.ua, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD A");
	need(tqp_create_srq(&S.ub, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn, &r),
	     &r, "CREATE_QP UD B (SRQ)");
	need(tqp_create_srq(&S.ub2, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn, &r),
	     &r, "CREATE_QP UD B2 (SRQ)");
	tqp_rts(&S.ua);
	tqp_rts(&S.ub);
	tqp_rts(&S.ub2);
	need(tqp_create(&S.ra, KITE_QPT_RC, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create_srq(&S.rb, KITE_QPT_RC, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn, &r),
	     &r, "CREATE_QP RC B (SRQ)");
	/* RNR retries without end: the SRQ runs empty on purpose. */
	rc_rts(&S.ra, S.rb.qpn, MAC, 14, 7, 7);
	rc_rts(&S.rb, S.ra.qpn, MAC, 14, 7, 7);
}

static void ud_send(struct tqp *from, uint32_t to, uint64_t src, uint32_t len)
{
	struct kite_wqe_ud av = av4(to, T_QKEY, MAC);
	struct kite_wqe_sge g = sge(len, E.lkey, src);

	post_send(from, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &g, 1, NULL, 0, true);
}

void g_srq_engine(void)
{
	static uint8_t want[6000];
	struct kite_wqe_sge g[3];
	struct kite_cmd_query_srq_out o;
	struct kite_cqe c;
	struct res r;
	uint16_t idx;
	unsigned mark, i;
	uint64_t drops;
	bool ok;

	srq_setup(4, 0);

	/* UD into the SRQ: tags echoed, data compared, two QPs share it. */
	g[0] = sge(1000, E.lkey, RBUF);
	srq_post(&S.s, 0x1234, g, 1);
	g[0] = sge(500, E.lkey, RBUF + 2048);
	g[1] = sge(500, E.lkey, RBUF + 4096);
	srq_post(&S.s, 0x0007, g, 2);
	fill_pattern(SRC, 300, 0x41, want);
	ud_send(&S.ua, S.ub.qpn, SRC, 300);
	tap(tcq_next(&S.scq, &c) && cqe_is(&c, KITE_CQE_OP_REQ, S.ua.qpn, 0), "UD A send CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.ub.qpn, 0) && c.wqe_idx == 0x1234 &&
		 c.byte_len == 340 && c.src_qpn == S.ua.qpn,
		 "UD B on the SRQ: RESP_SEND, wqe_idx = the WQE's tag 0x1234, byte_len 40+300"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 40, want, 300), "UD SEND into the SRQ WQE: payload byte for byte");
	fill_pattern(SRC, 900, 0x52, want);
	ud_send(&S.ua, S.ub2.qpn, SRC, 900);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.ub2.qpn, 0) && c.wqe_idx == 7 &&
		 c.byte_len == 940, "UD B2 takes the next SRQ WQE: tag 7, byte_len 940"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 2048 + 40, want, 460) && mem_eq(RBUF + 4096, want + 460, 440),
	    "UD SEND scattered over the SRQ WQE's two segments byte for byte");
	srq_query(S.s.srqn, &o, &r);
	tap(o.pi == 2 && o.ci == 2 && o.nqp == 3, "QUERY_SRQ: pi 2, ci 2, 3 QPs attached");
	drops = stat1(KITE_STAT_ROCE_RX_DROPS);
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == drops + 1 && tcq_drain(&S.rcq) == 0,
	    "UD SEND to a QP whose SRQ is empty: dropped, no CQE");

	/* RC into the SRQ: one and several packets. */
	g[0] = sge(200, E.lkey, RBUF);
	srq_post(&S.s, 0x100, g, 1);
	g[0] = sge(3000, E.lkey, RBUF + 1024);
	g[1] = sge(3000, E.lkey, RBUF + 8192);
	srq_post(&S.s, 0x101, g, 2);
	fill_pattern(SRC, 100, 0x10, want);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_SEND, 0), "RC SEND to the SRQ QP: REQ CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.rb.qpn, 0) && c.wqe_idx == 0x100 &&
		 c.byte_len == 100, "RC receive CQE on the SRQ: tag 0x100, byte_len 100"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 100), "RC SEND payload byte for byte");
	fill_pattern(SRC, 5000, 0x22, want);
	g[0] = sge(5000, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_SEND, 0), "RC SEND 5000 bytes: REQ CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.rb.qpn, 0) && c.wqe_idx == 0x101 &&
		 c.byte_len == 5000, "RC 5-packet SEND on the SRQ: one CQE, tag 0x101"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 1024, want, 3000) && mem_eq(RBUF + 8192, want + 3000, 2000),
	    "5000 bytes scattered over the SRQ WQE byte for byte");
	/* WRITE_IMM consumes an SRQ WQE. */
	g[0] = sge(8, E.lkey, RBUF);
	srq_post(&S.s, 0x2a, g, 1);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_RDMA_WRITE_IMM | KITE_WQE_F_SIGNALED, 0xaabbccdd, DST,
		      R.rkey, 0, 0, g, 1);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0), "RC WRITE_IMM: REQ CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, S.rb.qpn, 0) && c.wqe_idx == 0x2a &&
		 c.imm_data == 0xaabbccdd, "RC WRITE_IMM on the SRQ: RESP_WRITE_IMM, tag 0x2a"))
		cqe_diag("recv", &c);
	/* RNR while the SRQ is empty, then the SEND lands once a WQE is posted. */
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	tap(tcq_drain(&S.rcq) == 0, "RC SEND with the SRQ empty: no receive CQE (RNR NAK)");
	g[0] = sge(100, E.lkey, RBUF);
	srq_post(&S.s, 0x33, g, 1);
	run_for(50000000);
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.rb.qpn, 0) && c.wqe_idx == 0x33,
		 "after the RNR back-off the retried SEND takes the new SRQ WQE (tag 0x33)"))
		cqe_diag("recv", &c);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_SEND, 0), "and the requester completes");

	/*
	 * Resize with WQEs not taken: 16 -> 32 -> 16. The device takes them,
	 * and those posted after, from the new ring only (the old one is
	 * overwritten with WQEs that would fail).
	 */
	for (i = 0; i < 3; i++) {
		g[0] = sge(100, E.lkey, RBUF + 256 * i);
		srq_post(&S.s, (uint16_t)(0x61 + i), g, 1);
	}
	{
		struct tsrq old = S.s;

		srq_resize(&S.s, 5, 0, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ RESIZE 16 -> 32 with 3 WQEs not taken");
		for (i = 0; i < 16; i++)
			srq_post_raw(&old, 0xdead, 9, 0, g, 1, false);
	}
	g[0] = sge(100, E.lkey, RBUF + 256 * 3);
	srq_post(&S.s, 0x64, g, 1);
	ok = true;
	for (i = 0; i < 4; i++) {
		fill_pattern(SRC, 50 + i, (uint8_t)(0x70 + i), want);
		ud_send(&S.ua, S.ub.qpn, SRC, 50 + i);
		tcq_next(&S.scq, &c);
		if (!tcq_next(&S.rcq, &c) || !cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.ub.qpn, 0) ||
		    c.wqe_idx != 0x61 + i || c.byte_len != 90 + i ||
		    !mem_eq(RBUF + 256 * i + 40, want, 50 + i)) {
			cqe_diag("recv", &c);
			ok = false;
		}
	}
	tap(ok, "after the resize: the 3 WQEs copied and 1 posted to the new ring receive in order, "
	    "data byte for byte");
	srq_query(S.s.srqn, &o, &r);
	tap(o.cfg == (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 5) |
				FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 7)) && o.pi == o.ci,
	    "QUERY_SRQ: 32 WQEs, all taken");
	g[0] = sge(100, E.lkey, RBUF);
	srq_post(&S.s, 0x65, g, 1);
	srq_resize(&S.s, 4, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ RESIZE 32 -> 16 with 1 WQE not taken");
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.ub.qpn, 0) && c.wqe_idx == 0x65,
	    "after shrinking: the WQE copied to the 16-slot ring receives (tag 0x65)");

	/* The limit event. */
	srq_modify(S.s.srqn, KITE_MODIFY_SRQ_LIMIT, 3, 0, &r);
	for (i = 0; i < 4; i++) {
		g[0] = sge(100, E.lkey, RBUF + 256 * i);
		srq_post(&S.s, (uint16_t)(0x40 + i), g, 1);
	}
	mark = neqlog;
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_SRQ_LIMIT, S.s.srqn), "4 -> 3 WQEs with limit 3: no event");
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);
	eq_drain(&eq0);
	{
		const struct kite_eqe *e = eqe_find(mark, KITE_EQE_SRQ_LIMIT, S.s.srqn);

		tap(e && e->data == 2, "3 -> 2 WQEs: SRQ_LIMIT event (obj SRQN, data 2 left)");
	}
	srq_query(S.s.srqn, &o, &r);
	tap(!(o.flags & KITE_SRQ_F_ARMED), "QUERY_SRQ: the limit disarmed after the event");
	mark = neqlog;
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_SRQ_LIMIT, S.s.srqn), "disarmed: no second event");
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);

	/* Malformed SRQ WQEs complete in error and the receiving QP fails. */
	g[0] = sge(100, E.lkey, RBUF);
	srq_post_raw(&S.s, 0x77, 9, 0, g, 1, true);
	mark = neqlog;
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, S.ub.qpn, KITE_SYND_LOCAL_QP_OP) &&
	    c.wqe_idx == 0x77, "SRQ WQE with num_sge 9: RESP_ERR LOCAL_QP_OP, tag 0x77");
	tap(qp_state(S.ub.qpn) == KITE_QPS_ERR, "the UD QP goes to ERR");
	run_for(1000000);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_LAST_WQE, S.ub.qpn) != NULL,
	    "a QP with an SRQ in ERR posts QP_LAST_WQE");
	/*
	 * Once per entry into ERR: not again for ERR -> ERR, a request
	 * arriving or a send WQE flushed (UCX aborts on a second event).
	 */
	mark = neqlog;
	tap(tqp_to(&S.ub, KITE_QPS_ERR) == KITE_CMD_OK, "MODIFY_QP ERR -> ERR of a QP with an SRQ");
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	ud_send(&S.ub, S.ua.qpn, SRC, 10);
	ok = tcq_next(&S.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, S.ub.qpn, KITE_SYND_WR_FLUSH),
	    "a send posted to it in ERR is flushed");
	run_for(1000000);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_QP_LAST_WQE, S.ub.qpn),
	    "... and no second QP_LAST_WQE for it");
	srq_post_raw(&S.s, 0x78, 1, 5, g, 1, true);
	ud_send(&S.ua, S.ub2.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, S.ub2.qpn, KITE_SYND_LOCAL_QP_OP) &&
	    c.wqe_idx == 0x78, "SRQ WQE with reserved bits: RESP_ERR LOCAL_QP_OP, tag 0x78");
	g[0] = sge(100, E.lkey_ro, E.ro_iova);
	srq_post(&S.s, 0x79, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, S.rb.qpn, KITE_SYND_LOCAL_ACCESS) &&
	    c.wqe_idx == 0x79, "RC SEND into an SRQ WQE without LOCAL_WRITE: RESP_ERR LOCAL_ACCESS, tag 0x79");
	tap(qp_state(S.rb.qpn) == KITE_QPS_ERR, "the RC responder goes to ERR");
	tcq_drain(&S.scq);
	tcq_drain(&S.rcq);
	/* A WQE outside guest RAM: the SRQ enters its error state. */
	{
		struct tqp u3;

		need(tqp_create_srq(&u3, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn,
				    &r), &r, "CREATE_QP UD 3 (SRQ)");
		tqp_rts(&u3);
		g[0] = sge(100, E.lkey, 0xfff000000000ULL);
		srq_post(&S.s, 0x7a, g, 1);
		ud_send(&S.ua, u3.qpn, SRC, 10);
		tcq_next(&S.scq, &c);
		ok = tcq_next(&S.rcq, &c);
		tap(ok && c.wqe_idx == 0x7a &&
		    FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_RESP_ERR,
		    "SRQ WQE with a segment outside the MR: RESP_ERR, tag 0x7a");
		cmd_obj(KITE_CMD_DESTROY_QP, u3.qpn, 0, &r);
	}
	/* A ring outside guest RAM: the SRQ enters its error state. */
	{
		struct kite_cmd_create_srq in;
		struct tsrq x;
		struct tqp u4;

		in = srq_in(&x, fx_pd, 4, 6, 0);
		in.pbl.addr = 0xfff000000000ULL;
		need(srq_create_in(&in, sizeof(in), &r), &r, "CREATE_SRQ with its ring outside RAM");
		x.srqn = r.result;
		need(tqp_create_srq(&u4, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, x.srqn,
				    &r), &r, "CREATE_QP UD 4 (bad SRQ)");
		tqp_rts(&u4);
		wr64(db_addr(0), db_srq(x.srqn, 1));
		mark = neqlog;
		drops = stat1(KITE_STAT_ROCE_RX_DROPS);
		ud_send(&S.ua, u4.qpn, SRC, 10);
		tcq_next(&S.scq, &c);
		eq_drain(&eq0);
		tap(eqe_find(mark, KITE_EQE_SRQ_ERROR, x.srqn) != NULL &&
		    stat1(KITE_STAT_ROCE_RX_DROPS) == drops + 1 && tcq_drain(&S.rcq) == 0,
		    "SRQ WQE unreachable: SRQ_ERROR event, the message dropped, no CQE");
		srq_query(x.srqn, &o, &r);
		tap(o.state == KITE_SRQ_STATE_ERROR, "QUERY_SRQ: state ERROR");
		ud_send(&S.ua, u4.qpn, SRC, 10);
		tcq_next(&S.scq, &c);
		tap(tcq_drain(&S.rcq) == 0, "an SRQ in error takes no more WQEs");
		cmd_obj(KITE_CMD_DESTROY_QP, u4.qpn, 0, &r);
		need(cmd_obj(KITE_CMD_DESTROY_SRQ, x.srqn, 0, &r), &r, "DESTROY_SRQ in error");
	}
	cmd_obj(KITE_CMD_DESTROY_SRQ, S.s.srqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_SRQ while QPs use it -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, S.ub.qpn, 0, &r);
	cmd_obj(KITE_CMD_DESTROY_QP, S.ub2.qpn, 0, &r);
	cmd_obj(KITE_CMD_DESTROY_QP, S.rb.qpn, 0, &r);
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, S.s.srqn, 0, &r), &r, "DESTROY_SRQ");
	tap(true, "DESTROY_SRQ after its QPs are gone -> OK");
}

/* Random SRQ WQEs and doorbells under UD and RC traffic: no crash, CQEs sane. */
void g_srq_random(void)
{
	struct kite_wqe_sge g[KITE_MAX_SGE];
	struct kite_cqe c;
	unsigned i, j, n, cqes = 0, bad = 0;
	struct res r;

	srq_setup(6, 5);
	rng_state = 0x5eed5eedULL;
	for (i = 0; i < 300; i++) {
		unsigned k = rndn(10);

		if (k < 5) {
			n = rndn(KITE_MAX_SGE + 2);
			for (j = 0; j < KITE_MAX_SGE; j++)
				g[j] = sge(rndn(3) ? rndn(2048) : (uint32_t)rnd(),
					   rndn(4) ? E.lkey : (uint32_t)rnd(),
					   rndn(4) ? RBUF + rndn(8192) : rnd());
			srq_post_raw(&S.s, (uint16_t)rnd(), rndn(8) ? n : (uint32_t)rnd(),
				     rndn(10) ? 0 : (uint32_t)rnd(), g,
				     n > KITE_MAX_SGE ? KITE_MAX_SGE : n, rndn(6) != 0);
		} else if (k < 7) {
			wr64(db_addr(rndn(3)), db_srq(rndn(4) ? S.s.srqn : (uint32_t)rnd(),
						      rndn(3) ? S.s.pi : (uint32_t)rnd()));
		} else if (k < 9) {
			ud_send(&S.ua, rndn(2) ? S.ub.qpn : S.ub2.qpn, SRC, rndn(1500));
		} else {
			g[0] = sge(rndn(6000), E.lkey, SRC);
			post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
		}
		if (!rndn(20))
			srq_modify(S.s.srqn, KITE_MODIFY_SRQ_LIMIT, rndn(80), 0, &r);
		if (!rndn(8)) {
			clock_step(POLL_STEP_NS);
			while (tcq_next(&S.rcq, &c)) {
				cqes++;
				if (c.qpn != S.ub.qpn && c.qpn != S.ub2.qpn && c.qpn != S.rb.qpn)
					bad++;
			}
			tcq_drain(&S.scq);
		}
	}
	run_for(5000000);
	while (tcq_next(&S.rcq, &c))
		cqes++;
	eq_drain(&eq0);
	tap(bad == 0, "random SRQ WQEs, doorbells and traffic: %u receive CQEs, every one "
	    "for a QP on the SRQ", cqes);
	tap(nop(&r) == KITE_CMD_OK, "the device still answers commands");
}
