/*
 * Kite NIC: the RDMA data engine (UD and GSI; RC in kite_rc.c).
 *
 * Send: an SQ doorbell (or a state change) marks the QP in sq_pending and
 * schedules the engine bottom half, which executes at most
 * KITE_ENGINE_BUDGET WQEs per run (KITE_ENGINE_QP_BURST per QP in turn,
 * round robin) and reschedules itself. A UD or GSI SEND is fetched through
 * the SQ's PBL, validated completely, its payload gathered through the
 * MRs' page lists, and sent as one RoCEv2 packet: to the network backend,
 * or back into the engine's receive path when the destination MAC is the
 * port's own address. Errors complete the WQE with an error CQE and move
 * the QP to SQE (UD, GSI) or ERR (RC); WQEs of a QP in SQE (send queue)
 * or ERR (both queues) are completed with WR_FLUSH.
 *
 * Receive: RoCEv2 frames steered by the Ethernet function are parsed and
 * checked (IP and UDP headers, ICRC, BTH, destination QP, Q_Key); a UD
 * SEND consumes one RQ WQE, into which the 40-byte GRH area and the
 * payload are scattered, and completes with a receive CQE. Anything
 * malformed is dropped and counted in KITE_STAT_ROCE_RX_DROPS.
 *
 * RC, UC and XRC QPs: the SQ is worked on, and their packets are handled,
 * by the transports in kite_rc.c, which share the frame building (the
 * XRCETH of XRC requests included), parsing, key checks and completion
 * helpers of this file. A connected packet goes only to a QP of its
 * transport: RC, UC, XRC requests to XRC targets, XRC responses to XRC
 * initiators.
 *
 * Every value read from guest memory or from the wire is checked before
 * it is used; every DMA goes through pci_dma_read/write and its result is
 * checked (failures count KITE_STAT_DMA_ERRORS).
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "net/net.h"

#include "kite_int.h"
#include "trace.h"
#include <zlib.h>

#define KITE_ETH_HLEN           14
#define KITE_VLAN_HLEN          4
#define KITE_ETHERTYPE_IPV4     0x0800
#define KITE_ETHERTYPE_IPV6     0x86dd
#define KITE_ETHERTYPE_VLAN     0x8100
#define KITE_IPPROTO_UDP        17
#define KITE_IPV4_HLEN          20
#define KITE_IPV6_HLEN          40
#define KITE_UDP_HLEN           8
#define KITE_BTH_LEN            12
#define KITE_DETH_LEN           8
#define KITE_XRCETH_LEN         4
#define KITE_IMMDT_LEN          4
#define KITE_ICRC_LEN           4
#define KITE_PKEY_DEFAULT       0xffff

/* BTH opcodes (IBA 9.2): UD SEND only, and with immediate. */
#define KITE_BTH_UD_SEND_ONLY           0x64
#define KITE_BTH_UD_SEND_ONLY_IMM       0x65
#define KITE_BTH_UC_LAST                0x2b    /* RDMA WRITE Only with Imm */

/* WQE segment offsets. */
#define KITE_WQE_UD_OFF         sizeof(struct kite_wqe_ctrl)
#define KITE_WQE_UD_DATA_OFF    (KITE_WQE_UD_OFF + sizeof(struct kite_wqe_ud))
#define KITE_WQE_CTRL_RSVD      (GENMASK(15, 12) | GENMASK(31, 20))

#define KITE_MAX_WQE_SIZE       (1U << KITE_WQE_MAX_SHIFT)

/* ------------------------------------------------------------------ */
/* ICRC                                                                */
/* ------------------------------------------------------------------ */

/*
 * RoCEv2 ICRC (IBA annex A17): CRC-32 over 8 bytes of 0xff (the masked
 * LRH), the IP header with the variant fields set to ones (IPv4: TOS, TTL,
 * header checksum; IPv6: traffic class, flow label, hop limit), the UDP
 * header with its checksum set to ones, the BTH with resv8a set to ones,
 * the other transport headers, the payload and the pad. 0xdebb20e3 is the
 * CRC state after the 8 bytes of 0xff from the initial all-ones state.
 */
uint32_t kite_roce_icrc(const uint8_t *l3, size_t len, bool ipv6)
{
    uint8_t hdr[KITE_IPV6_HLEN + KITE_UDP_HLEN + KITE_BTH_LEN];
    size_t iplen = ipv6 ? KITE_IPV6_HLEN : KITE_IPV4_HLEN;
    size_t hlen = iplen + KITE_UDP_HLEN + KITE_BTH_LEN;
    uLong crc;

    assert(len >= hlen);
    memcpy(hdr, l3, hlen);
    if (ipv6) {
        hdr[0] |= 0x0f;                 /* traffic class, high nibble */
        hdr[1] = hdr[2] = hdr[3] = 0xff; /* traffic class, flow label */
        hdr[7] = 0xff;                  /* hop limit */
    } else {
        hdr[1] = 0xff;                  /* TOS */
        hdr[8] = 0xff;                  /* TTL */
        hdr[10] = hdr[11] = 0xff;       /* header checksum */
    }
    hdr[iplen + 6] = hdr[iplen + 7] = 0xff;     /* UDP checksum */
    hdr[iplen + KITE_UDP_HLEN + 4] = 0xff;      /* BTH resv8a */
    /* zlib's crc32() takes and returns the state inverted. */
    crc = crc32(~0xdebb20e3u, hdr, hlen);
    return crc32(crc, l3 + hlen, len - hlen);
}

/* ------------------------------------------------------------------ */
/* Frame building                                                      */
/* ------------------------------------------------------------------ */


static uint32_t kite_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    size_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += lduw_be_p(p + i);
    }
    if (len & 1) {
        sum += p[len - 1] << 8;
    }
    return sum;
}

static uint16_t kite_csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum & 0xffff;
}

/* IB core rule (rdma_calc_flow_label) for a flow label from two QPNs. */
static uint32_t kite_flow_label(uint32_t lqpn, uint32_t rqpn)
{
    uint64_t v = (uint64_t)lqpn * rqpn;

    v ^= v >> 20;
    v ^= v >> 40;
    return v & KITE_FLOW_LABEL;
}

/*
 * The UDP source port: the flow label (or, when it is 0, one computed
 * from the two QPNs) folded into 14 bits, in 0xc000..0xffff
 * (rdma_flow_label_to_udp_sport()).
 */
