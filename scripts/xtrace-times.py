#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a VM test group's guest script spends its time.

usage: xtrace-times.py XTRACE_LOG [N]

XTRACE_LOG is the xtrace.log of a VM run with KITE_GUEST_XTRACE=1 (each
traced command as "+ EPOCHREALTIME FILE:LINE COMMAND"). The time from one
traced command to the next is charged to the first. Printed: the N
(default 25) script lines that took longest by themselves, and, for the
group's own script (the file of the first traced line), the lines whose
commands took longest together with everything they called, with how many
times each ran. Untraced time (programs, the kernel, waits) is part of the
command that started it.
"""
import collections
import re
import sys

LINE = re.compile(r"^\++ (\d+\.\d+) ([^ :]*):(\d+) (.*)$")


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    events = []
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if m:
                events.append((float(m.group(1)), m.group(2), int(m.group(3)),
                               m.group(4)))
    if len(events) < 2:
        sys.exit(f"{path}: fewer than two traced commands")
    script = next((e[1] for e in events if e[1]), "")
    self_time = collections.Counter()
    self_count = collections.Counter()
    incl_time = collections.Counter()
    incl_count = collections.Counter()
    text = {}
    owner = None
    for (t, f, n, cmd), nxt in zip(events, events[1:]):
        dt = nxt[0] - t
        key = f"{f}:{n}"
        self_time[key] += dt
        self_count[key] += 1
        text.setdefault(key, cmd[:70])
        if f == script:
            owner = key
            incl_count[key] += 1
        if owner:
            incl_time[owner] += dt
    total = events[-1][0] - events[0][0]
    print(f"{path}: {len(events)} commands traced over {total:.1f} s")
    print(f"\nlongest by themselves (seconds, runs, line, first command):")
    for key, s in self_time.most_common(top):
        print(f"{s:9.1f} {self_count[key]:6d}  {key:22s} {text[key]}")
    print(f"\nlongest lines of {script} with what they called:")
    for key, s in incl_time.most_common(top):
        print(f"{s:9.1f} {incl_count[key]:6d}  {key:22s} {text[key]}")


if __name__ == "__main__":
    main()
