// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: event queues.
 *
 * EQ0, the control EQ, receives command completions and asynchronous
 * events; the completion EQs receive the completion events of the CQs bound
 * to them (Documentation/networking/device_drivers/ethernet/kite/
 * prm_eq.rst). Each EQ has its own MSI-X vector, except when kite_en gave
 * the RDMA driver a single vector: then all EQs share it.
 *
 * The hard IRQ handler only schedules the EQ's tasklet. The tasklet walks
 * the valid EQEs (owner/phase rule), at most KITE_IB_EQ_BUDGET per run,
 * then reports the consumer counter with a doorbell: with ARM when the EQ
 * is drained, without ARM (and rescheduling itself) when the budget ran
 * out. An EQ's tasklet never runs concurrently with itself, so the EQ's
 * consumer counter needs no lock.
 *
 * Events name objects by number. CQs and QPs are looked up in the
 * device's xarrays under their lock and pinned with a reference for the duration
 * of the callback; their destroy paths unpublish them, drop the table's
 * reference and wait for the last one (see kite_ib_ref_get()).
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/cpumask.h>
#include <linux/device.h>
#include <linux/interrupt.h>
#include <linux/kite/auxdev.h>
#include <linux/kite/kite_hw.h>
#include <linux/log2.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "kite_ib.h"

static struct device *kite_ib_eq_log_dev(struct kite_ib_dev *dev)
{
	return &dev->kadev->adev.dev;
}

/**
 * kite_ib_eqe_valid() - whether an EQE is new (the owner/phase rule)
 * @eqe: the EQE in slot @ci mod 2^@log_depth
 * @ci: the consumer counter (free-running)
 * @log_depth: log2 of the EQ's depth
 *
 * The device writes owner 1 during the first pass over the ring, 0 during
 * the second, and so on; zeroed memory is never valid. Reads only
 * &kite_eqe.type_owner: the caller issues dma_rmb() before reading the
 * rest of a valid EQE.
 *
 * Return: true if the EQE holds event number @ci.
 */
bool kite_ib_eqe_valid(const struct kite_eqe *eqe, u32 ci,
		       unsigned int log_depth)
{
	u32 type_owner = le32_to_cpu(READ_ONCE(eqe->type_owner));
	bool owner = FIELD_GET(KITE_EQE_OWNER, type_owner);

	return owner == kite_owner_phase(ci, log_depth);
}

/**
 * kite_ib_eq_doorbell() - the doorbell word reporting an EQ's consumer
 *	counter
 * @eqn: the EQ's number
 * @ci: the consumer counter (sent modulo 2^16)
 * @arm: also arm the EQ's interrupt
 *
 * Return: the 64-bit value to write to doorbell page 0.
 */
u64 kite_ib_eq_doorbell(u32 eqn, u32 ci, bool arm)
{
	return FIELD_PREP(KITE_DB_OBJ, eqn) |
	       FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_EQ) |
	       FIELD_PREP(KITE_DB_EQ_CI, ci & FIELD_MAX(KITE_DB_EQ_CI)) |
	       (arm ? KITE_DB_EQ_ARM : 0);
}

/* ------------------------------------------------------------------ */
/* Object lookup                                                       */
/* ------------------------------------------------------------------ */

/**
 * kite_ib_ref_publish() - make a CQ or QP findable by EQE dispatch
 * @xa: the device's table (&kite_ib_dev.cq_xa or .qp_xa)
 * @num: the object's number
 * @ref: the object's lookup reference, not yet initialised
 *
 * The table holds the first reference. Destroy with kite_ib_ref_destroy().
 *
 * Context: process context.
 * Return: 0, -EBUSY if @num is already published, or -ENOMEM.
 */
int kite_ib_ref_publish(struct xarray *xa, u32 num, struct kite_ib_ref *ref)
{
	refcount_set(&ref->refcount, 1);
	init_completion(&ref->free);
	return xa_insert_irq(xa, num, ref, GFP_KERNEL);
}