uint16_t kite_roce_sport(uint32_t flow_label, uint32_t sqpn, uint32_t dqpn)
{
    uint32_t fl = flow_label & KITE_FLOW_LABEL;

    if (!fl) {
        fl = kite_flow_label(sqpn, dqpn);
    }
    return ((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | KITE_ROCE_SPORT_MIN;
}

/*
 * Build a UD SEND packet into @f (KITE_ROCE_MAX_FRAME bytes) with @len
 * bytes of payload (at most KITE_ROCE_MAX_PAYLOAD). Returns the frame length.
 */
size_t kite_roce_build(uint8_t *f, const KiteRoceTx *t,
                       const uint8_t *payload, uint32_t len)
{
    size_t off = 0, l3, l4, ib, iblen, iplen;
    uint32_t pad = -len & 3;
    uint32_t icrc;

    assert(len <= KITE_ROCE_MAX_PAYLOAD);
    memcpy(f, t->dmac, 6);
    memcpy(f + 6, t->smac, 6);
    off = 12;
    if (t->vlan & KITE_VLAN_VALID) {
        stw_be_p(f + off, KITE_ETHERTYPE_VLAN);
        stw_be_p(f + off + 2, t->vlan & (KITE_VLAN_ID | KITE_VLAN_PCP));
        off += KITE_VLAN_HLEN;
    }
    stw_be_p(f + off, t->ipv6 ? KITE_ETHERTYPE_IPV6 : KITE_ETHERTYPE_IPV4);
    off += 2;

    l3 = off;
    iplen = t->ipv6 ? KITE_IPV6_HLEN : KITE_IPV4_HLEN;
    l4 = l3 + iplen;
    ib = l4 + KITE_UDP_HLEN;
    iblen = KITE_BTH_LEN + len + pad + KITE_ICRC_LEN +
            (t->xrc ? KITE_XRCETH_LEN : 0) +
            (t->rc ? t->ext_len :
             KITE_DETH_LEN + (t->has_imm ? KITE_IMMDT_LEN : 0));

    if (t->ipv6) {
        stl_be_p(f + l3, 6U << 28 | (uint32_t)t->tclass << 20 |
                 (t->flow_label & KITE_FLOW_LABEL));
        stw_be_p(f + l3 + 4, KITE_UDP_HLEN + iblen);
        f[l3 + 6] = KITE_IPPROTO_UDP;
        f[l3 + 7] = t->hop_limit;
        memcpy(f + l3 + 8, t->sgid, 16);
        memcpy(f + l3 + 24, t->dgid, 16);
    } else {
        f[l3] = 0x45;
        f[l3 + 1] = t->tclass;
        stw_be_p(f + l3 + 2, KITE_IPV4_HLEN + KITE_UDP_HLEN + iblen);
        stw_be_p(f + l3 + 4, 0);                /* identification */
        stw_be_p(f + l3 + 6, 0x4000);           /* DF */
        f[l3 + 8] = t->hop_limit;
        f[l3 + 9] = KITE_IPPROTO_UDP;
        stw_be_p(f + l3 + 10, 0);
        memcpy(f + l3 + 12, t->sgid + 12, 4);
        memcpy(f + l3 + 16, t->dgid + 12, 4);
        stw_be_p(f + l3 + 10,
                 kite_csum_fold(kite_csum_add(0, f + l3, KITE_IPV4_HLEN)));
    }

    stw_be_p(f + l4, t->sport);
    stw_be_p(f + l4 + 2, KITE_ROCE_UDP_PORT);
    stw_be_p(f + l4 + 4, KITE_UDP_HLEN + iblen);
    stw_be_p(f + l4 + 6, 0);

    off = ib;
    f[off] = t->opcode;
    f[off + 1] = (t->solicited ? 0x80 : 0) | pad << 4;     /* TVer 0 */
    stw_be_p(f + off + 2, KITE_PKEY_DEFAULT);
    stl_be_p(f + off + 4, t->dqpn & KITE_OBJ_MASK);        /* resv8a 0 */
    stl_be_p(f + off + 8, (t->psn & KITE_PSN_MASK) |
             (t->ackreq ? BIT(31) : 0));
    off += KITE_BTH_LEN;
    if (t->xrc) {
        stl_be_p(f + off, t->xrc_srqn & KITE_OBJ_MASK);     /* 31:24 zero */
        off += KITE_XRCETH_LEN;
    }
    if (t->rc) {
        memcpy(f + off, t->ext, t->ext_len);
        off += t->ext_len;
    } else {
        stl_be_p(f + off, t->qkey);
        stl_be_p(f + off + 4, t->sqpn & KITE_OBJ_MASK);
        off += KITE_DETH_LEN;
    }
    if (!t->rc && t->has_imm) {
        memcpy(f + off, t->imm, 4);
        off += KITE_IMMDT_LEN;
    }
    memcpy(f + off, payload, len);
    off += len;
    memset(f + off, 0, pad);
    off += pad;

    icrc = kite_roce_icrc(f + l3, off - l3, t->ipv6);
    stl_le_p(f + off, icrc);
    off += KITE_ICRC_LEN;

    if (t->ipv6) {
        /* IPv6 forbids a zero UDP checksum: compute it (RFC 8200). */
        uint32_t sum = kite_csum_add(0, f + l3 + 8, 32);
        uint16_t c;

        sum += KITE_IPPROTO_UDP + KITE_UDP_HLEN + iblen;
        sum = kite_csum_add(sum, f + l4, KITE_UDP_HLEN + iblen);
        c = kite_csum_fold(sum);
        stw_be_p(f + l4 + 6, c ? c : 0xffff);
    }
    return off;
}

/* ------------------------------------------------------------------ */
/* Memory keys                                                         */
/* ------------------------------------------------------------------ */

/* DMA to or from guest memory; @what names the access for the trace. */
bool kite_dma_rw(KiteState *s, const char *what, uint64_t addr, void *buf,
                 uint64_t len, bool write)
{
    MemTxResult r;

    r = write ? pci_dma_write(PCI_DEVICE(s), addr, buf, len) :
                pci_dma_read(PCI_DEVICE(s), addr, buf, len);
    if (r != MEMTX_OK) {
        kite_dma_error(s, what, addr, len, write);
        return false;
    }
    return true;
}

/*
 * The MR @key names, if it is valid, in @pdn, grants @access and covers
 * [addr, addr + len). A memory window's key is never one: windows give
 * remote access only (kite_rkey_check()).
 */
KiteMR *kite_key_check(KiteState *s, uint32_t pdn, uint32_t key,
                       uint64_t addr, uint64_t len, uint32_t access)
{
    uint32_t index = FIELD_GET(KITE_KEY_INDEX, key);
    KiteMR *mr;

    if (index == 0 || index >= KITE_MAX_MR) {
        return NULL;
    }
    mr = &s->rdma.mr[index];
    if (!mr->valid || mr->mw_type || mr->state != KITE_MR_STATE_VALID ||
        mr->tag != FIELD_GET(KITE_KEY_TAG, key) || mr->pdn != pdn ||
        (mr->access & access) != access) {
        return NULL;
    }
    if (addr < mr->iova || len > mr->length ||
        addr - mr->iova > mr->length - len) {
        return NULL;
    }
    return mr;
}

static bool kite_read_le64(KiteState *s, uint64_t addr, uint64_t *val)
{
    if (!kite_dma_rw(s, "MR page list", addr, val, 8, false)) {
        return false;
    }
    *val = le64_to_cpu(*val);
    return true;
}

/* Bus address of data page @page of @mr, from its page list. */
static bool kite_mr_page(KiteState *s, KiteMR *mr, uint64_t page,
                         uint64_t *pa)
{
    const KitePbl *pbl = &mr->pbl;
    uint64_t pte, pde, mask = (1ULL << pbl->page_shift) - 1;

    if (page >= pbl->npages) {
        return false;
    }
    switch (pbl->level) {
    case KITE_PBL_LEVEL_0:
        *pa = pbl->addr;
        return true;
    case KITE_PBL_LEVEL_1:
        if (!kite_read_le64(s, pbl->addr + 8 * page, &pte)) {
            return false;
        }
        break;
    case KITE_PBL_LEVEL_2:
        if (!kite_read_le64(s, pbl->addr + 8 * (page / KITE_PBL_ENTRIES),
                            &pde)) {
            return false;
        }
        if (!(pde & KITE_PTE_VALID)) {
            return false;
        }
        if (!kite_read_le64(s, (pde & KITE_PTE_ADDR) +
                            8 * (page % KITE_PBL_ENTRIES), &pte)) {
            return false;
        }
        break;
    default:
        return false;
    }
    /* The list was valid at registration; software may have changed it. */
    if (!(pte & KITE_PTE_VALID) || ((pte & KITE_PTE_ADDR) & mask)) {
        return false;
    }
    *pa = pte & KITE_PTE_ADDR;
    return true;
}

/* Copy between @buf and [addr, addr + len) of @mr (checked by the caller). */
bool kite_mr_rw(KiteState *s, KiteMR *mr, uint64_t addr, uint8_t *buf,
                uint64_t len, bool write)
{
    uint64_t psize, off, n, pa;

    if (mr->flags & KITE_MR_F_PHYS) {
        return kite_dma_rw(s, "MR data", addr, buf, len, write);
    }
    if (mr->flags & KITE_MR_F_DM) {
        uint8_t *dm;

        if (addr < mr->iova || addr - mr->iova > mr->length ||
            len > mr->length - (addr - mr->iova)) {
            kite_dma_error(s, "device memory", addr, len, write);
            return false;
        }
        /* In BAR4: REG_MR checked mr->dm_off + mr->length against it. */
        dm = s->dm_ptr + mr->dm_off + (addr - mr->iova);
        if (write) {
            memcpy(dm, buf, len);
        } else {
            memcpy(buf, dm, len);
        }
        return true;
    }
    psize = 1ULL << mr->pbl.page_shift;
    off = addr - mr->iova + (mr->iova & (psize - 1));
    while (len) {
        n = MIN(len, psize - (off & (psize - 1)));
        if (!kite_mr_page(s, mr, off >> mr->pbl.page_shift, &pa)) {
            kite_dma_error(s, "MR page translation", addr, len, write);
            return false;
        }
        if (!kite_dma_rw(s, "MR data", pa + (off & (psize - 1)), buf, n,
                         write)) {
            return false;
        }
        off += n;
        buf += n;
        len -= n;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

void kite_engine_cqe(KiteState *s, uint32_t cqn, struct kite_cqe *cqe,
                     uint8_t opcode)
{
    KiteCQ *cq = kite_cq_lookup(s, cqn);

    kite_cqe_stamp(s, cqe);
    cqe->op_own = cpu_to_le32(FIELD_PREP(KITE_CQE_OPCODE, opcode));
    if (cq) {
        kite_cq_write_cqe(s, cq, cqe);
    }
}

void kite_req_cqe(KiteState *s, uint32_t qpn, KiteQP *qp,
                  uint16_t wqe_idx, uint8_t wqe_op, uint32_t synd)
{
    struct kite_cqe cqe = {
        .qpn = cpu_to_le32(qpn),
        .wqe_idx = cpu_to_le16(wqe_idx),
        .wqe_opcode = wqe_op,
        .syndrome = cpu_to_le32(synd),
    };

    kite_engine_cqe(s, qp->send_cqn, &cqe,
                    synd ? KITE_CQE_OP_REQ_ERR : KITE_CQE_OP_REQ);
}

void kite_resp_err_cqe(KiteState *s, uint32_t qpn, KiteQP *qp,
                       uint16_t wqe_idx, uint32_t synd)
{
    struct kite_cqe cqe = {
        .qpn = cpu_to_le32(qpn),
        .wqe_idx = cpu_to_le16(wqe_idx),
        .syndrome = cpu_to_le32(synd),
    };

    kite_recv_cqe(s, qp, &cqe, KITE_CQE_OP_RESP_ERR);
}

uint32_t kite_synd(uint8_t synd, uint8_t vendor)
{
    return FIELD_PREP(KITE_CQE_SYNDROME, synd) |
           FIELD_PREP(KITE_CQE_VENDOR_SYNDROME, vendor);
}

/*
 * A WQE completed in error: UD, GSI and UC send errors go to SQE, others
 * ERR.
 */
void kite_engine_qp_fail(KiteState *s, uint32_t qpn, KiteQP *qp,
                         bool send)
{
    if (send && !kite_qp_reliable(qp)) {
        if (qp->state == KITE_QPS_RTS || qp->state == KITE_QPS_SQD) {
            qp->state = KITE_QPS_SQE;
        }
    } else {
        qp->state = KITE_QPS_ERR;
    }
    kite_engine_kick(s, qpn, true, true);
}

/* ------------------------------------------------------------------ */
/* Send queue                                                          */
/* ------------------------------------------------------------------ */

static void kite_engine_tx_sent(NetClientState *nc, ssize_t len)
{
    KiteState *s = qemu_get_nic_opaque(nc);

    s->rdma.engine_tx_waiting = false;
    qemu_bh_schedule(s->rdma.engine_bh);
}

/* Send a built frame, through the loss hooks. */
void kite_engine_xmit(KiteState *s, uint8_t *f, size_t len)
{
    kite_loss_frame(s, KITE_LOSS_TX, f, len);
}

/* Send a frame: loop it back to our own port, or to the backend. */
void kite_engine_xmit_now(KiteState *s, uint8_t *f, size_t len)
{
    const uint8_t *dmac = f;
    NetClientState *nc;

    if (s->rdma.fault_icrc) {
        s->rdma.fault_icrc--;
        f[len - 1] ^= 0x5a;
    }
    s->stats[KITE_STAT_ROCE_TX_PKTS]++;
    if (!memcmp(dmac, s->eth.mac, 6)) {
        /* Internal loopback: never reaches the wire. */
        s->stats[KITE_STAT_ROCE_RX_PKTS]++;
        kite_engine_receive(s, f, len);
        return;
    }
    if (dmac[0] & 1) {
        /*
         * Multicast: the QPs of this port attached to the group receive
         * a copy too, and the frame goes to the wire.
         */
        kite_mcast_loopback(s, f, len);
    }
    if (!s->eth.nic || !s->link_up) {
        /* Lost, as on a real link that is down. */
        return;
    }
    nc = qemu_get_queue(s->eth.nic);
    if (qemu_send_packet_async(nc, f, len, kite_engine_tx_sent) == 0) {
        /* Queued (copied) by the backend: wait for the sent callback. */
        s->rdma.engine_tx_waiting = true;
    }
}

/*
 * Check the address vector @av of a UD/GSI SEND and look up its source
 * GID into @gid. Returns 0 or a CQE syndrome.
 */
static uint32_t kite_ud_av_check(KiteState *s, const struct kite_wqe_ud *av,
                                 KiteGid *gid)
{
    if ((le32_to_cpu(av->remote_qpn) & ~KITE_OBJ_MASK) || av->rsvd[0] ||
        av->rsvd[1] || (le32_to_cpu(av->flow_label) & ~KITE_FLOW_LABEL) ||
        (!(le16_to_cpu(av->vlan) & KITE_VLAN_VALID) && av->vlan) ||
        !kite_gid_get(s, av->sgid_index, gid) || av->net_type != gid->type) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_AV);
    }
    if (av->net_type == KITE_NET_ROCE_V2_IPV4) {
        static const uint8_t v4mapped[12] = {
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
        };

        if (memcmp(av->dgid, v4mapped, 12)) {
            return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_AV);
        }
    }
    /*
     * Multicast (kite_mcast.c): a multicast GID of the address family of
     * the source GID, DestQP 0xFFFFFF and the group's MAC, all three or
     * none of them.
     */
    if (kite_gid_is_mcast(av->dgid) ||
        le32_to_cpu(av->remote_qpn) == KITE_MCAST_QPN) {
        uint8_t mac[6];

        if (!kite_gid_is_mcast(av->dgid) ||
            le32_to_cpu(av->remote_qpn) != KITE_MCAST_QPN ||
            kite_gid_is_v4mapped(av->dgid) !=
            (av->net_type == KITE_NET_ROCE_V2_IPV4)) {
            return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_AV);
        }
        kite_mcast_mac(av->dgid, mac);
        if (memcmp(av->dmac, mac, sizeof(mac))) {
            return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_AV);
        }
    }
    return 0;
}

