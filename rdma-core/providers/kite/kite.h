/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Kite RDMA user-space provider: private definitions.
 *
 * Copyright (c) 2026 Kite
 */

#ifndef __KITE_H__
#define __KITE_H__

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <util/mmio.h>
#include <rdma/kite-abi.h>
#include <kernel-abi/kite-abi.h>

#include "kite_hw_user.h"

DECLARE_DRV_CMD(ukite_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT,
		kite_ib_alloc_ucontext_req, kite_ib_alloc_ucontext_resp);
DECLARE_DRV_CMD(ukite_create_cq, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		kite_ib_create_cq_req, kite_ib_create_cq_resp);
DECLARE_DRV_CMD(ukite_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		kite_ib_resize_cq_req, empty);
DECLARE_DRV_CMD(ukite_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		kite_ib_create_qp_req, kite_ib_create_qp_resp);
DECLARE_DRV_CMD(ukite_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, kite_ib_create_ah_resp);
DECLARE_DRV_CMD(ukite_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		kite_ib_create_srq_req, kite_ib_create_srq_resp);
DECLARE_DRV_CMD(ukite_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		kite_ib_create_srq_req, kite_ib_create_srq_resp);
DECLARE_DRV_CMD(ukite_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		kite_ib_modify_srq_req, empty);

static_assert(KITE_IB_AV_SIZE == sizeof(struct kite_wqe_ud),
	      "the AH response carries a UD address vector");

/*
 * kite_ib_alloc_ucontext_resp.comp_mask bits this provider understands: a
 * response with any other bit set comes from a kernel with a newer ABI
 * whose meaning this provider cannot know.
 */
#define KITE_ALLOC_UCONTEXT_RESP_COMP_MASK_KNOWN	KITE_IB_UCTX_RESP_STATUS_PAGE

/* Bounds of kite_ib_alloc_ucontext_resp.db_page_size. */
#define KITE_DB_PAGE_SIZE_MIN	4096U
#define KITE_DB_PAGE_SIZE_MAX	65536U

/*
 * ib_device_attr.fw_ver is the device's firmware version register
 * (KITE_REG_FW_VER, fields KITE_FW_VER_MAJOR/MINOR/PATCH).
 */

struct kite_device {
	struct verbs_device ibv_dev;
};

/*
 * A spinlock the provider takes around a queue, unless the application
 * promised to serialize the queue's use itself: a QP or SRQ created on a
 * parent domain with a thread domain (ibv_alloc_td()). Then need_lock is
 * false and the lock is never initialized or taken. (A CQ keeps its lock
 * for arming, which races with completion events: kite_cq.single_threaded.)
 */
struct kite_lock {
	pthread_spinlock_t lock;
	bool need_lock;
};

static inline int kite_lock_init(struct kite_lock *l, bool need_lock)
{
	l->need_lock = need_lock;
	if (need_lock && pthread_spin_init(&l->lock, PTHREAD_PROCESS_PRIVATE))
		return ENOMEM;
	return 0;
}

static inline void kite_lock_destroy(struct kite_lock *l)
{
	if (l->need_lock)
		pthread_spin_destroy(&l->lock);
}

static inline void kite_lock(struct kite_lock *l)
{
	if (l->need_lock)
		pthread_spin_lock(&l->lock);
}

static inline void kite_unlock(struct kite_lock *l)
{
	if (l->need_lock)
		pthread_spin_unlock(&l->lock);
}

/*
 * A thread domain (ibv_alloc_td()): the application's promise that the
 * objects created on a parent domain with it are used by one thread at a
 * time. Kite has no hardware resource to give it; it takes the locks away.
 */
struct kite_td {
	struct ibv_td ibv_td;
	/* 1 + the parent domains with this thread domain. */
	atomic_int refcount;
};

static inline struct kite_td *to_kite_td(struct ibv_td *td)
{
	return container_of(td, struct kite_td, ibv_td);
}

/*
 * Object number -> object, for CQEs: a two-level table over the 24-bit
 * numbers, the second level allocated on first use (kite_table_set()).
 */
#define KITE_TABLE_SHIFT	12
#define KITE_TABLE_TOP		(1U << (24 - KITE_TABLE_SHIFT))
#define KITE_TABLE_LEAF		(1U << KITE_TABLE_SHIFT)

