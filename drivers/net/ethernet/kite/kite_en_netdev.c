// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: the net_device, its descriptor
 * rings and NAPI.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <net/netdev_queues.h>
#include <net/page_pool/helpers.h>

#include "kite_en.h"

#define KITE_EN_RX_HEADROOM	(NET_SKB_PAD + NET_IP_ALIGN)
/* Stop a TX queue when fewer descriptors are free, wake it above WAKE. */
#define KITE_EN_TX_STOP_THRESH	2
#define KITE_EN_TX_WAKE_THRESH	16

static struct kite_en_dev *kite_en_from_netdev(struct net_device *netdev)
{
	return *(struct kite_en_dev **)netdev_priv(netdev);
}

static void kite_en_q_wr(struct kite_en_queue *q, u32 reg, u32 val)
{
	writel(val, q->regs + reg);
}

static u32 kite_en_q_rd(struct kite_en_queue *q, u32 reg)
{
	return readl(q->regs + reg);
}

/* Largest frame the MTU allows, with one VLAN tag. */
static unsigned int kite_en_max_frame(unsigned int mtu)
{
	return mtu + VLAN_ETH_HLEN;
}

/* Page order of an RX buffer that holds a whole frame and the skb tail. */
static unsigned int kite_en_rx_order(unsigned int mtu)
{
	return get_order(KITE_EN_RX_HEADROOM + kite_en_max_frame(mtu) +
			 SKB_DATA_ALIGN(sizeof(struct skb_shared_info)));
}

static unsigned int kite_en_rx_buf_len(unsigned int order)
{
	return (PAGE_SIZE << order) - KITE_EN_RX_HEADROOM -
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

static void kite_en_stats_add(struct kite_en_stats *st, u64 packets, u64 bytes)
{
	u64_stats_update_begin(&st->syncp);
	st->packets += packets;
	st->bytes += bytes;
	u64_stats_update_end(&st->syncp);
}

static void kite_en_stats_err(struct kite_en_stats *st)
{
	u64_stats_update_begin(&st->syncp);
	st->errors++;
	u64_stats_update_end(&st->syncp);
}

static void kite_en_stats_read(struct kite_en_stats *st, u64 *v)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&st->syncp);
		v[0] = st->packets;
		v[1] = st->bytes;
		v[2] = st->errors;
	} while (u64_stats_fetch_retry(&st->syncp, start));
}

/**
 * kite_en_get_queue_stats() - a consistent copy of a queue pair's counters
 * @q: the queue pair
 * @tx: packets, bytes, errors sent
 * @rx: packets, bytes, errors received
 */
void kite_en_get_queue_stats(struct kite_en_queue *q, u64 *tx, u64 *rx)
{
	kite_en_stats_read(&q->tx_stats, tx);
	kite_en_stats_read(&q->rx_stats, rx);
}

/* ---- TX ---- */

/* Free TX descriptors; head is NAPI's, tail xmit's. */
static unsigned int kite_en_tx_free(struct kite_en_queue *q)
{
	return q->en->tx_depth - kite_en_ring_used(READ_ONCE(q->tx_tail),
						  READ_ONCE(q->tx_head));
}

static bool kite_en_tx_clean(struct kite_en_queue *q, int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(q->en->netdev, q->index);
	struct device *dev = &q->en->pdev->dev;
	unsigned int mask = q->en->tx_depth - 1;
	unsigned int pkts = 0, bytes = 0;

	while (q->tx_head != READ_ONCE(q->tx_tail)) {
		struct kite_eth_txd *d = &q->txd[q->tx_head & mask];
		struct kite_en_txbuf *b = &q->txbuf[q->tx_head & mask];
		u16 status = le16_to_cpu(READ_ONCE(d->status));

		if (!(status & KITE_ETH_DESC_DONE))
			break;
		/* Read the descriptor only after the device released it. */
		dma_rmb();
		dma_unmap_single(dev, b->dma, b->skb->len, DMA_TO_DEVICE);
		if (status & KITE_ETH_DESC_ERR)
			kite_en_stats_err(&q->tx_stats);
		pkts++;
		bytes += b->skb->len;
		napi_consume_skb(b->skb, budget);
		b->skb = NULL;
		WRITE_ONCE(q->tx_head, q->tx_head + 1);
	}
	kite_en_stats_add(&q->tx_stats, pkts, bytes);
	/* BQL completion, and a wake-up ordered against xmit's stop. */
	netif_txq_completed_wake(txq, pkts, bytes, kite_en_tx_free(q),
				 KITE_EN_TX_WAKE_THRESH);
	return q->tx_head == READ_ONCE(q->tx_tail);
}

