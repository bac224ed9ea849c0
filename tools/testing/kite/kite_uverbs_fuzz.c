// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_uverbs_fuzz: a seeded, bounded fuzzer of kite_ib's uverbs interface.
 *
 * Drives /dev/infiniband/uverbsN directly, the way syzkaller does: the
 * legacy write() ABI (struct ib_uverbs_cmd_hdr, and ib_uverbs_ex_cmd_hdr
 * for the extended commands) and the ioctl ABI (RDMA_VERBS_IOCTL), so that
 * the core's command and the driver data (include/uapi/rdma/kite-abi.h)
 * can have any size and content. Random sequences of create, modify, query
 * and destroy of PDs, MRs (of user memory, device memory and udmabuf
 * dma-bufs), memory windows, CQs, QPs (RC, UC, UD, GSI, XRC initiators
 * and targets, raw and other types), AHs, XRC domains and XRC SRQs (and
 * SRQs of other types), over a table of the handles that are alive, so that
 * sequences mean something (create, then use real handles; sometimes
 * wrong ones); driver data that is valid, valid with one field mutated,
 * truncated, extended or random; random attribute masks and values; random
 * mmap() offsets and lengths; random doorbell writes on the context's own
 * doorbell page; commands on user objects that only kernel objects
 * support (post_send, poll_cq, ...).
 *
 * --threads 2: a second thread shares the context: it works on the first
 * thread's objects (query, modify, poll, resize) and, now and then, both
 * destroy the same object at the same moment: exactly one must succeed.
 * --fork-exit N: N child processes (two at a time) fuzz contexts of their
 * own and exit, or are killed, with their objects alive.
 *
 * The run is bounded by --calls and --seconds, whichever comes first; the
 * same seed gives the same sequence in a single-threaded run. Defaults
 * come from the environment too (KITE_FUZZ_SEED, KITE_FUZZ_CALLS,
 * KITE_FUZZ_SECONDS, KITE_FUZZ_THREADS, KITE_FUZZ_FORK_EXIT), so that a
 * test lane can choose them.
 *
 * Output: per command, calls, successes and the errnos seen; then one line
 *   kite_uverbs_fuzz: seed S calls N objects M seconds T calls/s R
 *   inconsistencies 0
 * Exit status: 0, or 1 if the fuzzer saw an inconsistency (a destroy of a
 * live object without users failing, one with users succeeding, a destroy
 * of a dead handle succeeding, both or neither of two racing destroys
 * succeeding, an object left that cannot be destroyed at the end), 2 for
 * bad usage or no device.
 *
 * Copyright (c) 2026 Kite
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/udmabuf.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/kite-abi.h>

#define ARENA_SIZE	(8u << 20)	/* rings and MRs live here */
#define PAGE		4096u
#define MAX_OBJS	128		/* per type, per context */
#define MAX_ERRNO	140
#define MAX_MAPS	8
/* An operation's result when it had nothing to work on: no call made. */
#define SKIP		(-1000)

#define BIT(n)		(1u << (n))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define fallthrough	__attribute__((__fallthrough__))

/* Kernel values the uapi headers do not name (enum ib_qp_attr_mask, ...). */
#define IB_QP_STATE			BIT(0)
#define IB_QP_ACCESS_FLAGS		BIT(3)
#define IB_QP_PKEY_INDEX		BIT(4)
#define IB_QP_PORT			BIT(5)
#define IB_QP_QKEY			BIT(6)
#define IB_QP_AV			BIT(7)
#define IB_QP_PATH_MTU			BIT(8)
#define IB_QP_TIMEOUT			BIT(9)
#define IB_QP_RETRY_CNT			BIT(10)
#define IB_QP_RNR_RETRY			BIT(11)
#define IB_QP_RQ_PSN			BIT(12)
#define IB_QP_MAX_QP_RD_ATOMIC		BIT(13)
#define IB_QP_MIN_RNR_TIMER		BIT(15)
#define IB_QP_SQ_PSN			BIT(16)
#define IB_QP_MAX_DEST_RD_ATOMIC	BIT(17)
#define IB_QP_DEST_QPN			BIT(20)
enum {
	IB_QPS_RESET, IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS, IB_QPS_SQD,
	IB_QPS_SQE, IB_QPS_ERR
};

#define IB_CQ_MODERATE			BIT(0)
#define IB_MR_REREG_PD			BIT(1)

/* ---- statistics, shared by threads and child processes --------------- */

enum op {
	OP_QUERY_DEVICE, OP_QUERY_DEVICE_EX, OP_QUERY_PORT, OP_GET_CONTEXT,
	OP_ALLOC_PD, OP_DEALLOC_PD,
	OP_REG_MR, OP_REREG_MR, OP_DEREG_MR,
	OP_COMP_CHANNEL, OP_CREATE_CQ, OP_CREATE_CQ_EX, OP_RESIZE_CQ,
	OP_MODIFY_CQ, OP_POLL_CQ, OP_REQ_NOTIFY_CQ, OP_DESTROY_CQ,
	OP_CREATE_QP, OP_CREATE_QP_EX, OP_MODIFY_QP, OP_MODIFY_QP_EX,
	OP_QUERY_QP, OP_DESTROY_QP, OP_POST_SEND, OP_POST_RECV,
	OP_CREATE_AH, OP_DESTROY_AH, OP_ALLOC_MW, OP_DEALLOC_MW,
	OP_MCAST, OP_SRQ, OP_UNSUPPORTED, OP_RAW_WRITE, OP_IOCTL,
	OP_IOCTL_QUERY, OP_MMAP, OP_DOORBELL, OP_EVENTS, OP_RACE_DESTROY,
	OP_DM, OP_DMABUF, OP_OPEN_XRCD, OP_CLOSE_XRCD, OP_CREATE_XSRQ,
	OP_DESTROY_SRQ, OP_COUNT
};

static const char *const op_name[OP_COUNT] = {
	"query_device", "query_device_ex", "query_port", "get_context",
	"alloc_pd", "dealloc_pd",
	"reg_mr", "rereg_mr", "dereg_mr",
	"create_comp_channel", "create_cq", "create_cq_ex", "resize_cq",
	"modify_cq_ex", "poll_cq", "req_notify_cq", "destroy_cq",
	"create_qp", "create_qp_ex", "modify_qp", "modify_qp_ex",
	"query_qp", "destroy_qp", "post_send", "post_recv",
	"create_ah", "destroy_ah", "alloc_mw", "dealloc_mw",
	"attach/detach_mcast", "srq", "other_unsupported", "raw_write",
	"ioctl_random", "ioctl_query", "mmap", "doorbell", "read_events", "race_destroy",
	"device_memory", "reg_dmabuf_mr", "open_xrcd", "close_xrcd",
	"create_xsrq", "destroy_srq",
};

/* How often each operation is drawn (single-threaded mix). */
static const unsigned int op_weight[OP_COUNT] = {
	[OP_QUERY_DEVICE] = 2, [OP_QUERY_DEVICE_EX] = 2, [OP_QUERY_PORT] = 2,
	[OP_GET_CONTEXT] = 1,
	[OP_ALLOC_PD] = 6, [OP_DEALLOC_PD] = 4,
	[OP_REG_MR] = 6, [OP_REREG_MR] = 1, [OP_DEREG_MR] = 4,
	[OP_COMP_CHANNEL] = 1, [OP_CREATE_CQ] = 8, [OP_CREATE_CQ_EX] = 4,
	[OP_RESIZE_CQ] = 4, [OP_MODIFY_CQ] = 3, [OP_POLL_CQ] = 3,
	[OP_REQ_NOTIFY_CQ] = 3, [OP_DESTROY_CQ] = 5,
	[OP_CREATE_QP] = 10, [OP_CREATE_QP_EX] = 4, [OP_MODIFY_QP] = 14,
	[OP_MODIFY_QP_EX] = 3, [OP_QUERY_QP] = 4, [OP_DESTROY_QP] = 6,
	[OP_POST_SEND] = 3, [OP_POST_RECV] = 3,
	[OP_CREATE_AH] = 5, [OP_DESTROY_AH] = 3,
	[OP_ALLOC_MW] = 3, [OP_DEALLOC_MW] = 2,
	[OP_MCAST] = 3, [OP_SRQ] = 1, [OP_UNSUPPORTED] = 1, [OP_RAW_WRITE] = 2,
	[OP_IOCTL] = 2, [OP_IOCTL_QUERY] = 2, [OP_MMAP] = 3, [OP_DOORBELL] = 6,
	[OP_EVENTS] = 2,
	[OP_RACE_DESTROY] = 0,	/* drawn by the threaded mix only */
	[OP_DM] = 3, [OP_DMABUF] = 2,
	[OP_OPEN_XRCD] = 2, [OP_CLOSE_XRCD] = 1, [OP_CREATE_XSRQ] = 3,
	[OP_DESTROY_SRQ] = 1,
};

struct stats {
	uint64_t calls;		/* every system call made */
	uint64_t objects;	/* objects created */
	uint64_t inconsistencies;
	uint64_t done;		/* set when the budget is used up */
	uint64_t op_calls[OP_COUNT];
	uint64_t op_ok[OP_COUNT];
	uint32_t op_errno[OP_COUNT][MAX_ERRNO];
};

static struct stats *st;
static bool done_local;		/* this process used its share */
static uint64_t max_calls = 5000;	/* this process */
static uint64_t total_calls = 5000;	/* all processes */
static double max_seconds = 60;
static uint64_t seed = 1;
static int nthreads = 1;
static int fork_exit;
static struct timespec t0;
static int verbose;

static double elapsed(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
}

/* Take one call from the budget; false when it is used up. */
static bool budget(void)
{
	uint64_t n;

	if (__atomic_load_n(&done_local, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&st->done, __ATOMIC_RELAXED))
		return false;
	n = __atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED);
	if (n > total_calls || elapsed() > max_seconds)
		__atomic_store_n(&st->done, 1, __ATOMIC_RELAXED);
	if (n > max_calls || st->done) {
		__atomic_store_n(&done_local, true, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

static void account(enum op op, int err)
{
	__atomic_add_fetch(&st->op_calls[op], 1, __ATOMIC_RELAXED);
	if (!err)
		__atomic_add_fetch(&st->op_ok[op], 1, __ATOMIC_RELAXED);
	else if (err < 0 && -err < MAX_ERRNO)
		__atomic_add_fetch(&st->op_errno[op][-err], 1, __ATOMIC_RELAXED);
}

static void inconsistent(const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&st->inconsistencies, 1, __ATOMIC_RELAXED);
	printf("INCONSISTENCY: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ---- random numbers ----------------------------------------------------- */

struct rng {
	uint64_t s;
};

static uint64_t rnd64(struct rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd64(r) % n) : 0;
}

static bool chance(struct rng *r, uint32_t one_in)
{
	return rnd(r, one_in) == 0;
}

static void rnd_fill(struct rng *r, void *p, size_t len)
{
	uint8_t *b = p;

	while (len--)
		*b++ = (uint8_t)rnd64(r);
}

/* A value a field is likely to be checked against. */
static uint64_t interesting(struct rng *r, uint64_t cur)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255,
		256, 1023, 1024, 4095, 4096, 65535, 65536, 0x7fffffff,
		0x80000000, 0xffffffff, 0x100000000ULL, ~0ULL,
	};

	switch (rnd(r, 5)) {
	case 0:
		return cur + 1;
	case 1:
		return cur - 1;
	case 2:
		return cur ^ (1ULL << rnd(r, 64));
	case 3:
		return rnd64(r);
	default:
		return v[rnd(r, ARRAY_SIZE(v))];
	}
}

/* ---- the context ---------------------------------------------------------- */

/* T_SRQ: the SRQs of CREATE_XSRQ (those of op_srq() are not kept). */
enum otype { T_PD, T_MR, T_CQ, T_QP, T_AH, T_MW, T_XRCD, T_SRQ, T_COUNT };

static const char *const otype_name[T_COUNT] = {
	"PD", "MR", "CQ", "QP", "AH", "MW", "XRCD", "SRQ",
};

/* An object's pd, scq, rcq or xrcd when it uses none: no handle is. */
#define NO_HANDLE	UINT32_MAX

/* Multicast attachments tracked per QP (the core refuses its destroy). */
#define FZ_MCAST	4

struct obj {
	uint32_t handle;
	uint32_t num;		/* CQN, QPN, lkey */
	uint32_t pd;		/* MR, QP, AH, MW, SRQ: index in the PD table is */
	uint32_t scq, rcq;	/* not kept: handles; users counted below; */
	uint32_t xrcd;		/* SRQ: scq its CQ; XRC target QP, SRQ: xrcd */
	uint8_t qp_type;
	uint8_t state;		/* the QP state we believe in */
	/* QP: the rings (log2 depth, log2 stride) and producer counters */
	uint64_t sq_addr, rq_addr;
	uint8_t sq_log, sq_shift, rq_log, rq_shift;
	uint32_t sq_pi, rq_pi;
	/* PD: MRs, QPs, AHs, MWs, SRQs; CQ: QPs, SRQs; QP: groups; XRCD:
	 * SRQs, target QPs
	 */
	int users;
	bool racing;		/* being destroyed by the race */
	/* QP: the multicast groups it is attached to (GID and LID) */
	uint8_t mc_gid[FZ_MCAST][16];
	uint16_t mc_lid[FZ_MCAST];
	uint8_t nmc;
};

struct ctx {
	int fd;
	int async_fd;		/* the context's async events, non-blocking */
	int chan_fd;		/* a completion channel, non-blocking */
	uint64_t db_off;
	uint32_t db_size;
	uint64_t *db;		/* the doorbell page, mapped */
	uint8_t *arena;
	uint8_t *ro_page;	/* mapped read-only */
	pthread_mutex_t lock;	/* the tables and maps[], in threaded runs */
	struct obj objs[T_COUNT][MAX_OBJS];
	int nobjs[T_COUNT];
	void *maps[MAX_MAPS];
	size_t map_len[MAX_MAPS];
	int nmaps;
	uint32_t max_handle;	/* highest handle seen */
	uint8_t av[KITE_IB_AV_SIZE];	/* the last AH's address vector */
	bool have_av;
	bool owner_checks;	/* the handle table is exact */
};

static char dev_name[64] = "kite0";
static char dev_path[300];

/* /dev/infiniband/uverbsN of the device named dev_name. */
static int find_uverbs(void)
{
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *e;
	char p[512], name[64];
	int found = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/%s/ibdev",
			 e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = 0;
			if (!strcmp(name, dev_name)) {
				snprintf(dev_path, sizeof(dev_path),
					 "/dev/infiniband/%s", e->d_name);
				found = 1;
			}
		}
		fclose(f);
	}
	closedir(d);
	return found ? 0 : -1;
}

/* ---- the write() ABI ------------------------------------------------------ */

/* Where a response goes: the buffer, or a bad address now and then. */
static void *resp_ptr(struct rng *r, struct ctx *c, void *good)
{
	if (!chance(r, 24))
		return good;
	switch (rnd(r, 4)) {
	case 0:
		return NULL;
	case 1:
		return c->ro_page;
	case 2:
		return (void *)(uintptr_t)0xffff888000000000ULL;
	default:
		return (void *)(uintptr_t)0x1000;
	}
}

