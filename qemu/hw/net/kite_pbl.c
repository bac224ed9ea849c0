/*
 * Kite NIC: page buffer lists.
 *
 * A command names a buffer with struct kite_pbl. The device validates the
 * list when the object is created: the descriptor, every PDE and PTE
 * (VALID, alignment, and for queues the LAST/NEXT_TO_LAST markers) and,
 * for queues, that the list describes exactly the queue's size. Queues keep
 * the data page addresses so that translating an index is a lookup.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci.h"

#include "kite_int.h"

#define KITE_PTE_FLAGS  (KITE_PTE_LAST | KITE_PTE_NEXT_TO_LAST)

/* Read one 4 KiB PBL page into @ents (host byte order). */
static bool kite_pbl_read_page(KiteState *s, KiteCmdCtx *c, uint64_t addr,
                               uint32_t count, uint64_t *ents)
{
    uint32_t i;

    if (pci_dma_read(PCI_DEVICE(s), addr, ents,
                     count * KITE_PTE_SIZE) != MEMTX_OK) {
        kite_dma_error(s, "PBL page", addr, count * KITE_PTE_SIZE, false);
        c->code = KITE_CMD_E_DMA;
        c->syndrome = 0;
        return false;
    }
    for (i = 0; i < count; i++) {
        ents[i] = le64_to_cpu(ents[i]);
    }
    return true;
}

/* Check the PTE of data page @n of @npages. */
static bool kite_pte_ok(uint64_t pte, uint32_t n, uint32_t npages,
                        unsigned page_shift, unsigned flags)
{
    uint64_t want = 0;

    if (!(pte & KITE_PTE_VALID)) {
        return false;
    }
    if ((pte & KITE_PTE_ADDR) & ((1ULL << page_shift) - 1)) {
        return false;
    }
    if (!(flags & KITE_PBL_QUEUE)) {
        return true;
    }
    if (n == npages - 1) {
        want = KITE_PTE_LAST;
    } else if (n == npages - 2) {
        want = KITE_PTE_NEXT_TO_LAST;
    }
    return (pte & KITE_PTE_FLAGS) == want;
}

/*
 * Whether the configuration @cfg of a page buffer list descriptor is
 * valid, and its level, page size, page count @npages and address @addr
 * go together.
 */
static bool kite_pbl_desc_ok(uint64_t addr, uint32_t npages, uint32_t cfg)
{
    unsigned level = FIELD_GET(KITE_PBL_CFG_LEVEL, cfg);
    unsigned shift = FIELD_GET(KITE_PBL_CFG_PAGE_SHIFT, cfg);

    if (cfg & ~(KITE_PBL_CFG_LEVEL | KITE_PBL_CFG_PAGE_SHIFT) ||
        shift < KITE_PBL_MIN_PAGE_SHIFT || shift > KITE_PBL_MAX_PAGE_SHIFT ||
        npages == 0) {
        return false;
    }
    switch (level) {
    case KITE_PBL_LEVEL_0:
        return npages == 1 && !(addr & ((1ULL << shift) - 1));
    case KITE_PBL_LEVEL_1:
        return npages <= KITE_PBL_ENTRIES &&
               !(addr & (KITE_PBL_PAGE_SIZE - 1));
    case KITE_PBL_LEVEL_2:
        return npages <= KITE_PBL_ENTRIES * KITE_PBL_ENTRIES &&
               !(addr & (KITE_PBL_PAGE_SIZE - 1));
    default:
        return false;
    }
}

bool kite_pbl_load(KiteState *s, KiteCmdCtx *c, size_t off, uint64_t bytes,
                   unsigned flags, KitePbl *pbl)
{
    struct kite_pbl d;
    uint64_t *ents = NULL, *pdes = NULL;
    uint32_t cfg, npages, n, i, j, nptes, npdes;
    unsigned level, shift;
    uint64_t addr, size;

    memset(pbl, 0, sizeof(*pbl));
    memcpy(&d, c->in + off, sizeof(d));
    addr = le64_to_cpu(d.addr);
    npages = le32_to_cpu(d.npages);
    cfg = le32_to_cpu(d.cfg);
    level = FIELD_GET(KITE_PBL_CFG_LEVEL, cfg);
    shift = FIELD_GET(KITE_PBL_CFG_PAGE_SHIFT, cfg);

    if (!kite_pbl_desc_ok(addr, npages, cfg)) {
        return kite_cmd_err(c, KITE_CMD_E_PBL, off);
    }

    if (flags & KITE_PBL_QUEUE) {
        size = (uint64_t)npages << shift;
        if (level == KITE_PBL_LEVEL_0 ? bytes > size : bytes != size) {
            return kite_cmd_err(c, KITE_CMD_E_PARAM, off);
        }
    }

    pbl->addr = addr;
    pbl->npages = npages;
    pbl->level = level;
    pbl->page_shift = shift;
    if (level == KITE_PBL_LEVEL_0) {
        return true;
    }

    /* Walk: at most 512 PDEs and 512 * 512 PTEs, read a page at a time. */
    if (flags & KITE_PBL_CACHE) {
        pbl->pages = g_new(uint64_t, npages);
    }
    ents = g_new(uint64_t, KITE_PBL_ENTRIES);
    npdes = level == KITE_PBL_LEVEL_1 ? 1 :
            DIV_ROUND_UP(npages, KITE_PBL_ENTRIES);
    if (level == KITE_PBL_LEVEL_2) {
        pdes = g_new(uint64_t, KITE_PBL_ENTRIES);
        if (!kite_pbl_read_page(s, c, addr, npdes, pdes)) {
            goto fail;
        }
    }
    n = 0;
    for (i = 0; i < npdes; i++) {
        uint64_t pte_page = addr;

        if (pdes) {
            if (!(pdes[i] & KITE_PTE_VALID) || (pdes[i] & KITE_PTE_FLAGS)) {
                kite_cmd_err(c, KITE_CMD_E_PBL, off);
                goto fail;
            }
            pte_page = pdes[i] & KITE_PTE_ADDR;
        }
        nptes = MIN(npages - n, KITE_PBL_ENTRIES);
        if (!kite_pbl_read_page(s, c, pte_page, nptes, ents)) {
            goto fail;
        }
        for (j = 0; j < nptes; j++, n++) {
            if (!kite_pte_ok(ents[j], n, npages, shift, flags)) {
                kite_cmd_err(c, KITE_CMD_E_PBL, off);
                goto fail;
            }
            if (pbl->pages) {
                pbl->pages[n] = ents[j] & KITE_PTE_ADDR;
            }
        }
    }
    g_free(ents);
    g_free(pdes);
    return true;

fail:
    g_free(ents);
    g_free(pdes);
    kite_pbl_free(pbl);
    return false;
}

void kite_pbl_free(KitePbl *pbl)
{
    g_free(pbl->pages);
    memset(pbl, 0, sizeof(*pbl));
}

uint64_t kite_pbl_entry(const KitePbl *pbl, uint32_t idx, uint8_t log_depth,
                        uint8_t entry_shift)
{
    uint64_t off = (uint64_t)(idx & ((1U << log_depth) - 1)) << entry_shift;
    uint64_t page = off >> pbl->page_shift;

    if (!pbl->pages) {
        return pbl->addr + off;
    }
    /* The queue's size is npages pages exactly: page < npages. */
    assert(page < pbl->npages);
    return pbl->pages[page] + (off & ((1ULL << pbl->page_shift) - 1));
}
