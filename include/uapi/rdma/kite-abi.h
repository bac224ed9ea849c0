/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Kite RDMA user-space ABI: the driver-specific parts of the uverbs
 * commands, shared by kite_ib and the rdma-core provider (libkite).
 *
 * Every structure has a comp_mask and explicit reserved fields; the kernel
 * rejects non-zero reserved fields and unknown comp_mask bits, so they can be
 * given meaning later without a new ABI version.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef KITE_ABI_USER_H
#define KITE_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * The fw_ver of a query_device response is the device's firmware version
 * register: major in bits 31:24, minor in 23:16, patch in 15:0.
 */

/* Bumped on any incompatible change. */
#define KITE_UVERBS_ABI_VERSION		1

struct kite_ib_alloc_ucontext_req {
	__u32 comp_mask;
	__u32 reserved;
};

/* kite_ib_alloc_ucontext_resp.comp_mask */
enum kite_ib_alloc_ucontext_resp_mask {
	/* status_page_size and status_mmap_offset are valid */
	KITE_IB_UCTX_RESP_STATUS_PAGE = 1 << 0,
};

/* kite_ib_alloc_ucontext_resp.caps */
enum kite_ib_uctx_caps {
	/*
	 * The CQEs carry the real-time clock (the NIC's PTP hardware clock,
	 * set to the system's time): wall-clock completion timestamps.
	 */
	KITE_IB_UCTX_CAP_RTC = 1 << 0,
};

struct kite_ib_alloc_ucontext_resp {
	__u32 comp_mask;
	/* Size of a doorbell page, in bytes. */
	__u32 db_page_size;
	/* mmap() offset of this context's doorbell page. */
	__aligned_u64 db_mmap_offset;
	/*
	 * KITE_IB_UCTX_RESP_STATUS_PAGE: the device status page (struct
	 * kite_ib_dev_status at its start), to be mapped read-only: its size
	 * and mmap() offset. A library with a shorter response buffer (an
	 * older one) gets neither, and the bit clear.
	 */
	__u32 status_page_size;
	__u32 reserved;
	__aligned_u64 status_mmap_offset;
	/*
	 * KITE_IB_UCTX_CAP_*: what the device offers beyond the first
	 * version of this interface; 0 for a library with a shorter buffer.
	 */
	__u32 caps;
	__u32 reserved1;
};

/*
 * The device status page. @state is KITE_IB_DEV_STATE_ALIVE while the
 * device works. It reads 0 once the device has failed (the kernel clears
 * it) and once the context has been disassociated from a device that went
 * away (reset, unbind, removal): the kernel then replaces the mapping by a
 * zero page. A library polling an empty CQ or posting work checks it and
 * reports an error instead of waiting for completions that never come.
 */
struct kite_ib_dev_status {
	__u32 state;
	__u32 reserved;
};

#define KITE_IB_DEV_STATE_ALIVE		1

/*
 * User CQs: the CQE ring and the doorbell record are in the process's
 * memory (Documentation/networking/device_drivers/ethernet/kite/prm_cq.rst).
 * The ring is 2^log_depth 64-byte CQEs, starts on a 4 KiB boundary and has
 * every slot's op_own initialised to opcode INVALID. log_depth is chosen by
 * the library, with 2^log_depth > the requested number of CQEs: one slot
 * stays free for the CQE that marks a resize, so the CQ reports
 * 2^log_depth - 1 usable CQEs.
 */
struct kite_ib_create_cq_req {
	__aligned_u64 buf_addr;
	/* struct kite_cq_dbrec (8 bytes, 8-byte aligned), zeroed */
	__aligned_u64 dbrec_addr;
	__u32 log_depth;
	__u32 comp_mask;
};

struct kite_ib_create_cq_resp {
	__u32 comp_mask;
	/* The device's CQ number, for CQ_ARM doorbells. */
	__u32 cqn;
};

/*
 * Resize: a new ring as at creation. When the command returns, the device
 * writes CQEs only to the new ring; the library consumes the old ring up to
 * the RESIZE CQE, then carries on in the new one with the same counter.
 */
struct kite_ib_resize_cq_req {
	__aligned_u64 buf_addr;
	__u32 log_depth;
	__u32 comp_mask;
};

/*
 * User QPs: each work queue is 2^log_depth WQEs of 2^wqe_shift bytes in
 * the process's memory, starting on a 4 KiB boundary. The library picks
 * the geometry for the requested capacities (prm_qp.rst gives the WQE
 * layouts); the driver checks it can hold them and reports the capacities
 * it actually gives in the core's response. Doorbells go through the
 * context's doorbell page.
 */
struct kite_ib_create_qp_req {
	__aligned_u64 sq_buf_addr;
	__aligned_u64 rq_buf_addr;
	__u32 sq_log_depth;
	__u32 sq_wqe_shift;
	__u32 rq_log_depth;
	__u32 rq_wqe_shift;
	__u32 comp_mask;
	__u32 reserved;
};

