// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: the command channel.
 *
 * The device's firmware is driven through a ring of 256-byte command
 * entries (Documentation/networking/device_drivers/ethernet/kite/
 * prm_cmdq.rst). Submitters take a permit of the "slots" semaphore, post
 * their entry under the channel lock with a cookie (the entry's index and
 * a generation number), write PI, and wait for the completion:
 *
 * - by polling the entry's status word (KITE_CMD_STATUS_DONE), with
 *   usleep_range() between reads, before EQ0 exists and during teardown;
 * - by sleeping until the CMD_DONE event for their cookie arrives on EQ0
 *   (kite_ib_cmd_complete(), from the EQ0 tasklet), once EQ0 exists. The
 *   sleep is sliced so that the entry's DONE bit is re-read now and then:
 *   a lost event delays a command, it does not fail it.
 *
 * Every wait is bounded by the time the device says a command may take
 * (KITE_RDMA_CMD_TIMEOUT), or by the cmd_timeout_ms module parameter when
 * it is set. A command that does not complete in time means the device is
 * gone: the channel becomes FATAL, the RDMA
 * core is told (IB_EVENT_DEVICE_FATAL) and kite_en is asked for a reset,
 * which removes and re-creates the auxiliary device.
 *
 * State machine (enum kite_ib_cmdq_state)::
 *
 *	        kite_ib_cmdq_init()
 *	  DOWN --------------------> POLLING --(EQ0 created)--> EVENTS
 *	   ^                           |  ^                        |
 *	   |   kite_ib_cmdq_destroy()  |  +---(teardown: before ---+
 *	   +---------------------------+       DESTROY_EQ of EQ0)
 *	   |
 *	   +---- kite_ib_cmdq_destroy() ---- FATAL <---- any state
 *	                                         (timeout, DEVICE_FATAL event)
 *
 * DOWN:    commands fail with -ENODEV.
 * POLLING: completions are polled in the entry.
 * EVENTS:  completions are CMD_DONE events on EQ0.
 * FATAL:   commands fail fast with -EIO without touching the ring; destroy
 *          commands (kite_ib_cmd_destroy()) succeed locally, so that every
 *          teardown completes. Only kite_ib_cmdq_destroy() leaves FATAL.
 *
 * Waiters live on their submitter's stack and are reachable only through
 * the per-entry waiter table, under the channel lock. A submitter always
 * unregisters its waiter under the lock before it returns, so a completion
 * arriving late (after a time-out) finds no waiter, or another command's
 * waiter with a different cookie, and is ignored.
 *
 * Entries are reused in ring order: a permit goes back to the semaphore
 * only when the consumer counter passes the entry, so a slow submitter
 * still reading its output never has its entry overwritten.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/kite/auxdev.h>
#include <linux/kite/kite_hw.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kite_ib.h"

static unsigned int cmd_timeout_ms;
module_param(cmd_timeout_ms, uint, 0644);
MODULE_PARM_DESC(cmd_timeout_ms,
		 "Time a firmware command may take before the device is reset (ms; default 0: the time the device reports)");

MODULE_IMPORT_NS("KITE");

/* Polling: delay between two reads of an entry's status word. */
#define KITE_IB_CMD_POLL_MIN_US		20
#define KITE_IB_CMD_POLL_MAX_US		100
/* Event wait: the entry's status is re-read at least this often. */
#define KITE_IB_CMD_EVENT_SLICE_MS	100

/**
 * struct kite_ib_cmd_waiter - a submitter waiting for its command
 * @done: completed by the CMD_DONE event, or by the channel going FATAL
 * @cookie: the cookie posted with the command
 * @status: the status word of the CMD_DONE event, valid if @completed
 * @alive: still waiting; cleared when unregistered (under the lock)
 * @completed: the CMD_DONE event arrived
 * @aborted: the channel went FATAL while the command was in flight
 *
 * Lives on the submitter's stack; reachable through
 * &kite_ib_cmdq.waiters only while @alive, under &kite_ib_cmdq.lock.
 */
struct kite_ib_cmd_waiter {
	struct completion done;
	u32 cookie;
	u32 status;
	bool alive;
	bool completed;
	bool aborted;
};

