/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): device-side fuzzing,
 * robustness and stateful fuzzing (groups devfuzz, robust, fuzz).
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Group: device-side fuzzing (fault-corrupt)                          */
/* ------------------------------------------------------------------ */

/* fault-corrupt-count as the model has it, or -1. */
static long fz_count(void)
{
	char v[64];

	return qom_get("fault-corrupt-count", v, sizeof(v)) ? strtol(v, NULL, 0) : -1;
}

/* Arm one corruption of @cls. */
static void fz_arm(const char *cls, unsigned n)
{
	char v[64];

	snprintf(v, sizeof(v), "\"%s\"", cls);
	if (!qom_set("fault-corrupt", v, NULL))
		fatal("qom-set fault-corrupt %s", cls);
	snprintf(v, sizeof(v), "%u", n);
	qom_set("fault-corrupt-count", v, NULL);
}

static void fz_off(void)
{
	qom_set("fault-corrupt-count", "0", NULL);
	qom_set("fault-corrupt", "\"none\"", NULL);
}

/* The CQE a debug-cqe wrote at @idx of @q, and whether it is valid. */
static struct kite_cqe fz_cqe(struct cq *q, uint32_t idx, bool *valid)
{
	struct kite_cqe c = cqe_at(q, q->b.data, idx);
	uint32_t want = ((idx >> q->log) & 1) ^ 1;

	*valid = (c.op_own & KITE_CQE_OWNER) == want &&
		 FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_INVALID;
	return c;
}