/*
 * One legacy command: header, the core's request @core (@core_len bytes,
 * its first 8 bytes the response address if @has_resp), the driver data
 * @drv; the response (core and driver) is @out_len bytes at @resp.
 * Returns 0 or the errno.
 */
static int cmd_write(struct ctx *c, uint32_t command, void *core,
		     size_t core_len, bool has_resp, const void *drv,
		     size_t drv_len, void *resp, size_t out_len)
{
	alignas(8) uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	size_t len = sizeof(*hdr) + core_len + drv_len;

	if (len > sizeof(buf))
		return -E2BIG;
	if (has_resp)
		memcpy(core, &(uint64_t){ (uintptr_t)resp }, sizeof(uint64_t));
	hdr->command = command;
	hdr->in_words = len / 4;
	hdr->out_words = out_len / 4;
	memcpy(buf + sizeof(*hdr), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(*hdr) + core_len, drv, drv_len);
	return write(c->fd, buf, len) == (ssize_t)len ? 0 : -errno;
}

/* An extended command: lengths in 8-byte words. */
static int cmd_write_ex(struct ctx *c, uint32_t command, const void *core,
			size_t core_len, const void *drv, size_t drv_len,
			void *resp, size_t resp_len, size_t drv_out_len)
{
	alignas(8) uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	struct ib_uverbs_ex_cmd_hdr *ex = (void *)(hdr + 1);
	size_t len = sizeof(*hdr) + sizeof(*ex) + core_len + drv_len;

	if (len > sizeof(buf))
		return -E2BIG;
	hdr->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command;
	hdr->in_words = core_len / 8;
	hdr->out_words = resp_len / 8;
	ex->response = (uintptr_t)resp;
	ex->provider_in_words = drv_len / 8;
	ex->provider_out_words = drv_out_len / 8;
	ex->cmd_hdr_reserved = 0;
	memcpy(ex + 1, core, core_len);
	if (drv_len)
		memcpy((uint8_t *)(ex + 1) + core_len, drv, drv_len);
	return write(c->fd, buf, len) == (ssize_t)len ? 0 : -errno;
}

/*
 * The driver data of a request: @valid (@vlen bytes) as it is, with one
 * field changed, cut short, extended, or replaced by random bytes.
 * Lengths are multiples of @unit. Returns the length written to @out.
 */
static size_t mutate(struct rng *r, uint8_t *out, size_t cap,
		     const void *valid, size_t vlen, size_t unit)
{
	size_t len, off;
	uint64_t v;

	memcpy(out, valid, vlen);
	switch (rnd(r, 16)) {
	case 0 ... 7:
		return vlen;
	case 8 ... 10:
		/* One 4- or 8-byte field. */
		if (rnd(r, 2) && vlen >= 8) {
			off = rnd(r, vlen / 8) * 8;
			memcpy(&v, out + off, 8);
			v = interesting(r, v);
			memcpy(out + off, &v, 8);
		} else {
			uint32_t w;

			off = rnd(r, vlen / 4) * 4;
			memcpy(&w, out + off, 4);
			w = (uint32_t)interesting(r, w);
			memcpy(out + off, &w, 4);
		}
		return vlen;
	case 11:
		return rnd(r, vlen / unit) * unit;
	case 12:
		len = vlen + unit * (1 + rnd(r, 4));
		memset(out + vlen, 0, len - vlen);
		return len;
	case 13:
		len = vlen + unit * (1 + rnd(r, 4));
		rnd_fill(r, out + vlen, len - vlen);
		return len;
	case 14:
		len = rnd(r, cap / unit + 1) * unit;
		if (len > 96)
			len = 96;
		rnd_fill(r, out, len);
		return len;
	default:
		return 0;
	}
}

/* The response length: usually all of it, sometimes less. */
static size_t out_len(struct rng *r, size_t core, size_t full, size_t unit)
{
	if (!chance(r, 12))
		return full;
	if (rnd(r, 2))
		return core;
	return rnd(r, full / unit + 1) * unit;
}

/* ---- handle tables ---------------------------------------------------- */

static void tlock(struct ctx *c)
{
	pthread_mutex_lock(&c->lock);
}

static void tunlock(struct ctx *c)
{
	pthread_mutex_unlock(&c->lock);
}

static struct obj *find(struct ctx *c, enum otype t, uint32_t handle)
{
	int i;

	for (i = 0; i < c->nobjs[t]; i++)
		if (c->objs[t][i].handle == handle)
			return &c->objs[t][i];
	return NULL;
}

static bool handle_live(struct ctx *c, uint32_t h)
{
	int t;

	for (t = 0; t < T_COUNT; t++)
		if (find(c, t, h))
			return true;
	return false;
}

static void add_obj(struct ctx *c, enum otype t, const struct obj *o)
{
	__atomic_add_fetch(&st->objects, 1, __ATOMIC_RELAXED);
	if (o->handle > c->max_handle)
		c->max_handle = o->handle;
	if (c->nobjs[t] < MAX_OBJS)
		c->objs[t][c->nobjs[t]++] = *o;
	else
		inconsistent("%s table full", otype_name[t]);
}

/*
 * Creates of a type whose table is full are skipped (SKIP): an object
 * the table forgot would be a "dead" handle that is alive. The helper
 * thread creates nothing, so a check by thread 0 holds until its create.
 */
static bool table_full(struct ctx *c, enum otype t)
{
	return c->nobjs[t] >= MAX_OBJS;
}

static void adjust_users(struct ctx *c, enum otype t, uint32_t h, int d)
{
	struct obj *o = find(c, t, h);

	if (o)
		o->users += d;
}

static void del_obj(struct ctx *c, enum otype t, struct obj *o)
{
	if (t == T_MR || t == T_QP || t == T_AH || t == T_MW || t == T_SRQ)
		adjust_users(c, T_PD, o->pd, -1);
	if (t == T_QP || t == T_SRQ) {
		adjust_users(c, T_CQ, o->scq, -1);
		adjust_users(c, T_CQ, o->rcq, -1);
		adjust_users(c, T_XRCD, o->xrcd, -1);
	}
	*o = c->objs[t][--c->nobjs[t]];
}

/*
 * A handle to use for @t: mostly a live one (copied to @o if given),
 * sometimes a wrong one. *@real tells which.
 */
static uint32_t pick(struct rng *r, struct ctx *c, enum otype t,
		     struct obj *o, bool *real)
{
	*real = false;
	if (c->nobjs[t] && !chance(r, 12)) {
		struct obj *p = &c->objs[t][rnd(r, c->nobjs[t])];

		if (!p->racing) {
			if (o)
				*o = *p;
			*real = true;
			return p->handle;
		}
	}
	switch (rnd(r, 3)) {
	case 0:
		return rnd(r, c->max_handle + 4);
	case 1:
		return (uint32_t)rnd64(r);
	default: {
		int u = rnd(r, T_COUNT);

		return c->nobjs[u] ? c->objs[u][rnd(r, c->nobjs[u])].handle :
				     0;
	}
	}
}

/* A handle that is certainly not a live object of this context. */
static uint32_t dead_handle(struct rng *r, struct ctx *c)
{
	uint32_t h;

	do {
		h = chance(r, 2) ? rnd(r, c->max_handle + 8) :
				   (uint32_t)rnd64(r);
	} while (handle_live(c, h));
	return h;
}

/* ---- memory for rings and MRs ------------------------------------------ */

/* An address for a buffer of @len bytes: in the arena, or a bad one. */
static uint64_t buf_addr(struct rng *r, struct ctx *c, uint64_t len,
			 bool bad_ok)
{
	uint64_t pages = ARENA_SIZE / PAGE;
	uint64_t need = (len + PAGE - 1) / PAGE;

	if (bad_ok && chance(r, 16)) {
		switch (rnd(r, 6)) {
		case 0:
			return 0;
		case 1:
			return (uintptr_t)c->ro_page;
		case 2:
			return 0xffff888000000000ULL;
		case 3:
			return (uintptr_t)c->arena + rnd(r, ARENA_SIZE);
		case 4:
			return 0x1000;
		default:
			return rnd64(r);
		}
	}
	if (need >= pages)
		return (uintptr_t)c->arena;
	return (uintptr_t)c->arena + rnd(r, pages - need) * PAGE;
}

/* log2 rounded up, at least @min. */
static uint32_t log2_up(uint64_t v, uint32_t min)
{
	uint32_t l = 0;

	while ((1ULL << l) < v)
		l++;
	return l < min ? min : l;
}

/* ---- operations ------------------------------------------------------ */

static int op_query_device(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_query_device cmd = {};
	struct ib_uverbs_query_device_resp resp;
	uint8_t drv[128];
	size_t dl = chance(r, 4) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;

	return cmd_write(c, IB_USER_VERBS_CMD_QUERY_DEVICE, &cmd, sizeof(cmd),
			 true, drv, dl, resp_ptr(r, c, &resp),
			 out_len(r, sizeof(resp), sizeof(resp), 4));
}

static int op_query_device_ex(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_ex_query_device cmd = {};
	uint8_t resp[512];

	if (chance(r, 4))
		cmd.comp_mask = (uint32_t)interesting(r, 0);
	if (chance(r, 8))
		cmd.reserved = (uint32_t)interesting(r, 0);
	return cmd_write_ex(c, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, &cmd,
			    sizeof(cmd), NULL, 0, resp_ptr(r, c, resp),
			    rnd(r, sizeof(resp) / 8 + 1) * 8, 0);
}

static int op_query_port(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_query_port cmd = {};
	struct ib_uverbs_query_port_resp resp;

	cmd.port_num = chance(r, 4) ? (uint8_t)rnd64(r) : 1;
	return cmd_write(c, IB_USER_VERBS_CMD_QUERY_PORT, &cmd, sizeof(cmd),
			 true, NULL, 0, resp_ptr(r, c, &resp), sizeof(resp));
}

static int get_context(struct rng *r, struct ctx *c, bool fuzz)
{
	struct ib_uverbs_get_context cmd = {};
	struct kite_ib_alloc_ucontext_req req = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct kite_ib_alloc_ucontext_resp drv;
	} resp = {};
	uint8_t drv[128];
	size_t dl = sizeof(req);
	int err;

	memcpy(drv, &req, sizeof(req));
	if (fuzz)
		dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 4);
	err = cmd_write(c, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd),
			true, drv, dl, fuzz ? resp_ptr(r, c, &resp) : &resp,
			fuzz ? out_len(r, sizeof(resp.core), sizeof(resp), 4) :
			       sizeof(resp));
	if (!err && !fuzz) {
		c->db_off = resp.drv.db_mmap_offset;
		c->db_size = resp.drv.db_page_size;
		c->async_fd = resp.core.async_fd;
	}
	return err;
}

static int op_alloc_pd(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_alloc_pd cmd = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	uint8_t drv[128];
	size_t dl = chance(r, 6) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;
	struct obj o = {};
	void *rp = resp_ptr(r, c, &resp);
	int err;

	err = cmd_write(c, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd), true,
			drv, dl, rp, out_len(r, sizeof(resp), sizeof(resp), 4));
	if (!err && rp == &resp) {
		o.handle = resp.pd_handle;
		tlock(c);
		add_obj(c, T_PD, &o);
		tunlock(c);
	}
	return err;
}

/*
 * Destroy a live object of type @t (or a dead handle); checks the
 * outcome against what the table says.
 */
static int destroy_one(struct ctx *c, enum otype t, uint32_t h);

static int op_destroy(struct rng *r, struct ctx *c, enum otype t)
{
	struct obj *o;
	uint32_t h;
	bool live;
	int users = 0, err;

	tlock(c);
	live = c->nobjs[t] && !chance(r, 10);
	if (live) {
		o = &c->objs[t][rnd(r, c->nobjs[t])];
		if (o->racing) {
			tunlock(c);
			return SKIP;
		}
		h = o->handle;
		users = o->users;
		o->racing = true;	/* no one else destroys it meanwhile */
	} else {
		h = dead_handle(r, c);
	}
	tunlock(c);

	err = destroy_one(c, t, h);

	tlock(c);
	o = find(c, t, h);
	if (live && o)
		o->racing = false;
	if (!live && !err)
		inconsistent("destroy of dead %s handle %u succeeded",
			     otype_name[t], h);
	if (live && c->owner_checks) {
		/* The other thread may hold it for a moment: EBUSY. */
		if (!users && err && !(nthreads > 1 && err == -EBUSY))
			inconsistent("destroy of %s %u without users failed: %s",
				     otype_name[t], h, strerror(-err));
		else if (users && err != -EBUSY)
			inconsistent("destroy of %s %u with %d users: %s",
				     otype_name[t], h, users,
				     err ? strerror(-err) : "succeeded");
	}
	if (live && !err && o)
		del_obj(c, t, o);
	tunlock(c);
	return err;
}

static int destroy_one(struct ctx *c, enum otype t, uint32_t h)
{
	switch (t) {
	case T_PD: {
		struct ib_uverbs_dealloc_pd cmd = { .pd_handle = h };

		return cmd_write(c, IB_USER_VERBS_CMD_DEALLOC_PD, &cmd,
				 sizeof(cmd), false, NULL, 0, NULL, 0);
	}
	case T_MR: {
		struct ib_uverbs_dereg_mr cmd = { .mr_handle = h };

		return cmd_write(c, IB_USER_VERBS_CMD_DEREG_MR, &cmd,
				 sizeof(cmd), false, NULL, 0, NULL, 0);
	}
	case T_CQ: {
		struct ib_uverbs_destroy_cq cmd = { .cq_handle = h };
		struct ib_uverbs_destroy_cq_resp resp;

		return cmd_write(c, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd,
				 sizeof(cmd), true, NULL, 0, &resp,
				 sizeof(resp));
	}
	case T_QP: {
		struct ib_uverbs_destroy_qp cmd = { .qp_handle = h };
		struct ib_uverbs_destroy_qp_resp resp;

		return cmd_write(c, IB_USER_VERBS_CMD_DESTROY_QP, &cmd,
				 sizeof(cmd), true, NULL, 0, &resp,
				 sizeof(resp));
	}
	case T_AH: {
		struct ib_uverbs_destroy_ah cmd = { .ah_handle = h };

		return cmd_write(c, IB_USER_VERBS_CMD_DESTROY_AH, &cmd,
				 sizeof(cmd), false, NULL, 0, NULL, 0);
	}
	case T_MW: {
		struct ib_uverbs_dealloc_mw cmd = { .mw_handle = h };

		return cmd_write(c, IB_USER_VERBS_CMD_DEALLOC_MW, &cmd,
				 sizeof(cmd), false, NULL, 0, NULL, 0);
	}
	case T_XRCD: {
		struct ib_uverbs_close_xrcd cmd = { .xrcd_handle = h };

		return cmd_write(c, IB_USER_VERBS_CMD_CLOSE_XRCD, &cmd,
				 sizeof(cmd), false, NULL, 0, NULL, 0);
	}
	case T_SRQ: {
		struct ib_uverbs_destroy_srq cmd = { .srq_handle = h };
		struct ib_uverbs_destroy_srq_resp resp;

		return cmd_write(c, IB_USER_VERBS_CMD_DESTROY_SRQ, &cmd,
				 sizeof(cmd), true, NULL, 0, &resp,
				 sizeof(resp));
	}
	default:
		return -EINVAL;
	}
}