/*
 * Gather the message of a UD/GSI SEND into @payload: @ilen bytes of
 * inline data (@inl) or the @nsge data segments at @data, at most one
 * path MTU; its length into @total. Length, then the keys, then the data.
 * Returns 0 or a CQE syndrome.
 */
static uint32_t kite_ud_gather(KiteState *s, KiteQP *qp, const uint8_t *data,
                               bool inl, uint32_t ilen, uint32_t nsge,
                               uint8_t *payload, uint64_t *total)
{
    uint32_t mtu = KITE_MTU_BYTES(kite_active_mtu(s)), done = 0, i;

    *total = inl ? ilen : kite_sge_total(data, nsge);
    if (*total > mtu) {
        return kite_synd(KITE_SYND_LOCAL_LENGTH, 0);
    }
    if (inl) {
        memcpy(payload, data, ilen);
        return 0;
    }
    for (i = 0; i < nsge; i++) {
        KiteSge sge;
        KiteMR *mr;

        kite_sge_decode(data, i, &sge);
        if (!sge.len) {
            continue;
        }
        mr = kite_key_check(s, qp->pdn, sge.key, sge.addr, sge.len, 0);
        if (!mr) {
            return kite_synd(KITE_SYND_LOCAL_PROT, KITE_VSYND_KEY);
        }
        if (!kite_mr_rw(s, mr, sge.addr, payload + done, sge.len, false)) {
            return kite_synd(KITE_SYND_LOCAL_PROT, KITE_VSYND_DMA);
        }
        done += sge.len;
    }
    return 0;
}

