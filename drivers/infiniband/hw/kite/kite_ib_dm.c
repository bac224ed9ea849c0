// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: device memory (ibv_alloc_dm()).
 *
 * With KITE_FEAT_DM the device has max_dm_size bytes of its own memory in
 * BAR4 (prm.rst). The driver divides it among user contexts in whole
 * pages, from a genalloc pool, so that no two contexts ever share a page:
 * each allocation is cleared (through a write-combining kernel mapping) and
 * offered to its context's mmap() through an rdma_user_mmap_entry (the
 * offset goes back in the KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET attribute
 * of the core's DM_ALLOC method). The entry owns the pages: freeing the DM
 * removes the entry, and the pages go back to the pool only when no
 * process maps them any more (kite_ib_mmap_free()). MRs over device memory
 * (kite_ib_reg_dm_mr()) are registered with KITE_MR_F_DM.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/genalloc.h>
#include <linux/io.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_std_types.h>
#define UVERBS_MODULE_NAME kite_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"

/*
 * The pool's addresses are BAR4 offsets plus dev->dm_base, the device
 * memory's size rounded up to a power of two: aligning the pool address
 * aligns the offset, and no allocation is at 0 (genalloc's failure).
 */
#define KITE_IB_DM_MAX		SZ_1G

/**
 * kite_ib_dm_init() - take the device memory into use
 * @dev: the device, its capabilities queried
 *
 * Without KITE_FEAT_DM, or with less than a page of device memory, the
 * device offers none (max_dm_size 0). A device reporting more than its
 * BAR4 holds has its memory ignored, with a warning.
 *
 * Return: 0 or -ENOMEM.
 */
int kite_ib_dm_init(struct kite_ib_dev *dev)
{
	struct kite_aux_dev *kadev = dev->kadev;
	u32 size = round_down(min(dev->caps.max_dm_size, KITE_IB_DM_MAX),
			      PAGE_SIZE);
	int err;

	if (!(dev->caps.features & KITE_FEAT_DM) || !size)
		return 0;
	if (size > kadev->dm_len || !PAGE_ALIGNED(kadev->dm_phys)) {
		ibdev_warn(&dev->ibdev, "device memory of %u bytes does not fit BAR%d (%pa, %llu bytes): not used\n",
			   size, KITE_BAR_DM, &kadev->dm_phys,
			   (u64)kadev->dm_len);
		return 0;
	}
	dev->dm = ioremap_wc(kadev->dm_phys, size);
	if (!dev->dm)
		return -ENOMEM;
	dev->dm_pool = gen_pool_create(PAGE_SHIFT, dev_to_node(dev->dmadev));
	if (!dev->dm_pool) {
		err = -ENOMEM;
		goto err_unmap;
	}
	dev->dm_base = roundup_pow_of_two(size);
	err = gen_pool_add_virt(dev->dm_pool, dev->dm_base, kadev->dm_phys,
				size, dev_to_node(dev->dmadev));
	if (err)
		goto err_destroy_pool;
	dev->dm_size = size;
	return 0;

err_destroy_pool:
	gen_pool_destroy(dev->dm_pool);
	dev->dm_pool = NULL;
err_unmap:
	iounmap(dev->dm);
	dev->dm = NULL;
	return err;
}

/**
 * kite_ib_dm_fini() - give the device memory up
 * @dev: the device, unregistered: no user context, so no mapping, is left
 *
 * gen_pool_destroy() must not see an allocation outstanding; should one
 * be (a driver bug), the pool and the mapping are left rather than the
 * kernel stopped.
 */
void kite_ib_dm_fini(struct kite_ib_dev *dev)
{
	if (!dev->dm_pool)
		return;
	if (WARN_ONCE(gen_pool_avail(dev->dm_pool) != dev->dm_size,
		      "kite_ib: %zu bytes of device memory still allocated\n",
		      dev->dm_size - gen_pool_avail(dev->dm_pool)))
		return;
	gen_pool_destroy(dev->dm_pool);
	dev->dm_pool = NULL;
	iounmap(dev->dm);
	dev->dm = NULL;
	dev->dm_size = 0;
}

/**
 * kite_ib_dm_pages() - the pages an allocation of device memory takes
 * @dm_size: the device memory's size (a multiple of PAGE_SIZE), or 0
 * @length: the bytes asked for
 * @log_align: log2 of the alignment asked for
 * @size: @length rounded up to whole pages
 * @align: the alignment in bytes, at least a page
 *
 * Return: 0; -EOPNOTSUPP without device memory; -EINVAL for a length of 0
 * or beyond the device memory, or an alignment larger than it.
 */
int kite_ib_dm_pages(u32 dm_size, u64 length, u32 log_align, size_t *size,
		     size_t *align)
{
	if (!dm_size)
		return -EOPNOTSUPP;
	if (!length || length > dm_size || log_align >= 32 ||
	    BIT_ULL(log_align) > dm_size)
		return -EINVAL;
	*size = PAGE_ALIGN(length);
	*align = max_t(size_t, PAGE_SIZE, BIT_ULL(log_align));
	return 0;
}

