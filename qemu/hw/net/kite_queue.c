/*
 * Kite NIC: event queues, completion queues, queue pairs and doorbells.
 *
 * Event queues: the device writes 16-byte EQEs (owner dword last) and
 * raises the EQ's MSI-X vector once per arm. EQ0 (the control EQ) takes
 * command completions and asynchronous events.
 *
 * Completion queues: kite_cq_write_cqe() is the single way a CQE is
 * written: it checks for overflow against the consumer index in the
 * doorbell record, writes the CQE with the owner bit last and runs the
 * event state machine (arming with the cmd_sn duplicate rule, moderation
 * by count and by a virtual-clock timer).
 *
 * Queue pairs: the state machine and attribute rules of MODIFY_QP. SQ/RQ
 * doorbells record the producer index and kick the data engine
 * (kite_engine.c), which executes and flushes work requests. An XRC
 * initiator has an SQ only, an XRC target no queue at all (it belongs to
 * an XRC domain and receives into the XRC SRQs its requests name).
 *
 * Doorbells (BAR2) are latched in the MMIO handler; anything that needs
 * DMA or raises an interrupt runs in the doorbell bottom half.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"

#include "kite_int.h"
#include "trace.h"

#define KITE_EQE_SHIFT          4
#define KITE_CQE_OWNER_OFF      offsetof(struct kite_cqe, op_own)

/* Event queues */

static KiteEQ *kite_eq_lookup(KiteState *s, uint32_t eqn)
{
    if (eqn >= KITE_MAX_EQ || !s->rdma.eq[eqn].valid) {
        return NULL;
    }
    return &s->rdma.eq[eqn];
}

/*
 * Adaptive interrupt moderation of a completion EQ (prm_eq.rst,
 * "Interrupt moderation"): an interrupt that covers
 * KITE_EQ_MOD_PROBE_CQES CQEs or more without being held doubles the
 * hold-off (from KITE_EQ_MOD_STEP_US), and each held interrupt adapts it
 * to what the hold brought. A hold ends early when the CQEs pause for
 * KITE_EQ_MOD_QUIET times their shortest spacing in it (at least
 * KITE_EQ_MOD_QUIET_MIN_US; half the hold-off before the first).
 */
#define KITE_EQ_MOD_STEP_US     32
#define KITE_EQ_MOD_PROBE_CQES  3
#define KITE_EQ_MOD_QUIET       4
#define KITE_EQ_MOD_QUIET_MIN_US 8

/* The hold-off after an interrupt at @now: prm_eq.rst's rules, in order. */
static uint32_t kite_eq_mod_next(const KiteEQ *eq, int64_t now)
{
    uint32_t h = eq->mod_hold_us;

    if (!eq->mod_held) {
        /* Not held: several completions per interrupt hold longer. */
        if (eq->mod_cqes >= KITE_EQ_MOD_PROBE_CQES) {
            h = MIN(MAX(h * 2, KITE_EQ_MOD_STEP_US), eq->mod_max_us);
        }
        return h;
    }
    if (!eq->mod_held_cqes) {
        /* Nothing else came: one request at a time. */
        return 0;
    }
    if (eq->mod_cqes >= 2U * eq->mod_target) {
        /* More than enough. */
        h /= 2;
        return h < KITE_EQ_MOD_STEP_US ? 0 : h;
    }
    if (now < eq->mod_due) {
        /* The CQEs paused: a burst ended before the hold-off did. */
        return h;
    }
    if (eq->mod_cqes < eq->mod_target) {
        return MIN(h * 2, eq->mod_max_us);
    }
    return h;
}

/*
 * When a held interrupt is raised, at @now: at the hold-off's end, or
 * earlier once the CQEs pause (the quiet time after the last).
 */
static void kite_eq_mod_schedule(KiteEQ *eq, int64_t now)
{
    int64_t quiet = (int64_t)eq->mod_hold_us * SCALE_US / 2;

    if (eq->mod_min_gap < quiet / KITE_EQ_MOD_QUIET) {
        quiet = MAX(KITE_EQ_MOD_QUIET * eq->mod_min_gap,
                    (int64_t)KITE_EQ_MOD_QUIET_MIN_US * SCALE_US);
    }
    timer_mod(eq->mod_timer, MIN(eq->mod_due, now + quiet));
}

/* Raise the EQ's vector and disarm it; a moderated EQ adapts its hold-off. */
static void kite_eq_raise(KiteState *s, uint32_t eqn, KiteEQ *eq)
{
    int64_t now;
    uint32_t h;

    eq->armed = false;
    if (eq->mod_max_us) {
        now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        h = kite_eq_mod_next(eq, now);
        trace_kite_eq_mod(eqn, eq->mod_held, eq->mod_cqes, eq->mod_held_cqes,
                          eq->mod_hold_us, h);
        eq->mod_hold_us = h;
        eq->mod_held = false;
        eq->mod_cqes = 0;
        eq->mod_held_cqes = 0;
        eq->mod_last_raise = now;
        timer_del(eq->mod_timer);
    }
    kite_raise_vector(s, eq->vector);
}

/*
 * The armed EQ @eq has an EQE software has not consumed: raise its vector
 * now, or for a moderated EQ within its hold-off of the last interrupt
 * hold it (the EQ stays armed until then).
 */
static void kite_eq_fire(KiteState *s, uint32_t eqn, KiteEQ *eq)
{
    int64_t now;

    if (eq->mod_held) {
        return;
    }
    if (eq->mod_hold_us) {
        now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        eq->mod_due = eq->mod_last_raise + (int64_t)eq->mod_hold_us * SCALE_US;
        if (now < eq->mod_due) {
            eq->mod_held = true;
            eq->mod_last_cqe = now;
            eq->mod_min_gap = INT64_MAX;
            kite_eq_mod_schedule(eq, now);
            return;
        }
    }
    kite_eq_raise(s, eqn, eq);
}

static void kite_eq_mod_timer(void *opaque)
{
    KiteEQ *eq = opaque;

    if (eq->valid && eq->mod_held && eq->armed) {
        kite_eq_raise(eq->s, eq - eq->s->rdma.eq, eq);
    }
}

/* A CQE was written to a CQ of EQ @eqn: the moderation counts it. */
static void kite_eq_mod_cqe(KiteState *s, uint32_t eqn)
{
    KiteEQ *eq = kite_eq_lookup(s, eqn);
    int64_t now;

    if (!eq || !eq->mod_max_us) {
        return;
    }
    eq->mod_cqes++;
    if (eq->mod_held) {
        now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        eq->mod_held_cqes++;
        eq->mod_min_gap = MIN(eq->mod_min_gap, now - eq->mod_last_cqe);
        eq->mod_last_cqe = now;
        kite_eq_mod_schedule(eq, now);
    }
}

/* Free what an EQ holds and mark its slot free. */
static void kite_eq_free(KiteEQ *eq)
{
    if (eq->mod_timer) {
        timer_free(eq->mod_timer);
    }
    kite_pbl_free(&eq->pbl);
    memset(eq, 0, sizeof(*eq));
}

void kite_eq_post(KiteState *s, uint32_t eqn, uint8_t type, uint32_t obj,
                  uint32_t data)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    KiteEQ *eq = kite_eq_lookup(s, eqn);
    uint32_t depth, owner;
    struct kite_eqe eqe;
    uint64_t addr;

    if (!eq) {
        trace_kite_eqe_dropped(eqn, type, obj);
        s->rdma.dropped_events++;
        return;
    }
    depth = 1U << eq->log_depth;
    if ((uint16_t)(eq->pi - eq->ci) >= depth) {
        trace_kite_eq_overflow(eqn, type, obj);
        s->stats[KITE_STAT_EQ_OVERFLOWS]++;
        if (!eq->overflowed) {
            eq->overflowed = true;
            /* EQ0's own overflow is dropped: nowhere to report it. */
            if (eqn != 0) {
                kite_eq_post(s, 0, KITE_EQE_EQ_OVERFLOW, eqn, 0);
            }
        }
        return;
    }

    if (s->fuzz.count) {
        if (type == KITE_EQE_CMD_DONE &&
            kite_fault_take(s, KITE_FAULT_CMD_COOKIE)) {
            obj ^= kite_fault_rand(s) | BIT(31);
        } else if (kite_fault_take(s, KITE_FAULT_EQE_TYPE)) {
            /* DEVICE_FATAL is the highest type defined. */
            type = KITE_EQE_DEVICE_FATAL + 1 +
                   kite_fault_rand(s) % (0xff - KITE_EQE_DEVICE_FATAL);
        } else if (type != KITE_EQE_CMD_DONE &&
                   kite_fault_take(s, KITE_FAULT_EQE_OBJ)) {
            /* (A CMD_DONE's object is its cookie: cmd-cookie.) */
            obj ^= kite_fault_rand(s) | BIT(31);
        }
    }
    owner = kite_owner_phase(eq->pi, eq->log_depth);
    eqe.type_owner = cpu_to_le32(FIELD_PREP(KITE_EQE_TYPE, type) |
                                 (owner ? KITE_EQE_OWNER : 0));
    eqe.obj = cpu_to_le32(obj);
    eqe.data = cpu_to_le32(data);
    eqe.rsvd = 0;
    addr = kite_pbl_entry(&eq->pbl, eq->pi, eq->log_depth, KITE_EQE_SHIFT);
    /* The body first, the owner dword last. */
    if (pci_dma_write(pdev, addr + 4, (uint8_t *)&eqe + 4,
                      sizeof(eqe) - 4) != MEMTX_OK ||
        pci_dma_write(pdev, addr, &eqe.type_owner, 4) != MEMTX_OK) {
        kite_dma_error(s, "EQE", addr, sizeof(eqe), true);
        kite_guest_error(s, "EQ %u: EQE write to 0x%" PRIx64 " failed",
                         eqn, addr);
        return;
    }
    trace_kite_eqe_post(eqn, eq->pi, type, obj, data, addr);
    eq->pi++;
    eq->overflowed = false;
    s->stats[KITE_STAT_EQES]++;
    if (eq->armed) {
        kite_eq_fire(s, eqn, eq);
    }
}