/* The addressing of a UD packet from QP @qpn to the address vector @av. */
static void kite_ud_tx_addr(KiteRoceTx *t, uint32_t qpn,
                            const struct kite_wqe_ud *av, const KiteGid *gid)
{
    memcpy(t->dmac, av->dmac, 6);
    memcpy(t->smac, gid->mac, 6);
    t->vlan = (le16_to_cpu(av->vlan) & KITE_VLAN_VALID) ?
              le16_to_cpu(av->vlan) : gid->vlan;
    t->ipv6 = av->net_type == KITE_NET_ROCE_V2_IPV6;
    memcpy(t->sgid, gid->gid, 16);
    memcpy(t->dgid, av->dgid, 16);
    t->hop_limit = av->hop_limit;
    t->tclass = av->traffic_class;
    t->flow_label = le32_to_cpu(av->flow_label);
    t->sqpn = qpn;
    t->dqpn = le32_to_cpu(av->remote_qpn);
    t->sport = kite_roce_sport(t->flow_label, t->sqpn, t->dqpn);
}

/*
 * Execute the UD/GSI SEND in @wqe (one stride). Returns 0 or a CQE
 * syndrome (with vendor detail).
 */
static uint32_t kite_ud_send(KiteState *s, uint32_t qpn, KiteQP *qp,
                             const uint8_t *wqe, uint32_t stride)
{
    uint8_t *payload = s->rdma.ud_payload;
    struct kite_wqe_ctrl ctrl;
    struct kite_wqe_ud av;
    uint32_t opw, op, nsge, ilen, qkey, synd;
    uint64_t total;
    KiteRoceTx t;
    KiteGid gid;
    bool inl;
    size_t flen;

    memcpy(&ctrl, wqe, sizeof(ctrl));
    opw = le32_to_cpu(ctrl.opcode);
    op = FIELD_GET(KITE_WQE_OPCODE, opw);
    nsge = FIELD_GET(KITE_WQE_NUM_SGE, opw);
    inl = opw & KITE_WQE_F_INLINE;
    ilen = le16_to_cpu(ctrl.inline_len);

    if ((opw & KITE_WQE_CTRL_RSVD) || ctrl.xrc_srqn) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }
    if (op == KITE_WQE_OP_LOCAL_INV || op == KITE_WQE_OP_REG_MR) {
        return kite_engine_local_op(s, qpn, qp, wqe, stride);
    }
    if (op != KITE_WQE_OP_SEND && op != KITE_WQE_OP_SEND_IMM) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }
    if (stride < KITE_WQE_UD_DATA_OFF) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }
    if (inl) {
        if (nsge || ilen > KITE_MAX_INLINE ||
            KITE_WQE_UD_DATA_OFF + ilen > stride) {
            return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
        }
    } else if (ilen || nsge > KITE_MAX_SGE ||
               KITE_WQE_UD_DATA_OFF +
               nsge * sizeof(struct kite_wqe_sge) > stride) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }

    memcpy(&av, wqe + KITE_WQE_UD_OFF, sizeof(av));
    synd = kite_ud_av_check(s, &av, &gid);
    if (synd) {
        return synd;
    }
    synd = kite_ud_gather(s, qp, wqe + KITE_WQE_UD_DATA_OFF, inl, ilen, nsge,
                          payload, &total);
    if (synd) {
        return synd;
    }

    /* Q_Key: bit 31 set means the QP's own (GSI: the well-known one). */
    qkey = le32_to_cpu(av.qkey);
    if (qkey & BIT(31)) {
        qkey = qp->type == KITE_QPT_GSI ? KITE_GSI_QKEY :
                                          le32_to_cpu(qp->attr.qkey);
    }

    memset(&t, 0, sizeof(t));
    kite_ud_tx_addr(&t, qpn, &av, &gid);
    t.opcode = op == KITE_WQE_OP_SEND_IMM ? KITE_BTH_UD_SEND_ONLY_IMM :
                                            KITE_BTH_UD_SEND_ONLY;
    t.solicited = opw & KITE_WQE_F_SOLICITED;
    t.psn = le32_to_cpu(qp->attr.sq_psn) & KITE_PSN_MASK;
    t.qkey = qkey;
    t.has_imm = op == KITE_WQE_OP_SEND_IMM;
    memcpy(t.imm, wqe + offsetof(struct kite_wqe_ctrl, imm_data), 4);

    /* The next PSN; QUERY_QP reports it. */
    qp->attr.sq_psn = cpu_to_le32((t.psn + 1) & KITE_PSN_MASK);

    flen = kite_roce_build(s->rdma.engine_frame, &t, payload, total);
    kite_qp_count_tx(s, qp, flen);
    kite_engine_xmit(s, s->rdma.engine_frame, flen);
    return 0;
}

