/*
 * Kite NIC: an RDMA-capable RoCEv2 Ethernet PCIe function.
 *
 * The Kite NIC exists only as this device model. Its programming interface
 * is defined by include/linux/kite/kite_hw.h (shared with the Linux drivers)
 * and described in the Programmer's Reference Manual,
 * Documentation/networking/device_drivers/ethernet/kite/prm.rst.
 *
 * This file implements the PCI function:
 *  - BAR0 (64-bit, non-prefetchable): registers at 0, MSI-X table at
 *    KITE_MSIX_TABLE_OFFSET and PBA at KITE_MSIX_PBA_OFFSET. The global
 *    registers (0x000-0x0ff) are here, the Ethernet registers (0x100-0x3ff)
 *    in kite_eth.c and the RDMA registers (0x800-0xfff) in kite_rdma.c;
 *  - BAR2 (64-bit): doorbell pages, kite_queue.c;
 *  - a device reset (KITE_CTRL_RESET, FLR, power-on) that discards all
 *    state at once and completes asynchronously, after "reset-delay-us" of
 *    virtual time, by setting KITE_STATUS_READY (this models the firmware
 *    booting);
 *  - interrupt causes of vector 0 (ICR/IMR) and an interrupt self-test.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_aer.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "qom/object.h"

#include "kite_int.h"
#include "trace.h"

/* PCI configuration space layout. */
#define KITE_PCIE_CAP_OFFSET    0x80
#define KITE_MSIX_CAP_OFFSET    0xc0    /* PCIe cap is 0x80..0xbb */
#define KITE_AER_OFFSET         0x100
#define KITE_DSN_OFFSET         0x150

#define KITE_HW_REV_MINOR_IMPL  0

#define KITE_DEFAULT_FW_VER \
    (FIELD_PREP(KITE_FW_VER_MAJOR, 1) | FIELD_PREP(KITE_FW_VER_MINOR, 0) | \
     FIELD_PREP(KITE_FW_VER_PATCH, 0))
#define KITE_DEFAULT_SERIAL     0x4b49544500000001ULL
#define KITE_DEFAULT_RESET_US   2000
/* What KITE_RDMA_CMD_TIMEOUT reports unless the cmd-timeout-ms property says. */
#define KITE_DEFAULT_CMD_TIMEOUT_MS 5000

/*
 * Reset
 *
 * A reset discards all state at once (RDMA objects, command queue, the
 * Ethernet function, statistics, interrupt causes) and puts the device in
 * KITE_STATUS_RESETTING; reset_timer completes it by setting
 * KITE_STATUS_READY. STATUS.LINK_UP follows the backend link throughout.
 */

static void kite_reset_done(void *opaque)
{
    KiteState *s = opaque;

    s->status = KITE_STATUS_READY;
    trace_kite_reset_done();
}

/*
 * Clocks
 *
 * The device clock of CQE timestamps and KITE_RDMA_CLOCK is the virtual
 * clock (it stops while the VM does). The real-time clock follows it at
 * the rate the driver set: rtc_base at rtc_virt, plus the time since,
 * corrected by rtc_ppb parts per billion. Every command re-bases it.
 */

uint64_t kite_clock_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static uint64_t kite_rtc_at(KiteState *s, int64_t now)
{
    int64_t d = now - s->rtc_virt;

    /* Every CQE asks: no 128-bit division at the nominal rate. */
    if (!s->rtc_ppb) {
        return s->rtc_base + d;
    }
    return s->rtc_base + d + (int64_t)((__int128)d * s->rtc_ppb /
                                       NANOSECONDS_PER_SECOND);
}

static void kite_rtc_rebase(KiteState *s, int64_t base)
{
    s->rtc_virt = kite_clock_ns();
    s->rtc_base = base;
}

