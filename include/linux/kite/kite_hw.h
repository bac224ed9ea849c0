/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Kite NIC hardware programming interface.
 *
 * Register offsets, field masks and the layouts of every structure the
 * device reads or writes in host memory. This header is the single
 * definition of the hardware interface: kite_en, kite_ib and the QEMU device
 * model all compile it. The Programmer's Reference
 * (Documentation/networking/device_drivers/ethernet/kite/prm.rst) describes
 * every item defined here, and scripts/check-prm-layout.py fails when the
 * two disagree.
 *
 * All multi-byte fields are little-endian unless their type says otherwise.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _LINUX_KITE_HW_H
#define _LINUX_KITE_HW_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#endif

#define PCI_VENDOR_ID_KITE		0x1ee7
#define PCI_DEVICE_ID_KITE_NIC		0x4b01

/* ------------------------------------------------------------------ */
/* BARs                                                                */
/* ------------------------------------------------------------------ */

/* BAR0: registers, MSI-X table and PBA. */
#define KITE_BAR_REGS			0
#define KITE_BAR_REGS_SIZE		0x4000
#define KITE_REGS_SIZE			0x1000
#define KITE_MSIX_TABLE_OFFSET		0x2000
#define KITE_MSIX_PBA_OFFSET		0x3000
/* MSI-X vectors the function implements. */
#define KITE_MAX_VECTORS		64

/* BAR2: doorbell pages. Page 0 is the kernel's, page N user context N. */
#define KITE_BAR_DB			2
#define KITE_DB_PAGE_SHIFT		12
#define KITE_DB_PAGE_SIZE		BIT(KITE_DB_PAGE_SHIFT)
#define KITE_DB_PAGES			256
#define KITE_BAR_DB_SIZE		(KITE_DB_PAGES * KITE_DB_PAGE_SIZE)
/* The 64-bit doorbell register, at this offset in every page. */
#define KITE_DB_OFFSET			0x0

/*
 * BAR4 (KITE_FEAT_DM): device memory, RAM on the device that the host reads
 * and writes through the BAR in 32-bit words at 4-byte aligned offsets, and
 * that MRs registered with KITE_MR_F_DM name. QUERY_DEVICE's max_dm_size
 * says how much of it there is; a reset clears it.
 */
#define KITE_BAR_DM			4
#define KITE_BAR_DM_SIZE		0x40000
#define KITE_DM_ALIGN			4

/* ------------------------------------------------------------------ */
/* Global registers (BAR0 0x000-0x0ff), owned by kite_en               */
/* ------------------------------------------------------------------ */

/* RO: identification, always KITE_ID_MAGIC. */
#define KITE_REG_ID			0x000
#define KITE_ID_MAGIC			0x4b495445	/* "KITE" */

/* RO: revision of this programming interface. */
#define KITE_REG_HW_REV			0x004
#define KITE_HW_REV_MAJOR		GENMASK(31, 16)
#define KITE_HW_REV_MINOR		GENMASK(15, 0)
/* The interface major revision the drivers implement. */
#define KITE_HW_REV_MAJOR_SUPPORTED	1

/* RO: firmware version, valid while KITE_STATUS_READY is set. */
#define KITE_REG_FW_VER			0x008
#define KITE_FW_VER_MAJOR		GENMASK(31, 24)
#define KITE_FW_VER_MINOR		GENMASK(23, 16)
#define KITE_FW_VER_PATCH		GENMASK(15, 0)

/* RO: function capabilities. */
#define KITE_REG_CAPS			0x00c
#define KITE_CAPS_NUM_VECTORS		GENMASK(7, 0)
#define KITE_CAPS_NUM_QUEUES		GENMASK(11, 8)	/* Ethernet queue pairs */
#define KITE_CAPS_RDMA			BIT(16)		/* RDMA engine present */
#define KITE_CAPS_RTC			BIT(17)		/* KITE_REG_RTC_* present */

/* RO: device status. */
#define KITE_REG_STATUS			0x010
#define KITE_STATUS_READY		BIT(0)
#define KITE_STATUS_FATAL		BIT(1)
#define KITE_STATUS_RESETTING		BIT(2)
#define KITE_STATUS_LINK_UP		BIT(3)
#define KITE_STATUS_FATAL_CODE		GENMASK(15, 8)

/* WO: device control. Bits are self-clearing and read as zero. */
#define KITE_REG_CTRL			0x014
#define KITE_CTRL_RESET			BIT(0)

/* WO: raise the MSI-X vector written (interrupt self-test). */
#define KITE_REG_INTR_TEST		0x018
#define KITE_INTR_TEST_VECTOR		GENMASK(7, 0)

/* RO: the port's factory MAC address. */
#define KITE_REG_MAC_LO			0x020	/* bytes 2..5, byte 2 in 31:24 */
#define KITE_REG_MAC_HI			0x024	/* bytes 0..1, byte 0 in 15:8 */
#define KITE_MAC_HI_MASK		GENMASK(15, 0)

/* RO: board serial number. */
#define KITE_REG_SERIAL_LO		0x028
#define KITE_REG_SERIAL_HI		0x02c

/* RC: interrupt causes of vector 0; a read returns and clears them. */
#define KITE_REG_ICR			0x030
/* RW: which causes raise vector 0. */
#define KITE_REG_IMR			0x034
#define KITE_INT_LINK			BIT(0)	/* link state changed */
#define KITE_INT_FATAL			BIT(1)	/* KITE_STATUS_FATAL was set */

/*
 * The real-time clock (KITE_CAPS_RTC): nanoseconds since the epoch the
 * driver sets, advanced by the device at its nominal rate corrected by
 * the frequency offset last set. RO: the clock's bits 31:0 and 63:32; a
 * reader takes HI, LO and HI again and retries when the two HI differ.
 * WO: the argument of the next command, then the command, which consumes
 * it. Every CQE carries the clock's value when it was written (kite_cqe.rtc).
 */
#define KITE_REG_RTC_LO			0x040
#define KITE_REG_RTC_HI			0x044
#define KITE_REG_RTC_ARG_LO		0x048
#define KITE_REG_RTC_ARG_HI		0x04c
#define KITE_REG_RTC_CMD		0x050
#define KITE_RTC_CMD_OP			GENMASK(3, 0)
#define KITE_RTC_OP_SET			1	/* the clock = ARG */
#define KITE_RTC_OP_ADJ			2	/* the clock += (s64)ARG */
#define KITE_RTC_OP_FREQ		3	/* rate offset = (s32)ARG_LO ppb */
/* The largest rate offset RTC_OP_FREQ takes, in parts per billion. */
#define KITE_RTC_MAX_PPB		100000000

/*
 * Time the device may take from a reset (KITE_CTRL_RESET, FLR or power-on)
 * until it sets KITE_STATUS_READY. A driver gives up after this long.
 */
#define KITE_RESET_TIMEOUT_MS		2000

/* ------------------------------------------------------------------ */
/* Ethernet registers (BAR0 0x100-0x3ff), owned by kite_en             */
/* ------------------------------------------------------------------ */