void g_devfuzz(void)
{
	struct cq a, b;
	struct kite_cqe c, c2;
	struct res r;
	const struct kite_eqe *e;
	const char *reply = "";
	char v[256];
	uint32_t idx = 0, st, rev, qpn1, qpn2;
	unsigned mark, i, n;
	bool valid;

	fixture();
	if (!qom_set("fault-corrupt", "\"none\"", &reply)) {
		skip("model has no fault-corrupt property", "device-side fuzzing");
		diag("%.160s", reply);
		return;
	}
	tap(!qom_set("fault-corrupt", "\"cqe-qpn,bogus\"", &reply),
	    "fault-corrupt refuses an unknown class");
	tap(qom_get("fault-corrupt", v, sizeof(v)) && !strcmp(v, "\"\""),
	    "fault-corrupt reads back empty when off (%s)", v);
	qom_set("fault-seed", "42", NULL);
	mkcq(&a, 4, eq1.eqn, 0, 0, 0);
	mkcq(&b, 4, eq1.eqn, 0, 0, 0);

	/* CQE fields: one corruption each, the next CQE is clean. */
	fz_arm("cqe-qpn", 1);
	tap(qom_get("fault-corrupt", v, sizeof(v)) && !strcmp(v, "\"cqe-qpn\""),
	    "fault-corrupt reads back the class armed (%s)", v);
	dcqe(a.cqn, 0);
	c = fz_cqe(&a, idx, &valid);
	qpn1 = c.qpn;
	tap(valid && (c.qpn & BIT(23)) && c.qpn <= KITE_OBJ_MASK,
	    "cqe-qpn: the CQE names QPN 0x%x, beyond any QP", c.qpn);
	tap(fz_count() == 0, "cqe-qpn: fault-corrupt-count went to 0");
	fz_arm("cqe-qpn", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && (c.qpn & BIT(23)), "cqe-qpn again: corrupted (0x%x)", c.qpn);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && c.qpn == 0 && c.wqe_idx == idx, "count 0: the next CQE is clean");

	fz_arm("cqe-wqe-idx", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && (uint16_t)(c.wqe_idx - idx) >= 0x4000 &&
	    (uint16_t)(c.wqe_idx - idx) < 0xc000,
	    "cqe-wqe-idx: WQE index %u for %u: 0x%x ahead", c.wqe_idx, idx,
	    (uint16_t)(c.wqe_idx - idx));

	fz_arm("cqe-opcode", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	n = FIELD_GET(KITE_CQE_OPCODE, c.op_own);
	tap(valid && n > KITE_CQE_OP_RESIZE && n < KITE_CQE_OP_REQ_ERR,
	    "cqe-opcode: undefined opcode 0x%x", n);

	/* cqe-len corrupts only received SENDs: a requester CQE is left. */
	fz_arm("cqe-len", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && c.byte_len == 0 && fz_count() == 1,
	    "cqe-len: a requester CQE is not corrupted, the count stays");
	fz_off();

	fz_arm("cqe-syndrome", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	n = FIELD_GET(KITE_CQE_SYNDROME, c.syndrome);
	tap(valid && FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_REQ_ERR &&
	    n > KITE_SYND_ABORTED, "cqe-syndrome: REQ_ERR with undefined syndrome 0x%x", n);

	/* Owner out of turn: this slot looks old, the next one is fine. */
	fz_arm("cqe-owner", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(!valid && FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_REQ,
	    "cqe-owner: the CQE is written with the other pass's owner bit");
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid, "cqe-owner: the next CQE is valid");

	/* Misdirected: the CQE goes to the next CQ, its own pi does not move. */
	fz_arm("cqe-cqn", 1);
	dcqe(a.cqn, 0);
	c = fz_cqe(&a, idx + 1, &valid);
	tap(!valid, "cqe-cqn: nothing written to CQ %u", a.cqn);
	c2 = fz_cqe(&b, 0, &valid);
	tap(valid && FIELD_GET(KITE_CQE_OPCODE, c2.op_own) == KITE_CQE_OP_REQ &&
	    c2.wqe_idx == idx + 1,
	    "cqe-cqn: CQ %u's CQE (WQE %u) lands in CQ %u", a.cqn, c2.wqe_idx, b.cqn);

	/* EQE fields: the completion event of a armed CQ. */
	eq_drain(&eq1);
	fz_arm("eqe-type", 1);
	arm_cq(&b, 1, KITE_CQ_ARM_NEXT, 0);
	mark = neqlog;
	dcqe(b.cqn, 0);
	eq_drain(&eq1);
	e = neqlog > mark ? &eqlog[mark % EQLOG] : NULL;
	tap(e && FIELD_GET(KITE_EQE_TYPE, e->type_owner) > KITE_EQE_DEVICE_FATAL && e->obj == b.cqn,
	    "eqe-type: undefined event type 0x%x", e ? (unsigned)FIELD_GET(KITE_EQE_TYPE, e->type_owner) : 0);

	fz_arm("eqe-obj", 1);
	arm_cq(&b, 2, KITE_CQ_ARM_NEXT, 1);
	mark = neqlog;
	dcqe(b.cqn, 0);
	eq_drain(&eq1);
	e = neqlog > mark ? &eqlog[mark % EQLOG] : NULL;
	tap(e && FIELD_GET(KITE_EQE_TYPE, e->type_owner) == KITE_EQE_COMPLETION &&
	    (e->obj & BIT(31)) && e->obj != b.cqn,
	    "eqe-obj: COMPLETION names object 0x%x", e ? e->obj : 0);

	/* Commands. */
	fz_arm("cmd-cookie", 1);
	mark = neqlog;
	nop(&r);
	tap(r.done && (r.status & 0xff) == KITE_CMD_OK && !eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie),
	    "cmd-cookie: the command completes, its CMD_DONE carries another cookie");
	fz_arm("cmd-status", 1);
	mark = neqlog;
	nop(&r);
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(r.done && (r.status & 0xff) >= KITE_CMD_E_NEVER && e && e->data == r.status,
	    "cmd-status: undefined status 0x%02x in the entry and the event", r.status & 0xff);
	fz_arm("cmd-result", 1);
	nop(&r);
	tap(r.done && r.result == 0 && fz_count() == 1,
	    "cmd-result: a command without result is not corrupted");
	alloc_pd(0, &r);
	tap(r.done && (r.status & 0xff) == KITE_CMD_OK && (r.result & BIT(31)),
	    "cmd-result: ALLOC_PD returns 0x%x", r.result);

	/* Registers. */
	fz_arm("reg-status", 1);
	st = reg(KITE_REG_STATUS);
	tap(!(st & KITE_STATUS_READY) && (st & BIT(31)), "reg-status: STATUS reads 0x%x", st);
	st = reg(KITE_REG_STATUS);
	tap(st & KITE_STATUS_READY, "reg-status: the next read is clean (0x%x)", st);
	fz_arm("reg-version", 1);
	rev = reg(KITE_REG_HW_REV);
	tap(FIELD_GET(KITE_HW_REV_MAJOR, rev) != KITE_HW_REV_MAJOR_SUPPORTED,
	    "reg-version: HW_REV reads 0x%x", rev);
	rev = reg(KITE_REG_HW_REV);
	tap(FIELD_GET(KITE_HW_REV_MAJOR, rev) == KITE_HW_REV_MAJOR_SUPPORTED,
	    "reg-version: the next read is clean (0x%x)", rev);

	/* Reproducible: the same seed gives the same value. */
	qom_set("fault-seed", "42", NULL);
	fz_arm("cqe-qpn", 1);
	dcqe(a.cqn, 0);
	tap(qom_get("fault-injected", v, sizeof(v)) && strstr(v, "cqe-qpn=3"),
	    "fault-injected counts by class (%.80s)", v);
	c = fz_cqe(&a, idx + 1, &valid);
	qpn2 = c.qpn;
	tap(valid && qpn2 == qpn1, "fault-seed 42 again: the same corrupted QPN (0x%x, 0x%x)",
	    qpn1, qpn2);

	/* A random mix on two big CQs; then the model still works. */
	mkcq(&a, 9, eq1.eqn, 0, 0, 0);
	mkcq(&b, 9, eq1.eqn, 0, 0, 0);
	arm_cq(&a, 0, KITE_CQ_ARM_NEXT, 0);
	arm_cq(&b, 0, KITE_CQ_ARM_NEXT, 0);
	qom_set("fault-seed", "7", NULL);
	fz_arm("all", 200);
	for (i = 0; i < 300; i++) {
		dcqe(i & 1 ? a.cqn : b.cqn, i & 4 ? DBG_ERROR : 0);
		nop(&r);
		reg(KITE_REG_STATUS);
		reg(KITE_REG_HW_REV);
		eq_drain(&eq1);
	}
	n = (unsigned)fz_count();
	fz_off();
	tap(n < 200, "mix: %u of 200 corruptions made", 200 - n);
	nop(&r);
	expect(&r, KITE_CMD_OK, 0, "after the mix: NOP completes cleanly");
	alloc_pd(0, &r);
	expect(&r, KITE_CMD_OK, 0, "after the mix: ALLOC_PD returns PDN %u", r.result);
	st = reg(KITE_REG_STATUS);
	tap((st & KITE_STATUS_READY) && !(st & KITE_STATUS_FATAL), "after the mix: STATUS 0x%x", st);
}

