// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: protection domains, memory regions, memory
 * windows and address handles.
 *
 * Memory keys are (index << 8) | tag: the device picks the index, the
 * driver the tag, which changes with every registration so that a stale
 * key of a freed MR does not match its successor. Memory windows take
 * their keys from the same table; user space binds them with work
 * requests, which the kernel never sees. Address handles are software
 * only: UD work requests carry the address vector inline.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <rdma/ib_umem.h>

#include <rdma/kite-abi.h>

#include "kite_ib.h"

/* Source of MR key tags. */
static atomic_t kite_ib_key_tag = ATOMIC_INIT(0);

static u32 kite_ib_next_tag(void)
{
	return atomic_inc_return(&kite_ib_key_tag) & KITE_MR_KEY_TAG;
}

/**
 * kite_ib_alloc_pd() - allocate a protection domain on the device
 * @ibpd: the core's PD, embedded in &struct kite_ib_pd
 * @udata: user data for a user PD, NULL for a kernel one (no driver data)
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibpd->device);
	struct kite_cmd_obj in = {
		.uctx = cpu_to_le32(kite_ib_uctx_of(udata)),
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_ALLOC_PD,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	to_kpd(ibpd)->pdn = cmd.result;
	return 0;
}

/**
 * kite_ib_dealloc_pd() - free a protection domain
 * @ibpd: the PD
 * @udata: unused
 *
 * Return: 0, also when the device has failed.
 */
int kite_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return kite_ib_cmd_destroy(to_kdev(ibpd->device), KITE_CMD_DEALLOC_PD,
				   to_kpd(ibpd)->pdn);
}

/**
 * kite_ib_access_check() - check IB access flags the device can honour
 * @dev: the device
 * @access: IB_ACCESS_* flags
 *
 * The optional flags (IB_ACCESS_OPTIONAL, e.g. relaxed ordering) are
 * hints a device may ignore, as Kite does. IB_ACCESS_MW_BIND is accepted
 * when the device has memory windows (KITE_FEAT_MW), IB_ACCESS_FLUSH_GLOBAL
 * when it has FLUSH (KITE_FEAT_FLUSH); IB_ACCESS_FLUSH_PERSISTENT never
 * (the RDMA core refuses it first: IB_DEVICE_FLUSH_PERSISTENT is not set).
 *
 * Return: 0; -EOPNOTSUPP for a flag Kite does not implement (zero-based
 * MRs, on-demand paging, ..., memory window binding on a device without
 * windows); -EINVAL for remote write or atomic access without local write
 * (IB rule the device enforces).
 */
static int kite_ib_access_check(struct kite_ib_dev *dev, int access)
{
	int ok = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
		 IB_ACCESS_OPTIONAL;

	if (dev->caps.features & KITE_FEAT_MW)
		ok |= IB_ACCESS_MW_BIND;
	if (dev->caps.features & KITE_FEAT_FLUSH)
		ok |= IB_ACCESS_FLUSH_GLOBAL;

	if (access & ~ok) {
		ibdev_dbg(&dev->ibdev, "MR: access flags %#x not supported\n",
			  access & ~ok);
		return -EOPNOTSUPP;
	}
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE)) {
		ibdev_dbg(&dev->ibdev,
			  "MR: access %#x: remote write or atomic without local write\n",
			  access);
		return -EINVAL;
	}
	return 0;
}

