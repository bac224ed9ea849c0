#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check the RoCEv2 frames of a packet capture (a VM's wire).

For every UDP/4791 frame: the IPv4 or IPv6 and UDP headers are complete,
the BTH is there, and the ICRC (the last 4 bytes) is the CRC-32 of the
frame's invariant fields as the InfiniBand Architecture's RoCEv2 annex
defines it (8 bytes of ones for the absent LRH; IPv4 TOS, TTL and header
checksum, or IPv6 traffic class, flow label and hop limit, the UDP checksum
and the BTH's reserved byte taken as ones), stored least significant byte
first. Independent of the device model's and of Linux's implementations.

usage: check-roce-pcap.py FILE.pcap
Prints one line per (sender, BTH opcode) with the number of frames and bad
ICRCs, then a summary; exits 1 if a frame is malformed or has a bad ICRC,
or if there is no RoCEv2 frame at all.
"""
import struct
import sys
import zlib

ROCE_PORT = 4791
OPCODES = {
    0x04: "RC SEND_ONLY", 0x05: "RC SEND_ONLY_IMM", 0x00: "RC SEND_FIRST",
    0x01: "RC SEND_MIDDLE", 0x02: "RC SEND_LAST", 0x03: "RC SEND_LAST_IMM",
    0x06: "RC WRITE_FIRST", 0x07: "RC WRITE_MIDDLE", 0x08: "RC WRITE_LAST",
    0x09: "RC WRITE_LAST_IMM", 0x0a: "RC WRITE_ONLY", 0x0b: "RC WRITE_ONLY_IMM",
    0x0c: "RC READ_REQUEST", 0x0d: "RC READ_RESPONSE_FIRST",
    0x0e: "RC READ_RESPONSE_MIDDLE", 0x0f: "RC READ_RESPONSE_LAST",
    0x10: "RC READ_RESPONSE_ONLY", 0x11: "RC ACK", 0x12: "RC ATOMIC_ACK",
    0x13: "RC CMP_SWAP", 0x14: "RC FETCH_ADD", 0x16: "RC SEND_LAST_INV",
    0x17: "RC SEND_ONLY_INV", 0x64: "UD SEND_ONLY", 0x65: "UD SEND_ONLY_IMM",
}


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype != 1:
        raise SystemExit(f"{path}: link type {linktype}, not Ethernet")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def roce(frame):
    """(ip_version, src, l3 bytes, udp offset in l3) or None."""
    off, etype = 12, struct.unpack(">H", frame[12:14])[0]
    if etype == 0x8100:
        off, etype = 16, struct.unpack(">H", frame[16:18])[0]
    l3 = frame[off + 2:]
    if etype == 0x0800 and len(l3) >= 28 and l3[9] == 17:
        ihl = (l3[0] & 0xf) * 4
        if struct.unpack(">H", l3[ihl + 2:ihl + 4])[0] == ROCE_PORT:
            return 4, ".".join(map(str, l3[12:16])), l3, ihl
    if etype == 0x86dd and len(l3) >= 48 and l3[6] == 17:
        if struct.unpack(">H", l3[42:44])[0] == ROCE_PORT:
            src = ":".join(f"{l3[8 + i]:02x}{l3[9 + i]:02x}" for i in range(0, 16, 2))
            return 6, src, l3, 40
    return None


def icrc_ok(ver, l3, udp):
    b = bytearray(l3)
    if ver == 4:
        total = struct.unpack(">H", b[2:4])[0]
        b = b[:total]
        b[1] = 0xff                # TOS
        b[8] = 0xff                # TTL
        b[10:12] = b"\xff\xff"     # header checksum
    else:
        total = 40 + struct.unpack(">H", b[4:6])[0]
        b = b[:total]
        b[0] |= 0x0f               # traffic class (low nibble) ...
        b[1:4] = b"\xff\xff\xff"   # ... and flow label
        b[7] = 0xff                # hop limit
    if len(b) < udp + 8 + 12 + 4:
        return None
    b[udp + 6:udp + 8] = b"\xff\xff"   # UDP checksum
    b[udp + 8 + 4] = 0xff              # BTH reserved byte (resv8a)
    body, icrc = bytes(b[:-4]), struct.unpack("<I", bytes(b[-4:]))[0]
    return zlib.crc32(b"\xff" * 8 + body) == icrc


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    stats, bad = {}, 0
    for frame in frames(sys.argv[1]):
        r = roce(frame)
        if not r:
            continue
        ver, src, l3, udp = r
        ok = icrc_ok(ver, l3, udp)
        op = l3[udp + 8] if len(l3) > udp + 8 else -1
        key = (src, OPCODES.get(op, f"opcode {op:#x}"))
        n, nbad = stats.get(key, (0, 0))
        stats[key] = (n + 1, nbad + (ok is not True))
        bad += ok is not True
    for (src, op), (n, nbad) in sorted(stats.items()):
        print(f"{src}: {op}: {n} frames, {nbad} bad")
    total = sum(n for n, _ in stats.values())
    print(f"{total} RoCEv2 frames, {bad} malformed or with a bad ICRC")
    sys.exit(1 if bad or not total else 0)


if __name__ == "__main__":
    main()
