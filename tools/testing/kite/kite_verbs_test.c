// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_verbs_test: bad-input tests and a benchmark of kite_ib's kernel
 * verbs, called through the RDMA core as a kernel ULP would.
 *
 * The module is an ib_client: it attaches to the RDMA device named by the
 * "ibdev" parameter (default kite0) whenever that device is registered,
 * and registers an event handler on it. A case set runs when its name is
 * written to the "run" parameter:
 *
 *	echo bad >/sys/module/kite_verbs_test/parameters/run
 *
 * bad               every verb with input beyond the device's limits or
 *                   against the IB rules, checking the exact errno
 * fault OP STATUS   the device fails command OP with STATUS (set by the
 *                   host through the model's fault-cmd-* properties): the
 *                   verb issuing OP fails with the errno of STATUS
 * hang_prepare      create a PD, CQ, QP and MR and keep them, and a UD QP
 *                   attached to a multicast group
 * hang TIMEOUT_MS   the device no longer answers: the next command times
 *                   out, IB_EVENT_DEVICE_FATAL arrives, later commands fail
 *                   fast and the kept objects are destroyed locally (the
 *                   UD QP detached first)
 * works             destroy kept objects, then every verb works
 * capacity          the device's CQ, QP and PD tables hold what QUERY_DEVICE
 *                   promised (nothing leaked inside the device)
 * data              the data path through the device's loopback: SEND,
 *                   SEND_WITH_IMM, inline SEND, REG_MR, RDMA WRITE and
 *                   READ, atomics, SEND_WITH_INV (data compared), a remote
 *                   access error moving the QP to ERROR, ib_drain_qp()
 * events            the CQ arm rules: NEXT_COMP, REPORT_MISSED_EVENTS,
 *                   SOLICITED
 * srq               shared receive queues: bad capacities, SENDs to an RC
 *                   QP on an SRQ (data compared), post_recv refused, the
 *                   limit event, ib_drain_qp(), destroy while in use
 * traffic N         N SENDs and RDMA WRITEs of random sizes, data compared,
 *                   with short bounded waits; a QP that fails is replaced
 *                   (for a faulty device: the figures are logged)
 * bench N           create and destroy N CQs and N QPs, timed
 *
 * Results are TAP-like kernel log lines, "kite_verbs_test: ok - SET: NAME"
 * or "kite_verbs_test: not ok - SET: NAME" (followed by a "# got ..."
 * line), and each run ends with "kite_verbs_test: done SET: N cases, F
 * failed". Every run checks with the RDMA core's resource tracking that it
 * left no PD, CQ, QP or MR behind.
 *
 * Copyright (c) 2026 Kite
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/kite/kite_hw.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>

static char *ibdev = "kite0";
module_param(ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "Name of the RDMA device to test (default kite0)");

/* The resource types whose counts must not change across a run. */
static const enum rdma_restrack_type kvt_res_types[] = {
	RDMA_RESTRACK_PD, RDMA_RESTRACK_CQ, RDMA_RESTRACK_QP, RDMA_RESTRACK_MR,
	RDMA_RESTRACK_SRQ,
};

static const char * const kvt_res_names[] = { "pd", "cq", "qp", "mr", "srq" };

/**
 * struct kvt_state - the attached device and objects kept across runs
 * @lock: serialises runs with attach and detach
 * @dev: the attached device, or NULL
 * @handler: the event handler registered on @dev
 * @fatal_events: IB_EVENT_DEVICE_FATAL events seen on @dev
 * @pd: kept PD (destroy faults, hang)
 * @cq: kept CQ
 * @qp: kept QP
 * @mqp: kept UD QP, attached to the multicast group kvt_mgid() (hang)
 * @mr: kept MR
 * @mr_untracked: @mr is no longer in the core's resource tracking (the
 *	core drops it before calling the driver's dereg_mr, even if that fails)
 */
struct kvt_state {
	struct mutex lock;	/* see above */
	struct ib_device *dev;
	struct ib_event_handler handler;
	atomic_t fatal_events;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_qp *mqp;
	struct ib_mr *mr;
	bool mr_untracked;
};

static struct kvt_state kvt = {
	.lock = __MUTEX_INITIALIZER(kvt.lock),
};

/**
 * struct kvt_run - one run of a case set
 * @set: the set's name, prefixed to every result
 * @dev: the device
 * @n: results so far
 * @failed: failed results so far
 * @res: resource counts when the run started
 */
struct kvt_run {
	const char *set;
	struct ib_device *dev;
	unsigned int n;
	unsigned int failed;
	int res[ARRAY_SIZE(kvt_res_types)];
};

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

static __printf(3, 4) bool kvt_result(struct kvt_run *r, bool ok,
				      const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	r->n++;
	if (!ok)
		r->failed++;
	pr_info("%sok - %s: %pV\n", ok ? "" : "not ", r->set, &vaf);
	va_end(args);
	return ok;
}

static __printf(2, 3) void kvt_skip(struct kvt_run *r, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	r->n++;
	pr_info("ok - %s: %pV\n", r->set, &vaf);
	va_end(args);
}

/* Check that a verb returned @want (0 or a negative errno). */
static __printf(4, 5) bool kvt_expect(struct kvt_run *r, int got, int want,
				      const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;
	bool ok = got == want;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	r->n++;
	if (!ok)
		r->failed++;
	if (want)
		pr_info("%sok - %s: %pV fails with %pe\n", ok ? "" : "not ",
			r->set, &vaf, ERR_PTR(want));
	else
		pr_info("%sok - %s: %pV succeeds\n", ok ? "" : "not ", r->set,
			&vaf);
	if (!ok)
		pr_info("# got %d (%pe), want %d\n", got,
			ERR_PTR(got ? got : -EINVAL), want);
	va_end(args);
	return ok;
}

/* Objects kept across runs, per type in kvt_res_types order. */
static void kvt_kept(int *kept)
{
	kept[0] = !!kvt.pd;
	kept[1] = !!kvt.cq;
	kept[2] = !!kvt.qp + !!kvt.mqp;
	kept[3] = kvt.mr && !kvt.mr_untracked;
	kept[4] = 0;	/* no SRQ is kept */
}

static bool kvt_kept_any(void)
{
	return kvt.pd || kvt.cq || kvt.qp || kvt.mqp || kvt.mr;
}

static void kvt_res_snapshot(struct kvt_run *r, int *res)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kvt_res_types); i++)
		res[i] = rdma_restrack_count(r->dev, kvt_res_types[i], false);
}

/*
 * The run's resource counts are back where they started, give or take the
 * objects kept across runs that the run added or destroyed (@kept0: those
 * kept when it started).
 */
static void kvt_res_check(struct kvt_run *r, const int *kept0)
{
	int now[ARRAY_SIZE(kvt_res_types)], kept[ARRAY_SIZE(kvt_res_types)];
	bool ok = true;
	unsigned int i;

	kvt_res_snapshot(r, now);
	kvt_kept(kept);
	for (i = 0; i < ARRAY_SIZE(kvt_res_types); i++)
		ok &= now[i] == r->res[i] + kept[i] - kept0[i];
	if (!kvt_result(r, ok, "no PD, CQ, QP, MR or SRQ leaked (rdma restrack counts)"))
		for (i = 0; i < ARRAY_SIZE(kvt_res_types); i++)
			pr_info("# %s: %d at start, %d now, kept %d -> %d\n",
				kvt_res_names[i], r->res[i], now[i], kept0[i],
				kept[i]);
}

/* ------------------------------------------------------------------ */
/* Object helpers                                                      */
/* ------------------------------------------------------------------ */

static atomic_t kvt_comp_events;

static void kvt_comp(struct ib_cq *cq, void *ctx)
{
	atomic_inc(&kvt_comp_events);
}

static void kvt_cq_event(struct ib_event *ev, void *ctx)
{
	pr_info("event %s on CQ\n", ib_event_msg(ev->event));
}

static void kvt_qp_event(struct ib_event *ev, void *ctx)
{
	pr_info("event %s on QP %u\n", ib_event_msg(ev->event),
		ev->element.qp->qp_num);
}

/* Create a CQ; on success keep it in *@out or destroy it again. */
static int kvt_cq(struct kvt_run *r, int cqe, u32 flags, struct ib_cq **out)
{
	struct ib_cq_init_attr attr = {
		.cqe = cqe,
		.flags = flags,
	};
	struct ib_cq *cq;

	cq = ib_create_cq(r->dev, kvt_comp, kvt_cq_event, NULL, &attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	if (out)
		*out = cq;
	else
		ib_destroy_cq_user(cq, NULL);
	return 0;
}

static void kvt_qp_attr(struct ib_qp_init_attr *attr, struct ib_cq *cq,
			enum ib_qp_type type)
{
	memset(attr, 0, sizeof(*attr));
	attr->event_handler = kvt_qp_event;
	attr->send_cq = cq;
	attr->recv_cq = cq;
	attr->qp_type = type;
	attr->sq_sig_type = IB_SIGNAL_REQ_WR;
	attr->cap.max_send_wr = 16;
	attr->cap.max_recv_wr = 16;
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = 1;
}

/* The multicast group of the tests: ::ffff:239.77.9.@n. */
static void kvt_mgid(union ib_gid *gid, u8 n)
{
	static const u8 raw[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				    239, 77, 9 };

	memcpy(gid->raw, raw, sizeof(gid->raw));
	gid->raw[15] = n;
}

/* Create a QP; on success keep it in *@out or destroy it again. */
static int kvt_qp(struct ib_pd *pd, struct ib_qp_init_attr *attr,
		  struct ib_qp **out)
{
	struct ib_qp *qp;

	qp = ib_create_qp(pd, attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	if (out)
		*out = qp;
	else
		ib_destroy_qp_user(qp, NULL);
	return 0;
}

/* Allocate a fast-registration MR; keep it in *@out or free it again. */
static int kvt_mr(struct ib_pd *pd, enum ib_mr_type type, u32 max_sg,
		  struct ib_mr **out)
{
	struct ib_mr *mr;

	mr = ib_alloc_mr(pd, type, max_sg);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	if (out)
		*out = mr;
	else
		ib_dereg_mr_user(mr, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Addresses                                                           */
/* ------------------------------------------------------------------ */

/*
 * The first valid GID index of port 1 (and its GID and MAC), and the first
 * empty one; -1 when there is none.
 */
static void kvt_gids(struct ib_device *dev, int *valid, int *empty,
		     union ib_gid *gid, u8 *mac)
{
	const struct ib_gid_attr *attr;
	int i, len = ib_port_immutable_read(dev, 1)->gid_tbl_len;
	u16 vlan;

	*valid = -1;
	*empty = -1;
	for (i = 0; i < len && (*valid < 0 || *empty < 0); i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr)) {
			if (*empty < 0 && PTR_ERR(attr) == -ENODATA)
				*empty = i;
			continue;
		}
		if (*valid < 0 && !rdma_read_gid_l2_fields(attr, &vlan, mac)) {
			*valid = i;
			*gid = attr->gid;
		}
		rdma_put_gid_attr(attr);
	}
}

/* INIT -> RTR attributes of an RC QP looping back to itself. */
static int kvt_rtr_attr(struct ib_qp *qp, struct ib_qp_attr *a, int sgid,
			union ib_gid *gid, const u8 *mac)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_RTR;
	a->path_mtu = IB_MTU_1024;
	a->dest_qp_num = qp->qp_num;
	a->rq_psn = 0x123;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a->ah_attr, 1);
	rdma_ah_set_grh(&a->ah_attr, gid, 0, sgid, 64, 0);
	memcpy(a->ah_attr.roce.dmac, mac, ETH_ALEN);
	return IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
}

static int kvt_rts_attr(struct ib_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_RTS;
	a->sq_psn = 0x456;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->max_rd_atomic = 1;
	return IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
	       IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;
}

static int kvt_init_attr(struct ib_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_INIT;
	a->port_num = 1;
	a->pkey_index = 0;
	a->qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	return IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
	       IB_QP_ACCESS_FLAGS;
}

/* ------------------------------------------------------------------ */
/* bad: input the verbs must refuse                                    */
/* ------------------------------------------------------------------ */

