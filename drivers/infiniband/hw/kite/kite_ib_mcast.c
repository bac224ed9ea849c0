// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: UD multicast, attach_mcast and detach_mcast.
 *
 * The device keeps the multicast group table (prm_mcast.rst): the driver
 * only forwards attachments to it. The device also detaches a QP from its
 * groups when the QP is destroyed, which the core allows for user QPs only
 * after detaching them itself (and never for kernel QPs still attached,
 * ib_attach_mcast() counts them in the QP's usecnt), so the driver keeps
 * no list of its own. The Ethernet function accepts every multicast
 * address, so no netdev filter entry is needed for a group's MAC: the
 * group table is the device's multicast filter for RoCEv2.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <rdma/ib_addr.h>

#include "kite_ib.h"

/**
 * kite_ib_mcast_in() - encode the input of ATTACH_MCAST and DETACH_MCAST
 * @in: the command input, written whole
 * @qpn: the QP
 * @gid: the group: an IPv4-mapped IPv4 multicast or an IPv6 multicast GID
 *
 * Return: 0, or -EINVAL if @gid is not a multicast GID or @qpn does not
 * fit the device's 24-bit QPNs.
 */
int kite_ib_mcast_in(struct kite_cmd_mcast *in, u32 qpn,
		     const union ib_gid *gid)
{
	if (!rdma_is_multicast_addr((struct in6_addr *)gid->raw) ||
	    qpn & ~KITE_OBJ_MASK)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	in->qpn = cpu_to_le32(qpn);
	memcpy(in->gid, gid->raw, sizeof(in->gid));
	return 0;
}

static int kite_ib_mcast_cmd(struct ib_qp *ibqp, union ib_gid *gid, u8 opcode,
			     struct kite_cmd_mcast *in)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_ib_qp *qp = to_kqp(ibqp);
	struct kite_ib_cmd cmd = {
		.opcode = opcode,
		.in = in,
		.in_len = sizeof(*in),
	};

	if (!(dev->caps.features & KITE_FEAT_MCAST))
		return -EOPNOTSUPP;
	/* The core checks both; a wrong QP type never reaches the device. */
	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (kite_ib_mcast_in(in, qp->qpn, gid))
		return -EINVAL;
	return kite_ib_cmd_exec(dev, &cmd);
}

/**
 * kite_ib_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: the QP
 * @gid: the group's multicast GID
 * @lid: unused on RoCE
 *
 * Context: process context; sleeps.
 * Return: 0; -EINVAL for a QP that is not UD, a GID that is not multicast
 * or a QP already attached to the group; -ENOMEM when the device's group
 * table or the group is full; -EOPNOTSUPP when the device has no multicast.
 */
int kite_ib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct kite_cmd_mcast in;

	return kite_ib_mcast_cmd(ibqp, gid, KITE_CMD_ATTACH_MCAST, &in);
}

/**
 * kite_ib_detach_mcast() - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @gid: the group's multicast GID
 * @lid: unused on RoCE
 *
 * A device that is gone has no groups left: detaching succeeds, so that
 * the core can release the QP.
 *
 * Context: process context; sleeps.
 * Return: 0; -EINVAL if the QP is not attached to the group, or for a GID
 * that is not multicast.
 */
int kite_ib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct kite_ib_dev *dev = to_kdev(ibqp->device);
	struct kite_cmd_mcast in;
	int err;

	if (kite_ib_dead(dev))
		return 0;
	err = kite_ib_mcast_cmd(ibqp, gid, KITE_CMD_DETACH_MCAST, &in);
	if (err && kite_ib_dead(dev))
		return 0;
	/* Not attached (KITE_CMD_E_OBJECT): -EINVAL, as rdma_rxe and mlx4. */
	return err == -ENOENT ? -EINVAL : err;
}
