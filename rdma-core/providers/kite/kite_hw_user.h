/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The Kite hardware interface in user space.
 *
 * kite_hw.h is the one definition of every register, queue entry and
 * doorbell format, shared by kite_en, kite_ib and the device model: in the
 * Kite repository this directory's kite_hw.h is a symbolic link to
 * include/linux/kite/kite_hw.h, and the provider's submission to rdma-core
 * (make patches) carries a copy. rdma-core's util/util.h has the kernel's
 * bit helpers; this shim adds the kernel's integer types. Byte order: the
 * header's __le/__be types are rdma-core's sparse-checked ones; convert
 * with htole32() and friends.
 *
 * Copyright (c) 2026 Kite
 */
#ifndef __KITE_HW_USER_H__
#define __KITE_HW_USER_H__

#include <assert.h>
#include <stdint.h>
#include <linux/types.h>

/* BIT(), GENMASK(), FIELD_PREP() and FIELD_GET() as in the kernel. */
#include <util/util.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#include "kite_hw.h"

#endif /* __KITE_HW_USER_H__ */