static uint32_t access_flags(struct rng *r)
{
	uint32_t a = 0;

	if (chance(r, 8))
		return (uint32_t)interesting(r, 0);
	if (rnd(r, 2))
		a |= IB_UVERBS_ACCESS_LOCAL_WRITE;
	if (rnd(r, 2))
		a |= IB_UVERBS_ACCESS_REMOTE_WRITE;
	if (rnd(r, 2))
		a |= IB_UVERBS_ACCESS_REMOTE_READ;
	if (chance(r, 4))
		a |= IB_UVERBS_ACCESS_REMOTE_ATOMIC;
	if (chance(r, 16))
		a |= IB_UVERBS_ACCESS_MW_BIND;
	if (chance(r, 16))
		a |= IB_UVERBS_ACCESS_ZERO_BASED;
	if (chance(r, 16))
		a |= IB_UVERBS_ACCESS_ON_DEMAND;
	if (chance(r, 16))
		a |= IB_UVERBS_ACCESS_RELAXED_ORDERING;
	return a;
}

static int op_reg_mr(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_reg_mr cmd = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	uint8_t drv[128];
	size_t dl = chance(r, 6) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;
	uint64_t len = chance(r, 3) ? 1 + rnd(r, 3 * PAGE) :
				      1 + rnd(r, ARENA_SIZE / 4);
	struct obj o = {};
	bool real;
	void *rp;
	int err;

	if (chance(r, 20))
		len = interesting(r, len);
	tlock(c);
	cmd.pd_handle = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	cmd.start = buf_addr(r, c, len, true);
	if (rnd(r, 2))
		cmd.start += rnd(r, PAGE);
	cmd.length = len;
	cmd.hca_va = chance(r, 4) ? rnd64(r) & ~0xfffULL : cmd.start;
	cmd.access_flags = access_flags(r);
	rp = resp_ptr(r, c, &resp);
	err = cmd_write(c, IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd), true,
			drv, dl, rp, out_len(r, sizeof(resp), sizeof(resp), 4));
	if (!err && rp == &resp) {
		o.handle = resp.mr_handle;
		o.num = resp.lkey;
		o.pd = cmd.pd_handle;
		tlock(c);
		add_obj(c, T_MR, &o);
		adjust_users(c, T_PD, o.pd, 1);
		tunlock(c);
	}
	return err;
}

static int op_rereg_mr(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_rereg_mr cmd = {};
	struct ib_uverbs_rereg_mr_resp resp;
	bool real;

	tlock(c);
	cmd.mr_handle = pick(r, c, T_MR, NULL, &real);
	cmd.pd_handle = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	/* Without the PD flag: the table's PD of the MR stays right. */
	cmd.flags = rnd(r, 8) & ~IB_MR_REREG_PD;
	cmd.start = buf_addr(r, c, PAGE, true);
	cmd.length = 1 + rnd(r, 4 * PAGE);
	cmd.hca_va = cmd.start;
	cmd.access_flags = access_flags(r);
	return cmd_write(c, IB_USER_VERBS_CMD_REREG_MR, &cmd, sizeof(cmd), true,
			 NULL, 0, &resp, sizeof(resp));
}

static int op_comp_channel(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_create_comp_channel cmd = {};
	struct ib_uverbs_create_comp_channel_resp resp = { .fd = -1 };
	void *rp = resp_ptr(r, c, &resp);
	int err;

	err = cmd_write(c, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cmd,
			sizeof(cmd), true, NULL, 0, rp, sizeof(resp));
	if (!err && rp == &resp && (int)resp.fd >= 0)
		close(resp.fd);
	return err;
}

/* A CQ's driver request, valid for @cqe CQEs. */
static void cq_req(struct rng *r, struct ctx *c, uint32_t cqe,
		   struct kite_ib_create_cq_req *req)
{
	uint32_t log = log2_up((uint64_t)cqe + 1, 1);

	if (chance(r, 4))
		log += rnd(r, 3);
	req->log_depth = log;
	req->buf_addr = buf_addr(r, c, 64ULL << (log > 16 ? 1 : log), true);
	req->dbrec_addr = buf_addr(r, c, 8, true) + 8 * rnd(r, 512);
	req->comp_mask = 0;
}

static void cq_created(struct ctx *c, uint32_t handle, uint32_t cqn)
{
	struct obj o = { .handle = handle, .num = cqn };

	tlock(c);
	add_obj(c, T_CQ, &o);
	tunlock(c);
}

static uint32_t cq_size(struct rng *r)
{
	if (chance(r, 10))
		return (uint32_t)interesting(r, 64);
	return 1 + rnd(r, chance(r, 4) ? 4096 : 64);
}

static int op_create_cq(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_create_cq cmd = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct kite_ib_create_cq_resp drv;
	} resp = {};
	struct kite_ib_create_cq_req req;
	uint8_t drv[128];
	size_t dl;
	void *rp;
	int err;

	cmd.user_handle = rnd64(r);
	cmd.cqe = cq_size(r);
	cmd.comp_vector = chance(r, 8) ? (uint32_t)interesting(r, 0) : 0;
	cmd.comp_channel = chance(r, 8) ? (int32_t)rnd64(r) : -1;
	if (c->chan_fd >= 0 && chance(r, 3))
		cmd.comp_channel = c->chan_fd;
	cq_req(r, c, cmd.cqe, &req);
	dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 4);
	rp = resp_ptr(r, c, &resp);
	err = cmd_write(c, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd), true,
			drv, dl, rp,
			out_len(r, sizeof(resp.core), sizeof(resp), 4));
	if (!err && rp == &resp)
		cq_created(c, resp.core.cq_handle, resp.drv.cqn);
	return err;
}

static int op_create_cq_ex(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_ex_create_cq cmd = {};
	struct {
		struct ib_uverbs_ex_create_cq_resp core;
		struct kite_ib_create_cq_resp drv;
	} resp = {};
	struct kite_ib_create_cq_req req;
	uint8_t drv[128];
	size_t dl, ol;
	void *rp;
	int err;

	cmd.user_handle = rnd64(r);
	cmd.cqe = cq_size(r);
	cmd.comp_channel = -1;
	if (chance(r, 3))
		cmd.flags = chance(r, 2) ? IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION :
					   (uint32_t)interesting(r, 0);
	if (chance(r, 10))
		cmd.comp_mask = (uint32_t)interesting(r, 0);
	if (chance(r, 10))
		cmd.reserved = (uint32_t)interesting(r, 0);
	cq_req(r, c, cmd.cqe, &req);
	dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 8);
	ol = chance(r, 10) ? rnd(r, 3) * 8 : sizeof(resp.drv);
	rp = resp_ptr(r, c, &resp);
	err = cmd_write_ex(c, IB_USER_VERBS_EX_CMD_CREATE_CQ, &cmd, sizeof(cmd),
			   drv, dl, rp, sizeof(resp.core), ol);
	if (!err && rp == &resp)
		cq_created(c, resp.core.base.cq_handle, resp.drv.cqn);
	return err;
}

static int op_resize_cq(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_resize_cq cmd = {};
	struct ib_uverbs_resize_cq_resp resp;
	struct kite_ib_resize_cq_req req = {};
	struct kite_ib_create_cq_req cr;
	uint8_t drv[128];
	size_t dl;
	bool real;

	tlock(c);
	cmd.cq_handle = pick(r, c, T_CQ, NULL, &real);
	tunlock(c);
	cmd.cqe = cq_size(r);
	cq_req(r, c, cmd.cqe, &cr);
	req.buf_addr = cr.buf_addr;
	req.log_depth = cr.log_depth;
	dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 4);
	return cmd_write(c, IB_USER_VERBS_CMD_RESIZE_CQ, &cmd, sizeof(cmd),
			 true, drv, dl, resp_ptr(r, c, &resp), sizeof(resp));
}

static int op_modify_cq(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_ex_modify_cq cmd = {};
	bool real;

	tlock(c);
	cmd.cq_handle = pick(r, c, T_CQ, NULL, &real);
	tunlock(c);
	cmd.attr_mask = chance(r, 4) ? (uint32_t)interesting(r, 1) :
				       IB_CQ_MODERATE;
	cmd.attr.cq_count = chance(r, 2) ? rnd(r, 64) : (uint16_t)rnd64(r);
	cmd.attr.cq_period = chance(r, 2) ? rnd(r, 64) : (uint16_t)rnd64(r);
	if (chance(r, 10))
		cmd.reserved = 1;
	return cmd_write_ex(c, IB_USER_VERBS_EX_CMD_MODIFY_CQ, &cmd,
			    sizeof(cmd), NULL, 0, NULL, 0, 0);
}

static int op_poll_cq(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_poll_cq cmd = {};
	uint8_t resp[sizeof(struct ib_uverbs_poll_cq_resp) +
		     4 * sizeof(struct ib_uverbs_wc)];
	bool real;

	tlock(c);
	cmd.cq_handle = pick(r, c, T_CQ, NULL, &real);
	tunlock(c);
	cmd.ne = rnd(r, 5);
	return cmd_write(c, IB_USER_VERBS_CMD_POLL_CQ, &cmd, sizeof(cmd), true,
			 NULL, 0, resp_ptr(r, c, resp), sizeof(resp));
}

static int op_req_notify(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_req_notify_cq cmd = {};
	bool real;

	tlock(c);
	cmd.cq_handle = pick(r, c, T_CQ, NULL, &real);
	tunlock(c);
	cmd.solicited_only = rnd(r, 2);
	return cmd_write(c, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &cmd, sizeof(cmd),
			 false, NULL, 0, NULL, 0);
}

static uint8_t qp_type(struct rng *r)
{
	static const uint8_t t[] = {
		IB_UVERBS_QPT_RC, IB_UVERBS_QPT_RC, IB_UVERBS_QPT_UD,
		IB_UVERBS_QPT_UD, IB_UVERBS_QPT_UC, 1 /* GSI */, 0 /* SMI */,
		IB_UVERBS_QPT_RAW_PACKET, IB_UVERBS_QPT_XRC_INI,
		IB_UVERBS_QPT_XRC_TGT, IB_UVERBS_QPT_DRIVER,
	};

	if (chance(r, 20))
		return (uint8_t)rnd64(r);
	/* Mostly the types kite_ib has, so that sequences go deep. */
	if (!chance(r, 5))
		return t[rnd(r, 4)];
	return t[rnd(r, sizeof(t))];
}

struct qp_args {
	struct kite_ib_create_qp_req req;	/* before mutation */
	uint32_t pd, scq, rcq, srq;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t max_inline;
	uint8_t type, sig_all, is_srq;
	bool real_pd, real_scq, real_rcq;
};

static void qp_args(struct rng *r, struct ctx *c, struct qp_args *a,
		    struct kite_ib_create_qp_req *req)
{
	uint32_t need;

	a->type = qp_type(r);
	tlock(c);
	/* An XRC target's pd_handle names its XRC domain. */
	a->pd = pick(r, c, a->type == IB_UVERBS_QPT_XRC_TGT ? T_XRCD : T_PD,
		     NULL, &a->real_pd);
	a->scq = pick(r, c, T_CQ, NULL, &a->real_scq);
	if (rnd(r, 2)) {
		a->rcq = a->scq;
		a->real_rcq = a->real_scq;
	} else {
		a->rcq = pick(r, c, T_CQ, NULL, &a->real_rcq);
	}
	tunlock(c);
	a->srq = chance(r, 20) ? (uint32_t)rnd64(r) : 0;
	a->is_srq = chance(r, 20);
	a->sig_all = chance(r, 8) ? (uint8_t)rnd64(r) : rnd(r, 2);
	a->max_send_wr = 1 + rnd(r, 64);
	a->max_recv_wr = 1 + rnd(r, 64);
	a->max_send_sge = 1 + rnd(r, 4);
	a->max_recv_sge = 1 + rnd(r, 4);
	a->max_inline = rnd(r, 2) ? 0 : rnd(r, 128);
	switch (rnd(r, 24)) {
	case 0:
		a->max_send_wr = (uint32_t)interesting(r, a->max_send_wr);
		break;
	case 1:
		a->max_recv_wr = (uint32_t)interesting(r, a->max_recv_wr);
		break;
	case 2:
		a->max_send_sge = (uint32_t)interesting(r, a->max_send_sge);
		break;
	case 3:
		a->max_recv_sge = (uint32_t)interesting(r, a->max_recv_sge);
		break;
	case 4:
		a->max_inline = (uint32_t)interesting(r, a->max_inline);
		break;
	}
	memset(req, 0, sizeof(*req));
	req->sq_log_depth = log2_up(a->max_send_wr, 1);
	req->rq_log_depth = log2_up(a->max_recv_wr, 1);
	/* Room for the SGEs and the inline data, as libkite would ask. */
	need = 64 + 16 * a->max_send_sge + a->max_inline;
	req->sq_wqe_shift = log2_up(need, 6) + rnd(r, 2);
	req->rq_wqe_shift = log2_up(16 + 16 * a->max_recv_sge, 6);
	if (req->sq_wqe_shift > 10)
		req->sq_wqe_shift = 10;
	if (req->sq_log_depth > 12)
		req->sq_log_depth = 12;
	if (req->rq_log_depth > 12)
		req->rq_log_depth = 12;
	req->sq_buf_addr = buf_addr(r, c, (1ULL << req->sq_wqe_shift) <<
				    req->sq_log_depth, true);
	req->rq_buf_addr = buf_addr(r, c, (1ULL << req->rq_wqe_shift) <<
				    req->rq_log_depth, true);
	a->req = *req;
}

static void qp_created(struct ctx *c, const struct qp_args *a,
		       uint32_t handle, uint32_t qpn)
{
	/* An XRC target holds its domain only, an initiator no receive CQ. */
	bool tgt = a->type == IB_UVERBS_QPT_XRC_TGT;
	bool ini = a->type == IB_UVERBS_QPT_XRC_INI;
	struct obj o = {
		.handle = handle, .num = qpn,
		.pd = tgt ? NO_HANDLE : a->pd,
		.scq = tgt ? NO_HANDLE : a->scq,
		.rcq = tgt || ini ? NO_HANDLE : a->rcq,
		.xrcd = tgt ? a->pd : NO_HANDLE,
		.qp_type = a->type, .state = IB_QPS_RESET,
		.sq_addr = a->req.sq_buf_addr, .rq_addr = a->req.rq_buf_addr,
		.sq_log = a->req.sq_log_depth, .sq_shift = a->req.sq_wqe_shift,
		.rq_log = a->req.rq_log_depth, .rq_shift = a->req.rq_wqe_shift,
	};

	tlock(c);
	add_obj(c, T_QP, &o);
	adjust_users(c, T_PD, o.pd, 1);
	adjust_users(c, T_CQ, o.scq, 1);
	adjust_users(c, T_CQ, o.rcq, 1);
	adjust_users(c, T_XRCD, o.xrcd, 1);
	tunlock(c);
}

