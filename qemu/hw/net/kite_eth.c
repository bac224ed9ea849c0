/*
 * Kite NIC: the Ethernet function.
 *
 * BAR0 0x100-0x3ff: function control, MTU, station MAC address and
 * KITE_ETH_MAX_QUEUES queue pairs, each a TX and an RX descriptor ring in
 * guest memory (include/linux/kite/kite_hw.h, struct kite_eth_txd/rxd).
 *
 * TX: a TAIL write only latches the index and schedules the queue's bottom
 * half, which sends at most KITE_ETH_TX_BUDGET frames per run and then
 * reschedules itself. When the backend has to queue a frame
 * (qemu_send_packet_async() returns 0), every TX ring waits for the sent
 * callback before it sends again, so the backend queue stays short.
 *
 * RX: a frame from the backend is filtered (ETH_CTRL, destination address,
 * MTU); RoCEv2 frames (UDP destination port 4791 over IPv4 or IPv6, untagged
 * or with one 802.1Q tag) go to the RDMA engine; the others are steered to
 * an enabled RX ring by a hash of the IP addresses and TCP/UDP ports (see
 * kite_eth_rx_queue()). When that ring has no free descriptor, .receive
 * returns 0: QEMU queues the frame and stops delivering until
 * qemu_flush_queued_packets(), called when the ring's TAIL is written (or
 * the configuration changes).
 *
 * Every value the guest writes or places in memory is validated; a bad
 * descriptor completes with KITE_ETH_DESC_ERR, a bad register write is
 * refused and logged with LOG_GUEST_ERROR.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "net/net.h"

#include "kite_int.h"
#include "trace.h"

/* Frames one TX ring sends per bottom-half run. */
#define KITE_ETH_TX_BUDGET      64

#define KITE_ETH_HLEN           14
#define KITE_ETH_VLAN_HLEN      4
#define KITE_ETHERTYPE_IPV4     0x0800
#define KITE_ETHERTYPE_IPV6     0x86dd
#define KITE_ETHERTYPE_VLAN     0x8100
#define KITE_IPPROTO_TCP        6
#define KITE_IPPROTO_UDP        17
#define KITE_ROCEV2_UDP_PORT    4791

#define KITE_ETHQ_CFG_VALID \
    (KITE_ETHQ_CFG_LOG_DEPTH | KITE_ETHQ_CFG_VECTOR | KITE_ETHQ_CFG_ENABLE)
#define KITE_ETH_CTRL_VALID     (KITE_ETH_CTRL_ENABLE | KITE_ETH_CTRL_PROMISC)

#define KITE_DESC_SIZE          16
#define KITE_DESC_LEN_OFF       8       /* txd.len, rxd.buf_len */
#define KITE_DESC_FLAGS_OFF     10
#define KITE_DESC_STATUS_OFF    12      /* rxd.pkt_len follows status */

static NetClientState *kite_eth_nc(KiteState *s)
{
    return qemu_get_queue(s->eth.nic);
}

static bool kite_eth_enabled(KiteEth *e)
{
    return e->ctrl & KITE_ETH_CTRL_ENABLE;
}

/* Rings */

static bool kite_ring_enabled(const KiteEthRing *r)
{
    return r->cfg & KITE_ETHQ_CFG_ENABLE;
}

static unsigned int kite_ring_depth(const KiteEthRing *r)
{
    return 1u << FIELD_GET(KITE_ETHQ_CFG_LOG_DEPTH, r->cfg);
}

static uint64_t kite_ring_desc_addr(const KiteEthRing *r, uint16_t idx)
{
    return r->base + (uint64_t)(idx & (kite_ring_depth(r) - 1)) *
           KITE_DESC_SIZE;
}

/* Descriptors the driver has posted and the device not yet consumed. */
static unsigned int kite_ring_pending(const KiteEthRing *r)
{
    return (uint16_t)(r->tail - r->head);
}

static void kite_ring_clear(KiteEthRing *r)
{
    r->base = 0;
    r->cfg = 0;
    r->head = 0;
    r->tail = 0;
}