static void kvt_bad_cq(struct kvt_run *r)
{
	const struct ib_device_attr *caps = &r->dev->attrs;
	u16 count = caps->cq_caps.max_cq_moderation_count;
	u16 period = caps->cq_caps.max_cq_moderation_period;
	struct ib_cq *cq;
	int err;

	kvt_expect(r, kvt_cq(r, caps->max_cqe + 1, 0, NULL), -EINVAL,
		   "create_cq(cqe = max_cqe + 1 = %d)", caps->max_cqe + 1);
	/*
	 * No cqe = 0: the newest core refuses it for kernel callers itself,
	 * with a WARN (a caller's bug); user space reaches kite_ib's own
	 * check through uverbs (kite_uverbs_test).
	 */
	kvt_expect(r, kvt_cq(r, -1, 0, NULL), -EINVAL, "create_cq(cqe = -1)");
	kvt_expect(r, kvt_cq(r, INT_MIN, 0, NULL), -EINVAL,
		   "create_cq(cqe = INT_MIN)");
	/* The device always reports an overrun; every CQE has a timestamp. */
	kvt_expect(r, kvt_cq(r, 16, IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN, NULL),
		   -EOPNOTSUPP, "create_cq(flags = IGNORE_OVERRUN)");
	kvt_expect(r, kvt_cq(r, 16, IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
			     NULL),
		   0, "create_cq(flags = TIMESTAMP_COMPLETION)");

	/* The limit itself is usable. */
	err = kvt_cq(r, caps->max_cqe, 0, &cq);
	if (kvt_expect(r, err, 0, "create_cq(cqe = max_cqe = %d)",
		       caps->max_cqe)) {
		kvt_result(r, cq->cqe >= caps->max_cqe,
			   "create_cq(cqe = max_cqe) gives at least max_cqe CQEs (%d)",
			   cq->cqe);
		kvt_expect(r, ib_destroy_cq_user(cq, NULL), 0,
			   "destroy_cq(max_cqe CQ)");
	}

	/* Moderation limits (u16 in the verb). */
	err = kvt_cq(r, 16, 0, &cq);
	if (!kvt_expect(r, err, 0, "create_cq(cqe = 16)"))
		return;
	kvt_expect(r, rdma_set_cq_moderation(cq, count, period), 0,
		   "modify_cq(count = %u, period = %u: the maxima)", count,
		   period);
	/* Out of range only if the device's maxima are below the u16's. */
	if (count < U16_MAX)
		kvt_expect(r, rdma_set_cq_moderation(cq, count + 1, 0), -EINVAL,
			   "modify_cq(count = max + 1)");
	else
		kvt_skip(r, "modify_cq(count = max + 1) # SKIP the device's maximum is U16_MAX");
	if (period < U16_MAX)
		kvt_expect(r, rdma_set_cq_moderation(cq, 0, period + 1), -EINVAL,
			   "modify_cq(period = max + 1)");
	else
		kvt_skip(r, "modify_cq(period = max + 1) # SKIP the device's maximum is U16_MAX");
	kvt_expect(r, ib_destroy_cq_user(cq, NULL), 0, "destroy_cq");
}

static void kvt_bad_mr(struct kvt_run *r, struct ib_pd *pd)
{
	u32 max = r->dev->attrs.max_fast_reg_page_list_len;
	struct ib_pd *gpd;

	kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_MEM_REG, 0, NULL), -EINVAL,
		   "alloc_mr(max_num_sg = 0)");
	kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_MEM_REG, max + 1, NULL), -EINVAL,
		   "alloc_mr(max_num_sg = max_fast_reg_page_list_len + 1 = %u)",
		   max + 1);
	kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_SG_GAPS, 16, NULL), -EOPNOTSUPP,
		   "alloc_mr(type = SG_GAPS)");
	kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_MEM_REG, max, NULL), 0,
		   "alloc_mr(max_num_sg = max_fast_reg_page_list_len = %u)",
		   max);

	/* A DMA MR (REG_MR with the PHYS flag) behind the PD. */
	gpd = ib_alloc_pd(r->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (kvt_expect(r, PTR_ERR_OR_ZERO(gpd), 0,
		       "alloc_pd(UNSAFE_GLOBAL_RKEY) registers a DMA MR")) {
		kvt_result(r, gpd->unsafe_global_rkey,
			   "the PD's global rkey is set (0x%x)",
			   gpd->unsafe_global_rkey);
		kvt_expect(r, ib_dealloc_pd_user(gpd, NULL), 0,
			   "dealloc_pd(UNSAFE_GLOBAL_RKEY)");
	}
}

static void kvt_bad_qp_create(struct kvt_run *r, struct ib_pd *pd,
			      struct ib_cq *cq)
{
	const struct ib_device_attr *caps = &r->dev->attrs;
	static const struct {
		enum ib_qp_type type;
		const char *name;
	} types[] = {
		{ IB_QPT_SMI, "SMI" },
		{ IB_QPT_RAW_PACKET, "RAW_PACKET" },
		/* Kite's XRC initiators are libkite's: no kernel WR names an SRQ. */
		{ IB_QPT_XRC_INI, "XRC_INI" },
		{ IB_QPT_DRIVER, "DRIVER" },
	};
	struct ib_qp_init_attr a;
	unsigned int i;
	bool ok;
	int err;

	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_send_wr = caps->max_qp_wr + 1;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(max_send_wr = max_qp_wr + 1 = %u)",
		   a.cap.max_send_wr);
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_recv_wr = caps->max_qp_wr + 1;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(max_recv_wr = max_qp_wr + 1 = %u)",
		   a.cap.max_recv_wr);
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_send_sge = caps->max_send_sge + 1;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(max_send_sge = max_send_sge + 1 = %u)",
		   a.cap.max_send_sge);
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_recv_sge = caps->max_recv_sge + 1;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(max_recv_sge = max_recv_sge + 1 = %u)",
		   a.cap.max_recv_sge);
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_inline_data = KITE_MAX_INLINE + 1;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(max_inline_data = %u, beyond the device's %u)",
		   a.cap.max_inline_data, KITE_MAX_INLINE);
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_send_wr = U32_MAX;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(max_send_wr = U32_MAX)");

	/* Every limit at once is usable. */
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.cap.max_send_wr = caps->max_qp_wr;
	a.cap.max_recv_wr = caps->max_qp_wr;
	a.cap.max_send_sge = caps->max_send_sge;
	a.cap.max_recv_sge = caps->max_recv_sge;
	a.cap.max_inline_data = KITE_MAX_INLINE;
	err = kvt_qp(pd, &a, NULL);
	kvt_expect(r, err, 0,
		   "create_qp(every capacity at the device's maximum: wr %d, sge %d/%d, inline %u)",
		   caps->max_qp_wr, caps->max_send_sge, caps->max_recv_sge,
		   KITE_MAX_INLINE);
	ok = a.cap.max_send_wr >= caps->max_qp_wr &&
	     a.cap.max_recv_wr >= caps->max_qp_wr &&
	     a.cap.max_send_sge >= caps->max_send_sge &&
	     a.cap.max_recv_sge >= caps->max_recv_sge &&
	     a.cap.max_inline_data >= KITE_MAX_INLINE;
	if (!err)
		kvt_result(r, ok, "create_qp returns capacities at least those asked for");

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		kvt_qp_attr(&a, cq, types[i].type);
		a.port_num = 1;
		kvt_expect(r, kvt_qp(pd, &a, NULL), -EOPNOTSUPP,
			   "create_qp(type %s)", types[i].name);
	}
	kvt_qp_attr(&a, cq, IB_QPT_XRC_TGT);
	kvt_expect(r, kvt_qp(pd, &a, NULL),
		   caps->device_cap_flags & IB_DEVICE_XRC ? -EINVAL : -EOPNOTSUPP,
		   "create_qp(type XRC_TGT without an XRC domain)");
	kvt_qp_attr(&a, cq, IB_QPT_UC);
	kvt_expect(r, kvt_qp(pd, &a, NULL), 0, "create_qp(type UC)");
	/* ib_mad owns the GSI QP already; the device has one QPN 1. */
	kvt_qp_attr(&a, cq, IB_QPT_GSI);
	a.port_num = 1;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(a second GSI QP)");
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EOPNOTSUPP,
		   "create_qp(create_flags = BLOCK_MULTICAST_LOOPBACK)");
	kvt_qp_attr(&a, cq, IB_QPT_RC);
	a.send_cq = NULL;
	kvt_expect(r, kvt_qp(pd, &a, NULL), -EINVAL,
		   "create_qp(no send CQ)");
}

static int kvt_post_send(struct ib_qp *qp, int num_sge, enum ib_wr_opcode op)
{
	struct ib_sge sge[KITE_MAX_SGE + 1] = {};
	struct ib_send_wr wr = {
		.sg_list = sge,
		.num_sge = num_sge,
		.opcode = op,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad = NULL;
	int err;

	err = ib_post_send(qp, &wr, &bad);
	if (err && bad != &wr)
		return -EFAULT;	/* bad_wr must name the refused request */
	return err;
}

static int kvt_post_recv(struct ib_qp *qp, int num_sge)
{
	struct ib_sge sge[KITE_MAX_SGE + 1] = {};
	struct ib_recv_wr wr = {
		.sg_list = sge,
		.num_sge = num_sge,
	};
	const struct ib_recv_wr *bad = NULL;
	int err;

	err = ib_post_recv(qp, &wr, &bad);
	if (err && bad != &wr)
		return -EFAULT;
	return err;
}

static void kvt_bad_qp_modify(struct kvt_run *r, struct ib_pd *pd,
			      struct ib_cq *cq)
{
	const struct ib_device_attr *caps = &r->dev->attrs;
	struct ib_qp_init_attr ia;
	struct ib_qp_attr a, q;
	int sgid, empty, mask, err;
	union ib_gid gid = {};
	u8 mac[ETH_ALEN] = {};
	struct ib_qp *qp;
	bool ok;

	kvt_gids(r->dev, &sgid, &empty, &gid, mac);
	if (!kvt_result(r, sgid >= 0, "port 1 has a valid GID (index %d)",
			sgid))
		return;

	kvt_qp_attr(&ia, cq, IB_QPT_RC);
	err = kvt_qp(pd, &ia, &qp);
	if (!kvt_expect(r, err, 0, "create_qp(RC)"))
		return;

	kvt_expect(r, kvt_post_recv(qp, 1), -EINVAL, "post_recv in RESET");
	kvt_expect(r, kvt_post_send(qp, 1, IB_WR_SEND), -EINVAL,
		   "post_send in RESET");

	/* RESET -> */
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL,
		   "modify_qp(RESET -> RTS)");
	kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL,
		   "modify_qp(RESET -> RTR)");
	a.qp_state = IB_QPS_ERR + 1;
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL,
		   "modify_qp(state = IB_QPS_ERR + 1)");
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_INIT;
	a.cur_qp_state = IB_QPS_ERR + 1;
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_CUR_STATE),
		   -EINVAL, "modify_qp(cur_qp_state = IB_QPS_ERR + 1)");
	mask = kvt_init_attr(&a);
	kvt_expect(r, ib_modify_qp(qp, &a, mask & ~IB_QP_ACCESS_FLAGS),
		   -EINVAL, "modify_qp(RESET -> INIT without the required access flags)");
	mask = kvt_init_attr(&a);
	kvt_expect(r, ib_modify_qp(qp, &a, mask | IB_QP_QKEY), -EINVAL,
		   "modify_qp(RESET -> INIT of an RC QP with a Q_Key)");
	mask = kvt_init_attr(&a);
	a.port_num = 0;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(RESET -> INIT, port 0)");
	mask = kvt_init_attr(&a);
	a.pkey_index = 1;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(RESET -> INIT, pkey_index 1 beyond a 1-entry table)");
	mask = kvt_init_attr(&a);
	kvt_expect(r, ib_modify_qp(qp, &a, mask | IB_QP_ALT_PATH), -EINVAL,
		   "modify_qp(RESET -> INIT with an alternate path)");
	mask = kvt_init_attr(&a);
	kvt_expect(r, ib_modify_qp(qp, &a, mask), 0, "modify_qp(RESET -> INIT)");

	/* INIT -> */
	kvt_expect(r, kvt_post_send(qp, 1, IB_WR_SEND), -EINVAL,
		   "post_send in INIT");
	kvt_expect(r, kvt_post_recv(qp, ia.cap.max_recv_sge + 1), -EINVAL,
		   "post_recv(num_sge = max_recv_sge + 1)");
	mask = kvt_rts_attr(&a);
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTS, skipping RTR)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	a.path_mtu = IB_MTU_4096 + 1;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, path_mtu = IB_MTU_4096 + 1)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	a.path_mtu = 0;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, path_mtu = 0)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	a.ah_attr.grh.sgid_index = ib_port_immutable_read(r->dev, 1)->gid_tbl_len;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, sgid_index = GID table length %u)",
		   a.ah_attr.grh.sgid_index);
	if (empty >= 0) {
		mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
		a.ah_attr.grh.sgid_index = empty;
		kvt_expect(r, ib_modify_qp(qp, &a, mask), -ENODATA,
			   "modify_qp(INIT -> RTR, sgid_index %d: an empty GID entry)",
			   empty);
	} else {
		kvt_skip(r, "modify_qp(INIT -> RTR, empty GID entry) # SKIP the GID table is full");
	}
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	rdma_ah_set_port_num(&a.ah_attr, 2);
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, address vector on port 2)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	a.max_dest_rd_atomic = caps->max_qp_rd_atom + 1;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, max_dest_rd_atomic = max_qp_rd_atom + 1 = %d)",
		   caps->max_qp_rd_atom + 1);
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	a.min_rnr_timer = 32;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, min_rnr_timer = 32)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	a.dest_qp_num = BIT(24);
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(INIT -> RTR, dest_qp_num = 2^24)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	kvt_expect(r, ib_modify_qp(qp, &a, mask & ~IB_QP_AV), -EINVAL,
		   "modify_qp(INIT -> RTR without the address vector)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	kvt_expect(r, ib_modify_qp(qp, &a, mask), 0, "modify_qp(INIT -> RTR)");

	/* RTR -> */
	mask = kvt_rts_attr(&a);
	a.max_rd_atomic = caps->max_qp_init_rd_atom + 1;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(RTR -> RTS, max_rd_atomic = max_qp_init_rd_atom + 1 = %d)",
		   caps->max_qp_init_rd_atom + 1);
	mask = kvt_rts_attr(&a);
	a.timeout = 32;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(RTR -> RTS, timeout = 32)");
	mask = kvt_rts_attr(&a);
	a.retry_cnt = 8;
	kvt_expect(r, ib_modify_qp(qp, &a, mask), -EINVAL,
		   "modify_qp(RTR -> RTS, retry_cnt = 8)");
	mask = kvt_rts_attr(&a);
	a.cur_qp_state = IB_QPS_RTS;
	kvt_expect(r, ib_modify_qp(qp, &a, mask | IB_QP_CUR_STATE), -EINVAL,
		   "modify_qp(RTR -> RTS with a stale cur_qp_state RTS)");
	mask = kvt_rts_attr(&a);
	kvt_expect(r, ib_modify_qp(qp, &a, mask), 0, "modify_qp(RTR -> RTS)");

	/* RTS */
	memset(&q, 0, sizeof(q));
	err = ib_query_qp(qp, &q, IB_QP_STATE | IB_QP_PATH_MTU, &ia);
	ok = q.qp_state == IB_QPS_RTS && q.path_mtu == IB_MTU_1024 &&
	     q.max_rd_atomic == 1 && q.timeout == 14;
	if (kvt_expect(r, err, 0, "query_qp in RTS"))
		kvt_result(r, ok,
			   "query_qp reports what modify_qp set (state %d, path_mtu %d)",
			   q.qp_state, q.path_mtu);
	kvt_expect(r, kvt_post_send(qp, ia.cap.max_send_sge + 1, IB_WR_SEND),
		   -EINVAL, "post_send(num_sge = max_send_sge + 1)");
	kvt_expect(r, kvt_post_send(qp, 1, IB_WR_REG_MR + 100), -EINVAL,
		   "post_send(unknown opcode)");
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_INIT;
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL,
		   "modify_qp(RTS -> INIT)");
	a.qp_state = IB_QPS_RESET;
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE), 0,
		   "modify_qp(RTS -> RESET)");
	kvt_expect(r, ib_destroy_qp_user(qp, NULL), 0, "destroy_qp(RC)");

	/* UD: a different attribute table. */
	kvt_qp_attr(&ia, cq, IB_QPT_UD);
	err = kvt_qp(pd, &ia, &qp);
	if (!kvt_expect(r, err, 0, "create_qp(UD)"))
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
				   IB_QP_PORT | IB_QP_QKEY | IB_QP_ACCESS_FLAGS),
		   -EINVAL, "modify_qp(UD RESET -> INIT with access flags)");
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
				   IB_QP_PORT),
		   -EINVAL, "modify_qp(UD RESET -> INIT without the Q_Key)");
	kvt_expect(r, ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
				   IB_QP_PORT | IB_QP_QKEY),
		   0, "modify_qp(UD RESET -> INIT)");
	kvt_expect(r, ib_destroy_qp_user(qp, NULL), 0, "destroy_qp(UD)");
}

