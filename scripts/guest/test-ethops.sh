#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, one VM whose Kite NIC is on a wire (QEMU netdev "n1"): ethtool,
# devlink, bad input, link events reaching the RDMA driver, PCI reset,
# devlink reload, unbind/rebind and unload during traffic.
. "$KITE_ROOT/scripts/guest/lib.sh"

aux=/sys/bus/auxiliary/devices/kite_en.rdma.0
kite_ib_bound() { [ "$(basename "$(readlink "$aux/driver")")" = kite_ib.kite_ib ]; }
since() { kernel_log_since "$1" | grep -qE "$2"; }

check "ethops: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && insmod $KITE_IB_KO"
bdf=$(kite_bdf)
nic=$(kite_netdev)
check "ethops: interface created" test -n "$nic"
ip addr add 10.77.0.1/24 dev "$nic"
ip link set "$nic" up
check "ethops: carrier up" wait_for 10 grep -qx 1 "/sys/class/net/$nic/carrier"
# kite_ib logs the core driver's events (link, MTU, MAC) at debug level.
check "ethops: kite_ib's debug messages on (dynamic debug)" bash -c \
	"echo 'module kite_ib +p' >/sys/kernel/debug/dynamic_debug/control"

check "ethtool -i: driver, firmware and bus" bash -c \
	"ethtool -i $nic | grep -qx 'driver: kite_en' && ethtool -i $nic | grep -qx 'firmware-version: 1.0.0' && ethtool -i $nic | grep -qx 'bus-info: $bdf'"
check "ethtool -g: 512 of 4096" bash -c \
	"ethtool -g $nic | tr -s '\t ' ' ' | grep -c '^RX: 4096\|^TX: 4096\|^RX: 512\|^TX: 512' | grep -qx 4"
check "ethtool -G: resize rings" ethtool -G "$nic" rx 256 tx 1024
check "ethtool -G: new sizes in effect" bash -c \
	"ethtool -g $nic | tr -s '\t ' ' ' | grep -q '^TX: 1024' && ethtool -g $nic | tr -s '\t ' ' ' | grep -q '^RX: 256'"
check "ethtool -G: too small refused" bash -c "! ethtool -G $nic rx 4 2>/tmp/err && grep -q 'Invalid argument' /tmp/err"
check "ethtool -G: too large refused" bash -c "! ethtool -G $nic rx 8192"
check "ethtool -l: channels reported" bash -c "ethtool -l $nic | grep -q '^Combined:'"
check "ethtool -L: too many refused" bash -c "! ethtool -L $nic combined 64"
check "ethtool -S: per-queue counters" bash -c "ethtool -S $nic | grep -q 'tx0_packets:'"
check "ethtool -T: software timestamps and the PTP hardware clock" bash -c \
	"ethtool -T $nic | grep -q 'software-transmit' && ethtool -T $nic | grep -qE 'PTP Hardware Clock: [0-9]+'"
check "PHC: set to the system's time at probe" "$KITE_TOOLS/kite_uverbs_test" kite0 --phc-near
check "ethtool: msglvl settable" ethtool -s "$nic" msglvl 0x7
check "devlink dev info: serial and firmware" bash -c \
	"devlink dev info pci/$bdf | grep -q 'serial_number 4b49544500000001' && devlink dev info pci/$bdf | grep -qE 'fw 1\.0\.0'"

check "mtu: 9001 refused" bash -c "! ip link set $nic mtu 9001"
check "mtu: 67 refused" bash -c "! ip link set $nic mtu 67"
kite_mark mtu
check "mtu: 9000 accepted" ip link set "$nic" mtu 9000
check "mtu: change reaches kite_ib" wait_for 5 since mtu 'kite_ib.*event: MTU change'
ip link set "$nic" mtu 1500
check "mac: multicast address refused" bash -c "! ip link set $nic address 01:00:5e:00:00:01"
kite_mark mac
check "mac: valid address accepted" ip link set "$nic" address 52:54:00:4b:10:99
check "mac: change reaches kite_ib" wait_for 5 since mac 'kite_ib.*event: MAC change'