static const char * const kite_ib_cmd_names[] = {
	[KITE_CMD_NOP] = "NOP",
	[KITE_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
	[KITE_CMD_QUERY_PORT] = "QUERY_PORT",
	[KITE_CMD_QUERY_STATS] = "QUERY_STATS",
	[KITE_CMD_ALLOC_UCTX] = "ALLOC_UCTX",
	[KITE_CMD_DEALLOC_UCTX] = "DEALLOC_UCTX",
	[KITE_CMD_ALLOC_PD] = "ALLOC_PD",
	[KITE_CMD_DEALLOC_PD] = "DEALLOC_PD",
	[KITE_CMD_CREATE_EQ] = "CREATE_EQ",
	[KITE_CMD_DESTROY_EQ] = "DESTROY_EQ",
	[KITE_CMD_CREATE_CQ] = "CREATE_CQ",
	[KITE_CMD_QUERY_CQ] = "QUERY_CQ",
	[KITE_CMD_MODIFY_CQ] = "MODIFY_CQ",
	[KITE_CMD_DESTROY_CQ] = "DESTROY_CQ",
	[KITE_CMD_CREATE_QP] = "CREATE_QP",
	[KITE_CMD_MODIFY_QP] = "MODIFY_QP",
	[KITE_CMD_QUERY_QP] = "QUERY_QP",
	[KITE_CMD_DESTROY_QP] = "DESTROY_QP",
	[KITE_CMD_REG_MR] = "REG_MR",
	[KITE_CMD_ALLOC_MR] = "ALLOC_MR",
	[KITE_CMD_DEREG_MR] = "DEREG_MR",
	[KITE_CMD_ALLOC_MW] = "ALLOC_MW",
	[KITE_CMD_DEALLOC_MW] = "DEALLOC_MW",
	[KITE_CMD_ADD_GID] = "ADD_GID",
	[KITE_CMD_DEL_GID] = "DEL_GID",
	[KITE_CMD_CREATE_SRQ] = "CREATE_SRQ",
	[KITE_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
	[KITE_CMD_QUERY_SRQ] = "QUERY_SRQ",
	[KITE_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
};

static const char *kite_ib_cmd_name(u8 opcode)
{
	if (opcode < ARRAY_SIZE(kite_ib_cmd_names) && kite_ib_cmd_names[opcode])
		return kite_ib_cmd_names[opcode];
	return "UNKNOWN";
}

/*
 * How each completion status is reported: the errno, and whether a failure
 * is worth a dev_err (the driver's or the device's fault) or only a
 * dev_dbg (a request the device refused, often on behalf of user space).
 */
static const struct {
	int err;
	bool loud;
} kite_ib_cmd_status_map[] = {
	[KITE_CMD_OK] = { 0, false },
	[KITE_CMD_E_OPCODE] = { -EOPNOTSUPP, false },
	[KITE_CMD_E_PARAM] = { -EINVAL, false },
	[KITE_CMD_E_LENGTH] = { -EINVAL, true },
	[KITE_CMD_E_NO_RESOURCES] = { -ENOMEM, false },
	[KITE_CMD_E_OBJECT] = { -ENOENT, false },
	[KITE_CMD_E_STATE] = { -EINVAL, false },
	[KITE_CMD_E_BUSY] = { -EBUSY, false },
	[KITE_CMD_E_DMA] = { -EIO, true },
	[KITE_CMD_E_PBL] = { -EINVAL, true },
	[KITE_CMD_E_INTERNAL] = { -EIO, true },
};

/**
 * kite_ib_cmd_errno() - the errno for a command completion status
 * @status: KITE_CMD_STATUS_CODE of a completion (KITE_CMD_OK or
 *	KITE_CMD_E_*)
 *
 * Return: 0 for KITE_CMD_OK, a negative errno for an error status; -EIO
 * for a status this driver does not know.
 */
int kite_ib_cmd_errno(u8 status)
{
	if (status >= ARRAY_SIZE(kite_ib_cmd_status_map))
		return -EIO;
	return kite_ib_cmd_status_map[status].err;
}

static bool kite_ib_cmd_status_loud(u8 status)
{
	if (status >= ARRAY_SIZE(kite_ib_cmd_status_map))
		return true;
	return kite_ib_cmd_status_map[status].loud;
}

static struct device *kite_ib_cmd_dev(struct kite_ib_dev *dev)
{
	return &dev->kadev->adev.dev;
}

/* ------------------------------------------------------------------ */
/* Hardware access                                                     */
/* ------------------------------------------------------------------ */

static void *kite_ib_cmdq_hw_ring_alloc(struct kite_ib_dev *dev, size_t size,
					dma_addr_t *dma)
{
	/* Coherent allocations are page aligned, which covers 4 KiB. */
	return dma_alloc_coherent(dev->dmadev, size, dma, GFP_KERNEL);
}

static void kite_ib_cmdq_hw_ring_free(struct kite_ib_dev *dev, size_t size,
				      void *ring, dma_addr_t dma)
{
	dma_free_coherent(dev->dmadev, size, ring, dma);
}

static int kite_ib_cmdq_hw_enable(struct kite_ib_dev *dev, dma_addr_t dma,
				  unsigned int log_depth)
{
	u32 cfg = FIELD_PREP(KITE_CMDQ_CFG_LOG_DEPTH, log_depth) |
		  KITE_CMDQ_CFG_ENABLE;

	kite_ib_wr(dev, KITE_RDMA_CMDQ_BASE_LO, lower_32_bits(dma));
	kite_ib_wr(dev, KITE_RDMA_CMDQ_BASE_HI, upper_32_bits(dma));
	kite_ib_wr(dev, KITE_RDMA_CMDQ_CFG, cfg);
	if (!(kite_ib_rd(dev, KITE_RDMA_CMDQ_CFG) & KITE_CMDQ_CFG_ENABLE)) {
		dev_err(kite_ib_cmd_dev(dev),
			"device refused the command queue configuration\n");
		return -EIO;
	}
	return 0;
}

static void kite_ib_cmdq_hw_disable(struct kite_ib_dev *dev)
{
	kite_ib_wr(dev, KITE_RDMA_CMDQ_CFG, 0);
}

static void kite_ib_cmdq_hw_doorbell(struct kite_ib_dev *dev, u32 pi)
{
	/* writel() orders the entry writes before the MMIO write. */
	kite_ib_wr(dev, KITE_RDMA_CMDQ_PI, pi);
}

static void kite_ib_cmdq_hw_reset(struct kite_ib_dev *dev)
{
	kite_en_request_reset(dev->kadev);
}

static int kite_ib_cmdq_hw_timeout(struct kite_ib_dev *dev, unsigned int *ms)
{
	u32 val = kite_ib_rd(dev, KITE_RDMA_CMD_TIMEOUT);

	/* All ones: the function is gone; reserved bits or 0: not a value. */
	if ((val & ~KITE_CMD_TIMEOUT_MS) || !FIELD_GET(KITE_CMD_TIMEOUT_MS, val)) {
		dev_err(kite_ib_cmd_dev(dev),
			"device reports no valid command time-out (%#x)\n", val);
		return -EIO;
	}
	*ms = FIELD_GET(KITE_CMD_TIMEOUT_MS, val);
	return 0;
}

/* The command channel of a real device: coherent DMA and the registers. */
const struct kite_ib_cmdq_ops kite_ib_cmdq_hw_ops = {
	.ring_alloc = kite_ib_cmdq_hw_ring_alloc,
	.ring_free = kite_ib_cmdq_hw_ring_free,
	.enable = kite_ib_cmdq_hw_enable,
	.disable = kite_ib_cmdq_hw_disable,
	.doorbell = kite_ib_cmdq_hw_doorbell,
	.reset = kite_ib_cmdq_hw_reset,
	.timeout = kite_ib_cmdq_hw_timeout,
};

/* ------------------------------------------------------------------ */
/* Set-up, state and teardown                                          */
/* ------------------------------------------------------------------ */

/**
 * kite_ib_cmdq_init_ops() - set up the command channel
 * @dev: the device
 * @ops: how to reach the device (kite_ib_cmdq_hw_ops, or a test fake)
 * @log_depth: log2 of the ring's entries, 1..KITE_CMDQ_MAX_LOG_DEPTH
 *
 * Allocates the ring and the waiter table, enables the channel and puts it
 * in the POLLING state. A command may take as long as the device says
 * (@ops->timeout), or cmd_timeout_ms when that module parameter is set.
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad @log_depth, -ENOMEM, or what @ops->timeout
 * or @ops->enable returned.
 */
int kite_ib_cmdq_init_ops(struct kite_ib_dev *dev,
			  const struct kite_ib_cmdq_ops *ops,
			  unsigned int log_depth)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	size_t size;
	int err;

	if (!log_depth || log_depth > KITE_CMDQ_MAX_LOG_DEPTH)
		return -EINVAL;

	memset(cmdq, 0, sizeof(*cmdq));
	err = ops->timeout(dev, &cmdq->timeout_ms);
	if (err)
		return err;
	if (cmd_timeout_ms)
		cmdq->timeout_ms = cmd_timeout_ms;
	cmdq->ops = ops;
	cmdq->depth = BIT(log_depth);
	cmdq->state = KITE_CMDQ_DOWN;
	spin_lock_init(&cmdq->lock);
	sema_init(&cmdq->slots, cmdq->depth);

	cmdq->waiters = kcalloc(cmdq->depth, sizeof(*cmdq->waiters),
				GFP_KERNEL);
	if (!cmdq->waiters)
		return -ENOMEM;
	cmdq->cookies = kcalloc(cmdq->depth, sizeof(*cmdq->cookies),
				GFP_KERNEL);
	if (!cmdq->cookies) {
		err = -ENOMEM;
		goto err_free_waiters;
	}

	size = cmdq->depth * sizeof(*cmdq->ring);
	cmdq->ring = ops->ring_alloc(dev, size, &cmdq->ring_dma);
	if (!cmdq->ring) {
		err = -ENOMEM;
		goto err_free_cookies;
	}

	err = ops->enable(dev, cmdq->ring_dma, log_depth);
	if (err)
		goto err_free_ring;

	kite_ib_cmdq_set_state(dev, KITE_CMDQ_POLLING);
	return 0;

err_free_ring:
	ops->ring_free(dev, size, cmdq->ring, cmdq->ring_dma);
	cmdq->ring = NULL;
err_free_cookies:
	kfree(cmdq->cookies);
	cmdq->cookies = NULL;
err_free_waiters:
	kfree(cmdq->waiters);
	cmdq->waiters = NULL;
	return err;
}

/**
 * kite_ib_cmdq_init() - set up the command channel of the device
 * @dev: the device; @dev->regs and @dev->dmadev must be set
 *
 * A ring of 2^KITE_CMDQ_MAX_LOG_DEPTH entries in coherent DMA memory,
 * programmed through the RDMA register block. The channel starts in the
 * POLLING state.
 *
 * Context: process context.
 * Return: 0, -ENOMEM, or -EIO if the device refused the configuration.
 */
int kite_ib_cmdq_init(struct kite_ib_dev *dev)
{
	return kite_ib_cmdq_init_ops(dev, &kite_ib_cmdq_hw_ops,
				     KITE_CMDQ_MAX_LOG_DEPTH);
}

static const char *kite_ib_cmdq_state_name(enum kite_ib_cmdq_state state)
{
	switch (state) {
	case KITE_CMDQ_DOWN:
		return "down";
	case KITE_CMDQ_POLLING:
		return "polling";
	case KITE_CMDQ_EVENTS:
		return "events";
	case KITE_CMDQ_FATAL:
		return "fatal";
	}
	return "?";
}

/* Wake every registered waiter; called with the lock held. */
static void kite_ib_cmdq_abort_waiters(struct kite_ib_cmdq *cmdq)
{
	struct kite_ib_cmd_waiter *w;
	u32 i;

	for (i = 0; i < cmdq->depth; i++) {
		w = cmdq->waiters[i];
		if (w && w->alive) {
			w->aborted = true;
			complete(&w->done);
		}
	}
}

/**
 * kite_ib_cmdq_set_state() - move the command channel to another state
 * @dev: the device
 * @state: KITE_CMDQ_POLLING or KITE_CMDQ_EVENTS (EQ0 was created, or is
 *	about to be destroyed); KITE_CMDQ_DOWN is set by
 *	kite_ib_cmdq_destroy() and KITE_CMDQ_FATAL by kite_ib_cmd_fatal()
 *
 * A FATAL channel stays FATAL until kite_ib_cmdq_destroy(). Commands in
 * flight carry on: their waits re-read the state.
 *
 * Context: any context.
 */
void kite_ib_cmdq_set_state(struct kite_ib_dev *dev,
			    enum kite_ib_cmdq_state state)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	enum kite_ib_cmdq_state old;
	unsigned long flags;

	spin_lock_irqsave(&cmdq->lock, flags);
	old = cmdq->state;
	if (old != KITE_CMDQ_FATAL || state == KITE_CMDQ_DOWN)
		WRITE_ONCE(cmdq->state, state);
	if (state == KITE_CMDQ_DOWN)
		kite_ib_cmdq_abort_waiters(cmdq);
	spin_unlock_irqrestore(&cmdq->lock, flags);

	if (old != state)
		dev_dbg(kite_ib_cmd_dev(dev), "command channel: %s -> %s\n",
			kite_ib_cmdq_state_name(old),
			kite_ib_cmdq_state_name(READ_ONCE(cmdq->state)));
}

/**
 * kite_ib_cmdq_destroy() - disable the command channel and free it
 * @dev: the device
 *
 * Every object the device holds should have been destroyed first. The
 * channel is disabled through its configuration register (the device
 * forgets commands still queued) before the ring is freed. Safe to call on
 * a channel that kite_ib_cmdq_init() never set up.
 *
 * Context: process context; no command may be in flight.
 */
void kite_ib_cmdq_destroy(struct kite_ib_dev *dev)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;

	if (!cmdq->ring)
		return;
	kite_ib_cmdq_set_state(dev, KITE_CMDQ_DOWN);
	cmdq->ops->disable(dev);
	cmdq->ops->ring_free(dev, cmdq->depth * sizeof(*cmdq->ring),
			     cmdq->ring, cmdq->ring_dma);
	cmdq->ring = NULL;
	kfree(cmdq->cookies);
	cmdq->cookies = NULL;
	kfree(cmdq->waiters);
	cmdq->waiters = NULL;
}

