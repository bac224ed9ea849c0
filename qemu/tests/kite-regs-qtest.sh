#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Register-level test of the Kite device model, without a guest: QEMU runs
# with the qtest accelerator and this script drives PCI configuration space,
# BAR0 and the virtual clock through the qtest protocol on QEMU's stdio.
# Prints TAP; exits non-zero if any test fails.
#
# usage: kite-regs-qtest.sh /path/to/qemu-system-x86_64
set -uo pipefail

QEMU=${1:?usage: $0 /path/to/qemu-system-x86_64}
[ -x "$QEMU" ] || { echo "Bail out! no QEMU binary at $QEMU"; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
GUEST_LOG=$WORK/guest-errors.log

SLOT=3
BAR=0xe0000000		# where the test maps BAR0
MSG_ADDR=0x100000	# guest RAM the MSI-X messages are written to
MAC=52:54:00:12:34:56
SERIAL=0x1122334455667788

# Register offsets (include/linux/kite/kite_hw.h).
ID=0x000 HW_REV=0x004 FW_VER=0x008 CAPS=0x00c STATUS=0x010 CTRL=0x014
INTR_TEST=0x018 MAC_LO=0x020 MAC_HI=0x024 SERIAL_LO=0x028 SERIAL_HI=0x02c
ICR=0x030 IMR=0x034
RTC_LO=0x040 RTC_HI=0x044 RTC_ARG_LO=0x048 RTC_ARG_HI=0x04c RTC_CMD=0x050
RTC_SET=1 RTC_ADJ=2 RTC_FREQ=3
CLOCK_LO=0x820 CLOCK_HI=0x824	# KITE_RDMA_CLOCK_*: BAR0 0x800 + 0x020
READY=0x1 RESETTING=0x4 LINK_UP=0x8
# Configuration space layout of the model.
PCIE_CAP=0x80 MSIX_CAP=0xc0
RESET_NS=2000000	# default reset-delay-us, in ns

coproc QT {
	exec timeout 120 "$QEMU" -machine q35 -accel qtest -qtest stdio \
		-nodefaults -display none -m 128M \
		-L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu \
		-device "kite,id=k,addr=$SLOT.0,mac=$MAC,serial=$SERIAL" \
		-d guest_errors -D "$GUEST_LOG" 2>"$WORK/stderr"
}
QT_IN=${QT[1]}
QT_OUT=${QT[0]}
# Bash unsets QT_PID when the coprocess exits: keep it.
QEMU_PID=$QT_PID

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# Value getters run in command substitutions: bail out of the whole script,
# printing on the script's own stdout (fd 3).
exec 3>&1
MAIN_PID=$$
trap 'exit 1' TERM
bail() {
	echo "Bail out! $*" >&3
	sed 's/^/# qemu: /' "$WORK/stderr" >&3
	kill -TERM "$MAIN_PID"
	exit 1
}

# Send one qtest command; the reply's value (if any) goes to $REPLY_VAL.
qt() {
	local line
	echo "$*" >&"$QT_IN" || bail "QEMU is gone (sending '$*')"
	IFS= read -r -t 10 line <&"$QT_OUT" || bail "no reply to '$*'"
	case $line in
	OK*) REPLY_VAL=${line#OK} REPLY_VAL=${REPLY_VAL# } ;;
	*) bail "'$*' answered '$line'" ;;
	esac
}

cfg_addr() { printf '0x%x' $((0x80000000 | (SLOT << 11) | ($1 & 0xfc))); }
cfg_rd32() { qt outl 0xcf8 "$(cfg_addr "$1")"; qt inl 0xcfc; echo $((REPLY_VAL)); }
cfg_wr32() { qt outl 0xcf8 "$(cfg_addr "$1")"; qt outl 0xcfc "$2"; }
cfg_wr16() { qt outl 0xcf8 "$(cfg_addr "$1")"; qt outw $((0xcfc + ($1 & 2))) "$2"; }
rd() { qt readl $(($2 + $1)); echo $((REPLY_VAL)); }
reg() { rd "$1" $BAR; }
wreg() { qt writel $((BAR + $1)) "$2"; }
# STATUS without LINK_UP, which follows the backend link, not the reset.
status() { echo $(($(reg $STATUS) & ~LINK_UP)); }
step() { qt clock_step "$1"; }