/* Raise the queue's interrupt if it is armed, and disarm it. */
static void kite_eth_queue_notify(KiteState *s, KiteEthQueue *q,
                                  const KiteEthRing *r)
{
    if (!q->intr_armed) {
        return;
    }
    q->intr_armed = false;
    kite_raise_vector(s, FIELD_GET(KITE_ETHQ_CFG_VECTOR, r->cfg));
}

static void kite_eth_dma_error(KiteState *s, const char *what, uint64_t addr,
                               uint64_t len, bool write)
{
    kite_dma_error(s, what, addr, len, write);
    kite_guest_error(s, "DMA error on %s at 0x%" PRIx64, what, addr);
}

/*
 * Write a descriptor's status word (and, for RX, pkt_len) and advance the
 * ring's HEAD. A descriptor that cannot be written is still consumed: the
 * ring must make progress whatever the guest put in it.
 */
static void kite_ring_complete(KiteState *s, KiteEthRing *r, uint16_t status,
                               uint16_t pkt_len, bool rx)
{
    uint64_t addr = kite_ring_desc_addr(r, r->head) + KITE_DESC_STATUS_OFF;
    uint8_t word[4];

    stw_le_p(word, status);
    stw_le_p(word + 2, pkt_len);
    if (pci_dma_write(PCI_DEVICE(s), addr, word, rx ? 4 : 2) != MEMTX_OK) {
        kite_eth_dma_error(s, rx ? "RX descriptor" : "TX descriptor", addr,
                           rx ? 4 : 2, true);
    }
    r->head++;
}

/* Frame parsing */

typedef struct KiteEthFrameInfo {
    bool vlan;
    uint16_t ethertype;             /* inner one if tagged */
    const uint8_t *saddr;           /* IP addresses, NULL if not IP */
    const uint8_t *daddr;
    unsigned int addr_len;
    const uint8_t *ports;           /* TCP/UDP ports, NULL if none */
    bool udp;
} KiteEthFrameInfo;

static void kite_eth_parse(const uint8_t *buf, size_t len,
                           KiteEthFrameInfo *fi)
{
    size_t l3 = KITE_ETH_HLEN;
    size_t l4;
    uint8_t proto;

    memset(fi, 0, sizeof(*fi));
    fi->ethertype = lduw_be_p(buf + 12);
    if (fi->ethertype == KITE_ETHERTYPE_VLAN) {
        if (len < KITE_ETH_HLEN + KITE_ETH_VLAN_HLEN) {
            return;
        }
        fi->vlan = true;
        fi->ethertype = lduw_be_p(buf + 16);
        l3 += KITE_ETH_VLAN_HLEN;
    }

    if (fi->ethertype == KITE_ETHERTYPE_IPV4) {
        unsigned int ihl;

        if (len < l3 + 20 || (buf[l3] >> 4) != 4) {
            return;
        }
        ihl = (buf[l3] & 0xf) * 4;
        if (ihl < 20 || len < l3 + ihl) {
            return;
        }
        fi->saddr = buf + l3 + 12;
        fi->daddr = buf + l3 + 16;
        fi->addr_len = 4;
        /* Ports only in unfragmented datagrams (MF clear, offset 0). */
        if (lduw_be_p(buf + l3 + 6) & 0x3fff) {
            return;
        }
        proto = buf[l3 + 9];
        l4 = l3 + ihl;
    } else if (fi->ethertype == KITE_ETHERTYPE_IPV6) {
        if (len < l3 + 40 || (buf[l3] >> 4) != 6) {
            return;
        }
        fi->saddr = buf + l3 + 8;
        fi->daddr = buf + l3 + 24;
        fi->addr_len = 16;
        /* No extension headers are parsed. */
        proto = buf[l3 + 6];
        l4 = l3 + 40;
    } else {
        return;
    }

    if ((proto == KITE_IPPROTO_UDP && len >= l4 + 8) ||
        (proto == KITE_IPPROTO_TCP && len >= l4 + 20)) {
        fi->ports = buf + l4;
        fi->udp = proto == KITE_IPPROTO_UDP;
    }
}

