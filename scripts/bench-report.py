#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The report of scripts/bench-pair.sh: text tables and a plot.

usage: bench-report.py [--secs N] [--restarts N] FIGDIR OUTDIR

FIGDIR holds one file per run, named by its index, with one line
"KEY<TAB>FIGURES": KEY is PAIRING|TEST|SIZE (scripts/guest/bench-pair.sh),
FIGURES the run's numbers, "failed", or "lost: ..." (the VM crashed). The
tables go to standard output; OUTDIR gets sweep.dat (the size sweep) and,
when gnuplot is installed, bench-pair.png (bandwidth and latency against
message size for Kite<->Kite, rxe<->rxe and Kite->rxe).
"""
import argparse
import os
import shutil
import subprocess
import sys

PAIRS = ["Kite<->Kite", "rxe<->rxe", "Kite->rxe", "rxe->Kite"]
SWEEP_PAIRS = ["Kite<->Kite", "rxe<->rxe", "Kite->rxe"]


def load(figdir):
    """{(pairing, test, size): [figures] or the string why not}."""
    figs = {}
    for name in sorted(os.listdir(figdir), key=lambda n: int(n) if n.isdigit() else -1):
        if not name.isdigit():
            continue
        with open(os.path.join(figdir, name)) as f:
            line = f.readline().rstrip("\n")
        key, _, val = line.partition("\t")
        parts = key.split("|")
        if len(parts) != 3:
            continue
        pair, test, size = parts
        try:
            nums = [float(x) for x in val.split()]
            figs[(pair, test, int(size))] = nums if nums else "failed"
        except ValueError:
            figs[(pair, test, int(size))] = val or "failed"
    return figs


def fig(figs, key, i, fmt="%.2f"):
    """Figure @i of run @key, formatted, or why it is missing."""
    v = figs.get(key)
    if v is None:
        return "-"
    if isinstance(v, str):
        return v.split(":")[0] if v.startswith(("lost", "skipped")) else "failed"
    if i >= len(v):
        return "-"
    return fmt % v[i]


def num(figs, key, i):
    v = figs.get(key)
    if isinstance(v, list) and i < len(v):
        return v[i]
    return None


def ratio(a, b, invert=False):
    if a is None or b is None or a <= 0 or b <= 0:
        return "-"
    return "%.2fx" % ((b / a) if invert else (a / b))


def size_name(n):
    if n >= 1048576:
        return "%dM" % (n // 1048576)
    if n >= 1024:
        return "%dK" % (n // 1024)
    return "%dB" % n


def report(figs, secs, restarts, mtu):
    out = []
    w = out.append
    w("== Kite and rdma_rxe side by side (QEMU TCG, 1 vCPU per VM, both VMs on one")
    w("   host; figures, not assertions; main runs %d s each; netdev MTU %d)" % (secs, mtu))
    if restarts:
        w("   %d VM crash(es) during the run: the runs marked 'lost' were not measured" % restarts)
    w("")
    w("-- perftest: bandwidth (64 KiB, MB/s) and message rate (64 B, Mmsg/s)")
    w("  %-13s %14s %14s %14s" % ("pairing", "write_bw", "read_bw", "send_bw"))
    for p in PAIRS:
        w("  %-13s %14s %14s %14s" % (p, fig(figs, (p, "write_bw", 65536), 0),
                                       fig(figs, (p, "read_bw", 65536), 0),
                                       fig(figs, (p, "send_bw", 64), 1, "%.4f")))
    k, r = "Kite<->Kite", "rxe<->rxe"
    w("  %-13s %14s %14s %14s" % (
        "Kite/rxe",
        ratio(num(figs, (k, "write_bw", 65536), 0), num(figs, (r, "write_bw", 65536), 0)),
        ratio(num(figs, (k, "read_bw", 65536), 0), num(figs, (r, "read_bw", 65536), 0)),
        ratio(num(figs, (k, "send_bw", 64), 1), num(figs, (r, "send_bw", 64), 1))))
    w("")
    w("-- perftest: ib_write_lat, 64 bytes, usec")
    w("  %-13s %10s %10s %10s" % ("pairing", "typical", "average", "99%"))
    for p in PAIRS:
        key = (p, "write_lat", 64)
        w("  %-13s %10s %10s %10s" % (p, fig(figs, key, 0), fig(figs, key, 1), fig(figs, key, 2)))
    w("  %-13s %10s   (Kite's typical latency as a fraction of rxe's)" % (
        "Kite/rxe", ratio(num(figs, (r, "write_lat", 64), 0),
                          num(figs, (k, "write_lat", 64), 0), invert=True)))
    w("")
    sizes = sorted({s for (p, t, s) in figs if t == "sweep_bw"} |
                   {s for (p, t, s) in figs if t == "sweep_lat"})
    if sizes:
        w("-- size sweep: ib_write_bw (MB/s) and ib_write_lat (typical usec)")
        w("  %-6s" % "size" + "".join(" %13s %9s" % (p, "lat") for p in SWEEP_PAIRS))
        for s in sizes:
            w("  %-6s" % size_name(s) + "".join(
                " %13s %9s" % (fig(figs, (p, "sweep_bw", s), 0), fig(figs, (p, "sweep_lat", s), 0))
                for p in SWEEP_PAIRS))
        w("")
    w("-- NVMe over RDMA (fio, libaio, iodepth 16, O_DIRECT, null_blk target)")
    w("  %-6s %14s %14s %14s %14s %14s" % ("over", "4K rand rd IOPS", "4K rd MB/s",
                                           "128K rd MB/s", "4K rand wr IOPS", "128K wr MB/s"))
    for t in ("Kite", "rxe"):
        n = "nvme-" + t
        w("  %-6s %14s %14s %14s %14s %14s" % (
            t, fig(figs, (n, "randread", 4096), 0, "%.0f"),
            fig(figs, (n, "randread", 4096), 1, "%.1f"),
            fig(figs, (n, "read", 131072), 1, "%.1f"),
            fig(figs, (n, "randwrite", 4096), 0, "%.0f"),
            fig(figs, (n, "write", 131072), 1, "%.1f")))
    w("")
    w("-- interrupts at load (the 4 KiB random read run)")
    kr = figs.get(("nvme-Kite", "randread", 4096))
    if isinstance(kr, list) and len(kr) >= 5:
        ios, irqs, cqes = kr[2], kr[3], kr[4]
        w("  Kite host NIC: %d interrupts, %d CQEs, %d I/Os: %s per CQE, %s per I/O" % (
            irqs, cqes, ios, "%.3f" % (irqs / cqes) if cqes else "-",
            "%.3f" % (irqs / ios) if ios else "-"))
    else:
        w("  Kite host NIC: n/a")
    rr = figs.get(("nvme-rxe", "randread", 4096))
    if isinstance(rr, list) and len(rr) >= 4:
        w("  rxe (virtio-net) host NIC: %d interrupts, %d I/Os: %s per I/O" % (
            rr[3], rr[2], "%.3f" % (rr[3] / rr[2]) if rr[2] else "-"))
    else:
        w("  rxe (virtio-net) host NIC: n/a")
    depth_table(figs, w)
    bad = [(k, v) for k, v in sorted(figs.items()) if isinstance(v, str)]
    if bad:
        w("")
        w("-- runs without figures")
        for (p, t, s), v in bad:
            w("  %s %s %s: %s" % (p, t, size_name(s), v))
    return "\n".join(out), sizes


def randread_test(depth):
    """The test name of 4 KiB random reads at queue @depth (16: the main run)."""
    return "randread" if depth == 16 else "randread_qd%d" % depth


def depth_table(figs, w):
    """4 KiB random read IOPS by queue depth, polled, and each transport's peak."""
    depths = {int(tst[len("randread_qd"):]) for (p, tst, s) in figs
              if p.startswith("nvme-") and tst.startswith("randread_qd")}
    poll = any(tst == "randread_poll" for (p, tst, s) in figs)
    if not depths and not poll:
        return
    rows = [(str(d), randread_test(d)) for d in sorted(depths | {16})]
    if poll:
        rows.append(("16 poll", "randread_poll"))
    w("")
    w("-- NVMe over RDMA: 4 KiB random reads by queue depth (IOPS; interrupts per")
    w("   CQE on the host's Kite NIC; 'poll': io_uring hipri on a poll queue; the")
    w("   peak is each transport's best)")
    w("  %-8s %10s %10s %10s %10s" % ("depth", "Kite", "irq/CQE", "rxe", "Kite/rxe"))
    peak = {}
    for label, tst in rows:
        kk, rk = ("nvme-Kite", tst, 4096), ("nvme-rxe", tst, 4096)
        kv, rv = num(figs, kk, 0), num(figs, rk, 0)
        irqs, cqes = num(figs, kk, 3), num(figs, kk, 4)
        for t, v in (("Kite", kv), ("rxe", rv)):
            if v is not None and v > peak.get(t, (0, ""))[0]:
                peak[t] = (v, label)
        w("  %-8s %10s %10s %10s %10s" % (
            label, fig(figs, kk, 0, "%.0f"),
            "%.3f" % (irqs / cqes) if irqs is not None and cqes else "-",
            fig(figs, rk, 0, "%.0f"), ratio(kv, rv)))
    if "Kite" in peak and "rxe" in peak:
        w("  peak: Kite %.0f (%s), rxe %.0f (%s): %s" % (
            peak["Kite"][0], peak["Kite"][1], peak["rxe"][0], peak["rxe"][1],
            ratio(peak["Kite"][0], peak["rxe"][0])))


