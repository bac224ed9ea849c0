/*
 * Kite NIC: the RC, UC and XRC transports of the RDMA data engine.
 *
 * Requester: WQEs start in SQ order and several are outstanding at once
 * (started, not yet completed): at most KITE_RC_SQ_WINDOW WQEs, no
 * packet (and no READ response) more than the congestion window past the
 * oldest unacknowledged PSN (at most KITE_RC_PSN_WINDOW, halved at each
 * go-back-N, grown again by acknowledgements), at most max_rd_atomic (0
 * counts as 1) READ and
 * atomic WQEs (ATOMIC WRITE and FLUSH count as such: IBA 1.5 answers
 * them with a READ response). A fenced WQE starts when no READ or atomic is
 * outstanding; a local operation (LOCAL_INV, REG_MR, BIND_MW) when
 * nothing is. A message is segmented by the path MTU into FIRST/MIDDLE/LAST/ONLY
 * packets, one packet per unit of the engine's budget, AckReq set on
 * the last and on every KITE_RC_ACKREQ_EVERY-th (or half the congestion
 * window, if that is fewer). WQEs complete in order,
 * the oldest first, when acknowledged: an ACK acknowledges every packet
 * up to its PSN; any response (READ response, atomic ACK, ACK, NAK)
 * implicitly acknowledges the SEND and WRITE packets before its PSN,
 * while an unanswered READ or atomic before it means its response was
 * lost (IBA 9.7.5.1). A local ACK timeout (4.096 us * 2^timeout on the
 * virtual clock, restarted by forward progress), a sequence NAK, a lost
 * response or an RNR NAK goes back N: packets are sent again from the
 * oldest unacknowledged one, which may be in the middle of a message,
 * and the WQEs after it are sent again in full (a READ asks only for
 * what has not arrived). retry_cnt and rnr_retry (7: unlimited) bound
 * the retries without progress, after which the oldest WQE completes
 * with RETRY_EXC or RNR_RETRY_EXC and the QP goes to ERR (flushing the
 * rest). A WQE that fails locally completes in error once it is the
 * oldest.
 *
 * Responder: packets are executed in PSN order. A PSN ahead of the
 * expected one is answered by one sequence NAK; a duplicate is
 * re-acknowledged (SEND, WRITE), re-executed (READ, from the request's
 * own RETH) or replayed from the one-entry atomic result cache. A SEND
 * or WRITE_IMM without an RQ WQE gets an RNR NAK carrying
 * min_rnr_timer. Key, PD, access, bounds and opcode-sequence violations
 * get a NAK (remote access error, invalid request) at once and move the
 * responder QP to ERR. Every other response goes through a queue sent in
 * order by the engine bottom half, within its budget: READ responses
 * (up to KITE_RC_RDQ READ and atomic requests waiting), atomic ACKs,
 * and ACKs and NAKs. Every request with AckReq is acknowledged, but
 * ACKs are coalesced: an ACK waiting at the tail of the queue is
 * replaced by a later one, which acknowledges both.
 *
 * UC shares the requester's segmentation and the responder's SEND and
 * WRITE execution, without acknowledgements: a UC WQE completes once its
 * last packet is sent, and the UC responder (kite_uc_resp_receive())
 * drops what it cannot execute instead of answering.
 *
 * XRC (IBA annex A14) is RC with its opcodes + 0xa0: an initiator is an
 * RC requester whose request packets carry the XRCETH, the remote XRC
 * SRQ its WQE names (kept in KiteRcSwqe for retransmissions); a target
 * is an RC responder that first checks each in-sequence request's XRCETH
 * (kite_xrc_srq_use(): an XRC SRQ of its domain, the same one for every
 * packet of a message), which sets the SRQ its SENDs take WQEs from and
 * the PD its R_Keys are checked against; its receive CQEs go to that
 * SRQ's CQ (kite_recv_cqe()).
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/atomic.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "net/net.h"

#include "kite_int.h"
#include "trace.h"

/* BTH opcodes of the RC transport (IBA 9.2). */
#define RC_SEND_FIRST           0x00
#define RC_SEND_MIDDLE          0x01
#define RC_SEND_LAST            0x02
#define RC_SEND_LAST_IMM        0x03
#define RC_SEND_ONLY            0x04
#define RC_SEND_ONLY_IMM        0x05
#define RC_WRITE_FIRST          0x06
#define RC_WRITE_MIDDLE         0x07
#define RC_WRITE_LAST           0x08
#define RC_WRITE_LAST_IMM       0x09
#define RC_WRITE_ONLY           0x0a
#define RC_WRITE_ONLY_IMM       0x0b
#define RC_READ_REQ             0x0c
#define RC_READ_RESP_FIRST      0x0d
#define RC_READ_RESP_MIDDLE     0x0e
#define RC_READ_RESP_LAST       0x0f
#define RC_READ_RESP_ONLY       0x10
#define RC_ACK                  0x11
#define RC_ATOMIC_ACK           0x12
#define RC_CMP_SWAP             0x13
#define RC_FETCH_ADD            0x14
#define RC_SEND_LAST_INV        0x16
#define RC_SEND_ONLY_INV        0x17
#define RC_FLUSH                0x1c    /* IBA 1.5 */
#define RC_ATOMIC_WRITE         0x1d    /* IBA 1.5 */

#define RC_RETH_LEN             16
#define RC_AETH_LEN             4
#define RC_ATOMICETH_LEN        28
#define RC_FETH_LEN             4

/* AETH syndromes. */
#define RC_AETH_ACK             0x1f    /* ACK, no credit information */
#define RC_AETH_RNR             0x20    /* | timer code */
#define RC_AETH_NAK             0x60    /* | one of: */
#define RC_NAK_PSN_SEQ          0
#define RC_NAK_INV_REQ          1
#define RC_NAK_REM_ACCESS       2
#define RC_NAK_REM_OP           3

/* A UC opcode is the RC one + 0x20 (SEND and RDMA WRITE only). */
#define KITE_UC_OPCODE          0x20

#define KITE_WQE_CTRL_RSVD      (GENMASK(15, 12) | GENMASK(31, 20))

/* Send WQE layout: the segments after the control segment (kite_hw.h). */
#define KITE_WQE_CTRL_OFF(f)    offsetof(struct kite_wqe_ctrl, f)
#define KITE_WQE_RADDR_OFF(f)   (sizeof(struct kite_wqe_ctrl) + \
                                 offsetof(struct kite_wqe_raddr, f))
#define KITE_WQE_ATOMIC_OFF(f)  (sizeof(struct kite_wqe_ctrl) + \
                                 sizeof(struct kite_wqe_raddr) + \
                                 offsetof(struct kite_wqe_atomic, f))
#define KITE_WQE_FLUSH_OFF(f)   (sizeof(struct kite_wqe_ctrl) + \
                                 sizeof(struct kite_wqe_raddr) + \
                                 offsetof(struct kite_wqe_flush, f))
#define KITE_WQE_REG_MR_OFF(f)  (sizeof(struct kite_wqe_ctrl) + \
                                 offsetof(struct kite_wqe_reg_mr, f))
/* Where the data segments start: sends, RDMA, atomics. */
#define KITE_WQE_SEND_DATA_OFF  sizeof(struct kite_wqe_ctrl)
#define KITE_WQE_RDMA_DATA_OFF  (KITE_WQE_SEND_DATA_OFF + \
                                 sizeof(struct kite_wqe_raddr))
#define KITE_WQE_ATOMIC_DATA_OFF (KITE_WQE_RDMA_DATA_OFF + \
                                  sizeof(struct kite_wqe_atomic))
/* FLUSH: where data would start (it has none). */
#define KITE_WQE_FLUSH_END      (KITE_WQE_RDMA_DATA_OFF + \
                                 sizeof(struct kite_wqe_flush))

/* RNR timer codes (IBA table 45) in microseconds. */
static const uint32_t kite_rnr_us[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
    1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
    40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

int kite_rc_ext_len(uint8_t opcode)
{
    switch (opcode) {
    case RC_SEND_FIRST:
    case RC_SEND_MIDDLE:
    case RC_SEND_LAST:
    case RC_SEND_ONLY:
    case RC_WRITE_MIDDLE:
    case RC_WRITE_LAST:
    case RC_READ_RESP_MIDDLE:
        return 0;
    case RC_SEND_LAST_IMM:
    case RC_SEND_ONLY_IMM:
    case RC_SEND_LAST_INV:
    case RC_SEND_ONLY_INV:
    case RC_WRITE_LAST_IMM:
    case RC_READ_RESP_FIRST:
    case RC_READ_RESP_LAST:
    case RC_READ_RESP_ONLY:
    case RC_ACK:
        return 4;
    case RC_ATOMIC_ACK:
        return RC_AETH_LEN + 8;
    case RC_WRITE_FIRST:
    case RC_WRITE_ONLY:
    case RC_READ_REQ:
    case RC_ATOMIC_WRITE:
        return RC_RETH_LEN;
    case RC_WRITE_ONLY_IMM:
        return RC_RETH_LEN + 4;
    case RC_CMP_SWAP:
    case RC_FETCH_ADD:
        return RC_ATOMICETH_LEN;
    case RC_FLUSH:
        return RC_FETH_LEN + RC_RETH_LEN;
    default:
        return -1;
    }
}

static uint32_t kite_rc_mtu(KiteState *s, KiteQP *qp)
{
    uint8_t m = MIN(qp->attr.path_mtu, kite_active_mtu(s));

    return KITE_MTU_BYTES(MAX(m, KITE_MTU_256));
}

static int32_t kite_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(((a - b) & KITE_PSN_MASK) << 8) >> 8;
}

/* The address vector of @qp's connection. */
static bool kite_rc_tx_init(KiteState *s, uint32_t qpn, KiteQP *qp,
                            KiteRoceTx *t)
{
    const struct kite_cmd_modify_qp *a = &qp->attr;
    uint16_t vlan = le16_to_cpu(a->vlan);
    KiteGid gid;

    if (!kite_gid_get(s, a->sgid_index, &gid)) {
        return false;
    }
    memset(t, 0, sizeof(*t));
    memcpy(t->dmac, a->dmac, 6);
    memcpy(t->smac, gid.mac, 6);
    t->vlan = (vlan & KITE_VLAN_VALID) ? vlan : gid.vlan;
    t->ipv6 = a->net_type == KITE_NET_ROCE_V2_IPV6;
    memcpy(t->sgid, gid.gid, 16);
    memcpy(t->dgid, a->dgid, 16);
    t->hop_limit = a->hop_limit;
    t->tclass = a->traffic_class;
    t->flow_label = le32_to_cpu(a->flow_label) & KITE_FLOW_LABEL;
    t->sqpn = qpn;
    t->dqpn = le32_to_cpu(a->dest_qpn) & KITE_OBJ_MASK;
    t->sport = kite_roce_sport(t->flow_label, qpn, t->dqpn);
    t->rc = true;
    return true;
}

/*
 * The XRC form of the RC packet @t of @qp: XRC opcodes, and the XRCETH
 * naming @xrc_srqn on an initiator's requests. Nothing for RC and UC.
 */
static void kite_rc_tx_xrc(const KiteQP *qp, KiteRoceTx *t,
                           uint32_t xrc_srqn)
{
    if (!kite_qp_xrc(qp)) {
        return;
    }
    t->opcode += KITE_XRC_OPCODE;
    if (qp->type == KITE_QPT_XRC_INI) {
        t->xrc = true;
        t->xrc_srqn = xrc_srqn;
    }
}

/* ------------------------------------------------------------------ */
/* Timers                                                              */
/* ------------------------------------------------------------------ */

static void kite_rc_arm(KiteState *s, KiteQP *qp, int64_t ns)
{
    qp->rc.deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns;
    set_bit(qp - s->rdma.qp, s->rdma.rc_timed);
    timer_mod_anticipate(s->rdma.rc_timer, qp->rc.deadline);
}

/*
 * The probe timer of adaptive retransmission: the smoothed message round
 * trip plus four times its variation (RFC 6298's estimator), at least
 * KITE_RC_RTO_MIN_NS, doubled for every probe since progress; armed only
 * while the local ACK timer runs and only when it would expire before it.
 */
static void kite_rc_arm_probe(KiteState *s, KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;
    int64_t rto, now;

    rc->probe_deadline = 0;
    if (!s->rc_rto_adaptive || !rc->rtt_known || !rc->deadline ||
        rc->rnr_wait || rc->probes >= KITE_RC_PROBES_MAX) {
        return;
    }
    rto = MAX(KITE_RC_RTO_MIN_NS, rc->srtt + 4 * rc->rttvar) << rc->probes;
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (rto >= rc->deadline - now) {
        return;
    }
    rc->probe_deadline = now + rto;
    set_bit(qp - s->rdma.qp, s->rdma.rc_timed);
    timer_mod_anticipate(s->rdma.rc_timer, rc->probe_deadline);
}

/* A message's round trip @ns, from its first packet to its completion. */
static void kite_rc_rtt_sample(KiteRcState *rc, int64_t ns)
{
    if (!rc->rtt_known) {
        rc->rtt_known = true;
        rc->srtt = ns;
        rc->rttvar = ns / 2;
        return;
    }
    rc->rttvar = (3 * rc->rttvar + ABS(rc->srtt - ns)) / 4;
    rc->srtt = (7 * rc->srtt + ns) / 8;
}

/* The local ACK timeout: none when the attribute is 0. */
static void kite_rc_arm_ack(KiteState *s, KiteQP *qp)
{
    uint8_t to = qp->attr.timeout;

    qp->rc.rnr_wait = false;
    if (!to) {
        qp->rc.deadline = 0;
        qp->rc.probe_deadline = 0;
        return;
    }
    kite_rc_arm(s, qp, (int64_t)4096 << MIN(to, 31));
    kite_rc_arm_probe(s, qp);
}

/*
 * Whether the timer @deadline (0: not armed) has expired at @now; it is
 * then disarmed. One still to come lowers @next to it.
 */
static bool kite_rc_expired(int64_t *deadline, int64_t now, int64_t *next)
{
    if (!*deadline) {
        return false;
    }
    if (*deadline <= now) {
        *deadline = 0;
        return true;
    }
    *next = MIN(*next, *deadline);
    return false;
}

