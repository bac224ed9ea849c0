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

#endif /* _KITE_COMPAT_H */
