// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for kite_ib's page buffer lists and kernel queue memory.
 *
 * The PBL builder gets its pages from fake page operations: kzalloc'ed
 * pages with made-up, unique bus addresses, which count allocations and
 * frees and can fail the Nth allocation. The checks walk a PBL the way
 * the device does, from the descriptor through the bus addresses, and
 * compare every entry with values computed here, not by the driver.
 *
 * Copyright (c) 2026 Kite
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "kite_ib.h"

#define PBL_ENTRIES		512u
#define PBL_MAX_PAGES		(PBL_ENTRIES * PBL_ENTRIES)

/* Fake bus addresses: PBL pages from the fake ops, and data pages. */
#define FAKE_PBL_BASE		0x200000000ULL
#define FAKE_DATA_BASE		0x300000000ULL
#define FAKE_HUGE_BASE		0x4000000000ULL
#define FAKE_MAX_PAGES		2048u

/**
 * struct kite_fake_pages - fake page operations' state
 * @test: the running test
 * @va: by slot, the kernel address of a live page, or NULL
 * @next: the next slot to hand out
 * @calls: alloc calls, failed ones included
 * @allocs: successful allocations
 * @frees: frees
 * @fail_at: fail the alloc call with this number (1-based); 0: never
 */
struct kite_fake_pages {
	struct kunit *test;
	void **va;
	u32 next;
	u32 calls;
	u32 allocs;
	u32 frees;
	u32 fail_at;
};

/**
 * struct kite_hwq_test - per-test fixture
 * @fake: the fake page operations' state
 * @pbl: a PBL the test builds; freed on exit if the test did not
 * @q: a queue the test allocates; freed on exit if the test did not
 */
struct kite_hwq_test {
	struct kite_fake_pages fake;
	struct kite_ib_pbl pbl;
	struct kite_ib_hwq q;
};

static int fake_alloc(void *ctx, struct kite_ib_dma_page *page)
{
	struct kite_fake_pages *f = ctx;

	f->calls++;
	if (f->fail_at && f->calls == f->fail_at)
		return -ENOMEM;
	if (f->next >= FAKE_MAX_PAGES) {
		KUNIT_FAIL(f->test, "fake page ops: more than %u pages",
			   FAKE_MAX_PAGES);
		return -ENOMEM;
	}
	page->va = kzalloc(KITE_PBL_PAGE_SIZE, GFP_KERNEL);
	if (!page->va)
		return -ENOMEM;
	page->dma = FAKE_PBL_BASE + ((u64)f->next << KITE_PBL_PAGE_SHIFT);
	f->va[f->next++] = page->va;
	f->allocs++;
	return 0;
}

static void fake_free(void *ctx, struct kite_ib_dma_page *page)
{
	struct kite_fake_pages *f = ctx;
	u64 slot = (page->dma - FAKE_PBL_BASE) >> KITE_PBL_PAGE_SHIFT;

	if (page->dma < FAKE_PBL_BASE || slot >= f->next ||
	    !f->va[slot] || f->va[slot] != page->va) {
		KUNIT_FAIL(f->test, "free of a page not allocated: dma %pad",
			   &page->dma);
		return;
	}
	kfree(page->va);
	f->va[slot] = NULL;
	f->frees++;
}

static const struct kite_ib_page_ops fake_ops = {
	.alloc = fake_alloc,
	.free = fake_free,
};

/* The kernel address of a live fake page, as the device would find it. */
static void *fake_lookup(struct kite_fake_pages *f, u64 dma)
{
	u64 slot;

	if (dma < FAKE_PBL_BASE || dma & (KITE_PBL_PAGE_SIZE - 1))
		return NULL;
	slot = (dma - FAKE_PBL_BASE) >> KITE_PBL_PAGE_SHIFT;
	return slot < f->next ? f->va[slot] : NULL;
}

