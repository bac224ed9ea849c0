#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Drive `make demo` at a terminal, as a user would.

Runs scripts/demo.sh on a pseudo-terminal, waits for the guest's shell,
types a command and checks its output, interrupts a running command with
Ctrl-C, types `exit` and checks that the demo ends by itself with status 0
and leaves the terminal in its normal (cooked, echoing) mode. Each result
is a TAP line ("ok - NAME" / "not ok - NAME") on standard output; the
whole session is kept in LOG.

usage: test-demo-pty.py LOG
"""
import os
import pty
import select
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failed = 0


def report(ok, name):
    global failed
    print(f"{'ok' if ok else 'not ok'} - {name}", flush=True)
    if not ok:
        failed += 1


class Session:
    def __init__(self, log):
        # The demo, then the terminal's mode as it left it.
        cmd = f"bash {ROOT}/scripts/demo.sh; echo DEMO-STATUS=$?; stty -a"
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvp("bash", ["bash", "-c", cmd])
        self.buf = b""
        self.log = open(log, "wb")

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.buf += data
        self.log.write(data)
        self.log.flush()
        return True

    def expect(self, text, timeout):
        """Wait for TEXT in what was printed since the last expect()."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            i = self.buf.find(text)
            if i >= 0:
                self.buf = self.buf[i + len(text):]
                return True
            if not self.read(min(1.0, end - time.monotonic())):
                break
        return self.buf.find(text) >= 0

    def send(self, text):
        os.write(self.fd, text)

    def wait(self, timeout):
        """The demo's exit status, or None if it is still running."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                while self.read(0.2):
                    pass
                return os.waitstatus_to_exitcode(status)
            self.read(0.5)
        return None


def main():
    s = Session(sys.argv[1])
    # Builds are cached; the VM boots and shows the device first.
    shell = s.expect(b"Kite VM shell", 900)
    report(shell, "demo: the guest's interactive shell starts")
    if not shell:
        os.kill(s.pid, 9)
        s.wait(10)
        return 1
    time.sleep(2)
    s.send(b"echo kite-$((6 * 7))\r")
    report(s.expect(b"kite-42", 30), "demo: a command typed at the terminal runs in the guest")
    s.send(b"sleep 1000\r")
    time.sleep(2)
    s.send(b"\x03")
    s.send(b"echo after-$((1 + 1))\r")
    report(s.expect(b"after-2", 30),
           "demo: Ctrl-C interrupts the guest's command, the shell goes on")
    s.send(b"exit\r")
    status = s.wait(120)
    report(status is not None, "demo: 'exit' powers the guest off and the demo ends")
    if status is None:
        os.kill(s.pid, 9)
        s.wait(10)
        return 1
    report(s.expect(b"DEMO-STATUS=0", 5), "demo: exit status 0")
    # stty -a: "icanon" and "echo", not "-icanon" and "-echo".
    tail = s.buf.decode(errors="replace").split()
    report("icanon" in tail and "echo" in tail,
           "demo: the terminal is back in cooked mode with echo")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
