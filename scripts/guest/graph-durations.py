#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Sum up the function_graph tracer's call durations, by function.

Reads the text of a tracefs "trace" file written by the function_graph
tracer (with the funcgraph-tail option, so that a closing brace names its
function) and prints, for each function, its calls and the duration of a
call in microseconds: mean, median, 90th percentile and maximum, and the
time in all calls. scripts/guest/bench-pair.sh uses it for the guest
profile of a run (KITE_BENCH_GUEST_PROF).

usage: graph-durations.py < /sys/kernel/tracing/trace
"""

import math
import re
import sys

# " 0) + 26.123 us   |  kite_ib_post_send [kite_ib]();" (a call with no
# traced callee) or " 0) ! 112.4 us  |  } /* kite_ib_poll_cq [kite_ib] */"
# (the end of one with traced callees); the mark before the duration
# (+ ! # * @ $) only says how long it was.
LEAF = re.compile(r'([0-9.]+) us\s+\|\s+([A-Za-z_][A-Za-z0-9_.]*)(?: \[[^]]*\])?\(\);')
TAIL = re.compile(r'([0-9.]+) us\s+\|\s+\} /\* ([A-Za-z_][A-Za-z0-9_.]*)')


def percentile(sorted_values, p):
    """The value below which p percent of sorted_values lie (nearest rank)."""
    i = max(0, min(len(sorted_values) - 1,
                   math.ceil(p / 100.0 * len(sorted_values)) - 1))
    return sorted_values[i]


def main():
    durations = {}
    lost = 0
    for line in sys.stdin:
        if line.startswith('#'):
            continue
        # "CPU:0 [LOST 1234 EVENTS]": the buffer was full.
        if '[LOST ' in line:
            lost += 1
            continue
        m = LEAF.search(line) or TAIL.search(line)
        if m:
            durations.setdefault(m.group(2), []).append(float(m.group(1)))
    if not durations:
        print('no calls traced')
        return 0
    print('%-28s %8s %9s %9s %9s %10s %10s' %
          ('function', 'calls', 'mean us', 'median', '90%', 'max', 'total ms'))
    for name, d in sorted(durations.items(), key=lambda kv: -sum(kv[1])):
        d.sort()
        print('%-28s %8d %9.1f %9.1f %9.1f %10.1f %10.1f' %
              (name, len(d), sum(d) / len(d), percentile(d, 50),
               percentile(d, 90), d[-1], sum(d) / 1000.0))
    if lost:
        print('(the trace buffer lost events: the figures are of a part)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
