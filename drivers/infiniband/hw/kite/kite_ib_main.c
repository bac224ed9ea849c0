// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: binding to the core driver's auxiliary device,
 * device bring-up (command channel, capabilities, event queues) and
 * teardown.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/if_vlan.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"

/*
 * The clock of kite_cqe.timestamp counts nanoseconds (prm_cq.rst): 1 GHz,
 * in the kHz of ib_device_attr.hca_core_clock.
 */
#define KITE_IB_CLOCK_KHZ	1000000

/* Never trust the device: refuse capabilities the driver cannot honour. */
static int kite_ib_check_caps(struct kite_ib_dev *dev)
{
	struct kite_ib_caps *c = &dev->caps;
	struct device *d = &dev->kadev->adev.dev;

	/* Entry 0 of the QP, CQ, PD and MR tables is never allocated. */
	if (c->max_qp < 2 || c->max_cq < 2 || c->max_pd < 2 || c->max_mr < 2 ||
	    !c->max_qp_wr || !c->max_cqe || !c->max_eq || !c->gid_tbl_len ||
	    c->max_send_sge > KITE_MAX_SGE || c->max_recv_sge > KITE_MAX_SGE ||
	    c->max_inline > KITE_MAX_INLINE || c->max_uctx >= KITE_DB_PAGES ||
	    c->max_srq > KITE_OBJ_MASK || c->max_srq_sge > KITE_MAX_SGE ||
	    c->max_srq_wr > BIT(KITE_WQ_MAX_LOG_DEPTH) ||
	    c->max_cntr > KITE_OBJ_MASK + 1 ||
	    c->max_mcast_grp > KITE_OBJ_MASK ||
	    c->max_mcast_qp_attach > c->max_qp ||
	    c->max_mcast_total_attach > KITE_OBJ_MASK ||
	    !c->max_mcast_grp != !c->max_mcast_qp_attach ||
	    !c->max_mcast_grp != !c->max_mcast_total_attach ||
	    c->max_mw > KITE_OBJ_MASK + 1 ||
	    c->max_xrcd > KITE_OBJ_MASK + 1 ||
	    !(c->page_size_cap & BIT_ULL(KITE_PBL_MIN_PAGE_SHIFT))) {
		dev_err(d, "device reports unusable capabilities (max_qp %u, max_cq %u, max_sge %u/%u, max_inline %u, max_uctx %u, page sizes %#llx)\n",
			c->max_qp, c->max_cq, c->max_send_sge, c->max_recv_sge,
			c->max_inline, c->max_uctx, c->page_size_cap);
		return -EINVAL;
	}
	/* Only the page sizes the PBL format can describe. */
	c->page_size_cap &= GENMASK_ULL(KITE_PBL_MAX_PAGE_SHIFT,
					KITE_PBL_MIN_PAGE_SHIFT);
	return 0;
}