static int op_create_qp(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_create_qp cmd = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct kite_ib_create_qp_resp drv;
	} resp = {};
	struct kite_ib_create_qp_req req;
	struct qp_args a;
	uint8_t drv[128];
	size_t dl;
	void *rp;
	int err;

	qp_args(r, c, &a, &req);
	cmd.user_handle = rnd64(r);
	cmd.pd_handle = a.pd;
	cmd.send_cq_handle = a.scq;
	cmd.recv_cq_handle = a.rcq;
	cmd.srq_handle = a.srq;
	cmd.max_send_wr = a.max_send_wr;
	cmd.max_recv_wr = a.max_recv_wr;
	cmd.max_send_sge = a.max_send_sge;
	cmd.max_recv_sge = a.max_recv_sge;
	cmd.max_inline_data = a.max_inline;
	cmd.sq_sig_all = a.sig_all;
	cmd.qp_type = a.type;
	cmd.is_srq = a.is_srq;
	dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 4);
	rp = resp_ptr(r, c, &resp);
	err = cmd_write(c, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd), true,
			drv, dl, rp,
			out_len(r, sizeof(resp.core), sizeof(resp), 4));
	if (!err && rp == &resp)
		qp_created(c, &a, resp.core.qp_handle, resp.core.qpn);
	return err;
}

static int op_create_qp_ex(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_ex_create_qp cmd = {};
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		struct kite_ib_create_qp_resp drv;
	} resp = {};
	struct kite_ib_create_qp_req req;
	struct qp_args a;
	uint8_t drv[128];
	size_t dl;
	void *rp;
	int err;

	qp_args(r, c, &a, &req);
	cmd.user_handle = rnd64(r);
	cmd.pd_handle = a.pd;
	cmd.send_cq_handle = a.scq;
	cmd.recv_cq_handle = a.rcq;
	cmd.srq_handle = a.srq;
	cmd.max_send_wr = a.max_send_wr;
	cmd.max_recv_wr = a.max_recv_wr;
	cmd.max_send_sge = a.max_send_sge;
	cmd.max_recv_sge = a.max_recv_sge;
	cmd.max_inline_data = a.max_inline;
	cmd.sq_sig_all = a.sig_all;
	cmd.qp_type = a.type;
	cmd.is_srq = a.is_srq;
	if (chance(r, 6))
		cmd.create_flags = 1u << rnd(r, 32);
	if (chance(r, 10))
		cmd.comp_mask = (uint32_t)interesting(r, 0);
	if (chance(r, 10))
		cmd.source_qpn = (uint32_t)rnd64(r);
	dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 8);
	rp = resp_ptr(r, c, &resp);
	err = cmd_write_ex(c, IB_USER_VERBS_EX_CMD_CREATE_QP, &cmd, sizeof(cmd),
			   drv, dl, rp, sizeof(resp.core), sizeof(resp.drv));
	if (!err && rp == &resp)
		qp_created(c, &a, resp.core.base.qp_handle, resp.core.base.qpn);
	return err;
}

/* The destination of a RoCE path: this host's GID, or some other. */
static void fill_gid(struct rng *r, uint8_t gid[16])
{
	static const uint8_t local4[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1,
	};

	switch (rnd(r, 8)) {
	case 0:
		/* IPv6 link-local: the MAC is in the GID, no resolution. */
		memset(gid, 0, 16);
		gid[0] = 0xfe;
		gid[1] = 0x80;
		rnd_fill(r, gid + 8, 8);
		break;
	case 1:
		/* Multicast. */
		memset(gid, 0, 16);
		gid[0] = 0xff;
		gid[1] = 0x0e;
		gid[15] = (uint8_t)rnd64(r);
		break;
	case 2:
		if (chance(r, 8)) {
			rnd_fill(r, gid, 16);	/* may need ARP: rare */
			break;
		}
		fallthrough;
	default:
		memcpy(gid, local4, 16);
		break;
	}
}

static void fill_dest(struct rng *r, struct ib_uverbs_qp_dest *d)
{
	fill_gid(r, d->dgid);
	d->flow_label = chance(r, 4) ? (uint32_t)rnd64(r) & 0xfffff : 0;
	d->sgid_index = chance(r, 6) ? (uint8_t)rnd64(r) : rnd(r, 4);
	d->hop_limit = chance(r, 4) ? (uint8_t)rnd64(r) : 64;
	d->traffic_class = chance(r, 4) ? (uint8_t)rnd64(r) : 0;
	d->sl = chance(r, 4) ? (uint8_t)rnd64(r) : 0;
	d->static_rate = chance(r, 6) ? (uint8_t)rnd64(r) : 0;
	d->is_global = chance(r, 10) ? 0 : 1;
	d->port_num = chance(r, 10) ? (uint8_t)rnd64(r) : 1;
	d->dlid = chance(r, 10) ? (uint16_t)rnd64(r) : 0;
}

/*
 * modify_qp: half the time the next step of the QP's type towards RTS
 * (or ERR, RESET), the other half random states, masks and values.
 */
static void modify_args(struct rng *r, struct ctx *c,
			struct ib_uverbs_modify_qp *m, struct obj *qp,
			bool real)
{
	bool rc = qp->qp_type == IB_UVERBS_QPT_RC ||
		  qp->qp_type == IB_UVERBS_QPT_UC;
	uint32_t mask = IB_QP_STATE;
	uint8_t next;

	fill_dest(r, &m->dest);
	if (chance(r, 8))
		fill_dest(r, &m->alt_dest);
	m->qkey = chance(r, 4) ? (uint32_t)rnd64(r) : 0x11111111;
	m->rq_psn = (uint32_t)rnd64(r) & (chance(r, 8) ? ~0u : 0xffffff);
	m->sq_psn = (uint32_t)rnd64(r) & (chance(r, 8) ? ~0u : 0xffffff);
	m->dest_qp_num = chance(r, 3) ? (uint32_t)rnd64(r) : qp->num;
	m->qp_access_flags = access_flags(r);
	m->pkey_index = chance(r, 8) ? (uint16_t)rnd64(r) : 0;
	m->alt_pkey_index = (uint16_t)rnd64(r);
	m->path_mtu = chance(r, 6) ? (uint8_t)rnd64(r) : 1 + rnd(r, 5);
	m->path_mig_state = rnd(r, 4);
	m->en_sqd_async_notify = rnd(r, 2);
	m->max_rd_atomic = chance(r, 4) ? (uint8_t)rnd64(r) : rnd(r, 17);
	m->max_dest_rd_atomic = chance(r, 4) ? (uint8_t)rnd64(r) : rnd(r, 17);
	m->min_rnr_timer = (uint8_t)rnd64(r) & 31;
	m->port_num = chance(r, 8) ? (uint8_t)rnd64(r) : 1;
	m->timeout = chance(r, 4) ? (uint8_t)rnd64(r) : 14;
	m->retry_cnt = (uint8_t)rnd64(r) & 7;
	m->rnr_retry = (uint8_t)rnd64(r) & 7;
	m->alt_port_num = (uint8_t)rnd64(r);
	m->alt_timeout = (uint8_t)rnd64(r);
	m->cur_qp_state = qp->state;

	if (real && rnd(r, 2)) {
		switch (qp->state) {
		case IB_QPS_RESET:
			next = IB_QPS_INIT;
			mask |= IB_QP_PKEY_INDEX | IB_QP_PORT;
			mask |= rc ? IB_QP_ACCESS_FLAGS : IB_QP_QKEY;
			break;
		case IB_QPS_INIT:
			next = IB_QPS_RTR;
			if (rc)
				mask |= IB_QP_AV | IB_QP_PATH_MTU |
					IB_QP_DEST_QPN | IB_QP_RQ_PSN |
					IB_QP_MAX_DEST_RD_ATOMIC |
					IB_QP_MIN_RNR_TIMER;
			break;
		case IB_QPS_RTR:
			next = IB_QPS_RTS;
			mask |= IB_QP_SQ_PSN;
			if (rc)
				mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
					IB_QP_RNR_RETRY |
					IB_QP_MAX_QP_RD_ATOMIC;
			break;
		default:
			next = chance(r, 3) ? IB_QPS_RESET :
			       chance(r, 2) ? IB_QPS_ERR : IB_QPS_SQD;
			break;
		}
		m->qp_state = next;
		if (chance(r, 6))
			mask ^= 1u << rnd(r, 21);
	} else {
		m->qp_state = chance(r, 6) ? (uint8_t)rnd64(r) : rnd(r, 7);
		mask = (uint32_t)rnd64(r) & ((1u << 21) - 1);
		if (rnd(r, 2))
			mask |= IB_QP_STATE;
		if (chance(r, 10))
			mask = (uint32_t)rnd64(r);
	}
	m->attr_mask = mask;
}

static void modify_done(struct ctx *c, uint32_t handle,
			const struct ib_uverbs_modify_qp *m)
{
	struct obj *o;

	if (!(m->attr_mask & IB_QP_STATE))
		return;
	tlock(c);
	o = find(c, T_QP, handle);
	if (o)
		o->state = m->qp_state;
	tunlock(c);
}

static int op_modify_qp(struct rng *r, struct ctx *c, bool ex)
{
	struct ib_uverbs_ex_modify_qp cmd = {};
	struct ib_uverbs_ex_modify_qp_resp resp;
	struct obj qp = {};
	uint8_t drv[64];
	size_t dl;
	bool real;
	int err;

	tlock(c);
	cmd.base.qp_handle = pick(r, c, T_QP, &qp, &real);
	tunlock(c);
	modify_args(r, c, &cmd.base, &qp, real);
	if (ex) {
		if (chance(r, 4))
			cmd.rate_limit = (uint32_t)rnd64(r);
		if (chance(r, 10))
			cmd.reserved = 1;
		dl = chance(r, 8) ? mutate(r, drv, sizeof(drv), "", 0, 8) : 0;
		err = cmd_write_ex(c, IB_USER_VERBS_EX_CMD_MODIFY_QP, &cmd,
				   sizeof(cmd), drv, dl, &resp,
				   chance(r, 4) ? 0 : sizeof(resp), 0);
	} else {
		dl = chance(r, 8) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;
		err = cmd_write(c, IB_USER_VERBS_CMD_MODIFY_QP, &cmd.base,
				sizeof(cmd.base), false, drv, dl, NULL, 0);
	}
	if (!err && real)
		modify_done(c, cmd.base.qp_handle, &cmd.base);
	return err;
}

static int op_query_qp(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_query_qp cmd = {};
	struct ib_uverbs_query_qp_resp resp;
	uint8_t drv[64];
	size_t dl = chance(r, 8) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;
	bool real;

	tlock(c);
	cmd.qp_handle = pick(r, c, T_QP, NULL, &real);
	tunlock(c);
	cmd.attr_mask = chance(r, 2) ? (uint32_t)rnd64(r) : ~0u;
	return cmd_write(c, IB_USER_VERBS_CMD_QUERY_QP, &cmd, sizeof(cmd), true,
			 drv, dl, resp_ptr(r, c, &resp), sizeof(resp));
}

static int op_post_send(struct rng *r, struct ctx *c)
{
	struct {
		struct ib_uverbs_post_send cmd;
		struct ib_uverbs_send_wr wr[2];
		struct ib_uverbs_sge sge[4];
	} p = {};
	struct ib_uverbs_post_send_resp resp;
	bool real;
	uint32_t i, n = 1 + rnd(r, 2), nsge = 0;

	tlock(c);
	p.cmd.qp_handle = pick(r, c, T_QP, NULL, &real);
	for (i = 0; i < n; i++) {
		struct ib_uverbs_send_wr *w = &p.wr[i];

		w->wr_id = rnd64(r);
		w->num_sge = rnd(r, 3);
		if (nsge + w->num_sge > 4)
			w->num_sge = 0;
		nsge += w->num_sge;
		w->opcode = chance(r, 6) ? (uint32_t)rnd64(r) : rnd(r, 12);
		w->send_flags = rnd(r, 16);
		w->wr.ud.ah = pick(r, c, T_AH, NULL, &real);
		w->wr.ud.remote_qpn = (uint32_t)rnd64(r) & 0xffffff;
		w->wr.ud.remote_qkey = 0x11111111;
	}
	tunlock(c);
	for (i = 0; i < nsge; i++) {
		p.sge[i].addr = buf_addr(r, c, 64, true);
		p.sge[i].length = rnd(r, 256);
		p.sge[i].lkey = (uint32_t)rnd64(r);
	}
	p.cmd.wr_count = n;
	p.cmd.sge_count = nsge;
	p.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (chance(r, 10))
		p.cmd.wqe_size = (uint32_t)interesting(r, p.cmd.wqe_size);
	return cmd_write(c, IB_USER_VERBS_CMD_POST_SEND, &p.cmd,
			 sizeof(p.cmd) + n * sizeof(p.wr[0]) +
			 nsge * sizeof(p.sge[0]), true, NULL, 0, &resp,
			 sizeof(resp));
}

static int op_post_recv(struct rng *r, struct ctx *c)
{
	struct {
		struct ib_uverbs_post_recv cmd;
		struct ib_uverbs_recv_wr wr[2];
		struct ib_uverbs_sge sge[4];
	} p = {};
	struct ib_uverbs_post_recv_resp resp;
	bool real;
	uint32_t i, n = 1 + rnd(r, 2), nsge = 0;

	tlock(c);
	p.cmd.qp_handle = pick(r, c, T_QP, NULL, &real);
	tunlock(c);
	for (i = 0; i < n; i++) {
		p.wr[i].wr_id = rnd64(r);
		p.wr[i].num_sge = rnd(r, 3);
		if (nsge + p.wr[i].num_sge > 4)
			p.wr[i].num_sge = 0;
		nsge += p.wr[i].num_sge;
	}
	for (i = 0; i < nsge; i++) {
		p.sge[i].addr = buf_addr(r, c, 64, true);
		p.sge[i].length = rnd(r, 4096);
		p.sge[i].lkey = (uint32_t)rnd64(r);
	}
	p.cmd.wr_count = n;
	p.cmd.sge_count = nsge;
	p.cmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	return cmd_write(c, IB_USER_VERBS_CMD_POST_RECV, &p.cmd,
			 sizeof(p.cmd) + n * sizeof(p.wr[0]) +
			 nsge * sizeof(p.sge[0]), true, NULL, 0, &resp,
			 sizeof(resp));
}

static int op_create_ah(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_create_ah cmd = {};
	/* The driver's response follows the core's 4 bytes. */
	alignas(8) uint8_t resp[sizeof(struct ib_uverbs_create_ah_resp) +
		     sizeof(struct kite_ib_create_ah_resp)] = {};
	struct ib_uverbs_qp_dest d = {};
	struct obj o = {};
	uint8_t drv[64];
	size_t dl = chance(r, 8) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;
	bool real;
	void *rp;
	int err;

	tlock(c);
	cmd.pd_handle = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	cmd.user_handle = rnd64(r);
	fill_dest(r, &d);
	memcpy(cmd.attr.grh.dgid, d.dgid, 16);
	cmd.attr.grh.flow_label = d.flow_label;
	cmd.attr.grh.sgid_index = d.sgid_index;
	cmd.attr.grh.hop_limit = d.hop_limit;
	cmd.attr.grh.traffic_class = d.traffic_class;
	cmd.attr.dlid = d.dlid;
	cmd.attr.sl = d.sl;
	cmd.attr.static_rate = d.static_rate;
	cmd.attr.is_global = d.is_global;
	cmd.attr.port_num = d.port_num;
	rp = resp_ptr(r, c, resp);
	err = cmd_write(c, IB_USER_VERBS_CMD_CREATE_AH, &cmd, sizeof(cmd), true,
			drv, dl, rp,
			out_len(r, sizeof(struct ib_uverbs_create_ah_resp),
				sizeof(resp), 4));
	if (!err && rp == resp) {
		memcpy(&o.handle, resp, sizeof(o.handle));
		memcpy(c->av, resp + sizeof(struct ib_uverbs_create_ah_resp) +
		       offsetof(struct kite_ib_create_ah_resp, av),
		       sizeof(c->av));
		c->have_av = true;
		o.pd = cmd.pd_handle;
		tlock(c);
		add_obj(c, T_AH, &o);
		adjust_users(c, T_PD, o.pd, 1);
		tunlock(c);
	}
	return err;
}

