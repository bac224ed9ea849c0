/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite RoCEv2 Ethernet NIC core driver: private definitions.
 *
 * File map:
 *   kite_en_main.c    PCI probe/remove, resets, PCI error recovery
 *   kite_en_hw.c      register decoding, device reset, resource policies
 *   kite_en_netdev.c  the net_device, descriptor rings, NAPI
 *   kite_en_ethtool.c ethtool operations
 *   kite_en_devlink.c devlink instance, info, parameters, health reporter
 *   kite_en_aux.c     the auxiliary device for the RDMA driver
 *   kite_en_ptp.c     the real-time clock as a PTP hardware clock
 *   kite_en_test.c    KUnit suite (CONFIG_KITE_EN_KUNIT_TEST)
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _KITE_EN_H_
#define _KITE_EN_H_

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/io.h>
#include <linux/kite/auxdev.h>
#include <linux/kite/kite_hw.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>

struct devlink;
struct devlink_health_reporter;
struct page_pool;
struct pci_dev;

/* Vector 0 belongs to kite_en's device events (link, fatal). */
#define KITE_EN_CORE_VECTORS		1
/* Then one vector per Ethernet queue pair, then the RDMA driver's. */
#define KITE_EN_MIN_ETH_VECTORS		1
#define KITE_EN_MIN_RDMA_VECTORS	1

#define KITE_EN_DEF_RING_DEPTH		512

/**
 * struct kite_en_vectors - how the granted MSI-X vectors are used
 * @eth: vectors 1..@eth serve Ethernet queue pairs 0..@eth - 1
 * @rdma: the @rdma vectors after them go to the RDMA driver
 */
struct kite_en_vectors {
	unsigned int eth;
	unsigned int rdma;
};

struct kite_en_stats {
	u64 packets;
	u64 bytes;
	u64 errors;
	struct u64_stats_sync syncp;
};

struct kite_en_txbuf {
	struct sk_buff *skb;
	dma_addr_t dma;
};

/**
 * struct kite_en_queue - an Ethernet queue pair and its NAPI context
 * @en: the device
 * @index: queue pair number
 * @regs: the queue pair's register block in BAR0
 * @napi: polls both rings; the queue's interrupt is re-armed when done
 * @irq: Linux IRQ of the queue's vector
 * @txd: TX descriptor ring (coherent DMA)
 * @txd_dma: its bus address
 * @txbuf: the skb behind each TX descriptor
 * @tx_tail: next TX descriptor to fill (free-running, 16 bits used)
 * @tx_head: next TX descriptor to clean
 * @rxd: RX descriptor ring (coherent DMA)
 * @rxd_dma: its bus address
 * @rxpages: the page behind each RX descriptor
 * @pool: page pool the RX pages come from
 * @rx_tail: next RX descriptor to post
 * @rx_head: next RX descriptor to receive into
 * @tx_stats: TX counters, written by NAPI and xmit
 * @rx_stats: RX counters, written by NAPI
 * @name: IRQ name
 *
 * The TX ring is filled by ndo_start_xmit (serialised by the netdev TX
 * queue lock) and cleaned by NAPI; the RX ring is only touched by NAPI.
 */
struct kite_en_queue {
	struct kite_en_dev *en;
	unsigned int index;
	void __iomem *regs;
	struct napi_struct napi;
	int irq;
	struct kite_eth_txd *txd;
	dma_addr_t txd_dma;
	struct kite_en_txbuf *txbuf;
	u16 tx_tail;
	u16 tx_head;
	struct kite_eth_rxd *rxd;
	dma_addr_t rxd_dma;
	struct page **rxpages;
	struct page_pool *pool;
	u16 rx_tail;
	u16 rx_head;
	struct kite_en_stats tx_stats;
	struct kite_en_stats rx_stats;
	char name[IFNAMSIZ + 16];
};