static int kite_ib_query_caps(struct kite_ib_dev *dev)
{
	struct kite_cmd_query_device_out *out;
	struct kite_ib_caps *c = &dev->caps;
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_DEVICE,
		.out_len = sizeof(*out),
	};
	int err;

	out = kzalloc_obj(*out, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	cmd.out = out;
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		goto out_free;
	c->fw_ver = le32_to_cpu(out->fw_ver);
	c->hw_rev = le32_to_cpu(out->hw_rev);
	c->node_guid = le64_to_cpu(out->node_guid);
	c->max_mr_size = le64_to_cpu(out->max_mr_size);
	c->page_size_cap = le64_to_cpu(out->page_size_cap);
	c->vendor_id = le32_to_cpu(out->vendor_id);
	c->vendor_part_id = le32_to_cpu(out->vendor_part_id);
	c->max_qp = le32_to_cpu(out->max_qp);
	c->max_qp_wr = le32_to_cpu(out->max_qp_wr);
	c->max_send_sge = le32_to_cpu(out->max_send_sge);
	c->max_recv_sge = le32_to_cpu(out->max_recv_sge);
	c->max_sge_rd = le32_to_cpu(out->max_sge_rd);
	c->max_inline = le32_to_cpu(out->max_inline);
	c->max_cq = le32_to_cpu(out->max_cq);
	c->max_cqe = le32_to_cpu(out->max_cqe);
	c->max_mr = le32_to_cpu(out->max_mr);
	c->max_pd = le32_to_cpu(out->max_pd);
	c->max_uctx = le32_to_cpu(out->max_uctx);
	c->max_eq = le32_to_cpu(out->max_eq);
	c->max_eqe = le32_to_cpu(out->max_eqe);
	c->max_qp_rd_atom = le32_to_cpu(out->max_qp_rd_atom);
	c->max_qp_init_rd_atom = le32_to_cpu(out->max_qp_init_rd_atom);
	c->max_fast_reg_pages = le32_to_cpu(out->max_fast_reg_pages);
	c->gid_tbl_len = le32_to_cpu(out->gid_tbl_len);
	c->features = le32_to_cpu(out->features);
	c->max_cq_moderation_count = le16_to_cpu(out->max_cq_moderation_count);
	c->max_cq_moderation_period = le16_to_cpu(out->max_cq_moderation_period);
	c->local_ca_ack_delay = le32_to_cpu(out->local_ca_ack_delay);
	if (c->features & KITE_FEAT_SRQ) {
		c->max_srq = le32_to_cpu(out->max_srq);
		c->max_srq_wr = le32_to_cpu(out->max_srq_wr);
		c->max_srq_sge = le32_to_cpu(out->max_srq_sge);
	}
	if (c->features & KITE_FEAT_QP_CNTR)
		c->max_cntr = le32_to_cpu(out->max_cntr);
	if (c->features & KITE_FEAT_MCAST) {
		c->max_mcast_grp = le32_to_cpu(out->max_mcast_grp);
		c->max_mcast_qp_attach = le32_to_cpu(out->max_mcast_qp_attach);
		c->max_mcast_total_attach =
			le32_to_cpu(out->max_mcast_total_attach);
	}
	/* Windows share the memory translation table (index 0 too). */
	if (c->features & KITE_FEAT_MW)
		c->max_mw = le32_to_cpu(out->max_mw);
	if (c->features & KITE_FEAT_DM)
		c->max_dm_size = le32_to_cpu(out->max_dm_size);
	/* Domain number 0 is never allocated: one domain at least. */
	if ((c->features & KITE_FEAT_XRC) && (c->features & KITE_FEAT_SRQ))
		c->max_xrcd = le32_to_cpu(out->max_xrcd);
	if (c->max_xrcd < 2)
		c->max_xrcd = 0;
	err = kite_ib_check_caps(dev);
out_free:
	kfree(out);
	return err;
}

static int kite_ib_query_device(struct ib_device *ibdev,
				struct ib_device_attr *attr,
				struct ib_udata *udata)
{
	struct kite_ib_dev *dev = to_kdev(ibdev);
	const struct kite_ib_caps *c = &dev->caps;
	int err;

	/* No driver data in either direction (7.x passes NULL at register). */
	err = ib_is_udata_in_empty(udata);
	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	/* The KITE_REG_FW_VER encoding; libkite formats it likewise. */
	attr->fw_ver = c->fw_ver;
	attr->sys_image_guid = dev->ibdev.node_guid;
	attr->max_mr_size = c->max_mr_size;
	attr->page_size_cap = c->page_size_cap;
	attr->vendor_id = c->vendor_id;
	attr->vendor_part_id = c->vendor_part_id;
	attr->hw_ver = c->hw_rev;
	/* Tables whose entry 0 is never allocated (prm_commands.rst). */
	attr->max_qp = c->max_qp - 1;
	attr->max_qp_wr = c->max_qp_wr;
	if (c->features & KITE_FEAT_FAST_REG)
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	if ((c->features & KITE_FEAT_SRQ) && (c->features & KITE_FEAT_SRQ_RESIZE))
		attr->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	/* Posted by libkite only: the kernel has no ULP that writes one. */
	if (c->features & KITE_FEAT_ATOMIC_WRITE)
		attr->device_cap_flags |= IB_DEVICE_ATOMIC_WRITE;
	/* Global visibility only: Kite has no persistent memory domain. */
	if (c->features & KITE_FEAT_FLUSH)
		attr->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL;
	/* XRC SRQs and target QPs are user objects (libkite). */
	if (c->max_xrcd)
		attr->device_cap_flags |= IB_DEVICE_XRC;
	/* Type 2 windows are bound to one QP: IB's type 2B. */
	if (c->features & KITE_FEAT_MW) {
		attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					  IB_DEVICE_MEM_WINDOW_TYPE_2B;
		attr->max_mw = c->max_mw ? c->max_mw - 1 : 0;
	}
	attr->max_send_sge = c->max_send_sge;
	attr->max_recv_sge = c->max_recv_sge;
	attr->max_sge_rd = c->max_sge_rd;
	attr->max_cq = c->max_cq - 1;
	attr->max_cqe = kite_ib_cq_max_cqe(dev);
	attr->max_mr = c->max_mr - 1;
	attr->max_pd = c->max_pd - 1;
	/* SRQN 0 is never allocated either: max_srq is a count already. */
	attr->max_srq = c->max_srq;
	attr->max_srq_wr = c->max_srq_wr;
	attr->max_srq_sge = c->max_srq_sge;
	/* Zero without KITE_FEAT_MCAST: applications test max_mcast_grp. */
	attr->max_mcast_grp = c->max_mcast_grp;
	attr->max_mcast_qp_attach = c->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach = c->max_mcast_total_attach;
	attr->max_qp_rd_atom = c->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = c->max_qp_init_rd_atom;
	attr->max_res_rd_atom = attr->max_qp * c->max_qp_rd_atom;
	attr->atomic_cap = (c->features & KITE_FEAT_ATOMIC) ? IB_ATOMIC_HCA :
							      IB_ATOMIC_NONE;
	/* Address handles are software: bounded by memory only. */
	attr->max_ah = INT_MAX;
	attr->max_fast_reg_page_list_len = c->max_fast_reg_pages;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = c->local_ca_ack_delay;
	attr->cq_caps.max_cq_moderation_count = c->max_cq_moderation_count;
	attr->cq_caps.max_cq_moderation_period = c->max_cq_moderation_period;
	/* CQE timestamps: a 64-bit device clock counting nanoseconds. */
	attr->timestamp_mask = U64_MAX;
	attr->hca_core_clock = KITE_IB_CLOCK_KHZ;
	attr->max_dm_size = dev->dm_size;
	return 0;
}