/**
 * kite_ib_cmd_fatal() - declare the device dead
 * @dev: the device
 * @why: for the log
 *
 * Once only: logs, puts the channel in the FATAL state (commands fail fast
 * from now on, waiters in flight are woken), dispatches
 * IB_EVENT_DEVICE_FATAL through kite_ib_dispatch_fatal() if the ib_device
 * is registered, and asks kite_en for a reset.
 *
 * Context: any context but hard IRQ (called from EQ0's tasklet).
 */
void kite_ib_cmd_fatal(struct kite_ib_dev *dev, const char *why)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	unsigned long flags;

	spin_lock_irqsave(&cmdq->lock, flags);
	if (cmdq->state == KITE_CMDQ_FATAL) {
		spin_unlock_irqrestore(&cmdq->lock, flags);
		return;
	}
	WRITE_ONCE(cmdq->state, KITE_CMDQ_FATAL);
	kite_ib_cmdq_abort_waiters(cmdq);
	spin_unlock_irqrestore(&cmdq->lock, flags);

	/*
	 * A device that fails while being set up or torn down is not reset:
	 * probe fails (or remove completes) instead, so a device that never
	 * answers cannot cause an endless probe/reset cycle.
	 */
	if (!READ_ONCE(dev->running)) {
		dev_err(kite_ib_cmd_dev(dev), "device failed (%s): commands disabled\n",
			why);
		return;
	}
	dev_err(kite_ib_cmd_dev(dev),
		"device failed (%s): commands disabled, requesting a reset\n",
		why);
	/* Registered devices only; the reference keeps it registered. */
	if (ib_device_try_get(&dev->ibdev)) {
		kite_ib_dispatch_fatal(dev);
		ib_device_put(&dev->ibdev);
	}
	if (cmdq->ops)
		cmdq->ops->reset(dev);
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