void kite_async_event(KiteState *s, uint8_t type, uint32_t obj,
                      uint32_t data)
{
    kite_eq_post(s, 0, type, obj, data);
}

void kite_cmd_create_eq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_create_eq in;
    uint32_t cfg, eqn, log, vector, mod;
    KiteEQ *eq;
    KitePbl pbl;

    if (c->in_len < sizeof(in)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, sizeof(in));
    cfg = le32_to_cpu(in.cfg);
    log = FIELD_GET(KITE_EQ_CFG_LOG_DEPTH, cfg);
    vector = FIELD_GET(KITE_EQ_CFG_VECTOR, cfg);
    if ((cfg & ~(KITE_EQ_CFG_LOG_DEPTH | KITE_EQ_CFG_VECTOR |
                 KITE_EQ_CFG_CTRL)) ||
        log < KITE_EQ_MIN_LOG_DEPTH || log > KITE_EQ_MAX_LOG_DEPTH ||
        vector >= KITE_MAX_VECTORS) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_create_eq, cfg));
        return;
    }
    /* Moderation is for completion EQs: commands and errors come at once. */
    mod = le32_to_cpu(in.moderation);
    if ((mod & ~(KITE_EQ_MOD_MAX_US | KITE_EQ_MOD_TARGET)) ||
        (mod && (cfg & KITE_EQ_CFG_CTRL))) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_create_eq, moderation));
        return;
    }
    if (cfg & KITE_EQ_CFG_CTRL) {
        eqn = 0;
        if (s->rdma.eq[0].valid) {
            kite_cmd_err(c, KITE_CMD_E_STATE, 0);
            return;
        }
    } else {
        for (eqn = 1; eqn < KITE_MAX_EQ && s->rdma.eq[eqn].valid; eqn++) {
            /* lowest free */
        }
        if (eqn == KITE_MAX_EQ) {
            kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
            return;
        }
    }
    if (!kite_pbl_load(s, c, offsetof(struct kite_cmd_create_eq, pbl),
                       (uint64_t)KITE_EQE_SIZE << log,
                       KITE_PBL_QUEUE | KITE_PBL_CACHE, &pbl)) {
        return;
    }
    eq = &s->rdma.eq[eqn];
    *eq = (KiteEQ) {
        .valid = true,
        .log_depth = log,
        .vector = vector,
        .cfg = cfg,
        .pbl = pbl,
        .s = s,
        .mod_max_us = FIELD_GET(KITE_EQ_MOD_MAX_US, mod),
        .mod_target = FIELD_GET(KITE_EQ_MOD_TARGET, mod) ?:
                      KITE_EQ_MOD_DEF_TARGET,
    };
    if (eq->mod_max_us) {
        eq->mod_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_eq_mod_timer,
                                     eq);
    }
    c->result = eqn;
}

void kite_cmd_destroy_eq(KiteState *s, KiteCmdCtx *c)
{
    uint32_t eqn, i;
    KiteEQ *eq;

    if (!kite_cmd_obj_in(c, &eqn, false)) {
        return;
    }
    eq = kite_eq_lookup(s, eqn);
    if (!eq) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
        return;
    }
    for (i = 1; i < KITE_MAX_CQ; i++) {
        if (s->rdma.cq[i].valid && s->rdma.cq[i].eqn == eqn) {
            kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
            return;
        }
    }
    clear_bit(eqn, s->rdma.eq_db_pending);
    kite_eq_free(eq);
}

/* Completion queues */

KiteCQ *kite_cq_lookup(KiteState *s, uint32_t cqn)
{
    if (cqn == 0 || cqn >= KITE_MAX_CQ || !s->rdma.cq[cqn].valid) {
        return NULL;
    }
    return &s->rdma.cq[cqn];
}

static bool kite_cq_read_dbrec(KiteState *s, KiteCQ *cq, uint32_t *ci,
                               uint32_t *arm)
{
    struct kite_cq_dbrec rec;

    if (pci_dma_read(PCI_DEVICE(s), cq->dbrec_addr, &rec,
                     sizeof(rec)) != MEMTX_OK) {
        kite_dma_error(s, "CQ doorbell record", cq->dbrec_addr, sizeof(rec),
                       false);
        return false;
    }
    *ci = FIELD_GET(KITE_CQ_DB_CI, le32_to_cpu(rec.ci));
    *arm = le32_to_cpu(rec.arm);
    cq->ci = *ci;
    return true;
}

/*
 * The CQ enters ERROR: no more CQEs, its QPs go to ERR: those whose send
 * or receive CQ it is, and the XRC targets whose last request's SRQ
 * completes in it (a target that names such an SRQ later goes to ERR
 * then, kite_rc.c).
 */
static void kite_cq_error(KiteState *s, KiteCQ *cq, uint32_t why)
{
    uint32_t i;

    if (cq->state == KITE_CQ_STATE_ERROR) {
        return;
    }
    trace_kite_cq_error(cq->cqn, why);
    cq->state = KITE_CQ_STATE_ERROR;
    cq->fire_pending = false;
    timer_del(cq->mod_timer);
    kite_async_event(s, KITE_EQE_CQ_ERROR, cq->cqn, why);
    for (i = 1; i < KITE_MAX_QP; i++) {
        KiteQP *qp = &s->rdma.qp[i];

        if (qp->valid && (qp->send_cqn == cq->cqn ||
                          qp->recv_cqn == cq->cqn ||
                          kite_xrc_tgt_cqn(s, qp) == cq->cqn)) {
            kite_qp_error(s, i);
        }
    }
}

static void kite_cq_fire(KiteState *s, KiteCQ *cq)
{
    trace_kite_cq_fire(cq->cqn, cq->eqn);
    timer_del(cq->mod_timer);
    cq->fire_pending = false;
    cq->arm_state = KITE_CQ_ARM_STATE_FIRED;
    cq->last_fired_sn = cq->last_sn;
    kite_eq_post(s, cq->eqn, KITE_EQE_COMPLETION, cq->cqn, 0);
}

static bool kite_cq_armed(KiteCQ *cq)
{
    return cq->arm_state == KITE_CQ_ARM_STATE_SOLICITED ||
           cq->arm_state == KITE_CQ_ARM_STATE_NEXT;
}

static void kite_cq_mod_timer(void *opaque)
{
    KiteCQ *cq = opaque;

    if (cq->valid && cq->fire_pending && kite_cq_armed(cq)) {
        kite_cq_fire(cq->s, cq);
    }
}

/* A CQE was written: fire now, later (moderation) or not at all. */
static void kite_cq_event(KiteState *s, KiteCQ *cq, bool solicited)
{
    bool trigger;

    if (!kite_cq_armed(cq)) {
        return;
    }
    cq->cqes_since_arm++;
    trigger = cq->arm_state == KITE_CQ_ARM_STATE_NEXT || solicited;
    if (!trigger && !cq->fire_pending) {
        return;
    }
    if ((!cq->mod_count && !cq->mod_period) ||
        (cq->mod_count && cq->cqes_since_arm >= cq->mod_count)) {
        kite_cq_fire(s, cq);
        return;
    }
    if (!cq->fire_pending) {
        cq->fire_pending = true;
        if (cq->mod_period) {
            timer_mod(cq->mod_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      (int64_t)cq->mod_period * SCALE_US);
        }
    }
}

