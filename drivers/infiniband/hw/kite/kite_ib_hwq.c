// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: queue memory and page buffer lists.
 *
 * Every queue the device reads or writes in host memory (EQs, CQs, SQs,
 * RQs) and every memory region is described to it by a page buffer list
 * (PBL): level 0 names the only data page, level 1 a 4 KiB page of 512
 * PTEs, level 2 a 4 KiB page of up to 512 PDEs, each naming a PTE page.
 * See Documentation/networking/device_drivers/ethernet/kite/prm_pbl.rst.
 *
 * The builder gets its PTE and PDE pages through struct kite_ib_page_ops,
 * so that the KUnit tests can run it on fake pages and fail any
 * allocation on demand.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>

#include "kite_ib.h"

/* The most data pages a PBL can describe: a full level-2 list. */
#define KITE_IB_PBL_MAX_PAGES	(KITE_PBL_ENTRIES * KITE_PBL_ENTRIES)

/* The data page sizes the PBL format can express: 4 KiB .. 2 MiB. */
#define KITE_IB_PBL_PGSZ_MASK	GENMASK_ULL(KITE_PBL_MAX_PAGE_SHIFT, \
					    KITE_PBL_MIN_PAGE_SHIFT)

static int kite_ib_dma_page_alloc(void *ctx, struct kite_ib_dma_page *page)
{
	struct kite_ib_dev *dev = ctx;

	/* Coherent allocations are zeroed and at least page aligned. */
	page->va = dma_alloc_coherent(dev->dmadev, KITE_PBL_PAGE_SIZE,
				      &page->dma, GFP_KERNEL);
	return page->va ? 0 : -ENOMEM;
}

static void kite_ib_dma_page_free(void *ctx, struct kite_ib_dma_page *page)
{
	struct kite_ib_dev *dev = ctx;

	dma_free_coherent(dev->dmadev, KITE_PBL_PAGE_SIZE, page->va, page->dma);
	page->va = NULL;
	page->dma = 0;
}

/* 4 KiB pages of coherent DMA memory; the context is the kite_ib_dev. */
const struct kite_ib_page_ops kite_ib_dma_page_ops = {
	.alloc = kite_ib_dma_page_alloc,
	.free = kite_ib_dma_page_free,
};

/**
 * kite_ib_pbl_level() - the PBL level needed for a number of data pages
 * @npages: number of data pages
 *
 * Return: KITE_PBL_LEVEL_0 for one page, KITE_PBL_LEVEL_1 for up to 512,
 * KITE_PBL_LEVEL_2 for up to 512 * 512, -E2BIG for more and -EINVAL for
 * none.
 */
int kite_ib_pbl_level(u32 npages)
{
	if (!npages)
		return -EINVAL;
	if (npages == 1)
		return KITE_PBL_LEVEL_0;
	if (npages <= KITE_PBL_ENTRIES)
		return KITE_PBL_LEVEL_1;
	if (npages <= KITE_IB_PBL_MAX_PAGES)
		return KITE_PBL_LEVEL_2;
	return -E2BIG;
}

/*
 * Write the PTEs of data pages @first .. @first + @count - 1 into @ptes.
 * Queue PBLs mark the last data page and the one before it.
 */
static void kite_ib_pbl_fill(__le64 *ptes, const dma_addr_t *addrs,
			     u32 first, u32 count, u32 npages, bool queue)
{
	u32 i;

	for (i = 0; i < count; i++) {
		u32 k = first + i;
		u64 pte = (addrs[k] & KITE_PTE_ADDR) | KITE_PTE_VALID;

		if (queue && k == npages - 1)
			pte |= KITE_PTE_LAST;
		else if (queue && k + 2 == npages)
			pte |= KITE_PTE_NEXT_TO_LAST;
		ptes[i] = cpu_to_le64(pte);
	}
}