/* Forget freed pages, so that a loop can allocate over and over. */
static void fake_reset(struct kunit *test, struct kite_fake_pages *f)
{
	KUNIT_ASSERT_EQ_MSG(test, f->allocs, f->frees,
			    "fake page ops: %u pages still allocated",
			    f->allocs - f->frees);
	f->next = 0;
	f->calls = 0;
	f->allocs = 0;
	f->frees = 0;
	f->fail_at = 0;
}

static int kite_hwq_test_init(struct kunit *test)
{
	struct kite_hwq_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->fake.va = kunit_kcalloc(test, FAKE_MAX_PAGES, sizeof(void *),
				   GFP_KERNEL);
	if (!t->fake.va)
		return -ENOMEM;
	t->fake.test = test;
	test->priv = t;
	return 0;
}

static void kite_hwq_test_exit(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	u32 i;

	/* After a failed assertion: free what the test left behind. */
	kite_ib_hwq_free_pages(&t->q, &fake_ops, &t->fake);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	for (i = 0; i < t->fake.next; i++)
		kfree(t->fake.va[i]);
}

KUNIT_DEFINE_ACTION_WRAPPER(kite_test_vfree, vfree, const void *);

/* @n data page addresses: page k at @base + k * @stride. */
static dma_addr_t *make_addrs(struct kunit *test, u32 n, u64 base, u64 stride)
{
	dma_addr_t *addrs;
	u32 k;

	addrs = vmalloc_array(n, sizeof(*addrs));
	KUNIT_ASSERT_NOT_NULL(test, addrs);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kite_test_vfree,
							addrs), 0);
	for (k = 0; k < n; k++)
		addrs[k] = base + k * stride;
	return addrs;
}

static u32 expect_cfg(unsigned int level, unsigned int page_shift)
{
	return FIELD_PREP(KITE_PBL_CFG_LEVEL, level) |
	       FIELD_PREP(KITE_PBL_CFG_PAGE_SHIFT, page_shift);
}

/* The PTE the device must find for data page @k of @npages. */
static u64 expect_pte(const dma_addr_t *addrs, u32 k, u32 npages, bool queue)
{
	u64 pte = addrs[k] | KITE_PTE_VALID;

	if (queue && k == npages - 1)
		pte |= KITE_PTE_LAST;
	if (queue && npages >= 2 && k == npages - 2)
		pte |= KITE_PTE_NEXT_TO_LAST;
	return pte;
}

/* Check one PTE page: @count used entries from data page @first, the
 * rest zero (pages come zeroed and the builder must not touch them).
 */
static void check_pte_page(struct kunit *test, const __le64 *ptes,
			   const dma_addr_t *addrs, u32 first, u32 count,
			   u32 npages, bool queue)
{
	u32 i;

	for (i = 0; i < PBL_ENTRIES; i++) {
		u64 got = le64_to_cpu(ptes[i]);
		u64 want = i < count ?
			   expect_pte(addrs, first + i, npages, queue) : 0;

		KUNIT_ASSERT_EQ_MSG(test, got, want,
				    "PTE of data page %u (entry %u): 0x%llx, expected 0x%llx",
				    first + i, i, got, want);
	}
}

/*
 * Walk @pbl as the device does, from the descriptor through bus
 * addresses, and check every entry against @addrs.
 */
