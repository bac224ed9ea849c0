/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Kite RDMA user-space provider: private definitions.
 *
 * Copyright (c) 2026 Kite
 */

#ifndef __KITE_H__
#define __KITE_H__

#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/kite-abi.h>
#include <kernel-abi/kite-abi.h>

DECLARE_DRV_CMD(ukite_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT,
		kite_ib_alloc_ucontext_req, kite_ib_alloc_ucontext_resp);

/*
 * kite_ib_alloc_ucontext_resp.comp_mask bits this provider understands.
 * None are defined yet: a response with any bit set comes from a kernel with
 * a newer ABI whose meaning this provider cannot know.
 */
#define KITE_ALLOC_UCONTEXT_RESP_COMP_MASK_KNOWN	0

/* Bounds of kite_ib_alloc_ucontext_resp.db_page_size. */
#define KITE_DB_PAGE_SIZE_MIN	4096U
#define KITE_DB_PAGE_SIZE_MAX	65536U

/*
 * ib_device_attr.fw_ver is the device's firmware version register
 * (KITE_REG_FW_VER in include/linux/kite/kite_hw.h): major in bits 31:24,
 * minor in bits 23:16, patch in bits 15:0.
 */
#define KITE_FW_VER_MAJOR(v)	(((v) >> 24) & 0xff)
#define KITE_FW_VER_MINOR(v)	(((v) >> 16) & 0xff)
#define KITE_FW_VER_PATCH(v)	((v) & 0xffff)

struct kite_device {
	struct verbs_device ibv_dev;
};

struct kite_context {
	struct verbs_context ibv_ctx;
	/* This context's doorbell page, mapped write-only from cmd_fd. */
	void *db_page;
	size_t db_page_size;
};

static inline struct kite_device *to_kite_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct kite_device, ibv_dev.device);
}

static inline struct kite_context *to_kite_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct kite_context, ibv_ctx.context);
}

#endif /* __KITE_H__ */
