#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a benchmark's host CPU time went, run by run.

usage: qemu-profile.py [--top N] FIGDIR VMLOGDIR [VMLOGDIR...]

FIGDIR is a bench-pair figures directory (per run N: N.start and N written
at its start and end, so their modification times are the run's window by
the host's clock; N.pkts "SENT RECEIVED", kite0's RoCE packets in it; N
"KEY<TAB>FIGURES"). Each VMLOGDIR is a VM's log directory with the
perf.data that KITE_QEMU_PERF=1 recorded (real-time time stamps, QEMU run
with debug-threads=on). For each run and each VM it prints the CPU seconds
of the vCPU thread ("CPU 0/TCG": the guest, translated) and of the main
loop thread (the device model, the net backend, the main loop), the main
loop's time per RoCE packet and per message, where the main loop's time
went by category, and its top symbols.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

# Main-loop categories, first match wins: (name, dso regex, symbol regex).
CATEGORIES = [
    ("ICRC (zlib crc32)", r"libz", r""),
    ("model: RC transport", r"qemu", r"^kite_(rc|uc)_"),
    ("model: frames, engine", r"qemu", r"^kite_(roce|engine|rx|ud|sq|rq|csum)"),
    ("model: queues, CQ/EQ, PBL, MR", r"qemu", r"^kite_"),
    ("DMA and guest memory", r"qemu", r"^(address_space|flatview|memory_region|qemu_ram|"
     r"pci_dma|dma_|subpage|address_space_translate|qemu_map_ram|ram_block)"),
    ("copies (libc memcpy/memset)", r"libc", r"(memcpy|memmove|memset|memcmp)"),
    ("net backend (QEMU)", r"qemu", r"^(qemu_send_packet|qemu_net|qemu_deliver|net_|"
     r"nc_|filter|qemu_flush|qemu_can_send|qemu_receive)"),
    ("main loop, BHs, timers", r"qemu|glib|libc", r"^(aio_|qemu_bh|timerlist|timer_|"
     r"qemu_clock|g_main|g_source|g_poll|ppoll|main_loop|os_host_main_loop|"
     r"qemu_poll|qemu_lockcnt|qemu_mutex|qemu_event|event_notifier|g_mutex|"
     r"pthread_mutex|__pthread|cpu_get_clock|cpu_get_ticks|icount)"),
    ("kernel: network syscalls", r"kernel", r"(udp|sock|skb|ip_|__ip|inet|net_|"
     r"__dev|dev_|sendmsg|recvmsg|sendto|recvfrom|neigh|__netif|netif|nf_|"
     r"_copy_to_iter|_copy_from_iter|copy_user|raw_|fib_|csum)"),
    ("kernel: poll, eventfd, scheduler", r"kernel", r""),
    ("9p, virtio (other devices)", r"qemu", r"^(v9fs|virtio|vring|virtqueue|local_)"),
]


def windows(figdir):
    """[(index, key, start, end, packets)] from the figure files."""
    runs = []
    for name in os.listdir(figdir):
        if not name.endswith(".start"):
            continue
        n = name[:-len(".start")]
        end = os.path.join(figdir, n)
        if not n.isdigit() or not os.path.exists(end):
            continue
        with open(end) as f:
            key = f.readline().split("\t")[0]
        pkts = 0
        try:
            with open(end + ".pkts") as f:
                pkts = sum(int(x) for x in f.read().split())
        except (OSError, ValueError):
            pass
        runs.append((int(n), key, os.path.getmtime(os.path.join(figdir, name)),
                     os.path.getmtime(end), pkts))
    return sorted(runs)


def messages(figdir, n):
    """Messages of perftest bandwidth run @n (its third figure), or None."""
    try:
        with open(os.path.join(figdir, str(n))) as f:
            key, v = f.readline().split("\t")
        v = v.split()
        if "_bw|" not in key or key.startswith("nvme-") or len(v) < 3:
            return None
        return int(float(v[2]))
    except (OSError, IndexError, ValueError):
        return None


def samples(perfdata):
    """[(time, thread, dso, sym)] of a perf.data."""
    out = subprocess.run(["perf", "script", "-i", perfdata, "-F", "comm,tid,time,ip,sym,dso",
                          "--ns"], capture_output=True, text=True)
    res = []
    pat = re.compile(r"^\s*(.+?)\s+(\d+)\s+(\d+\.\d+):\s+[0-9a-f]+\s+(.*?)\s*\((.*)\)\s*$")
    for line in out.stdout.splitlines():
        m = pat.match(line)
        if not m:
            continue
        comm, _tid, t, sym, dso = m.groups()
        sym = sym.split("+")[0]
        if sym == "[unknown]":
            sym = ""
        res.append((float(t), comm, os.path.basename(dso), sym))
    return res


def category(dso, sym):
    if dso.startswith("[kernel"):
        dso = "kernel"
    for name, dre, sre in CATEGORIES:
        if re.search(dre, dso) and re.search(sre, sym):
            return name
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--freq", type=int, default=int(os.environ.get("KITE_QEMU_PERF_FREQ", 499)))
    ap.add_argument("figdir")
    ap.add_argument("vmdirs", nargs="+")
    a = ap.parse_args()
    runs = windows(a.figdir)
    if not runs:
        print("no runs with start and end times in %s" % a.figdir)
        return 1
    vms = []
    for d in a.vmdirs:
        pd = os.path.join(d, "perf.data")
        if os.path.exists(pd):
            vms.append((os.path.basename(d.rstrip("/")), samples(pd)))
    for n, key, t0, t1, pkts in runs:
        secs = t1 - t0
        msgs = messages(a.figdir, n)
        print("== run %d: %s, %.1f s, %d RoCE packets at VM a's kite0%s" % (
            n, key, secs, pkts, ", %d messages" % msgs if msgs else ""))
        for vm, smp in vms:
            inw = [s for s in smp if t0 <= s[0] <= t1]
            vcpu = [s for s in inw if "TCG" in s[1] or s[1].startswith("CPU ")]
            main_ = [s for s in inw if not ("TCG" in s[1] or s[1].startswith("CPU "))]
            cv, cm = len(vcpu) / a.freq, len(main_) / a.freq
            line = "  %-14s vCPU %6.1f s (%3.0f%%)  main loop and others %6.1f s (%3.0f%%)" % (
                vm, cv, 100 * cv / secs if secs else 0, cm, 100 * cm / secs if secs else 0)
            if pkts and cm:
                line += "  %.1f us/packet" % (cm * 1e6 / pkts)
            if msgs and cm:
                line += "  %.1f us/message" % (cm * 1e6 / msgs)
            print(line)
            if not main_:
                continue
            cats = collections.Counter(category(s[2], s[3]) for s in main_)
            print("    main loop: " + ", ".join(
                "%s %.0f%%" % (c, 100.0 * k / len(main_)) for c, k in cats.most_common()))
            syms = collections.Counter(s[3] or "[%s]" % s[2] for s in main_)
            print("    top: " + ", ".join(
                "%s %.1f%%" % (sym, 100.0 * k / len(main_)) for sym, k in syms.most_common(a.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
