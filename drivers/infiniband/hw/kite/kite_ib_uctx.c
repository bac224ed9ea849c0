// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: user contexts and their doorbell pages.
 *
 * Each user context gets a device context number N (ALLOC_UCTX), which is
 * also its doorbell page: BAR2 page N. The page is offered to user space
 * through an rdma_user_mmap_entry; the device ignores doorbells rung on it
 * for objects of other contexts. Each context also maps, read-only, the
 * device status page (struct kite_ib_dev_status), one page per device that
 * reads KITE_IB_DEV_STATE_ALIVE while the device works.
 *
 * When the device goes away with contexts open (reset, fatal error,
 * unbind, module unload, PCI removal), ib_unregister_device() does not
 * wait for the processes: the RDMA core destroys each context's objects
 * through the driver's destroy verbs, replaces every mapping of the
 * context by a zero page (so the doorbell page no longer reaches the
 * device, and the status page reads 0), calls
 * kite_ib_disassociate_ucontext() and frees the context. The process's
 * verbs then fail with EIO, its async event file reports
 * IB_EVENT_DEVICE_FATAL and its completion channels EIO; libkite, seeing
 * the status page read 0, fails poll_cq on an empty CQ and post_send and
 * post_recv with EIO.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/mm.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_std_types.h>
#define UVERBS_MODULE_NAME kite_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"

static struct kite_ib_mmap_entry *
to_kite_mmap_entry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct kite_ib_mmap_entry, rdma_entry);
}

/**
 * kite_ib_status_alloc() - allocate the device status page, ALIVE
 * @dev: the device
 *
 * Return: 0 or -ENOMEM.
 */
int kite_ib_status_alloc(struct kite_ib_dev *dev)
{
	dev->status = (void *)get_zeroed_page(GFP_KERNEL);
	if (!dev->status)
		return -ENOMEM;
	WRITE_ONCE(dev->status->state, KITE_IB_DEV_STATE_ALIVE);
	return 0;
}

/**
 * kite_ib_status_set_dead() - tell user space that the device failed
 * @dev: the device
 *
 * Context: any context.
 */
void kite_ib_status_set_dead(struct kite_ib_dev *dev)
{
	if (dev->status)
		WRITE_ONCE(dev->status->state, 0);
}

/**
 * kite_ib_status_free() - free the device status page
 * @dev: the device, unregistered: every user mapping of the page is gone
 */
void kite_ib_status_free(struct kite_ib_dev *dev)
{
	free_page((unsigned long)dev->status);
	dev->status = NULL;
}

/**
 * kite_ib_mmap_insert() - offer pages to a user context's mmap()
 * @ibuc: the context
 * @type: what they are
 * @address: bus or physical address of the first
 * @len: length in bytes, a multiple of PAGE_SIZE
 *
 * Return: the entry (its offset: rdma_user_mmap_get_offset()), or an
 * ERR_PTR.
 */
struct kite_ib_mmap_entry *
kite_ib_mmap_insert(struct ib_ucontext *ibuc, enum kite_ib_mmap_type type,
		    phys_addr_t address, size_t len)
{
	struct kite_ib_mmap_entry *entry;
	int err;

	entry = kzalloc_obj(*entry, GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->address = address;
	entry->type = type;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma_entry, len);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	return entry;
}

/*
 * A response buffer at least this long gets the status page: a library
 * older than the status page has a shorter one.
 */
#define KITE_IB_UCTX_RESP_STATUS_END					\
	offsetofend(struct kite_ib_alloc_ucontext_resp, status_mmap_offset)

/*
 * What a library learns of a context: its doorbell page, its status page
 * when the context has one and the library's @outlen bytes hold it, and
 * the device's capabilities (which a shorter buffer does not get).
 */