/* Execute (RTS) or flush (SQE, ERR) the WQE at the SQ's consumer counter. */
void kite_sq_one(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    KiteWQ *wq = &qp->sq;
    uint32_t stride = 1U << wq->wqe_shift;
    uint8_t wqe[KITE_MAX_WQE_SIZE];
    uint64_t addr = kite_pbl_entry(&wq->pbl, wq->ci, wq->log_depth,
                                   wq->wqe_shift);
    uint16_t wqe_idx = wq->ci;
    uint8_t wqe_op = 0;
    uint32_t opw = 0, synd;
    bool ok;

    ok = kite_dma_rw(s, "SQ WQE", addr, wqe, stride, false);
    if (ok) {
        opw = ldl_le_p(wqe + offsetof(struct kite_wqe_ctrl, opcode));
        wqe_op = FIELD_GET(KITE_WQE_OPCODE, opw);
        wqe_idx = lduw_le_p(wqe + offsetof(struct kite_wqe_ctrl, wqe_idx));
        trace_kite_sq_wqe(qpn, wqe_idx, wqe_op, opw);
    }
    wq->ci++;

    if (qp->state != KITE_QPS_RTS) {
        kite_req_cqe(s, qpn, qp, wqe_idx, wqe_op,
                     kite_synd(KITE_SYND_WR_FLUSH, 0));
        return;
    }
    if (!ok) {
        synd = kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_DMA);
    } else {
        synd = kite_ud_send(s, qpn, qp, wqe, stride);
    }
    if (synd) {
        kite_req_cqe(s, qpn, qp, wqe_idx, wqe_op, synd);
        kite_engine_qp_fail(s, qpn, qp, true);
        return;
    }
    if ((opw & KITE_WQE_F_SIGNALED) || (qp->flags & KITE_QP_F_SQ_SIG_ALL)) {
        kite_req_cqe(s, qpn, qp, wqe_idx, wqe_op, 0);
    }
}

/*
 * Work on the SQ of @qpn, at most @budget WQEs. Returns true when the
 * queue needs nothing more until its next kick.
 */
static bool kite_sq_process(KiteState *s, uint32_t qpn, int *budget)
{
    KiteQP *qp = &s->rdma.qp[qpn];

    if (qp->valid && kite_qp_connected(qp)) {
        return kite_rc_sq_process(s, qpn, qp, budget);
    }
    while (qp->valid && qp->sq.ci != qp->sq.pi) {
        switch (qp->state) {
        case KITE_QPS_RTS:
            if (s->rdma.engine_tx_waiting) {
                return false;
            }
            break;
        case KITE_QPS_SQE:
        case KITE_QPS_ERR:
            break;
        default:
            /* RESET, INIT, RTR, SQD: nothing is started. */
            return true;
        }
        if (*budget <= 0) {
            return false;
        }
        (*budget)--;
        kite_sq_one(s, qpn, qp);
    }
    return true;
}

/* RQ WQEs are consumed by packets; only a QP in ERR flushes them here. */
static bool kite_rq_process(KiteState *s, uint32_t qpn, int *budget)
{
    KiteQP *qp = &s->rdma.qp[qpn];

    if (qp->valid && kite_qp_connected(qp) && qp->state != KITE_QPS_ERR) {
        return kite_rc_rq_process(s, qpn, qp, budget);
    }
    if (qp->valid && qp->state == KITE_QPS_ERR) {
        /* Flushed: every WQE posted, also those no doorbell named. */
        kite_rq_dbrec_read(s, qpn, qp);
    }
    while (qp->valid && qp->state == KITE_QPS_ERR && qp->rq.ci != qp->rq.pi) {
        if (*budget <= 0) {
            return false;
        }
        (*budget)--;
        kite_resp_err_cqe(s, qpn, qp, qp->rq.ci,
                          kite_synd(KITE_SYND_WR_FLUSH, 0));
        qp->rq.ci++;
    }
    if (qp->valid && qp->srqn) {
        kite_srq_qp_flush(s, qpn, qp);
    }
    return true;
}

/* The first QP at or after @from with SQ or RQ work pending. */
static uint32_t kite_engine_next(KiteRdma *r, uint32_t from)
{
    return MIN(find_next_bit(r->sq_pending, KITE_MAX_QP, from),
               find_next_bit(r->rq_pending, KITE_MAX_QP, from));
}

/*
 * The engine: the QPs with work pending, round robin from the cursor, at
 * most KITE_ENGINE_QP_BURST WQEs each per queue and KITE_ENGINE_BUDGET in
 * all per run. Only the pending bitmaps are walked, not every QP.
 */
static void kite_engine_bh(void *opaque)
{
    KiteState *s = opaque;
    KiteRdma *r = &s->rdma;
    int budget = KITE_ENGINE_BUDGET;
    uint32_t start = r->engine_cursor, qpn = start;
    bool wrapped = false;

    while (budget > 0) {
        int burst = MIN(budget, KITE_ENGINE_QP_BURST), used;

        qpn = kite_engine_next(r, qpn);
        if (qpn >= KITE_MAX_QP && !wrapped) {
            wrapped = true;
            qpn = kite_engine_next(r, 0);
        }
        if (qpn >= KITE_MAX_QP || (wrapped && qpn >= start)) {
            qpn = start;                /* every pending QP had its turn */
            break;
        }
        if (test_bit(qpn, r->sq_pending)) {
            used = burst;
            if (kite_sq_process(s, qpn, &burst)) {
                clear_bit(qpn, r->sq_pending);
            }
            budget -= used - burst;
            burst = MIN(budget, KITE_ENGINE_QP_BURST);
        }
        if (test_bit(qpn, r->rq_pending)) {
            used = burst;
            if (kite_rq_process(s, qpn, &burst)) {
                clear_bit(qpn, r->rq_pending);
            }
            budget -= used - burst;
        }
        qpn++;
    }
    r->engine_cursor = qpn % KITE_MAX_QP;

    if (find_first_bit(r->rq_pending, KITE_MAX_QP) < KITE_MAX_QP ||
        (!r->engine_tx_waiting &&
         find_first_bit(r->sq_pending, KITE_MAX_QP) < KITE_MAX_QP)) {
        qemu_bh_schedule(r->engine_bh);
    }
}