static void kvt_run_bad(struct kvt_run *r)
{
	struct ib_pd *pd;
	struct ib_cq *cq;
	int err;

	kvt_bad_cq(r);

	pd = ib_alloc_pd(r->dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(pd), 0, "alloc_pd"))
		return;
	err = kvt_cq(r, 64, 0, &cq);
	if (kvt_expect(r, err, 0, "create_cq(cqe = 64)")) {
		kvt_bad_mr(r, pd);
		kvt_bad_qp_create(r, pd, cq);
		kvt_bad_qp_modify(r, pd, cq);
		kvt_expect(r, ib_destroy_cq_user(cq, NULL), 0, "destroy_cq");
	}
	kvt_expect(r, ib_dealloc_pd_user(pd, NULL), 0, "dealloc_pd");
}

/* ------------------------------------------------------------------ */
/* fault: the device fails a command                                   */
/* ------------------------------------------------------------------ */

/* What kite_ib must turn a command's status into (prm_cmdq.rst). */
static int kvt_status_errno(u8 status)
{
	switch (status) {
	case KITE_CMD_OK:
		return 0;
	case KITE_CMD_E_OPCODE:
		return -EOPNOTSUPP;
	case KITE_CMD_E_PARAM:
	case KITE_CMD_E_LENGTH:
	case KITE_CMD_E_STATE:
	case KITE_CMD_E_PBL:
		return -EINVAL;
	case KITE_CMD_E_NO_RESOURCES:
		return -ENOMEM;
	case KITE_CMD_E_OBJECT:
		return -ENOENT;
	case KITE_CMD_E_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/*
 * Run the verb that issues @op while the device fails it with @status.
 * Objects a failed destroy leaves are kept in kvt (kvt_keep), to be
 * destroyed by the "works" run once the device behaves again.
 */
static void kvt_run_fault(struct kvt_run *r, u32 op, u32 status)
{
	int want = kvt_status_errno(status);
	struct ib_qp_init_attr ia;
	struct ib_port_attr pa;
	struct ib_qp_attr a;
	struct ib_pd *pd = NULL;
	struct ib_cq *cq = NULL;
	struct ib_qp *qp = NULL;
	struct ib_mr *mr = NULL;
	struct ib_pd *p;
	int err;

	if (!kvt_result(r, !kvt_kept_any(), "no objects kept from an earlier run"))
		return;
	/* What the verb needs, made with commands that are not failed. */
	if (op != KITE_CMD_ALLOC_PD && op != KITE_CMD_REG_MR) {
		pd = ib_alloc_pd(r->dev, 0);
		if (!kvt_expect(r, PTR_ERR_OR_ZERO(pd), 0, "alloc_pd"))
			return;
	}
	if (op != KITE_CMD_CREATE_CQ &&
	    !kvt_expect(r, kvt_cq(r, 16, 0, &cq), 0, "create_cq"))
		goto out;
	if (op == KITE_CMD_MODIFY_QP || op == KITE_CMD_QUERY_QP ||
	    op == KITE_CMD_DESTROY_QP) {
		kvt_qp_attr(&ia, cq, IB_QPT_RC);
		if (!kvt_expect(r, kvt_qp(pd, &ia, &qp), 0, "create_qp"))
			goto out;
	}
	if (op == KITE_CMD_DEREG_MR &&
	    !kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_MEM_REG, 16, &mr), 0,
			"alloc_mr"))
		goto out;

	switch (op) {
	case KITE_CMD_ALLOC_PD:
		p = ib_alloc_pd(r->dev, 0);
		err = PTR_ERR_OR_ZERO(p);
		if (!err)
			ib_dealloc_pd_user(p, NULL);
		kvt_expect(r, err, want, "alloc_pd, ALLOC_PD status 0x%02x",
			   status);
		break;
	case KITE_CMD_CREATE_CQ:
		kvt_expect(r, kvt_cq(r, 16, 0, NULL), want,
			   "create_cq, CREATE_CQ status 0x%02x", status);
		break;
	case KITE_CMD_CREATE_QP:
		kvt_qp_attr(&ia, cq, IB_QPT_RC);
		kvt_expect(r, kvt_qp(pd, &ia, NULL), want,
			   "create_qp, CREATE_QP status 0x%02x", status);
		break;
	case KITE_CMD_MODIFY_QP:
		kvt_expect(r, ib_modify_qp(qp, &a, kvt_init_attr(&a)), want,
			   "modify_qp(RESET -> INIT), MODIFY_QP status 0x%02x",
			   status);
		break;
	case KITE_CMD_QUERY_QP:
		kvt_expect(r, ib_query_qp(qp, &a, IB_QP_STATE, &ia), want,
			   "query_qp, QUERY_QP status 0x%02x", status);
		break;
	case KITE_CMD_MODIFY_CQ:
		kvt_expect(r, rdma_set_cq_moderation(cq, 4, 10), want,
			   "modify_cq, MODIFY_CQ status 0x%02x", status);
		break;
	case KITE_CMD_QUERY_PORT:
		kvt_expect(r, ib_query_port(r->dev, 1, &pa), want,
			   "query_port, QUERY_PORT status 0x%02x", status);
		break;
	case KITE_CMD_REG_MR:
		/* Without a local DMA lkey, a kernel PD has a DMA MR. */
		p = ib_alloc_pd(r->dev, 0);
		err = PTR_ERR_OR_ZERO(p);
		if (!err)
			ib_dealloc_pd_user(p, NULL);
		kvt_expect(r, err, want,
			   "alloc_pd (its DMA MR), REG_MR status 0x%02x", status);
		break;
	case KITE_CMD_ALLOC_MR:
		kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_MEM_REG, 16, NULL), want,
			   "alloc_mr, ALLOC_MR status 0x%02x", status);
		break;
	case KITE_CMD_DESTROY_QP:
		err = ib_destroy_qp_user(qp, NULL);
		kvt_expect(r, err, want, "destroy_qp, DESTROY_QP status 0x%02x",
			   status);
		if (!err)
			qp = NULL;
		break;
	case KITE_CMD_DESTROY_CQ:
		err = ib_destroy_cq_user(cq, NULL);
		kvt_expect(r, err, want, "destroy_cq, DESTROY_CQ status 0x%02x",
			   status);
		if (!err)
			cq = NULL;
		break;
	case KITE_CMD_DEREG_MR:
		err = ib_dereg_mr_user(mr, NULL);
		kvt_expect(r, err, want, "dereg_mr, DEREG_MR status 0x%02x",
			   status);
		/* The core stops tracking an MR before the driver's dereg. */
		kvt.mr_untracked = !!err;
		if (!err)
			mr = NULL;
		break;
	case KITE_CMD_DEALLOC_PD:
		err = ib_dealloc_pd_user(pd, NULL);
		kvt_expect(r, err, want, "dealloc_pd, DEALLOC_PD status 0x%02x",
			   status);
		if (!err)
			pd = NULL;
		break;
	default:
		kvt_result(r, false, "opcode 0x%02x has no verb in this test", op);
		break;
	}

	/* A failed modify must not have changed the QP's state. */
	if (op == KITE_CMD_MODIFY_QP && want) {
		memset(&a, 0, sizeof(a));
		err = ib_query_qp(qp, &a, IB_QP_STATE, &ia);
		kvt_result(r, !err && a.qp_state == IB_QPS_RESET,
			   "the QP is still in RESET (query_qp %d, state %d)",
			   err, a.qp_state);
	}

out:
	/*
	 * An object whose destroy the device failed stays, with what it
	 * uses, until the "works" run.
	 */
	if (op == KITE_CMD_DESTROY_QP)
		swap(kvt.qp, qp);
	if (op == KITE_CMD_DEREG_MR)
		swap(kvt.mr, mr);
	if (op == KITE_CMD_DESTROY_CQ || kvt.qp)
		swap(kvt.cq, cq);
	if (op == KITE_CMD_DEALLOC_PD || kvt.qp || kvt.mr)
		swap(kvt.pd, pd);
	if (qp)
		kvt_expect(r, ib_destroy_qp_user(qp, NULL), 0, "destroy_qp");
	if (mr)
		kvt_expect(r, ib_dereg_mr_user(mr, NULL), 0, "dereg_mr");
	if (cq)
		kvt_expect(r, ib_destroy_cq_user(cq, NULL), 0, "destroy_cq");
	if (pd)
		kvt_expect(r, ib_dealloc_pd_user(pd, NULL), 0, "dealloc_pd");
}

/* ------------------------------------------------------------------ */
/* hang: the device stops answering                                    */
/* ------------------------------------------------------------------ */

static void kvt_run_hang_prepare(struct kvt_run *r)
{
	struct ib_qp_init_attr ia;
	union ib_gid gid;
	struct ib_qp_attr a;
	struct ib_pd *pd;

	if (!kvt_result(r, !kvt_kept_any(), "no objects kept from an earlier run"))
		return;
	pd = ib_alloc_pd(r->dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(pd), 0, "alloc_pd"))
		return;
	kvt.pd = pd;
	if (!kvt_expect(r, kvt_cq(r, 64, 0, &kvt.cq), 0, "create_cq"))
		return;
	kvt_qp_attr(&ia, kvt.cq, IB_QPT_RC);
	if (!kvt_expect(r, kvt_qp(kvt.pd, &ia, &kvt.qp), 0, "create_qp"))
		return;
	kvt_expect(r, ib_modify_qp(kvt.qp, &a, kvt_init_attr(&a)), 0,
		   "modify_qp(RESET -> INIT)");
	kvt_expect(r, kvt_mr(kvt.pd, IB_MR_TYPE_MEM_REG, 16, &kvt.mr), 0,
		   "alloc_mr");
	kvt_qp_attr(&ia, kvt.cq, IB_QPT_UD);
	if (!kvt_expect(r, kvt_qp(kvt.pd, &ia, &kvt.mqp), 0, "create_qp (UD)"))
		return;
	kvt_mgid(&gid, 1);
	if (!kvt_expect(r, ib_attach_mcast(kvt.mqp, &gid, 0), 0,
			"attach_mcast of the UD QP"))
		kvt.mqp = ib_destroy_qp_user(kvt.mqp, NULL) ? kvt.mqp : NULL;
}