static bool kite_eth_is_rocev2(const KiteEthFrameInfo *fi)
{
    return fi->udp && lduw_be_p(fi->ports + 2) == KITE_ROCEV2_UDP_PORT;
}

/* Unicast to the station address, broadcast or multicast. */
static bool kite_eth_addr_match(KiteEth *e, const uint8_t *buf)
{
    return (buf[0] & 1) || !memcmp(buf, e->mac, sizeof(e->mac));
}

/* 32-bit FNV-1a. */
static uint32_t kite_eth_hash_bytes(uint32_t h, const uint8_t *p, size_t len)
{
    while (len--) {
        h ^= *p++;
        h *= 16777619u;
    }
    return h;
}

/*
 * RX steering: the FNV-1a hash of source address, destination address,
 * source port and destination port (as on the wire; ports only for TCP and
 * UDP in unfragmented datagrams) selects one of the n enabled RX rings,
 * hash mod n, counted in queue order. Non-IP frames go to the first enabled
 * ring (queue 0 when it is enabled). Returns NULL if no ring is enabled.
 */
static KiteEthQueue *kite_eth_rx_queue(KiteEth *e, const KiteEthFrameInfo *fi)
{
    KiteEthQueue *enabled[KITE_ETH_MAX_QUEUES];
    unsigned int n = 0;
    uint32_t h = 2166136261u;
    int i;

    for (i = 0; i < KITE_ETH_MAX_QUEUES; i++) {
        if (kite_ring_enabled(&e->q[i].rx)) {
            enabled[n++] = &e->q[i];
        }
    }
    if (!n) {
        return NULL;
    }
    if (!fi->saddr) {
        return enabled[0];
    }
    h = kite_eth_hash_bytes(h, fi->saddr, fi->addr_len);
    h = kite_eth_hash_bytes(h, fi->daddr, fi->addr_len);
    if (fi->ports) {
        h = kite_eth_hash_bytes(h, fi->ports, 4);
    }
    return enabled[h % n];
}

/* Transmit */

static void kite_eth_tx_schedule_all(KiteState *s)
{
    KiteEth *e = &s->eth;
    int i;

    for (i = 0; i < KITE_ETH_MAX_QUEUES; i++) {
        KiteEthRing *r = &e->q[i].tx;

        if (kite_ring_enabled(r) && kite_ring_pending(r)) {
            qemu_bh_schedule(e->q[i].tx_bh);
        }
    }
}

static void kite_eth_tx_sent(NetClientState *nc, ssize_t len)
{
    KiteState *s = qemu_get_nic_opaque(nc);

    s->eth.tx_waiting = false;
    if (kite_eth_enabled(&s->eth)) {
        kite_eth_tx_schedule_all(s);
    }
}