static void kite_rc_timer_cb(void *opaque)
{
    KiteState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), next = INT64_MAX;
    uint32_t qpn;

    /* Only the QPs that armed a deadline; those with none left drop out. */
    for (qpn = find_first_bit(s->rdma.rc_timed, KITE_MAX_QP);
         qpn < KITE_MAX_QP;
         qpn = find_next_bit(s->rdma.rc_timed, KITE_MAX_QP, qpn + 1)) {
        KiteQP *qp = &s->rdma.qp[qpn];
        KiteRcState *rc = &qp->rc;
        bool due = false;

        if (!qp->valid || !kite_qp_reliable(qp) ||
            (!rc->deadline && !rc->probe_deadline)) {
            clear_bit(qpn, s->rdma.rc_timed);
            continue;
        }
        if (kite_rc_expired(&rc->probe_deadline, now, &next)) {
            rc->probe_due = due = true;
        }
        if (kite_rc_expired(&rc->deadline, now, &next)) {
            rc->timed_out = due = true;
        }
        if (due) {
            kite_engine_kick(s, qpn, true, false);
        }
    }
    if (next != INT64_MAX) {
        timer_mod(s->rdma.rc_timer, next);
    }
}

/* ------------------------------------------------------------------ */
/* Local operations: fast registration and invalidation                */
/* ------------------------------------------------------------------ */

/* The fast-registration MR @key names in @pdn (index only), or NULL. */
static KiteMR *kite_fast_mr(KiteState *s, uint32_t pdn, uint32_t key)
{
    uint32_t index = FIELD_GET(KITE_KEY_INDEX, key);
    KiteMR *mr;

    if (index == 0 || index >= KITE_MAX_MR) {
        return NULL;
    }
    mr = &s->rdma.mr[index];
    if (!mr->valid || !mr->fast || mr->pdn != pdn) {
        return NULL;
    }
    return mr;
}

/*
 * Execute the LOCAL_INV, REG_MR or BIND_MW WQE @wqe (one stride) of QP
 * @qpn. Returns 0 or a CQE syndrome.
 */
uint32_t kite_engine_local_op(KiteState *s, uint32_t qpn, KiteQP *qp,
                              const uint8_t *wqe, uint32_t stride)
{
    const uint32_t bad = kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    const uint32_t prot = kite_synd(KITE_SYND_LOCAL_PROT, KITE_VSYND_KEY);
    uint32_t opw = ldl_le_p(wqe + KITE_WQE_CTRL_OFF(opcode));
    uint32_t key, access, npages, shift, i;
    uint32_t pdn = qp->pdn;
    uint64_t iova, length, pbl, *ptes;
    KiteMR *mr;

    if (FIELD_GET(KITE_WQE_OPCODE, opw) == KITE_WQE_OP_BIND_MW) {
        /* Connected QPs only (the UD path never gets here with it). */
        if (!kite_qp_connected(qp)) {
            return bad;
        }
        return kite_mw_bind(s, qpn, qp, wqe, stride);
    }
    if (FIELD_GET(KITE_WQE_NUM_SGE, opw) || (opw & KITE_WQE_F_INLINE) ||
        lduw_le_p(wqe + KITE_WQE_CTRL_OFF(inline_len))) {
        return bad;
    }
    if (FIELD_GET(KITE_WQE_OPCODE, opw) == KITE_WQE_OP_LOCAL_INV) {
        key = ldl_le_p(wqe + KITE_WQE_CTRL_OFF(inv_key));
        mr = kite_mw_lookup(s, key);
        if (mr) {
            /* A type 2 window of this QP. */
            return kite_mw_invalidate(s, qpn, qp, mr, key) ? 0 : prot;
        }
        mr = kite_fast_mr(s, pdn, key);
        /* Not while windows are bound to it. */
        if (!mr || mr->state != KITE_MR_STATE_VALID ||
            mr->tag != FIELD_GET(KITE_KEY_TAG, key) || mr->nmw) {
            return prot;
        }
        mr->state = KITE_MR_STATE_INVALID;
        return 0;
    }

    /* REG_MR */
    if (sizeof(struct kite_wqe_ctrl) + sizeof(struct kite_wqe_reg_mr) >
        stride || ldl_le_p(wqe + KITE_WQE_CTRL_OFF(inv_key))) {
        return bad;
    }
    iova = ldq_le_p(wqe + KITE_WQE_REG_MR_OFF(iova));
    length = ldq_le_p(wqe + KITE_WQE_REG_MR_OFF(length));
    key = ldl_le_p(wqe + KITE_WQE_REG_MR_OFF(key));
    access = ldl_le_p(wqe + KITE_WQE_REG_MR_OFF(access));
    pbl = ldq_le_p(wqe + KITE_WQE_REG_MR_OFF(pbl_addr));
    npages = ldl_le_p(wqe + KITE_WQE_REG_MR_OFF(npages));
    shift = ldl_le_p(wqe + KITE_WQE_REG_MR_OFF(page_shift));
    mr = kite_fast_mr(s, pdn, key);
    if (!mr || mr->state != KITE_MR_STATE_INVALID) {
        return prot;
    }
    if ((access & ~KITE_ACCESS_MR_ALL) ||
        ((access & (KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_ATOMIC)) &&
         !(access & KITE_ACCESS_LOCAL_WRITE)) ||
        shift < KITE_PBL_MIN_PAGE_SHIFT || shift > KITE_PBL_MAX_PAGE_SHIFT ||
        npages == 0 || npages > mr->max_pages || npages > KITE_PBL_ENTRIES ||
        (pbl & (KITE_PBL_PAGE_SIZE - 1)) ||
        length > ((uint64_t)npages << shift) ||
        (iova & ((1ULL << shift) - 1)) >
        ((uint64_t)npages << shift) - length) {
        return bad;
    }
    ptes = g_new(uint64_t, npages);
    if (!kite_dma_rw(s, "REG_MR WQE page list", pbl, ptes, 8ULL * npages,
                     false)) {
        g_free(ptes);
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_DMA);
    }
    for (i = 0; i < npages; i++) {
        uint64_t pte = le64_to_cpu(ptes[i]);

        if (!(pte & KITE_PTE_VALID) ||
            (pte & (KITE_PTE_LAST | KITE_PTE_NEXT_TO_LAST)) ||
            ((pte & KITE_PTE_ADDR) & ((1ULL << shift) - 1))) {
            g_free(ptes);
            return bad;
        }
    }
    g_free(ptes);
    kite_pbl_free(&mr->pbl);
    mr->pbl.addr = pbl;
    mr->pbl.npages = npages;
    mr->pbl.level = KITE_PBL_LEVEL_1;
    mr->pbl.page_shift = shift;
    mr->iova = iova;
    mr->length = length;
    mr->access = access;
    mr->tag = FIELD_GET(KITE_KEY_TAG, key);
    mr->state = KITE_MR_STATE_VALID;
    mr->gen = ++s->rdma.mr_gen;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Requester                                                           */
/* ------------------------------------------------------------------ */

typedef struct KiteRcWqe {
    uint8_t wqe[1U << KITE_WQE_MAX_SHIFT];
    uint32_t opw;
    uint8_t op;
    uint16_t idx;
    uint32_t nsge;
    bool inl;
    uint32_t ilen;
    uint32_t data_off;
    uint64_t total;
    uint64_t va;
    uint32_t rkey;
    uint64_t swap;
    uint64_t cmp;
    uint32_t feth;              /* FLUSH: KITE_FLUSH_PLT, KITE_FLUSH_SEL */
    uint32_t flen;              /* FLUSH: the range's length */
    uint32_t xrc_srqn;          /* XRC initiator: the remote XRC SRQ */
} KiteRcWqe;

/* Fetch and check the WQE at SQ counter @pos. */
static uint32_t kite_rc_fetch(KiteState *s, KiteQP *qp, uint16_t pos,
                              KiteRcWqe *w)
{
    KiteWQ *wq = &qp->sq;
    uint32_t stride = 1U << wq->wqe_shift;
    uint64_t addr = kite_pbl_entry(&wq->pbl, pos, wq->log_depth,
                                   wq->wqe_shift);
    const uint32_t bad = kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);

    w->idx = pos;
    w->op = 0;
    if (!kite_dma_rw(s, "SQ WQE", addr, w->wqe, stride, false)) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_DMA);
    }
    w->opw = ldl_le_p(w->wqe + KITE_WQE_CTRL_OFF(opcode));
    w->op = FIELD_GET(KITE_WQE_OPCODE, w->opw);
    w->idx = lduw_le_p(w->wqe + KITE_WQE_CTRL_OFF(wqe_idx));
    trace_kite_sq_wqe(qp - s->rdma.qp, w->idx, w->op, w->opw);
    w->nsge = FIELD_GET(KITE_WQE_NUM_SGE, w->opw);
    w->inl = w->opw & KITE_WQE_F_INLINE;
    w->ilen = lduw_le_p(w->wqe + KITE_WQE_CTRL_OFF(inline_len));
    w->total = 0;
    w->va = w->rkey = w->swap = w->cmp = 0;
    w->feth = w->flen = 0;
    w->xrc_srqn = ldl_le_p(w->wqe + KITE_WQE_CTRL_OFF(xrc_srqn));
    /* xrc_srqn: an SRQ number on XRC initiators, zero elsewhere. */
    if ((w->opw & KITE_WQE_CTRL_RSVD) ||
        (w->xrc_srqn & ~(qp->type == KITE_QPT_XRC_INI ? KITE_OBJ_MASK : 0))) {
        return bad;
    }
    switch (w->op) {
    case KITE_WQE_OP_SEND:
    case KITE_WQE_OP_SEND_IMM:
    case KITE_WQE_OP_SEND_INV:
        w->data_off = KITE_WQE_SEND_DATA_OFF;
        break;
    case KITE_WQE_OP_RDMA_WRITE:
    case KITE_WQE_OP_RDMA_WRITE_IMM:
    case KITE_WQE_OP_RDMA_READ:
    case KITE_WQE_OP_ATOMIC_WRITE:
        w->data_off = KITE_WQE_RDMA_DATA_OFF;
        break;
    case KITE_WQE_OP_FLUSH:
        w->data_off = KITE_WQE_FLUSH_END;
        break;
    case KITE_WQE_OP_ATOMIC_CS:
    case KITE_WQE_OP_ATOMIC_FA:
        w->data_off = KITE_WQE_ATOMIC_DATA_OFF;
        break;
    case KITE_WQE_OP_LOCAL_INV:
    case KITE_WQE_OP_REG_MR:
    case KITE_WQE_OP_BIND_MW:
        /* Checked and executed by kite_engine_local_op(). */
        return 0;
    default:
        return bad;
    }
    /* UC: SEND (with immediate) and RDMA WRITE (with immediate) only. */
    if (qp->type == KITE_QPT_UC &&
        (w->op == KITE_WQE_OP_SEND_INV || w->op == KITE_WQE_OP_RDMA_READ ||
         w->op == KITE_WQE_OP_ATOMIC_CS || w->op == KITE_WQE_OP_ATOMIC_FA ||
         w->op == KITE_WQE_OP_ATOMIC_WRITE || w->op == KITE_WQE_OP_FLUSH)) {
        return bad;
    }
    if (w->data_off > stride) {
        return bad;
    }
    if (w->data_off >= KITE_WQE_RDMA_DATA_OFF) {
        w->va = ldq_le_p(w->wqe + KITE_WQE_RADDR_OFF(remote_addr));
        w->rkey = ldl_le_p(w->wqe + KITE_WQE_RADDR_OFF(rkey));
        if (ldl_le_p(w->wqe + KITE_WQE_RADDR_OFF(rsvd))) {
            return bad;
        }
    }
    /* ATOMIC WRITE: its 8 bytes inline, to a naturally aligned address. */
    if (w->op == KITE_WQE_OP_ATOMIC_WRITE &&
        (!w->inl || w->ilen != KITE_ATOMIC_WRITE_LEN ||
         (w->va & (KITE_ATOMIC_WRITE_LEN - 1)))) {
        return bad;
    }
    /*
     * FLUSH: no data; a placement type (global, persistent or both: the
     * responder decides what it has) and a selectivity level.
     */
    if (w->op == KITE_WQE_OP_FLUSH) {
        uint32_t plt;

        w->flen = ldl_le_p(w->wqe + KITE_WQE_FLUSH_OFF(length));
        w->feth = ldl_le_p(w->wqe + KITE_WQE_FLUSH_OFF(feth));
        plt = FIELD_GET(KITE_FLUSH_PLT, w->feth);
        if (w->inl || w->nsge || w->ilen ||
            ldq_le_p(w->wqe + KITE_WQE_FLUSH_OFF(rsvd)) ||
            (w->feth & ~(KITE_FLUSH_PLT | KITE_FLUSH_SEL)) || !plt ||
            (plt & ~(KITE_FLUSH_PLT_GLOBAL | KITE_FLUSH_PLT_PERSISTENT)) ||
            FIELD_GET(KITE_FLUSH_SEL, w->feth) > KITE_FLUSH_SEL_MR) {
            return bad;
        }
        return 0;
    }
    if (w->op == KITE_WQE_OP_ATOMIC_CS || w->op == KITE_WQE_OP_ATOMIC_FA) {
        KiteSge sge;

        w->swap = ldq_le_p(w->wqe + KITE_WQE_ATOMIC_OFF(swap_add));
        w->cmp = ldq_le_p(w->wqe + KITE_WQE_ATOMIC_OFF(compare));
        if (w->inl || w->nsge != 1 ||
            w->data_off + sizeof(struct kite_wqe_sge) > stride) {
            return bad;
        }
        kite_sge_decode(w->wqe + w->data_off, 0, &sge);
        if (sge.len != 8 || (w->va & 7)) {
            return bad;
        }
    }
    if (w->inl) {
        if (w->op == KITE_WQE_OP_RDMA_READ || w->nsge ||
            w->ilen > KITE_MAX_INLINE || w->data_off + w->ilen > stride) {
            return bad;
        }
        w->total = w->ilen;
    } else {
        if (w->ilen || w->nsge > KITE_MAX_SGE ||
            w->data_off + w->nsge * sizeof(struct kite_wqe_sge) > stride) {
            return bad;
        }
        w->total = kite_sge_total(w->wqe + w->data_off, w->nsge);
    }
    if (w->total > KITE_MAX_MSG_SZ) {
        return kite_synd(KITE_SYND_LOCAL_LENGTH, 0);
    }
    return 0;
}

