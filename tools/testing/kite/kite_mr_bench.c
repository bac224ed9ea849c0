// SPDX-License-Identifier: GPL-2.0-only
/*
 * kite_mr_bench: time ibv_reg_mr and ibv_dereg_mr of a large buffer through
 * libibverbs and libkite, with 4 KiB pages (malloc'd memory, transparent
 * huge pages off) and with 2 MiB pages (MAP_HUGETLB).
 *
 * usage: kite_mr_bench [-d DEVICE] [-s MIB] [-n ROUNDS]
 *
 * Prints one line per buffer: the best and mean registration and
 * deregistration times over the rounds. A benchmark, not a test: it
 * asserts nothing about the times, and exits non-zero only when a
 * registration fails.
 *
 * Copyright (c) 2026 Kite
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MIB		(1024UL * 1024)
#define HUGE_2M		(2 * MIB)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Register and deregister [buf, buf + len) @rounds times; 0 or an errno. */
static int bench(struct ibv_pd *pd, const char *what, void *buf, size_t len,
		 int rounds)
{
	double reg_min = 0, reg_sum = 0, dereg_min = 0, dereg_sum = 0, t0, t;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr;
	int i, err;

	for (i = 0; i < rounds; i++) {
		t0 = now_ms();
		mr = ibv_reg_mr(pd, buf, len, access);
		t = now_ms() - t0;
		if (!mr) {
			err = errno;
			printf("%-34s reg_mr of %zu MiB failed: %s (errno %d)\n",
			       what, len / MIB, strerror(err), err);
			return err;
		}
		reg_sum += t;
		if (!i || t < reg_min)
			reg_min = t;
		t0 = now_ms();
		err = ibv_dereg_mr(mr);
		t = now_ms() - t0;
		if (err) {
			printf("%-34s dereg_mr failed: %s\n", what,
			       strerror(err));
			return err;
		}
		dereg_sum += t;
		if (!i || t < dereg_min)
			dereg_min = t;
	}
	printf("%-34s reg_mr %8.1f ms (mean %8.1f)  dereg_mr %8.1f ms (mean %8.1f)  [%zu MiB, %d rounds]\n",
	       what, reg_min, reg_sum / rounds, dereg_min, dereg_sum / rounds,
	       len / MIB, rounds);
	return 0;
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	const char *dev = "kite0";
	size_t len = 1024 * MIB, page = sysconf(_SC_PAGESIZE);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int rounds = 3, opt, fail = 0;
	char *buf, *aligned, *p;

	while ((opt = getopt(argc, argv, "d:s:n:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 's':
			len = strtoul(optarg, NULL, 0) * MIB;
			break;
		case 'n':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEVICE] [-s MIB] [-n ROUNDS]\n",
				argv[0]);
			return 2;
		}
	}
	if (!len || len % HUGE_2M || rounds < 1) {
		fprintf(stderr, "the size must be a multiple of 2 MiB, rounds >= 1\n");
		return 2;
	}

	ctx = open_device(dev);
	if (!ctx) {
		fprintf(stderr, "cannot open %s: %s\n", dev, strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "ibv_alloc_pd: %s\n", strerror(errno));
		return 1;
	}

	/*
	 * 4 KiB pages: malloc'd, with transparent huge pages off, and
	 * touched from the last page to the first, so that physically
	 * consecutive pages are not virtually consecutive: the driver then
	 * cannot merge them into larger device pages either. malloc's
	 * pointer is not page aligned, and a region starting there spans one
	 * page more than its size: try it, then the page-aligned window of
	 * exactly @len bytes.
	 */
	buf = malloc(len + page);
	if (!buf) {
		fprintf(stderr, "malloc of %zu MiB failed\n", len / MIB);
		return 1;
	}
	aligned = (char *)(((uintptr_t)buf + page - 1) & ~(uintptr_t)(page - 1));
	madvise(aligned, len, MADV_NOHUGEPAGE);
	for (p = aligned + len; p > aligned; p -= page)
		memset(p - page, 0x5a, page);
	memset(buf, 0x5a, aligned - buf);
	memset(aligned + len, 0x5a, buf + len + page - (aligned + len));
	if (bench(pd, "4 KiB pages, malloc'd pointer", buf, len, 1) == E2BIG)
		printf("%-34s (%zu + 1 pages of 4 KiB: more than kite_ib's two-level PBL of 512 x 512 entries holds)\n",
		       "", len / page);
	fail |= bench(pd, "4 KiB pages, page-aligned", aligned, len, rounds);
	free(buf);

	/* 2 MiB pages: hugetlbfs (vm.nr_hugepages must be reserved). */
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE,
		   -1, 0);
	if (buf == MAP_FAILED) {
		printf("%-34s mmap(MAP_HUGETLB) of %zu MiB failed: %s\n",
		       "2 MiB pages", len / MIB, strerror(errno));
		fail = 1;
	} else {
		memset(buf, 0xa5, len);
		fail |= bench(pd, "2 MiB pages, MAP_HUGETLB", buf, len, rounds);
		munmap(buf, len);
	}

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return fail ? 1 : 0;
}