/* Send the frame of the descriptor at HEAD and complete it. */
static void kite_eth_tx_one(KiteState *s, KiteEthQueue *q)
{
    KiteEth *e = &s->eth;
    KiteEthRing *r = &q->tx;
    uint64_t desc_addr = kite_ring_desc_addr(r, r->head);
    uint8_t desc[KITE_DESC_SIZE];
    uint16_t status = KITE_ETH_DESC_DONE;
    uint64_t addr;
    unsigned int len, max;
    ssize_t ret;

    if (pci_dma_read(PCI_DEVICE(s), desc_addr, desc, sizeof(desc)) !=
        MEMTX_OK) {
        kite_eth_dma_error(s, "TX descriptor", desc_addr, sizeof(desc),
                           false);
        /* Nothing can be reported in it: skip it. */
        r->head++;
        return;
    }
    addr = ldq_le_p(desc);
    len = lduw_le_p(desc + KITE_DESC_LEN_OFF);

    if (lduw_le_p(desc + KITE_DESC_FLAGS_OFF)) {
        kite_guest_error(s, "TX queue %u: descriptor %u: flags 0x%x "
                         "reserved", q->index, r->head,
                         lduw_le_p(desc + KITE_DESC_FLAGS_OFF));
        status |= KITE_ETH_DESC_ERR;
        goto complete;
    }
    /* Frames longer than the MTU allows (a tag adds 4) are not sent. */
    max = e->mtu + KITE_ETH_HLEN + KITE_ETH_VLAN_HLEN;
    if (len < KITE_ETH_HLEN || len > max) {
        kite_guest_error(s, "TX queue %u: descriptor %u: length %u "
                         "outside [%u, %u]", q->index, r->head, len,
                         KITE_ETH_HLEN, max);
        status |= KITE_ETH_DESC_ERR;
        goto complete;
    }
    if (pci_dma_read(PCI_DEVICE(s), addr, e->frame, len) != MEMTX_OK) {
        kite_eth_dma_error(s, "TX buffer", addr, len, false);
        status |= KITE_ETH_DESC_ERR;
        goto complete;
    }
    if (lduw_be_p(e->frame + 12) != KITE_ETHERTYPE_VLAN &&
        len > max - KITE_ETH_VLAN_HLEN) {
        kite_guest_error(s, "TX queue %u: descriptor %u: untagged "
                         "frame of %u bytes exceeds the MTU", q->index,
                         r->head, len);
        status |= KITE_ETH_DESC_ERR;
        goto complete;
    }

    s->stats[KITE_STAT_TX_FRAMES]++;
    s->stats[KITE_STAT_TX_BYTES] += len;
    ret = qemu_send_packet_async(kite_eth_nc(s), e->frame, len,
                                 kite_eth_tx_sent);
    if (ret == 0) {
        /* Queued by the backend (which copied it): wait before the next. */
        e->tx_waiting = true;
    }

complete:
    kite_ring_complete(s, r, status, 0, false);
    kite_eth_queue_notify(s, q, r);
}

static void kite_eth_tx_bh(void *opaque)
{
    KiteEthQueue *q = opaque;
    KiteState *s = q->s;
    KiteEth *e = &s->eth;
    unsigned int budget = KITE_ETH_TX_BUDGET;

    while (kite_eth_enabled(e) && kite_ring_enabled(&q->tx) &&
           kite_ring_pending(&q->tx)) {
        if (e->tx_waiting) {
            /* kite_eth_tx_sent() reschedules. */
            return;
        }
        if (!budget--) {
            qemu_bh_schedule(q->tx_bh);
            return;
        }
        kite_eth_tx_one(s, q);
    }
}

/* Receive */

static bool kite_eth_can_receive(NetClientState *nc)
{
    /*
     * Always: frames the function does not want are dropped in .receive,
     * and a full ring is handled by returning 0 from there.
     */
    return true;
}

static void kite_eth_rx_drop(KiteState *s)
{
    s->stats[KITE_STAT_RX_DROPS]++;
}

