/*
 * Kite NIC: shared receive queues.
 *
 * An SRQ is a ring of receive WQEs (struct kite_wqe_srq_recv and its data
 * segments) that any number of RC and UD QPs of its PD receive from. A QP
 * takes the WQE at the SRQ's consumer index when a message starts and
 * keeps a copy until the message completes, so QPs receiving at once never
 * share a WQE; the CQE names the WQE by the tag the driver wrote in it.
 * When a take leaves fewer WQEs than an armed limit, the device disarms
 * the limit and posts KITE_EQE_SRQ_LIMIT on EQ 0.
 *
 * An XRC SRQ (KITE_SRQ_F_XRC) belongs to an XRC domain and has a CQ of its
 * own: no QP is attached to it, the requests arriving at the XRC target
 * QPs of its domain name it (XRCETH). A target takes its WQEs as an SRQ
 * QP does, with qp->srqn and qp->pdn set from each request
 * (kite_xrc_srq_use()), and completes its receives in the SRQ's CQ.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"

#include "kite_int.h"

#define SRQ_OFF(f)      offsetof(struct kite_cmd_create_srq, f)
#define MSRQ_OFF(f)     offsetof(struct kite_cmd_modify_srq, f)

#define KITE_WQ_CFG_ALL (KITE_WQ_CFG_LOG_DEPTH | KITE_WQ_CFG_WQE_SHIFT)

KiteSRQ *kite_srq_lookup(KiteState *s, uint32_t srqn)
{
    if (!srqn || srqn >= KITE_MAX_SRQ || !s->rdma.srq[srqn].valid) {
        return NULL;
    }
    return &s->rdma.srq[srqn];
}

/* What an SRQ refers to, for kite_srq_uses(). */
typedef enum {
    KITE_SRQ_REF_PD,
    KITE_SRQ_REF_UCTX,
    KITE_SRQ_REF_XRCD,
    KITE_SRQ_REF_CQ,            /* an XRC SRQ's CQ */
} KiteSrqRef;

/* Whether some SRQ refers to object @n of kind @ref. */
static bool kite_srq_uses(KiteState *s, KiteSrqRef ref, uint32_t n)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_SRQ; i++) {
        const KiteSRQ *srq = &s->rdma.srq[i];
        uint32_t v;

        if (!srq->valid) {
            continue;
        }
        switch (ref) {
        case KITE_SRQ_REF_PD:
            v = srq->pdn;
            break;
        case KITE_SRQ_REF_UCTX:
            v = srq->uctx;
            break;
        case KITE_SRQ_REF_XRCD:
            v = srq->xrcd;
            break;
        default:
            v = srq->xrcd ? srq->cqn : 0;
            break;
        }
        if (v == n) {
            return true;
        }
    }
    return false;
}

bool kite_srq_pd_used(KiteState *s, uint32_t pdn)
{
    return kite_srq_uses(s, KITE_SRQ_REF_PD, pdn);
}

bool kite_srq_uctx_used(KiteState *s, uint32_t uctx)
{
    return kite_srq_uses(s, KITE_SRQ_REF_UCTX, uctx);
}

bool kite_srq_xrcd_used(KiteState *s, uint32_t xrcd)
{
    return kite_srq_uses(s, KITE_SRQ_REF_XRCD, xrcd);
}

bool kite_srq_cq_used(KiteState *s, uint32_t cqn)
{
    return kite_srq_uses(s, KITE_SRQ_REF_CQ, cqn);
}

static uint32_t kite_srq_depth(const KiteSRQ *srq)
{
    return 1U << srq->wq.log_depth;
}

/*
 * The XRC fields of CREATE_SRQ (flags, xrcd, cqn, rsvd): false with the
 * command failed on a bad one.
 */
static bool kite_create_srq_xrc_check(KiteState *s, KiteCmdCtx *c,
                                      const struct kite_cmd_create_srq *in)
{
    uint32_t flags = le32_to_cpu(in->flags);
    KiteCQ *cq;

    if (flags & ~KITE_SRQ_F_XRC) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, SRQ_OFF(flags));
    }
    if (!(flags & KITE_SRQ_F_XRC)) {
        if (in->xrcd) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, SRQ_OFF(xrcd));
        }
        if (in->cqn) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, SRQ_OFF(cqn));
        }
    } else {
        if (!kite_xrcd_valid(s, le32_to_cpu(in->xrcd))) {
            return kite_cmd_err(c, KITE_CMD_E_OBJECT, SRQ_OFF(xrcd));
        }
        cq = kite_cq_lookup(s, le32_to_cpu(in->cqn));
        if (!cq || cq->uctx != le32_to_cpu(in->uctx)) {
            return kite_cmd_err(c, KITE_CMD_E_OBJECT, SRQ_OFF(cqn));
        }
    }
    if (in->rsvd) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, SRQ_OFF(rsvd));
    }
    return true;
}