/* RW: Ethernet function control. */
#define KITE_REG_ETH_CTRL		0x100
#define KITE_ETH_CTRL_ENABLE		BIT(0)	/* pass frames at all */
#define KITE_ETH_CTRL_PROMISC		BIT(1)	/* accept any destination */
/* RW: MTU, KITE_ETH_MIN_MTU..KITE_ETH_MAX_MTU; larger frames are dropped. */
#define KITE_REG_ETH_MTU		0x104
#define KITE_ETH_MIN_MTU		68
#define KITE_ETH_MAX_MTU		9000
/* RW: station MAC address, same encoding as KITE_REG_MAC_LO/HI. */
#define KITE_REG_ETH_MAC_LO		0x108
#define KITE_REG_ETH_MAC_HI		0x10c

/* Ethernet queue pair N (N < KITE_CAPS_NUM_QUEUES) at KITE_REG_ETHQ(N). */
#define KITE_ETH_MAX_QUEUES		4
#define KITE_REG_ETHQ_BASE		0x200
#define KITE_REG_ETHQ_STRIDE		0x40
#define KITE_REG_ETHQ(n)		(KITE_REG_ETHQ_BASE + (n) * KITE_REG_ETHQ_STRIDE)
/* Offsets within a queue pair's block. */
#define KITE_ETHQ_TX_BASE_LO		0x00	/* RW: ring address, 4 KiB aligned */
#define KITE_ETHQ_TX_BASE_HI		0x04
#define KITE_ETHQ_TX_CFG		0x08	/* RW: KITE_ETHQ_CFG_* */
#define KITE_ETHQ_TX_TAIL		0x0c	/* WO: producer index doorbell */
#define KITE_ETHQ_TX_HEAD		0x10	/* RO: consumer index */
#define KITE_ETHQ_RX_BASE_LO		0x20
#define KITE_ETHQ_RX_BASE_HI		0x24
#define KITE_ETHQ_RX_CFG		0x28
#define KITE_ETHQ_RX_TAIL		0x2c
#define KITE_ETHQ_RX_HEAD		0x30
#define KITE_ETHQ_INTR			0x38	/* WO: KITE_ETHQ_INTR_ARM */
#define KITE_ETHQ_CFG_LOG_DEPTH		GENMASK(3, 0)	/* 2^n descriptors */
#define KITE_ETHQ_CFG_VECTOR		GENMASK(23, 16)
#define KITE_ETHQ_CFG_ENABLE		BIT(31)
#define KITE_ETHQ_MIN_LOG_DEPTH		3
#define KITE_ETHQ_MAX_LOG_DEPTH		12
#define KITE_ETHQ_INDEX			GENMASK(15, 0)	/* TAIL/HEAD width */
#define KITE_ETHQ_INTR_ARM		BIT(0)

/* Ethernet TX descriptor. */
struct kite_eth_txd {
	__le64 addr;		/* frame, one buffer per frame */
	__le16 len;		/* frame length, without FCS */
	__le16 flags;		/* reserved, zero */
	__le16 status;		/* device: KITE_ETH_DESC_* */
	__le16 rsvd;
};

/* Ethernet RX descriptor. */
struct kite_eth_rxd {
	__le64 addr;		/* buffer */
	__le16 buf_len;		/* buffer size */
	__le16 flags;		/* reserved, zero */
	__le16 status;		/* device: KITE_ETH_DESC_* */
	__le16 pkt_len;		/* device: frame length */
};

#define KITE_ETH_DESC_DONE		BIT(0)	/* device finished with it */
#define KITE_ETH_DESC_ERR		BIT(1)	/* not sent / not received */

/* ------------------------------------------------------------------ */
/* RDMA registers (BAR0 0x800-0xfff), owned by kite_ib                 */
/* ------------------------------------------------------------------ */

#define KITE_RDMA_REGS_OFFSET		0x800
#define KITE_RDMA_REGS_SIZE		0x800
/* Offsets from KITE_RDMA_REGS_OFFSET. */
#define KITE_RDMA_CMDQ_BASE_LO		0x000	/* RW: ring address, 4 KiB aligned */
#define KITE_RDMA_CMDQ_BASE_HI		0x004
#define KITE_RDMA_CMDQ_CFG		0x008	/* RW */
#define KITE_CMDQ_CFG_LOG_DEPTH		GENMASK(3, 0)
#define KITE_CMDQ_CFG_ENABLE		BIT(31)
#define KITE_CMDQ_MAX_LOG_DEPTH		6
#define KITE_RDMA_CMDQ_PI		0x00c	/* WO: producer index doorbell */
#define KITE_RDMA_CMDQ_CI		0x010	/* RO: commands completed */
#define KITE_RDMA_CMDQ_STATUS		0x014	/* RO */
#define KITE_CMDQ_STATUS_HALTED		BIT(0)	/* stopped, see the other bits */
#define KITE_CMDQ_STATUS_DMA_ERR	BIT(1)	/* a ring entry was unreachable */
#define KITE_CMDQ_STATUS_BAD_PI		BIT(2)	/* PI ran more than depth ahead */
/*
 * RO: the longest the device takes to complete one command, in
 * milliseconds; never 0. A driver waits at least this long for a
 * completion before it declares the channel failed.
 */
#define KITE_RDMA_CMD_TIMEOUT		0x018
#define KITE_CMD_TIMEOUT_MS		GENMASK(15, 0)
/*
 * RO: the device clock of kite_cqe.timestamp, in nanoseconds, bits 31:0
 * and 63:32; read HI, LO and HI again, retrying when the two HI differ.
 */
#define KITE_RDMA_CLOCK_LO		0x020
#define KITE_RDMA_CLOCK_HI		0x024

/* ------------------------------------------------------------------ */
/* Doorbells (BAR2)                                                    */
/* ------------------------------------------------------------------ */

/* The 64-bit doorbell word. 32-bit writes are ignored. */
#define KITE_DB_OBJ			GENMASK_ULL(23, 0)
#define KITE_DB_TYPE			GENMASK_ULL(27, 24)
#define KITE_DB_TYPE_SQ			1
#define KITE_DB_TYPE_RQ			2
#define KITE_DB_TYPE_CQ_ARM		3
#define KITE_DB_TYPE_EQ			4
#define KITE_DB_TYPE_SRQ		5
/* SQ, RQ and SRQ: the new producer index. */
#define KITE_DB_PI			GENMASK_ULL(47, 32)
/*
 * Work queue indices as doorbells (KITE_DB_PI) and WQEs (wqe_idx, an SRQ
 * WQE's tag) carry them: the free-running producer counter modulo 2^16.
 */
#define KITE_WQ_IDX_MASK		GENMASK(15, 0)
/* EQ: the consumer index, and whether to arm the EQ's interrupt. */
#define KITE_DB_EQ_CI			GENMASK_ULL(47, 32)
#define KITE_DB_EQ_ARM			BIT_ULL(48)
/* CQ_ARM: must equal the doorbell record's arm word CMD and CMD_SN. */
#define KITE_DB_CQ_CMD			GENMASK_ULL(33, 32)
#define KITE_DB_CQ_CMD_SN		GENMASK_ULL(37, 36)

/* ------------------------------------------------------------------ */
/* Page buffer lists                                                   */
/* ------------------------------------------------------------------ */

/* A PBL page is always 4 KiB and holds 512 entries, whatever the data
 * page size.
 */
#define KITE_PBL_PAGE_SHIFT		12
#define KITE_PBL_PAGE_SIZE		BIT(KITE_PBL_PAGE_SHIFT)
#define KITE_PTE_SIZE			8	/* a PTE or PDE: __le64 */
#define KITE_PBL_ENTRIES		(KITE_PBL_PAGE_SIZE / KITE_PTE_SIZE)

