// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: what happens when the device writes nonsense.
 *
 * Every number the driver reads from a CQE, an EQE or a command completion
 * is checked before use (kite_ib_cq.c, kite_ib_eq.c, kite_ib_cmd.c). A value
 * that fails its check is counted here (the drv_bad_* hardware counters,
 * rdma statistic), logged (ratelimited) and contained:
 *
 * - a CQE naming a QP of another CQ, an unknown WQE, opcode or syndrome, or
 *   a byte count beyond the posted buffers: its QP is isolated, that is
 *   moved to the error state (the device flushes what is outstanding) and
 *   reported to its owner with IB_EVENT_QP_FATAL;
 * - a CQE naming a QP beyond the device's range, or a CQE slot skipped
 *   by the owner rule: a completion was lost, so the CQ is reported with
 *   IB_EVENT_CQ_ERR and every QP using it is isolated;
 * - an EQE of unknown type or naming an object beyond the device's range:
 *   ignored, and every CQ of that EQ gets a completion event, so that a
 *   lost event cannot stall a consumer (a spurious event is harmless:
 *   consumers poll and re-arm);
 * - a command completion with a status never returned (KITE_CMD_E_NEVER and
 *   above) or a result out of range: the state of the device's objects is
 *   unknown, the device is declared fatal (kite_ib_cmd_fatal()) and kite_en
 *   resets it.
 *
 * Moving a QP to the error state takes a command, which sleeps, while the
 * checks run in poll_cq and in the EQ tasklets: QPs to isolate are marked in
 * the QP table (KITE_IB_XA_ISOLATE) and a work item does the rest.
 *
 * A device that is dead (kite_ib_dead()) completes nothing: kernel work
 * requests outstanding or posted afterwards are flushed by poll_cq, and
 * kite_ib_dead_kick() gives the kernel CQs the events the device no longer
 * raises, so that consumers tearing down (ib_drain_qp()) are not left
 * waiting.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/workqueue.h>

#include "kite_ib.h"

static const char * const kite_ib_bad_names[KITE_IB_BAD_COUNT] = {
	[KITE_IB_BAD_CQE_CQN] = "cqe-cqn",
	[KITE_IB_BAD_CQE_QPN] = "cqe-qpn",
	[KITE_IB_BAD_CQE_WQE_IDX] = "cqe-wqe-idx",
	[KITE_IB_BAD_CQE_OPCODE] = "cqe-opcode",
	[KITE_IB_BAD_CQE_LEN] = "cqe-len",
	[KITE_IB_BAD_CQE_OWNER] = "cqe-owner",
	[KITE_IB_BAD_CQE_SYNDROME] = "cqe-syndrome",
	[KITE_IB_BAD_EQE_TYPE] = "eqe-type",
	[KITE_IB_BAD_EQE_OBJ] = "eqe-obj",
	[KITE_IB_BAD_CMD_COOKIE] = "cmd-cookie",
	[KITE_IB_BAD_CMD_STATUS] = "cmd-status",
	[KITE_IB_BAD_CMD_RESULT] = "cmd-result",
};

/**
 * kite_ib_bad_name() - the name of a class of bad device data
 * @what: KITE_IB_BAD_*
 *
 * Return: the class's name, as in the log and the drv_bad_* counters.
 */
const char *kite_ib_bad_name(enum kite_ib_bad what)
{
	return what < KITE_IB_BAD_COUNT ? kite_ib_bad_names[what] : "unknown";
}

/**
 * kite_ib_bad() - count one piece of bad device data
 * @dev: the device
 * @what: its class
 *
 * Context: any context.
 */
void kite_ib_bad(struct kite_ib_dev *dev, enum kite_ib_bad what)
{
	if (what < KITE_IB_BAD_COUNT)
		atomic64_inc(&dev->bad[what]);
}

/**
 * kite_ib_recv_wr_len() - the bytes a receive work request can take
 * @wr: the work request
 *
 * Return: the sum of its SGE lengths, at most U32_MAX.
 */
u32 kite_ib_recv_wr_len(const struct ib_recv_wr *wr)
{
	u64 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return min_t(u64, len, U32_MAX);
}

/**
 * kite_ib_syndrome_known() - whether an error CQE's syndrome is defined
 * @syndrome: KITE_CQE_SYNDROME of the CQE
 *
 * Return: true for the KITE_SYND_* values of the Programmer's Reference.
 */
