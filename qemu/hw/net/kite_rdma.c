/*
 * Kite NIC: RDMA command channel, user contexts, protection domains, XRC
 * domains, memory regions and the GID table (memory windows: kite_mw.c).
 *
 * The driver writes 256-byte commands into a ring in guest memory and
 * advances the producer index (KITE_RDMA_CMDQ_PI). A bottom half executes
 * the commands strictly in order, at most KITE_CMDQ_BUDGET per run: it
 * writes the output, the result and the status word back into the entry,
 * advances the consumer index and posts a CMD_DONE event to EQ0 if it
 * exists. Queue commands (EQ, CQ, QP) are in kite_queue.c.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci.h"

#include "kite_int.h"
#include "trace.h"

#define KITE_MAX_CMD_OUT        0xffff
#define KITE_MAX_MR_SIZE        (1ULL << 39)
#define KITE_MAX_FAST_REG_PAGES 512
/*
 * Responder: KITE_RC_RDQ READ/atomic requests wait to be answered.
 * Requester: a bound, not a promise; it keeps at most KITE_RC_SQ_WINDOW
 * WQEs in flight anyway. Both as deep as rdma_rxe's, because peers
 * (perftest through rdma_cm, for one) ask a QP for the depth of the
 * other side.
 */
#define KITE_MAX_RD_ATOM        KITE_RC_RDQ
#define KITE_MAX_INIT_RD_ATOM   128

/* Offsets of the status and result words in a command entry. */
#define KITE_CMD_STATUS_OFF     offsetof(struct kite_cmd, status)
#define KITE_CMD_RESULT_OFF     offsetof(struct kite_cmd, result)
#define KITE_CMD_PAYLOAD_OFF    offsetof(struct kite_cmd, payload)

/* Input helpers */

static uint32_t in32(KiteCmdCtx *c, size_t off)
{
    return ldl_le_p(c->in + off);
}

/* Fail with E_LENGTH unless the input holds a structure of @size bytes. */
static bool kite_cmd_in(KiteCmdCtx *c, size_t size)
{
    if (c->in_len < size) {
        return kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
    }
    return true;
}

/* Reserve @size bytes of output; E_LENGTH if out_len is shorter. */
static void *kite_cmd_out(KiteCmdCtx *c, size_t size)
{
    if (c->out_len < size) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return NULL;
    }
    c->out_size = size;
    return c->out;
}

bool kite_uctx_valid(KiteState *s, uint32_t uctx)
{
    return uctx == 0 || (uctx < KITE_MAX_UCTX && s->rdma.uctx[uctx]);
}

/* Device queries */

static void kite_cmd_query_device(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_query_device_out *o = kite_cmd_out(c, sizeof(*o));
    const uint8_t *mac = s->conf.macaddr.a;
    uint8_t eui[8] = {
        mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5],
    };
    uint64_t guid = ldq_be_p(eui);

    if (!o) {
        return;
    }
    o->fw_ver = cpu_to_le32(kite_fw_ver(s));
    o->hw_rev = cpu_to_le32(kite_hw_rev());
    o->node_guid = cpu_to_le64(guid);
    o->sys_image_guid = cpu_to_le64(guid);
    o->max_mr_size = cpu_to_le64(KITE_MAX_MR_SIZE);
    o->page_size_cap = cpu_to_le64(GENMASK_ULL(KITE_PBL_MAX_PAGE_SHIFT,
                                               KITE_PBL_MIN_PAGE_SHIFT));
    o->vendor_id = cpu_to_le32(PCI_VENDOR_ID_KITE);
    o->vendor_part_id = cpu_to_le32(PCI_DEVICE_ID_KITE_NIC);
    o->max_qp = cpu_to_le32(KITE_MAX_QP);
    o->max_qp_wr = cpu_to_le32(1U << KITE_WQ_MAX_LOG_DEPTH);
    o->max_send_sge = cpu_to_le32(KITE_MAX_SGE);
    o->max_recv_sge = cpu_to_le32(KITE_MAX_SGE);
    o->max_sge_rd = cpu_to_le32(KITE_MAX_SGE);
    o->max_inline = cpu_to_le32(KITE_MAX_INLINE);
    o->max_cq = cpu_to_le32(KITE_MAX_CQ);
    o->max_cqe = cpu_to_le32(1U << KITE_CQ_MAX_LOG_DEPTH);
    o->max_mr = cpu_to_le32(KITE_MAX_MR);
    o->max_pd = cpu_to_le32(KITE_MAX_PD);
    o->max_uctx = cpu_to_le32(KITE_MAX_UCTX - 1);
    o->max_eq = cpu_to_le32(KITE_MAX_EQ);
    o->max_eqe = cpu_to_le32(1U << KITE_EQ_MAX_LOG_DEPTH);
    o->max_qp_rd_atom = cpu_to_le32(KITE_MAX_RD_ATOM);
    o->max_qp_init_rd_atom = cpu_to_le32(KITE_MAX_INIT_RD_ATOM);
    o->max_fast_reg_pages = cpu_to_le32(KITE_MAX_FAST_REG_PAGES);
    o->gid_tbl_len = cpu_to_le32(KITE_GID_TBL_LEN);
    o->features = cpu_to_le32(KITE_FEAT_RC | KITE_FEAT_UD | KITE_FEAT_ATOMIC |
                              KITE_FEAT_FAST_REG | KITE_FEAT_CQE_128 |
                              KITE_FEAT_CQ_RESIZE | KITE_FEAT_CQ_MODERATION |
                              KITE_FEAT_SRQ | KITE_FEAT_MCAST |
                              KITE_FEAT_QP_CNTR | KITE_FEAT_MW |
                              KITE_FEAT_REREG_MR |
                              KITE_FEAT_EQ_MODERATION |
                              KITE_FEAT_SRQ_RESIZE |
                              KITE_FEAT_ATOMIC_WRITE |
                              KITE_FEAT_FLUSH | KITE_FEAT_DM |
                              KITE_FEAT_XRC | KITE_FEAT_RQ_DBREC);
    o->max_cq_moderation_count = cpu_to_le16(0xffff);
    o->max_cq_moderation_period = cpu_to_le16(0xffff);
    o->local_ca_ack_delay = cpu_to_le32(15);
    o->max_srq = cpu_to_le32(KITE_MAX_SRQ - 1);
    o->max_srq_wr = cpu_to_le32(1U << KITE_WQ_MAX_LOG_DEPTH);
    o->max_srq_sge = cpu_to_le32(KITE_MAX_SGE);
    o->max_cntr = cpu_to_le32(KITE_MAX_CNTR);
    o->max_mcast_grp = cpu_to_le32(KITE_MAX_MCAST_GRP);
    o->max_mcast_qp_attach = cpu_to_le32(KITE_MAX_MCAST_QP_ATTACH);
    o->max_mcast_total_attach = cpu_to_le32(KITE_MAX_TOTAL_MCAST_QP_ATTACH);
    /* Windows share the memory translation table with MRs. */
    o->max_mw = cpu_to_le32(KITE_MAX_MR);
    o->max_dm_size = cpu_to_le32(KITE_BAR_DM_SIZE);
    o->max_xrcd = cpu_to_le32(KITE_MAX_XRCD);
}