#define KITE_PTE_VALID			BIT_ULL(0)
#define KITE_PTE_LAST			BIT_ULL(1)	/* queue PBLs: last page */
#define KITE_PTE_NEXT_TO_LAST		BIT_ULL(2)	/* queue PBLs */
#define KITE_PTE_ADDR			GENMASK_ULL(63, 12)

#define KITE_PBL_LEVEL_0		0	/* addr is the only data page */
#define KITE_PBL_LEVEL_1		1	/* addr is a PTE page */
#define KITE_PBL_LEVEL_2		2	/* addr is a PDE page */
#define KITE_PBL_MIN_PAGE_SHIFT		12
#define KITE_PBL_MAX_PAGE_SHIFT		21

#define KITE_PBL_CFG_LEVEL		GENMASK(1, 0)
#define KITE_PBL_CFG_PAGE_SHIFT		GENMASK(13, 8)

/* How a command names a buffer of npages data pages. */
struct kite_pbl {
	__le64 addr;
	__le32 npages;
	__le32 cfg;		/* KITE_PBL_CFG_* */
};

/* ------------------------------------------------------------------ */
/* Command queue                                                       */
/* ------------------------------------------------------------------ */

#define KITE_CMD_ENTRY_SIZE		256
#define KITE_CMD_PAYLOAD_SIZE		224

/* Written by the driver except status and result. */
struct kite_cmd {
	__le32 opcode;		/* KITE_CMD_OPCODE */
	__le32 cookie;		/* echoed in the completion EQE */
	__le16 in_len;		/* input bytes in payload */
	__le16 out_len;		/* output bytes wanted */
	__le32 rsvd0;
	__le64 out_addr;	/* 0: output to payload; else a DMA buffer */
	__le32 status;		/* device: KITE_CMD_STATUS_* */
	__le32 result;		/* device: object number or count */
	u8 payload[KITE_CMD_PAYLOAD_SIZE];
};

#define KITE_CMD_OPCODE			GENMASK(7, 0)
#define KITE_CMD_STATUS_DONE		BIT(31)
#define KITE_CMD_STATUS_CODE		GENMASK(7, 0)
#define KITE_CMD_STATUS_SYNDROME	GENMASK(23, 8)	/* offending input byte */

/* Opcodes */
#define KITE_CMD_NOP			0x00
#define KITE_CMD_QUERY_DEVICE		0x01
#define KITE_CMD_QUERY_PORT		0x02
#define KITE_CMD_QUERY_STATS		0x03
#define KITE_CMD_ALLOC_UCTX		0x08
#define KITE_CMD_DEALLOC_UCTX		0x09
#define KITE_CMD_ALLOC_PD		0x0a
#define KITE_CMD_DEALLOC_PD		0x0b
#define KITE_CMD_ALLOC_XRCD		0x0c
#define KITE_CMD_DEALLOC_XRCD		0x0d
#define KITE_CMD_CREATE_EQ		0x10
#define KITE_CMD_DESTROY_EQ		0x11
#define KITE_CMD_CREATE_CQ		0x18
#define KITE_CMD_QUERY_CQ		0x19
#define KITE_CMD_MODIFY_CQ		0x1a
#define KITE_CMD_DESTROY_CQ		0x1b
#define KITE_CMD_CREATE_QP		0x20
#define KITE_CMD_MODIFY_QP		0x21
#define KITE_CMD_QUERY_QP		0x22
#define KITE_CMD_DESTROY_QP		0x23
#define KITE_CMD_REG_MR			0x28
#define KITE_CMD_ALLOC_MR		0x29
#define KITE_CMD_DEREG_MR		0x2a
#define KITE_CMD_ALLOC_MW		0x2b
#define KITE_CMD_DEALLOC_MW		0x2c
#define KITE_CMD_REREG_MR		0x2d
#define KITE_CMD_ADD_GID		0x30
#define KITE_CMD_DEL_GID		0x31
#define KITE_CMD_CREATE_SRQ		0x38
#define KITE_CMD_MODIFY_SRQ		0x39
#define KITE_CMD_QUERY_SRQ		0x3a
#define KITE_CMD_DESTROY_SRQ		0x3b
#define KITE_CMD_ATTACH_MCAST		0x40
#define KITE_CMD_DETACH_MCAST		0x41
#define KITE_CMD_ALLOC_CNTR		0x48
#define KITE_CMD_DEALLOC_CNTR		0x49
#define KITE_CMD_QUERY_CNTR		0x4a
#define KITE_CMD_SET_QP_CNTR		0x4b

/* Completion status codes */
#define KITE_CMD_OK			0x00
#define KITE_CMD_E_OPCODE		0x01	/* unknown opcode */
#define KITE_CMD_E_PARAM		0x02	/* a field is out of range */
#define KITE_CMD_E_LENGTH		0x03	/* in_len or out_len is wrong */
#define KITE_CMD_E_NO_RESOURCES		0x04	/* table full */
#define KITE_CMD_E_OBJECT		0x05	/* no such object, or not yours */
#define KITE_CMD_E_STATE		0x06	/* object in the wrong state */
#define KITE_CMD_E_BUSY			0x07	/* object still referenced */
#define KITE_CMD_E_DMA			0x08	/* a DMA address failed */
#define KITE_CMD_E_PBL			0x09	/* malformed page buffer list */
#define KITE_CMD_E_INTERNAL		0x0a
/* Codes from this one up are never returned: the device is broken. */
#define KITE_CMD_E_NEVER		0x80

/* Object numbers are 24 bits wide. */
#define KITE_OBJ_MASK			GENMASK(23, 0)

/* QUERY_DEVICE output */
struct kite_cmd_query_device_out {
	__le32 fw_ver;
	__le32 hw_rev;
	__le64 node_guid;
	__le64 sys_image_guid;
	__le64 max_mr_size;
	__le64 page_size_cap;	/* bit n set: 2^n byte pages supported */
	__le32 vendor_id;
	__le32 vendor_part_id;
	__le32 max_qp;
	__le32 max_qp_wr;
	__le32 max_send_sge;
	__le32 max_recv_sge;
	__le32 max_sge_rd;
	__le32 max_inline;
	__le32 max_cq;
	__le32 max_cqe;
	__le32 max_mr;
	__le32 max_pd;
	__le32 max_uctx;
	__le32 max_eq;
	__le32 max_eqe;
	__le32 max_qp_rd_atom;
	__le32 max_qp_init_rd_atom;
	__le32 max_fast_reg_pages;
	__le32 gid_tbl_len;
	__le32 features;	/* KITE_FEAT_* */
	__le16 max_cq_moderation_count;
	__le16 max_cq_moderation_period;	/* microseconds */
	__le32 local_ca_ack_delay;
	__le32 max_srq;
	__le32 max_srq_wr;
	__le32 max_srq_sge;
	__le32 max_cntr;	/* QP counter sets, the default set 0 included */
	__le32 max_mcast_grp;
	__le32 max_mcast_qp_attach;
	__le32 max_mcast_total_attach;
	__le32 max_mw;		/* KITE_FEAT_MW: windows at most */
	__le32 max_dm_size;	/* KITE_FEAT_DM: bytes of device memory (BAR4) */
	__le32 max_xrcd;	/* KITE_FEAT_XRC: XRC domains, number 0 unused */
};