static int kite_ib_query_port(struct ib_device *ibdev, u32 port,
			      struct ib_port_attr *attr)
{
	struct kite_ib_dev *dev = to_kdev(ibdev);
	struct net_device *netdev = dev->kadev->netdev;
	struct kite_cmd_query_port_out out = {};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_QUERY_PORT,
		.out = &out,
		.out_len = sizeof(out),
	};
	int err;

	/* The core zeroed *attr. */
	err = kite_ib_cmd_exec(dev, &cmd);
	if (err)
		return err;
	if (out.active_mtu < KITE_MTU_256 || out.active_mtu > KITE_MTU_4096 ||
	    (out.state != KITE_PORT_STATE_ACTIVE &&
	     out.state != KITE_PORT_STATE_DOWN)) {
		dev_err_ratelimited(&dev->kadev->adev.dev,
				    "device reports port state %u, MTU %u\n",
				    out.state, out.active_mtu);
		return -EIO;
	}
	if (out.state == KITE_PORT_STATE_ACTIVE && netif_running(netdev) &&
	    netif_carrier_ok(netdev)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = min_t(enum ib_mtu, out.active_mtu,
				 iboe_get_mtu(READ_ONCE(netdev->mtu)));
	attr->gid_tbl_len = dev->caps.gid_tbl_len;
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->max_msg_sz = KITE_MAX_MSG_SZ;
	attr->max_vl_num = 1;
	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

static int kite_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer kite_ib_get_link_layer(struct ib_device *ibdev,
						   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int kite_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			      u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int kite_ib_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct kite_ib_dev *dev = to_kdev(attr->device);
	struct kite_cmd_add_gid in = {
		.index = cpu_to_le32(attr->index),
	};
	struct kite_ib_cmd cmd = {
		.opcode = KITE_CMD_ADD_GID,
		.in = &in,
		.in_len = sizeof(in),
	};
	u16 vlan = 0xffff;
	int err;

	switch (rdma_gid_attr_network_type(attr)) {
	case RDMA_NETWORK_IPV4:
		in.type = cpu_to_le32(KITE_NET_ROCE_V2_IPV4);
		break;
	case RDMA_NETWORK_IPV6:
		in.type = cpu_to_le32(KITE_NET_ROCE_V2_IPV6);
		break;
	default:
		return -EOPNOTSUPP;
	}
	err = rdma_read_gid_l2_fields(attr, &vlan, in.mac);
	if (err)
		return err;
	if (vlan < VLAN_N_VID)
		in.vlan = cpu_to_le16(FIELD_PREP(KITE_VLAN_ID, vlan) |
				      KITE_VLAN_VALID);
	memcpy(in.gid, attr->gid.raw, sizeof(in.gid));
	return kite_ib_cmd_exec(dev, &cmd);
}

static int kite_ib_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return kite_ib_cmd_destroy(to_kdev(attr->device), KITE_CMD_DEL_GID,
				   attr->index);
}

