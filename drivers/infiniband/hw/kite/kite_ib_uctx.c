// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: user contexts and their doorbell pages.
 *
 * Each user context gets a device context number N (ALLOC_UCTX), which is
 * also its doorbell page: BAR2 page N. The page is offered to user space
 * through an rdma_user_mmap_entry; the device ignores doorbells rung on it
 * for objects of other contexts.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/mm.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"

struct kite_ib_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	phys_addr_t address;
};

static struct kite_ib_mmap_entry *
to_kite_mmap_entry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct kite_ib_mmap_entry, rdma_entry);
}

/**
 * kite_ib_udata_req() - copy a driver request from user space
 * @udata: the command's driver data
 * @req: where to copy it
 * @len: the size of the request this driver knows
 *
 * A shorter request is refused; a longer one (from a newer library) is
 * accepted only if the bytes this driver does not know are zero.
 *
 * Return: 0; -EINVAL if @udata is shorter than @len; -EOPNOTSUPP if the
 * extra bytes are not zero; -EFAULT.
 */
int kite_ib_udata_req(struct ib_udata *udata, void *req, size_t len)
{
	if (udata->inlen < len)
		return -EINVAL;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EOPNOTSUPP;
	return ib_copy_from_udata(req, udata, len);
}

/**
 * kite_ib_udata_resp() - copy a driver response to user space
 * @udata: the command's driver data
 * @resp: the response
 * @len: its size
 *
 * An older library's shorter buffer gets the leading part.
 *
 * Return: 0 or -EFAULT.
 */
int kite_ib_udata_resp(struct ib_udata *udata, void *resp, size_t len)
{
	return ib_copy_to_udata(udata, resp, min(udata->outlen, len));
}

/**
 * kite_ib_alloc_ucontext() - create a user context and its doorbell page
 * @ibuc: the core's context, embedded in &struct kite_ib_ucontext
 * @udata: struct kite_ib_alloc_ucontext_req in, _resp out
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibuc->device);
	struct kite_ib_ucontext *uc = to_kuctx(ibuc);
	struct kite_ib_alloc_ucontext_resp resp = {};
	struct kite_ib_alloc_ucontext_req req = {};
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_ALLOC_UCTX };
	struct kite_ib_mmap_entry *entry;
	int err;

	/* A doorbell page must be exactly one CPU page to be mapped alone. */
	if (PAGE_SIZE != KITE_DB_PAGE_SIZE)
		return -EOPNOTSUPP;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = kite_ib_udata_req(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask || req.reserved)
		return -EOPNOTSUPP;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	if (!cmd.result || cmd.result >= dev->kadev->db_pages) {
		dev_err(&dev->kadev->adev.dev, "device gave user context %u, outside the %u doorbell pages\n",
			cmd.result, dev->kadev->db_pages);
		err = -EIO;
		goto err_dealloc;
	}
	uc->uctx = cmd.result;

	entry = kzalloc_obj(*entry, GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	entry->address = dev->kadev->db_phys +
			 (phys_addr_t)uc->uctx * KITE_DB_PAGE_SIZE;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma_entry,
					  KITE_DB_PAGE_SIZE);
	if (err) {
		kfree(entry);
		goto err_dealloc;
	}
	uc->db_entry = &entry->rdma_entry;

	resp.db_page_size = KITE_DB_PAGE_SIZE;
	resp.db_mmap_offset = rdma_user_mmap_get_offset(uc->db_entry);
	err = kite_ib_udata_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove_entry;
	return 0;

err_remove_entry:
	rdma_user_mmap_entry_remove(uc->db_entry);
err_dealloc:
	kite_ib_cmd_destroy(dev, KITE_CMD_DEALLOC_UCTX, cmd.result);
	return err;
}

/**
 * kite_ib_dealloc_ucontext() - free a user context
 * @ibuc: the context; all its objects are gone
 */
void kite_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct kite_ib_ucontext *uc = to_kuctx(ibuc);

	rdma_user_mmap_entry_remove(uc->db_entry);
	kite_ib_cmd_destroy(to_kdev(ibuc->device), KITE_CMD_DEALLOC_UCTX,
			    uc->uctx);
}

/**
 * kite_ib_mmap() - map a context's doorbell page
 * @ibuc: the context
 * @vma: the mapping; its offset must be one of the context's entries
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct kite_ib_mmap_entry *entry;
	int err;

	/* Only this context's entries are found, so other pages are not. */
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_kite_mmap_entry(rdma_entry);
	err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->address),
				KITE_DB_PAGE_SIZE,
				pgprot_noncached(vma->vm_page_prot),
				rdma_entry);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/**
 * kite_ib_mmap_free() - free an mmap entry once nothing maps it
 * @rdma_entry: the entry
 */
void kite_ib_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	kfree(to_kite_mmap_entry(rdma_entry));
}