#define KITE_FEAT_RC			BIT(0)
#define KITE_FEAT_UD			BIT(1)
#define KITE_FEAT_ATOMIC		BIT(2)
#define KITE_FEAT_FAST_REG		BIT(3)
#define KITE_FEAT_CQE_128		BIT(4)
#define KITE_FEAT_CQ_RESIZE		BIT(5)
#define KITE_FEAT_CQ_MODERATION		BIT(6)
#define KITE_FEAT_SRQ			BIT(7)
#define KITE_FEAT_MCAST			BIT(8)
#define KITE_FEAT_QP_CNTR		BIT(9)	/* QP counter sets, max_cntr */
#define KITE_FEAT_MW			BIT(10)	/* memory windows, types 1 and 2B */
#define KITE_FEAT_REREG_MR		BIT(11)	/* REREG_MR */
#define KITE_FEAT_EQ_MODERATION		BIT(12)	/* kite_cmd_create_eq.moderation */
#define KITE_FEAT_SRQ_RESIZE		BIT(13)	/* KITE_MODIFY_SRQ_RESIZE */
#define KITE_FEAT_ATOMIC_WRITE		BIT(14)	/* KITE_WQE_OP_ATOMIC_WRITE */
#define KITE_FEAT_FLUSH			BIT(15)	/* KITE_WQE_OP_FLUSH, KITE_ACCESS_FLUSH_GLOBAL */
#define KITE_FEAT_DM			BIT(16)	/* device memory, KITE_MR_F_DM */
#define KITE_FEAT_XRC			BIT(17)	/* XRC domains, SRQs and QPs */
#define KITE_FEAT_RQ_DBREC		BIT(18)	/* KITE_QP_F_RQ_DBREC */

/* QUERY_PORT output */
struct kite_cmd_query_port_out {
	u8 state;		/* KITE_PORT_STATE_* (IB port states) */
	u8 phys_state;		/* KITE_PORT_PHYS_* (IB physical states) */
	u8 active_mtu;		/* KITE_MTU_* */
	u8 max_mtu;
	__le32 speed_mbps;
	u8 mac[6];
	__le16 rsvd0;
	__le32 eth_mtu;
	__le32 gid_tbl_len;
};

#define KITE_PORT_STATE_DOWN		1
#define KITE_PORT_STATE_ACTIVE		4
#define KITE_PORT_PHYS_DISABLED		3
#define KITE_PORT_PHYS_LINK_UP		5
/* Path MTUs, numbered as in the IB specification. */
#define KITE_MTU_256			1
#define KITE_MTU_512			2
#define KITE_MTU_1024			3
#define KITE_MTU_2048			4
#define KITE_MTU_4096			5
/* The bytes of path MTU @mtu, a KITE_MTU_*. */
#define KITE_MTU_BYTES(mtu)		(256U << ((mtu) - KITE_MTU_256))

/* QUERY_STATS: the output buffer (out_addr) receives __le64 counters. */
#define KITE_STAT_TX_FRAMES		0
#define KITE_STAT_TX_BYTES		1
#define KITE_STAT_RX_FRAMES		2
#define KITE_STAT_RX_BYTES		3
#define KITE_STAT_RX_DROPS		4
#define KITE_STAT_ROCE_TX_PKTS		5
#define KITE_STAT_ROCE_RX_PKTS		6
#define KITE_STAT_ROCE_RX_DROPS		7
#define KITE_STAT_CMDS			8
#define KITE_STAT_CMD_ERRORS		9
#define KITE_STAT_BAD_DOORBELLS		10
#define KITE_STAT_EQES			11
#define KITE_STAT_EQ_OVERFLOWS		12
#define KITE_STAT_CQES			13
#define KITE_STAT_CQ_OVERFLOWS		14
#define KITE_STAT_DMA_ERRORS		15
#define KITE_STAT_COUNT			16

/*
 * QP counter sets. Every QP counts its transport events in exactly one
 * set: the default set 0 from CREATE_QP on, or the set SET_QP_CNTR moved
 * it to (from then on; what it counted before stays where it was).
 *
 * ALLOC_CNTR: no input; result = the new set's number (1..max_cntr - 1),
 * its counters zero. DEALLOC_CNTR: struct kite_cmd_obj naming the set;
 * KITE_CMD_E_BUSY while a QP counts in it. QUERY_CNTR: struct
 * kite_cmd_obj naming a set (0 included); the output (payload or out_addr)
 * receives __le64 counters indexed by KITE_QP_STAT_*, at most out_len / 8
 * of them; result = how many were written. SET_QP_CNTR: struct
 * kite_cmd_set_qp_cntr.
 */
struct kite_cmd_set_qp_cntr {
	__le32 qpn;
	__le32 cntr;		/* an allocated set, or 0 */
};

#define KITE_QP_STAT_TX_PKTS		0	/* RoCEv2 packets sent */
#define KITE_QP_STAT_TX_BYTES		1	/* their frames' bytes */
#define KITE_QP_STAT_RX_PKTS		2	/* packets for the QP */
#define KITE_QP_STAT_RX_BYTES		3	/* their frames' bytes */
#define KITE_QP_STAT_RX_DROPS		4	/* of those, dropped */
#define KITE_QP_STAT_RETRIES		5	/* RC go-back-N retries */
#define KITE_QP_STAT_ACK_TIMEOUTS	6	/* of those, by the timer */
#define KITE_QP_STAT_SEQ_NAKS_RCVD	7
#define KITE_QP_STAT_RNR_NAKS_RCVD	8
#define KITE_QP_STAT_SEQ_NAKS_SENT	9
#define KITE_QP_STAT_RNR_NAKS_SENT	10
#define KITE_QP_STAT_DUP_REQUESTS	11	/* RC requests seen again */
#define KITE_QP_STAT_COUNT		12

/* ALLOC_UCTX: no input; result = the context's number, which is also its
 * doorbell page. DEALLOC_UCTX, ALLOC_PD, DEALLOC_PD: struct kite_cmd_obj.
 * ALLOC_XRCD: no input; result = the XRC domain's number. DEALLOC_XRCD:
 * struct kite_cmd_obj (uctx 0); KITE_CMD_E_BUSY while an SRQ or QP is in it.
 */
struct kite_cmd_obj {
	__le32 obj;		/* object number or key */
	__le32 uctx;		/* 0 for the kernel; ALLOC_PD only */
};

/* CREATE_EQ */
struct kite_cmd_create_eq {
	__le32 cfg;		/* KITE_EQ_CFG_* */
	__le32 moderation;	/* KITE_EQ_MOD_*; completion EQs only */
	struct kite_pbl pbl;
};

#define KITE_EQ_CFG_LOG_DEPTH		GENMASK(4, 0)
#define KITE_EQ_CFG_VECTOR		GENMASK(15, 8)
#define KITE_EQ_CFG_CTRL		BIT(16)	/* the control EQ, EQN 0 */
/*
 * Adaptive interrupt moderation (KITE_FEAT_EQ_MODERATION, prm_eq.rst): the
 * longest hold-off in microseconds (0: none, the vector is raised at once)
 * and the CQEs per interrupt aimed at (0: KITE_EQ_MOD_DEF_TARGET).
 */
#define KITE_EQ_MOD_MAX_US		GENMASK(15, 0)
#define KITE_EQ_MOD_TARGET		GENMASK(23, 16)
#define KITE_EQ_MOD_DEF_TARGET		16
#define KITE_EQ_MIN_LOG_DEPTH		6
#define KITE_EQ_MAX_LOG_DEPTH		15

