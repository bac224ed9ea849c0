/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): UD multicast (groups mcast,
 * mcast_engine, mcast_random).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* UD multicast                                                        */
/* ------------------------------------------------------------------ */

#define MC_GID_OFF	offsetof(struct kite_cmd_mcast, gid)
#define MC_RSVD_OFF	offsetof(struct kite_cmd_mcast, rsvd)

static int mcast_raw(uint32_t op, uint32_t qpn, const uint8_t *gid, uint32_t rsvd, size_t len,
		     struct res *r)
{
	struct kite_cmd_mcast in;

	memset(&in, 0, sizeof(in));
	in.qpn = qpn;
	in.rsvd = rsvd;
	memcpy(in.gid, gid, 16);
	return run(op, &in, len, 0, 0, r);
}

static int mc_attach(uint32_t qpn, const uint8_t *gid, struct res *r)
{
	return mcast_raw(KITE_CMD_ATTACH_MCAST, qpn, gid, 0, sizeof(struct kite_cmd_mcast), r);
}

static int mc_detach(uint32_t qpn, const uint8_t *gid, struct res *r)
{
	return mcast_raw(KITE_CMD_DETACH_MCAST, qpn, gid, 0, sizeof(struct kite_cmd_mcast), r);
}

/* ::ffff:a.b.c.d */
static void gid4(uint8_t *gid, uint32_t ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	put32(gid + 12, ip);
}

/* ff0e::low */
static void gid6(uint8_t *gid, uint32_t low)
{
	memset(gid, 0, 16);
	gid[0] = 0xff;
	gid[1] = 0x0e;
	put32(gid + 12, low);
}

static void mc_mac(const uint8_t *gid, uint8_t *mac)
{
	if (gid[0] == 0xff) {
		mac[0] = mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	} else {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
	}
}

/* The address vector of a UD send to group @gid (GID 0 or 1 as source). */
static struct kite_wqe_ud av_mc(const uint8_t *gid, uint32_t qkey)
{
	struct kite_wqe_ud a;
	uint8_t mac[6];

	mc_mac(gid, mac);
	if (gid[0] == 0xff) {
		a = av6(KITE_MCAST_QPN, qkey, mac);
	} else {
		a = av4(KITE_MCAST_QPN, qkey, mac);
	}
	memcpy(a.dgid, gid, 16);
	return a;
}

/* A UD QP in RTS with Q_Key @qkey, receive CQ E.rcq. */
static void mc_qp(struct tqp *q, uint32_t qkey)
{
	struct kite_cmd_modify_qp a;
	struct res r;

	need(tqp_create(q, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD");
	a = attrs_valid(q->qpn);
	a.qkey = qkey;
	need(modify_qp(&a, 0x39, KITE_QPS_INIT, &r), &r, "UD RESET to INIT");
	need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_RTR, &r), &r, "UD INIT to RTR");
	need(modify_qp(&a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN, KITE_QPS_RTS, &r), &r,
	     "UD RTR to RTS");
}