def plot(figs, sizes, outdir):
    dat = os.path.join(outdir, "sweep.dat")
    with open(dat, "w") as f:
        f.write("# size" + "".join(" bw:%s lat:%s" % (p, p) for p in SWEEP_PAIRS) + "\n")
        for s in sizes:
            cols = []
            for p in SWEEP_PAIRS:
                for t in ("sweep_bw", "sweep_lat"):
                    v = num(figs, (p, t, s), 0)
                    cols.append("-" if v is None else "%g" % v)
            f.write("%d %s\n" % (s, " ".join(cols)))
    png = os.path.join(outdir, "bench-pair.png")
    if os.path.exists(png):
        os.unlink(png)
    if not sizes:
        return "no size sweep measured: no plot"
    if not shutil.which("gnuplot"):
        return "gnuplot not installed: no plot (the figures are in %s)" % dat
    titles = " ".join(SWEEP_PAIRS)
    xtics = ", ".join('"%s" %d' % (size_name(n), n) for n in sizes)
    script = """
set terminal pngcairo noenhanced size 1400,560 font ",10"
set output '%s'
set datafile missing '-'
set logscale x 2
set xtics (%s)
set grid
set key top left
titles = "%s"
set multiplot layout 1,2 title "Kite and rdma_rxe: ib_write_bw and ib_write_lat by message size (QEMU TCG)"
set title 'bandwidth'
set ylabel 'MB/s'
set logscale y
plot for [i=1:%d] '%s' using 1:(column(2*i)) with linespoints title word(titles, i)
set title 'latency (typical)'
set ylabel 'usec'
plot for [i=1:%d] '%s' using 1:(column(2*i+1)) with linespoints title word(titles, i)
unset multiplot
""" % (png, xtics, titles, len(SWEEP_PAIRS), dat, len(SWEEP_PAIRS), dat)
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode != 0 or not os.path.exists(png):
        return "gnuplot failed: %s" % r.stderr.strip()
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--restarts", type=int, default=0)
    ap.add_argument("--mtu", type=int, default=9000)
    ap.add_argument("figdir")
    ap.add_argument("outdir")
    a = ap.parse_args()
    figs = load(a.figdir)
    text, sizes = report(figs, a.secs, a.restarts, a.mtu)
    print(text)
    os.makedirs(a.outdir, exist_ok=True)
    why = plot(figs, sizes, a.outdir)
    if why:
        print("\n(%s)" % why)
    return 0


if __name__ == "__main__":
    sys.exit(main())