/* CREATE_CQ */
struct kite_cmd_create_cq {
	__le32 cfg;		/* KITE_CQ_CFG_* */
	__le32 eqn;
	__le32 uctx;
	__le16 mod_count;	/* CQEs per event, 0: no count moderation */
	__le16 mod_period;	/* microseconds, 0: no period moderation */
	__le64 dbrec_addr;	/* struct kite_cq_dbrec, 8-byte aligned */
	struct kite_pbl pbl;
};

#define KITE_CQ_CFG_LOG_DEPTH		GENMASK(4, 0)
#define KITE_CQ_CFG_CQE_128		BIT(8)
#define KITE_CQ_MIN_LOG_DEPTH		1
#define KITE_CQ_MAX_LOG_DEPTH		16

/* MODIFY_CQ */
struct kite_cmd_modify_cq {
	__le32 cqn;
	__le32 mask;		/* KITE_MODIFY_CQ_* */
	__le32 eqn;
	__le16 mod_count;
	__le16 mod_period;
	__le32 cfg;		/* RESIZE: new KITE_CQ_CFG_LOG_DEPTH */
	__le32 rsvd;
	struct kite_pbl pbl;	/* RESIZE: the new buffer */
};

#define KITE_MODIFY_CQ_MODERATION	BIT(0)
#define KITE_MODIFY_CQ_EQN		BIT(1)
#define KITE_MODIFY_CQ_RESIZE		BIT(2)

/* QUERY_CQ output; DESTROY_CQ and QUERY_CQ take struct kite_cmd_obj. */
struct kite_cmd_query_cq_out {
	__le32 state;		/* KITE_CQ_STATE_* */
	__le32 arm;		/* KITE_CQ_ARM_STATE_*, last CMD_SN in 5:4 */
	__le32 eqn;
	__le32 cfg;
	__le32 pi;		/* CQEs written */
	__le32 ci;		/* consumer index last read from the record */
	__le16 mod_count;
	__le16 mod_period;
	__le32 rsvd;
};

#define KITE_CQ_STATE_OK		0
#define KITE_CQ_STATE_ERROR		1	/* overflow or DMA error */
#define KITE_CQ_ARM_STATE		GENMASK(1, 0)
#define KITE_CQ_ARM_STATE_DISARMED	0
#define KITE_CQ_ARM_STATE_SOLICITED	1
#define KITE_CQ_ARM_STATE_NEXT		2
#define KITE_CQ_ARM_STATE_FIRED		3
#define KITE_CQ_ARM_LAST_SN		GENMASK(5, 4)

/* CREATE_QP */
struct kite_cmd_create_qp {
	__le32 type;		/* KITE_QPT_* */
	__le32 flags;		/* KITE_QP_F_* */
	__le32 pdn;
	__le32 send_cqn;
	__le32 recv_cqn;
	__le32 uctx;
	__le32 sq_cfg;		/* KITE_WQ_CFG_* */
	__le32 rq_cfg;
	struct kite_pbl sq_pbl;
	struct kite_pbl rq_pbl;	/* KITE_QP_F_SRQ: zero */
	__le32 srqn;		/* KITE_QP_F_SRQ: the SRQ; else zero */
	__le32 xrcd;		/* KITE_QPT_XRC_TGT: its XRC domain; else zero */
	__le64 rq_dbrec_addr;	/* KITE_QP_F_RQ_DBREC: struct kite_rq_dbrec */
};

#define KITE_QPT_RC			1
#define KITE_QPT_UD			2
#define KITE_QPT_GSI			3	/* QPN 1 */
#define KITE_QPT_UC			4
#define KITE_QPT_XRC_INI		5	/* XRC initiator: a send queue */
#define KITE_QPT_XRC_TGT		6	/* XRC target: no queues */
#define KITE_QP_F_SQ_SIG_ALL		BIT(0)
#define KITE_QP_F_SRQ			BIT(1)	/* receives from srqn */
/* The RQ's producer counter is read from rq_dbrec_addr (prm_qp.rst) */
#define KITE_QP_F_RQ_DBREC		BIT(2)
/* CREATE_QP input without srqn and rq_dbrec_addr (no SRQ, no RQ record) */
#define KITE_CMD_CREATE_QP_V0_LEN	64
#define KITE_WQ_CFG_LOG_DEPTH		GENMASK(4, 0)
#define KITE_WQ_CFG_WQE_SHIFT		GENMASK(11, 8)
#define KITE_WQ_MAX_LOG_DEPTH		12
#define KITE_WQE_MIN_SHIFT		6
#define KITE_WQE_MAX_SHIFT		10

/* MODIFY_QP input and QUERY_QP output (QUERY_QP takes struct kite_cmd_obj) */
struct kite_cmd_modify_qp {
	__le32 qpn;
	__le32 mask;		/* KITE_QP_ATTR_*; QUERY_QP: all valid */
	u8 state;		/* KITE_QPS_*: new state, or current (query) */
	u8 cur_state;		/* with KITE_QP_ATTR_CUR_STATE */
	u8 port;
	u8 path_mtu;		/* KITE_MTU_* */
	__le32 access;		/* KITE_ACCESS_REMOTE_* */
	__le16 pkey_index;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	__le32 qkey;
	__le32 dest_qpn;
	__le32 rq_psn;
	__le32 sq_psn;
	u8 min_rnr_timer;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 net_type;		/* KITE_NET_* */
	__le32 flow_label;
	__le16 vlan;		/* KITE_VLAN_* */
	u8 dmac[6];
	u8 dgid[16];
	__le32 rsvd[2];
};

#define KITE_QPS_RESET			0
#define KITE_QPS_INIT			1
#define KITE_QPS_RTR			2
#define KITE_QPS_RTS			3
#define KITE_QPS_SQD			4
#define KITE_QPS_SQE			5
#define KITE_QPS_ERR			6

#define KITE_QP_ATTR_STATE		BIT(0)
#define KITE_QP_ATTR_CUR_STATE		BIT(1)
#define KITE_QP_ATTR_ACCESS		BIT(2)
#define KITE_QP_ATTR_PKEY_INDEX		BIT(3)
#define KITE_QP_ATTR_PORT		BIT(4)
#define KITE_QP_ATTR_QKEY		BIT(5)
#define KITE_QP_ATTR_AV			BIT(6)	/* sgid_index..dgid */
#define KITE_QP_ATTR_PATH_MTU		BIT(7)
#define KITE_QP_ATTR_TIMEOUT		BIT(8)
#define KITE_QP_ATTR_RETRY_CNT		BIT(9)
#define KITE_QP_ATTR_RNR_RETRY		BIT(10)
#define KITE_QP_ATTR_RQ_PSN		BIT(11)
#define KITE_QP_ATTR_MAX_QP_RD_ATOMIC	BIT(12)
#define KITE_QP_ATTR_MIN_RNR_TIMER	BIT(13)
#define KITE_QP_ATTR_SQ_PSN		BIT(14)
#define KITE_QP_ATTR_MAX_DEST_RD_ATOMIC	BIT(15)
#define KITE_QP_ATTR_DEST_QPN		BIT(16)

#define KITE_ACCESS_LOCAL_WRITE		BIT(0)
#define KITE_ACCESS_REMOTE_WRITE	BIT(1)
#define KITE_ACCESS_REMOTE_READ		BIT(2)
#define KITE_ACCESS_REMOTE_ATOMIC	BIT(3)
#define KITE_ACCESS_MW_BIND		BIT(4)	/* MRs: windows may be bound */
#define KITE_ACCESS_FLUSH_GLOBAL	BIT(5)	/* QPs, MRs: FLUSH, global visibility */