/**
 * kite_ib_ref_get() - find a CQ or QP by number and take a reference on it
 * @xa: the device's table
 * @num: a number from the device (an EQE or a CQE); validated here
 *
 * Protocol: the create path publishes the object (kite_ib_ref_publish());
 * the destroy path unpublishes it before the device destroys it
 * (kite_ib_ref_destroy(), kite_ib_ref_unpublish(): xa_erase() under the
 * table's lock, which the
 * lookup also holds while it takes its reference, so that afterwards no
 * lookup can reach the object without a reference; then the table's
 * reference is dropped and the last one waited for) before the memory goes
 * away. The table's lock is taken with interrupts disabled
 * (XA_FLAGS_LOCK_IRQ): lookups run in tasklets and in poll_cq, which may be
 * called from any context. No RCU grace period is waited for, so destroying
 * a CQ or QP costs no more than its command.
 *
 * Context: any context.
 * Return: the reference, which the caller drops with kite_ib_ref_put(), or
 * NULL if @num is out of range, unknown or being destroyed.
 */
struct kite_ib_ref *kite_ib_ref_get(struct xarray *xa, u32 num)
{
	struct kite_ib_ref *ref;
	unsigned long flags;

	if (!num || num > KITE_OBJ_MASK)
		return NULL;
	xa_lock_irqsave(xa, flags);
	ref = xa_load(xa, num);
	if (ref && !refcount_inc_not_zero(&ref->refcount))
		ref = NULL;
	xa_unlock_irqrestore(xa, flags);
	return ref;
}

/**
 * kite_ib_ref_put() - drop a reference kite_ib_ref_get() took
 * @ref: the reference
 *
 * The last reference completes &kite_ib_ref.free.
 *
 * Context: any context.
 */
void kite_ib_ref_put(struct kite_ib_ref *ref)
{
	if (refcount_dec_and_test(&ref->refcount))
		complete(&ref->free);
}

/**
 * kite_ib_ref_unpublish() - withdraw a CQ or QP from EQE dispatch
 * @xa: the device's table
 * @num: the object's number
 * @ref: its lookup reference
 *
 * Returns once no dispatcher uses the object any more.
 *
 * Context: process context, may sleep.
 */
void kite_ib_ref_unpublish(struct xarray *xa, u32 num, struct kite_ib_ref *ref)
{
	xa_erase_irq(xa, num);
	kite_ib_ref_put(ref);
	wait_for_completion(&ref->free);
}

/**
 * kite_ib_ref_destroy() - destroy a published CQ or QP in the device
 * @dev: the device
 * @xa: the device's table
 * @ref: the object's lookup reference
 * @opcode: KITE_CMD_DESTROY_CQ or KITE_CMD_DESTROY_QP
 * @num: the object's number
 *
 * The number is withdrawn from @xa first: once the device has destroyed
 * the object it may hand the number out again, to a create running
 * concurrently, which must find it free. Events that arrive for the
 * object meanwhile are dropped. If the device refuses the destroy, the
 * object is published again and stays usable.
 *
 * Context: process context, may sleep.
 * Return: 0, or the errno of the destroy command (on a working device).
 */
int kite_ib_ref_destroy(struct kite_ib_dev *dev, struct xarray *xa,
			struct kite_ib_ref *ref, u8 opcode, u32 num)
{
	int err;