/* ------------------------------------------------------------------ */
/* Group: robustness                                                   */
/* ------------------------------------------------------------------ */

static const uint8_t opcodes[] = {
	KITE_CMD_NOP, KITE_CMD_QUERY_DEVICE, KITE_CMD_QUERY_PORT, KITE_CMD_QUERY_STATS,
	KITE_CMD_ALLOC_UCTX, KITE_CMD_DEALLOC_UCTX, KITE_CMD_ALLOC_PD, KITE_CMD_DEALLOC_PD,
	KITE_CMD_CREATE_EQ, KITE_CMD_DESTROY_EQ, KITE_CMD_CREATE_CQ, KITE_CMD_QUERY_CQ,
	KITE_CMD_MODIFY_CQ, KITE_CMD_DESTROY_CQ, KITE_CMD_CREATE_QP, KITE_CMD_MODIFY_QP,
	KITE_CMD_QUERY_QP, KITE_CMD_DESTROY_QP, KITE_CMD_REG_MR, KITE_CMD_ALLOC_MR,
	KITE_CMD_DEREG_MR, KITE_CMD_ADD_GID, KITE_CMD_DEL_GID, KITE_CMD_CREATE_SRQ,
	KITE_CMD_MODIFY_SRQ, KITE_CMD_QUERY_SRQ, KITE_CMD_DESTROY_SRQ, KITE_CMD_ALLOC_CNTR,
	KITE_CMD_DEALLOC_CNTR, KITE_CMD_QUERY_CNTR, KITE_CMD_SET_QP_CNTR,
	KITE_CMD_ALLOC_MW, KITE_CMD_DEALLOC_MW,
};

static uint64_t junk_pages;	/* 16 pages of plausible-but-random PTEs */
static uint64_t junk_data;	/* 8 MiB the random PTEs point into */
static uint64_t scratch;	/* 64 KiB output target */

static void fill_junk(void)
{
	static uint64_t pg[512];
	unsigned p, i;

	for (p = 0; p < 16; p++) {
		for (i = 0; i < 512; i++) {
			uint64_t v = rnd();

			if (rndn(2))
				v = ((junk_pages + rndn(16) * 4096ULL) | (v & 7));
			else if (rndn(2))
				v = (junk_data + (v % (8ULL << 20))) | (v & 7);
			pg[i] = v;
		}
		memwrite(junk_pages + p * 4096ULL, pg, sizeof(pg));
	}
}

