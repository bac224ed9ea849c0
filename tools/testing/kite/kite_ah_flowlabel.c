// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_ah_flowlabel.so: an LD_PRELOAD shim that gives every global address
 * handle an unchanged application creates the flow label 0xFFFFFFFF, as
 * UCX does: wider than the 20 bits of the GRH's field. Providers use its low
 * 20 bits (rdma_rxe and mlx5 do; Kite's rule is in prm_port.rst). With it,
 * rdma-core's ibv_ud_pingpong exchanges UD messages through such handles.
 *
 * It reports each handle it changed on stderr ("kite_ah_flowlabel: ..."),
 * so that a test can tell that the shim was in effect.
 *
 * usage: LD_PRELOAD=.../kite_ah_flowlabel.so ibv_ud_pingpong -g GIDX ...
 *
 * Copyright (c) 2026 Kite
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#define KITE_WIDE_FLOW_LABEL	0xffffffffU

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static struct ibv_ah *(*real)(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr);
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	if (!real)
		real = dlvsym(RTLD_NEXT, "ibv_create_ah", "IBVERBS_1.1");
	if (!real) {
		fprintf(stderr, "kite_ah_flowlabel: no %s@IBVERBS_1.1 to wrap\n",
			__func__);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr || !attr->is_global)
		return real(pd, attr);
	a = *attr;
	a.grh.flow_label = KITE_WIDE_FLOW_LABEL;
	ah = real(pd, &a);
	fprintf(stderr, "kite_ah_flowlabel: address handle with flow label 0x%x: %s\n",
		a.grh.flow_label, ah ? "created" : "refused");
	return ah;
}