void kite_cmd_create_srq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_create_srq in;
    uint32_t pdn, uctx, cfg, limit, log, shift, srqn;
    KiteSRQ *srq;
    KiteWQ wq;

    /* The input up to pbl is enough for a basic SRQ. */
    if (c->in_len < KITE_CMD_CREATE_SRQ_V0_LEN) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, sizeof(in));     /* zero past in_len */
    pdn = le32_to_cpu(in.pdn);
    uctx = le32_to_cpu(in.uctx);
    cfg = le32_to_cpu(in.cfg);
    limit = le32_to_cpu(in.limit);
    log = FIELD_GET(KITE_WQ_CFG_LOG_DEPTH, cfg);
    shift = FIELD_GET(KITE_WQ_CFG_WQE_SHIFT, cfg);

    if (!pdn || pdn >= KITE_MAX_PD || !s->rdma.pd[pdn].valid) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, SRQ_OFF(pdn));
        return;
    }
    if (!kite_uctx_valid(s, uctx) || s->rdma.pd[pdn].uctx != uctx) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, SRQ_OFF(uctx));
        return;
    }
    if (!kite_create_srq_xrc_check(s, c, &in)) {
        return;
    }
    if ((cfg & ~KITE_WQ_CFG_ALL) || log < 1 || log > KITE_WQ_MAX_LOG_DEPTH ||
        shift < KITE_WQE_MIN_SHIFT || shift > KITE_WQE_MAX_SHIFT) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, SRQ_OFF(cfg));
        return;
    }
    if (limit > (1U << log)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, SRQ_OFF(limit));
        return;
    }
    for (srqn = 1; srqn < KITE_MAX_SRQ; srqn++) {
        if (!s->rdma.srq[srqn].valid) {
            break;
        }
    }
    if (srqn == KITE_MAX_SRQ) {
        kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
        return;
    }
    memset(&wq, 0, sizeof(wq));
    wq.log_depth = log;
    wq.wqe_shift = shift;
    if (!kite_pbl_load(s, c, SRQ_OFF(pbl), (uint64_t)1 << (log + shift),
                       KITE_PBL_QUEUE | KITE_PBL_CACHE, &wq.pbl)) {
        return;
    }
    srq = &s->rdma.srq[srqn];
    *srq = (KiteSRQ) {
        .valid = true,
        .pdn = pdn,
        .uctx = uctx,
        .cfg = cfg,
        .state = KITE_SRQ_STATE_OK,
        .armed = limit != 0,
        .limit = limit,
        .xrcd = le32_to_cpu(in.xrcd),
        .cqn = le32_to_cpu(in.cqn),
        .wq = wq,
    };
    c->result = srqn;
}

/* struct kite_cmd_obj naming an SRQ (uctx must be zero). */
static KiteSRQ *kite_cmd_srq(KiteState *s, KiteCmdCtx *c)
{
    KiteSRQ *srq;
    uint32_t srqn;

    if (!kite_cmd_obj_in(c, &srqn, false)) {
        return NULL;
    }
    srq = kite_srq_lookup(s, srqn);
    if (!srq) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
    }
    return srq;
}

#define KITE_MODIFY_SRQ_ALL (KITE_MODIFY_SRQ_LIMIT | KITE_MODIFY_SRQ_RESIZE)

/*
 * The new ring of a resize (prm_srq.rst, "Resize"): @in checked against
 * the SRQ, the PBL loaded into @pbl. Nothing of the SRQ changes here.
 */