static void kvt_run_hang(struct kvt_run *r, u32 timeout_ms)
{
	int fatal = atomic_read(&kvt.fatal_events);
	struct ib_qp_init_attr ia;
	union ib_gid gid;
	struct ib_port_attr pa;
	struct ib_qp_attr a;
	ktime_t t0;
	bool ok;
	s64 ms;
	int i, err;

	if (!kvt_result(r, kvt.pd && kvt.cq && kvt.qp && kvt.mqp && kvt.mr,
			"objects kept by hang_prepare"))
		return;

	t0 = ktime_get();
	err = kvt_cq(r, 16, 0, NULL);
	ms = ktime_ms_delta(ktime_get(), t0);
	kvt_expect(r, err, -ETIMEDOUT, "create_cq while the device hangs");
	ok = ms >= (s64)timeout_ms - 10 && ms < 2 * (s64)timeout_ms + 5000;
	kvt_result(r, ok, "create_cq waited the command time-out (%lld ms, cmd_timeout_ms %u)",
		   ms, timeout_ms);
	/* The core delivers events from a work item: wait for it. */
	for (i = 0; i < 150 && atomic_read(&kvt.fatal_events) == fatal; i++)
		msleep(20);
	msleep(100);
	kvt_result(r, atomic_read(&kvt.fatal_events) == fatal + 1,
		   "the event handler saw IB_EVENT_DEVICE_FATAL once (%d)",
		   atomic_read(&kvt.fatal_events) - fatal);

	/* A dead device fails every command at once. */
	t0 = ktime_get();
	err = PTR_ERR_OR_ZERO(ib_alloc_pd(r->dev, 0));
	kvt_expect(r, err, -EIO, "alloc_pd on the failed device");
	kvt_qp_attr(&ia, kvt.cq, IB_QPT_RC);
	kvt_expect(r, kvt_qp(kvt.pd, &ia, NULL), -EIO,
		   "create_qp on the failed device");
	kvt_expect(r, ib_modify_qp(kvt.qp, &a, kvt_init_attr(&a)), -EIO,
		   "modify_qp on the failed device");
	kvt_expect(r, ib_query_port(r->dev, 1, &pa), -EIO,
		   "query_port on the failed device");
	kvt_expect(r, rdma_set_cq_moderation(kvt.cq, 1, 1), -EIO,
		   "modify_cq on the failed device");
	ms = ktime_ms_delta(ktime_get(), t0);
	kvt_result(r, ms < timeout_ms / 2,
		   "five commands on the failed device fail fast (%lld ms in all)",
		   ms);

	/* Destroying needs no answer: the device is about to be reset. */
	kvt_expect(r, ib_dereg_mr_user(kvt.mr, NULL), 0,
		   "dereg_mr on the failed device");
	kvt_expect(r, ib_destroy_qp_user(kvt.qp, NULL), 0,
		   "destroy_qp on the failed device");
	/* The group is gone with the device: the QP can be released. */
	kvt_mgid(&gid, 1);
	kvt_expect(r, ib_detach_mcast(kvt.mqp, &gid, 0), 0,
		   "detach_mcast on the failed device");
	kvt_expect(r, ib_destroy_qp_user(kvt.mqp, NULL), 0,
		   "destroy_qp of the detached UD QP on the failed device");
	kvt_expect(r, ib_destroy_cq_user(kvt.cq, NULL), 0,
		   "destroy_cq on the failed device");
	kvt_expect(r, ib_dealloc_pd_user(kvt.pd, NULL), 0,
		   "dealloc_pd on the failed device");
	kvt.mr = NULL;
	kvt.qp = NULL;
	kvt.mqp = NULL;
	kvt.cq = NULL;
	kvt.pd = NULL;
}

/* ------------------------------------------------------------------ */
/* works: everything works                                             */
/* ------------------------------------------------------------------ */

/* Destroy the kept objects; true if all went. Called with kvt.lock. */
static bool kvt_destroy_kept(struct kvt_run *r)
{
	union ib_gid gid;
	bool ok = true;

	if (kvt.mqp) {
		kvt_mgid(&gid, 1);
		ok &= kvt_expect(r, ib_detach_mcast(kvt.mqp, &gid, 0), 0,
				 "detach_mcast of the kept UD QP");
		ok &= kvt_expect(r, ib_destroy_qp_user(kvt.mqp, NULL), 0,
				 "destroy_qp of the kept UD QP");
		kvt.mqp = NULL;
	}
	if (kvt.qp) {
		ok &= kvt_expect(r, ib_destroy_qp_user(kvt.qp, NULL), 0,
				 "destroy_qp of the kept QP");
		kvt.qp = NULL;
	}
	if (kvt.mr) {
		ok &= kvt_expect(r, ib_dereg_mr_user(kvt.mr, NULL), 0,
				 "dereg_mr of the kept MR");
		kvt.mr = NULL;
		kvt.mr_untracked = false;
	}
	if (kvt.cq) {
		ok &= kvt_expect(r, ib_destroy_cq_user(kvt.cq, NULL), 0,
				 "destroy_cq of the kept CQ");
		kvt.cq = NULL;
	}
	if (kvt.pd) {
		ok &= kvt_expect(r, ib_dealloc_pd_user(kvt.pd, NULL), 0,
				 "dealloc_pd of the kept PD");
		kvt.pd = NULL;
	}
	return ok;
}

/* UD multicast from a kernel ULP; @rc is an RC QP. */
static void kvt_run_works_mcast(struct kvt_run *r, struct ib_pd *pd,
				struct ib_cq *cq, struct ib_qp *rc)
{
	struct ib_qp_init_attr ia;
	union ib_gid gid, other;
	struct ib_qp *qp;

	kvt_qp_attr(&ia, cq, IB_QPT_UD);
	if (!kvt_expect(r, kvt_qp(pd, &ia, &qp), 0, "create_qp (UD)"))
		return;
	kvt_mgid(&gid, 2);
	kvt_mgid(&other, 3);
	kvt_expect(r, ib_attach_mcast(qp, &gid, 0), 0, "attach_mcast");
	kvt_expect(r, ib_attach_mcast(qp, &gid, 0), -EINVAL,
		   "attach_mcast to a group the QP is in");
	kvt_expect(r, ib_attach_mcast(rc, &gid, 0), -EINVAL,
		   "attach_mcast of an RC QP");
	kvt_expect(r, ib_detach_mcast(qp, &other, 0), -EINVAL,
		   "detach_mcast from a group nobody joined");
	/* The core counts attachments in usecnt and refuses the destroy. */
	kvt_expect(r, ib_destroy_qp_user(qp, NULL), -EBUSY,
		   "destroy_qp of an attached QP");
	kvt_expect(r, ib_detach_mcast(qp, &gid, 0), 0, "detach_mcast");
	kvt_expect(r, ib_detach_mcast(qp, &gid, 0), -EINVAL,
		   "detach_mcast again");
	kvt_expect(r, ib_destroy_qp_user(qp, NULL), 0,
		   "destroy_qp of the detached UD QP");
}

static void kvt_run_works(struct kvt_run *r)
{
	int sgid, empty, mask;
	struct ib_qp_init_attr ia;
	union ib_gid gid = {};
	u8 mac[ETH_ALEN] = {};
	struct ib_port_attr pa;
	struct ib_qp_attr a;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;

	kvt_destroy_kept(r);

	kvt_expect(r, ib_query_port(r->dev, 1, &pa), 0, "query_port");
	pd = ib_alloc_pd(r->dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(pd), 0, "alloc_pd"))
		return;
	if (!kvt_expect(r, kvt_cq(r, 256, 0, &cq), 0, "create_cq"))
		goto out_pd;
	kvt_expect(r, rdma_set_cq_moderation(cq, 8, 16), 0, "modify_cq");
	kvt_expect(r, kvt_mr(pd, IB_MR_TYPE_MEM_REG, 64, NULL), 0,
		   "alloc_mr and dereg_mr");
	kvt_qp_attr(&ia, cq, IB_QPT_RC);
	if (!kvt_expect(r, kvt_qp(pd, &ia, &qp), 0, "create_qp"))
		goto out_cq;
	kvt_gids(r->dev, &sgid, &empty, &gid, mac);
	kvt_expect(r, ib_modify_qp(qp, &a, kvt_init_attr(&a)), 0,
		   "modify_qp(RESET -> INIT)");
	mask = kvt_rtr_attr(qp, &a, sgid, &gid, mac);
	kvt_expect(r, sgid < 0 ? -ENODATA : ib_modify_qp(qp, &a, mask), 0,
		   "modify_qp(INIT -> RTR)");
	kvt_expect(r, ib_modify_qp(qp, &a, kvt_rts_attr(&a)), 0,
		   "modify_qp(RTR -> RTS)");
	kvt_expect(r, ib_query_qp(qp, &a, IB_QP_STATE, &ia), 0, "query_qp");
	kvt_result(r, a.qp_state == IB_QPS_RTS, "the QP is in RTS (%d)",
		   a.qp_state);
	kvt_run_works_mcast(r, pd, cq, qp);
	kvt_expect(r, ib_destroy_qp_user(qp, NULL), 0, "destroy_qp");
out_cq:
	kvt_expect(r, ib_destroy_cq_user(cq, NULL), 0, "destroy_cq");
out_pd:
	kvt_expect(r, ib_dealloc_pd_user(pd, NULL), 0, "dealloc_pd");
}

/* ------------------------------------------------------------------ */
/* data: the kernel data path through the device's loopback            */
/* ------------------------------------------------------------------ */

#define KVT_BUF		8192	/* two pages, page aligned (kmalloc) */
#define KVT_MSG		5000	/* five packets at the 1024-byte path MTU */
#define KVT_WAIT	(5 * HZ)

/**
 * struct kvt_wr - a work request whose completion a case waits for
 * @cqe: what the request's wr_cqe points at
 * @done: completed by kvt_wr_done()
 * @wc: the completion
 */
struct kvt_wr {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

/**
 * struct kvt_data - the objects of the data set
 * @pd: protection domain (its local_dma_lkey covers the buffers)
 * @cq: completion queue polled by the core in softirq context
 * @qp: RC QP connected to itself
 * @qp2: a second one, for the remote access error
 * @mr: fast-registration MR over @dst
 * @sg: @dst as a scatterlist
 * @src: source buffer
 * @dst: destination buffer
 * @src_dma: @src's DMA address
 * @wr: completions waited for (freed only after the CQ)
 */
struct kvt_data {
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_qp *qp2;
	struct ib_mr *mr;
	struct scatterlist sg;
	u8 *src;
	u8 *dst;
	u64 src_dma;
	struct kvt_wr wr[8];
};

enum { KVT_SEND, KVT_RECV, KVT_REG, KVT_EXTRA };

static void kvt_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvt_wr *w = container_of(wc->wr_cqe, struct kvt_wr, cqe);

	w->wc = *wc;
	complete(&w->done);
}

static struct ib_cqe *kvt_wr_arm(struct kvt_wr *w)
{
	w->cqe.done = kvt_wr_done;
	reinit_completion(&w->done);
	memset(&w->wc, 0, sizeof(w->wc));
	w->wc.status = -1;
	return &w->cqe;
}

/* Wait for @w's completion: its status, or -ETIMEDOUT. */
static int kvt_wr_wait(struct kvt_wr *w)
{
	if (!wait_for_completion_timeout(&w->done, KVT_WAIT))
		return -ETIMEDOUT;
	return w->wc.status;
}

/* Wait for @w's completion and check its status. */
static bool kvt_wc(struct kvt_run *r, struct kvt_wr *w,
		   enum ib_wc_status want, const char *name)
{
	int got = kvt_wr_wait(w);

	if (kvt_result(r, got == want, "%s: %s", name, ib_wc_status_msg(want)))
		return true;
	pr_info("# got %s\n", got < 0 ? "no completion" : ib_wc_status_msg(got));
	return false;
}

/* Post a receive of up to KVT_BUF bytes into @d->dst. */
static int kvt_data_recv(struct kvt_data *d, struct ib_qp *qp,
			 struct kvt_wr *w)
{
	struct ib_sge sge = {
		.addr = sg_dma_address(&d->sg),
		.length = KVT_BUF,
		.lkey = d->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = kvt_wr_arm(w),
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(qp, &wr, NULL);
}

/*
 * Post one signalled send-queue request @wr (its opcode and the fields
 * that go with it filled in) of @len bytes at @d->src + @off: by DMA, or
 * copied into the WQE for IB_SEND_INLINE.
 */
static int kvt_data_send(struct kvt_data *d, struct ib_qp *qp,
			 struct ib_send_wr *wr, u32 off, u32 len)
{
	struct ib_sge sge = {
		.addr = d->src_dma + off,
		.length = len,
		.lkey = d->pd->local_dma_lkey,
	};

	if (wr->send_flags & IB_SEND_INLINE)
		sge = (struct ib_sge){ .addr = (uintptr_t)(d->src + off),
				       .length = len };

	wr->wr_cqe = kvt_wr_arm(&d->wr[KVT_SEND]);
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags |= IB_SEND_SIGNALED;
	return ib_post_send(qp, wr, NULL);
}

/*
 * A self-connected RC QP in RTS on @d->cq, receiving from @srq if not
 * NULL; or an ERR_PTR.
 */
static struct ib_qp *kvt_data_qp_on(struct kvt_run *r, struct kvt_data *d,
				    struct ib_srq *srq)
{
	union ib_gid gid = {};
	u8 mac[ETH_ALEN] = {};
	struct ib_qp_init_attr ia;
	struct ib_qp_attr a;
	int sgid, empty, mask, err;
	struct ib_qp *qp;

	kvt_qp_attr(&ia, d->cq, IB_QPT_RC);
	ia.cap.max_inline_data = 64;
	if (srq) {
		ia.srq = srq;
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
	}
	qp = ib_create_qp(d->pd, &ia);
	if (IS_ERR(qp))
		return qp;
	kvt_gids(r->dev, &sgid, &empty, &gid, mac);
	mask = kvt_init_attr(&a);
	a.qp_access_flags |= IB_ACCESS_REMOTE_ATOMIC;
	err = ib_modify_qp(qp, &a, mask);
	if (!err)
		err = sgid < 0 ? -ENODATA :
		      ib_modify_qp(qp, &a, kvt_rtr_attr(qp, &a, sgid, &gid, mac));
	if (!err) {
		/* Connected to itself: its SQ PSN is its RQ PSN. */
		mask = kvt_rts_attr(&a);
		a.sq_psn = 0x123;
		err = ib_modify_qp(qp, &a, mask);
	}
	if (err) {
		ib_destroy_qp(qp);
		return ERR_PTR(err);
	}
	return qp;
}

static struct ib_qp *kvt_data_qp(struct kvt_run *r, struct kvt_data *d)
{
	return kvt_data_qp_on(r, d, NULL);
}

static int kvt_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr ia;
	struct ib_qp_attr a;
	int err;