void g_mcast(void)
{
	struct qpspec sp = qps(KITE_QPT_UD, 0, 0, 0);
	uint8_t g1[16], g6[16], gx[16];
	struct tqp u1, u2, rc, uc, gsi;
	uint32_t many[33], i, n, qpn;
	struct kite_cmd_query_device_out d;
	struct res r;
	int c = 0;

	fixture();
	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(d), 0, &r), &r, "QUERY_DEVICE");
	memcpy(&d, r.out, sizeof(d));
	tap((d.features & KITE_FEAT_MCAST) && d.max_mcast_grp == 64 &&
	    d.max_mcast_qp_attach == 32 && d.max_mcast_total_attach == 512,
	    "QUERY_DEVICE: KITE_FEAT_MCAST, 64 groups, 32 QPs a group, 512 attachments");
	need(tqp_create(&u1, KITE_QPT_UD, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "UD 1");
	need(tqp_create(&u2, KITE_QPT_UD, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "UD 2");
	need(tqp_create(&rc, KITE_QPT_RC, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "RC");
	need(tqp_create(&uc, KITE_QPT_UC, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "UC");
	need(tqp_create(&gsi, KITE_QPT_GSI, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "GSI");
	gid4(g1, 0xef010101);
	gid6(g6, 0x1234);

	mc_attach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "ATTACH_MCAST UD QP to ::ffff:239.1.1.1");
	mc_attach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_E_STATE, MC_GID_OFF, "the same attach again: E_STATE (already attached)");
	mc_attach(u2.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "a second UD QP to the same group");
	mc_attach(u1.qpn, g6, &r);
	expect(&r, KITE_CMD_OK, -1, "ATTACH_MCAST UD QP to ff0e::1234 (a second group)");
	/* A QP in RESET may be attached: the table is independent of states. */
	tap(qp_state(u1.qpn) == KITE_QPS_RESET, "(the QPs are in RESET)");

	mc_attach(rc.qpn, g1, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "RC QP: E_PARAM at qpn");
	mc_attach(uc.qpn, g1, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "UC QP: E_PARAM at qpn");
	mc_attach(gsi.qpn, g1, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "GSI QP: E_PARAM at qpn");
	mc_attach(0, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN 0: E_OBJECT");
	mc_attach(1023, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN 1023 (no such QP): E_OBJECT");
	mc_attach(0x1000000 | u1.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN with bits above 23: E_OBJECT");
	mc_attach(0xffffffff, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN 0xffffffff: E_OBJECT");
	gid4(gx, 0x0a000001);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "unicast ::ffff:10.0.0.1: E_PARAM at gid");
	gid4(gx, 0xf0000001);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "::ffff:240.0.0.1 (class E, not multicast): E_PARAM");
	gid4(gx, 0xdfffffff);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "::ffff:223.255.255.255: E_PARAM");
	memset(gx, 0, 16);
	gx[0] = 0xfe;
	gx[1] = 0x80;
	gx[15] = 1;
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "unicast fe80::1: E_PARAM");
	memset(gx, 0, 16);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "the zero GID: E_PARAM");
	memcpy(gx, g1, 16);
	gx[9] = 1;			/* ::1:ffff:239.1.1.1 is not IPv4-mapped */
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "almost IPv4-mapped multicast: E_PARAM");
	mcast_raw(KITE_CMD_ATTACH_MCAST, u1.qpn, g1, 1, sizeof(struct kite_cmd_mcast), &r);
	expect(&r, KITE_CMD_E_PARAM, MC_RSVD_OFF, "reserved word set: E_PARAM at rsvd");
	mcast_raw(KITE_CMD_DETACH_MCAST, u1.qpn, g1, 0x80000000, sizeof(struct kite_cmd_mcast), &r);
	expect(&r, KITE_CMD_E_PARAM, MC_RSVD_OFF, "DETACH_MCAST reserved word set: E_PARAM");
	mcast_raw(KITE_CMD_ATTACH_MCAST, u1.qpn, g1, 0, sizeof(struct kite_cmd_mcast) - 1, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "ATTACH_MCAST in_len 23: E_LENGTH");
	mcast_raw(KITE_CMD_DETACH_MCAST, u1.qpn, g1, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "DETACH_MCAST in_len 0: E_LENGTH");

	gid4(gx, 0xef090909);
	mc_detach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_OBJECT, MC_GID_OFF, "DETACH_MCAST from a group nobody joined: E_OBJECT at gid");
	mc_detach(rc.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DETACH_MCAST of a QP not attached (RC): E_OBJECT at qpn");
	mc_detach(999, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DETACH_MCAST of no QP: E_OBJECT at qpn");
	gid4(gx, 0x0a000001);
	mc_detach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "DETACH_MCAST of a unicast GID: E_PARAM");
	mc_detach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "DETACH_MCAST UD 1 from 239.1.1.1");
	mc_detach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "the same detach again: E_OBJECT at qpn (UD 2 keeps the group)");
	mc_detach(u2.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "DETACH_MCAST the last QP: the group is gone");
	mc_detach(u2.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, MC_GID_OFF, "detach from the gone group: E_OBJECT at gid");
	mc_detach(u1.qpn, g6, &r);
	expect(&r, KITE_CMD_OK, -1, "DETACH_MCAST UD 1 from ff0e::1234");

	/* Limits: 32 QPs a group, 64 groups, 512 attachments. */
	sp.pdn = fx_pd;
	sp.scqn = sp.rcqn = fx_cq.cqn;
	sp.slog = sp.rlog = 1;
	for (n = 0; n < 33; n++)
		many[n] = need(create_qp(&sp, &r), &r, "CREATE_QP UD (limits)");
	for (i = 0; i < 32 && c == KITE_CMD_OK; i++)
		c = mc_attach(many[i], g1, &r);
	tap(i == 32 && c == KITE_CMD_OK, "32 QPs attached to one group (%u)", i);
	mc_attach(many[32], g1, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, 0, "a 33rd QP in the group: E_NO_RESOURCES at qpn");
	for (i = 1; i < 64 && c == KITE_CMD_OK; i++) {
		gid4(gx, 0xef020000 + i);
		c = mc_attach(many[0], gx, &r);
	}
	tap(i == 64 && c == KITE_CMD_OK, "64 groups in use (%u)", i);
	gid6(gx, 0xabcd);
	mc_attach(many[0], gx, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, MC_GID_OFF, "a 65th group: E_NO_RESOURCES at gid");
	/* 32 + 63 attachments so far: 417 more reach 512. */
	n = 0;
	for (i = 1; i < 64 && c == KITE_CMD_OK; i++) {
		uint32_t j;

		gid4(gx, 0xef020000 + i);
		/* many[0] is in the group: 31 more fill it. */
		for (j = 1; j < 32 && c == KITE_CMD_OK; j++) {
			c = mc_attach(many[j], gx, &r);
			if (c == KITE_CMD_OK)
				n++;
		}
	}
	tap(n == 417 && c == KITE_CMD_E_NO_RESOURCES && FIELD_GET(KITE_CMD_STATUS_SYNDROME, r.status) == 0,
	    "the 513th attachment: E_NO_RESOURCES (%u more attached, code %d)", n, c);
	mc_detach(many[5], g1, &r);
	expect(&r, KITE_CMD_OK, -1, "one detach frees an attachment");
	qpn = many[32];
	mc_attach(qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "... which the next attach takes");
	mc_attach(many[5], g1, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, -1, "then the table is full again");
	/* DESTROY_QP detaches: many[0] was in all 64 groups. */
	need(cmd_obj(KITE_CMD_DESTROY_QP, many[0], 0, &r), &r, "DESTROY_QP (attached to 64 groups)");
	mc_attach(many[5], g1, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of an attached QP freed its attachments");
	mc_detach(many[0], g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "the destroyed QP is no longer attached (E_OBJECT)");
	for (i = 1; i < 33; i++)
		need(cmd_obj(KITE_CMD_DESTROY_QP, many[i], 0, &r), &r, "DESTROY_QP");
	gid6(gx, 0xabcd);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_OK, -1, "every QP destroyed: the groups are free again");
}

