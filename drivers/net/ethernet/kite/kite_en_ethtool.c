// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 Ethernet NIC core driver: ethtool operations.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/ethtool.h>
#include <linux/pci.h>

#include "kite_en.h"

/* Per queue pair: TX and RX packets, bytes and errors. */
static const char * const kite_en_queue_stat_names[] = {
	"tx%u_packets", "tx%u_bytes", "tx%u_errors",
	"rx%u_packets", "rx%u_bytes", "rx%u_errors",
};

#define KITE_EN_QUEUE_STATS	ARRAY_SIZE(kite_en_queue_stat_names)

static struct kite_en_dev *kite_en_ethtool_dev(struct net_device *netdev)
{
	return *(struct kite_en_dev **)netdev_priv(netdev);
}

static void kite_en_get_drvinfo(struct net_device *netdev,
				struct ethtool_drvinfo *info)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);

	strscpy(info->driver, KITE_EN_MODNAME, sizeof(info->driver));
	strscpy(info->fw_version, en->fw_version, sizeof(info->fw_version));
	strscpy(info->bus_info, pci_name(en->pdev), sizeof(info->bus_info));
}

static int kite_en_get_link_ksettings(struct net_device *netdev,
				      struct ethtool_link_ksettings *ks)
{
	/* A fixed 10 Gb/s port with no negotiable link modes. */
	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.autoneg = AUTONEG_DISABLE;
	ks->base.port = PORT_OTHER;
	if (netif_carrier_ok(netdev)) {
		ks->base.speed = SPEED_10000;
		ks->base.duplex = DUPLEX_FULL;
	} else {
		ks->base.speed = SPEED_UNKNOWN;
		ks->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

static void kite_en_get_ringparam(struct net_device *netdev,
				  struct ethtool_ringparam *ring,
				  struct kernel_ethtool_ringparam *kring,
				  struct netlink_ext_ack *extack)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);

	ring->rx_max_pending = BIT(KITE_ETHQ_MAX_LOG_DEPTH);
	ring->tx_max_pending = BIT(KITE_ETHQ_MAX_LOG_DEPTH);
	ring->rx_pending = en->rx_depth;
	ring->tx_pending = en->tx_depth;
}

static int kite_en_set_ringparam(struct net_device *netdev,
				 struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);
	unsigned int min = BIT(KITE_ETHQ_MIN_LOG_DEPTH);

	/* The core rejects values above the maxima. */
	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG_MOD(extack, "mini and jumbo rings are not supported");
		return -EINVAL;
	}
	if (ring->tx_pending < min || ring->rx_pending < min) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "rings need at least %u entries", min);
		return -EINVAL;
	}
	return kite_en_reconfigure(en, en->num_queues,
				   roundup_pow_of_two(ring->tx_pending),
				   roundup_pow_of_two(ring->rx_pending));
}

static void kite_en_get_channels(struct net_device *netdev,
				 struct ethtool_channels *ch)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);

	ch->max_combined = en->vec.eth;
	ch->combined_count = en->num_queues;
}

static int kite_en_set_channels(struct net_device *netdev,
				struct ethtool_channels *ch)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);

	/* The core checked the counts against get_channels' maxima. */
	if (!ch->combined_count || ch->rx_count || ch->tx_count)
		return -EINVAL;
	return kite_en_reconfigure(en, ch->combined_count, en->tx_depth,
				   en->rx_depth);
}

/* Device-wide counters after the queues': bad_reg_status, bad_reg_version. */
#define KITE_EN_DEV_STATS	2

static int kite_en_get_sset_count(struct net_device *netdev, int sset)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return en->vec.eth * KITE_EN_QUEUE_STATS + KITE_EN_DEV_STATS;
}

static void kite_en_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);
	unsigned int i, j;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < en->vec.eth; i++)
		for (j = 0; j < KITE_EN_QUEUE_STATS; j++)
			ethtool_sprintf(&data, kite_en_queue_stat_names[j], i);
	ethtool_puts(&data, "bad_reg_status");
	ethtool_puts(&data, "bad_reg_version");
}

static void kite_en_get_ethtool_stats(struct net_device *netdev,
				      struct ethtool_stats *stats, u64 *data)
{
	struct kite_en_dev *en = kite_en_ethtool_dev(netdev);
	unsigned int i;

	for (i = 0; i < en->vec.eth; i++) {
		kite_en_get_queue_stats(&en->queues[i], data, data + 3);
		data += KITE_EN_QUEUE_STATS;
	}
	/* Register reads that made no sense (kite_en_status_bogus()). */
	*data++ = atomic64_read(&en->bad_reg_status);
	*data++ = atomic64_read(&en->bad_reg_version);
}

static u32 kite_en_get_msglevel(struct net_device *netdev)
{
	return kite_en_ethtool_dev(netdev)->msg_enable;
}

static void kite_en_set_msglevel(struct net_device *netdev, u32 level)
{
	kite_en_ethtool_dev(netdev)->msg_enable = level;
}

/*
 * Packets are timestamped in software (the transmit path calls
 * skb_tx_timestamp()); the PHC is the clock of the RDMA completions.
 */
static int kite_en_get_ts_info(struct net_device *netdev,
			       struct kernel_ethtool_ts_info *info)
{
	info->so_timestamping = SOF_TIMESTAMPING_TX_SOFTWARE;
	info->phc_index = kite_en_ptp_index(kite_en_ethtool_dev(netdev));
	return 0;
}

const struct ethtool_ops kite_en_ethtool_ops = {
	.get_drvinfo = kite_en_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = kite_en_get_link_ksettings,
	.get_ringparam = kite_en_get_ringparam,
	.set_ringparam = kite_en_set_ringparam,
	.get_channels = kite_en_get_channels,
	.set_channels = kite_en_set_channels,
	.get_sset_count = kite_en_get_sset_count,
	.get_strings = kite_en_get_strings,
	.get_ethtool_stats = kite_en_get_ethtool_stats,
	.get_msglevel = kite_en_get_msglevel,
	.set_msglevel = kite_en_set_msglevel,
	.get_ts_info = kite_en_get_ts_info,
};