	err = ib_query_qp(qp, &a, IB_QP_STATE, &ia);
	return err ? err : a.qp_state;
}

/*
 * Post a receive and @wr (@len bytes at @d->src + @off) on the QP
 * connected to itself; both must complete successfully.
 */
static void kvt_data_exchange(struct kvt_run *r, struct kvt_data *d,
			      struct ib_send_wr *wr, u32 off, u32 len,
			      const char *what)
{
	char name[64];

	kvt_expect(r, kvt_data_recv(d, d->qp, &d->wr[KVT_RECV]), 0,
		   "post_recv for %s", what);
	kvt_expect(r, kvt_data_send(d, d->qp, wr, off, len), 0,
		   "post_send(%s, %u bytes)", what, len);
	snprintf(name, sizeof(name), "%s completes", what);
	kvt_wc(r, &d->wr[KVT_SEND], IB_WC_SUCCESS, name);
	snprintf(name, sizeof(name), "%s arrives", what);
	kvt_wc(r, &d->wr[KVT_RECV], IB_WC_SUCCESS, name);
}

/* SEND, SEND_WITH_IMM and an inline SEND to the QP itself. */
static void kvt_data_send_cases(struct kvt_run *r, struct kvt_data *d)
{
	struct kvt_wr *rw = &d->wr[KVT_RECV], *sw = &d->wr[KVT_SEND];
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	int i;

	for (i = 0; i < KVT_BUF; i++)
		d->src[i] = i * 7 + 3;
	memset(d->dst, 0, KVT_BUF);
	kvt_data_exchange(r, d, &wr, 0, KVT_MSG, "SEND");
	kvt_result(r, rw->wc.opcode == IB_WC_RECV && rw->wc.byte_len == KVT_MSG &&
		   !(rw->wc.wc_flags & IB_WC_WITH_IMM) && rw->wc.qp == d->qp &&
		   sw->wc.opcode == IB_WC_SEND,
		   "SEND/RECV completions: opcodes, byte_len %u, QP", rw->wc.byte_len);
	kvt_result(r, !memcmp(d->src, d->dst, KVT_MSG),
		   "%d bytes sent arrive intact", KVT_MSG);

	wr = (struct ib_send_wr){ .opcode = IB_WR_SEND_WITH_IMM,
				  .ex.imm_data = cpu_to_be32(0x12345678) };
	kvt_data_exchange(r, d, &wr, 100, 1, "SEND_WITH_IMM");
	kvt_result(r, (rw->wc.wc_flags & IB_WC_WITH_IMM) &&
		   rw->wc.ex.imm_data == cpu_to_be32(0x12345678) &&
		   rw->wc.byte_len == 1 && d->dst[0] == d->src[100],
		   "the receiver sees the immediate (%#x) and the byte",
		   be32_to_cpu(rw->wc.ex.imm_data));

	/* Inline: the device copies from the WQE, not from memory. */
	wr = (struct ib_send_wr){ .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_INLINE };
	kvt_data_exchange(r, d, &wr, 200, 64, "inline SEND");
	kvt_result(r, rw->wc.byte_len == 64 && !memcmp(d->dst, d->src + 200, 64),
		   "the inline bytes arrive intact");
}

/* IB_WR_REG_MR, then RDMA WRITE, READ and atomics through the MR. */
static void kvt_data_rdma_cases(struct kvt_run *r, struct kvt_data *d)
{
	struct kvt_wr *sw = &d->wr[KVT_SEND], *rw = &d->wr[KVT_RECV];
	struct ib_reg_wr reg = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.send_flags = IB_SEND_SIGNALED,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
	};
	struct ib_atomic_wr at = {};
	struct ib_rdma_wr rdma = {};
	struct ib_send_wr inv = {};
	u64 *remote, *local;

	d->mr = ib_alloc_mr(d->pd, IB_MR_TYPE_MEM_REG, KVT_BUF / PAGE_SIZE);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->mr), 0, "alloc_mr")) {
		d->mr = NULL;
		return;
	}
	kvt_result(r, ib_map_mr_sg(d->mr, &d->sg, 1, NULL, PAGE_SIZE) == 1,
		   "map_mr_sg(two pages)");
	ib_update_fast_reg_key(d->mr, ib_inc_rkey(d->mr->rkey));
	reg.mr = d->mr;
	reg.key = d->mr->rkey;
	reg.wr.wr_cqe = kvt_wr_arm(sw);
	kvt_expect(r, ib_post_send(d->qp, &reg.wr, NULL), 0, "post_send(REG_MR)");
	kvt_wc(r, sw, IB_WC_SUCCESS, "REG_MR completes");
	kvt_result(r, sw->wc.opcode == IB_WC_REG_MR, "REG_MR completion opcode");

	memset(d->dst, 0, KVT_BUF);
	rdma.wr.opcode = IB_WR_RDMA_WRITE;
	rdma.remote_addr = d->mr->iova + 1000;
	rdma.rkey = d->mr->rkey;
	kvt_expect(r, kvt_data_send(d, d->qp, &rdma.wr, 0, KVT_MSG), 0,
		   "post_send(RDMA_WRITE, %d bytes)", KVT_MSG);
	kvt_wc(r, sw, IB_WC_SUCCESS, "RDMA_WRITE completes");
	kvt_result(r, sw->wc.opcode == IB_WC_RDMA_WRITE &&
		   !memcmp(d->dst + 1000, d->src, KVT_MSG) && !d->dst[999],
		   "RDMA_WRITE: the bytes land at the MR offset, nothing before");

	memset(d->src + 4096, 0, 4096);
	rdma = (struct ib_rdma_wr){ .wr.opcode = IB_WR_RDMA_READ,
				    .remote_addr = d->mr->iova + 1500,
				    .rkey = d->mr->rkey };
	kvt_expect(r, kvt_data_send(d, d->qp, &rdma.wr, 4096, 3000), 0,
		   "post_send(RDMA_READ, 3000 bytes)");
	kvt_wc(r, sw, IB_WC_SUCCESS, "RDMA_READ completes");
	kvt_result(r, sw->wc.opcode == IB_WC_RDMA_READ &&
		   !memcmp(d->src + 4096, d->dst + 1500, 3000),
		   "RDMA_READ: the remote bytes arrive");

	remote = (u64 *)(d->dst + 4096);
	local = (u64 *)d->src;
	*remote = 40;
	at = (struct ib_atomic_wr){ .wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
				    .remote_addr = d->mr->iova + 4096,
				    .compare_add = 2, .rkey = d->mr->rkey };
	kvt_expect(r, kvt_data_send(d, d->qp, &at.wr, 0, 8), 0,
		   "post_send(ATOMIC_FETCH_AND_ADD)");
	kvt_wc(r, sw, IB_WC_SUCCESS, "FETCH_AND_ADD completes");
	kvt_result(r, *local == 40 && *remote == 42,
		   "FETCH_AND_ADD: original %llu returned, %llu in memory",
		   *local, *remote);
	at = (struct ib_atomic_wr){ .wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP,
				    .remote_addr = d->mr->iova + 4096,
				    .compare_add = 42, .swap = 7,
				    .rkey = d->mr->rkey };
	kvt_expect(r, kvt_data_send(d, d->qp, &at.wr, 0, 8), 0,
		   "post_send(ATOMIC_CMP_AND_SWP)");
	kvt_wc(r, sw, IB_WC_SUCCESS, "CMP_AND_SWP completes");
	kvt_result(r, *local == 42 && *remote == 7,
		   "CMP_AND_SWP: original %llu returned, %llu swapped in",
		   *local, *remote);

	/* SEND_WITH_INV: the receiver's MR is invalidated on arrival. */
	inv = (struct ib_send_wr){ .opcode = IB_WR_SEND_WITH_INV,
				   .ex.invalidate_rkey = d->mr->rkey };
	kvt_data_exchange(r, d, &inv, 0, 16, "SEND_WITH_INV");
	kvt_result(r, (rw->wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		   rw->wc.ex.invalidate_rkey == d->mr->rkey,
		   "the receiver sees the invalidated rkey %#x",
		   rw->wc.ex.invalidate_rkey);
}

/*
 * The invalidated rkey is refused by the responder: the requester's WRITE
 * completes with a remote access error and its QP goes to ERROR, where a
 * posted receive completes flushed.
 */
static void kvt_data_error_cases(struct kvt_run *r, struct kvt_data *d)
{
	struct kvt_wr *sw = &d->wr[KVT_SEND], *rw = &d->wr[KVT_RECV];
	struct ib_rdma_wr rdma = { .wr.opcode = IB_WR_RDMA_WRITE };

	if (!d->mr)
		return;
	d->qp2 = kvt_data_qp(r, d);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->qp2), 0, "second RC QP in RTS")) {
		d->qp2 = NULL;
		return;
	}
	rdma.remote_addr = d->mr->iova;
	rdma.rkey = d->mr->rkey;
	kvt_expect(r, kvt_data_send(d, d->qp2, &rdma.wr, 0, 64), 0,
		   "post_send(RDMA_WRITE to the invalidated rkey)");
	kvt_wc(r, sw, IB_WC_REM_ACCESS_ERR, "the WRITE completes with a remote access error");
	kvt_result(r, kvt_qp_state(d->qp2) == IB_QPS_ERR, "the QP is in ERROR");
	kvt_expect(r, kvt_data_recv(d, d->qp2, rw), 0, "post_recv in ERROR");
	kvt_wc(r, rw, IB_WC_WR_FLUSH_ERR, "a receive posted in ERROR completes flushed");
}

/*
 * The QP that kvt_data_error_cases() left in ERROR is reused: RESET (its
 * rings start over, empty), INIT, RTR, RTS, and SENDs to itself carry
 * data again, more of them than its 16-entry rings hold, so that the
 * indexes wrap past where the error left them.
 */
static void kvt_data_recover_cases(struct kvt_run *r, struct kvt_data *d)
{
	struct kvt_wr *sw = &d->wr[KVT_SEND], *rw = &d->wr[KVT_RECV];
	struct ib_send_wr wr;
	union ib_gid gid = {};
	u8 mac[ETH_ALEN] = {};
	struct ib_qp_attr a;
	int sgid, empty, mask, i, good = 0;

	if (!d->qp2)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RESET;
	if (!kvt_expect(r, ib_modify_qp(d->qp2, &a, IB_QP_STATE), 0,
			"recover: modify_qp(ERR -> RESET)"))
		return;
	kvt_result(r, kvt_qp_state(d->qp2) == IB_QPS_RESET,
		   "recover: the QP is in RESET");
	kvt_gids(r->dev, &sgid, &empty, &gid, mac);
	if (!kvt_result(r, sgid >= 0, "recover: a RoCE GID to connect with"))
		return;
	mask = kvt_init_attr(&a);
	if (!kvt_expect(r, ib_modify_qp(d->qp2, &a, mask), 0,
			"recover: modify_qp(RESET -> INIT)"))
		return;
	mask = kvt_rtr_attr(d->qp2, &a, sgid, &gid, mac);
	if (!kvt_expect(r, ib_modify_qp(d->qp2, &a, mask), 0,
			"recover: modify_qp(INIT -> RTR)"))
		return;
	/* Connected to itself: its SQ PSN is its RQ PSN. */
	mask = kvt_rts_attr(&a);
	a.sq_psn = 0x123;
	if (!kvt_expect(r, ib_modify_qp(d->qp2, &a, mask), 0,
			"recover: modify_qp(RTR -> RTS)"))
		return;

	for (i = 0; i < 40; i++) {
		memset(d->src, i + 1, 256);
		memset(d->dst, 0, 256);
		wr = (struct ib_send_wr){ .opcode = IB_WR_SEND };
		if (kvt_data_recv(d, d->qp2, rw) ||
		    kvt_data_send(d, d->qp2, &wr, 0, 256) ||
		    kvt_wr_wait(sw) != IB_WC_SUCCESS ||
		    kvt_wr_wait(rw) != IB_WC_SUCCESS ||
		    rw->wc.byte_len != 256 || memcmp(d->dst, d->src, 256))
			break;
		good++;
	}
	kvt_result(r, good == 40,
		   "recover: the QP carries 40 SENDs of 256 bytes again, data compared (%d good)",
		   good);
	kvt_result(r, kvt_qp_state(d->qp2) == IB_QPS_RTS,
		   "recover: the QP stays in RTS");
}

/*
 * ib_drain_qp() on a QP with receives outstanding: the core moves it to
 * ERROR and waits for its marker requests; everything completes flushed.
 */
static void kvt_data_drain(struct kvt_run *r, struct kvt_data *d)
{
	int i, flushed = 0;

	for (i = KVT_EXTRA; i < ARRAY_SIZE(d->wr); i++)
		kvt_expect(r, kvt_data_recv(d, d->qp, &d->wr[i]), 0,
			   "post_recv %d", i);
	ib_drain_qp(d->qp);
	for (i = KVT_EXTRA; i < ARRAY_SIZE(d->wr); i++)
		flushed += kvt_wr_wait(&d->wr[i]) == IB_WC_WR_FLUSH_ERR;
	kvt_result(r, flushed == ARRAY_SIZE(d->wr) - KVT_EXTRA,
		   "ib_drain_qp returns; the %d outstanding receives completed flushed",
		   flushed);
	kvt_result(r, kvt_qp_state(d->qp) == IB_QPS_ERR,
		   "the drained QP is in ERROR");
}

