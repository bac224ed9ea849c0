/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): the command channel, EQ0 and
 * MSI-X, QUERY_*, user contexts and PDs, the GID table, doorbells, link
 * events, table limits and trace events (groups cmdq, eq0, query, uctx_pd,
 * gid, doorbell, link, limits, trace).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Group: command channel                                              */
/* ------------------------------------------------------------------ */

void g_cmdq(void)
{
	uint64_t ring = galloc(4 * 4096, 4096);
	uint32_t cfg, ci, st;
	struct kite_cmd c;
	struct res r, r2;
	uint32_t i1, i2, ck1, ck2;
	int i;
	bool all;

	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), 0);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 0);
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	tap(!(cfg & KITE_CMDQ_CFG_ENABLE), "enable with LOG_DEPTH 0 is refused (CFG 0x%x)", cfg);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | (KITE_CMDQ_MAX_LOG_DEPTH + 1));
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	tap(!(cfg & KITE_CMDQ_CFG_ENABLE), "enable with LOG_DEPTH 7 is refused (CFG 0x%x)", cfg);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring + 0x800);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 1);
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	tap(!(cfg & KITE_CMDQ_CFG_ENABLE), "enable with a BASE not 4 KiB aligned is refused (CFG 0x%x)", cfg);

	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 1);
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	if (!tap(cfg == (KITE_CMDQ_CFG_ENABLE | 1), "a valid configuration enables (CFG 0x%x)", cfg))
		fatal("command queue cannot be enabled");
	cmdq.base = ring;
	cmdq.log = 1;
	cmdq.pi = 0;
	cmdq.on = true;

	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring + 0x1000);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 3);
	tap(reg(RDMA(KITE_RDMA_CMDQ_BASE_LO)) == (uint32_t)ring &&
	    reg(RDMA(KITE_RDMA_CMDQ_CFG)) == (KITE_CMDQ_CFG_ENABLE | 1),
	    "BASE/CFG writes while enabled are ignored");

	nop(&r);
	expect(&r, KITE_CMD_OK, 0, "NOP completes OK");
	tap(r.done && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 1, "NOP: DONE set in status, CI is 1");

	all = true;
	for (i = 0; i < 5; i++)
		all &= nop(&r) == KITE_CMD_OK;
	tap(all && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 6, "NOPs across ring wraps (depth 2), CI free-running");

	run(KITE_CMD_NOP, NULL, 50, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "NOP ignores in_len (50)");
	run(0x7f, NULL, 0, 0, 0, &r);
	expect(&r, KITE_CMD_E_OPCODE, -1, "unknown opcode 0x7f -> E_OPCODE");
	run(0x04, NULL, 0, 0, 0, &r);
	expect(&r, KITE_CMD_E_OPCODE, -1, "unassigned opcode 0x04 -> E_OPCODE");
	run(KITE_CMD_ALLOC_PD, NULL, KITE_CMD_PAYLOAD_SIZE + 1, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "in_len 225 -> E_LENGTH");
	run(KITE_CMD_ALLOC_PD, &(struct kite_cmd_obj){ 0 }, 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "in_len shorter than the input structure -> E_LENGTH");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, KITE_CMD_PAYLOAD_SIZE + 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "out_len 225 with out_addr 0 -> E_LENGTH");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "out_len shorter than the output structure -> E_LENGTH");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out), NOT_RAM, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "out_addr outside guest RAM -> E_DMA");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel still works after failed commands");

	/* PI exactly depth ahead is fine. */
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_NOP;
	i1 = cmd_post(&c);
	ck1 = c.cookie;
	i2 = cmd_post(&c);
	ck2 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	wait_ci(cmdq.pi, POLL_MAX);
	cmd_collect(i1, ck1, &r);
	cmd_collect(i2, ck2, &r2);
	tap(r.done && r2.done && reg(RDMA(KITE_RDMA_CMDQ_CI)) == cmdq.pi &&
	    !(reg(RDMA(KITE_RDMA_CMDQ_STATUS)) & KITE_CMDQ_STATUS_BAD_PI),
	    "PI exactly depth ahead of CI: both entries execute");

	/* PI more than depth ahead. */
	ci = reg(RDMA(KITE_RDMA_CMDQ_CI));
	wreg(RDMA(KITE_RDMA_CMDQ_PI), ci + 3);
	clock_step(POLL_STEP_NS * 10);
	st = reg(RDMA(KITE_RDMA_CMDQ_STATUS));
	tap((st & KITE_CMDQ_STATUS_BAD_PI) && !(st & KITE_CMDQ_STATUS_HALTED),
	    "PI more than depth ahead sets STATUS.BAD_PI (STATUS 0x%x)", st);
	tap(reg(RDMA(KITE_RDMA_CMDQ_CI)) == ci, "bad PI is ignored: CI unchanged");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel keeps working after a bad PI");

	/* Disable resets PI/CI/STATUS. */
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 1);
	tap(reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0 && reg(RDMA(KITE_RDMA_CMDQ_STATUS)) == 0 &&
	    !(reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE),
	    "disable resets CI and STATUS");

	/* Ring entry unreachable: halt with DMA_ERR. */
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)NOT_RAM);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), (uint32_t)(NOT_RAM >> 32));
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 1);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), 1);
	for (i = 0; i < POLL_MAX; i++) {
		if (reg(RDMA(KITE_RDMA_CMDQ_STATUS)) & KITE_CMDQ_STATUS_HALTED)
			break;
		clock_step(POLL_STEP_NS);
	}
	st = reg(RDMA(KITE_RDMA_CMDQ_STATUS));
	tap((st & (KITE_CMDQ_STATUS_HALTED | KITE_CMDQ_STATUS_DMA_ERR)) ==
	    (KITE_CMDQ_STATUS_HALTED | KITE_CMDQ_STATUS_DMA_ERR) &&
	    reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0,
	    "ring outside guest RAM: STATUS DMA_ERR|HALTED, CI stays 0 (STATUS 0x%x)", st);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), 2);
	clock_step(POLL_STEP_NS * 10);
	tap(reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0, "halted channel does not process further PI writes");
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 1);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), 0);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 2);
	cmdq.log = 2;
	cmdq.pi = 0;
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "disable + re-enable recovers from DMA_ERR");
}

