/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): the data engine: UD and GSI
 * sends and receives (groups engine_tx, engine, engine_rx, engine_wire).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Data engine: UD and GSI sends and receives                          */
/* ------------------------------------------------------------------ */

#define T_SQ_PSN	0x2000u

void g_engine(void)
{
	static const uint8_t zero20[20];
	uint8_t want[1100], got[1200], grh[40];
	struct kite_wqe_sge g[3];
	struct kite_wqe_ud av;
	struct kite_cqe sc, rc;
	struct kite_cmd_modify_qp o;
	uint64_t st0[KITE_STAT_COUNT], st1[KITE_STAT_COUNT];
	uint64_t rbuf = T_IOVA + 8 * 4096, src = T_IOVA + 4096 - 100;
	struct res r;
	uint16_t idx;
	unsigned i, ncqe;
	bool ok;
	uint8_t m8[8];

	/* The test's own CRC against the standard check value and rxe's seed. */
	tap(~t_crc32(0xffffffff, (const uint8_t *)"123456789", 9) == 0xcbf43926,
	    "test CRC-32 matches the standard check value 0xcbf43926");
	memset(m8, 0xff, 8);
	tap(t_crc32(0xffffffff, m8, 8) == 0xdebb20e3,
	    "CRC state after the masked LRH (8 x 0xff) is 0xdebb20e3, as in rxe");

	eng_setup();
	stats(st0);

	/* GSI -> UD B over loopback: SEND_IMM, 2 SGEs across a page boundary. */
	fill_pattern(src, 200, 0x31, want);
	memset(got, 0xee, sizeof(got));
	memwrite(t_bus(rbuf), got, 1024);
	g[0] = sge(30, E.lkey, rbuf);
	g[1] = sge(400, E.lkey, rbuf + 512);
	post_recv(&E.b, g, 2);
	/* Arm the receive CQ for the next CQE. */
	arm_cq(&E.rcq.c, E.rcq.ci, KITE_CQ_ARM_NEXT, 0);
	eq_drain(&eq1);
	av = av4(E.b.qpn, T_QKEY, MAC);
	g[0] = sge(100, E.lkey, src);
	g[1] = sge(100, E.lkey, src + 100);
	idx = post_send(&E.gsi, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED |
			KITE_WQE_F_SOLICITED, 0x78563412, &av, g, 2, NULL, 0, true);
	ok = tcq_next(&E.scq, &sc);
	if (!tap(ok && cqe_is(&sc, KITE_CQE_OP_REQ, 1, 0) && sc.wqe_idx == idx &&
		 sc.wqe_opcode == KITE_WQE_OP_SEND_IMM,
		 "loopback SEND_IMM GSI->UD: send CQE REQ, qpn 1, wqe_idx %u, wqe_opcode SEND_IMM", idx))
		cqe_diag("send", &sc);
	ok = tcq_next(&E.rcq, &rc);
	if (!tap(ok && cqe_is(&rc, KITE_CQE_OP_RESP_SEND_IMM, E.b.qpn, 0) &&
		 rc.byte_len == 240 && rc.imm_data == 0x78563412 && rc.src_qpn == 1 &&
		 rc.wqe_idx == 0 && !memcmp(rc.smac, MAC, 6) &&
		 rc.flags == (KITE_CQE_F_GRH | KITE_CQE_F_SOLICITED | KITE_CQE_F_IMM |
			      FIELD_PREP(KITE_CQE_F_L3, KITE_NET_ROCE_V2_IPV4)),
		 "receive CQE: RESP_SEND_IMM, byte_len 40+200, imm, src_qpn 1, SMAC, "
		 "flags GRH|SOLICITED|IMM|L3=IPv4"))
		cqe_diag("recv", &rc);
	memread(t_bus(rbuf), got, 30);
	memread(t_bus(rbuf + 512), got + 30, 400);
	memcpy(grh, got, 40);
	tap(!memcmp(grh, zero20, 20), "GRH area: first 20 bytes zero for IPv4");
	tap(grh[20] == 0x45 && grh[21] == 0x28 && be16(grh + 22) == 256 &&
	    be16(grh + 26) == 0x4000 && grh[28] == 64 && grh[29] == 17 &&
	    t_csum(0, grh + 20, 20) == 0 && be32(grh + 32) == 0x0a000001 &&
	    be32(grh + 36) == 0x0a000001,
	    "GRH area: the IPv4 header (TOS 0x28, length 256, DF, TTL 64, UDP, "
	    "checksum, 10.0.0.1 -> 10.0.0.1) in its last 20 bytes");
	tap(!memcmp(got + 40, want, 200), "payload scattered byte for byte after the GRH");
	memread(t_bus(rbuf) + 30, got, 1);
	memread(t_bus(rbuf + 512) + 210, got + 1, 1);
	tap(got[0] == 0xee && got[1] == 0xee, "nothing written past the message in either SGE");
	tap(eq1_count(KITE_EQE_COMPLETION, E.rcq.c.cqn) == 1,
	    "armed receive CQ: one COMPLETION EQE on its EQ");
	stats(st1);
	tap(st1[KITE_STAT_ROCE_TX_PKTS] - st0[KITE_STAT_ROCE_TX_PKTS] == 1 &&
	    st1[KITE_STAT_ROCE_RX_PKTS] - st0[KITE_STAT_ROCE_RX_PKTS] == 1 &&
	    st1[KITE_STAT_ROCE_RX_DROPS] == st0[KITE_STAT_ROCE_RX_DROPS],
	    "ROCE_TX_PKTS +1, ROCE_RX_PKTS +1, no drop");
	need(query_qp(1, &o, &r), &r, "QUERY_QP 1");
	tap(o.sq_psn == T_SQ_PSN + 1, "GSI SQ PSN advanced by one packet (0x%x)", o.sq_psn);

	/*
	 * UD B -> GSI with Q_Key 0x80010000: bit 31 means "the sender's own
	 * Q_Key", B's 0x11111111, which the GSI QP does not accept.
	 */
	memset(got, 0xee, 64);
	memwrite(t_bus(rbuf), got, 64);
	g[0] = sge(64, E.lkey, rbuf);
	post_recv(&E.gsi, g, 1);
	av = av6(1, 0x80010000u, MAC);
	st0[KITE_STAT_ROCE_RX_DROPS] = stat1(KITE_STAT_ROCE_RX_DROPS);
	post_send(&E.b, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "inline data, 20 byte", 20, true);
	clock_step(POLL_STEP_NS);
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == st0[KITE_STAT_ROCE_RX_DROPS] + 1 &&
	    tcq_drain(&E.rcq) == 0,
	    "UD QP sending Q_Key 0x80010000 sends its own Q_Key: the GSI QP drops it");
	/* GSI -> GSI: IPv6, inline, Q_Key 0x80010000, unsignaled. */
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "inline data, 20 byte", 20, true);
	ok = tcq_next(&E.rcq, &rc);
	if (!tap(ok && cqe_is(&rc, KITE_CQE_OP_RESP_SEND, 1, 0) && rc.byte_len == 60 &&
		 rc.src_qpn == 1 && rc.wqe_idx == 0 &&
		 rc.flags == (KITE_CQE_F_GRH | FIELD_PREP(KITE_CQE_F_L3, KITE_NET_ROCE_V2_IPV6)),
		 "IPv6 inline SEND GSI->GSI (Q_Key 0x80010000): RESP_SEND, byte_len 60, L3=IPv6"))
		cqe_diag("recv", &rc);
	memread(t_bus(rbuf), got, 60);
	tap(be32(got) == (6u << 28 | 0xb8u << 20 | 0xabcde) && be16(got + 4) == 8 + 12 + 8 + 20 + 4 &&
	    got[6] == 17 && got[7] == 17 && got[8] == 0xfe && got[9] == 0x80 && got[23] == 2 &&
	    got[24] == 0xfe && got[39] == 2,
	    "GRH area: the IPv6 header (TC 0xb8, flow label 0xabcde, payload 52, UDP, "
	    "hop 17, fe80::2 -> fe80::2)");
	tap(!memcmp(got + 40, "inline data, 20 byte", 20), "inline payload delivered");
	idx = post_send(&E.gsi, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, NULL, 0,
			"x", 1, true);
	ok = tcq_next(&E.scq, &sc);
	tap(ok && cqe_is(&sc, KITE_CQE_OP_REQ, 1, 0) && sc.wqe_idx == idx,
	    "unsignaled WQE wrote no CQE: the next send CQE is the signaled one (%u, want %u)",
	    sc.wqe_idx, idx);
	tap(tcq_drain(&E.rcq) == 0, "no RQ WQE on the GSI QP: nothing received");

	/* VLAN from the address vector; exactly one MTU (1024) of payload. */
	fill_pattern(src, 1024, 0x77, want);
	g[0] = sge(40 + 1024, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	av = av4(E.b.qpn, T_QKEY, MAC);
	av.vlan = KITE_VLAN_VALID | (uint16_t)FIELD_PREP(KITE_VLAN_PCP, 3) | 100;
	g[0] = sge(1024, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, g, 1, NULL, 0, true);
	ok = tcq_next(&E.scq, &sc) && tcq_next(&E.rcq, &rc);
	if (!tap(ok && cqe_is(&sc, KITE_CQE_OP_REQ, E.b.qpn, 0) &&
		 cqe_is(&rc, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0) && rc.byte_len == 1064 &&
		 (rc.flags & KITE_CQE_F_VLAN) && rc.vlan == av.vlan,
		 "1024-byte SEND with VLAN 100 PCP 3: delivered, CQE VLAN flag and tag"))
		cqe_diag("recv", &rc);
	memread(t_bus(rbuf) + 40, got, 1024);
	tap(!memcmp(got, want, 1024), "1024-byte payload delivered byte for byte");

	/* A burst: 16 signaled WQEs (the SQ's depth) in one doorbell. */
	for (i = 0; i < 16; i++) {
		g[0] = sge(16, E.lkey, rbuf + 2048 + 64 * i);
		post_recv(&E.b, g, 1);
	}
	av = av4(E.b.qpn, T_QKEY, MAC);
	g[0] = sge(16, E.lkey, src);
	for (i = 0; i < 16; i++)
		post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, g, 0, NULL, 0,
			  i == 15);
	ncqe = tcq_drain(&E.scq);
	tap(ncqe == 16, "16 WQEs in one doorbell: 16 send CQEs (%u)", ncqe);
	ncqe = tcq_drain(&E.rcq);
	tap(ncqe == 16, "16 zero-length SENDs: 16 receive CQEs (%u)", ncqe);
}