/**
 * kite_ib_cmd_complete() - a CMD_DONE event arrived
 * @dev: the device
 * @cookie: the event's obj: the cookie of the completed command
 * @status: the event's data: the command's status word
 *
 * Wakes the waiter registered with @cookie. Cookies of commands whose
 * submitter already saw the completion (by polling) are dropped quietly;
 * unknown or stale cookies are logged (ratelimited) and ignored.
 *
 * Context: any context but hard IRQ (the EQ0 tasklet).
 */
void kite_ib_cmd_complete(struct kite_ib_dev *dev, u32 cookie, u32 status)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	u32 slot = FIELD_GET(KITE_IB_COOKIE_SLOT, cookie);
	struct kite_ib_cmd_waiter *w;
	unsigned long flags;
	bool reaped = false;

	spin_lock_irqsave(&cmdq->lock, flags);
	if (!cmdq->waiters || slot >= cmdq->depth)
		goto unknown;
	w = cmdq->waiters[slot];
	if (w && w->alive && w->cookie == cookie) {
		w->status = status;
		w->completed = true;
		complete(&w->done);
		spin_unlock_irqrestore(&cmdq->lock, flags);
		return;
	}
	/* Posted in this entry, but its submitter has gone already. */
	reaped = cookie && cmdq->cookies[slot] == cookie;