/* Write one CQE slot at index @idx with the owner bit last. */
static bool kite_cq_write_slot(KiteState *s, KiteCQ *cq, uint32_t idx,
                               const struct kite_cqe *cqe, bool flip_owner)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t slot[128] = {};
    uint32_t op_own;
    uint64_t addr;
    size_t size = 1U << cq->cqe_shift;

    memcpy(slot, cqe, sizeof(*cqe));
    op_own = le32_to_cpu(cqe->op_own) & ~KITE_CQE_OWNER;
    op_own |= kite_owner_phase(idx, cq->log_depth) ^ flip_owner ?
              KITE_CQE_OWNER : 0;
    stl_le_p(slot + KITE_CQE_OWNER_OFF, op_own);
    addr = kite_pbl_entry(&cq->pbl, idx, cq->log_depth, cq->cqe_shift);
    if (pci_dma_write(pdev, addr, slot, KITE_CQE_OWNER_OFF) != MEMTX_OK ||
        (size > KITE_CQE_SIZE &&
         pci_dma_write(pdev, addr + KITE_CQE_SIZE, slot + KITE_CQE_SIZE,
                       size - KITE_CQE_SIZE) != MEMTX_OK) ||
        pci_dma_write(pdev, addr + KITE_CQE_OWNER_OFF,
                      slot + KITE_CQE_OWNER_OFF, 4) != MEMTX_OK) {
        kite_dma_error(s, "CQE", addr, size, true);
        return false;
    }
    trace_kite_cqe_write(cq->cqn, idx, FIELD_GET(KITE_CQE_OPCODE, op_own),
                         le32_to_cpu(cqe->qpn), le16_to_cpu(cqe->wqe_idx),
                         le32_to_cpu(cqe->byte_len),
                         le32_to_cpu(cqe->syndrome), addr);
    return true;
}

/* Device-side fuzzing: another valid CQ to misdirect a CQE to, or NULL. */
static KiteCQ *kite_fault_other_cq(KiteState *s, KiteCQ *cq)
{
    uint32_t i, n;

    for (i = 1; i < KITE_MAX_CQ; i++) {
        n = (cq->cqn + i) % KITE_MAX_CQ;
        if (s->rdma.cq[n].valid && s->rdma.cq[n].state == KITE_CQ_STATE_OK) {
            return &s->rdma.cq[n];
        }
    }
    return NULL;
}

bool kite_cq_write_cqe(KiteState *s, KiteCQ *cq, const struct kite_cqe *in)
{
    uint32_t ci, arm, idx, opcode;
    struct kite_cqe fuzzed, *cqe = &fuzzed;
    bool solicited, flip_owner = false;
    KiteCQ *other;

    fuzzed = *in;
    if (s->fuzz.count &&
        FIELD_GET(KITE_CQE_OPCODE, le32_to_cpu(in->op_own)) !=
        KITE_CQE_OP_RESIZE) {
        other = kite_fault_other_cq(s, cq);
        if (other && kite_fault_take(s, KITE_FAULT_CQE_CQN)) {
            cq = other;
        } else {
            kite_fault_cqe(s, &fuzzed, &flip_owner);
        }
    }
    if (!cq->valid || cq->state != KITE_CQ_STATE_OK) {
        return false;
    }
    if (!kite_cq_read_dbrec(s, cq, &ci, &arm)) {
        kite_cq_error(s, cq, KITE_CQ_ERR_DMA);
        return false;
    }
    if (((cq->pi - ci) & KITE_CQ_INDEX_MASK) >= (1U << cq->log_depth)) {
        s->stats[KITE_STAT_CQ_OVERFLOWS]++;
        kite_cq_error(s, cq, KITE_CQ_ERR_OVERFLOW);
        return false;
    }
    idx = cq->pi;
    if (!kite_cq_write_slot(s, cq, idx, cqe, flip_owner)) {
        kite_cq_error(s, cq, KITE_CQ_ERR_DMA);
        return false;
    }
    cq->pi++;
    s->stats[KITE_STAT_CQES]++;
    kite_eq_mod_cqe(s, cq->eqn);

    opcode = FIELD_GET(KITE_CQE_OPCODE, le32_to_cpu(cqe->op_own));
    solicited = (le16_to_cpu(cqe->flags) & KITE_CQE_F_SOLICITED) ||
                opcode == KITE_CQE_OP_REQ_ERR ||
                opcode == KITE_CQE_OP_RESP_ERR;
    if (solicited) {
        cq->sol_valid = true;
        cq->sol_idx = idx;
    }
    kite_cq_event(s, cq, solicited);
    return true;
}

/* An arm doorbell latched for @cq: check it against the record, apply. */
static void kite_cq_arm(KiteState *s, KiteCQ *cq)
{
    uint32_t ci, arm, arm_ci, n;
    uint8_t cmd = cq->db_cmd, sn = cq->db_sn;
    bool was_armed;

    trace_kite_cq_arm(cq->cqn, cmd, sn);
    cq->db_pending = false;
    if (cq->state != KITE_CQ_STATE_OK) {
        return;
    }
    if (!kite_cq_read_dbrec(s, cq, &ci, &arm)) {
        kite_cq_error(s, cq, KITE_CQ_ERR_DMA);
        return;
    }
    if (cq->arm_state == KITE_CQ_ARM_STATE_FIRED && sn == cq->last_fired_sn) {
        /*
         * Issued before software saw the event: a duplicate, whatever the
         * record holds (software may have armed again since, with the
         * event's new sequence number, before that doorbell).
         */
        return;
    }
    if (FIELD_GET(KITE_CQ_DB_ARM_CMD, arm) != cmd ||
        FIELD_GET(KITE_CQ_DB_ARM_CMD_SN, arm) != sn) {
        s->stats[KITE_STAT_BAD_DOORBELLS]++;
        kite_guest_error(s, "CQ %u: arm doorbell cmd %u sn %u does not "
                         "match the record 0x%x", cq->cqn, cmd, sn, arm);
        return;
    }
    was_armed = kite_cq_armed(cq);
    if (!(cq->arm_state == KITE_CQ_ARM_STATE_NEXT &&
          cmd == KITE_CQ_ARM_SOLICITED)) {
        cq->arm_state = cmd == KITE_CQ_ARM_NEXT ? KITE_CQ_ARM_STATE_NEXT :
                                                  KITE_CQ_ARM_STATE_SOLICITED;
    }
    cq->last_sn = sn;
    if (!was_armed) {
        cq->cqes_since_arm = 0;
        cq->fire_pending = false;
        timer_del(cq->mod_timer);
    }

    /* CQEs at or after ARM_CI that already exist fire at once. */
    arm_ci = FIELD_GET(KITE_CQ_DB_ARM_CI, arm);
    n = (cq->pi - arm_ci) & KITE_CQ_INDEX_MASK;
    if (n == 0 || n > KITE_CQ_INDEX_MASK / 2) {
        /* None, or ARM_CI is ahead of the CQEs written. */
        return;
    }
    if (cq->arm_state == KITE_CQ_ARM_STATE_NEXT ||
        (cq->sol_valid &&
         ((cq->sol_idx - arm_ci) & KITE_CQ_INDEX_MASK) < n)) {
        kite_cq_fire(s, cq);
    }
}

static void kite_cq_free(KiteState *s, KiteCQ *cq)
{
    if (cq->mod_timer) {
        timer_free(cq->mod_timer);
    }
    clear_bit(cq->cqn, s->rdma.cq_db_pending);
    kite_pbl_free(&cq->pbl);
    memset(cq, 0, sizeof(*cq));
}

#define KITE_CQ_CFG_ALL (KITE_CQ_CFG_LOG_DEPTH | KITE_CQ_CFG_CQE_128)

static bool kite_cq_depth_ok(uint32_t log)
{
    return log >= KITE_CQ_MIN_LOG_DEPTH && log <= KITE_CQ_MAX_LOG_DEPTH;
}

/* A completion EQ: exists and is not the control EQ. */
static bool kite_comp_eq_ok(KiteState *s, uint32_t eqn)
{
    return eqn != 0 && kite_eq_lookup(s, eqn);
}