static void check_pbl(struct kunit *test, struct kite_fake_pages *f,
		      const struct kite_ib_pbl *pbl, const dma_addr_t *addrs,
		      u32 npages, unsigned int page_shift, bool queue)
{
	u64 addr = le64_to_cpu(pbl->desc.addr);
	u32 cfg = le32_to_cpu(pbl->desc.cfg);
	unsigned int level;
	const __le64 *table;
	u32 i;

	KUNIT_ASSERT_EQ_MSG(test, le32_to_cpu(pbl->desc.npages), npages,
			    "desc.npages");
	level = npages == 1 ? 0 : npages <= PBL_ENTRIES ? 1 : 2;
	KUNIT_ASSERT_EQ_MSG(test, cfg, expect_cfg(level, page_shift),
			    "desc.cfg for level %u, page shift %u",
			    level, page_shift);
	KUNIT_EXPECT_EQ(test, pbl->level, level);
	KUNIT_EXPECT_EQ(test, pbl->npages, npages);
	KUNIT_EXPECT_EQ(test, pbl->page_shift, page_shift);

	if (level == 0) {
		KUNIT_EXPECT_EQ_MSG(test, addr, (u64)addrs[0],
				    "level 0: desc.addr is the data page");
		return;
	}

	table = fake_lookup(f, addr);
	KUNIT_ASSERT_NOT_NULL_MSG(test, table,
				  "desc.addr 0x%llx is not a live PBL page",
				  addr);
	if (level == 1) {
		check_pte_page(test, table, addrs, 0, npages, npages, queue);
		return;
	}

	for (i = 0; i < PBL_ENTRIES; i++) {
		u32 first = i * PBL_ENTRIES;
		u64 pde = le64_to_cpu(table[i]);
		const __le64 *ptes;

		if (first >= npages) {
			KUNIT_ASSERT_EQ_MSG(test, pde, 0ULL,
					    "unused PDE %u is 0x%llx", i, pde);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, pde & ~KITE_PTE_ADDR, KITE_PTE_VALID,
				    "PDE %u flags: 0x%llx (only VALID allowed)",
				    i, pde);
		ptes = fake_lookup(f, pde & KITE_PTE_ADDR);
		KUNIT_ASSERT_NOT_NULL_MSG(test, ptes,
					  "PDE %u names 0x%llx, not a live PBL page",
					  i, pde & KITE_PTE_ADDR);
		check_pte_page(test, ptes, addrs, first,
			       min(npages - first, PBL_ENTRIES), npages, queue);
	}
}

/* Build, check the walk and the page count, free, check nothing leaks. */
static void build_and_check(struct kunit *test, u32 npages,
			    unsigned int page_shift, u64 base, bool queue,
			    u32 want_pbl_pages)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t *addrs = make_addrs(test, npages, base, BIT_ULL(page_shift));
	int ret;

	fake_reset(test, &t->fake);
	ret = kite_ib_pbl_build(&t->pbl, addrs, npages, page_shift, queue,
				&fake_ops, &t->fake);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "build %u pages, shift %u, queue %d",
			    npages, page_shift, queue);
	KUNIT_EXPECT_EQ_MSG(test, t->fake.allocs, want_pbl_pages,
			    "PBL pages for %u data pages", npages);
	check_pbl(test, &t->fake, &t->pbl, addrs, npages, page_shift, queue);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ_MSG(test, t->fake.frees, t->fake.allocs,
			    "pages leaked by kite_ib_pbl_free()");
}

static void kite_ib_test_pbl_level(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(1), KITE_PBL_LEVEL_0);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(2), KITE_PBL_LEVEL_1);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(512), KITE_PBL_LEVEL_1);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(513), KITE_PBL_LEVEL_2);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(512 * 512), KITE_PBL_LEVEL_2);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(512 * 512 + 1), -E2BIG);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_level(U32_MAX), -E2BIG);
}

static void kite_ib_test_pbl_level0(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t addr = FAKE_DATA_BASE + 0x5000;
	dma_addr_t huge = FAKE_HUGE_BASE + (7ULL << 21);
	int ret;

	/* A queue in one page: no table, no flags on the address. */
	ret = kite_ib_pbl_build(&t->pbl, &addr, 1, 12, true, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(t->pbl.desc.addr), (u64)addr);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.npages), 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.cfg), 0x00000c00);
	KUNIT_EXPECT_EQ_MSG(test, t->fake.calls, 0, "level 0 needs no pages");
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, 0);

	/* The PRM's example: a CQ in one 2 MiB page. */
	build_and_check(test, 1, 21, huge, true, 0);
	ret = kite_ib_pbl_build(&t->pbl, &huge, 1, 21, false, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(t->pbl.desc.addr), (u64)huge);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.cfg), 0x00001500);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
}