static netdev_tx_t kite_en_start_xmit(struct sk_buff *skb,
				      struct net_device *netdev)
{
	struct kite_en_dev *en = kite_en_from_netdev(netdev);
	struct kite_en_queue *q = &en->queues[skb_get_queue_mapping(skb)];
	struct netdev_queue *txq = netdev_get_tx_queue(netdev, q->index);
	unsigned int idx = q->tx_tail & (en->tx_depth - 1);
	struct kite_eth_txd *d = &q->txd[idx];
	dma_addr_t dma;

	if (unlikely(!kite_en_tx_free(q))) {
		/* The queue is stopped before this can happen. */
		netif_tx_stop_queue(txq);
		return NETDEV_TX_BUSY;
	}
	/* No NETIF_F_SG: the stack hands over linear skbs only. */
	if (skb_put_padto(skb, ETH_ZLEN)) {
		kite_en_stats_err(&q->tx_stats);
		return NETDEV_TX_OK;
	}
	if (skb->len > kite_en_max_frame(netdev->mtu)) {
		kite_en_stats_err(&q->tx_stats);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	dma = dma_map_single(&en->pdev->dev, skb->data, skb->len, DMA_TO_DEVICE);
	if (dma_mapping_error(&en->pdev->dev, dma)) {
		kite_en_stats_err(&q->tx_stats);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	q->txbuf[idx].skb = skb;
	q->txbuf[idx].dma = dma;
	d->addr = cpu_to_le64(dma);
	d->len = cpu_to_le16(skb->len);
	d->flags = 0;
	d->status = 0;
	WRITE_ONCE(q->tx_tail, q->tx_tail + 1);
	netdev_tx_sent_queue(txq, skb->len);
	skb_tx_timestamp(skb);

	netif_txq_maybe_stop(txq, kite_en_tx_free(q), KITE_EN_TX_STOP_THRESH,
			     KITE_EN_TX_WAKE_THRESH);
	/* writel() orders the descriptor writes before the doorbell. */
	if (!netdev_xmit_more() || netif_xmit_stopped(txq))
		kite_en_q_wr(q, KITE_ETHQ_TX_TAIL, q->tx_tail);
	return NETDEV_TX_OK;
}

/* ---- RX ---- */

static int kite_en_rx_post(struct kite_en_queue *q)
{
	unsigned int mask = q->en->rx_depth - 1, posted = 0;
	unsigned int len = kite_en_rx_buf_len(q->pool->p.order);

	while (kite_en_ring_used(q->rx_tail, q->rx_head) < q->en->rx_depth) {
		unsigned int idx = q->rx_tail & mask;
		struct page *page = page_pool_dev_alloc_pages(q->pool);
		struct kite_eth_rxd *d = &q->rxd[idx];

		if (!page)
			break;
		q->rxpages[idx] = page;
		d->addr = cpu_to_le64(page_pool_get_dma_addr(page) +
				      KITE_EN_RX_HEADROOM);
		d->buf_len = cpu_to_le16(min(len, U16_MAX));
		d->flags = 0;
		d->pkt_len = 0;
		d->status = 0;
		q->rx_tail++;
		posted++;
	}
	if (posted)
		kite_en_q_wr(q, KITE_ETHQ_RX_TAIL, q->rx_tail);
	return posted;
}

static int kite_en_rx_poll(struct kite_en_queue *q, int budget)
{
	unsigned int mask = q->en->rx_depth - 1, bytes = 0;
	unsigned int buf_len = kite_en_rx_buf_len(q->pool->p.order);
	int done = 0;

	while (done < budget && q->rx_head != q->rx_tail) {
		unsigned int idx = q->rx_head & mask;
		struct kite_eth_rxd *d = &q->rxd[idx];
		struct page *page = q->rxpages[idx];
		u16 status = le16_to_cpu(READ_ONCE(d->status));
		unsigned int len;
		struct sk_buff *skb;

		if (!(status & KITE_ETH_DESC_DONE))
			break;
		dma_rmb();
		len = le16_to_cpu(d->pkt_len);
		q->rxpages[idx] = NULL;
		q->rx_head++;
		/* Never trust the device's length. */
		if ((status & KITE_ETH_DESC_ERR) || len < ETH_HLEN ||
		    len > buf_len) {
			if (!(status & KITE_ETH_DESC_ERR))
				netdev_warn_once(q->en->netdev,
						 "device reported a %u byte frame in a %u byte buffer\n",
						 len, buf_len);
			kite_en_stats_err(&q->rx_stats);
			page_pool_put_full_page(q->pool, page, true);
			continue;
		}
		page_pool_dma_sync_for_cpu(q->pool, page, KITE_EN_RX_HEADROOM, len);
		skb = napi_build_skb(page_address(page), PAGE_SIZE << q->pool->p.order);
		if (!skb) {
			kite_en_stats_err(&q->rx_stats);
			page_pool_put_full_page(q->pool, page, true);
			continue;
		}
		skb_mark_for_recycle(skb);
		skb_reserve(skb, KITE_EN_RX_HEADROOM);
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, q->en->netdev);
		skb_record_rx_queue(skb, q->index);
		bytes += len;
		napi_gro_receive(&q->napi, skb);
		done++;
	}
	kite_en_stats_add(&q->rx_stats, done, bytes);
	kite_en_rx_post(q);
	return done;
}

/* A completed descriptor NAPI has not processed yet. */
static bool kite_en_queue_pending(struct kite_en_queue *q)
{
	struct kite_en_dev *en = q->en;

	if (q->tx_head != READ_ONCE(q->tx_tail) &&
	    (le16_to_cpu(READ_ONCE(q->txd[q->tx_head & (en->tx_depth - 1)].status)) &
	     KITE_ETH_DESC_DONE))
		return true;
	return q->rx_head != q->rx_tail &&
	       (le16_to_cpu(READ_ONCE(q->rxd[q->rx_head & (en->rx_depth - 1)].status)) &
		KITE_ETH_DESC_DONE);
}

static int kite_en_napi_poll(struct napi_struct *napi, int budget)
{
	struct kite_en_queue *q = container_of(napi, struct kite_en_queue, napi);
	bool tx_done = kite_en_tx_clean(q, budget);
	int done = kite_en_rx_poll(q, budget);

	if (!tx_done)
		return budget;
	if (done < budget && napi_complete_done(napi, done)) {
		/*
		 * The device interrupts only for completions after the arm:
		 * flush the arm, then look again for one that came before.
		 */
		kite_en_q_wr(q, KITE_ETHQ_INTR, KITE_ETHQ_INTR_ARM);
		kite_en_q_rd(q, KITE_ETHQ_TX_HEAD);
		if (kite_en_queue_pending(q))
			napi_schedule(napi);
	}
	return min(done, budget);
}

static irqreturn_t kite_en_queue_irq(int irq, void *data)
{
	struct kite_en_queue *q = data;

	napi_schedule_irqoff(&q->napi);
	return IRQ_HANDLED;
}

/* ---- queue setup ---- */

static void kite_en_queue_free(struct kite_en_queue *q)
{
	struct kite_en_dev *en = q->en;
	struct device *dev = &en->pdev->dev;
	unsigned int i;

	if (q->txbuf) {
		for (i = 0; i < en->tx_depth; i++) {
			if (!q->txbuf[i].skb)
				continue;
			dma_unmap_single(dev, q->txbuf[i].dma,
					 q->txbuf[i].skb->len, DMA_TO_DEVICE);
			dev_kfree_skb_any(q->txbuf[i].skb);
		}
		kvfree(q->txbuf);
		q->txbuf = NULL;
	}
	if (q->rxpages) {
		for (i = 0; i < en->rx_depth; i++)
			if (q->rxpages[i])
				page_pool_put_full_page(q->pool, q->rxpages[i],
							false);
		kvfree(q->rxpages);
		q->rxpages = NULL;
	}
	if (q->pool) {
		page_pool_destroy(q->pool);
		q->pool = NULL;
	}
	if (q->rxd) {
		dma_free_coherent(dev, en->rx_depth * sizeof(*q->rxd), q->rxd,
				  q->rxd_dma);
		q->rxd = NULL;
	}
	if (q->txd) {
		dma_free_coherent(dev, en->tx_depth * sizeof(*q->txd), q->txd,
				  q->txd_dma);
		q->txd = NULL;
	}
}

static int kite_en_queue_alloc(struct kite_en_queue *q)
{
	struct kite_en_dev *en = q->en;
	struct device *dev = &en->pdev->dev;
	struct page_pool_params pp = {
		.order = kite_en_rx_order(en->netdev->mtu),
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.pool_size = en->rx_depth,
		.nid = dev_to_node(dev),
		.dev = dev,
		.napi = &q->napi,
		.netdev = en->netdev,
		.dma_dir = DMA_FROM_DEVICE,
		.offset = KITE_EN_RX_HEADROOM,
	};

	pp.max_len = kite_en_rx_buf_len(pp.order);
	q->tx_head = 0;
	q->tx_tail = 0;
	q->rx_head = 0;
	q->rx_tail = 0;
	q->txd = dma_alloc_coherent(dev, en->tx_depth * sizeof(*q->txd),
				    &q->txd_dma, GFP_KERNEL);
	q->rxd = dma_alloc_coherent(dev, en->rx_depth * sizeof(*q->rxd),
				    &q->rxd_dma, GFP_KERNEL);
	q->txbuf = kvcalloc(en->tx_depth, sizeof(*q->txbuf), GFP_KERNEL);
	q->rxpages = kvcalloc(en->rx_depth, sizeof(*q->rxpages), GFP_KERNEL);
	if (!q->txd || !q->rxd || !q->txbuf || !q->rxpages)
		goto err_free;
	q->pool = page_pool_create(&pp);
	if (IS_ERR(q->pool)) {
		int err = PTR_ERR(q->pool);

		q->pool = NULL;
		kite_en_queue_free(q);
		return err;
	}
	return 0;

err_free:
	kite_en_queue_free(q);
	return -ENOMEM;
}

static u32 kite_en_ring_cfg(unsigned int depth, unsigned int vector)
{
	return FIELD_PREP(KITE_ETHQ_CFG_LOG_DEPTH, ilog2(depth)) |
	       FIELD_PREP(KITE_ETHQ_CFG_VECTOR, vector) | KITE_ETHQ_CFG_ENABLE;
}

static void kite_en_queue_hw_start(struct kite_en_queue *q)
{
	unsigned int vector = KITE_EN_CORE_VECTORS + q->index;

	kite_en_q_wr(q, KITE_ETHQ_TX_BASE_LO, lower_32_bits(q->txd_dma));
	kite_en_q_wr(q, KITE_ETHQ_TX_BASE_HI, upper_32_bits(q->txd_dma));
	kite_en_q_wr(q, KITE_ETHQ_TX_CFG, kite_en_ring_cfg(q->en->tx_depth, vector));
	kite_en_q_wr(q, KITE_ETHQ_RX_BASE_LO, lower_32_bits(q->rxd_dma));
	kite_en_q_wr(q, KITE_ETHQ_RX_BASE_HI, upper_32_bits(q->rxd_dma));
	kite_en_q_wr(q, KITE_ETHQ_RX_CFG, kite_en_ring_cfg(q->en->rx_depth, vector));
}

static void kite_en_queue_hw_stop(struct kite_en_queue *q)
{
	kite_en_q_wr(q, KITE_ETHQ_TX_CFG, 0);
	kite_en_q_wr(q, KITE_ETHQ_RX_CFG, 0);
	/* Flush the posted writes: the device stops touching the rings. */
	kite_en_q_rd(q, KITE_ETHQ_TX_HEAD);
}

static void kite_en_rings_down(struct kite_en_dev *en, unsigned int count)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		struct kite_en_queue *q = &en->queues[i];