	kite_ib_ref_unpublish(xa, num, ref);
	err = kite_ib_cmd_destroy(dev, opcode, num);
	if (err && kite_ib_ref_publish(xa, num, ref))
		dev_warn(kite_ib_eq_log_dev(dev),
			 "object %u kept after a failed destroy gets no events\n",
			 num);
	return err;
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */
/* ------------------------------------------------------------------ */

/*
 * An EQE of unknown type or for an unknown object: counted, logged, and,
 * since it may have been a lost completion event, every CQ of @eq gets one.
 */
static void kite_ib_eq_bad(struct kite_ib_dev *dev, struct kite_ib_eq *eq,
			   enum kite_ib_bad bad, u32 type, u32 obj)
{
	kite_ib_bad(dev, bad);
	dev_err_ratelimited(kite_ib_eq_log_dev(dev),
			    "bad device data (%s): EQ %u: event type %#04x for object %u ignored\n",
			    kite_ib_bad_name(bad), eq ? eq->eqn : 0, type, obj);
	if (eq)
		kite_ib_eq_kick_cqs(dev, eq);
}

static void kite_ib_eq_completion(struct kite_ib_dev *dev,
				  struct kite_ib_eq *eq, u32 cqn)
{
	struct kite_ib_cq *cq = kite_ib_cq_get(dev, cqn);

