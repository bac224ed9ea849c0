/*
 * Kite NIC: UD multicast.
 *
 * The multicast group table: up to KITE_MAX_MCAST_GRP groups, each a
 * multicast GID (an IPv4-mapped ::ffff:224.0.0.0/100 or an IPv6 ff00::/8
 * GID, RoCEv2) with the UD QPs attached to it, at most
 * KITE_MAX_MCAST_QP_ATTACH per group and KITE_MAX_TOTAL_MCAST_QP_ATTACH in
 * all. A group exists while a QP is attached to it. ATTACH_MCAST and
 * DETACH_MCAST edit the table; DESTROY_QP detaches the QP from every group.
 *
 * Receive: a RoCEv2 UD packet with DestQP 0xFFFFFF, a multicast destination
 * IP address and that address's multicast MAC is given to every QP attached
 * to the group whose GID is the destination address; each QP checks its
 * own state and Q_Key and consumes its own receive WQE (kite_ud_deliver()).
 * The Ethernet function accepts every multicast destination MAC, so this
 * table is the device's multicast filter for RoCEv2.
 *
 * Transmit (kite_engine.c): a UD send to a multicast GID carries DestQP
 * 0xFFFFFF and the group's multicast MAC, and is also delivered to the
 * QPs of this device attached to the group (multicast loopback).
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"

#include "kite_int.h"

#define MC_OFF(f)       offsetof(struct kite_cmd_mcast, f)

static const uint8_t kite_v4mapped[12] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

bool kite_gid_is_v4mapped(const uint8_t *gid)
{
    return !memcmp(gid, kite_v4mapped, sizeof(kite_v4mapped));
}

bool kite_gid_is_mcast(const uint8_t *gid)
{
    if (kite_gid_is_v4mapped(gid)) {
        return (gid[12] & 0xf0) == 0xe0;        /* 224.0.0.0/4 */
    }
    return gid[0] == 0xff;                      /* ff00::/8 */
}

void kite_mcast_mac(const uint8_t *gid, uint8_t *mac)
{
    if (kite_gid_is_v4mapped(gid)) {
        /* RFC 1112: 01:00:5e and the low 23 bits of the address. */
        mac[0] = 0x01;
        mac[1] = 0x00;
        mac[2] = 0x5e;
        mac[3] = gid[13] & 0x7f;
        mac[4] = gid[14];
        mac[5] = gid[15];
    } else {
        /* RFC 2464: 33:33 and the low 32 bits of the address. */
        mac[0] = 0x33;
        mac[1] = 0x33;
        memcpy(mac + 2, gid + 12, 4);
    }
}

static KiteMcg *kite_mcg_find(KiteState *s, const uint8_t *gid)
{
    uint32_t i;

    for (i = 0; i < KITE_MAX_MCAST_GRP; i++) {
        KiteMcg *g = &s->rdma.mcg[i];

        if (g->nqp && !memcmp(g->gid, gid, sizeof(g->gid))) {
            return g;
        }
    }
    return NULL;
}

static int kite_mcg_qp_index(const KiteMcg *g, uint32_t qpn)
{
    uint32_t i;

    for (i = 0; i < g->nqp; i++) {
        if (g->qpn[i] == qpn) {
            return i;
        }
    }
    return -1;
}

static void kite_mcg_remove(KiteState *s, KiteMcg *g, uint32_t i)
{
    g->qpn[i] = g->qpn[--g->nqp];
    s->rdma.mcast_attached--;
    if (!g->nqp) {
        memset(g, 0, sizeof(*g));
    }
}

/*
 * The input of ATTACH_MCAST and DETACH_MCAST: the QP must exist, the GID
 * must be a multicast GID. Returns the QP or NULL with c's error set.
 */
static KiteQP *kite_mcast_in(KiteState *s, KiteCmdCtx *c,
                             struct kite_cmd_mcast *in, uint32_t *qpn)
{
    KiteQP *qp;

    if (c->in_len < sizeof(*in)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return NULL;
    }
    memcpy(in, c->in, sizeof(*in));
    if (in->rsvd) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, MC_OFF(rsvd));
        return NULL;
    }
    *qpn = le32_to_cpu(in->qpn);
    qp = *qpn < KITE_MAX_QP ? &s->rdma.qp[*qpn] : NULL;
    if (!qp || !qp->valid) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, MC_OFF(qpn));
        return NULL;
    }
    if (!kite_gid_is_mcast(in->gid)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, MC_OFF(gid));
        return NULL;
    }
    return qp;
}