/* Every send-side validation error, on QPs B, C and a new RC QP. */
static void send_errors(const uint8_t *dmac)
{
	struct kite_wqe_sge g[2];
	struct kite_wqe_ud av = av4(E.b.qpn, T_QKEY, dmac);
	struct kite_cqe c;
	struct tqp rc;
	struct res r;
	uint64_t d0, src = T_IOVA;
	bool ok;

	g[0] = sge(16, E.lkey ^ 0x01, src);
	send_fails(&E.b, "bad lkey tag", KITE_WQE_OP_SEND, &av, g, 1, KITE_SYND_LOCAL_PROT,
		   KITE_QPS_SQE);
	g[0] = sge(16, E.lkey, T_IOVA + T_MR_LEN - 8);
	send_fails(&E.b, "SGE past the end of the MR", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	g[0] = sge(16, E.lkey, T_IOVA - 1);
	send_fails(&E.b, "SGE before the start of the MR", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	g[0] = sge(16, E.lkey, src);
	send_fails(&E.c, "lkey of another PD", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	g[0] = sge(1000, E.lkey, src);
	g[1] = sge(25, E.lkey, src + 1000);
	send_fails(&E.b, "1025 bytes > MTU 1024", KITE_WQE_OP_SEND, &av, g, 2,
		   KITE_SYND_LOCAL_LENGTH, KITE_QPS_SQE);
	send_fails(&E.b, "unknown opcode 0x3f", 0x3f, &av, NULL, 0, KITE_SYND_LOCAL_QP_OP,
		   KITE_QPS_SQE);
	send_fails(&E.b, "RDMA_WRITE on a UD QP", KITE_WQE_OP_RDMA_WRITE, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	send_fails(&E.b, "reserved opcode bits", KITE_WQE_OP_SEND | BIT(13), &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	send_fails(&E.b, "9 SGEs", KITE_WQE_OP_SEND | (uint32_t)FIELD_PREP(KITE_WQE_NUM_SGE, 9),
		   &av, NULL, 0, KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av.sgid_index = 5;
	send_fails(&E.b, "AV with an empty source GID", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av4(E.b.qpn, T_QKEY, dmac);
	av.net_type = KITE_NET_ROCE_V2_IPV6;
	send_fails(&E.b, "AV net_type differs from the GID's", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av4(E.b.qpn, T_QKEY, dmac);
	d0 = stat1(KITE_STAT_DMA_ERRORS);
	g[0] = sge(16, E.lkey_phys, NOT_RAM);
	send_fails(&E.b, "DMA MR SGE outside guest RAM", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	tap(stat1(KITE_STAT_DMA_ERRORS) > d0, "DMA error counted");
	/* A PTE of the MR invalidated behind the device's back. */
	{
		uint64_t pte = pte_get(&E.mr, 2);

		pte_set(&E.mr, 2, 0);
		d0 = stat1(KITE_STAT_DMA_ERRORS);
		g[0] = sge(16, E.lkey, T_IOVA + 2 * 4096);
		send_fails(&E.b, "SGE in a page whose PTE became invalid", KITE_WQE_OP_SEND, &av,
			   g, 1, KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
		tap(stat1(KITE_STAT_DMA_ERRORS) > d0, "bad PTE counted as a DMA error");
		pte_set(&E.mr, 2, pte);
	}

	/* LOCAL_INV of a key that names no fast-registration MR (RC: QP to ERR). */
	need(tqp_create(&rc, KITE_QPT_RC, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC");
	tqp_rts(&rc);
	g[0] = sge(16, E.lkey, src);
	post_recv(&rc, g, 1);
	send_fails(&rc, "RC LOCAL_INV of key 0", KITE_WQE_OP_LOCAL_INV,
		   NULL, NULL, 0, KITE_SYND_LOCAL_PROT, KITE_QPS_ERR);
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, rc.qpn, KITE_SYND_WR_FLUSH),
	    "RC QP in ERR: its outstanding RQ WQE is flushed");
}

void g_engine_rx(void)
{
	struct kite_wqe_sge g[2];
	struct kite_wqe_ud av, avc;
	struct kite_cqe c;
	struct tqp rc;
	uint64_t d0, d1;
	uint64_t rbuf = T_IOVA + 8 * 4096;
	struct res r;
	const char *reply = "";
	uint16_t idx;
	bool ok;

	eng_setup();
	av = av4(E.b.qpn, T_QKEY, MAC);
	avc = av4(E.c.qpn, T_QKEY, MAC);

	/* Receive side drops: no RQ WQE, bad Q_Key, bad ICRC. */
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	idx = post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &avc, NULL, 0, "abc", 3,
			true);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0) && c.wqe_idx == idx,
	    "UD SEND to a QP without RQ WQEs completes successfully (unreliable)");
	d1 = stat1(KITE_STAT_ROCE_RX_DROPS);
	tap(d1 == d0 + 1 && tcq_drain(&E.rcq) == 0,
	    "no RQ WQE: dropped, ROCE_RX_DROPS +1 (%" PRIu64 ")", d1 - d0);
	{
		uint64_t rb = T_IOVA + 12 * 4096;
		struct kite_wqe_sge rg = sge(128, E.lkey, rb);

		post_recv(&E.b, &rg, 1);
	}
	av = av4(E.b.qpn, 0x22222222, MAC);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abc", 3, true);
	clock_step(POLL_STEP_NS);
	d0 = d1;
	d1 = stat1(KITE_STAT_ROCE_RX_DROPS);
	tap(d1 == d0 + 1 && tcq_drain(&E.rcq) == 0, "wrong Q_Key: dropped, ROCE_RX_DROPS +1");
	if (!qom_set("fault-icrc", "1", &reply))
		diag("qom-set fault-icrc: %.200s", reply);
	av = av4(E.b.qpn, T_QKEY, MAC);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abc", 3, true);
	clock_step(POLL_STEP_NS);
	d0 = d1;
	d1 = stat1(KITE_STAT_ROCE_RX_DROPS);
	tap(d1 == d0 + 1 && tcq_drain(&E.rcq) == 0,
	    "corrupted ICRC (fault-icrc): dropped, ROCE_RX_DROPS +1");
	/* The posted RQ WQE was not consumed by the drops. */
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0) && c.byte_len == 44 &&
	    c.wqe_idx == (uint16_t)(E.b.rpi - 1),
	    "after the drops a good SEND lands in the RQ WQE that waited");

	/* Receive errors: buffer too small, key without LOCAL_WRITE. */
	g[0] = sge(41, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, E.b.qpn, KITE_SYND_LOCAL_LENGTH),
		 "receive buffer of 41 bytes for 44: RESP_ERR LOCAL_LENGTH"))
		cqe_diag("recv", &c);
	tap(qp_state(E.b.qpn) == KITE_QPS_ERR, "receive error: QP in ERR");
	g[0] = sge(64, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, E.b.qpn, KITE_SYND_WR_FLUSH) &&
	    c.wqe_idx == (uint16_t)(E.b.rpi - 1),
	    "RQ WQE posted in ERR: flushed with WR_FLUSH");
	idx = post_send(&E.b, KITE_WQE_OP_SEND, 0, &avc, NULL, 0, "z", 1, true);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, E.b.qpn, KITE_SYND_WR_FLUSH) && c.wqe_idx == idx,
	    "unsignaled SQ WQE posted in ERR: flushed with a CQE anyway");

	/* Work queues outside guest RAM: error CQEs, DMA errors, no crash. */
	{
		struct kite_cmd_create_qp in;
		uint32_t fq;
		uint64_t dma0 = stat1(KITE_STAT_DMA_ERRORS);

		memset(&in, 0, sizeof(in));
		in.type = KITE_QPT_UD;
		in.pdn = fx_pd;
		in.send_cqn = E.scq.c.cqn;
		in.recv_cqn = E.rcq.c.cqn;
		in.sq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 4) |
				       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 8));
		in.rq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 4) |
				       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6));
		in.sq_pbl.addr = NOT_RAM;
		in.sq_pbl.npages = 1;
		in.sq_pbl.cfg = pbl_cfg(0, 12);
		in.rq_pbl = in.sq_pbl;
		fq = need(run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r), &r,
			  "CREATE_QP with queues outside RAM");
		rc.qpn = fq;
		rc.type = KITE_QPT_UD;
		tqp_rts(&rc);
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, fq, 1));
		ok = tcq_next(&E.scq, &c);
		if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, fq, KITE_SYND_LOCAL_QP_OP) &&
			 c.wqe_idx == 0 && qp_state(fq) == KITE_QPS_SQE,
			 "SQ WQE unreadable: REQ_ERR LOCAL_QP_OP with the counter as wqe_idx, SQE"))
			cqe_diag("send", &c);
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, fq, 1));
		av = av4(fq, T_QKEY, MAC);
		post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
		ok = tcq_next(&E.rcq, &c);
		if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, fq, KITE_SYND_LOCAL_QP_OP) &&
			 qp_state(fq) == KITE_QPS_ERR,
			 "RQ WQE unreadable: RESP_ERR LOCAL_QP_OP, QP in ERR"))
			cqe_diag("recv", &c);
		tap(stat1(KITE_STAT_DMA_ERRORS) >= dma0 + 2, "both DMA errors counted");
		av = av4(E.b.qpn, T_QKEY, MAC);
	}

	g[0] = sge(64, E.lkey_ro, E.ro_iova);
	need(tqp_create(&rc, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD D");
	tqp_rts(&rc);
	post_recv(&rc, g, 1);
	av = av4(rc.qpn, T_QKEY, MAC);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, rc.qpn, KITE_SYND_LOCAL_ACCESS),
		 "receive into a key without LOCAL_WRITE: RESP_ERR LOCAL_ACCESS"))
		cqe_diag("recv", &c);

}