		kite_en_queue_hw_stop(q);
		free_irq(q->irq, q);
		napi_disable(&q->napi);
		netif_napi_del(&q->napi);
		kite_en_queue_free(q);
	}
}

static int kite_en_rings_up(struct kite_en_dev *en)
{
	unsigned int i;
	int err;

	for (i = 0; i < en->num_queues; i++) {
		struct kite_en_queue *q = &en->queues[i];

		netif_napi_add(en->netdev, &q->napi, kite_en_napi_poll);
		err = kite_en_queue_alloc(q);
		if (err)
			goto err_napi_del;
		snprintf(q->name, sizeof(q->name), "%s-q%u", en->netdev->name, i);
		err = request_irq(q->irq, kite_en_queue_irq, 0, q->name, q);
		if (err)
			goto err_queue_free;
		napi_enable(&q->napi);
		kite_en_queue_hw_start(q);
		if (!kite_en_rx_post(q)) {
			err = -ENOMEM;
			i++;
			goto err_rings_down;
		}
		kite_en_q_wr(q, KITE_ETHQ_INTR, KITE_ETHQ_INTR_ARM);
	}
	return 0;

err_queue_free:
	kite_en_queue_free(&en->queues[i]);
err_napi_del:
	netif_napi_del(&en->queues[i].napi);
err_rings_down:
	kite_en_rings_down(en, i);
	return err;
}