static int mc_find(const struct obj *o, const uint8_t *gid, uint16_t lid)
{
	int i;

	for (i = 0; i < o->nmc; i++)
		if (o->mc_lid[i] == lid && !memcmp(o->mc_gid[i], gid, 16))
			return i;
	return -1;
}

/*
 * Attach or detach a QP, live or not, to a group, often a multicast one.
 * A live QP's attachments are tracked: each is a user of the QP (the core
 * refuses to destroy an attached QP), and teardown detaches them.
 */
static int op_mcast(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_attach_mcast cmd = {};
	bool attach = rnd(r, 2), real;
	struct obj *o;
	int err, i;

	if (chance(r, 4)) {
		fill_gid(r, cmd.gid);
	} else {
		/* One of 8 groups, so that attaches repeat and detaches hit. */
		cmd.gid[0] = 0xff;
		cmd.gid[1] = 0x0e;
		cmd.gid[15] = rnd(r, 8);
	}
	cmd.mlid = chance(r, 8) ? (uint16_t)rnd64(r) : 0;
	tlock(c);
	cmd.qp_handle = pick(r, c, T_QP, NULL, &real);
	/* Any live QP (a random handle may name one too) is tracked. */
	o = find(c, T_QP, cmd.qp_handle);
	/* A new attachment there would be one too many to track. */
	if (o && attach && o->nmc == FZ_MCAST &&
	    mc_find(o, cmd.gid, cmd.mlid) < 0) {
		tunlock(c);
		return SKIP;
	}
	tunlock(c);
	/* attach and detach share the layout. */
	err = cmd_write(c, attach ? IB_USER_VERBS_CMD_ATTACH_MCAST :
				    IB_USER_VERBS_CMD_DETACH_MCAST,
			&cmd, sizeof(cmd), false, NULL, 0, NULL, 0);
	if (err)
		return err;
	tlock(c);
	o = find(c, T_QP, cmd.qp_handle);
	i = o ? mc_find(o, cmd.gid, cmd.mlid) : -1;
	if (o && attach && i < 0 && o->nmc < FZ_MCAST) {
		memcpy(o->mc_gid[o->nmc], cmd.gid, 16);
		o->mc_lid[o->nmc++] = cmd.mlid;
		o->users++;
	} else if (o && !attach && i >= 0) {
		o->nmc--;
		memcpy(o->mc_gid[i], o->mc_gid[o->nmc], 16);
		o->mc_lid[i] = o->mc_lid[o->nmc];
		o->users--;
	} else if (o && !attach) {
		inconsistent("detach of QP %u from a group it is not in succeeded",
			     cmd.qp_handle);
	}
	tunlock(c);
	return err;
}

/* Detach QP @o from its tracked groups: 0 or the first error. */
static int mc_detach_all(struct ctx *c, struct obj *o)
{
	struct ib_uverbs_detach_mcast cmd = { .qp_handle = o->handle };
	int err = 0;

	while (o->nmc && !err) {
		o->nmc--;
		memcpy(cmd.gid, o->mc_gid[o->nmc], 16);
		cmd.mlid = o->mc_lid[o->nmc];
		err = cmd_write(c, IB_USER_VERBS_CMD_DETACH_MCAST, &cmd,
				sizeof(cmd), false, NULL, 0, NULL, 0);
		o->users--;
	}
	return err;
}

static int op_srq(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_create_srq cmd = {};
	struct ib_uverbs_create_srq_resp resp;
	uint8_t drv[64];
	size_t dl = mutate(r, drv, sizeof(drv), "", 0, 4);
	bool real;

	tlock(c);
	cmd.pd_handle = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	cmd.max_wr = rnd(r, 64);
	cmd.max_sge = rnd(r, 4);
	return cmd_write(c, IB_USER_VERBS_CMD_CREATE_SRQ, &cmd, sizeof(cmd),
			 true, drv, dl, &resp, sizeof(resp));
}

/*
 * An XRC domain without a file (fd -1, O_CREAT), sometimes with another
 * fd or no O_CREAT, which the core may refuse.
 */
static int op_open_xrcd(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_open_xrcd cmd = { .fd = -1, .oflags = O_CREAT };
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct obj o = {
		.pd = NO_HANDLE, .scq = NO_HANDLE, .rcq = NO_HANDLE,
		.xrcd = NO_HANDLE,
	};
	int err;

	if (chance(r, 8))
		cmd.fd = chance(r, 2) ? (uint32_t)c->fd : (uint32_t)rnd64(r);
	if (chance(r, 8))
		cmd.oflags = (uint32_t)interesting(r, 0);
	err = cmd_write(c, IB_USER_VERBS_CMD_OPEN_XRCD, &cmd, sizeof(cmd),
			true, NULL, 0, &resp, sizeof(resp));
	if (!err) {
		o.handle = resp.xrcd_handle;
		tlock(c);
		add_obj(c, T_XRCD, &o);
		tunlock(c);
	}
	return err;
}

/*
 * CREATE_XSRQ: mostly an XRC SRQ of a live domain, PD and CQ (sometimes
 * wrong ones), sometimes a basic, tag-matching or unknown type, with a
 * ring geometry as libkite would ask for, mutated.
 */
static int op_create_xsrq(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_create_xsrq cmd = {};
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct kite_ib_create_srq_resp drv;
	} resp = {};
	struct kite_ib_create_srq_req req = {};
	struct obj o = {};
	uint8_t drv[64];
	bool real, xrc;
	size_t dl;
	int err;

	cmd.srq_type = IB_UVERBS_SRQT_XRC;
	if (chance(r, 6))
		cmd.srq_type = rnd(r, 2) ? IB_UVERBS_SRQT_BASIC :
					   IB_UVERBS_SRQT_TM;
	if (chance(r, 20))
		cmd.srq_type = (uint32_t)rnd64(r);
	tlock(c);
	cmd.pd_handle = pick(r, c, T_PD, NULL, &real);
	cmd.cq_handle = pick(r, c, T_CQ, NULL, &real);
	cmd.xrcd_handle = pick(r, c, T_XRCD, NULL, &real);
	tunlock(c);
	cmd.max_wr = 1 + rnd(r, 64);
	cmd.max_sge = rnd(r, 4);
	cmd.srq_limit = chance(r, 4) ? rnd(r, 80) : 0;
	cmd.max_num_tags = chance(r, 8) ? (uint32_t)rnd64(r) : 0;
	req.log_depth = log2_up(cmd.max_wr, 1);
	req.wqe_shift = log2_up(16 + 16 * cmd.max_sge, 6);
	req.buf_addr = buf_addr(r, c, (1ULL << req.wqe_shift) << req.log_depth,
				true);
	dl = mutate(r, drv, sizeof(drv), &req, sizeof(req), 4);
	err = cmd_write(c, IB_USER_VERBS_CMD_CREATE_XSRQ, &cmd, sizeof(cmd),
			true, drv, dl, &resp, sizeof(resp));
	if (err)
		return err;
	/* What the core holds: the PD; an XRC SRQ its CQ and domain too. */
	xrc = cmd.srq_type == IB_UVERBS_SRQT_XRC;
	o.handle = resp.core.srq_handle;
	o.num = resp.core.srqn;
	o.pd = cmd.pd_handle;
	o.scq = xrc ? cmd.cq_handle : NO_HANDLE;
	o.rcq = NO_HANDLE;
	o.xrcd = xrc ? cmd.xrcd_handle : NO_HANDLE;
	tlock(c);
	add_obj(c, T_SRQ, &o);
	adjust_users(c, T_PD, o.pd, 1);
	adjust_users(c, T_CQ, o.scq, 1);
	adjust_users(c, T_XRCD, o.xrcd, 1);
	tunlock(c);
	return err;
}

/*
 * A memory window of type 1 or 2 (sometimes another type, which the core
 * refuses) in a live PD, sometimes a wrong one, with driver data that is
 * none, zeros (accepted) or not (refused).
 */
static int op_alloc_mw(struct rng *r, struct ctx *c)
{
	struct ib_uverbs_alloc_mw cmd = {};
	struct ib_uverbs_alloc_mw_resp resp = {};
	uint8_t drv[64];
	size_t dl = chance(r, 6) ? mutate(r, drv, sizeof(drv), "", 0, 4) : 0;
	struct obj o = {};
	bool real;
	void *rp;
	int err;

	tlock(c);
	cmd.pd_handle = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	cmd.mw_type = chance(r, 8) ? (uint8_t)rnd64(r) : 1 + rnd(r, 2);
	if (chance(r, 16))
		cmd.reserved[rnd(r, 3)] = (uint8_t)rnd64(r);
	rp = resp_ptr(r, c, &resp);
	err = cmd_write(c, IB_USER_VERBS_CMD_ALLOC_MW, &cmd, sizeof(cmd), true,
			drv, dl, rp, out_len(r, sizeof(resp), sizeof(resp), 4));
	if (!err && rp == &resp) {
		o.handle = resp.mw_handle;
		o.num = resp.rkey;
		o.pd = cmd.pd_handle;
		tlock(c);
		add_obj(c, T_MW, &o);
		adjust_users(c, T_PD, o.pd, 1);
		tunlock(c);
	}
	return err;
}

/*
 * Commands kite_ib does not implement, and OPEN_QP, whose random bytes
 * name no live object, with plausible sizes.
 */
static int op_unsupported(struct rng *r, struct ctx *c)
{
	static const uint32_t cmds[] = {
		IB_USER_VERBS_CMD_OPEN_QP,
		IB_USER_VERBS_CMD_QUERY_AH, IB_USER_VERBS_CMD_MODIFY_AH,
		IB_USER_VERBS_CMD_PEEK_CQ,
	};
	static const uint32_t ex[] = {
		IB_USER_VERBS_EX_CMD_CREATE_WQ, IB_USER_VERBS_EX_CMD_MODIFY_WQ,
		IB_USER_VERBS_EX_CMD_DESTROY_WQ,
		IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL,
		IB_USER_VERBS_EX_CMD_CREATE_FLOW,
	};
	alignas(8) uint8_t core[128];
	uint8_t resp[128];
	size_t len = 8 * (1 + rnd(r, 10));

	rnd_fill(r, core, sizeof(core));
	if (rnd(r, 2))
		return cmd_write(c, cmds[rnd(r, sizeof(cmds) / 4)], core, len,
				 true, NULL, 0, resp, sizeof(resp));
	return cmd_write_ex(c, ex[rnd(r, sizeof(ex) / 4)], core, len, NULL, 0,
			    resp, sizeof(resp), 0);
}

/* Any command number, any header, random bytes (never a live handle). */
static int op_raw_write(struct rng *r, struct ctx *c)
{
	alignas(8) uint8_t buf[256];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	size_t len = rnd(r, sizeof(buf) + 1), i;
	ssize_t n;

	for (i = 0; i < sizeof(buf); i += 4) {
		/* Words of random bytes, none a small number. */
		uint32_t w = (uint32_t)rnd64(r) | 0x10000;

		memcpy(buf + i, &w, 4);
	}
	hdr->command = rnd(r, 64) |
		       (rnd(r, 2) ? IB_USER_VERBS_CMD_FLAG_EXTENDED : 0);
	/* Destroys are excluded: the bytes could name a handle by chance. */
	if ((hdr->command & 0xff) == IB_USER_VERBS_CMD_DEALLOC_PD ||
	    (hdr->command & 0xff) == IB_USER_VERBS_CMD_DEREG_MR ||
	    (hdr->command & 0xff) == IB_USER_VERBS_CMD_DESTROY_CQ ||
	    (hdr->command & 0xff) == IB_USER_VERBS_CMD_DESTROY_QP ||
	    (hdr->command & 0xff) == IB_USER_VERBS_CMD_DESTROY_AH)
		hdr->command = IB_USER_VERBS_CMD_QUERY_DEVICE;
	if (rnd(r, 2))
		hdr->in_words = len / 4;
	n = write(c->fd, buf, len);
	return n < 0 ? -errno : 0;
}

/* A random RDMA_VERBS_IOCTL method call (never naming a live handle). */
static int op_ioctl(struct rng *r, struct ctx *c)
{
	alignas(8) uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    8 * sizeof(struct ib_uverbs_attr)];
	alignas(8) uint8_t scratch[256];
	struct ib_uverbs_ioctl_hdr *h = (void *)buf;
	uint32_t i, n = rnd(r, 9);

	memset(buf, 0, sizeof(buf));
	rnd_fill(r, scratch, sizeof(scratch));
	h->length = sizeof(*h) + n * sizeof(struct ib_uverbs_attr);
	if (chance(r, 10))
		h->length = (uint16_t)rnd64(r);
	h->object_id = chance(r, 4) ? (uint16_t)rnd64(r) : rnd(r, 24);
	h->method_id = chance(r, 4) ? (uint16_t)rnd64(r) : rnd(r, 12);
	if (chance(r, 6))
		h->object_id |= 1u << UVERBS_ID_NS_SHIFT;
	/* Destroy methods are excluded (they are method 1 of most objects). */
	if (h->method_id == 1)
		h->method_id = 0;
	h->num_attrs = n;
	h->driver_id = chance(r, 8) ? (uint32_t)rnd64(r) : RDMA_DRIVER_KITE;
	for (i = 0; i < n; i++) {
		struct ib_uverbs_attr *a = &h->attrs[i];

		a->attr_id = chance(r, 3) ? (uint16_t)rnd64(r) : rnd(r, 10);
		a->len = chance(r, 2) ? 8 * rnd(r, 5) : rnd(r, 256);
		a->flags = chance(r, 4) ? UVERBS_ATTR_F_MANDATORY : 0;
		if (chance(r, 10))
			a->flags = (uint16_t)rnd64(r);
		if (a->len > 8 || chance(r, 3))
			a->data = (uintptr_t)scratch;
		else
			a->data = rnd64(r) | (1ULL << 40);
		if (chance(r, 10))
			a->attr_data.reserved = (uint16_t)rnd64(r);
	}
	return ioctl(c->fd, RDMA_VERBS_IOCTL, h) ? -errno : 0;
}

/* Run a well-formed ioctl: @h's length from its attributes. */
static int ioctl_exec(struct ctx *c, struct ib_uverbs_ioctl_hdr *h)
{
	h->length = sizeof(*h) + h->num_attrs * sizeof(struct ib_uverbs_attr);
	return ioctl(c->fd, RDMA_VERBS_IOCTL, h) ? -errno : 0;
}

/*
 * Well-formed ioctl queries that reach the driver: port, context (with the
 * driver's answer), GIDs, what an importer asks of a PD or a DM, and the
 * device clock.
 */