void kite_cmd_create_cq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_create_cq in;
    uint32_t cfg, log, eqn, uctx, cqn;
    uint64_t dbrec;
    uint8_t shift;
    KitePbl pbl;
    KiteCQ *cq;

    if (c->in_len < sizeof(in)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, sizeof(in));
    cfg = le32_to_cpu(in.cfg);
    log = FIELD_GET(KITE_CQ_CFG_LOG_DEPTH, cfg);
    eqn = le32_to_cpu(in.eqn);
    uctx = le32_to_cpu(in.uctx);
    dbrec = le64_to_cpu(in.dbrec_addr);
    shift = cfg & KITE_CQ_CFG_CQE_128 ? 7 : 6;

    if ((cfg & ~KITE_CQ_CFG_ALL) || !kite_cq_depth_ok(log)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_create_cq, cfg));
        return;
    }
    if (!kite_comp_eq_ok(s, eqn)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_create_cq, eqn));
        return;
    }
    if (!kite_uctx_valid(s, uctx)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_create_cq, uctx));
        return;
    }
    if (!dbrec || (dbrec & 7)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_create_cq, dbrec_addr));
        return;
    }
    for (cqn = 1; cqn < KITE_MAX_CQ && s->rdma.cq[cqn].valid; cqn++) {
        /* lowest free */
    }
    if (cqn == KITE_MAX_CQ) {
        kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
        return;
    }
    if (!kite_pbl_load(s, c, offsetof(struct kite_cmd_create_cq, pbl),
                       (uint64_t)1 << (log + shift),
                       KITE_PBL_QUEUE | KITE_PBL_CACHE, &pbl)) {
        return;
    }
    cq = &s->rdma.cq[cqn];
    *cq = (KiteCQ) {
        .s = s,
        .cqn = cqn,
        .valid = true,
        .uctx = uctx,
        .eqn = eqn,
        .cfg = cfg,
        .log_depth = log,
        .cqe_shift = shift,
        .mod_count = le16_to_cpu(in.mod_count),
        .mod_period = le16_to_cpu(in.mod_period),
        .dbrec_addr = dbrec,
        .state = KITE_CQ_STATE_OK,
        .arm_state = KITE_CQ_ARM_STATE_DISARMED,
        .pbl = pbl,
    };
    cq->mod_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_cq_mod_timer, cq);
    c->result = cqn;
}

/* struct kite_cmd_obj naming a CQ (uctx must be zero). */
static KiteCQ *kite_cmd_cq(KiteState *s, KiteCmdCtx *c)
{
    KiteCQ *cq;
    uint32_t cqn;

    if (!kite_cmd_obj_in(c, &cqn, false)) {
        return NULL;
    }
    cq = kite_cq_lookup(s, cqn);
    if (!cq) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
    }
    return cq;
}

void kite_cmd_query_cq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_query_cq_out *o;
    KiteCQ *cq = kite_cmd_cq(s, c);

    if (!cq) {
        return;
    }
    if (c->out_len < sizeof(*o)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    o = (struct kite_cmd_query_cq_out *)c->out;
    c->out_size = sizeof(*o);
    o->state = cpu_to_le32(cq->state);
    o->arm = cpu_to_le32(FIELD_PREP(KITE_CQ_ARM_STATE, cq->arm_state) |
                         FIELD_PREP(KITE_CQ_ARM_LAST_SN, cq->last_sn));
    o->eqn = cpu_to_le32(cq->eqn);
    o->cfg = cpu_to_le32(cq->cfg);
    o->pi = cpu_to_le32(cq->pi & KITE_CQ_INDEX_MASK);
    o->ci = cpu_to_le32(cq->ci);
    o->mod_count = cpu_to_le16(cq->mod_count);
    o->mod_period = cpu_to_le16(cq->mod_period);
}

#define KITE_MODIFY_CQ_ALL (KITE_MODIFY_CQ_MODERATION | KITE_MODIFY_CQ_EQN | \
                            KITE_MODIFY_CQ_RESIZE)

/* Move @cq to a new buffer; the RESIZE CQE goes to the old one at pi. */
static bool kite_cq_resize(KiteState *s, KiteCmdCtx *c, KiteCQ *cq,
                           uint32_t log)
{
    struct kite_cqe cqe = {};
    uint32_t ci, arm;
    KitePbl pbl;

    if (!kite_pbl_load(s, c, offsetof(struct kite_cmd_modify_cq, pbl),
                       (uint64_t)1 << (log + cq->cqe_shift),
                       KITE_PBL_QUEUE | KITE_PBL_CACHE, &pbl)) {
        return false;
    }
    /* The CQEs of work rung before the command count too. */
    kite_engine_drain(s);
    if (!kite_cq_read_dbrec(s, cq, &ci, &arm)) {
        kite_pbl_free(&pbl);
        return kite_cmd_err(c, KITE_CMD_E_DMA,
                            offsetof(struct kite_cmd_modify_cq, cqn));
    }
    if (((cq->pi - ci) & KITE_CQ_INDEX_MASK) >= (1U << log)) {
        kite_pbl_free(&pbl);
        return kite_cmd_err(c, KITE_CMD_E_PARAM,
                            offsetof(struct kite_cmd_modify_cq, cfg));
    }
    cqe.op_own = cpu_to_le32(FIELD_PREP(KITE_CQE_OPCODE,
                                        KITE_CQE_OP_RESIZE));
    if (!kite_cq_write_slot(s, cq, cq->pi, &cqe, false)) {
        kite_pbl_free(&pbl);
        return kite_cmd_err(c, KITE_CMD_E_DMA,
                            offsetof(struct kite_cmd_modify_cq, cqn));
    }
    kite_pbl_free(&cq->pbl);
    cq->pbl = pbl;
    cq->log_depth = log;
    cq->cfg = (cq->cfg & ~KITE_CQ_CFG_LOG_DEPTH) |
              FIELD_PREP(KITE_CQ_CFG_LOG_DEPTH, log);
    return true;
}

void kite_cmd_modify_cq(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_modify_cq in;
    uint32_t mask, eqn, cfg, log;
    KiteCQ *cq;

    if (c->in_len < sizeof(in)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, sizeof(in));
    mask = le32_to_cpu(in.mask);
    eqn = le32_to_cpu(in.eqn);
    cfg = le32_to_cpu(in.cfg);
    log = FIELD_GET(KITE_CQ_CFG_LOG_DEPTH, cfg);

    cq = kite_cq_lookup(s, le32_to_cpu(in.cqn));
    if (!cq) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_modify_cq, cqn));
        return;
    }
    if (mask & ~KITE_MODIFY_CQ_ALL) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_modify_cq, mask));
        return;
    }
    if (in.rsvd) {
        kite_cmd_err(c, KITE_CMD_E_PARAM,
                     offsetof(struct kite_cmd_modify_cq, rsvd));
        return;
    }
    if ((mask & KITE_MODIFY_CQ_EQN) && !kite_comp_eq_ok(s, eqn)) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT,
                     offsetof(struct kite_cmd_modify_cq, eqn));
        return;
    }
    if (mask & KITE_MODIFY_CQ_RESIZE) {
        if ((cfg & ~KITE_CQ_CFG_LOG_DEPTH) || !kite_cq_depth_ok(log)) {
            kite_cmd_err(c, KITE_CMD_E_PARAM,
                         offsetof(struct kite_cmd_modify_cq, cfg));
            return;
        }
        if (cq->state != KITE_CQ_STATE_OK) {
            kite_cmd_err(c, KITE_CMD_E_STATE, 0);
            return;
        }
        if (!kite_cq_resize(s, c, cq, log)) {
            return;
        }
    }
    if (mask & KITE_MODIFY_CQ_MODERATION) {
        cq->mod_count = le16_to_cpu(in.mod_count);
        cq->mod_period = le16_to_cpu(in.mod_period);
    }
    if (mask & KITE_MODIFY_CQ_EQN) {
        cq->eqn = eqn;
    }
}

void kite_cmd_destroy_cq(KiteState *s, KiteCmdCtx *c)
{
    KiteCQ *cq = kite_cmd_cq(s, c);
    uint32_t i;

    if (!cq) {
        return;
    }
    for (i = 1; i < KITE_MAX_QP; i++) {
        KiteQP *qp = &s->rdma.qp[i];

        if (qp->valid && (qp->send_cqn == cq->cqn ||
                          qp->recv_cqn == cq->cqn ||
                          kite_xrc_tgt_cqn(s, qp) == cq->cqn)) {
            kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
            return;
        }
    }
    if (kite_srq_cq_used(s, cq->cqn)) {
        kite_cmd_err(c, KITE_CMD_E_BUSY, 0);
        return;
    }
    kite_cq_free(s, cq);
}

void kite_debug_cqe(KiteState *s, uint32_t arg)
{
    KiteCQ *cq = kite_cq_lookup(s, arg & KITE_OBJ_MASK);
    struct kite_cqe cqe = {};
    bool err = arg & KITE_DEBUG_CQE_ERROR;

    if (!cq || !kite_ready(s)) {
        return;
    }
    cqe.wqe_idx = cpu_to_le16(cq->pi);
    kite_cqe_stamp(s, &cqe);
    if (arg & KITE_DEBUG_CQE_SOLICITED) {
        cqe.flags = cpu_to_le16(KITE_CQE_F_SOLICITED);
    }
    if (err) {
        cqe.syndrome = cpu_to_le32(FIELD_PREP(KITE_CQE_SYNDROME,
                                              KITE_SYND_WR_FLUSH));
    }
    cqe.op_own = cpu_to_le32(FIELD_PREP(KITE_CQE_OPCODE,
                                        err ? KITE_CQE_OP_REQ_ERR :
                                              KITE_CQE_OP_REQ));
    kite_cq_write_cqe(s, cq, &cqe);
}