static void kite_rtc_cmd(KiteState *s, uint32_t val)
{
    uint64_t arg = s->rtc_arg;
    int32_t ppb = (int32_t)arg;

    s->rtc_arg = 0;
    if (val & ~KITE_RTC_CMD_OP) {
        kite_guest_error(s, "RTC_CMD: reserved bits set in 0x%x", val);
        return;
    }
    switch (FIELD_GET(KITE_RTC_CMD_OP, val)) {
    case KITE_RTC_OP_SET:
        kite_rtc_rebase(s, arg);
        break;
    case KITE_RTC_OP_ADJ:
        kite_rtc_rebase(s, kite_rtc_at(s, kite_clock_ns()) + (int64_t)arg);
        break;
    case KITE_RTC_OP_FREQ:
        if (arg >> 32 || ppb > KITE_RTC_MAX_PPB || ppb < -KITE_RTC_MAX_PPB) {
            kite_guest_error(s, "RTC_CMD: rate offset 0x%" PRIx64
                             " out of range", arg);
            return;
        }
        kite_rtc_rebase(s, kite_rtc_at(s, kite_clock_ns()));
        s->rtc_ppb = ppb;
        break;
    default:
        kite_guest_error(s, "RTC_CMD: unknown command 0x%x", val);
        break;
    }
    trace_kite_rtc_cmd(val, arg, s->rtc_base, s->rtc_ppb);
}

/* A CQE's timestamps: both clocks, at the same instant. */
void kite_cqe_stamp(KiteState *s, struct kite_cqe *cqe)
{
    int64_t now = kite_clock_ns();

    cqe->timestamp = cpu_to_le64(now);
    cqe->rtc = cpu_to_le64(kite_rtc_at(s, now));
}

static void kite_reset_start(KiteState *s)
{
    trace_kite_reset_start(s->reset_delay_us);
    timer_del(s->reset_timer);
    s->status = KITE_STATUS_RESETTING;
    s->icr = 0;
    s->imr = 0;
    /* The real-time clock starts again at 0, at the nominal rate. */
    kite_rtc_rebase(s, 0);
    s->rtc_ppb = 0;
    s->rtc_arg = 0;
    kite_rdma_reset(s);
    kite_eth_reset(s);
    memset(s->stats, 0, sizeof(s->stats));
    /* Nothing a user left in device memory outlives a reset. */
    memset(s->dm_ptr, 0, KITE_BAR_DM_SIZE);
    timer_mod(s->reset_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              (int64_t)s->reset_delay_us * SCALE_US);
}

/* Power-on, system reset and FLR. */
static void kite_qdev_reset(DeviceState *dev)
{
    kite_reset_start(KITE(dev));
}

/* Usable: READY, and neither FATAL nor RESETTING (prm.rst, STATUS). */
bool kite_ready(KiteState *s)
{
    return (s->status & (KITE_STATUS_READY | KITE_STATUS_FATAL |
                         KITE_STATUS_RESETTING)) == KITE_STATUS_READY;
}

uint32_t kite_fw_ver(KiteState *s)
{
    return s->fw_ver;
}

uint32_t kite_hw_rev(void)
{
    return FIELD_PREP(KITE_HW_REV_MAJOR, KITE_HW_REV_MAJOR_SUPPORTED) |
           FIELD_PREP(KITE_HW_REV_MINOR, KITE_HW_REV_MINOR_IMPL);
}

/* Interrupts */

void kite_raise_vector(KiteState *s, unsigned vector)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (vector < KITE_MAX_VECTORS && msix_enabled(pdev)) {
        /* A masked vector sets its pending bit instead. */
        trace_kite_irq_msix(vector);
        msix_notify(pdev, vector);
    } else {
        trace_kite_irq_msix_disabled(vector);
    }
}

/* Set interrupt causes of vector 0; raise it if one of them is enabled. */
static void kite_set_icr(KiteState *s, uint32_t causes)
{
    s->icr |= causes;
    trace_kite_irq_causes(causes, s->icr, s->imr);
    if (causes & s->imr) {
        kite_raise_vector(s, 0);
    }
}

/*
 * The device fails (prm.rst, "Fatal errors"): STATUS.FATAL with @code,
 * KITE_INT_FATAL and a DEVICE_FATAL event on EQ0 (unless silent); from
 * then on no command, doorbell or frame is processed (kite_ready()) until
 * a reset. A device already fatal or not ready ignores it.
 */