#define KITE_NET_ROCE_V2_IPV4		1
#define KITE_NET_ROCE_V2_IPV6		2

#define KITE_VLAN_ID			GENMASK(11, 0)
#define KITE_VLAN_PCP			GENMASK(14, 12)
#define KITE_VLAN_VALID			BIT(15)

/* An address vector's flow_label: the IPv6 flow label; 31:20 reserved. */
#define KITE_FLOW_LABEL			GENMASK(19, 0)

#define KITE_PSN_MASK			GENMASK(23, 0)

/* REG_MR */
struct kite_cmd_reg_mr {
	__le32 pdn;
	__le32 access;		/* KITE_ACCESS_* */
	__le32 flags;		/* KITE_MR_F_*, KITE_MR_KEY_TAG */
	__le32 uctx;
	__le64 iova;
	__le64 length;
	struct kite_pbl pbl;	/* KITE_MR_F_PHYS: ignored; KITE_MR_F_DM: below */
};

/* ALLOC_MR (fast registration): result = key, the MR starts invalid */
struct kite_cmd_alloc_mr {
	__le32 pdn;
	__le32 max_pages;
	__le32 flags;		/* KITE_MR_KEY_TAG */
	__le32 uctx;
};

#define KITE_MR_KEY_TAG			GENMASK(7, 0)	/* in flags */
#define KITE_MR_F_PHYS			BIT(8)	/* iova is the bus address */
/*
 * The MR is in device memory: pbl.addr is the byte offset in BAR4 where
 * iova is, pbl.npages and pbl.cfg are 0; length may be 0.
 */
#define KITE_MR_F_DM			BIT(9)
/* Memory keys: index in the memory translation table and a tag. */
#define KITE_KEY_INDEX			GENMASK(31, 8)
#define KITE_KEY_TAG			GENMASK(7, 0)

/*
 * REREG_MR: change a registered MR in place, its key unchanged. Only the
 * parts named in flags change; the others are ignored (and not checked).
 */
struct kite_cmd_rereg_mr {
	__le32 key;		/* the MR's key, from REG_MR */
	__le32 flags;		/* KITE_REREG_F_* */
	__le32 pdn;		/* with KITE_REREG_F_PD */
	__le32 access;		/* with KITE_REREG_F_ACCESS: KITE_ACCESS_* */
	__le64 iova;		/* with KITE_REREG_F_TRANS */
	__le64 length;		/* with KITE_REREG_F_TRANS */
	struct kite_pbl pbl;	/* with KITE_REREG_F_TRANS */
};

#define KITE_REREG_F_TRANS		BIT(0)	/* iova, length and pbl */
#define KITE_REREG_F_PD			BIT(1)
#define KITE_REREG_F_ACCESS		BIT(2)

/*
 * ALLOC_MW: result = the window's key, from the memory translation table
 * MRs use; the window starts unbound. DEALLOC_MW takes struct kite_cmd_obj.
 */
struct kite_cmd_alloc_mw {
	__le32 pdn;
	__le32 type;		/* KITE_MW_TYPE_* */
	__le32 flags;		/* KITE_MR_KEY_TAG */
	__le32 uctx;
};

#define KITE_MW_TYPE_1			1	/* bound by any QP of its PD */
#define KITE_MW_TYPE_2			2	/* type 2B: bound to one QP */

/* ADD_GID; DEL_GID takes struct kite_cmd_obj (obj = index) */
struct kite_cmd_add_gid {
	__le32 index;
	__le32 type;		/* KITE_NET_* */
	u8 gid[16];
	u8 mac[6];
	__le16 vlan;		/* KITE_VLAN_* */
};

/* CREATE_SRQ: result = SRQN. DESTROY_SRQ, QUERY_SRQ: struct kite_cmd_obj */
struct kite_cmd_create_srq {
	__le32 pdn;
	__le32 uctx;
	__le32 cfg;		/* KITE_WQ_CFG_* */
	__le32 limit;		/* arm the limit event at this many, 0: not */
	struct kite_pbl pbl;
	__le32 flags;		/* KITE_SRQ_F_XRC */
	__le32 xrcd;		/* KITE_SRQ_F_XRC: its XRC domain */
	__le32 cqn;		/* KITE_SRQ_F_XRC: the CQ of its receives */
	__le32 rsvd;
};

/* CREATE_SRQ input without flags, xrcd, cqn and rsvd (no KITE_SRQ_F_XRC) */
#define KITE_CMD_CREATE_SRQ_V0_LEN	32

/* MODIFY_SRQ; commands without KITE_MODIFY_SRQ_RESIZE may end at cfg */
struct kite_cmd_modify_srq {
	__le32 srqn;
	__le32 mask;		/* KITE_MODIFY_SRQ_* */
	__le32 limit;		/* KITE_MODIFY_SRQ_LIMIT: arm at this many */
	__le32 cfg;		/* RESIZE: the new ring's KITE_WQ_CFG_* */
	struct kite_pbl pbl;	/* RESIZE: the new ring */
};

#define KITE_MODIFY_SRQ_LIMIT		BIT(0)
#define KITE_MODIFY_SRQ_RESIZE		BIT(1)
/* MODIFY_SRQ input up to cfg (no KITE_MODIFY_SRQ_RESIZE) */
#define KITE_CMD_MODIFY_SRQ_V0_LEN	16

/* QUERY_SRQ output */
struct kite_cmd_query_srq_out {
	__le32 state;		/* KITE_SRQ_STATE_* */
	__le32 flags;		/* KITE_SRQ_F_* */
	__le32 pdn;
	__le32 cfg;
	__le32 limit;
	__le32 pi;		/* WQEs posted, KITE_SRQ_INDEX */
	__le32 ci;		/* WQEs taken by QPs, KITE_SRQ_INDEX */
	__le32 nqp;		/* QPs attached */
};

#define KITE_SRQ_STATE_OK		0
#define KITE_SRQ_STATE_ERROR		1	/* a WQE was unreachable */
#define KITE_SRQ_F_ARMED		BIT(0)	/* the limit event is armed */
#define KITE_SRQ_F_XRC			BIT(1)	/* an XRC SRQ (create, query) */
#define KITE_SRQ_INDEX			GENMASK(15, 0)

/* ATTACH_MCAST, DETACH_MCAST (prm_mcast.rst) */
struct kite_cmd_mcast {
	__le32 qpn;		/* a UD QP */
	__le32 rsvd;
	u8 gid[16];		/* the group: a multicast GID */
};

/* The destination QPN of every multicast packet (BTH DestQP). */
#define KITE_MCAST_QPN			GENMASK(23, 0)

/* ------------------------------------------------------------------ */
/* Event queues                                                        */
/* ------------------------------------------------------------------ */

struct kite_eqe {
	__le32 type_owner;	/* KITE_EQE_TYPE, KITE_EQE_OWNER */
	__le32 obj;		/* CQN, QPN, EQN or command cookie */
	__le32 data;		/* type specific */
	__le32 rsvd;
};

#define KITE_EQE_SIZE			16
#define KITE_EQE_TYPE			GENMASK(7, 0)
#define KITE_EQE_OWNER			BIT(31)