static int op_ioctl_query(struct rng *r, struct ctx *c)
{
	alignas(8) uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    4 * sizeof(struct ib_uverbs_attr)];
	alignas(8) uint8_t out[2048];
	struct ib_uverbs_ioctl_hdr *h = (void *)buf;
	uint64_t n_out = 0;
	uint32_t port = chance(r, 4) ? (uint32_t)interesting(r, 1) : 1;
	bool real;

	memset(buf, 0, sizeof(buf));
	h->driver_id = RDMA_DRIVER_KITE;
	switch (rnd(r, 7)) {
	case 0:
		h->object_id = UVERBS_OBJECT_DEVICE;
		h->method_id = UVERBS_METHOD_QUERY_PORT;
		h->num_attrs = 2;
		h->attrs[0].attr_id = UVERBS_ATTR_QUERY_PORT_PORT_NUM;
		h->attrs[0].len = 1;
		h->attrs[0].data = port & 0xff;
		h->attrs[1].attr_id = UVERBS_ATTR_QUERY_PORT_RESP;
		h->attrs[1].len = rnd(r, 2) ? 64 : rnd(r, 200);
		h->attrs[1].data = (uintptr_t)out;
		break;
	case 1:
		h->object_id = UVERBS_OBJECT_DEVICE;
		h->method_id = UVERBS_METHOD_QUERY_CONTEXT;
		h->num_attrs = 2;
		h->attrs[0].attr_id = UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS;
		h->attrs[0].len = 4;
		h->attrs[0].data = (uintptr_t)out;
		h->attrs[1].attr_id = UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT;
		h->attrs[1].len = 8;
		h->attrs[1].data = (uintptr_t)(out + 8);
		/* The driver's answer (mandatory), of a random length. */
		if (!chance(r, 8)) {
			h->num_attrs = 3;
			h->attrs[2].attr_id =
				KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX;
			h->attrs[2].len = rnd(r, 2) ?
				sizeof(struct kite_ib_alloc_ucontext_resp) :
				rnd(r, 64);
			h->attrs[2].data = (uintptr_t)(out + 16);
		}
		break;
	case 4:
	case 5:
		/* What an importer asks: a PD's number, a DM's mapping. */
		tlock(c);
		h->attrs[0].data = pick(r, c, rnd(r, 2) ? T_PD : T_MR, NULL,
					&real);
		tunlock(c);
		h->attrs[1].len = chance(r, 8) ? rnd(r, 16) : 4;
		h->attrs[1].data = (uintptr_t)out;
		h->num_attrs = 2;
		if (rnd(r, 2)) {
			h->object_id = UVERBS_OBJECT_PD;
			h->method_id = KITE_IB_METHOD_PD_QUERY;
			h->attrs[0].attr_id = KITE_IB_ATTR_QUERY_PD_HANDLE;
			h->attrs[1].attr_id = KITE_IB_ATTR_QUERY_PD_RESP_PDN;
		} else {
			/* DMs live within op_dm(): mostly no such object. */
			h->object_id = UVERBS_OBJECT_DM;
			h->method_id = KITE_IB_METHOD_DM_QUERY;
			h->attrs[0].attr_id = KITE_IB_ATTR_QUERY_DM_HANDLE;
			h->attrs[1].attr_id =
				KITE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET;
			h->attrs[1].len += 4;
			h->attrs[2].attr_id = KITE_IB_ATTR_QUERY_DM_RESP_LENGTH;
			h->attrs[2].len = 8;
			h->attrs[2].data = (uintptr_t)(out + 64);
			h->num_attrs = 3;
		}
		break;
	case 6:
		/* The device clock, into an answer of a random length. */
		h->object_id = UVERBS_OBJECT_DEVICE;
		h->method_id = KITE_IB_METHOD_QUERY_CLOCK;
		h->num_attrs = 1;
		h->attrs[0].attr_id = KITE_IB_ATTR_QUERY_CLOCK_RESP_CLOCK;
		h->attrs[0].len = chance(r, 4) ? rnd(r, 16) : 8;
		h->attrs[0].data = (uintptr_t)out;
		break;
	case 2:
		h->object_id = UVERBS_OBJECT_DEVICE;
		h->method_id = UVERBS_METHOD_QUERY_GID_TABLE;
		h->num_attrs = 4;
		h->attrs[0].attr_id = UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE;
		h->attrs[0].len = 8;
		h->attrs[0].data = chance(r, 6) ? rnd(r, 64) :
				   sizeof(struct ib_uverbs_gid_entry);
		h->attrs[1].attr_id = UVERBS_ATTR_QUERY_GID_TABLE_FLAGS;
		h->attrs[1].len = 4;
		h->attrs[1].data = chance(r, 6) ? (uint32_t)rnd64(r) : 0;
		h->attrs[2].attr_id = UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES;
		h->attrs[2].len = rnd(r, sizeof(out) / 32 + 1) * 32;
		h->attrs[2].data = (uintptr_t)out;
		h->attrs[3].attr_id =
			UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES;
		h->attrs[3].len = 8;
		h->attrs[3].data = (uintptr_t)&n_out;
		break;
	default:
		h->object_id = UVERBS_OBJECT_DEVICE;
		h->method_id = UVERBS_METHOD_QUERY_GID_ENTRY;
		h->num_attrs = 4;
		h->attrs[0].attr_id = UVERBS_ATTR_QUERY_GID_ENTRY_PORT;
		h->attrs[0].len = 4;
		h->attrs[0].data = port;
		h->attrs[1].attr_id = UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX;
		h->attrs[1].len = 4;
		h->attrs[1].data = chance(r, 4) ? (uint32_t)rnd64(r) : rnd(r, 8);
		h->attrs[2].attr_id = UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS;
		h->attrs[2].len = 4;
		h->attrs[2].data = 0;
		h->attrs[3].attr_id = UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY;
		h->attrs[3].len = sizeof(struct ib_uverbs_gid_entry);
		h->attrs[3].data = (uintptr_t)out;
		break;
	}
	h->attrs[0].flags = UVERBS_ATTR_F_MANDATORY;
	return ioctl_exec(c, h);
}

/* mmap() of random offsets and lengths; unmap some later. */
static int op_mmap(struct rng *r, struct ctx *c)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	uint64_t off;
	size_t len;
	void *p;
	int err = 0;

	switch (rnd(r, 6)) {
	case 0:
	case 1:
		off = c->db_off;
		break;
	case 2:
		off = c->db_off + PAGE * (1 + rnd(r, 4));
		break;
	case 3:
		off = c->db_off - PAGE;
		break;
	case 4:
		off = (uint64_t)rnd(r, 64) * PAGE;
		break;
	default:
		off = rnd64(r) & ~(uint64_t)(PAGE - 1) & 0x7fffffffffffULL;
		break;
	}
	len = rnd(r, 4) ? PAGE : chance(r, 2) ? 1 + rnd(r, 3 * PAGE) :
		(size_t)(rnd64(r) & 0x3ffffffULL);
	p = mmap(NULL, len, prots[rnd(r, 5)],
		 chance(r, 6) ? MAP_PRIVATE : MAP_SHARED, c->fd, (off_t)off);
	if (p == MAP_FAILED)
		return -errno;
	/*
	 * The list is the threads' both (--threads 2): unlocked, an entry
	 * could be unmapped twice, the second time taking away whatever the
	 * address was given to meanwhile (a thread's heap, say).
	 */
	tlock(c);
	if (c->nmaps == MAX_MAPS || chance(r, 2)) {
		munmap(p, len);
	} else {
		c->maps[c->nmaps] = p;
		c->map_len[c->nmaps++] = len;
	}
	if (c->nmaps && chance(r, 3)) {
		int i = rnd(r, c->nmaps);

		munmap(c->maps[i], c->map_len[i]);
		c->maps[i] = c->maps[--c->nmaps];
		c->map_len[i] = c->map_len[c->nmaps];
	}
	tunlock(c);
	return err;
}

/* One attribute of an ioctl: an inline value, or a pointer to @len bytes. */
static void dm_attr(struct ib_uverbs_attr *a, uint16_t id, uint16_t len,
		    uint64_t data)
{
	memset(a, 0, sizeof(*a));
	a->attr_id = id;
	a->len = len;
	a->data = data;
}

/* A well-formed ioctl of @n attributes to fill in @buf, of @size bytes. */
static struct ib_uverbs_ioctl_hdr *ioctl_start(uint8_t *buf, size_t size,
					       uint16_t object, uint16_t method,
					       uint16_t n)
{
	struct ib_uverbs_ioctl_hdr *hd = (void *)buf;

	memset(buf, 0, size);
	hd->driver_id = RDMA_DRIVER_KITE;
	hd->object_id = object;
	hd->method_id = method;
	hd->num_attrs = n;
	return hd;
}

/* Run a creating ioctl: the new object's handle (attribute 0) in *@h. */
static int ioctl_create(struct ctx *c, struct ib_uverbs_ioctl_hdr *hd,
			uint32_t *h)
{
	int err = ioctl_exec(c, hd);

	if (!err)
		*h = (uint32_t)hd->attrs[0].data;
	return err;
}

/* UVERBS_METHOD_DM_ALLOC; the new handle in *@h, the mmap offset in *@off. */
static int dm_alloc_ioctl(struct rng *r, struct ctx *c, uint64_t len,
			  uint32_t align, uint32_t *h, uint64_t *off)
{
	alignas(8) uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    4 * sizeof(struct ib_uverbs_attr)];
	struct ib_uverbs_ioctl_hdr *hd = ioctl_start(buf, sizeof(buf),
						     UVERBS_OBJECT_DM,
						     UVERBS_METHOD_DM_ALLOC, 3);
	uint16_t olen = 8;

	dm_attr(&hd->attrs[0], UVERBS_ATTR_ALLOC_DM_HANDLE, 0, 0);
	dm_attr(&hd->attrs[1], UVERBS_ATTR_ALLOC_DM_LENGTH, 8, len);
	dm_attr(&hd->attrs[2], UVERBS_ATTR_ALLOC_DM_ALIGNMENT, 4, align);
	/* The driver's attribute: mandatory, so missing or short fails. */
	if (!chance(r, 10)) {
		if (chance(r, 10))
			olen = rnd(r, 8);
		dm_attr(&hd->attrs[hd->num_attrs++],
			KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, olen,
			(uintptr_t)off);
	}
	return ioctl_create(c, hd, h);
}

/* UVERBS_METHOD_DM_MR_REG over DM @dm in PD @pd; the MR's handle in *@h. */
static int dm_mr_ioctl(struct ctx *c, uint32_t pd, uint32_t dm, uint64_t off,
		       uint64_t len, uint32_t access, uint32_t *h)
{
	alignas(8) uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    8 * sizeof(struct ib_uverbs_attr)];
	struct ib_uverbs_ioctl_hdr *hd = ioctl_start(buf, sizeof(buf),
						     UVERBS_OBJECT_MR,
						     UVERBS_METHOD_DM_MR_REG, 8);
	uint32_t lkey, rkey;

	dm_attr(&hd->attrs[0], UVERBS_ATTR_REG_DM_MR_HANDLE, 0, 0);
	dm_attr(&hd->attrs[1], UVERBS_ATTR_REG_DM_MR_OFFSET, 8, off);
	dm_attr(&hd->attrs[2], UVERBS_ATTR_REG_DM_MR_LENGTH, 8, len);
	dm_attr(&hd->attrs[3], UVERBS_ATTR_REG_DM_MR_PD_HANDLE, 0, pd);
	dm_attr(&hd->attrs[4], UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, 4, access);
	dm_attr(&hd->attrs[5], UVERBS_ATTR_REG_DM_MR_DM_HANDLE, 0, dm);
	dm_attr(&hd->attrs[6], UVERBS_ATTR_REG_DM_MR_RESP_LKEY, 4,
		(uintptr_t)&lkey);
	dm_attr(&hd->attrs[7], UVERBS_ATTR_REG_DM_MR_RESP_RKEY, 4,
		(uintptr_t)&rkey);
	return ioctl_create(c, hd, h);
}

/* UVERBS_METHOD_DM_FREE. */
static int dm_free_ioctl(struct ctx *c, uint32_t dm)
{
	alignas(8) uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    sizeof(struct ib_uverbs_attr)];
	struct ib_uverbs_ioctl_hdr *hd = ioctl_start(buf, sizeof(buf),
						     UVERBS_OBJECT_DM,
						     UVERBS_METHOD_DM_FREE, 1);

	dm_attr(&hd->attrs[0], UVERBS_ATTR_FREE_DM_HANDLE, 0, dm);
	return ioctl_exec(c, hd);
}

/*
 * Device memory, one allocation's life: DM_ALLOC with random lengths and
 * alignments (the driver's offset attribute sometimes missing or short),
 * an mmap() of the offset it gave of random length (sometimes executable,
 * which must fail), the pages read
 * (cleared: every word 0) and written through it when mapped whole, an
 * MR over it with random offset, length, access and PD, a free while the
 * MR holds it (EBUSY), then the MR, the DM and the mapping go in a random
 * order; now and then the DM (never the MR) is left to the context's
 * close, mapped or not.
 */