static ssize_t kite_eth_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    KiteState *s = qemu_get_nic_opaque(nc);
    KiteEth *e = &s->eth;
    KiteEthFrameInfo fi;
    KiteEthQueue *q;
    KiteEthRing *r;
    uint8_t desc[KITE_DESC_SIZE];
    uint64_t desc_addr, addr;
    unsigned int buf_len;
    uint16_t status = KITE_ETH_DESC_DONE;
    size_t max;
    bool for_us;

    if (!kite_eth_enabled(e) || nc->link_down) {
        return size;
    }
    if (size < KITE_ETH_HLEN) {
        kite_eth_rx_drop(s);
        return size;
    }
    for_us = kite_eth_addr_match(e, buf);
    if (!for_us && !(e->ctrl & KITE_ETH_CTRL_PROMISC)) {
        return size;
    }

    kite_eth_parse(buf, size, &fi);
    max = e->mtu + KITE_ETH_HLEN + (fi.vlan ? KITE_ETH_VLAN_HLEN : 0);
    if (size > max) {
        kite_eth_rx_drop(s);
        return size;
    }
    if (for_us && kite_eth_is_rocev2(&fi)) {
        kite_rdma_receive(s, buf, size);
        return size;
    }

    q = kite_eth_rx_queue(e, &fi);
    if (!q) {
        kite_eth_rx_drop(s);
        return size;
    }
    r = &q->rx;
    if (!kite_ring_pending(r)) {
        /* QEMU queues the frame; kite_eth_rx_flush() resumes. */
        return 0;
    }

    desc_addr = kite_ring_desc_addr(r, r->head);
    if (pci_dma_read(PCI_DEVICE(s), desc_addr, desc, sizeof(desc)) !=
        MEMTX_OK) {
        kite_eth_dma_error(s, "RX descriptor", desc_addr, sizeof(desc),
                           false);
        kite_eth_rx_drop(s);
        r->head++;
        return size;
    }
    addr = ldq_le_p(desc);
    buf_len = lduw_le_p(desc + KITE_DESC_LEN_OFF);

    if (lduw_le_p(desc + KITE_DESC_FLAGS_OFF)) {
        kite_guest_error(s, "RX queue %u: descriptor %u: flags 0x%x "
                         "reserved", q->index, r->head,
                         lduw_le_p(desc + KITE_DESC_FLAGS_OFF));
        status |= KITE_ETH_DESC_ERR;
    } else if (size > buf_len) {
        kite_guest_error(s, "RX queue %u: descriptor %u: frame of %zu "
                         "bytes, buffer of %u", q->index, r->head, size,
                         buf_len);
        status |= KITE_ETH_DESC_ERR;
    } else if (pci_dma_write(PCI_DEVICE(s), addr, buf, size) != MEMTX_OK) {
        kite_eth_dma_error(s, "RX buffer", addr, size, true);
        status |= KITE_ETH_DESC_ERR;
    }

    if (status & KITE_ETH_DESC_ERR) {
        kite_eth_rx_drop(s);
    } else {
        s->stats[KITE_STAT_RX_FRAMES]++;
        s->stats[KITE_STAT_RX_BYTES] += size;
    }
    kite_ring_complete(s, r, status, size, true);
    kite_eth_queue_notify(s, q, r);
    return size;
}

/* Deliver (or drop) frames QEMU queued while a ring was full. */
static void kite_eth_rx_flush(KiteState *s)
{
    qemu_flush_queued_packets(kite_eth_nc(s));
}

static void kite_eth_link_status_changed(NetClientState *nc)
{
    KiteState *s = qemu_get_nic_opaque(nc);

    kite_link_changed(s, !nc->link_down);
    /* Frames queued before the link went down are dropped now. */
    kite_eth_rx_flush(s);
}

static NetClientInfo net_kite_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = kite_eth_can_receive,
    .receive = kite_eth_receive,
    .link_status_changed = kite_eth_link_status_changed,
};

bool kite_eth_link_up(KiteState *s)
{
    return s->eth.nic && !kite_eth_nc(s)->link_down;
}

/* Registers */

static void kite_eth_write_ctrl(KiteState *s, uint32_t val)
{
    KiteEth *e = &s->eth;
    uint32_t old = e->ctrl;

    if (val & ~KITE_ETH_CTRL_VALID) {
        kite_guest_error(s, "ETH_CTRL: reserved bits in 0x%x", val);
        return;
    }
    e->ctrl = val;
    if ((old ^ val) & KITE_ETH_CTRL_ENABLE) {
        if (val & KITE_ETH_CTRL_ENABLE) {
            kite_eth_tx_schedule_all(s);
        }
        /* Queued frames: delivered if enabled, else dropped. */
        kite_eth_rx_flush(s);
    }
}

static void kite_eth_write_mtu(KiteState *s, uint32_t val)
{
    if (val < KITE_ETH_MIN_MTU || val > KITE_ETH_MAX_MTU) {
        kite_guest_error(s, "ETH_MTU: %u outside [%u, %u]", val,
                         KITE_ETH_MIN_MTU, KITE_ETH_MAX_MTU);
        return;
    }
    s->eth.mtu = val;
}

static void kite_eth_write_mac(KiteState *s, hwaddr off, uint32_t val)
{
    uint8_t *mac = s->eth.mac;

    if (off == KITE_REG_ETH_MAC_LO) {
        mac[2] = val >> 24;
        mac[3] = val >> 16;
        mac[4] = val >> 8;
        mac[5] = val;
    } else {
        if (val & ~KITE_MAC_HI_MASK) {
            kite_guest_error(s, "ETH_MAC_HI: reserved bits in 0x%x",
                             val);
            return;
        }
        mac[0] = val >> 8;
        mac[1] = val;
    }
    qemu_format_nic_info_str(kite_eth_nc(s), mac);
}