static int kite_ib_reg_mr_cmd(struct kite_ib_dev *dev, struct kite_ib_mr *mr,
			      u32 pdn, int access, u32 flags, u32 uctx,
			      u64 iova, u64 length)
{
	struct kite_cmd_reg_mr in = {
		.pdn = cpu_to_le32(pdn),
		.access = cpu_to_le32(kite_ib_mr_access_to_hw(access)),
		.flags = cpu_to_le32(flags |
				     FIELD_PREP(KITE_MR_KEY_TAG, kite_ib_next_tag())),
		.uctx = cpu_to_le32(uctx),
		.iova = cpu_to_le64(iova),
		.length = cpu_to_le64(length),
		.pbl = mr->pbl.desc,
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_REG_MR,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	mr->key = cmd.result;
	mr->ibmr.lkey = cmd.result;
	mr->ibmr.rkey = cmd.result;
	return 0;
}

/*
 * An MR without a page list: a DMA MR (KITE_MR_F_PHYS, all of the bus
 * space) or one over device memory (KITE_MR_F_DM at BAR4 offset @dm_off).
 */
static struct ib_mr *kite_ib_reg_flat_mr(struct ib_pd *ibpd, int access,
					 u32 flags, u32 uctx, u64 dm_off,
					 u64 length)
{
	struct kite_ib_dev *dev = to_kdev(ibpd->device);
	struct kite_ib_mr *mr;
	int err;

	err = kite_ib_access_check(dev, access);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pbl.desc.addr = cpu_to_le64(dm_off);
	err = kite_ib_reg_mr_cmd(dev, mr, to_kpd(ibpd)->pdn, access, flags,
				 uctx, 0, length);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->access = access;
	return &mr->ibmr;
}

/**
 * kite_ib_get_dma_mr() - a memory region covering all of the bus space
 * @ibpd: the PD
 * @access: IB_ACCESS_* flags; kernel consumers only
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *kite_ib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return kite_ib_reg_flat_mr(ibpd, access, KITE_MR_F_PHYS, 0, 0, U64_MAX);
}

static int kite_ib_mr_length_check(struct kite_ib_dev *dev, u64 length)
{
	if (!length || length > dev->caps.max_mr_size) {
		ibdev_dbg(&dev->ibdev, "MR: length %llu, the device has 1 .. %llu\n",
			  length, dev->caps.max_mr_size);
		return -EINVAL;
	}
	return 0;
}

/* The MR commands take no driver data: zeros from a newer library pass. */
static int kite_ib_mr_udata_check(struct kite_ib_dev *dev,
				  struct ib_udata *udata)
{
	int err = ib_is_udata_in_empty(udata);

	if (err)
		ibdev_dbg(&dev->ibdev, "MR: %zu bytes of driver data: %d\n",
			  udata->inlen, err);
	return err;
}

/*
 * Register pinned memory: its PBL and REG_MR. The MR owns @umem on success;
 * on failure the caller still does.
 */
static struct ib_mr *kite_ib_reg_umem_mr(struct ib_pd *ibpd,
					 struct ib_umem *umem, u64 iova,
					 int access, u32 uctx)
{
	struct kite_ib_dev *dev = to_kdev(ibpd->device);
	struct kite_ib_mr *mr;
	int err;

	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = kite_ib_umem_pbl(dev, umem, iova, &mr->pbl);
	if (err)
		goto err_free_mr;
	err = kite_ib_reg_mr_cmd(dev, mr, to_kpd(ibpd)->pdn, access, 0, uctx,
				 iova, umem->length);
	if (err)
		goto err_free_pbl;
	mr->umem = umem;
	mr->access = access;
	return &mr->ibmr;

err_free_pbl:
	kite_ib_pbl_free(&mr->pbl, &kite_ib_dma_page_ops, dev);
err_free_mr:
	kfree(mr);
	return ERR_PTR(err);
}

/* What every registration of pages checks first. */
static int kite_ib_reg_check(struct kite_ib_dev *dev, u64 length, int access,
			     struct ib_dmah *dmah)
{
	int err;

	if (dmah) {
		ibdev_dbg(&dev->ibdev, "MR: DMA handles are not supported\n");
		return -EOPNOTSUPP;
	}
	err = kite_ib_access_check(dev, access);
	if (err)
		return err;
	return kite_ib_mr_length_check(dev, length);
}

/**
 * kite_ib_reg_user_mr() - register user memory
 * @ibpd: the PD
 * @start: user virtual address
 * @length: bytes
 * @iova: the address the MR's users name it by
 * @access: IB_ACCESS_* flags
 * @dmah: DMA handle; not supported
 * @udata: user data: no driver data (zeros from a newer library are
 *	accepted)
 *
 * Return: the MR, or an ERR_PTR() of -EOPNOTSUPP for a DMA handle,
 * access flags Kite does not implement or non-zero driver data; -EINVAL
 * for a length of 0 or beyond max_mr_size or a remote access without
 * local write; -ENOMEM; -EFAULT; or the errno of pinning or of REG_MR.
 */
struct ib_mr *kite_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access,
				  struct ib_dmah *dmah,
				  struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibpd->device);
	struct ib_umem *umem;
	struct ib_mr *ibmr;
	int err;

	err = kite_ib_reg_check(dev, length, access, dmah);
	if (err)
		return ERR_PTR(err);
	err = kite_ib_mr_udata_check(dev, udata);
	if (err)
		return ERR_PTR(err);
	umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	ibmr = kite_ib_reg_umem_mr(ibpd, umem, iova, access,
				   kite_ib_uctx_of(udata));
	if (IS_ERR(ibmr))
		ib_umem_release(umem);
	return ibmr;
}

