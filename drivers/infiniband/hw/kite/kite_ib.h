/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite RoCEv2 RDMA driver: private definitions.
 *
 * File map:
 *   kite_ib_main.c  auxiliary probe/remove, ib_device registration, device,
 *                   port and GID verbs
 *   kite_ib_cmd.c   the command channel client (cookies, waits, fatal)
 *   kite_ib_eq.c    event queues, IRQ handlers, tasklets, async events
 *   kite_ib_hwq.c   queue memory and page buffer lists (kernel and user)
 *   kite_ib_cq.c    CQ verbs, poll_cq, req_notify_cq
 *   kite_ib_qp.c    QP verbs, post_send, post_recv
 *   kite_ib_wqe.c   WQE builders and MODIFY_QP attribute translation
 *   kite_ib_srq.c   SRQ verbs, post_srq_recv
 *   kite_ib_mr.c    PD, MR, MW and AH verbs
 *   kite_ib_uctx.c  user contexts, doorbell pages, mmap
 *   kite_ib_res.c   hardware counters, restrack driver details
 *   kite_ib_counter.c QP-bound counters (rdma statistic qp)
 *   kite_ib_mcast.c UD multicast: attach_mcast, detach_mcast
 *   kite_ib_guard.c bad device data: reporting, QP/CQ isolation, reset
 *   kite_ib_dm.c    device memory: alloc_dm, dealloc_dm, its page pool
 *   kite_ib_*_test.c KUnit suites (CONFIG_INFINIBAND_KITE_KUNIT_TEST)
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _KITE_IB_H_
#define _KITE_IB_H_

#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/kite/auxdev.h>
#include <linux/kite/kite_hw.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/kite-abi.h>

struct ib_dmah;
struct kite_ib_dev;

/* ------------------------------------------------------------------ */
/* Queue memory and page buffer lists (kite_ib_hwq.c)                  */
/* ------------------------------------------------------------------ */

/**
 * struct kite_ib_dma_page - one 4 KiB page of coherent DMA memory
 * @va: kernel address
 * @dma: bus address
 */
struct kite_ib_dma_page {
	void *va;
	dma_addr_t dma;
};

/**
 * struct kite_ib_page_ops - how the PBL builder gets its 4 KiB pages
 * @alloc: allocate one zeroed page; return 0 or -ENOMEM
 * @free: free a page @alloc returned
 *
 * The driver uses coherent DMA memory; the KUnit tests use fakes that can
 * fail on demand.
 */
struct kite_ib_page_ops {
	int (*alloc)(void *ctx, struct kite_ib_dma_page *page);
	void (*free)(void *ctx, struct kite_ib_dma_page *page);
};

/**
 * struct kite_ib_pbl - a page buffer list the device walks
 * @level: KITE_PBL_LEVEL_0, _1 or _2
 * @npages: number of data pages described
 * @page_shift: log2 of the data page size
 * @root: level 0: unused; level 1: the PTE page; level 2: the PDE page
 * @ptes: level 2: the PTE pages, DIV_ROUND_UP(@npages, 512) of them
 * @num_ptes: number of entries in @ptes
 * @desc: what commands name: address (the data page at level 0, else
 *	@root's), @npages and the level/page-shift configuration
 */
struct kite_ib_pbl {
	unsigned int level;
	u32 npages;
	unsigned int page_shift;
	struct kite_ib_dma_page root;
	struct kite_ib_dma_page *ptes;
	u32 num_ptes;
	struct kite_pbl desc;
};

/**
 * struct kite_ib_hwq - a ring of fixed-size entries in device-visible memory
 * @depth: number of entries, a power of two
 * @entry_shift: log2 of the entry size
 * @pages: kernel queues: the 4 KiB coherent pages holding the ring
 * @umem: user queues: the pinned user buffer
 * @pbl: the page buffer list describing the ring
 */
struct kite_ib_hwq {
	u32 depth;
	unsigned int entry_shift;
	struct kite_ib_dma_page *pages;
	struct ib_umem *umem;
	struct kite_ib_pbl pbl;
};

int kite_ib_pbl_level(u32 npages);
int kite_ib_pbl_build(struct kite_ib_pbl *pbl, const dma_addr_t *addrs,
		      u32 npages, unsigned int page_shift, bool queue,
		      const struct kite_ib_page_ops *ops, void *ctx);
void kite_ib_pbl_free(struct kite_ib_pbl *pbl,
		      const struct kite_ib_page_ops *ops, void *ctx);
int kite_ib_hwq_alloc(struct kite_ib_dev *dev, struct kite_ib_hwq *q,
		      u32 depth, unsigned int entry_shift);
int kite_ib_hwq_alloc_user(struct kite_ib_dev *dev, struct kite_ib_hwq *q,
			   u64 va, u64 len, u32 depth,
			   unsigned int entry_shift);
void kite_ib_hwq_free(struct kite_ib_dev *dev, struct kite_ib_hwq *q);
int kite_ib_hwq_alloc_pages(struct kite_ib_hwq *q, u32 depth,
			    unsigned int entry_shift,
			    const struct kite_ib_page_ops *ops, void *ctx);
void kite_ib_hwq_free_pages(struct kite_ib_hwq *q,
			    const struct kite_ib_page_ops *ops, void *ctx);
void *kite_ib_hwq_entry(struct kite_ib_hwq *q, u32 index);
int kite_ib_umem_pbl(struct kite_ib_dev *dev, struct ib_umem *umem,
		     u64 iova, struct kite_ib_pbl *pbl);