static void kite_fatal(KiteState *s, uint8_t code, bool silent)
{
    if (!kite_ready(s)) {
        return;
    }
    trace_kite_fatal(code, silent);
    if (!silent) {
        kite_async_event(s, KITE_EQE_DEVICE_FATAL, 0, code);
    }
    s->status |= KITE_STATUS_FATAL | FIELD_PREP(KITE_STATUS_FATAL_CODE, code);
    if (!silent) {
        kite_set_icr(s, KITE_INT_FATAL);
    }
}

static void kite_set_fault_fatal(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    uint8_t code;

    if (!visit_type_uint8(v, name, &code, errp)) {
        return;
    }
    if (!code) {
        error_setg(errp, "fault-fatal: the fatal code must not be 0");
        return;
    }
    kite_fatal(s, code, s->fault_fatal_silent);
}

static void kite_get_fault_fatal(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    uint8_t code = (s->status & KITE_STATUS_FATAL) ?
                   FIELD_GET(KITE_STATUS_FATAL_CODE, s->status) : 0;

    visit_type_uint8(v, name, &code, errp);
}

static bool kite_get_fault_fatal_silent(Object *obj, Error **errp)
{
    return KITE(obj)->fault_fatal_silent;
}

static void kite_set_fault_fatal_silent(Object *obj, bool value, Error **errp)
{
    KITE(obj)->fault_fatal_silent = value;
}

void kite_link_changed(KiteState *s, bool up)
{
    s->link_up = up;
    kite_set_icr(s, KITE_INT_LINK);
    kite_async_event(s, up ? KITE_EQE_PORT_ACTIVE : KITE_EQE_PORT_DOWN, 1, 0);
}

/* Registers */

/*
 * Everything the guest did wrong goes through here: counted (bad-writes),
 * traced (kite_err_guest) and logged (-d guest_errors). The message is
 * only formatted when the trace event or the log wants it.
 */
void kite_guest_error(KiteState *s, const char *fmt, ...)
{
    const char *id = DEVICE(s)->id ? DEVICE(s)->id : "(no id)";
    va_list ap;
    char *msg;

    s->bad_writes++;
    if (!qemu_loglevel_mask(LOG_GUEST_ERROR) &&
        !trace_event_get_state_backends(TRACE_KITE_ERR_GUEST)) {
        return;
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    trace_kite_err_guest(id, msg);
    qemu_log_mask(LOG_GUEST_ERROR, "kite %s: %s\n", id, msg);
    g_free(msg);
}

/*
 * A DMA of the device failed: every such failure is counted here
 * (KITE_STAT_DMA_ERRORS) and traced with what was being accessed.
 */
void kite_dma_error(KiteState *s, const char *what, uint64_t addr,
                    uint64_t len, bool write)
{
    s->stats[KITE_STAT_DMA_ERRORS]++;
    trace_kite_err_dma(what, addr, len, write);
}

static uint32_t kite_global_read(KiteState *s, hwaddr addr)
{
    const uint8_t *mac = s->conf.macaddr.a;
    bool ready = s->status & KITE_STATUS_READY;
    uint32_t val;

    switch (addr) {
    case KITE_REG_ID:
        return KITE_ID_MAGIC;
    case KITE_REG_HW_REV:
        return kite_fault_reg(s, addr, kite_hw_rev());
    case KITE_REG_FW_VER:
        /* Only valid while the firmware runs. */
        return ready ? s->fw_ver : 0;
    case KITE_REG_CAPS:
        return FIELD_PREP(KITE_CAPS_NUM_VECTORS, KITE_MAX_VECTORS) |
               FIELD_PREP(KITE_CAPS_NUM_QUEUES, KITE_ETH_MAX_QUEUES) |
               KITE_CAPS_RDMA | KITE_CAPS_RTC;
    case KITE_REG_STATUS:
        return kite_fault_reg(s, addr, s->status |
                              (s->link_up ? KITE_STATUS_LINK_UP : 0));
    case KITE_REG_MAC_LO:
        return (uint32_t)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5];
    case KITE_REG_MAC_HI:
        return mac[0] << 8 | mac[1];
    case KITE_REG_SERIAL_LO:
        return (uint32_t)s->serial;
    case KITE_REG_SERIAL_HI:
        return (uint32_t)(s->serial >> 32);
    case KITE_REG_ICR:
        val = s->icr;
        s->icr = 0;
        return val;
    case KITE_REG_IMR:
        return s->imr;
    case KITE_REG_RTC_LO:
        return (uint32_t)kite_rtc_at(s, kite_clock_ns());
    case KITE_REG_RTC_HI:
        return kite_rtc_at(s, kite_clock_ns()) >> 32;
    case KITE_REG_CTRL:
    case KITE_REG_INTR_TEST:
    case KITE_REG_RTC_ARG_LO:
    case KITE_REG_RTC_ARG_HI:
    case KITE_REG_RTC_CMD:
        /* Write-only. */
        return 0;
    default:
        return 0;
    }
}