/**
 * kite_owner_phase() - the owner bit of an EQ's or a CQ's entry
 * @idx: the entry's free-running number: the producer counter the device
 *	writes it at, the consumer counter the driver reads it at
 * @log_depth: log2 of the queue's depth
 *
 * The device writes owner 1 in its first pass over the ring, 0 in the
 * second, and so on (prm_eq.rst, prm_cq.rst): an entry is new when its
 * KITE_EQE_OWNER or KITE_CQE_OWNER bit equals this.
 *
 * Return: the owner bit (0 or 1) of entry number @idx.
 */
static inline u32 kite_owner_phase(u32 idx, u32 log_depth)
{
	return ((idx >> log_depth) & 1) ^ 1;
}

#define KITE_EQE_COMPLETION		0x01	/* obj: CQN */
#define KITE_EQE_CMD_DONE		0x02	/* obj: cookie, data: status */
#define KITE_EQE_PORT_ACTIVE		0x10
#define KITE_EQE_PORT_DOWN		0x11
#define KITE_EQE_CQ_ERROR		0x20	/* obj: CQN, data: KITE_CQ_ERR_* */
#define KITE_EQE_QP_FATAL		0x30	/* obj: QPN, data: syndrome */
#define KITE_EQE_QP_REQ_ERR		0x31
#define KITE_EQE_QP_ACCESS_ERR		0x32
#define KITE_EQE_QP_LAST_WQE		0x33
#define KITE_EQE_QP_COMM_EST		0x34
#define KITE_EQE_SQ_DRAINED		0x35
#define KITE_EQE_EQ_OVERFLOW		0x40	/* obj: EQN */
#define KITE_EQE_DEVICE_FATAL		0x41
#define KITE_EQE_SRQ_LIMIT		0x50	/* obj: SRQN, data: WQEs left */
#define KITE_EQE_SRQ_ERROR		0x51	/* obj: SRQN */

#define KITE_CQ_ERR_OVERFLOW		1
#define KITE_CQ_ERR_DMA			2

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */
/* ------------------------------------------------------------------ */

/*
 * An RQ's doorbell record in host memory (KITE_QP_F_RQ_DBREC): the
 * producer counter, which the device reads when it needs a receive WQE.
 */
struct kite_rq_dbrec {
	__le32 pi;		/* KITE_RQ_DB_PI */
	__le32 rsvd;
};

#define KITE_RQ_DB_PI			GENMASK(15, 0)

/* Doorbell record in host memory, one per CQ. */
struct kite_cq_dbrec {
	__le32 ci;		/* KITE_CQ_DB_CI */
	__le32 arm;		/* KITE_CQ_DB_ARM_* */
};

#define KITE_CQ_DB_CI			GENMASK(23, 0)
#define KITE_CQ_DB_ARM_CI		GENMASK(23, 0)
#define KITE_CQ_DB_ARM_CMD		GENMASK(25, 24)
#define KITE_CQ_DB_ARM_CMD_SN		GENMASK(29, 28)
/* The arm sequence number CMD_SN counts modulo 4 (its two bits). */
#define KITE_CQ_ARM_SN_MASK		GENMASK(1, 0)
#define KITE_CQ_ARM_SOLICITED		1
#define KITE_CQ_ARM_NEXT		2
#define KITE_CQ_INDEX_MASK		GENMASK(23, 0)

struct kite_cqe {
	__le32 qpn;		/* KITE_OBJ_MASK */
	__le32 byte_len;
	union {
		__be32 imm_data;	/* as on the wire */
		__le32 inv_rkey;
	};
	__le16 wqe_idx;
	__le16 flags;		/* KITE_CQE_F_* */
	__le64 timestamp;	/* device clock, nanoseconds */
	__le32 src_qpn;		/* UD receive: KITE_OBJ_MASK */
	__le32 syndrome;	/* error CQEs: KITE_CQE_SYNDROME* */
	u8 smac[6];		/* UD receive */
	__le16 vlan;		/* UD receive: KITE_VLAN_* */
	u8 wqe_opcode;		/* requester CQEs: KITE_WQE_OP_* */
	u8 rsvd0[3];
	__le32 srqn;		/* XRC receive: the XRC SRQ, KITE_OBJ_MASK */
	__le64 rtc;		/* KITE_CAPS_RTC: real-time clock, nanoseconds */
	__le32 rsvd2;
	__le32 op_own;		/* KITE_CQE_OWNER, KITE_CQE_OPCODE */
};

#define KITE_CQE_SIZE			64
#define KITE_CQE_OWNER			BIT(0)
#define KITE_CQE_OPCODE			GENMASK(7, 4)

#define KITE_CQE_F_SOLICITED		BIT(0)
#define KITE_CQE_F_IMM			BIT(1)
#define KITE_CQE_F_INV			BIT(2)
#define KITE_CQE_F_GRH			BIT(3)
#define KITE_CQE_F_VLAN			BIT(4)
#define KITE_CQE_F_L3			GENMASK(6, 5)	/* KITE_NET_* */

#define KITE_CQE_OP_REQ			0x0
#define KITE_CQE_OP_RESP_SEND		0x1
#define KITE_CQE_OP_RESP_SEND_IMM	0x2
#define KITE_CQE_OP_RESP_SEND_INV	0x3
#define KITE_CQE_OP_RESP_WRITE_IMM	0x4
#define KITE_CQE_OP_RESIZE		0x5
#define KITE_CQE_OP_REQ_ERR		0xd
#define KITE_CQE_OP_RESP_ERR		0xe
#define KITE_CQE_OP_INVALID		0xf

#define KITE_CQE_SYNDROME		GENMASK(7, 0)
#define KITE_CQE_VENDOR_SYNDROME	GENMASK(15, 8)
#define KITE_SYND_LOCAL_LENGTH		0x01
#define KITE_SYND_LOCAL_QP_OP		0x02
#define KITE_SYND_LOCAL_PROT		0x04
#define KITE_SYND_WR_FLUSH		0x05
#define KITE_SYND_MW_BIND		0x06
#define KITE_SYND_BAD_RESP		0x10
#define KITE_SYND_LOCAL_ACCESS		0x11
#define KITE_SYND_REMOTE_INVAL_REQ	0x12
#define KITE_SYND_REMOTE_ACCESS		0x13
#define KITE_SYND_REMOTE_OP		0x14
#define KITE_SYND_RETRY_EXC		0x15
#define KITE_SYND_RNR_RETRY_EXC		0x16
#define KITE_SYND_ABORTED		0x22

/* ------------------------------------------------------------------ */
/* Work queue entries                                                  */
/* ------------------------------------------------------------------ */

/* Every send WQE starts with the control segment. */
struct kite_wqe_ctrl {
	__le32 opcode;		/* KITE_WQE_OPCODE, KITE_WQE_F_*, NUM_SGE */
	union {
		__be32 imm_data;	/* *_IMM: as on the wire */
		__le32 inv_key;		/* SEND_INV, LOCAL_INV: key */
	};
	__le16 wqe_idx;		/* producer index of this WQE */
	__le16 inline_len;	/* KITE_WQE_F_INLINE: bytes of inline data */
	__le32 xrc_srqn;	/* XRC_INI: the remote XRC SRQ, KITE_OBJ_MASK */
};

#define KITE_WQE_OPCODE			GENMASK(7, 0)
#define KITE_WQE_F_SIGNALED		BIT(8)
#define KITE_WQE_F_SOLICITED		BIT(9)
#define KITE_WQE_F_FENCE		BIT(10)
#define KITE_WQE_F_INLINE		BIT(11)
#define KITE_WQE_NUM_SGE		GENMASK(19, 16)

