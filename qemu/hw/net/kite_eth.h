/*
 * Kite NIC: the Ethernet function (descriptor rings, RX steering, link).
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_NET_KITE_ETH_H
#define HW_NET_KITE_ETH_H

#include "net/net.h"
#include "kite_kshim.h"

typedef struct KiteState KiteState;

/* Largest frame on the wire (no FCS): MTU + Ethernet header + one tag. */
#define KITE_ETH_MAX_FRAME      (KITE_ETH_MAX_MTU + 14 + 4)
#define KITE_ETH_DEFAULT_MTU    1500

/* One descriptor ring (TX or RX) of an Ethernet queue pair. */
typedef struct KiteEthRing {
    uint64_t base;          /* BASE_HI:BASE_LO as written */
    uint32_t cfg;           /* KITE_ETHQ_CFG_*, ENABLE only while enabled */
    uint16_t head;          /* device consumer index */
    uint16_t tail;          /* driver producer index */
} KiteEthRing;

typedef struct KiteEthQueue {
    KiteState *s;
    unsigned int index;
    KiteEthRing tx;
    KiteEthRing rx;
    /* KITE_ETHQ_INTR_ARM written since the queue's last interrupt. */
    bool intr_armed;
    /* Processes the TX ring, a bounded number of frames per run. */
    QEMUBH *tx_bh;
} KiteEthQueue;

typedef struct KiteEth {
    NICState *nic;
    uint32_t ctrl;          /* KITE_ETH_CTRL_* */
    uint32_t mtu;
    uint8_t mac[6];         /* station address (ETH_MAC_LO/HI) */
    KiteEthQueue q[KITE_ETH_MAX_QUEUES];
    /*
     * The backend queued a frame (qemu_send_packet_async() returned 0):
     * no TX ring sends again until its sent callback runs.
     */
    bool tx_waiting;
    /* TX bounce buffer; the backend copies a frame it has to queue. */
    uint8_t frame[KITE_ETH_MAX_FRAME];
} KiteEth;

/* Called by kite.c. */
void kite_eth_realize(KiteState *s, Error **errp);
void kite_eth_exit(KiteState *s);
void kite_eth_reset(KiteState *s);
uint32_t kite_eth_read(KiteState *s, hwaddr off);
void kite_eth_write(KiteState *s, hwaddr off, uint32_t val);
/* Link state of the network backend, for KITE_STATUS_LINK_UP. */
bool kite_eth_link_up(KiteState *s);

#endif /* HW_NET_KITE_ETH_H */