static uint16_t t_sport(uint32_t fl, uint32_t a, uint32_t b)
{
	if (!fl) {
		uint64_t v = (uint64_t)a * b;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = v & 0xfffff;
	}
	return (uint16_t)(((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | 0xc000);
}

/*
 * A UD SEND from QP B to a peer MAC over IPv4 (37 bytes, SE, no flow
 * label), read off the wire into @f; with @check, every header field is
 * checked. Returns the frame length or -1.
 */
static ssize_t tx_ipv4(uint8_t *f, size_t size, uint8_t *want, bool check)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint64_t src = T_IOVA + 3 * 4096;
	struct kite_wqe_sge g[1];
	struct kite_wqe_ud av;
	struct kite_cqe c;
	size_t ib;
	ssize_t n;
	bool ok;

	fill_pattern(src, 37, 0x10, want);
	av = av4(0x000abc, 0x01020304, peer);
	av.flow_label = 0;
	g[0] = sge(37, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED | KITE_WQE_F_SOLICITED, 0, &av,
		  g, 1, NULL, 0, true);
	n = wire_recv(f, size);
	ok = tcq_next(&E.scq, &c);
	if (!check)
		return n;
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0), "send to a peer MAC: send CQE");
	/* 14 + 20 + 8 + 12 + 8 + 37 + 3 pad + 4 */
	if (!tap(n == 106, "IPv4 frame on the wire, 106 bytes (%zd)", n))
		return -1;
	tap(!memcmp(f, peer, 6) && !memcmp(f + 6, MAC, 6) && be16(f + 12) == 0x0800,
	    "Ethernet: dmac from the AV, smac from the GID entry, IPv4");
	tap(f[14] == 0x45 && f[15] == 0x28 && be16(f + 16) == 92 && be16(f + 20) == 0x4000 &&
	    f[22] == 64 && f[23] == 17 && t_csum(0, f + 14, 20) == 0 &&
	    be32(f + 26) == 0x0a000001 && be32(f + 30) == 0x0a000001,
	    "IPv4: TOS, length 92, DF, TTL, UDP, valid checksum, addresses");
	tap(be16(f + 34) == t_sport(0, E.b.qpn, 0xabc) && be16(f + 36) == 4791 &&
	    be16(f + 38) == 72 && be16(f + 40) == 0,
	    "UDP: source port 0x%04x from the QPNs' flow label, dport 4791, length 72, "
	    "checksum 0", be16(f + 34));
	ib = 42;
	tap(f[ib] == 0x64 && f[ib + 1] == (0x80 | 3 << 4) && be16(f + ib + 2) == 0xffff &&
	    f[ib + 4] == 0 && be24(f + ib + 5) == 0xabc && f[ib + 8] == 0 &&
	    be24(f + ib + 9) == T_SQ_PSN,
	    "BTH: UD SEND_ONLY, SE, pad 3, TVer 0, P_Key 0xffff, dest QPN, PSN 0x%x",
	    be24(f + ib + 9));
	tap(be32(f + ib + 12) == 0x01020304 && f[ib + 16] == 0 &&
	    be24(f + ib + 17) == E.b.qpn, "DETH: Q_Key from the WQE, source QPN");
	tap(!memcmp(f + ib + 20, want, 37) && !f[ib + 57] && !f[ib + 58] && !f[ib + 59],
	    "payload and zero pad");
	tap((uint32_t)(f[102] | f[103] << 8 | f[104] << 16 | (uint32_t)f[105] << 24) ==
	    t_icrc(f + 14, 88, false), "ICRC matches the test's own computation");

	return n;
}