/* ------------------------------------------------------------------ */
/* Group: EQ0 command completion events and MSI-X                      */
/* ------------------------------------------------------------------ */

void g_eq0(void)
{
	struct res r;
	const struct kite_eqe *e;
	unsigned mark, i, found, n;
	uint64_t ov0;
	bool all, phase_ok;
	struct kite_eqe raw;

	if (!cmdq_enable(6))
		fatal("command queue does not enable");
	need(create_eq(&eq0, 6, EQ0_VEC, true, &r), &r, "CREATE_EQ (EQ0)");
	tap(r.result == 0, "CREATE_EQ with CTRL returns EQN 0 (got %u)", r.result);
	eq_drain(&eq0);

	mark = neqlog;
	nop(&r);
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(e != NULL, "NOP posts CMD_DONE with its cookie on EQ0");
	if (e)
		tap(e->data == r.status, "CMD_DONE data is the status word (0x%x vs 0x%x)",
		    e->data, r.status);
	mark = neqlog;
	run(0x7e, NULL, 0, 0, 0, &r);
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(e && e->data == r.status && (e->data & 0xff) == KITE_CMD_E_OPCODE,
	    "failed command's CMD_DONE carries its error status");

	/* Across a wrap: depth 64, 70 commands, every CMD_DONE found in order. */
	all = true;
	found = 0;
	for (i = 0; i < 70; i++) {
		mark = neqlog;
		nop(&r);
		if (neqlog - mark == 1 && eqlog[mark % EQLOG].obj == r.cookie)
			found++;
		else
			all = false;
	}
	tap(all && found == 70, "70 NOPs: each CMD_DONE is the next EQE, owner phase right across the wrap (%u/70)", found);
	memread(eq0.buf + (uint64_t)((eq0.ci - 1) & 63) * KITE_EQE_SIZE, &raw, sizeof(raw));
	phase_ok = FIELD_GET(KITE_EQE_OWNER, raw.type_owner) == (((eq0.ci - 1) >> 6 & 1) ^ 1);
	tap(eq0.ci > 64 && phase_ok, "EQE %u written with owner %u (pass %u)", eq0.ci - 1,
	    (unsigned)FIELD_GET(KITE_EQE_OWNER, raw.type_owner), (eq0.ci - 1) >> 6);

	/* MSI-X only when armed. */
	msi_take(EQ0_VEC);
	nop(&r);
	tap(!msi_take(EQ0_VEC), "disarmed EQ0: no interrupt for a new EQE");
	eq_doorbell(&eq0, true);
	clock_step(POLL_STEP_NS);
	tap(!msi_take(EQ0_VEC), "arming an empty EQ0 does not interrupt");
	nop(&r);
	tap(msi_take(EQ0_VEC), "armed EQ0: the next EQE raises vector %d", EQ0_VEC);
	nop(&r);
	tap(!msi_take(EQ0_VEC), "the interrupt disarms the EQ: next EQE does not interrupt");
	eq0.autodb = false;
	n = eq0.ci;
	nop(&r);
	wr64(db_addr(0), db_eq(0, n, true));
	clock_step(POLL_STEP_NS);
	tap(msi_take(EQ0_VEC), "arming with unconsumed EQEs (pi != ci) interrupts at once");
	eq_doorbell(&eq0, false);
	wr32(BAR0_ADDR + KITE_MSIX_TABLE_OFFSET + 16 * EQ0_VEC + 12, 1);	/* mask */
	eq_doorbell(&eq0, true);
	nop(&r);
	tap(!msi_take(EQ0_VEC) && (rd32(BAR0_ADDR + KITE_MSIX_PBA_OFFSET) & BIT(EQ0_VEC)),
	    "armed EQ0 with its vector masked: PBA bit set, no message");
	wr32(BAR0_ADDR + KITE_MSIX_TABLE_OFFSET + 16 * EQ0_VEC + 12, 0);	/* unmask */
	tap(msi_take(EQ0_VEC), "unmasking delivers the pending message");

	/* Overflow: EQ0 holds at most depth unconsumed EQEs. */
	ov0 = stat1(KITE_STAT_EQ_OVERFLOWS);
	eq_drain(&eq0);
	eq_doorbell(&eq0, false);
	mark = neqlog;
	for (i = 0; i < 66; i++)
		nop(&r);
	n = neqlog - mark;
	eq_doorbell(&eq0, false);
	tap(n == 64, "66 commands without CI updates: exactly 64 EQEs written (%u)", n);
	tap(stat1(KITE_STAT_EQ_OVERFLOWS) > ov0, "EQ overflow counted in KITE_STAT_EQ_OVERFLOWS");
	eq_doorbell(&eq0, false);
	mark = neqlog;
	nop(&r);
	tap(eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie) != NULL,
	    "after the overflow, EQ0 works again once space frees");
	eq0.autodb = true;
	eq_doorbell(&eq0, false);
}