static struct kite_pbl junk_pbl(void)
{
	struct kite_pbl p;

	p.addr = rndn(8) ? junk_pages + rndn(16) * 4096ULL : rnd();
	if (!rndn(8))
		p.addr += rndn(4096);
	p.npages = rndn(4) ? 1 + rndn(64) : (uint32_t)rnd();
	p.cfg = rndn(8) ? pbl_cfg(rndn(3), 12 + rndn(10)) : (uint32_t)rnd();
	return p;
}

static void random_entry(struct kite_cmd *c)
{
	uint32_t *w = (uint32_t *)c->payload;
	unsigned i;

	memset(c, 0, sizeof(*c));
	c->opcode = rndn(10) < 8 ? opcodes[rndn(ARRAY_SIZE(opcodes))] : (uint32_t)rnd();
	for (i = 0; i < KITE_CMD_PAYLOAD_SIZE / 4; i++) {
		uint32_t v = (uint32_t)rnd();

		w[i] = rndn(3) ? v % 8 : v;
	}
	switch (c->opcode) {
	case KITE_CMD_CREATE_EQ:
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_create_eq, pbl)) = junk_pbl();
		w[0] = 6 + rndn(3) + (rndn(4) ? 0 : (uint32_t)rnd());
		break;
	case KITE_CMD_CREATE_CQ:
	case KITE_CMD_MODIFY_CQ:
		*(struct kite_pbl *)(c->payload + 24) = junk_pbl();
		if (c->opcode == KITE_CMD_CREATE_CQ)
			*(uint64_t *)(c->payload + 16) = rndn(4) ? scratch + 8 * rndn(64) : rnd();
		break;
	case KITE_CMD_CREATE_QP:
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_create_qp, sq_pbl)) = junk_pbl();
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_create_qp, rq_pbl)) = junk_pbl();
		break;
	case KITE_CMD_REG_MR:
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_reg_mr, pbl)) = junk_pbl();
		break;
	}
	c->in_len = (uint16_t)(rndn(4) ? rndn(KITE_CMD_PAYLOAD_SIZE + 1) : rnd());
	c->out_len = (uint16_t)(rndn(2) ? rndn(KITE_CMD_PAYLOAD_SIZE + 1) : rnd());
	c->out_addr = rndn(3) ? 0 : (rndn(8) ? scratch : rnd());
	if (c->out_addr && c->out_addr != scratch && rndn(2))
		c->out_addr = scratch + rndn(4096);
	if (!rndn(16))
		c->rsvd0 = (uint32_t)rnd();
}

