#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check the Kite Programmer's Reference against include/linux/kite/kite_hw.h.

Usage: scripts/check-prm-layout.py [DOCDIR] [--header FILE] [--cc CC] [--keep]

DOCDIR defaults to Documentation/networking/device_drivers/ethernet/kite.
Every *.rst file in it is read for layout tables, each one preceded by a
marker line (written inside an rst comment so that the marker does not show
in the rendered document)::

    ..
       .. kite-struct:: kite_cqe       Offset | Size | Field | Description
       .. kite-regs:: global           Offset | Name | Access | Description
       .. kite-fields:: KITE_REG_STATUS  Bits | Name | Meaning
       .. kite-values:: cmd-opcodes    Value | Name | Meaning

followed by an rst simple table (``====`` borders) with those columns.
A marker line on its own at column 0 is accepted too.

The script generates a C program that includes kite_hw.h through a small
shim, compiles it with the host C compiler and runs it to obtain, for each
row, offsetof()/sizeof() of the struct member, sizeof() of the struct, or
the value of the macro, and compares them with the document:

- kite-struct: the Offset and Size of every member (union members share an
  offset), the total size (the row whose Field is "total"), that the rows
  cover the structure without gaps, and that every member of the C struct
  has a row;
- kite-regs: the value of each register offset macro equals Offset;
- kite-fields: the lowest and highest set bit of each mask macro equal the
  Bits column ("n" or "h:l") and the mask is contiguous; a Name of
  "reserved" is allowed and not checked;
- kite-values: the value of each macro equals Value.

It also fails when a structure of kite_hw.h has no table, when a table
names a member or macro that does not exist, and when a macro defined in
kite_hw.h appears in no table.

Output is TAP: one "ok N - prm: ..." / "not ok N - prm: ..." line per
table and per coverage check, "# " lines naming each mismatching row, then
"1..N". The exit status is 1 if any test failed (including a generated program
that does not compile), 2 on a usage error.
Python 3 standard library and a C compiler only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPT_DIR)
DEFAULT_DOCDIR = os.path.join(
    REPO, "Documentation/networking/device_drivers/ethernet/kite")
DEFAULT_HEADER = os.path.join(REPO, "include/linux/kite/kite_hw.h")

# The kernel helpers kite_hw.h uses, for a hosted C compiler: the same shim
# as the model tests (qemu/tests/kite_test_shim.h), without its header.
SHIM = r"""
#include <stddef.h>
#include <stdio.h>
#define KITE_SHIM_NO_HEADER
#include "%s"
""" % os.path.join(REPO, "qemu/tests/kite_test_shim.h")

KINDS = {
    "struct": ("offset", "size", "field", "description"),
    "regs": ("offset", "name", "access", "description"),
    "fields": ("bits", "name", "meaning"),
    "values": ("value", "name", "meaning"),
}

MARKER_RE = re.compile(r"^(\s*)\.\.\s+kite-(struct|regs|fields|values)::"
                       r"\s*([A-Za-z_][\w.\-]*)?\s*$")
BORDER_RE = re.compile(r"^\s*=+( +=+)*\s*$")
IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")
MACRO_RE = re.compile(r"^(KITE_\w+|PCI_\w+)(\(\s*\w+\s*\))?$")


class Table:
    def __init__(self, kind, name, path, line):
        self.kind = kind
        self.name = name
        self.path = path
        self.line = line
        self.rows = []          # (lineno, [cells])
        self.errors = []        # diagnostics found while parsing/checking

    def title(self):
        return "prm: %s %s" % (self.kind, self.name)

    def where(self, lineno):
        return "%s:%d" % (os.path.basename(self.path), lineno)


def clean(cell):
    """Strip rst inline markup from a cell."""
    c = cell.strip()
    c = c.replace("``", "").replace("\\", "")
    c = c.strip("*").strip()
    return c


def parse_simple_table(lines, start, table):
    """Parse an rst simple table whose top border is lines[start]."""
    border = lines[start].rstrip("\n")
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", border)]
    starts = [s for s, _ in spans]
    borders = 1
    i = start + 1
    header = None
    while i < len(lines):
        raw = lines[i].rstrip("\n")
        if BORDER_RE.match(raw) and raw.strip():
            borders += 1
            if borders == 3:
                return header, i + 1
            i += 1
            continue
        if not raw.strip():
            i += 1
            continue
        cells = []
        for k, s in enumerate(starts):
            e = starts[k + 1] if k + 1 < len(starts) else len(raw)
            cells.append(raw[s:e] if s < len(raw) else "")
        # Text left of the first column belongs to no cell.
        if raw[:starts[0]].strip():
            table.errors.append("%s: text outside the table columns"
                                % table.where(i + 1))
        if borders == 1:
            header = [clean(c).lower() for c in cells]
        elif not cells[0].strip() and table.rows:
            prev = table.rows[-1][1]
            for k, c in enumerate(cells):
                if c.strip():
                    prev[k] = (prev[k] + " " + c.strip()).strip()
        else:
            table.rows.append((i + 1, [c.strip() for c in cells]))
        i += 1
    table.errors.append("%s: table does not end" % table.where(start + 1))
    return header, i