bool kite_ib_syndrome_known(u8 syndrome)
{
	switch (syndrome) {
	case KITE_SYND_LOCAL_LENGTH:
	case KITE_SYND_LOCAL_QP_OP:
	case KITE_SYND_LOCAL_PROT:
	case KITE_SYND_WR_FLUSH:
	case KITE_SYND_MW_BIND:
	case KITE_SYND_BAD_RESP:
	case KITE_SYND_LOCAL_ACCESS:
	case KITE_SYND_REMOTE_INVAL_REQ:
	case KITE_SYND_REMOTE_ACCESS:
	case KITE_SYND_REMOTE_OP:
	case KITE_SYND_RETRY_EXC:
	case KITE_SYND_RNR_RETRY_EXC:
	case KITE_SYND_ABORTED:
		return true;
	default:
		return false;
	}
}

static void kite_ib_isolate_work(struct work_struct *work)
{
	struct kite_ib_dev *dev = container_of(work, struct kite_ib_dev,
					       isolate_work);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kite_ib_qp *qp;
	unsigned long index, flags;
	struct ib_event ev;
	int err;

	for (;;) {
		index = 0;
		xa_lock_irqsave(&dev->qp_xa, flags);
		if (!xa_find(&dev->qp_xa, &index, KITE_OBJ_MASK,
			     KITE_IB_XA_ISOLATE)) {
			xa_unlock_irqrestore(&dev->qp_xa, flags);
			return;
		}
		__xa_clear_mark(&dev->qp_xa, index, KITE_IB_XA_ISOLATE);
		xa_unlock_irqrestore(&dev->qp_xa, flags);

		qp = kite_ib_qp_get(dev, index);
		if (!qp)
			continue;
		/* Reset meanwhile: nothing of what went wrong is left. */
		if (READ_ONCE(qp->state) == IB_QPS_RESET) {
			kite_ib_qp_put(qp);
			continue;
		}
		if (READ_ONCE(qp->state) != IB_QPS_ERR) {
			err = kite_ib_modify_qp(&qp->ibqp, &attr, IB_QP_STATE,
						NULL);
			if (err)
				ibdev_warn_ratelimited(&dev->ibdev,
						       "QP %u: cannot move it to the error state: %d\n",
						       qp->qpn, err);
		}
		ibdev_warn_ratelimited(&dev->ibdev,
				       "QP %u isolated: in error state, IB_EVENT_QP_FATAL reported\n",
				       qp->qpn);
		atomic64_inc(&dev->qps_isolated);
		if (qp->ibqp.event_handler) {
			ev.device = &dev->ibdev;
			ev.element.qp = &qp->ibqp;
			ev.event = IB_EVENT_QP_FATAL;
			qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
		}
		kite_ib_qp_put(qp);
	}
}

/**
 * kite_ib_qp_isolate() - move a QP to the error state, report QP_FATAL
 * @dev: the device
 * @qpn: the QP's number
 *
 * Done by a work item; a QP destroyed meanwhile is skipped.
 *
 * Context: any context.
 */
void kite_ib_qp_isolate(struct kite_ib_dev *dev, u32 qpn)
{
	unsigned long flags;

	xa_lock_irqsave(&dev->qp_xa, flags);
	if (xa_load(&dev->qp_xa, qpn))
		__xa_set_mark(&dev->qp_xa, qpn, KITE_IB_XA_ISOLATE);
	xa_unlock_irqrestore(&dev->qp_xa, flags);
	queue_work(system_dfl_wq, &dev->isolate_work);
}

/**
 * kite_ib_cq_isolate() - a CQ lost a completion: report it, isolate its QPs
 * @dev: the device
 * @cq: the CQ, referenced by the caller
 *
 * Reports IB_EVENT_CQ_ERR to the CQ's owner and isolates every QP whose
 * send or receive queue completes on it (kite_ib_qp_isolate()).
 *
 * Context: any context.
 */