static void kvt_run_data(struct kvt_run *r)
{
	struct ib_device *dev = r->dev;
	struct kvt_data *d;
	int i;

	kvt_destroy_kept(r);
	d = kzalloc_obj(*d, GFP_KERNEL);
	if (!d)
		return;
	for (i = 0; i < ARRAY_SIZE(d->wr); i++)
		init_completion(&d->wr[i].done);
	d->src = kzalloc(KVT_BUF, GFP_KERNEL);
	d->dst = kzalloc(KVT_BUF, GFP_KERNEL);
	if (!d->src || !d->dst)
		goto out_free;
	d->pd = ib_alloc_pd(dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->pd), 0, "alloc_pd"))
		goto out_free;
	d->src_dma = ib_dma_map_single(dev, d->src, KVT_BUF, DMA_BIDIRECTIONAL);
	if (!kvt_result(r, !ib_dma_mapping_error(dev, d->src_dma), "map source"))
		goto out_pd;
	sg_init_one(&d->sg, d->dst, KVT_BUF);
	if (!kvt_result(r, ib_dma_map_sg(dev, &d->sg, 1, DMA_BIDIRECTIONAL) == 1,
			"map destination"))
		goto out_src;
	d->cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_SOFTIRQ);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->cq), 0, "alloc_cq(IB_POLL_SOFTIRQ)"))
		goto out_dst;
	d->qp = kvt_data_qp(r, d);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->qp), 0, "RC QP connected to itself in RTS"))
		goto out_cq;

	kvt_data_send_cases(r, d);
	kvt_data_rdma_cases(r, d);
	kvt_data_error_cases(r, d);
	kvt_data_recover_cases(r, d);
	kvt_data_drain(r, d);

	if (d->qp2)
		kvt_expect(r, ib_destroy_qp(d->qp2), 0, "destroy the second QP");
	kvt_expect(r, ib_destroy_qp(d->qp), 0, "destroy_qp");
	if (d->mr)
		kvt_expect(r, ib_dereg_mr(d->mr), 0, "dereg_mr");
out_cq:
	ib_free_cq(d->cq);
out_dst:
	ib_dma_unmap_sg(dev, &d->sg, 1, DMA_BIDIRECTIONAL);
out_src:
	ib_dma_unmap_single(dev, d->src_dma, KVT_BUF, DMA_BIDIRECTIONAL);
out_pd:
	ib_dealloc_pd(d->pd);
out_free:
	kfree(d->dst);
	kfree(d->src);
	kfree(d);
}

/* ------------------------------------------------------------------ */
/* srq: shared receive queues                                          */
/* ------------------------------------------------------------------ */

#define KVT_SRQ_MSGS	4	/* receives at d->wr[KVT_EXTRA ...] */
#define KVT_SRQ_CHUNK	(KVT_BUF / KVT_SRQ_MSGS)

static atomic_t kvt_srq_limit_events;

static void kvt_srq_event(struct ib_event *ev, void *ctx)
{
	pr_info("event %s on SRQ\n", ib_event_msg(ev->event));
	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&kvt_srq_limit_events);
}

static struct ib_srq *kvt_srq(struct ib_pd *pd, u32 wr, u32 sge, u32 limit)
{
	struct ib_srq_init_attr ia = {
		.event_handler = kvt_srq_event,
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
	};

	return ib_create_srq(pd, &ia);
}

/*
 * Post a receive of chunk @i of @d->dst to @srq, completing into
 * d->wr[KVT_EXTRA + @i].
 */
static int kvt_srq_recv(struct kvt_data *d, struct ib_srq *srq, int i)
{
	struct ib_sge sge = {
		.addr = sg_dma_address(&d->sg) + i * KVT_SRQ_CHUNK,
		.length = KVT_SRQ_CHUNK,
		.lkey = d->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = kvt_wr_arm(&d->wr[KVT_EXTRA + i]),
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_srq_recv(srq, &wr, NULL);
}

static bool kvt_srq_limit_reach(int n)
{
	unsigned long end = jiffies + KVT_WAIT;

	while (atomic_read(&kvt_srq_limit_events) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(2000, 5000);
	}
	return true;
}

/* Bad input to the SRQ verbs, each refused with its errno. */
static void kvt_srq_bad(struct kvt_run *r, struct kvt_data *d,
			const struct ib_device_attr *da)
{
	struct ib_srq *srq;

	srq = kvt_srq(d->pd, da->max_srq_wr + 1, 1, 0);
	kvt_expect(r, PTR_ERR_OR_ZERO(srq), -EINVAL,
		   "create_srq with max_wr %u (max_srq_wr + 1)", da->max_srq_wr + 1);
	if (!IS_ERR(srq))
		ib_destroy_srq_user(srq, NULL);
	srq = kvt_srq(d->pd, 16, da->max_srq_sge + 1, 0);
	kvt_expect(r, PTR_ERR_OR_ZERO(srq), -EINVAL,
		   "create_srq with max_sge %u (max_srq_sge + 1)", da->max_srq_sge + 1);
	if (!IS_ERR(srq))
		ib_destroy_srq_user(srq, NULL);
	srq = kvt_srq(d->pd, 16, 1, 17);
	kvt_expect(r, PTR_ERR_OR_ZERO(srq), -EINVAL,
		   "create_srq with srq_limit 17 > max_wr 16");
	if (!IS_ERR(srq))
		ib_destroy_srq_user(srq, NULL);
	srq = kvt_srq(d->pd, da->max_srq_wr, da->max_srq_sge, 0);
	kvt_expect(r, PTR_ERR_OR_ZERO(srq), 0,
		   "create_srq at exactly max_srq_wr %u and max_srq_sge %u",
		   da->max_srq_wr, da->max_srq_sge);
	if (!IS_ERR(srq))
		kvt_expect(r, ib_destroy_srq_user(srq, NULL), 0, "destroy_srq");
}

/*
 * @n SENDs of distinct lengths and contents from the QP to itself, into
 * the SRQ receives 0 .. @n - 1 posted before: the receives whose wr_id,
 * byte_len and payload are right.
 */
static int kvt_srq_sends(struct kvt_run *r, struct kvt_data *d, int n)
{
	struct ib_send_wr wr;
	char name[64];
	int i, ok = 0;

	for (i = 0; i < KVT_BUF; i++)
		d->src[i] = i * 13 + 5 + n;
	memset(d->dst, 0, KVT_BUF);
	for (i = 0; i < n; i++) {
		wr = (struct ib_send_wr){ .opcode = IB_WR_SEND };
		kvt_expect(r, kvt_data_send(d, d->qp, &wr,
					    i * KVT_SRQ_CHUNK, 1000 + i),
			   0, "post_send %d (%d bytes)", i, 1000 + i);
		snprintf(name, sizeof(name), "SEND %d completes", i);
		kvt_wc(r, &d->wr[KVT_SEND], IB_WC_SUCCESS, name);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "SRQ receive %d completes", i);
		if (!kvt_wc(r, &d->wr[KVT_EXTRA + i], IB_WC_SUCCESS, name))
			continue;
		ok += d->wr[KVT_EXTRA + i].wc.byte_len == 1000 + i &&
		      d->wr[KVT_EXTRA + i].wc.qp == d->qp &&
		      d->wr[KVT_EXTRA + i].wc.opcode == IB_WC_RECV &&
		      !memcmp(d->dst + i * KVT_SRQ_CHUNK,
			      d->src + i * KVT_SRQ_CHUNK, 1000 + i);
	}
	return ok;
}

static void kvt_srq_cases(struct kvt_run *r, struct kvt_data *d,
			  struct ib_srq *srq)
{
	struct ib_sge sge = {};
	struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ib_srq_attr sa = {};
	const struct ib_recv_wr *bad;
	int i, ok;

	kvt_expect(r, ib_post_recv(d->qp, &rwr, &bad), -EINVAL,
		   "post_recv on a QP with an SRQ");
	kvt_expect(r, ib_query_srq(srq, &sa), 0, "query_srq");
	kvt_result(r, sa.max_wr >= 16 && sa.max_sge >= 1 && !sa.srq_limit,
		   "query_srq: max_wr %u, max_sge %u, not armed", sa.max_wr,
		   sa.max_sge);

	/* Messages of distinct contents into distinct receives. */
	for (i = 0; i < KVT_SRQ_MSGS; i++)
		kvt_expect(r, kvt_srq_recv(d, srq, i), 0, "post_srq_recv %d", i);
	ok = kvt_srq_sends(r, d, KVT_SRQ_MSGS);
	kvt_result(r, ok == KVT_SRQ_MSGS,
		   "%d SENDs through the SRQ: each wr_id, byte_len and payload right (%d)",
		   KVT_SRQ_MSGS, ok);
}

static int kvt_srq_resize(struct ib_srq *srq, u32 max_wr)
{
	struct ib_srq_attr sa = { .max_wr = max_wr };

	return ib_modify_srq(srq, &sa, IB_SRQ_MAX_WR);
}

/*
 * Resize (IB_SRQ_MAX_WR) with receives posted: they stay and receive, in
 * a larger and in a smaller ring; fewer WQEs than are outstanding and
 * sizes beyond the device's are refused. Leaves the SRQ at 16, empty.
 */
static void kvt_srq_resize_cases(struct kvt_run *r, struct kvt_data *d,
				 struct ib_srq *srq,
				 const struct ib_device_attr *da)
{
	struct ib_srq_attr sa = {};
	int i, ok;

	if (!(da->device_cap_flags & IB_DEVICE_SRQ_RESIZE)) {
		kvt_expect(r, kvt_srq_resize(srq, 64), -EOPNOTSUPP,
			   "modify_srq IB_SRQ_MAX_WR without IB_DEVICE_SRQ_RESIZE");
		return;
	}
	kvt_expect(r, kvt_srq_resize(srq, 0), -EINVAL, "resize SRQ to 0 WQEs");
	kvt_expect(r, kvt_srq_resize(srq, da->max_srq_wr + 1), -EINVAL,
		   "resize SRQ to max_srq_wr + 1 (%u)", da->max_srq_wr + 1);
	for (i = 0; i < 3; i++)
		kvt_expect(r, kvt_srq_recv(d, srq, i), 0, "post_srq_recv %d", i);
	kvt_expect(r, kvt_srq_resize(srq, 64), 0,
		   "resize SRQ 16 -> 64 with 3 receives posted");
	kvt_expect(r, ib_query_srq(srq, &sa), 0, "query_srq");
	kvt_result(r, sa.max_wr >= 64, "query_srq after the resize: max_wr %u",
		   sa.max_wr);
	kvt_expect(r, kvt_srq_recv(d, srq, 3), 0, "post_srq_recv 3 (new ring)");
	ok = kvt_srq_sends(r, d, 4);
	kvt_result(r, ok == 4,
		   "after growing: 3 receives from the old ring and 1 from the new receive, data right (%d)",
		   ok);

	kvt_expect(r, kvt_srq_resize(srq, 2), 0, "resize SRQ 64 -> 2");
	kvt_expect(r, ib_query_srq(srq, &sa), 0, "query_srq");
	kvt_result(r, sa.max_wr == 2, "query_srq after shrinking: max_wr %u",
		   sa.max_wr);
	for (i = 0; i < 2; i++)
		kvt_expect(r, kvt_srq_recv(d, srq, i), 0, "post_srq_recv %d", i);
	kvt_expect(r, kvt_srq_recv(d, srq, 2), -ENOMEM,
		   "post_srq_recv beyond the 2 WQEs");
	kvt_expect(r, kvt_srq_resize(srq, 4), 0, "resize SRQ 2 -> 4 (2 posted)");
	kvt_expect(r, kvt_srq_recv(d, srq, 2), 0, "post_srq_recv 2");
	kvt_expect(r, kvt_srq_resize(srq, 2), -EINVAL,
		   "resize SRQ to 2 with 3 receives outstanding");
	ok = kvt_srq_sends(r, d, 3);
	kvt_result(r, ok == 3,
		   "after shrinking: 3 receives, 2 copied twice, data right (%d)",
		   ok);
	kvt_expect(r, kvt_srq_resize(srq, 16), 0, "resize SRQ back to 16");
}

/* The limit event: armed at 2 with 3 WQEs, the second SEND fires it. */
static void kvt_srq_limit_cases(struct kvt_run *r, struct kvt_data *d,
				struct ib_srq *srq)
{
	struct ib_send_wr wr;
	struct ib_srq_attr sa = {};
	int i, n0;

