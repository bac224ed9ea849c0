/*
 * Kite RoCEv2 NIC: QP counter sets.
 *
 * Every QP counts its transport events (KITE_QP_STAT_*) in one counter
 * set: the default set 0, or a set the driver allocated and moved the QP
 * to with SET_QP_CNTR. What a QP counted stays in the set it counted in
 * when it moves or is destroyed, so a set's counters only ever grow until
 * it is freed. Set 0 exists from reset to reset.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "kite_int.h"

void kite_cntr_reset(KiteState *s)
{
    memset(s->rdma.cntr, 0, sizeof(s->rdma.cntr));
    s->rdma.cntr[0].valid = true;
}

void kite_cntr_qp_init(KiteState *s, KiteQP *qp)
{
    qp->cntr = 0;
    s->rdma.cntr[0].nqp++;
}

void kite_cntr_qp_fini(KiteState *s, KiteQP *qp)
{
    s->rdma.cntr[qp->cntr].nqp--;
    qp->cntr = 0;
}

/* struct kite_cmd_obj naming an existing set (0 only if @zero_ok). */
static KiteCntr *kite_cmd_cntr(KiteState *s, KiteCmdCtx *c, bool zero_ok)
{
    uint32_t n;

    if (!kite_cmd_obj_in(c, &n, false)) {
        return NULL;
    }
    if (n >= KITE_MAX_CNTR || !s->rdma.cntr[n].valid || (!n && !zero_ok)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, offsetof(struct kite_cmd_obj, obj));
        return NULL;
    }
    return &s->rdma.cntr[n];
}

void kite_cmd_alloc_cntr(KiteState *s, KiteCmdCtx *c)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_CNTR; i++) {
        if (!s->rdma.cntr[i].valid) {
            memset(&s->rdma.cntr[i], 0, sizeof(s->rdma.cntr[i]));
            s->rdma.cntr[i].valid = true;
            c->result = i;
            return;
        }
    }
    kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
}

void kite_cmd_dealloc_cntr(KiteState *s, KiteCmdCtx *c)
{
    KiteCntr *cn = kite_cmd_cntr(s, c, false);

    if (!cn) {
        return;
    }
    if (cn->nqp) {
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    memset(cn, 0, sizeof(*cn));
}

void kite_cmd_query_cntr(KiteState *s, KiteCmdCtx *c)
{
    KiteCntr *cn = kite_cmd_cntr(s, c, true);

    if (cn) {
        kite_cmd_put_counters(c, cn->v, KITE_QP_STAT_COUNT);
    }
}

void kite_cmd_set_qp_cntr(KiteState *s, KiteCmdCtx *c)
{
    uint32_t qpn, n;
    KiteQP *qp;

    if (c->in_len < sizeof(struct kite_cmd_set_qp_cntr)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    qpn = ldl_le_p(c->in + offsetof(struct kite_cmd_set_qp_cntr, qpn));
    n = ldl_le_p(c->in + offsetof(struct kite_cmd_set_qp_cntr, cntr));
    qp = kite_qp_lookup(s, qpn);
    if (!qp) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_set_qp_cntr, qpn));
        return;
    }
    if (n >= KITE_MAX_CNTR || !s->rdma.cntr[n].valid) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_set_qp_cntr, cntr));
        return;
    }
    s->rdma.cntr[qp->cntr].nqp--;
    qp->cntr = n;
    s->rdma.cntr[n].nqp++;
}