/* The worked example of prm_pbl.rst, entry for entry. */
static void kite_ib_test_pbl_prm_example(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t *addrs = make_addrs(test, 64, FAKE_DATA_BASE, 0x2000);
	const __le64 *ptes;
	int ret;

	ret = kite_ib_pbl_build(&t->pbl, addrs, 64, 12, true, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.cfg), 0x00000c01);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.npages), 64);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(t->pbl.desc.addr), FAKE_PBL_BASE);
	ptes = fake_lookup(&t->fake, le64_to_cpu(t->pbl.desc.addr));
	KUNIT_ASSERT_NOT_NULL(test, ptes);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[0]), 0x0000000300000001ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[1]), 0x0000000300002001ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[61]), 0x000000030007a001ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[62]), 0x000000030007c005ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[63]), 0x000000030007e003ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[64]), 0ULL);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);

	/* The same pages as an MR: no LAST flags. */
	ret = kite_ib_pbl_build(&t->pbl, addrs, 64, 12, false, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ptes = fake_lookup(&t->fake, le64_to_cpu(t->pbl.desc.addr));
	KUNIT_ASSERT_NOT_NULL(test, ptes);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[62]), 0x000000030007c001ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[63]), 0x000000030007e001ULL);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, t->fake.allocs);
}

static void kite_ib_test_pbl_level1(struct kunit *test)
{
	/* Two pages: NEXT_TO_LAST on page 0, LAST on page 1. */
	build_and_check(test, 2, 12, FAKE_DATA_BASE, true, 1);
	build_and_check(test, 2, 12, FAKE_DATA_BASE, false, 1);
	build_and_check(test, 3, 12, FAKE_DATA_BASE, true, 1);
	/* A full PTE page. */
	build_and_check(test, 512, 12, FAKE_DATA_BASE, true, 1);
	build_and_check(test, 512, 12, FAKE_DATA_BASE, false, 1);
}

/* 513 pages: the PDE page names a full PTE page and one with one entry. */
static void kite_ib_test_pbl_level2_513(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t *addrs = make_addrs(test, 513, FAKE_DATA_BASE, 0x1000);
	const __le64 *pdes, *pt0, *pt1;
	int ret;

	build_and_check(test, 513, 12, FAKE_DATA_BASE, true, 3);
	build_and_check(test, 513, 12, FAKE_DATA_BASE, false, 3);

	/* The flags straddle the two PTE pages. */
	fake_reset(test, &t->fake);
	ret = kite_ib_pbl_build(&t->pbl, addrs, 513, 12, true, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.cfg), 0x00000c02);
	pdes = fake_lookup(&t->fake, le64_to_cpu(t->pbl.desc.addr));
	KUNIT_ASSERT_NOT_NULL(test, pdes);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(pdes[0]) & ~KITE_PTE_ADDR,
			KITE_PTE_VALID);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(pdes[1]) & ~KITE_PTE_ADDR,
			KITE_PTE_VALID);
	KUNIT_EXPECT_EQ_MSG(test, le64_to_cpu(pdes[2]), 0ULL,
			    "only two PDEs for 513 pages");
	pt0 = fake_lookup(&t->fake, le64_to_cpu(pdes[0]) & KITE_PTE_ADDR);
	pt1 = fake_lookup(&t->fake, le64_to_cpu(pdes[1]) & KITE_PTE_ADDR);
	KUNIT_ASSERT_NOT_NULL(test, pt0);
	KUNIT_ASSERT_NOT_NULL(test, pt1);
	KUNIT_EXPECT_PTR_NE(test, pt0, pt1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(pt0[510]),
			FAKE_DATA_BASE + 510 * 0x1000 + KITE_PTE_VALID);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(pt0[511]),
			FAKE_DATA_BASE + 511 * 0x1000 + KITE_PTE_VALID +
			KITE_PTE_NEXT_TO_LAST);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(pt1[0]),
			FAKE_DATA_BASE + 512 * 0x1000 + KITE_PTE_VALID +
			KITE_PTE_LAST);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(pt1[1]), 0ULL);
	KUNIT_EXPECT_EQ(test, t->pbl.num_ptes, 2);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, t->fake.allocs);
}