static void kite_ib_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s",
		 to_kdev(ibdev)->kadev->fw_version);
}

static const struct ib_device_ops kite_ib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_KITE,
	.uverbs_abi_ver = KITE_UVERBS_ABI_VERSION,

	.add_gid = kite_ib_add_gid,
	.alloc_mr = kite_ib_alloc_mr,
	.alloc_mw = kite_ib_alloc_mw,
	.alloc_pd = kite_ib_alloc_pd,
	.alloc_ucontext = kite_ib_alloc_ucontext,
	.attach_mcast = kite_ib_attach_mcast,
	.create_ah = kite_ib_create_ah,
	.create_cq = kite_ib_create_cq,
	.create_qp = kite_ib_create_qp,
	.create_srq = kite_ib_create_srq,
	.create_user_ah = kite_ib_create_ah,
	.dealloc_mw = kite_ib_dealloc_mw,
	.dealloc_pd = kite_ib_dealloc_pd,
	.dealloc_ucontext = kite_ib_dealloc_ucontext,
	.del_gid = kite_ib_del_gid,
	.dereg_mr = kite_ib_dereg_mr,
	.disassociate_ucontext = kite_ib_disassociate_ucontext,
	.destroy_ah = kite_ib_destroy_ah,
	.destroy_cq = kite_ib_destroy_cq,
	.destroy_qp = kite_ib_destroy_qp,
	.destroy_srq = kite_ib_destroy_srq,
	.detach_mcast = kite_ib_detach_mcast,
	.get_dev_fw_str = kite_ib_get_dev_fw_str,
	.get_dma_mr = kite_ib_get_dma_mr,
	.get_link_layer = kite_ib_get_link_layer,
	.get_port_immutable = kite_ib_get_port_immutable,
	.map_mr_sg = kite_ib_map_mr_sg,
	.mmap = kite_ib_mmap,
	.mmap_free = kite_ib_mmap_free,
	.modify_cq = kite_ib_modify_cq,
	.modify_qp = kite_ib_modify_qp,
	.modify_srq = kite_ib_modify_srq,
	.poll_cq = kite_ib_poll_cq,
	.post_recv = kite_ib_post_recv,
	.post_send = kite_ib_post_send,
	.post_srq_recv = kite_ib_post_srq_recv,
	.query_device = kite_ib_query_device,
	.query_pkey = kite_ib_query_pkey,
	.query_port = kite_ib_query_port,
	.query_qp = kite_ib_query_qp,
	.query_srq = kite_ib_query_srq,
	.query_ucontext = kite_ib_query_ucontext,
	.reg_user_mr = kite_ib_reg_user_mr,
	.reg_user_mr_dmabuf = kite_ib_reg_user_mr_dmabuf,
	.req_notify_cq = kite_ib_req_notify_cq,
	.rereg_user_mr = kite_ib_rereg_user_mr,
	.resize_user_cq = kite_ib_resize_user_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, kite_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, kite_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, kite_ib_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, kite_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, kite_ib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, kite_ib_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, kite_ib_ucontext, ibuc),
};

/* With XRC (kite_ib_srq.c, kite_ib_qp.c). */
static const struct ib_device_ops kite_ib_xrc_ops = {
	.alloc_xrcd = kite_ib_alloc_xrcd,
	.dealloc_xrcd = kite_ib_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_xrcd, kite_ib_xrcd, ibxrcd),
};

/* With device memory (kite_ib_dm.c). */
static const struct ib_device_ops kite_ib_dm_ops = {
	.alloc_dm = kite_ib_alloc_dm,
	.dealloc_dm = kite_ib_dealloc_dm,
	.reg_dm_mr = kite_ib_reg_dm_mr,
};