def parse_docs(docdir):
    tables = []
    problems = []
    files = sorted(f for f in os.listdir(docdir) if f.endswith(".rst"))
    if not files:
        problems.append("no .rst files in %s" % docdir)
    for f in files:
        path = os.path.join(docdir, f)
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
        i = 0
        while i < len(lines):
            m = MARKER_RE.match(lines[i])
            if not m:
                i += 1
                continue
            kind, name = m.group(2), m.group(3)
            t = Table(kind, name or "?", path, i + 1)
            tables.append(t)
            if not name:
                t.errors.append("%s: marker without a name" % t.where(i + 1))
            j = i + 1
            while j < len(lines) and not BORDER_RE.match(lines[j]) and \
                    (not lines[j].strip() or
                     (lines[j][:1].isspace() and not MARKER_RE.match(lines[j]))):
                j += 1
            if j >= len(lines) or not BORDER_RE.match(lines[j]) or \
                    not lines[j].strip():
                t.errors.append("%s: marker not followed by a simple table"
                                % t.where(i + 1))
                i += 1
                continue
            header, end = parse_simple_table(lines, j, t)
            want = KINDS[kind]
            if header is None or tuple(header) != want:
                t.errors.append("%s: columns are %s, expected %s"
                                % (t.where(j + 1), header,
                                   " | ".join(w.capitalize() for w in want)))
                t.rows = []
            i = end
    return tables, problems


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def parse_header(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    code = strip_comments(text)
    structs = {}
    end = 0
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", code):
        if m.start() < end:
            continue            # a structure defined inside another one
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        end = i
        body = re.sub(r"\b(union|struct)\s*\{", ";", code[m.end():i - 1])
        body = body.replace("}", ";")
        members = []
        for piece in body.split(";"):
            piece = piece.strip()
            if not piece:
                continue
            mm = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", piece)
            if mm:
                members.append(mm.group(1))
        structs[m.group(1)] = members
    macros = []
    for m in re.finditer(r"^#\s*define\s+(\w+)(\()?", code, re.M):
        name = m.group(1)
        if name.startswith("_") and name.endswith("_H"):
            continue        # include guard
        macros.append((name, bool(m.group(2))))
    return structs, macros


def parse_int(s):
    try:
        return int(s.replace("_", ""), 0)
    except ValueError:
        return None


def parse_bits(s):
    m = re.match(r"^(\d+)(?::(\d+))?$", s.replace(" ", ""))
    if not m:
        return None
    h = int(m.group(1))
    l = int(m.group(2)) if m.group(2) is not None else h
    return (h, l) if h >= l else None


class ToolError(Exception):
    """The generated program cannot be built or run."""


class Gen:
    """Collects C statements; each row's statement is on its own line."""

    def __init__(self):
        self.lines = []
        self.owner = {}     # line number -> (table index, row index)

    def add(self, text, key=None):
        for ln in text.split("\n"):
            self.lines.append(ln)
            if key is not None:
                self.owner[len(self.lines)] = key


def build_checks(tables, structs):
    """Validate cells and decide which C expression each row needs.

    Returns a list of (key, kind, expr-or-None) per row to be evaluated.
    """
    checks = []
    for ti, t in enumerate(tables):
        if t.errors:
            continue
        if t.kind == "struct":
            if t.name not in structs:
                t.errors.append("%s: no struct %s in kite_hw.h"
                                % (t.where(t.line), t.name))
                continue
            members = structs[t.name]
            for ri, (ln, cells) in enumerate(t.rows):
                off, size, field = (clean(cells[0]), clean(cells[1]),
                                    clean(cells[2]))
                field = re.sub(r"\[.*\]$", "", field)
                if parse_int(off) is None or parse_int(size) is None:
                    t.errors.append("%s: row '%s': Offset/Size not numbers"
                                    % (t.where(ln), field))
                    continue
                if field.lower() == "total":
                    checks.append(((ti, ri), "total", "sizeof(struct %s)"
                                   % t.name))
                elif not IDENT_RE.match(field):
                    t.errors.append("%s: Field '%s' is not a C member name"
                                    % (t.where(ln), cells[2].strip()))
                elif field not in members:
                    t.errors.append("%s: struct %s has no member '%s'"
                                    % (t.where(ln), t.name, field))
                else:
                    checks.append(((ti, ri), "member",
                                   "(unsigned long long)offsetof(struct %s, %s), "
                                   "(unsigned long long)sizeof(((struct %s *)0)->%s)"
                                   % (t.name, field, t.name, field)))
        else:
            for ri, (ln, cells) in enumerate(t.rows):
                name = clean(cells[1])
                if t.kind == "fields" and name.lower() in ("reserved", "-", "—"):
                    continue
                if not MACRO_RE.match(name):
                    t.errors.append("%s: Name '%s' is not a kite_hw.h macro"
                                    % (t.where(ln), cells[1].strip()))
                    continue
                ref = clean(cells[0])      # Offset, Bits or Value
                if t.kind == "fields":
                    if parse_bits(ref) is None:
                        t.errors.append("%s: %s: Bits '%s' is not n or h:l"
                                        % (t.where(ln), name, ref))
                        continue
                elif parse_int(ref) is None:
                    t.errors.append("%s: %s: '%s' is not a number"
                                    % (t.where(ln), name, ref))
                    continue
                checks.append(((ti, ri), "macro", name))
    return checks


def gen_program(header, checks):
    g = Gen()
    g.add("/* Generated by scripts/check-prm-layout.py */")
    g.add(SHIM)
    g.add('#include "%s"' % header)
    g.add("int main(void)")
    g.add("{")
    for key, kind, expr in checks:
        ti, ri = key
        if kind == "macro":
            base = expr.split("(")[0]
            g.add("#ifdef %s" % base)
            g.add('\tprintf("V %d %d %%llu\\n", (unsigned long long)(%s));'
                  % (ti, ri, expr), key)
            g.add("#else")
            g.add('\tprintf("M %d %d\\n");' % (ti, ri))
            g.add("#endif")
        elif kind == "total":
            g.add('\tprintf("T %d %d %%llu\\n", (unsigned long long)%s);'
                  % (ti, ri, expr), key)
        else:
            g.add('\tprintf("S %d %d %%llu %%llu\\n", %s);' % (ti, ri, expr),
                  key)
    g.add("\treturn 0;")
    g.add("}")
    return g


def compile_and_run(cc, header, checks, tables, workdir):
    """Compile; rows whose line fails to compile are reported and dropped."""
    src = os.path.join(workdir, "prm-check.c")
    exe = os.path.join(workdir, "prm-check")
    for _ in range(5):
        g = gen_program(header, checks)
        with open(src, "w") as fh:
            fh.write("\n".join(g.lines) + "\n")
        p = subprocess.run([cc, "-std=gnu11", "-Wall", "-o", exe, src],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if p.returncode == 0:
            break
        bad = set()
        for m in re.finditer(r"prm-check\.c:(\d+):(?:\d+:)? (?:fatal )?error: (.*)",
                             p.stdout):
            key = g.owner.get(int(m.group(1)))
            if key is None:
                raise ToolError("the generated program does not compile:\n"
                                + p.stdout)
            if key not in bad:
                t = tables[key[0]]
                ln = t.rows[key[1]][0]
                t.errors.append("%s: does not compile: %s"
                                % (t.where(ln), m.group(2)))
            bad.add(key)
        if not bad:
            raise ToolError("the compiler failed:\n" + p.stdout)
        checks = [c for c in checks if c[0] not in bad]
    else:
        raise ToolError("cannot get the generated program to compile")
    p = subprocess.run([exe], stdout=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise ToolError("the generated program failed (exit %d)"
                        % p.returncode)
    results = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        key = (int(parts[1]), int(parts[2]))
        results[key] = (parts[0], [int(x) for x in parts[3:]])
    return results


def compare(tables, results, structs):
    for ti, t in enumerate(tables):
        if t.kind == "struct":
            spans = []
            total = None
            seen = set()
            for ri, (ln, cells) in enumerate(t.rows):
                r = results.get((ti, ri))
                if r is None:
                    continue
                field = re.sub(r"\[.*\]$", "", clean(cells[2]))
                off, size = parse_int(clean(cells[0])), parse_int(clean(cells[1]))
                tag, vals = r
                if tag == "T":
                    total = vals[0]
                    if size != vals[0] or off != vals[0]:
                        t.errors.append(
                            "%s: total: document says offset %s size %s, "
                            "sizeof(struct %s) is %d (0x%x)"
                            % (t.where(ln), clean(cells[0]), clean(cells[1]),
                               t.name, vals[0], vals[0]))
                    continue
                seen.add(field)
                if off != vals[0] or size != vals[1]:
                    t.errors.append(
                        "%s: %s: document says offset %s size %s, C has "
                        "offset 0x%02x size %d"
                        % (t.where(ln), field, clean(cells[0]),
                           clean(cells[1]), vals[0], vals[1]))
                spans.append((vals[0], vals[1], field))
            if t.name in structs and not t.errors:
                for m in structs[t.name]:
                    if m not in seen:
                        t.errors.append("%s: member '%s' of struct %s has "
                                        "no row" % (t.where(t.line), m, t.name))
                if total is None:
                    t.errors.append("%s: no 'total' row giving the size of "
                                    "struct %s" % (t.where(t.line), t.name))
                else:
                    covered = 0
                    for off, size, field in sorted(spans):
                        if off > covered:
                            t.errors.append("%s: bytes 0x%02x-0x%02x are in "
                                            "no row (padding or a missing "
                                            "member before '%s')"
                                            % (t.where(t.line), covered,
                                               off - 1, field))
                        covered = max(covered, off + size)
                    if covered != total:
                        t.errors.append("%s: rows cover 0x%x bytes, the "
                                        "struct has 0x%x"
                                        % (t.where(t.line), covered, total))
            continue
        for ri, (ln, cells) in enumerate(t.rows):
            r = results.get((ti, ri))
            if r is None:
                continue
            name = clean(cells[1])
            tag, vals = r
            if tag == "M":
                t.errors.append("%s: %s is not defined in kite_hw.h"
                                % (t.where(ln), name))
                continue
            v = vals[0]
            if t.kind == "fields":
                h, l = parse_bits(clean(cells[0]))
                if v == 0:
                    t.errors.append("%s: %s is 0, not a mask"
                                    % (t.where(ln), name))
                    continue
                lo = (v & -v).bit_length() - 1
                hi = v.bit_length() - 1
                want = ((1 << (h + 1)) - 1) & ~((1 << l) - 1)
                if (hi, lo) != (h, l) or v != want:
                    got = "%d" % lo if hi == lo else "%d:%d" % (hi, lo)
                    t.errors.append("%s: %s: document says bits %s, the "
                                    "macro is 0x%x (bits %s%s)"
                                    % (t.where(ln), name, clean(cells[0]),
                                       v, got, "" if v == ((1 << (hi + 1)) - 1)
                                       & ~((1 << lo) - 1) else ", with gaps"))
            else:
                want = parse_int(clean(cells[0]))
                if v != want:
                    t.errors.append("%s: %s: document says %s, the macro "
                                    "is 0x%x (%d)"
                                    % (t.where(ln), name, clean(cells[0]),
                                       v, v))


def main():
    ap = argparse.ArgumentParser(
        description="Check the Kite PRM tables against kite_hw.h (TAP).")
    ap.add_argument("docdir", nargs="?", default=DEFAULT_DOCDIR)
    ap.add_argument("--header", default=DEFAULT_HEADER)
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--keep", action="store_true",
                    help="keep the generated C program and print its path")
    args = ap.parse_args()
    if not os.path.isdir(args.docdir):
        print("check-prm-layout: %s is not a directory" % args.docdir,
              file=sys.stderr)
        return 2
    if not shutil.which(args.cc):
        print("check-prm-layout: no C compiler '%s'" % args.cc,
              file=sys.stderr)
        return 2
    header = os.path.abspath(args.header)

    structs, macros = parse_header(header)
    tables, problems = parse_docs(args.docdir)
    checks = build_checks(tables, structs)
    workdir = tempfile.mkdtemp(prefix="prm-check.")
    try:
        results = compile_and_run(args.cc, header, checks, tables, workdir)
    except ToolError as e:
        print("not ok 1 - prm: kite_hw.h and the layout tables compile")
        for line in str(e).splitlines():
            print("# " + line)
        print("1..1")
        return 1
    finally:
        if args.keep:
            print("# generated program: %s/prm-check.c" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    compare(tables, results, structs)

    n = 0
    failed = 0

    def report(ok, title, diags):
        nonlocal n, failed
        n += 1
        if not ok:
            failed += 1
        print("%sok %d - %s" % ("" if ok else "not ", n, title))
        for d in diags:
            print("# " + d)

    for t in tables:
        report(not t.errors, t.title(), t.errors)

    # Every structure has a table.
    documented = {t.name for t in tables if t.kind == "struct"}
    for s in sorted(structs):
        if s not in documented:
            report(False, "prm: struct %s has a table" % s,
                   ["struct %s of kite_hw.h is not in any kite-struct table"
                    % s])
    # Every macro appears in a table.
    named = set()
    for t in tables:
        if t.kind != "struct":
            for _, cells in t.rows:
                named.add(clean(cells[1]).split("(")[0].strip())
    missing = [m for m, _ in macros if m not in named]
    report(not missing and not problems,
           "prm: every kite_hw.h macro is in a table (%d macros)" % len(macros),
           problems + ["%s is in no kite-regs/fields/values table" % m
                       for m in missing])
    print("1..%d" % n)
    if failed:
        print("# %d of %d failed" % (failed, n))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