static void kite_ib_test_pbl_level2(struct kunit *test)
{
	/* The PRM's 600-page MR: entries 0-87 of the second PTE page. */
	build_and_check(test, 600, 12, FAKE_DATA_BASE, false, 3);
	build_and_check(test, 1024, 12, FAKE_DATA_BASE, true, 3);
	build_and_check(test, 1025, 12, FAKE_DATA_BASE, true, 4);
	/* Last two pages in the last PTE page, but not at its start. */
	build_and_check(test, 1026, 12, FAKE_DATA_BASE, true, 4);
}

/* The largest list: 512 full PTE pages behind a full PDE page. */
static void kite_ib_test_pbl_largest(struct kunit *test)
{
	build_and_check(test, PBL_MAX_PAGES, 12, FAKE_DATA_BASE, true, 513);
	build_and_check(test, PBL_MAX_PAGES, 12, FAKE_DATA_BASE, false, 513);
	/* 512 GiB of 2 MiB pages. */
	build_and_check(test, PBL_MAX_PAGES, 21, FAKE_HUGE_BASE, true, 513);
}

static void kite_ib_test_pbl_too_big(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t *addrs = make_addrs(test, PBL_MAX_PAGES + 1,
				       FAKE_DATA_BASE, 0x1000);

	KUNIT_EXPECT_EQ(test, kite_ib_pbl_build(&t->pbl, addrs,
						PBL_MAX_PAGES + 1, 12, true,
						&fake_ops, &t->fake), -E2BIG);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_build(&t->pbl, addrs, 0, 12, true,
						&fake_ops, &t->fake), -EINVAL);
	KUNIT_EXPECT_EQ(test, t->fake.calls, 0);
}

static void kite_ib_test_pbl_page_shift(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t *addrs = make_addrs(test, 4, FAKE_HUGE_BASE, SZ_2M);
	const __le64 *ptes;
	int ret;

	/* Page shifts outside 12..21 are refused. */
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_build(&t->pbl, addrs, 4, 11, true,
						&fake_ops, &t->fake), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_pbl_build(&t->pbl, addrs, 4, 22, true,
						&fake_ops, &t->fake), -EINVAL);
	KUNIT_EXPECT_EQ(test, t->fake.calls, 0);

	/* 2 MiB pages: address bits 20:12 are zero, flags as usual. */
	ret = kite_ib_pbl_build(&t->pbl, addrs, 4, 21, true, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->pbl.desc.cfg), 0x00001501);
	ptes = fake_lookup(&t->fake, le64_to_cpu(t->pbl.desc.addr));
	KUNIT_ASSERT_NOT_NULL(test, ptes);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[0]), 0x4000000001ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[1]), 0x4000200001ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[2]), 0x4000400005ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ptes[3]), 0x4000600003ULL);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);

	build_and_check(test, 513, 21, FAKE_HUGE_BASE, false, 3);
	/* Every size in between. */
	build_and_check(test, 8, 16, FAKE_HUGE_BASE, true, 1);
	build_and_check(test, 8, 20, FAKE_HUGE_BASE, true, 1);
}