/* ------------------------------------------------------------------ */
/* Group: QUERY_DEVICE / QUERY_PORT / QUERY_STATS                      */
/* ------------------------------------------------------------------ */

void g_query(void)
{
	struct kite_cmd_query_device_out d, d2;
	struct kite_cmd_query_port_out p;
	struct res r;
	uint64_t guid = 0, buf, st[24], s0[KITE_STAT_COUNT], s1[KITE_STAT_COUNT];
	uint8_t eui[8] = { (uint8_t)(MAC[0] ^ 2), MAC[1], MAC[2], 0xff, 0xfe, MAC[3], MAC[4], MAC[5] };
	unsigned bad = 0, i;
	bool link;
	static const struct { uint32_t mtu; uint8_t ib; } mtus[] = {
		{ 1500, KITE_MTU_1024 }, { 9000, KITE_MTU_4096 }, { 68, KITE_MTU_256 },
		{ 2112, KITE_MTU_2048 }, { 2111, KITE_MTU_1024 }, { 4160, KITE_MTU_4096 },
		{ 4159, KITE_MTU_2048 }, { 576, KITE_MTU_512 }, { 575, KITE_MTU_256 },
	};

	std_setup();
	for (i = 0; i < 8; i++)
		guid = guid << 8 | eui[i];

	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(d), 0, &r), &r, "QUERY_DEVICE");
	memcpy(&d, r.out, sizeof(d));
	CHK(d.fw_ver == reg(KITE_REG_FW_VER), "fw_ver 0x%x", d.fw_ver);
	CHK(d.hw_rev == reg(KITE_REG_HW_REV), "hw_rev 0x%x", d.hw_rev);
	CHK(d.node_guid == guid, "node_guid 0x%" PRIx64 ", expected 0x%" PRIx64, d.node_guid, guid);
	CHK(d.sys_image_guid == guid, "sys_image_guid 0x%" PRIx64, d.sys_image_guid);
	CHK(d.max_mr_size == 1ULL << 39, "max_mr_size 0x%" PRIx64, d.max_mr_size);
	CHK(d.page_size_cap == GENMASK_ULL(21, 12), "page_size_cap 0x%" PRIx64, d.page_size_cap);
	CHK(d.vendor_id == PCI_VENDOR_ID_KITE, "vendor_id 0x%x", d.vendor_id);
	CHK(d.vendor_part_id == PCI_DEVICE_ID_KITE_NIC, "vendor_part_id 0x%x", d.vendor_part_id);
	CHK(d.max_qp == 1024, "max_qp %u", d.max_qp);
	CHK(d.max_qp_wr == 4096, "max_qp_wr %u", d.max_qp_wr);
	CHK(d.max_send_sge == 8, "max_send_sge %u", d.max_send_sge);
	CHK(d.max_recv_sge == 8, "max_recv_sge %u", d.max_recv_sge);
	CHK(d.max_sge_rd == 8, "max_sge_rd %u", d.max_sge_rd);
	CHK(d.max_inline == 256, "max_inline %u", d.max_inline);
	CHK(d.max_cq == 1024, "max_cq %u", d.max_cq);
	CHK(d.max_cqe == 65536, "max_cqe %u", d.max_cqe);
	CHK(d.max_mr == 4096, "max_mr %u", d.max_mr);
	CHK(d.max_pd == 1024, "max_pd %u", d.max_pd);
	CHK(d.max_uctx == 255, "max_uctx %u", d.max_uctx);
	CHK(d.max_eq == 64, "max_eq %u", d.max_eq);
	CHK(d.max_eqe == 32768, "max_eqe %u", d.max_eqe);
	CHK(d.max_qp_rd_atom == 128, "max_qp_rd_atom %u", d.max_qp_rd_atom);
	CHK(d.max_qp_init_rd_atom == 128, "max_qp_init_rd_atom %u", d.max_qp_init_rd_atom);
	CHK(d.max_fast_reg_pages == 512, "max_fast_reg_pages %u", d.max_fast_reg_pages);
	CHK(d.gid_tbl_len == 16, "gid_tbl_len %u", d.gid_tbl_len);
	CHK(d.features == (KITE_FEAT_RC | KITE_FEAT_UD | KITE_FEAT_ATOMIC | KITE_FEAT_FAST_REG |
			   KITE_FEAT_CQE_128 | KITE_FEAT_CQ_RESIZE | KITE_FEAT_CQ_MODERATION |
			   KITE_FEAT_SRQ | KITE_FEAT_MCAST | KITE_FEAT_QP_CNTR | KITE_FEAT_MW |
			   KITE_FEAT_REREG_MR | KITE_FEAT_EQ_MODERATION |
			   KITE_FEAT_SRQ_RESIZE | KITE_FEAT_ATOMIC_WRITE | KITE_FEAT_FLUSH |
			   KITE_FEAT_DM | KITE_FEAT_XRC |
			   KITE_FEAT_RQ_DBREC),
	    "features 0x%x", d.features);
	CHK(d.max_dm_size == KITE_BAR_DM_SIZE && d.max_xrcd == 256, "max_dm_size %u (BAR4), max_xrcd %u",
	    d.max_dm_size, d.max_xrcd);
	CHK(d.max_cntr == 64, "max_cntr %u", d.max_cntr);
	CHK(d.max_mcast_grp == 64, "max_mcast_grp %u", d.max_mcast_grp);
	CHK(d.max_mcast_qp_attach == 32, "max_mcast_qp_attach %u", d.max_mcast_qp_attach);
	CHK(d.max_mcast_total_attach == 512, "max_mcast_total_attach %u",
	    d.max_mcast_total_attach);
	CHK(d.max_mw == 4096, "max_mw %u (the memory translation table)", d.max_mw);
	CHK(d.max_srq == 255, "max_srq %u", d.max_srq);
	CHK(d.max_srq_wr == 4096, "max_srq_wr %u", d.max_srq_wr);
	CHK(d.max_srq_sge == 8, "max_srq_sge %u", d.max_srq_sge);
	CHK(d.max_cq_moderation_count == 65535, "max_cq_moderation_count %u", d.max_cq_moderation_count);
	CHK(d.max_cq_moderation_period == 65535, "max_cq_moderation_period %u", d.max_cq_moderation_period);
	CHK(d.local_ca_ack_delay == 15, "local_ca_ack_delay %u", d.local_ca_ack_delay);
	tap(bad == 0, "QUERY_DEVICE: every field as specified (%u wrong)", bad);

	buf = galloc(4096, 4096);
	memset(st, 0xa5, sizeof(st));
	memwrite(buf, st, sizeof(st));
	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(d), buf, &r), &r, "QUERY_DEVICE to out_addr");
	memread(buf, &d2, sizeof(d2));
	tap(!memcmp(&d, &d2, sizeof(d)), "QUERY_DEVICE output to out_addr matches the payload output");

	/* QUERY_PORT */
	link = reg(KITE_REG_STATUS) & KITE_STATUS_LINK_UP;
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	bad = 0;
	CHK(p.state == (link ? KITE_PORT_STATE_ACTIVE : KITE_PORT_STATE_DOWN), "state %u (link %d)", p.state, link);
	CHK(p.phys_state == (link ? KITE_PORT_PHYS_LINK_UP : KITE_PORT_PHYS_DISABLED), "phys_state %u", p.phys_state);
	CHK(p.active_mtu == KITE_MTU_1024, "active_mtu %u at ETH_MTU 1500", p.active_mtu);
	CHK(p.max_mtu == KITE_MTU_4096, "max_mtu %u", p.max_mtu);
	CHK(p.speed_mbps == 10000, "speed_mbps %u", p.speed_mbps);
	CHK(!memcmp(p.mac, MAC, 6), "mac %02x:%02x:%02x:%02x:%02x:%02x", p.mac[0], p.mac[1], p.mac[2], p.mac[3], p.mac[4], p.mac[5]);
	CHK(p.eth_mtu == 1500, "eth_mtu %u", p.eth_mtu);
	CHK(p.gid_tbl_len == 16, "gid_tbl_len %u", p.gid_tbl_len);
	tap(bad == 0, "QUERY_PORT: every field as specified (link %s, %u wrong)", link ? "up" : "down", bad);
	run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_PORT with out_len 23 -> E_LENGTH");

	bad = 0;
	for (i = 0; i < ARRAY_SIZE(mtus); i++) {
		wreg(KITE_REG_ETH_MTU, mtus[i].mtu);
		need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
		memcpy(&p, r.out, sizeof(p));
		CHK(p.active_mtu == mtus[i].ib && p.eth_mtu == mtus[i].mtu,
		    "ETH_MTU %u: active_mtu %u (expected %u), eth_mtu %u",
		    mtus[i].mtu, p.active_mtu, mtus[i].ib, p.eth_mtu);
	}
	tap(bad == 0, "QUERY_PORT active_mtu follows ETH_MTU (largest IB MTU with mtu+64 <= ETH_MTU)");
	wreg(KITE_REG_ETH_MTU, 1500);
	wreg(KITE_REG_ETH_MAC_LO, 0x33445566);
	wreg(KITE_REG_ETH_MAC_HI, 0x0211);
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	tap(p.mac[0] == 0x02 && p.mac[1] == 0x11 && p.mac[2] == 0x33 && p.mac[5] == 0x66,
	    "QUERY_PORT mac follows ETH_MAC");

	/* QUERY_STATS */
	run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * KITE_STAT_COUNT, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "QUERY_STATS without out_addr -> E_PARAM");
	run(KITE_CMD_QUERY_STATS, NULL, 0, 12, buf, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_STATS with out_len 12 (not a multiple of 8) -> E_LENGTH");
	memset(st, 0xa5, sizeof(st));
	memwrite(buf, st, sizeof(st));
	run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * 20, buf, &r);
	memread(buf, st, sizeof(st));
	tap(r.done && (r.status & 0xff) == 0 && r.result == KITE_STAT_COUNT &&
	    st[KITE_STAT_COUNT] == 0xa5a5a5a5a5a5a5a5ULL && st[KITE_STAT_COUNT - 1] != 0xa5a5a5a5a5a5a5a5ULL,
	    "QUERY_STATS out_len 160: result 16, exactly 16 counters written (result %u)", r.result);
	memset(st, 0xa5, sizeof(st));
	memwrite(buf, st, sizeof(st));
	run(KITE_CMD_QUERY_STATS, NULL, 0, 24, buf, &r);
	memread(buf, st, sizeof(st));
	tap(r.done && (r.status & 0xff) == 0 && r.result == 3 && st[3] == 0xa5a5a5a5a5a5a5a5ULL,
	    "QUERY_STATS out_len 24: result 3, only 3 counters written (result %u)", r.result);
	run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * KITE_STAT_COUNT, NOT_RAM, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "QUERY_STATS to an out_addr outside RAM -> E_DMA");

	stats(s0);
	nop(&r);
	nop(&r);
	nop(&r);
	run(0x7f, NULL, 0, 0, 0, &r);
	run(KITE_CMD_DEALLOC_PD, &(struct kite_cmd_obj){ .obj = 77 }, 8, 0, 0, &r);
	stats(s1);
	tap(s1[KITE_STAT_CMDS] - s0[KITE_STAT_CMDS] == 6,
	    "KITE_STAT_CMDS counts commands (delta %" PRIu64 ", expected 6)", s1[KITE_STAT_CMDS] - s0[KITE_STAT_CMDS]);
	tap(s1[KITE_STAT_CMD_ERRORS] - s0[KITE_STAT_CMD_ERRORS] == 2,
	    "KITE_STAT_CMD_ERRORS counts failed commands (delta %" PRIu64 ", expected 2)",
	    s1[KITE_STAT_CMD_ERRORS] - s0[KITE_STAT_CMD_ERRORS]);
	tap(s1[KITE_STAT_EQES] - s0[KITE_STAT_EQES] == 6,
	    "KITE_STAT_EQES counts the CMD_DONE events (delta %" PRIu64 ", expected 6)",
	    s1[KITE_STAT_EQES] - s0[KITE_STAT_EQES]);
}

