/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Kite RDMA user-space provider (libkite).
 *
 * The rdma-core provider for the Kite RoCEv2 NIC, driven in the kernel by
 * kite_ib. kite_ib is an auxiliary driver bound to the "kite_en.rdma"
 * auxiliary device of the kite_en Ethernet driver and registers its
 * ib_devices as kite%d with the driver id RDMA_DRIVER_KITE, by which this
 * provider matches them (or, failing that, by the parent's modalias); only
 * a kernel speaking KITE_UVERBS_ABI_VERSION is accepted.
 *
 * It opens a device (user context, checked response, the context's doorbell
 * page mapped), answers device and port queries, allocates PDs, registers
 * MRs, allocates device memory (mapped, copied in 32-bit words, with MRs
 * over it), allocates memory windows (bound by work requests, send.c), and
 * creates CQs (cq.c), QPs and address handles (qp.c) whose queues
 * live in this process's memory, in the formats of the Kite Programmer's
 * Reference (include/linux/kite/kite_hw.h, through kite_hw_user.h): WQEs
 * are written into the rings and announced through the doorbell page, by
 * ibv_post_send() or the extended QP API of ibv_create_qp_ex() (send.c, one
 * WQE builder for both), CQEs are polled with the owner rule, through
 * ibv_poll_cq() or the extended CQ API of ibv_create_cq_ex() (cq.c says
 * which fields and flags; the tables are in
 * Documentation/infiniband/kite.rst).
 *
 * Copyright (c) 2026 Kite
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <infiniband/cmd_ioctl.h>
#include <infiniband/driver.h>
#include <infiniband/verbs.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "kite.h"

static int kite_query_device_ex(struct ibv_context *ibctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	uint64_t fw_ver;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw_ver = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)FIELD_GET(KITE_FW_VER_MAJOR, fw_ver),
		 (unsigned int)FIELD_GET(KITE_FW_VER_MINOR, fw_ver),
		 (unsigned int)FIELD_GET(KITE_FW_VER_PATCH, fw_ver));

	return 0;
}

/*
 * The device clock of the completion timestamps now, as mlx4 and mlx5
 * report theirs: in hca_core_clock units (nanoseconds) in raw_clock.tv_nsec,
 * tv_sec 0.
 */
static int kite_query_rt_values(struct ibv_context *ibctx,
				struct ibv_values_ex *values)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DEVICE,
			       KITE_IB_METHOD_QUERY_CLOCK, 1);
	uint64_t clock;
	int err;

	if (!check_comp_mask(values->comp_mask, IBV_VALUES_MASK_RAW_CLOCK))
		return EINVAL;
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return 0;
	fill_attr_out_ptr(cmdb, KITE_IB_ATTR_QUERY_CLOCK_RESP_CLOCK, &clock);
	err = execute_ioctl(ibctx, cmdb);
	if (err)
		return err;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = clock;
	return 0;
}

static int kite_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *kite_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct kite_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	err = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	atomic_init(&pd->refcount, 1);
	return &pd->ibv_pd;
}

/*
 * A thread domain: nothing in the device, only the application's promise
 * (struct kite_td), which a parent domain carries to what is created on it.
 */
static struct ibv_td *kite_alloc_td(struct ibv_context *ibctx,
				    struct ibv_td_init_attr *attr)
{
	struct kite_td *td;