static void expect_refused(struct kunit *test, dma_addr_t *addrs, u32 npages,
			   unsigned int page_shift, u32 bad, u64 offset)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t saved = addrs[bad];
	int ret;

	fake_reset(test, &t->fake);
	addrs[bad] += offset;
	ret = kite_ib_pbl_build(&t->pbl, addrs, npages, page_shift, true,
				&fake_ops, &t->fake);
	addrs[bad] = saved;
	KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL,
			    "page %u of %u at +0x%llx, page shift %u",
			    bad, npages, offset, page_shift);
	KUNIT_EXPECT_EQ_MSG(test, t->fake.calls, 0,
			    "a refused list allocates nothing");
	KUNIT_EXPECT_EQ(test, le64_to_cpu(t->pbl.desc.addr), 0);
	KUNIT_EXPECT_NULL(test, t->pbl.root.va);
}

static void kite_ib_test_pbl_misaligned(struct kunit *test)
{
	dma_addr_t *small = make_addrs(test, 600, FAKE_DATA_BASE, 0x1000);
	dma_addr_t *huge = make_addrs(test, 600, FAKE_HUGE_BASE, SZ_2M);

	/* Level 0, 1 and 2; first, middle and last page. */
	expect_refused(test, small, 1, 12, 0, 0x800);
	expect_refused(test, small, 1, 12, 0, 0x8);
	expect_refused(test, small, 2, 12, 0, 0x1);
	expect_refused(test, small, 512, 12, 511, 0x10);
	expect_refused(test, small, 600, 12, 300, 0x200);
	expect_refused(test, small, 600, 12, 599, 0x800);
	/* 4 KiB aligned is not enough for larger pages. */
	expect_refused(test, huge, 1, 21, 0, 0x1000);
	expect_refused(test, huge, 4, 21, 3, 0x100000);
	expect_refused(test, huge, 600, 21, 599, 0x1000);
	/* 4 KiB-spaced pages are not 8 KiB aligned. */
	expect_refused(test, small, 16, 13, 0, 0);
}

/* Fail each allocation in turn: every failure must leave nothing behind. */
static void check_alloc_failures(struct kunit *test, u32 npages,
				 u32 pbl_pages)
{
	struct kite_hwq_test *t = test->priv;
	dma_addr_t *addrs = make_addrs(test, npages, FAKE_DATA_BASE, 0x1000);
	u32 n;
	int ret;

	for (n = 1; n <= pbl_pages; n++) {
		fake_reset(test, &t->fake);
		t->fake.fail_at = n;
		ret = kite_ib_pbl_build(&t->pbl, addrs, npages, 12, true,
					&fake_ops, &t->fake);
		KUNIT_ASSERT_EQ_MSG(test, ret, -ENOMEM,
				    "%u pages, allocation %u failing", npages, n);
		KUNIT_ASSERT_EQ_MSG(test, t->fake.calls, n,
				    "%u pages: went on after allocation %u failed",
				    npages, n);
		KUNIT_ASSERT_EQ_MSG(test, t->fake.frees, t->fake.allocs,
				    "%u pages, allocation %u failing: %u leaked",
				    npages, n, t->fake.allocs - t->fake.frees);
		KUNIT_ASSERT_NULL(test, t->pbl.root.va);
		KUNIT_ASSERT_NULL(test, t->pbl.ptes);
		KUNIT_ASSERT_EQ(test, le64_to_cpu(t->pbl.desc.addr), 0);
	}
	/* One more allocation than needed never happens. */
	fake_reset(test, &t->fake);
	t->fake.fail_at = pbl_pages + 1;
	ret = kite_ib_pbl_build(&t->pbl, addrs, npages, 12, true, &fake_ops,
				&t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, t->fake.allocs, pbl_pages);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, pbl_pages);
}

static void kite_ib_test_pbl_alloc_failure(struct kunit *test)
{
	check_alloc_failures(test, 2, 1);
	check_alloc_failures(test, 512, 1);
	check_alloc_failures(test, 513, 3);
	check_alloc_failures(test, 1025, 4);
	check_alloc_failures(test, PBL_MAX_PAGES, 513);
}

