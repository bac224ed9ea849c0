#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Overlay libkite into an rdma-core source tree, as its submission to
rdma-core (make patches) places it: providers/kite with its man page, the
uapi header under kernel-headers/ with RDMA_DRIVER_KITE, and one entry each
in the build files, verbs.h, MAINTAINERS, README.md and the Debian and Red
Hat packaging, every entry in its list's alphabetical order. Idempotent.

usage: overlay-rdma-core.py TREE            providers/kite and the uapi
                                            header as symlinks to this
                                            repository (the development
                                            build: edits are picked up)
       overlay-rdma-core.py --copy TREE     as copies, symlinks resolved
                                            (the submission's content)
       overlay-rdma-core.py --remove TREE   undo either: TREE as it was
Files are replaced, never written in place.
"""

import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
PROVIDER = os.path.join(ROOT, "rdma-core", "providers", "kite")
ABI = os.path.join(ROOT, "include", "uapi", "rdma", "kite-abi.h")


def maintainer():
    """The M: line of the repository's MAINTAINERS entry."""
    with open(os.path.join(ROOT, "MAINTAINERS")) as f:
        for line in f:
            if line.startswith("M:\t"):
                return line.rstrip("\n")
    sys.exit("overlay-rdma-core: MAINTAINERS has no M: line")


MAINTAINERS_ENTRY = [
    "KITE USERSPACE PROVIDER (for kite_ib.ko)",
    maintainer(),
    "S:\tSupported",
    "F:\tproviders/kite/",
    "",
]

# (file, first, item, end, lines): LINES (one entry) go among the lines
# matching the regex ITEM that follow the first line matching FIRST (up to
# the first line matching END, if given), before the first of them that
# sorts after LINES[0], or after the last of them.
SORTED = [
    ("CMakeLists.txt", r"^add_subdirectory\(providers/", r"^add_subdirectory\(providers/",
     r"^endif\(\)$", ["add_subdirectory(providers/kite)"]),
    ("CMakeLists.txt", r"^add_subdirectory\(providers/", r"^add_subdirectory\(providers/",
     r"^endif\(\)$", ["add_subdirectory(providers/kite/man)"]),
    ("kernel-headers/CMakeLists.txt", r"^publish_internal_headers\(rdma$", r"^  rdma/",
     r"^\s*\)", ["  rdma/kite-abi.h"]),
    ("kernel-headers/CMakeLists.txt", r"^rdma_kernel_provider_abi\($", r"^  rdma/",
     r"^\s*\)", ["  rdma/kite-abi.h"]),
    ("libibverbs/verbs.h", r"^extern const struct verbs_device_ops verbs_provider_",
     r"^extern const struct verbs_device_ops verbs_provider_[a-z0-9_]+;$",
     r"verbs_provider_all;$", ["extern const struct verbs_device_ops verbs_provider_kite;"]),
    ("README.md", r"^ - bnxt_re\.ko$", r"^ - .*\.ko$", r"^$", [" - kite_ib.ko"]),
    ("MAINTAINERS", r" USERSPACE PROVIDER \(for ", r"^[A-Z][A-Z0-9_/ ]+[A-Z0-9]( \(.*\))?$", None,
     MAINTAINERS_ENTRY),
    ("debian/control", r"^  - bnxt_re: ", r"^  - [a-z0-9_]+: ", r"^[^ ]",
     ["  - kite: Kite RoCEv2 Ethernet NIC"]),
    ("debian/copyright", r"^Files: providers/", r"^Files: providers/", None,
     ["Files: providers/kite/*", "Copyright: 2026 Kite", "License: BSD-MIT or GPL-2", "",
      "Files: providers/kite/kite_hw.h", "Copyright: 2026 Kite",
      "License: BSD-2-clause or GPL-2", ""]),
    ("redhat/rdma-core.spec", r"^Provides: libcxgb4 ", r"^Provides: lib", r"^$",
     ["Provides: libkite = %{version}-%{release}",
      "Obsoletes: libkite < %{version}-%{release}"]),
    ("redhat/rdma-core.spec", r"^- libcxgb4: ", r"^- lib[a-z0-9_]+: ", r"^$",
     ["- libkite: Kite RoCEv2 Ethernet NIC"]),
]

# enum rdma_driver_id as the kernel has it: rdma-core 56.1 lacks
# RDMA_DRIVER_IONIC, which the kernel numbers before RDMA_DRIVER_KITE.
IDS = "kernel-headers/rdma/ib_user_ioctl_verbs.h"
IDS_AFTER = "\tRDMA_DRIVER_MANA,"
IDS_LINES = ["\tRDMA_DRIVER_IONIC,", "\tRDMA_DRIVER_KITE,"]


def die(msg):
    sys.exit(f"overlay-rdma-core: {msg}")


def read(tree, name):
    with open(os.path.join(tree, name)) as f:
        return f.read().split("\n")


def write(tree, name, lines):
    path = os.path.join(tree, name)
    with open(path + ".kite", "w") as f:
        f.write("\n".join(lines))
    shutil.copymode(path, path + ".kite")
    os.replace(path + ".kite", path)


def find_block(lines, block):
    """Index of LINES' first run equal to BLOCK, or -1."""
    for i in range(len(lines) - len(block) + 1):
        if lines[i:i + len(block)] == block:
            return i
    return -1


def insert_sorted(lines, first, item, end, block):
    key = block[0]
    start = next((i for i, line in enumerate(lines) if re.search(first, line)), None)
    if start is None:
        return None
    at = last = None
    for i in range(start, len(lines)):
        if end and i > start and re.search(end, lines[i]):
            break
        if re.search(item, lines[i]):
            last = i
            if lines[i] > key:
                at = i
                break
    if at is None:
        if last is None:
            return None
        # After the last item, and after the rest of its entry when entries
        # have several lines (a paragraph, Provides: with Obsoletes:).
        at = last + 1
        if len(block) > 1:
            while at < len(lines) and lines[at] != "" and not re.search(item, lines[at]):
                at += 1
            if block[-1] == "" and at < len(lines) and lines[at] == "":
                at += 1
    return lines[:at] + block + lines[at:]


def remove_block(lines, block):
    i = find_block(lines, block)
    while i >= 0:
        lines = lines[:i] + lines[i + len(block):]
        i = find_block(lines, block)
    return lines


def place(tree, mode):
    for name, src in (("providers/kite", PROVIDER), ("kernel-headers/rdma/kite-abi.h", ABI)):
        dst = os.path.join(tree, name)
        if os.path.islink(dst) or os.path.isfile(dst):
            os.remove(dst)
        elif os.path.isdir(dst):
            shutil.rmtree(dst)
        if mode == "link":
            os.symlink(src, dst)
        elif mode == "copy":
            if os.path.isdir(src):
                shutil.copytree(src, dst, symlinks=False)
            else:
                shutil.copy2(src, dst)
    # The hardware header's directory, linked in by earlier builds.
    old = os.path.join(tree, "providers", "kite-hw")
    if os.path.islink(old):
        os.remove(old)


def main():
    args = sys.argv[1:]
    mode = "link"
    if args and args[0] in ("--copy", "--remove"):
        mode = args.pop(0)[2:]
    if len(args) != 1:
        die(__doc__)
    tree = args[0]
    if not os.path.isfile(os.path.join(tree, "CMakeLists.txt")):
        die(f"{tree} is not an rdma-core tree")
    place(tree, mode)

    files = sorted({e[0] for e in SORTED} | {IDS})
    content = {f: read(tree, f) for f in files}
    for name, _, _, _, block in SORTED:
        content[name] = remove_block(content[name], block)
    for name, first, item, end, block in SORTED if mode != "remove" else []:
        content[name] = insert_sorted(content[name], first, item, end, block)
        if content[name] is None:
            die(f"{name}: no list to add {block[0]!r} to")
    ids = content[IDS]
    if mode == "remove":
        ids = remove_block(ids, IDS_LINES)
        ids = remove_block(ids, IDS_LINES[1:])
    elif IDS_LINES[1] not in ids:
        if IDS_LINES[0] in ids:
            at = ids.index(IDS_LINES[0]) + 1
            ids = ids[:at] + IDS_LINES[1:] + ids[at:]
        elif IDS_AFTER in ids:
            at = ids.index(IDS_AFTER) + 1
            ids = ids[:at] + IDS_LINES + ids[at:]
        else:
            die(f"{IDS}: no {IDS_AFTER.strip()} to add RDMA_DRIVER_KITE after")
    content[IDS] = ids
    for name in files:
        if content[name] != read(tree, name):
            write(tree, name, content[name])


if __name__ == "__main__":
    main()
