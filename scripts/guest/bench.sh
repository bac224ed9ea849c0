#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Guest side of scripts/bench.sh: kernel-verbs CQ/QP create/destroy timing
# (kite_verbs_test "bench N"), 1 GiB MR registration from user space
# (kite_mr_bench) and the providers' instructions per send posted and per
# completion polled under callgrind (kite_dp_bench), libkite's on kite0
# beside librxe's on rxe0 (rdma_rxe on the VM's virtio-net NIC). Prints the
# figures; fails only if something could not be run.
. "$KITE_ROOT/scripts/guest/lib.sh"

run=/sys/module/kite_verbs_test/parameters/run
n=${KITE_BENCH_N:-1000}
rc=0

insmod "$KITE_EN_KO" && insmod "$KITE_IB_KO" &&
	insmod "$KITE_TESTMOD_DIR/kite_verbs_test.ko" || exit 1
wait_for 10 test -d /sys/class/infiniband/kite0 || exit 1
# 1 GiB of 2 MiB pages, and some to spare.
echo 600 >/proc/sys/vm/nr_hugepages

echo "== Kite control-path benchmark (QEMU TCG, 1 vCPU; figures, not assertions)"
echo "guest: $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo) of memory," \
	"$(cat /proc/sys/vm/nr_hugepages) 2 MiB huge pages reserved"
echo
echo "-- kernel verbs ($n CQs, then $n QPs; kite_verbs_test)"
kite_mark bench
echo "bench $n" >"$run"
kernel_log_since bench | sed -n 's/^\[[^]]*\] kite_verbs_test: bench: /  /p'
kernel_log_since bench | grep -q 'kite_verbs_test: done bench: [0-9]* cases, 0 failed' || {
	echo "  FAILED:"
	kernel_log_since bench | grep 'kite_verbs_test: \(not ok\|#\)' | sed 's/^/    /'
	rc=1
}
echo
echo "-- user space MR registration (ibv_reg_mr/ibv_dereg_mr through libkite)"
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_TOOLS/kite_mr_bench" -d kite0 -s 1024 -n 3 2>&1 | sed 's/^/  /'
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
echo
echo "-- data path: instructions per send posted and per completion polled"
echo "   (callgrind, collecting only the posts or only the polls; 1000 UD 64-byte"
echo "   messages looped back by the device in batches of 32, polled 16 at a time;"
echo "   'post': ibv_post_send, 'wr': ibv_wr_start .. ibv_wr_complete, 'wr-td': the"
echo "   same on a QP and CQ of a parent domain with a thread domain; completions"
echo "   with ibv_poll_cq, and with the extended CQ API (ibv_start_poll .. ibv_end_poll,"
echo "   reading wr_id, status and opcode), 'cq_ex'; kite_dp_bench)"
knic=$(kite_netdev)
ip link set "$knic" up
ip addr add 10.77.0.1/24 dev "$knic"
modprobe virtio_net && modprobe rdma_rxe || rc=1
vnic=$(virtio_netdev)
if [ -n "$vnic" ]; then
	ip link set "$vnic" up
	ip addr add 10.78.0.1/24 dev "$vnic"
	rdma link add rxe0 type rxe netdev "$vnic" || rc=1
fi
# ipv4_gid DEV HEX: the index of DEV's GID ending in HEX (its IPv4 address).
ipv4_gid() {
	local f
	for f in /sys/class/infiniband/$1/ports/1/gids/*; do
		grep -qs "0000:ffff:$2\$" "$f" && { basename "$f"; return 0; }
	done
	return 1
}
wait_for 10 ipv4_gid kite0 0a4d:0001
wait_for 10 ipv4_gid rxe0 0a4e:0001
# dp DEV GID API REGION [POLL]: "INSTRUCTIONS OWN COUNT" of one callgrind run
# (POLL: kite_dp_bench -p, cq by default): the
# instructions collected, those of them in the benchmark program itself
# (its loop, the callgrind toggles, verbs.h's inline wrappers: not the
# provider's and the libraries' it calls), and the sends posted (post) or
# completions (poll).
dp() {
	local out ir
	out=$(LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib valgrind --tool=callgrind --collect-atstart=no \
		--callgrind-out-file=/tmp/dp.cg "$KITE_TOOLS/kite_dp_bench" -d "$1" -g "$2" \
		-n 1000 -a "$3" -m "$4" -p "${5:-cq}" 2>/tmp/dp.err) || {
		echo "  $1 $3 $4 ${5:-cq} FAILED:" >&2
		tail -5 /tmp/dp.err | sed 's/^/    /' >&2
		return 1
	}
	echo "  $out" >&2
	# Kept for callgrind_annotate on the host (the sources are the same).
	cp /tmp/dp.cg "/kite-out/dp-$1-$3-$4-${5:-cq}.cg"
	ir=$(awk '$1 == "totals:" || $1 == "summary:" { print $2; exit }' /tmp/dp.cg)
	own=$("$KITE_ROOT/scripts/callgrind-self.py" /tmp/dp.cg | awk '$2 ~ /kite_dp_bench$/ { print $1 }')
	set -- $out
	case $8 in
	post) echo "${ir:-0} ${own:-0} ${12}" ;;
	*) echo "${ir:-0} ${own:-0} ${18}" ;;
	esac
}
echo "   (in all / in the provider and the libraries it calls, without the"
echo "   benchmark's own loop and verbs.h's inline wrappers)"
printf '  %-10s %-6s %20s %20s %20s\n' provider api "instr/post" "instr/completion" \
	"cq_ex: instr/compl."
for d in kite0 rxe0; do
	g=$(ipv4_gid "$d" "$([ "$d" = kite0 ] && echo 0a4d:0001 || echo 0a4e:0001)") || {
		echo "  $d: no IPv4 GID"; rc=1; continue; }
	apis="post wr wr-td"
	# rdma_rxe has no thread domains (ibv_alloc_td: EOPNOTSUPP).
	[ "$d" = rxe0 ] && apis="post wr"
	for api in $apis; do
		p=$(dp "$d" "$g" "$api" post 2>>/tmp/dp.log) &&
			c=$(dp "$d" "$g" "$api" poll 2>>/tmp/dp.log) &&
			x=$(dp "$d" "$g" "$api" poll ex 2>>/tmp/dp.log) || {
			rc=1; cat /tmp/dp.log; continue; }
		set -- $p $c $x
		lib=libkite
		[ "$d" = rxe0 ] && lib=librxe
		printf '  %-10s %-6s %20s %20s %20s\n' "$lib" "$api" \
			"$(($1 / $3)) / $((($1 - $2) / $3))" "$(($4 / $6)) / $((($4 - $5) / $6))" \
			"$(($7 / $9)) / $((($7 - $8) / $9))"
	done
done
sed 's/^/  /' /tmp/dp.log
echo
rdma link delete rxe0 2>/dev/null
rmmod kite_verbs_test kite_ib kite_en
exit "$rc"
