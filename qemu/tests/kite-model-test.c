/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host-side test of the Kite device model's RDMA control plane.
 *
 * Spawns qemu-system-x86_64 with the qtest accelerator (no guest runs) and
 * plays the driver through QEMU's qtest text protocol: PCI configuration
 * space, BAR0 registers, BAR2 doorbells, guest memory and the virtual clock.
 * A QMP connection sets the model's fault injection properties. Every layout
 * comes from include/linux/kite/kite_hw.h (via kite_test_shim.h); every
 * behaviour checked is the one the hardware semantics specify.
 *
 * Each test group runs against a fresh QEMU. Output is TAP; the exit status
 * is non-zero if any test failed. Groups: cmdq, eq0, query, uctx_pd, eq, cq,
 * cq_arm, cq_events, link, qp_create, qp_modify, mr, gid, doorbell, limits,
 * fault, devfuzz, reset, robust, fuzz, engine_tx, engine, engine_rx, engine_wire,
 * rc, rc_err, rc_wire, rc_pipe, rc_loss, uc, uc_wire, srq, srq_engine,
 * srq_random, xrc, xrc_wire, mcast, mcast_engine (a wire group), mcast_random,
 * cntr, mw, rereg, trace.
 * Tests that need CQEs use the model's optional "debug-cqe" QOM property
 * (CQN | flags, flags from hw/net/kite_int.h) and are skipped when it is
 * absent.
 *
 * The engine groups drive the data engine (UD, GSI) with real WQEs. The
 * wire groups give QEMU a "-netdev dgram" whose other end is a UDP socket
 * of the test: engine_tx reads the frames the device sends and checks every
 * header and the ICRC (computed by the test's own CRC-32), and the send-side
 * validation errors; engine_wire injects frames. engine and engine_rx use
 * the device's internal loopback (destination MAC = the port's MAC): the
 * receive path, GRH, CQEs and events, drops and receive errors.
 *
 * trace runs QEMU with -trace enable=kite_* and checks that the model's
 * trace events (qemu/hw/net/trace-events-kite) reach the log.
 *
 * The test is one program in several files: kite-model-test-common.c (with
 * kite-model-test-common.h) has the qtest and QMP plumbing, TAP, guest
 * memory, the command queue and the set-up the groups share; each
 * kite-model-test-<subsystem>.c has the groups of one subsystem; this file
 * has the list of groups and main(). kite-model-test.sh builds and runs it.
 *
 * usage: kite-model-test QEMU_BINARY [GROUP...]
 * env:   KITE_SEED (robustness PRNG seed), KITE_QEMU_STDERR_LOG (append every
 *        QEMU's stderr to this file), KITE_TEST_VERBOSE=1 (show stderr),
 *        KITE_QEMU_TRACE=PATTERN (every QEMU runs with -trace enable=PATTERN,
 *        e.g. 'kite_*'), KITE_QEMU_GUEST_LOG (append every QEMU's -D log,
 *        guest errors and trace events, to this file)
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Main                                                                */
/* ------------------------------------------------------------------ */

static const struct group {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{ "cmdq", g_cmdq },
	{ "eq0", g_eq0 },
	{ "query", g_query },
	{ "uctx_pd", g_uctx_pd },
	{ "eq", g_eq },
	{ "cq", g_cq },
	{ "cq_arm", g_cq_arm },
	{ "cq_events", g_cq_events },
	{ "eq_mod", g_eq_mod },
	{ "link", g_link },
	{ "qp_create", g_qp_create },
	{ "qp_modify", g_qp_modify },
	{ "mr", g_mr },
	{ "gid", g_gid },
	{ "doorbell", g_doorbell },
	{ "limits", g_limits },
	{ "fault", g_fault },
	{ "devfuzz", g_devfuzz },
	{ "reset", g_reset },
	{ "robust", g_robust },
	{ "fuzz", g_fuzz },
	{ "engine_tx", g_engine_tx },
	{ "engine", g_engine },
	{ "engine_rx", g_engine_rx },
	{ "rq_dbrec", g_rq_dbrec },
	{ "engine_wire", g_engine_wire },
	{ "rc", g_rc },
	{ "rc_err", g_rc_err },
	{ "rc_wire", g_rc_wire },
	{ "rc_pipe", g_rc_pipe },
	{ "rc_loss", g_rc_loss },
	{ "uc", g_uc },
	{ "uc_wire", g_uc_wire },
	{ "srq", g_srq },
	{ "srq_engine", g_srq_engine },
	{ "srq_random", g_srq_random },
	{ "xrc", g_xrc },
	{ "xrc_wire", g_xrc_wire },
	{ "mcast", g_mcast },
	{ "mcast_engine", g_mcast_engine },
	{ "mcast_random", g_mcast_random },
	{ "cntr", g_cntr },
	{ "mw", g_mw },
	{ "rereg", g_rereg },
	{ "trace", g_trace },
};

static void run_group(const struct group *g)
{
	bool clean;

	cur_group = g->name;
	printf("# group %s\n", g->name);
	fflush(stdout);
	memset(&cmdq, 0, sizeof(cmdq));
	memset(&eq0, 0, sizeof(eq0));
	memset(&eq1, 0, sizeof(eq1));
	stats_buf = 0;
	trace_pattern = g->fn == g_trace ? "kite_*" : NULL;
	/* Wire groups give QEMU a dgram netdev whose other end is wire_fd. */
	if ((g->fn == g_engine_tx || g->fn == g_engine_wire || g->fn == g_rc_wire ||
	     g->fn == g_rc_pipe || g->fn == g_rc_loss || g->fn == g_uc_wire ||
	     g->fn == g_xrc_wire || g->fn == g_mcast_engine) &&
	    !wire_open())
		tap(false, "wire socket: %s", strerror(errno));
	if (setjmp(abort_jmp) == 0) {
		alarm(GROUP_TIMEOUT_S);
		qemu_start();
		dev_init();
		g->fn();
	} else {
		tap(false, "group aborted: %s", abort_msg);
	}
	alarm(0);
	clean = qemu_stop();
	tap(clean, "QEMU exited cleanly (no crash, no sanitizer report)");
	if (wire_fd >= 0)
		close(wire_fd);
	wire_fd = -1;
	wire_qemu_port = wire_test_port = 0;
}

int main(int argc, char **argv)
{
	unsigned i;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: %s QEMU_BINARY [GROUP...]\n", argv[0]);
		return 2;
	}
	qemu_bin = argv[1];
	if (access(qemu_bin, X_OK)) {
		printf("Bail out! no QEMU binary at %s\n", qemu_bin);
		return 1;
	}
	ib = malloc(IBSZ);
	if (!ib)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, alarm_handler);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		bool want = argc == 2;

		for (a = 2; a < argc; a++)
			want |= !strcmp(argv[a], groups[i].name);
		if (want)
			run_group(&groups[i]);
	}
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}