	if (attr->comp_mask) {
		verbs_err(verbs_get_ctx(ibctx),
			  "thread domain: unknown comp_mask %#x\n",
			  attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibv_td.context = ibctx;
	atomic_init(&td->refcount, 1);
	return &td->ibv_td;
}

/* A thread domain that a parent domain still carries is busy. */
static int kite_dealloc_td(struct ibv_td *ibtd)
{
	struct kite_td *td = to_kite_td(ibtd);

	if (atomic_load(&td->refcount) > 1)
		return EBUSY;
	free(td);
	return 0;
}

/*
 * A parent domain: the protection domain's handle, and the application's
 * allocators for the rings of the CQs, QPs and SRQs created with it, or
 * its pd_context, or a thread domain (the locks of the QPs and SRQs
 * created on it, and the polling lock of its CQs, are left out).
 */
static struct ibv_pd *
kite_alloc_parent_domain(struct ibv_context *ibctx,
			 struct ibv_parent_domain_init_attr *attr)
{
	struct kite_pd *pdom, *pd;

	if (ibv_check_alloc_parent_domain(attr))
		return NULL;
	if (!check_comp_mask(attr->comp_mask,
			     IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) {
		verbs_err(verbs_get_ctx(ibctx),
			  "parent domain: unknown comp_mask %#x\n",
			  attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	if (attr->td && attr->td->context != ibctx) {
		verbs_err(verbs_get_ctx(ibctx),
			  "parent domain: the thread domain is another context's\n");
		errno = EINVAL;
		return NULL;
	}
	pd = to_kite_pd(attr->pd);
	if (pd->protection_domain) {
		verbs_err(verbs_get_ctx(ibctx),
			  "parent domain: its pd is itself a parent domain\n");
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		verbs_err(verbs_get_ctx(ibctx),
			  "parent domain: allocators need both alloc and free\n");
		errno = EINVAL;
		return NULL;
	}
	pdom = calloc(1, sizeof(*pdom));
	if (!pdom)
		return NULL;
	pdom->protection_domain = pd;
	atomic_fetch_add(&pd->refcount, 1);
	if (attr->td) {
		pdom->td = to_kite_td(attr->td);
		atomic_fetch_add(&pdom->td->refcount, 1);
	}
	atomic_init(&pdom->refcount, 1);
	ibv_initialize_parent_domain(&pdom->ibv_pd, &pd->ibv_pd);
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	return &pdom->ibv_pd;
}

/*
 * Either kind: a protection domain with parent domains over it, or a
 * parent domain whose rings are still in use, is busy.
 */
static int kite_dealloc_pd(struct ibv_pd *ibpd)
{
	struct kite_pd *pd = to_kite_pd(ibpd);
	int err;

	if (atomic_load(&pd->refcount) > 1)
		return EBUSY;
	if (pd->protection_domain) {
		atomic_fetch_sub(&pd->protection_domain->refcount, 1);
		if (pd->td)
			atomic_fetch_sub(&pd->td->refcount, 1);
		free(pd);
		return 0;
	}
	err = ibv_cmd_dealloc_pd(ibpd);
	if (err)
		return err;

	free(pd);
	return 0;
}

/*
 * A PD of the user context this one shares (ibv_import_device()): the
 * kernel confirms the handle names a PD (KITE_IB_METHOD_PD_QUERY).
 */
static struct ibv_pd *kite_import_pd(struct ibv_context *ibctx,
				     uint32_t pd_handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_PD, KITE_IB_METHOD_PD_QUERY,
			       2);
	struct kite_pd *pd;
	uint32_t pdn;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	fill_attr_in_obj(cmdb, KITE_IB_ATTR_QUERY_PD_HANDLE, pd_handle);
	fill_attr_out_ptr(cmdb, KITE_IB_ATTR_QUERY_PD_RESP_PDN, &pdn);
	err = execute_ioctl(ibctx, cmdb);
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	atomic_init(&pd->refcount, 1);
	return &pd->ibv_pd;
}

/* The PD stays; only this process's handle on it goes. */
static void kite_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_kite_pd(ibpd));
}

static struct ibv_mr *kite_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}

	return &vmr->ibv_mr;
}

/*
 * Memory a dma-buf exports (a GPU's, udmabuf's): the kernel attaches,
 * pins and maps the buffer; from there on it is an MR like any other.
 */
static struct ibv_mr *kite_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					 size_t length, uint64_t iova, int fd,
					 int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	err = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				    NULL);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}

	return &vmr->ibv_mr;
}

/*
 * The MR changes in place (REREG_MR): its keys stay, so a peer that holds
 * the rkey keeps using it. The I/O virtual address is the new address.
 */
static int kite_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int err;

	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err)
		errno = err;
	return err;
}

static int kite_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err)
		return err;

	free(vmr);
	return 0;
}

/* An MR of the shared user context: its keys and length from the kernel. */
static struct ibv_mr *kite_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static void kite_unimport_mr(struct ibv_mr *mr)
{
	free(verbs_get_mr(mr));
}

