/*
 * Kite NIC: loss on demand.
 *
 * Test hooks that make the RoCEv2 wire lose, duplicate and reorder
 * frames at chosen rates, reproducibly from a seed (QOM "loss-*"
 * properties, documented in prm_port.rst). Two paths: "rx" for the
 * RoCEv2 frames the Ethernet function steers to the data engine from
 * the wire, "tx" for every RoCEv2 frame the engine sends (to the wire
 * or through the internal loopback). Each frame of a path is, in this
 * order: dropped with probability drop/1000; otherwise held back with
 * probability reorder/1000 (at most one frame held per path) and
 * delivered after the next frame of the path, or after
 * KITE_LOSS_HOLD_NS of virtual time if none comes; otherwise delivered,
 * and with probability dup/1000 delivered twice. The guest cannot set
 * them; they survive device resets (held frames do not).
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"

#include "kite_int.h"

/* A frame held back is delivered at the latest after this (100 us). */
#define KITE_LOSS_HOLD_NS       100000

static const char *const kite_loss_dir_names[KITE_LOSS_DIRS] = {
    [KITE_LOSS_RX] = "rx",
    [KITE_LOSS_TX] = "tx",
};

/* xorshift64*, from loss-seed; never stuck at zero. */
static uint32_t kite_loss_rand(KiteLoss *l)
{
    uint64_t x = l->rng ? l->rng : 0x6b6974656c6f7373ULL;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    l->rng = x;
    return (x * 0x2545f4914f6cdd1dULL) >> 32;
}

static bool kite_loss_chance(KiteLoss *l, uint32_t permille)
{
    return permille && kite_loss_rand(l) % 1000 < permille;
}

static void kite_loss_deliver(KiteState *s, KiteLossDir dir, uint8_t *f,
                              size_t len)
{
    if (dir == KITE_LOSS_RX) {
        kite_engine_receive(s, f, len);
    } else {
        kite_engine_xmit_now(s, f, len);
    }
}

/* Deliver the frame held back on @dir, if any. */
static void kite_loss_release(KiteState *s, KiteLossDir dir)
{
    KiteLossPath *p = &s->loss.path[dir];
    uint8_t *f = p->held;
    size_t len = p->held_len;

    if (!f) {
        return;
    }
    /* Taken first: delivering may send (and hold) another frame. */
    p->held = NULL;
    p->held_len = 0;
    kite_loss_deliver(s, dir, f, len);
    g_free(f);
}

static void kite_loss_timer_cb(void *opaque)
{
    KiteState *s = opaque;

    kite_loss_release(s, KITE_LOSS_RX);
    kite_loss_release(s, KITE_LOSS_TX);
}

void kite_loss_frame(KiteState *s, KiteLossDir dir, uint8_t *f, size_t len)
{
    KiteLoss *l = &s->loss;
    KiteLossPath *p = &l->path[dir];
    uint8_t *copy = NULL;

    if (!p->drop && !p->dup && !p->reorder && !p->held) {
        kite_loss_deliver(s, dir, f, len);
        return;
    }
    if (kite_loss_chance(l, p->drop)) {
        p->dropped++;
        return;
    }
    if (!p->held && l->timer && kite_loss_chance(l, p->reorder)) {
        p->reordered++;
        p->held = g_memdup2(f, len);
        p->held_len = len;
        timer_mod(l->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  KITE_LOSS_HOLD_NS);
        return;
    }
    if (kite_loss_chance(l, p->dup)) {
        /* A copy: delivering may reuse the buffer the frame was built in. */
        copy = g_memdup2(f, len);
    }
    kite_loss_deliver(s, dir, f, len);
    if (copy) {
        p->duplicated++;
        kite_loss_deliver(s, dir, copy, len);
        g_free(copy);
    }
    kite_loss_release(s, dir);
}

/* ------------------------------------------------------------------ */
/* Properties                                                          */
/* ------------------------------------------------------------------ */

static void kite_loss_get_rate(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    uint32_t value = *(uint32_t *)opaque;

    visit_type_uint32(v, name, &value, errp);
}

static void kite_loss_set_rate(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    uint32_t value;

    if (!visit_type_uint32(v, name, &value, errp)) {
        return;
    }
    if (value > 1000) {
        error_setg(errp, "%s is per mille: 0..1000", name);
        return;
    }
    *(uint32_t *)opaque = value;
}

static void kite_loss_get_seed(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    uint64_t value = KITE(obj)->loss.seed;

    visit_type_uint64(v, name, &value, errp);
}

static void kite_loss_set_seed(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    KiteLoss *l = &KITE(obj)->loss;
    uint64_t value;

    if (!visit_type_uint64(v, name, &value, errp)) {
        return;
    }
    l->seed = value;
    l->rng = value;
}

/* "rx-dropped=N rx-duplicated=N rx-reordered=N tx-...". */
static void kite_loss_get_counts(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    KiteLoss *l = &KITE(obj)->loss;
    GString *str = g_string_new("");
    char *value;
    int d;

    for (d = 0; d < KITE_LOSS_DIRS; d++) {
        const KiteLossPath *p = &l->path[d];
        const char *n = kite_loss_dir_names[d];

        g_string_append_printf(str, "%s%s-dropped=%" PRIu64
                               " %s-duplicated=%" PRIu64
                               " %s-reordered=%" PRIu64,
                               d ? " " : "", n, p->dropped, n, p->duplicated,
                               n, p->reordered);
    }
    value = g_string_free(str, false);
    visit_type_str(v, name, &value, errp);
    g_free(value);
}

void kite_loss_instance_init(KiteState *s)
{
    Object *obj = OBJECT(s);
    static const char *const what[3] = { "drop", "dup", "reorder" };
    int d, k;

    for (d = 0; d < KITE_LOSS_DIRS; d++) {
        KiteLossPath *p = &s->loss.path[d];
        uint32_t *field[3] = { &p->drop, &p->dup, &p->reorder };

        for (k = 0; k < 3; k++) {
            g_autofree char *name = g_strdup_printf(
                "loss-%s-%s", kite_loss_dir_names[d], what[k]);

            object_property_add(obj, name, "uint32", kite_loss_get_rate,
                                kite_loss_set_rate, NULL, field[k]);
        }
    }
    s->loss.seed = 1;
    s->loss.rng = 1;
    object_property_add(obj, "loss-seed", "uint64", kite_loss_get_seed,
                        kite_loss_set_seed, NULL, NULL);
    object_property_add(obj, "loss-counts", "str", kite_loss_get_counts,
                        NULL, NULL, NULL);
}

void kite_loss_init(KiteState *s)
{
    s->loss.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_loss_timer_cb, s);
}

/* Device reset: frames held back are lost, the settings stay. */
void kite_loss_reset(KiteState *s)
{
    int d;

    if (s->loss.timer) {
        timer_del(s->loss.timer);
    }
    for (d = 0; d < KITE_LOSS_DIRS; d++) {
        g_free(s->loss.path[d].held);
        s->loss.path[d].held = NULL;
        s->loss.path[d].held_len = 0;
    }
}

void kite_loss_exit(KiteState *s)
{
    kite_loss_reset(s);
    if (s->loss.timer) {
        timer_free(s->loss.timer);
        s->loss.timer = NULL;
    }
}