extern const struct kite_ib_page_ops kite_ib_dma_page_ops;

/* ------------------------------------------------------------------ */
/* Command channel (kite_ib_cmd.c)                                     */
/* ------------------------------------------------------------------ */

/**
 * enum kite_ib_cmdq_state - the command channel's state machine
 * @KITE_CMDQ_DOWN: not set up, or torn down; commands fail with -ENODEV
 * @KITE_CMDQ_POLLING: up; completions are polled (before EQ0 exists and
 *	during teardown)
 * @KITE_CMDQ_EVENTS: up; completions arrive as CMD_DONE EQEs on EQ0
 * @KITE_CMDQ_FATAL: the device stopped answering or failed; commands fail
 *	fast with -EIO, destroy commands succeed without the device
 */
enum kite_ib_cmdq_state {
	KITE_CMDQ_DOWN,
	KITE_CMDQ_POLLING,
	KITE_CMDQ_EVENTS,
	KITE_CMDQ_FATAL,
};

/**
 * struct kite_ib_cmd - one command and its outcome
 * @opcode: KITE_CMD_*
 * @in: input, @in_len bytes (copied into the entry's payload)
 * @in_len: at most KITE_CMD_PAYLOAD_SIZE
 * @out: output buffer, @out_len bytes, or NULL
 * @out_len: at most KITE_CMD_PAYLOAD_SIZE unless @out_dma is set
 * @out_dma: bus address of a DMA output buffer of @out_len bytes (then
 *	@out is not used), or 0
 * @status: KITE_CMD_STATUS_CODE of the completion
 * @syndrome: KITE_CMD_STATUS_SYNDROME of the completion
 * @result: the completion's result word (object number, count)
 */
struct kite_ib_cmd {
	u8 opcode;
	const void *in;
	u16 in_len;
	void *out;
	u16 out_len;
	dma_addr_t out_dma;
	u8 status;
	u16 syndrome;
	u32 result;
};

/* A command's cookie: its ring entry and a generation number. */
#define KITE_IB_COOKIE_SLOT		GENMASK(7, 0)
#define KITE_IB_COOKIE_GEN		GENMASK(31, 8)

struct kite_ib_cmd_waiter;

/**
 * struct kite_ib_cmdq_ops - how the command channel reaches the device
 * @ring_alloc: allocate @size bytes of zeroed, 4 KiB aligned memory the
 *	device can read and write; store its bus address in @dma
 * @ring_free: free what @ring_alloc returned
 * @enable: program the ring's address and log2 depth and enable the
 *	channel; 0 or a negative errno if the device refused
 * @disable: disable the channel (the device forgets PI and CI)
 * @doorbell: write the producer counter @pi; called with
 *	&kite_ib_cmdq.lock held, after the entries are written
 * @reset: ask for a device reset after a fatal error; any context
 * @timeout: read the longest time, in ms, the device takes to complete a
 *	command (KITE_RDMA_CMD_TIMEOUT) into @ms; 0 or -EIO if the value
 *	is not one the device may report
 *
 * The driver uses coherent DMA memory and the RDMA register block
 * (kite_ib_cmdq_hw_ops); the KUnit tests use a fake device.
 */
struct kite_ib_cmdq_ops {
	void *(*ring_alloc)(struct kite_ib_dev *dev, size_t size,
			    dma_addr_t *dma);
	void (*ring_free)(struct kite_ib_dev *dev, size_t size, void *ring,
			  dma_addr_t dma);
	int (*enable)(struct kite_ib_dev *dev, dma_addr_t dma,
		      unsigned int log_depth);
	void (*disable)(struct kite_ib_dev *dev);
	void (*doorbell)(struct kite_ib_dev *dev, u32 pi);
	void (*reset)(struct kite_ib_dev *dev);
	int (*timeout)(struct kite_ib_dev *dev, unsigned int *ms);
};

extern const struct kite_ib_cmdq_ops kite_ib_cmdq_hw_ops;

/**
 * struct kite_ib_cmdq - the command channel
 * @ops: device access (hardware, or a test fake)
 * @ring: the command ring, @depth entries of coherent DMA memory
 * @ring_dma: its bus address
 * @depth: ring entries, a power of two
 * @lock: protects @pi, @ci, @gen, @waiters, @cookies, @state and the ring
 *	entries the driver owns; taken from process context and from the EQ0
 *	tasklet (CMD_DONE), so always with interrupts disabled
 * @slots: bounds the commands in flight to @depth; a permit is returned
 *	when @ci passes the entry, so entries are reused in ring order
 * @pi: next entry to post (free-running)
 * @ci: entries given back by their submitters (free-running)
 * @gen: generation counter mixed into cookies (KITE_IB_COOKIE_GEN)
 * @waiters: per ring entry, the waiter registered for it or NULL
 * @cookies: per ring entry, the cookie last posted in it
 * @state: enum kite_ib_cmdq_state; written under @lock, read locklessly
 *	with READ_ONCE() for fast-fail checks
 * @timeout_ms: how long a command may take before the device is declared
 *	dead
 */
struct kite_ib_cmdq {
	const struct kite_ib_cmdq_ops *ops;
	struct kite_cmd *ring;
	dma_addr_t ring_dma;
	u32 depth;
	spinlock_t lock;	/* see @lock above */
	struct semaphore slots;
	u32 pi;
	u32 ci;
	u32 gen;
	struct kite_ib_cmd_waiter **waiters;
	u32 *cookies;
	enum kite_ib_cmdq_state state;
	unsigned int timeout_ms;
};