/**
 * kite_ib_reg_user_mr_dmabuf() - register memory a dma-buf exports
 * @ibpd: the PD
 * @offset: where the region starts in the buffer; its offset in a page
 *	is @iova's (the RDMA core checked)
 * @length: bytes
 * @iova: the address the MR's users name it by
 * @fd: the dma-buf's file descriptor
 * @access: IB_ACCESS_* flags
 * @dmah: DMA handle; not supported
 * @attrs: the method's attributes (Kite defines no driver attribute)
 *
 * The buffer is attached to the device, pinned and mapped for as long as
 * the MR exists (ib_umem_dmabuf_get_pinned()): Kite cannot take a page
 * fault, so an exporter that must move the buffer waits for the MR's
 * deregistration. From there on it is an MR like any other: the device
 * sees only the PBL of the buffer's bus addresses.
 *
 * Return: the MR, or an ERR_PTR() of -EOPNOTSUPP (a DMA handle, access
 * flags Kite does not implement), -EINVAL (a length of 0 or beyond
 * max_mr_size, a remote access without local write, a region past the
 * buffer's end, a file that is not a dma-buf), -EBADF, -ENOMEM, or the
 * errno of attaching, pinning or mapping the buffer or of REG_MR.
 */
struct ib_mr *kite_ib_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
					 u64 length, u64 iova, int fd,
					 int access, struct ib_dmah *dmah,
					 struct uverbs_attr_bundle *attrs)
{
	struct kite_ib_dev *dev = to_kdev(ibpd->device);
	struct ib_umem_dmabuf *umem_dmabuf;
	struct ib_mr *ibmr;
	int err;

	err = kite_ib_reg_check(dev, length, access, dmah);
	if (err)
		return ERR_PTR(err);
	umem_dmabuf = ib_umem_dmabuf_get_pinned(ibpd->device, offset, length,
						fd, access);
	if (IS_ERR(umem_dmabuf)) {
		ibdev_dbg(&dev->ibdev, "MR: dma-buf fd %d [%llu, +%llu): %pe\n",
			  fd, offset, length, umem_dmabuf);
		return ERR_CAST(umem_dmabuf);
	}
	ibmr = kite_ib_reg_umem_mr(ibpd, &umem_dmabuf->umem, iova, access,
				   kite_ib_uctx_of(&attrs->driver_udata));
	if (IS_ERR(ibmr))
		ib_umem_release(&umem_dmabuf->umem);
	return ibmr;
}

/**
 * kite_ib_reg_dm_mr() - register an MR over device memory
 * @ibpd: the PD
 * @ibdm: the device memory, from kite_ib_alloc_dm()
 * @attr: offset and length in it (the RDMA core checked that they fit in
 *	it) and the access flags, IB_ZERO_BASED among them (the core
 *	requires it): the MR's addresses start at 0
 * @attrs: unused
 *
 * Return: the MR, or an ERR_PTR: -EOPNOTSUPP or -EINVAL for access flags
 * as for other MRs.
 */
struct ib_mr *kite_ib_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
				struct ib_dm_mr_attr *attr,
				struct uverbs_attr_bundle *attrs)
{
	struct kite_ib_dm *dm = to_kdm(ibdm);

	/* Zero-based: iova 0 is at the allocation's offset plus attr's. */
	return kite_ib_reg_flat_mr(ibpd, attr->access_flags & ~IB_ZERO_BASED,
				   KITE_MR_F_DM, dm->uctx,
				   dm->offset + attr->offset, attr->length);
}

/**
 * kite_ib_rereg_mr_in() - build the input of REREG_MR
 * @key: the MR's key
 * @flags: IB_MR_REREG_* of what changes
 * @pdn: with IB_MR_REREG_PD, the new PD's number
 * @access: with IB_MR_REREG_ACCESS, the new IB_ACCESS_* flags
 * @iova: with IB_MR_REREG_TRANS, the new I/O virtual address
 * @length: with IB_MR_REREG_TRANS, the new length
 * @pbl: with IB_MR_REREG_TRANS, the new pages
 * @in: the command's input; the fields of what does not change are zero
 */
