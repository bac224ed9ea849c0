/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compatibility with older kernels, for out-of-tree builds only.
 *
 * The driver sources are written against the newest kernel API. When they
 * are built out of tree, this header is force-included (see Kbuild) and
 * fills in what an older kernel (Linux 6.12 LTS) lacks. Every KITE_HAVE_*
 * macro comes from a compile probe in compat/probes/, run by
 * scripts/compat-probe.sh against the kernel being built for; nothing here
 * tests kernel version numbers.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef _KITE_COMPAT_H
#define _KITE_COMPAT_H

#include "kite_compat_autoconf.h"

#include <linux/export.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#ifndef KITE_HAVE_KZALLOC_OBJ
/* Linux 7.0 added typed allocation helpers; the drivers always pass GFP. */
#define kzalloc_obj(P, GFP)						\
	({ typeof(P) *__kite_p = kzalloc(sizeof(P), GFP); __kite_p; })
#endif

#ifndef KITE_HAVE_KZALLOC_FLEX
#define kzalloc_flex(P, FAM, COUNT, GFP)				\
	({								\
		typeof(P) *__kite_p =					\
			kzalloc(struct_size_t(typeof(P), FAM, COUNT), GFP); \
		__kite_p;						\
	})
#endif

#ifndef KITE_HAVE_DEVL_PARAM_DRIVERINIT_PTR
#include <net/devlink.h>
/* Linux 6.13+ passes the value by pointer. */
static inline void
kite_compat_devl_param_driverinit_value_set(struct devlink *devlink,
					    u32 param_id,
					    union devlink_param_value *val)
{
	devl_param_driverinit_value_set(devlink, param_id, *val);
}

#define devl_param_driverinit_value_set kite_compat_devl_param_driverinit_value_set
#endif

#ifndef KITE_HAVE_DEVLINK_HEALTH_REPORTER_CREATE_3
#include <net/devlink.h>
/*
 * Linux 7.x takes the graceful period from the reporter's ops. The
 * drivers set none (0: every error is recovered).
 */
static inline struct devlink_health_reporter *
kite_compat_devlink_health_reporter_create(struct devlink *devlink,
					   const struct devlink_health_reporter_ops *ops,
					   void *priv)
{
	return devlink_health_reporter_create(devlink, ops, 0, priv);
}

#define devlink_health_reporter_create kite_compat_devlink_health_reporter_create
#endif

#ifndef KITE_HAVE_REG_USER_MR_DMAH
#include <rdma/ib_verbs.h>
/*
 * Linux 6.17 added a DMA handle argument to reg_user_mr. The driver
 * defines kite_ib_reg_user_mr() with it; this renames that definition and
 * puts a wrapper with the old signature where the ops table names the
 * function (a function-like macro is not expanded without parentheses).
 */
struct ib_dmah;
struct ib_mr *kite_ib_reg_user_mr_dmah(struct ib_pd *pd, u64 start,
				       u64 length, u64 iova, int access,
				       struct ib_dmah *dmah,
				       struct ib_udata *udata);
static inline struct ib_mr *kite_ib_reg_user_mr(struct ib_pd *pd, u64 start,
						u64 length, u64 iova,
						int access,
						struct ib_udata *udata)
{
	return kite_ib_reg_user_mr_dmah(pd, start, length, iova, access, NULL,
					udata);
}

#define kite_ib_reg_user_mr(pd, start, length, iova, access, dmah, udata) \
	kite_ib_reg_user_mr_dmah(pd, start, length, iova, access, dmah, udata)

/* The same for the dma-buf registration, which gained it with it. */
struct uverbs_attr_bundle;
struct ib_mr *kite_ib_reg_user_mr_dmabuf_dmah(struct ib_pd *pd, u64 offset,
					      u64 length, u64 iova, int fd,
					      int access, struct ib_dmah *dmah,
					      struct uverbs_attr_bundle *attrs);
static inline struct ib_mr *
kite_ib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset, u64 length,
			   u64 iova, int fd, int access,
			   struct uverbs_attr_bundle *attrs)
{
	return kite_ib_reg_user_mr_dmabuf_dmah(pd, offset, length, iova, fd,
					       access, NULL, attrs);
}

#define kite_ib_reg_user_mr_dmabuf(pd, offset, length, iova, fd, access, \
				   dmah, attrs)				\
	kite_ib_reg_user_mr_dmabuf_dmah(pd, offset, length, iova, fd,	\
					access, dmah, attrs)
#endif

#ifndef KITE_HAVE_RESIZE_USER_CQ
#include <rdma/ib_verbs.h>
/*
 * Linux 7.x calls the CQ resize op resize_user_cq (user CQs only, an
 * unsigned size); older kernels call it resize_cq, with an int. As for
 * reg_user_mr, the driver's definition is renamed and a wrapper with the
 * old signature takes its name in the ops table.
 */