/* ---- net_device_ops ---- */

/**
 * kite_en_rings_start() - set up and enable the rings of a running netdev
 * @en: the device
 *
 * Context: RTNL held.
 * Return: 0 or a negative errno.
 */
int kite_en_rings_start(struct kite_en_dev *en)
{
	struct net_device *netdev = en->netdev;
	int err;

	err = netif_set_real_num_tx_queues(netdev, en->num_queues);
	if (!err)
		err = netif_set_real_num_rx_queues(netdev, en->num_queues);
	if (err)
		return err;
	err = kite_en_rings_up(en);
	if (err)
		return err;
	kite_en_wr(en, KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE |
		   ((netdev->flags & IFF_PROMISC) ? KITE_ETH_CTRL_PROMISC : 0));
	en->rings_up = true;
	netif_tx_start_all_queues(netdev);
	kite_en_update_link(en);
	return 0;
}

/**
 * kite_en_rings_stop() - disable and free the rings
 * @en: the device
 *
 * Does nothing if the rings are not up (a restart failed).
 *
 * Context: RTNL held.
 */
void kite_en_rings_stop(struct kite_en_dev *en)
{
	/* A failed restart already freed everything. */
	if (!en->rings_up)
		return;
	en->rings_up = false;
	netif_tx_disable(en->netdev);
	netif_carrier_off(en->netdev);
	kite_en_wr(en, KITE_REG_ETH_CTRL, 0);
	kite_en_rings_down(en, en->num_queues);
}