/* ------------------------------------------------------------------ */
/* Group: user contexts and protection domains                         */
/* ------------------------------------------------------------------ */

void g_uctx_pd(void)
{
	struct res r;
	uint32_t u1, u2, pd, pd2, n;
	int c, i;

	std_setup();
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	tap(u1 == 1, "first ALLOC_UCTX returns 1 (got %u)", u1);
	u2 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	tap(u2 == 2, "second ALLOC_UCTX returns 2 (got %u)", u2);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX of an allocated context");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX 0 (the kernel) -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 256, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX 256 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 0xffffffff, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX 0xffffffff -> E_OBJECT");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	tap(u1 == 1, "ALLOC_UCTX reuses the lowest free number (got %u)", u1);

	pd = need(alloc_pd(u2, &r), &r, "ALLOC_PD in uctx 2");
	tap(pd >= 1 && pd <= KITE_OBJ_MASK, "ALLOC_PD returns a PDN >= 1 (got %u)", pd);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u2, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while a PD belongs to it -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX once its PD is gone");
	alloc_pd(u2, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_PD with a deallocated uctx -> E_OBJECT");
	alloc_pd(200, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_PD with a never-allocated uctx -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_PD twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_PD 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, 0xffffff, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_PD 0xffffff -> E_OBJECT");
	pd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	pd2 = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	tap(pd != pd2, "two PDs get different numbers (%u, %u)", pd, pd2);
	pd2 = need(cmd_obj(KITE_CMD_ALLOC_PD, 12345, 0, &r), &r, "ALLOC_PD with obj set");
	tap(pd2 != 12345 && pd2 >= 1 && pd2 < 1024, "ALLOC_PD ignores obj (PDN %u)", pd2);

	{
		struct cq ucq;
		struct qbuf mb = mkbuf(0, 12, 1, false);
		struct eqs ue;
		struct qpspec qs;
		uint32_t u, kpd, qp, key;

		need(create_eq(&ue, 6, EQ1_VEC, false, &r), &r, "CREATE_EQ");
		kpd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
		u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
		need(create_cq(&ucq, 2, ue.eqn, u, &r), &r, "CREATE_CQ in uctx");
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while a CQ belongs to it -> E_BUSY");
		cmd_obj(KITE_CMD_DESTROY_CQ, ucq.cqn, 0, &r);
		key = need(reg_mr(kpd, KITE_ACCESS_LOCAL_WRITE, 0, u, 0, 4096, &mb.pbl, &r), &r, "REG_MR in uctx");
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while an MR belongs to it -> E_BUSY");
		cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
		need(create_cq(&ucq, 2, ue.eqn, 0, &r), &r, "CREATE_CQ");
		qs = qps(KITE_QPT_UD, kpd, ucq.cqn, u);
		qp = need(create_qp(&qs, &r), &r, "CREATE_QP in uctx");
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while a QP belongs to it -> E_BUSY");
		cmd_obj(KITE_CMD_DESTROY_QP, qp, 0, &r);
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX once nothing belongs to it");
		run(KITE_CMD_ALLOC_MR, &(struct kite_cmd_alloc_mr){ .pdn = kpd, .max_pages = 4, .uctx = u },
		    sizeof(struct kite_cmd_alloc_mr), 0, 0, &r);
		expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_MR with an unallocated uctx -> E_OBJECT");
		cmd_obj(KITE_CMD_DEALLOC_PD, kpd, 5, &r);
		expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_obj, uctx),
		       "DEALLOC_PD with the (reserved) uctx field set -> E_PARAM, syndrome 4");
	}

	/* Exhaustion: 255 contexts in all. */
	n = 1;
	for (i = 0; i < 300; i++) {
		c = run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r);
		if (c != KITE_CMD_OK)
			break;
		n++;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 255,
	    "ALLOC_UCTX until full: 255 contexts, then E_NO_RESOURCES (%u, %s)", n, code_name((unsigned)c));
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 77, 0, &r);
	c = run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r);
	tap(c == KITE_CMD_OK && r.result == 77, "after freeing 77, ALLOC_UCTX returns 77 (got %u)", r.result);
}