/* Level 2: one PDE page naming DIV_ROUND_UP(npages, 512) PTE pages. */
static int kite_ib_pbl_build_l2(struct kite_ib_pbl *pbl,
				const dma_addr_t *addrs, bool queue,
				const struct kite_ib_page_ops *ops, void *ctx)
{
	u32 npages = pbl->npages;
	__le64 *pdes;
	u32 i;
	int ret;

	pbl->num_ptes = DIV_ROUND_UP(npages, KITE_PBL_ENTRIES);
	pbl->ptes = kcalloc(pbl->num_ptes, sizeof(*pbl->ptes), GFP_KERNEL);
	if (!pbl->ptes)
		return -ENOMEM;

	ret = ops->alloc(ctx, &pbl->root);
	if (ret)
		return ret;
	pdes = pbl->root.va;

	for (i = 0; i < pbl->num_ptes; i++) {
		u32 first = i * KITE_PBL_ENTRIES;
		struct kite_ib_dma_page *pt = &pbl->ptes[i];

		ret = ops->alloc(ctx, pt);
		if (ret)
			return ret;
		/* PDEs never carry LAST or NEXT_TO_LAST. */
		pdes[i] = cpu_to_le64((pt->dma & KITE_PTE_ADDR) |
				      KITE_PTE_VALID);
		kite_ib_pbl_fill(pt->va, addrs, first,
				 min_t(u32, npages - first, KITE_PBL_ENTRIES),
				 npages, queue);
	}
	return 0;
}

/**
 * kite_ib_pbl_build() - build the page buffer list of a buffer
 * @pbl: the list to build; overwritten (it must not hold pages)
 * @addrs: bus addresses of the @npages data pages, in order
 * @npages: number of data pages, 1 .. 512 * 512
 * @page_shift: log2 of the data page size, KITE_PBL_MIN_PAGE_SHIFT ..
 *	KITE_PBL_MAX_PAGE_SHIFT; every address must be aligned to it
 * @queue: the buffer is a queue: mark the last and next-to-last PTEs
 * @ops: how to get the 4 KiB PTE and PDE pages
 * @ctx: passed to @ops
 *
 * Allocates the PTE page (level 1) or the PDE page and the PTE pages
 * (level 2), fills them with little-endian entries and fills @pbl->desc
 * for the command that hands the buffer to the device. A single page
 * needs no table: level 0 names it directly. On failure nothing stays
 * allocated and @pbl is left empty.
 *
 * Return: 0, -EINVAL for a bad page shift, no pages or a misaligned
 * address, -E2BIG for more pages than a PBL can describe, or -ENOMEM.
 */
int kite_ib_pbl_build(struct kite_ib_pbl *pbl, const dma_addr_t *addrs,
		      u32 npages, unsigned int page_shift, bool queue,
		      const struct kite_ib_page_ops *ops, void *ctx)
{
	u64 align_mask;
	int level;
	u32 i;
	int ret;

	memset(pbl, 0, sizeof(*pbl));
	if (page_shift < KITE_PBL_MIN_PAGE_SHIFT ||
	    page_shift > KITE_PBL_MAX_PAGE_SHIFT)
		return -EINVAL;
	level = kite_ib_pbl_level(npages);
	if (level < 0)
		return level;

	/* The device refuses a data page not aligned to the page size. */
	align_mask = BIT_ULL(page_shift) - 1;
	for (i = 0; i < npages; i++)
		if (addrs[i] & align_mask)
			return -EINVAL;

	pbl->level = level;
	pbl->npages = npages;
	pbl->page_shift = page_shift;

	switch (level) {
	case KITE_PBL_LEVEL_0:
		/* No PTE, so no LAST flags: addr is the data page itself. */
		pbl->desc.addr = cpu_to_le64(addrs[0]);
		break;
	case KITE_PBL_LEVEL_1:
		ret = ops->alloc(ctx, &pbl->root);
		if (ret)
			goto err_free_pbl;
		kite_ib_pbl_fill(pbl->root.va, addrs, 0, npages, npages, queue);
		pbl->desc.addr = cpu_to_le64(pbl->root.dma);
		break;
	default:
		ret = kite_ib_pbl_build_l2(pbl, addrs, queue, ops, ctx);
		if (ret)
			goto err_free_pbl;
		pbl->desc.addr = cpu_to_le64(pbl->root.dma);
		break;
	}
	pbl->desc.npages = cpu_to_le32(npages);
	pbl->desc.cfg = cpu_to_le32(FIELD_PREP(KITE_PBL_CFG_LEVEL, level) |
				    FIELD_PREP(KITE_PBL_CFG_PAGE_SHIFT,
					       page_shift));
	return 0;

err_free_pbl:
	kite_ib_pbl_free(pbl, ops, ctx);
	return ret;
}