static void kite_intr_test(KiteState *s, uint32_t val)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    unsigned vector = FIELD_GET(KITE_INTR_TEST_VECTOR, val);

    if (!(s->status & KITE_STATUS_READY)) {
        kite_guest_error(s, "INTR_TEST write 0x%x while not ready", val);
        return;
    }
    if (vector >= KITE_MAX_VECTORS) {
        kite_guest_error(s, "INTR_TEST: vector %u out of range", vector);
        return;
    }
    if (!msix_enabled(pdev)) {
        kite_guest_error(s, "INTR_TEST: vector %u with MSI-X disabled",
                         vector);
        return;
    }
    kite_raise_vector(s, vector);
}

static void kite_global_write(KiteState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case KITE_REG_CTRL:
        if (val & ~KITE_CTRL_RESET) {
            kite_guest_error(s, "CTRL: reserved bits set in 0x%x", val);
        }
        if (val & KITE_CTRL_RESET) {
            kite_reset_start(s);
        }
        break;
    case KITE_REG_INTR_TEST:
        if (val & ~KITE_INTR_TEST_VECTOR) {
            kite_guest_error(s, "INTR_TEST: reserved bits set in 0x%x", val);
            break;
        }
        kite_intr_test(s, val);
        break;
    case KITE_REG_IMR:
        if (val & ~(KITE_INT_LINK | KITE_INT_FATAL)) {
            kite_guest_error(s, "IMR: reserved bits set in 0x%x", val);
        }
        s->imr = val & (KITE_INT_LINK | KITE_INT_FATAL);
        break;
    case KITE_REG_RTC_ARG_LO:
        s->rtc_arg = deposit64(s->rtc_arg, 0, 32, val);
        break;
    case KITE_REG_RTC_ARG_HI:
        s->rtc_arg = deposit64(s->rtc_arg, 32, 32, val);
        break;
    case KITE_REG_RTC_CMD:
        kite_rtc_cmd(s, val);
        break;
    case KITE_REG_ID:
    case KITE_REG_HW_REV:
    case KITE_REG_FW_VER:
    case KITE_REG_CAPS:
    case KITE_REG_STATUS:
    case KITE_REG_MAC_LO:
    case KITE_REG_MAC_HI:
    case KITE_REG_SERIAL_LO:
    case KITE_REG_SERIAL_HI:
    case KITE_REG_ICR:
    case KITE_REG_RTC_LO:
    case KITE_REG_RTC_HI:
        kite_guest_error(s, "write 0x%x to read-only register 0x%" HWADDR_PRIx,
                         val, addr);
        break;
    default:
        kite_guest_error(s, "write 0x%x to unknown register 0x%" HWADDR_PRIx,
                         val, addr);
        break;
    }
}

/* BAR0 register block: global, Ethernet (kite_eth.c), RDMA (kite_rdma.c). */
#define KITE_ETH_REGS_START     0x100
#define KITE_ETH_REGS_END       0x400