/* Copy bytes [off, off + len) of the WQE's data from or to @buf. */
static uint32_t kite_rc_sge_rw(KiteState *s, KiteQP *qp, const KiteRcWqe *w,
                               uint64_t off, uint8_t *buf, uint32_t len,
                               bool write)
{
    uint32_t i, done = 0;

    if (w->inl) {
        if (write || off + len > w->ilen) {
            return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
        }
        memcpy(buf, w->wqe + w->data_off + off, len);
        return 0;
    }
    for (i = 0; i < w->nsge && done < len; i++) {
        KiteSge sge;
        uint32_t n;
        KiteMR *mr;

        kite_sge_decode(w->wqe + w->data_off, i, &sge);
        if (off >= sge.len) {
            off -= sge.len;
            continue;
        }
        n = MIN(sge.len - off, len - done);
        mr = kite_key_check(s, qp->pdn, sge.key, sge.addr + off, n,
                            write ? KITE_ACCESS_LOCAL_WRITE : 0);
        if (!mr) {
            return kite_synd(KITE_SYND_LOCAL_PROT, KITE_VSYND_KEY);
        }
        if (!kite_mr_rw(s, mr, sge.addr + off, buf + done, n, write)) {
            return kite_synd(KITE_SYND_LOCAL_PROT, KITE_VSYND_DMA);
        }
        done += n;
        off = 0;
    }
    if (done != len) {
        return kite_synd(KITE_SYND_LOCAL_LENGTH, 0);
    }
    return 0;
}

/*
 * Requests that take one of the responder's READ/atomic resources and are
 * answered by a response of their own (IBA 1.5 puts ATOMIC WRITE there).
 */
static bool kite_rc_is_rd(uint8_t op)
{
    return op == KITE_WQE_OP_RDMA_READ || op == KITE_WQE_OP_ATOMIC_CS ||
           op == KITE_WQE_OP_ATOMIC_FA || op == KITE_WQE_OP_ATOMIC_WRITE ||
           op == KITE_WQE_OP_FLUSH;
}

/* Answered by a READ response without data (IBA 1.5). */
static bool kite_rc_no_data_resp(uint8_t op)
{
    return op == KITE_WQE_OP_ATOMIC_WRITE || op == KITE_WQE_OP_FLUSH;
}

/* Outstanding WQE @i (0: the oldest, at the SQ's consumer counter). */
static KiteRcSwqe *kite_rc_swqe(KiteQP *qp, uint32_t i)
{
    return &qp->rc.swqe[(uint16_t)(qp->sq.ci + i) % KITE_RC_SQ_WINDOW];
}

/*
 * Nothing to retransmit for now: the local ACK (or RNR) timer and the
 * probe timer disarmed, and an expiry not yet handled forgotten.
 */
static void kite_rc_timers_off(KiteRcState *rc)
{
    rc->deadline = 0;
    rc->timed_out = false;
    rc->rnr_wait = false;
    rc->probe_deadline = 0;
    rc->probe_due = false;
}

/* Forget every outstanding WQE (the QP left RTS and SQD). */
static void kite_rc_req_clear(KiteRcState *rc)
{
    rc->nout = 0;
    rc->nrd = 0;
    rc->tx = 0;
    rc->tx_pkt = 0;
    rc->tx_blocked = false;
    rc->reg_wait = false;
    kite_rc_timers_off(rc);
    rc->probes = 0;
}

/*
 * The WQE at the SQ's consumer counter (outstanding or not) failed: error
 * CQE, QP to ERR, which flushes the rest.
 */
static void kite_rc_req_fail(KiteState *s, uint32_t qpn, KiteQP *qp,
                             uint16_t wqe_idx, uint8_t op, uint32_t synd)
{
    kite_req_cqe(s, qpn, qp, wqe_idx, op, synd);
    qp->sq.ci++;
    kite_rc_req_clear(&qp->rc);
    kite_engine_qp_fail(s, qpn, qp, true);
}

/* The oldest outstanding WQE failed. */
static void kite_rc_head_fail(KiteState *s, uint32_t qpn, KiteQP *qp,
                              uint32_t synd)
{
    KiteRcSwqe *e = kite_rc_swqe(qp, 0);

    kite_rc_req_fail(s, qpn, qp, e->wqe_idx, e->op, synd);
}

/* Some packet that was sent is not acknowledged yet. */
static bool kite_rc_unacked(KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e = kite_rc_swqe(qp, 0);

    return rc->nout &&
           (rc->tx || (!kite_rc_is_rd(e->op) && rc->tx_pkt > e->acked));
}

/* The congestion window, in packets (KITE_RC_CWND_MIN). */
static uint32_t kite_rc_cwnd(const KiteRcState *rc)
{
    return rc->cwnd ? rc->cwnd : KITE_RC_PSN_WINDOW;
}

/* A loss: multiplicative decrease. */
static void kite_rc_cwnd_loss(KiteRcState *rc)
{
    rc->cwnd = MAX(KITE_RC_CWND_MIN, kite_rc_cwnd(rc) / 2);
    rc->cwnd_acked = 0;
}

/* @n packets acknowledged: additive increase, one per window's worth. */
static void kite_rc_cwnd_acked(KiteRcState *rc, uint32_t n)
{
    uint32_t w = kite_rc_cwnd(rc), acked = rc->cwnd_acked + n;

    while (w < KITE_RC_PSN_WINDOW && acked >= w) {
        acked -= w;
        w++;
    }
    rc->cwnd = w;
    rc->cwnd_acked = w < KITE_RC_PSN_WINDOW ? acked : 0;
}

/*
 * Forward progress: fresh retry counters, the timer restarted, and the
 * SQ looked at again (the window moved).
 */
static void kite_rc_progress(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;

    rc->retry = qp->attr.retry_cnt;
    rc->rnr_retry = qp->attr.rnr_retry;
    rc->timed_out = false;
    rc->retry_started = false;
    rc->probes = 0;
    rc->probe_due = false;
    if (kite_rc_unacked(qp)) {
        kite_rc_arm_ack(s, qp);
    } else {
        rc->rnr_wait = false;
        rc->deadline = 0;
        rc->probe_deadline = 0;
    }
    kite_engine_kick(s, qpn, true, false);
}

/*
 * Go back N: resend from the oldest unacknowledged packet. No outstanding
 * WQE gives a round-trip sample any more (Karn's rule).
 */
static void kite_rc_go_back(KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e = kite_rc_swqe(qp, 0);
    uint32_t i;

    for (i = 0; i < rc->nout; i++) {
        kite_rc_swqe(qp, i)->resent = true;
    }
    rc->tx = 0;
    /* A READ asks again for the part not received (e->acked). */
    rc->tx_pkt = kite_rc_is_rd(e->op) ? 0 : e->acked;
    rc->tx_blocked = false;
}

/*
 * A lost packet or response: go back N, one retry. @early: found without
 * the timer (a sequence NAK, a gap in the READ responses, a response past
 * an unanswered READ or atomic). One loss shows in many packets: once the
 * requester went back early, further early signs are ignored until
 * progress or the timeout (which counts a retry of its own), so that one
 * loss costs one retry, as in rdma_rxe.
 */
static void kite_rc_retry(KiteState *s, uint32_t qpn, KiteQP *qp, bool early)
{
    KiteRcState *rc = &qp->rc;

    if (early && rc->retry_started) {
        return;
    }
    if (!rc->retry) {
        kite_rc_head_fail(s, qpn, qp, kite_synd(KITE_SYND_RETRY_EXC, 0));
        return;
    }
    rc->retry--;
    rc->retry_started = true;
    kite_rc_cwnd_loss(rc);
    s->rc_counts.retries++;
    kite_qp_count(s, qp, KITE_QP_STAT_RETRIES, 1);
    if (early) {
        s->rc_counts.early_retries++;
    } else {
        s->rc_counts.timeouts++;
        kite_qp_count(s, qp, KITE_QP_STAT_ACK_TIMEOUTS, 1);
    }
    kite_rc_go_back(qp);
    kite_rc_timers_off(rc);
    kite_engine_kick(s, qpn, true, false);
}

/*
 * The probe timer expired (adaptive retransmission): go back N as on a
 * timeout, but without counting a retry, and with the local ACK timer
 * left running, so that retry_cnt still counts local ACK timeouts as the
 * IB specification defines them. Further early signs of the same loss
 * are ignored until progress, as after an early retry.
 */
static void kite_rc_probe(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;

    s->rc_counts.probes++;
    rc->probes++;
    rc->retry_started = true;
    kite_rc_cwnd_loss(rc);
    kite_rc_go_back(qp);
    kite_rc_arm_probe(s, qp);
    kite_engine_kick(s, qpn, true, false);
}

/* The oldest outstanding WQE was acknowledged: complete it. */
static void kite_rc_req_done(KiteState *s, uint32_t qpn, KiteQP *qp,
                             uint32_t byte_len)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e = kite_rc_swqe(qp, 0);

    if (e->signaled || (qp->flags & KITE_QP_F_SQ_SIG_ALL)) {
        struct kite_cqe cqe = {
            .qpn = cpu_to_le32(qpn),
            .byte_len = cpu_to_le32(byte_len),
            .wqe_idx = cpu_to_le16(e->wqe_idx),
            .wqe_opcode = e->op,
        };

        kite_engine_cqe(s, qp->send_cqn, &cqe, KITE_CQE_OP_REQ);
    }
    if (!e->resent && kite_qp_reliable(qp)) {
        kite_rc_rtt_sample(rc, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) -
                               e->sent_ns);
    }
    if (kite_rc_is_rd(e->op)) {
        rc->nrd--;
    }
    kite_rc_cwnd_acked(rc, e->npsn);
    qp->sq.ci++;
    rc->nout--;
    if (rc->tx) {
        rc->tx--;
    } else {
        rc->tx_pkt = 0;
    }
    /*
     * The REG_MRs right after it (kite_rc_reg_early(): outstanding, no
     * PSN) were executed: they complete now.
     */
    while (rc->nout && kite_wqe_op_local((e = kite_rc_swqe(qp, 0))->op)) {
        if (e->signaled || (qp->flags & KITE_QP_F_SQ_SIG_ALL)) {
            kite_req_cqe(s, qpn, qp, e->wqe_idx, e->op, 0);
        }
        qp->sq.ci++;
        rc->nout--;
        if (rc->tx) {
            rc->tx--;
        }
    }
    kite_rc_progress(s, qpn, qp);
    if (!rc->nout && qp->state == KITE_QPS_SQD) {
        kite_async_event(s, KITE_EQE_SQ_DRAINED, qpn, 0);
    }
}

/*
 * Whether the WQE after outstanding WQE tx (@e, whose last packet is being
 * built) is posted and starts right after it: a SEND or RDMA WRITE without
 * a fence, and @e sent for the first time. The ACK that a later packet
 * asks for then acknowledges @e too, so its last packet needs no AckReq
 * of its own. The control word is only peeked at: the WQE is fetched (and
 * its errors reported) when it starts. Anything else asks for the ACK.
 */
static bool kite_rc_next_follows(KiteState *s, KiteQP *qp,
                                 const KiteRcSwqe *e)
{
    KiteWQ *wq = &qp->sq;
    uint16_t pos = wq->ci + qp->rc.tx + 1;
    uint64_t addr;
    uint32_t opw;
    __le32 word;

    if (e->resent || pos == wq->pi) {
        return false;
    }
    addr = kite_pbl_entry(&wq->pbl, pos, wq->log_depth, wq->wqe_shift);
    if (pci_dma_read(PCI_DEVICE(s), addr + KITE_WQE_CTRL_OFF(opcode), &word,
                     sizeof(word)) != MEMTX_OK) {
        return false;
    }
    opw = le32_to_cpu(word);
    if (opw & KITE_WQE_F_FENCE) {
        return false;
    }
    switch (FIELD_GET(KITE_WQE_OPCODE, opw)) {
    case KITE_WQE_OP_SEND:
    case KITE_WQE_OP_SEND_IMM:
    case KITE_WQE_OP_SEND_INV:
    case KITE_WQE_OP_RDMA_WRITE:
    case KITE_WQE_OP_RDMA_WRITE_IMM:
        return true;
    default:
        return false;
    }
}

/*
 * Packet tx_pkt of the SEND or RDMA WRITE @w, outstanding WQE tx (@e):
 * its payload, @len bytes, into @payload, its opcode and the headers after
 * its BTH into @t. Returns 0 or a CQE syndrome.
 */
static uint32_t kite_rc_data_pkt(KiteState *s, KiteQP *qp,
                                 const KiteRcWqe *w, const KiteRcSwqe *e,
                                 KiteRoceTx *t, uint8_t *payload,
                                 uint32_t *len)
{
    uint32_t k = qp->rc.tx_pkt, synd, every;
    uint64_t off = (uint64_t)k * e->mtu;
    bool first = k == 0, last = k + 1 == e->npsn;
    bool sol = w->opw & KITE_WQE_F_SOLICITED;
    bool uc = qp->type == KITE_QPT_UC;
    bool send = w->op <= KITE_WQE_OP_SEND_INV;
    uint8_t base = send ? RC_SEND_FIRST : RC_WRITE_FIRST;

    *len = MIN(e->mtu, w->total - off);
    synd = kite_rc_sge_rw(s, qp, w, off, payload, *len, false);
    if (synd) {
        return synd;
    }
    if (first && last) {
        t->opcode = base + 4;                   /* SEND_ONLY, WRITE_ONLY */
    } else if (first) {
        t->opcode = base;
    } else if (last) {
        t->opcode = base + 2;                   /* *_LAST */
    } else {
        t->opcode = base + 1;                   /* *_MIDDLE */
    }
    if (!send && first) {
        stq_be_p(t->ext, w->va);
        stl_be_p(t->ext + 8, w->rkey);
        stl_be_p(t->ext + 12, w->total);
        t->ext_len = RC_RETH_LEN;
    }
    if (last && (w->op == KITE_WQE_OP_SEND_IMM ||
                 w->op == KITE_WQE_OP_RDMA_WRITE_IMM)) {
        t->opcode++;                            /* *_LAST_IMM, *_ONLY_IMM */
        memcpy(t->ext + t->ext_len, t->imm, 4);
        t->ext_len += 4;
    }
    if (last && w->op == KITE_WQE_OP_SEND_INV) {
        t->opcode = first ? RC_SEND_ONLY_INV : RC_SEND_LAST_INV;
        stl_be_p(t->ext, ldl_le_p(w->wqe + KITE_WQE_CTRL_OFF(inv_key)));
        t->ext_len = 4;
    }
    t->solicited = last && sol && w->op != KITE_WQE_OP_RDMA_WRITE;
    /*
     * Acknowledged often enough to keep both windows open: at least twice
     * per congestion window (packets) and per WQE window (messages); and
     * at the end of a message unless the next one follows at once and
     * asks for the ACK that acknowledges both.
     */
    every = MIN(KITE_RC_ACKREQ_EVERY, MAX(1, kite_rc_cwnd(&qp->rc) / 2));
    t->ackreq = !uc &&
                (qp->rc.noack + 1 >= every ||
                 (last && (qp->rc.noack_msgs + 1 >= KITE_RC_SQ_WINDOW / 2 ||
                           !kite_rc_next_follows(s, qp, e))));
    if (uc) {
        t->opcode += KITE_UC_OPCODE;            /* UC: no acknowledgements */
    }
    return 0;
}