# The RDMA port follows the link; user space sees one asynchronous event
# per change.
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib stdbuf -oL "$KITE_RDMA_CORE/bin/ibv_asyncwatch" -d kite0 >/tmp/async.log 2>&1 &
watch_pid=$!
# It listens once it has printed its event FD (seconds on the debug lane).
check "async events: ibv_asyncwatch listens on kite0" wait_for 10 grep -q 'async event FD' /tmp/async.log
kite_mark linkdown
check "link: set_link off from the QEMU monitor" host_monitor "set_link n1 off"
check "link: carrier goes down" wait_for 10 grep -qx 0 "/sys/class/net/$nic/carrier"
check "link: down reaches kite_ib" wait_for 5 since linkdown 'kite_ib.*event: link down'
check "link: rdma link kite0/1 DOWN" wait_for 5 bash -c "rdma link show kite0/1 | grep -q 'state DOWN'"
kite_mark linkup
check "link: set_link on" host_monitor "set_link n1 on"
check "link: carrier comes back" wait_for 10 grep -qx 1 "/sys/class/net/$nic/carrier"
check "link: up reaches kite_ib" wait_for 5 since linkup 'kite_ib.*event: link up'
check "link: rdma link kite0/1 ACTIVE" wait_for 5 bash -c "rdma link show kite0/1 | grep -q 'state ACTIVE'"
wait_for 5 grep -q IBV_EVENT_PORT_ACTIVE /tmp/async.log
sleep 1
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
check "async events: one port error, then one port active (ibv_asyncwatch)" bash -c \
	"grep -oE 'IBV_EVENT_PORT_(ERR|ACTIVE)' /tmp/async.log | tr '\\n' ' ' | grep -qx 'IBV_EVENT_PORT_ERR IBV_EVENT_PORT_ACTIVE '"

kite_mark reset
check "reset: PCI function reset through sysfs" bash -c "echo 1 >/sys/bus/pci/devices/$bdf/reset"
check "reset: kite_ib was unbound before the reset" since reset 'kite_ib.*unbound'
check "reset: kite_ib re-probed after the reset" wait_for 10 kite_ib_bound
check "reset: interface running with carrier" wait_for 10 grep -qx 1 "/sys/class/net/$nic/carrier"
# The reset started the NIC's real-time clock again at 0; kite_en set it.
check "reset: the PTP hardware clock reads the system's time again" \
	"$KITE_TOOLS/kite_uverbs_test" kite0 --phc-near

kite_mark roceoff
check "devlink: enable_roce false" devlink dev param set "pci/$bdf" name enable_roce value false cmode driverinit
check "devlink: reload" devlink dev reload "pci/$bdf"
check "devlink: RoCE off removes the RDMA device" test ! -e "$aux"
check "devlink: enable_roce true + reload" bash -c \
	"devlink dev param set pci/$bdf name enable_roce value true cmode driverinit && devlink dev reload pci/$bdf"
check "devlink: RoCE on brings kite_ib back" wait_for 5 kite_ib_bound

check "unbind: PCI unbind with the interface up" bash -c "echo $bdf >/sys/bus/pci/drivers/kite_en/unbind"
check "unbind: PCI bind" bash -c "echo $bdf >/sys/bus/pci/drivers/kite_en/bind"
check "unbind: kite_ib bound again" wait_for 5 kite_ib_bound
nic=$(kite_netdev)
ip addr add 10.77.0.1/24 dev "$nic"
ip link set "$nic" up
ip neigh replace 10.77.0.9 lladdr 52:54:00:00:00:99 dev "$nic"
# Up, with carrier and the address's route, before the flood starts.
check "traffic: the interface is up again with its route" wait_for 10 bash -c \
	"grep -qx 1 /sys/class/net/$nic/carrier && ip route get 10.77.0.9 | grep -q 'dev $nic'"
timeout $((60 * KITE_SCALE)) socat -u /dev/zero UDP:10.77.0.9:9 &
flood=$!
check "traffic: packets are being sent" wait_for 10 bash -c \
	"[ \$(cat /sys/class/net/$nic/statistics/tx_packets) -gt 100 ]"
check "traffic: kite_ib and kite_en unload during traffic" bash -c "rmmod kite_ib && rmmod kite_en"
kill "$flood" 2>/dev/null
wait "$flood" 2>/dev/null
check "unload: no Kite module left" bash -c "! grep -qE '^kite_(en|ib) ' /proc/modules"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