static int kite_en_open(struct net_device *netdev)
{
	return kite_en_rings_start(kite_en_from_netdev(netdev));
}

static int kite_en_stop(struct net_device *netdev)
{
	kite_en_rings_stop(kite_en_from_netdev(netdev));
	return 0;
}

/**
 * kite_en_reconfigure() - change queue count and ring sizes
 * @en: the device
 * @num_queues: queue pairs, 1..@en->vec.eth
 * @tx_depth: TX ring size, a power of two in the device's range
 * @rx_depth: RX ring size, likewise
 *
 * Context: RTNL held. A running interface is stopped and restarted.
 * Return: 0 or a negative errno; on failure the old settings are restored.
 */
int kite_en_reconfigure(struct kite_en_dev *en, unsigned int num_queues,
			unsigned int tx_depth, unsigned int rx_depth)
{
	unsigned int old_q = en->num_queues, old_tx = en->tx_depth;
	unsigned int old_rx = en->rx_depth;
	bool running = netif_running(en->netdev);
	int err;

	if (running)
		kite_en_rings_stop(en);
	en->num_queues = num_queues;
	en->tx_depth = tx_depth;
	en->rx_depth = rx_depth;
	if (!running)
		return 0;
	err = kite_en_rings_start(en);
	if (!err)
		return 0;
	netdev_err(en->netdev, "reconfiguration failed (%d), restoring\n", err);
	en->num_queues = old_q;
	en->tx_depth = old_tx;
	en->rx_depth = old_rx;
	if (kite_en_rings_start(en))
		dev_close(en->netdev);
	return err;
}