/*
 * Build and send the next packet: packet tx_pkt of outstanding WQE tx,
 * whose WQE is @w.
 */
static uint32_t kite_rc_send_pkt(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 const KiteRcWqe *w)
{
    uint8_t *payload = s->rdma.rc_payload;
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e = kite_rc_swqe(qp, rc->tx);
    uint32_t mtu = e->mtu, k = rc->tx_pkt, len = 0, synd;
    uint64_t off;
    bool last = k + 1 == e->npsn;
    bool uc = qp->type == KITE_QPT_UC;
    KiteRoceTx t;
    size_t flen;

    if (!kite_rc_tx_init(s, qpn, qp, &t)) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_AV);
    }
    t.psn = (e->first_psn + k) & KITE_PSN_MASK;
    memcpy(t.imm, w->wqe + KITE_WQE_CTRL_OFF(imm_data), 4);

    switch (w->op) {
    case KITE_WQE_OP_SEND:
    case KITE_WQE_OP_SEND_IMM:
    case KITE_WQE_OP_SEND_INV:
    case KITE_WQE_OP_RDMA_WRITE:
    case KITE_WQE_OP_RDMA_WRITE_IMM:
        synd = kite_rc_data_pkt(s, qp, w, e, &t, payload, &len);
        if (synd) {
            return synd;
        }
        break;
    case KITE_WQE_OP_RDMA_READ:
        /* (Re)request what has not arrived yet. */
        off = (uint64_t)e->acked * mtu;
        t.opcode = RC_READ_REQ;
        t.psn = (e->first_psn + e->acked) & KITE_PSN_MASK;
        stq_be_p(t.ext, w->va + off);
        stl_be_p(t.ext + 8, w->rkey);
        stl_be_p(t.ext + 12, w->total - MIN(off, w->total));
        t.ext_len = RC_RETH_LEN;
        t.ackreq = true;
        last = true;
        break;
    case KITE_WQE_OP_ATOMIC_WRITE:
        t.opcode = RC_ATOMIC_WRITE;
        stq_be_p(t.ext, w->va);
        stl_be_p(t.ext + 8, w->rkey);
        stl_be_p(t.ext + 12, KITE_ATOMIC_WRITE_LEN);
        t.ext_len = RC_RETH_LEN;
        len = KITE_ATOMIC_WRITE_LEN;
        memcpy(payload, w->wqe + w->data_off, len);
        t.ackreq = true;
        last = true;
        break;
    case KITE_WQE_OP_FLUSH:
        t.opcode = RC_FLUSH;
        stl_be_p(t.ext, w->feth);
        stq_be_p(t.ext + RC_FETH_LEN, w->va);
        stl_be_p(t.ext + RC_FETH_LEN + 8, w->rkey);
        stl_be_p(t.ext + RC_FETH_LEN + 12, w->flen);
        t.ext_len = RC_FETH_LEN + RC_RETH_LEN;
        t.ackreq = true;
        last = true;
        break;
    default:
        t.opcode = w->op == KITE_WQE_OP_ATOMIC_CS ? RC_CMP_SWAP : RC_FETCH_ADD;
        stq_be_p(t.ext, w->va);
        stl_be_p(t.ext + 8, w->rkey);
        stq_be_p(t.ext + 12, w->swap);
        stq_be_p(t.ext + 20, w->cmp);
        t.ext_len = RC_ATOMICETH_LEN;
        t.ackreq = true;
        last = true;
        break;
    }

    kite_rc_tx_xrc(qp, &t, e->xrc_srqn);
    flen = kite_roce_build(s->rdma.engine_frame, &t, payload, len);
    if (t.ackreq || uc) {
        rc->noack = rc->noack_msgs = 0;
    } else {
        rc->noack++;
        rc->noack_msgs += last;
    }
    /* Over loopback the answer may arrive right here: account first. */
    if (last) {
        rc->tx++;
        rc->tx_pkt = 0;
    } else {
        rc->tx_pkt++;
    }
    if (!uc && !rc->deadline && !rc->rnr_wait) {
        kite_rc_arm_ack(s, qp);
    }
    kite_qp_count_tx(s, qp, flen);
    kite_engine_xmit(s, s->rdma.engine_frame, flen);
    if (uc && last) {
        /* UC: complete once sent (the answer never comes). */
        kite_rc_req_done(s, qpn, qp, 0);
    }
    return 0;
}

/*
 * May @w, the WQE after the outstanding ones, start now? Fences, the
 * max_rd_atomic limit and the PSN window.
 */
static bool kite_rc_may_start(KiteState *s, KiteQP *qp, const KiteRcWqe *w,
                              uint32_t npsn)
{
    KiteRcState *rc = &qp->rc;
    uint32_t psn = le32_to_cpu(qp->attr.sq_psn) & KITE_PSN_MASK;
    KiteRcSwqe *e = kite_rc_swqe(qp, 0);

    if ((w->opw & KITE_WQE_F_FENCE) && rc->nrd) {
        return false;
    }
    if (kite_rc_is_rd(w->op) && rc->nrd >= MAX(1, qp->attr.max_rd_atomic)) {
        return false;
    }
    if (!rc->nout) {
        return true;
    }
    /*
     * Its first packet (a READ: all its responses) within the congestion
     * window; every outstanding PSN within half the PSN space, so that
     * PSNs compare unambiguously.
     */
    return ((psn - e->first_psn - e->acked) & KITE_PSN_MASK) +
           (uint64_t)(kite_rc_is_rd(w->op) ? npsn : 1) <= kite_rc_cwnd(rc) &&
           ((psn - e->first_psn) & KITE_PSN_MASK) + (uint64_t)npsn <=
           (KITE_PSN_MASK + 1) / 2;
}

/* Start @w, the WQE after the outstanding ones. */
static void kite_rc_start(KiteState *s, KiteQP *qp, const KiteRcWqe *w,
                          uint32_t npsn)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e = kite_rc_swqe(qp, rc->nout);
    uint32_t psn = le32_to_cpu(qp->attr.sq_psn) & KITE_PSN_MASK;

    e->op = w->op;
    e->signaled = w->opw & KITE_WQE_F_SIGNALED;
    e->wqe_idx = w->idx;
    e->mtu = kite_rc_mtu(s, qp);
    e->first_psn = psn;
    e->npsn = npsn;
    e->acked = 0;
    e->total = w->total;
    e->sent_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    e->resent = false;
    e->xrc_srqn = w->xrc_srqn;
    if (!rc->nout) {
        rc->retry = qp->attr.retry_cnt;
        rc->rnr_retry = qp->attr.rnr_retry;
    }
    rc->tx_pkt = 0;
    if (kite_rc_is_rd(w->op)) {
        rc->nrd++;
    }
    rc->nout++;
    qp->attr.sq_psn = cpu_to_le32((psn + npsn) & KITE_PSN_MASK);
}

/*
 * What the timer left for the requester of @qp: a local ACK timeout
 * starts go-back-N, or ends an RNR back-off; a probe is sent. Returns
 * true when it sent something.
 */
static bool kite_rc_sq_timers(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;

    if (rc->timed_out) {
        rc->timed_out = false;
        rc->probe_due = false;
        if (!rc->nout) {
            rc->rnr_wait = false;
        } else if (rc->rnr_wait) {
            rc->rnr_wait = false;       /* the back-off is over */
        } else {
            kite_rc_retry(s, qpn, qp, false);
            return true;
        }
    }
    if (rc->probe_due) {
        rc->probe_due = false;
        if (!rc->rnr_wait && kite_rc_unacked(qp)) {
            kite_rc_probe(s, qpn, qp);
            return true;
        }
    }
    return false;
}

/*
 * Whether the requester of @qp sends nothing now: in an RNR back-off,
 * behind a WQE that failed, or with a window full.
 */
static bool kite_rc_sq_waits(KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e;

    if (rc->rnr_wait) {
        return true;
    }
    if (rc->tx_blocked) {
        if (rc->tx) {
            return true;                /* until it is the oldest */
        }
        rc->tx_blocked = false;         /* try it again */
    }
    if (rc->tx == rc->nout &&
        (qp->state != KITE_QPS_RTS || rc->nout == KITE_RC_SQ_WINDOW ||
         (uint16_t)(qp->sq.ci + rc->nout) == qp->sq.pi)) {
        return true;                    /* waiting for acknowledgements */
    }
    if (rc->tx < rc->nout && kite_qp_reliable(qp)) {
        e = kite_rc_swqe(qp, rc->tx);
        if (!kite_rc_is_rd(e->op) &&
            ((e->first_psn + rc->tx_pkt - kite_rc_swqe(qp, 0)->first_psn -
              kite_rc_swqe(qp, 0)->acked) & KITE_PSN_MASK) >=
            kite_rc_cwnd(rc)) {
            return true;                /* the window is full */
        }
    }
    return false;
}

/* A local operation: executed and completed at once, in order. */
static void kite_rc_local(KiteState *s, uint32_t qpn, KiteQP *qp,
                          const KiteRcWqe *w)
{
    uint32_t synd = kite_engine_local_op(s, qpn, qp, w->wqe,
                                         1U << qp->sq.wqe_shift);

    if (synd) {
        kite_rc_req_fail(s, qpn, qp, w->idx, w->op, synd);
        return;
    }
    if ((w->opw & KITE_WQE_F_SIGNALED) || (qp->flags & KITE_QP_F_SQ_SIG_ALL)) {
        kite_req_cqe(s, qpn, qp, w->idx, w->op, 0);
    }
    qp->sq.ci++;
}

/*
 * A REG_MR after outstanding WQEs (all sent): executed now, without
 * waiting for their acknowledgements, and outstanding until they complete
 * (the completions stay in order). Not with a fence, and not LOCAL_INV or
 * BIND_MW, whose effect could fail an earlier WQE sent again; not a
 * REG_MR that fails either: it is tried again, and fails in order, once
 * the earlier WQEs have completed (reg_wait). False: @w waits until no WQE
 * is outstanding.
 */
static bool kite_rc_reg_early(KiteState *s, uint32_t qpn, KiteQP *qp,
                              const KiteRcWqe *w)
{
    KiteRcState *rc = &qp->rc;

    if (w->op != KITE_WQE_OP_REG_MR || (w->opw & KITE_WQE_F_FENCE)) {
        return false;
    }
    if (kite_engine_local_op(s, qpn, qp, w->wqe, 1U << qp->sq.wqe_shift)) {
        rc->reg_wait = true;
        return false;
    }
    kite_rc_start(s, qp, w, 0);
    rc->tx++;
    return true;
}

bool kite_rc_sq_process(KiteState *s, uint32_t qpn, KiteQP *qp, int *budget)
{
    KiteRcState *rc = &qp->rc;
    KiteRcWqe wqe, *w = &wqe;
    bool done = true;
    uint32_t synd, npsn;
    KiteRcSwqe *e;

    while (qp->valid) {
        if (qp->state == KITE_QPS_ERR || qp->state == KITE_QPS_SQE) {
            kite_rc_req_clear(rc);
            if (qp->sq.ci == qp->sq.pi) {
                break;
            }
            if (*budget <= 0) {
                done = false;
                break;
            }
            (*budget)--;
            kite_sq_one(s, qpn, qp);
            continue;
        }
        if (qp->state != KITE_QPS_RTS &&
            !(qp->state == KITE_QPS_SQD && rc->nout)) {
            break;
        }
        if (kite_rc_sq_timers(s, qpn, qp)) {
            continue;
        }
        if (kite_rc_sq_waits(qp)) {
            break;
        }
        if (rc->tx < rc->nout &&
            kite_wqe_op_local(kite_rc_swqe(qp, rc->tx)->op)) {
            /* Going back: a REG_MR is executed once, not again. */
            rc->tx++;
            rc->tx_pkt = 0;
            continue;
        }
        if (s->rdma.engine_tx_waiting || *budget <= 0) {
            done = false;
            break;
        }
        (*budget)--;
        synd = kite_rc_fetch(s, qp, qp->sq.ci + rc->tx, w);

        if (rc->tx == rc->nout) {
            /* Everything outstanding is sent: the next WQE. */
            if (synd) {
                if (rc->nout) {
                    break;              /* completes after the earlier ones */
                }
                kite_rc_req_fail(s, qpn, qp, w->idx, w->op, synd);
                continue;
            }
            if (kite_wqe_op_local(w->op)) {
                if (!rc->nout) {
                    rc->reg_wait = false;
                    kite_rc_local(s, qpn, qp, w);
                } else if (rc->reg_wait ||
                           !kite_rc_reg_early(s, qpn, qp, w)) {
                    break;              /* after everything earlier */
                }
                continue;
            }
            if (w->op == KITE_WQE_OP_ATOMIC_CS ||
                w->op == KITE_WQE_OP_ATOMIC_FA) {
                npsn = 1;
            } else {
                npsn = MAX(1, DIV_ROUND_UP(w->total, kite_rc_mtu(s, qp)));
            }
            if (!kite_rc_may_start(s, qp, w, npsn)) {
                break;
            }
            kite_rc_start(s, qp, w, npsn);
        } else {
            e = kite_rc_swqe(qp, rc->tx);
            if (!synd && (w->op != e->op || w->total != e->total)) {
                /* Rewritten while outstanding. */
                synd = kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
            }
        }
        if (!synd) {
            synd = kite_rc_send_pkt(s, qpn, qp, w);
        }
        if (synd) {
            if (rc->tx) {
                /* Complete it in order, when it is the oldest. */
                rc->tx_blocked = true;
                continue;
            }
            kite_rc_head_fail(s, qpn, qp, synd);
        }
    }
    return done;
}

/*
 * The responder has executed every request before PSN offset @off of
 * outstanding WQE @i (IBA 9.7.5.1): complete the SEND and WRITE WQEs
 * before it and acknowledge the packets of WQE @i before @off. Returns
 * false, with that WQE the oldest, at an unanswered READ or atomic before
 * WQE @i: its response was lost.
 */