# check DESCRIPTION ACTUAL EXPECTED
check() {
	if [ $(($2)) -eq $(($3)) ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '#   got 0x%x, expected 0x%x\n' $(($2)) $(($3))
	fi
}

map_bar0() {
	cfg_wr32 0x10 $BAR
	cfg_wr32 0x14 0
	cfg_wr16 0x04 0x0006	# memory space + bus master
}

echo "TAP version 13"

check "PCI vendor/device is 1ee7:4b01" "$(cfg_rd32 0x00)" 0x4b011ee7
check "class Ethernet, revision 1" "$(cfg_rd32 0x08)" 0x02000001
check "subsystem is 1ee7:4b01" "$(cfg_rd32 0x2c)" 0x4b011ee7
cfg_wr32 0x10 0xffffffff
check "BAR0 is 16 KiB, 64-bit, non-prefetchable" "$(cfg_rd32 0x10)" 0xffffc004
map_bar0

check "ID is KITE_ID_MAGIC" "$(reg $ID)" 0x4b495445
check "HW_REV is 1.0" "$(reg $HW_REV)" 0x00010000
check "CAPS.NUM_VECTORS is 64" $(($(reg $CAPS) & 0xff)) 64
check "CAPS: 64 vectors, 4 Ethernet queue pairs, RDMA, RTC" "$(reg $CAPS)" 0x30440
check "STATUS.LINK_UP follows the backend link" $(($(reg $STATUS) & LINK_UP)) $LINK_UP
check "STATUS is RESETTING at power-on" "$(status)" $RESETTING
check "FW_VER reads 0 while not ready" "$(reg $FW_VER)" 0
step $RESET_NS
check "STATUS is READY after the reset delay" "$(status)" $READY
check "FW_VER is 1.0.0" "$(reg $FW_VER)" 0x01000000
check "MAC_LO holds MAC bytes 2..5" "$(reg $MAC_LO)" 0x00123456
check "MAC_HI holds MAC bytes 0..1" "$(reg $MAC_HI)" 0x5254
check "SERIAL_LO" "$(reg $SERIAL_LO)" 0x55667788
check "SERIAL_HI" "$(reg $SERIAL_HI)" 0x11223344
check "IMR is 0 after reset" "$(reg $IMR)" 0
wreg $IMR 0x3
check "IMR holds LINK and FATAL" "$(reg $IMR)" 0x3
wreg $IMR 0
check "ICR reads 0 without causes" "$(reg $ICR)" 0
check "RDMA CMD_TIMEOUT reports the default 5000 ms" "$(reg 0x818)" 5000
wreg 0x818 7
check "RDMA CMD_TIMEOUT is read-only" "$(reg 0x818)" 5000
check "unknown offset reads 0" "$(reg 0x81c)" 0
check "last register offset reads 0" "$(reg 0xffc)" 0
wreg $ID 0
wreg $STATUS 0
wreg 0x800 0xffffffff
check "writes to RO/unknown registers are ignored" \
	$(($(reg $ID) ^ $(status))) $((0x4b495445 ^ READY))
check "CTRL reads 0" "$(reg $CTRL)" 0
qt writeb $((BAR + CTRL)) 1
qt writew $((BAR + CTRL)) 1
check "8/16-bit writes to CTRL are rejected" "$(status)" $READY

wreg $CTRL 0x1
check "CTRL reset: STATUS is RESETTING" "$(status)" $RESETTING
step $((RESET_NS / 2))
check "still RESETTING half-way" "$(status)" $RESETTING
step $((RESET_NS / 2))
check "READY after the reset delay" "$(status)" $READY
wreg $CTRL 0x1
step $((RESET_NS / 2))
wreg $CTRL 0x1
step $((RESET_NS / 2))
check "a second reset restarts the delay" "$(status)" $RESETTING
step $((RESET_NS / 2))
check "READY after the restarted delay" "$(status)" $READY

# The real-time clock and the device clock (prm.rst, prm_cmdq.rst): HI, LO,
# HI again, as a driver reads them.
clk64() {
	local hi lo
	while :; do
		hi=$(reg "$2") lo=$(reg "$1")
		[ "$(reg "$2")" -ne "$hi" ] || break
	done
	echo $(((hi << 32) | lo))
}
rtc() { clk64 $RTC_LO $RTC_HI; }
clock() { clk64 $CLOCK_LO $CLOCK_HI; }
# rtc_cmd OP ARG64
rtc_cmd() {
	wreg $RTC_ARG_LO $(($2 & 0xffffffff))
	wreg $RTC_ARG_HI $((($2 >> 32) & 0xffffffff))
	wreg $RTC_CMD "$1"
}
T=1700000000123456789
check "RTC after reset: the time since the reset began" "$(rtc)" $RESET_NS
rtc_cmd $RTC_SET $T
check "RTC SET" "$(rtc)" $T
step 1000000
check "RTC runs at the nominal rate" "$(rtc)" $((T + 1000000))
c0=$(clock)
step 5000
check "RDMA CLOCK counts nanoseconds" $(($(clock) - c0)) 5000
rtc_cmd $RTC_ADJ -500
check "RTC ADJ by -500 ns" "$(rtc)" $((T + 1000000 + 5000 - 500))
T=$(rtc)
rtc_cmd $RTC_FREQ 100000000
step 1000000
check "RTC FREQ +10 %: 1 ms becomes 1.1 ms" $(($(rtc) - T)) 1100000
T=$(rtc)
rtc_cmd $RTC_FREQ $((-50000 & 0xffffffff))	# ARG_HI 0
step 1000000000
check "RTC FREQ -50 ppm over 1 s" $(($(rtc) - T)) $((1000000000 - 50000))
T=$(rtc)
rtc_cmd $RTC_FREQ 100000001
rtc_cmd $RTC_FREQ $(((1 << 32) | 1000))
rtc_cmd $((RTC_SET | 0x10)) 5
rtc_cmd 0 5
rtc_cmd 4 5
wreg $RTC_LO 0
step 1000000
check "out-of-range rate, reserved bits, unknown commands are ignored" \
	$(($(rtc) - T)) $((1000000 - 50))
check "RTC argument and command registers read 0" \
	$(($(reg $RTC_ARG_LO) | $(reg $RTC_ARG_HI) | $(reg $RTC_CMD))) 0
rtc_cmd $RTC_FREQ 0
rtc_cmd $RTC_SET 0xfffffff0
step 32
check "RTC low half carries into the high half" "$(rtc)" 0x100000010
wreg $CLOCK_LO 0
c0=$(clock)
wreg $CTRL 0x1
step $RESET_NS
check "reset: RTC starts again at 0, at the nominal rate" "$(rtc)" $RESET_NS
check "reset: the device clock goes on" $(($(clock) - c0)) $RESET_NS

# MSI-X
v=$(cfg_rd32 $MSIX_CAP)
check "MSI-X capability with 64 entries" $((v & 0x07ff00ff)) $(((63 << 16) | 0x11))
check "MSI-X table in BAR0 at 0x2000" "$(cfg_rd32 $((MSIX_CAP + 4)))" 0x2000
check "MSI-X PBA in BAR0 at 0x3000" "$(cfg_rd32 $((MSIX_CAP + 8)))" 0x3000
cfg_wr32 $MSIX_CAP 0x80000000	# enable
ent=$((BAR + 0x2000 + 5 * 16))
qt writel $ent $MSG_ADDR
qt writel $((ent + 4)) 0
qt writel $((ent + 8)) 0x12345678
qt writel $((ent + 12)) 0	# unmask
qt writel $MSG_ADDR 0
wreg $INTR_TEST 5
check "INTR_TEST raises MSI-X vector 5" "$(rd $MSG_ADDR 0)" 0x12345678
wreg $INTR_TEST 6	# masked since reset
check "INTR_TEST on a masked vector sets its PBA bit" \
	$(($(rd 0x3000 $BAR) & (1 << 6))) $((1 << 6))
qt writel $MSG_ADDR 0
wreg $INTR_TEST 64
wreg $INTR_TEST 0xff
wreg $INTR_TEST 0x105
check "out-of-range vectors and reserved bits are ignored" \
	"$(rd $MSG_ADDR 0)" 0
cfg_wr32 $MSIX_CAP 0	# disable
wreg $INTR_TEST 5
check "INTR_TEST is ignored with MSI-X disabled" "$(rd $MSG_ADDR 0)" 0
cfg_wr32 $MSIX_CAP 0x80000000
wreg $CTRL 0x1
wreg $INTR_TEST 5
check "INTR_TEST is ignored while resetting" "$(rd $MSG_ADDR 0)" 0
step $RESET_NS

# Function level reset
check "PCIe DEVCAP advertises FLR" $(($(cfg_rd32 $((PCIE_CAP + 4))) >> 28 & 1)) 1
cfg_wr16 $((PCIE_CAP + 8)) 0x8000	# DEVCTL.BCR_FLR
check "FLR clears BAR0" $(($(cfg_rd32 0x10) & ~0xf)) 0
check "FLR disables MSI-X" $(($(cfg_rd32 $MSIX_CAP) >> 31)) 0
map_bar0
check "after FLR: STATUS is RESETTING" "$(status)" $RESETTING
step $RESET_NS
check "after FLR: READY after the reset delay" "$(status)" $READY
check "after FLR: ID still reads KITE_ID_MAGIC" "$(reg $ID)" 0x4b495445

check "QEMU is alive (guest errors did not crash it)" "$(reg $ID)" 0x4b495445

# Close the qtest connection; QEMU must not linger.
eval "exec ${QT_IN}>&- ${QT_OUT}<&-"
kill "$QEMU_PID" 2>/dev/null
wait "$QEMU_PID" 2>/dev/null

if grep -q "kite k: write 0x0 to read-only register 0x0" "$GUEST_LOG" &&
	grep -q "kite k: INTR_TEST: vector 64 out of range" "$GUEST_LOG" &&
	grep -q "kite k: RTC_CMD: rate offset 0x5f5e101 out of range" "$GUEST_LOG"; then
	ok "guest errors are logged with LOG_GUEST_ERROR"
else
	not_ok "guest errors are logged with LOG_GUEST_ERROR"
	sed 's/^/#   /' "$GUEST_LOG"
fi

echo "1..$n"
[ $failed -eq 0 ] || { echo "# $failed of $n failed"; exit 1; }