static uint32_t kite_eth_read_mac(KiteState *s, hwaddr off)
{
    const uint8_t *mac = s->eth.mac;

    if (off == KITE_REG_ETH_MAC_LO) {
        return (uint32_t)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5];
    }
    return mac[0] << 8 | mac[1];
}

static void kite_eth_ring_disable(KiteState *s, KiteEthQueue *q, bool rx)
{
    KiteEthRing *r = rx ? &q->rx : &q->tx;

    r->cfg &= ~KITE_ETHQ_CFG_ENABLE;
    r->head = 0;
    r->tail = 0;
    if (rx) {
        /* Queued frames are steered to the rings still enabled. */
        kite_eth_rx_flush(s);
    } else {
        qemu_bh_cancel(q->tx_bh);
    }
}

static void kite_eth_write_cfg(KiteState *s, KiteEthQueue *q, bool rx,
                               uint32_t val)
{
    KiteEthRing *r = rx ? &q->rx : &q->tx;
    const char *name = rx ? "RX" : "TX";
    unsigned int log_depth = FIELD_GET(KITE_ETHQ_CFG_LOG_DEPTH, val);
    unsigned int vector = FIELD_GET(KITE_ETHQ_CFG_VECTOR, val);

    if (kite_ring_enabled(r)) {
        if (!(val & KITE_ETHQ_CFG_ENABLE)) {
            kite_eth_ring_disable(s, q, rx);
            r->cfg = val & KITE_ETHQ_CFG_VALID;
        } else if (val != r->cfg) {
            kite_guest_error(s, "%s queue %u: CFG 0x%x written while "
                             "enabled", name, q->index, val);
        }
        return;
    }

    if (!(val & KITE_ETHQ_CFG_ENABLE)) {
        r->cfg = val & KITE_ETHQ_CFG_VALID;
        if (val & ~KITE_ETHQ_CFG_VALID) {
            kite_guest_error(s, "%s queue %u: CFG reserved bits in 0x%x",
                             name, q->index, val);
        }
        return;
    }

    /* Enabling: refused (CFG reads back without ENABLE) if bad. */
    r->cfg = val & KITE_ETHQ_CFG_VALID & ~KITE_ETHQ_CFG_ENABLE;
    if (val & ~KITE_ETHQ_CFG_VALID) {
        kite_guest_error(s, "%s queue %u: enable refused: reserved bits "
                         "in CFG 0x%x", name, q->index, val);
        return;
    }
    if (log_depth < KITE_ETHQ_MIN_LOG_DEPTH ||
        log_depth > KITE_ETHQ_MAX_LOG_DEPTH) {
        kite_guest_error(s, "%s queue %u: enable refused: LOG_DEPTH %u "
                         "outside [%u, %u]", name, q->index, log_depth,
                         KITE_ETHQ_MIN_LOG_DEPTH,
                         KITE_ETHQ_MAX_LOG_DEPTH);
        return;
    }
    if (vector >= KITE_MAX_VECTORS) {
        kite_guest_error(s, "%s queue %u: enable refused: vector %u "
                         "out of range", name, q->index, vector);
        return;
    }
    if (r->base & (KITE_PBL_PAGE_SIZE - 1)) {
        kite_guest_error(s, "%s queue %u: enable refused: base 0x%"
                         PRIx64 " not 4 KiB aligned", name, q->index,
                         r->base);
        return;
    }
    r->cfg = val;
    r->head = 0;
    r->tail = 0;
    if (rx) {
        kite_eth_rx_flush(s);
    }
}