/**
 * struct kite_en_dev - one Kite PCI function
 * @pdev: the PCI function
 * @devlink: its devlink instance; this structure is the devlink priv
 * @netdev: the Ethernet interface
 * @regs: BAR0 register block (KITE_REGS_SIZE bytes)
 * @kernel_db: BAR2 doorbell page 0, for the RDMA driver
 * @hw_rev: KITE_REG_HW_REV as read at probe
 * @fw_ver: KITE_REG_FW_VER as read after the last reset
 * @fw_version: @fw_ver formatted as "major.minor.patch"
 * @serial: board serial number
 * @mac: the port's factory MAC address
 * @hw_queues: Ethernet queue pairs the function implements
 * @num_vectors: MSI-X vectors granted by the PCI core
 * @vec: how they are split
 * @num_queues: queue pairs in use (ethtool channels), <= @vec.eth
 * @tx_depth: TX ring size, a power of two
 * @rx_depth: RX ring size, a power of two
 * @queues: @vec.eth queue pairs
 * @msg_enable: netif_msg bits
 * @intr_test_done: completed by the vector 0 handler during the self-test
 * @link_work: carrier and RDMA link events, scheduled by the vector 0 IRQ
 * @reset_work: a function reset: the health reporter's recovery
 * @fatal_work: reports a failure the RDMA driver found (it may ask from
 *	any context) to the health reporter
 * @event_work: delivers @pending_events to the RDMA driver
 * @pending_events: KITE_AUX_EVENT_* bits raised where @rdma_lock cannot
 *	be taken (under RTNL)
 * @rdma_lock: serialises creation and removal of @rdma, @roce_enabled
 *	and event delivery to the RDMA driver
 * @rdma: the auxiliary device for the RDMA driver, NULL when absent
 * @roce_enabled: devlink enable_roce, applied at devlink reload
 * @link_up: last link state seen
 * @removing: remove has started; reset requests are refused
 * @resetting: between quiesce and the restart of a reset; a reset request
 *	then (the RDMA driver's remove asks for one when its device failed)
 *	is covered by the reset in progress
 * @rings_up: the rings are allocated and enabled (RTNL)
 * @bad_reg_status: STATUS reads that made no sense (ethtool -S)
 * @bad_reg_version: HW_REV reads after a reset that differed from probe's
 * @fw_reporter: the devlink health reporter "fw_fatal"; its recovery is
 *	a function reset (@reset_work)
 * @health_work: the health poll: reads STATUS every KITE_EN_HEALTH_POLL_MS,
 *	for a device that fails without raising its interrupt
 * @fatal_seen: a fatal error was reported and not yet reset away; set
 *	with test_and_set_bit() so that the interrupt and the poll report it
 *	once
 * @resets: function resets completed since probe
 * @rtc: the function has the real-time clock (KITE_CAPS_RTC)
 * @ptp_info: the PTP clock operations of the real-time clock
 * @ptp: the PTP hardware clock, NULL without KITE_CAPS_RTC or PTP support
 * @ptp_lock: makes each real-time clock command (argument, then command
 *	register) one step, and guards @ptp_ppb
 * @ptp_ppb: the rate offset last set, given back to the device after a reset
 */
struct kite_en_dev {
	struct pci_dev *pdev;
	struct devlink *devlink;
	struct net_device *netdev;
	void __iomem *regs;
	void __iomem *kernel_db;
	u32 hw_rev;
	u32 fw_ver;
	char fw_version[KITE_FW_VERSION_LEN];
	u64 serial;
	u8 mac[ETH_ALEN];
	unsigned int hw_queues;
	unsigned int num_vectors;
	struct kite_en_vectors vec;
	unsigned int num_queues;
	unsigned int tx_depth;
	unsigned int rx_depth;
	struct kite_en_queue *queues;
	u32 msg_enable;
	struct completion intr_test_done;
	struct work_struct link_work;
	struct work_struct reset_work;
	struct work_struct fatal_work;
	struct work_struct event_work;
	unsigned long pending_events;
	struct mutex rdma_lock;	/* see @rdma_lock above */
	struct kite_aux_dev *rdma;
	bool roce_enabled;
	bool link_up;
	bool removing;
	bool resetting;
	bool rings_up;
	atomic64_t bad_reg_status;
	atomic64_t bad_reg_version;
	struct devlink_health_reporter *fw_reporter;
	struct delayed_work health_work;
	unsigned long fatal_seen;
	u64 resets;
	bool rtc;
	struct ptp_clock_info ptp_info;
	struct ptp_clock *ptp;
	spinlock_t ptp_lock;	/* see @ptp_lock above */
	s32 ptp_ppb;
};