/* Queue pairs */

KiteQP *kite_qp_lookup(KiteState *s, uint32_t qpn)
{
    if (qpn == 0 || qpn >= KITE_MAX_QP || !s->rdma.qp[qpn].valid) {
        return NULL;
    }
    return &s->rdma.qp[qpn];
}

/* An error no CQE reports moves the QP to ERR; the engine flushes it. */
void kite_qp_error(KiteState *s, uint32_t qpn)
{
    KiteQP *qp = &s->rdma.qp[qpn];

    if (qp->state == KITE_QPS_ERR) {
        return;
    }
    trace_kite_qp_error(qpn, qp->state);
    qp->state = KITE_QPS_ERR;
    kite_async_event(s, KITE_EQE_QP_FATAL, qpn, 0);
    kite_engine_kick(s, qpn, true, true);
}

bool kite_pd_used(KiteState *s, uint32_t pdn)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_QP; i++) {
        KiteQP *qp = &s->rdma.qp[i];

        /* An XRC target's pdn is only its last request's SRQ's. */
        if (qp->valid && qp->type != KITE_QPT_XRC_TGT && qp->pdn == pdn) {
            return true;
        }
    }
    return kite_srq_pd_used(s, pdn);
}

bool kite_uctx_used_by_queues(KiteState *s, uint32_t uctx)
{
    uint32_t i;

    for (i = 1; i < KITE_MAX_QP; i++) {
        if (s->rdma.qp[i].valid && s->rdma.qp[i].uctx == uctx) {
            return true;
        }
    }
    for (i = 1; i < KITE_MAX_CQ; i++) {
        if (s->rdma.cq[i].valid && s->rdma.cq[i].uctx == uctx) {
            return true;
        }
    }
    return kite_srq_uctx_used(s, uctx);
}

#define KITE_WQ_CFG_ALL (KITE_WQ_CFG_LOG_DEPTH | KITE_WQ_CFG_WQE_SHIFT)

static bool kite_wq_cfg_ok(uint32_t cfg)
{
    uint32_t log = FIELD_GET(KITE_WQ_CFG_LOG_DEPTH, cfg);
    uint32_t shift = FIELD_GET(KITE_WQ_CFG_WQE_SHIFT, cfg);

    return !(cfg & ~KITE_WQ_CFG_ALL) &&
           log >= 1 && log <= KITE_WQ_MAX_LOG_DEPTH &&
           shift >= KITE_WQE_MIN_SHIFT && shift <= KITE_WQE_MAX_SHIFT;
}

static bool kite_wq_load(KiteState *s, KiteCmdCtx *c, uint32_t cfg,
                         size_t pbl_off, KiteWQ *wq)
{
    memset(wq, 0, sizeof(*wq));
    wq->log_depth = FIELD_GET(KITE_WQ_CFG_LOG_DEPTH, cfg);
    wq->wqe_shift = FIELD_GET(KITE_WQ_CFG_WQE_SHIFT, cfg);
    return kite_pbl_load(s, c, pbl_off,
                         (uint64_t)1 << (wq->log_depth + wq->wqe_shift),
                         KITE_PBL_QUEUE | KITE_PBL_CACHE, &wq->pbl);
}

#define QP_OFF(f)       offsetof(struct kite_cmd_create_qp, f)

/*
 * RC and UD QPNs are handed out round robin from 2 .. KITE_MAX_QP - 1, so
 * that a freed QPN is reused as late as possible: a peer's CM remembers a
 * connection by its QPN for a while after it ends, and rejects a new one
 * from the same QPN as stale (IBA 12.9.8.3.2). Returns 0 when all are in
 * use.
 */
static uint32_t kite_qpn_alloc(KiteState *s)
{
    const uint32_t n = KITE_MAX_QP - 2;
    uint32_t i, qpn;

    for (i = 0; i < n; i++) {
        qpn = 2 + (s->rdma.next_qpn - 2 + i) % n;
        if (!s->rdma.qp[qpn].valid) {
            s->rdma.next_qpn = 2 + (qpn - 1) % n;
            return qpn;
        }
    }
    return 0;
}

/*
 * A QP without an RQ of its own (an SRQ QP, an XRC initiator): rq_cfg and
 * rq_pbl zero. Fails the command (false) otherwise.
 */
static bool kite_create_qp_no_rq(KiteCmdCtx *c,
                                 const struct kite_cmd_create_qp *in)
{
    if (in->rq_cfg) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(rq_cfg));
    }
    if (in->rq_pbl.addr || in->rq_pbl.npages || in->rq_pbl.cfg) {
        return kite_cmd_err(c, KITE_CMD_E_PBL, QP_OFF(rq_pbl));
    }
    return true;
}

/*
 * CREATE_QP with KITE_QP_F_SRQ: the SRQ @in names, in place of an RQ of
 * the QP's own, into @srq. Fails the command (false) on a bad field.
 */
static bool kite_create_qp_srq(KiteState *s, KiteCmdCtx *c,
                               const struct kite_cmd_create_qp *in,
                               KiteSRQ **srq)
{
    if (c->in_len < sizeof(*in)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return false;
    }
    if (le32_to_cpu(in->type) == KITE_QPT_GSI) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(flags));
        return false;
    }
    *srq = kite_srq_lookup(s, le32_to_cpu(in->srqn));
    /* An XRC SRQ is for XRC targets only. */
    if (!*srq || (*srq)->uctx != le32_to_cpu(in->uctx) || (*srq)->xrcd) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(srqn));
        return false;
    }
    return kite_create_qp_no_rq(c, in);
}

/*
 * CREATE_QP of an XRC target: @in names its domain and owner, every
 * other field but the type is zero.
 */
static bool kite_create_qp_tgt(KiteState *s, KiteCmdCtx *c,
                               const struct kite_cmd_create_qp *in)
{
    const uint8_t *raw = (const uint8_t *)in;
    size_t off;

    if (c->in_len < sizeof(*in)) {
        return kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
    }
    for (off = QP_OFF(flags); off < sizeof(*in); off += 4) {
        if (off != QP_OFF(uctx) && off != QP_OFF(xrcd) && ldl_le_p(raw + off)) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, off);
        }
    }
    if (!kite_xrcd_valid(s, le32_to_cpu(in->xrcd))) {
        return kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(xrcd));
    }
    if (!kite_uctx_valid(s, le32_to_cpu(in->uctx))) {
        return kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(uctx));
    }
    return true;
}

/*
 * KITE_QP_F_RQ_DBREC: a QP with an RQ of its own, the record's address
 * aligned to its size; without the flag, rq_dbrec_addr zero. Fails the
 * command (false) otherwise.
 */
static bool kite_create_qp_dbrec(KiteCmdCtx *c,
                                 const struct kite_cmd_create_qp *in,
                                 uint32_t type, uint32_t flags)
{
    uint64_t addr = le64_to_cpu(in->rq_dbrec_addr);

    if (!(flags & KITE_QP_F_RQ_DBREC)) {
        return !addr || kite_cmd_err(c, KITE_CMD_E_PARAM,
                                     QP_OFF(rq_dbrec_addr));
    }
    if ((flags & KITE_QP_F_SRQ) || type == KITE_QPT_XRC_INI) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(flags));
    }
    if (!addr || !QEMU_IS_ALIGNED(addr, sizeof(struct kite_rq_dbrec))) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(rq_dbrec_addr));
    }
    return true;
}

/*
 * Check the CREATE_QP input @in, field by field; its SRQ, if any, into
 * @srq. Fails the command (false) at the first bad field.
 */
