#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Test of the Kite Ethernet function, without a guest.

QEMU runs with the qtest accelerator; this script drives PCI configuration
space, BAR0 and guest memory through the qtest protocol on QEMU's stdio,
and QMP (set_link, qom-get) through a pipe chardev. The NIC's backend is
-netdev dgram on 127.0.0.1: the script owns the other end of that UDP
"wire", so it sees every frame the device sends and injects frames for it
to receive. Prints TAP; exits non-zero if any test fails.

usage: kite-eth-qtest.py /path/to/qemu-system-x86_64
"""

import json
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

# Every wait in this script is bounded by one of these (seconds).
REPLY_TIMEOUT = 10
POLL_TIMEOUT = 3
QEMU_TIMEOUT = 180

SLOT = 3
BAR = 0xe0000000
MAC = bytes.fromhex("525400123456")
MAC_STR = "52:54:00:12:34:56"
PEER_MAC = bytes.fromhex("5254009abcde")
BCAST = b"\xff" * 6

# include/linux/kite/kite_hw.h
STATUS = 0x010
CTRL = 0x014
ICR = 0x030
IMR = 0x034
ST_READY = 1 << 0
ST_LINK_UP = 1 << 3
INT_LINK = 1 << 0
ETH_CTRL = 0x100
ETH_MTU = 0x104
ETH_MAC_LO = 0x108
ETH_MAC_HI = 0x10c
CTRL_ENABLE = 1 << 0
CTRL_PROMISC = 1 << 1
TX_BASE_LO, TX_BASE_HI, TX_CFG, TX_TAIL, TX_HEAD = 0x00, 0x04, 0x08, 0x0c, 0x10
RX_BASE_LO, RX_BASE_HI, RX_CFG, RX_TAIL, RX_HEAD = 0x20, 0x24, 0x28, 0x2c, 0x30
Q_INTR = 0x38
CFG_ENABLE = 1 << 31
DESC_DONE = 1 << 0
DESC_ERR = 1 << 1
RESET_NS = 2000000

MSIX_CAP = 0xc0
MSIX_TABLE = 0x2000

# Guest memory map of the test (128 MiB of RAM).
MSG_ADDR = 0x100000          # MSI-X messages land here, 4 bytes per vector
RING_AREA = 0x200000         # 4 KiB per ring
BUF_AREA = 0x400000          # 16 KiB per buffer
BAD_ADDR = 0x7ff000000000    # nothing is mapped there
CMDQ_RING = 0x600000         # command queue, 2 entries
STATS_BUF = 0x601000


def ring_addr(n):
    return RING_AREA + n * 0x1000


def buf_addr(n):
    return BUF_AREA + n * 0x4000


def eq(n, off):
    return 0x200 + n * 0x40 + off


class Bail(Exception):
    pass


class Qemu:
    """QEMU with qtest on stdio, QMP on a pipe chardev."""

    def __init__(self, binary, work, local_port, peer_port):
        self.qmp_path = os.path.join(work, "qmp")
        os.mkfifo(self.qmp_path + ".in")
        os.mkfifo(self.qmp_path + ".out")
        self.log = os.path.join(work, "guest-errors.log")
        self.stderr = open(os.path.join(work, "stderr"), "w+")
        netdev = ("dgram,id=n0,local.type=inet,local.host=127.0.0.1,"
                  "local.port=%d,remote.type=inet,remote.host=127.0.0.1,"
                  "remote.port=%d" % (local_port, peer_port))
        args = ["timeout", str(QEMU_TIMEOUT), binary,
                "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
                "-nodefaults", "-display", "none", "-m", "128M",
                "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
                "-L", "/usr/lib/ipxe/qemu",
                "-chardev", "pipe,id=qmp,path=" + self.qmp_path,
                "-mon", "chardev=qmp,mode=control",
                "-netdev", netdev,
                "-device", "kite,id=k,addr=%d.0,mac=%s,netdev=n0"
                % (SLOT, MAC_STR),
                "-d", "guest_errors", "-D", self.log]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=self.stderr)
        self.qt_buf = b""
        # O_RDWR never blocks on a FIFO, whoever opens it first.
        self.qmp_in = os.open(self.qmp_path + ".in", os.O_RDWR)
        self.qmp_out = os.open(self.qmp_path + ".out", os.O_RDWR)
        self.qmp_buf = b""

    @staticmethod
    def _readline(fd, buf, what):
        deadline = time.monotonic() + REPLY_TIMEOUT
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Bail("no reply to %s" % what)
            r, _, _ = select.select([fd], [], [], left)
            if r:
                data = os.read(fd, 65536)
                if not data:
                    raise Bail("QEMU is gone (%s)" % what)
                buf += data
        line, buf = buf.split(b"\n", 1)
        return line.decode(), buf

    def qt(self, cmd):
        try:
            self.proc.stdin.write((cmd + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise Bail("QEMU is gone (sending %r)" % cmd[:60])
        while True:
            line, self.qt_buf = self._readline(self.proc.stdout.fileno(),
                                               self.qt_buf, repr(cmd[:60]))
            if line.startswith("IRQ"):
                continue
            if not line.startswith("OK"):
                raise Bail("%r answered %r" % (cmd[:60], line))
            return line[2:].strip()

    def qmp_cmd(self, execute, **arguments):
        msg = {"execute": execute}
        if arguments:
            msg["arguments"] = arguments
        os.write(self.qmp_in, (json.dumps(msg) + "\n").encode())
        while True:
            line, self.qmp_buf = self._readline(self.qmp_out, self.qmp_buf,
                                                "QMP " + execute)
            reply = json.loads(line)
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise Bail("QMP %s: %s" % (execute, reply["error"]))
            # Events and the greeting are skipped.

    def qmp_start(self):
        self.qmp_cmd("qmp_capabilities")

    # Guest access helpers.
    def writel(self, addr, val):
        self.qt("writel 0x%x 0x%x" % (addr, val))

    def readl(self, addr):
        return int(self.qt("readl 0x%x" % addr), 16)

    def write(self, addr, data):
        if data:
            self.qt("write 0x%x 0x%x 0x%s" % (addr, len(data), data.hex()))

    def read(self, addr, size):
        val = self.qt("read 0x%x 0x%x" % (addr, size))
        return bytes.fromhex(val[2:])

    def reg(self, off):
        return self.readl(BAR + off)

    def wreg(self, off, val):
        self.writel(BAR + off, val)

    def cfg_addr(self, off):
        return 0x80000000 | (SLOT << 11) | (off & 0xfc)

    def cfg_rd32(self, off):
        self.qt("outl 0xcf8 0x%x" % self.cfg_addr(off))
        return int(self.qt("inl 0xcfc"), 16)

    def cfg_wr32(self, off, val):
        self.qt("outl 0xcf8 0x%x" % self.cfg_addr(off))
        self.qt("outl 0xcfc 0x%x" % val)

    def cfg_wr16(self, off, val):
        self.qt("outl 0xcf8 0x%x" % self.cfg_addr(off))
        self.qt("outw 0x%x 0x%x" % (0xcfc + (off & 2), val))

    def close(self):
        try:
            self.qmp_cmd("quit")
        except Bail:
            pass            # QEMU may exit before it answers
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=REPLY_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.qmp_in)
        os.close(self.qmp_out)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, desc))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, desc))
            if diag:
                for line in str(diag).splitlines():
                    print("#   " + line)
        sys.stdout.flush()
        return cond

    def eq(self, got, want, desc):
        return self.ok(got == want, desc, "got %r, expected %r" % (got, want))


# Frames

def ether(dst, ethertype, payload, src=PEER_MAC, vlan=None):
    hdr = dst + src
    if vlan is not None:
        hdr += struct.pack(">HH", 0x8100, vlan)
    return hdr + struct.pack(">H", ethertype) + payload


def arp_reply(dst=MAC):
    """A 42-byte ARP reply, unpadded, as Linux sends it."""
    arp = struct.pack(">HHBBH", 1, 0x0800, 6, 4, 2) + PEER_MAC + \
        bytes([10, 0, 0, 2]) + dst + bytes([10, 0, 0, 1])
    return ether(dst, 0x0806, arp)


def ipv4_udp(sport, dport, payload, src_ip=(10, 0, 0, 2),
             dst_ip=(10, 0, 0, 1), dst=MAC, vlan=None):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17,
                     0, bytes(src_ip), bytes(dst_ip))
    return ether(dst, 0x0800, ip + udp, vlan=vlan)


def ipv6_udp(sport, dport, payload, dst=MAC, vlan=None):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    src_ip = bytes.fromhex("fe800000000000000000000000000002")
    dst_ip = bytes.fromhex("fe800000000000000000000000000001")
    ip = struct.pack(">IHBB", 6 << 28, len(udp), 17, 64) + src_ip + dst_ip
    return ether(dst, 0x86dd, ip + udp, vlan=vlan)


def raw(dst, length, fill=0x5a, ethertype=0x88b5):
    """An experimental-ethertype frame of exactly length bytes."""
    return ether(dst, ethertype, bytes([fill]) * (length - 14))


def fnv1a(data, h=2166136261):
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def steer_ipv4_udp(frame, nqueues):
    """The device's RX steering (kite_eth_rx_queue()), for IPv4/UDP."""
    ip = frame[14:]
    return fnv1a(ip[12:16] + ip[16:20] + ip[20:24]) % nqueues