static int kite_ib_register(struct kite_ib_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = dev->num_eqs - 1;
	/*
	 * Kernel CQs polled in softirq or workqueue context get the core's
	 * adaptive moderation (DIM), which sets it through modify_cq: fewer
	 * completion interrupts at load, none delayed at low load.
	 */
	ibdev->use_cq_dim = !!(dev->caps.features & KITE_FEAT_CQ_MODERATION);
	ibdev->dev.parent = &dev->kadev->adev.dev;
	ibdev->node_guid = cpu_to_be64(dev->caps.node_guid);
	strscpy(ibdev->node_desc, "Kite RoCEv2 NIC", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &kite_ib_dev_ops);
	if (dev->dm_pool)
		ib_set_device_ops(ibdev, &kite_ib_dm_ops);
	if (dev->caps.max_xrcd)
		ib_set_device_ops(ibdev, &kite_ib_xrc_ops);
	ibdev->driver_def = kite_ib_uapi_defs;
	kite_ib_set_res_ops(dev);
	if (dev->caps.max_cntr > 1)
		kite_ib_set_counter_ops(dev);
	err = ib_device_set_netdev(ibdev, dev->kadev->netdev, 1);
	if (err)
		return err;
	return ib_register_device(ibdev, "kite%d", dev->dmadev);
}

static void kite_ib_event_dispatch(struct kite_ib_dev *dev,
				   enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	/* Only a registered device has listeners. */
	if (!ib_device_try_get(&dev->ibdev))
		return;
	ib_dispatch_event(&ev);
	ib_device_put(&dev->ibdev);
}

/*
 * The link changed: the netdev's carrier already follows it (kite_en sets
 * it before raising the event). ib_dispatch_port_state_event() reports the
 * port's new state to the RDMA core unless the core's own netdev notifier
 * already has.
 */
static void kite_ib_port_change(struct kite_ib_dev *dev)
{
	if (!ib_device_try_get(&dev->ibdev))
		return;
	ib_dispatch_port_state_event(&dev->ibdev, dev->kadev->netdev);
	ib_device_put(&dev->ibdev);
}

/**
 * kite_ib_dispatch_fatal() - tell the RDMA core that the device failed
 * @dev: the device
 *
 * Context: any context.
 */
void kite_ib_dispatch_fatal(struct kite_ib_dev *dev)
{
	WRITE_ONCE(dev->fatal, true);
	kite_ib_status_set_dead(dev);
	kite_ib_event_dispatch(dev, IB_EVENT_DEVICE_FATAL);
	/* Work requests in flight now complete as flushed (poll_cq). */
	kite_ib_dead_kick(dev);
}

static int kite_ib_probe(struct auxiliary_device *adev,
			 const struct auxiliary_device_id *id)
{
	struct kite_aux_dev *kadev = to_kite_aux_dev(adev);
	struct device *d = &adev->dev;
	struct kite_ib_dev *dev;
	int err;

	if (!kadev->pdev || !kadev->num_vectors || !kadev->rdma_regs ||
	    !kadev->kernel_db) {
		dev_err(d, "core driver gave no PCI function, vector or register block\n");
		return -EINVAL;
	}
	dev = ib_alloc_device(kite_ib_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->kadev = kadev;
	dev->dmadev = &kadev->pdev->dev;
	dev->regs = kadev->rdma_regs;
	dev->db = kadev->kernel_db;
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_LOCK_IRQ);
	atomic_set(&dev->next_comp_eq, 0);
	kite_ib_guard_init(dev);
	auxiliary_set_drvdata(adev, dev);

	err = kite_ib_status_alloc(dev);
	if (err)
		goto err_free_dev;
	err = kite_ib_cmdq_init(dev);
	if (err) {
		dev_err(d, "cannot set up the command channel: %d\n", err);
		goto err_free_status;
	}
	err = kite_ib_query_caps(dev);
	if (err) {
		dev_err(d, "QUERY_DEVICE failed: %d\n", err);
		goto err_destroy_cmdq;
	}
	err = kite_ib_dm_init(dev);
	if (err) {
		dev_err(d, "cannot set up the device memory: %d\n", err);
		goto err_destroy_cmdq;
	}
	err = kite_ib_eqs_create(dev);
	if (err) {
		dev_err(d, "cannot create the event queues: %d\n", err);
		goto err_fini_dm;
	}

	err = kite_ib_register(dev);
	if (err) {
		dev_err(d, "cannot register the RDMA device: %d\n", err);
		goto err_destroy_eqs;
	}
	WRITE_ONCE(dev->running, true);
	dev_info(d, "%s bound to %s: interface %lu.%lu, firmware %s; max %u QPs, %u CQs, %u MRs, %u PDs; 1 control + %u completion EQs on %u MSI-X vectors\n",
		 dev_name(&dev->ibdev.dev), pci_name(kadev->pdev),
		 FIELD_GET(KITE_HW_REV_MAJOR, kadev->hw_rev),
		 FIELD_GET(KITE_HW_REV_MINOR, kadev->hw_rev), kadev->fw_version,
		 dev->caps.max_qp - 1, dev->caps.max_cq - 1,
		 dev->caps.max_mr - 1, dev->caps.max_pd - 1, dev->num_eqs - 1,
		 kadev->num_vectors);
	return 0;

err_destroy_eqs:
	kite_ib_guard_stop(dev);
	kite_ib_eqs_destroy(dev);
err_fini_dm:
	kite_ib_dm_fini(dev);
err_destroy_cmdq:
	kite_ib_cmdq_destroy(dev);
err_free_status:
	kite_ib_status_free(dev);
err_free_dev:
	ib_dealloc_device(&dev->ibdev);
	return err;
}