static void kite_ib_test_pbl_free_twice(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;

	/* An empty list frees nothing; a freed one is empty. */
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, 0);
	build_and_check(test, 513, 12, FAKE_DATA_BASE, true, 3);
	kite_ib_pbl_free(&t->pbl, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, 3);
}

/* The PRM's CQ: 4096 CQEs of 64 bytes in 64 pages, addressed by counter. */
static void kite_ib_test_hwq_kernel(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	struct kite_ib_hwq *q = &t->q;
	dma_addr_t addrs[64];
	u32 k;
	int ret;

	ret = kite_ib_hwq_alloc_pages(q, 4096, 6, &fake_ops, &t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, q->depth, 4096);
	KUNIT_EXPECT_EQ(test, q->entry_shift, 6);
	KUNIT_EXPECT_NULL(test, q->umem);
	KUNIT_ASSERT_EQ_MSG(test, t->fake.allocs, 65,
			    "64 ring pages and one PTE page");
	for (k = 0; k < 64; k++) {
		KUNIT_ASSERT_NOT_NULL(test, q->pages[k].va);
		KUNIT_ASSERT_PTR_EQ(test, fake_lookup(&t->fake, q->pages[k].dma),
				    q->pages[k].va);
		addrs[k] = q->pages[k].dma;
	}
	check_pbl(test, &t->fake, &q->pbl, addrs, 64, 12, true);

	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 0), q->pages[0].va);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 63),
			    q->pages[0].va + 63 * 64);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 64), q->pages[1].va);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 5000),
			    q->pages[14].va + 0x200);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 4095),
			    q->pages[63].va + 4096 - 64);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 4096),
			    kite_ib_hwq_entry(q, 0));
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, U32_MAX),
			    kite_ib_hwq_entry(q, 4095));

	kite_ib_hwq_free_pages(q, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, 65);
	KUNIT_EXPECT_NULL(test, q->pages);
	KUNIT_EXPECT_EQ(test, q->pbl.npages, 0);
}

static void kite_ib_test_hwq_small(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	struct kite_ib_hwq *q = &t->q;
	int ret;

	/* 16 entries of 64 bytes: one page, partly used, level 0. */
	ret = kite_ib_hwq_alloc_pages(q, 16, 6, &fake_ops, &t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, t->fake.allocs, 1);
	KUNIT_EXPECT_EQ(test, q->pbl.level, KITE_PBL_LEVEL_0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(q->pbl.desc.addr),
			(u64)q->pages[0].dma);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(q->pbl.desc.cfg), 0x00000c00);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 17),
			    q->pages[0].va + 64);
	kite_ib_hwq_free_pages(q, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, 1);

	/* One 4 KiB entry per page. */
	fake_reset(test, &t->fake);
	ret = kite_ib_hwq_alloc_pages(q, 4, 12, &fake_ops, &t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, t->fake.allocs, 5);
	KUNIT_EXPECT_PTR_EQ(test, kite_ib_hwq_entry(q, 6), q->pages[2].va);
	kite_ib_hwq_free_pages(q, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, 5);
}

static void kite_ib_test_hwq_bad_geometry(struct kunit *test)
{
	struct kite_hwq_test *t = test->priv;
	struct kite_ib_hwq *q = &t->q;

	KUNIT_EXPECT_EQ(test, kite_ib_hwq_alloc_pages(q, 0, 6, &fake_ops,
						      &t->fake), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_hwq_alloc_pages(q, 3, 6, &fake_ops,
						      &t->fake), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_ib_hwq_alloc_pages(q, 1000, 6, &fake_ops,
						      &t->fake), -EINVAL);
	/* Entries larger than a page would cross page boundaries. */
	KUNIT_EXPECT_EQ(test, kite_ib_hwq_alloc_pages(q, 4, 13, &fake_ops,
						      &t->fake), -EINVAL);
	/* More than 1 GiB of 4 KiB pages. */
	KUNIT_EXPECT_EQ(test, kite_ib_hwq_alloc_pages(q, 1U << 19, 12,
						      &fake_ops, &t->fake),
			-E2BIG);
	KUNIT_EXPECT_EQ(test, kite_ib_hwq_alloc_pages(q, 1U << 31, 12,
						      &fake_ops, &t->fake),
			-E2BIG);
	KUNIT_EXPECT_EQ(test, t->fake.calls, 0);
	KUNIT_EXPECT_NULL(test, q->pages);
}