static bool kite_srq_resize_check(KiteState *s, KiteCmdCtx *c, KiteSRQ *srq,
                                  const struct kite_cmd_modify_srq *in,
                                  KitePbl *pbl)
{
    uint32_t cfg = le32_to_cpu(in->cfg);
    uint32_t log = FIELD_GET(KITE_WQ_CFG_LOG_DEPTH, cfg);
    uint32_t shift = FIELD_GET(KITE_WQ_CFG_WQE_SHIFT, cfg);
    bool set_limit = le32_to_cpu(in->mask) & KITE_MODIFY_SRQ_LIMIT;

    if (c->in_len < sizeof(*in)) {
        return kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
    }
    if ((cfg & ~KITE_WQ_CFG_ALL) || log < 1 || log > KITE_WQ_MAX_LOG_DEPTH ||
        shift != srq->wq.wqe_shift) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(cfg));
    }
    if (le32_to_cpu(in->limit) > (1U << log)) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(limit));
    }
    /* The WQEs not taken yet, and the limit kept, must fit. */
    if ((uint16_t)(srq->wq.pi - srq->wq.ci) > (1U << log) ||
        (!set_limit && srq->limit > (1U << log))) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(cfg));
    }
    if (srq->state != KITE_SRQ_STATE_OK) {
        return kite_cmd_err(c, KITE_CMD_E_STATE, 0);
    }
    return kite_pbl_load(s, c, MSRQ_OFF(pbl), (uint64_t)1 << (log + shift),
                         KITE_PBL_QUEUE | KITE_PBL_CACHE, pbl);
}

void kite_cmd_modify_srq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_modify_srq in = {};
    uint32_t mask, limit, cfg;
    KitePbl pbl;
    KiteSRQ *srq;

    if (c->in_len < KITE_CMD_MODIFY_SRQ_V0_LEN) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, MIN(c->in_len, sizeof(in)));  /* zero past in_len */
    srq = kite_srq_lookup(s, le32_to_cpu(in.srqn));
    if (!srq) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, MSRQ_OFF(srqn));
        return;
    }
    mask = le32_to_cpu(in.mask);
    limit = le32_to_cpu(in.limit);
    cfg = le32_to_cpu(in.cfg);
    if (mask & ~KITE_MODIFY_SRQ_ALL) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(mask));
        return;
    }
    if (!(mask & KITE_MODIFY_SRQ_RESIZE)) {
        if (cfg) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(cfg));
            return;
        }
        if (!buffer_is_zero(&in.pbl, sizeof(in.pbl))) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(pbl));
            return;
        }
        if (limit > kite_srq_depth(srq)) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, MSRQ_OFF(limit));
            return;
        }
    } else {
        if (!kite_srq_resize_check(s, c, srq, &in, &pbl)) {
            return;
        }
        kite_pbl_free(&srq->wq.pbl);
        srq->wq.pbl = pbl;
        srq->wq.log_depth = FIELD_GET(KITE_WQ_CFG_LOG_DEPTH, cfg);
        srq->cfg = cfg;
    }
    if (mask & KITE_MODIFY_SRQ_LIMIT) {
        srq->limit = limit;
        srq->armed = limit != 0;
    }
}

/*
 * Each XRC target QP holding a WQE of the XRC SRQ @srqn for a message in
 * progress (@drop: drops it, the QP to ERR); how many.
 */
static uint32_t kite_xrc_srq_holders(KiteState *s, uint32_t srqn, bool drop)
{
    uint32_t qpn, n = 0;

    for (qpn = 1; qpn < KITE_MAX_QP; qpn++) {
        KiteQP *qp = &s->rdma.qp[qpn];

        if (!qp->valid || qp->type != KITE_QPT_XRC_TGT || qp->srqn != srqn) {
            continue;
        }
        if (qp->rwqe.held) {
            n++;
        }
        if (!drop) {
            continue;
        }
        qp->srqn = 0;
        if (qp->rwqe.held) {
            qp->rwqe.held = false;
            qp->rc.in_send = false;
            kite_guest_error(s, "XRC SRQ %u destroyed under a message of "
                             "target QP %u", srqn, qpn);
            kite_async_event(s, KITE_EQE_QP_REQ_ERR, qpn, 0);
            kite_engine_qp_fail(s, qpn, qp, false);
        }
    }
    return n;
}

void kite_cmd_query_srq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_query_srq_out *o;
    KiteSRQ *srq = kite_cmd_srq(s, c);
    uint32_t flags;

    if (!srq) {
        return;
    }
    if (c->out_len < sizeof(*o)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    o = (struct kite_cmd_query_srq_out *)c->out;
    c->out_size = sizeof(*o);
    o->state = cpu_to_le32(srq->state);
    flags = (srq->armed ? KITE_SRQ_F_ARMED : 0) |
            (srq->xrcd ? KITE_SRQ_F_XRC : 0);
    o->flags = cpu_to_le32(flags);
    o->pdn = cpu_to_le32(srq->pdn);
    o->cfg = cpu_to_le32(srq->cfg);
    o->limit = cpu_to_le32(srq->limit);
    o->pi = cpu_to_le32(srq->wq.pi);
    o->ci = cpu_to_le32(srq->wq.ci);
    o->nqp = cpu_to_le32(srq->xrcd ?
                         kite_xrc_srq_holders(s, srq - s->rdma.srq, false) :
                         srq->nqp);
}