struct kite_context {
	struct verbs_context ibv_ctx;
	/* This context's doorbell page, mapped write-only from cmd_fd. */
	void *db_page;
	size_t db_page_size;
	/*
	 * The device status page, mapped read-only (NULL from a kernel
	 * without one): its state reads 0 once the device has failed or gone
	 * away, and the context is then disassociated from it.
	 */
	const volatile struct kite_ib_dev_status *status;
	size_t status_size;
	/* The CQEs carry the real-time clock: wall-clock timestamps. */
	bool rtc;
	/*
	 * QPN -> QP (struct kite_qp), and SRQN -> XRC SRQ (struct
	 * kite_srq), whose receive CQEs name the SRQ and a target QP this
	 * context may not have. Written under table_mutex; poll_cq reads them
	 * without the mutex (a QP or SRQ is destroyed only once no CQ is
	 * polled for it, as verbs require).
	 */
	void **qp_table[KITE_TABLE_TOP];
	void **srq_table[KITE_TABLE_TOP];
	pthread_mutex_t table_mutex;
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain()): a
 * user-space object over a protection domain, whose handle it shares, and
 * whose allocators, if it has them, provide the rings of the CQs, QPs and
 * SRQs created with it.
 */
struct kite_pd {
	struct ibv_pd ibv_pd;
	/* A parent domain's protection domain; NULL for a protection domain. */
	struct kite_pd *protection_domain;
	/* A parent domain's thread domain, or NULL. */
	struct kite_td *td;
	/*
	 * 1 + the parent domains over a protection domain, or 1 + the rings
	 * of a parent domain: neither can go while it is above 1.
	 */
	atomic_int refcount;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

static inline struct kite_pd *to_kite_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct kite_pd, ibv_pd);
}

/*
 * Device memory (ibv_alloc_dm()): whole pages of the device's memory,
 * mapped write-combining. length is what the application asked for, and
 * the bound of its copies; map_len the mapping's, in whole pages.
 */
struct kite_dm {
	struct verbs_dm vdm;
	uint8_t *va;
	size_t map_len;
	uint64_t length;
};

static inline struct kite_dm *to_kite_dm(struct ibv_dm *dm)
{
	return container_of(dm, struct kite_dm, vdm.dm);
}

/* The parent domain PD is, or NULL. */
static inline struct kite_pd *kite_parent_domain(struct ibv_pd *pd)
{
	struct kite_pd *kpd = pd ? to_kite_pd(pd) : NULL;

	return kpd && kpd->protection_domain ? kpd : NULL;
}

/*
 * Whether the objects created on @pd (a protection or parent domain, or
 * NULL) need the provider's locks: not under a thread domain.
 */
static inline bool kite_pd_need_lock(struct ibv_pd *pd)
{
	struct kite_pd *pdom = kite_parent_domain(pd);

	return !(pdom && pdom->td);
}

/*
 * The resource_type a parent domain's allocator is called with: which
 * ring it provides.
 */
enum kite_res_type {
	KITE_RES_CQ = 1,
	KITE_RES_SQ = 2,
	KITE_RES_RQ = 3,
	KITE_RES_SRQ = 4,
};

/* A CQE's timestamps: the device clock and the real-time clock. */
struct kite_wc_ts {
	uint64_t clock;
	uint64_t rtc;
};

/* A ring of 2^log_depth entries in memory the device reads or writes. */
struct kite_ring {
	void *buf;
	size_t size;
	uint32_t log_depth;
	uint32_t mask;		/* 2^log_depth - 1 */
	uint32_t entry_shift;
	/*
	 * The parent domain the ring was made for, and whether its allocator
	 * gave the buffer (then its free takes it back).
	 */
	struct kite_pd *pdom;
	bool pdom_buf;
	enum kite_res_type res_type;
};

/*
 * A poll in progress: the CQE at the consumer counter, the owner bit of a
 * new CQE in this pass over the ring, and the QP of the last CQE (CQEs come
 * in runs of one QP). The end of a pass is found by comparing the pointer
 * with the slot past the ring's last, and the consumer counter is taken
 * from the pointer (kite_cq_cursor_ci()). ibv_poll_cq() keeps the cursor
 * in locals: the read barrier after each CQE's owner bit would otherwise
 * have the compiler load them from the CQ again for every CQE. The
 * extended poll API keeps it in the CQ from start_poll to end_poll.
 * kite_cq_cursor_start() takes it from the CQ, locked;
 * kite_cq_cursor_end() gives back what moved. The last QP is forgotten by
 * kite_cq_clean() when that QP is reset or destroyed, so never one that is
 * gone.
 */