int kite_ib_cmdq_init(struct kite_ib_dev *dev);
int kite_ib_cmdq_init_ops(struct kite_ib_dev *dev,
			  const struct kite_ib_cmdq_ops *ops,
			  unsigned int log_depth);
void kite_ib_cmdq_set_state(struct kite_ib_dev *dev,
			    enum kite_ib_cmdq_state state);
void kite_ib_cmdq_destroy(struct kite_ib_dev *dev);
int kite_ib_cmd_exec(struct kite_ib_dev *dev, struct kite_ib_cmd *cmd);
int kite_ib_cmd_destroy(struct kite_ib_dev *dev, u8 opcode, u32 obj);
void kite_ib_cmd_complete(struct kite_ib_dev *dev, u32 cookie, u32 status);
int kite_ib_cmd_errno(u8 status);
void kite_ib_cmd_fatal(struct kite_ib_dev *dev, const char *why);

/* ------------------------------------------------------------------ */
/* Event queues (kite_ib_eq.c)                                         */
/* ------------------------------------------------------------------ */

#define KITE_IB_EQ_LOG_DEPTH		10	/* 1024 EQEs per EQ */
#define KITE_IB_EQ_BUDGET		64	/* EQEs per tasklet run */
/*
 * The longest a completion EQ's interrupt may be held by the device's
 * adaptive moderation (KITE_FEAT_EQ_MODERATION): it holds only while
 * completions keep coming, so an idle or one-request-at-a-time queue is
 * not delayed (prm_eq.rst, "Interrupt moderation").
 */
#define KITE_IB_EQ_MOD_MAX_US		4000

/**
 * struct kite_ib_eq - an event queue and its interrupt
 * @dev: the device
 * @hwq: the EQE ring
 * @eqn: the device's number (0: the control EQ)
 * @ci: EQEs consumed (free-running)
 * @vector: MSI-X vector index given to the device
 * @irq: Linux IRQ number
 * @tasklet: walks the EQEs; scheduled by the hard IRQ handler, and used
 *	through kite_ib_eq_bh_init/schedule/quiesce() alone (kite_ib_eq.c)
 * @name: IRQ name
 */
struct kite_ib_eq {
	struct kite_ib_dev *dev;
	struct kite_ib_hwq hwq;
	u32 eqn;
	u32 ci;
	unsigned int vector;
	int irq;
	struct tasklet_struct tasklet;
	char name[32];
};

int kite_ib_eqs_create(struct kite_ib_dev *dev);
void kite_ib_eqs_destroy(struct kite_ib_dev *dev);
struct kite_ib_eq *kite_ib_comp_eq(struct kite_ib_dev *dev, int comp_vector);
bool kite_ib_eqe_valid(const struct kite_eqe *eqe, u32 ci,
		       unsigned int log_depth);
u64 kite_ib_eq_doorbell(u32 eqn, u32 ci, bool arm);
void kite_ib_eq_dispatch(struct kite_ib_dev *dev, struct kite_ib_eq *eq,
			 const struct kite_eqe *eqe);

/**
 * struct kite_ib_ref - how EQE and CQE dispatch find a CQ or QP safely
 * @refcount: the device's object table holds one reference; each lookup
 *	holds one while it uses the object
 * @free: completed when the last reference is dropped
 */
struct kite_ib_ref {
	refcount_t refcount;
	struct completion free;
};

int kite_ib_ref_publish(struct xarray *xa, u32 num, struct kite_ib_ref *ref);
struct kite_ib_ref *kite_ib_ref_get(struct xarray *xa, u32 num);
void kite_ib_ref_put(struct kite_ib_ref *ref);
void kite_ib_ref_unpublish(struct xarray *xa, u32 num, struct kite_ib_ref *ref);
int kite_ib_ref_destroy(struct kite_ib_dev *dev, struct xarray *xa,
			struct kite_ib_ref *ref, u8 opcode, u32 num);

/* ------------------------------------------------------------------ */
/* Verbs objects                                                       */
/* ------------------------------------------------------------------ */

/**
 * enum kite_ib_mmap_type - what an mmap entry maps
 * @KITE_IB_MMAP_DB: the context's doorbell page (BAR2, uncached, write)
 * @KITE_IB_MMAP_STATUS: the device status page (memory, read-only)
 * @KITE_IB_MMAP_DM: a device memory allocation (BAR4, write-combining)
 */
enum kite_ib_mmap_type {
	KITE_IB_MMAP_DB,
	KITE_IB_MMAP_STATUS,
	KITE_IB_MMAP_DM,
};

/**
 * struct kite_ib_mmap_entry - what a user context may map
 * @rdma_entry: the core's entry: its offset and length
 * @address: bus or physical address of the first page
 * @type: what it maps; KITE_IB_MMAP_DM pages go back to the device
 *	memory pool when the entry is freed (no mapping of them is left)
 */
struct kite_ib_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	phys_addr_t address;
	enum kite_ib_mmap_type type;
};

/**
 * struct kite_ib_ucontext - a user context
 * @ibuc: the core's context
 * @uctx: the device's context number, also its doorbell page in BAR2
 * @db_entry: the doorbell page's mmap entry
 * @status_entry: the device status page's mmap entry
 */
struct kite_ib_ucontext {
	struct ib_ucontext ibuc;
	u32 uctx;
	struct rdma_user_mmap_entry *db_entry;
	struct rdma_user_mmap_entry *status_entry;
};