int kite_ib_resize_user_cq_uint(struct ib_cq *cq, unsigned int cqe,
				struct ib_udata *udata);
static inline int kite_ib_resize_user_cq(struct ib_cq *cq, int cqe,
					 struct ib_udata *udata)
{
	if (cqe < 0)
		return -EINVAL;
	return kite_ib_resize_user_cq_uint(cq, cqe, udata);
}

#define kite_ib_resize_user_cq(cq, cqe, udata)				\
	kite_ib_resize_user_cq_uint(cq, cqe, udata)
#define resize_user_cq resize_cq
#endif

#ifndef KITE_HAVE_IB_DISPATCH_PORT_STATE_EVENT
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
/*
 * Newer kernels report RoCE port state changes from the netdev's state
 * (and from their own netdev notifier, without repeating a state). Older
 * ones leave it to the driver: report the netdev's state on port 1, Kite's
 * only port.
 */
static inline void
kite_compat_dispatch_port_state_event(struct ib_device *ibdev,
				      struct net_device *ndev)
{
	struct ib_event ev = {
		.device = ibdev,
		.element.port_num = 1,
		.event = netif_running(ndev) && netif_carrier_ok(ndev) ?
			 IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	ib_dispatch_event(&ev);
}

#define ib_dispatch_port_state_event kite_compat_dispatch_port_state_event
#endif

#ifdef KITE_HAVE_NS_IDENTIFIER
/* Namespaces became string literals in Linux 6.13. */
#undef EXPORT_SYMBOL_NS_GPL
#define EXPORT_SYMBOL_NS_GPL(sym, ns)	__EXPORT_SYMBOL(sym, "GPL", ns)
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns)		MODULE_INFO(import_ns, ns)
#endif

#ifndef KITE_HAVE_IB_UMEM_GET_VA
/*
 * Newer kernels pin user memory by address with ib_umem_get_va(); older
 * ones call it ib_umem_get(), with the same arguments.
 */
#define ib_umem_get_va(device, addr, size, access)			\
	ib_umem_get(device, addr, size, access)
#endif

#ifndef KITE_HAVE_IB_COPY_VALIDATE_UDATA_IN
#include <linux/minmax.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
/*
 * Linux 7.x copies driver udata with the core's helpers: a request shorter
 * than the struct's first version is refused (-EINVAL), bytes beyond the
 * struct the driver knows must be zero (-EOPNOTSUPP); a response is cut to
 * the caller's buffer and the rest of the buffer zeroed. The same here,
 * without the core's debug messages.
 */
static inline int kite_compat_copy_validate_udata_in(struct ib_udata *udata,
						     void *req,
						     size_t kernel_size,
						     size_t minimum_size)
{
	int err;

	if (udata->inlen < minimum_size)
		return -EINVAL;
	err = copy_struct_from_user(req, kernel_size, udata->inbuf,
				    udata->inlen);
	return err == -E2BIG ? -EOPNOTSUPP : err;
}

static inline int kite_compat_respond_udata(struct ib_udata *udata,
					    const void *src, size_t len)
{
	size_t copy_len = min(len, udata->outlen);

	if (copy_to_user(udata->outbuf, src, copy_len))
		return -EFAULT;
	if (copy_len < udata->outlen &&
	    clear_user(udata->outbuf + copy_len, udata->outlen - copy_len))
		return -EFAULT;
	return 0;
}

#define ib_copy_validate_udata_in(_udata, _req, _end_member)		\
	kite_compat_copy_validate_udata_in(_udata, &(_req), sizeof(_req), \
					   offsetofend(typeof(_req),	\
						       _end_member))
#define ib_respond_udata(_udata, _rep)					\
	kite_compat_respond_udata(_udata, &(_rep), sizeof(_rep))

/* The same series added the check for requests without driver data. */
static inline int ib_is_udata_in_empty(struct ib_udata *udata)
{
	if (!udata || !udata->inlen)
		return 0;
	return kite_compat_copy_validate_udata_in(udata, NULL, 0, 0);
}
#endif

#ifndef KITE_HAVE_RDMA_DRIVER_KITE
#include <rdma/ib_user_ioctl_verbs.h>
/*
 * The upstream form adds RDMA_DRIVER_KITE to enum rdma_driver_id after
 * RDMA_DRIVER_IONIC, which makes it 22; libkite's copy of the header
 * (scripts/build-rdma-core.sh) says the same. A kernel without the name
 * stores the number and compares it with the one user space sends.
 */
#define RDMA_DRIVER_KITE	22
#endif

#endif /* _KITE_COMPAT_H */