void kite_cmd_destroy_srq(KiteState *s, KiteCmdCtx *c)
{
    KiteSRQ *srq = kite_cmd_srq(s, c);

    if (!srq) {
        return;
    }
    if (srq->nqp) {
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    if (srq->xrcd) {
        kite_xrc_srq_holders(s, srq - s->rdma.srq, true);
    }
    kite_pbl_free(&srq->wq.pbl);
    memset(srq, 0, sizeof(*srq));
}

void kite_srq_reset(KiteState *s)
{
    uint32_t i;

    for (i = 0; i < KITE_MAX_SRQ; i++) {
        kite_pbl_free(&s->rdma.srq[i].wq.pbl);
    }
    memset(s->rdma.srq, 0, sizeof(s->rdma.srq));
}

/* An SRQ doorbell: the new producer index, nothing to start. */
void kite_db_srq(KiteState *s, hwaddr addr, unsigned page, uint64_t val)
{
    KiteSRQ *srq = kite_srq_lookup(s, FIELD_GET(KITE_DB_OBJ, val));
    uint16_t pi = FIELD_GET(KITE_DB_PI, val);

    if (!srq || srq->uctx != page) {
        s->stats[KITE_STAT_BAD_DOORBELLS]++;
        kite_guest_error(s, "doorbell 0x%" PRIx64 " at 0x%" HWADDR_PRIx
                         " ignored: no such SRQ in this page", val, addr);
        return;
    }
    if ((uint16_t)(pi - srq->wq.ci) > kite_srq_depth(srq)) {
        s->stats[KITE_STAT_BAD_DOORBELLS]++;
        kite_guest_error(s, "doorbell 0x%" PRIx64 " at 0x%" HWADDR_PRIx
                         " ignored: producer index more than depth ahead",
                         val, addr);
        return;
    }
    srq->wq.pi = pi;
}

/* The receive WQE source of a QP */

/*
 * KITE_QP_F_RQ_DBREC: take the RQ's producer counter from its doorbell
 * record, validated as an RQ doorbell's (prm_qp.rst). A record that
 * cannot be read or is more than the depth ahead leaves it as it was.
 */
void kite_rq_dbrec_read(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    struct kite_rq_dbrec rec;
    uint16_t pi;

    if (!qp->rq_dbrec || qp->state == KITE_QPS_RESET ||
        !kite_dma_rw(s, "RQ doorbell record", qp->rq_dbrec, &rec,
                     sizeof(rec), false)) {
        return;
    }
    pi = FIELD_GET(KITE_RQ_DB_PI, le32_to_cpu(rec.pi));
    if (!kite_wq_pi_ok(&qp->rq, pi)) {
        s->stats[KITE_STAT_BAD_DOORBELLS]++;
        kite_guest_error(s, "QP %u RQ doorbell record 0x%x ignored: "
                         "producer index more than depth ahead", qpn, pi);
        return;
    }
    qp->rq.pi = pi;
}

bool kite_recv_empty(KiteState *s, KiteQP *qp)
{
    KiteSRQ *srq;

    if (!qp->srqn) {
        if (qp->rq.ci == qp->rq.pi) {
            kite_rq_dbrec_read(s, qp - s->rdma.qp, qp);
        }
        return qp->rq.ci == qp->rq.pi;
    }
    if (qp->rwqe.held) {
        return false;
    }
    srq = kite_srq_lookup(s, qp->srqn);
    return !srq || srq->state != KITE_SRQ_STATE_OK || srq->wq.ci == srq->wq.pi;
}

uint32_t kite_recv_take(KiteState *s, KiteQP *qp)
{
    struct kite_wqe_srq_recv hdr;
    KiteSRQ *srq;
    uint32_t stride, nsge, left;
    uint64_t addr;

    if (!qp->srqn || qp->rwqe.held) {
        return 0;
    }
    if (kite_recv_empty(s, qp)) {
        return KITE_RECV_NONE;
    }
    srq = kite_srq_lookup(s, qp->srqn);
    stride = 1U << srq->wq.wqe_shift;
    addr = kite_pbl_entry(&srq->wq.pbl, srq->wq.ci, srq->wq.log_depth,
                          srq->wq.wqe_shift);
    if (!kite_dma_rw(s, "SRQ WQE", addr, &hdr, sizeof(hdr), false)) {
        /* Not even the tag: the SRQ is unusable. */
        srq->state = KITE_SRQ_STATE_ERROR;
        kite_guest_error(s, "SRQ %u WQE %u unreachable: SRQ in error",
                         qp->srqn, srq->wq.ci);
        kite_async_event(s, KITE_EQE_SRQ_ERROR, qp->srqn, 0);
        return KITE_RECV_NONE;
    }
    srq->wq.ci++;
    left = (uint16_t)(srq->wq.pi - srq->wq.ci);
    if (srq->armed && left < srq->limit) {
        srq->armed = false;
        kite_async_event(s, KITE_EQE_SRQ_LIMIT, qp->srqn, left);
    }
    nsge = le32_to_cpu(hdr.num_sge);
    qp->rwqe.held = true;
    qp->rwqe.tag = le16_to_cpu(hdr.tag);
    qp->rwqe.nsge = 0;
    if (nsge > KITE_MAX_SGE ||
        sizeof(hdr) + nsge * sizeof(struct kite_wqe_sge) > stride ||
        hdr.rsvd0 || hdr.rsvd[0] || hdr.rsvd[1]) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    }
    if (nsge && !kite_dma_rw(s, "SRQ WQE SGEs", addr + sizeof(hdr),
                             qp->rwqe.sge, nsge * sizeof(struct kite_wqe_sge),
                             false)) {
        return kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_DMA);
    }
    qp->rwqe.nsge = nsge;
    return 0;
}