static void kite_ib_uctx_resp(struct kite_ib_ucontext *uc, size_t outlen,
			      struct kite_ib_alloc_ucontext_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->db_page_size = KITE_DB_PAGE_SIZE;
	resp->db_mmap_offset = rdma_user_mmap_get_offset(uc->db_entry);
	if (to_kdev(uc->ibuc.device)->kadev->rtc)
		resp->caps |= KITE_IB_UCTX_CAP_RTC;
	if (uc->status_entry && outlen >= KITE_IB_UCTX_RESP_STATUS_END) {
		resp->comp_mask |= KITE_IB_UCTX_RESP_STATUS_PAGE;
		resp->status_page_size = PAGE_SIZE;
		resp->status_mmap_offset =
			rdma_user_mmap_get_offset(uc->status_entry);
	}
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
	struct kite_ib_alloc_ucontext_resp resp;
	struct kite_ib_alloc_ucontext_req req = {};
	struct kite_ib_cmd cmd = { .opcode = KITE_CMD_ALLOC_UCTX };
	struct kite_ib_mmap_entry *entry;
	int err;

	/* A doorbell page must be exactly one CPU page to be mapped alone. */
	if (PAGE_SIZE != KITE_DB_PAGE_SIZE)
		return -EOPNOTSUPP;
	/* An older library's response ends with the doorbell page. */
	if (udata->outlen < offsetofend(typeof(resp), db_mmap_offset))
		return -EINVAL;
	err = ib_copy_validate_udata_in(udata, req, reserved);
	if (err)
		return err;
	if (req.comp_mask || req.reserved)
		return -EOPNOTSUPP;

	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	if (!cmd.result || cmd.result >= dev->kadev->db_pages) {
		ibdev_err(&dev->ibdev, "device gave user context %u, outside the %u doorbell pages\n",
			  cmd.result, dev->kadev->db_pages);
		err = -EIO;
		goto err_dealloc;
	}
	uc->uctx = cmd.result;

	entry = kite_ib_mmap_insert(ibuc, KITE_IB_MMAP_DB,
				    dev->kadev->db_phys +
				    (phys_addr_t)uc->uctx * KITE_DB_PAGE_SIZE,
				    KITE_DB_PAGE_SIZE);
	if (IS_ERR(entry)) {
		err = PTR_ERR(entry);
		goto err_dealloc;
	}
	uc->db_entry = &entry->rdma_entry;

	if (udata->outlen >= KITE_IB_UCTX_RESP_STATUS_END) {
		entry = kite_ib_mmap_insert(ibuc, KITE_IB_MMAP_STATUS,
					    virt_to_phys(dev->status),
					    PAGE_SIZE);
		if (IS_ERR(entry)) {
			err = PTR_ERR(entry);
			goto err_remove_db_entry;
		}
		uc->status_entry = &entry->rdma_entry;
	}

	kite_ib_uctx_resp(uc, udata->outlen, &resp);
	err = ib_respond_udata(udata, resp);
	if (err)
		goto err_remove_status_entry;
	return 0;

err_remove_status_entry:
	if (uc->status_entry)
		rdma_user_mmap_entry_remove(uc->status_entry);
err_remove_db_entry:
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

	if (uc->status_entry)
		rdma_user_mmap_entry_remove(uc->status_entry);
	rdma_user_mmap_entry_remove(uc->db_entry);
	kite_ib_cmd_destroy(to_kdev(ibuc->device), KITE_CMD_DEALLOC_UCTX,
			    uc->uctx);
}

/**
 * kite_ib_query_ucontext() - what another process needs to use a context
 * @ibuc: the context, imported by a process given a duplicate of the
 *	command file (ibv_import_device())
 * @attrs: where KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX goes
 *
 * The answer is the context's struct kite_ib_alloc_ucontext_resp: the
 * same doorbell and status pages, mapped again by the importer.
 *
 * Return: 0 or the errno of the copy.
 */
int kite_ib_query_ucontext(struct ib_ucontext *ibuc,
			   struct uverbs_attr_bundle *attrs)
{
	struct kite_ib_alloc_ucontext_resp resp;

	kite_ib_uctx_resp(to_kuctx(ibuc),
			  uverbs_attr_get_len(attrs,
					      KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX),
			  &resp);
	return uverbs_copy_to_struct_or_zero(attrs,
					     KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
					     &resp, sizeof(resp));
}

/**
 * kite_ib_disassociate_ucontext() - the device goes away with @ibuc open
 * @ibuc: the context
 *
 * Called by the RDMA core while unregistering the device, after it has
 * destroyed the context's objects and zapped its mappings, and before
 * kite_ib_dealloc_ucontext(). Nothing of the device is left to the
 * process: its doorbell page now reaches a zero page, not BAR2. Having
 * this operation is what lets ib_unregister_device() return while
 * processes keep their contexts open.
 */