#define MC_RB(i)	(T_IOVA + 0x8000 + (uint64_t)(i) * 0x800)

/* Post one 256-byte receive buffer on multicast test QP @i. */
static void mc_post(struct tqp *q, unsigned i)
{
	struct kite_wqe_sge g = sge(256, E.lkey, MC_RB(i));

	post_recv(q, &g, 1);
}

/* Receive CQEs until none comes: a bit per QP index of @q that got one. */
static unsigned mc_collect(struct tqp *q, unsigned nq, uint32_t len, unsigned *bad)
{
	struct kite_cqe c;
	unsigned got = 0, i;

	clock_step(POLL_STEP_NS);
	while (tcq_next(&E.rcq, &c)) {
		for (i = 0; i < nq; i++)
			if (c.qpn == q[i].qpn)
				break;
		if (i == nq || FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_RESP_SEND ||
		    c.byte_len != 40 + len || (got & (1u << i))) {
			cqe_diag("unexpected", &c);
			(*bad)++;
			continue;
		}
		got |= 1u << i;
	}
	return got;
}

void g_mcast_engine(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t g1[16], g2[16], g6[16], f[2048], f1[2048], inj[2048], want[64], got[128];
	struct kite_wqe_ud av;
	struct kite_wqe_sge sg;
	struct tqp m[4];
	struct kite_cqe c;
	struct res r;
	unsigned bad = 0, rx, i;
	uint64_t d0, src = T_IOVA + 3 * 4096;
	ssize_t n;
	bool ok;

	eng_setup();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	gid4(g1, 0xef010203);
	gid4(g2, 0xef010204);
	gid6(g6, 0x1234);
	for (i = 0; i < 4; i++)
		mc_qp(&m[i], i == 2 ? 0x33333333 : T_QKEY);
	for (i = 0; i < 3; i++)
		need(mc_attach(m[i].qpn, g1, &r), &r, "ATTACH_MCAST");
	for (i = 0; i < 4; i++)
		mc_post(&m[i], i);

	/* Loopback and the wire: QPs 0 and 1 receive, 2 has another Q_Key. */
	fill_pattern(src, 37, 0x33, want);
	av = av_mc(g1, T_QKEY);
	sg = sge(37, E.lkey, src);
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	n = wire_recv(f, sizeof(f));
	if (n > 0)
		memcpy(f1, f, (size_t)n);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0), "UD SEND to a multicast group completes");
	tap(n == 106 && f[0] == 0x01 && f[1] == 0 && f[2] == 0x5e && f[3] == 0x01 && f[4] == 2 &&
	    f[5] == 3 && be32(f + 30) == 0xef010203 && be24(f + 42 + 5) == KITE_MCAST_QPN &&
	    be32(f + 42 + 12) == T_QKEY,
	    "on the wire: MAC 01:00:5e:01:02:03, IPv4 239.1.2.3, DestQP 0xFFFFFF, Q_Key (%zd bytes)", n);
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 3 && !bad, "loopback: the two attached QPs with the Q_Key receive it (mask 0x%x)", rx);
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1, "the QP with another Q_Key drops it (+1 drop)");
	memread(t_bus(MC_RB(1)), got, 40 + 37);
	tap(!memcmp(got + 40, want, 37) && be32(got + 20 + 16) == 0xef010203,
	    "QP 1's buffer: GRH area with the IPv4 header to 239.1.2.3, payload intact");
	memread(t_bus(MC_RB(0)), got, 40 + 37);
	tap(!memcmp(got + 40, want, 37), "QP 0's buffer: payload intact");
	mc_post(&m[0], 0);
	mc_post(&m[1], 1);

	/* The same frame from the wire (another station sent it). */
	memcpy(inj, f, (size_t)n);
	memcpy(inj + 6, peer, 6);
	wire_send(inj, (size_t)n);
	wire_settle();
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 3 && !bad, "from the wire: the attached QPs with the Q_Key receive it (0x%x)", rx);
	mc_post(&m[0], 0);
	mc_post(&m[1], 1);

	/* Malformed multicast from the wire: dropped, no CQE. */
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	memcpy(inj, MAC, 6);
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1,
	    "DestQP 0xFFFFFF to our unicast MAC: dropped");
	memcpy(inj, f, 6);
	put32(inj + 42 + 4, m[0].qpn);
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 2,
	    "a multicast address with a unicast DestQP: dropped");
	put32(inj + 42 + 4, KITE_MCAST_QPN);
	put32(inj + 30, 0xef010204);
	inj[5] = 4;
	put16(inj + 24, 0);
	put16(inj + 24, t_csum(0, inj + 14, 20));
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 3,
	    "a group no QP joined (239.1.2.4): dropped");
	need(mc_attach(m[3].qpn, g2, &r), &r, "ATTACH_MCAST 239.1.2.4");
	wire_send(inj, (size_t)n);
	wire_settle();
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 8 && !bad, "after QP 3 joins 239.1.2.4, the same frame reaches QP 3 only (0x%x)", rx);
	mc_post(&m[3], 3);
	put32(inj + 30, 0x0a000001);
	put16(inj + 24, 0);
	put16(inj + 24, t_csum(0, inj + 14, 20));
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1,
	    "DestQP 0xFFFFFF to a unicast IP address: dropped");

	/* IPv6: ff0e::1234, MAC 33:33:00:00:12:34. */
	need(mc_attach(m[1].qpn, g6, &r), &r, "ATTACH_MCAST ff0e::1234");
	av = av_mc(g6, T_QKEY);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	n = wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	tap(n > 0 && f[0] == 0x33 && f[1] == 0x33 && be32(f + 2) == 0x1234 && f[14 + 24] == 0xff &&
	    f[14 + 25] == 0x0e && be24(f + 62 + 5) == KITE_MCAST_QPN,
	    "IPv6 on the wire: MAC 33:33:00:00:12:34, to ff0e::1234, DestQP 0xFFFFFF");
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, m[1].qpn, 0) &&
	    FIELD_GET(KITE_CQE_F_L3, c.flags) == KITE_NET_ROCE_V2_IPV6 && c.src_qpn == E.b.qpn &&
	    tcq_drain(&E.rcq) == 0, "IPv6 loopback: only QP 1 receives, L3 IPv6, source QPN");
	mc_post(&m[1], 1);

	/* Detach, destroy: delivery follows the table. */
	need(mc_detach(m[1].qpn, g1, &r), &r, "DETACH_MCAST QP 1");
	av = av_mc(g1, T_QKEY);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 1 && !bad, "after QP 1 detaches, only QP 0 receives (0x%x)", rx);
	mc_post(&m[0], 0);
	need(cmd_obj(KITE_CMD_DESTROY_QP, m[0].qpn, 0, &r), &r, "DESTROY_QP 0");
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	rx = mc_collect(m + 1, 3, 37, &bad);
	tap(rx == 0 && !bad, "QP 0 destroyed: nobody with the Q_Key receives (0x%x)", rx);

	/* The sender's own QP receives its multicast when attached. */
	need(mc_attach(E.b.qpn, g2, &r), &r, "ATTACH_MCAST QP B to 239.1.2.4");
	sg = sge(256, E.lkey, MC_RB(5));
	post_recv(&E.b, &sg, 1);
	av = av_mc(g2, T_QKEY);
	sg = sge(37, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	{
		struct tqp two[2] = { E.b, m[3] };

		rx = mc_collect(two, 2, 37, &bad);
	}
	tap(rx == 3 && !bad, "a QP attached to the group it sends to receives its own packet, "
	    "as do the others (0x%x)", rx);

	/* Two UD QPs on one SRQ, both in a group: each takes its own WQE. */
	{
		struct tsrq sq;
		struct tqp s2[2];
		uint8_t g3[16];
		unsigned qps = 0, tags = 0;

		gid4(g3, 0xef010205);
		need(srq_create(&sq, fx_pd, 4, 6, 0, &r), &r, "CREATE_SRQ");
		for (i = 0; i < 2; i++) {
			need(tqp_create_srq(&s2[i], KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn,
					    sq.srqn, &r), &r, "CREATE_QP UD on the SRQ");
			tqp_rts(&s2[i]);
			need(mc_attach(s2[i].qpn, g3, &r), &r, "ATTACH_MCAST (SRQ QP)");
			sg = sge(256, E.lkey, MC_RB(6 + i));
			srq_post(&sq, (uint16_t)(0x70 + i), &sg, 1);
		}
		av = av_mc(g3, T_QKEY);
		sg = sge(37, E.lkey, src);
		post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0,
			  true);
		wire_recv(f, sizeof(f));
		tcq_next(&E.scq, &c);
		for (i = 0; i < 2 && tcq_next(&E.rcq, &c); i++) {
			if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_RESP_SEND ||
			    c.byte_len != 77)
				qps |= 4;
			qps |= c.qpn == s2[0].qpn ? 1 : c.qpn == s2[1].qpn ? 2 : 4;
			tags |= c.wqe_idx == 0x70 ? 1 : c.wqe_idx == 0x71 ? 2 : 4;
		}
		tap(qps == 3 && tags == 3 && tcq_drain(&E.rcq) == 0,
		    "two QPs on one SRQ in a group: each receives, each with its own SRQ WQE "
		    "(QPs 0x%x, tags 0x%x)", qps, tags);
	}

	/* Send-side checks of the address vector. */
	av = av_mc(g1, T_QKEY);
	av.remote_qpn = m[1].qpn;
	send_fails(&E.b, "multicast GID with a unicast DestQP", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av4(KITE_MCAST_QPN, T_QKEY, peer);
	send_fails(&E.b, "DestQP 0xFFFFFF to a unicast GID", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av_mc(g1, T_QKEY);
	av.dmac[5] ^= 1;
	send_fails(&E.b, "multicast GID with another group's MAC", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av_mc(g1, T_QKEY);
	memcpy(av.dmac, peer, 6);
	send_fails(&E.b, "multicast GID with a unicast MAC", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av_mc(g1, T_QKEY);
	av.sgid_index = 1;
	av.net_type = KITE_NET_ROCE_V2_IPV6;
	send_fails(&E.b, "IPv4-mapped multicast GID from an IPv6 source", KITE_WQE_OP_SEND, &av,
		   NULL, 0, KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	/*
	 * A frame to 239.1.2.3 (only QP 2, with another Q_Key, is still in
	 * it) truncated and with bytes mangled in turn: dropped, or (a byte
	 * outside the checked fields) received as any packet; never a
	 * crash, and the device still answers.
	 */
	n = 106;
	memcpy(inj, f1, (size_t)n);
	memcpy(inj + 6, peer, 6);
	put32(inj + 30, 0xef010203);
	put16(inj + 24, 0);
	put16(inj + 24, t_csum(0, inj + 14, 20));
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);
		size_t k;

		memcpy(inj + n - 4, &ic, 4);
		d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
		for (k = 1; k < (size_t)n; k += 3) {
			wire_send(inj, k);
			inj[k] ^= 0xa5;
			wire_send(inj, (size_t)n);
			inj[k] ^= 0xa5;
			if ((k & 15) == 15)
				wire_settle();
		}
		wire_settle();
	}
	tap(nop(&r) == KITE_CMD_OK && stat1(KITE_STAT_ROCE_RX_DROPS) > d0 &&
	    (mc_collect(m + 1, 3, 37, &bad), !bad),
	    "truncated and mangled multicast frames: dropped (+%" PRIu64 "), "
	    "device alive", stat1(KITE_STAT_ROCE_RX_DROPS) - d0);
	tap(nop(&r) == KITE_CMD_OK, "the device still answers commands");
}

/* Random commands and traffic against the test's own copy of the table. */
void g_mcast_random(void)
{
	enum { NQ = 4, NG = 6 };
	uint8_t gid[NG][16], bogus[16];
	bool in[NQ][NG];
	uint32_t qkey[NQ];
	struct tqp m[NQ], rc;
	struct kite_wqe_ud av;
	struct kite_wqe_sge sg;
	struct kite_cqe c;
	struct res r;
	unsigned i, j, k, bad = 0, wrong = 0, cmds = 0, sends = 0, cqes = 0;

	eng_setup();
	rng_state = 0x3ca57ULL;
	for (j = 0; j < NG; j++) {
		if (j & 1)
			gid6(gid[j], 0x100 + j);
		else
			gid4(gid[j], 0xe0000000 + j * 0x01010101);
	}
	for (i = 0; i < NQ; i++) {
		qkey[i] = i == 3 ? 0x44444444 : T_QKEY;
		mc_qp(&m[i], qkey[i]);
		mc_post(&m[i], i);
	}
	need(tqp_create(&rc, KITE_QPT_RC, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r, "RC");
	memset(in, 0, sizeof(in));
	for (k = 0; k < 400; k++) {
		unsigned op = rndn(10), qi = rndn(NQ + 2), gi = rndn(NG + 1);
		bool attach = rndn(2);
		/* QPs of the table, the RC QP, a QPN no QP has. */
		uint32_t qpn = qi < NQ ? m[qi].qpn : qi == NQ ? rc.qpn : (uint32_t)rnd() | 0x400;
		const uint8_t *g = gi < NG ? gid[gi] : bogus;
		unsigned want, cc, rx = 0;

		if (op < 6) {
			size_t len = rndn(12) ? sizeof(struct kite_cmd_mcast) : rndn(24);
			uint32_t rsvd = rndn(12) ? 0 : (uint32_t)rnd() | 1;

			for (j = 0; j < 16; j++)
				bogus[j] = (uint8_t)rnd();
			bogus[0] = 0xfe;	/* never multicast */
			if (len < sizeof(struct kite_cmd_mcast))
				want = KITE_CMD_E_LENGTH;
			else if (rsvd)
				want = KITE_CMD_E_PARAM;
			else if (qi > NQ)
				want = KITE_CMD_E_OBJECT;
			else if (gi == NG)
				want = KITE_CMD_E_PARAM;
			else if (attach)
				want = qi == NQ ? KITE_CMD_E_PARAM :
				       in[qi][gi] ? KITE_CMD_E_STATE : KITE_CMD_OK;
			else
				want = qi < NQ && in[qi][gi] ? KITE_CMD_OK : KITE_CMD_E_OBJECT;
			cc = mcast_raw(attach ? KITE_CMD_ATTACH_MCAST : KITE_CMD_DETACH_MCAST, qpn,
				       g, rsvd, len, &r);
			cmds++;
			if (cc != want) {
				diag("%s qp %u group %u: code %u, expected %u",
				     attach ? "attach" : "detach", qi, gi, cc, want);
				wrong++;
			}
			if (cc == KITE_CMD_OK && qi < NQ)
				in[qi][gi] = attach;
			continue;
		}
		/* A send to a random group from QP B (not attached). */
		gi = rndn(NG);
		av = av_mc(gid[gi], T_QKEY);
		sg = sge(rndn(200), E.lkey, T_IOVA + 3 * 4096);
		post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0,
			  true);
		sends++;
		clock_step(POLL_STEP_NS);
		tcq_drain(&E.scq);
		while (tcq_next(&E.rcq, &c)) {
			for (i = 0; i < NQ && c.qpn != m[i].qpn; i++)
				;
			if (i == NQ || !in[i][gi] || qkey[i] != T_QKEY || (rx & (1u << i))) {
				cqe_diag("unexpected", &c);
				bad++;
			} else {
				rx |= 1u << i;
				mc_post(&m[i], i);
			}
			cqes++;
		}
		for (i = 0; i < NQ; i++)
			if (in[i][gi] && qkey[i] == T_QKEY && !(rx & (1u << i))) {
				diag("send %u to group %u: QP %u attached, no CQE", sends, gi, i);
				bad++;
			}
	}
	tap(wrong == 0, "random ATTACH/DETACH_MCAST (%u commands): every status as the table predicts",
	    cmds);
	tap(bad == 0, "random multicast sends (%u): %u receive CQEs, exactly the attached QPs "
	    "with the Q_Key", sends, cqes);
	tap(nop(&r) == KITE_CMD_OK, "the device still answers commands");
}