static uint64_t kite_reg_read(void *opaque, hwaddr addr, unsigned size)
{
    KiteState *s = opaque;
    uint32_t val = 0;

    if (addr < KITE_ETH_REGS_START) {
        val = kite_global_read(s, addr);
    } else if (addr < KITE_ETH_REGS_END) {
        val = kite_eth_read(s, addr);
    } else if (addr >= KITE_RDMA_REGS_OFFSET &&
               addr < KITE_RDMA_REGS_OFFSET + KITE_RDMA_REGS_SIZE) {
        val = kite_rdma_read(s, addr - KITE_RDMA_REGS_OFFSET);
    }
    trace_kite_mmio_read(addr, val);
    return val;
}

static void kite_reg_write(void *opaque, hwaddr addr, uint64_t data,
                           unsigned size)
{
    KiteState *s = opaque;
    uint32_t val = data;

    trace_kite_mmio_write(addr, val);
    if (addr < KITE_ETH_REGS_START) {
        kite_global_write(s, addr, val);
    } else if (addr < KITE_ETH_REGS_END) {
        kite_eth_write(s, addr, val);
    } else if (addr >= KITE_RDMA_REGS_OFFSET &&
               addr < KITE_RDMA_REGS_OFFSET + KITE_RDMA_REGS_SIZE) {
        kite_rdma_write(s, addr - KITE_RDMA_REGS_OFFSET, val);
    } else {
        kite_guest_error(s, "write 0x%x to unknown register 0x%" HWADDR_PRIx,
                         val, addr);
    }
}

static const MemoryRegionOps kite_reg_ops = {
    .read = kite_reg_read,
    .write = kite_reg_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* PCI */

static void kite_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                              int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    pcie_aer_write_config(pdev, addr, val, len);
}

static void kite_realize(PCIDevice *pdev, Error **errp)
{
    ERRP_GUARD();
    KiteState *s = KITE(pdev);
    int ret;
    int i;

    if (s->reset_delay_us > KITE_RESET_TIMEOUT_MS * 1000) {
        warn_report("kite: reset-delay-us %u exceeds the driver timeout "
                    "of %u ms", s->reset_delay_us, KITE_RESET_TIMEOUT_MS);
    }

    if (!s->cmd_timeout_ms || s->cmd_timeout_ms > KITE_CMD_TIMEOUT_MS) {
        error_setg(errp, "kite: cmd-timeout-ms must be 1..%lu",
                   (unsigned long)KITE_CMD_TIMEOUT_MS);
        return;
    }

    memory_region_init(&s->bar0, OBJECT(s), "kite-bar0", KITE_BAR_REGS_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &kite_reg_ops, s, "kite-regs",
                          KITE_REGS_SIZE);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pdev, KITE_BAR_REGS,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);
    memory_region_init_io(&s->db, OBJECT(s), &kite_db_ops, s, "kite-db",
                          KITE_BAR_DB_SIZE);
    pci_register_bar(pdev, KITE_BAR_DB,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);
    memory_region_init_ram(&s->dm, OBJECT(s), "kite-dm", KITE_BAR_DM_SIZE,
                           errp);
    if (*errp) {
        return;
    }
    s->dm_ptr = memory_region_get_ram_ptr(&s->dm);
    pci_register_bar(pdev, KITE_BAR_DM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->dm);

    ret = pcie_endpoint_cap_init(pdev, KITE_PCIE_CAP_OFFSET);
    if (ret < 0) {
        error_setg(errp, "kite: PCIe capability init failed");
        return;
    }
    pcie_cap_flr_init(pdev);

    ret = msix_init(pdev, KITE_MAX_VECTORS,
                    &s->bar0, KITE_BAR_REGS, KITE_MSIX_TABLE_OFFSET,
                    &s->bar0, KITE_BAR_REGS, KITE_MSIX_PBA_OFFSET,
                    KITE_MSIX_CAP_OFFSET, errp);
    if (ret < 0) {
        return;
    }
    /* msix_notify() ignores vectors that are not in use. */
    for (i = 0; i < KITE_MAX_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }

    ret = pcie_aer_init(pdev, PCI_ERR_VER, KITE_AER_OFFSET, PCI_ERR_SIZEOF,
                        errp);
    if (ret < 0) {
        goto err_msix;
    }
    pcie_dev_ser_num_init(pdev, KITE_DSN_OFFSET, s->serial);

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    kite_eth_realize(s, errp);
    if (*errp) {
        goto err_aer;
    }
    s->link_up = s->eth.nic && !qemu_get_queue(s->eth.nic)->link_down;
    kite_rdma_init(s);

    s->reset_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_reset_done, s);
    kite_reset_start(s);
    return;