# The test

class EthTest:
    def __init__(self, q, tap, wire):
        self.q = q
        self.t = tap
        self.wire = wire
        self.qemu_addr = None

    # -- wire ----------------------------------------------------------
    def inject(self, frame):
        self.wire.sendto(frame, self.qemu_addr)

    def wire_recv(self, timeout=POLL_TIMEOUT):
        r, _, _ = select.select([self.wire], [], [], timeout)
        if not r:
            return None
        data, _ = self.wire.recvfrom(65536)
        return data

    def wire_drain(self):
        while self.wire_recv(0.05) is not None:
            pass

    # -- device --------------------------------------------------------
    def poll_reg(self, off, want, timeout=POLL_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            v = self.q.reg(off)
            if v == want or time.monotonic() > deadline:
                return v
            time.sleep(0.002)

    def setup_ring(self, qn, rx, n, log_depth=3, vector=0):
        base = RX_BASE_LO if rx else TX_BASE_LO
        self.q.wreg(eq(qn, base), ring_addr(n) & 0xffffffff)
        self.q.wreg(eq(qn, base + 4), ring_addr(n) >> 32)
        self.q.qt("memset 0x%x 0x1000 0" % ring_addr(n))
        self.q.wreg(eq(qn, base + 8), CFG_ENABLE | (vector << 16) | log_depth)

    def disable_ring(self, qn, rx):
        self.q.wreg(eq(qn, RX_CFG if rx else TX_CFG), 0)

    def txd(self, ring, idx, addr, length, flags=0):
        self.q.write(ring_addr(ring) + idx * 16,
                     struct.pack("<QHHHH", addr, length, flags, 0, 0))

    def rxd(self, ring, idx, addr, buf_len, flags=0):
        self.q.write(ring_addr(ring) + idx * 16,
                     struct.pack("<QHHHH", addr, buf_len, flags, 0, 0))

    def desc_status(self, ring, idx):
        d = self.q.read(ring_addr(ring) + idx * 16 + 12, 4)
        return struct.unpack("<HH", d)   # status, pkt_len

    def msix_setup(self, vector, slot):
        ent = BAR + MSIX_TABLE + vector * 16
        self.q.writel(ent, MSG_ADDR + slot * 4)
        self.q.writel(ent + 4, 0)
        self.q.writel(ent + 8, 0xcafe0000 | vector)
        self.q.writel(ent + 12, 0)

    def msg(self, slot):
        return self.q.readl(MSG_ADDR + slot * 4)

    def clear_msgs(self):
        self.q.qt("memset 0x%x 0x100 0" % MSG_ADDR)

    def tx_frames(self, ring, qn, frames, start=0):
        """Post frames on TX queue qn (ring memory `ring`), wait for HEAD."""
        for i, f in enumerate(frames):
            self.q.write(buf_addr(16 + (start + i) % 8), f)
            self.txd(ring, (start + i) % 8, buf_addr(16 + (start + i) % 8),
                     len(f))
        tail = (start + len(frames)) & 0xffff
        self.q.wreg(eq(qn, TX_TAIL), tail)
        return self.poll_reg(eq(qn, TX_HEAD), tail)

    def run(self):
        q, t = self.q, self.t

        # PCI: map BAR0, memory + bus master, MSI-X on.
        q.cfg_wr32(0x10, BAR)
        q.cfg_wr32(0x14, 0)
        q.cfg_wr16(0x04, 0x0006)
        q.cfg_wr32(MSIX_CAP, 0x80000000)
        q.qt("clock_step %d" % RESET_NS)
        st = q.reg(STATUS)
        t.eq(st & (ST_READY | ST_LINK_UP), ST_READY | ST_LINK_UP,
             "READY and LINK_UP after reset")
        t.eq((q.reg(ETH_CTRL), q.reg(ETH_MTU)), (0, 1500),
             "ETH_CTRL 0 and ETH_MTU 1500 after reset")
        t.eq((q.reg(ETH_MAC_HI), q.reg(ETH_MAC_LO)), (0x5254, 0x00123456),
             "ETH_MAC is the factory MAC after reset")

        self.registers()
        self.ring_config()
        self.transmit()
        self.tx_bad_descriptors()
        self.receive()
        self.rx_filter_mtu_rocev2()
        self.rx_ring_full()
        self.rx_bad_descriptors()
        self.steering()
        self.interrupts()
        self.link()
        self.stats()
        self.reset()

        t.eq(q.reg(0), 0x4b495445, "QEMU is alive (guest errors did not "
             "crash it)")
        bad = q.qmp_cmd("qom-get", path="/machine/peripheral/k",
                        property="bad-writes")
        t.ok(bad > 0, "refused writes are counted in bad-writes",
             "bad-writes %r" % bad)

    def registers(self):
        q, t = self.q, self.t
        for bad in (67, 9001, 0, 0xffffffff):
            q.wreg(ETH_MTU, bad)
        t.eq(q.reg(ETH_MTU), 1500, "ETH_MTU outside [68, 9000] is ignored")
        q.wreg(ETH_MTU, 68)
        lo = q.reg(ETH_MTU)
        q.wreg(ETH_MTU, 9000)
        t.eq((lo, q.reg(ETH_MTU)), (68, 9000), "ETH_MTU 68 and 9000 accepted")
        q.wreg(ETH_MTU, 1500)
        q.wreg(ETH_CTRL, 0x4)
        t.eq(q.reg(ETH_CTRL), 0, "ETH_CTRL with reserved bits is ignored")
        q.wreg(ETH_MAC_HI, 0x10203)
        t.eq(q.reg(ETH_MAC_HI), 0x5254, "ETH_MAC_HI reserved bits: ignored")
        q.wreg(eq(0, TX_HEAD), 5)
        q.wreg(0x3fc, 1)
        t.eq(q.reg(eq(0, TX_HEAD)), 0, "HEAD is read-only")
        t.eq(q.reg(eq(0, TX_TAIL)) | q.reg(eq(0, Q_INTR)), 0,
             "TAIL and INTR read 0")

    def ring_config(self):
        q, t = self.q, self.t
        cases = [
            ("LOG_DEPTH 2", ring_addr(0), CFG_ENABLE | 2),
            ("LOG_DEPTH 13", ring_addr(0), CFG_ENABLE | 13),
            ("vector 64", ring_addr(0), CFG_ENABLE | (64 << 16) | 3),
            ("reserved CFG bits", ring_addr(0), CFG_ENABLE | (1 << 8) | 3),
            ("unaligned BASE", ring_addr(0) + 0x80, CFG_ENABLE | 3),
        ]
        for name, base, cfg in cases:
            for off in (TX_BASE_LO, RX_BASE_LO):
                q.wreg(eq(1, off), base)
                q.wreg(eq(1, off + 8), cfg)
            got = (q.reg(eq(1, TX_CFG)) & CFG_ENABLE,
                   q.reg(eq(1, RX_CFG)) & CFG_ENABLE)
            t.eq(got, (0, 0), "enable refused with %s" % name)
        q.wreg(eq(1, TX_BASE_LO), ring_addr(0))
        q.wreg(eq(1, TX_CFG), CFG_ENABLE | (5 << 16) | 12)
        t.eq(q.reg(eq(1, TX_CFG)), CFG_ENABLE | (5 << 16) | 12,
             "a good config (LOG_DEPTH 12, vector 5) enables the ring")
        q.wreg(eq(1, TX_BASE_LO), ring_addr(1))
        q.wreg(eq(1, TX_CFG), CFG_ENABLE | 3)
        t.eq((q.reg(eq(1, TX_BASE_LO)), q.reg(eq(1, TX_CFG))),
             (ring_addr(0), CFG_ENABLE | (5 << 16) | 12),
             "BASE and CFG writes while enabled are ignored")
        q.wreg(eq(1, TX_CFG), 0)
        t.eq(q.reg(eq(1, TX_CFG)), 0, "writing CFG without ENABLE disables")
        q.wreg(eq(1, TX_TAIL), 1)
        t.eq(q.reg(eq(1, TX_HEAD)), 0, "TAIL on a disabled ring is ignored")

    def transmit(self):
        q, t = self.q, self.t
        self.setup_ring(0, False, 0, log_depth=3)
        # Not sent while ETH_CTRL.ENABLE is clear.
        f0 = arp_reply(dst=PEER_MAC)
        q.write(buf_addr(16), f0)
        self.txd(0, 0, buf_addr(16), len(f0))
        q.wreg(eq(0, TX_TAIL), 1)
        time.sleep(0.1)
        t.eq((q.reg(eq(0, TX_HEAD)), self.wire_recv(0.1)), (0, None),
             "TX waits while ETH_CTRL.ENABLE is clear")
        q.wreg(ETH_CTRL, CTRL_ENABLE)
        head = self.poll_reg(eq(0, TX_HEAD), 1)
        got = self.wire_recv()
        t.eq((head, got), (1, f0),
             "setting ENABLE sends the pending 42-byte frame unpadded")
        t.eq(self.desc_status(0, 0)[0], DESC_DONE, "TX descriptor is DONE")

        frames = [raw(PEER_MAC, 60, 1), raw(PEER_MAC, 1514, 2),
                  raw(PEER_MAC, 14, 3),
                  ether(PEER_MAC, 0x88b5, bytes(1500), vlan=5)]
        head = self.tx_frames(0, 0, frames, start=1)
        got = [self.wire_recv() for _ in frames]
        t.eq(head, 5, "TX HEAD follows TAIL")
        t.ok(got == frames, "frames of 60, 1514, 14 and 1518 (tagged) bytes "
             "reach the backend intact",
             "lengths %r" % [len(g) if g else None for g in got])
        st = [self.desc_status(0, i)[0] for i in range(1, 5)]
        t.eq(st, [DESC_DONE] * 4, "their descriptors are DONE")

        # TAIL more than depth ahead of HEAD is refused.
        q.wreg(eq(0, TX_TAIL), 5 + 9)
        time.sleep(0.05)
        t.eq(q.reg(eq(0, TX_HEAD)), 5, "TAIL more than depth ahead is ignored")

        # A burst far larger than the per-run budget (64 frames), on a
        # 512-entry ring of queue 2.
        self.setup_ring(2, False, 8, log_depth=9)
        n = 500
        payload = raw(PEER_MAC, 64, 7)
        q.write(buf_addr(30), payload)
        descs = b"".join(struct.pack("<QHHHH", buf_addr(30), 64, 0, 0, 0)
                         for _ in range(n))
        q.write(ring_addr(8), descs[:0x1000])
        q.write(ring_addr(9), descs[0x1000:0x2000])
        q.wreg(eq(2, TX_TAIL), n)
        head = self.poll_reg(eq(2, TX_HEAD), n, timeout=10)
        count = 0
        while self.wire_recv(0.5) is not None:
            count += 1
        t.eq((head, count), (n, n), "a burst of %d frames (several "
             "bottom-half runs) is sent completely" % n)
        self.disable_ring(2, False)

    def tx_bad_descriptors(self):
        q, t = self.q, self.t
        ring = 0
        good = raw(PEER_MAC, 100, 9)
        cases = [
            ("length 0", buf_addr(17), 0, 0),
            ("length 13", buf_addr(17), 13, 0),
            ("untagged 1515 bytes with MTU 1500", buf_addr(17), 1515, 0),
            ("length 1519", buf_addr(17), 1519, 0),
            ("an unmapped buffer address", BAD_ADDR, 100, 0),
            ("non-zero flags", buf_addr(17), 100, 1),
        ]
        q.write(buf_addr(17), raw(PEER_MAC, 1515, 8))
        start = 5
        for i, (_, addr, length, flags) in enumerate(cases):
            self.txd(ring, (start + i) % 8, addr, length, flags)
        q.write(buf_addr(18), good)
        idx = start + len(cases)
        self.txd(ring, idx % 8, buf_addr(18), len(good))
        q.wreg(eq(0, TX_TAIL), idx + 1)
        head = self.poll_reg(eq(0, TX_HEAD), idx + 1)
        t.eq(head, idx + 1, "bad TX descriptors are consumed")
        for i, (name, _, _, _) in enumerate(cases):
            st = self.desc_status(ring, (start + i) % 8)[0]
            t.eq(st, DESC_DONE | DESC_ERR, "TX %s: status DONE|ERR" % name)
        t.eq(self.wire_recv(), good, "only the good frame after them is sent")
        t.eq(self.wire_recv(0.2), None, "nothing else was sent")

        # A ring whose descriptors cannot be read: consumed, nothing sent.
        self.disable_ring(3, False)
        q.wreg(eq(3, TX_BASE_LO), 0)
        q.wreg(eq(3, TX_BASE_HI), BAD_ADDR >> 32)
        q.wreg(eq(3, TX_CFG), CFG_ENABLE | 3)
        q.wreg(eq(3, TX_TAIL), 8)
        head = self.poll_reg(eq(3, TX_HEAD), 8)
        t.eq((head, self.wire_recv(0.2)), (8, None),
             "TX ring at an unmapped address: consumed, nothing sent")
        self.disable_ring(3, False)
        self.tx_next = idx + 1

    def post_rx(self, qn, ring, first, count, buf_len=2048, start_buf=0):
        for i in range(first, first + count):
            self.rxd(ring, i % 8, buf_addr(start_buf + i % 8), buf_len)
        self.q.wreg(eq(qn, RX_TAIL), (first + count) & 0xffff)

    def rx_check(self, ring, idx, frame, buf=None):
        st, plen = self.desc_status(ring, idx % 8)
        if st != DESC_DONE or plen != len(frame):
            return "status 0x%x pkt_len %d (want %d)" % (st, plen, len(frame))
        data = self.q.read(buf_addr(buf if buf is not None else idx % 8),
                           len(frame))
        return None if data == frame else "data differs"

    def receive(self):
        t = self.t
        self.setup_ring(0, True, 1, log_depth=3)
        self.rx_head = 0
        self.post_rx(0, 1, 0, 8)
        frames = [arp_reply(), raw(BCAST, 60, 0x11),
                  raw(MAC, 1514, 0x12),
                  ether(MAC, 0x88b5, bytes(range(256)) * 5 + bytes(220),
                        vlan=7),
                  raw(bytes.fromhex("01005e000001"), 80, 0x13)]
        for f in frames:
            self.inject(f)
        head = self.poll_reg(eq(0, RX_HEAD), len(frames))
        t.eq(head, len(frames), "RX: %d frames received" % len(frames))
        for i, (name, f) in enumerate(zip(
                ["unpadded 42-byte ARP reply", "broadcast",
                 "1514-byte unicast", "1518-byte tagged", "multicast"],
                frames)):
            err = self.rx_check(1, i, f)
            t.ok(err is None, "RX %s: DONE, pkt_len and data" % name, err)
        self.rx_head = len(frames)

    def expect_rx_only(self, qn, ring, frames, marker, desc):
        """Inject frames then a marker; the marker must be the next one."""
        for f in frames:
            self.inject(f)
        self.inject(marker)
        want = (self.rx_head + 1) & 0xffff
        head = self.poll_reg(eq(qn, RX_HEAD), want)
        err = None if head == want else "HEAD %d, expected %d" % (head, want)
        if err is None:
            err = self.rx_check(ring, self.rx_head, marker)
        self.t.ok(err is None, desc, err)
        self.rx_head = want
        # Keep 8 buffers posted.
        self.post_rx(qn, ring, self.rx_head + 7, 1)

    def marker(self, n):
        return raw(MAC, 64, 0x80 + n)

    def rx_filter_mtu_rocev2(self):
        q = self.q
        # Top up: 3 descriptors are free after receive(); post them.
        self.post_rx(0, 1, 8, self.rx_head)
        other = bytes.fromhex("5254000000ee")
        self.expect_rx_only(0, 1, [raw(other, 64, 1)], self.marker(1),
                            "unicast to another MAC is not received")
        q.wreg(ETH_CTRL, CTRL_ENABLE | CTRL_PROMISC)
        f = raw(other, 64, 2)
        self.inject(f)
        want = self.rx_head + 1
        head = self.poll_reg(eq(0, RX_HEAD), want)
        err = None if head == want else "HEAD %d" % head
        self.t.ok(err is None and self.rx_check(1, self.rx_head, f) is None,
                  "PROMISC receives unicast to another MAC", err)
        self.rx_head = want
        self.post_rx(0, 1, self.rx_head + 7, 1)
        q.wreg(ETH_CTRL, CTRL_ENABLE)

        self.expect_rx_only(0, 1, [raw(MAC, 1515, 3),
                                   ether(MAC, 0x88b5, bytes(1501), vlan=1)],
                            self.marker(2),
                            "frames over the MTU (1515 untagged, 1519 "
                            "tagged) are dropped")
        q.wreg(ETH_MTU, 1000)
        self.expect_rx_only(0, 1, [raw(MAC, 1015, 4)], self.marker(3),
                            "a smaller MTU (1000) drops 1015-byte frames")
        q.wreg(ETH_MTU, 1500)
        runt = (MAC + PEER_MAC + b"\x08")[:13]
        self.expect_rx_only(0, 1, [runt], self.marker(4),
                            "a 13-byte runt is dropped")

        roce = [ipv4_udp(49152, 4791, bytes(40)),
                ipv4_udp(49152, 4791, bytes(40), vlan=3),
                ipv6_udp(49153, 4791, bytes(40)),
                ipv6_udp(49153, 4791, bytes(40), vlan=3)]
        self.expect_rx_only(0, 1, roce, self.marker(5),
                            "RoCEv2 frames (IPv4/IPv6, untagged/tagged) do "
                            "not reach the RX rings")
        f = ipv4_udp(49152, 4792, bytes(40))
        self.expect_rx_only(0, 1, [], f, "UDP to port 4792 is received")

        # ENABLE clear: dropped, not queued.
        q.wreg(ETH_CTRL, 0)
        self.inject(raw(MAC, 64, 6))
        time.sleep(0.2)
        q.wreg(ETH_CTRL, CTRL_ENABLE)
        self.expect_rx_only(0, 1, [], self.marker(6),
                            "frames arriving while ENABLE is clear are "
                            "dropped")

    def rx_ring_full(self):
        q, t = self.q, self.t
        # Fresh ring on queue 0: post 2 buffers, send 5 frames.
        self.disable_ring(0, True)
        self.setup_ring(0, True, 1, log_depth=3)
        self.rx_head = 0
        self.post_rx(0, 1, 0, 2)
        frames = [raw(MAC, 100 + i, 0x20 + i) for i in range(5)]
        for f in frames:
            self.inject(f)
        head = self.poll_reg(eq(0, RX_HEAD), 2)
        time.sleep(0.2)
        head = q.reg(eq(0, RX_HEAD))
        t.eq(head, 2, "a full RX ring stops at TAIL (frames wait in QEMU)")
        self.post_rx(0, 1, 2, 6)
        head = self.poll_reg(eq(0, RX_HEAD), 5)
        t.eq(head, 5, "advancing TAIL delivers the queued frames")
        errs = [self.rx_check(1, i, f) for i, f in enumerate(frames)]
        t.ok(errs == [None] * 5, "all 5 frames received in order", errs)
        self.rx_head = 5
        # Nothing lost afterwards: receive continues normally.
        self.expect_rx_only(0, 1, [], self.marker(7),
                            "receive continues after the flush")

    def rx_bad_descriptors(self):
        q, t = self.q, self.t
        self.disable_ring(0, True)
        self.setup_ring(0, True, 1, log_depth=3)
        self.rxd(1, 0, buf_addr(0), 100)       # too small
        self.rxd(1, 1, BAD_ADDR, 2048)          # unmapped
        self.rxd(1, 2, buf_addr(2), 2048, 1)    # reserved flags
        self.rxd(1, 3, buf_addr(3), 2048)
        q.wreg(eq(0, RX_TAIL), 4)
        frames = [raw(MAC, 200, 0x31), raw(MAC, 200, 0x32),
                  raw(MAC, 200, 0x33), raw(MAC, 200, 0x34)]
        for f in frames:
            self.inject(f)
        head = self.poll_reg(eq(0, RX_HEAD), 4)
        t.eq(head, 4, "RX descriptors consumed")
        for i, name in enumerate(["buffer too small", "unmapped buffer",
                                  "non-zero flags"]):
            st, plen = self.desc_status(1, i)
            t.eq((st, plen), (DESC_DONE | DESC_ERR, 200),
                 "RX %s: DONE|ERR, pkt_len" % name)
        err = self.rx_check(1, 3, frames[3])
        t.ok(err is None, "the next frame lands in the next good descriptor",
             err)
        # RX ring at an unmapped address: frames dropped, no crash.
        self.disable_ring(0, True)
        q.wreg(eq(0, RX_BASE_LO), 0)
        q.wreg(eq(0, RX_BASE_HI), BAD_ADDR >> 32)
        q.wreg(eq(0, RX_CFG), CFG_ENABLE | 3)
        q.wreg(eq(0, RX_TAIL), 8)
        for i in range(3):
            self.inject(raw(MAC, 64, i))
        head = self.poll_reg(eq(0, RX_HEAD), 3)
        t.eq(head, 3, "RX ring at an unmapped address: frames dropped")
        self.disable_ring(0, True)

    def steering(self):
        q, t = self.q, self.t
        for qn in range(4):
            self.disable_ring(qn, True)
            self.setup_ring(qn, True, 10 + qn, log_depth=3)
        for qn in range(4):
            for i in range(8):
                self.rxd(10 + qn, i, buf_addr(40 + qn * 8 + i), 2048)
            q.wreg(eq(qn, RX_TAIL), 8)
        flows = [ipv4_udp(1000 + i, 2000 + 7 * i, bytes([i]) * 20)
                 for i in range(12)]
        want = [0, 0, 0, 0]
        for f in flows:
            want[steer_ipv4_udp(f, 4)] += 1
        arp = arp_reply()
        want[0] += 1
        for f in flows + [arp]:
            self.inject(f)
        deadline = time.monotonic() + POLL_TIMEOUT
        while True:
            heads = [q.reg(eq(qn, RX_HEAD)) for qn in range(4)]
            if heads == want or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        t.eq(heads, want, "IPv4/UDP flows are spread over the 4 RX queues "
             "by the documented FNV-1a hash; ARP goes to queue 0")
        t.ok(sum(1 for h in want if h) >= 2, "at least two queues used",
             want)
        # Same flow, same queue; check data of one steered frame.
        f = flows[0]
        qn = steer_ipv4_udp(f, 4)
        got = q.read(buf_addr(40 + qn * 8), len(f))
        first = [x for x in flows if steer_ipv4_udp(x, 4) == qn][0]
        t.eq(got, first, "the first frame of queue %d is the expected flow"
             % qn)
        # With queues 1 and 3 only: hash mod 2 over [1, 3].
        self.disable_ring(0, True)
        self.disable_ring(2, True)
        for qn in (1, 3):
            self.disable_ring(qn, True)
            self.setup_ring(qn, True, 10 + qn, log_depth=3)
            for i in range(8):
                self.rxd(10 + qn, i, buf_addr(40 + qn * 8 + i), 2048)
            q.wreg(eq(qn, RX_TAIL), 8)
        f = [x for x in flows if steer_ipv4_udp(x, 2) == 1][0]
        exp = 3
        self.inject(f)
        self.inject(arp)
        deadline = time.monotonic() + POLL_TIMEOUT
        want = {1: 0, 3: 0}
        want[exp] += 1
        want[1] += 1
        while True:
            got = {qn: q.reg(eq(qn, RX_HEAD)) for qn in (1, 3)}
            if got == want or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        t.eq(got, want, "with RX queues 1 and 3 enabled: the flow goes to "
             "queue %d, non-IP to the first enabled queue (1)" % exp)
        for qn in (1, 3):
            self.disable_ring(qn, True)

    def interrupts(self):
        q, t = self.q, self.t
        self.msix_setup(3, 3)
        self.msix_setup(4, 4)
        self.clear_msgs()
        # TX on queue 0 uses vector 0 so far: reconfigure with vector 3.
        self.disable_ring(0, False)
        self.setup_ring(0, False, 0, log_depth=3, vector=3)
        f = raw(PEER_MAC, 64, 0x41)
        self.tx_frames(0, 0, [f], start=0)
        self.wire_drain()
        t.eq(self.msg(3), 0, "TX completion without ARM: no interrupt")
        q.wreg(eq(0, Q_INTR), 1)
        self.tx_frames(0, 0, [f], start=1)
        self.wire_drain()
        t.eq(self.msg(3), 0xcafe0003, "TX completion with ARM: MSI-X vector "
             "3 message written")
        self.clear_msgs()
        self.tx_frames(0, 0, [f], start=2)
        self.wire_drain()
        t.eq(self.msg(3), 0, "the interrupt disarmed itself")

        self.setup_ring(0, True, 1, log_depth=3, vector=4)
        self.rx_head = 0
        self.post_rx(0, 1, 0, 8)
        q.wreg(eq(0, Q_INTR), 1)
        self.expect_rx_only(0, 1, [], self.marker(8), "RX frame received")
        t.eq((self.msg(4), self.msg(3)), (0xcafe0004, 0),
             "RX completion with ARM: MSI-X vector 4 (the RX ring's)")
        q.wreg(eq(0, Q_INTR), 0x2)
        self.clear_msgs()
        self.expect_rx_only(0, 1, [], self.marker(9), "RX frame received")
        t.eq(self.msg(4), 0, "INTR with reserved bits does not arm")

    def link(self):
        q, t = self.q, self.t
        self.msix_setup(0, 0)
        self.clear_msgs()
        q.reg(ICR)
        q.wreg(IMR, INT_LINK)
        q.qmp_cmd("set_link", name="n0", up=False)
        st = q.reg(STATUS)
        t.eq(st & ST_LINK_UP, 0, "set_link off clears STATUS.LINK_UP")
        t.eq(q.reg(ICR) & INT_LINK, INT_LINK, "ICR.LINK set on link down")
        t.eq(q.reg(ICR), 0, "ICR is read-to-clear")
        t.eq(self.msg(0), 0xcafe0000, "vector 0 raised (IMR.LINK)")
        self.inject(raw(MAC, 64, 0x51))
        time.sleep(0.2)
        t.eq(q.reg(eq(0, RX_HEAD)), self.rx_head,
             "no frame received while the link is down")
        self.clear_msgs()
        q.qmp_cmd("set_link", name="n0", up=True)
        t.eq((q.reg(STATUS) & ST_LINK_UP, q.reg(ICR) & INT_LINK),
             (ST_LINK_UP, INT_LINK), "set_link on: LINK_UP and ICR.LINK")
        t.eq(self.msg(0), 0xcafe0000, "vector 0 raised again")
        self.expect_rx_only(0, 1, [], self.marker(10),
                            "receive works again after link up")
        self.tx_frames(0, 0, [raw(PEER_MAC, 64, 0x52)], start=3)
        t.eq(self.wire_recv(), raw(PEER_MAC, 64, 0x52),
             "transmit works again after link up")

    def query_stats(self):
        """KITE_CMD_QUERY_STATS through the command queue (BAR0 0x800)."""
        q = self.q
        if not self.cmdq_pi:
            q.wreg(0x800, CMDQ_RING)
            q.wreg(0x804, 0)
            q.wreg(0x808, CFG_ENABLE | 1)           # 2 entries
        entry = CMDQ_RING + (self.cmdq_pi % 2) * 256
        q.write(STATS_BUF, bytes(128))
        q.write(entry, struct.pack("<IIHHIQII", 0x03, 0x5a, 0, 128, 0,
                                   STATS_BUF, 0, 0) + bytes(224))
        self.cmdq_pi += 1
        q.wreg(0x80c, self.cmdq_pi)
        ci = self.poll_reg(0x810, self.cmdq_pi)
        status = struct.unpack("<I", q.read(entry + 24, 4))[0]
        if ci != self.cmdq_pi or status != 1 << 31:
            raise Bail("QUERY_STATS: CI %d, status 0x%x" % (ci, status))
        return struct.unpack("<16Q", q.read(STATS_BUF, 128))

    def stats(self):
        t = self.t
        self.cmdq_pi = 0
        before = self.query_stats()
        self.tx_frames(0, 0, [raw(PEER_MAC, 60, 0x61),
                              raw(PEER_MAC, 100, 0x62)], start=4)
        self.wire_drain()
        self.expect_rx_only(0, 1, [raw(MAC, 1515, 0x63),
                                   ipv4_udp(49152, 4791, bytes(40))],
                            self.marker(11), "RX for the statistics")
        after = self.query_stats()
        delta = [a - b for a, b in zip(after, before)]
        # TX_FRAMES, TX_BYTES, RX_FRAMES, RX_BYTES, RX_DROPS, ROCE_RX_PKTS
        t.eq(delta[:7], [2, 160, 1, 64, 1, 0, 1],
             "statistics: TX/RX frames and bytes, RX drops, RoCE RX")

    def reset(self):
        q, t = self.q, self.t
        q.wreg(ETH_MTU, 9000)
        q.wreg(ETH_MAC_LO, 0x01020304)
        q.wreg(CTRL, 1)
        q.qt("clock_step %d" % RESET_NS)
        regs = (q.reg(ETH_CTRL), q.reg(ETH_MTU), q.reg(ETH_MAC_LO),
                q.reg(eq(0, TX_CFG)), q.reg(eq(0, RX_CFG)),
                q.reg(eq(0, TX_HEAD)), q.reg(eq(0, RX_HEAD)))
        t.eq(regs, (0, 1500, 0x00123456, 0, 0, 0, 0),
             "CTRL.RESET restores ETH_CTRL, MTU, MAC and the rings")
        t.eq(q.reg(STATUS) & ST_LINK_UP, ST_LINK_UP,
             "LINK_UP survives the reset")


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    if len(sys.argv) != 2 or not os.access(sys.argv[1], os.X_OK):
        print("Bail out! usage: %s /path/to/qemu-system-x86_64" % sys.argv[0])
        return 1
    print("TAP version 13")
    tap = Tap()
    with tempfile.TemporaryDirectory() as work:
        wire = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        wire.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        wire.bind(("127.0.0.1", 0))
        peer_port = wire.getsockname()[1]
        local_port = free_udp_port()
        q = Qemu(sys.argv[1], work, local_port, peer_port)
        test = EthTest(q, tap, wire)
        test.qemu_addr = ("127.0.0.1", local_port)
        try:
            q.qmp_start()
            test.run()
        except Bail as e:
            print("Bail out! %s" % e)
            q.stderr.seek(0)
            for line in q.stderr.read().splitlines():
                print("# qemu: " + line)
            q.close()
            return 1
        q.close()
        q.stderr.seek(0)
        err = q.stderr.read()
        tap.ok("kite" not in err and "assert" not in err.lower(),
               "QEMU printed no errors", err)
        with open(q.log) as f:
            log = f.read()
        tap.ok("TX queue 0: descriptor" in log and
               "enable refused" in log and "RX queue 0: descriptor" in log,
               "guest errors are logged with LOG_GUEST_ERROR",
               log[-2000:])
        tap.eq(q.proc.returncode, 0, "QEMU exited cleanly when qtest closed")
        wire.close()
    print("1..%d" % tap.n)
    if tap.failed:
        print("# %d of %d failed" % (tap.failed, tap.n))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