static const char * const kite_ib_event_names[] = {
	[KITE_AUX_EVENT_LINK_UP] = "link up",
	[KITE_AUX_EVENT_LINK_DOWN] = "link down",
	[KITE_AUX_EVENT_MTU_CHANGE] = "MTU change",
	[KITE_AUX_EVENT_MAC_CHANGE] = "MAC change",
	[KITE_AUX_EVENT_FATAL] = "device fatal",
};

static void kite_ib_event(struct kite_aux_dev *kadev, enum kite_aux_event event)
{
	struct kite_ib_dev *dev = auxiliary_get_drvdata(&kadev->adev);
	const char *name = event < ARRAY_SIZE(kite_ib_event_names) ?
			   kite_ib_event_names[event] : NULL;

	if (!name) {
		dev_warn(&kadev->adev.dev, "unknown event %d\n", event);
		return;
	}
	/* Routine: the netdev reports its link itself; the port follows. */
	dev_dbg(&kadev->adev.dev, "event: %s\n", name);
	switch (event) {
	case KITE_AUX_EVENT_LINK_UP:
	case KITE_AUX_EVENT_LINK_DOWN:
		kite_ib_port_change(dev);
		break;
	case KITE_AUX_EVENT_FATAL:
		kite_ib_cmd_fatal(dev, "the core driver reported a fatal error");
		break;
	default:
		break;
	}
}

static void kite_ib_remove(struct auxiliary_device *adev)
{
	struct kite_ib_dev *dev = auxiliary_get_drvdata(adev);

	WRITE_ONCE(dev->running, false);
	/*
	 * Processes polling an empty CQ learn at once that nothing more will
	 * come; ib_unregister_device() then destroys their objects and
	 * disassociates their contexts without waiting for them.
	 */
	kite_ib_status_set_dead(dev);
	ib_unregister_device(&dev->ibdev);
	kite_ib_guard_stop(dev);
	kite_ib_eqs_destroy(dev);
	/* No user mapping of device memory is left either. */
	kite_ib_dm_fini(dev);
	/*
	 * Objects a failed device could not destroy are still in it: have
	 * kite_en reset it so that the next probe finds it clean.
	 */
	if (READ_ONCE(dev->cmdq.state) == KITE_CMDQ_FATAL)
		kite_en_request_reset(dev->kadev);
	kite_ib_cmdq_destroy(dev);
	xa_destroy(&dev->srq_xa);
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	/* No user mapping of the page is left after the unregistration. */
	kite_ib_status_free(dev);
	if (atomic_read(&dev->uctx_disassociated))
		dev_info(&adev->dev, "unbound; %d open user contexts disassociated\n",
			 atomic_read(&dev->uctx_disassociated));
	else
		dev_info(&adev->dev, "unbound\n");
	ib_dealloc_device(&dev->ibdev);
}

static const struct auxiliary_device_id kite_ib_id_table[] = {
	{ .name = KITE_EN_MODNAME "." KITE_AUX_RDMA_NAME },
	{}
};
MODULE_DEVICE_TABLE(auxiliary, kite_ib_id_table);

static struct kite_aux_driver kite_ib_driver = {
	.adrv = {
		.name = "kite_ib",
		.probe = kite_ib_probe,
		.remove = kite_ib_remove,
		.id_table = kite_ib_id_table,
	},
	.event = kite_ib_event,
};

static int __init kite_ib_init(void)
{
	return auxiliary_driver_register(&kite_ib_driver.adrv);
}

static void __exit kite_ib_exit(void)
{
	auxiliary_driver_unregister(&kite_ib_driver.adrv);
}

module_init(kite_ib_init);
module_exit(kite_ib_exit);

MODULE_DESCRIPTION("Kite RoCEv2 RDMA driver");
MODULE_LICENSE("GPL");