/* The same over IPv6 with a VLAN tag and immediate data (8 bytes). */
static ssize_t tx_ipv6(uint8_t *f, size_t size, uint8_t *want, bool check)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint64_t src = T_IOVA + 3 * 4096;
	struct kite_wqe_sge g[1];
	struct kite_wqe_ud av;
	struct kite_cqe c;
	size_t ib;
	ssize_t n;

	fill_pattern(src, 8, 0x60, want);
	av = av6(0x000def, 0x01020304, peer);
	av.vlan = KITE_VLAN_VALID | 42;
	g[0] = sge(8, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED, 0xddccbbaa, &av, g, 1, NULL,
		  0, true);
	n = wire_recv(f, size);
	tcq_next(&E.scq, &c);
	if (!check)
		return n;
	/* 18 + 40 + 8 + 12 + 8 + 4 + 8 + 4 */
	if (!tap(n == 102, "IPv6 + VLAN frame on the wire, 102 bytes (%zd)", n))
		return -1;
	tap(be16(f + 12) == 0x8100 && be16(f + 14) == 42 && be16(f + 16) == 0x86dd,
	    "802.1Q tag VID 42, IPv6");
	tap(be32(f + 18) == (6u << 28 | 0xb8u << 20 | 0xabcde) && be16(f + 22) == 44 &&
	    f[24] == 17 && f[25] == 17 && f[26] == 0xfe && f[41] == 2 && f[42] == 0xfe &&
	    f[57] == 2, "IPv6: TC, flow label, payload length 44, UDP, hop limit, addresses");
	{
		uint32_t sum = 0;
		size_t i;

		for (i = 0; i < 32; i += 2)
			sum += be16(f + 26 + i);
		sum += 17 + 44;
		tap(be16(f + 58) == t_sport(0xabcde, 0, 0) && be16(f + 60) == 4791 &&
		    be16(f + 64) != 0 && t_csum(sum, f + 58, 44) == 0,
		    "UDP: source port from the flow label, valid IPv6 UDP checksum");
	}
	ib = 66;
	tap(f[ib] == 0x65 && be24(f + ib + 5) == 0xdef && be32(f + ib + 20) == 0xaabbccdd &&
	    !memcmp(f + ib + 24, want, 8), "BTH SEND_ONLY_WITH_IMM, ImmDt as in the WQE, payload");
	tap((uint32_t)(f[98] | f[99] << 8 | f[100] << 16 | (uint32_t)f[101] << 24) ==
	    t_icrc(f + 18, 80, true), "IPv6 ICRC matches the test's own computation");
	tap(be24(f + ib + 9) == T_SQ_PSN + 1, "the second packet of QP B has PSN + 1 (0x%x)",
	    be24(f + ib + 9));
	return n;
}