err_aer:
    pcie_aer_exit(pdev);
err_msix:
    for (i = 0; i < KITE_MAX_VECTORS; i++) {
        msix_vector_unuse(pdev, i);
    }
    msix_uninit(pdev, &s->bar0, &s->bar0);
}

static void kite_exit(PCIDevice *pdev)
{
    KiteState *s = KITE(pdev);
    int i;

    if (s->reset_timer) {
        timer_free(s->reset_timer);
        s->reset_timer = NULL;
    }
    kite_rdma_exit(s);
    kite_eth_exit(s);
    pcie_aer_exit(pdev);
    for (i = 0; i < KITE_MAX_VECTORS; i++) {
        msix_vector_unuse(pdev, i);
    }
    msix_uninit(pdev, &s->bar0, &s->bar0);
}

static void kite_instance_init(Object *obj)
{
    KiteState *s = KITE(obj);

    object_property_add_uint32_ptr(obj, "bad-writes", &s->bad_writes,
                                   OBJ_PROP_FLAG_READ);
    /* Fault injection: make the device fatal (prm.rst, "Fatal errors"). */
    object_property_add(obj, "fault-fatal", "uint8", kite_get_fault_fatal,
                        kite_set_fault_fatal, NULL, NULL);
    object_property_add_bool(obj, "fault-fatal-silent",
                             kite_get_fault_fatal_silent,
                             kite_set_fault_fatal_silent);
    kite_rdma_instance_init(s);
}

static Property kite_properties[] = {
    DEFINE_NIC_PROPERTIES(KiteState, conf),
    DEFINE_PROP_UINT32("fw-ver", KiteState, fw_ver, KITE_DEFAULT_FW_VER),
    DEFINE_PROP_UINT64("serial", KiteState, serial, KITE_DEFAULT_SERIAL),
    DEFINE_PROP_UINT32("reset-delay-us", KiteState, reset_delay_us,
                       KITE_DEFAULT_RESET_US),
    DEFINE_PROP_UINT32("cmd-timeout-ms", KiteState, cmd_timeout_ms,
                       KITE_DEFAULT_CMD_TIMEOUT_MS),
    DEFINE_PROP_END_OF_LIST(),
};

static const VMStateDescription kite_vmstate = {
    .name = TYPE_KITE,
    .unmigratable = 1,
};

static void kite_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = kite_realize;
    pc->exit = kite_exit;
    pc->config_write = kite_write_config;
    pc->vendor_id = PCI_VENDOR_ID_KITE;
    pc->device_id = PCI_DEVICE_ID_KITE_NIC;
    pc->subsystem_vendor_id = PCI_VENDOR_ID_KITE;
    pc->subsystem_id = PCI_DEVICE_ID_KITE_NIC;
    pc->revision = 1;
    pc->class_id = PCI_CLASS_NETWORK_ETHERNET;

    dc->desc = "Kite RoCEv2 Ethernet NIC";
    dc->reset = kite_qdev_reset;
    dc->vmsd = &kite_vmstate;
    device_class_set_props(dc, kite_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo kite_info = {
    .name = TYPE_KITE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(KiteState),
    .instance_init = kite_instance_init,
    .class_init = kite_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void kite_register_types(void)
{
    type_register_static(&kite_info);
}

type_init(kite_register_types)