/*
 * Before a command that depends on what the queues produced (a CQ resize
 * counts the CQEs not yet consumed): execute the work whose doorbells came
 * before the command, as the bottom half would have, in at most
 * KITE_ENGINE_DRAIN_RUNS runs (work that waits for the wire or the peer
 * stays pending).
 */
void kite_engine_drain(KiteState *s)
{
    KiteRdma *r = &s->rdma;
    int runs;

    for (runs = 0; runs < KITE_ENGINE_DRAIN_RUNS; runs++) {
        if (r->engine_tx_waiting ||
            (find_first_bit(r->sq_pending, KITE_MAX_QP) >= KITE_MAX_QP &&
             find_first_bit(r->rq_pending, KITE_MAX_QP) >= KITE_MAX_QP)) {
            break;
        }
        kite_engine_bh(s);
    }
}

void kite_engine_kick(KiteState *s, uint32_t qpn, bool sq, bool rq)
{
    if (qpn == 0 || qpn >= KITE_MAX_QP || !s->rdma.engine_bh) {
        return;
    }
    if (sq) {
        set_bit(qpn, s->rdma.sq_pending);
    }
    if (rq) {
        set_bit(qpn, s->rdma.rq_pending);
    }
    qemu_bh_schedule(s->rdma.engine_bh);
}

/* ------------------------------------------------------------------ */
/* Receive                                                             */
/* ------------------------------------------------------------------ */


void kite_rx_drop(KiteState *s, const char *why)
{
    s->stats[KITE_STAT_ROCE_RX_DROPS]++;
    kite_guest_error(s, "RoCEv2 packet dropped: %s", why);
}

/*
 * Parse the IPv4 or IPv6 header (Ethertype @et) at @off of the frame
 * @buf: its length into @iplen, the UDP length it gives into @l4len.
 * Returns NULL, or why the frame is dropped.
 */
static const char *kite_roce_parse_ip(const uint8_t *buf, size_t len,
                                      size_t off, uint16_t et, KiteRoceRx *p,
                                      size_t *iplen, size_t *l4len)
{
    if (et == KITE_ETHERTYPE_IPV4) {
        uint16_t tot;

        if (len < off + KITE_IPV4_HLEN || buf[off] != 0x45) {
            return "not an IPv4 header of 20 bytes";
        }
        tot = lduw_be_p(buf + off + 2);
        if (tot < KITE_IPV4_HLEN || off + tot > len) {
            return "bad IPv4 total length";
        }
        if (lduw_be_p(buf + off + 6) & 0x3fff) {
            return "IPv4 fragment";
        }
        if (buf[off + 9] != KITE_IPPROTO_UDP) {
            return "not UDP";
        }
        if (kite_csum_fold(kite_csum_add(0, buf + off, KITE_IPV4_HLEN))) {
            return "bad IPv4 header checksum";
        }
        *iplen = KITE_IPV4_HLEN;
        *l4len = tot - KITE_IPV4_HLEN;
    } else if (et == KITE_ETHERTYPE_IPV6) {
        if (len < off + KITE_IPV6_HLEN || (buf[off] >> 4) != 6) {
            return "bad IPv6 header";
        }
        if (buf[off + 6] != KITE_IPPROTO_UDP) {
            return "not UDP (IPv6 extension headers are not supported)";
        }
        p->ipv6 = true;
        *iplen = KITE_IPV6_HLEN;
        *l4len = lduw_be_p(buf + off + 4);
        if (off + *iplen + *l4len > len) {
            return "bad IPv6 payload length";
        }
    } else {
        return "not IP";
    }
    return NULL;
}

/*
 * Parse the headers after the BTH of the RC, UC or XRC packet @ib (@iblen
 * bytes with the ICRC, @pad bytes of padding). Returns NULL, or why the
 * packet is dropped.
 */
static const char *kite_roce_parse_rc(const uint8_t *ib, size_t iblen,
                                      uint8_t pad, KiteRoceRx *p)
{
    size_t hdr, xrceth = 0;
    int ext;

    /*
     * RC (0x00-0x1f), UC (0x20-0x2b, the RC SEND and WRITE opcodes +
     * 0x20) and XRC (0xa0-0xbd, the RC opcodes + 0xa0): UC and XRC are
     * parsed as their RC equivalents. An XRC request has the XRCETH
     * after the BTH, ahead of the RC headers.
     */
    if (p->opcode >= KITE_XRC_OPCODE) {
        p->xrc = true;
        p->opcode -= KITE_XRC_OPCODE;
        if (!kite_rc_opcode_is_response(p->opcode)) {
            xrceth = KITE_XRCETH_LEN;
        }
    } else if (p->opcode >= 0x20) {
        if (p->opcode > KITE_BTH_UC_LAST) {
            return "UC BTH opcode not supported";
        }
        p->uc = true;
        p->opcode -= 0x20;
        p->ackreq = false;          /* ignored on UC (IBA 9.2) */
    }
    ext = kite_rc_ext_len(p->opcode);
    if (ext < 0) {
        return p->xrc ? "XRC BTH opcode not supported" :
                        "RC BTH opcode not supported";
    }
    p->rc = true;
    hdr = KITE_BTH_LEN + xrceth + ext;
    if (iblen < hdr + pad + KITE_ICRC_LEN) {
        return "short RC packet";
    }
    if (xrceth) {
        p->xrc_srqn = ldl_be_p(ib + KITE_BTH_LEN);
        if (p->xrc_srqn & ~KITE_OBJ_MASK) {
            return "XRCETH reserved bits set";
        }
    }
    p->ext = ib + KITE_BTH_LEN + xrceth;
    p->payload = ib + hdr;
    p->len = iblen - hdr - pad - KITE_ICRC_LEN;
    if (p->len > KITE_ROCE_MAX_PAYLOAD) {
        return "payload larger than the largest MTU";
    }
    return NULL;
}

/*
 * Parse the headers after the BTH of the UD packet @ib (@iblen bytes
 * with the ICRC, @pad bytes of padding). Returns NULL, or why the packet
 * is dropped.
 */
static const char *kite_roce_parse_ud(const uint8_t *ib, size_t iblen,
                                      uint8_t pad, KiteRoceRx *p)
{
    size_t hdr;

    if (p->opcode != KITE_BTH_UD_SEND_ONLY &&
        p->opcode != KITE_BTH_UD_SEND_ONLY_IMM) {
        return "BTH opcode not supported (UD SEND only)";
    }
    p->has_imm = p->opcode == KITE_BTH_UD_SEND_ONLY_IMM;
    hdr = KITE_BTH_LEN + KITE_DETH_LEN + (p->has_imm ? KITE_IMMDT_LEN : 0);
    if (iblen < hdr + pad + KITE_ICRC_LEN) {
        return "short UD packet";
    }
    p->qkey = ldl_be_p(ib + KITE_BTH_LEN);
    p->sqpn = ldl_be_p(ib + KITE_BTH_LEN + 4) & KITE_OBJ_MASK;
    if (p->has_imm) {
        memcpy(&p->imm, ib + KITE_BTH_LEN + KITE_DETH_LEN, 4);
    }
    p->payload = ib + hdr;
    p->len = iblen - hdr - pad - KITE_ICRC_LEN;
    if (p->len > KITE_ROCE_MAX_PAYLOAD) {
        return "payload larger than the largest MTU";
    }
    return NULL;
}