static int op_dm(struct rng *r, struct ctx *c)
{
	uint64_t len, off = UINT64_MAX, mlen = 0, whole;
	uint32_t align, dm = 0, mr = 0, pd, i;
	uint32_t *p = MAP_FAILED;
	bool real, mr_live = false, mapped, exec;
	int err, e2;

	len = rnd(r, 3) ? 1 + rnd(r, 5 * PAGE) : chance(r, 2) ?
	      1 + rnd(r, 300000) : interesting(r, 0);
	align = chance(r, 4) ? (uint32_t)interesting(r, 0) : rnd(r, 16);
	err = dm_alloc_ioctl(r, c, len, align, &dm, &off);
	if (err)
		return err;
	/* What the kernel gave: the length in whole pages. */
	whole = (len + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	if (chance(r, 4))
		mlen = whole;
	else if (rnd(r, 2))
		mlen = whole + PAGE;
	else
		mlen = 1 + rnd(r, 2 * PAGE);
	if (rnd(r, 4)) {
		exec = chance(r, 8);
		p = mmap(NULL, mlen, PROT_READ | PROT_WRITE |
			 (exec ? PROT_EXEC : 0), MAP_SHARED, c->fd, (off_t)off);
		/*
		 * The whole allocation: the one length that maps, once
		 * mmap() has rounded it up to pages; never executable.
		 */
		mapped = p != MAP_FAILED;
		if (mapped != (!exec &&
			       ((mlen + PAGE - 1) & ~(uint64_t)(PAGE - 1)) ==
			       whole))
			inconsistent("mmap of %llu bytes of a %llu-byte DM: %s",
				     (unsigned long long)mlen,
				     (unsigned long long)len,
				     p == MAP_FAILED ? strerror(errno) :
						       "mapped");
	}
	if (p != MAP_FAILED) {
		for (i = 0; i < mlen / 4; i++) {
			if (__atomic_load_n(&p[i], __ATOMIC_RELAXED)) {
				inconsistent("DM %u: word %u of a new allocation is %#x",
					     dm, i, p[i]);
				break;
			}
		}
		for (i = 0; i < mlen / 4; i += 1 + rnd(r, 64))
			__atomic_store_n(&p[i], (uint32_t)rnd64(r),
					 __ATOMIC_RELAXED);
	}
	/*
	 * The MR lives within this call only: the PD's users are not
	 * counted, and the other thread's destroy of it meanwhile gets the
	 * EBUSY the threaded mix tolerates.
	 */
	tlock(c);
	pd = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	e2 = dm_mr_ioctl(c, pd, dm, chance(r, 4) ? interesting(r, 0) :
			 rnd(r, len + 1), chance(r, 4) ? interesting(r, len) :
			 rnd(r, len + 1), access_flags(r) |
			 (rnd(r, 4) ? IB_UVERBS_ACCESS_ZERO_BASED : 0), &mr);
	mr_live = !e2;
	if (mr_live) {
		e2 = dm_free_ioctl(c, dm);
		if (e2 != -EBUSY)
			inconsistent("free of DM %u under an MR: %s", dm,
				     e2 ? strerror(-e2) : "succeeded");
		if (!e2)
			dm = UINT32_MAX;
		e2 = destroy_one(c, T_MR, mr);
		if (e2)
			inconsistent("dereg of DM MR %u: %s", mr, strerror(-e2));
	}
	if (p != MAP_FAILED && rnd(r, 2)) {
		munmap(p, mlen);
		p = MAP_FAILED;
	}
	if (dm != UINT32_MAX && !chance(r, 8)) {
		e2 = dm_free_ioctl(c, dm);
		if (e2)
			inconsistent("free of DM %u: %s", dm, strerror(-e2));
	}
	if (p != MAP_FAILED) {
		tlock(c);
		if (c->nmaps < MAX_MAPS) {
			c->maps[c->nmaps] = p;
			c->map_len[c->nmaps++] = mlen;
			p = MAP_FAILED;
		}
		tunlock(c);
		if (p != MAP_FAILED)
			munmap(p, mlen);
	}
	return 0;
}

/* A dma-buf of @len bytes from udmabuf; its descriptor or -errno. */
static int dmabuf_make(uint64_t len)
{
	struct udmabuf_create cr = { .flags = UDMABUF_FLAGS_CLOEXEC,
				     .size = len };
	int memfd, dev, fd = -1, err;

	memfd = memfd_create("kite-fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev >= 0 && !ftruncate(memfd, len) &&
	    !fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		cr.memfd = memfd;
		fd = ioctl(dev, UDMABUF_CREATE, &cr);
	}
	err = errno;
	if (dev >= 0)
		close(dev);
	close(memfd);
	return fd >= 0 ? fd : -err;
}

/* UVERBS_METHOD_REG_DMABUF_MR; the MR's handle in *@h. */
static int dmabuf_mr_ioctl(struct ctx *c, uint32_t pd, uint64_t off,
			   uint64_t len, uint64_t iova, int fd,
			   uint32_t access, uint32_t *h)
{
	alignas(8) uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    9 * sizeof(struct ib_uverbs_attr)];
	struct ib_uverbs_ioctl_hdr *hd = ioctl_start(buf, sizeof(buf),
						     UVERBS_OBJECT_MR,
						     UVERBS_METHOD_REG_DMABUF_MR, 9);
	uint32_t lkey, rkey;

	dm_attr(&hd->attrs[0], UVERBS_ATTR_REG_DMABUF_MR_HANDLE, 0, 0);
	dm_attr(&hd->attrs[1], UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, 0, pd);
	dm_attr(&hd->attrs[2], UVERBS_ATTR_REG_DMABUF_MR_OFFSET, 8, off);
	dm_attr(&hd->attrs[3], UVERBS_ATTR_REG_DMABUF_MR_LENGTH, 8, len);
	dm_attr(&hd->attrs[4], UVERBS_ATTR_REG_DMABUF_MR_IOVA, 8, iova);
	dm_attr(&hd->attrs[5], UVERBS_ATTR_REG_DMABUF_MR_FD, 4, (uint32_t)fd);
	dm_attr(&hd->attrs[6], UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, 4,
		access);
	dm_attr(&hd->attrs[7], UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, 4,
		(uintptr_t)&lkey);
	dm_attr(&hd->attrs[8], UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, 4,
		(uintptr_t)&rkey);
	return ioctl_create(c, hd, h);
}

/*
 * Memory a dma-buf exports: a udmabuf of 1 .. 16 pages and an MR over it
 * with random offset, length, I/O virtual address, access and PD, now and
 * then with another file (none, the verbs device's, a descriptor number
 * not open). No region outside the buffer, of length 0, or whose I/O
 * virtual address lies elsewhere in its page than its offset may be
 * registered. An MR lives within this call (as op_dm()'s) and is
 * deregistered with the buffer's descriptor closed before or after.
 */
static int op_dmabuf(struct rng *r, struct ctx *c)
{
	uint64_t size = PAGE * (1 + rnd(r, 16)), off, len, iova;
	uint32_t pd, mr = 0;
	int fd, use, err, e2;
	bool real;

	fd = dmabuf_make(size);
	if (fd < 0)
		return fd;
	off = chance(r, 4) ? interesting(r, 0) : rnd(r, size + 1);
	if (rnd(r, 2))
		off &= ~(uint64_t)(PAGE - 1);
	len = chance(r, 4) ? interesting(r, size) : rnd(r, size + 1);
	iova = rnd64(r);
	if (!chance(r, 8))
		iova = (iova & ~(uint64_t)(PAGE - 1)) | (off & (PAGE - 1));
	use = fd;
	if (chance(r, 8))
		use = rnd(r, 2) ? c->fd : rnd(r, 2) ? -1 : 1000 + (int)rnd(r, 1000);
	tlock(c);
	pd = pick(r, c, T_PD, NULL, &real);
	tunlock(c);
	err = dmabuf_mr_ioctl(c, pd, off, len, iova, use, access_flags(r),
			      &mr);
	if (!err && (use != fd || !len || off + len < off ||
		     off + len > size ||
		     (off & (PAGE - 1)) != (iova & (PAGE - 1))))
		inconsistent("dma-buf MR [%llu, +%llu) at %#llx of a %llu-byte buffer%s registered",
			     (unsigned long long)off, (unsigned long long)len,
			     (unsigned long long)iova,
			     (unsigned long long)size,
			     use != fd ? ", another file," : "");
	if (rnd(r, 2)) {
		close(fd);
		fd = -1;
	}
	if (!err) {
		e2 = destroy_one(c, T_MR, mr);
		if (e2)
			inconsistent("dereg of dma-buf MR %u: %s", mr,
				     strerror(-e2));
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/* Device values (prm_wqe.rst) the uapi header does not carry. */
#define WQE_F_SIGNALED		BIT(8)
#define WQE_F_INLINE		BIT(11)
#define DB_TYPE_SQ		1
#define DB_TYPE_RQ		2

/* Doorbell page access: uncached device memory, written once each. */
static void db_write64(struct ctx *c, uint32_t idx, uint64_t v)
{
	__atomic_store_n(&c->db[idx], v, __ATOMIC_RELEASE);
}

static void db_write32(struct ctx *c, uint32_t idx, uint32_t v)
{
	__atomic_store_n((uint32_t *)c->db + idx, v, __ATOMIC_RELEASE);
}

static uint64_t db_read64(struct ctx *c, uint32_t idx)
{
	return __atomic_load_n(&c->db[idx], __ATOMIC_ACQUIRE);
}

/* One SGE: a live MR's key over arena memory, mostly. */
static void put_sge(struct rng *r, struct ctx *c, uint8_t *p)
{
	uint32_t len = rnd(r, 512), key = (uint32_t)rnd64(r);
	uint64_t addr = buf_addr(r, c, PAGE, true);

	if (c->nobjs[T_MR] && !chance(r, 4))
		key = c->objs[T_MR][rnd(r, c->nobjs[T_MR])].num;
	memcpy(p, &len, 4);
	memcpy(p + 4, &key, 4);
	memcpy(p + 8, &addr, 8);
}

/*
 * Write a work request into a live QP's ring, as libkite would (or not
 * quite), and ring its doorbell: the device executes it.
 */
static int qp_post_raw(struct rng *r, struct ctx *c, bool sq)
{
	struct obj *o;
	uint32_t stride, slot, pi, i, nsge, w;
	uint8_t *wqe, *p, *end;
	uint64_t v;

	tlock(c);
	if (!c->nobjs[T_QP]) {
		tunlock(c);
		return SKIP;
	}
	o = &c->objs[T_QP][rnd(r, c->nobjs[T_QP])];
	if ((sq ? o->sq_log : o->rq_log) == 0 || o->racing) {
		tunlock(c);
		return SKIP;
	}
	stride = 1u << (sq ? o->sq_shift : o->rq_shift);
	pi = sq ? o->sq_pi : o->rq_pi;
	slot = pi & ((1u << (sq ? o->sq_log : o->rq_log)) - 1);
	wqe = (uint8_t *)(uintptr_t)((sq ? o->sq_addr : o->rq_addr) +
				     (uint64_t)slot * stride);
	if (wqe < c->arena || wqe + stride > c->arena + ARENA_SIZE) {
		tunlock(c);
		return SKIP;
	}
	end = wqe + stride;
	nsge = rnd(r, 3);
	if (chance(r, 6)) {
		rnd_fill(r, wqe, stride);
	} else if (sq) {
		memset(wqe, 0, stride);
		w = (chance(r, 8) ? (uint8_t)rnd64(r) : rnd(r, 10)) |
		    (rnd(r, 3) ? WQE_F_SIGNALED : 0) |
		    (chance(r, 8) ? WQE_F_INLINE : 0) | nsge << 16;
		memcpy(wqe, &w, 4);
		memcpy(wqe + 8, &(uint16_t){ (uint16_t)pi }, 2);
		p = wqe + 16;
		if (o->qp_type == IB_UVERBS_QPT_UD) {
			uint32_t qkey = 0x11111111;
			uint32_t qpn = c->objs[T_QP][rnd(r, c->nobjs[T_QP])].num;

			if (c->have_av)
				memcpy(p, c->av, KITE_IB_AV_SIZE);
			memcpy(p, &qpn, 4);
			memcpy(p + 4, &qkey, 4);
			p += KITE_IB_AV_SIZE;
		} else {
			/* remote address, rkey: in the arena, a live MR's */
			put_sge(r, c, p);
			memcpy(&v, p + 8, 8);
			memcpy(p, &v, 8);
			p += 16;
		}
		for (i = 0; i < nsge && p + 16 <= end; i++, p += 16)
			put_sge(r, c, p);
	} else {
		memset(wqe, 0, stride);
		memcpy(wqe, &nsge, 4);
		for (i = 0, p = wqe + 16; i < nsge && p + 16 <= end;
		     i++, p += 16)
			put_sge(r, c, p);
	}
	pi++;
	if (sq)
		o->sq_pi = pi;
	else
		o->rq_pi = pi;
	if (chance(r, 10))
		pi += rnd(r, 64);	/* beyond what was written */
	v = o->num | (uint64_t)(sq ? DB_TYPE_SQ : DB_TYPE_RQ) << 24 |
	    (uint64_t)(pi & 0xffff) << 32;
	tunlock(c);
	/* The WQE before the doorbell: a release store. */
	db_write64(c, 0, v);
	return 0;
}

/* A doorbell on the context's own page: well formed for our objects, or not. */
static int op_doorbell(struct rng *r, struct ctx *c)
{
	uint64_t v, obj = 0;
	uint32_t type = 1 + rnd(r, 4);
	bool real;
	struct obj o = {};

	if (!c->db)
		return -ENXIO;
	if (rnd(r, 2))
		return qp_post_raw(r, c, rnd(r, 3) != 0);
	tlock(c);
	if (type == 3)
		pick(r, c, T_CQ, &o, &real);
	else
		pick(r, c, T_QP, &o, &real);
	tunlock(c);
	obj = real ? o.num : rnd(r, 1024);
	v = obj | (uint64_t)type << 24 | (rnd64(r) & 0xffffULL) << 32;
	if (type == 3)
		v = obj | 3ULL << 24 | (uint64_t)rnd(r, 4) << 32 |
		    (uint64_t)rnd(r, 4) << 36;
	if (chance(r, 6))
		v = rnd64(r);
	if (chance(r, 10)) {
		/* 32-bit writes, which the device ignores. */
		db_write32(c, rnd(r, c->db_size / 4), (uint32_t)v);
	} else {
		db_write64(c, chance(r, 8) ? rnd(r, c->db_size / 8) : 0, v);
	}
	if (chance(r, 8))
		db_read64(c, rnd(r, c->db_size / 8));
	return 0;
}

/*
 * Read what the device's events became: async events (QP and CQ errors)
 * and completion events of CQs on the channel. Never blocks.
 */
static int op_events(struct rng *r, struct ctx *c)
{
	alignas(8) uint8_t buf[256];
	int fd = rnd(r, 2) ? c->async_fd : c->chan_fd;
	ssize_t n;

	if (fd < 0)
		return SKIP;
	n = read(fd, buf, chance(r, 8) ? rnd(r, 16) : sizeof(buf));
	return n < 0 ? -errno : 0;
}

/* ---- the two-thread race ------------------------------------------------- */

struct race {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int gen;		/* a new job */
	int go;			/* both spin on this */
	int arrived;
	int type;
	uint32_t handle;
	int helper_err;
	int helper_done;
	bool stop;
};

static struct race race = {
	.m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
};

/* Thread 0: destroy an object without users from both threads at once. */
static int op_race_destroy(struct rng *r, struct ctx *c)
{
	struct obj *o = NULL;
	int t = 0, i, err, herr;
	uint32_t h;

	tlock(c);
	for (i = 0; i < 8 && !o; i++) {
		t = rnd(r, T_COUNT);
		if (c->nobjs[t]) {
			o = &c->objs[t][rnd(r, c->nobjs[t])];
			if (o->users || o->racing)
				o = NULL;
		}
	}
	if (!o) {
		tunlock(c);
		return SKIP;
	}
	o->racing = true;
	h = o->handle;
	tunlock(c);

	pthread_mutex_lock(&race.m);
	race.type = t;
	race.handle = h;
	race.helper_done = 0;
	__atomic_store_n(&race.arrived, 0, __ATOMIC_SEQ_CST);
	race.gen++;
	pthread_cond_broadcast(&race.cv);
	pthread_mutex_unlock(&race.m);
	/* Both start together. */
	__atomic_add_fetch(&race.arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&race.arrived, __ATOMIC_SEQ_CST) < 2)
		;
	err = destroy_one(c, t, h);
	pthread_mutex_lock(&race.m);
	while (!race.helper_done)
		pthread_cond_wait(&race.cv, &race.m);
	herr = race.helper_err;
	pthread_mutex_unlock(&race.m);

	tlock(c);
	o = find(c, t, h);
	if (!err == !herr)
		inconsistent("racing destroys of %s %u: %s and %s",
			     otype_name[t], h, err ? strerror(-err) : "ok",
			     herr ? strerror(-herr) : "ok");
	if ((!err || !herr) && o)
		del_obj(c, t, o);
	else if (o)
		o->racing = false;
	tunlock(c);
	return err && herr ? err : 0;
}

static int run_op(struct rng *r, struct ctx *c, enum op op)
{
	switch (op) {
	case OP_QUERY_DEVICE: return op_query_device(r, c);
	case OP_QUERY_DEVICE_EX: return op_query_device_ex(r, c);
	case OP_QUERY_PORT: return op_query_port(r, c);
	case OP_GET_CONTEXT: return get_context(r, c, true);
	case OP_ALLOC_PD:
		return table_full(c, T_PD) ? SKIP : op_alloc_pd(r, c);
	case OP_DEALLOC_PD: return op_destroy(r, c, T_PD);
	case OP_REG_MR:
		return table_full(c, T_MR) ? SKIP : op_reg_mr(r, c);
	case OP_REREG_MR: return op_rereg_mr(r, c);
	case OP_DEREG_MR: return op_destroy(r, c, T_MR);
	case OP_COMP_CHANNEL: return op_comp_channel(r, c);
	case OP_CREATE_CQ:
		return table_full(c, T_CQ) ? SKIP : op_create_cq(r, c);
	case OP_CREATE_CQ_EX:
		return table_full(c, T_CQ) ? SKIP : op_create_cq_ex(r, c);
	case OP_RESIZE_CQ: return op_resize_cq(r, c);
	case OP_MODIFY_CQ: return op_modify_cq(r, c);
	case OP_POLL_CQ: return op_poll_cq(r, c);
	case OP_REQ_NOTIFY_CQ: return op_req_notify(r, c);
	case OP_DESTROY_CQ: return op_destroy(r, c, T_CQ);
	case OP_CREATE_QP:
		return table_full(c, T_QP) ? SKIP : op_create_qp(r, c);
	case OP_CREATE_QP_EX:
		return table_full(c, T_QP) ? SKIP : op_create_qp_ex(r, c);
	case OP_MODIFY_QP: return op_modify_qp(r, c, false);
	case OP_MODIFY_QP_EX: return op_modify_qp(r, c, true);
	case OP_QUERY_QP: return op_query_qp(r, c);
	case OP_DESTROY_QP: return op_destroy(r, c, T_QP);
	case OP_POST_SEND: return op_post_send(r, c);
	case OP_POST_RECV: return op_post_recv(r, c);
	case OP_CREATE_AH:
		return table_full(c, T_AH) ? SKIP : op_create_ah(r, c);
	case OP_DESTROY_AH: return op_destroy(r, c, T_AH);
	case OP_ALLOC_MW:
		return table_full(c, T_MW) ? SKIP : op_alloc_mw(r, c);
	case OP_DEALLOC_MW: return op_destroy(r, c, T_MW);
	case OP_MCAST: return op_mcast(r, c);
	case OP_SRQ: return op_srq(r, c);
	case OP_UNSUPPORTED: return op_unsupported(r, c);
	case OP_RAW_WRITE: return op_raw_write(r, c);
	case OP_IOCTL: return op_ioctl(r, c);
	case OP_IOCTL_QUERY: return op_ioctl_query(r, c);
	case OP_MMAP: return op_mmap(r, c);
	case OP_DOORBELL: return op_doorbell(r, c);
	case OP_EVENTS: return op_events(r, c);
	case OP_RACE_DESTROY: return op_race_destroy(r, c);
	case OP_DM: return op_dm(r, c);
	case OP_DMABUF: return op_dmabuf(r, c);
	case OP_OPEN_XRCD:
		return table_full(c, T_XRCD) ? SKIP : op_open_xrcd(r, c);
	case OP_CLOSE_XRCD: return op_destroy(r, c, T_XRCD);
	case OP_CREATE_XSRQ:
		return table_full(c, T_SRQ) ? SKIP : op_create_xsrq(r, c);
	case OP_DESTROY_SRQ: return op_destroy(r, c, T_SRQ);
	default: return -EINVAL;
	}
}

static enum op draw(struct rng *r, const unsigned int *w)
{
	unsigned int total = 0, x, i;

	for (i = 0; i < OP_COUNT; i++)
		total += w[i];
	x = rnd(r, total);
	for (i = 0; i < OP_COUNT; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return OP_QUERY_DEVICE;
}

/* ---- context set-up and teardown ----------------------------------------- */

static int ctx_open(struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->owner_checks = true;
	c->fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		fprintf(stderr, "open %s: %s\n", dev_path, strerror(errno));
		return -1;
	}
	c->async_fd = -1;
	c->chan_fd = -1;
	if (get_context(NULL, c, false)) {
		fprintf(stderr, "GET_CONTEXT failed\n");
		return -1;
	}
	fcntl(c->async_fd, F_SETFL, O_NONBLOCK);
	{
		struct ib_uverbs_create_comp_channel cmd = {};
		struct ib_uverbs_create_comp_channel_resp resp;

		if (!cmd_write(c, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cmd,
			       sizeof(cmd), true, NULL, 0, &resp, sizeof(resp))) {
			c->chan_fd = resp.fd;
			fcntl(c->chan_fd, F_SETFL, O_NONBLOCK);
		}
	}
	c->db = mmap(NULL, c->db_size, PROT_WRITE | PROT_READ, MAP_SHARED,
		     c->fd, (off_t)c->db_off);
	if (c->db == MAP_FAILED) {
		fprintf(stderr, "mmap of the doorbell page: %s\n",
			strerror(errno));
		c->db = NULL;
		return -1;
	}
	c->arena = mmap(NULL, ARENA_SIZE + PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->arena == MAP_FAILED)
		return -1;
	memset(c->arena, 0, ARENA_SIZE);
	c->ro_page = c->arena + ARENA_SIZE;
	mprotect(c->ro_page, PAGE, PROT_READ);
	return 0;
}

/* Destroy everything left, users first; every destroy must succeed. */
static void ctx_teardown(struct ctx *c)
{
	static const enum otype order[] = {
		T_AH, T_QP, T_MW, T_MR, T_SRQ, T_CQ, T_PD, T_XRCD,
	};
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		enum otype t = order[i];

		while (c->nobjs[t]) {
			struct obj *o = &c->objs[t][c->nobjs[t] - 1];

			err = t == T_QP ? mc_detach_all(c, o) : 0;
			if (err)
				inconsistent("teardown: detach of QP %u: %s",
					     o->handle, strerror(-err));
			err = destroy_one(c, t, o->handle);
			__atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED);
			if (err)
				inconsistent("teardown: destroy of %s %u: %s",
					     otype_name[t], o->handle,
					     strerror(-err));
			del_obj(c, t, o);
		}
	}
}