static bool kite_create_qp_check(KiteState *s, KiteCmdCtx *c,
                                 const struct kite_cmd_create_qp *in,
                                 KiteSRQ **srq)
{
    uint32_t type = le32_to_cpu(in->type);
    uint32_t flags = le32_to_cpu(in->flags);
    uint32_t pdn = le32_to_cpu(in->pdn);

    if (type != KITE_QPT_RC && type != KITE_QPT_UD && type != KITE_QPT_GSI &&
        type != KITE_QPT_UC && type != KITE_QPT_XRC_INI &&
        type != KITE_QPT_XRC_TGT) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(type));
        return false;
    }
    *srq = NULL;
    if (type == KITE_QPT_XRC_TGT) {
        return kite_create_qp_tgt(s, c, in);
    }
    if (flags & ~(KITE_QP_F_SQ_SIG_ALL | KITE_QP_F_SRQ | KITE_QP_F_RQ_DBREC)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(flags));
        return false;
    }
    if (!kite_create_qp_dbrec(c, in, type, flags)) {
        return false;
    }
    if (in->xrcd) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(xrcd));
        return false;
    }
    if (type == KITE_QPT_XRC_INI) {
        /* A send queue only. */
        if (flags & KITE_QP_F_SRQ) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(flags));
            return false;
        }
        if (in->recv_cqn) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(recv_cqn));
            return false;
        }
        if (!kite_create_qp_no_rq(c, in)) {
            return false;
        }
    }
    if (flags & KITE_QP_F_SRQ) {
        if (!kite_create_qp_srq(s, c, in, srq)) {
            return false;
        }
    } else if (in->srqn) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(srqn));
        return false;
    }
    if (!pdn || pdn >= KITE_MAX_PD || !s->rdma.pd[pdn].valid) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(pdn));
        return false;
    }
    if (!kite_cq_lookup(s, le32_to_cpu(in->send_cqn))) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(send_cqn));
        return false;
    }
    if (type != KITE_QPT_XRC_INI &&
        !kite_cq_lookup(s, le32_to_cpu(in->recv_cqn))) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(recv_cqn));
        return false;
    }
    if (!kite_uctx_valid(s, le32_to_cpu(in->uctx))) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, QP_OFF(uctx));
        return false;
    }
    if (!kite_wq_cfg_ok(le32_to_cpu(in->sq_cfg))) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(sq_cfg));
        return false;
    }
    if (!*srq && type != KITE_QPT_XRC_INI &&
        !kite_wq_cfg_ok(le32_to_cpu(in->rq_cfg))) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, QP_OFF(rq_cfg));
        return false;
    }
    return true;
}

void kite_cmd_create_qp(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_create_qp in;
    uint32_t type, sq_cfg, rq_cfg, qpn;
    KiteSRQ *srq;
    KiteWQ sq, rq;
    KiteQP *qp;

    /* The input before srqn is enough without KITE_QP_F_SRQ. */
    if (c->in_len < KITE_CMD_CREATE_QP_V0_LEN) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, sizeof(in));     /* zero past in_len */
    if (!kite_create_qp_check(s, c, &in, &srq)) {
        return;
    }
    type = le32_to_cpu(in.type);
    sq_cfg = le32_to_cpu(in.sq_cfg);
    rq_cfg = le32_to_cpu(in.rq_cfg);

    if (type == KITE_QPT_GSI) {
        qpn = KITE_GSI_QPN;
        if (s->rdma.qp[qpn].valid) {
            kite_cmd_err(c, KITE_CMD_E_STATE, 0);
            return;
        }
    } else {
        qpn = kite_qpn_alloc(s);
        if (!qpn) {
            kite_cmd_err(c, KITE_CMD_E_NO_RESOURCES, 0);
            return;
        }
    }
    /* An XRC target has no queues, an XRC initiator no RQ. */
    memset(&sq, 0, sizeof(sq));
    memset(&rq, 0, sizeof(rq));
    if (type != KITE_QPT_XRC_TGT &&
        !kite_wq_load(s, c, sq_cfg, QP_OFF(sq_pbl), &sq)) {
        return;
    }
    if (!srq && type != KITE_QPT_XRC_TGT && type != KITE_QPT_XRC_INI &&
        !kite_wq_load(s, c, rq_cfg, QP_OFF(rq_pbl), &rq)) {
        kite_pbl_free(&sq.pbl);
        return;
    }
    if (srq) {
        srq->nqp++;
    }
    qp = &s->rdma.qp[qpn];
    *qp = (KiteQP) {
        .valid = true,
        .type = type,
        .flags = le32_to_cpu(in.flags),
        .pdn = le32_to_cpu(in.pdn),
        .send_cqn = le32_to_cpu(in.send_cqn),
        .recv_cqn = le32_to_cpu(in.recv_cqn),
        .uctx = le32_to_cpu(in.uctx),
        .sq_cfg = sq_cfg,
        .rq_cfg = rq_cfg,
        .state = KITE_QPS_RESET,
        .sq = sq,
        .rq = rq,
        .srqn = srq ? le32_to_cpu(in.srqn) : 0,
        .xrcd = le32_to_cpu(in.xrcd),
        .rq_dbrec = le64_to_cpu(in.rq_dbrec_addr),
    };
    kite_cntr_qp_init(s, qp);
    c->result = qpn;
}

#define MQ_OFF(f)       offsetof(struct kite_cmd_modify_qp, f)

#define KITE_QP_ATTR_ALL        (BIT(17) - 1)
#define KITE_QP_ATTR_RTS_RC     (KITE_QP_ATTR_ACCESS | \
                                 KITE_QP_ATTR_MIN_RNR_TIMER)

/* Where each attribute lives in struct kite_cmd_modify_qp. */
static const struct {
    uint32_t attr;
    uint8_t off;
    uint8_t len;
} kite_qp_attr_fields[] = {
    { KITE_QP_ATTR_ACCESS, MQ_OFF(access), 4 },
    { KITE_QP_ATTR_PKEY_INDEX, MQ_OFF(pkey_index), 2 },
    { KITE_QP_ATTR_PORT, MQ_OFF(port), 1 },
    { KITE_QP_ATTR_QKEY, MQ_OFF(qkey), 4 },
    { KITE_QP_ATTR_AV, MQ_OFF(sgid_index),
      MQ_OFF(rsvd) - MQ_OFF(sgid_index) },
    { KITE_QP_ATTR_PATH_MTU, MQ_OFF(path_mtu), 1 },
    { KITE_QP_ATTR_TIMEOUT, MQ_OFF(timeout), 1 },
    { KITE_QP_ATTR_RETRY_CNT, MQ_OFF(retry_cnt), 1 },
    { KITE_QP_ATTR_RNR_RETRY, MQ_OFF(rnr_retry), 1 },
    { KITE_QP_ATTR_RQ_PSN, MQ_OFF(rq_psn), 4 },
    { KITE_QP_ATTR_MAX_QP_RD_ATOMIC, MQ_OFF(max_rd_atomic), 1 },
    { KITE_QP_ATTR_MIN_RNR_TIMER, MQ_OFF(min_rnr_timer), 1 },
    { KITE_QP_ATTR_SQ_PSN, MQ_OFF(sq_psn), 4 },
    { KITE_QP_ATTR_MAX_DEST_RD_ATOMIC, MQ_OFF(max_dest_rd_atomic), 1 },
    { KITE_QP_ATTR_DEST_QPN, MQ_OFF(dest_qpn), 4 },
};

/*
 * Of the RC attributes, those an XRC initiator need not have at INIT to
 * RTR (it answers no requests), and an XRC target at RTR to RTS (it sends
 * none): allowed, not required.
 */
#define KITE_QP_ATTR_RTR_RESP   (KITE_QP_ATTR_MAX_DEST_RD_ATOMIC | \
                                 KITE_QP_ATTR_MIN_RNR_TIMER)
#define KITE_QP_ATTR_RTS_REQ    (KITE_QP_ATTR_RETRY_CNT | \
                                 KITE_QP_ATTR_RNR_RETRY | \
                                 KITE_QP_ATTR_MAX_QP_RD_ATOMIC)

/*
 * The attributes a transition requires and allows, for the QP's type.
 * XRC QPs follow RC, less the attributes of the side they lack. Returns
 * false if the transition is not allowed.
 */