/* An mmap() offset the kernel gave: mmap() takes a signed off_t. */
static bool kite_mmap_offset_ok(uint64_t offset)
{
	return (off_t)offset >= 0 && (uint64_t)(off_t)offset == offset;
}

/*
 * Device memory: the copies are 32-bit words at 4-byte aligned offsets
 * (prm.rst, BAR4), within what was allocated. The host buffer may be
 * unaligned. Stores to the write-combining mapping are flushed before the
 * copy returns, so a work request posted next finds the data.
 */
static int kite_dm_check(struct kite_dm *dm, uint64_t offset, size_t length)
{
	if (length > dm->length || offset > dm->length - length)
		return EFAULT;
	if ((offset | length) & (KITE_DM_ALIGN - 1))
		return EINVAL;
	if (kite_dev_dead(to_kite_ctx(dm->vdm.dm.context)))
		return EIO;
	return 0;
}

static int kite_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct kite_dm *dm = to_kite_dm(ibdm);
	const uint8_t *src = host_addr;
	size_t i;
	int err;

	err = kite_dm_check(dm, dm_offset, length);
	if (err)
		return err;
	for (i = 0; i < length; i += 4) {
		uint32_t word;

		memcpy(&word, src + i, 4);
		mmio_write32(dm->va + dm_offset + i, word);
	}
	mmio_flush_writes();
	return 0;
}

static int kite_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct kite_dm *dm = to_kite_dm(ibdm);
	uint8_t *dst = host_addr;
	size_t i;
	int err;

	err = kite_dm_check(dm, dm_offset, length);
	if (err)
		return err;
	for (i = 0; i < length; i += 4) {
		uint32_t word = mmio_read32(dm->va + dm_offset + i);

		memcpy(dst + i, &word, 4);
	}
	return 0;
}

/*
 * Map @length bytes of device memory (whole pages) at the mmap() offset
 * the kernel gave; 0 or an errno.
 */
static int kite_dm_map(struct ibv_context *ibctx, struct kite_dm *dm,
		       uint64_t offset, uint64_t length)
{
	size_t page = sysconf(_SC_PAGESIZE);

	if (!kite_mmap_offset_ok(offset) || !length ||
	    length > SIZE_MAX - page) {
		verbs_err(verbs_get_ctx(ibctx),
			  "device memory: invalid mmap offset 0x%llx or length %llu\n",
			  (unsigned long long)offset,
			  (unsigned long long)length);
		return EINVAL;
	}
	dm->length = length;
	dm->map_len = align(length, page);
	dm->va = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      ibctx->cmd_fd, offset);
	if (dm->va == MAP_FAILED)
		return errno;
	dm->vdm.dm.memcpy_to_dm = kite_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = kite_memcpy_from_dm;
	return 0;
}

static struct ibv_dm *kite_alloc_dm(struct ibv_context *ibctx,
				    struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       1);
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t offset = 0;
	struct kite_dm *dm;
	int err;

	if (attr->comp_mask) {
		verbs_err(verbs_get_ctx(ibctx), "alloc_dm: comp_mask 0x%x\n",
			  attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	/* The kernel bounds it by the device memory; this, the rounding. */
	if (!attr->length || attr->length > SIZE_MAX - page) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	fill_attr_out(cmdb, KITE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &offset,
		      sizeof(offset));
	err = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, cmdb);
	if (err)
		goto err_free;
	err = kite_dm_map(ibctx, dm, offset, attr->length);
	if (err)
		goto err_free_dm;
	return &dm->vdm.dm;

err_free_dm:
	ibv_cmd_free_dm(&dm->vdm);
err_free:
	free(dm);
	errno = err;
	return NULL;
}

static int kite_free_dm(struct ibv_dm *ibdm)
{
	struct kite_dm *dm = to_kite_dm(ibdm);
	int err;

	err = ibv_cmd_free_dm(&dm->vdm);
	if (err)
		return err;
	/* The kernel keeps the pages until this mapping is gone too. */
	munmap(dm->va, dm->map_len);
	free(dm);
	return 0;
}

/*
 * Device memory of the shared user context: the kernel gives its mmap()
 * offset and length (KITE_IB_METHOD_DM_QUERY); this process maps it too.
 */