	sa.srq_limit = 100000;
	kvt_expect(r, ib_modify_srq(srq, &sa, IB_SRQ_LIMIT), -EINVAL,
		   "modify_srq with a limit above max_wr");
	for (i = 0; i < 3; i++)
		kvt_expect(r, kvt_srq_recv(d, srq, i), 0, "post_srq_recv %d", i);
	n0 = atomic_read(&kvt_srq_limit_events);
	sa.srq_limit = 2;
	kvt_expect(r, ib_modify_srq(srq, &sa, IB_SRQ_LIMIT), 0,
		   "modify_srq IB_SRQ_LIMIT 2");
	kvt_expect(r, ib_query_srq(srq, &sa), 0, "query_srq");
	kvt_result(r, sa.srq_limit == 2, "query_srq: armed at %u", sa.srq_limit);
	for (i = 0; i < 2; i++) {
		wr = (struct ib_send_wr){ .opcode = IB_WR_SEND };
		kvt_expect(r, kvt_data_send(d, d->qp, &wr, 0, 10), 0,
			   "post_send %d", i);
		kvt_wc(r, &d->wr[KVT_SEND], IB_WC_SUCCESS, "SEND completes");
		kvt_wc(r, &d->wr[KVT_EXTRA + i], IB_WC_SUCCESS,
		       "SRQ receive completes");
		if (!i) {
			msleep(50);
			kvt_result(r, atomic_read(&kvt_srq_limit_events) == n0,
				   "3 -> 2 WQEs: no limit event yet");
		}
	}
	kvt_result(r, kvt_srq_limit_reach(n0 + 1),
		   "2 -> 1 WQEs: IB_EVENT_SRQ_LIMIT_REACHED");
	kvt_expect(r, ib_query_srq(srq, &sa), 0, "query_srq");
	kvt_result(r, !sa.srq_limit, "query_srq: disarmed after the event (%u)",
		   sa.srq_limit);
}

static void kvt_run_srq(struct kvt_run *r)
{
	struct ib_device *dev = r->dev;
	struct ib_device_attr *da = &dev->attrs;
	struct ib_srq *srq;
	struct kvt_data *d;
	int i, n;

	if (!kvt_result(r, da->max_srq > 0 && da->max_srq_wr >= 16 &&
			da->max_srq_sge >= 1,
			"device caps: max_srq %d, max_srq_wr %d, max_srq_sge %d",
			da->max_srq, da->max_srq_wr, da->max_srq_sge))
		return;
	d = kzalloc_obj(*d, GFP_KERNEL);
	if (!d)
		return;
	for (i = 0; i < ARRAY_SIZE(d->wr); i++)
		init_completion(&d->wr[i].done);
	d->src = kzalloc(KVT_BUF, GFP_KERNEL);
	d->dst = kzalloc(KVT_BUF, GFP_KERNEL);
	if (!d->src || !d->dst)
		goto out_free;
	d->pd = ib_alloc_pd(dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->pd), 0, "alloc_pd"))
		goto out_free;
	d->src_dma = ib_dma_map_single(dev, d->src, KVT_BUF, DMA_BIDIRECTIONAL);
	if (!kvt_result(r, !ib_dma_mapping_error(dev, d->src_dma), "map source"))
		goto out_pd;
	sg_init_one(&d->sg, d->dst, KVT_BUF);
	if (!kvt_result(r, ib_dma_map_sg(dev, &d->sg, 1, DMA_BIDIRECTIONAL) == 1,
			"map destination"))
		goto out_src;
	d->cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_SOFTIRQ);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->cq), 0, "alloc_cq(IB_POLL_SOFTIRQ)"))
		goto out_dst;

	kvt_srq_bad(r, d, da);
	n = rdma_restrack_count(dev, RDMA_RESTRACK_SRQ, false);
	srq = kvt_srq(d->pd, 16, 2, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(srq), 0, "create_srq 16 x 2 SGEs"))
		goto out_cq;
	kvt_result(r, rdma_restrack_count(dev, RDMA_RESTRACK_SRQ, false) == n + 1,
		   "the SRQ is in the RDMA core's resource tracking (rdma res show srq)");
	d->qp = kvt_data_qp_on(r, d, srq);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->qp), 0,
			"RC QP on the SRQ connected to itself in RTS"))
		goto out_srq;
	kvt_expect(r, ib_destroy_srq_user(srq, NULL), -EBUSY, "destroy_srq while a QP uses it");

	kvt_srq_cases(r, d, srq);
	kvt_srq_resize_cases(r, d, srq, da);
	kvt_srq_limit_cases(r, d, srq);

	/* One WQE is left; the drain waits for the last-WQE event. */
	ib_drain_qp(d->qp);
	kvt_result(r, kvt_qp_state(d->qp) == IB_QPS_ERR,
		   "ib_drain_qp on a QP with an SRQ returns, QP in ERROR");
	kvt_expect(r, ib_destroy_qp(d->qp), 0, "destroy_qp");
out_srq:
	kvt_expect(r, ib_destroy_srq_user(srq, NULL), 0,
		   "destroy_srq with a WQE still posted");
out_cq:
	ib_free_cq(d->cq);
out_dst:
	ib_dma_unmap_sg(dev, &d->sg, 1, DMA_BIDIRECTIONAL);
out_src:
	ib_dma_unmap_single(dev, d->src_dma, KVT_BUF, DMA_BIDIRECTIONAL);
out_pd:
	ib_dealloc_pd(d->pd);
out_free:
	kfree(d->dst);
	kfree(d->src);
	kfree(d);
}

/* ------------------------------------------------------------------ */
/* traffic: a stream of exchanges that survives a faulty device        */
/* ------------------------------------------------------------------ */

#define KVT_TRAFFIC_WAIT	(HZ / 2)

/* Wait for @w, at most KVT_TRAFFIC_WAIT: its status, or -ETIMEDOUT. */
static int kvt_traffic_wait(struct kvt_wr *w)
{
	if (!wait_for_completion_timeout(&w->done, KVT_TRAFFIC_WAIT))
		return -ETIMEDOUT;
	return w->wc.status;
}

/*
 * One SEND of @len bytes at @off to the QP itself, or RDMA WRITE when
 * @write: true if both ends completed successfully and the data arrived.
 */
static bool kvt_traffic_one(struct kvt_data *d, u32 off, u32 len, bool write)
{
	struct ib_rdma_wr rdma = {};
	struct ib_send_wr wr = {};
	int got;

	memset(d->dst, 0, KVT_BUF);
	get_random_bytes(d->src + off, len);
	ib_dma_sync_single_for_device(d->cq->device, d->src_dma, KVT_BUF,
				      DMA_BIDIRECTIONAL);
	if (write) {
		rdma.wr.opcode = IB_WR_RDMA_WRITE;
		rdma.remote_addr = sg_dma_address(&d->sg);
		rdma.rkey = d->mr->rkey;
		if (kvt_data_send(d, d->qp, &rdma.wr, off, len))
			return false;
	} else {
		wr.opcode = IB_WR_SEND;
		if (kvt_data_recv(d, d->qp, &d->wr[KVT_RECV]) ||
		    kvt_data_send(d, d->qp, &wr, off, len))
			return false;
	}
	got = kvt_traffic_wait(&d->wr[KVT_SEND]);
	if (!write && !got)
		got = kvt_traffic_wait(&d->wr[KVT_RECV]);
	if (got)
		return false;
	ib_dma_sync_single_for_cpu(d->cq->device, sg_dma_address(&d->sg),
				   KVT_BUF, DMA_BIDIRECTIONAL);
	return !memcmp(d->dst, d->src + off, len);
}

/* An MR with remote write access over @d->dst: fast registration. */
static int kvt_traffic_mr(struct kvt_data *d)
{
	struct ib_reg_wr reg = {};
	int n;

	d->mr = ib_alloc_mr(d->pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(d->mr)) {
		n = PTR_ERR(d->mr);
		d->mr = NULL;
		return n;
	}
	n = ib_map_mr_sg(d->mr, &d->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return -EINVAL;
	reg.wr.opcode = IB_WR_REG_MR;
	reg.mr = d->mr;
	reg.key = d->mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	reg.wr.wr_cqe = kvt_wr_arm(&d->wr[KVT_SEND]);
	reg.wr.send_flags = IB_SEND_SIGNALED;
	n = ib_post_send(d->qp, &reg.wr, NULL);
	return n ? n : kvt_traffic_wait(&d->wr[KVT_SEND]);
}

/*
 * traffic N: N exchanges (SENDs and RDMA WRITEs of random sizes, data
 * compared) on an RC QP connected to itself. Waits are short and bounded;
 * a QP that fails (an error completion, a completion that never comes, a
 * post refused in ERROR) is destroyed and replaced, without ib_drain_qp(),
 * which would wait for ever for a completion a faulty device lost. The
 * checks are the run's own (no object left behind); the figures go to the
 * log ("# traffic: N exchanges, N ok, N failed, N QPs replaced").
 */
static void kvt_run_traffic(struct kvt_run *r, u32 n)
{
	struct ib_device *dev = r->dev;
	u32 i, ok = 0, failed = 0, replaced = 0, len, off;
	struct kvt_data *d;
	bool write;

	kvt_destroy_kept(r);
	d = kzalloc_obj(*d, GFP_KERNEL);
	if (!d)
		return;
	for (i = 0; i < ARRAY_SIZE(d->wr); i++)
		init_completion(&d->wr[i].done);
	d->src = kzalloc(KVT_BUF, GFP_KERNEL);
	d->dst = kzalloc(KVT_BUF, GFP_KERNEL);
	if (!d->src || !d->dst)
		goto out_free;
	d->pd = ib_alloc_pd(dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->pd), 0, "alloc_pd"))
		goto out_free;
	d->src_dma = ib_dma_map_single(dev, d->src, KVT_BUF, DMA_BIDIRECTIONAL);
	if (!kvt_result(r, !ib_dma_mapping_error(dev, d->src_dma), "map source"))
		goto out_pd;
	sg_init_one(&d->sg, d->dst, KVT_BUF);
	if (!kvt_result(r, ib_dma_map_sg(dev, &d->sg, 1, DMA_BIDIRECTIONAL) == 1,
			"map destination"))
		goto out_src;
	d->cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_SOFTIRQ);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->cq), 0, "alloc_cq(IB_POLL_SOFTIRQ)"))
		goto out_dst;

	for (i = 0; i < n; i++) {
		if (!d->qp) {
			d->qp = kvt_data_qp(r, d);
			if (IS_ERR(d->qp)) {
				/* The device may be resetting: stop here. */
				pr_info("# traffic: no QP after %u exchanges: %ld\n",
					i, PTR_ERR(d->qp));
				d->qp = NULL;
				break;
			}
			if (d->mr) {
				ib_dereg_mr(d->mr);
				d->mr = NULL;
			}
			if (kvt_traffic_mr(d))
				goto replace;
		}
		len = 1 + get_random_u32_below(KVT_BUF / 2);
		off = get_random_u32_below(KVT_BUF / 2);
		write = i & 1;
		if (kvt_traffic_one(d, off, len, write)) {
			ok++;
			continue;
		}
		failed++;
replace:
		replaced++;
		ib_destroy_qp(d->qp);
		d->qp = NULL;
	}
	pr_info("# traffic: %u exchanges, %u ok, %u failed, %u QPs replaced\n",
		i, ok, failed, replaced);

	if (d->qp)
		ib_destroy_qp(d->qp);
	if (d->mr)
		ib_dereg_mr(d->mr);
	ib_free_cq(d->cq);
out_dst:
	ib_dma_unmap_sg(dev, &d->sg, 1, DMA_BIDIRECTIONAL);
out_src:
	ib_dma_unmap_single(dev, d->src_dma, KVT_BUF, DMA_BIDIRECTIONAL);
out_pd:
	ib_dealloc_pd(d->pd);
out_free:
	kfree(d->dst);
	kfree(d->src);
	kfree(d);
}

/* ------------------------------------------------------------------ */
/* events: the arm rules seen from a kernel consumer                   */
/* ------------------------------------------------------------------ */

/* Completion events until @n arrived, or false after KVT_WAIT. */
static bool kvt_events_reach(int n)
{
	unsigned long end = jiffies + KVT_WAIT;

	while (atomic_read(&kvt_comp_events) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(2000, 5000);
	}
	return true;
}

/* Poll @cq until @n completions arrived or KVT_WAIT passed; how many. */
static int kvt_poll_n(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	unsigned long end = jiffies + KVT_WAIT;
	int got = 0, ret;

	while (got < n && !time_after(jiffies, end)) {
		ret = ib_poll_cq(cq, n - got, wc + got);
		if (ret < 0)
			return ret;
		got += ret;
		if (got < n)
			usleep_range(2000, 5000);
	}
	return got;
}

/* A SEND of one byte to the QP itself, with a receive for it. */
static int kvt_send_self(struct ib_qp *qp, u32 lkey, u64 addr, int flags)
{
	struct ib_sge sge = { .addr = addr, .length = 1, .lkey = lkey };
	struct ib_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.wr_id = 2,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = flags,
	};

	return ib_post_recv(qp, &rwr, NULL) ?: ib_post_send(qp, &swr, NULL);
}

