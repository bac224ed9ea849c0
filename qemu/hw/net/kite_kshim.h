/*
 * Kite NIC: compile the kernel-style hardware header inside QEMU.
 *
 * include/linux/kite/kite_hw.h is shared with the Linux drivers and uses the
 * kernel's bit helpers. This shim provides 32-bit versions of them and then
 * includes the header (symlinked into hw/net/ by scripts/build-qemu.sh).
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_NET_KITE_KSHIM_H
#define HW_NET_KITE_KSHIM_H

/* QEMU's "qemu/bitops.h" already defines BIT(nr) as (1UL << (nr)). */
#ifndef BIT
#define BIT(nr)                 (1UL << (nr))
#endif
#define BIT_ULL(nr)             (1ULL << (nr))

/* Bits h..l set, 0 <= l <= h <= 31 (GENMASK) or 63 (GENMASK_ULL). */
#ifndef GENMASK
#define GENMASK(h, l) \
    ((uint32_t)((~0U << (l)) & (~0U >> (31 - (h)))))
#endif
#define GENMASK_ULL(h, l) \
    ((uint64_t)((~0ULL << (l)) & (~0ULL >> (63 - (h)))))

/*
 * Masks are compile-time constants: __builtin_ctzll() of a constant is
 * itself a constant, so FIELD_PREP() may be used in static initializers.
 * Both work on 32- and 64-bit masks; assign the result to a field of the
 * mask's width.
 */
#define FIELD_GET(mask, val) \
    ((((uint64_t)(val) & (uint64_t)(mask)) >> __builtin_ctzll(mask)))
#define FIELD_PREP(mask, val) \
    ((((uint64_t)(val) << __builtin_ctzll(mask)) & (uint64_t)(mask)))

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
/*
 * Byte order is the header's documentation; QEMU converts explicitly.
 * The host's <linux/types.h> (pulled in by osdep.h through <sys/stat.h>)
 * may already have typedefs of these names with other base types
 * (__u64 is unsigned long long): macros keep the header independent of it.
 */
#undef __le16
#undef __le32
#undef __le64
#undef __be32
#define __le16 uint16_t
#define __le32 uint32_t
#define __le64 uint64_t
#define __be32 uint32_t

#include "kite_hw.h"

#endif /* HW_NET_KITE_KSHIM_H */