void kite_ib_rereg_mr_in(u32 key, int flags, u32 pdn, int access, u64 iova,
			 u64 length, const struct kite_pbl *pbl,
			 struct kite_cmd_rereg_mr *in)
{
	u32 hwflags = 0;

	memset(in, 0, sizeof(*in));
	in->key = cpu_to_le32(key);
	if (flags & IB_MR_REREG_TRANS) {
		hwflags |= KITE_REREG_F_TRANS;
		in->iova = cpu_to_le64(iova);
		in->length = cpu_to_le64(length);
		in->pbl = *pbl;
	}
	if (flags & IB_MR_REREG_PD) {
		hwflags |= KITE_REREG_F_PD;
		in->pdn = cpu_to_le32(pdn);
	}
	if (flags & IB_MR_REREG_ACCESS) {
		hwflags |= KITE_REREG_F_ACCESS;
		in->access = cpu_to_le32(kite_ib_mr_access_to_hw(access));
	}
	in->flags = cpu_to_le32(hwflags);
}

/**
 * kite_ib_rereg_user_mr() - change a user MR's pages, PD or access in place
 * @ibmr: the MR, from kite_ib_reg_user_mr()
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD and IB_MR_REREG_ACCESS
 * @start: with IB_MR_REREG_TRANS, the new user virtual address
 * @length: with IB_MR_REREG_TRANS, the new length
 * @iova: with IB_MR_REREG_TRANS, the new address the MR's users name it by
 * @access: with IB_MR_REREG_ACCESS, the new IB_ACCESS_* flags
 * @ibpd: with IB_MR_REREG_PD, the new PD
 * @udata: user data: no driver data (zeros from a newer library are
 *	accepted)
 *
 * REREG_MR changes the MR under its keys: a peer holding the rkey keeps
 * using it, with the new rights. New pages are pinned before the command
 * and the old ones released after it, so the device never holds an
 * unpinned page; a failure leaves the MR as it was. Pages pinned
 * read-only are pinned again when the new access makes them writable (a
 * dma-buf's are mapped for both directions whatever the access). New
 * pages of an MR that was a dma-buf's are user memory.
 *
 * Return: NULL (the MR changed in place), or an ERR_PTR() of -EOPNOTSUPP
 * (a device without REREG_MR, access flags Kite does not implement,
 * non-zero driver data), -EINVAL (a length of 0 or beyond max_mr_size, a
 * remote access without local write), -EBUSY (memory windows are bound
 * to the MR), or the errno of pinning or of REREG_MR.
 */
struct ib_mr *kite_ib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibmr->device);
	struct kite_ib_mr *mr = to_kmr(ibmr);
	struct kite_cmd_rereg_mr in;
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_REREG_MR,
		.in = &in,
		.in_len = sizeof(in),
	};
	struct kite_ib_pbl pbl = {};
	struct ib_umem *umem = NULL;
	int err;

	if (!(dev->caps.features & KITE_FEAT_REREG_MR) || !mr->umem)
		return ERR_PTR(-EOPNOTSUPP);
	err = kite_ib_mr_udata_check(dev, udata);
	if (err)
		return ERR_PTR(err);
	if (flags & IB_MR_REREG_ACCESS) {
		err = kite_ib_access_check(dev, access);
		if (err)
			return ERR_PTR(err);
	} else {
		access = mr->access;
	}
	if (!(flags & IB_MR_REREG_TRANS) && ib_access_writable(access) &&
	    !mr->umem->writable && !mr->umem->is_dmabuf) {
		/* The same pages, pinned for writing this time. */
		flags |= IB_MR_REREG_TRANS;
		start = mr->umem->address;
		length = mr->umem->length;
		iova = ibmr->iova;
	}
	if (flags & IB_MR_REREG_TRANS) {
		err = kite_ib_mr_length_check(dev, length);
		if (err)
			return ERR_PTR(err);
		umem = ib_umem_get_va(ibmr->device, start, length, access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
		err = kite_ib_umem_pbl(dev, umem, iova, &pbl);
		if (err)
			goto err_release_umem;
	}
	kite_ib_rereg_mr_in(mr->key, flags,
			    (flags & IB_MR_REREG_PD) ? to_kpd(ibpd)->pdn : 0,
			    access, iova, length, &pbl.desc, &in);
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		goto err_free_pbl;
	if (umem) {
		kite_ib_pbl_free(&mr->pbl, &kite_ib_dma_page_ops, dev);
		ib_umem_release(mr->umem);
		mr->pbl = pbl;
		mr->umem = umem;
	}
	mr->access = access;
	return NULL;

err_free_pbl:
	if (umem)
		kite_ib_pbl_free(&pbl, &kite_ib_dma_page_ops, dev);
err_release_umem:
	ib_umem_release(umem);
	return ERR_PTR(err);
}