void g_engine_tx(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t f[2048], want[128];

	eng_setup();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	if (tx_ipv4(f, sizeof(f), want, true) < 0 || tx_ipv6(f, sizeof(f), want, true) < 0)
		return;
	send_errors(peer);
}

void g_engine_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t f[2048], inj[2048];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	uint64_t rbuf = T_IOVA + 8 * 4096, d0;
	uint8_t want[128], got[128];
	ssize_t n;
	size_t ib = 42, iblen, i;
	bool ok;

	eng_setup();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);

	n = tx_ipv4(f, sizeof(f), want, false);
	if (!tap(n == 106, "IPv4 frame captured from the wire (%zd bytes)", n))
		return;
	/* The same frame, addressed to us and to QP B, is received. */
	g[0] = sge(128, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	memcpy(inj, f, (size_t)n);
	memcpy(inj, MAC, 6);
	memcpy(inj + 6, peer, 6);
	put32(inj + ib + 4, E.b.qpn);
	put32(inj + ib + 12, T_QKEY);
	put32(inj + ib + 16, 0x000777);
	iblen = (size_t)n - ib;
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + iblen - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	wire_send(inj, (size_t)n);
	wire_settle();
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0) && c.byte_len == 77 &&
		 c.src_qpn == 0x777 && !memcmp(c.smac, peer, 6) &&
		 (c.flags & KITE_CQE_F_SOLICITED),
		 "frame from the wire with the test's ICRC: RESP_SEND, byte_len 77, "
		 "src_qpn, peer SMAC, SE"))
		cqe_diag("recv", &c);
	memread(t_bus(rbuf), got, 40 + 37);
	tap(!memcmp(got + 20, inj + 14, 20) && !memcmp(got + 40, want, 37),
	    "received GRH area holds the frame's IPv4 header; payload intact");
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0, "no drop");

	/* Corrupted ICRC from the wire: dropped and counted. */
	post_recv(&E.b, g, 1);
	inj[n - 1] ^= 0x80;
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1 && tcq_drain(&E.rcq) == 0,
	    "corrupted ICRC from the wire: dropped, ROCE_RX_DROPS +1");
	inj[n - 1] ^= 0x80;
	/* A payload byte flipped (ICRC covers it). */
	inj[ib + 25] ^= 1;
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 2 && tcq_drain(&E.rcq) == 0,
	    "payload corrupted in flight: ICRC mismatch, dropped");
	inj[ib + 25] ^= 1;
	/* TTL and TOS changed by routers: masked, still accepted. */
	inj[14 + 8] = 3;
	inj[14 + 1] = 0x2a;
	put16(inj + 14 + 10, 0);
	put16(inj + 14 + 10, t_csum(0, inj + 14, 20));
	wire_send(inj, (size_t)n);
	wire_settle();
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0),
	    "TTL/TOS rewritten in flight: the ICRC still matches (masked fields)");

	n = tx_ipv6(f, sizeof(f), want, false);
	if (!tap(n == 102, "IPv6 + VLAN frame captured from the wire (%zd bytes)", n))
		return;
	ib = 66;
	/* Inject it back to QP B with the VLAN: the CQE reports the tag. */
	memcpy(inj, f, (size_t)n);
	memcpy(inj, MAC, 6);
	memcpy(inj + 6, peer, 6);
	put32(inj + ib + 4, E.b.qpn);
	put32(inj + ib + 12, T_QKEY);
	{
		uint32_t ic = t_icrc(inj + 18, 80, true);

		memcpy(inj + n - 4, &ic, 4);
	}
	g[0] = sge(128, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	wire_send(inj, (size_t)n);
	wire_settle();
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, E.b.qpn, 0) && c.byte_len == 48 &&
		 c.imm_data == 0xddccbbaa && (c.flags & KITE_CQE_F_VLAN) &&
		 c.vlan == (KITE_VLAN_VALID | 42) &&
		 FIELD_GET(KITE_CQE_F_L3, c.flags) == KITE_NET_ROCE_V2_IPV6,
		 "IPv6 + VLAN frame from the wire: RESP_SEND_IMM, VLAN 42, L3=IPv6"))
		cqe_diag("recv", &c);
	memread(t_bus(rbuf), got, 48);
	tap(!memcmp(got, inj + 18, 40) && !memcmp(got + 40, want, 8),
	    "GRH area holds the IPv6 header; payload intact");

	/* Truncated and mangled frames: dropped and counted, never a crash. */
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	/* Not 0 bytes: QEMU's dgram backend takes that for a closed peer. */
	for (i = 1; i < (size_t)n; i++) {
		wire_send(inj, i);
		if ((i & 15) == 15)
			wire_settle();
	}
	for (i = 12; i < (size_t)n; i++) {
		inj[i] ^= 0xa5;
		wire_send(inj, (size_t)n);
		inj[i] ^= 0xa5;
		if ((i & 15) == 15)
			wire_settle();
	}
	wire_settle();
	{
		struct res r;

		tap(nop(&r) == KITE_CMD_OK && stat1(KITE_STAT_ROCE_RX_DROPS) > d0 &&
		    tcq_drain(&E.rcq) == 0,
		    "truncated and mangled frames: dropped (ROCE_RX_DROPS +%" PRIu64 "), "
		    "no CQE, device alive", stat1(KITE_STAT_ROCE_RX_DROPS) - d0);
	}
}