static bool kite_rc_implicit_ack(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 uint32_t i, uint32_t off)
{
    KiteRcState *rc = &qp->rc;
    /* Completing one may complete the REG_MRs after it: up to this one. */
    KiteRcSwqe *e = kite_rc_swqe(qp, i);

    while (kite_rc_swqe(qp, 0) != e) {
        if (kite_rc_is_rd(kite_rc_swqe(qp, 0)->op)) {
            return false;
        }
        kite_rc_req_done(s, qpn, qp, 0);
    }
    if (!kite_rc_is_rd(e->op) && off > e->acked) {
        e->acked = off;
        if (!rc->tx) {
            rc->tx_pkt = MAX(rc->tx_pkt, off);
        }
        kite_rc_progress(s, qpn, qp);
    }
    return true;
}

/* A response for PSNs already answered: normal under loss, not logged. */
static void kite_rc_stale(KiteState *s)
{
    s->stats[KITE_STAT_ROCE_RX_DROPS]++;
    s->rc_counts.stale++;
}

/*
 * The outstanding WQE the response @p is for: its index into @i, the
 * PSN's offset in it into @off. NULL, with the packet dropped, when the
 * QP has no request outstanding that the response can answer.
 */
static KiteRcSwqe *kite_rc_req_locate(KiteState *s, KiteQP *qp,
                                      const KiteRoceRx *p, uint32_t *i,
                                      uint32_t *off)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e = NULL;

    if (qp->state != KITE_QPS_RTS && qp->state != KITE_QPS_SQD) {
        kite_rx_drop(s, "RC response without a request outstanding");
        return NULL;
    }
    if (!rc->nout) {
        kite_rc_stale(s);               /* late: everything completed */
        return NULL;
    }
    /* The outstanding WQE the PSN belongs to. */
    for (*i = 0; *i < rc->nout; (*i)++) {
        e = kite_rc_swqe(qp, *i);
        *off = (p->psn - e->first_psn) & KITE_PSN_MASK;
        if (*off < e->npsn) {
            break;
        }
    }
    if (*i == rc->nout) {
        if (kite_psn_diff(p->psn, kite_rc_swqe(qp, 0)->first_psn) < 0) {
            kite_rc_stale(s);           /* for a WQE already completed */
        } else {
            kite_rx_drop(s, "RC response outside the outstanding messages");
        }
        return NULL;
    }
    if (!*i && *off < e->acked) {
        kite_rc_stale(s);               /* a duplicate, or overtaken */
        return NULL;
    }
    return e;
}

/* An RNR NAK (AETH code @code) at PSN offset @off of outstanding WQE @i. */
static void kite_rc_req_rnr_nak(KiteState *s, uint32_t qpn, KiteQP *qp,
                                uint32_t i, uint32_t off, uint8_t code)
{
    KiteRcState *rc = &qp->rc;

    kite_qp_count(s, qp, KITE_QP_STAT_RNR_NAKS_RCVD, 1);
    if (!kite_rc_implicit_ack(s, qpn, qp, i, off)) {
        kite_rc_retry(s, qpn, qp, true);
        return;
    }
    if (!rc->rnr_retry) {
        kite_rc_head_fail(s, qpn, qp, kite_synd(KITE_SYND_RNR_RETRY_EXC, 0));
        return;
    }
    if (rc->rnr_retry != 7) {
        rc->rnr_retry--;
    }
    kite_rc_go_back(qp);
    kite_rc_arm(s, qp, (int64_t)kite_rnr_us[code & 0x1f] * 1000);
    rc->rnr_wait = true;
    rc->timed_out = false;
    rc->probe_deadline = 0;
    rc->probe_due = false;
}

/* A NAK (AETH code @code) at PSN offset @off of outstanding WQE @i. */
static void kite_rc_req_nak(KiteState *s, uint32_t qpn, KiteQP *qp,
                            uint32_t i, uint32_t off, uint8_t code)
{
    uint32_t synd;

    switch (code & 0x1f) {
    case RC_NAK_PSN_SEQ:
        kite_qp_count(s, qp, KITE_QP_STAT_SEQ_NAKS_RCVD, 1);
        if (qp->rc.rnr_wait) {
            return;                     /* already going back */
        }
        kite_rc_implicit_ack(s, qpn, qp, i, off);
        kite_rc_retry(s, qpn, qp, true);
        return;
    case RC_NAK_INV_REQ:
        synd = KITE_SYND_REMOTE_INVAL_REQ;
        break;
    case RC_NAK_REM_ACCESS:
        synd = KITE_SYND_REMOTE_ACCESS;
        break;
    case RC_NAK_REM_OP:
        synd = KITE_SYND_REMOTE_OP;
        break;
    default:
        synd = KITE_SYND_BAD_RESP;
        break;
    }
    kite_rc_implicit_ack(s, qpn, qp, i, off);
    kite_rc_head_fail(s, qpn, qp, kite_synd(synd, 0));
}

/* An ACK at PSN offset @off of outstanding WQE @i. */
static void kite_rc_req_ack(KiteState *s, uint32_t qpn, KiteQP *qp,
                            uint32_t i, uint32_t off)
{
    KiteRcState *rc = &qp->rc;
    KiteRcSwqe *e;

    /* Coalesced: every packet up to and including the PSN. */
    if (!kite_rc_implicit_ack(s, qpn, qp, i, off)) {
        kite_rc_retry(s, qpn, qp, true);
        return;
    }
    e = kite_rc_swqe(qp, 0);
    if (!kite_rc_is_rd(e->op)) {
        e->acked = off + 1;
        if (e->acked == e->npsn) {
            kite_rc_req_done(s, qpn, qp, 0);
        } else {
            if (!rc->tx) {
                rc->tx_pkt = MAX(rc->tx_pkt, e->acked);
            }
            kite_rc_progress(s, qpn, qp);
        }
    }
    /* A READ or atomic completes only with its response. */
}

/*
 * The READ response or atomic ACK @p, at PSN offset @off of outstanding
 * WQE @i, checked against that WQE: deliver it into the WQE's data
 * segments.
 */
static void kite_rc_req_response(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 const KiteRoceRx *p, uint32_t i,
                                 uint32_t off)
{
    KiteRcWqe wqe, *w = &wqe;
    KiteRcSwqe *e;
    uint32_t synd;
    bool last;

    /* A response: everything before it was executed. */
    if (!kite_rc_implicit_ack(s, qpn, qp, i, 0)) {
        kite_rc_retry(s, qpn, qp, true);
        return;
    }
    e = kite_rc_swqe(qp, 0);
    synd = kite_rc_fetch(s, qp, qp->sq.ci, w);
    if (!synd && (w->op != e->op || w->total != e->total)) {
        synd = kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }
    if (synd) {
        kite_rc_head_fail(s, qpn, qp, synd);
        return;
    }
    if (p->opcode == RC_ATOMIC_ACK) {
        uint8_t orig[8];

        stq_le_p(orig, ldq_be_p(p->ext + RC_AETH_LEN));
        synd = kite_rc_sge_rw(s, qp, w, 0, orig, 8, true);
        if (synd) {
            kite_rc_head_fail(s, qpn, qp, synd);
        } else {
            kite_rc_req_done(s, qpn, qp, 8);
        }
        return;
    }
    if (kite_rc_no_data_resp(e->op)) {
        kite_rc_req_done(s, qpn, qp, w->total);
        return;
    }
    last = off + 1 == e->npsn;
    if ((last && p->opcode != RC_READ_RESP_LAST &&
         p->opcode != RC_READ_RESP_ONLY) ||
        (!last && p->opcode != RC_READ_RESP_FIRST &&
         p->opcode != RC_READ_RESP_MIDDLE) ||
        p->len != (last ? w->total - (uint64_t)off * e->mtu : e->mtu)) {
        kite_rx_drop(s, "READ response of the wrong kind or length");
        return;
    }
    synd = kite_rc_sge_rw(s, qp, w, (uint64_t)off * e->mtu,
                          (uint8_t *)p->payload, p->len, true);
    if (synd) {
        kite_rc_head_fail(s, qpn, qp, synd);
        return;
    }
    e->acked++;
    if (last) {
        kite_rc_req_done(s, qpn, qp, w->total);
    } else {
        kite_rc_progress(s, qpn, qp);        /* restarts the timer */
    }
}

/* An acknowledgement or response for the requester of @qp. */
static void kite_rc_req_receive(KiteState *s, uint32_t qpn, KiteQP *qp,
                                const KiteRoceRx *p)
{
    uint32_t off = 0, aeth = 0, i;
    uint8_t code;
    KiteRcSwqe *e;

    e = kite_rc_req_locate(s, qp, p, &i, &off);
    if (!e) {
        return;
    }
    if (kite_rc_ext_len(p->opcode) >= RC_AETH_LEN &&
        p->opcode != RC_READ_RESP_MIDDLE) {
        aeth = ldl_be_p(p->ext);
    }
    code = aeth >> 24;

    if (p->opcode == RC_ACK && (code & 0xe0) == RC_AETH_RNR) {
        kite_rc_req_rnr_nak(s, qpn, qp, i, off, code);
        return;
    }
    if (p->opcode == RC_ACK && (code & 0xe0) == RC_AETH_NAK) {
        kite_rc_req_nak(s, qpn, qp, i, off, code);
        return;
    }
    if ((code & 0xe0) != 0) {
        kite_rc_head_fail(s, qpn, qp, kite_synd(KITE_SYND_BAD_RESP, 0));
        return;
    }

    switch (p->opcode) {
    case RC_ACK:
        kite_rc_req_ack(s, qpn, qp, i, off);
        return;
    case RC_ATOMIC_ACK:
        if ((e->op != KITE_WQE_OP_ATOMIC_CS &&
             e->op != KITE_WQE_OP_ATOMIC_FA) || p->len) {
            kite_rx_drop(s, "unexpected atomic ACK");
            return;
        }
        break;
    case RC_READ_RESP_FIRST:
    case RC_READ_RESP_MIDDLE:
    case RC_READ_RESP_LAST:
    case RC_READ_RESP_ONLY:
        if (kite_rc_no_data_resp(e->op)) {
            if (p->opcode != RC_READ_RESP_ONLY || p->len) {
                kite_rx_drop(s, "ATOMIC WRITE or FLUSH answered by a READ "
                             "response with data");
                return;
            }
        } else if (e->op != KITE_WQE_OP_RDMA_READ) {
            kite_rx_drop(s, "READ response for a WQE that is no READ");
            return;
        }
        if (off != (i ? 0 : e->acked)) {
            /*
             * A gap: the responses before it were lost. Everything before
             * this READ was executed; ask again from the first missing
             * PSN at once (go back N) instead of waiting for the timeout.
             */
            s->stats[KITE_STAT_ROCE_RX_DROPS]++;
            kite_rc_implicit_ack(s, qpn, qp, i, 0);
            kite_rc_retry(s, qpn, qp, true);
            return;
        }
        break;
    default:
        kite_rx_drop(s, "RC request opcode sent to a requester");
        return;
    }
    kite_rc_req_response(s, qpn, qp, p, i, off);
}

/* ------------------------------------------------------------------ */
/* Responder                                                           */
/* ------------------------------------------------------------------ */

/* Send an ACK, NAK or atomic ACK with @aeth_synd and @msn for @psn. */
static void kite_rc_send_ack(KiteState *s, uint32_t qpn, KiteQP *qp,
                             uint32_t psn, uint8_t aeth_synd, uint32_t msn,
                             const uint64_t *orig)
{
    static const uint8_t none[1];
    KiteRoceTx t;
    size_t flen;

    if (!kite_rc_tx_init(s, qpn, qp, &t)) {
        return;
    }
    t.opcode = orig ? RC_ATOMIC_ACK : RC_ACK;
    t.psn = psn & KITE_PSN_MASK;
    stl_be_p(t.ext, (uint32_t)aeth_synd << 24 | (msn & KITE_PSN_MASK));
    t.ext_len = RC_AETH_LEN;
    if (orig) {
        stq_be_p(t.ext + RC_AETH_LEN, *orig);
        t.ext_len += 8;
    }
    kite_rc_tx_xrc(qp, &t, 0);
    if ((aeth_synd & 0xe0) == RC_AETH_RNR) {
        kite_qp_count(s, qp, KITE_QP_STAT_RNR_NAKS_SENT, 1);
    } else if (aeth_synd == (RC_AETH_NAK | RC_NAK_PSN_SEQ)) {
        kite_qp_count(s, qp, KITE_QP_STAT_SEQ_NAKS_SENT, 1);
    }
    flen = kite_roce_build(s->rdma.rc_frame, &t, none, 0);
    kite_qp_count_tx(s, qp, flen);
    kite_engine_xmit(s, s->rdma.rc_frame, flen);
}

/*
 * A new entry at the tail of the response queue. It has room: at most
 * KITE_RC_RDQ READ and atomic entries, and at most one ACK entry before
 * each of them and at the tail.
 */
static KiteRcResp *kite_rc_rsp_add(KiteQP *qp)
{
    KiteRcState *rc = &qp->rc;
    KiteRcResp *r;

    assert(rc->rsp_n < KITE_RC_RSPQ);
    r = &rc->rsp[(rc->rsp_head + rc->rsp_n) % KITE_RC_RSPQ];
    memset(r, 0, sizeof(*r));
    rc->rsp_n++;
    return r;
}

/*
 * Acknowledge (or NAK, @aeth_synd) @psn, after the READ and atomic
 * responses already owed. ACKs are coalesced: one waiting at the tail of
 * the queue is replaced by this one (which acknowledges at least as
 * much), unless it is a NAK for this PSN or a later one.
 */
static void kite_rc_queue_ack(KiteState *s, uint32_t qpn, KiteQP *qp,
                              uint32_t psn, uint8_t aeth_synd)
{
    KiteRcState *rc = &qp->rc;
    KiteRcResp *r = NULL;

    if (rc->rsp_n) {
        r = &rc->rsp[(rc->rsp_head + rc->rsp_n - 1) % KITE_RC_RSPQ];
        if (r->kind != KITE_RC_RSP_ACK) {
            r = NULL;
        } else if (r->synd != RC_AETH_ACK &&
                   kite_psn_diff(psn, r->psn) <= 0) {
            return;
        }
    }
    if (!r) {
        r = kite_rc_rsp_add(qp);
    }
    r->kind = KITE_RC_RSP_ACK;
    r->synd = aeth_synd;
    r->psn = psn & KITE_PSN_MASK;
    r->msn = rc->msn;
    kite_engine_kick(s, qpn, false, true);
}