void g_robust(void)
{
	struct res r;
	struct kite_cmd c;
	unsigned i, j, batch, okc = 0, errc = 0, crt = 0, notdone = 0;
	uint32_t ci0;
	const char *seed = getenv("KITE_SEED");

	rng_state = seed ? strtoull(seed, NULL, 0) : 0x4b495445f00dULL;
	if (!rng_state)
		rng_state = 1;
	diag("seed 0x%" PRIx64, rng_state);
	std_setup();
	junk_pages = galloc(16 * 4096, 4096);
	junk_data = galloc(8ULL << 20, 2ULL << 20);
	scratch = galloc(0x20000, 4096);
	fill_junk();
	eq0.on = false;	/* random commands may destroy or refill EQ0 */

	/* Command flood, up to a ring-full per doorbell. */
	for (i = 0; i < 2500; i += batch) {
		uint32_t first = cmdq.pi;

		batch = 1 + rndn(64);
		for (j = 0; j < batch; j++) {
			random_entry(&c);
			cmd_post(&c);
		}
		wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
		if (!wait_ci(cmdq.pi, POLL_MAX * 4))
			fatal("command flood: channel stuck at CI %u (PI %u, STATUS 0x%x)",
			      reg(RDMA(KITE_RDMA_CMDQ_CI)), cmdq.pi, reg(RDMA(KITE_RDMA_CMDQ_STATUS)));
		for (j = first; j != cmdq.pi; j++) {
			struct kite_cmd e;

			memread(slot_addr(j) + offsetof(struct kite_cmd, status), &e.status, 4);
			if (!(e.status & KITE_CMD_STATUS_DONE)) {
				if (notdone < 3) {
					struct kite_cmd full;

					memread(slot_addr(j), &full, sizeof(full));
					diag("entry %u (batch %u..%u) not DONE: opcode 0x%x in_len %u out_len %u out_addr 0x%" PRIx64 " status 0x%x",
					     j, first, cmdq.pi, full.opcode, full.in_len, full.out_len, full.out_addr, full.status);
				}
				notdone++;
			}
			else if (e.status & 0xff)
				errc++;
			else
				okc++;
		}
		if (!rndn(8))
			fill_junk();
	}
	tap(notdone == 0, "%u random command entries all completed (%u OK, %u failed, %u not DONE)",
	    okc + errc + notdone, okc, errc, notdone);
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after the command flood");

	/* Random PBLs behind real creates. */
	okc = errc = 0;
	for (i = 0; i < 300; i++) {
		struct kite_pbl p = junk_pbl();
		unsigned lg = 6 + rndn(4);
		int code;

		if (!rndn(4))
			fill_junk();
		if (rndn(2)) {
			/* Well-formed queue PBL of 16 << lg bytes, one entry corrupted sometimes. */
			uint32_t np, k;
			uint64_t pte[8];

			lg = 8 + rndn(4);
			np = (16u << lg) / 4096;

			for (k = 0; k < np; k++)
				pte[k] = (junk_data + 4096ULL * rndn(2048)) | KITE_PTE_VALID |
					 (k == np - 1 ? KITE_PTE_LAST : 0) |
					 (np >= 2 && k == np - 2 ? KITE_PTE_NEXT_TO_LAST : 0);
			if (rndn(2))
				pte[rndn(np)] ^= 1ULL << rndn(64);
			p.addr = junk_pages + 4096ULL * rndn(16);
			memwrite(p.addr, pte, 8 * np);
			p.npages = np;
			p.cfg = pbl_cfg(1, 12);
			code = create_eq_pbl(lg, 5, false, &p, &r);
			crt = KITE_CMD_DESTROY_EQ;
			if (code == KITE_CMD_OK) {
				okc++;
				cmd_obj(crt, r.result, 0, &r);
			} else {
				errc++;
			}
			continue;
		}
		switch (rndn(4)) {
		case 0:
			code = create_eq_pbl(lg, 5, false, &p, &r);
			crt = KITE_CMD_DESTROY_EQ;
			break;
		case 1:
			code = create_cq_full(1 + rndn(8), 1 + rndn(3), 0, 0, 0, 0, scratch, &p, &r);
			crt = KITE_CMD_DESTROY_CQ;
			break;
		case 2:
			code = reg_mr(1 + rndn(3), KITE_ACCESS_LOCAL_WRITE, 0, 0, rnd(), 1 + rndn(1 << 20), &p, &r);
			crt = KITE_CMD_DEREG_MR;
			break;
		default: {
			struct kite_cmd_modify_cq m = { .cqn = 1 + rndn(4), .mask = KITE_MODIFY_CQ_RESIZE,
							.cfg = 1 + rndn(8), .pbl = p };

			code = run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
			crt = 0;
		}
		}
		if (code == KITE_CMD_OK) {
			okc++;
			if (crt)
				cmd_obj(crt, r.result, 0, &r);
		} else {
			errc++;
		}
	}
	tap(1, "300 creates with random PBL contents completed (%u OK, %u refused)", okc, errc);
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after random PBLs");

	/* Doorbell flood. */
	for (i = 0; i < 3000; i++) {
		unsigned page = rndn(4) ? rndn(3) : rndn(KITE_DB_PAGES);
		uint64_t v = rnd();

		if (rndn(4))
			v = FIELD_PREP(KITE_DB_OBJ, rndn(8)) | FIELD_PREP(KITE_DB_TYPE, rndn(6)) | (v & GENMASK_ULL(63, 32));
		switch (rndn(10)) {
		case 0:
			wr32(db_addr(page) + 4 * rndn(1024), (uint32_t)v);
			break;
		case 1:
			rd64(db_addr(page));
			break;
		default:
			wr64(db_addr(page) + (rndn(10) ? 0 : 8 * rndn(512)), v);
		}
		if (!(i % 500))
			clock_step(POLL_STEP_NS);
	}
	clock_step(POLL_STEP_NS * 10);
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after 3000 random doorbells");

	/* Device DMA into its own BARs. */
	ci0 = reg(RDMA(KITE_RDMA_CMDQ_CI));
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_QUERY_STATS;
	c.out_len = 8 * KITE_STAT_COUNT;
	c.out_addr = db_addr(0);
	cmd_post(&c);
	c.opcode = KITE_CMD_QUERY_DEVICE;
	c.out_len = sizeof(struct kite_cmd_query_device_out);
	c.out_addr = BAR0_ADDR + KITE_RDMA_REGS_OFFSET;
	cmd_post(&c);
	c.opcode = KITE_CMD_QUERY_DEVICE;
	c.out_addr = BAR0_ADDR + KITE_RDMA_REGS_OFFSET + KITE_RDMA_CMDQ_PI - 16;
	cmd_post(&c);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	for (i = 0; i < 50; i++)
		clock_step(POLL_STEP_NS);
	diag("after DMA into BARs: CI %u (was %u), STATUS 0x%x, CFG 0x%x", reg(RDMA(KITE_RDMA_CMDQ_CI)),
	     ci0, reg(RDMA(KITE_RDMA_CMDQ_STATUS)), reg(RDMA(KITE_RDMA_CMDQ_CFG)));
	tap(reg(KITE_REG_ID) == KITE_ID_MAGIC, "QEMU alive after command output DMA into the device's own BARs");
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 0);
	if (!cmdq_enable(6))
		fatal("command queue does not re-enable");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel works after disable/re-enable");
	tap(reg(KITE_REG_ID) == KITE_ID_MAGIC && (reg(KITE_REG_STATUS) & KITE_STATUS_READY),
	    "device registers sane at the end");
}

