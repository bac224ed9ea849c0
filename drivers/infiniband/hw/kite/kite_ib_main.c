// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kite RoCEv2 RDMA driver: binding to the core driver's auxiliary device,
 * device bring-up (command channel, capabilities, event queues) and
 * teardown.
 *
 * Copyright (c) 2026 Kite
 */
#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "kite_ib.h"

/* Never trust the device: refuse capabilities the driver cannot honour. */
static int kite_ib_check_caps(struct kite_ib_dev *dev)
{
	struct kite_ib_caps *c = &dev->caps;
	struct device *d = &dev->kadev->adev.dev;

	if (!c->max_qp || !c->max_cq || !c->max_pd || !c->max_mr ||
	    !c->max_qp_wr || !c->max_cqe || !c->max_eq || !c->gid_tbl_len ||
	    c->max_send_sge > KITE_MAX_SGE || c->max_recv_sge > KITE_MAX_SGE ||
	    c->max_inline > KITE_MAX_INLINE || c->max_uctx >= KITE_DB_PAGES ||
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
	err = kite_ib_check_caps(dev);
out_free:
	kfree(out);
	return err;
}

/**
 * kite_ib_dispatch_port_event() - record a port state change
 * @dev: the device
 * @up: the link came up
 *
 * Context: any context.
 */
void kite_ib_dispatch_port_event(struct kite_ib_dev *dev, bool up)
{
	dev->port_state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	dev_dbg(&dev->kadev->adev.dev, "port %s\n", up ? "active" : "down");
}

/**
 * kite_ib_dispatch_fatal() - record that the device failed
 * @dev: the device
 *
 * Context: any context.
 */
void kite_ib_dispatch_fatal(struct kite_ib_dev *dev)
{
	dev->fatal = true;
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
	dev->port_state = IB_PORT_DOWN;
	xa_init(&dev->cq_xa);
	xa_init(&dev->qp_xa);
	atomic_set(&dev->next_comp_eq, 0);
	auxiliary_set_drvdata(adev, dev);

	err = kite_ib_cmdq_init(dev);
	if (err) {
		dev_err(d, "cannot set up the command channel: %d\n", err);
		goto err_free_dev;
	}
	err = kite_ib_query_caps(dev);
	if (err) {
		dev_err(d, "QUERY_DEVICE failed: %d\n", err);
		goto err_destroy_cmdq;
	}
	err = kite_ib_eqs_create(dev);
	if (err) {
		dev_err(d, "cannot create the event queues: %d\n", err);
		goto err_destroy_cmdq;
	}

	WRITE_ONCE(dev->running, true);
	dev_info(d, "bound to %s: interface %lu.%lu, firmware %s; max %u QPs, %u CQs, %u MRs, %u PDs; 1 control + %u completion EQs on %u MSI-X vectors\n",
		 pci_name(kadev->pdev), FIELD_GET(KITE_HW_REV_MAJOR, kadev->hw_rev),
		 FIELD_GET(KITE_HW_REV_MINOR, kadev->hw_rev), kadev->fw_version,
		 dev->caps.max_qp, dev->caps.max_cq, dev->caps.max_mr,
		 dev->caps.max_pd, dev->num_eqs - 1, kadev->num_vectors);
	return 0;

err_destroy_cmdq:
	kite_ib_cmdq_destroy(dev);
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
	dev_info(&kadev->adev.dev, "event: %s\n", name);
	if (event == KITE_AUX_EVENT_FATAL)
		kite_ib_cmd_fatal(dev, "the core driver reported a fatal error");
}

static void kite_ib_remove(struct auxiliary_device *adev)
{
	struct kite_ib_dev *dev = auxiliary_get_drvdata(adev);

	WRITE_ONCE(dev->running, false);
	kite_ib_eqs_destroy(dev);
	/*
	 * Objects a failed device could not destroy are still in it: have
	 * kite_en reset it so that the next probe finds it clean.
	 */
	if (READ_ONCE(dev->cmdq.state) == KITE_CMDQ_FATAL)
		kite_en_request_reset(dev->kadev);
	kite_ib_cmdq_destroy(dev);
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
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