#define KITE_WQE_OP_SEND		0x00
#define KITE_WQE_OP_SEND_IMM		0x01
#define KITE_WQE_OP_SEND_INV		0x02
#define KITE_WQE_OP_RDMA_WRITE		0x03
#define KITE_WQE_OP_RDMA_WRITE_IMM	0x04
#define KITE_WQE_OP_RDMA_READ		0x05
#define KITE_WQE_OP_ATOMIC_CS		0x06
#define KITE_WQE_OP_ATOMIC_FA		0x07
#define KITE_WQE_OP_LOCAL_INV		0x08
#define KITE_WQE_OP_REG_MR		0x09
#define KITE_WQE_OP_BIND_MW		0x0a
#define KITE_WQE_OP_ATOMIC_WRITE	0x0b	/* RC; 8 bytes inline */
#define KITE_WQE_OP_FLUSH		0x0c	/* RC; no data */

/* ATOMIC WRITE: the bytes written, inline, naturally aligned remotely. */
#define KITE_ATOMIC_WRITE_LEN		8

/* RDMA and atomic WQEs: after the control segment. */
struct kite_wqe_raddr {
	__le64 remote_addr;
	__le32 rkey;
	__le32 rsvd;
};

/* Atomic WQEs: after the remote address segment. */
struct kite_wqe_atomic {
	__le64 swap_add;
	__le64 compare;
};

/* FLUSH WQEs: after the remote address segment; no data segments. */
struct kite_wqe_flush {
	__le32 length;		/* KITE_FLUSH_SEL_RANGE: bytes from remote_addr */
	__le32 feth;		/* KITE_FLUSH_PLT, KITE_FLUSH_SEL: the wire's FETH */
	__le64 rsvd;
};

/* The FLUSH extended transport header (FETH, IBA 1.5), as the WQE holds it. */
#define KITE_FLUSH_PLT			GENMASK(3, 0)	/* placement type */
#define KITE_FLUSH_PLT_GLOBAL		BIT(0)
#define KITE_FLUSH_PLT_PERSISTENT	BIT(1)
#define KITE_FLUSH_SEL			GENMASK(5, 4)	/* selectivity level */
#define KITE_FLUSH_SEL_RANGE		0	/* [remote_addr, + length) */
#define KITE_FLUSH_SEL_MR		1	/* the whole MR of the R_Key */

/* UD and GSI send WQEs: the address vector, after the control segment. */
struct kite_wqe_ud {
	__le32 remote_qpn;
	__le32 qkey;
	u8 dgid[16];
	u8 dmac[6];
	__le16 vlan;		/* KITE_VLAN_* */
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 net_type;		/* KITE_NET_* */
	__le32 flow_label;
	__le32 rsvd[2];
};

/* REG_MR WQE: after the control segment. */
struct kite_wqe_reg_mr {
	__le64 iova;
	__le64 length;
	__le32 key;		/* the new key; its index must match the MR's */
	__le32 access;		/* KITE_ACCESS_* */
	__le64 pbl_addr;	/* level-1 list of npages PTEs */
	__le32 npages;
	__le32 page_shift;
};

/* BIND_MW WQE: after the control segment. */
struct kite_wqe_bind_mw {
	__le64 addr;		/* the window's first address, in the MR */
	__le64 length;		/* bytes; 0 unbinds a type 1 window */
	__le32 mw_key;		/* the window (type 1: its current key) */
	__le32 mr_key;		/* the MR's key; unused with length 0 */
	__le32 access;		/* KITE_ACCESS_REMOTE_* of the window */
	__le32 flags;		/* KITE_BIND_MW_TAG */
};

/* The tag of the window's key once bound. */
#define KITE_BIND_MW_TAG		GENMASK(7, 0)

/* Data segment: sends, RDMA and atomics after their other segments;
 * receive WQEs after the receive header.
 */
struct kite_wqe_sge {
	__le32 length;
	__le32 lkey;
	__le64 addr;
};

struct kite_wqe_recv {
	__le32 num_sge;
	__le32 rsvd[3];
};

/* SRQ receive WQE header, followed by num_sge data segments. */
struct kite_wqe_srq_recv {
	__le32 num_sge;
	__le16 tag;		/* echoed in the CQE's wqe_idx */
	__le16 rsvd0;
	__le32 rsvd[2];
};

#define KITE_MAX_SGE			8
#define KITE_MAX_INLINE			256
/* The longest message an RC work request may carry (prm_wqe.rst). */
#define KITE_MAX_MSG_SZ			BIT_ULL(31)

/* ------------------------------------------------------------------ */
/* Sizes, checked at compile time                                      */
/* ------------------------------------------------------------------ */

static_assert(sizeof(struct kite_eth_txd) == 16);
static_assert(sizeof(struct kite_eth_rxd) == 16);
static_assert(sizeof(struct kite_pbl) == 16);
static_assert(sizeof(struct kite_cmd) == KITE_CMD_ENTRY_SIZE);
static_assert(sizeof(struct kite_cmd_query_device_out) == 168);
static_assert(sizeof(struct kite_cmd_query_port_out) == 24);
static_assert(sizeof(struct kite_cmd_obj) == 8);
static_assert(sizeof(struct kite_cmd_set_qp_cntr) == 8);
static_assert(sizeof(struct kite_cmd_create_eq) == 24);
static_assert(sizeof(struct kite_cmd_create_cq) == 40);
static_assert(sizeof(struct kite_cmd_modify_cq) == 40);
static_assert(sizeof(struct kite_cmd_query_cq_out) == 32);
static_assert(sizeof(struct kite_cmd_create_qp) == 80);
static_assert(sizeof(struct kite_cmd_modify_qp) == 80);
static_assert(sizeof(struct kite_cmd_reg_mr) == 48);
static_assert(sizeof(struct kite_cmd_alloc_mr) == 16);
static_assert(sizeof(struct kite_cmd_rereg_mr) == 48);
static_assert(sizeof(struct kite_cmd_alloc_mw) == 16);
static_assert(sizeof(struct kite_cmd_add_gid) == 32);
static_assert(sizeof(struct kite_cmd_create_srq) == 48);
static_assert(sizeof(struct kite_cmd_modify_srq) == 32);
static_assert(sizeof(struct kite_cmd_query_srq_out) == 32);
static_assert(sizeof(struct kite_cmd_mcast) == 24);
static_assert(sizeof(struct kite_eqe) == KITE_EQE_SIZE);
static_assert(sizeof(struct kite_cq_dbrec) == 8);
static_assert(sizeof(struct kite_rq_dbrec) == 8);
static_assert(sizeof(struct kite_cqe) == KITE_CQE_SIZE);
static_assert(sizeof(struct kite_wqe_ctrl) == 16);
static_assert(sizeof(struct kite_wqe_raddr) == 16);
static_assert(sizeof(struct kite_wqe_atomic) == 16);
static_assert(sizeof(struct kite_wqe_ud) == 48);
static_assert(sizeof(struct kite_wqe_reg_mr) == 40);
static_assert(sizeof(struct kite_wqe_bind_mw) == 32);
static_assert(sizeof(struct kite_wqe_sge) == 16);
static_assert(sizeof(struct kite_wqe_recv) == 16);
static_assert(sizeof(struct kite_wqe_srq_recv) == 16);

#endif /* _LINUX_KITE_HW_H */