static struct ibv_dm *kite_import_dm(struct ibv_context *ibctx,
				     uint32_t dm_handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, KITE_IB_METHOD_DM_QUERY,
			       3);
	uint64_t offset = 0, length = 0;
	struct kite_dm *dm;
	int err;

	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	fill_attr_in_obj(cmdb, KITE_IB_ATTR_QUERY_DM_HANDLE, dm_handle);
	fill_attr_out_ptr(cmdb, KITE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			  &offset);
	fill_attr_out_ptr(cmdb, KITE_IB_ATTR_QUERY_DM_RESP_LENGTH, &length);
	err = execute_ioctl(ibctx, cmdb);
	if (!err)
		err = kite_dm_map(ibctx, dm, offset, length);
	if (err) {
		free(dm);
		errno = err;
		return NULL;
	}
	dm->vdm.dm.context = ibctx;
	dm->vdm.dm.handle = dm_handle;
	dm->vdm.dm.comp_mask = IBV_DM_MASK_HANDLE;
	dm->vdm.handle = dm_handle;
	return &dm->vdm.dm;
}

/* The allocation stays; this process's mapping of it goes. */
static void kite_unimport_dm(struct ibv_dm *ibdm)
{
	struct kite_dm *dm = to_kite_dm(ibdm);

	munmap(dm->va, dm->map_len);
	free(dm);
}

/* Zero-based, as libibverbs requires; dereg_mr as for any MR. */
static struct ibv_mr *kite_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
				     uint64_t dm_offset, size_t length,
				     unsigned int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_dm_mr(pd, &to_kite_dm(ibdm)->vdm, dm_offset, length,
				access, vmr, NULL);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* A memory window of type 1 or 2 (the kernel refuses other types). */
static struct ibv_mw *kite_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}

	return mw;
}

static int kite_dealloc_mw(struct ibv_mw *mw)
{
	int err;

	err = ibv_cmd_dealloc_mw(mw);
	if (err)
		return err;

	free(mw);
	return 0;
}

/*
 * Set entry @n of @table (ctx->qp_table or ctx->srq_table) to @obj, or
 * clear it (NULL): 0, EPROTO for a number beyond 24 bits, ENOMEM.
 */
int kite_table_set(struct kite_context *ctx, void ***table, uint32_t n,
		   void *obj)
{
	void ***leaf;
	int ret = 0;

	if (n > KITE_OBJ_MASK)
		return EPROTO;
	pthread_mutex_lock(&ctx->table_mutex);
	leaf = &table[n >> KITE_TABLE_SHIFT];
	if (!*leaf && obj)
		*leaf = calloc(KITE_TABLE_LEAF, sizeof(**leaf));
	if (*leaf)
		(*leaf)[n & (KITE_TABLE_LEAF - 1)] = obj;
	else if (obj)
		ret = ENOMEM;
	pthread_mutex_unlock(&ctx->table_mutex);
	return ret;
}

/* XRC domains: the kernel shares one between the processes opening it. */
static struct ibv_xrcd *kite_open_xrcd(struct ibv_context *ibctx,
				       struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int kite_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}