/**
 * kite_ib_pbl_free() - free the PTE and PDE pages of a page buffer list
 * @pbl: a list kite_ib_pbl_build() built, or an empty (zeroed) one
 * @ops: the page operations it was built with
 * @ctx: passed to @ops
 *
 * The data pages are the caller's. Leaves @pbl empty, so freeing it again
 * does nothing. The device must no longer use the list.
 */
void kite_ib_pbl_free(struct kite_ib_pbl *pbl,
		      const struct kite_ib_page_ops *ops, void *ctx)
{
	u32 i;

	if (pbl->ptes) {
		for (i = 0; i < pbl->num_ptes; i++)
			if (pbl->ptes[i].va)
				ops->free(ctx, &pbl->ptes[i]);
		kfree(pbl->ptes);
	}
	if (pbl->root.va)
		ops->free(ctx, &pbl->root);
	memset(pbl, 0, sizeof(*pbl));
}

/* Queue geometry the device accepts: see prm_pbl.rst, "Queue PBLs". */
static int kite_ib_hwq_check(u32 depth, unsigned int entry_shift)
{
	if (!is_power_of_2(depth))
		return -EINVAL;
	/* Entries are powers of two no larger than 4 KiB. */
	if (entry_shift > KITE_PBL_PAGE_SHIFT)
		return -EINVAL;
	return 0;
}

/**
 * kite_ib_hwq_alloc_pages() - allocate a kernel queue from given page ops
 * @q: the queue; overwritten
 * @depth: number of entries, a power of two
 * @entry_shift: log2 of the entry size, at most 12
 * @ops: how to get 4 KiB pages, for the ring and for its PBL
 * @ctx: passed to @ops
 *
 * The ring is DIV_ROUND_UP(@depth << @entry_shift, 4 KiB) zeroed 4 KiB
 * pages, described by a queue PBL with page shift 12. kite_ib_hwq_alloc()
 * is this with coherent DMA pages; the KUnit tests use fake pages.
 *
 * Return: 0, -EINVAL for a bad geometry, -E2BIG if the ring is larger
 * than a PBL of 4 KiB pages can describe (1 GiB), or -ENOMEM.
 */
int kite_ib_hwq_alloc_pages(struct kite_ib_hwq *q, u32 depth,
			    unsigned int entry_shift,
			    const struct kite_ib_page_ops *ops, void *ctx)
{
	dma_addr_t *addrs;
	u64 npages;
	u32 i = 0;
	int ret;

	memset(q, 0, sizeof(*q));
	ret = kite_ib_hwq_check(depth, entry_shift);
	if (ret)
		return ret;
	npages = DIV_ROUND_UP_ULL((u64)depth << entry_shift,
				  KITE_PBL_PAGE_SIZE);
	if (npages > KITE_IB_PBL_MAX_PAGES)
		return -E2BIG;

	q->pages = kvcalloc(npages, sizeof(*q->pages), GFP_KERNEL);
	addrs = kvcalloc(npages, sizeof(*addrs), GFP_KERNEL);
	if (!q->pages || !addrs) {
		ret = -ENOMEM;
		goto err_free_arrays;
	}

	for (i = 0; i < npages; i++) {
		ret = ops->alloc(ctx, &q->pages[i]);
		if (ret)
			goto err_free_pages;
		addrs[i] = q->pages[i].dma;
	}

	ret = kite_ib_pbl_build(&q->pbl, addrs, npages, KITE_PBL_PAGE_SHIFT,
				true, ops, ctx);
	if (ret)
		goto err_free_pages;
	kvfree(addrs);

	q->depth = depth;
	q->entry_shift = entry_shift;
	return 0;

err_free_pages:
	while (i--)
		ops->free(ctx, &q->pages[i]);
err_free_arrays:
	kvfree(addrs);
	kvfree(q->pages);
	q->pages = NULL;
	return ret;
}