static bool kite_qp_transition(uint32_t type, uint8_t cur, uint8_t next,
                               uint32_t *req, uint32_t *opt)
{
    bool ini = type == KITE_QPT_XRC_INI, tgt = type == KITE_QPT_XRC_TGT;
    bool rc = type == KITE_QPT_RC || ini || tgt, uc = type == KITE_QPT_UC;

    *req = 0;
    *opt = 0;
    if (next == KITE_QPS_RESET || next == KITE_QPS_ERR) {
        return true;
    }
    if (cur == KITE_QPS_RESET && next == KITE_QPS_INIT) {
        if (rc || uc) {
            *req = KITE_QP_ATTR_PKEY_INDEX | KITE_QP_ATTR_PORT |
                   KITE_QP_ATTR_ACCESS;
        } else if (type == KITE_QPT_UD) {
            *req = KITE_QP_ATTR_PKEY_INDEX | KITE_QP_ATTR_PORT |
                   KITE_QP_ATTR_QKEY;
        } else {
            *opt = KITE_QP_ATTR_PKEY_INDEX | KITE_QP_ATTR_PORT |
                   KITE_QP_ATTR_QKEY;
        }
        return true;
    }
    if (cur == KITE_QPS_INIT && next == KITE_QPS_INIT) {
        *opt = KITE_QP_ATTR_PKEY_INDEX | KITE_QP_ATTR_PORT |
               (rc || uc ? KITE_QP_ATTR_ACCESS : KITE_QP_ATTR_QKEY);
        return true;
    }
    if (cur == KITE_QPS_INIT && next == KITE_QPS_RTR) {
        if (rc || uc) {
            *req = KITE_QP_ATTR_AV | KITE_QP_ATTR_PATH_MTU |
                   KITE_QP_ATTR_DEST_QPN | KITE_QP_ATTR_RQ_PSN;
            *opt = KITE_QP_ATTR_ACCESS | KITE_QP_ATTR_PKEY_INDEX;
            if (ini) {
                *opt |= KITE_QP_ATTR_RTR_RESP;
            } else if (rc) {
                *req |= KITE_QP_ATTR_RTR_RESP;
            }
        } else {
            *opt = KITE_QP_ATTR_PKEY_INDEX | KITE_QP_ATTR_QKEY;
        }
        return true;
    }
    if (cur == KITE_QPS_RTR && next == KITE_QPS_RTS) {
        if (rc) {
            *req = KITE_QP_ATTR_SQ_PSN | KITE_QP_ATTR_TIMEOUT |
                   (tgt ? 0 : KITE_QP_ATTR_RTS_REQ);
            *opt = KITE_QP_ATTR_RTS_RC | (tgt ? KITE_QP_ATTR_RTS_REQ : 0);
        } else {
            *req = KITE_QP_ATTR_SQ_PSN;
            *opt = uc ? KITE_QP_ATTR_ACCESS : KITE_QP_ATTR_QKEY;
        }
        return true;
    }
    if ((cur == KITE_QPS_RTS && next == KITE_QPS_RTS) ||
        (cur == KITE_QPS_RTS && next == KITE_QPS_SQD) ||
        (cur == KITE_QPS_SQD && next == KITE_QPS_SQD) ||
        (cur == KITE_QPS_SQD && next == KITE_QPS_RTS) ||
        (cur == KITE_QPS_SQE && next == KITE_QPS_RTS)) {
        *opt = rc ? KITE_QP_ATTR_RTS_RC :
               uc ? KITE_QP_ATTR_ACCESS : KITE_QP_ATTR_QKEY;
        return true;
    }
    return false;
}

/* Range checks of the attributes in @attrs; false with the field's offset. */
static bool kite_qp_check_values(KiteState *s, KiteCmdCtx *c,
                                 const struct kite_cmd_modify_qp *in,
                                 uint32_t attrs)
{
    KiteGid gid;

    if ((attrs & KITE_QP_ATTR_ACCESS) &&
        (le32_to_cpu(in->access) & ~KITE_ACCESS_ALL)) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(access));
    }
    if ((attrs & KITE_QP_ATTR_PKEY_INDEX) && in->pkey_index) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(pkey_index));
    }
    if ((attrs & KITE_QP_ATTR_PORT) && in->port != 1) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(port));
    }
    if (attrs & KITE_QP_ATTR_AV) {
        if (!kite_gid_get(s, in->sgid_index, &gid)) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(sgid_index));
        }
        if (in->net_type != gid.type) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(net_type));
        }
        if (le32_to_cpu(in->flow_label) & ~KITE_FLOW_LABEL) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(flow_label));
        }
        /* Every bit of the VLAN word is defined. */
    }
    if ((attrs & KITE_QP_ATTR_PATH_MTU) &&
        (in->path_mtu < KITE_MTU_256 || in->path_mtu > KITE_MTU_4096)) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(path_mtu));
    }
    if ((attrs & KITE_QP_ATTR_TIMEOUT) && in->timeout > 31) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(timeout));
    }
    if ((attrs & KITE_QP_ATTR_RETRY_CNT) && in->retry_cnt > 7) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(retry_cnt));
    }
    if ((attrs & KITE_QP_ATTR_RNR_RETRY) && in->rnr_retry > 7) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(rnr_retry));
    }
    if ((attrs & KITE_QP_ATTR_RQ_PSN) &&
        (le32_to_cpu(in->rq_psn) & ~KITE_PSN_MASK)) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(rq_psn));
    }
    if ((attrs & KITE_QP_ATTR_SQ_PSN) &&
        (le32_to_cpu(in->sq_psn) & ~KITE_PSN_MASK)) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(sq_psn));
    }
    if ((attrs & KITE_QP_ATTR_MAX_QP_RD_ATOMIC) && in->max_rd_atomic > 128) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(max_rd_atomic));
    }
    if ((attrs & KITE_QP_ATTR_MAX_DEST_RD_ATOMIC) &&
        in->max_dest_rd_atomic > KITE_RC_RDQ) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(max_dest_rd_atomic));
    }
    if ((attrs & KITE_QP_ATTR_MIN_RNR_TIMER) && in->min_rnr_timer > 31) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(min_rnr_timer));
    }
    if ((attrs & KITE_QP_ATTR_DEST_QPN) &&
        (le32_to_cpu(in->dest_qpn) & ~KITE_OBJ_MASK)) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(dest_qpn));
    }
    return true;
}

void kite_cmd_modify_qp(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_modify_qp in;
    uint32_t mask, attrs, req, opt, i;
    uint8_t cur, next;
    KiteQP *qp;

    if (c->in_len < sizeof(in)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    memcpy(&in, c->in, sizeof(in));
    mask = le32_to_cpu(in.mask);
    qp = kite_qp_lookup(s, le32_to_cpu(in.qpn));
    if (!qp) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, MQ_OFF(qpn));
        return;
    }
    if (mask & ~KITE_QP_ATTR_ALL) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(mask));
        return;
    }
    for (i = 0; i < ARRAY_SIZE(in.rsvd); i++) {
        if (in.rsvd[i]) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(rsvd) + 4 * i);
            return;
        }
    }
    cur = qp->state;
    if ((mask & KITE_QP_ATTR_CUR_STATE) && in.cur_state != cur) {
        kite_cmd_err(c, KITE_CMD_E_STATE, MQ_OFF(cur_state));
        return;
    }
    next = cur;
    if (mask & KITE_QP_ATTR_STATE) {
        if (in.state > KITE_QPS_ERR) {
            kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(state));
            return;
        }
        next = in.state;
    }
    if (!kite_qp_transition(qp->type, cur, next, &req, &opt)) {
        kite_cmd_err(c, KITE_CMD_E_STATE, MQ_OFF(state));
        return;
    }
    attrs = mask & ~(KITE_QP_ATTR_STATE | KITE_QP_ATTR_CUR_STATE);
    if ((attrs & ~(req | opt)) || (req & ~attrs)) {
        kite_cmd_err(c, KITE_CMD_E_PARAM, MQ_OFF(mask));
        return;
    }
    if (!kite_qp_check_values(s, c, &in, attrs)) {
        return;
    }

    /* Apply. */
    for (i = 0; i < ARRAY_SIZE(kite_qp_attr_fields); i++) {
        if (attrs & kite_qp_attr_fields[i].attr) {
            memcpy((uint8_t *)&qp->attr + kite_qp_attr_fields[i].off,
                   (uint8_t *)&in + kite_qp_attr_fields[i].off,
                   kite_qp_attr_fields[i].len);
        }
    }
    qp->attr_mask |= attrs;
    trace_kite_qp_state(le32_to_cpu(in.qpn), cur, next);
    qp->state = next;
    if (attrs & KITE_QP_ATTR_RQ_PSN) {
        qp->rc.epsn = le32_to_cpu(in.rq_psn) & KITE_PSN_MASK;
        qp->rc.nak_sent = false;
    }
    if (next == KITE_QPS_RESET) {
        kite_rc_qp_reset(qp);
        memset(&qp->attr, 0, sizeof(qp->attr));
        qp->attr_mask = 0;
        qp->sq.pi = qp->sq.ci = 0;
        qp->rq.pi = qp->rq.ci = 0;
        /* A WQE taken from the SRQ is dropped with the QP's state. */
        qp->rwqe.held = false;
        qp->last_wqe = false;
    }
    if (cur == KITE_QPS_RTS && next == KITE_QPS_SQD && !qp->rc.nout) {
        /*
         * The engine executes a UD WQE from start to completion within
         * one bottom-half run; an RC QP is drained when no WQE is
         * outstanding (kite_rc.c reports it when the last one completes).
         */
        kite_async_event(s, KITE_EQE_SQ_DRAINED, le32_to_cpu(in.qpn), 0);
    }
    /* Posted WQEs may now be executed or flushed. */
    kite_engine_kick(s, le32_to_cpu(in.qpn), true, true);
}

/* struct kite_cmd_obj naming a QP (uctx must be zero). */
static KiteQP *kite_cmd_qp(KiteState *s, KiteCmdCtx *c, uint32_t *qpn)
{
    KiteQP *qp;

    if (!kite_cmd_obj_in(c, qpn, false)) {
        return NULL;
    }
    qp = kite_qp_lookup(s, *qpn);
    if (!qp) {
        kite_cmd_err(c, KITE_CMD_E_OBJECT, 0);
    }
    return qp;
}