static int kite_en_change_mtu(struct net_device *netdev, int mtu)
{
	struct kite_en_dev *en = kite_en_from_netdev(netdev);
	bool running = netif_running(netdev);
	int err = 0;

	/* The core checked min_mtu/max_mtu. */
	if (running)
		kite_en_rings_stop(en);
	WRITE_ONCE(netdev->mtu, mtu);
	kite_en_wr(en, KITE_REG_ETH_MTU, mtu);
	if (running)
		err = kite_en_rings_start(en);
	kite_en_rdma_event_defer(en, KITE_AUX_EVENT_MTU_CHANGE);
	return err;
}

static int kite_en_set_mac_address(struct net_device *netdev, void *p)
{
	struct kite_en_dev *en = kite_en_from_netdev(netdev);
	u32 hi, lo;
	int err;

	err = eth_prepare_mac_addr_change(netdev, p);
	if (err)
		return err;
	eth_commit_mac_addr_change(netdev, p);
	kite_en_mac_to_regs(netdev->dev_addr, &hi, &lo);
	kite_en_wr(en, KITE_REG_ETH_MAC_LO, lo);
	kite_en_wr(en, KITE_REG_ETH_MAC_HI, hi);
	kite_en_rdma_event_defer(en, KITE_AUX_EVENT_MAC_CHANGE);
	return 0;
}

static void kite_en_set_rx_mode(struct net_device *netdev)
{
	struct kite_en_dev *en = kite_en_from_netdev(netdev);
	u32 ctrl = kite_en_rd(en, KITE_REG_ETH_CTRL);

	/* The device accepts all multicast; only promiscuity is a choice. */
	if (netdev->flags & IFF_PROMISC)
		ctrl |= KITE_ETH_CTRL_PROMISC;
	else
		ctrl &= ~KITE_ETH_CTRL_PROMISC;
	kite_en_wr(en, KITE_REG_ETH_CTRL, ctrl);
}

static void kite_en_get_stats64(struct net_device *netdev,
				struct rtnl_link_stats64 *s)
{
	struct kite_en_dev *en = kite_en_from_netdev(netdev);
	unsigned int i;

	for (i = 0; i < en->vec.eth; i++) {
		u64 tx[3], rx[3];

		kite_en_get_queue_stats(&en->queues[i], tx, rx);
		s->tx_packets += tx[0];
		s->tx_bytes += tx[1];
		s->tx_errors += tx[2];
		s->rx_packets += rx[0];
		s->rx_bytes += rx[1];
		s->rx_errors += rx[2];
	}
}

static const struct net_device_ops kite_en_netdev_ops = {
	.ndo_open = kite_en_open,
	.ndo_stop = kite_en_stop,
	.ndo_start_xmit = kite_en_start_xmit,
	.ndo_set_mac_address = kite_en_set_mac_address,
	.ndo_change_mtu = kite_en_change_mtu,
	.ndo_set_rx_mode = kite_en_set_rx_mode,
	.ndo_get_stats64 = kite_en_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
};

/**
 * kite_en_update_link() - follow the device's link state
 * @en: the device
 *
 * Sets the carrier from KITE_STATUS_LINK_UP and tells the RDMA driver when
 * the state changed (from a work item). A STATUS value that makes no sense
 * (kite_en_status_bogus()) changes nothing and has the device reset.
 *
 * Context: process context.
 */