struct kite_ib_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/**
 * struct kite_ib_xrcd - an XRC domain
 * @ibxrcd: the core's XRC domain, which the core shares between the
 *	processes that open it through one file
 * @xrcdn: the device's number (ALLOC_XRCD)
 */
struct kite_ib_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

/**
 * struct kite_ib_dm - device memory a user context allocated
 * @ibdm: the core's DM; its length is what the user asked for
 * @entry: the mmap entry of its pages, which owns them: they go back to
 *	the pool once the DM is freed and no process maps them any more
 * @offset: where it starts in BAR4
 * @uctx: the owner's device context number
 */
struct kite_ib_dm {
	struct ib_dm ibdm;
	struct kite_ib_mmap_entry *entry;
	u64 offset;
	u32 uctx;
};

/**
 * struct kite_ib_cq - a completion queue
 * @ibcq: the core's CQ
 * @hwq: the CQE ring (kernel or user memory)
 * @cqn: the device's number
 * @eq: the completion EQ it reports to
 * @dbrec: kernel CQs: the doorbell record (coherent DMA)
 * @dbrec_dma: its bus address
 * @dbrec_umem: user CQs: the pinned page holding the doorbell record
 * @ci: kernel CQs: CQEs consumed (free-running, 24 bits used)
 * @arm_sn: the cmd_sn of the next arm request (2 bits)
 * @lock: serialises poll_cq and req_notify_cq on a kernel CQ
 * @ref: EQ dispatch holds a reference while calling the handler
 * @resize_mutex: user CQs: serialises resizes, which replace @hwq
 */
struct kite_ib_cq {
	struct ib_cq ibcq;
	struct kite_ib_hwq hwq;
	u32 cqn;
	struct kite_ib_eq *eq;
	struct kite_cq_dbrec *dbrec;
	dma_addr_t dbrec_dma;
	struct ib_umem *dbrec_umem;
	u32 ci;
	u8 arm_sn;
	spinlock_t lock;	/* see @lock above */
	struct kite_ib_ref ref;
	struct mutex resize_mutex;	/* see @resize_mutex above */
};

/**
 * struct kite_ib_wq - a send or receive queue of a QP
 * @hwq: the WQE ring
 * @pi: WQEs posted (free-running, 16 bits sent to the device)
 * @ci: WQEs completed
 * @wr_id: kernel QPs: the wr_id of each posted WQE
 * @opcode: kernel SQs: the KITE_WQE_OP_* of each posted WQE
 * @len: kernel RQs: the bytes each posted WQE can take
 * @max_sge: SGEs a WQE can hold
 * @lock: serialises posting on a kernel QP
 */
struct kite_ib_wq {
	struct kite_ib_hwq hwq;
	u32 pi;
	u32 ci;
	u64 *wr_id;
	u8 *opcode;
	u32 *len;
	u32 max_sge;
	spinlock_t lock;	/* see @lock above */
};

/**
 * struct kite_ib_qp - a queue pair
 * @ibqp: the core's QP
 * @qpn: the device's number
 * @type: KITE_QPT_*
 * @sq: send queue
 * @rq: receive queue
 * @state: the state last set (the device enforces transitions)
 * @max_inline: inline data a send WQE can hold
 * @sq_sig_all: every send WQE is signalled
 * @uctx: owning user context number, 0 for kernel QPs
 * @ref: EQ and CQ dispatch hold a reference while using the QP
 */
struct kite_ib_qp {
	struct ib_qp ibqp;
	u32 qpn;
	u32 type;
	struct kite_ib_wq sq;
	struct kite_ib_wq rq;
	enum ib_qp_state state;
	u32 max_inline;
	bool sq_sig_all;
	u32 uctx;
	struct kite_ib_ref ref;
};

/**
 * struct kite_ib_srq - a shared receive queue
 * @ibsrq: the core's SRQ
 * @hwq: the WQE ring (kernel or user memory)
 * @srqn: the device's number
 * @uctx: owning user context number, 0 for kernel SRQs
 * @max_sge: SGEs a WQE can hold
 * @resize_mutex: serialises resizes (the swap of @hwq) and the queries
 *	that read @hwq.depth
 * @next: kernel SRQs, while a resize's MODIFY_SRQ runs: the new ring,
 *	which every post also writes (NULL otherwise)
 * @pi: kernel SRQs: WQEs posted (free-running, 16 bits sent to the device)
 * @outstanding: kernel SRQs: WQEs posted and not yet completed
 * @ntags: kernel SRQs: tags 0 .. @ntags - 1 exist (at least the depth; a
 *	resize to a smaller ring keeps them, as WQEs may hold any of them)
 * @wr_id: kernel SRQs: per tag, the wr_id of the WQE carrying it
 * @len: kernel SRQs: per tag, the bytes the WQE can take
 * @busy: kernel SRQs: the tags of outstanding WQEs
 * @free: kernel SRQs: a stack of the free tags, @nfree of them
 * @nfree: entries in @free
 * @lock: serialises posting and completing on a kernel SRQ, and the
 *	changes of @next, the tag tables and @hwq by a resize
 * @ref: EQ dispatch holds a reference while calling the event handler
 *
 * The device takes WQEs in ring order but they complete on the CQs of
 * different QPs in any order: a WQE carries a tag, an index of @wr_id,
 * which the CQE returns (prm_srq.rst). Keeping at most depth WQEs
 * outstanding keeps the ring slot at @pi free; during a resize, at most
 * the smaller of the two depths.
 */
