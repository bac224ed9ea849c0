/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test: what kite-model-test-*.c share. The common
 * plumbing and set-up are in kite-model-test-common.c, the groups in one
 * file per subsystem, the group list and main() in kite-model-test.c.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef KITE_MODEL_TEST_COMMON_H
#define KITE_MODEL_TEST_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kite_test_shim.h"

/* ------------------------------------------------------------------ */
/* Test machine layout                                                 */
/* ------------------------------------------------------------------ */

#define BAR0_ADDR	0xe0000000ULL
#define BAR4_ADDR	0xe0500000ULL	/* device memory, naturally aligned */

#define NOT_RAM		0x8000000000ULL	/* 512 GiB: nothing there */

#define RESET_NS	2000000		/* default reset-delay-us */

#define EQ0_VEC		1
#define EQ1_VEC		2
#define EQ2_VEC		3

#define GROUP_TIMEOUT_S	240
#define POLL_MAX	300		/* bounded waits: iterations */
#define POLL_STEP_NS	20000		/* virtual time per iteration */

#define RDMA(r)		(KITE_RDMA_REGS_OFFSET + (r))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* TAP                                                                 */
/* ------------------------------------------------------------------ */

void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

bool tap(bool pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ------------------------------------------------------------------ */
/* QEMU process and the qtest protocol                                 */
/* ------------------------------------------------------------------ */

#define IBSZ (1 << 20)

/* ------------------------------------------------------------------ */
/* PBLs and queue buffers                                              */
/* ------------------------------------------------------------------ */

struct qbuf {
	struct kite_pbl pbl;
	uint64_t data;		/* first data page; pages are contiguous */
	uint64_t ptes;		/* level 1/2: PTE page(s), contiguous */
	uint64_t pdes;		/* level 2: PDE page */
};

/* ------------------------------------------------------------------ */
/* Command queue                                                       */
/* ------------------------------------------------------------------ */

struct cmdq_state {
	uint64_t base;
	unsigned log;
	uint32_t pi;
	bool on;
};

struct res {
	uint32_t status, result, cookie;
	uint8_t out[KITE_CMD_PAYLOAD_SIZE];
	bool done;
};

/* EQ state the test tracks (EQ0 is drained after every command). */
struct eqs {
	bool on;
	uint32_t eqn;
	unsigned log;
	uint64_t buf;
	uint32_t ci;		/* software consumer count */
	bool autodb;		/* ring the EQ doorbell after draining */
};

#define EQLOG 8192

/* Check a completion: code, and syndrome unless syn < 0. */
bool expect(const struct res *r, unsigned code, int syn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Either of two codes (where the semantics leave the choice open). */
bool expect2(const struct res *r, unsigned c1, unsigned c2, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------------ */
/* Command builders                                                    */
/* ------------------------------------------------------------------ */

struct cq {
	uint32_t cqn;
	unsigned log, cqe_size;
	uint64_t dbrec;
	struct qbuf b;
};

struct qpspec {
	uint32_t type, flags, pdn, scqn, rcqn, uctx;
	unsigned slog, sshift, rlog, rshift;
};

/* ------------------------------------------------------------------ */
/* Checks that count                                                   */
/* ------------------------------------------------------------------ */

#define CHK(cond, ...) do { if (!(cond)) { bad++; diag(__VA_ARGS__); } } while (0)

/* ------------------------------------------------------------------ */
/* CQEs of the model's debug-cqe property                              */
/* ------------------------------------------------------------------ */

#define DBG_ERROR	BIT(25)

/* ------------------------------------------------------------------ */
/* Data engine: CQs, QPs, WQEs, the engine fixture, the wire           */
/* ------------------------------------------------------------------ */

struct tcq {
	struct cq c;
	uint32_t ci;
};

struct tqp {
	uint32_t qpn, type;
	struct qbuf sq, rq;
	unsigned slog, sshift, rlog, rshift;
	uint32_t spi, rpi;
	uint64_t rq_dbrec;	/* KITE_QP_F_RQ_DBREC: post_recv writes it */
};

#define T_QKEY		0x11111111u	/* attrs_valid() */

/* The engine fixture: PDs, CQs, a data MR with a page list, QPs. */
#define T_IOVA		0x700000000100ULL	/* not page aligned */
#define T_MR_PAGES	16
#define T_MR_LEN	(T_MR_PAGES * 4096ULL - 0x100)

struct eng_fixture {
	uint32_t pd2, lkey, lkey_ro, lkey2, lkey_phys;
	uint64_t ro_iova;
	struct qbuf mr;			/* data pages of lkey */
	struct tcq scq, rcq;
	struct tqp gsi, b, c;
};

/* ------------------------------------------------------------------ */
/* RC transport: QP pairs, WQEs, memory                                */
/* ------------------------------------------------------------------ */

#define T_RC_PSN	0xfffffeu	/* both directions: PSNs wrap at once */

struct rc_fixture {
	uint32_t rkey, rkey_nw;		/* all remote access; no REMOTE_WRITE or FLUSH */
};

struct rcpair {
	struct tcq scq, rcq;
	struct tqp a, b;
};

#define SRC	(T_IOVA + 0)
#define DST	(T_IOVA + 16 * 1024)
#define RBUF	(T_IOVA + 32 * 1024)

/* The wire: QP A talks to the test's socket (QPN 0x77 at the peer MAC). */
#define W_PEER_QPN	0x77

/* ------------------------------------------------------------------ */
/* The wire log: RC packets the device sent                            */
/* ------------------------------------------------------------------ */

#define W_NONE	0xffffffffu

/* A RoCEv2 frame QEMU sent (IPv4, no VLAN: the BTH is at offset 42). */
struct wpkt {
	uint8_t op;
	uint32_t dqpn, psn;
	bool ackreq, dropped;
	uint8_t aeth;			/* ACKs and READ responses but MIDDLE */
	size_t len;
	uint8_t fr[1200];
};

#define WR	(KITE_WQE_OP_RDMA_WRITE)
#define SIG	(KITE_WQE_F_SIGNALED)
/* FLUSH FETHs: global visibility, of a range or of the whole MR. */
#define FETH_GLOBAL_RANGE	(KITE_FLUSH_PLT_GLOBAL | \
				 FIELD_PREP(KITE_FLUSH_SEL, KITE_FLUSH_SEL_RANGE))
#define FETH_GLOBAL_MR		(KITE_FLUSH_PLT_GLOBAL | \
				 FIELD_PREP(KITE_FLUSH_SEL, KITE_FLUSH_SEL_MR))

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */
/* ------------------------------------------------------------------ */

struct tsrq {
	uint32_t srqn;
	struct qbuf q;
	unsigned log, shift;
	uint32_t pi;
};

/* ------------------------------------------------------------------ */
/* UC QP pairs                                                         */
/* ------------------------------------------------------------------ */

#define UC_INIT_MASK	0x0001du	/* STATE, ACCESS, PKEY_INDEX, PORT */
#define UC_RTR_MASK	0x108c1u	/* STATE, AV, PATH_MTU, RQ_PSN, DEST_QPN */
#define UC_RTS_MASK	0x04001u	/* STATE, SQ_PSN */

/* ------------------------------------------------------------------ */
/* kite-model-test-common.c                                            */
/* ------------------------------------------------------------------ */

/* Test machine layout */
extern const uint8_t MAC[6];

/* TAP */
extern int tap_n, tap_failed;
extern const char *cur_group;
extern jmp_buf abort_jmp;
extern char abort_msg[512];

/* QEMU process and the qtest protocol */
extern const char *qemu_bin;
extern char qt_path[128], qmp_path[128], err_path[128], log_path[128];
extern char *ib;
extern const char *trace_pattern;
extern unsigned wire_qemu_port, wire_test_port;
extern int wire_fd;
void alarm_handler(int sig);
uint32_t rd32(uint64_t a);
uint64_t rd64(uint64_t a);
void wr32(uint64_t a, uint32_t v);
void wr64(uint64_t a, uint64_t v);
uint32_t reg(uint32_t off);
void wreg(uint32_t off, uint32_t v);
void clock_step(uint64_t ns);
void memwrite(uint64_t addr, const void *buf, size_t len);
void memread(uint64_t addr, void *buf, size_t len);
void memzero(uint64_t addr, uint64_t len);
void setmem32(uint64_t addr, uint32_t v);
void cfg_wr16(unsigned off, uint16_t v);
bool qmp(const char *json, const char **reply);
void qmp_connect(void);
bool qom_get(const char *prop, char *out, size_t len);
bool qom_set(const char *prop, const char *value, const char **reply);
void qemu_start(void);
bool qemu_stop(void);

/* Guest RAM allocator */
uint64_t galloc(uint64_t size, uint64_t align);

/* Device bring-up, MSI-X */
extern bool have_bar2;
void dev_init(void);
bool msi_take(unsigned v);

/* PBLs and queue buffers */
uint32_t pbl_cfg(unsigned level, unsigned shift);
struct qbuf mkbuf(unsigned level, unsigned shift, uint32_t npages, bool queue);
struct qbuf qbuf_for(uint64_t bytes);
uint64_t pte_get(const struct qbuf *b, uint32_t i);
void pte_set(const struct qbuf *b, uint32_t i, uint64_t v);

/* Command queue */
extern struct cmdq_state cmdq;
extern struct eqs eq0;
extern struct kite_eqe eqlog[EQLOG];
extern unsigned neqlog;
uint64_t db_addr(unsigned page);
uint64_t db_eq(uint32_t eqn, uint32_t ci, bool arm);
void eq_doorbell(struct eqs *q, bool arm);
unsigned eq_drain(struct eqs *q);
const struct kite_eqe *eqe_find(unsigned since, uint32_t type, uint32_t obj);
bool cmdq_enable(unsigned log);
bool wait_ci(uint32_t target, int max);
uint64_t slot_addr(uint32_t idx);
uint32_t cmd_post(struct kite_cmd *c);
void cmd_collect(uint32_t idx, uint32_t cookie, struct res *r);
int run(uint32_t op, const void *in, size_t in_len, size_t out_len,
	uint64_t out_addr, struct res *r);
const char *code_name(unsigned c);
void res_diag(const struct res *r);
uint32_t need(int code, const struct res *r, const char *what);

/* Command builders */
int cmd_obj(uint32_t op, uint32_t obj, uint32_t uctx, struct res *r);
int nop(struct res *r);
extern uint64_t stats_buf;
void stats(uint64_t *st);
uint64_t stat1(unsigned idx);
int create_eq_pbl(unsigned log, unsigned vec, bool ctrl,
		  const struct kite_pbl *pbl, struct res *r);
int create_eq(struct eqs *q, unsigned log, unsigned vec, bool ctrl, struct res *r);
void std_setup(void);
int create_cq_full(unsigned log, uint32_t eqn, uint32_t cfg_extra, uint32_t uctx,
		   uint16_t mcount, uint16_t mperiod, uint64_t dbrec,
		   const struct kite_pbl *pbl, struct res *r);
int create_cq(struct cq *q, unsigned log, uint32_t eqn, uint32_t uctx, struct res *r);
int query_cq(uint32_t cqn, struct kite_cmd_query_cq_out *o, struct res *r);
int alloc_pd(uint32_t uctx, struct res *r);
int add_gid(uint32_t index, uint32_t type, struct res *r);
struct kite_cmd_create_qp qp_in(const struct qpspec *s);
int create_qp(const struct qpspec *s, struct res *r);
struct qpspec qps(uint32_t type, uint32_t pdn, uint32_t cqn, uint32_t uctx);
struct kite_cmd_modify_qp attrs_valid(uint32_t qpn);
int modify_qp(const struct kite_cmd_modify_qp *a, uint32_t mask, uint8_t state,
	      struct res *r);
int query_qp(uint32_t qpn, struct kite_cmd_modify_qp *o, struct res *r);
int qp_state(uint32_t qpn);
int reg_mr(uint32_t pdn, uint32_t access, uint32_t flags, uint32_t uctx,
	   uint64_t iova, uint64_t length, const struct kite_pbl *pbl, struct res *r);
int rereg_mr(uint32_t key, uint32_t flags, uint32_t pdn, uint32_t access,
	     uint64_t iova, uint64_t length, const struct kite_pbl *pbl, struct res *r);
int alloc_mr(uint32_t pdn, uint32_t max_pages, uint32_t flags, struct res *r);
int alloc_mw(uint32_t pdn, uint32_t type, uint32_t flags, uint32_t uctx, struct res *r);
extern struct eqs eq1;
extern uint32_t fx_pd;
extern struct cq fx_cq;
void fixture(void);

/* QP states */
const char *st_name(unsigned s);

/* Doorbells */
uint64_t db_wq(uint32_t type, uint32_t qpn, uint32_t pi);
uint64_t db_cq_arm(uint32_t cqn, unsigned cmd, unsigned sn);
void dbrec_arm(const struct cq *q, uint32_t arm_ci, unsigned cmd, unsigned sn);
extern uint64_t bad_db0;
void bad_db_check(uint64_t expect_delta, const char *what);

/* CQ arming */
unsigned eq1_count(uint32_t type, uint32_t obj);

/* CQEs of the model's debug-cqe property */
void dcqe(uint32_t cqn, uint32_t flags);
void arm_cq(struct cq *q, uint32_t arm_ci, unsigned cmd, unsigned sn);
int mkcq(struct cq *q, unsigned log, uint32_t eqn, uint32_t cfg, uint16_t mc, uint16_t mp);
struct kite_cqe cqe_at(const struct cq *q, uint64_t base, uint32_t idx);

/* Random numbers */
extern uint64_t rng_state;
uint64_t rnd(void);
uint32_t rndn(uint32_t n);

/* Data engine: CQs, QPs, WQEs, the engine fixture, the wire */
uint32_t t_crc32(uint32_t crc, const uint8_t *p, size_t len);
uint32_t t_icrc(const uint8_t *l3, size_t len, bool v6);
uint16_t be16(const uint8_t *p);
uint32_t be24(const uint8_t *p);
uint32_t be32(const uint8_t *p);
void put16(uint8_t *p, uint16_t v);
void put32(uint8_t *p, uint32_t v);
uint16_t t_csum(uint32_t sum, const uint8_t *p, size_t len);
void tcq_make(struct tcq *q, unsigned log);
bool tcq_next(struct tcq *q, struct kite_cqe *out);
unsigned tcq_drain(struct tcq *q);
int tqp_create(struct tqp *q, uint32_t type, uint32_t pdn, uint32_t scqn,
	       uint32_t rcqn, uint32_t flags, struct res *r);
int tqp_create_dbrec(struct tqp *q, uint32_t type, uint32_t pdn,
		     uint32_t scqn, uint32_t rcqn, uint64_t dbrec,
		     struct res *r);
void tqp_rts(struct tqp *q);
int tqp_to(struct tqp *q, uint8_t state);
struct kite_wqe_sge sge(uint32_t len, uint32_t lkey, uint64_t addr);
void post_recv_raw(struct tqp *q, uint32_t num_sge, const struct kite_wqe_sge *g,
		   unsigned n);
void post_recv(struct tqp *q, const struct kite_wqe_sge *g, unsigned n);
uint16_t post_send(struct tqp *q, uint32_t opw, uint32_t imm_be,
		   const struct kite_wqe_ud *av, const struct kite_wqe_sge *g,
		   unsigned n, const void *inl, unsigned ilen, bool ring);
struct kite_wqe_ud av4(uint32_t rqpn, uint32_t qkey, const uint8_t *dmac);
struct kite_wqe_ud av6(uint32_t rqpn, uint32_t qkey, const uint8_t *dmac);
extern struct eng_fixture E;
uint64_t t_bus(uint64_t iova);
void eng_setup(void);
void fill_pattern(uint64_t iova, uint32_t len, uint8_t seed, uint8_t *copy);
bool cqe_is(const struct kite_cqe *c, unsigned op, uint32_t qpn, unsigned synd);
void cqe_diag(const char *what, const struct kite_cqe *c);
void send_fails(struct tqp *q, const char *what, uint32_t opw,
		const struct kite_wqe_ud *av, const struct kite_wqe_sge *g, unsigned n,
		unsigned synd, uint8_t err_state);
bool wire_open(void);
ssize_t wire_recv(uint8_t *buf, size_t len);
void wire_send(const uint8_t *buf, size_t len);
void wire_settle(void);

/* RC transport: QP pairs, WQEs, memory */
extern struct rc_fixture R;
void rc_keys(void);
void rc_rts_rd(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t timeout,
	       uint8_t retry, uint8_t rnr_retry, uint8_t rd);
void rc_rts(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t timeout,
	    uint8_t retry, uint8_t rnr_retry);
void rc_pair(struct rcpair *p, const uint8_t *dmac, uint8_t timeout, uint8_t retry,
	     uint8_t rnr_retry);
uint16_t write_rc(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t va, uint32_t rkey,
		  uint64_t swap, uint64_t cmp, const struct kite_wqe_sge *g, unsigned n);
void ring_sq(struct tqp *q);
uint16_t write_awrite(struct tqp *q, uint32_t opw, uint64_t va, uint32_t rkey,
		      uint64_t val, bool inl, unsigned ilen, bool ring);
uint16_t write_flush(struct tqp *q, uint32_t opw, uint64_t va, uint32_t rkey, uint32_t len,
		     uint32_t feth, uint64_t rsvd, bool ring);
uint16_t post_rc(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t va, uint32_t rkey,
		 uint64_t swap, uint64_t cmp, const struct kite_wqe_sge *g, unsigned n);
void run_for(uint64_t ns);
bool mem_eq(uint64_t iova, const uint8_t *want, uint32_t len);
uint64_t mem64(uint64_t iova);
void set64(uint64_t iova, uint64_t v);
bool req_ok(struct tcq *q, uint32_t qpn, uint16_t idx, unsigned op, uint32_t len);
uint16_t post_reg_mr(struct tqp *q, uint64_t iova, uint64_t len, uint32_t key,
		     uint32_t access, uint64_t pbl, uint32_t npages);
void rc_wire_qp(struct tqp *q, struct tcq *scq, struct tcq *rcq, const uint8_t *peer);
size_t w_frame(uint8_t *f, uint8_t opcode, uint32_t dqpn, uint32_t psn, bool ackreq,
	       const uint8_t *ext, size_t ext_len, const uint8_t *pl, size_t len);
bool w_roce(const uint8_t *f, ssize_t n);
ssize_t w_next(uint8_t *f, size_t len);

/* The wire log: RC packets the device sent */
extern struct wpkt wlog[64];
struct wpkt *wlog_add(unsigned n, const uint8_t *f, ssize_t len);
unsigned w_collect(bool relay, uint32_t drop_qpn, uint32_t drop_psn);
void wlog_diag(unsigned n);
bool wlog_is(unsigned from, unsigned got, uint32_t psn, const uint8_t (*want)[3], unsigned n);
void w_ack(uint32_t qpn, uint32_t psn, uint8_t synd);
void w_resp(uint32_t qpn, uint8_t op, uint32_t psn, const uint8_t *pl, size_t len);
bool req_err(struct tcq *q, uint32_t qpn, uint16_t idx, unsigned synd);

/* QOM counters */
uint64_t qom_count(const char *prop, const char *key);

/* Shared receive queues */
int srq_create_in(struct kite_cmd_create_srq *in, size_t len, struct res *r);
struct kite_cmd_create_srq srq_in(struct tsrq *q, uint32_t pdn, unsigned log,
				  unsigned shift, uint32_t limit);
int srq_create(struct tsrq *q, uint32_t pdn, unsigned log, unsigned shift,
	       uint32_t limit, struct res *r);
uint64_t db_srq(uint32_t srqn, uint32_t pi);
void srq_post_raw(struct tsrq *q, uint16_t tag, uint32_t num_sge, uint32_t rsvd,
		  const struct kite_wqe_sge *g, unsigned n, bool ring);
void srq_post(struct tsrq *q, uint16_t tag, const struct kite_wqe_sge *g, unsigned n);
int srq_query(uint32_t srqn, struct kite_cmd_query_srq_out *o, struct res *r);
int tqp_create_srq(struct tqp *q, uint32_t type, uint32_t pdn, uint32_t scqn,
		   uint32_t rcqn, uint32_t srqn, struct res *r);

/* UC QP pairs */
void uc_rts(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t mtu);
void uc_pair(struct rcpair *p, uint8_t mtu);

/* ------------------------------------------------------------------ */
/* The groups: kite-model-test-*.c                                     */
/* ------------------------------------------------------------------ */

/* kite-model-test-cmdq.c */
void g_cmdq(void);
void g_eq0(void);
void g_query(void);
void g_uctx_pd(void);
void g_gid(void);
void g_doorbell(void);
void g_link(void);
void g_limits(void);
void g_trace(void);

/* kite-model-test-eq-cq.c */
void g_eq(void);
void g_cq(void);
void g_cq_arm(void);
void g_cq_events(void);
void g_eq_mod(void);

/* kite-model-test-qp.c */
void g_qp_create(void);
void g_qp_modify(void);
void g_cntr(void);

/* kite-model-test-mr.c */
void g_mr(void);
void g_mw(void);
void g_rereg(void);

/* kite-model-test-fault.c */
void g_fault(void);
void g_reset(void);
void g_rc_loss(void);

/* kite-model-test-fuzz.c */
void g_devfuzz(void);
void g_robust(void);
void g_fuzz(void);

/* kite-model-test-ud.c */
void g_engine(void);
void g_engine_rx(void);
void g_rq_dbrec(void);
void g_engine_tx(void);
void g_engine_wire(void);

/* kite-model-test-rc.c */
void g_rc(void);
void g_rc_err(void);
void g_rc_wire(void);
void g_rc_pipe(void);
void g_uc(void);
void g_uc_wire(void);
void g_xrc(void);
void g_xrc_wire(void);

/* kite-model-test-srq.c */
void g_srq(void);
void g_srq_engine(void);
void g_srq_random(void);

/* kite-model-test-mcast.c */
void g_mcast(void);
void g_mcast_engine(void);
void g_mcast_random(void);

#endif /* KITE_MODEL_TEST_COMMON_H */
