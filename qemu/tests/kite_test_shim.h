/*
 * Kite NIC model tests: compile the kernel-style hardware header in a
 * host-side (userspace) program.
 *
 * include/linux/kite/kite_hw.h is shared with the Linux drivers and the QEMU
 * model and uses the kernel's bit helpers and types. This shim provides them
 * (the approach of qemu/hw/net/kite_kshim.h) and then includes the header,
 * so the tests never re-type a layout.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef KITE_TEST_SHIM_H
#define KITE_TEST_SHIM_H

#include <stdint.h>

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))

/* Bits h..l set, 0 <= l <= h <= 31 (GENMASK) or 63 (GENMASK_ULL). */
#define GENMASK(h, l) \
	((uint32_t)((~0U << (l)) & (~0U >> (31 - (h)))))
#define GENMASK_ULL(h, l) \
	((uint64_t)((~0ULL << (l)) & (~0ULL >> (63 - (h)))))

/* Work on 32- and 64-bit masks; assign to a field of the mask's width. */
#define FIELD_GET(mask, val) \
	((((uint64_t)(val) & (uint64_t)(mask)) >> __builtin_ctzll(mask)))
#define FIELD_PREP(mask, val) \
	((((uint64_t)(val) << __builtin_ctzll(mask)) & (uint64_t)(mask)))

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
/* The host is little-endian (x86-64); byte order types are documentation. */
typedef uint16_t __le16;
typedef uint32_t __le32;
typedef uint64_t __le64;
typedef uint32_t __be32;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Kite model tests assume a little-endian host"
#endif

/* The header uses the one-argument (C23/kernel) form. */
#undef static_assert
#define static_assert(expr)	_Static_assert(expr, #expr)

/* scripts/check-prm-layout.py includes a header of its choice instead. */
#ifndef KITE_SHIM_NO_HEADER
#include "../../include/linux/kite/kite_hw.h"
#endif

#endif /* KITE_TEST_SHIM_H */