struct kite_ib_srq {
	struct ib_srq ibsrq;
	struct kite_ib_hwq hwq;
	u32 srqn;
	u32 uctx;
	u32 max_sge;
	struct mutex resize_mutex;	/* see @resize_mutex above */
	struct kite_ib_hwq *next;
	u32 pi;
	u32 outstanding;
	u32 ntags;
	u64 *wr_id;
	u32 *len;
	unsigned long *busy;
	u16 *free;
	u32 nfree;
	spinlock_t lock;	/* see @lock above */
	struct kite_ib_ref ref;
};

/**
 * struct kite_ib_mr - a memory region
 * @ibmr: the core's MR
 * @umem: user MRs: the pinned memory
 * @pbl: the page buffer list given to the device (REG_MR)
 * @frpl: fast-registration MRs: a level-1 PTE page map_mr_sg fills
 * @max_pages: fast-registration MRs: capacity of @frpl
 * @npages: fast-registration MRs: pages mapped by the last map_mr_sg
 * @access: user MRs: the IB_ACCESS_* flags of the registration (REREG_MR
 *	keeps them when it changes something else)
 * @key: the key the device gave at creation, which DEREG_MR takes (a
 *	fast-registration MR's keys change with IB_WR_REG_MR work requests,
 *	which may be flushed instead of executed)
 */
struct kite_ib_mr {
	struct ib_mr ibmr;
	u32 key;
	struct ib_umem *umem;
	struct kite_ib_pbl pbl;
	struct kite_ib_dma_page frpl;
	u32 max_pages;
	u32 npages;
	int access;
};

/**
 * struct kite_ib_mw - a memory window (user space only: the kernel has no
 *	memory window verbs)
 * @ibmw: the core's MW; its rkey is the key ALLOC_MW returned, which user
 *	space changes with each bind work request (the device's key)
 * @key: the key ALLOC_MW returned, which DEALLOC_MW takes
 */
struct kite_ib_mw {
	struct ib_mw ibmw;
	u32 key;
};

/**
 * struct kite_ib_ah - an address handle: the address vector UD WQEs carry
 * @ibah: the core's AH
 * @av: the address vector, in the device's format
 */
struct kite_ib_ah {
	struct ib_ah ibah;
	struct kite_wqe_ud av;
};

/* ------------------------------------------------------------------ */
/* The device                                                          */
/* ------------------------------------------------------------------ */

/*
 * The answer of QUERY_DEVICE (struct kite_cmd_query_device_out, kite_hw.h),
 * field for field, in CPU byte order.
 */
struct kite_ib_caps {
	u64 node_guid;
	u64 max_mr_size;
	u64 page_size_cap;
	u32 fw_ver;
	u32 hw_rev;
	u32 vendor_id;
	u32 vendor_part_id;
	u32 max_qp;
	u32 max_qp_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_sge_rd;
	u32 max_inline;
	u32 max_cq;
	u32 max_cqe;
	u32 max_mr;
	u32 max_pd;
	u32 max_uctx;
	u32 max_eq;
	u32 max_eqe;
	u32 max_qp_rd_atom;
	u32 max_qp_init_rd_atom;
	u32 max_fast_reg_pages;
	u32 gid_tbl_len;
	u32 features;
	u16 max_cq_moderation_count;
	u16 max_cq_moderation_period;
	u32 local_ca_ack_delay;
	u32 max_srq;
	u32 max_srq_wr;
	u32 max_srq_sge;
	u32 max_cntr;
	u32 max_mcast_grp;
	u32 max_mcast_qp_attach;
	u32 max_mcast_total_attach;
	u32 max_mw;
	u32 max_dm_size;
	u32 max_xrcd;
};

/**
 * enum kite_ib_bad - classes of bad device data (kite_ib_guard.c)
 * @KITE_IB_BAD_CQE_CQN: a CQE for a QP that does not complete on its CQ
 * @KITE_IB_BAD_CQE_QPN: a CQE for a QP that does not exist
 * @KITE_IB_BAD_CQE_WQE_IDX: a CQE for a WQE that is not outstanding
 * @KITE_IB_BAD_CQE_OPCODE: a CQE or WQE opcode the driver does not know
 * @KITE_IB_BAD_CQE_LEN: a byte count beyond the posted buffers
 * @KITE_IB_BAD_CQE_OWNER: a CQE slot the owner rule skipped
 * @KITE_IB_BAD_CQE_SYNDROME: an error CQE with an unknown syndrome
 * @KITE_IB_BAD_EQE_TYPE: an EQE of unknown type
 * @KITE_IB_BAD_EQE_OBJ: an EQE naming an unknown object
 * @KITE_IB_BAD_CMD_COOKIE: a command completion with an unknown cookie
 * @KITE_IB_BAD_CMD_STATUS: a command completion with an unknown status
 * @KITE_IB_BAD_CMD_RESULT: a command result out of range
 * @KITE_IB_BAD_COUNT: number of classes
 */
enum kite_ib_bad {
	KITE_IB_BAD_CQE_CQN,
	KITE_IB_BAD_CQE_QPN,
	KITE_IB_BAD_CQE_WQE_IDX,
	KITE_IB_BAD_CQE_OPCODE,
	KITE_IB_BAD_CQE_LEN,
	KITE_IB_BAD_CQE_OWNER,
	KITE_IB_BAD_CQE_SYNDROME,
	KITE_IB_BAD_EQE_TYPE,
	KITE_IB_BAD_EQE_OBJ,
	KITE_IB_BAD_CMD_COOKIE,
	KITE_IB_BAD_CMD_STATUS,
	KITE_IB_BAD_CMD_RESULT,
	KITE_IB_BAD_COUNT
};