	if (!cq && cqn < dev->caps.max_cq) {
		/* Raced with the CQ's destruction. */
		dev_dbg(kite_ib_eq_log_dev(dev),
			"completion event for unknown CQ %u\n", cqn);
		return;
	}
	if (!cq) {
		kite_ib_eq_bad(dev, eq, KITE_IB_BAD_EQE_OBJ,
			       KITE_EQE_COMPLETION, cqn);
		return;
	}
	/* The next arm must carry a new cmd_sn, or it is a duplicate. */
	kite_ib_cq_event(cq);
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	kite_ib_cq_put(cq);
}

static const char *kite_ib_cq_err_name(u32 data)
{
	return data == KITE_CQ_ERR_OVERFLOW ? "overflow" :
	       data == KITE_CQ_ERR_DMA ? "DMA error" : "unknown";
}

static void kite_ib_eq_cq_error(struct kite_ib_dev *dev, u32 cqn, u32 data)
{
	struct kite_ib_cq *cq = kite_ib_cq_get(dev, cqn);
	struct ib_event ev;

	if (!cq && cqn < dev->caps.max_cq) {
		dev_dbg(kite_ib_eq_log_dev(dev),
			"error event for unknown CQ %u\n", cqn);
		return;
	}
	if (!cq) {
		kite_ib_eq_bad(dev, NULL, KITE_IB_BAD_EQE_OBJ,
			       KITE_EQE_CQ_ERROR, cqn);
		return;
	}
	/*
	 * A user CQ overflows when its process does not consume its CQEs:
	 * its owner learns it from the event, and the kernel log must not
	 * be the process's to fill. A kernel CQ's error is a driver's bug.
	 */
	if (rdma_is_kernel_res(&cq->ibcq.res))
		dev_warn_ratelimited(kite_ib_eq_log_dev(dev),
				     "CQ %u entered the error state (%s)\n",
				     cqn, kite_ib_cq_err_name(data));
	else
		dev_dbg(kite_ib_eq_log_dev(dev),
			"user CQ %u entered the error state (%s)\n", cqn,
			kite_ib_cq_err_name(data));
	if (cq->ibcq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.cq = &cq->ibcq;
		ev.event = IB_EVENT_CQ_ERR;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	kite_ib_cq_put(cq);
}

static void kite_ib_eq_qp_event(struct kite_ib_dev *dev, u32 qpn,
				enum ib_event_type type)
{
	struct kite_ib_qp *qp = kite_ib_qp_get(dev, qpn);
	struct ib_event ev;

	if (!qp && qpn < dev->caps.max_qp) {
		dev_dbg(kite_ib_eq_log_dev(dev),
			"event %d for unknown QP %u\n", type, qpn);
		return;
	}
	if (!qp) {
		kite_ib_eq_bad(dev, NULL, KITE_IB_BAD_EQE_OBJ, type, qpn);
		return;
	}
	if (qp->ibqp.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.qp = &qp->ibqp;
		ev.event = type;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	kite_ib_qp_put(qp);
}

/**
 * kite_ib_eq_dispatch() - act on one EQE
 * @dev: the device
 * @eq: the EQ it came from, or NULL
 * @eqe: a valid EQE (the caller checked the owner bit and issued
 *	dma_rmb())
 *
 * Completion events call the CQ's completion handler; CMD_DONE wakes the
 * command's submitter; port events, CQ and QP errors and asynchronous
 * events are reported to the RDMA core or the object's owner; a device
 * fatal event makes the command channel FATAL. Objects are looked up by
 * number, validated. Events for objects that are gone (a race with their
 * destruction) are dropped; events of unknown types or for numbers beyond
 * the device's range are dropped, counted and logged, and every CQ of @eq
 * is given a completion event in case the lost one was a completion event.
 *
 * Context: softirq (the EQ's tasklet).
 */
void kite_ib_eq_dispatch(struct kite_ib_dev *dev, struct kite_ib_eq *eq,
			 const struct kite_eqe *eqe)
{
	u32 type = FIELD_GET(KITE_EQE_TYPE, le32_to_cpu(eqe->type_owner));
	u32 obj = le32_to_cpu(eqe->obj);
	u32 data = le32_to_cpu(eqe->data);

	switch (type) {
	case KITE_EQE_COMPLETION:
		kite_ib_eq_completion(dev, eq, obj);
		break;
	case KITE_EQE_CMD_DONE:
		kite_ib_cmd_complete(dev, obj, data);
		break;
	case KITE_EQE_PORT_ACTIVE:
	case KITE_EQE_PORT_DOWN:
		/*
		 * kite_en sees the same change through its link interrupt and
		 * reports it once the netdev's carrier follows (kite_ib_event()).
		 */
		dev_dbg(&dev->ibdev.dev, "port %s\n",
			type == KITE_EQE_PORT_ACTIVE ? "active" : "down");
		break;
	case KITE_EQE_CQ_ERROR:
		kite_ib_eq_cq_error(dev, obj, data);
		break;
	case KITE_EQE_QP_FATAL:
		kite_ib_eq_qp_event(dev, obj, IB_EVENT_QP_FATAL);
		break;
	case KITE_EQE_QP_REQ_ERR:
		kite_ib_eq_qp_event(dev, obj, IB_EVENT_QP_REQ_ERR);
		break;
	case KITE_EQE_QP_ACCESS_ERR:
		kite_ib_eq_qp_event(dev, obj, IB_EVENT_QP_ACCESS_ERR);
		break;
	case KITE_EQE_QP_LAST_WQE:
		kite_ib_eq_qp_event(dev, obj, IB_EVENT_QP_LAST_WQE_REACHED);
		break;
	case KITE_EQE_QP_COMM_EST:
		kite_ib_eq_qp_event(dev, obj, IB_EVENT_COMM_EST);
		break;
	case KITE_EQE_SQ_DRAINED:
		kite_ib_eq_qp_event(dev, obj, IB_EVENT_SQ_DRAINED);
		break;
	case KITE_EQE_SRQ_LIMIT:
		kite_ib_eq_srq_event(dev, obj, IB_EVENT_SRQ_LIMIT_REACHED);
		break;
	case KITE_EQE_SRQ_ERROR:
		kite_ib_eq_srq_event(dev, obj, IB_EVENT_SRQ_ERR);
		break;
	case KITE_EQE_EQ_OVERFLOW:
		dev_warn_ratelimited(kite_ib_eq_log_dev(dev),
				     "EQ %u overflowed: events were lost\n",
				     obj);
		/* Lost control events cannot be recovered (prm_eq.rst). */
		if (obj == 0)
			kite_ib_cmd_fatal(dev, "control EQ overflow");
		break;
	case KITE_EQE_DEVICE_FATAL:
		dev_err(kite_ib_eq_log_dev(dev),
			"device reported a fatal error, code 0x%02lx\n",
			FIELD_GET(KITE_STATUS_FATAL_CODE, data));
		kite_ib_cmd_fatal(dev, "fatal error event");
		break;
	default:
		kite_ib_eq_bad(dev, eq, KITE_IB_BAD_EQE_TYPE, type, obj);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Interrupts                                                          */
/* ------------------------------------------------------------------ */

/*
 * EQEs are walked in a tasklet, in softirq context right after the hard
 * IRQ, on the CPU that took it:
 *
 * - completion events reach the ULPs' CQ handlers (ib_cq's softirq and
 *   workqueue pollers, NVMe's and iSER's) with the latency of a softirq,
 *   not of a scheduled work item;
 * - a tasklet never runs concurrently with itself, which serialises one
 *   EQ's walk (its consumer counter and doorbell) without a lock, while
 *   different EQs run on different CPUs.
 *
 * The tasklet is only ever set up, scheduled and quiesced through the three
 * helpers below, so that moving to a BH workqueue (queue_work() on
 * system_bh_wq, disable_work_sync()) changes them alone.
 */
static void kite_ib_eq_walk(struct kite_ib_eq *eq);

static void kite_ib_eq_tasklet(struct tasklet_struct *t)
{
	struct kite_ib_eq *eq = from_tasklet(eq, t, tasklet);

	kite_ib_eq_walk(eq);
}

static void kite_ib_eq_bh_init(struct kite_ib_eq *eq)
{
	tasklet_setup(&eq->tasklet, kite_ib_eq_tasklet);
}

static void kite_ib_eq_bh_schedule(struct kite_ib_eq *eq)
{
	tasklet_schedule(&eq->tasklet);
}

/* After the EQ's IRQ is freed: wait for a walk in progress, allow none. */
static void kite_ib_eq_bh_quiesce(struct kite_ib_eq *eq)
{
	tasklet_kill(&eq->tasklet);
}

static void kite_ib_eq_walk(struct kite_ib_eq *eq)
{
	struct kite_ib_dev *dev = eq->dev;
	unsigned int log_depth = ilog2(eq->hwq.depth);
	struct kite_eqe *eqe;
	unsigned int done;

	for (done = 0; done < KITE_IB_EQ_BUDGET; done++) {
		eqe = kite_ib_hwq_entry(&eq->hwq, eq->ci);
		if (!kite_ib_eqe_valid(eqe, eq->ci, log_depth))
			break;
		/* The EQE's body was written before its owner bit. */
		dma_rmb();
		kite_ib_eq_dispatch(dev, eq, eqe);
		/* Read by kite_ib_eq_irq(). */
		WRITE_ONCE(eq->ci, eq->ci + 1);
	}

	if (done == KITE_IB_EQ_BUDGET) {
		/* Give the space back, stay disarmed, come back for more. */
		kite_ib_ring_db(dev, kite_ib_eq_doorbell(eq->eqn, eq->ci, false));
		kite_ib_eq_bh_schedule(eq);
		return;
	}
	/* Drained: arming finds EQEs that arrived meanwhile (pi != ci). */
	kite_ib_ring_db(dev, kite_ib_eq_doorbell(eq->eqn, eq->ci, true));
}

static irqreturn_t kite_ib_eq_irq(int irq, void *data)
{
	struct kite_ib_eq *eq = data;
	u32 ci = READ_ONCE(eq->ci);

	/*
	 * The device raises an armed EQ's vector for a new EQE. When all EQs
	 * share one vector (IRQF_SHARED), an EQ without one says so, so that
	 * the core can tell a vector nobody handles.
	 */
	if (!kite_ib_eqe_valid(kite_ib_hwq_entry(&eq->hwq, ci), ci,
			       ilog2(eq->hwq.depth)))
		return IRQ_NONE;
	kite_ib_eq_bh_schedule(eq);
	return IRQ_HANDLED;
}

/* ------------------------------------------------------------------ */
/* Creation and destruction                                            */
/* ------------------------------------------------------------------ */

/*
 * Create EQ @index (0: the control EQ) on the RDMA driver's vector @vec:
 * ring, CREATE_EQ (a completion EQ with the device's adaptive interrupt
 * moderation when it has it), IRQ, then arm it. The EQ starts disarmed in
 * the device, so no interrupt can come before its handler is installed.
 */
static int kite_ib_eq_create(struct kite_ib_dev *dev, struct kite_ib_eq *eq,
			     unsigned int index, unsigned int vec)
{
	struct kite_aux_dev *kadev = dev->kadev;
	bool ctrl = index == 0;
	struct kite_cmd_create_eq in = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_CREATE_EQ,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	eq->dev = dev;
	eq->ci = 0;
	eq->vector = kadev->first_vector + vec;
	eq->irq = kadev->irqs[vec];
	snprintf(eq->name, sizeof(eq->name), "kite_ib-eq%u@%s", index,
		 pci_name(kadev->pdev));
	kite_ib_eq_bh_init(eq);

	/* Zeroed memory: no EQE is valid before the device writes one. */
	err = kite_ib_hwq_alloc(dev, &eq->hwq, BIT(KITE_IB_EQ_LOG_DEPTH),
				ilog2(KITE_EQE_SIZE));
	if (err)
		return err;

	in.cfg = cpu_to_le32(FIELD_PREP(KITE_EQ_CFG_LOG_DEPTH,
					KITE_IB_EQ_LOG_DEPTH) |
			     FIELD_PREP(KITE_EQ_CFG_VECTOR, eq->vector) |
			     (ctrl ? KITE_EQ_CFG_CTRL : 0));
	/* Completion EQs only: commands and errors are reported at once. */
	if (!ctrl && (dev->caps.features & KITE_FEAT_EQ_MODERATION))
		in.moderation = cpu_to_le32(FIELD_PREP(KITE_EQ_MOD_MAX_US,
						       KITE_IB_EQ_MOD_MAX_US));
	in.pbl = eq->hwq.pbl.desc;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err) {
		dev_err(kite_ib_eq_log_dev(dev), "CREATE_EQ %u failed: %d\n",
			index, err);
		goto err_free_ring;
	}
	eq->eqn = cmd.result;
	if (eq->eqn > KITE_OBJ_MASK || (ctrl ? eq->eqn : !eq->eqn)) {
		dev_err(kite_ib_eq_log_dev(dev),
			"CREATE_EQ %u returned EQN %u\n", index, eq->eqn);
		err = -EIO;
		goto err_destroy_eq;
	}

	err = request_irq(eq->irq, kite_ib_eq_irq,
			  kadev->num_vectors == 1 ? IRQF_SHARED : 0,
			  eq->name, eq);
	if (err) {
		dev_err(kite_ib_eq_log_dev(dev),
			"cannot request IRQ %d for EQ %u: %d\n", eq->irq,
			eq->eqn, err);
		goto err_destroy_eq;
	}

	kite_ib_ring_db(dev, kite_ib_eq_doorbell(eq->eqn, 0, true));
	return 0;

err_destroy_eq:
	if (kite_ib_cmd_destroy(dev, KITE_CMD_DESTROY_EQ, eq->eqn))
		return err;	/* the device may still write: leak the ring */
err_free_ring:
	kite_ib_hwq_free(dev, &eq->hwq);
	return err;
}

static void kite_ib_eq_destroy(struct kite_ib_dev *dev, struct kite_ib_eq *eq)
{
	int err;

	/* Succeeds locally on a dead device. */
	err = kite_ib_cmd_destroy(dev, KITE_CMD_DESTROY_EQ, eq->eqn);
	if (err)
		dev_err(kite_ib_eq_log_dev(dev),
			"DESTROY_EQ %u failed (%d): leaking its ring\n",
			eq->eqn, err);
	/* No new interrupt after free_irq(), no walk after the quiesce. */
	free_irq(eq->irq, eq);
	kite_ib_eq_bh_quiesce(eq);
	if (!err)
		kite_ib_hwq_free(dev, &eq->hwq);
}

/**
 * kite_ib_eqs_create() - create the control EQ and the completion EQs
 * @dev: the device; its command channel must be in the POLLING state
 *
 * EQ0 goes on the RDMA driver's first vector; once it exists the command
 * channel switches to EVENTS. Then min(online CPUs, vectors - 1) completion
 * EQs (at least one), each on its own vector, or all on the first vector
 * (a shared IRQ) when the RDMA driver has a single vector.
 *
 * Context: process context.
 * Return: 0 or a negative errno; on error nothing is left behind.
 */
int kite_ib_eqs_create(struct kite_ib_dev *dev)
{
	unsigned int nvec = dev->kadev->num_vectors;
	unsigned int ncomp, i;
	int err;

	if (!nvec)
		return -EINVAL;
	ncomp = min(num_online_cpus(), max(1U, nvec - 1));

	dev->eqs = kcalloc(1 + ncomp, sizeof(*dev->eqs), GFP_KERNEL);
	if (!dev->eqs)
		return -ENOMEM;
	dev->num_eqs = 0;
	atomic_set(&dev->next_comp_eq, 0);

	err = kite_ib_eq_create(dev, &dev->eqs[0], 0, 0);
	if (err)
		goto err_free_eqs;
	dev->num_eqs = 1;
	kite_ib_cmdq_set_state(dev, KITE_CMDQ_EVENTS);

	for (i = 1; i <= ncomp; i++) {
		err = kite_ib_eq_create(dev, &dev->eqs[i], i, nvec > 1 ? i : 0);
		if (err)
			goto err_destroy_eqs;
		dev->num_eqs++;
	}
	return 0;

err_destroy_eqs:
	kite_ib_eqs_destroy(dev);
	return err;
err_free_eqs:
	kfree(dev->eqs);
	dev->eqs = NULL;
	return err;
}

/**
 * kite_ib_eqs_destroy() - destroy every EQ
 * @dev: the device
 *
 * Completion EQs first, then EQ0 after the command channel went back to
 * POLLING. Works on a dead device (the destroy commands succeed locally).
 * Safe to call when kite_ib_eqs_create() created none.
 *
 * Context: process context. No CQ may be bound to a completion EQ.
 */
void kite_ib_eqs_destroy(struct kite_ib_dev *dev)
{
	unsigned int i;

	if (!dev->eqs)
		return;
	for (i = dev->num_eqs; i-- > 1;)
		kite_ib_eq_destroy(dev, &dev->eqs[i]);
	if (dev->num_eqs) {
		kite_ib_cmdq_set_state(dev, KITE_CMDQ_POLLING);
		kite_ib_eq_destroy(dev, &dev->eqs[0]);
	}
	kfree(dev->eqs);
	dev->eqs = NULL;
	dev->num_eqs = 0;
}

/**
 * kite_ib_comp_eq() - the completion EQ for a CQ's completion vector
 * @dev: the device
 * @comp_vector: the verbs completion vector; a negative value, or one not
 *	below the device's num_comp_vectors, picks an EQ round-robin
 *
 * Return: a completion EQ, or NULL if there is none.
 */
struct kite_ib_eq *kite_ib_comp_eq(struct kite_ib_dev *dev, int comp_vector)
{
	unsigned int ncomp, limit;

	if (dev->num_eqs < 2)
		return NULL;
	ncomp = dev->num_eqs - 1;
	limit = dev->ibdev.num_comp_vectors ?: ncomp;
	if (comp_vector < 0 || comp_vector >= limit)
		comp_vector = (unsigned int)atomic_inc_return(&dev->next_comp_eq);
	return &dev->eqs[1 + (unsigned int)comp_vector % ncomp];
}