static void kite_free_context(struct ibv_context *ibctx)
{
	struct kite_context *ctx = to_kite_ctx(ibctx);
	unsigned int i;

	munmap(ctx->db_page, ctx->db_page_size);
	if (ctx->status)
		munmap((void *)ctx->status, ctx->status_size);
	for (i = 0; i < KITE_TABLE_TOP; i++) {
		free(ctx->qp_table[i]);
		free(ctx->srq_table[i]);
	}
	pthread_mutex_destroy(&ctx->table_mutex);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops kite_context_ops = {
	.alloc_dm = kite_alloc_dm,
	.alloc_mw = kite_alloc_mw,
	.alloc_parent_domain = kite_alloc_parent_domain,
	.alloc_pd = kite_alloc_pd,
	.alloc_td = kite_alloc_td,
	/* The device keeps the multicast group table (kite_ib_mcast.c). */
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = kite_bind_mw,
	.close_xrcd = kite_close_xrcd,
	.cq_event = kite_cq_event,
	.create_ah = kite_create_ah,
	.create_cq = kite_create_cq,
	.create_cq_ex = kite_create_cq_ex,
	.create_qp = kite_create_qp,
	.create_qp_ex = kite_create_qp_ex,
	.create_srq = kite_create_srq,
	.create_srq_ex = kite_create_srq_ex,
	.dealloc_mw = kite_dealloc_mw,
	.dealloc_pd = kite_dealloc_pd,
	.dealloc_td = kite_dealloc_td,
	.dereg_mr = kite_dereg_mr,
	.destroy_ah = kite_destroy_ah,
	.destroy_cq = kite_destroy_cq,
	.destroy_qp = kite_destroy_qp,
	.destroy_srq = kite_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = kite_free_context,
	.free_dm = kite_free_dm,
	.get_srq_num = kite_get_srq_num,
	.import_dm = kite_import_dm,
	.import_mr = kite_import_mr,
	.import_pd = kite_import_pd,
	.modify_cq = kite_modify_cq,
	.modify_qp = kite_modify_qp,
	.modify_srq = kite_modify_srq,
	.open_qp = kite_open_qp,
	.open_xrcd = kite_open_xrcd,
	.poll_cq = kite_poll_cq,
	.post_recv = kite_post_recv,
	.post_send = kite_post_send,
	.post_srq_recv = kite_post_srq_recv,
	.query_device_ex = kite_query_device_ex,
	.query_port = kite_query_port,
	.query_qp = kite_query_qp,
	.query_rt_values = kite_query_rt_values,
	.query_srq = kite_query_srq,
	.reg_dm_mr = kite_reg_dm_mr,
	.reg_dmabuf_mr = kite_reg_dmabuf_mr,
	.reg_mr = kite_reg_mr,
	.req_notify_cq = kite_req_notify_cq,
	.rereg_mr = kite_rereg_mr,
	.resize_cq = kite_resize_cq,
	.unimport_dm = kite_unimport_dm,
	.unimport_mr = kite_unimport_mr,
	.unimport_pd = kite_unimport_pd,
};

/* Returns 0 or the errno describing what is wrong with the response. */
static int
kite_check_ucontext_resp(struct kite_context *ctx,
			 const struct kite_ib_alloc_ucontext_resp *resp)
{
	uint32_t db_page_size = resp->db_page_size;

	if (resp->comp_mask & ~KITE_ALLOC_UCONTEXT_RESP_COMP_MASK_KNOWN) {
		verbs_err(&ctx->ibv_ctx, "unknown ucontext comp_mask 0x%x\n",
			  resp->comp_mask);
		return EOPNOTSUPP;
	}

	if (db_page_size < KITE_DB_PAGE_SIZE_MIN ||
	    db_page_size > KITE_DB_PAGE_SIZE_MAX ||
	    (db_page_size & (db_page_size - 1))) {
		verbs_err(&ctx->ibv_ctx, "invalid doorbell page size %u\n",
			  db_page_size);
		return EINVAL;
	}

	if (!kite_mmap_offset_ok(resp->db_mmap_offset)) {
		verbs_err(&ctx->ibv_ctx,
			  "invalid doorbell mmap offset 0x%llx\n",
			  (unsigned long long)resp->db_mmap_offset);
		return EINVAL;
	}

	if ((resp->comp_mask & KITE_IB_UCTX_RESP_STATUS_PAGE) &&
	    (resp->status_page_size < sizeof(struct kite_ib_dev_status) ||
	     resp->status_page_size > KITE_DB_PAGE_SIZE_MAX ||
	     !kite_mmap_offset_ok(resp->status_mmap_offset))) {
		verbs_err(&ctx->ibv_ctx,
			  "invalid status page: size %u, mmap offset 0x%llx\n",
			  resp->status_page_size,
			  (unsigned long long)resp->status_mmap_offset);
		return EINVAL;
	}

	return 0;
}

/*
 * Map what the kernel's answer (ALLOC_UCONTEXT, or QUERY_CONTEXT for an
 * imported context) names: the doorbell page and the status page.
 */
static int kite_set_context(struct kite_context *ctx,
			    const struct kite_ib_alloc_ucontext_resp *resp)
{
	int cmd_fd = ctx->ibv_ctx.context.cmd_fd;
	int err;

	err = kite_check_ucontext_resp(ctx, resp);
	if (err)
		return err;

	ctx->db_page_size = resp->db_page_size;
	ctx->db_page = mmap(NULL, ctx->db_page_size, PROT_WRITE, MAP_SHARED,
			    cmd_fd, (off_t)resp->db_mmap_offset);
	if (ctx->db_page == MAP_FAILED) {
		err = errno;
		verbs_err(&ctx->ibv_ctx, "doorbell page mmap failed: %d\n",
			  err);
		return err;
	}

	if (resp->comp_mask & KITE_IB_UCTX_RESP_STATUS_PAGE) {
		void *page = mmap(NULL, resp->status_page_size, PROT_READ,
				  MAP_SHARED, cmd_fd,
				  (off_t)resp->status_mmap_offset);

		if (page == MAP_FAILED) {
			err = errno;
			verbs_err(&ctx->ibv_ctx,
				  "status page mmap failed: %d\n", err);
			munmap(ctx->db_page, ctx->db_page_size);
			return err;
		}
		ctx->status = page;
		ctx->status_size = resp->status_page_size;
	}
	ctx->rtc = resp->caps & KITE_IB_UCTX_CAP_RTC;

	pthread_mutex_init(&ctx->table_mutex, NULL);
	verbs_set_ops(&ctx->ibv_ctx, &kite_context_ops);
	return 0;
}

/*
 * A context of @cmd_fd: a new kernel user context (ALLOC_UCONTEXT), or
 * with @import the one another process's duplicate of the file shares
 * (QUERY_CONTEXT, ibv_import_device()); the kernel's answer names the same
 * doorbell and status pages either way.
 */
static struct verbs_context *kite_open_context(struct ibv_device *ibdev,
					       int cmd_fd, bool import)
{
	DECLARE_COMMAND_BUFFER_LINK(driver_attr, UVERBS_OBJECT_DEVICE,
				    UVERBS_METHOD_QUERY_CONTEXT, 1, NULL);
	struct ukite_alloc_ucontext_resp resp = {};
	struct ukite_alloc_ucontext cmd = {};
	struct kite_context *ctx;
	int err;

	/* On failure this closes cmd_fd and sets errno. */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_KITE);
	if (!ctx)
		return NULL;

	if (import) {
		fill_attr_out_ptr(driver_attr,
				  KITE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
				  &resp.drv_payload);
		err = ibv_cmd_query_context(&ctx->ibv_ctx.context,
					    driver_attr);
	} else {
		err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd,
					  sizeof(cmd), &resp.ibv_resp,
					  sizeof(resp));
	}
	if (!err)
		err = kite_set_context(ctx, &resp.drv_payload);
	if (err)
		goto err_uninit;
	return &ctx->ibv_ctx;