/* ------------------------------------------------------------------ */
/* Group: GID table                                                    */
/* ------------------------------------------------------------------ */

void g_gid(void)
{
	struct res r;
	struct kite_cmd_add_gid in;

	std_setup();
	add_gid(0, KITE_NET_ROCE_V2_IPV4, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID index 0, IPv4");
	add_gid(15, KITE_NET_ROCE_V2_IPV6, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID index 15, IPv6");
	add_gid(0, KITE_NET_ROCE_V2_IPV6, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID replaces a valid entry");
	add_gid(16, KITE_NET_ROCE_V2_IPV4, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ADD_GID index 16 -> E_PARAM");
	add_gid(3, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ADD_GID type 0 -> E_PARAM");
	add_gid(3, 3, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ADD_GID type 3 -> E_PARAM");
	memset(&in, 0, sizeof(in));
	in.index = 4;
	in.type = KITE_NET_ROCE_V2_IPV4;
	run(KITE_CMD_ADD_GID, &in, sizeof(in) - 2, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "ADD_GID with in_len 30 -> E_LENGTH");
	in.vlan = KITE_VLAN_VALID | 100;
	run(KITE_CMD_ADD_GID, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID with a VLAN");
	cmd_obj(KITE_CMD_DEL_GID, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEL_GID 0");
	cmd_obj(KITE_CMD_DEL_GID, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEL_GID 0 again -> E_OBJECT");
	cmd_obj(KITE_CMD_DEL_GID, 5, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEL_GID of a never-valid entry -> E_OBJECT");
	cmd_obj(KITE_CMD_DEL_GID, 16, 0, &r);
	expect2(&r, KITE_CMD_E_OBJECT, KITE_CMD_E_PARAM, "DEL_GID 16 refused");
	cmd_obj(KITE_CMD_DEL_GID, 15, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEL_GID 15");
}

/* ------------------------------------------------------------------ */
/* Group: doorbells                                                    */
/* ------------------------------------------------------------------ */

void g_doorbell(void)
{
	struct res r;
	struct cq ucq;
	struct qpspec s;
	uint32_t u1, upd, uqp, kqp, n;

	fixture();
	if (!have_bar2)
		diag("no BAR2 found");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	upd = need(alloc_pd(u1, &r), &r, "ALLOC_PD (uctx)");
	need(create_cq(&ucq, 6, eq1.eqn, u1, &r), &r, "CREATE_CQ (uctx)");
	s = qps(KITE_QPT_RC, upd, ucq.cqn, u1);
	uqp = need(create_qp(&s, &r), &r, "CREATE_QP (uctx)");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	kqp = need(create_qp(&s, &r), &r, "CREATE_QP (kernel)");
	bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);

	/* EQ doorbell on a user page: ignored. */
	eq0.autodb = false;
	n = eq0.ci;
	nop(&r);
	msi_take(EQ0_VEC);
	wr64(db_addr(u1), db_eq(0, n, true));
	clock_step(POLL_STEP_NS);
	tap(!msi_take(EQ0_VEC), "EQ arm doorbell on user page %u is not acted on (no interrupt)", u1);
	eq0.autodb = true;
	bad_db_check(1, "EQ doorbell on a user page counted");
	eq0.autodb = false;
	n = eq0.ci;
	nop(&r);
	wr64(db_addr(0), db_eq(0, n, true));
	clock_step(POLL_STEP_NS);
	tap(msi_take(EQ0_VEC), "the same doorbell on page 0 arms EQ0 (interrupt at once)");
	eq0.autodb = true;
	eq_doorbell(&eq0, false);
	bad_db_check(0, "valid EQ doorbells not counted");

	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, uqp, 1));
	bad_db_check(1, "SQ doorbell of a user QP on page 0 ignored and counted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_SQ, uqp, 1));
	bad_db_check(0, "SQ doorbell of a user QP on its own page accepted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_RQ, uqp, 64));
	bad_db_check(0, "RQ doorbell PI exactly depth ahead accepted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_SQ, uqp, 66));
	bad_db_check(1, "SQ doorbell PI more than depth ahead ignored and counted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_RQ, kqp, 1));
	bad_db_check(1, "RQ doorbell of a kernel QP on a user page counted");
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, kqp, 3));
	bad_db_check(0, "SQ doorbell of a kernel QP on page 0 accepted");
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, 500, 1));
	bad_db_check(1, "SQ doorbell of a nonexistent QP counted");
	wr64(db_addr(7), db_wq(KITE_DB_TYPE_SQ, uqp, 1));
	bad_db_check(1, "doorbell on the page of an unallocated context counted");
	wr64(db_addr(0), db_cq_arm(ucq.cqn, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(1, "CQ arm doorbell of a user CQ on page 0 counted");
	dbrec_arm(&ucq, 0, KITE_CQ_ARM_NEXT, 0);
	wr64(db_addr(u1), db_cq_arm(ucq.cqn, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(0, "CQ arm doorbell of a user CQ on its own page accepted");
	wr32(db_addr(0), (uint32_t)db_eq(0, eq0.ci, false));
	bad_db_check(1, "32-bit doorbell write ignored and counted");
	wr32(db_addr(0) + 4, 0);
	bad_db_check(1, "32-bit write to the upper half counted");
	wr64(db_addr(0) + 8, db_eq(0, eq0.ci, false));
	bad_db_check(1, "64-bit write at offset 8 of a page counted");
	tap(rd64(db_addr(0)) == 0 && rd32(db_addr(u1)) == 0, "doorbell reads return 0");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel fine after bad doorbells");
}

/* ------------------------------------------------------------------ */
/* Group: link events                                                  */
/* ------------------------------------------------------------------ */

void g_link(void)
{
	struct res r;
	struct kite_cmd_query_port_out p;
	const char *reply = "";
	unsigned mark;
	const struct kite_eqe *e;

	std_setup();
	wreg(KITE_REG_IMR, KITE_INT_LINK);
	reg(KITE_REG_ICR);
	msi_take(0);
	mark = neqlog;
	qmp_connect();
	if (!tap(qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":false}}", &reply),
		 "QMP set_link k down")) {
		diag("%.200s", reply);
		return;
	}
	nop(&r);
	e = eqe_find(mark, KITE_EQE_PORT_DOWN, 1);
	tap(e != NULL, "link down: PORT_DOWN (obj 1) on EQ0");
	tap(!(reg(KITE_REG_STATUS) & KITE_STATUS_LINK_UP), "STATUS.LINK_UP clear");
	tap(reg(KITE_REG_ICR) & KITE_INT_LINK, "ICR.LINK set");
	tap(msi_take(0), "vector 0 raised (IMR.LINK)");
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	tap(p.state == KITE_PORT_STATE_DOWN && p.phys_state == KITE_PORT_PHYS_DISABLED,
	    "QUERY_PORT: DOWN / DISABLED (%u/%u)", p.state, p.phys_state);
	mark = neqlog;
	qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":true}}", NULL);
	nop(&r);
	tap(eqe_find(mark, KITE_EQE_PORT_ACTIVE, 1) != NULL, "link up: PORT_ACTIVE (obj 1) on EQ0");
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	tap(p.state == KITE_PORT_STATE_ACTIVE && p.phys_state == KITE_PORT_PHYS_LINK_UP,
	    "QUERY_PORT: ACTIVE / LINK_UP (%u/%u)", p.state, p.phys_state);
}

/* ------------------------------------------------------------------ */
/* Group: table limits                                                 */
/* ------------------------------------------------------------------ */

void g_limits(void)
{
	struct res r;
	struct qbuf cqb, sq;
	struct kite_cmd_create_qp qin;
	struct qpspec qs;
	uint64_t dbrec;
	uint32_t n, last = 0, maxn = 0;
	int c;

	fixture();
	/* PDs: 1..1023 (fixture holds one). */
	n = 1;
	while ((c = alloc_pd(0, &r)) == KITE_CMD_OK && n < 2000) {
		n++;
		last = r.result;
		maxn = last > maxn ? last : maxn;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 1023 && maxn == 1023,
	    "ALLOC_PD until full: 1023 PDs (PDN 1..1023), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));
	cmd_obj(KITE_CMD_DEALLOC_PD, 500, 0, &r);
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 500, "freed PDN 500 is reused (%u)", r.result);

	/* MRs: index 1..4095. */
	n = 0;
	maxn = 0;
	while ((c = alloc_mr(fx_pd, 1, n & 0xff, &r)) == KITE_CMD_OK && n < 5000) {
		n++;
		maxn = FIELD_GET(KITE_KEY_INDEX, r.result);
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 4095 && maxn == 4095,
	    "ALLOC_MR until full: 4095 MRs (index 1..4095), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));
	cmd_obj(KITE_CMD_DEREG_MR, 4095 << 8 | ((4094) & 0xff), 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the last index");

	/* CQs: 1..1023 (fixture holds one); all share one buffer and record. */
	cqb = qbuf_for(64 << 1);
	dbrec = galloc(64, 64);
	n = 1;
	maxn = 0;
	while ((c = create_cq_full(1, eq1.eqn, 0, 0, 0, 0, dbrec, &cqb.pbl, &r)) == KITE_CMD_OK && n < 2000) {
		n++;
		maxn = r.result > maxn ? r.result : maxn;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 1023 && maxn == 1023,
	    "CREATE_CQ until full: 1023 CQs (CQN 1..1023), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));

	/* QPs: RC/UD take 2..1023, GSI 1. */
	qs = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	qs.slog = qs.rlog = 1;
	qin = qp_in(&qs);
	sq = qbuf_for(128);
	qin.sq_pbl = sq.pbl;
	qin.rq_pbl = sq.pbl;
	n = 0;
	maxn = 0;
	while ((c = run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r)) == KITE_CMD_OK && n < 2000) {
		n++;
		maxn = r.result > maxn ? r.result : maxn;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 1022 && maxn == 1023,
	    "CREATE_QP until full: 1022 RC QPs (QPN 2..1023), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));
	/* The round robin wraps: the one free QPN is found wherever it is. */
	cmd_obj(KITE_CMD_DESTROY_QP, 500, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP 500 in the full table");
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 500,
	    "CREATE_QP in a full table but for QPN 500 gets 500 (%u)", r.result);
	qin.type = KITE_QPT_GSI;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 1, "GSI (QPN 1) still available when RC QPNs are exhausted");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP with every table full");
}

/* ------------------------------------------------------------------ */
/* Trace events                                                        */
/* ------------------------------------------------------------------ */

/* The -D log of the running QEMU has a line containing @needle. */
static bool log_has(const char *needle)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(log_path, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * QEMU runs with -trace enable=kite_* (run_group()): a command, doorbells,
 * a WQE, a CQE, a DMA error and a guest error each leave their trace event
 * in the log (QEMU's log backend; flushed per message).
 */
void g_trace(void)
{
	static const char *const want[] = {
		"kite_mmio_write ", "kite_mmio_read ", "kite_cmdq_cfg ",
		"kite_db_cmdq ", "kite_cmd_submit ", "kite_cmd_complete ",
		"kite_eqe_post ", "kite_db ", "kite_sq_wqe ", "kite_cqe_write ",
		"kite_qp_state ", "kite_err_dma ", "kite_err_guest ",
	};
	struct kite_wqe_sge g;
	struct kite_wqe_ud av;
	struct kite_cqe sc;
	struct res r;
	unsigned i;

	eng_setup();
	av = av4(E.b.qpn, T_QKEY, MAC);
	g = sge(64, E.lkey, T_IOVA);
	post_send(&E.gsi, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &g, 1,
		  NULL, 0, true);
	tap(tcq_next(&E.scq, &sc) && cqe_is(&sc, KITE_CQE_OP_REQ, 1, 0),
	    "a signaled SEND completes");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out),
	    NOT_RAM, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "out_addr outside guest RAM -> E_DMA");
	/* An SQ doorbell of a QP that does not exist: a guest error. */
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, 500, 1));
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after a bad doorbell");
	for (i = 0; i < ARRAY_SIZE(want); i++)
		tap(log_has(want[i]), "trace event %sfires", want[i]);
	tap(log_has("kite_cmd_submit ") && log_has(" NOP cookie "),
	    "kite_cmd_submit names the opcode (NOP)");
	tap(log_has("kite_err_dma command output: addr 0x8000000000 "),
	    "kite_err_dma names the access and its address");
	tap(log_has("kite_err_guest kite k: doorbell "),
	    "kite_err_guest carries the guest-error message");
}