/*
 * Hardware counters: the device's (KITE_STAT_*), the driver's, then the QP
 * counters (KITE_QP_STAT_*). A port shows those of the default counter set
 * 0; a bound counter (rdma statistic qp) the QP counters of its set alone.
 */
#define KITE_IB_STAT_BAD		KITE_STAT_COUNT
#define KITE_IB_STAT_QPS_ISOLATED	(KITE_IB_STAT_BAD + KITE_IB_BAD_COUNT)
#define KITE_IB_STAT_CQS_ISOLATED	(KITE_IB_STAT_QPS_ISOLATED + 1)
#define KITE_IB_STAT_QP			(KITE_IB_STAT_CQS_ISOLATED + 1)
#define KITE_IB_STAT_COUNT		(KITE_IB_STAT_QP + KITE_QP_STAT_COUNT)

/**
 * struct kite_ib_dev - the RDMA side of one Kite function
 * @ibdev: the core's device
 * @kadev: what kite_en handed over; valid while bound
 * @dmadev: the PCI function's device, for DMA mappings
 * @regs: the RDMA register block
 * @db: the kernel's doorbell page
 * @caps: the device's capabilities
 * @cmdq: the command channel
 * @eqs: EQ0 (control) then the completion EQs
 * @num_eqs: entries in @eqs
 * @next_comp_eq: round-robin counter for CQs without a comp_vector
 * @cq_xa: CQN to &kite_ib_cq.ref, for EQE dispatch (kite_ib_ref_get())
 * @qp_xa: QPN to &kite_ib_qp.ref, likewise
 * @srq_xa: SRQN to &kite_ib_srq.ref, likewise
 * @running: probe completed and remove has not started; only then does a
 *	device failure request a reset
 * @fatal: the device failed; IB_EVENT_DEVICE_FATAL was dispatched
 * @isolate_work: moves the QPs marked for isolation to the error state
 * @dead_work: on a dead device, gives every kernel CQ a completion event so
 *	that its consumer polls the flushed work requests (kite_ib_dead_kick())
 * @bad: bad device data seen, by class (drv_bad_* counters)
 * @qps_isolated: QPs isolated because of bad device data
 * @cqs_isolated: CQs reported in error because of bad device data
 * @status: the device status page user contexts map read-only (struct
 *	kite_ib_dev_status of the uverbs ABI): ALIVE until the device fails
 *	or goes away
 * @uctx_disassociated: user contexts disassociated from the device when
 *	it was unregistered with them open
 * @dm_pool: the free pages of the device memory (kite_ib_dm.c), NULL
 *	without device memory; it has its own lock (genalloc's)
 * @dm: the device memory, mapped write-combining, for clearing it
 * @dm_size: bytes of device memory offered, a multiple of PAGE_SIZE
 * @dm_base: what @dm_pool's addresses are above the BAR4 offsets
 */
struct kite_ib_dev {
	struct ib_device ibdev;
	struct kite_aux_dev *kadev;
	struct device *dmadev;
	void __iomem *regs;
	void __iomem *db;
	struct kite_ib_caps caps;
	struct kite_ib_cmdq cmdq;
	struct kite_ib_eq *eqs;
	unsigned int num_eqs;
	atomic_t next_comp_eq;
	struct xarray cq_xa;
	struct xarray qp_xa;
	struct xarray srq_xa;
	bool running;
	bool fatal;
	struct work_struct isolate_work;
	struct work_struct dead_work;
	atomic64_t bad[KITE_IB_BAD_COUNT];
	atomic64_t qps_isolated;
	atomic64_t cqs_isolated;
	struct kite_ib_dev_status *status;
	atomic_t uctx_disassociated;
	struct gen_pool *dm_pool;
	void __iomem *dm;
	u32 dm_size;
	unsigned long dm_base;
};

static inline struct kite_ib_dev *to_kdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct kite_ib_dev, ibdev);
}

static inline struct kite_ib_cq *to_kcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct kite_ib_cq, ibcq);
}

static inline struct kite_ib_qp *to_kqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct kite_ib_qp, ibqp);
}

/*
 * The device completes nothing more: it failed (or its command channel is
 * gone). Kernel work requests are then flushed by the driver itself
 * (kite_ib_poll_cq()), and QPs go to ERR and RESET without a command.
 */
static inline bool kite_ib_dead(struct kite_ib_dev *dev)
{
	enum kite_ib_cmdq_state state = READ_ONCE(dev->cmdq.state);

	return state == KITE_CMDQ_FATAL || state == KITE_CMDQ_DOWN;
}

/* A CQ by number, with a reference dropped by kite_ib_cq_put(); or NULL. */
static inline struct kite_ib_cq *kite_ib_cq_get(struct kite_ib_dev *dev,
						u32 cqn)
{
	struct kite_ib_ref *ref = kite_ib_ref_get(&dev->cq_xa, cqn);

	return ref ? container_of(ref, struct kite_ib_cq, ref) : NULL;
}

static inline void kite_ib_cq_put(struct kite_ib_cq *cq)
{
	kite_ib_ref_put(&cq->ref);
}

