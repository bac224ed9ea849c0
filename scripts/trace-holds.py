#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a completion waits for its interrupt, from a model's trace.

usage: trace-holds.py QEMU_LOG [QEMU_LOG...]

Each QEMU_LOG is a VM's qemu.log written with time stamps by
KITE_QEMU_TRACE (scripts/vm.sh), with at least these events:

    KITE_QEMU_TRACE='kite_db,kite_cqe_write,kite_irq_msix,kite_cq_arm,kite_cq_fire' \\
        KITE_BENCH_ONLY='nvme-Kite.randread' scripts/bench-pair.sh 15
    scripts/trace-holds.py ~/.cache/kite/logs/bench-pair-[ab]/qemu.log

For the middle 60% of the log's CQEs (the load, without its start and
end) it prints the rates of CQEs by opcode, doorbells by type and
interrupts, then three delays as percentiles:

  - hold: from a CQ's completion event (kite_cq_fire) to the interrupt
    that reports it, the EQ moderation's hold;
  - quiet: from the last CQE written during a hold to the interrupt;
  - reaction: from an interrupt to the guest's next SQ doorbell.

Figures, not assertions (docs/performance.rst, "NVMe over RDMA under TCG").
"""
import collections
import re
import sys

LINE = re.compile(r"\d+@([\d.]+):(kite_\w+) (.*)")
DB_SQ = 1


def load(path):
    """The log's trace events as (seconds, event, arguments), in time order."""
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                events.append((float(m.group(1)), m.group(2), m.group(3)))
    events.sort()
    return events


def load_window(events):
    """The events between the 20th and 80th percentile of the CQE times."""
    cqes = [e[0] for e in events if e[1] == "kite_cqe_write"]
    if len(cqes) < 10:
        return []
    t0, t1 = cqes[len(cqes) // 5], cqes[len(cqes) * 4 // 5]
    return [e for e in events if t0 <= e[0] <= t1]


def field(args, name):
    m = re.search(name + r" (\w+)", args)
    return int(m.group(1), 0) if m else None


def pct(values):
    if not values:
        return "-"
    v = sorted(values)
    n = len(v)
    return "n %6d  p10 %5.0f  p50 %5.0f  p90 %6.0f  mean %5.0f us" % (
        n, v[n // 10] * 1e6, v[n // 2] * 1e6, v[n * 9 // 10] * 1e6,
        sum(v) / n * 1e6)


def report(path):
    events = load_window(load(path))
    print("== %s" % path)
    if not events:
        print("  no load: fewer than 10 CQEs traced")
        return
    secs = events[-1][0] - events[0][0] or 1.0
    counts = collections.Counter()
    holds, quiet, reaction = [], [], []
    fire = last_cqe = last_irq = None
    want_db = False
    for t, ev, args in events:
        key = ev
        if ev == "kite_cqe_write":
            key += " opcode %#x" % field(args, "opcode")
            last_cqe = t
        elif ev == "kite_db":
            db_type = field(args, "type")
            key += " type %d" % db_type
            if db_type == DB_SQ and want_db:
                reaction.append(t - last_irq)
                want_db = False
        elif ev == "kite_cq_fire" and fire is None:
            fire = t
            last_cqe = None
        elif ev == "kite_irq_msix":
            if fire is not None:
                holds.append(t - fire)
                quiet.append(t - (last_cqe if last_cqe is not None else fire))
                fire = None
            last_irq = t
            want_db = True
        counts[key] += 1
    print("  %.1f s of load" % secs)
    for key, n in sorted(counts.items()):
        print("  %-28s %8d  %8.0f/s" % (key, n, n / secs))
    print("  hold      %s" % pct(holds))
    print("  quiet     %s" % pct(quiet))
    print("  reaction  %s" % pct(reaction))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