/* The largest IB MTU whose RoCEv2 packets fit in the Ethernet MTU. */
uint8_t kite_active_mtu(KiteState *s)
{
    uint8_t mtu = KITE_MTU_256;

    /* Room for IPv6 40 + UDP 8 + BTH 12 + ICRC 4 bytes of headers. */
    while (mtu < KITE_MTU_4096 && KITE_MTU_BYTES(mtu + 1) + 64 <= s->eth.mtu) {
        mtu++;
    }
    return mtu;
}

static void kite_cmd_query_port(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_query_port_out *o = kite_cmd_out(c, sizeof(*o));
    uint8_t mtu = kite_active_mtu(s);

    if (!o) {
        return;
    }
    o->state = s->link_up ? KITE_PORT_STATE_ACTIVE : KITE_PORT_STATE_DOWN;
    o->phys_state = s->link_up ? KITE_PORT_PHYS_LINK_UP :
                                 KITE_PORT_PHYS_DISABLED;
    o->active_mtu = mtu;
    o->max_mtu = KITE_MTU_4096;
    o->speed_mbps = cpu_to_le32(10000);
    memcpy(o->mac, s->eth.mac, sizeof(o->mac));
    o->eth_mtu = cpu_to_le32(s->eth.mtu);
    o->gid_tbl_len = cpu_to_le32(KITE_GID_TBL_LEN);
}

void kite_cmd_put_counters(KiteCmdCtx *c, const uint64_t *v, uint32_t count)
{
    uint32_t n, i;

    if (c->out_len % 8) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    n = MIN(c->out_len / 8, count);
    for (i = 0; i < n; i++) {
        stq_le_p(c->out + i * 8, v[i]);
    }
    c->out_size = n * 8;
    c->result = n;
}

static void kite_cmd_query_stats(KiteState *s, KiteCmdCtx *c)
{
    if (!c->out_dma) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, 0);
        return;
    }
    kite_cmd_put_counters(c, s->stats, KITE_STAT_COUNT);
}

/* User contexts and protection domains */

/*
 * Take the lowest free entry of the table @used of @n entries (entry 0 is
 * never handed out) as the command's result, or fail it: full.
 */
static void kite_cmd_alloc_slot(KiteCmdCtx *c, bool *used, uint32_t n)
{
    uint32_t i;

    for (i = 1; i < n; i++) {
        if (!used[i]) {
            used[i] = true;
            c->result = i;
            return;
        }
    }
    kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
}

static void kite_cmd_alloc_uctx(KiteState *s, KiteCmdCtx *c)
{
    kite_cmd_alloc_slot(c, s->rdma.uctx, KITE_MAX_UCTX);
}

static bool kite_mr_uses(KiteState *s, bool pd, uint32_t n)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_MR; i++) {
        KiteMR *mr = &s->rdma.mr[i];

        if (mr->valid && (pd ? mr->pdn : mr->uctx) == n) {
            return true;
        }
    }
    return false;
}

static void kite_cmd_dealloc_uctx(KiteState *s, KiteCmdCtx *c)
{
    uint32_t uctx, i;

    if (!kite_cmd_obj_in(c, &uctx, false)) {
        return;
    }
    if (uctx == 0 || uctx >= KITE_MAX_UCTX || !s->rdma.uctx[uctx]) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    for (i = 1; i < KITE_MAX_PD; i++) {
        if (s->rdma.pd[i].valid && s->rdma.pd[i].uctx == uctx) {
            kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
            return;
        }
    }
    if (kite_mr_uses(s, false, uctx) || kite_uctx_used_by_queues(s, uctx)) {
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    s->rdma.uctx[uctx] = false;
}

static void kite_cmd_alloc_pd(KiteState *s, KiteCmdCtx *c)
{
    uint32_t uctx, i;

    if (!kite_cmd_in(c, sizeof(struct kite_cmd_obj))) {
        return;
    }
    /* obj is ignored. */
    uctx = in32(c, offsetof(struct kite_cmd_obj, uctx));
    if (!kite_uctx_valid(s, uctx)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, offsetof(struct kite_cmd_obj, uctx));
        return;
    }
    for (i = 1; i < KITE_MAX_PD; i++) {
        if (!s->rdma.pd[i].valid) {
            s->rdma.pd[i].valid = true;
            s->rdma.pd[i].uctx = uctx;
            c->result = i;
            return;
        }
    }
    kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
}

bool kite_pd_valid(KiteState *s, uint32_t pdn)
{
    return pdn && pdn < KITE_MAX_PD && s->rdma.pd[pdn].valid;
}

static void kite_cmd_dealloc_pd(KiteState *s, KiteCmdCtx *c)
{
    uint32_t pdn;

    if (!kite_cmd_obj_in(c, &pdn, false)) {
        return;
    }
    if (!kite_pd_valid(s, pdn)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    if (kite_mr_uses(s, true, pdn) || kite_pd_used(s, pdn)) {
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    s->rdma.pd[pdn].valid = false;
}

/* XRC domains: no owner, no state but their existence (prm_qp.rst, XRC) */

bool kite_xrcd_valid(KiteState *s, uint32_t xrcd)
{
    return xrcd && xrcd < KITE_MAX_XRCD && s->rdma.xrcd[xrcd];
}

static void kite_cmd_alloc_xrcd(KiteState *s, KiteCmdCtx *c)
{
    kite_cmd_alloc_slot(c, s->rdma.xrcd, KITE_MAX_XRCD);
}

static void kite_cmd_dealloc_xrcd(KiteState *s, KiteCmdCtx *c)
{
    uint32_t xrcd, i;

    if (!kite_cmd_obj_in(c, &xrcd, false)) {
        return;
    }
    if (!kite_xrcd_valid(s, xrcd)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    for (i = 1; i < KITE_MAX_QP; i++) {
        if (s->rdma.qp[i].valid && s->rdma.qp[i].xrcd == xrcd) {
            kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
            return;
        }
    }
    if (kite_srq_xrcd_used(s, xrcd)) {
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    s->rdma.xrcd[xrcd] = false;
}

/* Memory regions */

/* The lowest free entry of the memory translation table, its key in result. */
KiteMR *kite_mr_alloc(KiteState *s, KiteCmdCtx *c, uint8_t tag)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_MR; i++) {
        if (!s->rdma.mr[i].valid) {
            c->result = FIELD_PREP(KITE_KEY_INDEX, i) |
                        FIELD_PREP(KITE_KEY_TAG, tag);
            return &s->rdma.mr[i];
        }
    }
    kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
    return NULL;
}

/* REG_MR and REREG_MR: access an MR may have. */
static bool kite_mr_access_ok(uint32_t access)
{
    return !(access & ~KITE_ACCESS_MR_ALL) &&
           (!(access & (KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_ATOMIC)) ||
            (access & KITE_ACCESS_LOCAL_WRITE));
}

/*
 * REG_MR and REREG_MR: load the page list at @pbl_off of the command and
 * check that [iova, iova + length) fits in it (@len_off: the length's
 * offset, for the syndrome). False with the command's error set.
 */
static bool kite_mr_pages(KiteState *s, KiteCmdCtx *c, size_t pbl_off,
                          size_t len_off, uint64_t iova, uint64_t length,
                          KitePbl *pbl)
{
    uint64_t off, size;

    if (length == 0) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, len_off);
        return false;
    }
    if (!kite_pbl_load(s, c, pbl_off, 0, 0, pbl)) {
        return false;
    }
    size = (uint64_t)pbl->npages << pbl->page_shift;
    off = iova & ((1ULL << pbl->page_shift) - 1);
    if (length > size - off) {
        kite_pbl_free(pbl);
        kite_cmd_err(c, KITE_CMD_E_PARAM, len_off);
        return false;
    }
    return true;
}