/* Parse and check a frame; NULL, or the reason it is dropped. */
const char *kite_roce_parse(const uint8_t *buf, size_t len, KiteRoceRx *p)
{
    size_t off = KITE_ETH_HLEN, iplen, l4len, ib, iblen;
    const char *why;
    uint16_t et;
    uint8_t flags, pad;

    memset(p, 0, sizeof(*p));
    if (len < KITE_ETH_HLEN) {
        return "short frame";
    }
    p->smac = buf + 6;
    et = lduw_be_p(buf + 12);
    if (et == KITE_ETHERTYPE_VLAN) {
        if (len < KITE_ETH_HLEN + KITE_VLAN_HLEN) {
            return "short frame";
        }
        p->vlan = true;
        p->tci = lduw_be_p(buf + 14);
        et = lduw_be_p(buf + 16);
        off += KITE_VLAN_HLEN;
    }
    p->l3 = buf + off;
    why = kite_roce_parse_ip(buf, len, off, et, p, &iplen, &l4len);
    if (why) {
        return why;
    }

    off += iplen;
    if (l4len < KITE_UDP_HLEN || lduw_be_p(buf + off + 4) != l4len ||
        lduw_be_p(buf + off + 2) != KITE_ROCE_UDP_PORT) {
        return "bad UDP header";
    }
    ib = off + KITE_UDP_HLEN;
    iblen = l4len - KITE_UDP_HLEN;
    if (iblen < KITE_BTH_LEN + KITE_ICRC_LEN) {
        return "short IB packet";
    }
    if (kite_roce_icrc(p->l3, iplen + KITE_UDP_HLEN + iblen - KITE_ICRC_LEN,
                       p->ipv6) != ldl_le_p(buf + ib + iblen - KITE_ICRC_LEN)) {
        return "ICRC mismatch";
    }

    p->opcode = buf[ib];
    flags = buf[ib + 1];
    p->solicited = flags & 0x80;
    pad = (flags >> 4) & 3;
    if (flags & 0xf) {
        return "BTH transport header version not 0";
    }
    if ((lduw_be_p(buf + ib + 2) & 0x7fff) != 0x7fff) {
        return "P_Key not the default partition";
    }
    p->dqpn = ldl_be_p(buf + ib + 4) & KITE_OBJ_MASK;
    p->psn = ldl_be_p(buf + ib + 8) & KITE_PSN_MASK;
    p->ackreq = buf[ib + 8] & 0x80;
    if (p->opcode < 0x40 || (p->opcode >= KITE_XRC_OPCODE &&
                             p->opcode < KITE_XRC_OPCODE + 0x20)) {
        return kite_roce_parse_rc(buf + ib, iblen, pad, p);
    }
    return kite_roce_parse_ud(buf + ib, iblen, pad, p);
}

/*
 * Scatter @msg into the receive WQE of @qp: the one at the RQ's consumer
 * counter, or the one it took from its SRQ (kite_recv_take() first).
 * Returns 0 or a syndrome.
 */
uint32_t kite_rq_scatter_at(KiteState *s, KiteQP *qp, const uint8_t *msg,
                            uint32_t len, uint64_t at)
{
    KiteWQ *wq = &qp->rq;
    uint32_t stride = 1U << wq->wqe_shift;
    uint8_t wqe[KITE_MAX_WQE_SIZE];
    struct kite_wqe_recv hdr;
    uint64_t addr;
    uint32_t nsge;

    if (qp->srqn) {
        if (!qp->rwqe.held) {
            return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
        }
        return kite_recv_scatter_sges(s, qp, qp->rwqe.sge, qp->rwqe.nsge,
                                      msg, len, at);
    }
    addr = kite_pbl_entry(&wq->pbl, wq->ci, wq->log_depth, wq->wqe_shift);
    if (!kite_dma_rw(s, "RQ WQE", addr, wqe, stride, false)) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_DMA);
    }
    memcpy(&hdr, wqe, sizeof(hdr));
    nsge = le32_to_cpu(hdr.num_sge);
    if (nsge > KITE_MAX_SGE ||
        sizeof(hdr) + nsge * sizeof(struct kite_wqe_sge) > stride ||
        hdr.rsvd[0] || hdr.rsvd[1] || hdr.rsvd[2]) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }
    return kite_recv_scatter_sges(s, qp, wqe + sizeof(hdr), nsge, msg, len,
                                  at);
}

/* Scatter @msg at byte @at of the @nsge data segments @sges. */
uint32_t kite_recv_scatter_sges(KiteState *s, KiteQP *qp, const uint8_t *sges,
                                uint32_t nsge, const uint8_t *msg,
                                uint32_t len, uint64_t at)
{
    uint32_t i, done = 0;

    if (kite_sge_total(sges, nsge) < at + len) {
        return kite_synd(KITE_SYND_LOCAL_LENGTH, 0);
    }
    for (i = 0; i < nsge && done < len; i++) {
        KiteSge sge;
        uint64_t a;
        uint32_t n;
        KiteMR *mr;

        kite_sge_decode(sges, i, &sge);
        if (at >= sge.len) {
            at -= sge.len;
            continue;
        }
        a = sge.addr + at;
        n = MIN(sge.len - at, len - done);
        at = 0;

        if (!n) {
            continue;
        }
        /* SRQ WQEs are checked against the SRQ's PD. */
        mr = kite_key_check(s, qp->srqn ? s->rdma.srq[qp->srqn].pdn :
                                          qp->pdn, sge.key, a, n,
                            KITE_ACCESS_LOCAL_WRITE);
        if (!mr) {
            return kite_synd(KITE_SYND_LOCAL_ACCESS, KITE_VSYND_KEY);
        }
        if (!kite_mr_rw(s, mr, a, (uint8_t *)msg + done, n, true)) {
            return kite_synd(KITE_SYND_LOCAL_ACCESS, KITE_VSYND_DMA);
        }
        done += n;
    }
    return 0;
}

/*
 * Deliver the UD packet @p to @qp, QPN @qpn: the destination QP of a
 * unicast packet, or one QP of a multicast group. Every check is made for
 * this QP alone: its state, its Q_Key, a receive WQE.
 */