static void kite_eth_write_tail(KiteState *s, KiteEthQueue *q, bool rx,
                                uint32_t val)
{
    KiteEthRing *r = rx ? &q->rx : &q->tx;
    const char *name = rx ? "RX" : "TX";

    trace_kite_eth_db(name, q->index, val);
    if (!kite_ring_enabled(r)) {
        kite_guest_error(s, "%s queue %u: TAIL 0x%x written while "
                         "disabled", name, q->index, val);
        return;
    }
    if (val & ~KITE_ETHQ_INDEX) {
        kite_guest_error(s, "%s queue %u: TAIL 0x%x wider than 16 bits",
                         name, q->index, val);
        return;
    }
    if ((uint16_t)(val - r->head) > kite_ring_depth(r)) {
        kite_guest_error(s, "%s queue %u: TAIL 0x%x more than %u ahead "
                         "of HEAD 0x%x", name, q->index, val,
                         kite_ring_depth(r), r->head);
        return;
    }
    r->tail = val;
    if (rx) {
        kite_eth_rx_flush(s);
    } else if (kite_eth_enabled(&s->eth) && kite_ring_pending(r)) {
        qemu_bh_schedule(q->tx_bh);
    }
}

static void kite_eth_write_base(KiteState *s, KiteEthQueue *q, bool rx,
                                bool hi, uint32_t val)
{
    KiteEthRing *r = rx ? &q->rx : &q->tx;

    if (kite_ring_enabled(r)) {
        kite_guest_error(s, "%s queue %u: BASE written while enabled",
                         rx ? "RX" : "TX", q->index);
        return;
    }
    if (hi) {
        r->base = deposit64(r->base, 32, 32, val);
    } else {
        r->base = deposit64(r->base, 0, 32, val);
    }
}

uint32_t kite_eth_read(KiteState *s, hwaddr off)
{
    KiteEth *e = &s->eth;
    KiteEthQueue *q;
    unsigned int qi;

    switch (off) {
    case KITE_REG_ETH_CTRL:
        return e->ctrl;
    case KITE_REG_ETH_MTU:
        return e->mtu;
    case KITE_REG_ETH_MAC_LO:
    case KITE_REG_ETH_MAC_HI:
        return kite_eth_read_mac(s, off);
    }

    if (off < KITE_REG_ETHQ_BASE) {
        return 0;
    }
    qi = (off - KITE_REG_ETHQ_BASE) / KITE_REG_ETHQ_STRIDE;
    if (qi >= KITE_ETH_MAX_QUEUES) {
        return 0;
    }
    q = &e->q[qi];

    switch ((off - KITE_REG_ETHQ_BASE) % KITE_REG_ETHQ_STRIDE) {
    case KITE_ETHQ_TX_BASE_LO:
        return q->tx.base;
    case KITE_ETHQ_TX_BASE_HI:
        return q->tx.base >> 32;
    case KITE_ETHQ_TX_CFG:
        return q->tx.cfg;
    case KITE_ETHQ_TX_HEAD:
        return q->tx.head;
    case KITE_ETHQ_RX_BASE_LO:
        return q->rx.base;
    case KITE_ETHQ_RX_BASE_HI:
        return q->rx.base >> 32;
    case KITE_ETHQ_RX_CFG:
        return q->rx.cfg;
    case KITE_ETHQ_RX_HEAD:
        return q->rx.head;
    default:
        /* TAIL and INTR are write-only. */
        return 0;
    }
}