/**
 * kite_ib_alloc_mr() - a memory region for fast registration by WQE
 * @ibpd: the PD
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: pages the MR can map, at most max_fast_reg_pages
 *
 * Return: the MR, invalid until a REG_MR work request, or an ERR_PTR().
 */
struct ib_mr *kite_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct kite_ib_dev *dev = to_kdev(ibpd->device);
	struct kite_cmd_alloc_mr in = {
		.pdn = cpu_to_le32(to_kpd(ibpd)->pdn),
		.max_pages = cpu_to_le32(max_num_sg),
		.flags = cpu_to_le32(FIELD_PREP(KITE_MR_KEY_TAG,
						kite_ib_next_tag())),
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_ALLOC_MR,
		.in = &in,
		.in_len = sizeof(in),
	};
	struct kite_ib_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > dev->caps.max_fast_reg_pages ||
	    max_num_sg > KITE_PBL_ENTRIES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* One PTE page: the level-1 list a REG_MR work request names. */
	err = kite_ib_dma_page_ops.alloc(dev, &mr->frpl);
	if (err)
		goto err_free_mr;
	mr->max_pages = max_num_sg;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		goto err_free_frpl;
	mr->key = cmd.result;
	mr->ibmr.lkey = cmd.result;
	mr->ibmr.rkey = cmd.result;
	return &mr->ibmr;

err_free_frpl:
	kite_ib_dma_page_ops.free(dev, &mr->frpl);
err_free_mr:
	kfree(mr);
	return ERR_PTR(err);
}

static int kite_ib_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct kite_ib_mr *mr = to_kmr(ibmr);
	__le64 *ptes = mr->frpl.va;

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	ptes[mr->npages++] = cpu_to_le64((addr & KITE_PTE_ADDR) | KITE_PTE_VALID);
	return 0;
}

/**
 * kite_ib_map_mr_sg() - fill a fast-registration MR's page list
 * @ibmr: an MR from kite_ib_alloc_mr()
 * @sg: the scatterlist
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry
 *
 * Return: the number of entries mapped.
 */
int kite_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset)
{
	struct kite_ib_mr *mr = to_kmr(ibmr);

	if (!mr->frpl.va)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, kite_ib_set_page);
}

/**
 * kite_ib_dereg_mr() - deregister and free a memory region
 * @ibmr: the MR
 * @udata: unused
 *
 * Return: 0, also when the device has failed; -EBUSY while memory windows
 * are bound to the MR (the device knows: user space binds them), which
 * stays registered; or the errno of another DEREG_MR failure.
 */
int kite_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibmr->device);
	struct kite_ib_mr *mr = to_kmr(ibmr);
	int err;

	err = kite_ib_cmd_destroy(dev, KITE_CMD_DEREG_MR, mr->key);
	if (err)
		return err;
	if (mr->frpl.va)
		kite_ib_dma_page_ops.free(dev, &mr->frpl);
	kite_ib_pbl_free(&mr->pbl, &kite_ib_dma_page_ops, dev);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/**
 * kite_ib_alloc_mw_in() - the ALLOC_MW command for a memory window
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2 (Kite's type 2 windows are IB's 2B:
 *	bound to one QP)
 * @pdn: the PD's number
 * @uctx: the owner's user context number
 * @tag: the tag of the window's first key (KITE_MR_KEY_TAG bits are used)
 * @in: the command input to fill
 *
 * Return: 0, or -EOPNOTSUPP for another window type.
 */
int kite_ib_alloc_mw_in(enum ib_mw_type type, u32 pdn, u32 uctx, u32 tag,
			struct kite_cmd_alloc_mw *in)
{
	u32 hw_type;