void kite_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	struct kite_ib_dev *dev = to_kdev(ibuc->device);

	atomic_inc(&dev->uctx_disassociated);
	ibdev_dbg(&dev->ibdev, "user context %u disassociated\n",
		  to_kuctx(ibuc)->uctx);
}

/**
 * kite_ib_mmap() - map a context's doorbell page, the device status page
 *	or device memory
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
	switch (entry->type) {
	case KITE_IB_MMAP_DM:
		/* Data, never code. */
		if (vma->vm_flags & VM_EXEC) {
			err = -EPERM;
			break;
		}
		vm_flags_clear(vma, VM_MAYEXEC);
		/* Stores may be combined; libkite orders them (prm.rst). */
		err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->address),
					rdma_entry->npages << PAGE_SHIFT,
					pgprot_writecombine(vma->vm_page_prot),
					rdma_entry);
		break;
	case KITE_IB_MMAP_STATUS:
		/* Only the kernel writes the status page. */
		if (vma->vm_flags & (VM_WRITE | VM_EXEC)) {
			err = -EPERM;
			break;
		}
		vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
		err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->address),
					PAGE_SIZE, vma->vm_page_prot,
					rdma_entry);
		break;
	default:
		err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->address),
					KITE_DB_PAGE_SIZE,
					pgprot_noncached(vma->vm_page_prot),
					rdma_entry);
		break;
	}
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/**
 * kite_ib_mmap_free() - free an mmap entry once nothing maps it
 * @rdma_entry: the entry
 */
void kite_ib_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct kite_ib_mmap_entry *entry = to_kite_mmap_entry(rdma_entry);

	if (entry->type == KITE_IB_MMAP_DM)
		kite_ib_dm_release(to_kdev(rdma_entry->ucontext->device),
				   entry);
	kfree(entry);
}

/* KITE_IB_METHOD_PD_QUERY: a PD's device number, for its importer. */
static int UVERBS_HANDLER(KITE_IB_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd = uverbs_attr_get_obj(attrs,
						 KITE_IB_ATTR_QUERY_PD_HANDLE);

	return uverbs_copy_to(attrs, KITE_IB_ATTR_QUERY_PD_RESP_PDN,
			      &to_kpd(ibpd)->pdn, sizeof(u32));
}

DECLARE_UVERBS_NAMED_METHOD(KITE_IB_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(KITE_IB_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(KITE_IB_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY));

ADD_UVERBS_METHODS(kite_ib_pd, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(KITE_IB_METHOD_PD_QUERY));

/*
 * KITE_IB_METHOD_QUERY_CLOCK: the device clock of the CQE timestamps, for
 * a library to relate them to the present (ibv_query_rt_values_ex()).
 */
static int UVERBS_HANDLER(KITE_IB_METHOD_QUERY_CLOCK)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *ibuc = ib_uverbs_get_ucontext(attrs);
	u64 clock;

	if (IS_ERR(ibuc))
		return PTR_ERR(ibuc);
	clock = kite_en_clock_read(to_kdev(ibuc->device)->regs,
				   KITE_RDMA_CLOCK_LO, KITE_RDMA_CLOCK_HI, NULL);
	if (clock == U64_MAX)
		return -EIO;
	return uverbs_copy_to(attrs, KITE_IB_ATTR_QUERY_CLOCK_RESP_CLOCK,
			      &clock, sizeof(clock));
}

DECLARE_UVERBS_NAMED_METHOD(KITE_IB_METHOD_QUERY_CLOCK,
			    UVERBS_ATTR_PTR_OUT(KITE_IB_ATTR_QUERY_CLOCK_RESP_CLOCK,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_METHODS(kite_ib_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(KITE_IB_METHOD_QUERY_CLOCK));

/* An older library's response ends with the doorbell page. */
#define KITE_IB_UCTX_RESP_MIN						\
	UVERBS_ATTR_STRUCT(struct kite_ib_alloc_ucontext_resp, db_mmap_offset)

ADD_UVERBS_ATTRIBUTES_SIMPLE(kite_ib_query_context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
						 KITE_IB_UCTX_RESP_MIN,
						 UA_MANDATORY));

/* The driver's additions to the core's uverbs objects and methods. */
const struct uapi_definition kite_ib_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &kite_ib_query_context),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &kite_ib_device),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &kite_ib_pd),
	UAPI_DEF_CHAIN(kite_ib_dm_uapi_defs),
	{}
};