/* The health poll's period. */
#define KITE_EN_HEALTH_POLL_MS		1000

static inline u32 kite_en_rd(struct kite_en_dev *en, u32 reg)
{
	return readl(en->regs + reg);
}

static inline void kite_en_wr(struct kite_en_dev *en, u32 reg, u32 val)
{
	writel(val, en->regs + reg);
}

/* kite_en_hw.c: register decoding, reset and policies (unit-tested) */
int kite_en_check_identity(u32 id, u32 hw_rev);
int kite_en_status_to_errno(u32 status);
bool kite_en_status_bogus(u32 status);
void kite_en_mac_from_regs(u32 mac_hi, u32 mac_lo, u8 *mac);
void kite_en_mac_to_regs(const u8 *mac, u32 *mac_hi, u32 *mac_lo);
void kite_en_fw_version(u32 fw_ver, char *buf, size_t len);
unsigned int kite_en_vectors_wanted(unsigned int hw_vectors,
				    unsigned int hw_queues,
				    unsigned int online_cpus);
int kite_en_split_vectors(unsigned int granted, unsigned int hw_queues,
			  unsigned int online_cpus, struct kite_en_vectors *vec);
unsigned int kite_en_ring_used(u16 tail, u16 head);
int kite_en_reset(struct kite_en_dev *en);

/* kite_en_netdev.c */
int kite_en_netdev_create(struct kite_en_dev *en);
void kite_en_netdev_destroy(struct kite_en_dev *en);
int kite_en_rings_start(struct kite_en_dev *en);
void kite_en_rings_stop(struct kite_en_dev *en);
int kite_en_reconfigure(struct kite_en_dev *en, unsigned int num_queues,
			unsigned int tx_depth, unsigned int rx_depth);
void kite_en_update_link(struct kite_en_dev *en);
void kite_en_get_queue_stats(struct kite_en_queue *q, u64 *tx, u64 *rx);
extern const struct ethtool_ops kite_en_ethtool_ops;

/* kite_en_devlink.c */
struct kite_en_dev *kite_en_devlink_alloc(struct device *dev);
int kite_en_devlink_register(struct kite_en_dev *en);
void kite_en_devlink_unregister(struct kite_en_dev *en);
void kite_en_devlink_free(struct kite_en_dev *en);
int kite_en_health_create(struct kite_en_dev *en);
void kite_en_health_destroy(struct kite_en_dev *en);
void kite_en_fatal(struct kite_en_dev *en, const char *why);

/* kite_en_ptp.c */
int kite_en_ptp_create(struct kite_en_dev *en);
void kite_en_ptp_destroy(struct kite_en_dev *en);
void kite_en_ptp_restore(struct kite_en_dev *en);
int kite_en_ptp_index(struct kite_en_dev *en);

/* kite_en_aux.c */
int kite_en_rdma_add(struct kite_en_dev *en);
void kite_en_rdma_del(struct kite_en_dev *en);
void kite_en_rdma_event(struct kite_en_dev *en, enum kite_aux_event event);
void kite_en_rdma_event_defer(struct kite_en_dev *en,
			      enum kite_aux_event event);
void kite_en_event_work(struct work_struct *work);

#endif /* _KITE_EN_H_ */