struct kite_ib_create_qp_resp {
	__u32 comp_mask;
	__u32 reserved;
};

/*
 * User QPs on an SRQ: the rq_* fields of kite_ib_create_qp_req are zero
 * (the QP has no RQ).
 *
 * User SRQs: 2^log_depth WQEs of 2^wqe_shift bytes in the process's memory,
 * starting on a 4 KiB boundary (struct kite_wqe_srq_recv and its data
 * segments, prm_srq.rst). The library writes the WQE at its producer
 * counter, with a tag of its choosing that completions carry in wr_id's
 * place, and writes the SRQ doorbell (KITE_DB_TYPE_SRQ, the SRQN the
 * response gives) in the context's doorbell page. It keeps at most
 * 2^log_depth WQEs outstanding.
 */
struct kite_ib_create_srq_req {
	__aligned_u64 buf_addr;
	__u32 log_depth;
	__u32 wqe_shift;
	__u32 comp_mask;
	__u32 reserved;
};

struct kite_ib_create_srq_resp {
	__u32 comp_mask;
	/* The device's SRQ number, for SRQ doorbells. */
	__u32 srqn;
};

/*
 * SRQ resize (IB_SRQ_MAX_WR, when the device reports IB_DEVICE_SRQ_RESIZE):
 * a new ring of 2^log_depth WQEs of the SRQ's WQE size, set up as at
 * creation. Before the command the library copies its last
 * min(old, new depth) WQEs posted into the new ring, each at its producer
 * counter modulo the new depth, and posts nothing until it returns; it
 * must have no more WQEs outstanding than the new ring holds. When the
 * command returns the device reads only the new ring. A modify without
 * IB_SRQ_MAX_WR carries no driver data.
 */
struct kite_ib_modify_srq_req {
	__aligned_u64 buf_addr;
	__u32 log_depth;
	__u32 comp_mask;
};

/*
 * Address handles: the kernel resolves the destination (MAC, VLAN, network
 * type) and returns the address vector in the device's UD WQE format
 * (struct kite_wqe_ud of the Programmer's Reference, prm_wqe.rst); the
 * library copies it into each UD send WQE and fills in the remote QPN and
 * Q_Key.
 */
#define KITE_IB_AV_SIZE			48

struct kite_ib_create_ah_resp {
	__u32 comp_mask;
	__u32 reserved;
	__u8 av[KITE_IB_AV_SIZE];
};

/*
 * Device memory (ibv_alloc_dm(), when query_device reports max_dm_size):
 * the driver's attribute of the core's UVERBS_METHOD_DM_ALLOC. An
 * allocation is whole pages of the device memory, cleared; the library
 * maps it with mmap() of the command file at the offset the attribute
 * returns, for the allocation's length rounded up to the page size, and
 * reads and writes it in 32-bit words at 4-byte aligned offsets. An MR of
 * it (ibv_reg_dm_mr()) is zero-based.
 */
enum kite_ib_dm_alloc_attrs {
	KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = (1U << UVERBS_ID_NS_SHIFT),
};

/*
 * Importing objects into another process (ibv_import_device() on a
 * duplicate of the command file, then ibv_import_pd(), ibv_import_mr(),
 * ibv_import_dm()): both processes share the one user context.
 *
 * The driver's attribute of the core's UVERBS_METHOD_QUERY_CONTEXT: the
 * context's struct kite_ib_alloc_ucontext_resp, as ALLOC_UCONTEXT gave it
 * (the status page only to a buffer that reaches status_mmap_offset, and
 * only when the context has one).
 */
enum kite_ib_query_context_attrs {
	KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX = (1U << UVERBS_ID_NS_SHIFT),
};

/* Driver methods of the core's PD object: a PD's device number. */
enum kite_ib_pd_methods {
	KITE_IB_METHOD_PD_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum kite_ib_query_pd_attrs {
	KITE_IB_ATTR_QUERY_PD_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	KITE_IB_ATTR_QUERY_PD_RESP_PDN,			/* __u32 */
};

/*
 * Driver methods of the core's DM object: what a process needs to map an
 * allocation it did not make: the mmap() offset and the length asked for.
 */
enum kite_ib_dm_methods {
	KITE_IB_METHOD_DM_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum kite_ib_query_dm_attrs {
	KITE_IB_ATTR_QUERY_DM_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	KITE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,		/* __u64 */
	KITE_IB_ATTR_QUERY_DM_RESP_LENGTH,		/* __u64 */
};

/*
 * Driver methods of the core's device object: the device clock of the
 * completion timestamps now (ibv_query_rt_values_ex()), in nanoseconds.
 */
enum kite_ib_device_methods {
	KITE_IB_METHOD_QUERY_CLOCK = (1U << UVERBS_ID_NS_SHIFT),
};

enum kite_ib_query_clock_attrs {
	KITE_IB_ATTR_QUERY_CLOCK_RESP_CLOCK = (1U << UVERBS_ID_NS_SHIFT), /* __u64 */
};

#endif /* KITE_ABI_USER_H */
