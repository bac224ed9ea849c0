# SPDX-License-Identifier: GPL-2.0-only
#
# Kite: the project's entry points.
#
#   make demo      boot a VM with the emulated Kite NIC, load the drivers,
#                  show rdma link and ibv_devinfo (sets everything up)
#   make check     every test (sets everything up); ends "N passed, N failed"
#   make bench     benchmarks, not tests: bench-control (CQ/QP create/destroy,
#                  1 GiB MR registration, libkite instructions per call;
#                  scripts/bench.sh) and bench-pair (perftest and NVMe over
#                  RDMA, Kite and rdma_rxe side by side on two VMs;
#                  scripts/bench-pair.sh)
#   make fuzz      the long run of the uverbs fuzzer (kite_uverbs_fuzz,
#                  >= 100,000 calls in one VM; scripts/fuzz.sh); prints
#                  calls, objects, seconds, calls/s and the outcome;
#                  KITE_LANE=debug make fuzz: on the debug kernel
#   make failinject  the allocation-failure sweeps on the debug kernel
#                  (probe, open and every user verb's path; about 6 minutes
#                  after the debug kernel is built): failures injected, call
#                  sites reached, each unwound, kmemleak clean
#
#   make           build kite_en.ko and kite_ib.ko for KDIR (default: the
#                  running kernel); make install; modprobe kite_en
#   make deb       the kite-dkms package for a host with the NIC
#                  (scripts/build-deb.sh); prints its path
#   make patches   the upstream submissions as git format-patch series:
#                  the drivers against the newest kernel source, one patch
#                  per layer (series/linux/), and libkite against rdma-core
#                  (series/rdma-core/); scripts/make-patches.sh writes them
#                  to out/patches/{linux,rdma-core} and prints out/patches
#
# The out-of-tree module build itself is driven by ./Kbuild, through
# scripts/build-modules.sh, which keeps build products out of this tree
# (in $KITE_CACHE, default ~/.cache/kite).

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
S := scripts

.PHONY: all modules install demo check setup kunit sparse checkpatch \
	prm upstream qemu rdma-core vmtest vmtest-debug bench bench-control bench-pair \
	fuzz failinject deb patches clean help

all: modules

modules:
	@$(S)/build-modules.sh $(KDIR) W=1 >/dev/null

install: modules
	@$(S)/build-modules.sh $(KDIR) modules_install >/dev/null
	depmod -a $(shell cat $(KDIR)/include/config/kernel.release)

demo:
	@$(S)/demo.sh

check:
	@$(S)/check.sh

# Single steps of 'make check' (each prints its own results).
setup:
	@$(S)/setup-host.sh
kunit sparse checkpatch prm upstream qemu rdma-core:
	@$(S)/check.sh $@
vmtest:
	@$(S)/check.sh vm
vmtest-debug:
	@$(S)/check.sh vm-debug

bench: bench-control bench-pair

bench-control:
	@$(S)/bench.sh

bench-pair:
	@$(S)/bench-pair.sh

fuzz:
	@$(S)/fuzz.sh

failinject:
	@$(S)/setup-host.sh
	@$(S)/vmtest.sh --lane debug failinject

deb:
	@$(S)/build-deb.sh | tail -n 1

patches:
	@$(S)/make-patches.sh | tail -n 1

clean:
	rm -rf $${KITE_CACHE:-$$HOME/.cache/kite}/build/modules-*

help:
	@sed -n '3,/^$$/p' Makefile