unknown:
	spin_unlock_irqrestore(&cmdq->lock, flags);
	if (reaped) {
		dev_dbg(kite_ib_cmd_dev(dev),
			"completion for command 0x%08x, already reaped\n",
			cookie);
	} else {
		kite_ib_bad(dev, KITE_IB_BAD_CMD_COOKIE);
		dev_err_ratelimited(kite_ib_cmd_dev(dev),
				    "bad device data (cmd-cookie): completion with unknown or stale cookie 0x%08x ignored\n",
				    cookie);
	}
}

/**
 * kite_ib_cmd_result_ok() - whether a command's result is in range
 * @caps: the device's limits; zero before QUERY_DEVICE completed
 * @opcode: the command
 * @result: its result word
 * @out_len: the output bytes asked for
 *
 * Object numbers (and the index of memory keys) stay below the device's
 * limit for their kind, or below 2^24 while the limits are not known; user
 * contexts name a doorbell page; QUERY_STATS reports at most the counters
 * its output buffer holds. Other commands' results are not used.
 *
 * Return: true if the driver may use @result.
 */
bool kite_ib_cmd_result_ok(const struct kite_ib_caps *caps, u8 opcode,
			   u32 result, u16 out_len)
{
	u32 limit;

	switch (opcode) {
	case KITE_CMD_CREATE_EQ:
		limit = caps->max_eq;
		break;
	case KITE_CMD_CREATE_CQ:
		limit = caps->max_cq;
		break;
	case KITE_CMD_CREATE_QP:
		limit = caps->max_qp;
		break;
	case KITE_CMD_ALLOC_PD:
		limit = caps->max_pd;
		break;
	case KITE_CMD_CREATE_SRQ:
		/* SRQNs are 1 .. max_srq (a count, SRQN 0 excluded). */
		limit = caps->max_srq ? caps->max_srq + 1 : 0;
		break;
	case KITE_CMD_REG_MR:
	case KITE_CMD_ALLOC_MR:
	case KITE_CMD_ALLOC_MW:
		/* Windows take their keys from the MRs' table. */
		result = FIELD_GET(KITE_KEY_INDEX, result);
		limit = caps->max_mr;
		break;
	case KITE_CMD_ALLOC_UCTX:
		return result < KITE_DB_PAGES;
	case KITE_CMD_ALLOC_CNTR:
		/* Set 0 is the default set: never handed out. */
		return result && result < caps->max_cntr;
	case KITE_CMD_QUERY_STATS:
	case KITE_CMD_QUERY_CNTR:
		return result <= out_len / sizeof(__le64);
	default:
		return true;
	}
	return result < (limit ?: KITE_OBJ_MASK + 1);
}