struct kite_cq_cursor {
	const struct kite_cqe *cqe;	/* at the consumer counter */
	const struct kite_cqe *first;	/* the ring's first slot */
	const struct kite_cqe *end;	/* past its last slot */
	uint32_t base;			/* the consumer counter at first */
	uint32_t phase;
	struct kite_qp *qp;		/* or NULL */
	uint32_t qpn;			/* qp's number; KITE_QPN_NONE: none */
};

struct kite_cq {
	struct verbs_cq vcq;
	struct kite_context *ctx;
	struct kite_ring ring;
	struct kite_cq_dbrec *dbrec;
	uint32_t cqn;
	/* CQEs consumed (free-running; the device uses 24 bits). */
	uint32_t ci;
	/* The QP of the last CQE polled (kite_cq_qp()), or NULL. */
	struct kite_qp *last_qp;
	/* The arm sequence number: advanced for each completion event. */
	uint8_t arm_sn;
	/*
	 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED, or created on a parent domain
	 * with a thread domain: the application serializes polling.
	 */
	bool single_threaded;
	pthread_spinlock_t lock;
	/*
	 * ibv_cq_ex polling, between start_poll and end_poll: ci when the
	 * poll started, the cursor (cq.c), and the completion the read_*
	 * functions report: its opcode, and the rest of a successful send's,
	 * or receive's from its QP's own RQ, read from its CQE when asked
	 * (cur_cqe; its QP is the cursor's): the device writes no slot again
	 * before end_poll reports it consumed. Any other is parsed whole into
	 * cur_wc and cur_ts, with cur_cqe NULL.
	 */
	uint32_t poll_ci;
	struct kite_cq_cursor pcur;
	const struct kite_cqe *cur_cqe;
	enum ibv_wc_opcode cur_opcode;
	struct ibv_wc cur_wc;
	struct kite_wc_ts cur_ts;
};

/*
 * A work queue, with one writer per counter: pi is written by the poster,
 * under the queue's lock; ci by the poller of the queue's CQ, under the
 * CQ's lock (the application's, for a single-threaded CQ), not the
 * queue's. Each side reads the other's counter with kite_wq_pi() or
 * kite_wq_ci().
 */
struct kite_wq {
	struct kite_ring ring;
	/* WQEs posted and completed (free-running; 16 bits go to the device). */
	uint32_t pi;
	uint32_t ci;
	uint32_t max_sge;
	uint64_t *wr_id;
	/* Send queues: each WQE's ibv_wc_opcode. */
	uint8_t *opcode;
	/* Serializes the posters (struct kite_lock); pi is written under it. */
	struct kite_lock lock;
};

/* A shared receive queue (srq.c). */
struct kite_srq {
	struct verbs_srq vsrq;
	/* An XRC SRQ: in the context's srq_table, cleaned from its CQ. */
	bool xrc;
	struct kite_ring ring;
	uint32_t srqn;
	uint32_t max_sge;
	/* WQEs posted (free-running; 16 bits go to the device). */
	uint32_t pi;
	/* WQEs posted and not yet completed. */
	uint32_t outstanding;
	/*
	 * Tags 0 .. ntags - 1 exist: at least the depth (a resize to a
	 * smaller ring keeps them, outstanding WQEs may carry any).
	 */
	uint32_t ntags;
	/* Per tag: the wr_id, and whether a WQE with the tag is outstanding. */
	uint64_t *wr_id;
	uint8_t *busy;
	/* A stack of the free tags. */
	uint16_t *free;
	uint32_t nfree;
	/*
	 * Serializes posting, completing and resizing (struct kite_lock):
	 * a resize replaces the ring and the tag tables.
	 */
	struct kite_lock lock;
};

/*
 * A send WQE being written into its SQ slot (send.c): by ibv_post_send()
 * for one work request, or by the ibv_wr_*() calls of the extended QP API
 * between the call that opens it (ibv_wr_send(), ...) and the next one.
 * The control segment in the slot keeps the rest (the data's kind and
 * size).
 */
