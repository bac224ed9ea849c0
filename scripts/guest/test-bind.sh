#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: kite_en probes the emulated Kite function and creates the
# auxiliary device; kite_ib binds to it. Loading and unloading in any order
# and PCI unbind/rebind/remove/rescan are clean.
. "$KITE_ROOT/scripts/guest/lib.sh"

aux=/sys/bus/auxiliary/devices/kite_en.rdma.0
# The auxiliary bus names drivers <module>.<driver>.
bound_to_kite_ib() { [ "$(basename "$(readlink "$aux/driver")")" = kite_ib.kite_ib ]; }
mods_loaded() { grep -cE '^kite_(en|ib) ' /proc/modules; }

check "pci: Kite function 1ee7:4b01 is present" test -n "$(kite_bdf)"
bdf=$(kite_bdf)

kite_mark load-en
check "kite_en: loads and probes the function" insmod "$KITE_EN_KO"
check "kite_en: reports interface 1.0 and firmware 1.0.0" \
	bash -c "dmesg | grep -q 'kite_en $bdf: Kite NIC: interface 1.0, firmware 1.0.0, MAC 52:54:00:4b:00:[0-9a-f][0-9a-f]'"
check "kite_en: MSI-X enabled with at least 2 vectors" \
	test "$(ls "/sys/bus/pci/devices/$bdf/msi_irqs" | wc -l)" -ge 2
check "kite_en: auxiliary device kite_en.rdma.0 created" test -d "$aux"

check "kite_ib: loads" insmod "$KITE_IB_KO"
check "kite_ib: bound to kite_en.rdma.0" bound_to_kite_ib
check "kite_ib: logged what it received" \
	bash -c "dmesg | grep -qE 'kite_ib.* kite_en.rdma.0: kite0 bound to $bdf: interface 1.0, firmware 1.0.0; max [0-9]+ QPs'"

check "kite_ib: unload while bound" rmmod kite_ib
check "kite_ib: reload binds again" bash -c "insmod $KITE_IB_KO && sleep 0 && [ -e $aux/driver ]"

# kite_ib uses kite_en's exported kite_en_request_reset(): the module
# loader refuses to unload kite_en under it, and modprobe loads kite_en
# for it.
check "kite_en: unload refused while kite_ib uses it" bash -c "! rmmod kite_en 2>/dev/null"
check "kite_en: still bound after the refused unload" bound_to_kite_ib
check "kite_ib: unloads" rmmod kite_ib
check "kite_ib: unbound on unload" test ! -e "$aux/driver"
check "kite_en: unloads after kite_ib" rmmod kite_en
check "kite_en: auxiliary device gone after unload" test ! -e "$aux"

kite_install_modules
check "modprobe kite_ib: loads kite_en as its dependency" modprobe kite_ib
check "modprobe kite_ib: kite_ib bound" wait_for 5 bound_to_kite_ib
check "modprobe -r: both modules unload" modprobe -r kite_ib kite_en
check "modprobe kite_en then kite_ib" bash -c "modprobe kite_en && modprobe kite_ib"
check "modprobe: kite_ib bound" wait_for 5 bound_to_kite_ib

check "sysfs: PCI unbind" bash -c "echo $bdf >/sys/bus/pci/drivers/kite_en/unbind"
check "sysfs: PCI unbind removed the auxiliary device" test ! -e "$aux"
check "sysfs: PCI bind" bash -c "echo $bdf >/sys/bus/pci/drivers/kite_en/bind"
# The id is reused only if the previous auxiliary device was released.
check "sysfs: rebind recreated kite_en.rdma.0 (old device released)" test -d "$aux"
check "sysfs: kite_ib bound after rebind" bound_to_kite_ib

check "sysfs: PCI remove" bash -c "echo 1 >/sys/bus/pci/devices/$bdf/remove"
check "sysfs: PCI remove unbound everything" test ! -e "$aux"
check "sysfs: PCI rescan" bash -c "echo 1 >/sys/bus/pci/rescan"
check "sysfs: rescan probed the function and kite_ib bound" bound_to_kite_ib

for i in 1 2 3; do
	rmmod kite_ib && rmmod kite_en && insmod "$KITE_EN_KO" && insmod "$KITE_IB_KO" || break
done
check "reload: three unload/load cycles" bound_to_kite_ib

check "unload: both modules unload" bash -c "rmmod kite_ib && rmmod kite_en"
check "unload: no Kite module left" test "$(mods_loaded)" = 0
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