static u32 kite_ib_cmd_read_status(struct kite_cmd *entry)
{
	return le32_to_cpu(READ_ONCE(entry->status));
}

/*
 * Post @cmd in the next entry and ring the doorbell. Called with a slot
 * permit held. Return: the entry's index, or a negative errno if the
 * channel is not usable.
 */
static int kite_ib_cmd_post(struct kite_ib_dev *dev, struct kite_ib_cmd *cmd,
			    struct kite_ib_cmd_waiter *w)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	struct kite_cmd *entry;
	unsigned long flags;
	u32 slot;

	spin_lock_irqsave(&cmdq->lock, flags);
	switch (cmdq->state) {
	case KITE_CMDQ_POLLING:
	case KITE_CMDQ_EVENTS:
		break;
	case KITE_CMDQ_FATAL:
		spin_unlock_irqrestore(&cmdq->lock, flags);
		return -EIO;
	default:
		spin_unlock_irqrestore(&cmdq->lock, flags);
		return -ENODEV;
	}

	slot = cmdq->pi & (cmdq->depth - 1);
	/* The permit guarantees the entry was given back (see @ci). */
	if (WARN_ON_ONCE(cmdq->waiters[slot])) {
		spin_unlock_irqrestore(&cmdq->lock, flags);
		return -EIO;
	}
	cmdq->gen = (cmdq->gen + 1) & FIELD_MAX(KITE_IB_COOKIE_GEN);
	if (!cmdq->gen)
		cmdq->gen = 1;
	w->cookie = FIELD_PREP(KITE_IB_COOKIE_SLOT, slot) |
		    FIELD_PREP(KITE_IB_COOKIE_GEN, cmdq->gen);
	w->alive = true;
	cmdq->waiters[slot] = w;
	cmdq->cookies[slot] = w->cookie;

	entry = &cmdq->ring[slot];
	entry->opcode = cpu_to_le32(FIELD_PREP(KITE_CMD_OPCODE, cmd->opcode));
	entry->cookie = cpu_to_le32(w->cookie);
	entry->in_len = cpu_to_le16(cmd->in_len);
	entry->out_len = cpu_to_le16(cmd->out_len);
	entry->rsvd0 = 0;
	entry->out_addr = cpu_to_le64(cmd->out_dma);
	entry->result = 0;
	WRITE_ONCE(entry->status, 0);
	if (cmd->in_len)
		memcpy(entry->payload, cmd->in, cmd->in_len);
	memset(entry->payload + cmd->in_len, 0,
	       KITE_CMD_PAYLOAD_SIZE - cmd->in_len);

	cmdq->pi++;
	/* The entry must be visible to the device before the new PI. */
	dma_wmb();
	cmdq->ops->doorbell(dev, cmdq->pi);
	spin_unlock_irqrestore(&cmdq->lock, flags);
	return slot;
}