struct kite_send_wqe {
	uint8_t *wqe;		/* the slot; NULL when none is open */
	uint16_t data_off;	/* where SGEs or inline data go; 0: none */
	uint8_t op;		/* KITE_WQE_OP_* */
	uint8_t flags;		/* KITE_SWQE_* */
};

#define KITE_SWQE_INLINE_OK	BIT(0)	/* the opcode can carry inline data */
#define KITE_SWQE_AV		BIT(1)	/* a UD send: an address vector first */
/*
 * What the WQE still lacks or must still be checked for when it is closed:
 * one test of the mask closes a complete WQE.
 */
#define KITE_SWQE_NEED_AV	BIT(2)	/* the address vector, not written yet */
#define KITE_SWQE_NEED_ATOMIC	BIT(3)	/* one SGE of 8 bytes, checked at close */
#define KITE_SWQE_NEED_SRQN	BIT(4)	/* XRC: the remote SRQ, not given yet */
#define KITE_SWQE_PENDING	(KITE_SWQE_NEED_AV | KITE_SWQE_NEED_ATOMIC | \
				 KITE_SWQE_NEED_SRQN)

struct kite_qp {
	struct verbs_qp vqp;
	struct kite_wq sq;
	struct kite_wq rq;		/* unused with an SRQ */
	struct kite_srq *srq;
	uint32_t max_inline;
	/*
	 * Set at creation for the send path: the context, the doorbell's
	 * address and the SQ doorbell's QPN and type, KITE_WQE_F_SIGNALED if
	 * every WQE is signaled, a UD QP, and whether one SGE fits a WQE of
	 * any of the QP's operations.
	 */
	struct kite_context *ctx;
	void *db;
	uint64_t sq_db;
	uint32_t sig_all;
	bool ud;
	bool sq_sge_ok;
	/* An XRC initiator: each request with a remote end names its SRQ. */
	bool xrc;
	/* An XRC target (created or opened here): no queues, no CQs. */
	bool xrc_tgt;
	/*
	 * The extended QP API, under sq.lock from ibv_wr_start() to
	 * ibv_wr_complete() or ibv_wr_abort(): the WQE being written, the
	 * producer index at ibv_wr_start() and the first error met (then
	 * nothing more is written, and ibv_wr_complete() posts nothing).
	 */
	struct kite_send_wqe wr_cur;
	uint32_t wr_start_pi;
	int wr_err;
};

struct kite_ah {
	struct ibv_ah ibv_ah;
	struct kite_wqe_ud av;
};

static inline struct kite_device *to_kite_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct kite_device, ibv_dev.device);
}

static inline struct kite_context *to_kite_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct kite_context, ibv_ctx.context);
}

static inline struct kite_cq *to_kite_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct kite_cq, vcq.cq);
}

static inline struct kite_cq *to_kite_cq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct kite_cq, vcq.cq_ex);
}

static inline struct kite_qp *to_kite_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct kite_qp, vqp.qp);
}

static inline struct kite_srq *to_kite_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct kite_srq, vsrq.srq);
}

static inline struct kite_ah *to_kite_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct kite_ah, ibv_ah);
}

/* Entry @n of @table (read without table_mutex: struct kite_context). */
static inline void *kite_table_get(void **const *table, uint32_t n)
{
	void **leaf;

	if (n > KITE_OBJ_MASK)
		return NULL;
	leaf = table[n >> KITE_TABLE_SHIFT];
	return leaf ? leaf[n & (KITE_TABLE_LEAF - 1)] : NULL;
}

int kite_table_set(struct kite_context *ctx, void ***table, uint32_t n,
		   void *obj);

/* Not a QP number (24 bits): no QP. */
#define KITE_QPN_NONE	UINT32_MAX

/* The QP of QPN @qpn. */
static inline struct kite_qp *kite_find_qp(struct kite_context *ctx,
					   uint32_t qpn)
{
	return kite_table_get(ctx->qp_table, qpn);
}

/* The XRC SRQ of SRQN @srqn. */
static inline struct kite_srq *kite_find_srq(struct kite_context *ctx,
					     uint32_t srqn)
{
	return kite_table_get(ctx->srq_table, srqn);
}

/*
 * True once the device has failed or this context was disassociated from
 * it: nothing more will complete, so an empty CQ is an error, not a wait.
 */
static inline bool kite_dev_dead(struct kite_context *ctx)
{
	return ctx->status && ctx->status->state != KITE_IB_DEV_STATE_ALIVE;
}