void kite_ud_deliver(KiteState *s, uint32_t qpn, KiteQP *qp,
                     const KiteRoceRx *p)
{
    uint8_t *msg = s->rdma.ud_msg;
    struct kite_cqe cqe;
    uint32_t synd, qkey;
    uint16_t flags;

    if (!qp->valid || (qp->type != KITE_QPT_UD && qp->type != KITE_QPT_GSI)) {
        kite_rx_drop(s, "no UD QP with the destination QPN");
        return;
    }
    if (qp->state != KITE_QPS_RTR && qp->state != KITE_QPS_RTS &&
        qp->state != KITE_QPS_SQD && qp->state != KITE_QPS_SQE) {
        kite_rx_drop(s, "destination QP not ready to receive");
        return;
    }
    qkey = qp->type == KITE_QPT_GSI ? KITE_GSI_QKEY :
                                      le32_to_cpu(qp->attr.qkey);
    if (p->qkey != qkey) {
        kite_rx_drop(s, "Q_Key mismatch");
        return;
    }
    if (kite_recv_empty(s, qp)) {
        kite_rx_drop(s, "no receive WQE posted");
        return;
    }

    /* The GRH area: the IPv6 header, or the IPv4 header in its last 20. */
    memset(msg, 0, KITE_GRH_LEN);
    if (p->ipv6) {
        memcpy(msg, p->l3, KITE_IPV6_HLEN);
    } else {
        memcpy(msg + KITE_GRH_LEN - KITE_IPV4_HLEN, p->l3, KITE_IPV4_HLEN);
    }
    memcpy(msg + KITE_GRH_LEN, p->payload, p->len);

    synd = kite_recv_take(s, qp);
    if (synd == KITE_RECV_NONE) {
        kite_rx_drop(s, "no receive WQE could be taken from the SRQ");
        return;
    }
    if (!synd) {
        synd = kite_rq_scatter_at(s, qp, msg, KITE_GRH_LEN + p->len, 0);
    }
    if (synd) {
        kite_resp_err_cqe(s, qpn, qp, kite_recv_idx(qp), synd);
        kite_recv_done(qp);
        kite_engine_qp_fail(s, qpn, qp, false);
        return;
    }

    flags = KITE_CQE_F_GRH |
            FIELD_PREP(KITE_CQE_F_L3, p->ipv6 ? KITE_NET_ROCE_V2_IPV6 :
                                                KITE_NET_ROCE_V2_IPV4);
    if (p->solicited) {
        flags |= KITE_CQE_F_SOLICITED;
    }
    if (p->has_imm) {
        flags |= KITE_CQE_F_IMM;
    }
    memset(&cqe, 0, sizeof(cqe));
    if (p->vlan) {
        flags |= KITE_CQE_F_VLAN;
        cqe.vlan = cpu_to_le16(KITE_VLAN_VALID |
                               (p->tci & (KITE_VLAN_ID | KITE_VLAN_PCP)));
    }
    cqe.qpn = cpu_to_le32(qpn);
    cqe.byte_len = cpu_to_le32(KITE_GRH_LEN + p->len);
    cqe.imm_data = p->imm;
    cqe.wqe_idx = cpu_to_le16(kite_recv_idx(qp));
    cqe.flags = cpu_to_le16(flags);
    cqe.src_qpn = cpu_to_le32(p->sqpn);
    memcpy(cqe.smac, p->smac, 6);
    kite_recv_done(qp);
    kite_engine_cqe(s, qp->recv_cqn, &cqe,
                    p->has_imm ? KITE_CQE_OP_RESP_SEND_IMM :
                                 KITE_CQE_OP_RESP_SEND);
}

/*
 * Count a RoCEv2 frame of @len bytes for QP @qpn, if it exists: a packet
 * received, and a drop if KITE_STAT_ROCE_RX_DROPS moved from @drops while
 * the receive path handled it (so that every drop path counts).
 */
void kite_qp_count_rx(KiteState *s, uint32_t qpn, size_t len, uint64_t drops)
{
    KiteQP *qp = kite_qp_lookup(s, qpn);

    if (!qp) {
        return;
    }
    kite_qp_count(s, qp, KITE_QP_STAT_RX_PKTS, 1);
    kite_qp_count(s, qp, KITE_QP_STAT_RX_BYTES, len);
    if (s->stats[KITE_STAT_ROCE_RX_DROPS] != drops) {
        kite_qp_count(s, qp, KITE_QP_STAT_RX_DROPS, 1);
    }
}

/*
 * The QP type a connected packet is for: XRC requests go to targets, XRC
 * responses to initiators.
 */
static uint32_t kite_roce_rx_qp_type(const KiteRoceRx *p)
{
    if (p->xrc) {
        return kite_rc_opcode_is_response(p->opcode) ? KITE_QPT_XRC_INI :
                                                       KITE_QPT_XRC_TGT;
    }
    return p->uc ? KITE_QPT_UC : KITE_QPT_RC;
}

/* A unicast packet, to the QP it names. */
static void kite_engine_receive_unicast(KiteState *s, const KiteRoceRx *p)
{
    KiteQP *qp = p->dqpn < KITE_MAX_QP ? &s->rdma.qp[p->dqpn] : NULL;

    if (p->rc) {
        if (!qp || !qp->valid || qp->type != kite_roce_rx_qp_type(p)) {
            kite_rx_drop(s, p->uc ? "no UC QP with the destination QPN" :
                            p->xrc ? "no XRC QP of the packet's side with "
                                     "the destination QPN" :
                                     "no RC QP with the destination QPN");
            return;
        }
        kite_rc_receive(s, p->dqpn, qp, p);
        return;
    }
    if (!qp) {
        kite_rx_drop(s, "no UD QP with the destination QPN");
        return;
    }
    kite_ud_deliver(s, p->dqpn, qp, p);
}

void kite_engine_receive(KiteState *s, const uint8_t *buf, size_t len)
{
    uint64_t drops;
    const char *why;
    KiteRoceRx p;

    why = kite_roce_parse(buf, len, &p);
    if (why) {
        kite_rx_drop(s, why);
        return;
    }
    if (p.dqpn == KITE_MCAST_QPN) {
        kite_mcast_receive(s, buf, len, &p);
        return;
    }
    if (kite_mcast_rx_is_mcast(&p)) {
        kite_rx_drop(s, "multicast address without DestQP 0xFFFFFF");
        return;
    }
    drops = s->stats[KITE_STAT_ROCE_RX_DROPS];
    kite_engine_receive_unicast(s, &p);
    kite_qp_count_rx(s, p.dqpn, len, drops);
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

void kite_engine_init(KiteState *s)
{
    kite_rc_init(s);
    kite_loss_init(s);
    s->rdma.engine_bh = qemu_bh_new_guarded(kite_engine_bh, s,
                                            &DEVICE(s)->mem_reentrancy_guard);
}

void kite_engine_reset(KiteState *s)
{
    KiteRdma *r = &s->rdma;

    if (r->engine_bh) {
        qemu_bh_cancel(r->engine_bh);
    }
    bitmap_zero(r->sq_pending, KITE_MAX_QP);
    bitmap_zero(r->rq_pending, KITE_MAX_QP);
    r->engine_cursor = 0;
    r->engine_tx_waiting = false;
    kite_rc_reset(s);
    kite_loss_reset(s);
}

void kite_engine_exit(KiteState *s)
{
    kite_rc_exit(s);
    kite_loss_exit(s);
    if (s->rdma.engine_bh) {
        qemu_bh_delete(s->rdma.engine_bh);
        s->rdma.engine_bh = NULL;
    }
}