/*
 * Unregister the waiter of entry @slot and give back the entries the
 * consumer counter can pass. Return: the number of slot permits to release.
 */
static unsigned int kite_ib_cmd_unregister(struct kite_ib_cmdq *cmdq,
					   u32 slot)
{
	unsigned int n = 0;

	lockdep_assert_held(&cmdq->lock);
	cmdq->waiters[slot]->alive = false;
	cmdq->waiters[slot] = NULL;
	while (cmdq->ci != cmdq->pi &&
	       !cmdq->waiters[cmdq->ci & (cmdq->depth - 1)]) {
		cmdq->ci++;
		n++;
	}
	return n;
}

/*
 * Wait for entry @slot to complete, bounded by the channel's time-out:
 * until its CMD_DONE event arrived (@w->completed) or its status word
 * shows DONE. Return: 0 when it completed, -EIO if the channel went FATAL
 * or DOWN meanwhile, -ETIMEDOUT.
 */
static int kite_ib_cmd_wait(struct kite_ib_dev *dev,
			    struct kite_ib_cmd_waiter *w, u32 slot)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	struct kite_cmd *entry = &cmdq->ring[slot];
	unsigned long slice = msecs_to_jiffies(KITE_IB_CMD_EVENT_SLICE_MS);
	unsigned long deadline, now;

	deadline = jiffies + msecs_to_jiffies(cmdq->timeout_ms);
	for (;;) {
		if (READ_ONCE(w->completed) ||
		    (kite_ib_cmd_read_status(entry) & KITE_CMD_STATUS_DONE))
			break;
		if (READ_ONCE(w->aborted))
			return -EIO;
		now = jiffies;
		if (time_after_eq(now, deadline))
			return -ETIMEDOUT;
		if (READ_ONCE(cmdq->state) == KITE_CMDQ_EVENTS)
			wait_for_completion_timeout(&w->done,
						    min(deadline - now, slice));
		else
			usleep_range(KITE_IB_CMD_POLL_MIN_US,
				     KITE_IB_CMD_POLL_MAX_US);
	}
	/* Result and output were written before the status word. */
	dma_rmb();
	return 0;
}

static void kite_ib_cmd_report(struct kite_ib_dev *dev,
			       const struct kite_ib_cmd *cmd, int err)
{
	if (kite_ib_cmd_status_loud(cmd->status))
		dev_err_ratelimited(kite_ib_cmd_dev(dev),
				    "command %s (0x%02x) failed: status 0x%02x syndrome 0x%04x (%d)\n",
				    kite_ib_cmd_name(cmd->opcode), cmd->opcode,
				    cmd->status, cmd->syndrome, err);
	else
		dev_dbg(kite_ib_cmd_dev(dev),
			"command %s (0x%02x) failed: status 0x%02x syndrome 0x%04x (%d)\n",
			kite_ib_cmd_name(cmd->opcode), cmd->opcode,
			cmd->status, cmd->syndrome, err);
}

/**
 * kite_ib_cmd_exec() - execute a command and wait for its completion
 * @dev: the device
 * @cmd: the command; on return @cmd->status, @cmd->syndrome and
 *	@cmd->result hold the completion and @cmd->out the output (on
 *	success, when @cmd->out_dma is 0)
 *
 * Copies the input into the next ring entry, rings the doorbell and waits
 * (polling or for the CMD_DONE event, depending on the channel's state),
 * at most the command time-out. A time-out makes the channel FATAL.
 *
 * Context: process context, may sleep.
 * Return: 0; the errno of the device's status (kite_ib_cmd_errno());
 * -EINVAL for bad lengths; -ENODEV if the channel is down; -EIO if it is
 * (or went) FATAL; -ETIMEDOUT if the device did not answer in time.
 */