void kite_cmd_attach_mcast(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_mcast in;
    KiteMcg *g, *free_g = NULL;
    uint32_t qpn, i;
    KiteQP *qp = kite_mcast_in(s, c, &in, &qpn);

    if (!qp) {
        return;
    }
    if (qp->type != KITE_QPT_UD) {
        /* Only UD QPs join groups (IBA 10.5.2.1); not the GSI QP. */
        kite_cmd_err(c, KITE_CMD_E_PARAM, MC_OFF(qpn));
        return;
    }
    g = kite_mcg_find(s, in.gid);
    if (g && kite_mcg_qp_index(g, qpn) >= 0) {
        kite_cmd_err(c, KITE_CMD_E_STATE, MC_OFF(gid));
        return;
    }
    if (s->rdma.mcast_attached >= KITE_MAX_TOTAL_MCAST_QP_ATTACH ||
        (g && g->nqp >= KITE_MAX_MCAST_QP_ATTACH)) {
        kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, MC_OFF(qpn));
        return;
    }
    if (!g) {
        for (i = 0; i < KITE_MAX_MCAST_GRP && !free_g; i++) {
            if (!s->rdma.mcg[i].nqp) {
                free_g = &s->rdma.mcg[i];
            }
        }
        if (!free_g) {
            kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, MC_OFF(gid));
            return;
        }
        g = free_g;
        memcpy(g->gid, in.gid, sizeof(g->gid));
    }
    g->qpn[g->nqp++] = qpn;
    s->rdma.mcast_attached++;
}

void kite_cmd_detach_mcast(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_mcast in;
    uint32_t qpn;
    KiteMcg *g;
    int i;

    if (!kite_mcast_in(s, c, &in, &qpn)) {
        return;
    }
    g = kite_mcg_find(s, in.gid);
    if (!g) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, MC_OFF(gid));
        return;
    }
    i = kite_mcg_qp_index(g, qpn);
    if (i < 0) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, MC_OFF(qpn));
        return;
    }
    kite_mcg_remove(s, g, i);
}

void kite_mcast_qp_destroyed(KiteState *s, uint32_t qpn)
{
    uint32_t i;

    for (i = 0; i < KITE_MAX_MCAST_GRP; i++) {
        KiteMcg *g = &s->rdma.mcg[i];
        int j = g->nqp ? kite_mcg_qp_index(g, qpn) : -1;

        if (j >= 0) {
            kite_mcg_remove(s, g, j);
        }
    }
}

void kite_mcast_reset(KiteState *s)
{
    memset(s->rdma.mcg, 0, sizeof(s->rdma.mcg));
    s->rdma.mcast_attached = 0;
}

/* The destination GID of a parsed packet: its IPv6 or IPv4-mapped address. */
static void kite_mcast_rx_dgid(const KiteRoceRx *p, uint8_t *gid)
{
    if (p->ipv6) {
        memcpy(gid, p->l3 + 24, 16);
    } else {
        memcpy(gid, kite_v4mapped, sizeof(kite_v4mapped));
        memcpy(gid + 12, p->l3 + 16, 4);
    }
}

bool kite_mcast_rx_is_mcast(const KiteRoceRx *p)
{
    uint8_t gid[16];

    kite_mcast_rx_dgid(p, gid);
    return kite_gid_is_mcast(gid);
}

void kite_mcast_receive(KiteState *s, const uint8_t *frame, size_t len,
                        const KiteRoceRx *p)
{
    uint32_t qpn[KITE_MAX_MCAST_QP_ATTACH];
    uint8_t gid[16], mac[6];
    uint32_t i, n;
    KiteMcg *g;

    if (p->rc) {
        kite_rx_drop(s, "DestQP 0xFFFFFF in an RC or UC packet");
        return;
    }
    kite_mcast_rx_dgid(p, gid);
    if (!kite_gid_is_mcast(gid)) {
        kite_rx_drop(s, "DestQP 0xFFFFFF to a unicast address");
        return;
    }
    kite_mcast_mac(gid, mac);
    if (memcmp(frame, mac, sizeof(mac))) {
        kite_rx_drop(s, "multicast packet without its group's MAC");
        return;
    }
    g = kite_mcg_find(s, gid);
    if (!g) {
        kite_rx_drop(s, "multicast group not attached");
        return;
    }
    /* Delivery cannot change the table; a copy keeps the loop simple. */
    n = g->nqp;
    memcpy(qpn, g->qpn, n * sizeof(qpn[0]));
    for (i = 0; i < n; i++) {
        uint64_t drops = s->stats[KITE_STAT_ROCE_RX_DROPS];

        kite_ud_deliver(s, qpn[i], &s->rdma.qp[qpn[i]], p);
        kite_qp_count_rx(s, qpn[i], len, drops);
    }
}

void kite_mcast_loopback(KiteState *s, const uint8_t *frame, size_t len)
{
    KiteRoceRx p;

    if (kite_roce_parse(frame, len, &p) || p.dqpn != KITE_MCAST_QPN) {
        return;
    }
    s->stats[KITE_STAT_ROCE_RX_PKTS]++;
    kite_mcast_receive(s, frame, len, &p);
}