	switch (type) {
	case IB_MW_TYPE_1:
		hw_type = KITE_MW_TYPE_1;
		break;
	case IB_MW_TYPE_2:
		hw_type = KITE_MW_TYPE_2;
		break;
	default:
		return -EOPNOTSUPP;
	}
	memset(in, 0, sizeof(*in));
	in->pdn = cpu_to_le32(pdn);
	in->type = cpu_to_le32(hw_type);
	in->flags = cpu_to_le32(FIELD_PREP(KITE_MR_KEY_TAG, tag));
	in->uctx = cpu_to_le32(uctx);
	return 0;
}

/**
 * kite_ib_alloc_mw() - allocate a memory window
 * @ibmw: the core's MW, embedded in &struct kite_ib_mw; its PD and type
 *	are set (the core accepts types 1 and 2 only)
 * @udata: user data: no driver data (zeros from a newer library are
 *	accepted); the kernel has no memory windows of its own
 *
 * The window starts unbound; its rkey is the key a type 1 window's first
 * ibv_bind_mw() names. Binding, invalidation and remote use are work
 * requests and RDMA requests the device checks (prm_mr.rst).
 *
 * Return: 0; -EOPNOTSUPP on a device without memory windows, for a kernel
 * caller, or with non-zero driver data; or the errno of ALLOC_MW (-ENOMEM
 * when the memory translation table is full).
 */
int kite_ib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibmw->device);
	struct kite_ib_mw *mw = to_kmw(ibmw);
	struct kite_cmd_alloc_mw in;
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_ALLOC_MW,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	if (!(dev->caps.features & KITE_FEAT_MW) || !udata)
		return -EOPNOTSUPP;
	err = ib_is_udata_in_empty(udata);
	if (err) {
		ibdev_dbg(&dev->ibdev, "MW: %zu bytes of driver data: %d\n",
			  udata->inlen, err);
		return err;
	}
	err = kite_ib_alloc_mw_in(ibmw->type, to_kpd(ibmw->pd)->pdn,
				  kite_ib_uctx_of(udata), kite_ib_next_tag(),
				  &in);
	if (err)
		return err;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	mw->key = cmd.result;
	ibmw->rkey = cmd.result;
	return 0;
}

/**
 * kite_ib_dealloc_mw() - free a memory window, unbinding it
 * @ibmw: the MW
 *
 * Return: 0, also when the device has failed; or the errno of DEALLOC_MW.
 */
int kite_ib_dealloc_mw(struct ib_mw *ibmw)
{
	return kite_ib_cmd_destroy(to_kdev(ibmw->device), KITE_CMD_DEALLOC_MW,
				   to_kmw(ibmw)->key);
}

/**
 * kite_ib_create_ah() - build the address vector UD work requests carry
 * @ibah: the core's AH, embedded in &struct kite_ib_ah
 * @init_attr: the address
 * @udata: user AHs: struct kite_ib_create_ah_resp out (the address
 *	vector the library puts in its UD WQEs); no request
 *
 * Context: may be called in atomic context; does not sleep (a user AH's
 * response is copied in process context).
 * Return: 0 or a negative errno.
 */
int kite_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		      struct ib_udata *udata)
{
	struct kite_wqe_ud *av = &to_kah(ibah)->av;
	struct kite_cmd_modify_qp path = {};
	int err;

	err = ib_is_udata_in_empty(udata);
	if (err)
		return err;
	/* The same translation as a connected QP's path. */
	err = kite_ib_av_to_cmd(init_attr->ah_attr, &path);
	if (err)
		return err;
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, path.dgid, sizeof(av->dgid));
	memcpy(av->dmac, path.dmac, sizeof(av->dmac));
	av->vlan = path.vlan;
	av->sgid_index = path.sgid_index;
	av->hop_limit = path.hop_limit;
	av->traffic_class = path.traffic_class;
	av->net_type = path.net_type;
	av->flow_label = path.flow_label;
	if (udata && udata->outlen) {
		struct kite_ib_create_ah_resp resp = {};

		static_assert(sizeof(resp.av) == sizeof(*av));
		memcpy(resp.av, av, sizeof(*av));
		return ib_respond_udata(udata, resp);
	}
	return 0;
}

/**
 * kite_ib_destroy_ah() - destroy an address handle
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0
 *
 * The address vector lives in the AH itself, which the core frees.
 *
 * Return: 0.
 */
int kite_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}
