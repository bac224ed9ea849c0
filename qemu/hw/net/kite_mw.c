/*
 * Kite NIC: memory windows (prm_mr.rst, "Memory windows").
 *
 * A window is an entry of the memory translation table, like an MR, with
 * a key of the same form; ALLOC_MW creates it unbound in a PD. A BIND_MW
 * work request binds it to a range of an MR that allows binding
 * (KITE_ACCESS_MW_BIND), with remote access rights of its own and a new
 * key tag; remote RDMA and atomic requests may then name the window's key
 * instead of the MR's, within the window's range and rights. A type 1
 * window is bound by any QP of its PD and unbound by a bind of length 0;
 * a type 2 (2B) window is bound to the QP that bound it, only that QP's
 * requests may use it, and LOCAL_INV or SEND_WITH_INV on that QP
 * invalidates it. An MR with windows bound cannot be deregistered or
 * invalidated; destroying a QP invalidates its type 2 windows; DEALLOC_MW
 * unbinds.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"

#include "kite_int.h"

#define AMW_OFF(f)      offsetof(struct kite_cmd_alloc_mw, f)
#define BMW_OFF(f)      (sizeof(struct kite_wqe_ctrl) + \
                         offsetof(struct kite_wqe_bind_mw, f))

/* The entry @key's index names if it is a window (tag not checked). */
KiteMR *kite_mw_lookup(KiteState *s, uint32_t key)
{
    uint32_t index = FIELD_GET(KITE_KEY_INDEX, key);
    KiteMR *mw;

    if (index == 0 || index >= KITE_MAX_MR) {
        return NULL;
    }
    mw = &s->rdma.mr[index];
    return mw->valid && mw->mw_type ? mw : NULL;
}

/* Forget @mw's binding (to its MR and, type 2, its QP). */
static void kite_mw_unbind(KiteState *s, KiteMR *mw)
{
    if (mw->state == KITE_MR_STATE_VALID && mw->length) {
        KiteMR *mr = &s->rdma.mr[mw->mw_mr];

        /* A bound window keeps its MR registered: nmw is never 0 here. */
        if (mr->valid && mr->nmw) {
            mr->nmw--;
        }
    }
    mw->state = KITE_MR_STATE_INVALID;
    mw->iova = 0;
    mw->length = 0;
    mw->access = 0;
    mw->mw_mr = 0;
    mw->mw_qpn = 0;
}

/* Commands */

void kite_cmd_alloc_mw(KiteState *s, KiteCmdCtx *c)
{
    uint32_t pdn, type, flags, uctx;
    KiteMR *mw;

    if (c->in_len < sizeof(struct kite_cmd_alloc_mw)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    pdn = ldl_le_p(c->in + AMW_OFF(pdn));
    type = ldl_le_p(c->in + AMW_OFF(type));
    flags = ldl_le_p(c->in + AMW_OFF(flags));
    uctx = ldl_le_p(c->in + AMW_OFF(uctx));

    if (!kite_uctx_valid(s, uctx)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, AMW_OFF(uctx));
        return;
    }
    /* The PD must be the owner's: windows are bound and used in its PD. */
    if (!kite_pd_valid(s, pdn) || s->rdma.pd[pdn].uctx != uctx) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, AMW_OFF(pdn));
        return;
    }
    if (type != KITE_MW_TYPE_1 && type != KITE_MW_TYPE_2) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, AMW_OFF(type));
        return;
    }
    if (flags & ~KITE_MR_KEY_TAG) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, AMW_OFF(flags));
        return;
    }
    mw = kite_mr_alloc(s, c, FIELD_GET(KITE_MR_KEY_TAG, flags));
    if (!mw) {
        return;
    }
    *mw = (KiteMR) {
        .valid = true,
        .mw_type = type,
        .gen = ++s->rdma.mr_gen,
        .tag = FIELD_GET(KITE_MR_KEY_TAG, flags),
        .alloc_tag = FIELD_GET(KITE_MR_KEY_TAG, flags),
        .state = KITE_MR_STATE_INVALID,
        .pdn = pdn,
        .uctx = uctx,
        .flags = flags,
    };
}

void kite_cmd_dealloc_mw(KiteState *s, KiteCmdCtx *c)
{
    uint32_t key;
    KiteMR *mw;

    if (!kite_cmd_obj_in(c, &key, false)) {
        return;
    }
    mw = kite_mw_lookup(s, key);
    /* Binds change the tag on the data path: the allocation key works too. */
    if (!mw || (mw->tag != FIELD_GET(KITE_KEY_TAG, key) &&
                mw->alloc_tag != FIELD_GET(KITE_KEY_TAG, key))) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    kite_mw_unbind(s, mw);
    memset(mw, 0, sizeof(*mw));
}

/* The data path */