/*
 * REG_MR with KITE_MR_F_DM: [iova, iova + length) is device memory from
 * BAR4 offset pbl.addr on; the rest of the page list must be 0. False with
 * the command's error set.
 */
static bool kite_mr_dm(KiteCmdCtx *c, uint64_t length, uint64_t *dm_off)
{
    size_t pbl = offsetof(struct kite_cmd_reg_mr, pbl);

    *dm_off = ldq_le_p(c->in + pbl + offsetof(struct kite_pbl, addr));
    if (*dm_off > KITE_BAR_DM_SIZE || length > KITE_BAR_DM_SIZE - *dm_off) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, length > KITE_BAR_DM_SIZE ?
                     offsetof(struct kite_cmd_reg_mr, length) :
                     pbl + offsetof(struct kite_pbl, addr));
        return false;
    }
    if (in32(c, pbl + offsetof(struct kite_pbl, npages)) ||
        in32(c, pbl + offsetof(struct kite_pbl, cfg))) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     pbl + offsetof(struct kite_pbl, npages));
        return false;
    }
    return true;
}

static void kite_cmd_reg_mr(KiteState *s, KiteCmdCtx *c)
{
    uint32_t pdn, access, flags, uctx;
    uint64_t iova, length, dm_off = 0;
    KitePbl pbl = {};
    KiteMR *mr;

    if (!kite_cmd_in(c, sizeof(struct kite_cmd_reg_mr))) {
        return;
    }
    pdn = in32(c, offsetof(struct kite_cmd_reg_mr, pdn));
    access = in32(c, offsetof(struct kite_cmd_reg_mr, access));
    flags = in32(c, offsetof(struct kite_cmd_reg_mr, flags));
    uctx = in32(c, offsetof(struct kite_cmd_reg_mr, uctx));
    iova = ldq_le_p(c->in + offsetof(struct kite_cmd_reg_mr, iova));
    length = ldq_le_p(c->in + offsetof(struct kite_cmd_reg_mr, length));

    if (!kite_pd_valid(s, pdn)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, offsetof(struct kite_cmd_reg_mr,
                                                    pdn));
        return;
    }
    if (!kite_mr_access_ok(access)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_reg_mr, access));
        return;
    }
    if ((flags & ~(KITE_MR_KEY_TAG | KITE_MR_F_PHYS | KITE_MR_F_DM)) ||
        (flags & KITE_MR_F_PHYS && flags & KITE_MR_F_DM)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_reg_mr, flags));
        return;
    }
    if ((flags & KITE_MR_F_PHYS) && uctx) {
        /* A user context never gets a physical-address MR. */
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_reg_mr, flags));
        return;
    }
    if (!kite_uctx_valid(s, uctx)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_reg_mr, uctx));
        return;
    }
    if ((flags & KITE_MR_F_DM) && !kite_mr_dm(c, length, &dm_off)) {
        return;
    }
    if (!(flags & (KITE_MR_F_PHYS | KITE_MR_F_DM)) &&
        !kite_mr_pages(s, c, offsetof(struct kite_cmd_reg_mr, pbl),
                       offsetof(struct kite_cmd_reg_mr, length), iova, length,
                       &pbl)) {
        return;
    }
    mr = kite_mr_alloc(s, c, FIELD_GET(KITE_MR_KEY_TAG, flags));
    if (!mr) {
        kite_pbl_free(&pbl);
        return;
    }
    *mr = (KiteMR) {
        .valid = true,
        .gen = ++s->rdma.mr_gen,
        .tag = FIELD_GET(KITE_MR_KEY_TAG, flags),
        .state = KITE_MR_STATE_VALID,
        .pdn = pdn,
        .uctx = uctx,
        .access = access,
        .flags = flags,
        .iova = iova,
        .length = length,
        .dm_off = dm_off,
        .pbl = pbl,
    };
}

/*
 * REREG_MR: a registered MR (not a fast-registration MR, a window or a
 * DMA MR) changes its translation, PD or access in place; its key stays.
 * Every check is made before anything changes. The registration number
 * changes: READ responses queued for the old registration are not sent.
 */
static void kite_cmd_rereg_mr(KiteState *s, KiteCmdCtx *c)
{
    uint32_t key, index, flags, pdn, access;
    uint64_t iova, length;
    KitePbl pbl = {};
    KiteMR *mr;

    if (!kite_cmd_in(c, sizeof(struct kite_cmd_rereg_mr))) {
        return;
    }
    key = in32(c, offsetof(struct kite_cmd_rereg_mr, key));
    flags = in32(c, offsetof(struct kite_cmd_rereg_mr, flags));
    pdn = in32(c, offsetof(struct kite_cmd_rereg_mr, pdn));
    access = in32(c, offsetof(struct kite_cmd_rereg_mr, access));
    iova = ldq_le_p(c->in + offsetof(struct kite_cmd_rereg_mr, iova));
    length = ldq_le_p(c->in + offsetof(struct kite_cmd_rereg_mr, length));

    index = FIELD_GET(KITE_KEY_INDEX, key);
    mr = &s->rdma.mr[index < KITE_MAX_MR ? index : 0];
    if (index == 0 || index >= KITE_MAX_MR || !mr->valid || mr->mw_type ||
        mr->fast || mr->tag != FIELD_GET(KITE_KEY_TAG, key)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_rereg_mr, key));
        return;
    }
    if (!flags || (flags & ~(KITE_REREG_F_TRANS | KITE_REREG_F_PD |
                             KITE_REREG_F_ACCESS))) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_rereg_mr, flags));
        return;
    }
    if (mr->flags & (KITE_MR_F_PHYS | KITE_MR_F_DM)) {
        /* A DMA MR names bus addresses, a DM MR device memory. */
        kite_cmd_err(c, KITE_CMD_E_STATE,
                     offsetof(struct kite_cmd_rereg_mr, key));
        return;
    }
    if ((flags & KITE_REREG_F_PD) &&
        (!kite_pd_valid(s, pdn) || s->rdma.pd[pdn].uctx != mr->uctx)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_rereg_mr, pdn));
        return;
    }
    if ((flags & KITE_REREG_F_ACCESS) && !kite_mr_access_ok(access)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_rereg_mr, access));
        return;
    }
    if (mr->nmw) {
        /* Windows are bound to it (IBA 10.6.7.2.6, as for DEREG_MR). */
        kite_cmd_err(c, KITE_CMD_E_BUSY,
                     offsetof(struct kite_cmd_rereg_mr, key));
        return;
    }
    if ((flags & KITE_REREG_F_TRANS) &&
        !kite_mr_pages(s, c, offsetof(struct kite_cmd_rereg_mr, pbl),
                       offsetof(struct kite_cmd_rereg_mr, length), iova,
                       length, &pbl)) {
        return;
    }
    if (flags & KITE_REREG_F_TRANS) {
        kite_pbl_free(&mr->pbl);
        mr->pbl = pbl;
        mr->iova = iova;
        mr->length = length;
    }
    if (flags & KITE_REREG_F_PD) {
        mr->pdn = pdn;
    }
    if (flags & KITE_REREG_F_ACCESS) {
        mr->access = access;
    }
    mr->gen = ++s->rdma.mr_gen;
}