/* A QP by number, with a reference dropped by kite_ib_qp_put(); or NULL. */
static inline struct kite_ib_qp *kite_ib_qp_get(struct kite_ib_dev *dev,
						u32 qpn)
{
	struct kite_ib_ref *ref = kite_ib_ref_get(&dev->qp_xa, qpn);

	return ref ? container_of(ref, struct kite_ib_qp, ref) : NULL;
}

static inline void kite_ib_qp_put(struct kite_ib_qp *qp)
{
	kite_ib_ref_put(&qp->ref);
}

static inline struct kite_ib_srq *to_ksrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct kite_ib_srq, ibsrq);
}

static inline struct kite_ib_xrcd *to_kxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct kite_ib_xrcd, ibxrcd);
}

static inline struct kite_ib_pd *to_kpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct kite_ib_pd, ibpd);
}

static inline struct kite_ib_mr *to_kmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct kite_ib_mr, ibmr);
}

static inline struct kite_ib_dm *to_kdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct kite_ib_dm, ibdm);
}

static inline struct kite_ib_mw *to_kmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct kite_ib_mw, ibmw);
}

static inline struct kite_ib_ah *to_kah(struct ib_ah *ibah)
{
	return container_of(ibah, struct kite_ib_ah, ibah);
}

static inline struct kite_ib_ucontext *to_kuctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct kite_ib_ucontext, ibuc);
}

/* The device's context number for a verbs object's owner, 0 for kernel. */
static inline u32 kite_ib_uctx_of(struct ib_udata *udata)
{
	struct kite_ib_ucontext *uc;

	if (!udata)
		return 0;
	uc = rdma_udata_to_drv_context(udata, struct kite_ib_ucontext, ibuc);
	return uc ? uc->uctx : 0;
}

/* Write a 64-bit doorbell to the kernel's doorbell page. */
static inline void kite_ib_ring_db(struct kite_ib_dev *dev, u64 val)
{
	writeq(val, dev->db + KITE_DB_OFFSET);
}

static inline u32 kite_ib_rd(struct kite_ib_dev *dev, u32 reg)
{
	return readl(dev->regs + reg);
}

static inline void kite_ib_wr(struct kite_ib_dev *dev, u32 reg, u32 val)
{
	writel(val, dev->regs + reg);
}

/* kite_ib_cq.c */
u32 kite_ib_cq_max_cqe(const struct kite_ib_dev *dev);
int kite_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct uverbs_attr_bundle *attrs);
int kite_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int kite_ib_modify_cq(struct ib_cq *ibcq, u16 count, u16 period);
int kite_ib_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
			   struct ib_udata *udata);
int kite_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
void kite_ib_cq_clean(struct kite_ib_cq *cq, u32 qpn, struct kite_ib_srq *srq);
int kite_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
enum ib_wc_status kite_ib_syndrome_to_wc_status(u8 syndrome);
enum kite_ib_bad kite_ib_cqe_check_wc(const struct ib_wc *wc, u32 synd,
				      u32 posted_len);
int kite_ib_cqe_to_wc(const struct kite_cqe *cqe, struct ib_wc *wc,
		      u64 wr_id, struct ib_qp *qp);
bool kite_ib_cqe_valid(const struct kite_cqe *cqe, u32 ci,
		       unsigned int log_depth);
u32 kite_ib_cq_arm_word(u32 ci, u8 sn, bool solicited);
u64 kite_ib_cq_arm_doorbell(u32 cqn, u8 sn, bool solicited);
void kite_ib_cq_event(struct kite_ib_cq *cq);
u64 kite_ib_cq_arm(struct kite_ib_cq *cq, bool solicited);

/* kite_ib_qp.c */
int kite_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		      struct ib_udata *udata);
int kite_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int attr_mask, struct ib_udata *udata);
int kite_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int attr_mask, struct ib_qp_init_attr *init_attr);
int kite_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void kite_ib_qp_set_state(struct kite_ib_qp *qp, enum ib_qp_state state);
int kite_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int kite_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
int kite_ib_wq_stride(bool send, u32 type, u32 max_sge, u32 max_inline);
u64 kite_ib_qp_db(u32 qpn, u32 type, u32 pi);
bool kite_ib_wq_full(u32 pi, u32 ci, u32 depth);
int kite_ib_send_wqe_opcode(enum ib_wr_opcode opcode, u32 qp_type);
int kite_ib_wc_opcode(u8 wqe_op);
int kite_ib_build_send_wqe(void *wqe, size_t wqe_size,
			   const struct ib_send_wr *wr, u16 idx, u32 qp_type,
			   u32 max_inline, bool sig_all);
int kite_ib_build_recv_wqe(void *wqe, size_t wqe_size,
			   const struct ib_recv_wr *wr, u32 max_sge);
int kite_ib_qp_attr_to_cmd(const struct ib_qp_attr *attr, int attr_mask,
			   struct kite_cmd_modify_qp *cmd);
int kite_ib_av_to_cmd(const struct rdma_ah_attr *ah,
		      struct kite_cmd_modify_qp *cmd);

/* kite_ib_srq.c */
int kite_ib_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int kite_ib_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int kite_ib_create_srq(struct ib_srq *ibsrq,
		       struct ib_srq_init_attr *init_attr,
		       struct ib_udata *udata);
int kite_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata);
int kite_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int kite_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int kite_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
bool kite_ib_srq_complete(struct kite_ib_srq *srq, u16 tag, u64 *wr_id,
			  u32 *len);