/*
 * UC: abandon the message being received. Its RQ WQE (if a SEND had
 * taken one) stays at the head and receives the next SEND from its
 * start (IBA 9.9.3.1.3, as rdma_rxe does).
 */
static void kite_uc_abandon(KiteQP *qp)
{
    qp->rc.in_send = qp->rc.in_write = false;
}

/* UC: drop this packet and the rest of its message, without an answer. */
static void kite_uc_drop(KiteState *s, KiteQP *qp)
{
    kite_uc_abandon(qp);
    qp->rc.uc_drop = true;
    s->rc_counts.uc_dropped++;
    s->stats[KITE_STAT_ROCE_RX_DROPS]++;
}

/*
 * A UC responder error. UC sends no NAK: a request the responder cannot
 * execute (opcode out of sequence, lengths, R_Key, no receive WQE) drops
 * its message silently (class D); a local failure (@nak remote
 * operational error: the DMA to host memory, a malformed receive WQE)
 * completes the receive WQE in error if a SEND had taken one and moves
 * the QP to ERR, without an asynchronous event.
 */
static void kite_uc_resp_error(KiteState *s, uint32_t qpn, KiteQP *qp,
                               uint8_t nak, uint32_t synd, const char *why)
{
    KiteRcState *rc = &qp->rc;

    if (nak != RC_NAK_REM_OP ||
        FIELD_GET(KITE_CQE_SYNDROME, synd) == KITE_SYND_LOCAL_LENGTH) {
        kite_uc_drop(s, qp);
        return;
    }
    kite_guest_error(s, "UC QP %u responder error: %s", qpn, why);
    if (rc->in_send && kite_recv_busy(qp)) {
        kite_resp_err_cqe(s, qpn, qp, kite_recv_idx(qp), synd);
        kite_recv_done(qp);
    }
    kite_uc_abandon(qp);
    kite_engine_qp_fail(s, qpn, qp, false);
}

/*
 * A fatal responder error: NAK @nak for @psn, a receive error CQE when a
 * SEND had consumed an RQ WQE, the QP to ERR.
 */
static void kite_rc_resp_fatal(KiteState *s, uint32_t qpn, KiteQP *qp,
                               uint32_t psn, uint8_t nak, uint32_t synd,
                               const char *why)
{
    KiteRcState *rc = &qp->rc;

    if (qp->type == KITE_QPT_UC) {
        kite_uc_resp_error(s, qpn, qp, nak, synd, why);
        return;
    }
    kite_guest_error(s, "RC QP %u responder error: %s", qpn, why);
    /* At once: the responses still owed are never sent. */
    rc->rsp_n = rc->rsp_rd = 0;
    kite_rc_send_ack(s, qpn, qp, psn, RC_AETH_NAK | nak, rc->msn, NULL);
    if (rc->in_send && kite_recv_busy(qp)) {
        kite_resp_err_cqe(s, qpn, qp, kite_recv_idx(qp), synd);
        kite_recv_done(qp);
    }
    rc->in_send = rc->in_write = false;
    kite_async_event(s, nak == RC_NAK_REM_ACCESS ? KITE_EQE_QP_ACCESS_ERR :
                                                   KITE_EQE_QP_REQ_ERR,
                     qpn, 0);
    kite_engine_qp_fail(s, qpn, qp, false);
}

/*
 * Check a remote key (an MR's or a memory window's) for [va, va + len)
 * with @access on @qp.
 */
static KiteMR *kite_rc_rkey(KiteState *s, KiteQP *qp, uint32_t key,
                            uint64_t va, uint64_t len, uint32_t access)
{
    if ((le32_to_cpu(qp->attr.access) & access) != access) {
        return NULL;
    }
    return kite_rkey_check(s, qp - s->rdma.qp, qp, key, va, MAX(len, 1),
                           access);
}

/*
 * Invalidate @key for a SEND_WITH_INV (prm_mr.rst): a fast-registration
 * MR of the QP's PD without windows bound, or a type 2 window bound to
 * the QP.
 */
static bool kite_rc_invalidate(KiteState *s, KiteQP *qp, uint32_t key)
{
    uint32_t index = FIELD_GET(KITE_KEY_INDEX, key);
    KiteMR *mr;

    if (index == 0 || index >= KITE_MAX_MR) {
        return false;
    }
    mr = &s->rdma.mr[index];
    if (mr->valid && mr->mw_type) {
        return kite_mw_invalidate(s, qp - s->rdma.qp, qp, mr, key);
    }
    if (!mr->valid || !mr->fast || mr->state != KITE_MR_STATE_VALID ||
        mr->tag != FIELD_GET(KITE_KEY_TAG, key) || mr->pdn != qp->pdn ||
        mr->nmw) {
        return false;
    }
    mr->state = KITE_MR_STATE_INVALID;
    return true;
}

/* The responder executed @n more PSNs. */
static void kite_rc_epsn_add(KiteRcState *rc, uint32_t n)
{
    rc->epsn = (rc->epsn + n) & KITE_PSN_MASK;
    rc->epsn_abs += n;
}

/* Remember the READ or atomic request just accepted at the expected PSN. */
static KiteRcHist *kite_rc_hist_add(KiteQP *qp, uint8_t kind, uint32_t psn,
                                    uint32_t npsn)
{
    KiteRcState *rc = &qp->rc;
    KiteRcHist *h = &rc->hist[rc->hist_next];

    rc->hist_next = (rc->hist_next + 1) % KITE_RC_RDQ;
    memset(h, 0, sizeof(*h));
    h->kind = kind;
    h->psn = psn & KITE_PSN_MASK;
    h->npsn = npsn;
    h->abs = rc->epsn_abs;
    return h;
}

/*
 * The accepted request of @kind whose PSNs hold @psn, a duplicate (before
 * the expected PSN), or NULL when it is older than the history keeps.
 * Counted from RTR, so that PSNs that wrapped never match.
 */
static KiteRcHist *kite_rc_hist_find(KiteQP *qp, uint8_t kind, uint32_t psn)
{
    KiteRcState *rc = &qp->rc;
    int32_t d = kite_psn_diff(psn, rc->epsn);
    uint64_t abs;
    unsigned i;

    if (d >= 0 || (uint64_t)-(int64_t)d > rc->epsn_abs) {
        return NULL;
    }
    abs = rc->epsn_abs + d;
    for (i = 0; i < KITE_RC_RDQ; i++) {
        KiteRcHist *h = &rc->hist[i];

        if (h->kind == kind && abs >= h->abs && abs - h->abs < h->npsn) {
            return h;
        }
    }
    return NULL;
}

/* The PSN after the last one response @r answers. */
static uint32_t kite_rc_rsp_end(KiteState *s, KiteQP *qp,
                                const KiteRcResp *r)
{
    uint32_t n = 1;

    if (r->kind == KITE_RC_RSP_READ) {
        n = MAX(1, DIV_ROUND_UP(r->len, kite_rc_mtu(s, qp)));
    }
    return (r->psn + n) & KITE_PSN_MASK;
}

/*
 * A duplicate request for @psn means the requester went back to it (go-back-N,
 * IBA 9.7.5.1.1 / 9.9.1.5): it lost the responses from @psn on and will
 * re-request everything after it. Drop the queued responses that answer
 * @psn or later, so that the re-requests find room and the answers go out
 * again in PSN order.
 */
static void kite_rc_rsp_rewind(KiteState *s, KiteQP *qp, uint32_t psn)
{
    KiteRcState *rc = &qp->rc;
    unsigned i, keep;
    KiteRcResp *r;

    for (keep = 0; keep < rc->rsp_n; keep++) {
        r = &rc->rsp[(rc->rsp_head + keep) % KITE_RC_RSPQ];
        if (kite_psn_diff(kite_rc_rsp_end(s, qp, r), psn) > 0) {
            break;
        }
    }
    for (i = keep; i < rc->rsp_n; i++) {
        r = &rc->rsp[(rc->rsp_head + i) % KITE_RC_RSPQ];
        if (r->kind != KITE_RC_RSP_ACK) {
            rc->rsp_rd--;
        }
    }
    rc->rsp_n = keep;
    if (!keep) {
        rc->rd_pkt = 0;
    }
}

/* Queue the READ response for [va, va + len) of the MR @mr_index/@mr_gen. */
static void kite_rc_queue_read(KiteState *s, uint32_t qpn, KiteQP *qp,
                               uint32_t psn, uint64_t va, uint32_t len,
                               uint16_t mr_index, uint32_t mr_gen,
                               bool replay)
{
    KiteRcState *rc = &qp->rc;
    KiteRcResp *r;

    if (!rc->rsp_n) {
        rc->rd_pkt = 0;
    }
    r = kite_rc_rsp_add(qp);
    r->kind = KITE_RC_RSP_READ;
    r->replay = replay;
    r->val = va;
    r->len = len;
    r->psn = psn & KITE_PSN_MASK;
    r->mr_index = mr_index;
    r->mr_gen = mr_gen;
    r->msn = rc->msn;
    rc->rsp_rd++;
    kite_engine_kick(s, qpn, false, true);
}

/*
 * A new READ request. Its R_Key, PD, access and bounds are checked here,
 * once: its responses, and those to its duplicates, read the MR as it was
 * registered then, even if the key is invalidated meanwhile (a LOCAL_INV
 * or SEND_WITH_INV flips only the MR's state; a new registration of the
 * MR changes its generation and ends this).
 */
static void kite_rc_read_req(KiteState *s, uint32_t qpn, KiteQP *qp,
                             const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint64_t va = ldq_be_p(p->ext);
    uint32_t key = ldl_be_p(p->ext + 8), len = ldl_be_p(p->ext + 12);
    uint32_t npsn = MAX(1, DIV_ROUND_UP(len, kite_rc_mtu(s, qp)));
    KiteMR *mr = NULL;
    KiteRcHist *h;

    if (p->len || len > KITE_MAX_MSG_SZ) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                           "malformed READ request");
        return;
    }
    if (len) {
        mr = kite_rc_rkey(s, qp, key, va, len, KITE_ACCESS_REMOTE_READ);
        if (!mr) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_ACCESS, 0,
                               "READ: R_Key, PD, access or bounds");
            return;
        }
    }
    if (rc->rsp_rd == KITE_RC_RDQ) {
        /* The requester exceeded max_dest_rd_atomic: it retries. */
        kite_rx_drop(s, "READ request with the READ queue full");
        return;
    }
    h = kite_rc_hist_add(qp, KITE_RC_HIST_READ, p->psn, npsn);
    h->key = key;
    h->va = va;
    h->len = len;
    if (mr) {
        h->mr_index = mr - s->rdma.mr;
        h->mr_gen = mr->gen;
    }
    kite_rc_epsn_add(rc, npsn);
    rc->msn++;
    kite_rc_queue_read(s, qpn, qp, p->psn, va, len, h->mr_index, h->mr_gen,
                       false);
}

/*
 * A duplicate READ request: answered again from the request accepted with
 * its PSN (IBA 9.9.1.5: the same R_Key, and a range within the original,
 * which a requester that received part of the answer asks from the middle),
 * without checking the key again. A duplicate the history no longer holds
 * or that does not match it is dropped, never NAKed: the requester has
 * completed that READ, or will ask again.
 */
static void kite_rc_dup_read(KiteState *s, uint32_t qpn, KiteQP *qp,
                             const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint64_t va = ldq_be_p(p->ext);
    uint32_t key = ldl_be_p(p->ext + 8), len = ldl_be_p(p->ext + 12);
    KiteRcHist *h = kite_rc_hist_find(qp, KITE_RC_HIST_READ, p->psn);

    if (!h || p->len || key != h->key || va < h->va || len > h->len ||
        va - h->va > h->len - len) {
        s->rc_counts.dup_dropped++;
        s->stats[KITE_STAT_ROCE_RX_DROPS]++;
        return;
    }
    kite_rc_rsp_rewind(s, qp, p->psn);
    if (rc->rsp_rd == KITE_RC_RDQ) {
        kite_rx_drop(s, "duplicate READ with the READ queue full");
        return;
    }
    s->rc_counts.dup_replays++;
    kite_rc_queue_read(s, qpn, qp, p->psn, va, len, h->mr_index, h->mr_gen,
                       true);
}

/* Queue the atomic ACK for @psn with the original value @orig. */
static void kite_rc_queue_atomic(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 uint32_t psn, uint64_t orig)
{
    KiteRcResp *r = kite_rc_rsp_add(qp);

    r->kind = KITE_RC_RSP_ATOMIC;
    r->psn = psn;
    r->msn = qp->rc.msn;
    r->val = orig;
    qp->rc.rsp_rd++;
    kite_engine_kick(s, qpn, false, true);
}

static void kite_rc_atomic(KiteState *s, uint32_t qpn, KiteQP *qp,
                           const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint64_t va = ldq_be_p(p->ext), arg = ldq_be_p(p->ext + 12);
    uint64_t cmp = ldq_be_p(p->ext + 20), orig, val;
    uint32_t key = ldl_be_p(p->ext + 8);
    uint8_t b[8];
    KiteMR *mr;

    if (p->len || (va & 7)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                           "malformed or unaligned atomic");
        return;
    }
    if (rc->rsp_rd == KITE_RC_RDQ) {
        /* The requester exceeded max_dest_rd_atomic: it retries. */
        kite_rx_drop(s, "atomic with the READ queue full");
        return;
    }
    mr = kite_rc_rkey(s, qp, key, va, 8, KITE_ACCESS_REMOTE_ATOMIC);
    if (!mr) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_ACCESS, 0,
                           "atomic: R_Key, PD, access or bounds");
        return;
    }
    /* Under the BQL: atomic with respect to everything the device does. */
    if (!kite_mr_rw(s, mr, va, b, 8, false)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_OP, 0,
                           "atomic: DMA");
        return;
    }
    orig = ldq_le_p(b);
    if (p->opcode == RC_CMP_SWAP) {
        val = orig == cmp ? arg : orig;
    } else {
        val = orig + arg;
    }
    stq_le_p(b, val);
    if (val != orig && !kite_mr_rw(s, mr, va, b, 8, true)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_OP, 0,
                           "atomic: DMA");
        return;
    }
    kite_rc_hist_add(qp, KITE_RC_HIST_ATOMIC, p->psn, 1)->orig = orig;
    kite_rc_epsn_add(rc, 1);
    rc->msn++;
    kite_rc_queue_atomic(s, qpn, qp, p->psn, orig);
}