bool kite_recv_busy(KiteQP *qp)
{
    return qp->srqn ? qp->rwqe.held : qp->rq.ci != qp->rq.pi;
}

uint16_t kite_recv_idx(KiteQP *qp)
{
    return qp->srqn ? qp->rwqe.tag : qp->rq.ci;
}

void kite_recv_done(KiteQP *qp)
{
    if (qp->srqn) {
        qp->rwqe.held = false;
    } else {
        qp->rq.ci++;
    }
}

void kite_recv_cqe(KiteState *s, KiteQP *qp, struct kite_cqe *cqe,
                   uint8_t opcode)
{
    KiteSRQ *srq;

    if (qp->type != KITE_QPT_XRC_TGT) {
        kite_engine_cqe(s, qp->recv_cqn, cqe, opcode);
        return;
    }
    srq = kite_srq_lookup(s, qp->srqn);
    cqe->srqn = cpu_to_le32(qp->srqn);
    kite_engine_cqe(s, srq ? srq->cqn : 0, cqe, opcode);
}

bool kite_xrc_srq_use(KiteState *s, KiteQP *qp, uint32_t srqn)
{
    KiteSRQ *srq = kite_srq_lookup(s, srqn);

    if (!srq || !srq->xrcd || srq->xrcd != qp->xrcd) {
        return false;
    }
    /* Every packet of a message names the SRQ its first one named. */
    if ((qp->rc.in_send || qp->rc.in_write) && srqn != qp->srqn) {
        return false;
    }
    qp->srqn = srqn;
    qp->pdn = srq->pdn;
    return true;
}

uint32_t kite_xrc_tgt_cqn(KiteState *s, const KiteQP *qp)
{
    KiteSRQ *srq;

    if (qp->type != KITE_QPT_XRC_TGT) {
        return 0;
    }
    srq = kite_srq_lookup(s, qp->srqn);
    return srq ? srq->cqn : 0;
}

void kite_srq_qp_flush(KiteState *s, uint32_t qpn, KiteQP *qp)
{
    if (!qp->srqn || qp->state != KITE_QPS_ERR || qp->last_wqe) {
        return;
    }
    if (qp->rwqe.held) {
        kite_resp_err_cqe(s, qpn, qp, qp->rwqe.tag,
                          kite_synd(KITE_SYND_WR_FLUSH, 0));
        qp->rwqe.held = false;
    }
    qp->last_wqe = true;
    /* An XRC target has no last-WQE-reached event (prm_qp.rst, XRC). */
    if (qp->type != KITE_QPT_XRC_TGT) {
        kite_async_event(s, KITE_EQE_QP_LAST_WQE, qpn, 0);
    }
}