/* Fail each ring or PBL page allocation of a queue in turn. */
static void check_hwq_failures(struct kunit *test, u32 depth,
			       unsigned int entry_shift, u32 total)
{
	struct kite_hwq_test *t = test->priv;
	struct kite_ib_hwq *q = &t->q;
	u32 n;
	int ret;

	for (n = 1; n <= total; n++) {
		fake_reset(test, &t->fake);
		t->fake.fail_at = n;
		ret = kite_ib_hwq_alloc_pages(q, depth, entry_shift, &fake_ops,
					      &t->fake);
		KUNIT_ASSERT_EQ_MSG(test, ret, -ENOMEM,
				    "depth %u, allocation %u failing", depth, n);
		KUNIT_ASSERT_EQ_MSG(test, t->fake.frees, t->fake.allocs,
				    "depth %u, allocation %u failing: %u leaked",
				    depth, n, t->fake.allocs - t->fake.frees);
		KUNIT_ASSERT_NULL(test, q->pages);
		KUNIT_ASSERT_EQ(test, q->pbl.npages, 0);
	}
	fake_reset(test, &t->fake);
	t->fake.fail_at = total + 1;
	ret = kite_ib_hwq_alloc_pages(q, depth, entry_shift, &fake_ops,
				      &t->fake);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, t->fake.allocs, total);
	kite_ib_hwq_free_pages(q, &fake_ops, &t->fake);
	KUNIT_EXPECT_EQ(test, t->fake.frees, total);
}

static void kite_ib_test_hwq_alloc_failure(struct kunit *test)
{
	check_hwq_failures(test, 16, 6, 1);		/* level 0 */
	check_hwq_failures(test, 8, 12, 9);		/* level 1 */
	check_hwq_failures(test, 1024, 12, 1027);	/* level 2 */
}

static struct kunit_case kite_ib_hwq_test_cases[] = {
	KUNIT_CASE(kite_ib_test_pbl_level),
	KUNIT_CASE(kite_ib_test_pbl_level0),
	KUNIT_CASE(kite_ib_test_pbl_prm_example),
	KUNIT_CASE(kite_ib_test_pbl_level1),
	KUNIT_CASE(kite_ib_test_pbl_level2_513),
	KUNIT_CASE(kite_ib_test_pbl_level2),
	KUNIT_CASE(kite_ib_test_pbl_largest),
	KUNIT_CASE(kite_ib_test_pbl_too_big),
	KUNIT_CASE(kite_ib_test_pbl_page_shift),
	KUNIT_CASE(kite_ib_test_pbl_misaligned),
	KUNIT_CASE(kite_ib_test_pbl_alloc_failure),
	KUNIT_CASE(kite_ib_test_pbl_free_twice),
	KUNIT_CASE(kite_ib_test_hwq_kernel),
	KUNIT_CASE(kite_ib_test_hwq_small),
	KUNIT_CASE(kite_ib_test_hwq_bad_geometry),
	KUNIT_CASE(kite_ib_test_hwq_alloc_failure),
	{}
};

static struct kunit_suite kite_ib_hwq_test_suite = {
	.name = "kite_ib_hwq",
	.init = kite_hwq_test_init,
	.exit = kite_hwq_test_exit,
	.test_cases = kite_ib_hwq_test_cases,
};

kunit_test_suite(kite_ib_hwq_test_suite);