/*
 * ATOMIC WRITE (IBA 1.5): 8 bytes written in one access to a naturally
 * aligned address the R_Key opens to remote writes; it takes a READ/atomic
 * resource like a READ and is answered by a READ response without data.
 */
static void kite_rc_atomic_write(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint64_t va = ldq_be_p(p->ext);
    uint32_t key = ldl_be_p(p->ext + 8), len = ldl_be_p(p->ext + 12);
    uint8_t b[KITE_ATOMIC_WRITE_LEN];
    KiteMR *mr;

    if (p->len != KITE_ATOMIC_WRITE_LEN || len != KITE_ATOMIC_WRITE_LEN ||
        (va & (KITE_ATOMIC_WRITE_LEN - 1))) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                           "malformed or unaligned ATOMIC WRITE");
        return;
    }
    if (rc->rsp_rd == KITE_RC_RDQ) {
        /* The requester exceeded max_dest_rd_atomic: it retries. */
        kite_rx_drop(s, "ATOMIC WRITE with the READ queue full");
        return;
    }
    mr = kite_rc_rkey(s, qp, key, va, len, KITE_ACCESS_REMOTE_WRITE);
    if (!mr) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_ACCESS, 0,
                           "ATOMIC WRITE: R_Key, PD, access or bounds");
        return;
    }
    /* One access under the BQL: never seen half written by the device. */
    memcpy(b, p->payload, sizeof(b));
    if (!kite_mr_rw(s, mr, va, b, sizeof(b), true)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_OP, 0,
                           "ATOMIC WRITE: DMA");
        return;
    }
    kite_rc_hist_add(qp, KITE_RC_HIST_AWRITE, p->psn, 1);
    kite_rc_epsn_add(rc, 1);
    rc->msn++;
    kite_rc_queue_read(s, qpn, qp, p->psn, 0, 0, 0, 0, false);
}

/*
 * FLUSH's R_Key, opened to global flushes: for the range
 * (KITE_FLUSH_SEL_RANGE), or for the whole of the MR the key names
 * (KITE_FLUSH_SEL_MR, IBA 1.5: the range is then not used).
 */
static bool kite_rc_flush_key(KiteState *s, KiteQP *qp, uint32_t key,
                              uint64_t va, uint64_t len, uint32_t sel)
{
    uint32_t index = FIELD_GET(KITE_KEY_INDEX, key);

    if (sel == KITE_FLUSH_SEL_MR) {
        if (index == 0 || index >= KITE_MAX_MR) {
            return false;
        }
        va = s->rdma.mr[index].iova;
        len = s->rdma.mr[index].length;
    }
    return kite_rc_rkey(s, qp, key, va, len, KITE_ACCESS_FLUSH_GLOBAL);
}

/*
 * FLUSH (IBA 1.5): the data of every request before it, within the range
 * or MR the R_Key opens to flushes, made visible at the placement type it
 * names. Kite places each request's data in host memory before it takes
 * the next packet, so by now that data is globally visible: what is left
 * is to check the request, order the answer after those stores and answer
 * it with a READ response without data; it takes a READ/atomic resource
 * like a READ. Kite has no persistent memory domain: no MR grants
 * persistent placement, so a FLUSH that asks for it is refused as an
 * access violation (as for an MR registered without it).
 */
static void kite_rc_flush(KiteState *s, uint32_t qpn, KiteQP *qp,
                          const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint32_t feth = ldl_be_p(p->ext);
    uint64_t va = ldq_be_p(p->ext + RC_FETH_LEN);
    uint32_t key = ldl_be_p(p->ext + RC_FETH_LEN + 8);
    uint32_t len = ldl_be_p(p->ext + RC_FETH_LEN + 12);
    uint32_t plt = FIELD_GET(KITE_FLUSH_PLT, feth);
    uint32_t sel = FIELD_GET(KITE_FLUSH_SEL, feth);

    /* The FETH's reserved bits (31:6) are ignored, as IBA reserves them. */
    if (p->len || !plt ||
        (plt & ~(KITE_FLUSH_PLT_GLOBAL | KITE_FLUSH_PLT_PERSISTENT)) ||
        sel > KITE_FLUSH_SEL_MR) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                           "malformed FLUSH");
        return;
    }
    if (rc->rsp_rd == KITE_RC_RDQ) {
        /* The requester exceeded max_dest_rd_atomic: it retries. */
        kite_rx_drop(s, "FLUSH with the READ queue full");
        return;
    }
    if ((plt & KITE_FLUSH_PLT_PERSISTENT) ||
        !kite_rc_flush_key(s, qp, key, va, len, sel)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_ACCESS, 0,
                           "FLUSH: R_Key, PD, access, bounds or placement");
        return;
    }
    /* The stores of the requests before it, before its answer. */
    smp_mb();
    kite_rc_hist_add(qp, KITE_RC_HIST_FLUSH, p->psn, 1);
    kite_rc_epsn_add(rc, 1);
    rc->msn++;
    kite_rc_queue_read(s, qpn, qp, p->psn, 0, 0, 0, 0, false);
}

/* A duplicate request (PSN before the expected one). */
static void kite_rc_duplicate(KiteState *s, uint32_t qpn, KiteQP *qp,
                              const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint8_t kind = KITE_RC_HIST_ATOMIC;
    uint32_t len = 0;
    KiteRcHist *h;

    s->rc_counts.dup_requests++;
    switch (p->opcode) {
    case RC_READ_REQ:
    case RC_CMP_SWAP:
    case RC_FETCH_ADD:
    case RC_ATOMIC_WRITE:
    case RC_FLUSH:
        /*
         * The requester lost what answered this request and went back:
         * once it matches what was accepted, the responses queued for it
         * and for later requests go, this one is answered again, and the
         * later ones when they are requested again (so that the answers
         * leave in PSN order). One that matches nothing costs nothing.
         */
        break;
    default:
        /*
         * C9-105: not executed again; ACK the last PSN executed. A SEND
         * or WRITE duplicated on the wire must not cost the READ
         * responses queued: no rewind.
         */
        if (p->ackreq) {
            kite_rc_queue_ack(s, qpn, qp, rc->epsn - 1, RC_AETH_ACK);
        }
        return;
    }
    if (p->opcode == RC_READ_REQ) {
        kite_rc_dup_read(s, qpn, qp, p);
        return;
    }
    /*
     * An atomic, ATOMIC WRITE or FLUSH is never executed again (a later
     * write may have followed): answered again from what was kept, or not
     * at all.
     */
    if (p->opcode == RC_ATOMIC_WRITE) {
        kind = KITE_RC_HIST_AWRITE;
        len = KITE_ATOMIC_WRITE_LEN;
    } else if (p->opcode == RC_FLUSH) {
        kind = KITE_RC_HIST_FLUSH;
    }
    h = kite_rc_hist_find(qp, kind, p->psn);
    if (!h || p->len != len) {
        s->rc_counts.dup_dropped++;
        s->stats[KITE_STAT_ROCE_RX_DROPS]++;
        return;
    }
    kite_rc_rsp_rewind(s, qp, p->psn);
    if (rc->rsp_rd == KITE_RC_RDQ) {
        kite_rx_drop(s, "duplicate atomic with the READ queue full");
        return;
    }
    s->rc_counts.dup_replays++;
    if (kind == KITE_RC_HIST_ATOMIC) {
        kite_rc_queue_atomic(s, qpn, qp, p->psn, h->orig);
    } else {
        kite_rc_queue_read(s, qpn, qp, p->psn, 0, 0, 0, 0, true);
    }
}

/* SEND packets: scatter into the RQ WQE, complete at the last one. */
static void kite_rc_send(KiteState *s, uint32_t qpn, KiteQP *qp,
                         const KiteRoceRx *p, uint32_t mtu)
{
    KiteRcState *rc = &qp->rc;
    uint8_t op = p->opcode;
    bool first = op == RC_SEND_FIRST || op == RC_SEND_ONLY ||
                 op == RC_SEND_ONLY_IMM || op == RC_SEND_ONLY_INV;
    bool last = op != RC_SEND_FIRST && op != RC_SEND_MIDDLE;
    struct kite_cqe cqe;
    uint8_t cqe_op = KITE_CQE_OP_RESP_SEND;
    uint16_t flags = 0;
    uint32_t synd;

    if (first == rc->in_send) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ,
                           kite_synd(KITE_SYND_REMOTE_INVAL_REQ, 0),
                           "SEND opcode out of sequence");
        return;
    }
    if ((!last && p->len != mtu) || p->len > mtu) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ,
                           kite_synd(KITE_SYND_REMOTE_INVAL_REQ, 0),
                           "SEND packet length");
        return;
    }
    if (first) {
        synd = kite_recv_empty(s, qp) ? KITE_RECV_NONE :
                                        kite_recv_take(s, qp);
        if (synd == KITE_RECV_NONE) {
            if (qp->type == KITE_QPT_UC) {
                kite_uc_drop(s, qp);    /* no RNR NAK: dropped */
                return;
            }
            kite_rc_queue_ack(s, qpn, qp, p->psn,
                              RC_AETH_RNR | (qp->attr.min_rnr_timer & 0x1f));
            return;
        }
        rc->in_send = true;
        rc->send_off = 0;
        if (synd) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_OP, synd,
                               "SEND: malformed SRQ WQE");
            return;
        }
    }
    if (p->len) {
        synd = kite_rq_scatter_at(s, qp, p->payload, p->len, rc->send_off);
        if (synd) {
            bool len_err = FIELD_GET(KITE_CQE_SYNDROME, synd) ==
                           KITE_SYND_LOCAL_LENGTH;

            kite_rc_resp_fatal(s, qpn, qp, p->psn,
                               len_err ? RC_NAK_INV_REQ : RC_NAK_REM_OP, synd,
                               "SEND scatter");
            return;
        }
    }
    rc->send_off += p->len;
    kite_rc_epsn_add(rc, 1);
    if (last) {
        memset(&cqe, 0, sizeof(cqe));
        if (op == RC_SEND_LAST_IMM || op == RC_SEND_ONLY_IMM) {
            memcpy(&cqe.imm_data, p->ext, 4);
            flags |= KITE_CQE_F_IMM;
            cqe_op = KITE_CQE_OP_RESP_SEND_IMM;
        } else if (op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV) {
            uint32_t key = ldl_be_p(p->ext);

            if (!kite_rc_invalidate(s, qp, key)) {
                kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ,
                                   kite_synd(KITE_SYND_REMOTE_INVAL_REQ, 0),
                                   "SEND_WITH_INV: key not invalidatable");
                return;
            }
            cqe.inv_rkey = cpu_to_le32(key);
            flags |= KITE_CQE_F_INV;
            cqe_op = KITE_CQE_OP_RESP_SEND_INV;
        }
        if (p->solicited) {
            flags |= KITE_CQE_F_SOLICITED;
        }
        cqe.qpn = cpu_to_le32(qpn);
        cqe.byte_len = cpu_to_le32(rc->send_off);
        cqe.wqe_idx = cpu_to_le16(kite_recv_idx(qp));
        cqe.flags = cpu_to_le16(flags);
        kite_recv_done(qp);
        rc->in_send = false;
        rc->msn++;
        kite_recv_cqe(s, qp, &cqe, cqe_op);
    }
    if (p->ackreq) {
        kite_rc_queue_ack(s, qpn, qp, p->psn, RC_AETH_ACK);
    }
}

/* RDMA WRITE packets. */
static void kite_rc_write(KiteState *s, uint32_t qpn, KiteQP *qp,
                          const KiteRoceRx *p, uint32_t mtu)
{
    KiteRcState *rc = &qp->rc;
    uint8_t op = p->opcode;
    bool first = op == RC_WRITE_FIRST || op == RC_WRITE_ONLY ||
                 op == RC_WRITE_ONLY_IMM;
    bool last = op != RC_WRITE_FIRST && op != RC_WRITE_MIDDLE;
    bool imm = op == RC_WRITE_ONLY_IMM || op == RC_WRITE_LAST_IMM;
    KiteMR *mr;

    if (rc->in_send || first == rc->in_write) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                           "WRITE opcode out of sequence");
        return;
    }
    if (imm && kite_recv_empty(s, qp)) {
        if (qp->type == KITE_QPT_UC) {
            kite_uc_drop(s, qp);
            return;
        }
        kite_rc_queue_ack(s, qpn, qp, p->psn,
                          RC_AETH_RNR | (qp->attr.min_rnr_timer & 0x1f));
        return;
    }
    if (first) {
        rc->wr_va = ldq_be_p(p->ext);
        rc->wr_key = ldl_be_p(p->ext + 8);
        rc->wr_len = ldl_be_p(p->ext + 12);
        rc->wr_off = 0;
        if (rc->wr_len > KITE_MAX_MSG_SZ) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                               "WRITE length");
            return;
        }
        if (rc->wr_len &&
            !kite_rc_rkey(s, qp, rc->wr_key, rc->wr_va, rc->wr_len,
                          KITE_ACCESS_REMOTE_WRITE)) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_ACCESS, 0,
                               "WRITE: R_Key, PD, access or bounds");
            return;
        }
        rc->in_write = true;
    }
    if ((!last && p->len != mtu) || p->len > mtu ||
        (uint64_t)rc->wr_off + p->len > rc->wr_len ||
        (last && rc->wr_off + p->len != rc->wr_len)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                           "WRITE packet length");
        return;
    }
    if (p->len) {
        mr = kite_rc_rkey(s, qp, rc->wr_key, rc->wr_va + rc->wr_off, p->len,
                          KITE_ACCESS_REMOTE_WRITE);
        if (!mr) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_ACCESS, 0,
                               "WRITE: R_Key, PD, access or bounds");
            return;
        }
        if (!kite_mr_rw(s, mr, rc->wr_va + rc->wr_off, (uint8_t *)p->payload,
                        p->len, true)) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_OP, 0,
                               "WRITE: DMA");
            return;
        }
    }
    rc->wr_off += p->len;
    kite_rc_epsn_add(rc, 1);
    if (last) {
        rc->in_write = false;
        rc->msn++;
        if (imm) {
            struct kite_cqe cqe;

            memset(&cqe, 0, sizeof(cqe));
            cqe.qpn = cpu_to_le32(qpn);
            cqe.byte_len = cpu_to_le32(rc->wr_len);
            memcpy(&cqe.imm_data, p->ext + (op == RC_WRITE_ONLY_IMM ?
                                            RC_RETH_LEN : 0), 4);
            /*
             * Its data segments are unused: a malformed SRQ WQE still
             * names the WQE by its tag.
             */
            if (kite_recv_take(s, qp) == KITE_RECV_NONE) {
                kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_REM_OP, 0,
                                   "WRITE_IMM: SRQ WQE unreachable");
                return;
            }
            cqe.wqe_idx = cpu_to_le16(kite_recv_idx(qp));
            cqe.flags = cpu_to_le16(KITE_CQE_F_IMM |
                                    (p->solicited ? KITE_CQE_F_SOLICITED : 0));
            kite_recv_done(qp);
            kite_recv_cqe(s, qp, &cqe, KITE_CQE_OP_RESP_WRITE_IMM);
        }
    }
    if (p->ackreq) {
        kite_rc_queue_ack(s, qpn, qp, p->psn, RC_AETH_ACK);
    }
}