/**
 * kite_ib_hwq_free_pages() - free a queue kite_ib_hwq_alloc_pages() built
 * @q: the queue, or an empty (zeroed) one
 * @ops: the page operations it was allocated with
 * @ctx: passed to @ops
 *
 * Frees the PBL, then the ring. Leaves @q empty.
 */
void kite_ib_hwq_free_pages(struct kite_ib_hwq *q,
			    const struct kite_ib_page_ops *ops, void *ctx)
{
	u32 npages = q->pbl.npages;
	u32 i;

	kite_ib_pbl_free(&q->pbl, ops, ctx);
	if (q->pages) {
		for (i = 0; i < npages; i++)
			ops->free(ctx, &q->pages[i]);
		kvfree(q->pages);
	}
	memset(q, 0, sizeof(*q));
}

/**
 * kite_ib_hwq_alloc() - allocate a kernel queue in coherent DMA memory
 * @dev: the device
 * @q: the queue; overwritten
 * @depth: number of entries, a power of two
 * @entry_shift: log2 of the entry size, at most 12 (4 KiB)
 *
 * The ring is zeroed; @q->pbl.desc names it in the create command. Free
 * it with kite_ib_hwq_free() once the device has destroyed the queue.
 *
 * Return: 0 or a negative errno (see kite_ib_hwq_alloc_pages()).
 */
int kite_ib_hwq_alloc(struct kite_ib_dev *dev, struct kite_ib_hwq *q,
		      u32 depth, unsigned int entry_shift)
{
	return kite_ib_hwq_alloc_pages(q, depth, entry_shift,
				       &kite_ib_dma_page_ops, dev);
}

/*
 * Build the PBL of a pinned user buffer in the fewest data pages the
 * device's page sizes and the buffer's physical layout allow. @virt is the
 * address data page 0 is aligned to: the MR's iova, or 0 for a queue,
 * whose first entry must be at offset 0 of its first page.
 */
static int kite_ib_umem_build(struct kite_ib_dev *dev, struct ib_umem *umem,
			      u64 virt, bool queue, struct kite_ib_pbl *pbl)
{
	unsigned long pgsz_bitmap = dev->caps.page_size_cap &
				    KITE_IB_PBL_PGSZ_MASK;
	struct ib_block_iter biter;
	unsigned long pgsz;
	dma_addr_t *addrs;
	size_t npages;
	u32 i = 0;
	int ret;

	memset(pbl, 0, sizeof(*pbl));
	pgsz = ib_umem_find_best_pgsz(umem, pgsz_bitmap, virt);
	if (!pgsz)
		return -EINVAL;
	npages = ib_umem_num_dma_blocks(umem, pgsz);
	if (npages > KITE_IB_PBL_MAX_PAGES)
		return -E2BIG;
	/*
	 * A queue fills its pages exactly, except that one page may be
	 * larger than the queue (level 0).
	 */
	if (queue && npages > 1 && (u64)npages * pgsz != umem->length)
		return -EINVAL;

	addrs = kvcalloc(npages, sizeof(*addrs), GFP_KERNEL);
	if (!addrs)
		return -ENOMEM;
	/* Exactly ib_umem_num_dma_blocks() iterations. */
	rdma_umem_for_each_dma_block(umem, &biter, pgsz)
		addrs[i++] = rdma_block_iter_dma_address(&biter);

	ret = kite_ib_pbl_build(pbl, addrs, npages, ilog2(pgsz), queue,
				&kite_ib_dma_page_ops, dev);
	kvfree(addrs);
	return ret;
}