uint32_t kite_mw_bind(KiteState *s, uint32_t qpn, KiteQP *qp,
                      const uint8_t *wqe, uint32_t stride)
{
    const uint32_t bad = kite_synd(KITE_SYND_LOCAL_QP_OP, KITE_VSYND_WQE);
    const uint32_t err = kite_synd(KITE_SYND_MW_BIND, KITE_VSYND_KEY);
    uint32_t opw = ldl_le_p(wqe + offsetof(struct kite_wqe_ctrl, opcode));
    uint32_t mw_key, mr_key, access, flags;
    uint64_t addr, length;
    KiteMR *mw, *mr;

    /* The work request's structure. */
    if (sizeof(struct kite_wqe_ctrl) + sizeof(struct kite_wqe_bind_mw) >
        stride || FIELD_GET(KITE_WQE_NUM_SGE, opw) ||
        (opw & KITE_WQE_F_INLINE) ||
        lduw_le_p(wqe + offsetof(struct kite_wqe_ctrl, inline_len)) ||
        ldl_le_p(wqe + offsetof(struct kite_wqe_ctrl, imm_data))) {
        return bad;
    }
    addr = ldq_le_p(wqe + BMW_OFF(addr));
    length = ldq_le_p(wqe + BMW_OFF(length));
    mw_key = ldl_le_p(wqe + BMW_OFF(mw_key));
    mr_key = ldl_le_p(wqe + BMW_OFF(mr_key));
    access = ldl_le_p(wqe + BMW_OFF(access));
    flags = ldl_le_p(wqe + BMW_OFF(flags));
    if ((flags & ~KITE_BIND_MW_TAG) || (access & ~KITE_ACCESS_MR_ALL)) {
        return bad;
    }

    /*
     * The window: one of the QP's PD (and owner); type 1 named by its
     * current key, type 2 free (its tag is not checked: it has no usable
     * key) and never rebound while bound (o10-37.2.30).
     */
    mw = kite_mw_lookup(s, mw_key);
    if (!mw || mw->pdn != qp->pdn || mw->uctx != qp->uctx) {
        return err;
    }
    if (mw->mw_type == KITE_MW_TYPE_1 ?
        mw->tag != FIELD_GET(KITE_KEY_TAG, mw_key) :
        mw->state != KITE_MR_STATE_INVALID) {
        return err;
    }
    /* A window grants remote access only. */
    if (access & ~KITE_ACCESS_REMOTE) {
        return err;
    }
    if (!length) {
        /* Type 1: unbound, with a new key. Type 2: o10-37.2.40. */
        if (mw->mw_type != KITE_MW_TYPE_1) {
            return err;
        }
        kite_mw_unbind(s, mw);
        mw->tag = FIELD_GET(KITE_BIND_MW_TAG, flags);
        return 0;
    }

    /*
     * The MR: a valid one (not a window, not a DMA MR) of the window's PD
     * and owner, named by its current key, registered for binding
     * (C10-73), with local write for a writable window (C10-74), covering
     * the range (C10-75).
     */
    mr = NULL;
    if (FIELD_GET(KITE_KEY_INDEX, mr_key) &&
        FIELD_GET(KITE_KEY_INDEX, mr_key) < KITE_MAX_MR) {
        mr = &s->rdma.mr[FIELD_GET(KITE_KEY_INDEX, mr_key)];
    }
    if (!mr || !mr->valid || mr->mw_type || mr == mw ||
        mr->state != KITE_MR_STATE_VALID ||
        mr->tag != FIELD_GET(KITE_KEY_TAG, mr_key) ||
        (mr->flags & KITE_MR_F_PHYS) || mr->pdn != mw->pdn ||
        mr->uctx != mw->uctx || !(mr->access & KITE_ACCESS_MW_BIND)) {
        return err;
    }
    if ((access & (KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_ATOMIC)) &&
        !(mr->access & KITE_ACCESS_LOCAL_WRITE)) {
        return err;
    }
    if (addr < mr->iova || length > mr->length ||
        addr - mr->iova > mr->length - length) {
        return err;
    }

    kite_mw_unbind(s, mw);              /* a type 1 rebind */
    mw->state = KITE_MR_STATE_VALID;
    mw->tag = FIELD_GET(KITE_BIND_MW_TAG, flags);
    mw->iova = addr;
    mw->length = length;
    mw->access = access;
    mw->mw_mr = mr - s->rdma.mr;
    mw->mw_qpn = mw->mw_type == KITE_MW_TYPE_2 ? qpn : 0;
    mr->nmw++;
    return 0;
}

bool kite_mw_invalidate(KiteState *s, uint32_t qpn, KiteQP *qp, KiteMR *mw,
                        uint32_t key)
{
    /*
     * Type 2 only (o10-37.2.26), bound, with its current key, and bound
     * to the QP that asks: a type 2 window belongs to its QP.
     */
    if (mw->mw_type != KITE_MW_TYPE_2 || mw->state != KITE_MR_STATE_VALID ||
        mw->tag != FIELD_GET(KITE_KEY_TAG, key) || mw->pdn != qp->pdn ||
        mw->mw_qpn != qpn) {
        return false;
    }
    kite_mw_unbind(s, mw);
    return true;
}

KiteMR *kite_rkey_check(KiteState *s, uint32_t qpn, KiteQP *qp, uint32_t key,
                        uint64_t addr, uint64_t len, uint32_t access)
{
    KiteMR *mw = kite_mw_lookup(s, key), *mr;

    if (!mw) {
        return kite_key_check(s, qp->pdn, key, addr, len, access);
    }
    if (mw->state != KITE_MR_STATE_VALID || !mw->length ||
        mw->tag != FIELD_GET(KITE_KEY_TAG, key) || mw->pdn != qp->pdn ||
        (mw->mw_type == KITE_MW_TYPE_2 && mw->mw_qpn != qpn) ||
        (mw->access & access) != access) {
        return NULL;
    }
    if (addr < mw->iova || len > mw->length ||
        addr - mw->iova > mw->length - len) {
        return NULL;
    }
    /* The MR stays registered and valid while the window is bound. */
    mr = &s->rdma.mr[mw->mw_mr];
    if (!mr->valid || mr->mw_type || mr->state != KITE_MR_STATE_VALID) {
        return NULL;
    }
    return mr;
}

void kite_mw_qp_destroyed(KiteState *s, uint32_t qpn)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_MR; i++) {
        KiteMR *mw = &s->rdma.mr[i];

        if (mw->valid && mw->mw_type == KITE_MW_TYPE_2 &&
            mw->state == KITE_MR_STATE_VALID && mw->mw_qpn == qpn) {
            kite_mw_unbind(s, mw);
        }
    }
}