/**
 * kite_ib_dm_release() - give an allocation's pages back to the pool
 * @dev: the device
 * @entry: its mmap entry, being freed: no process maps the pages
 */
void kite_ib_dm_release(struct kite_ib_dev *dev,
			struct kite_ib_mmap_entry *entry)
{
	gen_pool_free(dev->dm_pool,
		      dev->dm_base + (entry->address - dev->kadev->dm_phys),
		      entry->rdma_entry.npages << PAGE_SHIFT);
}

/**
 * kite_ib_alloc_dm() - allocate device memory for a user context
 * @ibdev: the device
 * @ibuc: the context
 * @attr: the length and log2 alignment asked for; no flags
 * @attrs: where KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET goes
 *
 * Return: the DM, or an ERR_PTR: -EOPNOTSUPP for flags or without device
 * memory, -EINVAL for a length or alignment the device memory cannot
 * hold, -ENOMEM when no free range is large enough.
 */
struct ib_dm *kite_ib_alloc_dm(struct ib_device *ibdev,
			       struct ib_ucontext *ibuc,
			       struct ib_dm_alloc_attr *attr,
			       struct uverbs_attr_bundle *attrs)
{
	struct kite_ib_dev *dev = to_kdev(ibdev);
	struct genpool_data_align data;
	struct kite_ib_mmap_entry *entry;
	struct kite_ib_dm *dm;
	unsigned long addr;
	size_t size, align;
	u64 offset;
	int err;

	if (attr->flags) {
		ibdev_dbg(ibdev, "DM: flags %#x not supported\n", attr->flags);
		return ERR_PTR(-EOPNOTSUPP);
	}
	err = kite_ib_dm_pages(dev->dm_size, attr->length, attr->alignment,
			       &size, &align);
	if (err) {
		ibdev_dbg(ibdev, "DM: %llu bytes aligned to 2^%u: %d (device memory %u bytes)\n",
			  attr->length, attr->alignment, err, dev->dm_size);
		return ERR_PTR(err);
	}
	dm = kzalloc_obj(*dm, GFP_KERNEL);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	data.align = align;
	addr = gen_pool_alloc_algo(dev->dm_pool, size, gen_pool_first_fit_align,
				   &data);
	if (!addr) {
		ibdev_dbg(ibdev, "DM: no free range of %zu bytes\n", size);
		err = -ENOMEM;
		goto err_free_dm;
	}
	dm->offset = addr - dev->dm_base;
	/* Nothing of a previous owner reaches the new one. */
	memset_io(dev->dm + dm->offset, 0, size);
	dm->uctx = to_kuctx(ibuc)->uctx;
	entry = kite_ib_mmap_insert(ibuc, KITE_IB_MMAP_DM,
				    dev->kadev->dm_phys + dm->offset, size);
	if (IS_ERR(entry)) {
		err = PTR_ERR(entry);
		goto err_free_pages;
	}
	/* From here on the entry owns the pages (kite_ib_mmap_free()). */
	dm->entry = entry;
	offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	err = uverbs_copy_to(attrs, KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		goto err_remove_entry;
	return &dm->ibdm;

err_remove_entry:
	rdma_user_mmap_entry_remove(&entry->rdma_entry);
	goto err_free_dm;
err_free_pages:
	gen_pool_free(dev->dm_pool, addr, size);
err_free_dm:
	kfree(dm);
	return ERR_PTR(err);
}

/**
 * kite_ib_dealloc_dm() - free device memory
 * @ibdm: the DM; the RDMA core holds no MR of it any more
 * @attrs: unused
 *
 * Return: 0.
 */
int kite_ib_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct kite_ib_dm *dm = to_kdm(ibdm);

	/* The pages stay allocated while a process still maps them. */
	rdma_user_mmap_entry_remove(&dm->entry->rdma_entry);
	kfree(dm);
	return 0;
}

ADD_UVERBS_ATTRIBUTES_SIMPLE(kite_ib_dm_alloc, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

/*
 * KITE_IB_METHOD_DM_QUERY: what an importer of the DM needs to map it, its
 * entry's mmap() offset (the same user context: the same entry) and the
 * length asked for, the bound of its copies.
 */
static int UVERBS_HANDLER(KITE_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 KITE_IB_ATTR_QUERY_DM_HANDLE);
	struct kite_ib_dm *dm = to_kdm(ibdm);
	u64 offset = rdma_user_mmap_get_offset(&dm->entry->rdma_entry);
	u64 length = ibdm->length;	/* a u32 in the core, a u64 in the ABI */
	int err;

	err = uverbs_copy_to(attrs, KITE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		return err;
	return uverbs_copy_to(attrs, KITE_IB_ATTR_QUERY_DM_RESP_LENGTH,
			      &length, sizeof(length));
}

DECLARE_UVERBS_NAMED_METHOD(KITE_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(KITE_IB_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(KITE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(KITE_IB_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_METHODS(kite_ib_dm_methods, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(KITE_IB_METHOD_DM_QUERY));

/* Device memory's additions to the core's uverbs DM object. */
const struct uapi_definition kite_ib_dm_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &kite_ib_dm_alloc),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &kite_ib_dm_methods),
	{}
};