int kite_ib_cmd_exec(struct kite_ib_dev *dev, struct kite_ib_cmd *cmd)
{
	struct kite_ib_cmdq *cmdq = &dev->cmdq;
	struct kite_ib_cmd_waiter w = {};
	unsigned long flags;
	unsigned int n;
	u32 status;
	int slot, err;

	if (cmd->in_len > KITE_CMD_PAYLOAD_SIZE || (cmd->in_len && !cmd->in) ||
	    (!cmd->out_dma && cmd->out_len > KITE_CMD_PAYLOAD_SIZE))
		return -EINVAL;

	/* Fail fast without waiting for a permit. */
	switch (READ_ONCE(cmdq->state)) {
	case KITE_CMDQ_FATAL:
		return -EIO;
	case KITE_CMDQ_DOWN:
		return -ENODEV;
	default:
		break;
	}

	/*
	 * Permits come back when commands complete or time out, each within
	 * the time-out; twice that means the channel is stuck.
	 */
	if (down_timeout(&cmdq->slots,
			 msecs_to_jiffies(2 * cmdq->timeout_ms))) {
		kite_ib_cmd_fatal(dev, "no command slot became free");
		return -ETIMEDOUT;
	}

	init_completion(&w.done);
	slot = kite_ib_cmd_post(dev, cmd, &w);
	if (slot < 0) {
		up(&cmdq->slots);
		return slot;
	}

	err = kite_ib_cmd_wait(dev, &w, slot);

	spin_lock_irqsave(&cmdq->lock, flags);
	if (!err) {
		struct kite_cmd *entry = &cmdq->ring[slot];

		/* The event's status word, else the entry's (polled). */
		status = w.completed ? w.status :
				       kite_ib_cmd_read_status(entry);
		cmd->status = FIELD_GET(KITE_CMD_STATUS_CODE, status);
		cmd->syndrome = FIELD_GET(KITE_CMD_STATUS_SYNDROME, status);
		cmd->result = le32_to_cpu(entry->result);
		if (cmd->status == KITE_CMD_OK && cmd->out && cmd->out_len &&
		    !cmd->out_dma)
			memcpy(cmd->out, entry->payload, cmd->out_len);
	}
	n = kite_ib_cmd_unregister(cmdq, slot);
	spin_unlock_irqrestore(&cmdq->lock, flags);
	while (n--)
		up(&cmdq->slots);

	if (err == -ETIMEDOUT) {
		dev_err(kite_ib_cmd_dev(dev),
			"command %s (0x%02x) timed out after %u ms\n",
			kite_ib_cmd_name(cmd->opcode), cmd->opcode,
			cmdq->timeout_ms);
		kite_ib_cmd_fatal(dev, "command timeout");
		return err;
	}
	if (err)
		return err;

	/*
	 * A status never returned, or a result out of range: whether and how
	 * the command was executed is unknown, and so is the state of the
	 * device's objects. Nothing but a reset is safe. (Codes reserved for
	 * future errors are failures: kite_ib_cmd_errno().)
	 */
	if (cmd->status >= KITE_CMD_E_NEVER ||
	    (!cmd->status &&
	     !kite_ib_cmd_result_ok(&dev->caps, cmd->opcode, cmd->result,
				    cmd->out_len))) {
		enum kite_ib_bad bad = cmd->status ? KITE_IB_BAD_CMD_STATUS :
						     KITE_IB_BAD_CMD_RESULT;

		kite_ib_bad(dev, bad);
		dev_err_ratelimited(kite_ib_cmd_dev(dev),
				    "bad device data (%s): command %s (0x%02x) completed with status 0x%02x result 0x%08x\n",
				    kite_ib_bad_name(bad),
				    kite_ib_cmd_name(cmd->opcode), cmd->opcode,
				    cmd->status, cmd->result);
		kite_ib_cmd_fatal(dev, "command completion makes no sense");
		return -EIO;
	}
	err = kite_ib_cmd_errno(cmd->status);
	if (err)
		kite_ib_cmd_report(dev, cmd, err);
	return err;
}

/**
 * kite_ib_cmd_destroy() - destroy a device object, even on a dead device
 * @dev: the device
 * @opcode: a destroy command taking struct kite_cmd_obj (DESTROY_EQ,
 *	DESTROY_CQ, DESTROY_QP, DEREG_MR, DEALLOC_MW, DEALLOC_PD, DEALLOC_UCTX,
 *	DEL_GID, DESTROY_SRQ, DEALLOC_CNTR)
 * @obj: the object's number or key
 *
 * When the channel is FATAL or DOWN, or becomes so while the command is in
 * flight (a time-out), the device's objects are gone or about to be reset
 * away: the destroy succeeds locally, so that teardown always completes.
 *
 * Context: process context, may sleep.
 * Return: 0, or the errno of a status the (working) device returned.
 */
int kite_ib_cmd_destroy(struct kite_ib_dev *dev, u8 opcode, u32 obj)
{
	struct kite_cmd_obj in = { .obj = cpu_to_le32(obj) };
	struct kite_ib_cmd cmd = {
		.opcode = opcode,
		.in = &in,
		.in_len = sizeof(in),
	};
	int err;

	if (kite_ib_dead(dev))
		return 0;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (!err || kite_ib_dead(dev))
		return 0;
	return err;
}