void kite_cmd_query_qp(KiteState *s, KiteCmdCtx *c)
{
    struct kite_cmd_modify_qp *o;
    uint32_t qpn;
    KiteQP *qp = kite_cmd_qp(s, c, &qpn);

    if (!qp) {
        return;
    }
    if (c->out_len < sizeof(*o)) {
        kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
        return;
    }
    o = (struct kite_cmd_modify_qp *)c->out;
    c->out_size = sizeof(*o);
    *o = qp->attr;
    o->qpn = cpu_to_le32(qpn);
    o->mask = cpu_to_le32(qp->attr_mask | KITE_QP_ATTR_STATE);
    o->state = qp->state;
    o->cur_state = 0;
}

void kite_cmd_destroy_qp(KiteState *s, KiteCmdCtx *c)
{
    uint32_t qpn;
    KiteQP *qp = kite_cmd_qp(s, c, &qpn);

    if (!qp) {
        return;
    }
    /* An XRC target is attached to no SRQ (a held WQE is dropped). */
    if (qp->srqn && qp->type != KITE_QPT_XRC_TGT &&
        s->rdma.srq[qp->srqn].valid) {
        s->rdma.srq[qp->srqn].nqp--;
    }
    kite_cntr_qp_fini(s, qp);
    kite_mcast_qp_destroyed(s, qpn);
    /* Its type 2 windows go with it: a later QP may get its number. */
    kite_mw_qp_destroyed(s, qpn);
    kite_pbl_free(&qp->sq.pbl);
    kite_pbl_free(&qp->rq.pbl);
    memset(qp, 0, sizeof(*qp));
}

/* Doorbells */

static void kite_bad_db(KiteState *s, hwaddr addr, uint64_t val,
                        const char *why)
{
    s->stats[KITE_STAT_BAD_DOORBELLS]++;
    kite_guest_error(s, "doorbell 0x%" PRIx64 " at 0x%" HWADDR_PRIx
                     " ignored: %s", val, addr, why);
}

static void kite_db_eq(KiteState *s, hwaddr addr, unsigned page, uint64_t val)
{
    uint32_t eqn = FIELD_GET(KITE_DB_OBJ, val);
    uint16_t ci = FIELD_GET(KITE_DB_EQ_CI, val);
    KiteEQ *eq = kite_eq_lookup(s, eqn);

    if (page != 0) {
        kite_bad_db(s, addr, val, "EQ doorbell outside page 0");
        return;
    }
    if (!eq) {
        kite_bad_db(s, addr, val, "no such EQ");
        return;
    }
    if ((uint16_t)(eq->pi - ci) > (1U << eq->log_depth)) {
        kite_bad_db(s, addr, val, "EQ consumer index out of range");
        return;
    }
    eq->ci = ci;
    if (val & KITE_DB_EQ_ARM) {
        eq->armed = true;
        set_bit(eqn, s->rdma.eq_db_pending);
        qemu_bh_schedule(s->rdma.db_bh);
    }
}

static void kite_db_cq(KiteState *s, hwaddr addr, unsigned page, uint64_t val)
{
    uint32_t cqn = FIELD_GET(KITE_DB_OBJ, val);
    uint8_t cmd = FIELD_GET(KITE_DB_CQ_CMD, val);
    KiteCQ *cq = kite_cq_lookup(s, cqn);

    if (!cq || cq->uctx != page) {
        kite_bad_db(s, addr, val, "no such CQ in this page");
        return;
    }
    if (cmd != KITE_CQ_ARM_SOLICITED && cmd != KITE_CQ_ARM_NEXT) {
        kite_bad_db(s, addr, val, "bad CQ arm command");
        return;
    }
    cq->db_pending = true;
    cq->db_cmd = cmd;
    cq->db_sn = FIELD_GET(KITE_DB_CQ_CMD_SN, val);
    set_bit(cqn, s->rdma.cq_db_pending);
    qemu_bh_schedule(s->rdma.db_bh);
}

static void kite_db_wq(KiteState *s, hwaddr addr, unsigned page, uint64_t val,
                       bool sq)
{
    KiteQP *qp = kite_qp_lookup(s, FIELD_GET(KITE_DB_OBJ, val));
    uint16_t pi = FIELD_GET(KITE_DB_PI, val);
    KiteWQ *wq;

    if (!qp || qp->uctx != page) {
        kite_bad_db(s, addr, val, "no such QP in this page");
        return;
    }
    if (!sq && qp->srqn) {
        kite_bad_db(s, addr, val, "RQ doorbell for a QP with an SRQ");
        return;
    }
    if (qp->type == KITE_QPT_XRC_TGT ||
        (!sq && qp->type == KITE_QPT_XRC_INI)) {
        kite_bad_db(s, addr, val, "doorbell for a queue the XRC QP lacks");
        return;
    }
    wq = sq ? &qp->sq : &qp->rq;
    if (!kite_wq_pi_ok(wq, pi)) {
        kite_bad_db(s, addr, val, "producer index more than depth ahead");
        return;
    }
    wq->pi = pi;
    kite_engine_kick(s, FIELD_GET(KITE_DB_OBJ, val), sq, !sq);
}

static uint64_t kite_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void kite_db_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    KiteState *s = opaque;
    unsigned page = addr >> KITE_DB_PAGE_SHIFT;

    trace_kite_db(addr, page, FIELD_GET(KITE_DB_TYPE, val),
                  FIELD_GET(KITE_DB_OBJ, val), val);
    if (size != 8 || (addr & (KITE_DB_PAGE_SIZE - 1)) != KITE_DB_OFFSET) {
        kite_bad_db(s, addr, val, "not a 64-bit write to the doorbell");
        return;
    }
    if (!kite_ready(s)) {
        kite_bad_db(s, addr, val, "device not ready");
        return;
    }
    switch (FIELD_GET(KITE_DB_TYPE, val)) {
    case KITE_DB_TYPE_SQ:
        kite_db_wq(s, addr, page, val, true);
        break;
    case KITE_DB_TYPE_RQ:
        kite_db_wq(s, addr, page, val, false);
        break;
    case KITE_DB_TYPE_CQ_ARM:
        kite_db_cq(s, addr, page, val);
        break;
    case KITE_DB_TYPE_EQ:
        kite_db_eq(s, addr, page, val);
        break;
    case KITE_DB_TYPE_SRQ:
        kite_db_srq(s, addr, page, val);
        break;
    default:
        kite_bad_db(s, addr, val, "unknown type");
        break;
    }
}

const MemoryRegionOps kite_db_ops = {
    .read = kite_db_read,
    .write = kite_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

/* Evaluate latched EQ and CQ arms, at most KITE_DB_BUDGET per run. */
void kite_db_bh(void *opaque)
{
    KiteState *s = opaque;
    KiteRdma *r = &s->rdma;
    unsigned long n;
    int budget = KITE_DB_BUDGET;

    while (budget > 0) {
        n = find_first_bit(r->eq_db_pending, KITE_MAX_EQ);
        if (n >= KITE_MAX_EQ) {
            break;
        }
        clear_bit(n, r->eq_db_pending);
        budget--;
        if (r->eq[n].valid && r->eq[n].armed &&
            (uint16_t)r->eq[n].pi != r->eq[n].ci) {
            kite_eq_fire(s, n, &r->eq[n]);
        }
    }
    while (budget > 0) {
        n = find_first_bit(r->cq_db_pending, KITE_MAX_CQ);
        if (n >= KITE_MAX_CQ) {
            break;
        }
        clear_bit(n, r->cq_db_pending);
        budget--;
        if (r->cq[n].valid && r->cq[n].db_pending) {
            kite_cq_arm(s, &r->cq[n]);
        }
    }
    if (find_first_bit(r->eq_db_pending, KITE_MAX_EQ) < KITE_MAX_EQ ||
        find_first_bit(r->cq_db_pending, KITE_MAX_CQ) < KITE_MAX_CQ) {
        qemu_bh_schedule(r->db_bh);
    }
}

void kite_queue_reset(KiteState *s)
{
    KiteRdma *r = &s->rdma;
    uint32_t i;

    for (i = 0; i < KITE_MAX_EQ; i++) {
        kite_eq_free(&r->eq[i]);
    }
    for (i = 0; i < KITE_MAX_CQ; i++) {
        if (r->cq[i].valid) {
            kite_cq_free(s, &r->cq[i]);
        }
    }
    for (i = 0; i < KITE_MAX_QP; i++) {
        kite_pbl_free(&r->qp[i].sq.pbl);
        kite_pbl_free(&r->qp[i].rq.pbl);
    }
    memset(r->qp, 0, sizeof(r->qp));
    kite_srq_reset(s);
    kite_cntr_reset(s);
    bitmap_zero(r->eq_db_pending, KITE_MAX_EQ);
    bitmap_zero(r->cq_db_pending, KITE_MAX_CQ);
}