static void kite_cmd_alloc_mr(KiteState *s, KiteCmdCtx *c)
{
    uint32_t pdn, max_pages, flags, uctx;
    KiteMR *mr;

    if (!kite_cmd_in(c, sizeof(struct kite_cmd_alloc_mr))) {
        return;
    }
    pdn = in32(c, offsetof(struct kite_cmd_alloc_mr, pdn));
    max_pages = in32(c, offsetof(struct kite_cmd_alloc_mr, max_pages));
    flags = in32(c, offsetof(struct kite_cmd_alloc_mr, flags));
    uctx = in32(c, offsetof(struct kite_cmd_alloc_mr, uctx));

    if (!kite_pd_valid(s, pdn)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_alloc_mr, pdn));
        return;
    }
    if (max_pages < 1 || max_pages > KITE_MAX_FAST_REG_PAGES) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_alloc_mr, max_pages));
        return;
    }
    if (flags & ~KITE_MR_KEY_TAG) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_alloc_mr, flags));
        return;
    }
    if (!kite_uctx_valid(s, uctx)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_alloc_mr, uctx));
        return;
    }
    mr = kite_mr_alloc(s, c, FIELD_GET(KITE_MR_KEY_TAG, flags));
    if (!mr) {
        return;
    }
    *mr = (KiteMR) {
        .valid = true,
        .gen = ++s->rdma.mr_gen,
        .tag = FIELD_GET(KITE_MR_KEY_TAG, flags),
        .state = KITE_MR_STATE_INVALID,
        .fast = true,
        .alloc_tag = FIELD_GET(KITE_MR_KEY_TAG, flags),
        .pdn = pdn,
        .uctx = uctx,
        .flags = flags,
        .max_pages = max_pages,
    };
}

static void kite_cmd_dereg_mr(KiteState *s, KiteCmdCtx *c)
{
    uint32_t key, index;
    KiteMR *mr;

    if (!kite_cmd_obj_in(c, &key, false)) {
        return;
    }
    index = FIELD_GET(KITE_KEY_INDEX, key);
    mr = &s->rdma.mr[index < KITE_MAX_MR ? index : 0];
    /*
     * A fast-registration MR's tag changes on the data path, where the
     * driver cannot follow it (a flushed REG_MR leaves the old one): its
     * allocation key frees it too.
     */
    if (index == 0 || index >= KITE_MAX_MR || !mr->valid || mr->mw_type ||
        (mr->tag != FIELD_GET(KITE_KEY_TAG, key) &&
         !(mr->fast && mr->alloc_tag == FIELD_GET(KITE_KEY_TAG, key)))) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    if (mr->nmw) {
        /* Windows are bound to it (IBA 10.6.7.2.6). */
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    kite_pbl_free(&mr->pbl);
    memset(mr, 0, sizeof(*mr));
}

/* GID table */

static void kite_cmd_add_gid(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_add_gid in;
    uint32_t index, type;
    KiteGid *g;

    if (!kite_cmd_in(c, sizeof(in))) {
        return;
    }
    memcpy(&in, c->in, sizeof(in));
    index = le32_to_cpu(in.index);
    type = le32_to_cpu(in.type);
    if (index >= KITE_GID_TBL_LEN) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_add_gid, index));
        return;
    }
    if (type != KITE_NET_ROCE_V2_IPV4 && type != KITE_NET_ROCE_V2_IPV6) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_add_gid, type));
        return;
    }
    /* Every bit of the VLAN word is defined: nothing reserved to check. */
    g = &s->rdma.gid[index];
    g->valid = true;
    g->type = type;
    memcpy(g->gid, in.gid, sizeof(g->gid));
    memcpy(g->mac, in.mac, sizeof(g->mac));
    g->vlan = le16_to_cpu(in.vlan);
}

static void kite_cmd_del_gid(KiteState *s, KiteCmdCtx *c)
{
    uint32_t index;

    if (!kite_cmd_obj_in(c, &index, false)) {
        return;
    }
    if (index >= KITE_GID_TBL_LEN || !s->rdma.gid[index].valid) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    memset(&s->rdma.gid[index], 0, sizeof(s->rdma.gid[index]));
}

bool kite_gid_get(KiteState *s, unsigned index, KiteGid *out)
{
    if (index >= KITE_GID_TBL_LEN || !s->rdma.gid[index].valid) {
        return false;
    }
    *out = s->rdma.gid[index];
    return true;
}

/* Command execution */

static void kite_cmd_nop(KiteState *s, KiteCmdCtx *c)
{
}

typedef void KiteCmdFn(KiteState *s, KiteCmdCtx *c);

/* One command opcode: its handler and its name (for the trace). */
typedef struct KiteCmdOp {
    KiteCmdFn *fn;
    const char *name;
} KiteCmdOp;