void kite_ib_cq_isolate(struct kite_ib_dev *dev, struct kite_ib_cq *cq)
{
	struct kite_ib_qp *qp;
	struct kite_ib_ref *ref;
	unsigned long index, flags;
	struct ib_event ev;

	/* Published QPs are alive while the table's lock is held. */
	xa_lock_irqsave(&dev->qp_xa, flags);
	xa_for_each(&dev->qp_xa, index, ref) {
		qp = container_of(ref, struct kite_ib_qp, ref);
		if (qp->ibqp.send_cq == &cq->ibcq ||
		    qp->ibqp.recv_cq == &cq->ibcq)
			__xa_set_mark(&dev->qp_xa, index, KITE_IB_XA_ISOLATE);
	}
	xa_unlock_irqrestore(&dev->qp_xa, flags);
	queue_work(system_dfl_wq, &dev->isolate_work);

	ibdev_warn_ratelimited(&dev->ibdev,
			       "CQ %u lost a completion: IB_EVENT_CQ_ERR reported, its QPs isolated\n",
			       cq->cqn);
	atomic64_inc(&dev->cqs_isolated);
	if (cq->ibcq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.cq = &cq->ibcq;
		ev.event = IB_EVENT_CQ_ERR;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
}

/* Call @fn(cq, @arg) for every CQ of @dev, each with a reference held. */
static void kite_ib_cqs_each(struct kite_ib_dev *dev,
			     void (*fn)(struct kite_ib_cq *cq, void *arg),
			     void *arg)
{
	struct kite_ib_ref *ref;
	struct kite_ib_cq *cq;
	unsigned long index = 1;

	for (;;) {
		rcu_read_lock();
		ref = xa_find(&dev->cq_xa, &index, KITE_OBJ_MASK, XA_PRESENT);
		rcu_read_unlock();
		if (!ref)
			return;
		cq = kite_ib_cq_get(dev, index);
		if (cq) {
			fn(cq, arg);
			kite_ib_cq_put(cq);
		}
		if (index++ >= KITE_OBJ_MASK)
			return;
	}
}

static void kite_ib_eq_kick_cq(struct kite_ib_cq *cq, void *eq)
{
	if (cq->eq != eq)
		return;
	kite_ib_cq_event(cq);
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * kite_ib_eq_kick_cqs() - give every CQ of an EQ a completion event
 * @dev: the device
 * @eq: the EQ whose event may have been lost
 *
 * Context: softirq (the EQ's tasklet).
 */
void kite_ib_eq_kick_cqs(struct kite_ib_dev *dev, struct kite_ib_eq *eq)
{
	kite_ib_cqs_each(dev, kite_ib_eq_kick_cq, eq);
}

/* User CQs are left alone: their contexts are disassociated. */
static void kite_ib_dead_kick_cq(struct kite_ib_cq *cq, void *unused)
{
	if (cq->ibcq.uobject || !cq->ibcq.comp_handler)
		return;
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/*
 * A dead device raises no completion event: give every kernel CQ one, so
 * that its consumer polls what kite_ib_poll_cq() flushes. Called from a
 * work item, as the consumers' handlers expect no lock of ours held; with
 * bottom halves off, as from the EQ tasklet. A spurious event is harmless.
 */
static void kite_ib_dead_work(struct work_struct *work)
{
	struct kite_ib_dev *dev = container_of(work, struct kite_ib_dev,
					       dead_work);

	kite_ib_cqs_each(dev, kite_ib_dead_kick_cq, NULL);
}

/**
 * kite_ib_dead_kick() - have kernel consumers poll a dead device's CQs
 * @dev: the device, dead (kite_ib_dead())
 *
 * Called when the device dies with work requests outstanding and whenever
 * one is posted to it afterwards (ib_drain_qp() posts one and waits for
 * its completion): kernel CQs get a completion event from a work item, and
 * their poll returns the flushed work requests.
 *
 * Context: any context.
 */
void kite_ib_dead_kick(struct kite_ib_dev *dev)
{
	queue_work(system_dfl_wq, &dev->dead_work);
}

/**
 * kite_ib_guard_init() - set up the isolation work of a new device
 * @dev: the device
 */
void kite_ib_guard_init(struct kite_ib_dev *dev)
{
	INIT_WORK(&dev->isolate_work, kite_ib_isolate_work);
	INIT_WORK(&dev->dead_work, kite_ib_dead_work);
}

/**
 * kite_ib_guard_stop() - wait for the isolation work, before teardown
 * @dev: the device; no QP may be left
 *
 * Context: process context, may sleep.
 */
void kite_ib_guard_stop(struct kite_ib_dev *dev)
{
	cancel_work_sync(&dev->isolate_work);
	cancel_work_sync(&dev->dead_work);
}
