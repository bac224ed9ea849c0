/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): QP creation, the QP state
 * machine and QP counter sets (groups qp_create, qp_modify, cntr).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Group: QP creation                                                  */
/* ------------------------------------------------------------------ */

void g_qp_create(void)
{
	struct res r;
	struct qpspec s;
	struct kite_cmd_create_qp in;
	uint32_t rc, ud, gsi, v;

	fixture();
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	rc = need(create_qp(&s, &r), &r, "CREATE_QP RC");
	tap(rc == 2, "first RC QP gets QPN 2 (got %u)", rc);
	tap(qp_state(rc) == KITE_QPS_RESET, "new QP is in RESET");
	s.type = KITE_QPT_UD;
	ud = need(create_qp(&s, &r), &r, "CREATE_QP UD");
	tap(ud == 3, "UD QP gets the next QPN 3 (got %u)", ud);
	s.type = KITE_QPT_GSI;
	gsi = need(create_qp(&s, &r), &r, "CREATE_QP GSI");
	tap(gsi == 1, "GSI QP gets QPN 1 (got %u)", gsi);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "a second GSI QP -> E_STATE");
	s.type = 0;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "QP type 0 -> E_PARAM");
	s.type = 5;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "QP type 5 -> E_PARAM");
	s.type = KITE_QPT_UC;
	v = need(create_qp(&s, &r), &r, "CREATE_QP UC");
	tap(v >= 2 && v < 1024, "UC QP (type 4) created, QPN %u", v);
	cmd_obj(KITE_CMD_DESTROY_QP, v, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP UC");
	s = qps(KITE_QPT_RC, 555, fx_cq.cqn, 0);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "nonexistent PD -> E_OBJECT");
	s = qps(KITE_QPT_RC, 0, fx_cq.cqn, 0);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "PD 0 -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.scqn = 777;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "nonexistent send CQ -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rcqn = 0;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "recv CQ 0 -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 42);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "unallocated uctx -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.flags = BIT(2);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "unknown QP flag -> E_PARAM");
	s.flags = KITE_QP_F_SQ_SIG_ALL;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_OK, -1, "flag SQ_SIG_ALL accepted");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.slog = 0;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ log depth 0 -> E_PARAM");
	s.slog = 13;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ log depth 13 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rlog = 13;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RQ log depth 13 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.sshift = 5;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ WQE shift 5 -> E_PARAM");
	s.sshift = 11;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ WQE shift 11 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rshift = 11;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RQ WQE shift 11 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.slog = 1;
	s.sshift = 6;
	s.rlog = 12;
	s.rshift = 10;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_OK, -1, "SQ depth 2 x 64 B (level 0), RQ depth 4096 x 1 KiB (4 MiB, level 2)");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	in = qp_in(&s);
	in.sq_pbl = qbuf_for(8192).pbl;
	run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ buffer of 8 KiB for a 4 KiB SQ -> E_PARAM");
	in = qp_in(&s);
	in.rq_pbl.cfg = pbl_cfg(3, 12);
	run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_create_qp, rq_pbl),
	       "malformed RQ PBL -> E_PBL, syndrome 48");
	in = qp_in(&s);
	in.sq_pbl.cfg = pbl_cfg(0, 25);
	run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_create_qp, sq_pbl),
	       "malformed SQ PBL -> E_PBL, syndrome 32");
	in = qp_in(&s);
	run(KITE_CMD_CREATE_QP, &in, KITE_CMD_CREATE_QP_V0_LEN - 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_QP with in_len 60 -> E_LENGTH");
	in = qp_in(&s);
	need(run(KITE_CMD_CREATE_QP, &in, KITE_CMD_CREATE_QP_V0_LEN, 0, 0, &r), &r,
	     "CREATE_QP with in_len 64 (no srqn field) -> OK");
	tap(true, "CREATE_QP with in_len 64 (the input before srqn) -> OK");
	cmd_obj(KITE_CMD_DESTROY_QP, r.result, 0, &r);

	cmd_obj(KITE_CMD_DEALLOC_PD, fx_pd, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while QPs use it -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, 999, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_QP of a nonexistent QP -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_QP, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_QP 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_QP, gsi, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP GSI");
	s = qps(KITE_QPT_GSI, fx_pd, fx_cq.cqn, 0);
	create_qp(&s, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 1, "GSI can be created again after destroy (QPN %u)", r.result);
	cmd_obj(KITE_CMD_DESTROY_QP, rc, 0, &r);
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	create_qp(&s, &r);
	tap(r.done && !(r.status & 0xff) && r.result > rc,
	    "a freed QPN is not reused at once: round robin (freed %u, got %u)", rc, r.result);
	(void)ud;
}

/* ------------------------------------------------------------------ */
/* Group: QP state machine                                             */
/* ------------------------------------------------------------------ */

#define A_ACCESS	KITE_QP_ATTR_ACCESS
#define A_PKEY		KITE_QP_ATTR_PKEY_INDEX
#define A_PORT		KITE_QP_ATTR_PORT
#define A_QKEY		KITE_QP_ATTR_QKEY
#define A_AV		KITE_QP_ATTR_AV
#define A_MTU		KITE_QP_ATTR_PATH_MTU
#define A_TIMEOUT	KITE_QP_ATTR_TIMEOUT
#define A_RETRY		KITE_QP_ATTR_RETRY_CNT
#define A_RNR		KITE_QP_ATTR_RNR_RETRY
#define A_RQPSN		KITE_QP_ATTR_RQ_PSN
#define A_MAXRD		KITE_QP_ATTR_MAX_QP_RD_ATOMIC
#define A_MINRNR	KITE_QP_ATTR_MIN_RNR_TIMER
#define A_SQPSN		KITE_QP_ATTR_SQ_PSN
#define A_MAXDRD	KITE_QP_ATTR_MAX_DEST_RD_ATOMIC
#define A_DQPN		KITE_QP_ATTR_DEST_QPN
#define A_ALL		GENMASK(16, 2)

static const char *attr_name(unsigned bit)
{
	static const char *n[] = { "STATE", "CUR_STATE", "ACCESS", "PKEY_INDEX", "PORT",
		"QKEY", "AV", "PATH_MTU", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "RQ_PSN",
		"MAX_QP_RD_ATOMIC", "MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "DEST_QPN" };

	return bit < ARRAY_SIZE(n) ? n[bit] : "?";
}

/*
 * At state `from`: every missing required attribute and every extra
 * attribute fails with E_PARAM (syndrome = offset of mask) and leaves the QP
 * in `from`; then R|O succeeds and the QP is in `to`.
 */
static void transition(const char *tname, uint32_t qpn, const struct kite_cmd_modify_qp *a,
		       unsigned from, unsigned to, uint32_t req, uint32_t opt)
{
	const int syn = offsetof(struct kite_cmd_modify_qp, mask);
	unsigned b, bad = 0, n = 0;
	struct res r;
	struct kite_cmd_modify_qp cur = *a;

	cur.cur_state = (uint8_t)from;
	a = &cur;

	for (b = 2; b <= 16; b++) {
		if (!(req & BIT(b)))
			continue;
		n++;
		modify_qp(a, KITE_QP_ATTR_STATE | (req & ~BIT(b)), (uint8_t)to, &r);
		if (!r.done || (r.status & 0xff) != KITE_CMD_E_PARAM ||
		    FIELD_GET(KITE_CMD_STATUS_SYNDROME, r.status) != (unsigned)syn) {
			bad++;
			diag("without %s: status 0x%x (%s)", attr_name(b), r.status, code_name(r.status & 0xff));
		}
	}
	if (n)
		tap(bad == 0 && qp_state(qpn) == (int)from,
		    "%s %s->%s: each missing required attribute -> E_PARAM syndrome 4 (%u cases)",
		    tname, st_name(from), st_name(to), n);
	n = bad = 0;
	for (b = 2; b <= 16; b++) {
		if ((req | opt) & BIT(b))
			continue;
		n++;
		modify_qp(a, KITE_QP_ATTR_STATE | req | BIT(b), (uint8_t)to, &r);
		if (!r.done || (r.status & 0xff) != KITE_CMD_E_PARAM ||
		    FIELD_GET(KITE_CMD_STATUS_SYNDROME, r.status) != (unsigned)syn) {
			bad++;
			diag("with extra %s: status 0x%x (%s)", attr_name(b), r.status, code_name(r.status & 0xff));
		}
	}
	tap(bad == 0 && qp_state(qpn) == (int)from,
	    "%s %s->%s: each not-allowed attribute -> E_PARAM syndrome 4 (%u cases)",
	    tname, st_name(from), st_name(to), n);
	modify_qp(a, KITE_QP_ATTR_STATE | req | opt, (uint8_t)to, &r);
	expect(&r, KITE_CMD_OK, -1, "%s %s->%s with required + optional attributes", tname,
	       st_name(from), st_name(to));
	tap(qp_state(qpn) == (int)to, "%s QP now in %s", tname, st_name(to));
}

static void bad_value(uint32_t qpn, struct kite_cmd_modify_qp a, uint32_t mask, uint8_t to,
		      int off, const char *what)
{
	struct res r;
	int before = qp_state(qpn);

	modify_qp(&a, mask, to, &r);
	expect(&r, KITE_CMD_E_PARAM, off, "%s -> E_PARAM, syndrome %d", what, off);
	if (qp_state(qpn) != before)
		diag("QP state changed from %d", before);
}

#define OFF(f) ((int)offsetof(struct kite_cmd_modify_qp, f))

void g_qp_modify(void)
{
	const uint32_t S = KITE_QP_ATTR_STATE;
	const uint32_t RC_INIT_R = A_PKEY | A_PORT | A_ACCESS;
	const uint32_t RC_RTR_R = A_AV | A_MTU | A_DQPN | A_RQPSN | A_MAXDRD | A_MINRNR;
	const uint32_t RC_RTR_O = A_ACCESS | A_PKEY;
	const uint32_t RC_RTS_R = A_SQPSN | A_TIMEOUT | A_RETRY | A_RNR | A_MAXRD;
	const uint32_t RC_RTS_O = A_ACCESS | A_MINRNR;
	const uint32_t UD_INIT_R = A_PKEY | A_PORT | A_QKEY;
	struct kite_cmd_modify_qp a, o;
	struct qpspec s;
	struct res r;
	uint32_t rc, ud, gsi, v;
	unsigned bad, mark;
	int c;

	fixture();
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	rc = need(create_qp(&s, &r), &r, "CREATE_QP RC");
	a = attrs_valid(rc);

	/* Illegal transitions from RESET. */
	modify_qp(&a, S | RC_RTR_R, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RESET->RTR -> E_STATE");
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RESET->RTS -> E_STATE");
	modify_qp(&a, S, KITE_QPS_SQD, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RESET->SQD -> E_STATE");
	a.cur_state = KITE_QPS_INIT;
	modify_qp(&a, S | RC_INIT_R | KITE_QP_ATTR_CUR_STATE, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "CUR_STATE INIT while the QP is in RESET -> E_STATE");
	a.cur_state = KITE_QPS_RESET;
	tap(qp_state(rc) == KITE_QPS_RESET, "QP still in RESET after the refused modifies");

	/* Value checks at RESET->INIT. */
	a.port = 2;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(port), "port 2");
	a.port = 0;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(port), "port 0");
	a = attrs_valid(rc);
	a.pkey_index = 1;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(pkey_index), "pkey_index 1");
	a = attrs_valid(rc);
	a.access = BIT(4);
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(access), "access with MW_BIND (MRs only)");
	a = attrs_valid(rc);
	a.access = BIT(6);
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(access), "access with an unknown bit");
	a = attrs_valid(rc);
	a.rsvd[0] = 1;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(rsvd), "reserved word non-zero");
	a = attrs_valid(rc);
	bad_value(rc, a, S | RC_INIT_R | BIT(17), KITE_QPS_INIT, OFF(mask), "unknown mask bit 17");

	/* The RC sequence with the attribute-set checks. */
	a.cur_state = KITE_QPS_RESET;
	transition("RC", rc, &a, KITE_QPS_RESET, KITE_QPS_INIT, RC_INIT_R, KITE_QP_ATTR_CUR_STATE);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_OK, -1, "RC INIT->INIT with PKEY/PORT/ACCESS (all optional)");
	modify_qp(&a, A_ACCESS, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RC modify without STATE in INIT (INIT->INIT, ACCESS)");
	modify_qp(&a, S | A_QKEY, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "RC INIT->INIT with QKEY -> E_PARAM");
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC INIT->RTS -> E_STATE");
	a.cur_state = KITE_QPS_RESET;
	modify_qp(&a, S | RC_RTR_R | KITE_QP_ATTR_CUR_STATE, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "CUR_STATE RESET while the QP is in INIT -> E_STATE");

	/* Value checks at INIT->RTR. */
	a = attrs_valid(rc);
	a.path_mtu = 0;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(path_mtu), "path_mtu 0");
	a.path_mtu = 6;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(path_mtu), "path_mtu 6");
	a = attrs_valid(rc);
	a.rq_psn = 1u << 24;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(rq_psn), "rq_psn 2^24");
	a = attrs_valid(rc);
	a.dest_qpn = 1u << 24;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(dest_qpn), "dest_qpn 2^24");
	a = attrs_valid(rc);
	a.max_dest_rd_atomic = 129;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(max_dest_rd_atomic), "max_dest_rd_atomic 129");
	a = attrs_valid(rc);
	a.min_rnr_timer = 32;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(min_rnr_timer), "min_rnr_timer 32");
	a = attrs_valid(rc);
	a.sgid_index = 1;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(sgid_index), "sgid_index of an empty GID entry");
	a.sgid_index = 16;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(sgid_index), "sgid_index 16");
	a = attrs_valid(rc);
	a.net_type = KITE_NET_ROCE_V2_IPV6;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(net_type), "net_type not the GID entry's type");
	a = attrs_valid(rc);
	a.flow_label = 0x100000;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(flow_label), "flow_label 0x100000");

	a = attrs_valid(rc);
	transition("RC", rc, &a, KITE_QPS_INIT, KITE_QPS_RTR, RC_RTR_R, RC_RTR_O | KITE_QP_ATTR_CUR_STATE);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RTR->INIT -> E_STATE");

	/* Value checks at RTR->RTS. */
	a = attrs_valid(rc);
	a.sq_psn = 0x1000000;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(sq_psn), "sq_psn 2^24");
	a = attrs_valid(rc);
	a.timeout = 32;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(timeout), "timeout 32");
	a = attrs_valid(rc);
	a.retry_cnt = 8;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(retry_cnt), "retry_cnt 8");
	a = attrs_valid(rc);
	a.rnr_retry = 8;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(rnr_retry), "rnr_retry 8");
	a = attrs_valid(rc);
	a.max_rd_atomic = 129;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(max_rd_atomic), "max_rd_atomic 129");

	a = attrs_valid(rc);
	a.sq_psn = KITE_PSN_MASK;
	transition("RC", rc, &a, KITE_QPS_RTR, KITE_QPS_RTS, RC_RTS_R, RC_RTS_O);

	/* QUERY_QP returns what was set. */
	c = query_qp(rc, &o, &r);
	bad = 0;
	v = RC_INIT_R | RC_RTR_R | RC_RTS_R;
	CHK(c == KITE_CMD_OK, "QUERY_QP status 0x%x", r.status);
	CHK((o.mask & v) == v, "mask 0x%x lacks 0x%x", o.mask, v & ~o.mask);
	CHK(o.qpn == rc, "qpn %u", o.qpn);
	CHK(o.state == KITE_QPS_RTS, "state %u", o.state);
	CHK(o.port == 1 && o.pkey_index == 0, "port %u pkey %u", o.port, o.pkey_index);
	CHK(o.access == a.access, "access 0x%x", o.access);
	CHK(o.path_mtu == a.path_mtu, "path_mtu %u", o.path_mtu);
	CHK(o.dest_qpn == a.dest_qpn, "dest_qpn 0x%x", o.dest_qpn);
	CHK(o.rq_psn == a.rq_psn, "rq_psn 0x%x", o.rq_psn);
	CHK(o.sq_psn == KITE_PSN_MASK, "sq_psn 0x%x", o.sq_psn);
	CHK(o.max_rd_atomic == a.max_rd_atomic, "max_rd_atomic %u", o.max_rd_atomic);
	CHK(o.max_dest_rd_atomic == a.max_dest_rd_atomic, "max_dest_rd_atomic %u", o.max_dest_rd_atomic);
	CHK(o.min_rnr_timer == a.min_rnr_timer, "min_rnr_timer %u", o.min_rnr_timer);
	CHK(o.timeout == a.timeout && o.retry_cnt == a.retry_cnt && o.rnr_retry == a.rnr_retry,
	    "timeout %u retry %u rnr %u", o.timeout, o.retry_cnt, o.rnr_retry);
	CHK(o.sgid_index == 0 && o.hop_limit == a.hop_limit && o.net_type == a.net_type &&
	    o.flow_label == a.flow_label, "sgid %u hop %u net %u flow 0x%x", o.sgid_index,
	    o.hop_limit, o.net_type, o.flow_label);
	CHK(!memcmp(o.dmac, a.dmac, 6) && !memcmp(o.dgid, a.dgid, 16), "dmac/dgid differ");
	tap(bad == 0, "QUERY_QP (RC in RTS) returns every attribute set (%u wrong)", bad);
	run(KITE_CMD_QUERY_QP, &(struct kite_cmd_obj){ .obj = rc }, 8, sizeof(o) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_QP with out_len 79 -> E_LENGTH");
	query_qp(999, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_QP of a nonexistent QP -> E_OBJECT");

	/* RTS->RTS, SQD. */
	a.access = KITE_ACCESS_REMOTE_READ;
	modify_qp(&a, A_ACCESS | A_MINRNR, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTS->RTS (no STATE) with ACCESS, MIN_RNR_TIMER");
	query_qp(rc, &o, &r);
	tap(o.access == KITE_ACCESS_REMOTE_READ && o.state == KITE_QPS_RTS, "QUERY_QP shows the new access (0x%x)", o.access);
	modify_qp(&a, S | A_SQPSN, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "RC RTS->RTS with SQ_PSN -> E_PARAM");
	mark = neqlog;
	modify_qp(&a, S, KITE_QPS_SQD, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTS->SQD");
	tap(eqe_find(mark, KITE_EQE_SQ_DRAINED, rc) != NULL, "RTS->SQD posts SQ_DRAINED (obj QPN) to EQ0");
	modify_qp(&a, S | A_ACCESS, KITE_QPS_SQD, &r);
	expect(&r, KITE_CMD_OK, -1, "RC SQD->SQD with ACCESS");
	modify_qp(&a, S, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_OK, -1, "RC SQD->RTS");
	modify_qp(&a, S | A_PORT, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "RC RTS->ERR with an attribute -> E_PARAM");
	modify_qp(&a, S, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTS->ERR");
	tap(qp_state(rc) == KITE_QPS_ERR, "QP in ERR");
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC ERR->RTS -> E_STATE");
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	expect(&r, KITE_CMD_OK, -1, "RC ERR->RESET");
	query_qp(rc, &o, &r);
	tap(o.state == KITE_QPS_RESET && !(o.mask & (A_SQPSN | A_RQPSN | A_AV | A_DQPN)),
	    "after ->RESET the QP forgot PSNs/AV (mask 0x%x)", o.mask);
	a = attrs_valid(rc);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RESET->INIT again");
	modify_qp(&a, S, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_OK, -1, "RC INIT->ERR");
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	modify_qp(&a, S | RC_RTR_R, KITE_QPS_RTR, &r);
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTR->RESET");
	modify_qp(&a, S, 7, &r);
	expect2(&r, KITE_CMD_E_PARAM, KITE_CMD_E_STATE, "modify to state 7 (not a state) refused");
	modify_qp(&a, S, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RESET->ERR");
	a.qpn = 888;
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_QP of a nonexistent QP -> E_OBJECT");

	/* UD */
	s = qps(KITE_QPT_UD, fx_pd, fx_cq.cqn, 0);
	ud = need(create_qp(&s, &r), &r, "CREATE_QP UD");
	a = attrs_valid(ud);
	transition("UD", ud, &a, KITE_QPS_RESET, KITE_QPS_INIT, UD_INIT_R, 0);
	transition("UD", ud, &a, KITE_QPS_INIT, KITE_QPS_RTR, 0, A_PKEY | A_QKEY);
	transition("UD", ud, &a, KITE_QPS_RTR, KITE_QPS_RTS, A_SQPSN, A_QKEY);
	a.qkey = 0x22222222;
	modify_qp(&a, A_QKEY, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "UD RTS->RTS with QKEY");
	query_qp(ud, &o, &r);
	tap(o.state == KITE_QPS_RTS && o.qkey == 0x22222222 && o.sq_psn == a.sq_psn &&
	    (o.mask & (A_QKEY | A_SQPSN | A_PORT | A_PKEY)) == (A_QKEY | A_SQPSN | A_PORT | A_PKEY),
	    "QUERY_QP (UD in RTS): qkey, sq_psn, mask (mask 0x%x qkey 0x%x)", o.mask, o.qkey);
	modify_qp(&a, A_ACCESS, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "UD RTS->RTS with ACCESS -> E_PARAM");

	/*
	 * UC: the IB table. RTR needs AV, PATH_MTU, DEST_QPN, RQ_PSN, not
	 * MAX_DEST_RD_ATOMIC or MIN_RNR_TIMER; RTS needs SQ_PSN only.
	 */
	s = qps(KITE_QPT_UC, fx_pd, fx_cq.cqn, 0);
	v = need(create_qp(&s, &r), &r, "CREATE_QP UC");
	a = attrs_valid(v);
	transition("UC", v, &a, KITE_QPS_RESET, KITE_QPS_INIT, RC_INIT_R, 0);
	transition("UC", v, &a, KITE_QPS_INIT, KITE_QPS_INIT, 0, RC_INIT_R);
	modify_qp(&a, S | A_AV | A_MTU | A_DQPN | A_RQPSN | A_MAXDRD | A_MINRNR, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask),
	       "UC INIT->RTR with RC's MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER -> E_PARAM");
	transition("UC", v, &a, KITE_QPS_INIT, KITE_QPS_RTR, A_AV | A_MTU | A_DQPN | A_RQPSN,
		   A_ACCESS | A_PKEY);
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask),
	       "UC RTR->RTS with RC's TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC -> E_PARAM");
	transition("UC", v, &a, KITE_QPS_RTR, KITE_QPS_RTS, A_SQPSN, A_ACCESS);
	transition("UC", v, &a, KITE_QPS_RTS, KITE_QPS_RTS, 0, A_ACCESS);
	transition("UC", v, &a, KITE_QPS_RTS, KITE_QPS_SQD, 0, A_ACCESS);
	transition("UC", v, &a, KITE_QPS_SQD, KITE_QPS_RTS, 0, A_ACCESS);
	query_qp(v, &o, &r);
	tap(o.state == KITE_QPS_RTS && o.dest_qpn == a.dest_qpn && o.rq_psn == a.rq_psn &&
	    o.sq_psn == a.sq_psn && !(o.mask & (A_QKEY | A_MAXDRD | A_MINRNR | A_TIMEOUT)),
	    "QUERY_QP (UC in RTS): dest_qpn, PSNs, no RC-only or UD-only attribute (mask 0x%x)",
	    o.mask);

	/* GSI, like UD. */
	s = qps(KITE_QPT_GSI, fx_pd, fx_cq.cqn, 0);
	gsi = need(create_qp(&s, &r), &r, "CREATE_QP GSI");
	a = attrs_valid(gsi);
	modify_qp(&a, S | UD_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_OK, -1, "GSI RESET->INIT");
	modify_qp(&a, S, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_OK, -1, "GSI INIT->RTR");
	modify_qp(&a, S | A_AV, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "GSI RTR->RTS with AV -> E_PARAM");
	modify_qp(&a, S, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "GSI RTR->RTS without SQ_PSN -> E_PARAM");
	modify_qp(&a, S | A_SQPSN, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_OK, -1, "GSI RTR->RTS");
	tap(qp_state(gsi) == KITE_QPS_RTS, "GSI in RTS");
	cmd_obj(KITE_CMD_DESTROY_QP, gsi, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP in RTS");
	cmd_obj(KITE_CMD_DESTROY_QP, rc, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP in ERR");
}

/* ------------------------------------------------------------------ */
/* QP counter sets                                                     */
/* ------------------------------------------------------------------ */

static int cntr_query(uint32_t set, uint64_t *v, struct res *r)
{
	struct kite_cmd_obj in = { .obj = set };
	int code = run(KITE_CMD_QUERY_CNTR, &in, sizeof(in), KITE_QP_STAT_COUNT * 8, 0, r);

	if (!code)
		memcpy(v, r->out, KITE_QP_STAT_COUNT * 8);
	return code;
}

static int cntr_set_qp(uint32_t qpn, uint32_t set, struct res *r)
{
	struct kite_cmd_set_qp_cntr in = { .qpn = qpn, .cntr = set };

	return run(KITE_CMD_SET_QP_CNTR, &in, sizeof(in), 0, 0, r);
}

static uint64_t cntr1(uint32_t set, unsigned stat)
{
	uint64_t v[KITE_QP_STAT_COUNT];
	struct res r;

	need(cntr_query(set, v, &r), &r, "QUERY_CNTR");
	return v[stat];
}

void g_cntr(void)
{
	uint64_t v[KITE_QP_STAT_COUNT], base[KITE_QP_STAT_COUNT];
	struct kite_wqe_sge g[1];
	struct kite_cmd_set_qp_cntr sq;
	struct rcpair P;
	struct res r;
	uint32_t sa, sb, set, n, i, codes = 0;
	uint16_t idx;
	bool zero = true;

	eng_setup();
	rc_keys();
	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out), 0, &r),
	     &r, "QUERY_DEVICE");
	tap(((struct kite_cmd_query_device_out *)r.out)->max_cntr == 64 &&
	    (((struct kite_cmd_query_device_out *)r.out)->features & KITE_FEAT_QP_CNTR),
	    "QUERY_DEVICE: KITE_FEAT_QP_CNTR, max_cntr 64");
	need(cntr_query(0, base, &r), &r, "QUERY_CNTR 0");
	tap(r.result == KITE_QP_STAT_COUNT, "QUERY_CNTR 0: result %u counters", r.result);

	sa = need(run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r), &r, "ALLOC_CNTR");
	sb = need(run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r), &r, "ALLOC_CNTR");
	tap(sa == 1 && sb == 2, "ALLOC_CNTR: lowest free sets 1 and 2 (%u, %u)", sa, sb);
	need(cntr_query(sa, v, &r), &r, "QUERY_CNTR new set");
	for (i = 0; i < KITE_QP_STAT_COUNT; i++)
		zero &= !v[i];
	tap(zero, "a new set's counters are zero");

	/* A 5000-byte SEND, five packets at MTU 1024, each QP in its set. */
	rc_pair(&P, MAC, 14, 7, 1);
	need(cntr_set_qp(P.a.qpn, sa, &r), &r, "SET_QP_CNTR A");
	need(cntr_set_qp(P.b.qpn, sb, &r), &r, "SET_QP_CNTR B");
	g[0] = sge(6000, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(5000, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "SEND 5000 bytes: REQ CQE");
	tcq_drain(&P.rcq);
	need(cntr_query(sa, v, &r), &r, "QUERY_CNTR A's set");
	tap(v[KITE_QP_STAT_TX_PKTS] == 5 && v[KITE_QP_STAT_TX_BYTES] > 5000,
	    "requester's set: 5 packets sent, more than 5000 bytes (%" PRIu64 ", %" PRIu64 ")",
	    v[KITE_QP_STAT_TX_PKTS], v[KITE_QP_STAT_TX_BYTES]);
	tap(v[KITE_QP_STAT_RX_PKTS] >= 1 &&
	    v[KITE_QP_STAT_RX_PKTS] == cntr1(sb, KITE_QP_STAT_TX_PKTS) &&
	    v[KITE_QP_STAT_RX_BYTES] == cntr1(sb, KITE_QP_STAT_TX_BYTES),
	    "the ACKs the responder sent are the packets the requester received (%" PRIu64 ")",
	    v[KITE_QP_STAT_RX_PKTS]);
	tap(cntr1(sb, KITE_QP_STAT_RX_PKTS) == 5 &&
	    cntr1(sb, KITE_QP_STAT_RX_BYTES) == v[KITE_QP_STAT_TX_BYTES],
	    "responder's set: the 5 packets and their bytes received");
	tap(!v[KITE_QP_STAT_RETRIES] && !v[KITE_QP_STAT_RX_DROPS],
	    "no loss: no retry, no drop");
	need(cntr_query(0, v, &r), &r, "QUERY_CNTR 0");
	tap(v[KITE_QP_STAT_TX_PKTS] == base[KITE_QP_STAT_TX_PKTS] &&
	    v[KITE_QP_STAT_RX_PKTS] == base[KITE_QP_STAT_RX_PKTS],
	    "the default set counted none of it");

	/* An RNR NAK, then RNR retry exhausted (rnr_retry 1): two NAKs. */
	g[0] = sge(64, E.lkey, SRC);
	post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(5000000);
	tcq_drain(&P.scq);
	tap(cntr1(sb, KITE_QP_STAT_RNR_NAKS_SENT) == 2 &&
	    cntr1(sa, KITE_QP_STAT_RNR_NAKS_RCVD) == 2,
	    "rnr_retry 1, no RQ WQE: two RNR NAKs sent and received");

	/* A set in use is not freed; a QP moved away leaves its counts. */
	cmd_obj(KITE_CMD_DEALLOC_CNTR, sa, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_CNTR of a set a QP counts in: E_BUSY");
	n = (uint32_t)cntr1(sa, KITE_QP_STAT_TX_PKTS);
	need(cntr_set_qp(P.a.qpn, 0, &r), &r, "SET_QP_CNTR A back to 0");
	tap(cntr1(sa, KITE_QP_STAT_TX_PKTS) == n, "moving the QP keeps what its set counted");
	cmd_obj(KITE_CMD_DEALLOC_CNTR, sa, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_CNTR once no QP counts in it");
	cmd_obj(KITE_CMD_QUERY_CNTR, sa, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QUERY_CNTR of a freed set: E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_QP, P.b.qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of a QP counting in set %u", sb);
	cmd_obj(KITE_CMD_DEALLOC_CNTR, sb, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "a destroyed QP counts nowhere: its set is freed");

	/* Bad input. */
	cmd_obj(KITE_CMD_DEALLOC_CNTR, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DEALLOC_CNTR 0 (the default set): E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_CNTR, 64, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DEALLOC_CNTR 64 (beyond max_cntr): E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_CNTR, 7, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DEALLOC_CNTR of a set never allocated: E_OBJECT");
	cmd_obj(KITE_CMD_QUERY_CNTR, 0, 5, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "QUERY_CNTR with a user context: E_PARAM at uctx");
	cmd_obj(KITE_CMD_QUERY_CNTR, 0xffffffff, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QUERY_CNTR 0xffffffff: E_OBJECT");
	{
		struct kite_cmd_obj in = { .obj = 0 };

		run(KITE_CMD_QUERY_CNTR, &in, sizeof(in), 12, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_CNTR out_len 12 (not 8n): E_LENGTH");
		run(KITE_CMD_QUERY_CNTR, &in, sizeof(in), 16, 0, &r);
		tap(r.done && !(r.status & 0xff) && r.result == 2,
		    "QUERY_CNTR out_len 16: the first 2 counters (result %u)", r.result);
		run(KITE_CMD_QUERY_CNTR, &in, 4, 8 * KITE_QP_STAT_COUNT, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_CNTR in_len 4: E_LENGTH");
	}
	cntr_set_qp(P.a.qpn, 9, &r);
	expect(&r, KITE_CMD_E_OBJECT, 4, "SET_QP_CNTR to an unallocated set: E_OBJECT at cntr");
	cntr_set_qp(P.a.qpn, 64, &r);
	expect(&r, KITE_CMD_E_OBJECT, 4, "SET_QP_CNTR to set 64: E_OBJECT at cntr");
	cntr_set_qp(P.b.qpn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "SET_QP_CNTR of a destroyed QP: E_OBJECT at qpn");
	cntr_set_qp(0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "SET_QP_CNTR of QPN 0: E_OBJECT at qpn");
	sq.qpn = P.a.qpn;
	sq.cntr = 0;
	run(KITE_CMD_SET_QP_CNTR, &sq, 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "SET_QP_CNTR in_len 4: E_LENGTH");

	/* Every set but 0 can be allocated, and no more. */
	for (n = 0; n < 100; n++)
		if (run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r))
			break;
	tap(n == 63, "ALLOC_CNTR hands out sets 1 .. 63: %u allocated", n);
	expect(&r, KITE_CMD_E_NO_RESOURCES, -1, "the 64th ALLOC_CNTR: E_NO_RESOURCES");
	for (set = 1; set < 64; set++)
		cmd_obj(KITE_CMD_DEALLOC_CNTR, set, 0, &r);

	/* Random commands: each completes, with OK or an error code. */
	rng_state = 0xc0117e55ULL;
	for (i = 0; i < 400; i++) {
		uint32_t q = rndn(4) ? P.a.qpn : (uint32_t)rnd();
		uint32_t s = rndn(3) ? rndn(70) : (uint32_t)rnd();
		int code;

		switch (rndn(4)) {
		case 0:
			code = run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r);
			break;
		case 1:
			code = cmd_obj(KITE_CMD_DEALLOC_CNTR, s, rndn(8) ? 0 : (uint32_t)rnd(), &r);
			break;
		case 2:
			code = cntr_set_qp(q, s, &r);
			break;
		default: {
			uint8_t in[KITE_CMD_PAYLOAD_SIZE] = {};

			memcpy(in, &s, sizeof(s));
			code = run(KITE_CMD_QUERY_CNTR, in, rndn(4) ? 8 : rndn(300),
				   rndn(4) ? 96 : rndn(300), 0, &r);
			break;
		}
		}
		if (code < 0 || (code > KITE_CMD_E_BUSY && code != KITE_CMD_E_LENGTH))
			break;
		codes |= 1u << code;
	}
	tap(i == 400, "400 random counter commands completed with a known status (%u)", i);
	tap((codes & 1) && (codes & (1u << KITE_CMD_E_OBJECT)),
	    "the random commands both succeeded and failed (codes 0x%x)", codes);
	need(cntr_set_qp(P.a.qpn, 0, &r), &r, "SET_QP_CNTR A back to 0");
	for (set = 1, n = 0; set < 64; set++)
		n += !cmd_obj(KITE_CMD_DEALLOC_CNTR, set, 0, &r);
	for (set = 1; set < 64; set++)
		if (run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r))
			break;
	tap(set == 64, "after the random commands every set is free again (%u freed)", n);
	tap(nop(&r) == KITE_CMD_OK, "device still answers");
}