#define KITE_CMD_OP(op, handler) \
    [KITE_CMD_##op] = { .fn = (handler), .name = #op }

static const KiteCmdOp kite_cmd_ops[256] = {
    KITE_CMD_OP(NOP, kite_cmd_nop),
    KITE_CMD_OP(QUERY_DEVICE, kite_cmd_query_device),
    KITE_CMD_OP(QUERY_PORT, kite_cmd_query_port),
    KITE_CMD_OP(QUERY_STATS, kite_cmd_query_stats),
    KITE_CMD_OP(ALLOC_UCTX, kite_cmd_alloc_uctx),
    KITE_CMD_OP(DEALLOC_UCTX, kite_cmd_dealloc_uctx),
    KITE_CMD_OP(ALLOC_PD, kite_cmd_alloc_pd),
    KITE_CMD_OP(DEALLOC_PD, kite_cmd_dealloc_pd),
    KITE_CMD_OP(ALLOC_XRCD, kite_cmd_alloc_xrcd),
    KITE_CMD_OP(DEALLOC_XRCD, kite_cmd_dealloc_xrcd),
    KITE_CMD_OP(CREATE_EQ, kite_cmd_create_eq),
    KITE_CMD_OP(DESTROY_EQ, kite_cmd_destroy_eq),
    KITE_CMD_OP(CREATE_CQ, kite_cmd_create_cq),
    KITE_CMD_OP(QUERY_CQ, kite_cmd_query_cq),
    KITE_CMD_OP(MODIFY_CQ, kite_cmd_modify_cq),
    KITE_CMD_OP(DESTROY_CQ, kite_cmd_destroy_cq),
    KITE_CMD_OP(CREATE_QP, kite_cmd_create_qp),
    KITE_CMD_OP(MODIFY_QP, kite_cmd_modify_qp),
    KITE_CMD_OP(QUERY_QP, kite_cmd_query_qp),
    KITE_CMD_OP(DESTROY_QP, kite_cmd_destroy_qp),
    KITE_CMD_OP(REG_MR, kite_cmd_reg_mr),
    KITE_CMD_OP(ALLOC_MR, kite_cmd_alloc_mr),
    KITE_CMD_OP(DEREG_MR, kite_cmd_dereg_mr),
    KITE_CMD_OP(REREG_MR, kite_cmd_rereg_mr),
    KITE_CMD_OP(ALLOC_MW, kite_cmd_alloc_mw),
    KITE_CMD_OP(DEALLOC_MW, kite_cmd_dealloc_mw),
    KITE_CMD_OP(ADD_GID, kite_cmd_add_gid),
    KITE_CMD_OP(DEL_GID, kite_cmd_del_gid),
    KITE_CMD_OP(CREATE_SRQ, kite_cmd_create_srq),
    KITE_CMD_OP(MODIFY_SRQ, kite_cmd_modify_srq),
    KITE_CMD_OP(QUERY_SRQ, kite_cmd_query_srq),
    KITE_CMD_OP(DESTROY_SRQ, kite_cmd_destroy_srq),
    KITE_CMD_OP(ALLOC_CNTR, kite_cmd_alloc_cntr),
    KITE_CMD_OP(DEALLOC_CNTR, kite_cmd_dealloc_cntr),
    KITE_CMD_OP(QUERY_CNTR, kite_cmd_query_cntr),
    KITE_CMD_OP(SET_QP_CNTR, kite_cmd_set_qp_cntr),
    KITE_CMD_OP(ATTACH_MCAST, kite_cmd_attach_mcast),
    KITE_CMD_OP(DETACH_MCAST, kite_cmd_detach_mcast),
};

static uint32_t kite_cmdq_depth(KiteState *s)
{
    return 1U << FIELD_GET(KITE_CMDQ_CFG_LOG_DEPTH, s->rdma.cmdq_cfg);
}

static uint64_t kite_cmdq_base(KiteState *s)
{
    return (uint64_t)s->rdma.cmdq_base_hi << 32 | s->rdma.cmdq_base_lo;
}

static bool kite_cmdq_runnable(KiteState *s)
{
    KiteRdma *r = &s->rdma;

    return kite_ready(s) && (r->cmdq_cfg & KITE_CMDQ_CFG_ENABLE) &&
           !(r->cmdq_status & KITE_CMDQ_STATUS_HALTED) &&
           !r->fault_cmd_hang && r->cmdq_pi != r->cmdq_ci;
}

/* kite_cmdq_exec() failed a DMA to or from the entry (kite_dma_error()). */
static void kite_cmdq_halt(KiteState *s)
{
    trace_kite_cmdq_halt(s->rdma.cmdq_ci);
    s->rdma.cmdq_status |= KITE_CMDQ_STATUS_HALTED | KITE_CMDQ_STATUS_DMA_ERR;
    kite_guest_error(s, "command queue entry %u unreachable: halted",
                     s->rdma.cmdq_ci);
}

/* Execute the command at @entry; false if the entry was unreachable. */
static bool kite_cmdq_exec(KiteState *s, uint64_t entry)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    struct kite_cmd cmd;
    KiteCmdCtx c = {};
    uint32_t opcode, cookie, status;
    uint64_t out_addr;
    KiteCmdFn *fn;
    MemTxResult r;

    if (pci_dma_read(pdev, entry, &cmd, sizeof(cmd)) != MEMTX_OK) {
        kite_dma_error(s, "command entry", entry, sizeof(cmd), false);
        return false;
    }
    opcode = FIELD_GET(KITE_CMD_OPCODE, le32_to_cpu(cmd.opcode));
    cookie = le32_to_cpu(cmd.cookie);
    c.in_len = le16_to_cpu(cmd.in_len);
    c.out_len = le16_to_cpu(cmd.out_len);
    out_addr = le64_to_cpu(cmd.out_addr);
    c.out_dma = out_addr != 0;
    memcpy(c.in, cmd.payload, sizeof(c.in));
    fn = kite_cmd_ops[opcode].fn;
    trace_kite_cmd_submit(s->rdma.cmdq_ci, opcode,
                          kite_cmd_ops[opcode].name ?: "(unknown)", cookie,
                          c.in_len, c.out_len, out_addr);

    if (s->rdma.fault_cmd_opcode == opcode) {
        c.code = s->rdma.fault_cmd_status;
    } else if (c.in_len > KITE_CMD_PAYLOAD_SIZE ||
               (!c.out_dma && c.out_len > KITE_CMD_PAYLOAD_SIZE)) {
        c.code = KITE_CMD_E_LENGTH;
    } else if (!fn) {
        c.code = KITE_CMD_E_OPCODE;
    } else {
        /* Input beyond in_len reads as zero. */
        memset(c.in + c.in_len, 0, sizeof(c.in) - c.in_len);
        c.out = g_malloc0(MAX(c.out_len, 1));
        fn(s, &c);
    }

    /* Output first, then result, then the status word. */
    if (c.code == KITE_CMD_OK && c.out_size) {
        assert(c.out_size <= c.out_len);
        if (c.out_dma) {
            r = pci_dma_write(pdev, out_addr, c.out, c.out_size);
            if (r != MEMTX_OK) {
                kite_dma_error(s, "command output", out_addr, c.out_size,
                               true);
                c.code = KITE_CMD_E_DMA;
                c.result = 0;
            }
        } else if (pci_dma_write(pdev, entry + KITE_CMD_PAYLOAD_OFF, c.out,
                                 c.out_size) != MEMTX_OK) {
            kite_dma_error(s, "command entry output",
                           entry + KITE_CMD_PAYLOAD_OFF, c.out_size, true);
            g_free(c.out);
            return false;
        }
    }
    g_free(c.out);
    if (c.code != KITE_CMD_OK) {
        c.result = 0;
    }
    if (s->fuzz.count) {
        if (c.result && kite_fault_take(s, KITE_FAULT_CMD_RESULT)) {
            /* Numbers, keys and counts all stay below bit 31. */
            c.result ^= kite_fault_rand(s) | BIT(31);
        } else if (kite_fault_take(s, KITE_FAULT_CMD_STATUS)) {
            c.code = KITE_CMD_E_NEVER +
                     kite_fault_rand(s) % (0x100 - KITE_CMD_E_NEVER);
        }
    }
    status = KITE_CMD_STATUS_DONE |
             FIELD_PREP(KITE_CMD_STATUS_CODE, c.code) |
             FIELD_PREP(KITE_CMD_STATUS_SYNDROME, c.syndrome);
    if (stl_le_pci_dma(pdev, entry + KITE_CMD_RESULT_OFF, c.result,
                       MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        kite_dma_error(s, "command result", entry + KITE_CMD_RESULT_OFF,
                       sizeof(uint32_t), true);
        return false;
    }
    if (stl_le_pci_dma(pdev, entry + KITE_CMD_STATUS_OFF, status,
                       MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        kite_dma_error(s, "command status", entry + KITE_CMD_STATUS_OFF,
                       sizeof(uint32_t), true);
        return false;
    }
    trace_kite_cmd_complete(s->rdma.cmdq_ci, opcode, cookie, c.code,
                            c.syndrome, c.result);
    s->rdma.cmdq_ci++;
    s->stats[KITE_STAT_CMDS]++;
    if (c.code != KITE_CMD_OK) {
        s->stats[KITE_STAT_CMD_ERRORS]++;
    }
    if (s->rdma.eq[0].valid) {
        kite_eq_post(s, 0, KITE_EQE_CMD_DONE, cookie, status);
    }
    return true;
}

static void kite_cmdq_bh(void *opaque)
{
    KiteState *s = opaque;
    KiteRdma *r = &s->rdma;
    uint32_t depth = kite_cmdq_depth(s);
    int budget;

    for (budget = KITE_CMDQ_BUDGET; budget > 0; budget--) {
        if (!kite_cmdq_runnable(s)) {
            return;
        }
        if (!kite_cmdq_exec(s, kite_cmdq_base(s) +
                            (uint64_t)(r->cmdq_ci & (depth - 1)) *
                            KITE_CMD_ENTRY_SIZE)) {
            kite_cmdq_halt(s);
            return;
        }
    }
    if (kite_cmdq_runnable(s)) {
        qemu_bh_schedule(r->cmdq_bh);
    }
}

static void kite_cmdq_kick(KiteState *s)
{
    if (kite_cmdq_runnable(s)) {
        qemu_bh_schedule(s->rdma.cmdq_bh);
    }
}

/* RDMA registers */

uint32_t kite_rdma_read(KiteState *s, hwaddr off)
{
    KiteRdma *r = &s->rdma;

    switch (off) {
    case KITE_RDMA_CMDQ_BASE_LO:
        return r->cmdq_base_lo;
    case KITE_RDMA_CMDQ_BASE_HI:
        return r->cmdq_base_hi;
    case KITE_RDMA_CMDQ_CFG:
        return r->cmdq_cfg;
    case KITE_RDMA_CMDQ_CI:
        return r->cmdq_ci;
    case KITE_RDMA_CMDQ_STATUS:
        return r->cmdq_status;
    case KITE_RDMA_CMD_TIMEOUT:
        return FIELD_PREP(KITE_CMD_TIMEOUT_MS, s->cmd_timeout_ms);
    case KITE_RDMA_CLOCK_LO:
        return (uint32_t)kite_clock_ns();
    case KITE_RDMA_CLOCK_HI:
        return kite_clock_ns() >> 32;
    default:
        /* KITE_RDMA_CMDQ_PI is write-only. */
        return 0;
    }
}

static void kite_cmdq_write_cfg(KiteState *s, uint32_t val)
{
    KiteRdma *r = &s->rdma;
    unsigned log = FIELD_GET(KITE_CMDQ_CFG_LOG_DEPTH, val);

    trace_kite_cmdq_cfg(val, kite_cmdq_base(s));
    if (!(val & KITE_CMDQ_CFG_ENABLE)) {
        r->cmdq_cfg = val & KITE_CMDQ_CFG_LOG_DEPTH;
        r->cmdq_pi = 0;
        r->cmdq_ci = 0;
        r->cmdq_status = 0;
        qemu_bh_cancel(r->cmdq_bh);
        return;
    }
    if (r->cmdq_cfg & KITE_CMDQ_CFG_ENABLE) {
        kite_guest_error(s, "CMDQ_CFG write 0x%x while enabled", val);
        return;
    }
    if (val & ~(KITE_CMDQ_CFG_ENABLE | KITE_CMDQ_CFG_LOG_DEPTH)) {
        kite_guest_error(s, "CMDQ_CFG: reserved bits set in 0x%x", val);
    }
    if (log < 1 || log > KITE_CMDQ_MAX_LOG_DEPTH ||
        (kite_cmdq_base(s) & (KITE_PBL_PAGE_SIZE - 1))) {
        kite_guest_error(s, "CMDQ_CFG 0x%x: bad depth or base 0x%" PRIx64
                         ", not enabled", val, kite_cmdq_base(s));
        r->cmdq_cfg = val & KITE_CMDQ_CFG_LOG_DEPTH;
        return;
    }
    r->cmdq_cfg = val & (KITE_CMDQ_CFG_ENABLE | KITE_CMDQ_CFG_LOG_DEPTH);
    r->cmdq_pi = 0;
    r->cmdq_ci = 0;
    r->cmdq_status = 0;
}

void kite_rdma_write(KiteState *s, hwaddr off, uint32_t val)
{
    KiteRdma *r = &s->rdma;
    bool enabled = r->cmdq_cfg & KITE_CMDQ_CFG_ENABLE;

    if (!kite_ready(s)) {
        kite_guest_error(s, "RDMA register 0x%" HWADDR_PRIx " write 0x%x "
                         "while not ready", off, val);
        return;
    }
    switch (off) {
    case KITE_RDMA_CMDQ_BASE_LO:
    case KITE_RDMA_CMDQ_BASE_HI:
        if (enabled) {
            kite_guest_error(s, "CMDQ_BASE write 0x%x while enabled", val);
        } else if (off == KITE_RDMA_CMDQ_BASE_LO) {
            r->cmdq_base_lo = val;
        } else {
            r->cmdq_base_hi = val;
        }
        break;
    case KITE_RDMA_CMDQ_CFG:
        kite_cmdq_write_cfg(s, val);
        break;
    case KITE_RDMA_CMDQ_PI:
        trace_kite_db_cmdq(val, r->cmdq_ci);
        if (!enabled) {
            kite_guest_error(s, "CMDQ_PI write 0x%x while disabled", val);
            break;
        }
        if (val - r->cmdq_ci > kite_cmdq_depth(s)) {
            kite_guest_error(s, "CMDQ_PI 0x%x more than depth ahead of "
                             "CI 0x%x", val, r->cmdq_ci);
            r->cmdq_status |= KITE_CMDQ_STATUS_BAD_PI;
            break;
        }
        r->cmdq_pi = val;
        kite_cmdq_kick(s);
        break;
    case KITE_RDMA_CMDQ_CI:
    case KITE_RDMA_CMDQ_STATUS:
    case KITE_RDMA_CLOCK_LO:
    case KITE_RDMA_CLOCK_HI:
    case KITE_RDMA_CMD_TIMEOUT:
        kite_guest_error(s, "write 0x%x to read-only RDMA register 0x%"
                         HWADDR_PRIx, val, off);
        break;
    default:
        kite_guest_error(s, "write 0x%x to unknown RDMA register 0x%"
                         HWADDR_PRIx, val, off);
        break;
    }
}

/* RoCEv2 frames from the Ethernet function go to the data engine. */
void kite_rdma_receive(KiteState *s, const uint8_t *buf, size_t len)
{
    s->stats[KITE_STAT_ROCE_RX_PKTS]++;
    /* Only kite_loss.c's copies are ever written to. */
    kite_loss_frame(s, KITE_LOSS_RX, (uint8_t *)buf, len);
}

/* Device-side fuzzing */

static const char *const kite_fault_names[KITE_FAULT_COUNT] = {
    [KITE_FAULT_CQE_CQN] = "cqe-cqn",
    [KITE_FAULT_CQE_QPN] = "cqe-qpn",
    [KITE_FAULT_CQE_WQE_IDX] = "cqe-wqe-idx",
    [KITE_FAULT_CQE_OPCODE] = "cqe-opcode",
    [KITE_FAULT_CQE_LEN] = "cqe-len",
    [KITE_FAULT_CQE_OWNER] = "cqe-owner",
    [KITE_FAULT_CQE_SYNDROME] = "cqe-syndrome",
    [KITE_FAULT_EQE_TYPE] = "eqe-type",
    [KITE_FAULT_EQE_OBJ] = "eqe-obj",
    [KITE_FAULT_CMD_COOKIE] = "cmd-cookie",
    [KITE_FAULT_CMD_STATUS] = "cmd-status",
    [KITE_FAULT_CMD_RESULT] = "cmd-result",
    [KITE_FAULT_REG_STATUS] = "reg-status",
    [KITE_FAULT_REG_VERSION] = "reg-version",
};

/* xorshift64*: reproducible from fault-seed, never stuck at zero. */
uint32_t kite_fault_rand(KiteState *s)
{
    uint64_t x = s->fuzz.rng ? s->fuzz.rng : 0x9e3779b97f4a7c15ULL;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->fuzz.rng = x;
    return (x * 0x2545f4914f6cdd1dULL) >> 32;
}

/*
 * Whether to corrupt this instance of class @f: the class is armed and
 * corruptions are left. With several classes armed (a random mix), only one
 * chance in four is taken, so that the mix spreads over the classes.
 */
bool kite_fault_take(KiteState *s, KiteFault f)
{
    KiteFuzz *z = &s->fuzz;

    if (!z->count || !(z->mask & BIT(f))) {
        return false;
    }
    if (ctpop32(z->mask) > 1 && (kite_fault_rand(s) & 3)) {
        return false;
    }
    z->count--;
    z->injected[f]++;
    trace_kite_fault_inject(kite_fault_names[f]);
    qemu_log_mask(LOG_GUEST_ERROR, "kite: fuzz: injected %s\n",
                  kite_fault_names[f]);
    return true;
}

/* A register read: STATUS or HW_REV, possibly corrupted. */
uint32_t kite_fault_reg(KiteState *s, hwaddr off, uint32_t val)
{
    if (!s->fuzz.count || !kite_ready(s)) {
        return val;
    }
    if (off == KITE_REG_STATUS &&
        kite_fault_take(s, KITE_FAULT_REG_STATUS)) {
        /* Reserved bits set and READY clear while not resetting. */
        return ((val & ~KITE_STATUS_READY) | (kite_fault_rand(s) << 16) |
                BIT(31)) & ~KITE_STATUS_RESETTING;
    }
    if (off == KITE_REG_HW_REV &&
        kite_fault_take(s, KITE_FAULT_REG_VERSION)) {
        /* Another major revision. */
        return val ^ (kite_fault_rand(s) | BIT(31));
    }
    return val;
}

/*
 * A CQE about to be written (not a RESIZE CQE): at most one field
 * corrupted, with a value the driver can tell is wrong.
 */
void kite_fault_cqe(KiteState *s, struct kite_cqe *cqe, bool *flip_owner)
{
    uint32_t op_own = le32_to_cpu(cqe->op_own);
    uint32_t op = FIELD_GET(KITE_CQE_OPCODE, op_own);
    bool recv = op == KITE_CQE_OP_RESP_SEND ||
                op == KITE_CQE_OP_RESP_SEND_IMM ||
                op == KITE_CQE_OP_RESP_SEND_INV;
    bool req = op == KITE_CQE_OP_REQ || op == KITE_CQE_OP_REQ_ERR;

    if (kite_fault_take(s, KITE_FAULT_CQE_QPN)) {
        /* The model's QPNs are below KITE_MAX_QP. */
        cqe->qpn = cpu_to_le32((kite_fault_rand(s) | BIT(23)) &
                               KITE_OBJ_MASK);
    } else if (kite_fault_take(s, KITE_FAULT_CQE_WQE_IDX)) {
        /* 0x4000..0xbfff ahead: beyond any ring (at most 4096 WQEs). */
        cqe->wqe_idx = cpu_to_le16(le16_to_cpu(cqe->wqe_idx) + 0x4000 +
                                   kite_fault_rand(s) % 0x8000);
    } else if (kite_fault_take(s, KITE_FAULT_CQE_OPCODE)) {
        /* Between RESIZE and REQ_ERR: undefined; INVALID is never written. */
        op_own &= ~KITE_CQE_OPCODE;
        op_own |= FIELD_PREP(KITE_CQE_OPCODE, KITE_CQE_OP_RESIZE + 1 +
                             kite_fault_rand(s) %
                             (KITE_CQE_OP_REQ_ERR - KITE_CQE_OP_RESIZE - 1));
    } else if (recv && kite_fault_take(s, KITE_FAULT_CQE_LEN)) {
        /* Only a received SEND's length is bounded by the posted WQE. */
        cqe->byte_len = cpu_to_le32(kite_fault_rand(s) | BIT(31));
    } else if (kite_fault_take(s, KITE_FAULT_CQE_OWNER)) {
        *flip_owner = true;
    } else if (kite_fault_take(s, KITE_FAULT_CQE_SYNDROME)) {
        /* ABORTED is the highest syndrome defined. */
        op_own &= ~KITE_CQE_OPCODE;
        op_own |= FIELD_PREP(KITE_CQE_OPCODE, req ? KITE_CQE_OP_REQ_ERR :
                                                    KITE_CQE_OP_RESP_ERR);
        cqe->syndrome = cpu_to_le32(
            FIELD_PREP(KITE_CQE_SYNDROME, KITE_SYND_ABORTED + 1 +
                       kite_fault_rand(s) % (0xff - KITE_SYND_ABORTED)) |
            FIELD_PREP(KITE_CQE_VENDOR_SYNDROME, kite_fault_rand(s) & 0xff));
        cqe->byte_len = 0;
    }
    cqe->op_own = cpu_to_le32(op_own);
}

static void kite_get_fault_corrupt(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    KiteFuzz *z = &KITE(obj)->fuzz;
    GString *str = g_string_new("");
    char *value;
    int i;

    for (i = 0; i < KITE_FAULT_COUNT; i++) {
        if (z->mask & BIT(i)) {
            g_string_append_printf(str, "%s%s", str->len ? "," : "",
                                   kite_fault_names[i]);
        }
    }
    value = g_string_free(str, false);
    visit_type_str(v, name, &value, errp);
    g_free(value);
}

/* "none", "all", or a comma-separated list of class names. */
static void kite_set_fault_corrupt(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    g_autofree char *value = NULL;
    g_auto(GStrv) names = NULL;
    uint32_t mask = 0;
    int i, j;

    if (!visit_type_str(v, name, &value, errp)) {
        return;
    }
    if (!strcmp(value, "all")) {
        mask = BIT(KITE_FAULT_COUNT) - 1;
    } else if (strcmp(value, "none") && value[0]) {
        names = g_strsplit(value, ",", -1);
        for (i = 0; names[i]; i++) {
            for (j = 0; j < KITE_FAULT_COUNT; j++) {
                if (!strcmp(names[i], kite_fault_names[j])) {
                    break;
                }
            }
            if (j == KITE_FAULT_COUNT) {
                error_setg(errp, "%s: unknown class '%s'", name, names[i]);
                return;
            }
            mask |= BIT(j);
        }
    }
    KITE(obj)->fuzz.mask = mask;
}

static void kite_set_fault_seed(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    uint64_t value;

    if (!visit_type_uint64(v, name, &value, errp)) {
        return;
    }
    KITE(obj)->fuzz.rng = value;
}

/* "class=N ..." for every class injected at least once. */
static void kite_get_fault_injected(Object *obj, Visitor *v,
                                    const char *name, void *opaque,
                                    Error **errp)
{
    KiteFuzz *z = &KITE(obj)->fuzz;
    GString *str = g_string_new("");
    char *value;
    int i;

    for (i = 0; i < KITE_FAULT_COUNT; i++) {
        if (z->injected[i]) {
            g_string_append_printf(str, "%s%s=%u", str->len ? " " : "",
                                   kite_fault_names[i], z->injected[i]);
        }
    }
    value = g_string_free(str, false);
    visit_type_str(v, name, &value, errp);
    g_free(value);
}

/* Fault injection properties */

static bool kite_get_fault_hang(Object *obj, Error **errp)
{
    return KITE(obj)->rdma.fault_cmd_hang;
}

static void kite_set_fault_hang(Object *obj, bool value, Error **errp)
{
    KiteState *s = KITE(obj);

    s->rdma.fault_cmd_hang = value;
    if (s->rdma.cmdq_bh) {
        kite_cmdq_kick(s);
    }
}

static void kite_get_fault_opcode(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    int32_t value = KITE(obj)->rdma.fault_cmd_opcode;

    visit_type_int32(v, name, &value, errp);
}

static void kite_set_fault_opcode(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    int32_t value;

    if (!visit_type_int32(v, name, &value, errp)) {
        return;
    }
    if (value < -1 || value > 0xff) {
        error_setg(errp, "%s must be -1 (off) or an opcode 0..255", name);
        return;
    }
    KITE(obj)->rdma.fault_cmd_opcode = value;
}

static void kite_set_debug_cqe(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    uint32_t value;

    if (!visit_type_uint32(v, name, &value, errp)) {
        return;
    }
    kite_debug_cqe(KITE(obj), value);
}

void kite_rdma_instance_init(KiteState *s)
{
    Object *obj = OBJECT(s);

    s->rdma.fault_cmd_opcode = -1;
    object_property_add_bool(obj, "fault-cmd-hang", kite_get_fault_hang,
                             kite_set_fault_hang);
    object_property_add(obj, "fault-cmd-opcode", "int32",
                        kite_get_fault_opcode, kite_set_fault_opcode,
                        NULL, NULL);
    object_property_add_uint8_ptr(obj, "fault-cmd-status",
                                  &s->rdma.fault_cmd_status,
                                  OBJ_PROP_FLAG_READWRITE);
    object_property_add_uint32_ptr(obj, "dropped-events",
                                   &s->rdma.dropped_events,
                                   OBJ_PROP_FLAG_READ);
    /* Fault injection: the next N RoCEv2 frames sent get a bad ICRC. */
    object_property_add_uint32_ptr(obj, "fault-icrc", &s->rdma.fault_icrc,
                                   OBJ_PROP_FLAG_READWRITE);
    /*
     * Test hook: writing CQN | KITE_DEBUG_CQE_* flags makes the device
     * write one synthetic CQE to that CQ through kite_cq_write_cqe().
     */
    object_property_add(obj, "debug-cqe", "uint32", NULL, kite_set_debug_cqe,
                        NULL, NULL);
    /* Device-side fuzzing (kite_fault_take()); survives device resets. */
    object_property_add(obj, "fault-corrupt", "str", kite_get_fault_corrupt,
                        kite_set_fault_corrupt, NULL, NULL);
    object_property_add_uint32_ptr(obj, "fault-corrupt-count",
                                   &s->fuzz.count, OBJ_PROP_FLAG_READWRITE);
    object_property_add(obj, "fault-seed", "uint64", NULL,
                        kite_set_fault_seed, NULL, NULL);
    object_property_add(obj, "fault-injected", "str",
                        kite_get_fault_injected, NULL, NULL, NULL);
    kite_loss_instance_init(s);
    kite_rc_instance_init(s);
}

/* Lifecycle */

void kite_rdma_init(KiteState *s)
{
    s->rdma.cmdq_bh = qemu_bh_new_guarded(kite_cmdq_bh, s,
                                          &DEVICE(s)->mem_reentrancy_guard);
    s->rdma.db_bh = qemu_bh_new_guarded(kite_db_bh, s,
                                        &DEVICE(s)->mem_reentrancy_guard);
    kite_engine_init(s);
    kite_cntr_reset(s);
}

void kite_rdma_reset(KiteState *s)
{
    KiteRdma *r = &s->rdma;
    uint32_t i;

    qemu_bh_cancel(r->cmdq_bh);
    qemu_bh_cancel(r->db_bh);
    kite_engine_reset(s);
    kite_queue_reset(s);
    kite_mcast_reset(s);
    for (i = 0; i < KITE_MAX_MR; i++) {
        kite_pbl_free(&r->mr[i].pbl);
    }
    memset(r->mr, 0, sizeof(r->mr));
    memset(r->pd, 0, sizeof(r->pd));
    memset(r->xrcd, 0, sizeof(r->xrcd));
    memset(r->uctx, 0, sizeof(r->uctx));
    memset(r->gid, 0, sizeof(r->gid));
    r->cmdq_base_lo = 0;
    r->cmdq_base_hi = 0;
    r->cmdq_cfg = 0;
    r->cmdq_pi = 0;
    r->cmdq_ci = 0;
    r->cmdq_status = 0;
    r->dropped_events = 0;
    r->fault_icrc = 0;
    r->next_qpn = 2;
}

void kite_rdma_exit(KiteState *s)
{
    if (!s->rdma.cmdq_bh) {
        return;
    }
    kite_rdma_reset(s);
    qemu_bh_delete(s->rdma.cmdq_bh);
    qemu_bh_delete(s->rdma.db_bh);
    kite_engine_exit(s);
    s->rdma.cmdq_bh = NULL;
    s->rdma.db_bh = NULL;
}