void kite_eth_write(KiteState *s, hwaddr off, uint32_t val)
{
    KiteEth *e = &s->eth;
    KiteEthQueue *q;
    unsigned int qi;

    if (!kite_ready(s)) {
        /* The function is held in reset. */
        kite_guest_error(s, "write 0x%x to 0x%" HWADDR_PRIx " while not "
                         "ready", val, off);
        return;
    }

    switch (off) {
    case KITE_REG_ETH_CTRL:
        kite_eth_write_ctrl(s, val);
        return;
    case KITE_REG_ETH_MTU:
        kite_eth_write_mtu(s, val);
        return;
    case KITE_REG_ETH_MAC_LO:
    case KITE_REG_ETH_MAC_HI:
        kite_eth_write_mac(s, off, val);
        return;
    }

    qi = (off - KITE_REG_ETHQ_BASE) / KITE_REG_ETHQ_STRIDE;
    if (off < KITE_REG_ETHQ_BASE || qi >= KITE_ETH_MAX_QUEUES) {
        goto unknown;
    }
    q = &e->q[qi];

    switch ((off - KITE_REG_ETHQ_BASE) % KITE_REG_ETHQ_STRIDE) {
    case KITE_ETHQ_TX_BASE_LO:
        kite_eth_write_base(s, q, false, false, val);
        return;
    case KITE_ETHQ_TX_BASE_HI:
        kite_eth_write_base(s, q, false, true, val);
        return;
    case KITE_ETHQ_TX_CFG:
        kite_eth_write_cfg(s, q, false, val);
        return;
    case KITE_ETHQ_TX_TAIL:
        kite_eth_write_tail(s, q, false, val);
        return;
    case KITE_ETHQ_RX_BASE_LO:
        kite_eth_write_base(s, q, true, false, val);
        return;
    case KITE_ETHQ_RX_BASE_HI:
        kite_eth_write_base(s, q, true, true, val);
        return;
    case KITE_ETHQ_RX_CFG:
        kite_eth_write_cfg(s, q, true, val);
        return;
    case KITE_ETHQ_RX_TAIL:
        kite_eth_write_tail(s, q, true, val);
        return;
    case KITE_ETHQ_INTR:
        if (val & ~KITE_ETHQ_INTR_ARM) {
            kite_guest_error(s, "queue %u: INTR reserved bits in 0x%x",
                             qi, val);
            return;
        }
        if (val & KITE_ETHQ_INTR_ARM) {
            q->intr_armed = true;
        }
        return;
    case KITE_ETHQ_TX_HEAD:
    case KITE_ETHQ_RX_HEAD:
        kite_guest_error(s, "queue %u: write 0x%x to read-only HEAD",
                         qi, val);
        return;
    }

unknown:
    kite_guest_error(s, "write 0x%x to unknown register 0x%" HWADDR_PRIx,
                     val, off);
}

/* Life cycle */

void kite_eth_reset(KiteState *s)
{
    KiteEth *e = &s->eth;
    int i;

    for (i = 0; i < KITE_ETH_MAX_QUEUES; i++) {
        if (e->q[i].tx_bh) {
            qemu_bh_cancel(e->q[i].tx_bh);
        }
        kite_ring_clear(&e->q[i].tx);
        kite_ring_clear(&e->q[i].rx);
        e->q[i].intr_armed = false;
    }
    e->ctrl = 0;
    e->mtu = KITE_ETH_DEFAULT_MTU;
    memcpy(e->mac, s->conf.macaddr.a, sizeof(e->mac));

    if (e->nic) {
        NetClientState *nc = kite_eth_nc(s);

        /* Frames sent but still queued in the backend are lost. */
        qemu_purge_queued_packets(nc);
        qemu_format_nic_info_str(nc, e->mac);
        /* Frames queued for a full RX ring are dropped (ENABLE is clear). */
        kite_eth_rx_flush(s);
    }
    e->tx_waiting = false;
}

void kite_eth_realize(KiteState *s, Error **errp)
{
    KiteEth *e = &s->eth;
    DeviceState *dev = DEVICE(s);
    int i;

    for (i = 0; i < KITE_ETH_MAX_QUEUES; i++) {
        e->q[i].s = s;
        e->q[i].index = i;
        e->q[i].tx_bh = qemu_bh_new_guarded(kite_eth_tx_bh, &e->q[i],
                                            &dev->mem_reentrancy_guard);
    }
    e->nic = qemu_new_nic(&net_kite_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    kite_eth_reset(s);
    /* The initial link state: no link change event. */
    s->link_up = kite_eth_link_up(s);
}

void kite_eth_exit(KiteState *s)
{
    KiteEth *e = &s->eth;
    int i;

    if (e->nic) {
        qemu_del_nic(e->nic);
        e->nic = NULL;
    }
    for (i = 0; i < KITE_ETH_MAX_QUEUES; i++) {
        if (e->q[i].tx_bh) {
            qemu_bh_delete(e->q[i].tx_bh);
            e->q[i].tx_bh = NULL;
        }
    }
}