/*
 * RQ doorbell records (KITE_QP_F_RQ_DBREC, prm_qp.rst): CREATE_QP's
 * checks; receives posted by the record alone, no RQ doorbell; a record
 * more than the depth ahead; the WQEs a record names flushed in ERR.
 */
void g_rq_dbrec(void)
{
	uint64_t rec = galloc(4096, 4096), rbuf = T_IOVA + 8 * 4096, b0, d0, x0;
	struct kite_cmd_create_qp qin;
	struct kite_wqe_sge g;
	struct kite_wqe_ud av;
	struct qpspec qs;
	struct kite_cqe c;
	struct tqp d, bad;
	struct res r;
	bool ok;

	eng_setup();
	tqp_create_dbrec(&d, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 0x48, "CREATE_QP with KITE_QP_F_RQ_DBREC, record at 0 -> E_PARAM");
	tqp_create_dbrec(&d, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, rec + 4, &r);
	expect(&r, KITE_CMD_E_PARAM, 0x48, "CREATE_QP with an unaligned RQ doorbell record -> E_PARAM");
	qs = qps(KITE_QPT_UD, fx_pd, fx_cq.cqn, 0);
	qin = qp_in(&qs);
	qin.rq_dbrec_addr = rec;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 0x48, "CREATE_QP with rq_dbrec_addr but no KITE_QP_F_RQ_DBREC -> E_PARAM");

	need(tqp_create_dbrec(&d, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, rec, &r), &r,
	     "CREATE_QP UD with an RQ doorbell record");
	tqp_rts(&d);
	av = av4(d.qpn, T_QKEY, MAC);
	g = sge(64, E.lkey, rbuf);
	b0 = stat1(KITE_STAT_BAD_DOORBELLS);
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	post_recv(&d, &g, 1);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, NULL, 0, "hello", 5, true);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0), "UD SEND to the QP with a record: sent");
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, d.qpn, 0) && c.byte_len == 45 &&
		 c.wqe_idx == 0,
		 "a receive posted by the record alone (no RQ doorbell) takes the SEND"))
		cqe_diag("recv", &c);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == b0 && stat1(KITE_STAT_ROCE_RX_DROPS) == d0,
	    "no bad doorbell, no drop");

	/* 17 ahead of the consumer counter 1, depth 16: ignored and counted. */
	wr32(rec, 18);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, NULL, 0, "hello", 5, true);
	tcq_next(&E.scq, &c);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == b0 + 1 && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1 &&
	    !tcq_next(&E.rcq, &c),
	    "a record more than the depth ahead: counted as a bad doorbell, the SEND dropped");

	/* A record outside memory: a DMA error, the SEND finds the RQ empty. */
	need(tqp_create_dbrec(&bad, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn,
			      0xfff0000000000000ULL, &r), &r, "CREATE_QP UD with its record outside memory");
	tqp_rts(&bad);
	x0 = stat1(KITE_STAT_DMA_ERRORS);
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	av = av4(bad.qpn, T_QKEY, MAC);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, NULL, 0, "hello", 5, true);
	tcq_next(&E.scq, &c);
	tap(stat1(KITE_STAT_DMA_ERRORS) > x0 && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1 &&
	    !tcq_next(&E.rcq, &c),
	    "an unreadable record: a DMA error counted, the SEND dropped, no receive CQE");
	av = av4(d.qpn, T_QKEY, MAC);

	/* A receive the record names, flushed when the QP enters ERR. */
	post_recv(&d, &g, 1);
	tap(tqp_to(&d, KITE_QPS_ERR) == KITE_CMD_OK, "the QP with a record to ERR");
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, d.qpn, KITE_SYND_WR_FLUSH) &&
		 c.wqe_idx == 1,
		 "in ERR the WQE the record alone names is flushed (WR_FLUSH, wqe_idx 1)"))
		cqe_diag("flush", &c);
}