/* ------------------------------------------------------------------ */
/* Group: stateful fuzzing (mostly valid commands, consistency at end) */
/* ------------------------------------------------------------------ */

#define FZ_MAX 4096

struct fzset {
	uint32_t v[FZ_MAX];
	unsigned n;
};

static void fz_add(struct fzset *f, uint32_t v)
{
	if (f->n < FZ_MAX)
		f->v[f->n++] = v;
}

static void fz_del(struct fzset *f, uint32_t v)
{
	unsigned i;

	for (i = 0; i < f->n; i++)
		if (f->v[i] == v) {
			f->v[i] = f->v[--f->n];
			return;
		}
}

static uint32_t fz_pick(const struct fzset *f, uint32_t dflt)
{
	if (!f->n || !rndn(16))
		return rndn(4) ? dflt : (uint32_t)rndn(2000);
	return f->v[rndn(f->n)];
}

void g_fuzz(void)
{
	static struct fzset pds, eqs, cqs, qps_, mrs, ucs, mws;
	struct res r;
	struct qbuf shared_cq, shared_wq, mrbuf;
	uint64_t dbrec;
	const char *seed = getenv("KITE_SEED");
	unsigned i, bad = 0, steps = 3000, have_dbg;
	uint32_t cqlog = 4;
	int c;

	memset(&pds, 0, sizeof(pds));
	memset(&eqs, 0, sizeof(eqs));
	memset(&cqs, 0, sizeof(cqs));
	memset(&qps_, 0, sizeof(qps_));
	memset(&mrs, 0, sizeof(mrs));
	memset(&ucs, 0, sizeof(ucs));
	memset(&mws, 0, sizeof(mws));
	rng_state = seed ? strtoull(seed, NULL, 0) * 7919 + 3 : 0x5eed5eedULL;
	diag("seed 0x%" PRIx64, rng_state);
	fixture();
	have_dbg = qom_set("debug-cqe", "0", NULL);
	fz_add(&eqs, eq1.eqn);
	fz_add(&pds, fx_pd);
	fz_add(&cqs, fx_cq.cqn);
	shared_cq = qbuf_for(64 << cqlog);
	shared_wq = qbuf_for(64 << 6);
	mrbuf = mkbuf(1, 12, 4, false);
	dbrec = galloc(4096, 4096);

	for (i = 0; i < steps; i++) {
		unsigned op = rndn(22);
		uint32_t x;

		switch (op) {
		case 0:
			c = alloc_pd(rndn(3) ? 0 : fz_pick(&ucs, 0), &r);
			if (c == KITE_CMD_OK)
				fz_add(&pds, r.result);
			break;
		case 1:
			x = fz_pick(&pds, 1);
			if (cmd_obj(KITE_CMD_DEALLOC_PD, x, 0, &r) == KITE_CMD_OK)
				fz_del(&pds, x);
			break;
		case 2: {
			struct eqs q;

			c = create_eq(&q, 6, 1 + rndn(8), false, &r);
			if (c == KITE_CMD_OK)
				fz_add(&eqs, r.result);
			break;
		}
		case 3:
			x = fz_pick(&eqs, 1);
			if (x && cmd_obj(KITE_CMD_DESTROY_EQ, x, 0, &r) == KITE_CMD_OK)
				fz_del(&eqs, x);
			break;
		case 4:
			c = create_cq_full(cqlog, fz_pick(&eqs, 1), 0, rndn(4) ? 0 : fz_pick(&ucs, 0),
					   (uint16_t)rndn(3), (uint16_t)(rndn(3) * 10), dbrec + 8 * rndn(512),
					   &shared_cq.pbl, &r);
			if (c == KITE_CMD_OK)
				fz_add(&cqs, r.result);
			break;
		case 5:
			x = fz_pick(&cqs, 1);
			if (cmd_obj(KITE_CMD_DESTROY_CQ, x, 0, &r) == KITE_CMD_OK)
				fz_del(&cqs, x);
			break;
		case 6: case 7: {
			struct qpspec q = qps(1 + rndn(3), fz_pick(&pds, 1), fz_pick(&cqs, 1), rndn(4) ? 0 : fz_pick(&ucs, 0));
			struct kite_cmd_create_qp in;

			q.rcqn = fz_pick(&cqs, 1);
			in = qp_in(&q);
			in.sq_pbl = shared_wq.pbl;
			in.rq_pbl = shared_wq.pbl;
			if (run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r) == KITE_CMD_OK)
				fz_add(&qps_, r.result);
			break;
		}
		case 8:
			x = fz_pick(&qps_, 2);
			if (cmd_obj(KITE_CMD_DESTROY_QP, x, 0, &r) == KITE_CMD_OK)
				fz_del(&qps_, x);
			break;
		case 9: case 10: case 11: {
			struct kite_cmd_modify_qp a = attrs_valid(fz_pick(&qps_, 2));
			uint32_t mask = (uint32_t)rnd() & GENMASK(16, 2);

			if (rndn(2))
				mask &= (uint32_t)rnd();
			if (rndn(8))
				mask |= KITE_QP_ATTR_STATE;
			if (!rndn(8))
				a.sgid_index = (uint8_t)rndn(3);
			modify_qp(&a, mask, (uint8_t)rndn(7), &r);
			break;
		}
		case 12:
			c = reg_mr(fz_pick(&pds, 1), KITE_ACCESS_LOCAL_WRITE | (uint32_t)rndn(16), (uint32_t)rndn(256),
				   rndn(4) ? 0 : fz_pick(&ucs, 0), rnd() & 0xffff, 1 + rndn(4 * 4096), &mrbuf.pbl, &r);
			if (c == KITE_CMD_OK)
				fz_add(&mrs, r.result);
			break;
		case 13:
			c = alloc_mr(fz_pick(&pds, 1), 1 + rndn(512), (uint32_t)rndn(256), &r);
			if (c == KITE_CMD_OK)
				fz_add(&mrs, r.result);
			break;
		case 14:
			x = fz_pick(&mrs, 0x100);
			if (!rndn(8))
				x ^= 1;
			if (cmd_obj(KITE_CMD_DEREG_MR, x, 0, &r) == KITE_CMD_OK)
				fz_del(&mrs, x);
			break;
		case 15:
			if (rndn(2)) {
				if (run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r) == KITE_CMD_OK)
					fz_add(&ucs, r.result);
			} else {
				x = fz_pick(&ucs, 1);
				if (cmd_obj(KITE_CMD_DEALLOC_UCTX, x, 0, &r) == KITE_CMD_OK)
					fz_del(&ucs, x);
			}
			break;
		case 16: {
			struct kite_cmd_modify_cq m;
			struct qbuf nb = shared_cq;

			memset(&m, 0, sizeof(m));
			m.cqn = fz_pick(&cqs, 1);
			m.mask = (uint32_t)rndn(8);
			m.eqn = fz_pick(&eqs, 1);
			m.mod_count = (uint16_t)rndn(4);
			m.mod_period = (uint16_t)(rndn(3) * 20);
			m.cfg = cqlog;
			m.pbl = nb.pbl;
			run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
			break;
		}
		case 17:
			if (have_dbg) {
				char v[32];

				snprintf(v, sizeof(v), "%u", fz_pick(&cqs, 1) | (uint32_t)(rndn(4) << 24));
				qom_set("debug-cqe", v, NULL);
			}
			break;
		case 19:
			c = alloc_mw(fz_pick(&pds, 1), rndn(8) ? 1 + rndn(2) : (uint32_t)rndn(4),
				     (uint32_t)rndn(rndn(8) ? 256 : 512),
				     rndn(4) ? 0 : fz_pick(&ucs, 0), &r);
			if (c == KITE_CMD_OK)
				fz_add(&mws, r.result);
			break;
		case 20:
			/* A window's key, or an MR's (which DEALLOC_MW refuses). */
			x = rndn(4) ? fz_pick(&mws, 0x100) : fz_pick(&mrs, 0x100);
			if (!rndn(8))
				x ^= 1;
			if (cmd_obj(KITE_CMD_DEALLOC_MW, x, 0, &r) == KITE_CMD_OK)
				fz_del(&mws, x);
			break;
		case 18: {
			uint32_t cqn = fz_pick(&cqs, 1);
			unsigned cmd = 1 + rndn(2), sn = rndn(4);

			setmem32(dbrec + 8 * rndn(512) + 4, (uint32_t)(FIELD_PREP(KITE_CQ_DB_ARM_CMD, cmd) |
				 FIELD_PREP(KITE_CQ_DB_ARM_CMD_SN, sn) | rndn(64)));
			setmem32(dbrec + 8 * rndn(512), (uint32_t)rndn(1 << 24));
			wr64(db_addr(rndn(4) ? 0 : rndn(3)), db_cq_arm(cqn, cmd, sn));
			break;
		}
		default:
			wr64(db_addr(rndn(4) ? 0 : fz_pick(&ucs, 1) & 0xff),
			     db_wq(1 + rndn(2), fz_pick(&qps_, 2), rndn(100)));
			if (!rndn(4))
				eq_doorbell(&eq1, rndn(2));
			clock_step(rndn(50000));
			eq_drain(&eq1);
			break;
		}
	}
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "%u random mostly-valid operations: channel alive", steps);

	/* Every live object answers and tears down in dependency order. */
	for (i = 0; i < qps_.n; i++)
		if (qp_state(qps_.v[i]) < 0) {
			bad++;
			diag("QP %u does not answer QUERY_QP", qps_.v[i]);
		}
	for (i = 0; i < qps_.n; i++)
		if (cmd_obj(KITE_CMD_DESTROY_QP, qps_.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DESTROY_QP %u: status 0x%x", qps_.v[i], r.status);
		}
	for (i = 0; i < mws.n; i++)
		if (cmd_obj(KITE_CMD_DEALLOC_MW, mws.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEALLOC_MW 0x%x: status 0x%x", mws.v[i], r.status);
		}
	for (i = 0; i < mrs.n; i++)
		if (cmd_obj(KITE_CMD_DEREG_MR, mrs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEREG_MR 0x%x: status 0x%x", mrs.v[i], r.status);
		}
	for (i = 0; i < cqs.n; i++) {
		struct kite_cmd_query_cq_out o;

		if (query_cq(cqs.v[i], &o, &r) != KITE_CMD_OK ||
		    cmd_obj(KITE_CMD_DESTROY_CQ, cqs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("CQ %u: status 0x%x", cqs.v[i], r.status);
		}
	}
	for (i = 0; i < pds.n; i++)
		if (cmd_obj(KITE_CMD_DEALLOC_PD, pds.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEALLOC_PD %u: status 0x%x", pds.v[i], r.status);
		}
	for (i = 0; i < eqs.n; i++)
		if (cmd_obj(KITE_CMD_DESTROY_EQ, eqs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DESTROY_EQ %u: status 0x%x", eqs.v[i], r.status);
		}
	for (i = 0; i < ucs.n; i++)
		if (cmd_obj(KITE_CMD_DEALLOC_UCTX, ucs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEALLOC_UCTX %u: status 0x%x", ucs.v[i], r.status);
		}
	tap(bad == 0, "all live objects (%u QP, %u MW, %u MR, %u CQ, %u PD, %u EQ, %u uctx) destroy cleanly in order",
	    qps_.n, mws.n, mrs.n, cqs.n, pds.n, eqs.n, ucs.n);
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 1, "afterwards the tables are empty: new PD gets PDN 1 (%u)", r.result);
}