err_uninit:
	/*
	 * Closes cmd_fd: a new context is destroyed with it, an imported one
	 * stays with the other holders of the file.
	 */
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = err;
	return NULL;
}

static struct verbs_context *kite_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	return kite_open_context(ibdev, cmd_fd, false);
}

static struct verbs_context *kite_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	return kite_open_context(ibdev, cmd_fd, true);
}

static struct verbs_device *kite_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct kite_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->ibv_dev;
}

static void kite_uninit_device(struct verbs_device *vdev)
{
	struct kite_device *dev = to_kite_dev(&vdev->device);

	free(dev);
}

static const struct verbs_match_ent kite_match_table[] = {
	VERBS_DRIVER_ID(RDMA_DRIVER_KITE),
	/* The parent device: the auxiliary device of kite_en. */
	VERBS_MODALIAS_MATCH("auxiliary:kite_en.rdma", NULL),
	{},
};

static const struct verbs_device_ops kite_dev_ops = {
	.name = "kite",
	/* The kernel driver must speak this provider's ABI. */
	.match_min_abi_version = KITE_UVERBS_ABI_VERSION,
	.match_max_abi_version = KITE_UVERBS_ABI_VERSION,
	.match_table = kite_match_table,
	.alloc_device = kite_alloc_device,
	.uninit_device = kite_uninit_device,
	.alloc_context = kite_alloc_context,
	.import_context = kite_import_context,
};

PROVIDER_DRIVER(kite, kite_dev_ops);