static void ctx_close(struct ctx *c)
{
	while (c->nmaps--)
		munmap(c->maps[c->nmaps], c->map_len[c->nmaps]);
	if (c->db)
		munmap((void *)c->db, c->db_size);
	close(c->fd);
	if (c->async_fd >= 0)
		close(c->async_fd);
	if (c->chan_fd >= 0)
		close(c->chan_fd);
	munmap(c->arena, ARENA_SIZE + PAGE);
}

/* ---- the runs ----------------------------------------------------------- */

static uint64_t main_ops;	/* thread 0's calls, to pace thread 1 */

static void fuzz_loop(struct rng *r, struct ctx *c, const unsigned int *w)
{
	while (budget()) {
		enum op op = draw(r, w);
		int err;

		__atomic_add_fetch(&main_ops, 1, __ATOMIC_RELAXED);
		err = run_op(r, c, op);
		/* Nothing to do it on: no system call was made. */
		if (err == SKIP)
			__atomic_sub_fetch(&st->calls, 1, __ATOMIC_RELAXED);
		else
			account(op, err);
		if (verbose > 1)
			printf("%s: %s\n", op_name[op], err ? strerror(-err) : "ok");
	}
}

struct helper_arg {
	struct ctx *c;
	uint64_t seed;
};

/*
 * Thread 1: work on thread 0's objects (never destroying them), and take
 * part in the races.
 */
static void *helper(void *p)
{
	static const unsigned int w[OP_COUNT] = {
		[OP_QUERY_PORT] = 1, [OP_RESIZE_CQ] = 3, [OP_MODIFY_CQ] = 2,
		[OP_POLL_CQ] = 2, [OP_REQ_NOTIFY_CQ] = 2, [OP_MODIFY_QP] = 4,
		[OP_QUERY_QP] = 3, [OP_POST_RECV] = 1, [OP_POST_SEND] = 1,
		[OP_DOORBELL] = 2, [OP_MMAP] = 1,
	};
	struct helper_arg *a = p;
	struct rng r = { .s = a->seed };
	uint64_t ops = 0;
	int gen = 0;

	for (;;) {
		pthread_mutex_lock(&race.m);
		if (race.stop) {
			pthread_mutex_unlock(&race.m);
			break;
		}
		if (race.gen != gen) {
			int t = race.type;
			uint32_t h = race.handle;

			gen = race.gen;
			pthread_mutex_unlock(&race.m);
			__atomic_add_fetch(&race.arrived, 1, __ATOMIC_SEQ_CST);
			while (__atomic_load_n(&race.arrived,
					       __ATOMIC_SEQ_CST) < 2)
				;
			race.helper_err = destroy_one(a->c, t, h);
			__atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED);
			pthread_mutex_lock(&race.m);
			race.helper_done = 1;
			pthread_cond_broadcast(&race.cv);
			pthread_mutex_unlock(&race.m);
			continue;
		}
		pthread_mutex_unlock(&race.m);
		/* At most one call for each of thread 0's. */
		if (__atomic_load_n(&done_local, __ATOMIC_RELAXED) ||
		    ops >= __atomic_load_n(&main_ops, __ATOMIC_RELAXED)) {
			usleep(100);
			continue;
		}
		ops++;
		{
			enum op op = draw(&r, w);
			int err = run_op(&r, a->c, op);

			if (err != SKIP) {
				__atomic_add_fetch(&st->calls, 1,
						   __ATOMIC_RELAXED);
				account(op, err);
			}
		}
	}
	return NULL;
}

/* One context: fuzz it, then destroy what is left (unless @leave). */
static int run_context(uint64_t s, bool leave)
{
	struct rng r = { .s = s * 0x9e3779b97f4a7c15ULL + 1 };
	unsigned int w[OP_COUNT];
	struct helper_arg ha;
	pthread_t th = 0;
	struct ctx c;

	memcpy(w, op_weight, sizeof(w));
	if (ctx_open(&c))
		return -1;
	if (nthreads > 1) {
		w[OP_RACE_DESTROY] = 4;
		ha.c = &c;
		ha.seed = s * 0x9e3779b97f4a7c15ULL + 2;
		/* Its modify_qp calls make the believed QP states guesses. */
		if (pthread_create(&th, NULL, helper, &ha))
			return -1;
	}
	fuzz_loop(&r, &c, w);
	if (th) {
		pthread_mutex_lock(&race.m);
		race.stop = true;
		pthread_mutex_unlock(&race.m);
		pthread_join(th, NULL);
	}
	if (leave)
		return 0;	/* objects, mappings and the fd die with us */
	ctx_teardown(&c);
	ctx_close(&c);
	return 0;
}

/*
 * --fork-exit N: N children, two at a time, each with a context of its
 * own and a share of the calls; each exits with its objects alive, and
 * every third is killed while it works.
 */
static int run_fork_exit(void)
{
	uint64_t per = max_calls / fork_exit + 1;
	int i, running = 0, status, bad = 0;
	pid_t kids[2] = { 0, 0 };

	for (i = 0; i < fork_exit && !st->done; i++) {
		pid_t pid;

		if (running == 2) {
			pid = wait(&status);
			running--;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
				bad++;
			kids[kids[0] == pid ? 0 : 1] = 0;
		}
		pid = fork();
		if (pid < 0) {
			perror("fork");
			break;
		}
		if (!pid) {
			/* Each child uses its share; the total stays bounded. */
			max_calls = __atomic_load_n(&st->calls, __ATOMIC_RELAXED) +
				    per;
			if (run_context(seed + 1000 * (i + 1), true))
				_exit(2);
			_exit(st->inconsistencies ? 3 : 0);
		}
		kids[kids[0] ? 1 : 0] = pid;
		running++;
		if (i % 3 == 2) {
			usleep(50000 + (i * 7919) % 200000);
			kill(pid, SIGKILL);
		}
	}
	while (running-- > 0) {
		if (wait(&status) > 0 && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 3)
			bad++;
	}
	return bad;
}

static void summary(double secs)
{
	int i, e;

	printf("%-20s %8s %8s  errnos\n", "command", "calls", "ok");
	for (i = 0; i < OP_COUNT; i++) {
		if (!st->op_calls[i])
			continue;
		printf("%-20s %8llu %8llu ", op_name[i],
		       (unsigned long long)st->op_calls[i],
		       (unsigned long long)st->op_ok[i]);
		for (e = 1; e < MAX_ERRNO; e++)
			if (st->op_errno[i][e])
				printf(" %s:%u", strerrorname_np(e) ?
				       strerrorname_np(e) : "?",
				       st->op_errno[i][e]);
		printf("\n");
	}
	if (st->calls > total_calls)
		st->calls = total_calls;
	printf("kite_uverbs_fuzz: seed %llu calls %llu objects %llu",
	       (unsigned long long)seed, (unsigned long long)st->calls,
	       (unsigned long long)st->objects);
	printf(" seconds %.1f calls/s %.0f inconsistencies %llu\n", secs,
	       secs > 0 ? st->calls / secs : 0.0,
	       (unsigned long long)st->inconsistencies);
}

static void print_usage(void)
{
	fprintf(stderr, "Usage: kite_uverbs_fuzz [-d DEVICE] [--seed S] [--calls N]\n");
	fprintf(stderr, "                        [--seconds S] [--threads 1|2]\n");
	fprintf(stderr, "                        [--fork-exit N] [-v]\n");
	exit(2);
}

static uint64_t env_num(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

int main(int argc, char **argv)
{
	int i, ret;
	double secs;

	seed = env_num("KITE_FUZZ_SEED", 1);
	max_calls = env_num("KITE_FUZZ_CALLS", 5000);
	max_seconds = env_num("KITE_FUZZ_SECONDS", 120);
	nthreads = env_num("KITE_FUZZ_THREADS", 1);
	fork_exit = env_num("KITE_FUZZ_FORK_EXIT", 0);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-v")) {
			verbose++;
			continue;
		}
		if (!v)
			print_usage();
		if (!strcmp(a, "-d"))
			snprintf(dev_name, sizeof(dev_name), "%s", v);
		else if (!strcmp(a, "--seed"))
			seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--calls"))
			max_calls = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seconds"))
			max_seconds = strtod(v, NULL);
		else if (!strcmp(a, "--threads"))
			nthreads = atoi(v);
		else if (!strcmp(a, "--fork-exit"))
			fork_exit = atoi(v);
		else
			print_usage();
		i++;
	}
	if (nthreads < 1 || nthreads > 2 || fork_exit < 0)
		print_usage();
	if (find_uverbs()) {
		fprintf(stderr, "no uverbs device for %s\n", dev_name);
		return 2;
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return 2;
	memset(st, 0, sizeof(*st));
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("kite_uverbs_fuzz: %s (%s), seed %llu, ", dev_name, dev_path,
	       (unsigned long long)seed);
	printf("at most %llu calls in %.0f s, %d thread(s), %d exiting children\n",
	       (unsigned long long)max_calls, max_seconds, nthreads,
	       fork_exit);
	total_calls = max_calls;
	if (fork_exit) {
		ret = run_fork_exit();
		if (ret)
			printf("%d children saw inconsistencies\n", ret);
	} else {
		ret = run_context(seed, false);
		if (ret) {
			fprintf(stderr, "could not open a context on %s\n",
				dev_name);
			return 2;
		}
	}
	secs = elapsed();
	summary(secs);
	return st->inconsistencies ? 1 : 0;
}
