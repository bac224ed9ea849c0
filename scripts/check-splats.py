#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Find the kernel's error reports ("splats") in a kernel log.

Reads kernel logs (dmesg output, a kmemleak report) and cuts them into
reports: WARNINGs, BUGs, oopses, KASAN/UBSAN/lockdep/DMA-API/debugobjects
reports, hung tasks, soft lockups, kmemleak's unreferenced objects. Each
report is compared with the list of known upstream issues
(.known-kernel-issues at the top of the repository): an entry matches a
report when its `message` regex matches one of the report's first lines
and its `site` regex matches a line of the report (its call trace).

Every report is printed: known ones as "# known upstream issue ID: ...",
the others in full. Exit status: 0 when every report is a known issue (or
there is none), 1 otherwise, 2 on a bad known-issues file.

Failures injected on purpose (failslab, fail_page_alloc: "FAULT_INJECTION:
forcing a failure", with the allocator's own "page allocation failure"
report that follows) are not splats; --injected prints how many there were
and at which call sites of the Kite modules (the first kite_en/kite_ib
frame of each stack).

usage: check-splats.py [--known FILE] [--quiet-known] [--injected] [LOG...]
       (no LOG: standard input)
       check-splats.py --selftest (TAP)
"""
import argparse
import configparser
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KNOWN = os.path.join(ROOT, ".known-kernel-issues")

# "[  12.345678] " and "[    T123] " prefixes of dmesg lines.
PREFIX = re.compile(r"^(?:<\d+>)?(?:\[[ \d.]+\]\s?)?(?:\[\s*[TC]\d+\]\s?)?")
# Lines that start a report wherever they appear.
INJECTED = re.compile(r"^FAULT_INJECTION: forcing a failure")
ALLOC_FAILURE = re.compile(r": page allocation failure: ")
# LOOSE lines that belong to an injection's stack dump (verbose=2).
INJECTED_STACK = re.compile(r"^Call Trace:$")
KITE_FRAME = re.compile(r"^\s*(?:\? )?([\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+ \[(kite_\w+)\]")
START = re.compile(
    r"^FAULT_INJECTION: forcing a failure"
    r"|-+\[ cut here \]-+|^unreferenced object 0x|^INFO: task .* blocked"
    r"|^={20,}$|^BUG: |^Oops|^general protection fault[,:]"
    r"|^UBSAN: |^watchdog: BUG: soft lockup|^INFO: rcu_\w+ detected stall"
    r"|^WARNING: (possible (recursive|circular) locking|suspicious RCU usage"
    r"|inconsistent lock state|bad unlock balance|possible irq lock inversion)")
# Lines that mean a splat when no report is open.
LOOSE = re.compile(
    r"WARNING:|BUG:|Oops|general protection fault[,:]"
    r"|kmemleak: .*suspected memory leak|UBSAN|KASAN"
    r"|refcount_t:|list_(add|del) corruption"
    r"|possible recursive locking|circular locking|INFO: task .* blocked"
    r"|Call Trace")
END = re.compile(r"---\[ end trace|^={20,}$")
HEAD_LINES = 6
MAX_LINES = 200


def reports(lines):
    """Yield each report as a list of lines (prefixes removed)."""
    cur = None
    for raw in lines:
        line = PREFIX.sub("", raw.rstrip("\n"))
        if cur is None:
            if START.search(line) or LOOSE.search(line):
                cur = [line]
            continue
        kasan = re.match(r"^={20,}$", cur[0]) is not None
        if kasan:
            cur.append(line)
            if re.match(r"^={20,}$", line) or len(cur) >= MAX_LINES:
                yield cur
                cur = None
            continue
        if "cut here" in cur[0] and len(cur) < 3:
            cur.append(line)
            continue
        if INJECTED.search(cur[0]):
            # The injection's stack, then the allocator's report of the
            # failure (a page allocation's, with its memory summary).
            if START.search(line) and not INJECTED.search(line) or \
                    len(cur) >= 4 * MAX_LINES:
                yield cur
                cur = [line]
                continue
            if INJECTED.search(line):
                yield cur
                cur = [line]
                continue
            # A splat line that is not part of a stack dump ends the
            # injection's report: it is a report of its own.
            if LOOSE.search(line) and not INJECTED_STACK.search(line):
                yield cur
                cur = [line]
                continue
            cur.append(line)
            continue
        if START.search(line):
            yield cur
            cur = [line]
            continue
        cur.append(line)
        if END.search(line) or len(cur) >= MAX_LINES:
            yield cur
            cur = None
    if cur is not None:
        yield cur


def load_known(path):
    cp = configparser.ConfigParser(interpolation=None)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        cp.read_file(f)
    known = []
    for sec in cp.sections():
        ent = cp[sec]
        for key in ("message", "site", "why"):
            if not ent.get(key, "").strip():
                raise ValueError(f"{path}: [{sec}] has no '{key}'")
        known.append((sec, re.compile(ent["message"].strip()),
                      re.compile(ent["site"].strip()), ent))
    return known


def classify(rep, known):
    head = rep[:HEAD_LINES]
    for name, msg, site, _ in known:
        if any(msg.search(l) for l in head) and any(site.search(l) for l in rep):
            return name
    return None


INJ_KITE = """\
[   66.9] FAULT_INJECTION: forcing a failure.
name failslab, interval 1, probability 0, space 0, times -1
[   66.9] CPU: 0 UID: 0 PID: 303 Comm: bash Not tainted 7.2.13-kite-debug
[   66.9] Call Trace:
[   66.9]  <TASK>
[   66.9]  dump_stack_lvl+0x5d/0x80
[   66.9]  should_fail_ex+0x1c4/0x1e0
[   66.9]  kite_en_probe+0x1a2/0x9c0 [kite_en]
[   66.9]  </TASK>
[   66.9] kite_en 0000:00:03.0: probe with driver kite_en failed with error -12
"""
INJ_OTHER = """\
[   70.1] FAULT_INJECTION: forcing a failure.
name failslab, interval 1, probability 0, space 0, times -1
[   70.1] Call Trace:
[   70.1]  <TASK>
[   70.1]  dump_stack_lvl+0x5d/0x80
[   70.1]  kmem_cache_alloc_noprof+0x3b8/0x4a0
[   70.1]  </TASK>
"""
LEAK_LINE = "[ 1017.8] kmemleak: 4 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n"
WARN = """\
[   80.0] ------------[ cut here ]------------
[   80.0] WARNING: drivers/infiniband/hw/kite/kite_ib_qp.c:100 at kite_ib_x+0x1/0x2 [kite_ib]
[   80.0] ---[ end trace 0000000000000000 ]---
"""


def selftest():
    """TAP self-test of the report splitter (make check, prm step)."""
    cases = [
        ("an injection with a Kite frame is no splat, counted at its site",
         INJ_KITE, 0, {"kite_en:kite_en_probe": 1}),
        ("an injection without a Kite frame is counted outside Kite",
         INJ_OTHER, 0, {"outside Kite": 1}),
        ("a kmemleak line right after an injection is a splat",
         INJ_KITE + LEAK_LINE, 1, {"kite_en:kite_en_probe": 1}),
        ("a WARN right after an injection is a splat",
         INJ_OTHER + WARN, 1, {"outside Kite": 1}),
        ("two injections in a row are two",
         INJ_KITE + INJ_OTHER, 0, {"kite_en:kite_en_probe": 1,
                                   "outside Kite": 1}),
    ]
    print(f"1..{len(cases)}")
    failed = 0
    for i, (name, text, want_bad, want_sites) in enumerate(cases, 1):
        bad, sites = scan(text.splitlines(True), [])
        ok = bad == want_bad and sites == want_sites
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {i} - check-splats: {name}"
              + ("" if ok else f" (splats {bad}, sites {sites})"))
    return 1 if failed else 0


def scan(lines, known, quiet_known=True, out=None):
    """Count the splats of @lines (printing them to @out) and the
    injections by call site. Return: (splats, {site: count})."""
    bad = 0
    sites = {}
    for rep in reports(lines):
        if INJECTED.search(rep[0]):
            # The innermost reliable Kite frame ("? " frames are guesses).
            frames = [m for m in map(KITE_FRAME.match, rep) if m]
            m = next((f for f in frames if not f.group(0).lstrip()
                      .startswith("?")), frames[0] if frames else None)
            site = f"{m.group(2)}:{m.group(1)}" if m else "outside Kite"
            sites[site] = sites.get(site, 0) + 1
            continue
        name = classify(rep, known)
        first = next((l for l in rep if l.strip() and "cut here" not in l
                      and not l.startswith("====")), rep[0]).strip()
        if name:
            if out and not quiet_known:
                print(f"# known upstream issue {name}: {first}", file=out)
            continue
        bad += 1
        if out:
            print(f"SPLAT {bad}: {first}", file=out)
            for l in rep:
                print(f"    {l}", file=out)
    return bad, sites


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--known", default=KNOWN)
    ap.add_argument("--quiet-known", action="store_true")
    ap.add_argument("--injected", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("logs", nargs="*")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    try:
        known = load_known(args.known)
    except (ValueError, re.error, configparser.Error) as e:
        print(f"check-splats: {e}", file=sys.stderr)
        return 2
    lines = []
    if args.logs:
        for p in args.logs:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines.extend(f)
    else:
        lines = sys.stdin.readlines()
    bad, sites = scan(lines, known, args.quiet_known, sys.stdout)
    injected = sum(sites.values())
    if args.injected:
        print(f"# injected {injected} allocation failures at {len(sites)} "
              "call sites:")
        for site, n in sorted(sites.items()):
            print(f"#   {site} x{n}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