void kite_en_update_link(struct kite_en_dev *en)
{
	u32 status = kite_en_rd(en, KITE_REG_STATUS);
	bool up = status & KITE_STATUS_LINK_UP;

	if (kite_en_status_bogus(status)) {
		/* Nothing read from the device can be trusted: reset it. */
		atomic64_inc(&en->bad_reg_status);
		dev_err(&en->pdev->dev, "bad device data (reg-status): STATUS reads %#x, resetting\n",
			status);
		queue_work(system_dfl_wq, &en->reset_work);
		return;
	}

	if (up && netif_running(en->netdev))
		netif_carrier_on(en->netdev);
	else
		netif_carrier_off(en->netdev);
	if (up == en->link_up)
		return;
	en->link_up = up;
	netif_info(en, link, en->netdev, "link %s\n", up ? "up" : "down");
	/* Only the latest link state matters to the RDMA driver. */
	clear_bit(up ? KITE_AUX_EVENT_LINK_DOWN : KITE_AUX_EVENT_LINK_UP,
		  &en->pending_events);
	kite_en_rdma_event_defer(en, up ? KITE_AUX_EVENT_LINK_UP :
					  KITE_AUX_EVENT_LINK_DOWN);
}

/**
 * kite_en_netdev_create() - create and register the Ethernet interface
 * @en: the device, reset and with its vectors split
 *
 * Return: 0 or a negative errno.
 */
int kite_en_netdev_create(struct kite_en_dev *en)
{
	struct net_device *netdev;
	unsigned int i;
	int err;

	netdev = alloc_etherdev_mqs(sizeof(en), en->vec.eth, en->vec.eth);
	if (!netdev)
		return -ENOMEM;
	*(struct kite_en_dev **)netdev_priv(netdev) = en;
	en->netdev = netdev;
	SET_NETDEV_DEV(netdev, &en->pdev->dev);
	netdev->netdev_ops = &kite_en_netdev_ops;
	netdev->ethtool_ops = &kite_en_ethtool_ops;
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	netdev->min_mtu = KITE_ETH_MIN_MTU;
	netdev->max_mtu = KITE_ETH_MAX_MTU;
	netdev->mtu = ETH_DATA_LEN;
	eth_hw_addr_set(netdev, en->mac);

	en->queues = kcalloc(en->vec.eth, sizeof(*en->queues), GFP_KERNEL);
	if (!en->queues) {
		err = -ENOMEM;
		goto err_free_netdev;
	}
	for (i = 0; i < en->vec.eth; i++) {
		struct kite_en_queue *q = &en->queues[i];

		q->en = en;
		q->index = i;
		q->regs = en->regs + KITE_REG_ETHQ(i);
		q->irq = pci_irq_vector(en->pdev, KITE_EN_CORE_VECTORS + i);
		u64_stats_init(&q->tx_stats.syncp);
		u64_stats_init(&q->rx_stats.syncp);
	}
	en->num_queues = en->vec.eth;
	en->tx_depth = KITE_EN_DEF_RING_DEPTH;
	en->rx_depth = KITE_EN_DEF_RING_DEPTH;
	en->msg_enable = netif_msg_init(-1, NETIF_MSG_DRV | NETIF_MSG_PROBE |
					NETIF_MSG_LINK);
	kite_en_wr(en, KITE_REG_ETH_MTU, netdev->mtu);
	netif_carrier_off(netdev);

	err = register_netdev(netdev);
	if (err)
		goto err_free_queues;
	return 0;

err_free_queues:
	kfree(en->queues);
	en->queues = NULL;
err_free_netdev:
	free_netdev(netdev);
	en->netdev = NULL;
	return err;
}

/**
 * kite_en_netdev_destroy() - unregister and free the Ethernet interface
 * @en: the device
 */
void kite_en_netdev_destroy(struct kite_en_dev *en)
{
	unregister_netdev(en->netdev);
	kfree(en->queues);
	en->queues = NULL;
	free_netdev(en->netdev);
	en->netdev = NULL;
}
