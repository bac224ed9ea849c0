#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Instructions a callgrind profile collected, by object.

usage: callgrind-self.py CALLGRIND_OUT

Prints "TOTAL OBJECT" lines, the self cost (first event, Ir) of the code
in each object file, largest first: code inlined into a function counts
in that function's object (the application's inline verbs.h wrappers in
the application). Used by bench-control to tell a provider's own
instructions from the benchmark's around them.
"""
import collections
import re
import sys


def self_cost(path):
    names = {}          # "ob" compressed ids -> names
    cost = collections.Counter()
    ob = None
    after_calls = False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        # An id is named where it first appears, as ob= or as cob=.
        m = re.match(r"^(c?)ob=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3) is not None:
                names[m.group(2)] = m.group(3)
            if not m.group(1):
                ob = m.group(2)
            continue
        if line.startswith("ob="):
            ob = line[3:]
            continue
        if line.startswith("calls="):
            after_calls = True
            continue
        # A cost line: a position ("123", "+4", "-2", "*") and the events.
        m = re.match(r"^([+-]?\d+|\*)\s+(\d+)", line)
        if not m:
            continue
        if after_calls:
            after_calls = False  # the call's inclusive cost: the callee's
            continue
        cost[ob] += int(m.group(2))
    return collections.Counter({names.get(k, k): v for k, v in cost.items()})


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    for ob, n in self_cost(sys.argv[1]).most_common():
        print(n, ob)


if __name__ == "__main__":
    main()