/*
 * The UC responder (IBA 9.4, 9.9.3.1.3): a packet is executed if it has
 * the expected PSN, or if it starts a message (FIRST or ONLY), whatever
 * its PSN: the expected PSN then follows it. Any other packet is dropped
 * and so is the rest of its message, up to the first packet of a new
 * one. A message cut short (its LAST lost) is abandoned when the next
 * one starts. No acknowledgements, no NAKs.
 */
static void kite_uc_resp_receive(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 const KiteRoceRx *p, uint32_t mtu)
{
    KiteRcState *rc = &qp->rc;
    uint8_t op = p->opcode;
    bool first = op == RC_SEND_FIRST || op == RC_SEND_ONLY ||
                 op == RC_SEND_ONLY_IMM || op == RC_WRITE_FIRST ||
                 op == RC_WRITE_ONLY || op == RC_WRITE_ONLY_IMM;

    if (!first && (rc->uc_drop || p->psn != rc->epsn)) {
        kite_uc_drop(s, qp);
        return;
    }
    if (first) {
        kite_uc_abandon(qp);
        rc->uc_drop = false;
        rc->epsn = p->psn;
    }
    switch (op) {
    case RC_SEND_FIRST:
    case RC_SEND_MIDDLE:
    case RC_SEND_LAST:
    case RC_SEND_LAST_IMM:
    case RC_SEND_ONLY:
    case RC_SEND_ONLY_IMM:
        if (rc->in_write) {
            kite_uc_drop(s, qp);
            return;
        }
        kite_rc_send(s, qpn, qp, p, mtu);
        return;
    default:
        /* kite_roce_parse() let only SEND and WRITE opcodes through. */
        kite_rc_write(s, qpn, qp, p, mtu);
        return;
    }
}

static void kite_rc_resp_receive(KiteState *s, uint32_t qpn, KiteQP *qp,
                                 const KiteRoceRx *p)
{
    KiteRcState *rc = &qp->rc;
    uint32_t mtu = kite_rc_mtu(s, qp);
    int32_t d;

    /* A UC QP in SQE receives as UD and GSI do: the send queue failed. */
    if (qp->state != KITE_QPS_RTR && qp->state != KITE_QPS_RTS &&
        qp->state != KITE_QPS_SQD &&
        !(qp->state == KITE_QPS_SQE && qp->type == KITE_QPT_UC)) {
        kite_rx_drop(s, "RC QP not ready to receive");
        return;
    }
    if (qp->state == KITE_QPS_RTR && !rc->comm_est) {
        rc->comm_est = true;
        kite_async_event(s, KITE_EQE_QP_COMM_EST, qpn, 0);
    }
    if (qp->type == KITE_QPT_UC) {
        kite_uc_resp_receive(s, qpn, qp, p, mtu);
        return;
    }
    d = kite_psn_diff(p->psn, rc->epsn);
    if (d > 0) {
        /* A gap: one sequence NAK until the expected PSN arrives. */
        if (!rc->nak_sent) {
            rc->nak_sent = true;
            kite_rc_queue_ack(s, qpn, qp, rc->epsn,
                              RC_AETH_NAK | RC_NAK_PSN_SEQ);
        }
        /* Every packet after a lost one: normal under loss, not logged. */
        s->stats[KITE_STAT_ROCE_RX_DROPS]++;
        return;
    }
    if (d < 0) {
        kite_rc_duplicate(s, qpn, qp, p);
        return;
    }
    rc->nak_sent = false;
    if (qp->type == KITE_QPT_XRC_TGT &&
        !kite_xrc_srq_use(s, qp, p->xrc_srqn)) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ,
                           kite_synd(KITE_SYND_REMOTE_INVAL_REQ, 0),
                           "XRCETH: no XRC SRQ of the domain, or not the "
                           "message's");
        return;
    }
    if (qp->type == KITE_QPT_XRC_TGT) {
        KiteCQ *cq = kite_cq_lookup(s, kite_xrc_tgt_cqn(s, qp));

        /*
         * Its receives would complete in a CQ in ERROR: the target is a
         * QP that uses that CQ now (prm_cq.rst, "CQ errors"), and a QP in
         * ERR answers nothing.
         */
        if (cq && cq->state == KITE_CQ_STATE_ERROR) {
            kite_qp_error(s, qpn);
            s->stats[KITE_STAT_ROCE_RX_DROPS]++;
            return;
        }
    }

    switch (p->opcode) {
    case RC_SEND_FIRST:
    case RC_SEND_MIDDLE:
    case RC_SEND_LAST:
    case RC_SEND_LAST_IMM:
    case RC_SEND_ONLY:
    case RC_SEND_ONLY_IMM:
    case RC_SEND_LAST_INV:
    case RC_SEND_ONLY_INV:
        if (rc->in_write) {
            kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ, 0,
                               "SEND inside a WRITE");
            return;
        }
        kite_rc_send(s, qpn, qp, p, mtu);
        return;
    case RC_WRITE_FIRST:
    case RC_WRITE_MIDDLE:
    case RC_WRITE_LAST:
    case RC_WRITE_LAST_IMM:
    case RC_WRITE_ONLY:
    case RC_WRITE_ONLY_IMM:
        kite_rc_write(s, qpn, qp, p, mtu);
        return;
    default:
        break;
    }
    if (rc->in_send || rc->in_write) {
        kite_rc_resp_fatal(s, qpn, qp, p->psn, RC_NAK_INV_REQ,
                           kite_synd(KITE_SYND_REMOTE_INVAL_REQ, 0),
                           "request inside a SEND or WRITE");
        return;
    }
    if (p->opcode == RC_READ_REQ) {
        kite_rc_read_req(s, qpn, qp, p);
    } else if (p->opcode == RC_ATOMIC_WRITE) {
        kite_rc_atomic_write(s, qpn, qp, p);
    } else if (p->opcode == RC_FLUSH) {
        kite_rc_flush(s, qpn, qp, p);
    } else {
        kite_rc_atomic(s, qpn, qp, p);
    }
}

bool kite_rc_opcode_is_response(uint8_t opcode)
{
    switch (opcode) {
    case RC_READ_RESP_FIRST:
    case RC_READ_RESP_MIDDLE:
    case RC_READ_RESP_LAST:
    case RC_READ_RESP_ONLY:
    case RC_ACK:
    case RC_ATOMIC_ACK:
        return true;
    default:
        return false;
    }
}

void kite_rc_receive(KiteState *s, uint32_t qpn, KiteQP *qp,
                     const KiteRoceRx *p)
{
    if (kite_rc_opcode_is_response(p->opcode)) {
        kite_rc_req_receive(s, qpn, qp, p);
    } else {
        kite_rc_resp_receive(s, qpn, qp, p);
    }
}

/* Send one READ response packet for the READ at the head of the queue. */
static void kite_rc_read_resp(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    uint8_t *payload = s->rdma.rc_read_payload;
    KiteRcState *rc = &qp->rc;
    KiteRcResp *r = &rc->rsp[rc->rsp_head];
    uint32_t mtu = kite_rc_mtu(s, qp);
    uint32_t n = MAX(1, DIV_ROUND_UP(r->len, mtu)), k = rc->rd_pkt;
    uint64_t off = (uint64_t)k * mtu;
    uint32_t len = k < n ? MIN(mtu, r->len - off) : 0;
    KiteRoceTx t;
    KiteMR *mr = &s->rdma.mr[r->mr_index];
    size_t flen;

    if (len) {
        /*
         * The MR validated when the READ was accepted, invalidated since
         * or not; deregistered or registered again, it is gone.
         */
        bool same = r->mr_index < KITE_MAX_MR && mr->valid &&
                    mr->gen == r->mr_gen;

        if (!same || !kite_mr_rw(s, mr, r->val + off, payload, len, false)) {
            if (r->replay) {
                /* Not answered again: the requester asks or gives up. */
                kite_guest_error(s, "RC QP %u: duplicate READ at PSN 0x%x "
                                 "not answered: MR %s", qpn, r->psn,
                                 same ? "not readable" : "gone");
                rc->rsp_head = (rc->rsp_head + 1) % KITE_RC_RSPQ;
                rc->rsp_n--;
                rc->rsp_rd--;
                rc->rd_pkt = 0;
                return;
            }
            kite_guest_error(s, "RC QP %u: READ at PSN 0x%x, packet %u of %u "
                             "(expected PSN 0x%x, %u responses owed): MR %u %s",
                             qpn, r->psn, k, n, rc->epsn, rc->rsp_n,
                             r->mr_index,
                             !same ? (r->mr_index < KITE_MAX_MR && mr->valid ?
                                      "registered again" : "deregistered") :
                             "not readable");
            kite_rc_resp_fatal(s, qpn, qp, r->psn + k,
                               same ? RC_NAK_REM_OP : RC_NAK_REM_ACCESS, 0,
                               "READ response source");
            return;
        }
    }
    if (!kite_rc_tx_init(s, qpn, qp, &t)) {
        rc->rsp_n = rc->rsp_rd = 0;
        return;
    }
    t.psn = (r->psn + k) & KITE_PSN_MASK;
    if (n == 1) {
        t.opcode = RC_READ_RESP_ONLY;
    } else if (k == 0) {
        t.opcode = RC_READ_RESP_FIRST;
    } else if (k + 1 >= n) {
        t.opcode = RC_READ_RESP_LAST;
    } else {
        t.opcode = RC_READ_RESP_MIDDLE;
    }
    if (t.opcode != RC_READ_RESP_MIDDLE) {
        stl_be_p(t.ext, (uint32_t)RC_AETH_ACK << 24 |
                 (r->msn & KITE_PSN_MASK));
        t.ext_len = RC_AETH_LEN;
    }
    rc->rd_pkt++;
    if (rc->rd_pkt >= n) {
        rc->rsp_head = (rc->rsp_head + 1) % KITE_RC_RSPQ;
        rc->rsp_n--;
        rc->rsp_rd--;
        rc->rd_pkt = 0;
    }
    kite_rc_tx_xrc(qp, &t, 0);
    flen = kite_roce_build(s->rdma.rc_frame, &t, payload, len);
    kite_qp_count_tx(s, qp, flen);
    kite_engine_xmit(s, s->rdma.rc_frame, flen);
}

/* The responses owed, in order: at most @budget packets. */
bool kite_rc_rq_process(KiteState *s, uint32_t qpn, KiteQP *qp, int *budget)
{
    KiteRcState *rc = &qp->rc;

    while (qp->valid && rc->rsp_n &&
           (qp->state == KITE_QPS_RTR || qp->state == KITE_QPS_RTS ||
            qp->state == KITE_QPS_SQD)) {
        KiteRcResp r = rc->rsp[rc->rsp_head];

        if (s->rdma.engine_tx_waiting || *budget <= 0) {
            return false;
        }
        (*budget)--;
        if (r.kind == KITE_RC_RSP_READ) {
            kite_rc_read_resp(s, qpn, qp);
            continue;
        }
        /* Dequeued first: over loopback the answer may queue more. */
        rc->rsp_head = (rc->rsp_head + 1) % KITE_RC_RSPQ;
        rc->rsp_n--;
        if (r.kind == KITE_RC_RSP_ATOMIC) {
            rc->rsp_rd--;
            kite_rc_send_ack(s, qpn, qp, r.psn, RC_AETH_ACK, r.msn, &r.val);
        } else {
            kite_rc_send_ack(s, qpn, qp, r.psn, r.synd, r.msn, NULL);
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

void kite_rc_qp_reset(KiteQP *qp)
{
    memset(&qp->rc, 0, sizeof(qp->rc));
}

void kite_rc_init(KiteState *s)
{
    /* The response ring's head and count hold any index of it. */
    QEMU_BUILD_BUG_ON(KITE_RC_RSPQ > UINT16_MAX);
    s->rdma.rc_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_rc_timer_cb, s);
}

void kite_rc_reset(KiteState *s)
{
    if (s->rdma.rc_timer) {
        timer_del(s->rdma.rc_timer);
    }
    bitmap_zero(s->rdma.rc_timed, KITE_MAX_QP);
}

void kite_rc_exit(KiteState *s)
{
    if (s->rdma.rc_timer) {
        timer_free(s->rdma.rc_timer);
        s->rdma.rc_timer = NULL;
    }
}

/* QOM "rc-counts": "retries=N early-retries=N timeouts=N stale=N ...". */
static void kite_rc_get_counts(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    const KiteRcCounts *c = &KITE(obj)->rc_counts;
    char *value = g_strdup_printf(
        "retries=%" PRIu64 " early-retries=%" PRIu64 " timeouts=%" PRIu64
        " probes=%" PRIu64 " stale=%" PRIu64 " dup-requests=%" PRIu64
        " dup-replays=%" PRIu64 " dup-dropped=%" PRIu64 " uc-dropped=%" PRIu64,
        c->retries, c->early_retries, c->timeouts, c->probes, c->stale,
        c->dup_requests, c->dup_replays, c->dup_dropped, c->uc_dropped);

    visit_type_str(v, name, &value, errp);
    g_free(value);
}

static bool kite_rc_get_adaptive(Object *obj, Error **errp)
{
    return KITE(obj)->rc_rto_adaptive;
}

/* Takes effect when a QP's timers are next armed. */
static void kite_rc_set_adaptive(Object *obj, bool value, Error **errp)
{
    KITE(obj)->rc_rto_adaptive = value;
}

void kite_rc_instance_init(KiteState *s)
{
    object_property_add(OBJECT(s), "rc-counts", "str", kite_rc_get_counts,
                        NULL, NULL, NULL);
    s->rc_rto_adaptive = true;
    object_property_add_bool(OBJECT(s), "rc-rto-adaptive",
                             kite_rc_get_adaptive, kite_rc_set_adaptive);
}
