/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Kite RDMA user-space ABI: the driver-specific parts of the uverbs
 * commands, shared by kite_ib and the rdma-core provider (libkite).
 *
 * Every structure has a comp_mask and explicit reserved fields; the kernel
 * rejects non-zero reserved fields and unknown comp_mask bits, so they can be
 * given meaning later without a new ABI version.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef KITE_ABI_USER_H
#define KITE_ABI_USER_H

#include <linux/types.h>

/*
 * The fw_ver of a query_device response is the device's firmware version
 * register: major in bits 31:24, minor in 23:16, patch in 15:0.
 */

/* Bumped on any incompatible change. */
#define KITE_UVERBS_ABI_VERSION		1

struct kite_ib_alloc_ucontext_req {
	__u32 comp_mask;
	__u32 reserved;
};

struct kite_ib_alloc_ucontext_resp {
	__u32 comp_mask;
	/* Size of a doorbell page, in bytes. */
	__u32 db_page_size;
	/* mmap() offset of this context's doorbell page. */
	__aligned_u64 db_mmap_offset;
};

#endif /* KITE_ABI_USER_H */