void kite_ib_eq_srq_event(struct kite_ib_dev *dev, u32 srqn,
			  enum ib_event_type type);
int kite_ib_srq_stride(u32 max_sge);
u64 kite_ib_srq_db(u32 srqn, u32 pi);

/* kite_ib_mr.c */
int kite_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int kite_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *kite_ib_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *kite_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access,
				  struct ib_dmah *dmah,
				  struct ib_udata *udata);
struct ib_mr *kite_ib_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
					 u64 length, u64 iova, int fd,
					 int access, struct ib_dmah *dmah,
					 struct uverbs_attr_bundle *attrs);
struct ib_mr *kite_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg);
int kite_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset);
void kite_ib_rereg_mr_in(u32 key, int flags, u32 pdn, int access, u64 iova,
			 u64 length, const struct kite_pbl *pbl,
			 struct kite_cmd_rereg_mr *in);
struct ib_mr *kite_ib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata);
int kite_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *kite_ib_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
				struct ib_dm_mr_attr *attr,
				struct uverbs_attr_bundle *attrs);
int kite_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		      struct ib_udata *udata);
int kite_ib_destroy_ah(struct ib_ah *ibah, u32 flags);
int kite_ib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int kite_ib_dealloc_mw(struct ib_mw *ibmw);
int kite_ib_alloc_mw_in(enum ib_mw_type type, u32 pdn, u32 uctx, u32 tag,
			struct kite_cmd_alloc_mw *in);
u32 kite_ib_access_to_hw(int ib_access);
u32 kite_ib_mr_access_to_hw(int ib_access);

/* kite_ib_uctx.c */
int kite_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void kite_ib_dealloc_ucontext(struct ib_ucontext *ibuc);
int kite_ib_query_ucontext(struct ib_ucontext *ibuc,
			   struct uverbs_attr_bundle *attrs);
void kite_ib_disassociate_ucontext(struct ib_ucontext *ibuc);
int kite_ib_status_alloc(struct kite_ib_dev *dev);
void kite_ib_status_free(struct kite_ib_dev *dev);
void kite_ib_status_set_dead(struct kite_ib_dev *dev);
int kite_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void kite_ib_mmap_free(struct rdma_user_mmap_entry *entry);
struct kite_ib_mmap_entry *
kite_ib_mmap_insert(struct ib_ucontext *ibuc, enum kite_ib_mmap_type type,
		    phys_addr_t address, size_t len);
extern const struct uapi_definition kite_ib_uapi_defs[];

/* kite_ib_dm.c */
int kite_ib_dm_init(struct kite_ib_dev *dev);
void kite_ib_dm_fini(struct kite_ib_dev *dev);
int kite_ib_dm_pages(u32 dm_size, u64 length, u32 log_align, size_t *size,
		     size_t *align);
void kite_ib_dm_release(struct kite_ib_dev *dev,
			struct kite_ib_mmap_entry *entry);
struct ib_dm *kite_ib_alloc_dm(struct ib_device *ibdev,
			       struct ib_ucontext *ibuc,
			       struct ib_dm_alloc_attr *attr,
			       struct uverbs_attr_bundle *attrs);
int kite_ib_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
extern const struct uapi_definition kite_ib_dm_uapi_defs[];

/* kite_ib_mcast.c */
int kite_ib_mcast_in(struct kite_cmd_mcast *in, u32 qpn,
		     const union ib_gid *gid);
int kite_ib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int kite_ib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/* kite_ib_res.c */
int kite_ib_stats_fill(const __le64 *out, u32 count, u64 *value);
struct rdma_hw_stats *kite_ib_alloc_stats(void);
int kite_ib_cntr_query(struct kite_ib_dev *dev, u32 cntr, u64 *value);
int kite_ib_cntr_alloc(struct kite_ib_dev *dev, u32 *cntr);
int kite_ib_cntr_free(struct kite_ib_dev *dev, u32 cntr);
int kite_ib_cntr_set_qp(struct kite_ib_dev *dev, u32 qpn, u32 cntr);
void kite_ib_set_res_ops(struct kite_ib_dev *dev);

/* kite_ib_counter.c (absent where the core has no driver counter objects) */
void kite_ib_set_counter_ops(struct kite_ib_dev *dev);

/* kite_ib_main.c */
void kite_ib_dispatch_fatal(struct kite_ib_dev *dev);

/* kite_ib_guard.c; QPs to isolate are marked in &kite_ib_dev.qp_xa */
#define KITE_IB_XA_ISOLATE	XA_MARK_1

const char *kite_ib_bad_name(enum kite_ib_bad what);
void kite_ib_bad(struct kite_ib_dev *dev, enum kite_ib_bad what);
u32 kite_ib_recv_wr_len(const struct ib_recv_wr *wr);
bool kite_ib_cmd_result_ok(const struct kite_ib_caps *caps, u8 opcode,
			   u32 result, u16 out_len);
bool kite_ib_syndrome_known(u8 syndrome);
void kite_ib_qp_isolate(struct kite_ib_dev *dev, u32 qpn);
void kite_ib_cq_isolate(struct kite_ib_dev *dev, struct kite_ib_cq *cq);
void kite_ib_eq_kick_cqs(struct kite_ib_dev *dev, struct kite_ib_eq *eq);
void kite_ib_dead_kick(struct kite_ib_dev *dev);
void kite_ib_guard_init(struct kite_ib_dev *dev);
void kite_ib_guard_stop(struct kite_ib_dev *dev);

#endif /* _KITE_IB_H_ */