static void kvt_run_events(struct kvt_run *r)
{
	struct ib_device *dev = r->dev;
	struct ib_wc wc[4];
	struct kvt_data *d;
	u64 dma;
	u8 *buf;
	int n;

	kvt_destroy_kept(r);
	d = kzalloc_obj(*d, GFP_KERNEL);
	buf = kzalloc(64, GFP_KERNEL);
	if (!d || !buf)
		goto out_free;
	d->pd = ib_alloc_pd(dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->pd), 0, "alloc_pd"))
		goto out_free;
	dma = ib_dma_map_single(dev, buf, 64, DMA_BIDIRECTIONAL);
	if (!kvt_result(r, !ib_dma_mapping_error(dev, dma), "map buffer"))
		goto out_pd;
	if (!kvt_expect(r, kvt_cq(r, 64, 0, &d->cq), 0, "create_cq"))
		goto out_buf;
	d->qp = kvt_data_qp(r, d);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(d->qp), 0, "RC QP connected to itself in RTS"))
		goto out_cq;

	atomic_set(&kvt_comp_events, 0);
	kvt_expect(r, ib_req_notify_cq(d->cq, IB_CQ_NEXT_COMP), 0,
		   "req_notify_cq(NEXT_COMP) on an empty CQ");
	kvt_expect(r, kvt_send_self(d->qp, d->pd->local_dma_lkey, dma,
				    IB_SEND_SIGNALED), 0, "post a SEND and its RECV");
	kvt_result(r, kvt_events_reach(1),
		   "the armed CQ's completion reaches the handler (EQE, MSI-X, tasklet)");
	n = kvt_poll_n(d->cq, 2, wc);
	kvt_result(r, n == 2 && !wc[0].status && !wc[1].status,
		   "poll_cq: both completions (%d)", n);
	kvt_expect(r, ib_req_notify_cq(d->cq, IB_CQ_NEXT_COMP |
				       IB_CQ_REPORT_MISSED_EVENTS), 0,
		   "req_notify_cq(REPORT_MISSED_EVENTS) on an empty CQ: 0");

	kvt_expect(r, kvt_send_self(d->qp, d->pd->local_dma_lkey, dma,
				    IB_SEND_SIGNALED), 0, "post a SEND and its RECV");
	kvt_result(r, kvt_events_reach(2), "the re-armed CQ raises one more event");
	kvt_result(r, ib_req_notify_cq(d->cq, IB_CQ_NEXT_COMP |
				       IB_CQ_REPORT_MISSED_EVENTS) > 0,
		   "req_notify_cq(REPORT_MISSED_EVENTS) with completions waiting: > 0");
	n = kvt_poll_n(d->cq, 2, wc);
	kvt_result(r, n == 2, "poll_cq: both completions (%d)", n);
	/* The arm just made may have fired for the second of them. */
	msleep(50);
	atomic_set(&kvt_comp_events, 0);

	/* Solicited: only a solicited (or error) completion raises it. */
	kvt_expect(r, ib_req_notify_cq(d->cq, IB_CQ_SOLICITED), 0,
		   "req_notify_cq(SOLICITED)");
	kvt_expect(r, kvt_send_self(d->qp, d->pd->local_dma_lkey, dma,
				    IB_SEND_SIGNALED), 0,
		   "post an unsolicited SEND and its RECV");
	n = kvt_poll_n(d->cq, 2, wc);
	msleep(100);
	kvt_result(r, n == 2 && !atomic_read(&kvt_comp_events),
		   "unsolicited completions (%d) raise no event", n);
	kvt_expect(r, kvt_send_self(d->qp, d->pd->local_dma_lkey, dma,
				    IB_SEND_SIGNALED | IB_SEND_SOLICITED), 0,
		   "post a solicited SEND and its RECV");
	kvt_result(r, kvt_events_reach(1), "the solicited completion raises the event");
	n = kvt_poll_n(d->cq, 2, wc);
	kvt_result(r, n == 2, "poll_cq: both completions (%d)", n);

	kvt_expect(r, ib_destroy_qp(d->qp), 0, "destroy_qp");
out_cq:
	kvt_expect(r, ib_destroy_cq_user(d->cq, NULL), 0, "destroy_cq");
out_buf:
	ib_dma_unmap_single(dev, dma, 64, DMA_BIDIRECTIONAL);
out_pd:
	ib_dealloc_pd(d->pd);
out_free:
	kfree(buf);
	kfree(d);
}

/* ------------------------------------------------------------------ */
/* capacity and bench                                                  */
/* ------------------------------------------------------------------ */

/*
 * Create objects until the device refuses; the PRM reserves number 0 of
 * each table, so max - 1 fit in all (those the core and others hold
 * included).
 */
static void kvt_run_capacity(struct kvt_run *r)
{
	const struct ib_device_attr *caps = &r->dev->attrs;
	int n, max, used, err = 0;
	struct ib_qp_init_attr ia;
	struct ib_pd *pd = NULL;
	struct ib_qp **qps;
	struct ib_cq **cqs;
	struct ib_pd **pds;

	max = max3(caps->max_cq, caps->max_qp, caps->max_pd);
	cqs = kvcalloc(max, sizeof(*cqs), GFP_KERNEL);
	qps = kvcalloc(max, sizeof(*qps), GFP_KERNEL);
	pds = kvcalloc(max, sizeof(*pds), GFP_KERNEL);
	if (!kvt_result(r, cqs && qps && pds, "memory for %d objects", max))
		goto out;

	used = r->res[1];
	for (n = 0; n < max; n++) {
		err = kvt_cq(r, 1, 0, &cqs[n]);
		if (err)
			break;
	}
	kvt_expect(r, err, -ENOMEM, "create_cq beyond the device's CQ table");
	kvt_result(r, n + used == caps->max_cq,
		   "the device holds max_cq = %d CQs (%d in use + %d created)",
		   caps->max_cq, used, n);
	while (n-- > 1)
		ib_destroy_cq_user(cqs[n], NULL);
	if (!cqs[0])
		goto out;

	used = r->res[2];
	kvt_qp_attr(&ia, cqs[0], IB_QPT_RC);
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	pd = ib_alloc_pd(r->dev, 0);
	if (kvt_expect(r, PTR_ERR_OR_ZERO(pd), 0, "alloc_pd")) {
		for (n = 0; n < max; n++) {
			err = kvt_qp(pd, &ia, &qps[n]);
			if (err)
				break;
		}
		kvt_expect(r, err, -ENOMEM,
			   "create_qp beyond the device's QP table");
		kvt_result(r, n + used == caps->max_qp,
			   "the device holds max_qp = %d QPs (%d in use + %d created)",
			   caps->max_qp, used, n);
		while (n-- > 0)
			ib_destroy_qp_user(qps[n], NULL);
		ib_dealloc_pd_user(pd, NULL);
	}
	ib_destroy_cq_user(cqs[0], NULL);

	used = r->res[0];
	for (n = 0; n < max; n++) {
		pds[n] = ib_alloc_pd(r->dev, 0);
		err = PTR_ERR_OR_ZERO(pds[n]);
		if (err)
			break;
	}
	kvt_expect(r, err, -ENOMEM, "alloc_pd beyond the device's PD table");
	kvt_result(r, n + used == caps->max_pd,
		   "the device holds max_pd = %d PDs (%d in use + %d created)",
		   caps->max_pd, used, n);
	while (n-- > 0)
		ib_dealloc_pd_user(pds[n], NULL);
out:
	kvfree(pds);
	kvfree(qps);
	kvfree(cqs);
}

static void kvt_bench_report(const char *what, unsigned int n, s64 ns)
{
	pr_info("bench: %-10s %5u in %6lld ms: %6lld us per operation\n",
		what, n, div_s64(ns, NSEC_PER_MSEC),
		div_s64(ns, (s64)n * NSEC_PER_USEC));
}

static void kvt_run_bench(struct kvt_run *r, unsigned int n)
{
	struct ib_qp_init_attr ia;
	struct ib_pd *pd = NULL;
	struct ib_cq *cq = NULL;
	struct ib_qp **qps;
	struct ib_cq **cqs;
	unsigned int i;
	int err = 0;
	ktime_t t0;
	s64 ns;

	if (!n)
		n = 1000;
	cqs = kvcalloc(n, sizeof(*cqs), GFP_KERNEL);
	qps = kvcalloc(n, sizeof(*qps), GFP_KERNEL);
	if (!kvt_result(r, cqs && qps, "memory for %u objects", n))
		goto out;

	t0 = ktime_get();
	for (i = 0; i < n; i++) {
		err = kvt_cq(r, 64, 0, &cqs[i]);
		if (err)
			break;
	}
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (kvt_expect(r, err, 0, "create_cq x %u (cqe 64)", n))
		kvt_bench_report("create_cq", n, ns);
	t0 = ktime_get();
	while (i-- > 0)
		ib_destroy_cq_user(cqs[i], NULL);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (err)
		goto out;
	kvt_bench_report("destroy_cq", n, ns);

	pd = ib_alloc_pd(r->dev, 0);
	if (!kvt_expect(r, PTR_ERR_OR_ZERO(pd), 0, "alloc_pd"))
		goto out;
	if (!kvt_expect(r, kvt_cq(r, 256, 0, &cq), 0, "create_cq"))
		goto out_pd;
	kvt_qp_attr(&ia, cq, IB_QPT_RC);
	t0 = ktime_get();
	for (i = 0; i < n; i++) {
		err = kvt_qp(pd, &ia, &qps[i]);
		if (err)
			break;
	}
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (kvt_expect(r, err, 0, "create_qp x %u (RC, 16 WRs, 1 SGE)", n))
		kvt_bench_report("create_qp", n, ns);
	t0 = ktime_get();
	while (i-- > 0)
		ib_destroy_qp_user(qps[i], NULL);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (!err)
		kvt_bench_report("destroy_qp", n, ns);
	ib_destroy_cq_user(cq, NULL);
out_pd:
	ib_dealloc_pd_user(pd, NULL);
out:
	kvfree(qps);
	kvfree(cqs);
}

/* ------------------------------------------------------------------ */
/* The run parameter                                                   */
/* ------------------------------------------------------------------ */

static int kvt_run_set(const char *val, const struct kernel_param *kp)
{
	int kept0[ARRAY_SIZE(kvt_res_types)];
	char set[16];
	u32 a = 0, b = 0;
	struct kvt_run r = {};
	int n;

	n = sscanf(val, "%15s %i %i", set, &a, &b);
	if (n < 1)
		return -EINVAL;
	if (strcmp(set, "bad") && strcmp(set, "fault") &&
	    strcmp(set, "hang_prepare") && strcmp(set, "hang") &&
	    strcmp(set, "works") && strcmp(set, "capacity") &&
	    strcmp(set, "bench") && strcmp(set, "data") &&
	    strcmp(set, "events") && strcmp(set, "traffic") &&
	    strcmp(set, "srq"))
		return -EINVAL;
	if (!strcmp(set, "fault") && n != 3)
		return -EINVAL;

	mutex_lock(&kvt.lock);
	r.set = set;
	r.dev = kvt.dev;
	if (!r.dev) {
		kvt_result(&r, false, "%s is registered and attached", ibdev);
		goto out;
	}
	kvt_res_snapshot(&r, r.res);
	kvt_kept(kept0);
	pr_info("run %s %#x %#x on %s\n", set, a, b, dev_name(&r.dev->dev));

	if (!strcmp(set, "bad"))
		kvt_run_bad(&r);
	else if (!strcmp(set, "fault"))
		kvt_run_fault(&r, a, b);
	else if (!strcmp(set, "hang_prepare"))
		kvt_run_hang_prepare(&r);
	else if (!strcmp(set, "hang"))
		kvt_run_hang(&r, a ? a : 5000);
	else if (!strcmp(set, "works"))
		kvt_run_works(&r);
	else if (!strcmp(set, "capacity"))
		kvt_run_capacity(&r);
	else if (!strcmp(set, "data"))
		kvt_run_data(&r);
	else if (!strcmp(set, "events"))
		kvt_run_events(&r);
	else if (!strcmp(set, "srq"))
		kvt_run_srq(&r);
	else if (!strcmp(set, "traffic"))
		kvt_run_traffic(&r, a ? a : 100);
	else
		kvt_run_bench(&r, a);
	kvt_res_check(&r, kept0);
out:
	pr_info("done %s: %u cases, %u failed\n", set, r.n, r.failed);
	mutex_unlock(&kvt.lock);
	return 0;
}

static const struct kernel_param_ops kvt_run_ops = {
	.set = kvt_run_set,
};
module_param_cb(run, &kvt_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "Write a case set to run it: bad, fault OP STATUS, hang_prepare, hang TIMEOUT_MS, works, capacity, data, events, traffic N, bench N");

/* ------------------------------------------------------------------ */
/* The ib_client                                                       */
/* ------------------------------------------------------------------ */

static void kvt_event(struct ib_event_handler *handler, struct ib_event *ev)
{
	if (ev->event == IB_EVENT_DEVICE_FATAL)
		atomic_inc(&kvt.fatal_events);
	pr_info("event %s on %s\n", ib_event_msg(ev->event),
		dev_name(&ev->device->dev));
}

static int kvt_add(struct ib_device *dev)
{
	if (strcmp(dev_name(&dev->dev), ibdev))
		return -EOPNOTSUPP;
	mutex_lock(&kvt.lock);
	if (kvt.dev) {
		mutex_unlock(&kvt.lock);
		return -EBUSY;
	}
	kvt.dev = dev;
	INIT_IB_EVENT_HANDLER(&kvt.handler, dev, kvt_event);
	ib_register_event_handler(&kvt.handler);
	mutex_unlock(&kvt.lock);
	pr_info("attached to %s\n", dev_name(&dev->dev));
	return 0;
}

static void kvt_remove(struct ib_device *dev, void *client_data)
{
	struct kvt_run r = { .set = "detach", .dev = dev };

	mutex_lock(&kvt.lock);
	if (kvt.dev == dev) {
		/* Objects still kept must go before the device does. */
		kvt_destroy_kept(&r);
		ib_unregister_event_handler(&kvt.handler);
		kvt.dev = NULL;
		pr_info("detached from %s\n", dev_name(&dev->dev));
	}
	mutex_unlock(&kvt.lock);
}

static struct ib_client kvt_client = {
	.name = "kite_verbs_test",
	.add = kvt_add,
	.remove = kvt_remove,
};

static int __init kvt_init(void)
{
	return ib_register_client(&kvt_client);
}

static void __exit kvt_exit(void)
{
	ib_unregister_client(&kvt_client);
}

module_init(kvt_init);
module_exit(kvt_exit);

MODULE_DESCRIPTION("Kite: bad-input tests and benchmark of kernel verbs");
MODULE_LICENSE("GPL");