/* The address of the doorbell register in the context's doorbell page. */
static inline void *kite_db_addr(struct kite_context *ctx)
{
	return (uint8_t *)ctx->db_page + KITE_DB_OFFSET;
}

/* Write a doorbell to the context's doorbell page. */
static inline void kite_ring_db(struct kite_context *ctx, uint64_t val)
{
	mmio_write64_le(kite_db_addr(ctx), htole64(val));
}

int kite_ring_alloc(struct kite_ring *ring, uint32_t log_depth,
		    uint32_t entry_shift, struct kite_pd *pdom,
		    enum kite_res_type res_type);
void kite_ring_free(struct kite_ring *ring);

/* The slot of free-running index @idx. */
static inline uint32_t kite_ring_slot(const struct kite_ring *ring,
				      uint32_t idx)
{
	return idx & ring->mask;
}

static inline void *kite_ring_entry(struct kite_ring *ring, uint32_t idx)
{
	return (uint8_t *)ring->buf +
	       ((size_t)kite_ring_slot(ring, idx) << ring->entry_shift);
}

/* The poster's view of the consumer counter: the slots before it are free. */
static inline uint32_t kite_wq_ci(const struct kite_wq *wq)
{
	return __atomic_load_n(&wq->ci, __ATOMIC_ACQUIRE);
}

/* The poller moves the consumer counter once it has read the slots' data. */
static inline void kite_wq_set_ci(struct kite_wq *wq, uint32_t ci)
{
	__atomic_store_n(&wq->ci, ci, __ATOMIC_RELEASE);
}

/* The poller's view of the producer counter. */
static inline uint32_t kite_wq_pi(const struct kite_wq *wq)
{
	return __atomic_load_n(&wq->pi, __ATOMIC_RELAXED);
}

static inline void kite_wq_set_pi(struct kite_wq *wq, uint32_t pi)
{
	__atomic_store_n(&wq->pi, pi, __ATOMIC_RELAXED);
}

/* Called by the poster. */
static inline bool kite_wq_full(const struct kite_wq *wq)
{
	return ((wq->pi - kite_wq_ci(wq)) & KITE_WQ_IDX_MASK) >=
	       1U << wq->ring.log_depth;
}

static inline uint64_t kite_qp_db(uint32_t qpn, uint32_t type, uint32_t pi)
{
	return FIELD_PREP(KITE_DB_OBJ, qpn) | FIELD_PREP(KITE_DB_TYPE, type) |
	       FIELD_PREP(KITE_DB_PI, pi & KITE_WQ_IDX_MASK);
}

/* Write @num_sge data segments; the caller checked that they fit. */
static inline void kite_write_sges(struct kite_wqe_sge *seg,
				   const struct ibv_sge *sg, size_t num_sge)
{
	size_t i;

	for (i = 0; i < num_sge; i++) {
		seg[i].length = htole32(sg[i].length);
		seg[i].lkey = htole32(sg[i].lkey);
		seg[i].addr = htole64(sg[i].addr);
	}
}

/* cq.c */
struct ibv_cq *kite_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *kite_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
int kite_destroy_cq(struct ibv_cq *ibcq);
int kite_resize_cq(struct ibv_cq *ibcq, int cqe);
int kite_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
int kite_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
void kite_cq_clean(struct kite_cq *cq, uint32_t qpn, struct kite_srq *srq);
int kite_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
void kite_cq_event(struct ibv_cq *ibcq);

/* qp.c */
struct ibv_qp *kite_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *kite_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr);
struct ibv_qp *kite_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int kite_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int kite_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int kite_destroy_qp(struct ibv_qp *ibqp);
int kite_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
struct ibv_ah *kite_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int kite_destroy_ah(struct ibv_ah *ibah);

/* send.c */
int kite_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int kite_check_send_ops(struct ibv_context *ibctx, enum ibv_qp_type type,
			uint64_t send_ops_flags);
int kite_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
void kite_set_wr_ops(struct kite_qp *qp, uint64_t send_ops_flags);

/* srq.c */
struct ibv_srq *kite_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
struct ibv_srq *kite_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int kite_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int kite_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int kite_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int kite_destroy_srq(struct ibv_srq *ibsrq);
int kite_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
bool kite_srq_complete(struct kite_srq *srq, uint16_t tag, uint64_t *wr_id);

#endif /* __KITE_H__ */