/**
 * kite_ib_hwq_alloc_user() - describe a queue in user memory
 * @dev: the device
 * @q: the queue; overwritten
 * @va: user address of the ring, aligned to at least 4 KiB
 * @len: its length in bytes: exactly @depth << @entry_shift
 * @depth: number of entries, a power of two
 * @entry_shift: log2 of the entry size, at most 12 (4 KiB)
 *
 * Pins the ring writable and builds a queue PBL of as few data pages
 * (4 KiB .. 2 MiB, as far as the device's page_size_cap allows) as the
 * buffer's physical layout permits. A ring smaller than 4 KiB uses one
 * page larger than itself (level 0). Free it with
 * kite_ib_hwq_free() once the device has destroyed the queue.
 *
 * Return: 0, -EINVAL for a bad geometry, a NULL or misaligned @va or a
 * buffer the device cannot map as a queue, -E2BIG, or an error from
 * pinning the memory.
 */
int kite_ib_hwq_alloc_user(struct kite_ib_dev *dev, struct kite_ib_hwq *q,
			   u64 va, u64 len, u32 depth,
			   unsigned int entry_shift)
{
	struct ib_umem *umem;
	int ret;

	memset(q, 0, sizeof(*q));
	ret = kite_ib_hwq_check(depth, entry_shift);
	if (ret)
		return ret;
	if (len != (u64)depth << entry_shift || !va ||
	    !IS_ALIGNED(va, KITE_PBL_PAGE_SIZE))
		return -EINVAL;

	umem = ib_umem_get_va(&dev->ibdev, va, len, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem))
		return PTR_ERR(umem);

	ret = kite_ib_umem_build(dev, umem, 0, true, &q->pbl);
	if (ret) {
		ib_umem_release(umem);
		return ret;
	}
	q->umem = umem;
	q->depth = depth;
	q->entry_shift = entry_shift;
	return 0;
}

/**
 * kite_ib_hwq_free() - free a kernel or user queue
 * @dev: the device
 * @q: a queue kite_ib_hwq_alloc() or kite_ib_hwq_alloc_user() set up, or
 *	an empty (zeroed) one
 *
 * The device must have destroyed the queue. Leaves @q empty.
 */
void kite_ib_hwq_free(struct kite_ib_dev *dev, struct kite_ib_hwq *q)
{
	if (q->umem) {
		kite_ib_pbl_free(&q->pbl, &kite_ib_dma_page_ops, dev);
		ib_umem_release(q->umem);
		memset(q, 0, sizeof(*q));
		return;
	}
	kite_ib_hwq_free_pages(q, &kite_ib_dma_page_ops, dev);
}

/**
 * kite_ib_hwq_entry() - the kernel address of a queue entry
 * @q: a kernel queue (kite_ib_hwq_alloc())
 * @index: a free-running entry counter; taken modulo the depth
 *
 * Return: the entry's address in the ring.
 */
void *kite_ib_hwq_entry(struct kite_ib_hwq *q, u32 index)
{
	size_t off = (size_t)(index & (q->depth - 1)) << q->entry_shift;

	return q->pages[off >> KITE_PBL_PAGE_SHIFT].va +
	       (off & (KITE_PBL_PAGE_SIZE - 1));
}

/**
 * kite_ib_umem_pbl() - build the PBL of a user memory region
 * @dev: the device
 * @umem: the region's pinned memory, registered by the caller
 * @iova: the region's I/O virtual address
 * @pbl: the list to build; overwritten
 *
 * Picks, with ib_umem_find_best_pgsz(), the data page size (4 KiB ..
 * 2 MiB, as far as the device's page_size_cap allows) that needs the
 * fewest pages; @iova then lies in data page 0 at offset @iova mod page
 * size. The PTEs carry no queue flags. Free the list with kite_ib_pbl_free() and
 * kite_ib_dma_page_ops after the device deregistered the region.
 *
 * Return: 0, -EINVAL if no supported page size fits the region, -E2BIG
 * for a region needing more than 512 * 512 pages, or -ENOMEM.
 */
int kite_ib_umem_pbl(struct kite_ib_dev *dev, struct ib_umem *umem,
		     u64 iova, struct kite_ib_pbl *pbl)
{
	return kite_ib_umem_build(dev, umem, iova, false, pbl);
}
