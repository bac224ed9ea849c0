/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host-side test of the Kite device model's RDMA control plane.
 *
 * Spawns qemu-system-x86_64 with the qtest accelerator (no guest runs) and
 * plays the driver through QEMU's qtest text protocol: PCI configuration
 * space, BAR0 registers, BAR2 doorbells, guest memory and the virtual clock.
 * A QMP connection sets the model's fault injection properties. Every layout
 * comes from include/linux/kite/kite_hw.h (via kite_test_shim.h); every
 * behaviour checked is the one the hardware semantics specify.
 *
 * Each test group runs against a fresh QEMU. Output is TAP; the exit status
 * is non-zero if any test failed. Groups: cmdq, eq0, query, uctx_pd, eq, cq,
 * cq_arm, cq_events, link, qp_create, qp_modify, mr, gid, doorbell, limits,
 * fault, devfuzz, reset, robust, fuzz, engine_tx, engine, engine_rx, engine_wire,
 * rc, rc_err, rc_wire, rc_pipe, rc_loss, uc, uc_wire, srq, srq_engine,
 * srq_random, mcast, mcast_engine (a wire group), mcast_random.
 * Tests that need CQEs use the model's optional "debug-cqe" QOM property
 * (CQN | flags, flags from hw/net/kite_int.h) and are skipped when it is
 * absent.
 *
 * The engine groups drive the data engine (UD, GSI) with real WQEs. The
 * wire groups give QEMU a "-netdev dgram" whose other end is a UDP socket
 * of the test: engine_tx reads the frames the device sends and checks every
 * header and the ICRC (computed by the test's own CRC-32), and the send-side
 * validation errors; engine_wire injects frames. engine and engine_rx use
 * the device's internal loopback (destination MAC = the port's MAC): the
 * receive path, GRH, CQEs and events, drops and receive errors.
 *
 * trace runs QEMU with -trace enable=kite_* and checks that the model's
 * trace events (qemu/hw/net/trace-events-kite) reach the log.
 *
 * usage: kite-model-test QEMU_BINARY [GROUP...]
 * env:   KITE_SEED (robustness PRNG seed), KITE_QEMU_STDERR_LOG (append every
 *        QEMU's stderr to this file), KITE_TEST_VERBOSE=1 (show stderr),
 *        KITE_QEMU_TRACE=PATTERN (every QEMU runs with -trace enable=PATTERN,
 *        e.g. 'kite_*'), KITE_QEMU_GUEST_LOG (append every QEMU's -D log,
 *        guest errors and trace events, to this file)
 *
 * Copyright (c) 2026 Kite
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kite_test_shim.h"

/* ------------------------------------------------------------------ */
/* Test machine layout                                                 */
/* ------------------------------------------------------------------ */

#define SLOT		3
#define BAR0_ADDR	0xe0000000ULL
#define BAR2_ADDR	0xe0400000ULL	/* 1 MiB, naturally aligned */
#define MSI_BASE	0x00200000ULL	/* MSI-X messages land in RAM here */
#define MSI_DATA(v)	(0x4b4d0000u | (v))
#define HEAP_START	0x01000000ULL
#define HEAP_END	0x0f000000ULL	/* -m 256M */
#define NOT_RAM		0x8000000000ULL	/* 512 GiB: nothing there */
#define MAC_STR		"52:54:00:12:34:56"
#define RESET_NS	2000000		/* default reset-delay-us */
#define MSIX_CAP	0xc0

#define EQ0_VEC		1
#define EQ1_VEC		2
#define EQ2_VEC		3

#define GROUP_TIMEOUT_S	240
#define POLL_MAX	300		/* bounded waits: iterations */
#define POLL_STEP_NS	20000		/* virtual time per iteration */

static const uint8_t MAC[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

#define RDMA(r)		(KITE_RDMA_REGS_OFFSET + (r))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* TAP                                                                 */
/* ------------------------------------------------------------------ */

static int tap_n, tap_failed;
static const char *cur_group = "";

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("#   ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static bool vtap(bool pass, const char *fmt, va_list ap)
{
	tap_n++;
	if (!pass)
		tap_failed++;
	printf("%s %d - %s: ", pass ? "ok" : "not ok", tap_n, cur_group);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return pass;
}

static bool tap(bool pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool tap(bool pass, const char *fmt, ...)
{
	va_list ap;
	bool r;

	va_start(ap, fmt);
	r = vtap(pass, fmt, ap);
	va_end(ap);
	return r;
}

static void skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("ok %d - %s: ", tap_n, cur_group);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

/* A group stops at the first protocol failure (QEMU died or hung). */
static jmp_buf abort_jmp;
static char abort_msg[512];

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(abort_msg, sizeof(abort_msg), fmt, ap);
	va_end(ap);
	longjmp(abort_jmp, 1);
}

/* ------------------------------------------------------------------ */
/* QEMU process and the qtest protocol                                 */
/* ------------------------------------------------------------------ */

static const char *qemu_bin;
static char workdir[64];
static char qt_path[128], qmp_path[128], err_path[128], log_path[128];
static volatile pid_t qemu_pid;
static int qt_fd = -1, qmp_fd = -1;

#define IBSZ (1 << 20)
static char *ib;
static size_t ib_start, ib_end;
static char qmp_buf[65536];
static size_t qmp_len;

/*
 * QEMU's -trace enable= pattern: the trace group's own, else KITE_QEMU_TRACE
 * (with the log backend, events go to the -D log, guest.log).
 */
static const char *trace_pattern;

/* Groups with a network wire: QEMU's dgram port, the test's port. */
static unsigned wire_qemu_port, wire_test_port;
static int wire_fd = -1;

static void alarm_handler(int sig)
{
	static const char msg[] = "# watchdog: group timed out, killing QEMU\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0) {
		/* nothing to do */
	}
	if (qemu_pid > 0)
		kill(qemu_pid, SIGKILL);
}

static void write_all(int fd, const char *p, size_t n, const char *what)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			fatal("QEMU is gone (writing %s)", what);
		p += w;
		n -= (size_t)w;
	}
}

static char *qt_getline(void)
{
	for (;;) {
		char *nl = memchr(ib + ib_start, '\n', ib_end - ib_start);
		struct pollfd p = { .fd = qt_fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (nl) {
			char *l = ib + ib_start;

			*nl = 0;
			ib_start = (size_t)(nl - ib) + 1;
			return l;
		}
		if (ib_start) {
			memmove(ib, ib + ib_start, ib_end - ib_start);
			ib_end -= ib_start;
			ib_start = 0;
		}
		if (ib_end == IBSZ)
			fatal("qtest reply line too long");
		r = poll(&p, 1, 30000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fatal("no qtest reply from QEMU within 30 s");
		n = read(qt_fd, ib + ib_end, IBSZ - ib_end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("QEMU closed the qtest connection (crashed?)");
		ib_end += (size_t)n;
	}
}

/* Send one qtest command; returns the reply's value (after "OK "). */
static const char *qt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *qt(const char *fmt, ...)
{
	static char *buf;
	static size_t bufsz;
	va_list ap;
	int n;
	char *line;

	va_start(ap, fmt);
	n = vsnprintf(buf, bufsz, fmt, ap);
	va_end(ap);
	if ((size_t)n + 2 > bufsz) {
		bufsz = (size_t)n + 4096;
		buf = realloc(buf, bufsz);
		if (!buf)
			abort();
		va_start(ap, fmt);
		vsnprintf(buf, bufsz, fmt, ap);
		va_end(ap);
	}
	buf[n] = '\n';
	write_all(qt_fd, buf, (size_t)n + 1, "a qtest command");
	buf[n] = 0;
	for (;;) {
		line = qt_getline();
		if (!strncmp(line, "IRQ", 3))
			continue;
		break;
	}
	if (strncmp(line, "OK", 2))
		fatal("qtest '%.60s' answered '%.100s'", buf, line);
	line += 2;
	while (*line == ' ')
		line++;
	return line;
}

static uint64_t qt_val(const char *v)
{
	return strtoull(v, NULL, 0);
}

static uint32_t rd32(uint64_t a) { return (uint32_t)qt_val(qt("readl 0x%" PRIx64, a)); }
static uint64_t rd64(uint64_t a) { return qt_val(qt("readq 0x%" PRIx64, a)); }
static void wr32(uint64_t a, uint32_t v) { qt("writel 0x%" PRIx64 " 0x%x", a, v); }
static void wr64(uint64_t a, uint64_t v) { qt("writeq 0x%" PRIx64 " 0x%" PRIx64, a, v); }
static uint32_t reg(uint32_t off) { return rd32(BAR0_ADDR + off); }
static void wreg(uint32_t off, uint32_t v) { wr32(BAR0_ADDR + off, v); }
static void clock_step(uint64_t ns) { qt("clock_step %" PRIu64, ns); }

static void memwrite(uint64_t addr, const void *buf, size_t len)
{
	static const char hx[] = "0123456789abcdef";
	const uint8_t *p = buf;
	char *hex = malloc(2 * 32768 + 1);

	if (!hex)
		abort();
	while (len) {
		size_t n = len > 32768 ? 32768 : len, i;

		for (i = 0; i < n; i++) {
			hex[2 * i] = hx[p[i] >> 4];
			hex[2 * i + 1] = hx[p[i] & 15];
		}
		hex[2 * n] = 0;
		qt("write 0x%" PRIx64 " 0x%zx 0x%s", addr, n, hex);
		addr += n;
		p += n;
		len -= n;
	}
	free(hex);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void memread(uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		size_t n = len > 32768 ? 32768 : len, i;
		const char *v = qt("read 0x%" PRIx64 " 0x%zx", addr, n);

		if (strncmp(v, "0x", 2) || strlen(v) < 2 + 2 * n)
			fatal("bad qtest read reply '%.40s'", v);
		v += 2;
		for (i = 0; i < n; i++) {
			int h = hexval(v[2 * i]), l = hexval(v[2 * i + 1]);

			if (h < 0 || l < 0)
				fatal("bad hex in qtest read reply");
			p[i] = (uint8_t)(h << 4 | l);
		}
		addr += n;
		p += n;
		len -= n;
	}
}

static void memzero(uint64_t addr, uint64_t len)
{
	qt("memset 0x%" PRIx64 " 0x%" PRIx64 " 0", addr, len);
}

static uint32_t mem32(uint64_t addr)
{
	uint32_t v;

	memread(addr, &v, 4);
	return v;
}

static void setmem32(uint64_t addr, uint32_t v)
{
	memwrite(addr, &v, 4);
}

/* PCI configuration space through the 0xcf8/0xcfc mechanism. */
static uint32_t cfg_addr(unsigned off)
{
	return 0x80000000u | (SLOT << 11) | (off & 0xfc);
}

static uint32_t cfg_rd32(unsigned off)
{
	qt("outl 0xcf8 0x%x", cfg_addr(off));
	return (uint32_t)qt_val(qt("inl 0xcfc"));
}

static void cfg_wr32(unsigned off, uint32_t v)
{
	qt("outl 0xcf8 0x%x", cfg_addr(off));
	qt("outl 0xcfc 0x%x", v);
}

static void cfg_wr16(unsigned off, uint16_t v)
{
	qt("outl 0xcf8 0x%x", cfg_addr(off));
	qt("outw 0x%x 0x%x", 0xcfc + (off & 2), v);
}

/* ---- QMP (fault injection) ---- */

static char *qmp_getline(void)
{
	for (;;) {
		char *nl = memchr(qmp_buf, '\n', qmp_len);
		static char line[65536];
		struct pollfd p = { .fd = qmp_fd, .events = POLLIN };
		ssize_t n;
		size_t l;

		if (nl) {
			l = (size_t)(nl - qmp_buf);
			memcpy(line, qmp_buf, l);
			line[l] = 0;
			memmove(qmp_buf, nl + 1, qmp_len - l - 1);
			qmp_len -= l + 1;
			return line;
		}
		if (qmp_len == sizeof(qmp_buf))
			fatal("QMP line too long");
		if (poll(&p, 1, 30000) <= 0)
			fatal("no QMP reply within 30 s");
		n = read(qmp_fd, qmp_buf + qmp_len, sizeof(qmp_buf) - qmp_len);
		if (n <= 0)
			fatal("QMP connection closed");
		qmp_len += (size_t)n;
	}
}

/* Returns true on {"return": ...}; the reply line in *reply. */
static bool qmp(const char *json, const char **reply)
{
	char *line;

	write_all(qmp_fd, json, strlen(json), "QMP");
	write_all(qmp_fd, "\n", 1, "QMP");
	for (;;) {
		line = qmp_getline();
		if (strstr(line, "\"event\""))
			continue;
		if (reply)
			*reply = line;
		return strstr(line, "\"return\"") != NULL;
	}
}

static void qmp_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int i;

	if (qmp_fd >= 0)
		return;
	strncpy(sa.sun_path, qmp_path, sizeof(sa.sun_path) - 1);
	for (i = 0; i < 500; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			qmp_fd = fd;
			break;
		}
		close(fd);
		usleep(10000);
	}
	if (qmp_fd < 0)
		fatal("cannot connect to QMP at %s", qmp_path);
	qmp_len = 0;
	if (!strstr(qmp_getline(), "QMP"))
		fatal("no QMP greeting");
	if (!qmp("{\"execute\":\"qmp_capabilities\"}", NULL))
		fatal("qmp_capabilities failed");
}

/* qom-get of a kite property: the JSON after "return": in buf. */
static bool qom_get(const char *prop, char *out, size_t len)
{
	char buf[256];
	const char *reply = "", *v;

	qmp_connect();
	snprintf(buf, sizeof(buf),
		 "{\"execute\":\"qom-get\",\"arguments\":{\"path\":"
		 "\"/machine/peripheral/k\",\"property\":\"%s\"}}", prop);
	if (!qmp(buf, &reply))
		return false;
	v = strstr(reply, "\"return\":");
	if (!v)
		return false;
	v += strlen("\"return\":");
	while (*v == ' ')
		v++;
	snprintf(out, len, "%s", v);
	/* Without the closing brace and line end. */
	v = strrchr(out, '}');
	if (v)
		*(char *)v = 0;
	return true;
}

/* qom-set on the kite device; value is JSON. */
static bool qom_set(const char *prop, const char *value, const char **reply)
{
	char buf[256];

	qmp_connect();
	snprintf(buf, sizeof(buf),
		 "{\"execute\":\"qom-set\",\"arguments\":{\"path\":"
		 "\"/machine/peripheral/k\",\"property\":\"%s\",\"value\":%s}}",
		 prop, value);
	return qmp(buf, reply);
}

/* Append the NULL-terminated strings to QEMU's @argv (room for 48). */
static void argv_add(char **argv, int *argc, ...)
{
	const char *a;
	va_list ap;

	va_start(ap, argc);
	while ((a = va_arg(ap, const char *)) && *argc < 47)
		argv[(*argc)++] = (char *)a;
	va_end(ap);
	argv[*argc] = NULL;
}

static void qemu_start(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p;
	int ls, i;
	pid_t pid;

	strcpy(workdir, "/tmp/kite-mt.XXXXXX");
	if (!mkdtemp(workdir))
		fatal("mkdtemp: %s", strerror(errno));
	snprintf(qt_path, sizeof(qt_path), "%s/qtest.sock", workdir);
	snprintf(qmp_path, sizeof(qmp_path), "%s/qmp.sock", workdir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", workdir);
	snprintf(log_path, sizeof(log_path), "%s/guest.log", workdir);

	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	strncpy(sa.sun_path, qt_path, sizeof(sa.sun_path) - 1);
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		fatal("qtest socket: %s", strerror(errno));

	pid = fork();
	if (pid < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		char qtarg[160], qmparg[192], logarg[160], nd[256], tracearg[160];
		const char *trace = trace_pattern ? trace_pattern : getenv("KITE_QEMU_TRACE");
		char *argv[48];
		int argc = 0;
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDWR);

		snprintf(qtarg, sizeof(qtarg), "unix:%s", qt_path);
		snprintf(qmparg, sizeof(qmparg), "unix:%s,server=on,wait=off", qmp_path);
		snprintf(logarg, sizeof(logarg), "%s", log_path);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(ls);
		argv_add(argv, &argc, qemu_bin, "-machine", "q35", "-accel", "qtest",
			 "-qtest", qtarg, "-qtest-log", "/dev/null",
			 "-qmp", qmparg, "-nodefaults",
			 "-display", "none", "-m", "256M",
			 "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
			 "-L", "/usr/lib/ipxe/qemu", NULL);
		if (wire_qemu_port) {
			/* A dgram wire whose other end is the test's socket. */
			snprintf(nd, sizeof(nd),
				 "dgram,id=n0,local.type=inet,local.host=127.0.0.1,"
				 "local.port=%u,remote.type=inet,remote.host=127.0.0.1,"
				 "remote.port=%u", wire_qemu_port, wire_test_port);
			argv_add(argv, &argc, "-netdev", nd, "-device",
				 "kite,id=k,addr=3.0,netdev=n0,mac=" MAC_STR, NULL);
		} else {
			argv_add(argv, &argc, "-device", "kite,id=k,addr=3.0,mac=" MAC_STR,
				 NULL);
		}
		/* Trace events go to the -D log with QEMU's log backend. */
		if (trace) {
			snprintf(tracearg, sizeof(tracearg), "enable=%s", trace);
			argv_add(argv, &argc, "-trace", tracearg, NULL);
		}
		argv_add(argv, &argc, "-d", "guest_errors", "-D", logarg, NULL);
		execv(qemu_bin, argv);
		_exit(127);
	}
	qemu_pid = pid;
	p.fd = ls;
	p.events = POLLIN;
	for (i = 0; i < 300; i++) {
		int st;

		if (poll(&p, 1, 100) > 0)
			break;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			qemu_pid = 0;
			fatal("QEMU exited at startup (status 0x%x)", st);
		}
	}
	if (i == 300)
		fatal("QEMU did not connect to the qtest socket");
	qt_fd = accept(ls, NULL, NULL);
	close(ls);
	if (qt_fd < 0)
		fatal("accept: %s", strerror(errno));
	ib_start = ib_end = 0;
}

/* Stop QEMU; returns false (with diagnostics) on a crash or sanitizer report. */
static bool qemu_stop(void)
{
	bool clean = true, verbose = getenv("KITE_TEST_VERBOSE") != NULL;
	int st = 0, i;
	FILE *f;
	char line[1024];
	const char *logf = getenv("KITE_QEMU_STDERR_LOG"), *glog;

	/* SIGTERM first: closing the qtest socket first races with qtest's log. */
	if (qemu_pid > 0) {
		kill(qemu_pid, SIGTERM);
		for (i = 0; i < 3000; i++) {
			if (waitpid(qemu_pid, &st, WNOHANG) == qemu_pid)
				break;
			usleep(10000);
		}
		if (i == 3000) {
			kill(qemu_pid, SIGKILL);
			waitpid(qemu_pid, &st, 0);
			diag("QEMU did not exit after SIGTERM");
			clean = false;
		}
		if (WIFSIGNALED(st) && WTERMSIG(st) != SIGTERM) {
			diag("QEMU died with signal %d", WTERMSIG(st));
			clean = false;
		} else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
			diag("QEMU exit status %d", WEXITSTATUS(st));
			clean = false;
		}
	}
	qemu_pid = 0;
	if (qmp_fd >= 0)
		close(qmp_fd);
	qmp_fd = -1;
	if (qt_fd >= 0)
		close(qt_fd);
	qt_fd = -1;
	f = fopen(err_path, "r");
	if (f) {
		FILE *out = logf ? fopen(logf, "a") : NULL;
		int shown = 0;

		if (out)
			fprintf(out, "==== group %s\n", cur_group);
		while (fgets(line, sizeof(line), f)) {
			if (strstr(line, "Sanitizer") || strstr(line, "runtime error:") ||
			    strstr(line, "Assertion") || strstr(line, "assertion"))
				clean = false;
			if (out)
				fputs(line, out);
		}
		rewind(f);
		while ((verbose || !clean) && shown < 80 && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			diag("qemu: %s", line);
			shown++;
		}
		if (out)
			fclose(out);
		fclose(f);
	}
	glog = getenv("KITE_QEMU_GUEST_LOG");
	f = glog ? fopen(log_path, "r") : NULL;
	if (f) {
		FILE *out = fopen(glog, "a");

		if (out) {
			fprintf(out, "==== group %s\n", cur_group);
			while (fgets(line, sizeof(line), f))
				fputs(line, out);
			fclose(out);
		}
		fclose(f);
	}
	if (verbose) {
		f = fopen(log_path, "r");
		for (i = 0; f && i < 40 && fgets(line, sizeof(line), f); i++) {
			line[strcspn(line, "\n")] = 0;
			diag("guest-error log: %s", line);
		}
		if (f)
			fclose(f);
	}
	unlink(qt_path);
	unlink(qmp_path);
	unlink(err_path);
	unlink(log_path);
	rmdir(workdir);
	return clean;
}

/* ------------------------------------------------------------------ */
/* Guest RAM allocator                                                 */
/* ------------------------------------------------------------------ */

static uint64_t heap_next;

/* Zeroed guest memory. */
static uint64_t galloc(uint64_t size, uint64_t align)
{
	uint64_t a = (heap_next + align - 1) & ~(align - 1);

	if (a + size > HEAP_END)
		fatal("test guest RAM exhausted (0x%" PRIx64 " bytes wanted)", size);
	heap_next = a + size;
	memzero(a, size);
	return a;
}

/* ------------------------------------------------------------------ */
/* Device bring-up, MSI-X                                              */
/* ------------------------------------------------------------------ */

static bool have_bar2;

static void dev_init(void)
{
	uint32_t v;
	int i;

	heap_next = HEAP_START;
	if (cfg_rd32(0) != (PCI_DEVICE_ID_KITE_NIC << 16 | PCI_VENDOR_ID_KITE))
		fatal("no Kite function at slot %d", SLOT);
	cfg_wr32(0x10, (uint32_t)BAR0_ADDR);
	cfg_wr32(0x14, 0);
	cfg_wr32(0x18, 0xffffffff);
	v = cfg_rd32(0x18);
	have_bar2 = (v & ~0xfu) != 0;
	cfg_wr32(0x18, (uint32_t)BAR2_ADDR);
	if ((v & 0x6) == 0x4)
		cfg_wr32(0x1c, 0);
	cfg_wr16(0x04, 0x0006);	/* memory space, bus master */

	/* MSI-X: every vector writes MSI_DATA(v) to MSI_BASE + 4 v. */
	cfg_wr32(MSIX_CAP, 0x80000000);
	memzero(MSI_BASE, 4 * KITE_MAX_VECTORS);
	for (i = 0; i < KITE_MAX_VECTORS; i++) {
		uint64_t e = BAR0_ADDR + KITE_MSIX_TABLE_OFFSET + 16 * i;

		wr32(e, (uint32_t)(MSI_BASE + 4 * i));
		wr32(e + 4, 0);
		wr32(e + 8, MSI_DATA(i));
		wr32(e + 12, 0);
	}
	for (i = 0; i < 20; i++) {
		clock_step(RESET_NS / 4);
		if (reg(KITE_REG_STATUS) & KITE_STATUS_READY)
			break;
	}
	if (!(reg(KITE_REG_STATUS) & KITE_STATUS_READY))
		fatal("device not READY after reset");
}

/* Did vector v fire since the last call? Clears the message. */
static bool msi_take(unsigned v)
{
	uint64_t a = MSI_BASE + 4 * v;

	if (mem32(a) != MSI_DATA(v))
		return false;
	setmem32(a, 0);
	return true;
}

/* ------------------------------------------------------------------ */
/* PBLs and queue buffers                                              */
/* ------------------------------------------------------------------ */

struct qbuf {
	struct kite_pbl pbl;
	uint64_t data;		/* first data page; pages are contiguous */
	uint64_t ptes;		/* level 1/2: PTE page(s), contiguous */
	uint64_t pdes;		/* level 2: PDE page */
};

static uint32_t pbl_cfg(unsigned level, unsigned shift)
{
	return (uint32_t)(FIELD_PREP(KITE_PBL_CFG_LEVEL, level) |
			  FIELD_PREP(KITE_PBL_CFG_PAGE_SHIFT, shift));
}

/*
 * npages data pages of 2^shift bytes described by a level 0/1/2 PBL. Queue
 * PBLs carry LAST / NEXT_TO_LAST on the last two PTEs.
 */
static struct qbuf mkbuf(unsigned level, unsigned shift, uint32_t npages, bool queue)
{
	struct qbuf b;
	uint64_t psz = 1ULL << shift, *pte;
	uint32_t nptp = (npages + KITE_PBL_ENTRIES - 1) / KITE_PBL_ENTRIES, i;

	memset(&b, 0, sizeof(b));
	b.data = galloc(npages * psz, psz);
	b.pbl.npages = npages;
	b.pbl.cfg = pbl_cfg(level, shift);
	if (level == KITE_PBL_LEVEL_0) {
		b.pbl.addr = b.data;
		return b;
	}
	pte = calloc((size_t)nptp * KITE_PBL_ENTRIES, 8);
	if (!pte)
		abort();
	for (i = 0; i < npages; i++) {
		pte[i] = (b.data + i * psz) | KITE_PTE_VALID;
		if (queue && i == npages - 1)
			pte[i] |= KITE_PTE_LAST;
		if (queue && npages >= 2 && i == npages - 2)
			pte[i] |= KITE_PTE_NEXT_TO_LAST;
	}
	b.ptes = galloc((uint64_t)nptp * KITE_PBL_PAGE_SIZE, KITE_PBL_PAGE_SIZE);
	memwrite(b.ptes, pte, (size_t)npages * 8);
	free(pte);
	if (level == KITE_PBL_LEVEL_1) {
		b.pbl.addr = b.ptes;
		return b;
	}
	b.pdes = galloc(KITE_PBL_PAGE_SIZE, KITE_PBL_PAGE_SIZE);
	for (i = 0; i < nptp; i++) {
		uint64_t pde = (b.ptes + (uint64_t)i * KITE_PBL_PAGE_SIZE) | KITE_PTE_VALID;

		memwrite(b.pdes + 8 * i, &pde, 8);
	}
	b.pbl.addr = b.pdes;
	return b;
}

/* A queue buffer of exactly `bytes` (4 KiB pages, level chosen by size). */
static struct qbuf qbuf_for(uint64_t bytes)
{
	uint32_t np;

	if (bytes <= KITE_PBL_PAGE_SIZE)
		return mkbuf(0, 12, 1, true);
	np = (uint32_t)(bytes / KITE_PBL_PAGE_SIZE);
	return mkbuf(np <= KITE_PBL_ENTRIES ? 1 : 2, 12, np, true);
}

static uint64_t pte_get(const struct qbuf *b, uint32_t i)
{
	uint64_t v;

	memread(b->ptes + 8 * i, &v, 8);
	return v;
}

static void pte_set(const struct qbuf *b, uint32_t i, uint64_t v)
{
	memwrite(b->ptes + 8 * i, &v, 8);
}

/* ------------------------------------------------------------------ */
/* Command queue                                                       */
/* ------------------------------------------------------------------ */

struct cmdq_state {
	uint64_t base;
	unsigned log;
	uint32_t pi;
	bool on;
};
static struct cmdq_state cmdq;

struct res {
	uint32_t status, result, cookie;
	uint8_t out[KITE_CMD_PAYLOAD_SIZE];
	bool done;
};

static uint32_t cookie_seq = 0xc0de0000;

/* EQ state the test tracks (EQ0 is drained after every command). */
struct eqs {
	bool on;
	uint32_t eqn;
	unsigned log;
	uint64_t buf;
	uint32_t ci;		/* software consumer count */
	bool autodb;		/* ring the EQ doorbell after draining */
};

static struct eqs eq0;

#define EQLOG 8192
static struct kite_eqe eqlog[EQLOG];
static unsigned neqlog;

static uint64_t db_addr(unsigned page)
{
	return BAR2_ADDR + ((uint64_t)page << KITE_DB_PAGE_SHIFT) + KITE_DB_OFFSET;
}

static uint64_t db_eq(uint32_t eqn, uint32_t ci, bool arm)
{
	return FIELD_PREP(KITE_DB_OBJ, eqn) |
	       FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_EQ) |
	       FIELD_PREP(KITE_DB_EQ_CI, ci & 0xffff) |
	       (arm ? KITE_DB_EQ_ARM : 0);
}

static void eq_doorbell(struct eqs *q, bool arm)
{
	wr64(db_addr(0), db_eq(q->eqn, q->ci, arm));
}

/* Next valid EQE (owner phase check), or false. */
static bool eq_poll(struct eqs *q, struct kite_eqe *e)
{
	uint32_t depth = 1u << q->log;
	uint32_t want = ((q->ci >> q->log) & 1) ^ 1;

	memread(q->buf + (uint64_t)(q->ci & (depth - 1)) * KITE_EQE_SIZE, e, sizeof(*e));
	if (FIELD_GET(KITE_EQE_OWNER, e->type_owner) != want)
		return false;
	q->ci++;
	return true;
}

static unsigned eq_drain(struct eqs *q)
{
	struct kite_eqe e;
	unsigned n = 0;

	if (!q->on)
		return 0;
	while (n < (2u << q->log) && eq_poll(q, &e)) {
		eqlog[neqlog++ % EQLOG] = e;
		n++;
	}
	if (n && q->autodb)
		eq_doorbell(q, false);
	return n;
}

static const struct kite_eqe *eqe_find(unsigned since, uint32_t type, uint32_t obj)
{
	unsigned i;

	for (i = since; i < neqlog; i++) {
		const struct kite_eqe *e = &eqlog[i % EQLOG];

		if (FIELD_GET(KITE_EQE_TYPE, e->type_owner) == type && e->obj == obj)
			return e;
	}
	return NULL;
}

static bool cmdq_enable(unsigned log)
{
	cmdq.base = galloc((uint64_t)KITE_CMD_ENTRY_SIZE << log, 4096);
	cmdq.log = log;
	cmdq.pi = 0;
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)cmdq.base);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), (uint32_t)(cmdq.base >> 32));
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | log);
	cmdq.on = (reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE) != 0;
	return cmdq.on;
}

static bool wait_ci(uint32_t target, int max)
{
	int i;

	for (i = 0; i < max; i++) {
		if ((int32_t)(reg(RDMA(KITE_RDMA_CMDQ_CI)) - target) >= 0)
			return true;
		clock_step(POLL_STEP_NS);
	}
	return false;
}

static uint64_t slot_addr(uint32_t idx)
{
	return cmdq.base + (uint64_t)(idx & ((1u << cmdq.log) - 1)) * KITE_CMD_ENTRY_SIZE;
}

/* Write an entry at PI without ringing. */
static uint32_t cmd_post(struct kite_cmd *c)
{
	c->cookie = ++cookie_seq;
	c->status = 0;
	c->result = 0;
	memwrite(slot_addr(cmdq.pi), c, sizeof(*c));
	return cmdq.pi++;
}

static void cmd_collect(uint32_t idx, uint32_t cookie, struct res *r)
{
	struct kite_cmd e;

	memread(slot_addr(idx), &e, sizeof(e));
	r->status = e.status;
	r->result = e.result;
	r->cookie = cookie;
	memcpy(r->out, e.payload, sizeof(r->out));
	r->done = (e.status & KITE_CMD_STATUS_DONE) != 0;
}

/* Execute one entry; returns the status code, or -1 if it did not complete. */
static int exec_cmd(struct kite_cmd *c, struct res *r)
{
	uint32_t idx = cmd_post(c);

	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	if (!wait_ci(cmdq.pi, POLL_MAX))
		fatal("command 0x%x (cookie 0x%x) not completed: CI=%u PI=%u STATUS=0x%x",
		      c->opcode, c->cookie, reg(RDMA(KITE_RDMA_CMDQ_CI)), cmdq.pi,
		      reg(RDMA(KITE_RDMA_CMDQ_STATUS)));
	cmd_collect(idx, c->cookie, r);
	eq_drain(&eq0);
	return r->done ? (int)(r->status & 0xff) : -1;
}

static int run(uint32_t op, const void *in, size_t in_len, size_t out_len,
	       uint64_t out_addr, struct res *r)
{
	struct kite_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	c.in_len = (uint16_t)in_len;
	c.out_len = (uint16_t)out_len;
	c.out_addr = out_addr;
	if (in)
		memcpy(c.payload, in, in_len > KITE_CMD_PAYLOAD_SIZE ?
		       KITE_CMD_PAYLOAD_SIZE : in_len);
	return exec_cmd(&c, r);
}

static const char *code_name(unsigned c)
{
	static const char *n[] = { "OK", "E_OPCODE", "E_PARAM", "E_LENGTH",
		"E_NO_RESOURCES", "E_OBJECT", "E_STATE", "E_BUSY", "E_DMA",
		"E_PBL", "E_INTERNAL" };

	return c < ARRAY_SIZE(n) ? n[c] : "?";
}

static void res_diag(const struct res *r)
{
	unsigned c = r->status & 0xff;

	diag("got status 0x%08x (%s%s, syndrome %u), result 0x%x", r->status,
	     r->done ? "" : "NOT DONE, ", code_name(c),
	     (unsigned)FIELD_GET(KITE_CMD_STATUS_SYNDROME, r->status), r->result);
}

/* Check a completion: code, and syndrome unless syn < 0. */
static bool expect(const struct res *r, unsigned code, int syn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static bool expect(const struct res *r, unsigned code, int syn, const char *fmt, ...)
{
	bool pass = r->done && (r->status & 0xff) == code &&
		    (syn < 0 || FIELD_GET(KITE_CMD_STATUS_SYNDROME, r->status) == (unsigned)syn);
	va_list ap;

	va_start(ap, fmt);
	vtap(pass, fmt, ap);
	va_end(ap);
	if (!pass) {
		res_diag(r);
		if (syn >= 0)
			diag("expected %s with syndrome %d", code_name(code), syn);
		else
			diag("expected %s", code_name(code));
	}
	return pass;
}

/* Either of two codes (where the semantics leave the choice open). */
static bool expect2(const struct res *r, unsigned c1, unsigned c2, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static bool expect2(const struct res *r, unsigned c1, unsigned c2, const char *fmt, ...)
{
	unsigned c = r->status & 0xff;
	bool pass = r->done && (c == c1 || c == c2);
	va_list ap;

	va_start(ap, fmt);
	vtap(pass, fmt, ap);
	va_end(ap);
	if (!pass) {
		res_diag(r);
		diag("expected %s or %s", code_name(c1), code_name(c2));
	} else {
		diag("(answered %s)", code_name(c));
	}
	return pass;
}

/* A setup step: must succeed or the group stops. */
static uint32_t need(int code, const struct res *r, const char *what)
{
	if (code != KITE_CMD_OK) {
		tap(false, "setup: %s", what);
		res_diag(r);
		fatal("setup step failed: %s", what);
	}
	return r->result;
}

/* ------------------------------------------------------------------ */
/* Command builders                                                    */
/* ------------------------------------------------------------------ */

static int cmd_obj(uint32_t op, uint32_t obj, uint32_t uctx, struct res *r)
{
	struct kite_cmd_obj in = { .obj = obj, .uctx = uctx };

	return run(op, &in, sizeof(in), 0, 0, r);
}

static int nop(struct res *r)
{
	return run(KITE_CMD_NOP, NULL, 0, 0, 0, r);
}

static uint64_t stats_buf;

/* QUERY_STATS into *st (all KITE_STAT_COUNT counters). */
static void stats(uint64_t *st)
{
	struct res r;

	if (!stats_buf)
		stats_buf = galloc(4096, 4096);
	need(run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * KITE_STAT_COUNT, stats_buf, &r),
	     &r, "QUERY_STATS");
	memread(stats_buf, st, 8 * KITE_STAT_COUNT);
}

static uint64_t stat1(unsigned idx)
{
	uint64_t st[KITE_STAT_COUNT];

	stats(st);
	return st[idx];
}

static int create_eq_pbl(unsigned log, unsigned vec, bool ctrl,
			 const struct kite_pbl *pbl, struct res *r)
{
	struct kite_cmd_create_eq in;

	memset(&in, 0, sizeof(in));
	in.cfg = (uint32_t)(FIELD_PREP(KITE_EQ_CFG_LOG_DEPTH, log) |
			    FIELD_PREP(KITE_EQ_CFG_VECTOR, vec)) |
		 (ctrl ? KITE_EQ_CFG_CTRL : 0);
	in.pbl = *pbl;
	return run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, r);
}

/* Create an EQ and track it in *q. */
static int create_eq(struct eqs *q, unsigned log, unsigned vec, bool ctrl, struct res *r)
{
	struct qbuf b = qbuf_for((uint64_t)KITE_EQE_SIZE << log);
	int c = create_eq_pbl(log, vec, ctrl, &b.pbl, r);

	memset(q, 0, sizeof(*q));
	if (c == KITE_CMD_OK) {
		q->on = true;
		q->eqn = r->result;
		q->log = log;
		q->buf = b.data;
		q->autodb = true;
	}
	return c;
}

static void setup_eq0(void)
{
	struct res r;

	need(create_eq(&eq0, 6, EQ0_VEC, true, &r), &r, "CREATE_EQ (EQ0)");
	eq_drain(&eq0);
}

/* Command queue (depth 64) + EQ0. */
static void std_setup(void)
{
	if (!cmdq_enable(6))
		fatal("command queue does not enable");
	setup_eq0();
}

struct cq {
	uint32_t cqn;
	unsigned log, cqe_size;
	uint64_t dbrec;
	struct qbuf b;
};

static int create_cq_full(unsigned log, uint32_t eqn, uint32_t cfg_extra, uint32_t uctx,
			  uint16_t mcount, uint16_t mperiod, uint64_t dbrec,
			  const struct kite_pbl *pbl, struct res *r)
{
	struct kite_cmd_create_cq in;

	memset(&in, 0, sizeof(in));
	in.cfg = (uint32_t)FIELD_PREP(KITE_CQ_CFG_LOG_DEPTH, log) | cfg_extra;
	in.eqn = eqn;
	in.uctx = uctx;
	in.mod_count = mcount;
	in.mod_period = mperiod;
	in.dbrec_addr = dbrec;
	in.pbl = *pbl;
	return run(KITE_CMD_CREATE_CQ, &in, sizeof(in), 0, 0, r);
}

static int create_cq(struct cq *q, unsigned log, uint32_t eqn, uint32_t uctx, struct res *r)
{
	int c;

	memset(q, 0, sizeof(*q));
	q->log = log;
	q->cqe_size = KITE_CQE_SIZE;
	q->dbrec = galloc(64, 64);
	q->b = qbuf_for((uint64_t)KITE_CQE_SIZE << log);
	c = create_cq_full(log, eqn, 0, uctx, 0, 0, q->dbrec, &q->b.pbl, r);
	if (c == KITE_CMD_OK)
		q->cqn = r->result;
	return c;
}

static int query_cq(uint32_t cqn, struct kite_cmd_query_cq_out *o, struct res *r)
{
	int c = run(KITE_CMD_QUERY_CQ, &(struct kite_cmd_obj){ .obj = cqn },
		    sizeof(struct kite_cmd_obj), sizeof(*o), 0, r);

	memcpy(o, r->out, sizeof(*o));
	return c;
}

static int alloc_pd(uint32_t uctx, struct res *r)
{
	return cmd_obj(KITE_CMD_ALLOC_PD, 0, uctx, r);
}

static int add_gid(uint32_t index, uint32_t type, struct res *r)
{
	struct kite_cmd_add_gid in;

	memset(&in, 0, sizeof(in));
	in.index = index;
	in.type = type;
	if (type == KITE_NET_ROCE_V2_IPV4) {
		in.gid[10] = 0xff;
		in.gid[11] = 0xff;
		in.gid[12] = 10;
		in.gid[15] = (uint8_t)(index + 1);
	} else {
		in.gid[0] = 0xfe;
		in.gid[1] = 0x80;
		in.gid[15] = (uint8_t)(index + 1);
	}
	memcpy(in.mac, MAC, 6);
	return run(KITE_CMD_ADD_GID, &in, sizeof(in), 0, 0, r);
}

struct qpspec {
	uint32_t type, flags, pdn, scqn, rcqn, uctx;
	unsigned slog, sshift, rlog, rshift;
};

static struct kite_cmd_create_qp qp_in(const struct qpspec *s)
{
	struct kite_cmd_create_qp in;
	struct qbuf sq, rq;

	memset(&in, 0, sizeof(in));
	in.type = s->type;
	in.flags = s->flags;
	in.pdn = s->pdn;
	in.send_cqn = s->scqn;
	in.recv_cqn = s->rcqn;
	in.uctx = s->uctx;
	in.sq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, s->slog) |
			       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, s->sshift));
	in.rq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, s->rlog) |
			       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, s->rshift));
	/* Buffers sized for the spec; out-of-range values get a 4 KiB page. */
	if (s->slog >= 1 && s->slog <= 12 && s->sshift >= 6 && s->sshift <= 10)
		sq = qbuf_for(1ULL << (s->slog + s->sshift));
	else
		sq = qbuf_for(4096);
	if (s->rlog >= 1 && s->rlog <= 12 && s->rshift >= 6 && s->rshift <= 10)
		rq = qbuf_for(1ULL << (s->rlog + s->rshift));
	else
		rq = qbuf_for(4096);
	in.sq_pbl = sq.pbl;
	in.rq_pbl = rq.pbl;
	return in;
}

static int create_qp(const struct qpspec *s, struct res *r)
{
	struct kite_cmd_create_qp in = qp_in(s);

	return run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, r);
}

static struct qpspec qps(uint32_t type, uint32_t pdn, uint32_t cqn, uint32_t uctx)
{
	struct qpspec s = { .type = type, .pdn = pdn, .scqn = cqn, .rcqn = cqn,
			    .uctx = uctx, .slog = 6, .sshift = 6, .rlog = 6, .rshift = 6 };
	return s;
}

/* Attribute values valid for every transition. */
static struct kite_cmd_modify_qp attrs_valid(uint32_t qpn)
{
	struct kite_cmd_modify_qp a;
	static const uint8_t dmac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc };
	static const uint8_t dgid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2 };

	memset(&a, 0, sizeof(a));
	a.qpn = qpn;
	a.port = 1;
	a.path_mtu = KITE_MTU_1024;
	a.access = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_READ;
	a.pkey_index = 0;
	a.max_rd_atomic = 4;
	a.max_dest_rd_atomic = 8;
	a.qkey = 0x11111111;
	a.dest_qpn = 0x123;
	a.rq_psn = 0x1000;
	a.sq_psn = 0x2000;
	a.min_rnr_timer = 12;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 6;
	a.sgid_index = 0;
	a.hop_limit = 64;
	a.traffic_class = 0;
	a.net_type = KITE_NET_ROCE_V2_IPV4;
	a.flow_label = 0x12345;
	a.vlan = 0;
	memcpy(a.dmac, dmac, 6);
	memcpy(a.dgid, dgid, 16);
	return a;
}

static int modify_qp(const struct kite_cmd_modify_qp *a, uint32_t mask, uint8_t state,
		     struct res *r)
{
	struct kite_cmd_modify_qp in = *a;

	in.mask = mask;
	in.state = state;
	return run(KITE_CMD_MODIFY_QP, &in, sizeof(in), 0, 0, r);
}

static int query_qp(uint32_t qpn, struct kite_cmd_modify_qp *o, struct res *r)
{
	int c = run(KITE_CMD_QUERY_QP, &(struct kite_cmd_obj){ .obj = qpn },
		    sizeof(struct kite_cmd_obj), sizeof(*o), 0, r);

	memcpy(o, r->out, sizeof(*o));
	return c;
}

/* Current state, or -1. */
static int qp_state(uint32_t qpn)
{
	struct kite_cmd_modify_qp o;
	struct res r;

	if (query_qp(qpn, &o, &r) != KITE_CMD_OK)
		return -1;
	return o.state;
}

static int reg_mr(uint32_t pdn, uint32_t access, uint32_t flags, uint32_t uctx,
		  uint64_t iova, uint64_t length, const struct kite_pbl *pbl, struct res *r)
{
	struct kite_cmd_reg_mr in;

	memset(&in, 0, sizeof(in));
	in.pdn = pdn;
	in.access = access;
	in.flags = flags;
	in.uctx = uctx;
	in.iova = iova;
	in.length = length;
	if (pbl)
		in.pbl = *pbl;
	return run(KITE_CMD_REG_MR, &in, sizeof(in), 0, 0, r);
}

static int rereg_mr(uint32_t key, uint32_t flags, uint32_t pdn, uint32_t access,
		    uint64_t iova, uint64_t length, const struct kite_pbl *pbl, struct res *r)
{
	struct kite_cmd_rereg_mr in;

	memset(&in, 0, sizeof(in));
	in.key = key;
	in.flags = flags;
	in.pdn = pdn;
	in.access = access;
	in.iova = iova;
	in.length = length;
	if (pbl)
		in.pbl = *pbl;
	return run(KITE_CMD_REREG_MR, &in, sizeof(in), 0, 0, r);
}

static int alloc_mr(uint32_t pdn, uint32_t max_pages, uint32_t flags, struct res *r)
{
	struct kite_cmd_alloc_mr in = { .pdn = pdn, .max_pages = max_pages, .flags = flags };

	return run(KITE_CMD_ALLOC_MR, &in, sizeof(in), 0, 0, r);
}

static int alloc_mw(uint32_t pdn, uint32_t type, uint32_t flags, uint32_t uctx, struct res *r)
{
	struct kite_cmd_alloc_mw in = { .pdn = pdn, .type = type, .flags = flags, .uctx = uctx };

	return run(KITE_CMD_ALLOC_MW, &in, sizeof(in), 0, 0, r);
}

/* Fixture for CQ/QP/MR groups: cmdq, EQ0, EQ1, PD, CQ on EQ1, GID 0. */
static struct eqs eq1;
static uint32_t fx_pd;
static struct cq fx_cq;

static void fixture(void)
{
	struct res r;

	std_setup();
	need(create_eq(&eq1, 6, EQ1_VEC, false, &r), &r, "CREATE_EQ (EQ1)");
	fx_pd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	need(create_cq(&fx_cq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	need(add_gid(0, KITE_NET_ROCE_V2_IPV4, &r), &r, "ADD_GID 0");
}

/* ------------------------------------------------------------------ */
/* Group: command channel                                              */
/* ------------------------------------------------------------------ */

static void g_cmdq(void)
{
	uint64_t ring = galloc(4 * 4096, 4096);
	uint32_t cfg, ci, st;
	struct kite_cmd c;
	struct res r, r2;
	uint32_t i1, i2, ck1, ck2;
	int i;
	bool all;

	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), 0);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 0);
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	tap(!(cfg & KITE_CMDQ_CFG_ENABLE), "enable with LOG_DEPTH 0 is refused (CFG 0x%x)", cfg);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | (KITE_CMDQ_MAX_LOG_DEPTH + 1));
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	tap(!(cfg & KITE_CMDQ_CFG_ENABLE), "enable with LOG_DEPTH 7 is refused (CFG 0x%x)", cfg);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring + 0x800);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 1);
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	tap(!(cfg & KITE_CMDQ_CFG_ENABLE), "enable with a BASE not 4 KiB aligned is refused (CFG 0x%x)", cfg);

	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 1);
	cfg = reg(RDMA(KITE_RDMA_CMDQ_CFG));
	if (!tap(cfg == (KITE_CMDQ_CFG_ENABLE | 1), "a valid configuration enables (CFG 0x%x)", cfg))
		fatal("command queue cannot be enabled");
	cmdq.base = ring;
	cmdq.log = 1;
	cmdq.pi = 0;
	cmdq.on = true;

	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring + 0x1000);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 3);
	tap(reg(RDMA(KITE_RDMA_CMDQ_BASE_LO)) == (uint32_t)ring &&
	    reg(RDMA(KITE_RDMA_CMDQ_CFG)) == (KITE_CMDQ_CFG_ENABLE | 1),
	    "BASE/CFG writes while enabled are ignored");

	nop(&r);
	expect(&r, KITE_CMD_OK, 0, "NOP completes OK");
	tap(r.done && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 1, "NOP: DONE set in status, CI is 1");

	all = true;
	for (i = 0; i < 5; i++)
		all &= nop(&r) == KITE_CMD_OK;
	tap(all && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 6, "NOPs across ring wraps (depth 2), CI free-running");

	run(KITE_CMD_NOP, NULL, 50, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "NOP ignores in_len (50)");
	run(0x7f, NULL, 0, 0, 0, &r);
	expect(&r, KITE_CMD_E_OPCODE, -1, "unknown opcode 0x7f -> E_OPCODE");
	run(0x04, NULL, 0, 0, 0, &r);
	expect(&r, KITE_CMD_E_OPCODE, -1, "unassigned opcode 0x04 -> E_OPCODE");
	run(KITE_CMD_ALLOC_PD, NULL, KITE_CMD_PAYLOAD_SIZE + 1, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "in_len 225 -> E_LENGTH");
	run(KITE_CMD_ALLOC_PD, &(struct kite_cmd_obj){ 0 }, 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "in_len shorter than the input structure -> E_LENGTH");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, KITE_CMD_PAYLOAD_SIZE + 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "out_len 225 with out_addr 0 -> E_LENGTH");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "out_len shorter than the output structure -> E_LENGTH");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out), NOT_RAM, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "out_addr outside guest RAM -> E_DMA");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel still works after failed commands");

	/* PI exactly depth ahead is fine. */
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_NOP;
	i1 = cmd_post(&c);
	ck1 = c.cookie;
	i2 = cmd_post(&c);
	ck2 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	wait_ci(cmdq.pi, POLL_MAX);
	cmd_collect(i1, ck1, &r);
	cmd_collect(i2, ck2, &r2);
	tap(r.done && r2.done && reg(RDMA(KITE_RDMA_CMDQ_CI)) == cmdq.pi &&
	    !(reg(RDMA(KITE_RDMA_CMDQ_STATUS)) & KITE_CMDQ_STATUS_BAD_PI),
	    "PI exactly depth ahead of CI: both entries execute");

	/* PI more than depth ahead. */
	ci = reg(RDMA(KITE_RDMA_CMDQ_CI));
	wreg(RDMA(KITE_RDMA_CMDQ_PI), ci + 3);
	clock_step(POLL_STEP_NS * 10);
	st = reg(RDMA(KITE_RDMA_CMDQ_STATUS));
	tap((st & KITE_CMDQ_STATUS_BAD_PI) && !(st & KITE_CMDQ_STATUS_HALTED),
	    "PI more than depth ahead sets STATUS.BAD_PI (STATUS 0x%x)", st);
	tap(reg(RDMA(KITE_RDMA_CMDQ_CI)) == ci, "bad PI is ignored: CI unchanged");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel keeps working after a bad PI");

	/* Disable resets PI/CI/STATUS. */
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 1);
	tap(reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0 && reg(RDMA(KITE_RDMA_CMDQ_STATUS)) == 0 &&
	    !(reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE),
	    "disable resets CI and STATUS");

	/* Ring entry unreachable: halt with DMA_ERR. */
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)NOT_RAM);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), (uint32_t)(NOT_RAM >> 32));
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 1);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), 1);
	for (i = 0; i < POLL_MAX; i++) {
		if (reg(RDMA(KITE_RDMA_CMDQ_STATUS)) & KITE_CMDQ_STATUS_HALTED)
			break;
		clock_step(POLL_STEP_NS);
	}
	st = reg(RDMA(KITE_RDMA_CMDQ_STATUS));
	tap((st & (KITE_CMDQ_STATUS_HALTED | KITE_CMDQ_STATUS_DMA_ERR)) ==
	    (KITE_CMDQ_STATUS_HALTED | KITE_CMDQ_STATUS_DMA_ERR) &&
	    reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0,
	    "ring outside guest RAM: STATUS DMA_ERR|HALTED, CI stays 0 (STATUS 0x%x)", st);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), 2);
	clock_step(POLL_STEP_NS * 10);
	tap(reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0, "halted channel does not process further PI writes");
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 1);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_LO), (uint32_t)ring);
	wreg(RDMA(KITE_RDMA_CMDQ_BASE_HI), 0);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), KITE_CMDQ_CFG_ENABLE | 2);
	cmdq.log = 2;
	cmdq.pi = 0;
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "disable + re-enable recovers from DMA_ERR");
}

/* ------------------------------------------------------------------ */
/* Group: EQ0 command completion events and MSI-X                      */
/* ------------------------------------------------------------------ */

static void g_eq0(void)
{
	struct res r;
	const struct kite_eqe *e;
	unsigned mark, i, found, n;
	uint64_t ov0;
	bool all, phase_ok;
	struct kite_eqe raw;

	if (!cmdq_enable(6))
		fatal("command queue does not enable");
	need(create_eq(&eq0, 6, EQ0_VEC, true, &r), &r, "CREATE_EQ (EQ0)");
	tap(r.result == 0, "CREATE_EQ with CTRL returns EQN 0 (got %u)", r.result);
	eq_drain(&eq0);

	mark = neqlog;
	nop(&r);
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(e != NULL, "NOP posts CMD_DONE with its cookie on EQ0");
	if (e)
		tap(e->data == r.status, "CMD_DONE data is the status word (0x%x vs 0x%x)",
		    e->data, r.status);
	mark = neqlog;
	run(0x7e, NULL, 0, 0, 0, &r);
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(e && e->data == r.status && (e->data & 0xff) == KITE_CMD_E_OPCODE,
	    "failed command's CMD_DONE carries its error status");

	/* Across a wrap: depth 64, 70 commands, every CMD_DONE found in order. */
	all = true;
	found = 0;
	for (i = 0; i < 70; i++) {
		mark = neqlog;
		nop(&r);
		if (neqlog - mark == 1 && eqlog[mark % EQLOG].obj == r.cookie)
			found++;
		else
			all = false;
	}
	tap(all && found == 70, "70 NOPs: each CMD_DONE is the next EQE, owner phase right across the wrap (%u/70)", found);
	memread(eq0.buf + (uint64_t)((eq0.ci - 1) & 63) * KITE_EQE_SIZE, &raw, sizeof(raw));
	phase_ok = FIELD_GET(KITE_EQE_OWNER, raw.type_owner) == (((eq0.ci - 1) >> 6 & 1) ^ 1);
	tap(eq0.ci > 64 && phase_ok, "EQE %u written with owner %u (pass %u)", eq0.ci - 1,
	    (unsigned)FIELD_GET(KITE_EQE_OWNER, raw.type_owner), (eq0.ci - 1) >> 6);

	/* MSI-X only when armed. */
	msi_take(EQ0_VEC);
	nop(&r);
	tap(!msi_take(EQ0_VEC), "disarmed EQ0: no interrupt for a new EQE");
	eq_doorbell(&eq0, true);
	clock_step(POLL_STEP_NS);
	tap(!msi_take(EQ0_VEC), "arming an empty EQ0 does not interrupt");
	nop(&r);
	tap(msi_take(EQ0_VEC), "armed EQ0: the next EQE raises vector %d", EQ0_VEC);
	nop(&r);
	tap(!msi_take(EQ0_VEC), "the interrupt disarms the EQ: next EQE does not interrupt");
	eq0.autodb = false;
	n = eq0.ci;
	nop(&r);
	wr64(db_addr(0), db_eq(0, n, true));
	clock_step(POLL_STEP_NS);
	tap(msi_take(EQ0_VEC), "arming with unconsumed EQEs (pi != ci) interrupts at once");
	eq_doorbell(&eq0, false);
	wr32(BAR0_ADDR + KITE_MSIX_TABLE_OFFSET + 16 * EQ0_VEC + 12, 1);	/* mask */
	eq_doorbell(&eq0, true);
	nop(&r);
	tap(!msi_take(EQ0_VEC) && (rd32(BAR0_ADDR + KITE_MSIX_PBA_OFFSET) & BIT(EQ0_VEC)),
	    "armed EQ0 with its vector masked: PBA bit set, no message");
	wr32(BAR0_ADDR + KITE_MSIX_TABLE_OFFSET + 16 * EQ0_VEC + 12, 0);	/* unmask */
	tap(msi_take(EQ0_VEC), "unmasking delivers the pending message");

	/* Overflow: EQ0 holds at most depth unconsumed EQEs. */
	ov0 = stat1(KITE_STAT_EQ_OVERFLOWS);
	eq_drain(&eq0);
	eq_doorbell(&eq0, false);
	mark = neqlog;
	for (i = 0; i < 66; i++)
		nop(&r);
	n = neqlog - mark;
	eq_doorbell(&eq0, false);
	tap(n == 64, "66 commands without CI updates: exactly 64 EQEs written (%u)", n);
	tap(stat1(KITE_STAT_EQ_OVERFLOWS) > ov0, "EQ overflow counted in KITE_STAT_EQ_OVERFLOWS");
	eq_doorbell(&eq0, false);
	mark = neqlog;
	nop(&r);
	tap(eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie) != NULL,
	    "after the overflow, EQ0 works again once space frees");
	eq0.autodb = true;
	eq_doorbell(&eq0, false);
}

/* ------------------------------------------------------------------ */
/* Group: QUERY_DEVICE / QUERY_PORT / QUERY_STATS                      */
/* ------------------------------------------------------------------ */

#define CHK(cond, ...) do { if (!(cond)) { bad++; diag(__VA_ARGS__); } } while (0)

static void g_query(void)
{
	struct kite_cmd_query_device_out d, d2;
	struct kite_cmd_query_port_out p;
	struct res r;
	uint64_t guid = 0, buf, st[24], s0[KITE_STAT_COUNT], s1[KITE_STAT_COUNT];
	uint8_t eui[8] = { (uint8_t)(MAC[0] ^ 2), MAC[1], MAC[2], 0xff, 0xfe, MAC[3], MAC[4], MAC[5] };
	unsigned bad = 0, i;
	bool link;
	static const struct { uint32_t mtu; uint8_t ib; } mtus[] = {
		{ 1500, KITE_MTU_1024 }, { 9000, KITE_MTU_4096 }, { 68, KITE_MTU_256 },
		{ 2112, KITE_MTU_2048 }, { 2111, KITE_MTU_1024 }, { 4160, KITE_MTU_4096 },
		{ 4159, KITE_MTU_2048 }, { 576, KITE_MTU_512 }, { 575, KITE_MTU_256 },
	};

	std_setup();
	for (i = 0; i < 8; i++)
		guid = guid << 8 | eui[i];

	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(d), 0, &r), &r, "QUERY_DEVICE");
	memcpy(&d, r.out, sizeof(d));
	CHK(d.fw_ver == reg(KITE_REG_FW_VER), "fw_ver 0x%x", d.fw_ver);
	CHK(d.hw_rev == reg(KITE_REG_HW_REV), "hw_rev 0x%x", d.hw_rev);
	CHK(d.node_guid == guid, "node_guid 0x%" PRIx64 ", expected 0x%" PRIx64, d.node_guid, guid);
	CHK(d.sys_image_guid == guid, "sys_image_guid 0x%" PRIx64, d.sys_image_guid);
	CHK(d.max_mr_size == 1ULL << 39, "max_mr_size 0x%" PRIx64, d.max_mr_size);
	CHK(d.page_size_cap == GENMASK_ULL(21, 12), "page_size_cap 0x%" PRIx64, d.page_size_cap);
	CHK(d.vendor_id == PCI_VENDOR_ID_KITE, "vendor_id 0x%x", d.vendor_id);
	CHK(d.vendor_part_id == PCI_DEVICE_ID_KITE_NIC, "vendor_part_id 0x%x", d.vendor_part_id);
	CHK(d.max_qp == 1024, "max_qp %u", d.max_qp);
	CHK(d.max_qp_wr == 4096, "max_qp_wr %u", d.max_qp_wr);
	CHK(d.max_send_sge == 8, "max_send_sge %u", d.max_send_sge);
	CHK(d.max_recv_sge == 8, "max_recv_sge %u", d.max_recv_sge);
	CHK(d.max_sge_rd == 8, "max_sge_rd %u", d.max_sge_rd);
	CHK(d.max_inline == 256, "max_inline %u", d.max_inline);
	CHK(d.max_cq == 1024, "max_cq %u", d.max_cq);
	CHK(d.max_cqe == 65536, "max_cqe %u", d.max_cqe);
	CHK(d.max_mr == 4096, "max_mr %u", d.max_mr);
	CHK(d.max_pd == 1024, "max_pd %u", d.max_pd);
	CHK(d.max_uctx == 255, "max_uctx %u", d.max_uctx);
	CHK(d.max_eq == 64, "max_eq %u", d.max_eq);
	CHK(d.max_eqe == 32768, "max_eqe %u", d.max_eqe);
	CHK(d.max_qp_rd_atom == 128, "max_qp_rd_atom %u", d.max_qp_rd_atom);
	CHK(d.max_qp_init_rd_atom == 128, "max_qp_init_rd_atom %u", d.max_qp_init_rd_atom);
	CHK(d.max_fast_reg_pages == 512, "max_fast_reg_pages %u", d.max_fast_reg_pages);
	CHK(d.gid_tbl_len == 16, "gid_tbl_len %u", d.gid_tbl_len);
	CHK(d.features == (KITE_FEAT_RC | KITE_FEAT_UD | KITE_FEAT_ATOMIC | KITE_FEAT_FAST_REG |
			   KITE_FEAT_CQE_128 | KITE_FEAT_CQ_RESIZE | KITE_FEAT_CQ_MODERATION |
			   KITE_FEAT_SRQ | KITE_FEAT_MCAST | KITE_FEAT_QP_CNTR | KITE_FEAT_MW |
			   KITE_FEAT_REREG_MR),
	    "features 0x%x", d.features);
	CHK(d.max_cntr == 64, "max_cntr %u", d.max_cntr);
	CHK(d.max_mcast_grp == 64, "max_mcast_grp %u", d.max_mcast_grp);
	CHK(d.max_mcast_qp_attach == 32, "max_mcast_qp_attach %u", d.max_mcast_qp_attach);
	CHK(d.max_mcast_total_attach == 512, "max_mcast_total_attach %u",
	    d.max_mcast_total_attach);
	CHK(d.max_mw == 4096, "max_mw %u (the memory translation table)", d.max_mw);
	CHK(d.max_srq == 255, "max_srq %u", d.max_srq);
	CHK(d.max_srq_wr == 4096, "max_srq_wr %u", d.max_srq_wr);
	CHK(d.max_srq_sge == 8, "max_srq_sge %u", d.max_srq_sge);
	CHK(d.max_cq_moderation_count == 65535, "max_cq_moderation_count %u", d.max_cq_moderation_count);
	CHK(d.max_cq_moderation_period == 65535, "max_cq_moderation_period %u", d.max_cq_moderation_period);
	CHK(d.local_ca_ack_delay == 15, "local_ca_ack_delay %u", d.local_ca_ack_delay);
	tap(bad == 0, "QUERY_DEVICE: every field as specified (%u wrong)", bad);

	buf = galloc(4096, 4096);
	memset(st, 0xa5, sizeof(st));
	memwrite(buf, st, sizeof(st));
	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(d), buf, &r), &r, "QUERY_DEVICE to out_addr");
	memread(buf, &d2, sizeof(d2));
	tap(!memcmp(&d, &d2, sizeof(d)), "QUERY_DEVICE output to out_addr matches the payload output");

	/* QUERY_PORT */
	link = reg(KITE_REG_STATUS) & KITE_STATUS_LINK_UP;
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	bad = 0;
	CHK(p.state == (link ? KITE_PORT_STATE_ACTIVE : KITE_PORT_STATE_DOWN), "state %u (link %d)", p.state, link);
	CHK(p.phys_state == (link ? KITE_PORT_PHYS_LINK_UP : KITE_PORT_PHYS_DISABLED), "phys_state %u", p.phys_state);
	CHK(p.active_mtu == KITE_MTU_1024, "active_mtu %u at ETH_MTU 1500", p.active_mtu);
	CHK(p.max_mtu == KITE_MTU_4096, "max_mtu %u", p.max_mtu);
	CHK(p.speed_mbps == 10000, "speed_mbps %u", p.speed_mbps);
	CHK(!memcmp(p.mac, MAC, 6), "mac %02x:%02x:%02x:%02x:%02x:%02x", p.mac[0], p.mac[1], p.mac[2], p.mac[3], p.mac[4], p.mac[5]);
	CHK(p.eth_mtu == 1500, "eth_mtu %u", p.eth_mtu);
	CHK(p.gid_tbl_len == 16, "gid_tbl_len %u", p.gid_tbl_len);
	tap(bad == 0, "QUERY_PORT: every field as specified (link %s, %u wrong)", link ? "up" : "down", bad);
	run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_PORT with out_len 23 -> E_LENGTH");

	bad = 0;
	for (i = 0; i < ARRAY_SIZE(mtus); i++) {
		wreg(KITE_REG_ETH_MTU, mtus[i].mtu);
		need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
		memcpy(&p, r.out, sizeof(p));
		CHK(p.active_mtu == mtus[i].ib && p.eth_mtu == mtus[i].mtu,
		    "ETH_MTU %u: active_mtu %u (expected %u), eth_mtu %u",
		    mtus[i].mtu, p.active_mtu, mtus[i].ib, p.eth_mtu);
	}
	tap(bad == 0, "QUERY_PORT active_mtu follows ETH_MTU (largest IB MTU with mtu+64 <= ETH_MTU)");
	wreg(KITE_REG_ETH_MTU, 1500);
	wreg(KITE_REG_ETH_MAC_LO, 0x33445566);
	wreg(KITE_REG_ETH_MAC_HI, 0x0211);
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	tap(p.mac[0] == 0x02 && p.mac[1] == 0x11 && p.mac[2] == 0x33 && p.mac[5] == 0x66,
	    "QUERY_PORT mac follows ETH_MAC");

	/* QUERY_STATS */
	run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * KITE_STAT_COUNT, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "QUERY_STATS without out_addr -> E_PARAM");
	run(KITE_CMD_QUERY_STATS, NULL, 0, 12, buf, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_STATS with out_len 12 (not a multiple of 8) -> E_LENGTH");
	memset(st, 0xa5, sizeof(st));
	memwrite(buf, st, sizeof(st));
	run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * 20, buf, &r);
	memread(buf, st, sizeof(st));
	tap(r.done && (r.status & 0xff) == 0 && r.result == KITE_STAT_COUNT &&
	    st[KITE_STAT_COUNT] == 0xa5a5a5a5a5a5a5a5ULL && st[KITE_STAT_COUNT - 1] != 0xa5a5a5a5a5a5a5a5ULL,
	    "QUERY_STATS out_len 160: result 16, exactly 16 counters written (result %u)", r.result);
	memset(st, 0xa5, sizeof(st));
	memwrite(buf, st, sizeof(st));
	run(KITE_CMD_QUERY_STATS, NULL, 0, 24, buf, &r);
	memread(buf, st, sizeof(st));
	tap(r.done && (r.status & 0xff) == 0 && r.result == 3 && st[3] == 0xa5a5a5a5a5a5a5a5ULL,
	    "QUERY_STATS out_len 24: result 3, only 3 counters written (result %u)", r.result);
	run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * KITE_STAT_COUNT, NOT_RAM, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "QUERY_STATS to an out_addr outside RAM -> E_DMA");

	stats(s0);
	nop(&r);
	nop(&r);
	nop(&r);
	run(0x7f, NULL, 0, 0, 0, &r);
	run(KITE_CMD_DEALLOC_PD, &(struct kite_cmd_obj){ .obj = 77 }, 8, 0, 0, &r);
	stats(s1);
	tap(s1[KITE_STAT_CMDS] - s0[KITE_STAT_CMDS] == 6,
	    "KITE_STAT_CMDS counts commands (delta %" PRIu64 ", expected 6)", s1[KITE_STAT_CMDS] - s0[KITE_STAT_CMDS]);
	tap(s1[KITE_STAT_CMD_ERRORS] - s0[KITE_STAT_CMD_ERRORS] == 2,
	    "KITE_STAT_CMD_ERRORS counts failed commands (delta %" PRIu64 ", expected 2)",
	    s1[KITE_STAT_CMD_ERRORS] - s0[KITE_STAT_CMD_ERRORS]);
	tap(s1[KITE_STAT_EQES] - s0[KITE_STAT_EQES] == 6,
	    "KITE_STAT_EQES counts the CMD_DONE events (delta %" PRIu64 ", expected 6)",
	    s1[KITE_STAT_EQES] - s0[KITE_STAT_EQES]);
}

/* ------------------------------------------------------------------ */
/* Group: user contexts and protection domains                         */
/* ------------------------------------------------------------------ */

static void g_uctx_pd(void)
{
	struct res r;
	uint32_t u1, u2, pd, pd2, n;
	int c, i;

	std_setup();
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	tap(u1 == 1, "first ALLOC_UCTX returns 1 (got %u)", u1);
	u2 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	tap(u2 == 2, "second ALLOC_UCTX returns 2 (got %u)", u2);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX of an allocated context");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX 0 (the kernel) -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 256, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX 256 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 0xffffffff, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_UCTX 0xffffffff -> E_OBJECT");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	tap(u1 == 1, "ALLOC_UCTX reuses the lowest free number (got %u)", u1);

	pd = need(alloc_pd(u2, &r), &r, "ALLOC_PD in uctx 2");
	tap(pd >= 1 && pd <= KITE_OBJ_MASK, "ALLOC_PD returns a PDN >= 1 (got %u)", pd);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u2, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while a PD belongs to it -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX once its PD is gone");
	alloc_pd(u2, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_PD with a deallocated uctx -> E_OBJECT");
	alloc_pd(200, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_PD with a never-allocated uctx -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_PD twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_PD 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, 0xffffff, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_PD 0xffffff -> E_OBJECT");
	pd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	pd2 = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	tap(pd != pd2, "two PDs get different numbers (%u, %u)", pd, pd2);
	pd2 = need(cmd_obj(KITE_CMD_ALLOC_PD, 12345, 0, &r), &r, "ALLOC_PD with obj set");
	tap(pd2 != 12345 && pd2 >= 1 && pd2 < 1024, "ALLOC_PD ignores obj (PDN %u)", pd2);

	{
		struct cq ucq;
		struct qbuf mb = mkbuf(0, 12, 1, false);
		struct eqs ue;
		struct qpspec qs;
		uint32_t u, kpd, qp, key;

		need(create_eq(&ue, 6, EQ1_VEC, false, &r), &r, "CREATE_EQ");
		kpd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
		u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
		need(create_cq(&ucq, 2, ue.eqn, u, &r), &r, "CREATE_CQ in uctx");
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while a CQ belongs to it -> E_BUSY");
		cmd_obj(KITE_CMD_DESTROY_CQ, ucq.cqn, 0, &r);
		key = need(reg_mr(kpd, KITE_ACCESS_LOCAL_WRITE, 0, u, 0, 4096, &mb.pbl, &r), &r, "REG_MR in uctx");
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while an MR belongs to it -> E_BUSY");
		cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
		need(create_cq(&ucq, 2, ue.eqn, 0, &r), &r, "CREATE_CQ");
		qs = qps(KITE_QPT_UD, kpd, ucq.cqn, u);
		qp = need(create_qp(&qs, &r), &r, "CREATE_QP in uctx");
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while a QP belongs to it -> E_BUSY");
		cmd_obj(KITE_CMD_DESTROY_QP, qp, 0, &r);
		cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
		expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX once nothing belongs to it");
		run(KITE_CMD_ALLOC_MR, &(struct kite_cmd_alloc_mr){ .pdn = kpd, .max_pages = 4, .uctx = u },
		    sizeof(struct kite_cmd_alloc_mr), 0, 0, &r);
		expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_MR with an unallocated uctx -> E_OBJECT");
		cmd_obj(KITE_CMD_DEALLOC_PD, kpd, 5, &r);
		expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_obj, uctx),
		       "DEALLOC_PD with the (reserved) uctx field set -> E_PARAM, syndrome 4");
	}

	/* Exhaustion: 255 contexts in all. */
	n = 1;
	for (i = 0; i < 300; i++) {
		c = run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r);
		if (c != KITE_CMD_OK)
			break;
		n++;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 255,
	    "ALLOC_UCTX until full: 255 contexts, then E_NO_RESOURCES (%u, %s)", n, code_name((unsigned)c));
	cmd_obj(KITE_CMD_DEALLOC_UCTX, 77, 0, &r);
	c = run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r);
	tap(c == KITE_CMD_OK && r.result == 77, "after freeing 77, ALLOC_UCTX returns 77 (got %u)", r.result);
}

/* ------------------------------------------------------------------ */
/* Group: event queues and PBL validation                              */
/* ------------------------------------------------------------------ */

static void pbl_err(const struct qbuf *b, unsigned log, unsigned code, const char *what)
{
	struct res r;

	create_eq_pbl(log, EQ1_VEC, false, &b->pbl, &r);
	if (code == KITE_CMD_E_PBL)
		expect(&r, code, offsetof(struct kite_cmd_create_eq, pbl), "CREATE_EQ: %s -> E_PBL, syndrome 8", what);
	else
		expect(&r, code, -1, "CREATE_EQ: %s -> %s", what, code_name(code));
	if (r.done && (r.status & 0xff) == KITE_CMD_OK)
		cmd_obj(KITE_CMD_DESTROY_EQ, r.result, 0, &r);
}

static void g_eq(void)
{
	struct res r;
	struct qbuf b;
	struct eqs q, e15;
	struct kite_cmd_create_eq in;
	struct cq cq;
	uint32_t eqn, n;
	int c, i;

	std_setup();
	create_eq(&q, 6, EQ1_VEC, true, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "a second EQ with CTRL -> E_STATE");

	create_eq(&q, 6, EQ1_VEC, false, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_EQ log depth 6 (minimum)");
	tap(r.result == 1, "first completion EQ gets EQN 1 (got %u)", r.result);
	eqn = r.result;
	b = qbuf_for(16 << 5);
	create_eq_pbl(5, EQ1_VEC, false, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_EQ log depth 5 -> E_PARAM");
	b = qbuf_for(16 << 16);
	create_eq_pbl(16, EQ1_VEC, false, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_EQ log depth 16 -> E_PARAM");
	create_eq(&e15, 15, EQ1_VEC, false, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_EQ log depth 15 (maximum, level 1 PBL of 128 pages)");
	b = qbuf_for(16 << 6);
	create_eq_pbl(6, KITE_MAX_VECTORS, false, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_EQ vector 64 -> E_PARAM");
	create_eq(&q, 6, KITE_MAX_VECTORS - 1, false, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_EQ vector 63");
	memset(&in, 0, sizeof(in));
	in.cfg = 6 | BIT(20);
	in.pbl = b.pbl;
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "CREATE_EQ with a reserved cfg bit -> E_PARAM, syndrome 0");
	in.cfg = 6;
	in.rsvd = 1;
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_create_eq, rsvd),
	       "CREATE_EQ with rsvd non-zero -> E_PARAM, syndrome 4");
	run(KITE_CMD_CREATE_EQ, &in, sizeof(in) - 1, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_EQ with in_len 23 -> E_LENGTH");

	/* PBL validation. */
	b = qbuf_for(1024);
	b.pbl.cfg = pbl_cfg(3, 12);
	pbl_err(&b, 6, KITE_CMD_E_PBL, "PBL level 3");
	b.pbl.cfg = pbl_cfg(0, 11);
	pbl_err(&b, 6, KITE_CMD_E_PBL, "page shift 11");
	b.pbl.cfg = pbl_cfg(0, 22);
	pbl_err(&b, 6, KITE_CMD_E_PBL, "page shift 22");
	b.pbl.cfg = pbl_cfg(0, 12) | BIT(4);
	create_eq_pbl(6, EQ1_VEC, false, &b.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "CREATE_EQ: reserved bit in pbl.cfg -> E_PBL or E_PARAM");
	b = mkbuf(0, 12, 1, true);
	b.pbl.npages = 0;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "npages 0");
	b.pbl.npages = 2;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 0 with npages 2");
	b = mkbuf(0, 12, 1, true);
	b.pbl.addr += 0x800;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 0 data page not page aligned");
	b = mkbuf(0, 13, 1, true);
	b.pbl.addr += 0x1000;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 0 8 KiB page only 4 KiB aligned");
	b = mkbuf(0, 13, 1, true);
	pbl_err(&b, 6, KITE_CMD_OK, "level 0 8 KiB page holding a 1 KiB queue");
	pbl_err(&b, 10, KITE_CMD_E_PARAM, "level 0 page smaller than the queue (16 KiB in 8 KiB)");

	/* Level 1: 2 pages for log 9 (8 KiB). */
	b = mkbuf(1, 12, 2, true);
	pbl_err(&b, 9, KITE_CMD_OK, "level 1 PBL, 2 pages, LAST/NEXT_TO_LAST set");
	b = mkbuf(1, 12, 2, true);
	pte_set(&b, 1, pte_get(&b, 1) & ~KITE_PTE_VALID);
	pbl_err(&b, 9, KITE_CMD_E_PBL, "PTE without VALID");
	b = mkbuf(1, 12, 2, true);
	pte_set(&b, 1, pte_get(&b, 1) & ~KITE_PTE_LAST);
	pbl_err(&b, 9, KITE_CMD_E_PBL, "queue PBL without LAST on the last page");
	b = mkbuf(1, 12, 2, true);
	pte_set(&b, 0, pte_get(&b, 0) & ~KITE_PTE_NEXT_TO_LAST);
	pbl_err(&b, 9, KITE_CMD_E_PBL, "queue PBL without NEXT_TO_LAST on the page before the last");
	b = mkbuf(1, 12, 4, true);
	pte_set(&b, 0, pte_get(&b, 0) | KITE_PTE_LAST);
	pbl_err(&b, 10, KITE_CMD_E_PBL, "LAST on a page that is not the last");
	b = mkbuf(1, 12, 4, true);
	pte_set(&b, 1, pte_get(&b, 1) | KITE_PTE_NEXT_TO_LAST);
	pbl_err(&b, 10, KITE_CMD_E_PBL, "NEXT_TO_LAST on a page that is not next to last");
	b = mkbuf(1, 13, 2, true);
	pte_set(&b, 1, pte_get(&b, 1) + 0x1000);
	pbl_err(&b, 10, KITE_CMD_E_PBL, "PTE not aligned to the 8 KiB data page");
	b = mkbuf(1, 12, 2, true);
	b.pbl.addr += 8;
	pbl_err(&b, 9, KITE_CMD_E_PBL, "level 1 PTE page not 4 KiB aligned");
	b = mkbuf(1, 12, 2, true);
	b.pbl.addr = NOT_RAM;
	pbl_err(&b, 9, KITE_CMD_E_DMA, "level 1 PTE page outside guest RAM");
	b = mkbuf(1, 12, 2, true);
	pbl_err(&b, 10, KITE_CMD_E_PARAM, "npages 2 (8 KiB) for a 16 KiB queue");
	b = mkbuf(1, 12, 2, true);
	pbl_err(&b, 8, KITE_CMD_E_PARAM, "npages 2 (8 KiB) for a 4 KiB queue");
	b = mkbuf(1, 12, 1, true);
	pbl_err(&b, 6, KITE_CMD_E_PARAM, "level 1, one 4 KiB page for a 1 KiB queue");
	b = mkbuf(1, 12, 1, true);
	b.pbl.npages = KITE_PBL_ENTRIES + 1;
	pbl_err(&b, 6, KITE_CMD_E_PBL, "level 1 with npages 513");

	/* Level 2: log 15 = 512 KiB = 128 pages behind one PDE. */
	b = mkbuf(2, 12, 128, true);
	pbl_err(&b, 15, KITE_CMD_OK, "level 2 PBL (1 PDE, 128 pages)");
	b = mkbuf(2, 12, 128, true);
	memwrite(b.pdes, &(uint64_t){ b.ptes }, 8);
	pbl_err(&b, 15, KITE_CMD_E_PBL, "level 2 PDE without VALID");
	b = mkbuf(2, 12, 128, true);
	memwrite(b.pdes, &(uint64_t){ b.ptes | KITE_PTE_VALID | KITE_PTE_LAST }, 8);
	pbl_err(&b, 15, KITE_CMD_E_PBL, "level 2 PDE carrying LAST");
	b = mkbuf(2, 12, 128, true);
	memwrite(b.pdes, &(uint64_t){ NOT_RAM | KITE_PTE_VALID }, 8);
	pbl_err(&b, 15, KITE_CMD_E_DMA, "level 2 PDE pointing outside guest RAM");
	b = mkbuf(2, 12, 128, true);
	pte_set(&b, 127, pte_get(&b, 127) & ~KITE_PTE_LAST);
	pbl_err(&b, 15, KITE_CMD_E_PBL, "level 2: last PTE without LAST");
	b = mkbuf(2, 21, 1, true);
	pbl_err(&b, 15, KITE_CMD_E_PARAM, "level 2 with one 2 MiB page for a 512 KiB queue");
	b = mkbuf(0, 21, 1, true);
	pbl_err(&b, 15, KITE_CMD_OK, "level 0 with a 2 MiB page (shift 21) for a 512 KiB queue");

	/* Destroy */
	cmd_obj(KITE_CMD_DESTROY_EQ, 40, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_EQ of a nonexistent EQ -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_EQ, 64, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_EQ 64 -> E_OBJECT");
	need(create_cq(&cq, 1, eqn, 0, &r), &r, "CREATE_CQ on EQ 1");
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_EQ while a CQ is bound -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq.cqn, 0, &r);
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_EQ once the CQ is gone");
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_EQ twice -> E_OBJECT");
	create_eq(&q, 6, EQ1_VEC, false, &r);
	tap(r.done && (r.status & 0xff) == 0 && r.result == eqn,
	    "CREATE_EQ reuses the lowest free EQN (%u)", r.result);

	/* Without EQ0 commands complete silently. */
	cmd_obj(KITE_CMD_DESTROY_EQ, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_EQ 0");
	{
		struct kite_eqe before[64], after[64];
		uint64_t buf0 = eq0.buf;

		eq0.on = false;
		memread(buf0, before, sizeof(before));
		nop(&r);
		memread(buf0, after, sizeof(after));
		tap(r.done && !memcmp(before, after, sizeof(before)), "without EQ0 a command posts no EQE");
		need(create_eq(&eq0, 6, EQ0_VEC, true, &r), &r, "CREATE_EQ (EQ0 again)");
		tap(r.result == 0, "EQ0 can be created again");
		eq_drain(&eq0);
	}

	/* Exhaustion: EQNs 1..63. */
	n = 0;
	c = KITE_CMD_OK;
	for (i = 0; i < 70; i++) {
		c = create_eq(&q, 6, EQ1_VEC, false, &r);
		if (c != KITE_CMD_OK)
			break;
		n++;
		if (r.result < 1 || r.result > 63) {
			diag("EQN %u out of 1..63", r.result);
			break;
		}
	}
	tap(c == KITE_CMD_E_NO_RESOURCES, "CREATE_EQ until full -> E_NO_RESOURCES (after %u more, %s)", n,
	    code_name((unsigned)c));
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "EQ0 still works with 64 EQs");
	(void)e15;
}

/* ------------------------------------------------------------------ */
/* Group: completion queues                                            */
/* ------------------------------------------------------------------ */

static void g_cq(void)
{
	struct res r;
	struct cq cq, cq2;
	struct qbuf b, nb, nb2;
	struct kite_cmd_query_cq_out o;
	struct kite_cmd_modify_cq m;
	struct kite_cqe cqe;
	struct eqs q2;
	uint64_t dbrec = galloc(64, 64);
	uint32_t cqn, qpn;
	struct qpspec s;

	fixture();
	need(create_eq(&q2, 6, EQ2_VEC, false, &r), &r, "CREATE_EQ (EQ2)");

	b = qbuf_for(64 << 6);
	create_cq_full(6, 0, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "CREATE_CQ on EQ0 -> E_OBJECT");
	create_cq_full(6, 9, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "CREATE_CQ on a nonexistent EQ -> E_OBJECT");
	create_cq_full(6, eq1.eqn, 0, 0, 0, 0, dbrec + 4, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ with a dbrec not 8-byte aligned -> E_PARAM");
	create_cq_full(6, eq1.eqn, 0, 0, 0, 0, 0, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ with dbrec 0 -> E_PARAM");
	create_cq_full(0, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ log depth 0 -> E_PARAM");
	create_cq_full(17, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ log depth 17 -> E_PARAM");
	create_cq_full(6, eq1.eqn, BIT(12), 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "CREATE_CQ with a reserved cfg bit -> E_PARAM, syndrome 0");
	create_cq_full(6, eq1.eqn, 0, 9, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "CREATE_CQ with an unallocated uctx -> E_OBJECT");
	b = mkbuf(1, 12, 1, true);
	create_cq_full(6, eq1.eqn, KITE_CQ_CFG_CQE_128, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ CQE_128 with a buffer sized for 64-byte CQEs -> E_PARAM");
	b = mkbuf(1, 12, 2, true);
	create_cq_full(6, eq1.eqn, KITE_CQ_CFG_CQE_128, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_CQ CQE_128, log 6, 8 KiB buffer");
	if (r.done && !(r.status & 0xff)) {
		cqn = r.result;
		query_cq(cqn, &o, &r);
		tap(o.cfg == (6 | KITE_CQ_CFG_CQE_128), "QUERY_CQ cfg shows CQE_128 (0x%x)", o.cfg);
		cmd_obj(KITE_CMD_DESTROY_CQ, cqn, 0, &r);
	}
	b = mkbuf(1, 12, 1, true);
	create_cq_full(7, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "CREATE_CQ log 7 (8 KiB) with a 4 KiB buffer -> E_PARAM");
	b = mkbuf(2, 12, 1024, true);
	create_cq_full(16, eq1.eqn, 0, 0, 0, 0, dbrec, &b.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "CREATE_CQ log depth 16 with a level 2 PBL (1024 pages, 2 PDEs)");
	if (r.done && !(r.status & 0xff))
		cmd_obj(KITE_CMD_DESTROY_CQ, r.result, 0, &r);

	/* Query / modify */
	cq.dbrec = galloc(64, 64);
	cq.log = 2;
	cq.b = qbuf_for(64 << 2);
	cqn = need(create_cq_full(2, eq1.eqn, 0, 0, 3, 7, cq.dbrec, &cq.b.pbl, &r), &r, "CREATE_CQ");
	tap(cqn >= 1, "CQN >= 1 (%u)", cqn);
	query_cq(cqn, &o, &r);
	tap(r.done && !(r.status & 0xff) && o.state == KITE_CQ_STATE_OK && o.arm == 0 &&
	    o.eqn == eq1.eqn && o.cfg == 2 && o.pi == 0 && o.ci == 0 && o.mod_count == 3 &&
	    o.mod_period == 7,
	    "QUERY_CQ: state OK, disarmed, eqn, cfg, pi 0, ci 0, moderation as created");
	if (r.done && (r.status & 0xff))
		res_diag(&r);
	else
		diag("state %u arm 0x%x eqn %u cfg 0x%x pi %u ci %u mod %u/%u", o.state, o.arm,
		     o.eqn, o.cfg, o.pi, o.ci, o.mod_count, o.mod_period);
	query_cq(999, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_CQ of a nonexistent CQ -> E_OBJECT");
	run(KITE_CMD_QUERY_CQ, &(struct kite_cmd_obj){ .obj = cqn }, 8, sizeof(o) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_CQ with out_len 31 -> E_LENGTH");

	memset(&m, 0, sizeof(m));
	m.cqn = cqn;
	m.mask = KITE_MODIFY_CQ_MODERATION;
	m.mod_count = 100;
	m.mod_period = 2000;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_CQ MODERATION");
	query_cq(cqn, &o, &r);
	tap(o.mod_count == 100 && o.mod_period == 2000, "QUERY_CQ shows the new moderation (%u/%u)",
	    o.mod_count, o.mod_period);
	m.mask = KITE_MODIFY_CQ_EQN;
	m.eqn = q2.eqn;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_CQ EQN to EQ %u", q2.eqn);
	query_cq(cqn, &o, &r);
	tap(o.eqn == q2.eqn, "QUERY_CQ shows the new EQ (%u)", o.eqn);
	m.eqn = 0;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_CQ EQN to EQ0 -> E_OBJECT");
	m.eqn = 50;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_CQ EQN to a nonexistent EQ -> E_OBJECT");
	query_cq(cqn, &o, &r);
	tap(o.eqn == q2.eqn, "failed remaps leave the EQ unchanged (%u)", o.eqn);
	cmd_obj(KITE_CMD_DESTROY_EQ, q2.eqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_EQ of the remapped-to EQ -> E_BUSY");
	m.mask = KITE_MODIFY_CQ_MODERATION;
	m.rsvd = 1;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_modify_cq, rsvd),
	       "MODIFY_CQ with rsvd non-zero -> E_PARAM, syndrome 28");
	m.rsvd = 0;
	m.mask = BIT(3);
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "MODIFY_CQ with an unknown mask bit -> E_PARAM");
	m.mask = KITE_MODIFY_CQ_MODERATION;
	m.cqn = 999;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_CQ of a nonexistent CQ -> E_OBJECT");

	/* RESIZE: depth 4 -> 8; the RESIZE CQE goes to the old buffer at pi (0), owner 1. */
	nb = qbuf_for(64 << 3);
	memset(&m, 0, sizeof(m));
	m.cqn = cqn;
	m.mask = KITE_MODIFY_CQ_RESIZE;
	m.cfg = 3;
	m.pbl = nb.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_CQ RESIZE depth 4 -> 8");
	memread(cq.b.data, &cqe, sizeof(cqe));
	tap(FIELD_GET(KITE_CQE_OPCODE, cqe.op_own) == KITE_CQE_OP_RESIZE &&
	    (cqe.op_own & KITE_CQE_OWNER) == 1,
	    "RESIZE CQE in the old buffer at index 0 with owner 1 (op_own 0x%x)", cqe.op_own);
	memread(nb.data, &cqe, sizeof(cqe));
	tap(cqe.op_own == 0, "new buffer untouched (op_own 0x%x)", cqe.op_own);
	query_cq(cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_CFG_LOG_DEPTH, o.cfg) == 3 && o.pi == 0,
	    "QUERY_CQ after RESIZE: log depth 3, pi unchanged (cfg 0x%x, pi %u)", o.cfg, o.pi);
	nb2 = mkbuf(1, 12, 1, true);
	m.cfg = 5;
	m.pbl = nb2.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RESIZE with a buffer that does not match the new depth -> E_PARAM");
	memread(nb.data, &cqe, sizeof(cqe));
	tap(cqe.op_own == 0, "failed RESIZE writes no RESIZE CQE (op_own 0x%x)", cqe.op_own);
	m.cfg = 0;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RESIZE to log depth 0 -> E_PARAM");
	m.cfg = 4;
	m.pbl = nb2.pbl;
	m.pbl.cfg = pbl_cfg(3, 12);
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_modify_cq, pbl),
	       "RESIZE with a malformed PBL -> E_PBL, syndrome 24");
	nb2 = mkbuf(2, 12, 1024, true);
	m.cfg = 16;
	m.pbl = nb2.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RESIZE 8 -> 65536 with a level 2 PBL");
	memread(nb.data, &cqe, sizeof(cqe));
	tap(FIELD_GET(KITE_CQE_OPCODE, cqe.op_own) == KITE_CQE_OP_RESIZE && (cqe.op_own & 1) == 1,
	    "second RESIZE CQE written in the depth-8 buffer (op_own 0x%x)", cqe.op_own);

	/* DESTROY busy while a QP uses the CQ. */
	need(create_cq(&cq2, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rcqn = cq2.cqn;
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq2.cqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_CQ while a QP uses it as recv CQ -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_CQ, fx_cq.cqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_CQ while a QP uses it as send CQ -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq2.cqn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_CQ once the QP is gone");
	cmd_obj(KITE_CMD_DESTROY_CQ, cq2.cqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_CQ twice -> E_OBJECT");
	query_cq(cq2.cqn, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_CQ of a destroyed CQ -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_CQ, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_CQ 0 -> E_OBJECT");
}

/* ------------------------------------------------------------------ */
/* Group: QP creation                                                  */
/* ------------------------------------------------------------------ */

static void g_qp_create(void)
{
	struct res r;
	struct qpspec s;
	struct kite_cmd_create_qp in;
	uint32_t rc, ud, gsi, v;

	fixture();
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	rc = need(create_qp(&s, &r), &r, "CREATE_QP RC");
	tap(rc == 2, "first RC QP gets QPN 2 (got %u)", rc);
	tap(qp_state(rc) == KITE_QPS_RESET, "new QP is in RESET");
	s.type = KITE_QPT_UD;
	ud = need(create_qp(&s, &r), &r, "CREATE_QP UD");
	tap(ud == 3, "UD QP gets the next QPN 3 (got %u)", ud);
	s.type = KITE_QPT_GSI;
	gsi = need(create_qp(&s, &r), &r, "CREATE_QP GSI");
	tap(gsi == 1, "GSI QP gets QPN 1 (got %u)", gsi);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "a second GSI QP -> E_STATE");
	s.type = 0;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "QP type 0 -> E_PARAM");
	s.type = 5;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "QP type 5 -> E_PARAM");
	s.type = KITE_QPT_UC;
	v = need(create_qp(&s, &r), &r, "CREATE_QP UC");
	tap(v >= 2 && v < 1024, "UC QP (type 4) created, QPN %u", v);
	cmd_obj(KITE_CMD_DESTROY_QP, v, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP UC");
	s = qps(KITE_QPT_RC, 555, fx_cq.cqn, 0);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "nonexistent PD -> E_OBJECT");
	s = qps(KITE_QPT_RC, 0, fx_cq.cqn, 0);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "PD 0 -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.scqn = 777;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "nonexistent send CQ -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rcqn = 0;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "recv CQ 0 -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 42);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "unallocated uctx -> E_OBJECT");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.flags = BIT(2);
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "unknown QP flag -> E_PARAM");
	s.flags = KITE_QP_F_SQ_SIG_ALL;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_OK, -1, "flag SQ_SIG_ALL accepted");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.slog = 0;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ log depth 0 -> E_PARAM");
	s.slog = 13;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ log depth 13 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rlog = 13;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RQ log depth 13 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.sshift = 5;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ WQE shift 5 -> E_PARAM");
	s.sshift = 11;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ WQE shift 11 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.rshift = 11;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RQ WQE shift 11 -> E_PARAM");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	s.slog = 1;
	s.sshift = 6;
	s.rlog = 12;
	s.rshift = 10;
	create_qp(&s, &r);
	expect(&r, KITE_CMD_OK, -1, "SQ depth 2 x 64 B (level 0), RQ depth 4096 x 1 KiB (4 MiB, level 2)");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	in = qp_in(&s);
	in.sq_pbl = qbuf_for(8192).pbl;
	run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "SQ buffer of 8 KiB for a 4 KiB SQ -> E_PARAM");
	in = qp_in(&s);
	in.rq_pbl.cfg = pbl_cfg(3, 12);
	run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_create_qp, rq_pbl),
	       "malformed RQ PBL -> E_PBL, syndrome 48");
	in = qp_in(&s);
	in.sq_pbl.cfg = pbl_cfg(0, 25);
	run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_create_qp, sq_pbl),
	       "malformed SQ PBL -> E_PBL, syndrome 32");
	in = qp_in(&s);
	run(KITE_CMD_CREATE_QP, &in, KITE_CMD_CREATE_QP_V0_LEN - 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_QP with in_len 60 -> E_LENGTH");
	in = qp_in(&s);
	need(run(KITE_CMD_CREATE_QP, &in, KITE_CMD_CREATE_QP_V0_LEN, 0, 0, &r), &r,
	     "CREATE_QP with in_len 64 (no srqn field) -> OK");
	tap(true, "CREATE_QP with in_len 64 (the input before srqn) -> OK");
	cmd_obj(KITE_CMD_DESTROY_QP, r.result, 0, &r);

	cmd_obj(KITE_CMD_DEALLOC_PD, fx_pd, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while QPs use it -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, 999, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_QP of a nonexistent QP -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_QP, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_QP 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_QP, gsi, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP GSI");
	s = qps(KITE_QPT_GSI, fx_pd, fx_cq.cqn, 0);
	create_qp(&s, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 1, "GSI can be created again after destroy (QPN %u)", r.result);
	cmd_obj(KITE_CMD_DESTROY_QP, rc, 0, &r);
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	create_qp(&s, &r);
	tap(r.done && !(r.status & 0xff) && r.result > rc,
	    "a freed QPN is not reused at once: round robin (freed %u, got %u)", rc, r.result);
	(void)ud;
}

/* ------------------------------------------------------------------ */
/* Group: QP state machine                                             */
/* ------------------------------------------------------------------ */

#define A_ACCESS	KITE_QP_ATTR_ACCESS
#define A_PKEY		KITE_QP_ATTR_PKEY_INDEX
#define A_PORT		KITE_QP_ATTR_PORT
#define A_QKEY		KITE_QP_ATTR_QKEY
#define A_AV		KITE_QP_ATTR_AV
#define A_MTU		KITE_QP_ATTR_PATH_MTU
#define A_TIMEOUT	KITE_QP_ATTR_TIMEOUT
#define A_RETRY		KITE_QP_ATTR_RETRY_CNT
#define A_RNR		KITE_QP_ATTR_RNR_RETRY
#define A_RQPSN		KITE_QP_ATTR_RQ_PSN
#define A_MAXRD		KITE_QP_ATTR_MAX_QP_RD_ATOMIC
#define A_MINRNR	KITE_QP_ATTR_MIN_RNR_TIMER
#define A_SQPSN		KITE_QP_ATTR_SQ_PSN
#define A_MAXDRD	KITE_QP_ATTR_MAX_DEST_RD_ATOMIC
#define A_DQPN		KITE_QP_ATTR_DEST_QPN
#define A_ALL		GENMASK(16, 2)

static const char *attr_name(unsigned bit)
{
	static const char *n[] = { "STATE", "CUR_STATE", "ACCESS", "PKEY_INDEX", "PORT",
		"QKEY", "AV", "PATH_MTU", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "RQ_PSN",
		"MAX_QP_RD_ATOMIC", "MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "DEST_QPN" };

	return bit < ARRAY_SIZE(n) ? n[bit] : "?";
}

static const char *st_name(unsigned s)
{
	static const char *n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return s < ARRAY_SIZE(n) ? n[s] : "?";
}

/*
 * At state `from`: every missing required attribute and every extra
 * attribute fails with E_PARAM (syndrome = offset of mask) and leaves the QP
 * in `from`; then R|O succeeds and the QP is in `to`.
 */
static void transition(const char *tname, uint32_t qpn, const struct kite_cmd_modify_qp *a,
		       unsigned from, unsigned to, uint32_t req, uint32_t opt)
{
	const int syn = offsetof(struct kite_cmd_modify_qp, mask);
	unsigned b, bad = 0, n = 0;
	struct res r;
	struct kite_cmd_modify_qp cur = *a;

	cur.cur_state = (uint8_t)from;
	a = &cur;

	for (b = 2; b <= 16; b++) {
		if (!(req & BIT(b)))
			continue;
		n++;
		modify_qp(a, KITE_QP_ATTR_STATE | (req & ~BIT(b)), (uint8_t)to, &r);
		if (!r.done || (r.status & 0xff) != KITE_CMD_E_PARAM ||
		    FIELD_GET(KITE_CMD_STATUS_SYNDROME, r.status) != (unsigned)syn) {
			bad++;
			diag("without %s: status 0x%x (%s)", attr_name(b), r.status, code_name(r.status & 0xff));
		}
	}
	if (n)
		tap(bad == 0 && qp_state(qpn) == (int)from,
		    "%s %s->%s: each missing required attribute -> E_PARAM syndrome 4 (%u cases)",
		    tname, st_name(from), st_name(to), n);
	n = bad = 0;
	for (b = 2; b <= 16; b++) {
		if ((req | opt) & BIT(b))
			continue;
		n++;
		modify_qp(a, KITE_QP_ATTR_STATE | req | BIT(b), (uint8_t)to, &r);
		if (!r.done || (r.status & 0xff) != KITE_CMD_E_PARAM ||
		    FIELD_GET(KITE_CMD_STATUS_SYNDROME, r.status) != (unsigned)syn) {
			bad++;
			diag("with extra %s: status 0x%x (%s)", attr_name(b), r.status, code_name(r.status & 0xff));
		}
	}
	tap(bad == 0 && qp_state(qpn) == (int)from,
	    "%s %s->%s: each not-allowed attribute -> E_PARAM syndrome 4 (%u cases)",
	    tname, st_name(from), st_name(to), n);
	modify_qp(a, KITE_QP_ATTR_STATE | req | opt, (uint8_t)to, &r);
	expect(&r, KITE_CMD_OK, -1, "%s %s->%s with required + optional attributes", tname,
	       st_name(from), st_name(to));
	tap(qp_state(qpn) == (int)to, "%s QP now in %s", tname, st_name(to));
}

static void bad_value(uint32_t qpn, struct kite_cmd_modify_qp a, uint32_t mask, uint8_t to,
		      int off, const char *what)
{
	struct res r;
	int before = qp_state(qpn);

	modify_qp(&a, mask, to, &r);
	expect(&r, KITE_CMD_E_PARAM, off, "%s -> E_PARAM, syndrome %d", what, off);
	if (qp_state(qpn) != before)
		diag("QP state changed from %d", before);
}

#define OFF(f) ((int)offsetof(struct kite_cmd_modify_qp, f))

static void g_qp_modify(void)
{
	const uint32_t S = KITE_QP_ATTR_STATE;
	const uint32_t RC_INIT_R = A_PKEY | A_PORT | A_ACCESS;
	const uint32_t RC_RTR_R = A_AV | A_MTU | A_DQPN | A_RQPSN | A_MAXDRD | A_MINRNR;
	const uint32_t RC_RTR_O = A_ACCESS | A_PKEY;
	const uint32_t RC_RTS_R = A_SQPSN | A_TIMEOUT | A_RETRY | A_RNR | A_MAXRD;
	const uint32_t RC_RTS_O = A_ACCESS | A_MINRNR;
	const uint32_t UD_INIT_R = A_PKEY | A_PORT | A_QKEY;
	struct kite_cmd_modify_qp a, o;
	struct qpspec s;
	struct res r;
	uint32_t rc, ud, gsi, v;
	unsigned bad, mark;
	int c;

	fixture();
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	rc = need(create_qp(&s, &r), &r, "CREATE_QP RC");
	a = attrs_valid(rc);

	/* Illegal transitions from RESET. */
	modify_qp(&a, S | RC_RTR_R, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RESET->RTR -> E_STATE");
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RESET->RTS -> E_STATE");
	modify_qp(&a, S, KITE_QPS_SQD, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RESET->SQD -> E_STATE");
	a.cur_state = KITE_QPS_INIT;
	modify_qp(&a, S | RC_INIT_R | KITE_QP_ATTR_CUR_STATE, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "CUR_STATE INIT while the QP is in RESET -> E_STATE");
	a.cur_state = KITE_QPS_RESET;
	tap(qp_state(rc) == KITE_QPS_RESET, "QP still in RESET after the refused modifies");

	/* Value checks at RESET->INIT. */
	a.port = 2;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(port), "port 2");
	a.port = 0;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(port), "port 0");
	a = attrs_valid(rc);
	a.pkey_index = 1;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(pkey_index), "pkey_index 1");
	a = attrs_valid(rc);
	a.access = BIT(4);
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(access), "access with an unknown bit");
	a = attrs_valid(rc);
	a.rsvd[0] = 1;
	bad_value(rc, a, S | RC_INIT_R, KITE_QPS_INIT, OFF(rsvd), "reserved word non-zero");
	a = attrs_valid(rc);
	bad_value(rc, a, S | RC_INIT_R | BIT(17), KITE_QPS_INIT, OFF(mask), "unknown mask bit 17");

	/* The RC sequence with the attribute-set checks. */
	a.cur_state = KITE_QPS_RESET;
	transition("RC", rc, &a, KITE_QPS_RESET, KITE_QPS_INIT, RC_INIT_R, KITE_QP_ATTR_CUR_STATE);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_OK, -1, "RC INIT->INIT with PKEY/PORT/ACCESS (all optional)");
	modify_qp(&a, A_ACCESS, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RC modify without STATE in INIT (INIT->INIT, ACCESS)");
	modify_qp(&a, S | A_QKEY, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "RC INIT->INIT with QKEY -> E_PARAM");
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC INIT->RTS -> E_STATE");
	a.cur_state = KITE_QPS_RESET;
	modify_qp(&a, S | RC_RTR_R | KITE_QP_ATTR_CUR_STATE, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "CUR_STATE RESET while the QP is in INIT -> E_STATE");

	/* Value checks at INIT->RTR. */
	a = attrs_valid(rc);
	a.path_mtu = 0;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(path_mtu), "path_mtu 0");
	a.path_mtu = 6;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(path_mtu), "path_mtu 6");
	a = attrs_valid(rc);
	a.rq_psn = 1u << 24;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(rq_psn), "rq_psn 2^24");
	a = attrs_valid(rc);
	a.dest_qpn = 1u << 24;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(dest_qpn), "dest_qpn 2^24");
	a = attrs_valid(rc);
	a.max_dest_rd_atomic = 129;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(max_dest_rd_atomic), "max_dest_rd_atomic 129");
	a = attrs_valid(rc);
	a.min_rnr_timer = 32;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(min_rnr_timer), "min_rnr_timer 32");
	a = attrs_valid(rc);
	a.sgid_index = 1;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(sgid_index), "sgid_index of an empty GID entry");
	a.sgid_index = 16;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(sgid_index), "sgid_index 16");
	a = attrs_valid(rc);
	a.net_type = KITE_NET_ROCE_V2_IPV6;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(net_type), "net_type not the GID entry's type");
	a = attrs_valid(rc);
	a.flow_label = 0x100000;
	bad_value(rc, a, S | RC_RTR_R, KITE_QPS_RTR, OFF(flow_label), "flow_label 0x100000");

	a = attrs_valid(rc);
	transition("RC", rc, &a, KITE_QPS_INIT, KITE_QPS_RTR, RC_RTR_R, RC_RTR_O | KITE_QP_ATTR_CUR_STATE);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC RTR->INIT -> E_STATE");

	/* Value checks at RTR->RTS. */
	a = attrs_valid(rc);
	a.sq_psn = 0x1000000;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(sq_psn), "sq_psn 2^24");
	a = attrs_valid(rc);
	a.timeout = 32;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(timeout), "timeout 32");
	a = attrs_valid(rc);
	a.retry_cnt = 8;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(retry_cnt), "retry_cnt 8");
	a = attrs_valid(rc);
	a.rnr_retry = 8;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(rnr_retry), "rnr_retry 8");
	a = attrs_valid(rc);
	a.max_rd_atomic = 129;
	bad_value(rc, a, S | RC_RTS_R, KITE_QPS_RTS, OFF(max_rd_atomic), "max_rd_atomic 129");

	a = attrs_valid(rc);
	a.sq_psn = KITE_PSN_MASK;
	transition("RC", rc, &a, KITE_QPS_RTR, KITE_QPS_RTS, RC_RTS_R, RC_RTS_O);

	/* QUERY_QP returns what was set. */
	c = query_qp(rc, &o, &r);
	bad = 0;
	v = RC_INIT_R | RC_RTR_R | RC_RTS_R;
	CHK(c == KITE_CMD_OK, "QUERY_QP status 0x%x", r.status);
	CHK((o.mask & v) == v, "mask 0x%x lacks 0x%x", o.mask, v & ~o.mask);
	CHK(o.qpn == rc, "qpn %u", o.qpn);
	CHK(o.state == KITE_QPS_RTS, "state %u", o.state);
	CHK(o.port == 1 && o.pkey_index == 0, "port %u pkey %u", o.port, o.pkey_index);
	CHK(o.access == a.access, "access 0x%x", o.access);
	CHK(o.path_mtu == a.path_mtu, "path_mtu %u", o.path_mtu);
	CHK(o.dest_qpn == a.dest_qpn, "dest_qpn 0x%x", o.dest_qpn);
	CHK(o.rq_psn == a.rq_psn, "rq_psn 0x%x", o.rq_psn);
	CHK(o.sq_psn == KITE_PSN_MASK, "sq_psn 0x%x", o.sq_psn);
	CHK(o.max_rd_atomic == a.max_rd_atomic, "max_rd_atomic %u", o.max_rd_atomic);
	CHK(o.max_dest_rd_atomic == a.max_dest_rd_atomic, "max_dest_rd_atomic %u", o.max_dest_rd_atomic);
	CHK(o.min_rnr_timer == a.min_rnr_timer, "min_rnr_timer %u", o.min_rnr_timer);
	CHK(o.timeout == a.timeout && o.retry_cnt == a.retry_cnt && o.rnr_retry == a.rnr_retry,
	    "timeout %u retry %u rnr %u", o.timeout, o.retry_cnt, o.rnr_retry);
	CHK(o.sgid_index == 0 && o.hop_limit == a.hop_limit && o.net_type == a.net_type &&
	    o.flow_label == a.flow_label, "sgid %u hop %u net %u flow 0x%x", o.sgid_index,
	    o.hop_limit, o.net_type, o.flow_label);
	CHK(!memcmp(o.dmac, a.dmac, 6) && !memcmp(o.dgid, a.dgid, 16), "dmac/dgid differ");
	tap(bad == 0, "QUERY_QP (RC in RTS) returns every attribute set (%u wrong)", bad);
	run(KITE_CMD_QUERY_QP, &(struct kite_cmd_obj){ .obj = rc }, 8, sizeof(o) - 1, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_QP with out_len 79 -> E_LENGTH");
	query_qp(999, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_QP of a nonexistent QP -> E_OBJECT");

	/* RTS->RTS, SQD. */
	a.access = KITE_ACCESS_REMOTE_READ;
	modify_qp(&a, A_ACCESS | A_MINRNR, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTS->RTS (no STATE) with ACCESS, MIN_RNR_TIMER");
	query_qp(rc, &o, &r);
	tap(o.access == KITE_ACCESS_REMOTE_READ && o.state == KITE_QPS_RTS, "QUERY_QP shows the new access (0x%x)", o.access);
	modify_qp(&a, S | A_SQPSN, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "RC RTS->RTS with SQ_PSN -> E_PARAM");
	mark = neqlog;
	modify_qp(&a, S, KITE_QPS_SQD, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTS->SQD");
	tap(eqe_find(mark, KITE_EQE_SQ_DRAINED, rc) != NULL, "RTS->SQD posts SQ_DRAINED (obj QPN) to EQ0");
	modify_qp(&a, S | A_ACCESS, KITE_QPS_SQD, &r);
	expect(&r, KITE_CMD_OK, -1, "RC SQD->SQD with ACCESS");
	modify_qp(&a, S, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_OK, -1, "RC SQD->RTS");
	modify_qp(&a, S | A_PORT, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "RC RTS->ERR with an attribute -> E_PARAM");
	modify_qp(&a, S, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTS->ERR");
	tap(qp_state(rc) == KITE_QPS_ERR, "QP in ERR");
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_STATE, -1, "RC ERR->RTS -> E_STATE");
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	expect(&r, KITE_CMD_OK, -1, "RC ERR->RESET");
	query_qp(rc, &o, &r);
	tap(o.state == KITE_QPS_RESET && !(o.mask & (A_SQPSN | A_RQPSN | A_AV | A_DQPN)),
	    "after ->RESET the QP forgot PSNs/AV (mask 0x%x)", o.mask);
	a = attrs_valid(rc);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RESET->INIT again");
	modify_qp(&a, S, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_OK, -1, "RC INIT->ERR");
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	modify_qp(&a, S | RC_INIT_R, KITE_QPS_INIT, &r);
	modify_qp(&a, S | RC_RTR_R, KITE_QPS_RTR, &r);
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RTR->RESET");
	modify_qp(&a, S, 7, &r);
	expect2(&r, KITE_CMD_E_PARAM, KITE_CMD_E_STATE, "modify to state 7 (not a state) refused");
	modify_qp(&a, S, KITE_QPS_ERR, &r);
	expect(&r, KITE_CMD_OK, -1, "RC RESET->ERR");
	a.qpn = 888;
	modify_qp(&a, S, KITE_QPS_RESET, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "MODIFY_QP of a nonexistent QP -> E_OBJECT");

	/* UD */
	s = qps(KITE_QPT_UD, fx_pd, fx_cq.cqn, 0);
	ud = need(create_qp(&s, &r), &r, "CREATE_QP UD");
	a = attrs_valid(ud);
	transition("UD", ud, &a, KITE_QPS_RESET, KITE_QPS_INIT, UD_INIT_R, 0);
	transition("UD", ud, &a, KITE_QPS_INIT, KITE_QPS_RTR, 0, A_PKEY | A_QKEY);
	transition("UD", ud, &a, KITE_QPS_RTR, KITE_QPS_RTS, A_SQPSN, A_QKEY);
	a.qkey = 0x22222222;
	modify_qp(&a, A_QKEY, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "UD RTS->RTS with QKEY");
	query_qp(ud, &o, &r);
	tap(o.state == KITE_QPS_RTS && o.qkey == 0x22222222 && o.sq_psn == a.sq_psn &&
	    (o.mask & (A_QKEY | A_SQPSN | A_PORT | A_PKEY)) == (A_QKEY | A_SQPSN | A_PORT | A_PKEY),
	    "QUERY_QP (UD in RTS): qkey, sq_psn, mask (mask 0x%x qkey 0x%x)", o.mask, o.qkey);
	modify_qp(&a, A_ACCESS, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "UD RTS->RTS with ACCESS -> E_PARAM");

	/*
	 * UC: the IB table. RTR needs AV, PATH_MTU, DEST_QPN, RQ_PSN, not
	 * MAX_DEST_RD_ATOMIC or MIN_RNR_TIMER; RTS needs SQ_PSN only.
	 */
	s = qps(KITE_QPT_UC, fx_pd, fx_cq.cqn, 0);
	v = need(create_qp(&s, &r), &r, "CREATE_QP UC");
	a = attrs_valid(v);
	transition("UC", v, &a, KITE_QPS_RESET, KITE_QPS_INIT, RC_INIT_R, 0);
	transition("UC", v, &a, KITE_QPS_INIT, KITE_QPS_INIT, 0, RC_INIT_R);
	modify_qp(&a, S | A_AV | A_MTU | A_DQPN | A_RQPSN | A_MAXDRD | A_MINRNR, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask),
	       "UC INIT->RTR with RC's MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER -> E_PARAM");
	transition("UC", v, &a, KITE_QPS_INIT, KITE_QPS_RTR, A_AV | A_MTU | A_DQPN | A_RQPSN,
		   A_ACCESS | A_PKEY);
	modify_qp(&a, S | RC_RTS_R, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask),
	       "UC RTR->RTS with RC's TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC -> E_PARAM");
	transition("UC", v, &a, KITE_QPS_RTR, KITE_QPS_RTS, A_SQPSN, A_ACCESS);
	transition("UC", v, &a, KITE_QPS_RTS, KITE_QPS_RTS, 0, A_ACCESS);
	transition("UC", v, &a, KITE_QPS_RTS, KITE_QPS_SQD, 0, A_ACCESS);
	transition("UC", v, &a, KITE_QPS_SQD, KITE_QPS_RTS, 0, A_ACCESS);
	query_qp(v, &o, &r);
	tap(o.state == KITE_QPS_RTS && o.dest_qpn == a.dest_qpn && o.rq_psn == a.rq_psn &&
	    o.sq_psn == a.sq_psn && !(o.mask & (A_QKEY | A_MAXDRD | A_MINRNR | A_TIMEOUT)),
	    "QUERY_QP (UC in RTS): dest_qpn, PSNs, no RC-only or UD-only attribute (mask 0x%x)",
	    o.mask);

	/* GSI, like UD. */
	s = qps(KITE_QPT_GSI, fx_pd, fx_cq.cqn, 0);
	gsi = need(create_qp(&s, &r), &r, "CREATE_QP GSI");
	a = attrs_valid(gsi);
	modify_qp(&a, S | UD_INIT_R, KITE_QPS_INIT, &r);
	expect(&r, KITE_CMD_OK, -1, "GSI RESET->INIT");
	modify_qp(&a, S, KITE_QPS_RTR, &r);
	expect(&r, KITE_CMD_OK, -1, "GSI INIT->RTR");
	modify_qp(&a, S | A_AV, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "GSI RTR->RTS with AV -> E_PARAM");
	modify_qp(&a, S, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_E_PARAM, OFF(mask), "GSI RTR->RTS without SQ_PSN -> E_PARAM");
	modify_qp(&a, S | A_SQPSN, KITE_QPS_RTS, &r);
	expect(&r, KITE_CMD_OK, -1, "GSI RTR->RTS");
	tap(qp_state(gsi) == KITE_QPS_RTS, "GSI in RTS");
	cmd_obj(KITE_CMD_DESTROY_QP, gsi, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP in RTS");
	cmd_obj(KITE_CMD_DESTROY_QP, rc, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP in ERR");
}

/* ------------------------------------------------------------------ */
/* Group: memory regions                                               */
/* ------------------------------------------------------------------ */

static void g_mr(void)
{
	const uint32_t LW = KITE_ACCESS_LOCAL_WRITE, RW = KITE_ACCESS_REMOTE_WRITE;
	const uint32_t RR = KITE_ACCESS_REMOTE_READ, RA = KITE_ACCESS_REMOTE_ATOMIC;
	struct res r;
	struct qbuf b0, b1, b2, bh, bx;
	struct kite_pbl junk = { .addr = NOT_RAM + 3, .npages = 0, .cfg = 0xffffffff };
	uint32_t k0, k1, k2, k, pd2;
	int c;

	fixture();
	b0 = mkbuf(0, 12, 1, false);
	k0 = need(reg_mr(fx_pd, LW | RW | RR, 0x5a, 0, 0x10000, 4096, &b0.pbl, &r), &r, "REG_MR level 0");
	tap(k0 == (1u << 8 | 0x5a), "key = index << 8 | tag: first MR is 0x15a (got 0x%x)", k0);
	b1 = mkbuf(1, 12, 4, false);
	c = reg_mr(fx_pd, LW, 0x01, 0, 0x20000100, 4 * 4096 - 0x100, &b1.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 1, 4 pages, iova offset 0x100, length to the end");
	k1 = c == KITE_CMD_OK ? r.result : 0;
	tap(FIELD_GET(KITE_KEY_INDEX, k1) == 2 && FIELD_GET(KITE_KEY_TAG, k1) == 1, "second MR: index 2, tag 1 (0x%x)", k1);
	b2 = mkbuf(2, 12, 1024, false);
	c = reg_mr(fx_pd, LW | RR, 0xff, 0, 0x7f0000000000ULL, 1024 * 4096, &b2.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 2, 1024 pages (2 PDEs)");
	k2 = c == KITE_CMD_OK ? r.result : 0;
	bh = mkbuf(1, 21, 2, false);
	reg_mr(fx_pd, LW, 0, 0, 0x40000000, 4ULL << 20, &bh.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 1 with 2 MiB pages");
	reg_mr(fx_pd, RR, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR remote-read only (no local write needed)");
	reg_mr(fx_pd, RW, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR remote-write without local-write -> E_PARAM");
	reg_mr(fx_pd, RA | RR, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR remote-atomic without local-write -> E_PARAM");
	reg_mr(fx_pd, LW | BIT(5), 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR with an unknown access bit -> E_PARAM");
	reg_mr(fx_pd, LW, BIT(9), 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR with an unknown flag -> E_PARAM");
	reg_mr(fx_pd, LW, 0, 0, 0x10000, 0, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "REG_MR with length 0 -> E_PARAM");
	reg_mr(777, LW, 0, 0, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "REG_MR with a nonexistent PD -> E_OBJECT");
	reg_mr(fx_pd, LW, 0, 33, 0x10000, 4096, &b0.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "REG_MR with an unallocated uctx -> E_OBJECT");
	reg_mr(fx_pd, LW | RW | RR | RA, KITE_MR_F_PHYS | 0x11, 0, 0, ~0ULL, &junk, &r);
	expect(&r, KITE_CMD_OK, -1, "PHYS MR, length 2^64-1, PBL ignored (garbage)");
	tap(FIELD_GET(KITE_KEY_TAG, r.result) == 0x11, "PHYS MR key carries the tag (0x%x)", r.result);
	{
		uint32_t u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");

		reg_mr(fx_pd, LW, KITE_MR_F_PHYS, u, 0, 4096, &junk, &r);
		expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_reg_mr, flags),
		       "PHYS MR for a user context -> E_PARAM, syndrome 8 (lead's requirement)");
		reg_mr(fx_pd, LW, 0, u, 0x10000, 4096, &b0.pbl, &r);
		expect(&r, KITE_CMD_OK, -1, "a non-PHYS MR for the same user context is fine");
	}

	/* iova/length must fit the PBL. */
	reg_mr(fx_pd, LW, 0, 0, 0x20000100, 4 * 4096 - 0x100 + 1, &b1.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR: iova offset + length one byte beyond npages pages refused");
	reg_mr(fx_pd, LW, 0, 0, 0x20000000, 4 * 4096 + 1, &b1.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR: length beyond npages pages refused");
	reg_mr(fx_pd, LW, 0, 0, 0x20000000, 4 * 4096, &b1.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR: length exactly npages pages");
	reg_mr(fx_pd, LW, 0, 0, 0x10800, 2048, &b0.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REG_MR level 0: offset 0x800 + 2 KiB fits");
	reg_mr(fx_pd, LW, 0, 0, 0x10800, 2049, &b0.pbl, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR level 0: offset 0x800 + 2049 refused");
	bx = mkbuf(1, 12, 4, false);
	pte_set(&bx, 2, pte_get(&bx, 2) & ~KITE_PTE_VALID);
	reg_mr(fx_pd, LW, 0, 0, 0, 4 * 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_reg_mr, pbl), "REG_MR with a PTE without VALID -> E_PBL, syndrome 32");
	bx = mkbuf(1, 13, 2, false);
	pte_set(&bx, 1, pte_get(&bx, 1) + 0x1000);
	reg_mr(fx_pd, LW, 0, 0, 0, 2 * 8192, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_PBL, offsetof(struct kite_cmd_reg_mr, pbl), "REG_MR with a PTE not aligned to the 8 KiB page -> E_PBL");
	bx = mkbuf(1, 12, 4, false);
	bx.pbl.addr = NOT_RAM;
	reg_mr(fx_pd, LW, 0, 0, 0, 4 * 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "REG_MR with the PTE page outside guest RAM -> E_DMA");
	bx = mkbuf(2, 12, 600, false);
	memwrite(bx.pdes + 8, &(uint64_t){ NOT_RAM | KITE_PTE_VALID }, 8);
	reg_mr(fx_pd, LW, 0, 0, 0, 600 * 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "REG_MR level 2 with the second PDE outside guest RAM -> E_DMA");
	bx = mkbuf(1, 12, 4, false);
	bx.pbl.npages = 513;
	reg_mr(fx_pd, LW, 0, 0, 0, 4096, &bx.pbl, &r);
	expect(&r, KITE_CMD_E_PBL, -1, "REG_MR level 1 with npages 513 -> E_PBL");

	/* The largest level 2 list: 512 PDEs x 512 PTEs, all aliasing one page. */
	{
		static uint64_t ents[KITE_PBL_ENTRIES];
		uint64_t data = galloc(2ULL << 20, 2ULL << 20);
		uint64_t ptp = galloc(4096, 4096), pdp = galloc(4096, 4096);
		struct kite_pbl big;
		unsigned i;

		for (i = 0; i < KITE_PBL_ENTRIES; i++)
			ents[i] = data | KITE_PTE_VALID;
		memwrite(ptp, ents, sizeof(ents));
		for (i = 0; i < KITE_PBL_ENTRIES; i++)
			ents[i] = ptp | KITE_PTE_VALID;
		memwrite(pdp, ents, sizeof(ents));
		big.addr = pdp;
		big.npages = KITE_PBL_ENTRIES * KITE_PBL_ENTRIES;
		big.cfg = pbl_cfg(2, 21);
		reg_mr(fx_pd, LW, 0, 0, 0, 1ULL << 39, &big, &r);
		expect(&r, KITE_CMD_OK, -1, "REG_MR level 2, 262144 x 2 MiB pages, length 2^39 (max_mr_size)");
		if (r.done && !(r.status & 0xff))
			cmd_obj(KITE_CMD_DEREG_MR, r.result, 0, &r);
		reg_mr(fx_pd, LW, 0, 0, 0x1000, 1ULL << 39, &big, &r);
		expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REG_MR 2^39 bytes at iova offset 0x1000 does not fit");
		big.npages++;
		reg_mr(fx_pd, LW, 0, 0, 0, 4096, &big, &r);
		expect(&r, KITE_CMD_E_PBL, -1, "REG_MR level 2 with npages 512*512+1 -> E_PBL");
	}

	/* DEREG */
	cmd_obj(KITE_CMD_DEREG_MR, k0 ^ 0x01, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR with the wrong tag -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, k0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR with the right key (MR survived the wrong-tag attempt)");
	cmd_obj(KITE_CMD_DEREG_MR, k0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, 0x5a, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of key index 0 -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, 0xffffff00, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of key index 0xffffff -> E_OBJECT");
	k = need(reg_mr(fx_pd, LW, 0x77, 0, 0x10000, 4096, &b0.pbl, &r), &r, "REG_MR");
	tap(k == (1u << 8 | 0x77), "REG_MR reuses the lowest free index 1 (key 0x%x)", k);

	/* ALLOC_MR */
	alloc_mr(fx_pd, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ALLOC_MR max_pages 0 -> E_PARAM");
	alloc_mr(fx_pd, 513, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ALLOC_MR max_pages 513 -> E_PARAM");
	alloc_mr(fx_pd, 1, 0x33, &r);
	expect(&r, KITE_CMD_OK, -1, "ALLOC_MR max_pages 1");
	tap(FIELD_GET(KITE_KEY_TAG, r.result) == 0x33 && FIELD_GET(KITE_KEY_INDEX, r.result) >= 1,
	    "ALLOC_MR key: tag 0x33, index >= 1 (0x%x)", r.result);
	alloc_mr(fx_pd, 512, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "ALLOC_MR max_pages 512");
	alloc_mr(fx_pd, 4, KITE_MR_F_PHYS, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_alloc_mr, flags), "ALLOC_MR with a flag other than the tag -> E_PARAM, syndrome 8");
	alloc_mr(999, 4, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "ALLOC_MR with a nonexistent PD -> E_OBJECT");

	/* PD busy */
	pd2 = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	k = need(alloc_mr(pd2, 8, 0, &r), &r, "ALLOC_MR on PD 2");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd2, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while an MR uses it -> E_BUSY");
	cmd_obj(KITE_CMD_DEREG_MR, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of a fast-reg MR");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD once the MR is gone");
	(void)k1;
	(void)k2;
}

/* ------------------------------------------------------------------ */
/* Group: GID table                                                    */
/* ------------------------------------------------------------------ */

static void g_gid(void)
{
	struct res r;
	struct kite_cmd_add_gid in;

	std_setup();
	add_gid(0, KITE_NET_ROCE_V2_IPV4, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID index 0, IPv4");
	add_gid(15, KITE_NET_ROCE_V2_IPV6, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID index 15, IPv6");
	add_gid(0, KITE_NET_ROCE_V2_IPV6, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID replaces a valid entry");
	add_gid(16, KITE_NET_ROCE_V2_IPV4, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ADD_GID index 16 -> E_PARAM");
	add_gid(3, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ADD_GID type 0 -> E_PARAM");
	add_gid(3, 3, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "ADD_GID type 3 -> E_PARAM");
	memset(&in, 0, sizeof(in));
	in.index = 4;
	in.type = KITE_NET_ROCE_V2_IPV4;
	run(KITE_CMD_ADD_GID, &in, sizeof(in) - 2, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "ADD_GID with in_len 30 -> E_LENGTH");
	in.vlan = KITE_VLAN_VALID | 100;
	run(KITE_CMD_ADD_GID, &in, sizeof(in), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "ADD_GID with a VLAN");
	cmd_obj(KITE_CMD_DEL_GID, 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEL_GID 0");
	cmd_obj(KITE_CMD_DEL_GID, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEL_GID 0 again -> E_OBJECT");
	cmd_obj(KITE_CMD_DEL_GID, 5, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEL_GID of a never-valid entry -> E_OBJECT");
	cmd_obj(KITE_CMD_DEL_GID, 16, 0, &r);
	expect2(&r, KITE_CMD_E_OBJECT, KITE_CMD_E_PARAM, "DEL_GID 16 refused");
	cmd_obj(KITE_CMD_DEL_GID, 15, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEL_GID 15");
}

/* ------------------------------------------------------------------ */
/* Group: doorbells                                                    */
/* ------------------------------------------------------------------ */

static uint64_t db_wq(uint32_t type, uint32_t qpn, uint32_t pi)
{
	return FIELD_PREP(KITE_DB_OBJ, qpn) | FIELD_PREP(KITE_DB_TYPE, type) |
	       FIELD_PREP(KITE_DB_PI, pi & 0xffff);
}

static uint64_t db_cq_arm(uint32_t cqn, unsigned cmd, unsigned sn)
{
	return FIELD_PREP(KITE_DB_OBJ, cqn) | FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_CQ_ARM) |
	       FIELD_PREP(KITE_DB_CQ_CMD, cmd) | FIELD_PREP(KITE_DB_CQ_CMD_SN, sn);
}

static void dbrec_arm(const struct cq *q, uint32_t arm_ci, unsigned cmd, unsigned sn)
{
	setmem32(q->dbrec + 4, (uint32_t)(FIELD_PREP(KITE_CQ_DB_ARM_CI, arm_ci) |
					  FIELD_PREP(KITE_CQ_DB_ARM_CMD, cmd) |
					  FIELD_PREP(KITE_CQ_DB_ARM_CMD_SN, sn)));
}

static uint64_t bad_db0;

static void bad_db_check(uint64_t expect_delta, const char *what)
{
	uint64_t now;

	clock_step(POLL_STEP_NS);
	now = stat1(KITE_STAT_BAD_DOORBELLS);
	tap(now - bad_db0 == expect_delta, "%s (BAD_DOORBELLS +%" PRIu64 ", expected +%" PRIu64 ")",
	    what, now - bad_db0, expect_delta);
	bad_db0 = now;
}

static void g_doorbell(void)
{
	struct res r;
	struct cq ucq;
	struct qpspec s;
	uint32_t u1, upd, uqp, kqp, n;

	fixture();
	if (!have_bar2)
		diag("no BAR2 found");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	upd = need(alloc_pd(u1, &r), &r, "ALLOC_PD (uctx)");
	need(create_cq(&ucq, 6, eq1.eqn, u1, &r), &r, "CREATE_CQ (uctx)");
	s = qps(KITE_QPT_RC, upd, ucq.cqn, u1);
	uqp = need(create_qp(&s, &r), &r, "CREATE_QP (uctx)");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	kqp = need(create_qp(&s, &r), &r, "CREATE_QP (kernel)");
	bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);

	/* EQ doorbell on a user page: ignored. */
	eq0.autodb = false;
	n = eq0.ci;
	nop(&r);
	msi_take(EQ0_VEC);
	wr64(db_addr(u1), db_eq(0, n, true));
	clock_step(POLL_STEP_NS);
	tap(!msi_take(EQ0_VEC), "EQ arm doorbell on user page %u is not acted on (no interrupt)", u1);
	eq0.autodb = true;
	bad_db_check(1, "EQ doorbell on a user page counted");
	eq0.autodb = false;
	n = eq0.ci;
	nop(&r);
	wr64(db_addr(0), db_eq(0, n, true));
	clock_step(POLL_STEP_NS);
	tap(msi_take(EQ0_VEC), "the same doorbell on page 0 arms EQ0 (interrupt at once)");
	eq0.autodb = true;
	eq_doorbell(&eq0, false);
	bad_db_check(0, "valid EQ doorbells not counted");

	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, uqp, 1));
	bad_db_check(1, "SQ doorbell of a user QP on page 0 ignored and counted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_SQ, uqp, 1));
	bad_db_check(0, "SQ doorbell of a user QP on its own page accepted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_RQ, uqp, 64));
	bad_db_check(0, "RQ doorbell PI exactly depth ahead accepted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_SQ, uqp, 66));
	bad_db_check(1, "SQ doorbell PI more than depth ahead ignored and counted");
	wr64(db_addr(u1), db_wq(KITE_DB_TYPE_RQ, kqp, 1));
	bad_db_check(1, "RQ doorbell of a kernel QP on a user page counted");
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, kqp, 3));
	bad_db_check(0, "SQ doorbell of a kernel QP on page 0 accepted");
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, 500, 1));
	bad_db_check(1, "SQ doorbell of a nonexistent QP counted");
	wr64(db_addr(7), db_wq(KITE_DB_TYPE_SQ, uqp, 1));
	bad_db_check(1, "doorbell on the page of an unallocated context counted");
	wr64(db_addr(0), db_cq_arm(ucq.cqn, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(1, "CQ arm doorbell of a user CQ on page 0 counted");
	dbrec_arm(&ucq, 0, KITE_CQ_ARM_NEXT, 0);
	wr64(db_addr(u1), db_cq_arm(ucq.cqn, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(0, "CQ arm doorbell of a user CQ on its own page accepted");
	wr32(db_addr(0), (uint32_t)db_eq(0, eq0.ci, false));
	bad_db_check(1, "32-bit doorbell write ignored and counted");
	wr32(db_addr(0) + 4, 0);
	bad_db_check(1, "32-bit write to the upper half counted");
	wr64(db_addr(0) + 8, db_eq(0, eq0.ci, false));
	bad_db_check(1, "64-bit write at offset 8 of a page counted");
	tap(rd64(db_addr(0)) == 0 && rd32(db_addr(u1)) == 0, "doorbell reads return 0");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel fine after bad doorbells");
}

/* ------------------------------------------------------------------ */
/* Group: CQ arming                                                    */
/* ------------------------------------------------------------------ */

static bool debug_cqe(uint32_t cqn)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", cqn);
	return qom_set("debug-cqe", v, NULL);
}

static unsigned eq1_count(uint32_t type, uint32_t obj)
{
	unsigned mark = neqlog, n = 0, i;

	eq_drain(&eq1);
	for (i = mark; i < neqlog; i++)
		if (FIELD_GET(KITE_EQE_TYPE, eqlog[i % EQLOG].type_owner) == type &&
		    eqlog[i % EQLOG].obj == obj)
			n++;
	return n;
}

static void g_cq_arm(void)
{
	struct res r;
	struct cq cq, c2, c3;
	struct kite_cmd_query_cq_out o;
	struct kite_cqe cqe;
	const char *reply = "";
	uint32_t i;
	unsigned n;

	fixture();
	need(create_cq(&cq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	bad_db0 = stat1(KITE_STAT_BAD_DOORBELLS);

	dbrec_arm(&cq, 0, KITE_CQ_ARM_NEXT, 1);
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_NEXT, 2));
	bad_db_check(1, "arm doorbell whose CMD_SN differs from the dbrec arm word is counted");
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_SOLICITED, 1));
	bad_db_check(1, "arm doorbell whose CMD differs from the dbrec arm word is counted");
	query_cq(cq.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_DISARMED,
	    "mismatched arm doorbells are ignored: CQ still disarmed (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_NEXT, 1));
	bad_db_check(0, "matching arm doorbell accepted");
	query_cq(cq.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_NEXT &&
	    FIELD_GET(KITE_CQ_ARM_LAST_SN, o.arm) == 1,
	    "QUERY_CQ after arm NEXT sn 1: state NEXT, last sn 1 (arm 0x%x)", o.arm);
	tap(eq1_count(KITE_EQE_COMPLETION, cq.cqn) == 0, "arming an empty CQ posts no event");
	dbrec_arm(&cq, 0, KITE_CQ_ARM_SOLICITED, 2);
	wr64(db_addr(0), db_cq_arm(cq.cqn, KITE_CQ_ARM_SOLICITED, 2));
	clock_step(POLL_STEP_NS);
	query_cq(cq.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_NEXT &&
	    FIELD_GET(KITE_CQ_ARM_LAST_SN, o.arm) == 2,
	    "SOLICITED arm while NEXT: stays NEXT, last sn 2 (arm 0x%x)", o.arm);
	need(create_cq(&c2, 3, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	dbrec_arm(&c2, 0, KITE_CQ_ARM_SOLICITED, 0);
	wr64(db_addr(0), db_cq_arm(c2.cqn, KITE_CQ_ARM_SOLICITED, 0));
	clock_step(POLL_STEP_NS);
	query_cq(c2.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_SOLICITED,
	    "arm SOLICITED: state SOLICITED (arm 0x%x)", o.arm);
	dbrec_arm(&c2, 0, KITE_CQ_ARM_NEXT, 1);
	wr64(db_addr(0), db_cq_arm(c2.cqn, KITE_CQ_ARM_NEXT, 1));
	clock_step(POLL_STEP_NS);
	query_cq(c2.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_NEXT,
	    "arm NEXT after SOLICITED: state NEXT (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(900, KITE_CQ_ARM_NEXT, 0));
	bad_db_check(1, "arm doorbell of a nonexistent CQ counted");

	/* With a CQE source (optional debug-cqe property). */
	need(create_cq(&c3, 2, eq1.eqn, 0, &r), &r, "CREATE_CQ depth 4");
	if (!debug_cqe(c3.cqn)) {
		qom_set("debug-cqe", "1", &reply);
		skip("model has no debug-cqe property", "CQE-driven arm/fire/overflow tests");
		diag("qom-set debug-cqe: %.160s", reply);
		return;
	}
	clock_step(POLL_STEP_NS);
	memread(c3.b.data, &cqe, sizeof(cqe));
	query_cq(c3.cqn, &o, &r);
	tap((cqe.op_own & KITE_CQE_OWNER) == 1 && o.pi == 1, "debug CQE written at index 0 with owner 1, pi 1");
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0, "disarmed CQ: no event for a new CQE");
	dbrec_arm(&c3, 0, KITE_CQ_ARM_NEXT, 0);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 0));
	clock_step(POLL_STEP_NS);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 1, "arm NEXT with a CQE beyond ARM_CI fires at once");
	query_cq(c3.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_FIRED, "state FIRED (arm 0x%x)", o.arm);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 0));
	clock_step(POLL_STEP_NS);
	query_cq(c3.cqn, &o, &r);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0 &&
	    FIELD_GET(KITE_CQ_ARM_STATE, o.arm) == KITE_CQ_ARM_STATE_FIRED,
	    "duplicate arm (same sn after fire) ignored");
	setmem32(c3.dbrec, 1);
	dbrec_arm(&c3, 1, KITE_CQ_ARM_NEXT, 1);
	wr64(db_addr(0), db_cq_arm(c3.cqn, KITE_CQ_ARM_NEXT, 1));
	clock_step(POLL_STEP_NS);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 0, "arm NEXT with ARM_CI == pi: no event yet");
	debug_cqe(c3.cqn);
	clock_step(POLL_STEP_NS);
	tap(eq1_count(KITE_EQE_COMPLETION, c3.cqn) == 1, "the next CQE fires the armed CQ");
	for (i = 0; i < 3; i++)
		debug_cqe(c3.cqn);
	clock_step(POLL_STEP_NS);
	memread(c3.b.data, &cqe, sizeof(cqe));
	query_cq(c3.cqn, &o, &r);
	tap(o.pi == 5 && (cqe.op_own & KITE_CQE_OWNER) == 0,
	    "CQE 4 (second pass, index 0) has owner 0 (pi %u, op_own 0x%x)", o.pi, cqe.op_own);
	n = neqlog;
	debug_cqe(c3.cqn);	/* pi 5, ci 1: 4 outstanding = depth -> overflow */
	clock_step(POLL_STEP_NS);
	query_cq(c3.cqn, &o, &r);
	tap(o.state == KITE_CQ_STATE_ERROR, "CQ overflow puts the CQ in ERROR (state %u, pi %u)", o.state, o.pi);
	eq_drain(&eq0);
	tap(eqe_find(n, KITE_EQE_CQ_ERROR, c3.cqn) != NULL, "CQ_ERROR event on EQ0 for the overflow");
}

/* ------------------------------------------------------------------ */
/* Group: CQ events driven by the model's debug-cqe property           */
/* ------------------------------------------------------------------ */

/* kite_int.h: debug-cqe value = CQN | these flags (model extension). */
#define DBG_SOLICITED	BIT(24)
#define DBG_ERROR	BIT(25)

static void dcqe(uint32_t cqn, uint32_t flags)
{
	char v[32];
	const char *reply = "";

	snprintf(v, sizeof(v), "%u", cqn | flags);
	if (!qom_set("debug-cqe", v, &reply))
		fatal("qom-set debug-cqe %s failed: %.120s", v, reply);
	clock_step(POLL_STEP_NS);
}

static void arm_cq(struct cq *q, uint32_t arm_ci, unsigned cmd, unsigned sn)
{
	dbrec_arm(q, arm_ci, cmd, sn);
	wr64(db_addr(0), db_cq_arm(q->cqn, cmd, sn));
	clock_step(POLL_STEP_NS);
}

static int mkcq(struct cq *q, unsigned log, uint32_t eqn, uint32_t cfg, uint16_t mc, uint16_t mp)
{
	struct res r;
	unsigned sz = (cfg & KITE_CQ_CFG_CQE_128) ? 128 : 64;

	memset(q, 0, sizeof(*q));
	q->log = log;
	q->cqe_size = sz;
	q->dbrec = galloc(64, 64);
	q->b = qbuf_for((uint64_t)sz << log);
	q->cqn = need(create_cq_full(log, eqn, cfg, 0, mc, mp, q->dbrec, &q->b.pbl, &r), &r, "CREATE_CQ");
	return 0;
}

static struct kite_cqe cqe_at(const struct cq *q, uint64_t base, uint32_t idx)
{
	struct kite_cqe c;

	memread(base + (uint64_t)(idx & ((1u << q->log) - 1)) * q->cqe_size, &c, sizeof(c));
	return c;
}

static void g_cq_events(void)
{
	struct res r;
	struct cq a, b, c, d, e, f, g, h, o128;
	struct kite_cmd_query_cq_out o;
	struct kite_cmd_modify_cq m;
	struct kite_cqe q1, q2;
	struct eqs eq2;
	struct qpspec s;
	struct qbuf nb;
	uint64_t oldbuf, ov0;
	uint32_t qpn, i;
	unsigned mark, n;
	const char *reply = "";

	fixture();
	if (!qom_set("debug-cqe", "0", &reply)) {
		skip("model has no debug-cqe property", "CQE-driven tests");
		diag("%.160s", reply);
		return;
	}

	/* EQ1 armed: the completion event raises its vector. */
	mkcq(&a, 4, eq1.eqn, 0, 0, 0);
	msi_take(EQ1_VEC);
	eq_doorbell(&eq1, true);
	arm_cq(&a, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(a.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, a.cqn) == 1 && msi_take(EQ1_VEC),
	    "armed CQ + armed EQ1: COMPLETION event and MSI-X vector %d", EQ1_VEC);

	/* SOLICITED arming. */
	mkcq(&b, 4, eq1.eqn, 0, 0, 0);
	arm_cq(&b, 0, KITE_CQ_ARM_SOLICITED, 0);
	dcqe(b.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 0, "armed SOLICITED: an unsolicited CQE does not fire");
	dcqe(b.cqn, DBG_SOLICITED);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 1, "armed SOLICITED: a solicited CQE fires");
	arm_cq(&b, 2, KITE_CQ_ARM_SOLICITED, 1);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 0, "re-arm SOLICITED past the solicited CQE: no event");
	dcqe(b.cqn, DBG_ERROR);
	tap(eq1_count(KITE_EQE_COMPLETION, b.cqn) == 1, "armed SOLICITED: an error CQE fires");
	q1 = cqe_at(&b, b.b.data, 2);
	tap(FIELD_GET(KITE_CQE_OPCODE, q1.op_own) == KITE_CQE_OP_REQ_ERR, "error CQE has opcode REQ_ERR (0x%x)", q1.op_own);

	/* Arm requests that find CQEs already there. */
	mkcq(&c, 4, eq1.eqn, 0, 0, 0);
	dcqe(c.cqn, 0);
	dcqe(c.cqn, DBG_SOLICITED);
	dcqe(c.cqn, 0);
	arm_cq(&c, 0, KITE_CQ_ARM_SOLICITED, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, c.cqn) == 1, "arm SOLICITED with a solicited CQE beyond ARM_CI fires at once");
	mkcq(&d, 4, eq1.eqn, 0, 0, 0);
	dcqe(d.cqn, 0);
	dcqe(d.cqn, 0);
	arm_cq(&d, 0, KITE_CQ_ARM_SOLICITED, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, d.cqn) == 0, "arm SOLICITED with only unsolicited CQEs: no event");
	arm_cq(&d, 1, KITE_CQ_ARM_NEXT, 1);
	tap(eq1_count(KITE_EQE_COMPLETION, d.cqn) == 1, "arm NEXT with CQEs beyond ARM_CI fires at once");
	arm_cq(&d, 2, KITE_CQ_ARM_NEXT, 2);
	tap(eq1_count(KITE_EQE_COMPLETION, d.cqn) == 0, "arm NEXT with ARM_CI == pi: no event");

	/* ARM_CI more than depth behind pi: CQEs with index >= ARM_CI exist. */
	mkcq(&e, 1, eq1.eqn, 0, 0, 0);
	for (i = 0; i < 4; i++) {
		dcqe(e.cqn, 0);
		setmem32(e.dbrec, i + 1);
	}
	arm_cq(&e, 0, KITE_CQ_ARM_NEXT, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 1,
	    "arm NEXT with ARM_CI 0 at pi 4 (depth 2): (pi - ARM_CI) > 0, fires at once");

	/* Moderation. */
	mkcq(&e, 4, eq1.eqn, 0, 3, 0);
	arm_cq(&e, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(e.cqn, 0);
	dcqe(e.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 0, "mod_count 3: no event after 2 CQEs");
	dcqe(e.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 1, "mod_count 3: event after the 3rd CQE");
	dcqe(e.cqn, 0);
	arm_cq(&e, 3, KITE_CQ_ARM_NEXT, 1);
	tap(eq1_count(KITE_EQE_COMPLETION, e.cqn) == 1, "moderated CQ: arm finding a CQE fires immediately");
	mkcq(&f, 4, eq1.eqn, 0, 0, 100);
	arm_cq(&f, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(f.cqn, 0);
	clock_step(50000);
	tap(eq1_count(KITE_EQE_COMPLETION, f.cqn) == 0, "mod_period 100 us: no event 50 us after the CQE");
	dcqe(f.cqn, 0);
	clock_step(60000);
	tap(eq1_count(KITE_EQE_COMPLETION, f.cqn) == 1, "mod_period 100 us: event ~110 us after the first CQE");
	mkcq(&g, 4, eq1.eqn, 0, 2, 1000);
	arm_cq(&g, 0, KITE_CQ_ARM_NEXT, 0);
	dcqe(g.cqn, 0);
	dcqe(g.cqn, 0);
	tap(eq1_count(KITE_EQE_COMPLETION, g.cqn) == 1, "count 2 / period 1 ms: the count comes first");
	clock_step(2000000);
	tap(eq1_count(KITE_EQE_COMPLETION, g.cqn) == 0, "no second event from the period timer");

	/* RESIZE with CQEs: owner bits per old and new depth. */
	mkcq(&h, 1, eq1.eqn, 0, 0, 0);
	dcqe(h.cqn, 0);
	dcqe(h.cqn, 0);
	setmem32(h.dbrec, 2);
	oldbuf = h.b.data;
	nb = qbuf_for(64 << 2);
	memset(&m, 0, sizeof(m));
	m.cqn = h.cqn;
	m.mask = KITE_MODIFY_CQ_RESIZE;
	m.cfg = 2;
	m.pbl = nb.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RESIZE depth 2 -> 4 at pi 2");
	h.log = 1;
	q1 = cqe_at(&h, oldbuf, 2);
	tap(FIELD_GET(KITE_CQE_OPCODE, q1.op_own) == KITE_CQE_OP_RESIZE && (q1.op_own & 1) == 0,
	    "RESIZE CQE at old index 0 with owner 0 (second pass of depth 2) (op_own 0x%x)", q1.op_own);
	h.log = 2;
	h.b = nb;
	dcqe(h.cqn, 0);
	q2 = cqe_at(&h, nb.data, 2);
	query_cq(h.cqn, &o, &r);
	tap(FIELD_GET(KITE_CQE_OPCODE, q2.op_own) == KITE_CQE_OP_REQ && (q2.op_own & 1) == 1 && o.pi == 3,
	    "next CQE in the new buffer at index 2, owner 1 (first pass of depth 4), pi 3 (op_own 0x%x, pi %u)",
	    q2.op_own, o.pi);
	tap(o.ci == 2, "QUERY_CQ ci is the consumer index last read from the dbrec (%u)", o.ci);
	setmem32(h.dbrec, 0);
	nb = qbuf_for(64 << 1);
	m.cfg = 1;
	m.pbl = nb.pbl;
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, -1, "RESIZE to depth 2 with 3 unconsumed CQEs -> E_PARAM");
	setmem32(h.dbrec, 2);
	run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "RESIZE to depth 2 with 1 unconsumed CQE");

	/* CQE_128 slots. */
	mkcq(&o128, 2, eq1.eqn, KITE_CQ_CFG_CQE_128, 0, 0);
	dcqe(o128.cqn, 0);
	dcqe(o128.cqn, 0);
	q1 = cqe_at(&o128, o128.b.data, 0);
	q2 = cqe_at(&o128, o128.b.data, 1);
	tap((q1.op_own & 1) && (q2.op_own & 1) && q2.wqe_idx == 1,
	    "CQE_128: CQEs at 0 and 128 bytes, owner 1 (0x%x 0x%x)", q1.op_own, q2.op_own);

	/* Overflow: CQ ERROR, QPs to ERR with QP_FATAL. */
	mkcq(&a, 1, eq1.eqn, 0, 0, 0);
	s = qps(KITE_QPT_RC, fx_pd, a.cqn, 0);
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP on the small CQ");
	ov0 = stat1(KITE_STAT_CQ_OVERFLOWS);
	mark = neqlog;
	dcqe(a.cqn, 0);
	dcqe(a.cqn, 0);
	dcqe(a.cqn, 0);
	query_cq(a.cqn, &o, &r);
	eq_drain(&eq0);
	tap(o.state == KITE_CQ_STATE_ERROR && o.pi == 2, "third CQE into a depth-2 CQ without consumption: ERROR, pi 2");
	{
		const struct kite_eqe *ev = eqe_find(mark, KITE_EQE_CQ_ERROR, a.cqn);

		tap(ev && ev->data == KITE_CQ_ERR_OVERFLOW, "CQ_ERROR event with data OVERFLOW on EQ0");
	}
	tap(eqe_find(mark, KITE_EQE_QP_FATAL, qpn) != NULL, "QP_FATAL event for the QP using the CQ");
	tap(qp_state(qpn) == KITE_QPS_ERR, "the QP is in ERR");
	tap(stat1(KITE_STAT_CQ_OVERFLOWS) > ov0, "KITE_STAT_CQ_OVERFLOWS counted");
	dcqe(a.cqn, 0);
	query_cq(a.cqn, &o, &r);
	tap(o.pi == 2, "no CQEs written in ERROR");

	/* dbrec unreachable: CQ ERROR with data DMA. */
	memset(&b, 0, sizeof(b));
	b.log = 2;
	b.b = qbuf_for(64 << 2);
	b.cqn = need(create_cq_full(2, eq1.eqn, 0, 0, 0, 0, NOT_RAM, &b.b.pbl, &r), &r, "CREATE_CQ with dbrec outside RAM");
	mark = neqlog;
	dcqe(b.cqn, 0);
	eq_drain(&eq0);
	query_cq(b.cqn, &o, &r);
	{
		const struct kite_eqe *ev = eqe_find(mark, KITE_EQE_CQ_ERROR, b.cqn);

		tap(o.state == KITE_CQ_STATE_ERROR && ev && ev->data == KITE_CQ_ERR_DMA,
		    "dbrec outside RAM: CQ ERROR, CQ_ERROR data DMA");
	}

	/* CQ buffer outside RAM: the CQE write fails -> ERROR, data DMA. */
	memset(&b, 0, sizeof(b));
	b.log = 2;
	b.b = mkbuf(0, 12, 1, true);
	b.b.pbl.addr = NOT_RAM;
	b.dbrec = galloc(64, 64);
	b.cqn = need(create_cq_full(2, eq1.eqn, 0, 0, 0, 0, b.dbrec, &b.b.pbl, &r), &r, "CREATE_CQ with its page outside RAM");
	mark = neqlog;
	ov0 = stat1(KITE_STAT_DMA_ERRORS);
	dcqe(b.cqn, 0);
	eq_drain(&eq0);
	query_cq(b.cqn, &o, &r);
	{
		const struct kite_eqe *ev = eqe_find(mark, KITE_EQE_CQ_ERROR, b.cqn);

		tap(o.state == KITE_CQ_STATE_ERROR && ev && ev->data == KITE_CQ_ERR_DMA && o.pi == 0,
		    "CQ page outside RAM: CQ ERROR, CQ_ERROR data DMA, pi 0");
	}
	tap(stat1(KITE_STAT_DMA_ERRORS) > ov0, "KITE_STAT_DMA_ERRORS counted");

	/* EQ page outside RAM: the event is lost, counted, nothing breaks. */
	{
		struct qbuf eb = mkbuf(0, 12, 1, true);
		uint32_t beqn;

		eb.pbl.addr = NOT_RAM;
		beqn = need(create_eq_pbl(6, EQ2_VEC, false, &eb.pbl, &r), &r, "CREATE_EQ with its page outside RAM");
		mkcq(&d, 2, beqn, 0, 0, 0);
		ov0 = stat1(KITE_STAT_DMA_ERRORS);
		arm_cq(&d, 0, KITE_CQ_ARM_NEXT, 0);
		dcqe(d.cqn, 0);
		tap(stat1(KITE_STAT_DMA_ERRORS) > ov0, "EQE write outside RAM counted as a DMA error");
		nop(&r);
		expect(&r, KITE_CMD_OK, -1, "device fine after the failed EQE write");
	}

	/* Completion EQ overflow -> EQ_OVERFLOW on EQ0. */
	need(create_eq(&eq2, 6, EQ2_VEC, false, &r), &r, "CREATE_EQ (EQ2)");
	mkcq(&c, 8, eq2.eqn, 0, 0, 0);
	mark = neqlog;
	ov0 = stat1(KITE_STAT_EQ_OVERFLOWS);
	for (i = 0; i < 66; i++) {
		arm_cq(&c, i, KITE_CQ_ARM_NEXT, i & 3);
		dcqe(c.cqn, 0);
		setmem32(c.dbrec, i + 1);
	}
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_EQ_OVERFLOW, eq2.eqn) != NULL, "66 events into a 64-entry EQ: EQ_OVERFLOW (obj EQN %u) on EQ0", eq2.eqn);
	tap(stat1(KITE_STAT_EQ_OVERFLOWS) > ov0, "EQ overflow counted");
	eq2.autodb = true;
	n = eq_drain(&eq2);
	tap(n == 64, "EQ2 holds exactly 64 events (%u)", n);
	arm_cq(&c, 66, KITE_CQ_ARM_NEXT, 66 & 3);
	dcqe(c.cqn, 0);
	tap(eq_drain(&eq2) == 1, "after consuming, the overflowed EQ works again");
}

/* ------------------------------------------------------------------ */
/* Group: link events                                                  */
/* ------------------------------------------------------------------ */

static void g_link(void)
{
	struct res r;
	struct kite_cmd_query_port_out p;
	const char *reply = "";
	unsigned mark;
	const struct kite_eqe *e;

	std_setup();
	wreg(KITE_REG_IMR, KITE_INT_LINK);
	reg(KITE_REG_ICR);
	msi_take(0);
	mark = neqlog;
	qmp_connect();
	if (!tap(qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":false}}", &reply),
		 "QMP set_link k down")) {
		diag("%.200s", reply);
		return;
	}
	nop(&r);
	e = eqe_find(mark, KITE_EQE_PORT_DOWN, 1);
	tap(e != NULL, "link down: PORT_DOWN (obj 1) on EQ0");
	tap(!(reg(KITE_REG_STATUS) & KITE_STATUS_LINK_UP), "STATUS.LINK_UP clear");
	tap(reg(KITE_REG_ICR) & KITE_INT_LINK, "ICR.LINK set");
	tap(msi_take(0), "vector 0 raised (IMR.LINK)");
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	tap(p.state == KITE_PORT_STATE_DOWN && p.phys_state == KITE_PORT_PHYS_DISABLED,
	    "QUERY_PORT: DOWN / DISABLED (%u/%u)", p.state, p.phys_state);
	mark = neqlog;
	qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":true}}", NULL);
	nop(&r);
	tap(eqe_find(mark, KITE_EQE_PORT_ACTIVE, 1) != NULL, "link up: PORT_ACTIVE (obj 1) on EQ0");
	need(run(KITE_CMD_QUERY_PORT, NULL, 0, sizeof(p), 0, &r), &r, "QUERY_PORT");
	memcpy(&p, r.out, sizeof(p));
	tap(p.state == KITE_PORT_STATE_ACTIVE && p.phys_state == KITE_PORT_PHYS_LINK_UP,
	    "QUERY_PORT: ACTIVE / LINK_UP (%u/%u)", p.state, p.phys_state);
}

/* ------------------------------------------------------------------ */
/* Group: table limits                                                 */
/* ------------------------------------------------------------------ */

static void g_limits(void)
{
	struct res r;
	struct qbuf cqb, sq;
	struct kite_cmd_create_qp qin;
	struct qpspec qs;
	uint64_t dbrec;
	uint32_t n, last = 0, maxn = 0;
	int c;

	fixture();
	/* PDs: 1..1023 (fixture holds one). */
	n = 1;
	while ((c = alloc_pd(0, &r)) == KITE_CMD_OK && n < 2000) {
		n++;
		last = r.result;
		maxn = last > maxn ? last : maxn;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 1023 && maxn == 1023,
	    "ALLOC_PD until full: 1023 PDs (PDN 1..1023), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));
	cmd_obj(KITE_CMD_DEALLOC_PD, 500, 0, &r);
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 500, "freed PDN 500 is reused (%u)", r.result);

	/* MRs: index 1..4095. */
	n = 0;
	maxn = 0;
	while ((c = alloc_mr(fx_pd, 1, n & 0xff, &r)) == KITE_CMD_OK && n < 5000) {
		n++;
		maxn = FIELD_GET(KITE_KEY_INDEX, r.result);
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 4095 && maxn == 4095,
	    "ALLOC_MR until full: 4095 MRs (index 1..4095), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));
	cmd_obj(KITE_CMD_DEREG_MR, 4095 << 8 | ((4094) & 0xff), 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the last index");

	/* CQs: 1..1023 (fixture holds one); all share one buffer and record. */
	cqb = qbuf_for(64 << 1);
	dbrec = galloc(64, 64);
	n = 1;
	maxn = 0;
	while ((c = create_cq_full(1, eq1.eqn, 0, 0, 0, 0, dbrec, &cqb.pbl, &r)) == KITE_CMD_OK && n < 2000) {
		n++;
		maxn = r.result > maxn ? r.result : maxn;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 1023 && maxn == 1023,
	    "CREATE_CQ until full: 1023 CQs (CQN 1..1023), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));

	/* QPs: RC/UD take 2..1023, GSI 1. */
	qs = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	qs.slog = qs.rlog = 1;
	qin = qp_in(&qs);
	sq = qbuf_for(128);
	qin.sq_pbl = sq.pbl;
	qin.rq_pbl = sq.pbl;
	n = 0;
	maxn = 0;
	while ((c = run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r)) == KITE_CMD_OK && n < 2000) {
		n++;
		maxn = r.result > maxn ? r.result : maxn;
	}
	tap(c == KITE_CMD_E_NO_RESOURCES && n == 1022 && maxn == 1023,
	    "CREATE_QP until full: 1022 RC QPs (QPN 2..1023), then E_NO_RESOURCES (%u, max %u, %s)", n, maxn,
	    code_name((unsigned)c));
	/* The round robin wraps: the one free QPN is found wherever it is. */
	cmd_obj(KITE_CMD_DESTROY_QP, 500, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP 500 in the full table");
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 500,
	    "CREATE_QP in a full table but for QPN 500 gets 500 (%u)", r.result);
	qin.type = KITE_QPT_GSI;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 1, "GSI (QPN 1) still available when RC QPNs are exhausted");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP with every table full");
}

/* ------------------------------------------------------------------ */
/* Group: device-side fuzzing (fault-corrupt)                          */
/* ------------------------------------------------------------------ */

/* fault-corrupt-count as the model has it, or -1. */
static long fz_count(void)
{
	char v[64];

	return qom_get("fault-corrupt-count", v, sizeof(v)) ? strtol(v, NULL, 0) : -1;
}

/* Arm one corruption of @cls. */
static void fz_arm(const char *cls, unsigned n)
{
	char v[64];

	snprintf(v, sizeof(v), "\"%s\"", cls);
	if (!qom_set("fault-corrupt", v, NULL))
		fatal("qom-set fault-corrupt %s", cls);
	snprintf(v, sizeof(v), "%u", n);
	qom_set("fault-corrupt-count", v, NULL);
}

static void fz_off(void)
{
	qom_set("fault-corrupt-count", "0", NULL);
	qom_set("fault-corrupt", "\"none\"", NULL);
}

/* The CQE a debug-cqe wrote at @idx of @q, and whether it is valid. */
static struct kite_cqe fz_cqe(struct cq *q, uint32_t idx, bool *valid)
{
	struct kite_cqe c = cqe_at(q, q->b.data, idx);
	uint32_t want = ((idx >> q->log) & 1) ^ 1;

	*valid = (c.op_own & KITE_CQE_OWNER) == want &&
		 FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_INVALID;
	return c;
}

static void g_devfuzz(void)
{
	struct cq a, b;
	struct kite_cqe c, c2;
	struct res r;
	const struct kite_eqe *e;
	const char *reply = "";
	char v[256];
	uint32_t idx = 0, st, rev, qpn1, qpn2;
	unsigned mark, i, n;
	bool valid;

	fixture();
	if (!qom_set("fault-corrupt", "\"none\"", &reply)) {
		skip("model has no fault-corrupt property", "device-side fuzzing");
		diag("%.160s", reply);
		return;
	}
	tap(!qom_set("fault-corrupt", "\"cqe-qpn,bogus\"", &reply),
	    "fault-corrupt refuses an unknown class");
	tap(qom_get("fault-corrupt", v, sizeof(v)) && !strcmp(v, "\"\""),
	    "fault-corrupt reads back empty when off (%s)", v);
	qom_set("fault-seed", "42", NULL);
	mkcq(&a, 4, eq1.eqn, 0, 0, 0);
	mkcq(&b, 4, eq1.eqn, 0, 0, 0);

	/* CQE fields: one corruption each, the next CQE is clean. */
	fz_arm("cqe-qpn", 1);
	tap(qom_get("fault-corrupt", v, sizeof(v)) && !strcmp(v, "\"cqe-qpn\""),
	    "fault-corrupt reads back the class armed (%s)", v);
	dcqe(a.cqn, 0);
	c = fz_cqe(&a, idx, &valid);
	qpn1 = c.qpn;
	tap(valid && (c.qpn & BIT(23)) && c.qpn <= KITE_OBJ_MASK,
	    "cqe-qpn: the CQE names QPN 0x%x, beyond any QP", c.qpn);
	tap(fz_count() == 0, "cqe-qpn: fault-corrupt-count went to 0");
	fz_arm("cqe-qpn", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && (c.qpn & BIT(23)), "cqe-qpn again: corrupted (0x%x)", c.qpn);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && c.qpn == 0 && c.wqe_idx == idx, "count 0: the next CQE is clean");

	fz_arm("cqe-wqe-idx", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && (uint16_t)(c.wqe_idx - idx) >= 0x4000 &&
	    (uint16_t)(c.wqe_idx - idx) < 0xc000,
	    "cqe-wqe-idx: WQE index %u for %u: 0x%x ahead", c.wqe_idx, idx,
	    (uint16_t)(c.wqe_idx - idx));

	fz_arm("cqe-opcode", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	n = FIELD_GET(KITE_CQE_OPCODE, c.op_own);
	tap(valid && n > KITE_CQE_OP_RESIZE && n < KITE_CQE_OP_REQ_ERR,
	    "cqe-opcode: undefined opcode 0x%x", n);

	/* cqe-len corrupts only received SENDs: a requester CQE is left. */
	fz_arm("cqe-len", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid && c.byte_len == 0 && fz_count() == 1,
	    "cqe-len: a requester CQE is not corrupted, the count stays");
	fz_off();

	fz_arm("cqe-syndrome", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	n = FIELD_GET(KITE_CQE_SYNDROME, c.syndrome);
	tap(valid && FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_REQ_ERR &&
	    n > KITE_SYND_ABORTED, "cqe-syndrome: REQ_ERR with undefined syndrome 0x%x", n);

	/* Owner out of turn: this slot looks old, the next one is fine. */
	fz_arm("cqe-owner", 1);
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(!valid && FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_REQ,
	    "cqe-owner: the CQE is written with the other pass's owner bit");
	dcqe(a.cqn, 0);
	idx++;
	c = fz_cqe(&a, idx, &valid);
	tap(valid, "cqe-owner: the next CQE is valid");

	/* Misdirected: the CQE goes to the next CQ, its own pi does not move. */
	fz_arm("cqe-cqn", 1);
	dcqe(a.cqn, 0);
	c = fz_cqe(&a, idx + 1, &valid);
	tap(!valid, "cqe-cqn: nothing written to CQ %u", a.cqn);
	c2 = fz_cqe(&b, 0, &valid);
	tap(valid && FIELD_GET(KITE_CQE_OPCODE, c2.op_own) == KITE_CQE_OP_REQ &&
	    c2.wqe_idx == idx + 1,
	    "cqe-cqn: CQ %u's CQE (WQE %u) lands in CQ %u", a.cqn, c2.wqe_idx, b.cqn);

	/* EQE fields: the completion event of a armed CQ. */
	eq_drain(&eq1);
	fz_arm("eqe-type", 1);
	arm_cq(&b, 1, KITE_CQ_ARM_NEXT, 0);
	mark = neqlog;
	dcqe(b.cqn, 0);
	eq_drain(&eq1);
	e = neqlog > mark ? &eqlog[mark % EQLOG] : NULL;
	tap(e && FIELD_GET(KITE_EQE_TYPE, e->type_owner) > KITE_EQE_DEVICE_FATAL && e->obj == b.cqn,
	    "eqe-type: undefined event type 0x%x", e ? (unsigned)FIELD_GET(KITE_EQE_TYPE, e->type_owner) : 0);

	fz_arm("eqe-obj", 1);
	arm_cq(&b, 2, KITE_CQ_ARM_NEXT, 1);
	mark = neqlog;
	dcqe(b.cqn, 0);
	eq_drain(&eq1);
	e = neqlog > mark ? &eqlog[mark % EQLOG] : NULL;
	tap(e && FIELD_GET(KITE_EQE_TYPE, e->type_owner) == KITE_EQE_COMPLETION &&
	    (e->obj & BIT(31)) && e->obj != b.cqn,
	    "eqe-obj: COMPLETION names object 0x%x", e ? e->obj : 0);

	/* Commands. */
	fz_arm("cmd-cookie", 1);
	mark = neqlog;
	nop(&r);
	tap(r.done && (r.status & 0xff) == KITE_CMD_OK && !eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie),
	    "cmd-cookie: the command completes, its CMD_DONE carries another cookie");
	fz_arm("cmd-status", 1);
	mark = neqlog;
	nop(&r);
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(r.done && (r.status & 0xff) >= KITE_CMD_E_NEVER && e && e->data == r.status,
	    "cmd-status: undefined status 0x%02x in the entry and the event", r.status & 0xff);
	fz_arm("cmd-result", 1);
	nop(&r);
	tap(r.done && r.result == 0 && fz_count() == 1,
	    "cmd-result: a command without result is not corrupted");
	alloc_pd(0, &r);
	tap(r.done && (r.status & 0xff) == KITE_CMD_OK && (r.result & BIT(31)),
	    "cmd-result: ALLOC_PD returns 0x%x", r.result);

	/* Registers. */
	fz_arm("reg-status", 1);
	st = reg(KITE_REG_STATUS);
	tap(!(st & KITE_STATUS_READY) && (st & BIT(31)), "reg-status: STATUS reads 0x%x", st);
	st = reg(KITE_REG_STATUS);
	tap(st & KITE_STATUS_READY, "reg-status: the next read is clean (0x%x)", st);
	fz_arm("reg-version", 1);
	rev = reg(KITE_REG_HW_REV);
	tap(FIELD_GET(KITE_HW_REV_MAJOR, rev) != KITE_HW_REV_MAJOR_SUPPORTED,
	    "reg-version: HW_REV reads 0x%x", rev);
	rev = reg(KITE_REG_HW_REV);
	tap(FIELD_GET(KITE_HW_REV_MAJOR, rev) == KITE_HW_REV_MAJOR_SUPPORTED,
	    "reg-version: the next read is clean (0x%x)", rev);

	/* Reproducible: the same seed gives the same value. */
	qom_set("fault-seed", "42", NULL);
	fz_arm("cqe-qpn", 1);
	dcqe(a.cqn, 0);
	tap(qom_get("fault-injected", v, sizeof(v)) && strstr(v, "cqe-qpn=3"),
	    "fault-injected counts by class (%.80s)", v);
	c = fz_cqe(&a, idx + 1, &valid);
	qpn2 = c.qpn;
	tap(valid && qpn2 == qpn1, "fault-seed 42 again: the same corrupted QPN (0x%x, 0x%x)",
	    qpn1, qpn2);

	/* A random mix on two big CQs; then the model still works. */
	mkcq(&a, 9, eq1.eqn, 0, 0, 0);
	mkcq(&b, 9, eq1.eqn, 0, 0, 0);
	arm_cq(&a, 0, KITE_CQ_ARM_NEXT, 0);
	arm_cq(&b, 0, KITE_CQ_ARM_NEXT, 0);
	qom_set("fault-seed", "7", NULL);
	fz_arm("all", 200);
	for (i = 0; i < 300; i++) {
		dcqe(i & 1 ? a.cqn : b.cqn, i & 4 ? DBG_ERROR : 0);
		nop(&r);
		reg(KITE_REG_STATUS);
		reg(KITE_REG_HW_REV);
		eq_drain(&eq1);
	}
	n = (unsigned)fz_count();
	fz_off();
	tap(n < 200, "mix: %u of 200 corruptions made", 200 - n);
	nop(&r);
	expect(&r, KITE_CMD_OK, 0, "after the mix: NOP completes cleanly");
	alloc_pd(0, &r);
	expect(&r, KITE_CMD_OK, 0, "after the mix: ALLOC_PD returns PDN %u", r.result);
	st = reg(KITE_REG_STATUS);
	tap((st & KITE_STATUS_READY) && !(st & KITE_STATUS_FATAL), "after the mix: STATUS 0x%x", st);
}

/* ------------------------------------------------------------------ */
/* Group: fault injection                                              */
/* ------------------------------------------------------------------ */

static void g_fault(void)
{
	struct res r, r2;
	struct kite_cmd c;
	const char *reply = "";
	unsigned mark;
	uint64_t buf, pat[18];
	const struct kite_eqe *e;
	uint32_t i1, i2, ck1, ck2, ci;
	int i;
	bool stuck;

	std_setup();
	if (!tap(qom_set("fault-cmd-status", "4", &reply), "qom-set fault-cmd-status"))
		diag("%.200s", reply);
	char op[16];
	snprintf(op, sizeof(op), "%d", KITE_CMD_ALLOC_PD);
	if (!tap(qom_set("fault-cmd-opcode", op, &reply), "qom-set fault-cmd-opcode ALLOC_PD"))
		diag("%.200s", reply);
	mark = neqlog;
	alloc_pd(0, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, -1, "faulted ALLOC_PD completes with the injected status");
	e = eqe_find(mark, KITE_EQE_CMD_DONE, r.cookie);
	tap(e && e->data == r.status, "its CMD_DONE carries the injected status");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "other opcodes unaffected");
	qom_set("fault-cmd-opcode", "-1", NULL);
	alloc_pd(0, &r);
	tap(r.done && (r.status & 0xff) == 0 && r.result == 1,
	    "fault off: ALLOC_PD returns PDN 1, the faulted command had no effect (got %u)", r.result);

	buf = galloc(4096, 4096);
	memset(pat, 0x5c, sizeof(pat));
	memwrite(buf, pat, sizeof(pat));
	qom_set("fault-cmd-status", "10", NULL);
	snprintf(op, sizeof(op), "%d", KITE_CMD_QUERY_DEVICE);
	qom_set("fault-cmd-opcode", op, NULL);
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out), buf, &r);
	expect(&r, KITE_CMD_E_INTERNAL, -1, "faulted QUERY_DEVICE -> E_INTERNAL");
	memread(buf, pat, sizeof(pat));
	tap(pat[0] == 0x5c5c5c5c5c5c5c5cULL && pat[17] == 0x5c5c5c5c5c5c5c5cULL,
	    "faulted QUERY_DEVICE wrote no output");
	qom_set("fault-cmd-opcode", "-1", NULL);

	/* Hang */
	if (!tap(qom_set("fault-cmd-hang", "true", &reply), "qom-set fault-cmd-hang true"))
		diag("%.200s", reply);
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_NOP;
	ci = reg(RDMA(KITE_RDMA_CMDQ_CI));
	i1 = cmd_post(&c);
	ck1 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	i2 = cmd_post(&c);
	ck2 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	stuck = true;
	for (i = 0; i < 50; i++) {
		clock_step(POLL_STEP_NS * 10);
		if (reg(RDMA(KITE_RDMA_CMDQ_CI)) != ci)
			stuck = false;
	}
	cmd_collect(i1, ck1, &r);
	tap(stuck && !r.done, "fault-cmd-hang: commands stay pending, CI stops at %u", ci);
	qom_set("fault-cmd-hang", "false", NULL);
	tap(wait_ci(cmdq.pi, POLL_MAX), "unhang: pending commands complete without another doorbell (CI %u, PI %u)",
	    reg(RDMA(KITE_RDMA_CMDQ_CI)), cmdq.pi);
	if (reg(RDMA(KITE_RDMA_CMDQ_CI)) != cmdq.pi) {
		wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
		wait_ci(cmdq.pi, POLL_MAX);
	}
	cmd_collect(i1, ck1, &r);
	cmd_collect(i2, ck2, &r2);
	eq_drain(&eq0);
	tap(r.done && r2.done && !(r.status & 0xff) && !(r2.status & 0xff), "both pending NOPs completed OK");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel works after the hang");

	/* Pending commands are dropped by a disable. */
	qom_set("fault-cmd-hang", "true", NULL);
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_ALLOC_PD;
	c.in_len = sizeof(struct kite_cmd_obj);
	i1 = cmd_post(&c);
	ck1 = c.cookie;
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	clock_step(POLL_STEP_NS * 10);
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 0);
	qom_set("fault-cmd-hang", "false", NULL);
	clock_step(POLL_STEP_NS * 10);
	cmd_collect(i1, ck1, &r);
	tap(!r.done && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0, "disable while hung: the pending command is dropped");
	if (!cmdq_enable(6))
		fatal("command queue does not re-enable");
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 2, "the dropped ALLOC_PD had no effect (next PDN %u, expected 2)", r.result);

	/* ... and by a reset. */
	qom_set("fault-cmd-hang", "true", NULL);
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_NOP;
	cmd_post(&c);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	wreg(KITE_REG_CTRL, KITE_CTRL_RESET);
	for (i = 0; i < 20; i++) {
		clock_step(RESET_NS / 4);
		if (reg(KITE_REG_STATUS) & KITE_STATUS_READY)
			break;
	}
	qom_set("fault-cmd-hang", "false", NULL);
	clock_step(POLL_STEP_NS * 10);
	tap((reg(KITE_REG_STATUS) & KITE_STATUS_READY) && reg(RDMA(KITE_RDMA_CMDQ_CI)) == 0 &&
	    !(reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE),
	    "reset while hung: READY, queue disabled, nothing completes");
	memset(&eq0, 0, sizeof(eq0));
	std_setup();
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel works after reset");
}

/* ------------------------------------------------------------------ */
/* Group: reset discards objects                                       */
/* ------------------------------------------------------------------ */

static void reset_checks(const char *how, uint32_t u1, uint32_t qpn, uint32_t key, uint32_t eqn)
{
	struct res r;
	struct kite_cmd_query_cq_out o;
	uint64_t st[KITE_STAT_COUNT];

	tap(!(reg(RDMA(KITE_RDMA_CMDQ_CFG)) & KITE_CMDQ_CFG_ENABLE), "%s: command queue disabled", how);
	tap(reg(KITE_REG_ETH_MTU) == 1500, "%s: ETH_MTU back to 1500", how);
	tap(reg(KITE_REG_ETH_MAC_LO) == reg(KITE_REG_MAC_LO) && reg(KITE_REG_ETH_MAC_HI) == reg(KITE_REG_MAC_HI) &&
	    reg(KITE_REG_IMR) == 0 && reg(KITE_REG_ETH_CTRL) == 0,
	    "%s: ETH_MAC factory, IMR 0, ETH_CTRL 0", how);
	memset(&eq0, 0, sizeof(eq0));
	if (!cmdq_enable(6))
		fatal("command queue does not enable after %s", how);
	create_eq(&eq0, 6, EQ0_VEC, true, &r);
	expect(&r, KITE_CMD_OK, -1, "%s: EQ0 can be created again", how);
	eq_drain(&eq0);
	stats(st);
	tap(st[KITE_STAT_CMDS] <= 3, "%s: stats reset (CMDS %" PRIu64 ")", how, st[KITE_STAT_CMDS]);
	cmd_obj(KITE_CMD_DEALLOC_PD, fx_pd, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old PD -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DESTROY_QP, qpn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old QP -> E_OBJECT", how);
	query_cq(fx_cq.cqn, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old CQ -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old MR -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DESTROY_EQ, eqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old EQ -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: old uctx -> E_OBJECT", how);
	cmd_obj(KITE_CMD_DEL_GID, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "%s: GID table emptied", how);
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == fx_pd, "%s: new PD gets the first PDN again (%u)", how, r.result);
}

static void g_reset(void)
{
	struct res r;
	struct qpspec s;
	struct qbuf b;
	uint32_t u1, qpn, key;
	int i;

	fixture();
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	s = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP");
	b = mkbuf(0, 12, 1, false);
	key = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE, 0, 0, 0, 4096, &b.pbl, &r), &r, "REG_MR");
	wreg(KITE_REG_ETH_MTU, 4000);
	wreg(KITE_REG_ETH_MAC_LO, 0x01020304);
	wreg(KITE_REG_IMR, KITE_INT_LINK);
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);

	wreg(KITE_REG_CTRL, KITE_CTRL_RESET);
	for (i = 0; i < 20; i++) {
		clock_step(RESET_NS / 4);
		if (reg(KITE_REG_STATUS) & KITE_STATUS_READY)
			break;
	}
	tap(reg(KITE_REG_STATUS) & KITE_STATUS_READY, "CTRL.RESET completes");
	reset_checks("CTRL.RESET", u1, qpn, key, eq1.eqn);

	/* Function level reset */
	need(create_eq(&eq1, 6, EQ1_VEC, false, &r), &r, "CREATE_EQ (EQ1)");
	fx_pd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	fx_pd = 1;
	need(create_cq(&fx_cq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	need(add_gid(0, KITE_NET_ROCE_V2_IPV4, &r), &r, "ADD_GID 0");
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	qpn = need(create_qp(&s, &r), &r, "CREATE_QP");
	key = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE, 0, 0, 0, 4096, &b.pbl, &r), &r, "REG_MR");
	cfg_wr16(0x80 + 8, 0x8000);	/* DEVCTL.BCR_FLR */
	dev_init();
	reset_checks("FLR", u1, qpn, key, eq1.eqn);
}

/* ------------------------------------------------------------------ */
/* Group: robustness                                                   */
/* ------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static const uint8_t opcodes[] = {
	KITE_CMD_NOP, KITE_CMD_QUERY_DEVICE, KITE_CMD_QUERY_PORT, KITE_CMD_QUERY_STATS,
	KITE_CMD_ALLOC_UCTX, KITE_CMD_DEALLOC_UCTX, KITE_CMD_ALLOC_PD, KITE_CMD_DEALLOC_PD,
	KITE_CMD_CREATE_EQ, KITE_CMD_DESTROY_EQ, KITE_CMD_CREATE_CQ, KITE_CMD_QUERY_CQ,
	KITE_CMD_MODIFY_CQ, KITE_CMD_DESTROY_CQ, KITE_CMD_CREATE_QP, KITE_CMD_MODIFY_QP,
	KITE_CMD_QUERY_QP, KITE_CMD_DESTROY_QP, KITE_CMD_REG_MR, KITE_CMD_ALLOC_MR,
	KITE_CMD_DEREG_MR, KITE_CMD_ADD_GID, KITE_CMD_DEL_GID, KITE_CMD_CREATE_SRQ,
	KITE_CMD_MODIFY_SRQ, KITE_CMD_QUERY_SRQ, KITE_CMD_DESTROY_SRQ, KITE_CMD_ALLOC_CNTR,
	KITE_CMD_DEALLOC_CNTR, KITE_CMD_QUERY_CNTR, KITE_CMD_SET_QP_CNTR,
	KITE_CMD_ALLOC_MW, KITE_CMD_DEALLOC_MW,
};

static uint64_t junk_pages;	/* 16 pages of plausible-but-random PTEs */
static uint64_t junk_data;	/* 8 MiB the random PTEs point into */
static uint64_t scratch;	/* 64 KiB output target */

static void fill_junk(void)
{
	static uint64_t pg[512];
	unsigned p, i;

	for (p = 0; p < 16; p++) {
		for (i = 0; i < 512; i++) {
			uint64_t v = rnd();

			if (rndn(2))
				v = ((junk_pages + rndn(16) * 4096ULL) | (v & 7));
			else if (rndn(2))
				v = (junk_data + (v % (8ULL << 20))) | (v & 7);
			pg[i] = v;
		}
		memwrite(junk_pages + p * 4096ULL, pg, sizeof(pg));
	}
}

static struct kite_pbl junk_pbl(void)
{
	struct kite_pbl p;

	p.addr = rndn(8) ? junk_pages + rndn(16) * 4096ULL : rnd();
	if (!rndn(8))
		p.addr += rndn(4096);
	p.npages = rndn(4) ? 1 + rndn(64) : (uint32_t)rnd();
	p.cfg = rndn(8) ? pbl_cfg(rndn(3), 12 + rndn(10)) : (uint32_t)rnd();
	return p;
}

static void random_entry(struct kite_cmd *c)
{
	uint32_t *w = (uint32_t *)c->payload;
	unsigned i;

	memset(c, 0, sizeof(*c));
	c->opcode = rndn(10) < 8 ? opcodes[rndn(ARRAY_SIZE(opcodes))] : (uint32_t)rnd();
	for (i = 0; i < KITE_CMD_PAYLOAD_SIZE / 4; i++) {
		uint32_t v = (uint32_t)rnd();

		w[i] = rndn(3) ? v % 8 : v;
	}
	switch (c->opcode) {
	case KITE_CMD_CREATE_EQ:
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_create_eq, pbl)) = junk_pbl();
		w[0] = 6 + rndn(3) + (rndn(4) ? 0 : (uint32_t)rnd());
		break;
	case KITE_CMD_CREATE_CQ:
	case KITE_CMD_MODIFY_CQ:
		*(struct kite_pbl *)(c->payload + 24) = junk_pbl();
		if (c->opcode == KITE_CMD_CREATE_CQ)
			*(uint64_t *)(c->payload + 16) = rndn(4) ? scratch + 8 * rndn(64) : rnd();
		break;
	case KITE_CMD_CREATE_QP:
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_create_qp, sq_pbl)) = junk_pbl();
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_create_qp, rq_pbl)) = junk_pbl();
		break;
	case KITE_CMD_REG_MR:
		*(struct kite_pbl *)(c->payload + offsetof(struct kite_cmd_reg_mr, pbl)) = junk_pbl();
		break;
	}
	c->in_len = (uint16_t)(rndn(4) ? rndn(KITE_CMD_PAYLOAD_SIZE + 1) : rnd());
	c->out_len = (uint16_t)(rndn(2) ? rndn(KITE_CMD_PAYLOAD_SIZE + 1) : rnd());
	c->out_addr = rndn(3) ? 0 : (rndn(8) ? scratch : rnd());
	if (c->out_addr && c->out_addr != scratch && rndn(2))
		c->out_addr = scratch + rndn(4096);
	if (!rndn(16))
		c->rsvd0 = (uint32_t)rnd();
}

static void g_robust(void)
{
	struct res r;
	struct kite_cmd c;
	unsigned i, j, batch, okc = 0, errc = 0, crt = 0, notdone = 0;
	uint32_t ci0;
	const char *seed = getenv("KITE_SEED");

	rng_state = seed ? strtoull(seed, NULL, 0) : 0x4b495445f00dULL;
	if (!rng_state)
		rng_state = 1;
	diag("seed 0x%" PRIx64, rng_state);
	std_setup();
	junk_pages = galloc(16 * 4096, 4096);
	junk_data = galloc(8ULL << 20, 2ULL << 20);
	scratch = galloc(0x20000, 4096);
	fill_junk();
	eq0.on = false;	/* random commands may destroy or refill EQ0 */

	/* Command flood, up to a ring-full per doorbell. */
	for (i = 0; i < 2500; i += batch) {
		uint32_t first = cmdq.pi;

		batch = 1 + rndn(64);
		for (j = 0; j < batch; j++) {
			random_entry(&c);
			cmd_post(&c);
		}
		wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
		if (!wait_ci(cmdq.pi, POLL_MAX * 4))
			fatal("command flood: channel stuck at CI %u (PI %u, STATUS 0x%x)",
			      reg(RDMA(KITE_RDMA_CMDQ_CI)), cmdq.pi, reg(RDMA(KITE_RDMA_CMDQ_STATUS)));
		for (j = first; j != cmdq.pi; j++) {
			struct kite_cmd e;

			memread(slot_addr(j) + offsetof(struct kite_cmd, status), &e.status, 4);
			if (!(e.status & KITE_CMD_STATUS_DONE)) {
				if (notdone < 3) {
					struct kite_cmd full;

					memread(slot_addr(j), &full, sizeof(full));
					diag("entry %u (batch %u..%u) not DONE: opcode 0x%x in_len %u out_len %u out_addr 0x%" PRIx64 " status 0x%x",
					     j, first, cmdq.pi, full.opcode, full.in_len, full.out_len, full.out_addr, full.status);
				}
				notdone++;
			}
			else if (e.status & 0xff)
				errc++;
			else
				okc++;
		}
		if (!rndn(8))
			fill_junk();
	}
	tap(notdone == 0, "%u random command entries all completed (%u OK, %u failed, %u not DONE)",
	    okc + errc + notdone, okc, errc, notdone);
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after the command flood");

	/* Random PBLs behind real creates. */
	okc = errc = 0;
	for (i = 0; i < 300; i++) {
		struct kite_pbl p = junk_pbl();
		unsigned lg = 6 + rndn(4);
		int code;

		if (!rndn(4))
			fill_junk();
		if (rndn(2)) {
			/* Well-formed queue PBL of 16 << lg bytes, one entry corrupted sometimes. */
			uint32_t np, k;
			uint64_t pte[8];

			lg = 8 + rndn(4);
			np = (16u << lg) / 4096;

			for (k = 0; k < np; k++)
				pte[k] = (junk_data + 4096ULL * rndn(2048)) | KITE_PTE_VALID |
					 (k == np - 1 ? KITE_PTE_LAST : 0) |
					 (np >= 2 && k == np - 2 ? KITE_PTE_NEXT_TO_LAST : 0);
			if (rndn(2))
				pte[rndn(np)] ^= 1ULL << rndn(64);
			p.addr = junk_pages + 4096ULL * rndn(16);
			memwrite(p.addr, pte, 8 * np);
			p.npages = np;
			p.cfg = pbl_cfg(1, 12);
			code = create_eq_pbl(lg, 5, false, &p, &r);
			crt = KITE_CMD_DESTROY_EQ;
			if (code == KITE_CMD_OK) {
				okc++;
				cmd_obj(crt, r.result, 0, &r);
			} else {
				errc++;
			}
			continue;
		}
		switch (rndn(4)) {
		case 0:
			code = create_eq_pbl(lg, 5, false, &p, &r);
			crt = KITE_CMD_DESTROY_EQ;
			break;
		case 1:
			code = create_cq_full(1 + rndn(8), 1 + rndn(3), 0, 0, 0, 0, scratch, &p, &r);
			crt = KITE_CMD_DESTROY_CQ;
			break;
		case 2:
			code = reg_mr(1 + rndn(3), KITE_ACCESS_LOCAL_WRITE, 0, 0, rnd(), 1 + rndn(1 << 20), &p, &r);
			crt = KITE_CMD_DEREG_MR;
			break;
		default: {
			struct kite_cmd_modify_cq m = { .cqn = 1 + rndn(4), .mask = KITE_MODIFY_CQ_RESIZE,
							.cfg = 1 + rndn(8), .pbl = p };

			code = run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
			crt = 0;
		}
		}
		if (code == KITE_CMD_OK) {
			okc++;
			if (crt)
				cmd_obj(crt, r.result, 0, &r);
		} else {
			errc++;
		}
	}
	tap(1, "300 creates with random PBL contents completed (%u OK, %u refused)", okc, errc);
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after random PBLs");

	/* Doorbell flood. */
	for (i = 0; i < 3000; i++) {
		unsigned page = rndn(4) ? rndn(3) : rndn(KITE_DB_PAGES);
		uint64_t v = rnd();

		if (rndn(4))
			v = FIELD_PREP(KITE_DB_OBJ, rndn(8)) | FIELD_PREP(KITE_DB_TYPE, rndn(6)) | (v & GENMASK_ULL(63, 32));
		switch (rndn(10)) {
		case 0:
			wr32(db_addr(page) + 4 * rndn(1024), (uint32_t)v);
			break;
		case 1:
			rd64(db_addr(page));
			break;
		default:
			wr64(db_addr(page) + (rndn(10) ? 0 : 8 * rndn(512)), v);
		}
		if (!(i % 500))
			clock_step(POLL_STEP_NS);
	}
	clock_step(POLL_STEP_NS * 10);
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after 3000 random doorbells");

	/* Device DMA into its own BARs. */
	ci0 = reg(RDMA(KITE_RDMA_CMDQ_CI));
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_CMD_QUERY_STATS;
	c.out_len = 8 * KITE_STAT_COUNT;
	c.out_addr = db_addr(0);
	cmd_post(&c);
	c.opcode = KITE_CMD_QUERY_DEVICE;
	c.out_len = sizeof(struct kite_cmd_query_device_out);
	c.out_addr = BAR0_ADDR + KITE_RDMA_REGS_OFFSET;
	cmd_post(&c);
	c.opcode = KITE_CMD_QUERY_DEVICE;
	c.out_addr = BAR0_ADDR + KITE_RDMA_REGS_OFFSET + KITE_RDMA_CMDQ_PI - 16;
	cmd_post(&c);
	wreg(RDMA(KITE_RDMA_CMDQ_PI), cmdq.pi);
	for (i = 0; i < 50; i++)
		clock_step(POLL_STEP_NS);
	diag("after DMA into BARs: CI %u (was %u), STATUS 0x%x, CFG 0x%x", reg(RDMA(KITE_RDMA_CMDQ_CI)),
	     ci0, reg(RDMA(KITE_RDMA_CMDQ_STATUS)), reg(RDMA(KITE_RDMA_CMDQ_CFG)));
	tap(reg(KITE_REG_ID) == KITE_ID_MAGIC, "QEMU alive after command output DMA into the device's own BARs");
	wreg(RDMA(KITE_RDMA_CMDQ_CFG), 0);
	if (!cmdq_enable(6))
		fatal("command queue does not re-enable");
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "channel works after disable/re-enable");
	tap(reg(KITE_REG_ID) == KITE_ID_MAGIC && (reg(KITE_REG_STATUS) & KITE_STATUS_READY),
	    "device registers sane at the end");
}

/* ------------------------------------------------------------------ */
/* Group: stateful fuzzing (mostly valid commands, consistency at end) */
/* ------------------------------------------------------------------ */

#define FZ_MAX 4096

struct fzset {
	uint32_t v[FZ_MAX];
	unsigned n;
};

static void fz_add(struct fzset *f, uint32_t v)
{
	if (f->n < FZ_MAX)
		f->v[f->n++] = v;
}

static void fz_del(struct fzset *f, uint32_t v)
{
	unsigned i;

	for (i = 0; i < f->n; i++)
		if (f->v[i] == v) {
			f->v[i] = f->v[--f->n];
			return;
		}
}

static uint32_t fz_pick(const struct fzset *f, uint32_t dflt)
{
	if (!f->n || !rndn(16))
		return rndn(4) ? dflt : (uint32_t)rndn(2000);
	return f->v[rndn(f->n)];
}

static void g_fuzz(void)
{
	static struct fzset pds, eqs, cqs, qps_, mrs, ucs, mws;
	struct res r;
	struct qbuf shared_cq, shared_wq, mrbuf;
	uint64_t dbrec;
	const char *seed = getenv("KITE_SEED");
	unsigned i, bad = 0, steps = 3000, have_dbg;
	uint32_t cqlog = 4;
	int c;

	memset(&pds, 0, sizeof(pds));
	memset(&eqs, 0, sizeof(eqs));
	memset(&cqs, 0, sizeof(cqs));
	memset(&qps_, 0, sizeof(qps_));
	memset(&mrs, 0, sizeof(mrs));
	memset(&ucs, 0, sizeof(ucs));
	memset(&mws, 0, sizeof(mws));
	rng_state = seed ? strtoull(seed, NULL, 0) * 7919 + 3 : 0x5eed5eedULL;
	diag("seed 0x%" PRIx64, rng_state);
	fixture();
	have_dbg = qom_set("debug-cqe", "0", NULL);
	fz_add(&eqs, eq1.eqn);
	fz_add(&pds, fx_pd);
	fz_add(&cqs, fx_cq.cqn);
	shared_cq = qbuf_for(64 << cqlog);
	shared_wq = qbuf_for(64 << 6);
	mrbuf = mkbuf(1, 12, 4, false);
	dbrec = galloc(4096, 4096);

	for (i = 0; i < steps; i++) {
		unsigned op = rndn(22);
		uint32_t x;

		switch (op) {
		case 0:
			c = alloc_pd(rndn(3) ? 0 : fz_pick(&ucs, 0), &r);
			if (c == KITE_CMD_OK)
				fz_add(&pds, r.result);
			break;
		case 1:
			x = fz_pick(&pds, 1);
			if (cmd_obj(KITE_CMD_DEALLOC_PD, x, 0, &r) == KITE_CMD_OK)
				fz_del(&pds, x);
			break;
		case 2: {
			struct eqs q;

			c = create_eq(&q, 6, 1 + rndn(8), false, &r);
			if (c == KITE_CMD_OK)
				fz_add(&eqs, r.result);
			break;
		}
		case 3:
			x = fz_pick(&eqs, 1);
			if (x && cmd_obj(KITE_CMD_DESTROY_EQ, x, 0, &r) == KITE_CMD_OK)
				fz_del(&eqs, x);
			break;
		case 4:
			c = create_cq_full(cqlog, fz_pick(&eqs, 1), 0, rndn(4) ? 0 : fz_pick(&ucs, 0),
					   (uint16_t)rndn(3), (uint16_t)(rndn(3) * 10), dbrec + 8 * rndn(512),
					   &shared_cq.pbl, &r);
			if (c == KITE_CMD_OK)
				fz_add(&cqs, r.result);
			break;
		case 5:
			x = fz_pick(&cqs, 1);
			if (cmd_obj(KITE_CMD_DESTROY_CQ, x, 0, &r) == KITE_CMD_OK)
				fz_del(&cqs, x);
			break;
		case 6: case 7: {
			struct qpspec q = qps(1 + rndn(3), fz_pick(&pds, 1), fz_pick(&cqs, 1), rndn(4) ? 0 : fz_pick(&ucs, 0));
			struct kite_cmd_create_qp in;

			q.rcqn = fz_pick(&cqs, 1);
			in = qp_in(&q);
			in.sq_pbl = shared_wq.pbl;
			in.rq_pbl = shared_wq.pbl;
			if (run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r) == KITE_CMD_OK)
				fz_add(&qps_, r.result);
			break;
		}
		case 8:
			x = fz_pick(&qps_, 2);
			if (cmd_obj(KITE_CMD_DESTROY_QP, x, 0, &r) == KITE_CMD_OK)
				fz_del(&qps_, x);
			break;
		case 9: case 10: case 11: {
			struct kite_cmd_modify_qp a = attrs_valid(fz_pick(&qps_, 2));
			uint32_t mask = (uint32_t)rnd() & GENMASK(16, 2);

			if (rndn(2))
				mask &= (uint32_t)rnd();
			if (rndn(8))
				mask |= KITE_QP_ATTR_STATE;
			if (!rndn(8))
				a.sgid_index = (uint8_t)rndn(3);
			modify_qp(&a, mask, (uint8_t)rndn(7), &r);
			break;
		}
		case 12:
			c = reg_mr(fz_pick(&pds, 1), KITE_ACCESS_LOCAL_WRITE | (uint32_t)rndn(16), (uint32_t)rndn(256),
				   rndn(4) ? 0 : fz_pick(&ucs, 0), rnd() & 0xffff, 1 + rndn(4 * 4096), &mrbuf.pbl, &r);
			if (c == KITE_CMD_OK)
				fz_add(&mrs, r.result);
			break;
		case 13:
			c = alloc_mr(fz_pick(&pds, 1), 1 + rndn(512), (uint32_t)rndn(256), &r);
			if (c == KITE_CMD_OK)
				fz_add(&mrs, r.result);
			break;
		case 14:
			x = fz_pick(&mrs, 0x100);
			if (!rndn(8))
				x ^= 1;
			if (cmd_obj(KITE_CMD_DEREG_MR, x, 0, &r) == KITE_CMD_OK)
				fz_del(&mrs, x);
			break;
		case 15:
			if (rndn(2)) {
				if (run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r) == KITE_CMD_OK)
					fz_add(&ucs, r.result);
			} else {
				x = fz_pick(&ucs, 1);
				if (cmd_obj(KITE_CMD_DEALLOC_UCTX, x, 0, &r) == KITE_CMD_OK)
					fz_del(&ucs, x);
			}
			break;
		case 16: {
			struct kite_cmd_modify_cq m;
			struct qbuf nb = shared_cq;

			memset(&m, 0, sizeof(m));
			m.cqn = fz_pick(&cqs, 1);
			m.mask = (uint32_t)rndn(8);
			m.eqn = fz_pick(&eqs, 1);
			m.mod_count = (uint16_t)rndn(4);
			m.mod_period = (uint16_t)(rndn(3) * 20);
			m.cfg = cqlog;
			m.pbl = nb.pbl;
			run(KITE_CMD_MODIFY_CQ, &m, sizeof(m), 0, 0, &r);
			break;
		}
		case 17:
			if (have_dbg) {
				char v[32];

				snprintf(v, sizeof(v), "%u", fz_pick(&cqs, 1) | (uint32_t)(rndn(4) << 24));
				qom_set("debug-cqe", v, NULL);
			}
			break;
		case 19:
			c = alloc_mw(fz_pick(&pds, 1), rndn(8) ? 1 + rndn(2) : (uint32_t)rndn(4),
				     (uint32_t)rndn(rndn(8) ? 256 : 512),
				     rndn(4) ? 0 : fz_pick(&ucs, 0), &r);
			if (c == KITE_CMD_OK)
				fz_add(&mws, r.result);
			break;
		case 20:
			/* A window's key, or an MR's (which DEALLOC_MW refuses). */
			x = rndn(4) ? fz_pick(&mws, 0x100) : fz_pick(&mrs, 0x100);
			if (!rndn(8))
				x ^= 1;
			if (cmd_obj(KITE_CMD_DEALLOC_MW, x, 0, &r) == KITE_CMD_OK)
				fz_del(&mws, x);
			break;
		case 18: {
			uint32_t cqn = fz_pick(&cqs, 1);
			unsigned cmd = 1 + rndn(2), sn = rndn(4);

			setmem32(dbrec + 8 * rndn(512) + 4, (uint32_t)(FIELD_PREP(KITE_CQ_DB_ARM_CMD, cmd) |
				 FIELD_PREP(KITE_CQ_DB_ARM_CMD_SN, sn) | rndn(64)));
			setmem32(dbrec + 8 * rndn(512), (uint32_t)rndn(1 << 24));
			wr64(db_addr(rndn(4) ? 0 : rndn(3)), db_cq_arm(cqn, cmd, sn));
			break;
		}
		default:
			wr64(db_addr(rndn(4) ? 0 : fz_pick(&ucs, 1) & 0xff),
			     db_wq(1 + rndn(2), fz_pick(&qps_, 2), rndn(100)));
			if (!rndn(4))
				eq_doorbell(&eq1, rndn(2));
			clock_step(rndn(50000));
			eq_drain(&eq1);
			break;
		}
	}
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "%u random mostly-valid operations: channel alive", steps);

	/* Every live object answers and tears down in dependency order. */
	for (i = 0; i < qps_.n; i++)
		if (qp_state(qps_.v[i]) < 0) {
			bad++;
			diag("QP %u does not answer QUERY_QP", qps_.v[i]);
		}
	for (i = 0; i < qps_.n; i++)
		if (cmd_obj(KITE_CMD_DESTROY_QP, qps_.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DESTROY_QP %u: status 0x%x", qps_.v[i], r.status);
		}
	for (i = 0; i < mws.n; i++)
		if (cmd_obj(KITE_CMD_DEALLOC_MW, mws.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEALLOC_MW 0x%x: status 0x%x", mws.v[i], r.status);
		}
	for (i = 0; i < mrs.n; i++)
		if (cmd_obj(KITE_CMD_DEREG_MR, mrs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEREG_MR 0x%x: status 0x%x", mrs.v[i], r.status);
		}
	for (i = 0; i < cqs.n; i++) {
		struct kite_cmd_query_cq_out o;

		if (query_cq(cqs.v[i], &o, &r) != KITE_CMD_OK ||
		    cmd_obj(KITE_CMD_DESTROY_CQ, cqs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("CQ %u: status 0x%x", cqs.v[i], r.status);
		}
	}
	for (i = 0; i < pds.n; i++)
		if (cmd_obj(KITE_CMD_DEALLOC_PD, pds.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEALLOC_PD %u: status 0x%x", pds.v[i], r.status);
		}
	for (i = 0; i < eqs.n; i++)
		if (cmd_obj(KITE_CMD_DESTROY_EQ, eqs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DESTROY_EQ %u: status 0x%x", eqs.v[i], r.status);
		}
	for (i = 0; i < ucs.n; i++)
		if (cmd_obj(KITE_CMD_DEALLOC_UCTX, ucs.v[i], 0, &r) != KITE_CMD_OK) {
			bad++;
			diag("DEALLOC_UCTX %u: status 0x%x", ucs.v[i], r.status);
		}
	tap(bad == 0, "all live objects (%u QP, %u MW, %u MR, %u CQ, %u PD, %u EQ, %u uctx) destroy cleanly in order",
	    qps_.n, mws.n, mrs.n, cqs.n, pds.n, eqs.n, ucs.n);
	alloc_pd(0, &r);
	tap(r.done && !(r.status & 0xff) && r.result == 1, "afterwards the tables are empty: new PD gets PDN 1 (%u)", r.result);
}

/* ------------------------------------------------------------------ */
/* Data engine: UD and GSI sends and receives                          */
/* ------------------------------------------------------------------ */

/*
 * An independent ICRC: bitwise CRC-32 (reflected 0xedb88320, initial and
 * final inversion) over 8 bytes of 0xff followed by the packet from the IP
 * header with the variant fields masked to ones (RoCEv2 annex A17.3.3).
 */
static uint32_t t_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return crc;
}

static uint32_t t_icrc(const uint8_t *l3, size_t len, bool v6)
{
	uint8_t *m = malloc(8 + len), *ip = m + 8;
	size_t iplen = v6 ? 40 : 20;
	uint32_t crc;

	if (!m)
		abort();
	memset(m, 0xff, 8);
	memcpy(ip, l3, len);
	if (v6) {
		ip[0] |= 0x0f;
		ip[1] = ip[2] = ip[3] = 0xff;
		ip[7] = 0xff;
	} else {
		ip[1] = 0xff;
		ip[8] = 0xff;
		ip[10] = ip[11] = 0xff;
	}
	ip[iplen + 6] = ip[iplen + 7] = 0xff;	/* UDP checksum */
	ip[iplen + 8 + 4] = 0xff;		/* BTH resv8a */
	crc = ~t_crc32(0xffffffff, m, 8 + len);
	free(m);
	return crc;
}

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be24(const uint8_t *p) { return (uint32_t)p[0] << 16 | p[1] << 8 | p[2]; }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | be24(p + 1); }
static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }

static uint16_t t_csum(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += be16(p + i);
	if (len & 1)
		sum += p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

struct tcq {
	struct cq c;
	uint32_t ci;
};

struct tqp {
	uint32_t qpn, type;
	struct qbuf sq, rq;
	unsigned slog, sshift, rlog, rshift;
	uint32_t spi, rpi;
};

static void tcq_make(struct tcq *q, unsigned log)
{
	struct res r;

	memset(q, 0, sizeof(*q));
	need(create_cq(&q->c, log, eq1.eqn, 0, &r), &r, "CREATE_CQ");
}

/* The next CQE, waiting a bounded virtual time for it. */
static bool tcq_next(struct tcq *q, struct kite_cqe *out)
{
	int i;

	for (i = 0; i < 20; i++) {
		struct kite_cqe c = cqe_at(&q->c, q->c.b.data, q->ci);
		uint32_t want = ((q->ci >> q->c.log) & 1) ^ 1;

		if ((c.op_own & KITE_CQE_OWNER) == want &&
		    FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_INVALID) {
			q->ci++;
			setmem32(q->c.dbrec, q->ci & KITE_CQ_INDEX_MASK);
			*out = c;
			return true;
		}
		clock_step(POLL_STEP_NS);
	}
	memset(out, 0, sizeof(*out));
	return false;
}

static unsigned tcq_drain(struct tcq *q)
{
	struct kite_cqe c;
	unsigned n = 0;

	while (n < 1000 && tcq_next(q, &c))
		n++;
	return n;
}

static int tqp_create(struct tqp *q, uint32_t type, uint32_t pdn, uint32_t scqn,
		      uint32_t rcqn, uint32_t flags, struct res *r)
{
	struct kite_cmd_create_qp in;
	int c;

	memset(q, 0, sizeof(*q));
	q->type = type;
	q->slog = 4;
	q->sshift = 8;		/* 256 bytes: 12 SGEs worth, or inline */
	q->rlog = 4;
	q->rshift = 6;		/* 3 SGEs */
	q->sq = qbuf_for(1ULL << (q->slog + q->sshift));
	q->rq = qbuf_for(1ULL << (q->rlog + q->rshift));
	memset(&in, 0, sizeof(in));
	in.type = type;
	in.flags = flags;
	in.pdn = pdn;
	in.send_cqn = scqn;
	in.recv_cqn = rcqn;
	in.sq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, q->slog) |
			       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, q->sshift));
	in.rq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, q->rlog) |
			       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, q->rshift));
	in.sq_pbl = q->sq.pbl;
	in.rq_pbl = q->rq.pbl;
	c = run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, r);
	if (c == KITE_CMD_OK)
		q->qpn = r->result;
	return c;
}

#define T_QKEY		0x11111111u	/* attrs_valid() */
#define T_SQ_PSN	0x2000u

static void tqp_rts(struct tqp *q)
{
	struct kite_cmd_modify_qp a = attrs_valid(q->qpn);
	struct res r;

	if (q->type == KITE_QPT_RC) {
		need(modify_qp(&a, 0x0001d, KITE_QPS_INIT, &r), &r, "RC RESET to INIT");
		need(modify_qp(&a, 0x1a8c1, KITE_QPS_RTR, &r), &r, "RC INIT to RTR");
		need(modify_qp(&a, 0x05701, KITE_QPS_RTS, &r), &r, "RC RTR to RTS");
		return;
	}
	need(modify_qp(&a, q->type == KITE_QPT_GSI ? KITE_QP_ATTR_STATE : 0x39,
		       KITE_QPS_INIT, &r), &r, "RESET to INIT");
	need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_RTR, &r), &r, "INIT to RTR");
	need(modify_qp(&a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN, KITE_QPS_RTS, &r),
	     &r, "RTR to RTS");
}

static int tqp_to(struct tqp *q, uint8_t state)
{
	struct kite_cmd_modify_qp a = attrs_valid(q->qpn);
	struct res r;

	return modify_qp(&a, KITE_QP_ATTR_STATE, state, &r);
}

static struct kite_wqe_sge sge(uint32_t len, uint32_t lkey, uint64_t addr)
{
	struct kite_wqe_sge g = { .length = len, .lkey = lkey, .addr = addr };

	return g;
}

/* Write a receive WQE (num_sge n) and ring the RQ doorbell. */
static void post_recv_raw(struct tqp *q, uint32_t num_sge, const struct kite_wqe_sge *g,
			  unsigned n)
{
	uint8_t w[64];
	uint32_t stride = 1u << q->rshift;

	memset(w, 0, sizeof(w));
	memcpy(w, &num_sge, 4);
	memcpy(w + 16, g, 16 * n);
	memwrite(q->rq.data + ((uint64_t)(q->rpi & ((1u << q->rlog) - 1)) << q->rshift),
		 w, stride);
	q->rpi++;
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, q->qpn, q->rpi));
}

static void post_recv(struct tqp *q, const struct kite_wqe_sge *g, unsigned n)
{
	post_recv_raw(q, n, g, n);
}

/* A send WQE; returns its wqe_idx. @opw holds opcode and flags. */
static uint16_t post_send(struct tqp *q, uint32_t opw, uint32_t imm_be,
			  const struct kite_wqe_ud *av, const struct kite_wqe_sge *g,
			  unsigned n, const void *inl, unsigned ilen, bool ring)
{
	uint8_t w[1024];
	struct kite_wqe_ctrl c;
	uint32_t stride = 1u << q->sshift;
	uint16_t idx = (uint16_t)q->spi;

	memset(w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.opcode = opw | (uint32_t)FIELD_PREP(KITE_WQE_NUM_SGE, n) |
		   (inl ? KITE_WQE_F_INLINE : 0);
	c.imm_data = imm_be;
	c.wqe_idx = idx;
	c.inline_len = (uint16_t)ilen;
	memcpy(w, &c, 16);
	if (av)
		memcpy(w + 16, av, 48);
	if (inl)
		memcpy(w + 64, inl, ilen);
	else if (n)
		memcpy(w + 64, g, 16 * n);
	memwrite(q->sq.data + ((uint64_t)(q->spi & ((1u << q->slog) - 1)) << q->sshift),
		 w, stride);
	q->spi++;
	if (ring)
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, q->qpn, q->spi));
	return idx;
}

static struct kite_wqe_ud av4(uint32_t rqpn, uint32_t qkey, const uint8_t *dmac)
{
	struct kite_wqe_ud a;

	memset(&a, 0, sizeof(a));
	a.remote_qpn = rqpn;
	a.qkey = qkey;
	a.dgid[10] = a.dgid[11] = 0xff;
	a.dgid[12] = 10;
	a.dgid[15] = 1;			/* GID 0 is 10.0.0.1 (add_gid) */
	memcpy(a.dmac, dmac, 6);
	a.sgid_index = 0;
	a.hop_limit = 64;
	a.traffic_class = 0x28;
	a.net_type = KITE_NET_ROCE_V2_IPV4;
	return a;
}

static struct kite_wqe_ud av6(uint32_t rqpn, uint32_t qkey, const uint8_t *dmac)
{
	struct kite_wqe_ud a;

	memset(&a, 0, sizeof(a));
	a.remote_qpn = rqpn;
	a.qkey = qkey;
	a.dgid[0] = 0xfe;
	a.dgid[1] = 0x80;
	a.dgid[15] = 2;			/* GID 1 is fe80::2 (add_gid) */
	memcpy(a.dmac, dmac, 6);
	a.sgid_index = 1;
	a.hop_limit = 17;
	a.traffic_class = 0xb8;
	a.net_type = KITE_NET_ROCE_V2_IPV6;
	a.flow_label = 0xabcde;
	return a;
}

/* The engine fixture: PDs, CQs, a data MR with a page list, QPs. */
#define T_IOVA		0x700000000100ULL	/* not page aligned */
#define T_MR_PAGES	16
#define T_MR_LEN	(T_MR_PAGES * 4096ULL - 0x100)

struct eng_fixture {
	uint32_t pd2, lkey, lkey_ro, lkey2, lkey_phys;
	uint64_t ro_iova;
	struct qbuf mr;			/* data pages of lkey */
	struct tcq scq, rcq;
	struct tqp gsi, b, c;
};
static struct eng_fixture E;

static uint64_t t_bus(uint64_t iova)
{
	return E.mr.data + 0x100 + (iova - T_IOVA);
}

static void eng_setup(void)
{
	struct res r;
	struct qbuf ro, b2;

	fixture();
	need(add_gid(1, KITE_NET_ROCE_V2_IPV6, &r), &r, "ADD_GID 1 (IPv6)");
	E.pd2 = need(alloc_pd(0, &r), &r, "ALLOC_PD 2");
	E.mr = mkbuf(1, 12, T_MR_PAGES, false);
	E.lkey = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE, 0x5a, 0, T_IOVA, T_MR_LEN,
			     &E.mr.pbl, &r), &r, "REG_MR (data, level 1)");
	ro = mkbuf(0, 12, 1, false);
	E.lkey_ro = need(reg_mr(fx_pd, 0, 0x11, 0, ro.data, 4096, &ro.pbl, &r), &r,
			 "REG_MR (read-only)");
	E.ro_iova = ro.data;
	b2 = mkbuf(0, 12, 1, false);
	E.lkey2 = need(reg_mr(E.pd2, KITE_ACCESS_LOCAL_WRITE, 0x22, 0, b2.data, 4096,
			      &b2.pbl, &r), &r, "REG_MR (PD 2)");
	E.lkey_phys = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE, KITE_MR_F_PHYS | 0x33, 0,
				  0, ~0ULL, NULL, &r), &r, "REG_MR (DMA MR)");
	tcq_make(&E.scq, 6);
	tcq_make(&E.rcq, 6);
	need(tqp_create(&E.gsi, KITE_QPT_GSI, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP GSI");
	need(tqp_create(&E.b, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD B");
	need(tqp_create(&E.c, KITE_QPT_UD, E.pd2, E.scq.c.cqn, E.rcq.c.cqn,
			KITE_QP_F_SQ_SIG_ALL, &r), &r, "CREATE_QP UD C (PD 2, SIG_ALL)");
	tqp_rts(&E.gsi);
	tqp_rts(&E.b);
	tqp_rts(&E.c);
}

static void fill_pattern(uint64_t iova, uint32_t len, uint8_t seed, uint8_t *copy)
{
	uint8_t *p = malloc(len ? len : 1);
	uint32_t i;

	if (!p)
		abort();
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
	memwrite(t_bus(iova), p, len);
	if (copy)
		memcpy(copy, p, len);
	free(p);
}

static bool cqe_is(const struct kite_cqe *c, unsigned op, uint32_t qpn, unsigned synd)
{
	return FIELD_GET(KITE_CQE_OPCODE, c->op_own) == op && c->qpn == qpn &&
	       FIELD_GET(KITE_CQE_SYNDROME, c->syndrome) == synd;
}

static void cqe_diag(const char *what, const struct kite_cqe *c)
{
	diag("%s CQE: op 0x%x qpn %u byte_len %u wqe_idx %u flags 0x%x src_qpn %u "
	     "syndrome 0x%x wqe_opcode %u", what,
	     (unsigned)FIELD_GET(KITE_CQE_OPCODE, c->op_own), c->qpn, c->byte_len,
	     c->wqe_idx, c->flags, c->src_qpn, c->syndrome, c->wqe_opcode);
}

static void g_engine(void)
{
	static const uint8_t zero20[20];
	uint8_t want[1100], got[1200], grh[40];
	struct kite_wqe_sge g[3];
	struct kite_wqe_ud av;
	struct kite_cqe sc, rc;
	struct kite_cmd_modify_qp o;
	uint64_t st0[KITE_STAT_COUNT], st1[KITE_STAT_COUNT];
	uint64_t rbuf = T_IOVA + 8 * 4096, src = T_IOVA + 4096 - 100;
	struct res r;
	uint16_t idx;
	unsigned i, ncqe;
	bool ok;
	uint8_t m8[8];

	/* The test's own CRC against the standard check value and rxe's seed. */
	tap(~t_crc32(0xffffffff, (const uint8_t *)"123456789", 9) == 0xcbf43926,
	    "test CRC-32 matches the standard check value 0xcbf43926");
	memset(m8, 0xff, 8);
	tap(t_crc32(0xffffffff, m8, 8) == 0xdebb20e3,
	    "CRC state after the masked LRH (8 x 0xff) is 0xdebb20e3, as in rxe");

	eng_setup();
	stats(st0);

	/* GSI -> UD B over loopback: SEND_IMM, 2 SGEs across a page boundary. */
	fill_pattern(src, 200, 0x31, want);
	memset(got, 0xee, sizeof(got));
	memwrite(t_bus(rbuf), got, 1024);
	g[0] = sge(30, E.lkey, rbuf);
	g[1] = sge(400, E.lkey, rbuf + 512);
	post_recv(&E.b, g, 2);
	/* Arm the receive CQ for the next CQE. */
	arm_cq(&E.rcq.c, E.rcq.ci, KITE_CQ_ARM_NEXT, 0);
	eq_drain(&eq1);
	av = av4(E.b.qpn, T_QKEY, MAC);
	g[0] = sge(100, E.lkey, src);
	g[1] = sge(100, E.lkey, src + 100);
	idx = post_send(&E.gsi, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED |
			KITE_WQE_F_SOLICITED, 0x78563412, &av, g, 2, NULL, 0, true);
	ok = tcq_next(&E.scq, &sc);
	if (!tap(ok && cqe_is(&sc, KITE_CQE_OP_REQ, 1, 0) && sc.wqe_idx == idx &&
		 sc.wqe_opcode == KITE_WQE_OP_SEND_IMM,
		 "loopback SEND_IMM GSI->UD: send CQE REQ, qpn 1, wqe_idx %u, wqe_opcode SEND_IMM", idx))
		cqe_diag("send", &sc);
	ok = tcq_next(&E.rcq, &rc);
	if (!tap(ok && cqe_is(&rc, KITE_CQE_OP_RESP_SEND_IMM, E.b.qpn, 0) &&
		 rc.byte_len == 240 && rc.imm_data == 0x78563412 && rc.src_qpn == 1 &&
		 rc.wqe_idx == 0 && !memcmp(rc.smac, MAC, 6) &&
		 rc.flags == (KITE_CQE_F_GRH | KITE_CQE_F_SOLICITED | KITE_CQE_F_IMM |
			      FIELD_PREP(KITE_CQE_F_L3, KITE_NET_ROCE_V2_IPV4)),
		 "receive CQE: RESP_SEND_IMM, byte_len 40+200, imm, src_qpn 1, SMAC, "
		 "flags GRH|SOLICITED|IMM|L3=IPv4"))
		cqe_diag("recv", &rc);
	memread(t_bus(rbuf), got, 30);
	memread(t_bus(rbuf + 512), got + 30, 400);
	memcpy(grh, got, 40);
	tap(!memcmp(grh, zero20, 20), "GRH area: first 20 bytes zero for IPv4");
	tap(grh[20] == 0x45 && grh[21] == 0x28 && be16(grh + 22) == 256 &&
	    be16(grh + 26) == 0x4000 && grh[28] == 64 && grh[29] == 17 &&
	    t_csum(0, grh + 20, 20) == 0 && be32(grh + 32) == 0x0a000001 &&
	    be32(grh + 36) == 0x0a000001,
	    "GRH area: the IPv4 header (TOS 0x28, length 256, DF, TTL 64, UDP, "
	    "checksum, 10.0.0.1 -> 10.0.0.1) in its last 20 bytes");
	tap(!memcmp(got + 40, want, 200), "payload scattered byte for byte after the GRH");
	memread(t_bus(rbuf) + 30, got, 1);
	memread(t_bus(rbuf + 512) + 210, got + 1, 1);
	tap(got[0] == 0xee && got[1] == 0xee, "nothing written past the message in either SGE");
	tap(eq1_count(KITE_EQE_COMPLETION, E.rcq.c.cqn) == 1,
	    "armed receive CQ: one COMPLETION EQE on its EQ");
	stats(st1);
	tap(st1[KITE_STAT_ROCE_TX_PKTS] - st0[KITE_STAT_ROCE_TX_PKTS] == 1 &&
	    st1[KITE_STAT_ROCE_RX_PKTS] - st0[KITE_STAT_ROCE_RX_PKTS] == 1 &&
	    st1[KITE_STAT_ROCE_RX_DROPS] == st0[KITE_STAT_ROCE_RX_DROPS],
	    "ROCE_TX_PKTS +1, ROCE_RX_PKTS +1, no drop");
	need(query_qp(1, &o, &r), &r, "QUERY_QP 1");
	tap(o.sq_psn == T_SQ_PSN + 1, "GSI SQ PSN advanced by one packet (0x%x)", o.sq_psn);

	/*
	 * UD B -> GSI with Q_Key 0x80010000: bit 31 means "the sender's own
	 * Q_Key", B's 0x11111111, which the GSI QP does not accept.
	 */
	memset(got, 0xee, 64);
	memwrite(t_bus(rbuf), got, 64);
	g[0] = sge(64, E.lkey, rbuf);
	post_recv(&E.gsi, g, 1);
	av = av6(1, 0x80010000u, MAC);
	st0[KITE_STAT_ROCE_RX_DROPS] = stat1(KITE_STAT_ROCE_RX_DROPS);
	post_send(&E.b, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "inline data, 20 byte", 20, true);
	clock_step(POLL_STEP_NS);
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == st0[KITE_STAT_ROCE_RX_DROPS] + 1 &&
	    tcq_drain(&E.rcq) == 0,
	    "UD QP sending Q_Key 0x80010000 sends its own Q_Key: the GSI QP drops it");
	/* GSI -> GSI: IPv6, inline, Q_Key 0x80010000, unsignaled. */
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "inline data, 20 byte", 20, true);
	ok = tcq_next(&E.rcq, &rc);
	if (!tap(ok && cqe_is(&rc, KITE_CQE_OP_RESP_SEND, 1, 0) && rc.byte_len == 60 &&
		 rc.src_qpn == 1 && rc.wqe_idx == 0 &&
		 rc.flags == (KITE_CQE_F_GRH | FIELD_PREP(KITE_CQE_F_L3, KITE_NET_ROCE_V2_IPV6)),
		 "IPv6 inline SEND GSI->GSI (Q_Key 0x80010000): RESP_SEND, byte_len 60, L3=IPv6"))
		cqe_diag("recv", &rc);
	memread(t_bus(rbuf), got, 60);
	tap(be32(got) == (6u << 28 | 0xb8u << 20 | 0xabcde) && be16(got + 4) == 8 + 12 + 8 + 20 + 4 &&
	    got[6] == 17 && got[7] == 17 && got[8] == 0xfe && got[9] == 0x80 && got[23] == 2 &&
	    got[24] == 0xfe && got[39] == 2,
	    "GRH area: the IPv6 header (TC 0xb8, flow label 0xabcde, payload 52, UDP, "
	    "hop 17, fe80::2 -> fe80::2)");
	tap(!memcmp(got + 40, "inline data, 20 byte", 20), "inline payload delivered");
	idx = post_send(&E.gsi, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, NULL, 0,
			"x", 1, true);
	ok = tcq_next(&E.scq, &sc);
	tap(ok && cqe_is(&sc, KITE_CQE_OP_REQ, 1, 0) && sc.wqe_idx == idx,
	    "unsignaled WQE wrote no CQE: the next send CQE is the signaled one (%u, want %u)",
	    sc.wqe_idx, idx);
	tap(tcq_drain(&E.rcq) == 0, "no RQ WQE on the GSI QP: nothing received");

	/* VLAN from the address vector; exactly one MTU (1024) of payload. */
	fill_pattern(src, 1024, 0x77, want);
	g[0] = sge(40 + 1024, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	av = av4(E.b.qpn, T_QKEY, MAC);
	av.vlan = KITE_VLAN_VALID | (uint16_t)FIELD_PREP(KITE_VLAN_PCP, 3) | 100;
	g[0] = sge(1024, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, g, 1, NULL, 0, true);
	ok = tcq_next(&E.scq, &sc) && tcq_next(&E.rcq, &rc);
	if (!tap(ok && cqe_is(&sc, KITE_CQE_OP_REQ, E.b.qpn, 0) &&
		 cqe_is(&rc, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0) && rc.byte_len == 1064 &&
		 (rc.flags & KITE_CQE_F_VLAN) && rc.vlan == av.vlan,
		 "1024-byte SEND with VLAN 100 PCP 3: delivered, CQE VLAN flag and tag"))
		cqe_diag("recv", &rc);
	memread(t_bus(rbuf) + 40, got, 1024);
	tap(!memcmp(got, want, 1024), "1024-byte payload delivered byte for byte");

	/* A burst: 16 signaled WQEs (the SQ's depth) in one doorbell. */
	for (i = 0; i < 16; i++) {
		g[0] = sge(16, E.lkey, rbuf + 2048 + 64 * i);
		post_recv(&E.b, g, 1);
	}
	av = av4(E.b.qpn, T_QKEY, MAC);
	g[0] = sge(16, E.lkey, src);
	for (i = 0; i < 16; i++)
		post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, g, 0, NULL, 0,
			  i == 15);
	ncqe = tcq_drain(&E.scq);
	tap(ncqe == 16, "16 WQEs in one doorbell: 16 send CQEs (%u)", ncqe);
	ncqe = tcq_drain(&E.rcq);
	tap(ncqe == 16, "16 zero-length SENDs: 16 receive CQEs (%u)", ncqe);
}

/* Post one send on @q expected to fail with @synd, then check SQE + flush. */
static void send_fails(struct tqp *q, const char *what, uint32_t opw,
		       const struct kite_wqe_ud *av, const struct kite_wqe_sge *g, unsigned n,
		       unsigned synd, uint8_t err_state)
{
	struct kite_cqe c;
	uint16_t idx, idx2;
	bool ok;

	idx = post_send(q, opw | KITE_WQE_F_SIGNALED, 0, av, g, n, NULL, 0, false);
	idx2 = post_send(q, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, av, NULL, 0, "ok", 2,
			 true);
	ok = tcq_next(&E.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, q->qpn, synd) && c.wqe_idx == idx,
		 "%s: REQ_ERR syndrome 0x%x", what, synd))
		cqe_diag("send", &c);
	tap(qp_state(q->qpn) == err_state, "%s: QP in %s", what,
	    err_state == KITE_QPS_SQE ? "SQE" : "ERR");
	ok = tcq_next(&E.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, q->qpn, KITE_SYND_WR_FLUSH) &&
		 c.wqe_idx == idx2, "%s: the next WQE is flushed (WR_FLUSH)", what))
		cqe_diag("send", &c);
	if (err_state == KITE_QPS_SQE)
		tap(tqp_to(q, KITE_QPS_RTS) == KITE_CMD_OK, "%s: SQE to RTS", what);
}

/* Every send-side validation error, on QPs B, C and a new RC QP. */
static void send_errors(const uint8_t *dmac)
{
	struct kite_wqe_sge g[2];
	struct kite_wqe_ud av = av4(E.b.qpn, T_QKEY, dmac);
	struct kite_cqe c;
	struct tqp rc;
	struct res r;
	uint64_t d0, src = T_IOVA;
	bool ok;

	g[0] = sge(16, E.lkey ^ 0x01, src);
	send_fails(&E.b, "bad lkey tag", KITE_WQE_OP_SEND, &av, g, 1, KITE_SYND_LOCAL_PROT,
		   KITE_QPS_SQE);
	g[0] = sge(16, E.lkey, T_IOVA + T_MR_LEN - 8);
	send_fails(&E.b, "SGE past the end of the MR", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	g[0] = sge(16, E.lkey, T_IOVA - 1);
	send_fails(&E.b, "SGE before the start of the MR", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	g[0] = sge(16, E.lkey, src);
	send_fails(&E.c, "lkey of another PD", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	g[0] = sge(1000, E.lkey, src);
	g[1] = sge(25, E.lkey, src + 1000);
	send_fails(&E.b, "1025 bytes > MTU 1024", KITE_WQE_OP_SEND, &av, g, 2,
		   KITE_SYND_LOCAL_LENGTH, KITE_QPS_SQE);
	send_fails(&E.b, "unknown opcode 0x3f", 0x3f, &av, NULL, 0, KITE_SYND_LOCAL_QP_OP,
		   KITE_QPS_SQE);
	send_fails(&E.b, "RDMA_WRITE on a UD QP", KITE_WQE_OP_RDMA_WRITE, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	send_fails(&E.b, "reserved opcode bits", KITE_WQE_OP_SEND | BIT(13), &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	send_fails(&E.b, "9 SGEs", KITE_WQE_OP_SEND | (uint32_t)FIELD_PREP(KITE_WQE_NUM_SGE, 9),
		   &av, NULL, 0, KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av.sgid_index = 5;
	send_fails(&E.b, "AV with an empty source GID", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av4(E.b.qpn, T_QKEY, dmac);
	av.net_type = KITE_NET_ROCE_V2_IPV6;
	send_fails(&E.b, "AV net_type differs from the GID's", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av4(E.b.qpn, T_QKEY, dmac);
	d0 = stat1(KITE_STAT_DMA_ERRORS);
	g[0] = sge(16, E.lkey_phys, NOT_RAM);
	send_fails(&E.b, "DMA MR SGE outside guest RAM", KITE_WQE_OP_SEND, &av, g, 1,
		   KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
	tap(stat1(KITE_STAT_DMA_ERRORS) > d0, "DMA error counted");
	/* A PTE of the MR invalidated behind the device's back. */
	{
		uint64_t pte = pte_get(&E.mr, 2);

		pte_set(&E.mr, 2, 0);
		d0 = stat1(KITE_STAT_DMA_ERRORS);
		g[0] = sge(16, E.lkey, T_IOVA + 2 * 4096);
		send_fails(&E.b, "SGE in a page whose PTE became invalid", KITE_WQE_OP_SEND, &av,
			   g, 1, KITE_SYND_LOCAL_PROT, KITE_QPS_SQE);
		tap(stat1(KITE_STAT_DMA_ERRORS) > d0, "bad PTE counted as a DMA error");
		pte_set(&E.mr, 2, pte);
	}

	/* LOCAL_INV of a key that names no fast-registration MR (RC: QP to ERR). */
	need(tqp_create(&rc, KITE_QPT_RC, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC");
	tqp_rts(&rc);
	g[0] = sge(16, E.lkey, src);
	post_recv(&rc, g, 1);
	send_fails(&rc, "RC LOCAL_INV of key 0", KITE_WQE_OP_LOCAL_INV,
		   NULL, NULL, 0, KITE_SYND_LOCAL_PROT, KITE_QPS_ERR);
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, rc.qpn, KITE_SYND_WR_FLUSH),
	    "RC QP in ERR: its outstanding RQ WQE is flushed");
}

static void g_engine_rx(void)
{
	struct kite_wqe_sge g[2];
	struct kite_wqe_ud av, avc;
	struct kite_cqe c;
	struct tqp rc;
	uint64_t d0, d1;
	uint64_t rbuf = T_IOVA + 8 * 4096;
	struct res r;
	const char *reply = "";
	uint16_t idx;
	bool ok;

	eng_setup();
	av = av4(E.b.qpn, T_QKEY, MAC);
	avc = av4(E.c.qpn, T_QKEY, MAC);


	/* Receive side drops: no RQ WQE, bad Q_Key, bad ICRC. */
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	idx = post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &avc, NULL, 0, "abc", 3,
			true);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0) && c.wqe_idx == idx,
	    "UD SEND to a QP without RQ WQEs completes successfully (unreliable)");
	d1 = stat1(KITE_STAT_ROCE_RX_DROPS);
	tap(d1 == d0 + 1 && tcq_drain(&E.rcq) == 0,
	    "no RQ WQE: dropped, ROCE_RX_DROPS +1 (%" PRIu64 ")", d1 - d0);
	{
		uint64_t rb = T_IOVA + 12 * 4096;
		struct kite_wqe_sge rg = sge(128, E.lkey, rb);

		post_recv(&E.b, &rg, 1);
	}
	av = av4(E.b.qpn, 0x22222222, MAC);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abc", 3, true);
	clock_step(POLL_STEP_NS);
	d0 = d1;
	d1 = stat1(KITE_STAT_ROCE_RX_DROPS);
	tap(d1 == d0 + 1 && tcq_drain(&E.rcq) == 0, "wrong Q_Key: dropped, ROCE_RX_DROPS +1");
	if (!qom_set("fault-icrc", "1", &reply))
		diag("qom-set fault-icrc: %.200s", reply);
	av = av4(E.b.qpn, T_QKEY, MAC);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abc", 3, true);
	clock_step(POLL_STEP_NS);
	d0 = d1;
	d1 = stat1(KITE_STAT_ROCE_RX_DROPS);
	tap(d1 == d0 + 1 && tcq_drain(&E.rcq) == 0,
	    "corrupted ICRC (fault-icrc): dropped, ROCE_RX_DROPS +1");
	/* The posted RQ WQE was not consumed by the drops. */
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0) && c.byte_len == 44 &&
	    c.wqe_idx == (uint16_t)(E.b.rpi - 1),
	    "after the drops a good SEND lands in the RQ WQE that waited");

	/* Receive errors: buffer too small, key without LOCAL_WRITE. */
	g[0] = sge(41, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, E.b.qpn, KITE_SYND_LOCAL_LENGTH),
		 "receive buffer of 41 bytes for 44: RESP_ERR LOCAL_LENGTH"))
		cqe_diag("recv", &c);
	tap(qp_state(E.b.qpn) == KITE_QPS_ERR, "receive error: QP in ERR");
	g[0] = sge(64, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, E.b.qpn, KITE_SYND_WR_FLUSH) &&
	    c.wqe_idx == (uint16_t)(E.b.rpi - 1),
	    "RQ WQE posted in ERR: flushed with WR_FLUSH");
	idx = post_send(&E.b, KITE_WQE_OP_SEND, 0, &avc, NULL, 0, "z", 1, true);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, E.b.qpn, KITE_SYND_WR_FLUSH) && c.wqe_idx == idx,
	    "unsignaled SQ WQE posted in ERR: flushed with a CQE anyway");

	/* Work queues outside guest RAM: error CQEs, DMA errors, no crash. */
	{
		struct kite_cmd_create_qp in;
		uint32_t fq;
		uint64_t dma0 = stat1(KITE_STAT_DMA_ERRORS);

		memset(&in, 0, sizeof(in));
		in.type = KITE_QPT_UD;
		in.pdn = fx_pd;
		in.send_cqn = E.scq.c.cqn;
		in.recv_cqn = E.rcq.c.cqn;
		in.sq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 4) |
				       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 8));
		in.rq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 4) |
				       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6));
		in.sq_pbl.addr = NOT_RAM;
		in.sq_pbl.npages = 1;
		in.sq_pbl.cfg = pbl_cfg(0, 12);
		in.rq_pbl = in.sq_pbl;
		fq = need(run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, &r), &r,
			  "CREATE_QP with queues outside RAM");
		rc.qpn = fq;
		rc.type = KITE_QPT_UD;
		tqp_rts(&rc);
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, fq, 1));
		ok = tcq_next(&E.scq, &c);
		if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, fq, KITE_SYND_LOCAL_QP_OP) &&
			 c.wqe_idx == 0 && qp_state(fq) == KITE_QPS_SQE,
			 "SQ WQE unreadable: REQ_ERR LOCAL_QP_OP with the counter as wqe_idx, SQE"))
			cqe_diag("send", &c);
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, fq, 1));
		av = av4(fq, T_QKEY, MAC);
		post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
		ok = tcq_next(&E.rcq, &c);
		if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, fq, KITE_SYND_LOCAL_QP_OP) &&
			 qp_state(fq) == KITE_QPS_ERR,
			 "RQ WQE unreadable: RESP_ERR LOCAL_QP_OP, QP in ERR"))
			cqe_diag("recv", &c);
		tap(stat1(KITE_STAT_DMA_ERRORS) >= dma0 + 2, "both DMA errors counted");
		av = av4(E.b.qpn, T_QKEY, MAC);
	}

	g[0] = sge(64, E.lkey_ro, E.ro_iova);
	need(tqp_create(&rc, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD D");
	tqp_rts(&rc);
	post_recv(&rc, g, 1);
	av = av4(rc.qpn, T_QKEY, MAC);
	post_send(&E.gsi, KITE_WQE_OP_SEND, 0, &av, NULL, 0, "abcd", 4, true);
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, rc.qpn, KITE_SYND_LOCAL_ACCESS),
		 "receive into a key without LOCAL_WRITE: RESP_ERR LOCAL_ACCESS"))
		cqe_diag("recv", &c);

}

static bool wire_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int t;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	wire_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (wire_fd < 0 || bind(wire_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(wire_fd, (struct sockaddr *)&a, &l))
		return false;
	wire_test_port = ntohs(a.sin_port);
	/* A free port for QEMU's end. */
	t = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_port = 0;
	l = sizeof(a);
	if (t < 0 || bind(t, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(t, (struct sockaddr *)&a, &l)) {
		if (t >= 0)
			close(t);
		return false;
	}
	wire_qemu_port = ntohs(a.sin_port);
	close(t);
	return true;
}

/* A frame QEMU sent on the wire, waiting (virtual and real time) for it. */
static ssize_t wire_recv(uint8_t *buf, size_t len)
{
	int i;

	for (i = 0; i < 50; i++) {
		ssize_t n = recv(wire_fd, buf, len, MSG_DONTWAIT);

		if (n >= 0)
			return n;
		clock_step(POLL_STEP_NS);
		usleep(2000);
	}
	return -1;
}

static void wire_send(const uint8_t *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)wire_qemu_port);
	if (sendto(wire_fd, buf, len, 0, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len)
		diag("sendto: %s", strerror(errno));
}

/* Wait until QEMU has taken a frame off the wire. */
static void wire_settle(void)
{
	int i;

	for (i = 0; i < 10; i++) {
		usleep(5000);
		clock_step(POLL_STEP_NS);
	}
}

static uint16_t t_sport(uint32_t fl, uint32_t a, uint32_t b)
{
	if (!fl) {
		uint64_t v = (uint64_t)a * b;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = v & 0xfffff;
	}
	return (uint16_t)(((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | 0xc000);
}

/*
 * A UD SEND from QP B to a peer MAC over IPv4 (37 bytes, SE, no flow
 * label), read off the wire into @f; with @check, every header field is
 * checked. Returns the frame length or -1.
 */
static ssize_t tx_ipv4(uint8_t *f, size_t size, uint8_t *want, bool check)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint64_t src = T_IOVA + 3 * 4096;
	struct kite_wqe_sge g[1];
	struct kite_wqe_ud av;
	struct kite_cqe c;
	size_t ib;
	ssize_t n;
	bool ok;

	fill_pattern(src, 37, 0x10, want);
	av = av4(0x000abc, 0x01020304, peer);
	av.flow_label = 0;
	g[0] = sge(37, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED | KITE_WQE_F_SOLICITED, 0, &av,
		  g, 1, NULL, 0, true);
	n = wire_recv(f, size);
	ok = tcq_next(&E.scq, &c);
	if (!check)
		return n;
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0), "send to a peer MAC: send CQE");
	/* 14 + 20 + 8 + 12 + 8 + 37 + 3 pad + 4 */
	if (!tap(n == 106, "IPv4 frame on the wire, 106 bytes (%zd)", n))
		return -1;
	tap(!memcmp(f, peer, 6) && !memcmp(f + 6, MAC, 6) && be16(f + 12) == 0x0800,
	    "Ethernet: dmac from the AV, smac from the GID entry, IPv4");
	tap(f[14] == 0x45 && f[15] == 0x28 && be16(f + 16) == 92 && be16(f + 20) == 0x4000 &&
	    f[22] == 64 && f[23] == 17 && t_csum(0, f + 14, 20) == 0 &&
	    be32(f + 26) == 0x0a000001 && be32(f + 30) == 0x0a000001,
	    "IPv4: TOS, length 92, DF, TTL, UDP, valid checksum, addresses");
	tap(be16(f + 34) == t_sport(0, E.b.qpn, 0xabc) && be16(f + 36) == 4791 &&
	    be16(f + 38) == 72 && be16(f + 40) == 0,
	    "UDP: source port 0x%04x from the QPNs' flow label, dport 4791, length 72, "
	    "checksum 0", be16(f + 34));
	ib = 42;
	tap(f[ib] == 0x64 && f[ib + 1] == (0x80 | 3 << 4) && be16(f + ib + 2) == 0xffff &&
	    f[ib + 4] == 0 && be24(f + ib + 5) == 0xabc && f[ib + 8] == 0 &&
	    be24(f + ib + 9) == T_SQ_PSN,
	    "BTH: UD SEND_ONLY, SE, pad 3, TVer 0, P_Key 0xffff, dest QPN, PSN 0x%x",
	    be24(f + ib + 9));
	tap(be32(f + ib + 12) == 0x01020304 && f[ib + 16] == 0 &&
	    be24(f + ib + 17) == E.b.qpn, "DETH: Q_Key from the WQE, source QPN");
	tap(!memcmp(f + ib + 20, want, 37) && !f[ib + 57] && !f[ib + 58] && !f[ib + 59],
	    "payload and zero pad");
	tap((uint32_t)(f[102] | f[103] << 8 | f[104] << 16 | (uint32_t)f[105] << 24) ==
	    t_icrc(f + 14, 88, false), "ICRC matches the test's own computation");

	return n;
}

/* The same over IPv6 with a VLAN tag and immediate data (8 bytes). */
static ssize_t tx_ipv6(uint8_t *f, size_t size, uint8_t *want, bool check)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint64_t src = T_IOVA + 3 * 4096;
	struct kite_wqe_sge g[1];
	struct kite_wqe_ud av;
	struct kite_cqe c;
	size_t ib;
	ssize_t n;

	fill_pattern(src, 8, 0x60, want);
	av = av6(0x000def, 0x01020304, peer);
	av.vlan = KITE_VLAN_VALID | 42;
	g[0] = sge(8, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED, 0xddccbbaa, &av, g, 1, NULL,
		  0, true);
	n = wire_recv(f, size);
	tcq_next(&E.scq, &c);
	if (!check)
		return n;
	/* 18 + 40 + 8 + 12 + 8 + 4 + 8 + 4 */
	if (!tap(n == 102, "IPv6 + VLAN frame on the wire, 102 bytes (%zd)", n))
		return -1;
	tap(be16(f + 12) == 0x8100 && be16(f + 14) == 42 && be16(f + 16) == 0x86dd,
	    "802.1Q tag VID 42, IPv6");
	tap(be32(f + 18) == (6u << 28 | 0xb8u << 20 | 0xabcde) && be16(f + 22) == 44 &&
	    f[24] == 17 && f[25] == 17 && f[26] == 0xfe && f[41] == 2 && f[42] == 0xfe &&
	    f[57] == 2, "IPv6: TC, flow label, payload length 44, UDP, hop limit, addresses");
	{
		uint32_t sum = 0;
		size_t i;

		for (i = 0; i < 32; i += 2)
			sum += be16(f + 26 + i);
		sum += 17 + 44;
		tap(be16(f + 58) == t_sport(0xabcde, 0, 0) && be16(f + 60) == 4791 &&
		    be16(f + 64) != 0 && t_csum(sum, f + 58, 44) == 0,
		    "UDP: source port from the flow label, valid IPv6 UDP checksum");
	}
	ib = 66;
	tap(f[ib] == 0x65 && be24(f + ib + 5) == 0xdef && be32(f + ib + 20) == 0xaabbccdd &&
	    !memcmp(f + ib + 24, want, 8), "BTH SEND_ONLY_WITH_IMM, ImmDt as in the WQE, payload");
	tap((uint32_t)(f[98] | f[99] << 8 | f[100] << 16 | (uint32_t)f[101] << 24) ==
	    t_icrc(f + 18, 80, true), "IPv6 ICRC matches the test's own computation");
	tap(be24(f + ib + 9) == T_SQ_PSN + 1, "the second packet of QP B has PSN + 1 (0x%x)",
	    be24(f + ib + 9));
	return n;
}

static void g_engine_tx(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t f[2048], want[128];

	eng_setup();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	if (tx_ipv4(f, sizeof(f), want, true) < 0 || tx_ipv6(f, sizeof(f), want, true) < 0)
		return;
	send_errors(peer);
}

static void g_engine_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t f[2048], inj[2048];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	uint64_t rbuf = T_IOVA + 8 * 4096, d0;
	uint8_t want[128], got[128];
	ssize_t n;
	size_t ib = 42, iblen, i;
	bool ok;

	eng_setup();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);

	n = tx_ipv4(f, sizeof(f), want, false);
	if (!tap(n == 106, "IPv4 frame captured from the wire (%zd bytes)", n))
		return;
	/* The same frame, addressed to us and to QP B, is received. */
	g[0] = sge(128, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	memcpy(inj, f, (size_t)n);
	memcpy(inj, MAC, 6);
	memcpy(inj + 6, peer, 6);
	put32(inj + ib + 4, E.b.qpn);
	put32(inj + ib + 12, T_QKEY);
	put32(inj + ib + 16, 0x000777);
	iblen = (size_t)n - ib;
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + iblen - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	wire_send(inj, (size_t)n);
	wire_settle();
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0) && c.byte_len == 77 &&
		 c.src_qpn == 0x777 && !memcmp(c.smac, peer, 6) &&
		 (c.flags & KITE_CQE_F_SOLICITED),
		 "frame from the wire with the test's ICRC: RESP_SEND, byte_len 77, "
		 "src_qpn, peer SMAC, SE"))
		cqe_diag("recv", &c);
	memread(t_bus(rbuf), got, 40 + 37);
	tap(!memcmp(got + 20, inj + 14, 20) && !memcmp(got + 40, want, 37),
	    "received GRH area holds the frame's IPv4 header; payload intact");
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0, "no drop");

	/* Corrupted ICRC from the wire: dropped and counted. */
	post_recv(&E.b, g, 1);
	inj[n - 1] ^= 0x80;
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1 && tcq_drain(&E.rcq) == 0,
	    "corrupted ICRC from the wire: dropped, ROCE_RX_DROPS +1");
	inj[n - 1] ^= 0x80;
	/* A payload byte flipped (ICRC covers it). */
	inj[ib + 25] ^= 1;
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 2 && tcq_drain(&E.rcq) == 0,
	    "payload corrupted in flight: ICRC mismatch, dropped");
	inj[ib + 25] ^= 1;
	/* TTL and TOS changed by routers: masked, still accepted. */
	inj[14 + 8] = 3;
	inj[14 + 1] = 0x2a;
	put16(inj + 14 + 10, 0);
	put16(inj + 14 + 10, t_csum(0, inj + 14, 20));
	wire_send(inj, (size_t)n);
	wire_settle();
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, E.b.qpn, 0),
	    "TTL/TOS rewritten in flight: the ICRC still matches (masked fields)");

	n = tx_ipv6(f, sizeof(f), want, false);
	if (!tap(n == 102, "IPv6 + VLAN frame captured from the wire (%zd bytes)", n))
		return;
	ib = 66;
	/* Inject it back to QP B with the VLAN: the CQE reports the tag. */
	memcpy(inj, f, (size_t)n);
	memcpy(inj, MAC, 6);
	memcpy(inj + 6, peer, 6);
	put32(inj + ib + 4, E.b.qpn);
	put32(inj + ib + 12, T_QKEY);
	{
		uint32_t ic = t_icrc(inj + 18, 80, true);

		memcpy(inj + n - 4, &ic, 4);
	}
	g[0] = sge(128, E.lkey, rbuf);
	post_recv(&E.b, g, 1);
	wire_send(inj, (size_t)n);
	wire_settle();
	ok = tcq_next(&E.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, E.b.qpn, 0) && c.byte_len == 48 &&
		 c.imm_data == 0xddccbbaa && (c.flags & KITE_CQE_F_VLAN) &&
		 c.vlan == (KITE_VLAN_VALID | 42) &&
		 FIELD_GET(KITE_CQE_F_L3, c.flags) == KITE_NET_ROCE_V2_IPV6,
		 "IPv6 + VLAN frame from the wire: RESP_SEND_IMM, VLAN 42, L3=IPv6"))
		cqe_diag("recv", &c);
	memread(t_bus(rbuf), got, 48);
	tap(!memcmp(got, inj + 18, 40) && !memcmp(got + 40, want, 8),
	    "GRH area holds the IPv6 header; payload intact");

	/* Truncated and mangled frames: dropped and counted, never a crash. */
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	/* Not 0 bytes: QEMU's dgram backend takes that for a closed peer. */
	for (i = 1; i < (size_t)n; i++) {
		wire_send(inj, i);
		if ((i & 15) == 15)
			wire_settle();
	}
	for (i = 12; i < (size_t)n; i++) {
		inj[i] ^= 0xa5;
		wire_send(inj, (size_t)n);
		inj[i] ^= 0xa5;
		if ((i & 15) == 15)
			wire_settle();
	}
	wire_settle();
	{
		struct res r;

		tap(nop(&r) == KITE_CMD_OK && stat1(KITE_STAT_ROCE_RX_DROPS) > d0 &&
		    tcq_drain(&E.rcq) == 0,
		    "truncated and mangled frames: dropped (ROCE_RX_DROPS +%" PRIu64 "), "
		    "no CQE, device alive", stat1(KITE_STAT_ROCE_RX_DROPS) - d0);
	}
}

/* ------------------------------------------------------------------ */
/* RC transport                                                        */
/* ------------------------------------------------------------------ */

#define T_RC_PSN	0xfffffeu	/* both directions: PSNs wrap at once */

struct rc_fixture {
	uint32_t rkey, rkey_nw;		/* all remote access; no REMOTE_WRITE */
};
static struct rc_fixture R;

struct rcpair {
	struct tcq scq, rcq;
	struct tqp a, b;
};

static void rc_keys(void)
{
	struct res r;

	R.rkey = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			     KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC, 0x44, 0,
			     T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR (remote access)");
	R.rkey_nw = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ, 0x45,
				0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
			 "REG_MR (no REMOTE_WRITE)");
}

/* Bring RC QP @q to RTS connected to @dqpn at @dmac, with max_rd_atomic @rd. */
static void rc_rts_rd(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t timeout,
		      uint8_t retry, uint8_t rnr_retry, uint8_t rd)
{
	struct kite_cmd_modify_qp a = attrs_valid(q->qpn);
	struct res r;

	a.max_rd_atomic = rd;
	a.access |= KITE_ACCESS_REMOTE_ATOMIC;
	a.dest_qpn = dqpn;
	memcpy(a.dmac, dmac, 6);
	a.dgid[15] = 1;
	a.rq_psn = a.sq_psn = T_RC_PSN;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	need(modify_qp(&a, 0x0001d, KITE_QPS_INIT, &r), &r, "RC RESET to INIT");
	need(modify_qp(&a, 0x1a8c1, KITE_QPS_RTR, &r), &r, "RC INIT to RTR");
	need(modify_qp(&a, 0x05701, KITE_QPS_RTS, &r), &r, "RC RTR to RTS");
}

static void rc_rts(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t timeout,
		   uint8_t retry, uint8_t rnr_retry)
{
	rc_rts_rd(q, dqpn, dmac, timeout, retry, rnr_retry, 4);
}

static void rc_pair(struct rcpair *p, const uint8_t *dmac, uint8_t timeout, uint8_t retry,
		    uint8_t rnr_retry)
{
	struct res r;

	tcq_make(&p->scq, 6);
	tcq_make(&p->rcq, 6);
	need(tqp_create(&p->a, KITE_QPT_RC, fx_pd, p->scq.c.cqn, p->rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create(&p->b, KITE_QPT_RC, fx_pd, p->scq.c.cqn, p->rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC B");
	rc_rts(&p->a, p->b.qpn, dmac, timeout, retry, rnr_retry);
	rc_rts(&p->b, p->a.qpn, MAC, timeout, retry, rnr_retry);
}

/* Write an RC send WQE without ringing the doorbell; returns its wqe_idx. */
static uint16_t write_rc(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t va, uint32_t rkey,
			 uint64_t swap, uint64_t cmp, const struct kite_wqe_sge *g, unsigned n)
{
	uint8_t w[256];
	struct kite_wqe_ctrl c;
	unsigned op = opw & 0xff, off = 16;
	uint16_t idx = (uint16_t)q->spi;

	memset(w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.opcode = opw | (uint32_t)FIELD_PREP(KITE_WQE_NUM_SGE, n);
	c.imm_data = imm;
	c.wqe_idx = idx;
	memcpy(w, &c, 16);
	if (op >= KITE_WQE_OP_RDMA_WRITE && op <= KITE_WQE_OP_ATOMIC_FA) {
		struct kite_wqe_raddr ra = { .remote_addr = va, .rkey = rkey };

		memcpy(w + 16, &ra, 16);
		off = 32;
	}
	if (op == KITE_WQE_OP_ATOMIC_CS || op == KITE_WQE_OP_ATOMIC_FA) {
		struct kite_wqe_atomic at = { .swap_add = swap, .compare = cmp };

		memcpy(w + 32, &at, 16);
		off = 48;
	}
	memcpy(w + off, g, 16 * n);
	memwrite(q->sq.data + ((uint64_t)(q->spi & ((1u << q->slog) - 1)) << q->sshift),
		 w, 1u << q->sshift);
	q->spi++;
	return idx;
}

static void ring_sq(struct tqp *q)
{
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, q->qpn, q->spi));
}

/* An RC send WQE, doorbell rung; returns its wqe_idx. */
static uint16_t post_rc(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t va, uint32_t rkey,
			uint64_t swap, uint64_t cmp, const struct kite_wqe_sge *g, unsigned n)
{
	uint16_t idx = write_rc(q, opw, imm, va, rkey, swap, cmp, g, n);

	ring_sq(q);
	return idx;
}

/* Let @ns of virtual time pass in steps, so timers and bottom halves alternate. */
static void run_for(uint64_t ns)
{
	uint64_t t;

	for (t = 0; t < ns; t += 100000)
		clock_step(100000);
}

static bool mem_eq(uint64_t iova, const uint8_t *want, uint32_t len)
{
	uint8_t *got = malloc(len);
	bool eq;

	if (!got)
		abort();
	memread(t_bus(iova), got, len);
	eq = !memcmp(got, want, len);
	free(got);
	return eq;
}

static uint64_t mem64(uint64_t iova)
{
	uint64_t v;

	memread(t_bus(iova), &v, 8);
	return v;
}

static void set64(uint64_t iova, uint64_t v)
{
	memwrite(t_bus(iova), &v, 8);
}

static bool req_ok(struct tcq *q, uint32_t qpn, uint16_t idx, unsigned op, uint32_t len)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c) && cqe_is(&c, KITE_CQE_OP_REQ, qpn, 0) && c.wqe_idx == idx &&
		  c.wqe_opcode == op && c.byte_len == len;

	if (!ok)
		cqe_diag("send", &c);
	return ok;
}

#define SRC	(T_IOVA + 0)
#define DST	(T_IOVA + 16 * 1024)
#define RBUF	(T_IOVA + 32 * 1024)

/* A REG_MR WQE; returns its wqe_idx. */
static uint16_t post_reg_mr(struct tqp *q, uint64_t iova, uint64_t len, uint32_t key,
			    uint32_t access, uint64_t pbl, uint32_t npages)
{
	uint8_t w[256];
	struct kite_wqe_ctrl c;
	struct kite_wqe_reg_mr m;
	uint16_t idx = (uint16_t)q->spi;

	memset(w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_WQE_OP_REG_MR | KITE_WQE_F_SIGNALED;
	c.wqe_idx = idx;
	memset(&m, 0, sizeof(m));
	m.iova = iova;
	m.length = len;
	m.key = key;
	m.access = access;
	m.pbl_addr = pbl;
	m.npages = npages;
	m.page_shift = 12;
	memcpy(w, &c, 16);
	memcpy(w + 16, &m, sizeof(m));
	memwrite(q->sq.data + ((uint64_t)(q->spi & ((1u << q->slog) - 1)) << q->sshift),
		 w, 1u << q->sshift);
	q->spi++;
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, q->qpn, q->spi));
	return idx;
}

/*
 * Fast registration on B (REG_MR WQE over E.mr's pages), a WRITE from A
 * through the new rkey, SEND_WITH_INV from A invalidating it, and a WRITE
 * that then fails.
 */
static void rc_fast_reg(struct rcpair *P)
{
	static uint8_t want[2000];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct res r;
	uint32_t fkey, key;
	uint16_t idx;
	bool ok;

	fkey = need(alloc_mr(fx_pd, 16, 0x10, &r), &r, "ALLOC_MR (16 pages)");
	key = (fkey & ~0xffu) | 0x99;
	/* E.mr is a level-1 list of 16 pages: reuse it as the REG_MR list. */
	idx = post_reg_mr(&P->b, 0x5000000000ULL, 8 * 4096, key,
			  KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE, E.mr.pbl.addr, 8);
	tap(req_ok(&P->scq, P->b.qpn, idx, KITE_WQE_OP_REG_MR, 0),
	    "REG_MR WQE on RC QP B: REQ CQE");
	fill_pattern(SRC, 2000, 0x99, want);
	g[0] = sge(2000, E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0,
		      0x5000000000ULL + 4096 + 8, key, 0, 0, g, 1);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0) &&
	    mem_eq(T_IOVA - 0x100 + 4096 + 8, want, 2000),
	    "WRITE through the fast-registered rkey lands in the MR's second page");
	/* SEND_WITH_INV from A invalidates B's key. */
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P->b, g, 1);
	g[0] = sge(10, E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_SEND_INV | KITE_WQE_F_SIGNALED, key, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P->scq, P->a.qpn, idx, KITE_WQE_OP_SEND_INV, 0), "SEND_INV: REQ CQE");
	ok = tcq_next(&P->rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, P->b.qpn, 0) && c.byte_len == 10 &&
		 c.inv_rkey == key && (c.flags & KITE_CQE_F_INV),
		 "SEND_INV: RESP_SEND_INV, inv_rkey = the key, INV flag"))
		cqe_diag("recv", &c);
	g[0] = sge(16, E.lkey, SRC);
	idx = post_rc(&P->a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0,
		      0x5000000000ULL, key, 0, 0, g, 1);
	ok = tcq_next(&P->scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P->a.qpn, KITE_SYND_REMOTE_ACCESS) &&
	    c.wqe_idx == idx, "WRITE through the invalidated rkey: REMOTE_ACCESS");
	/* The REG_MR WQE changed the tag; the allocation key still frees it. */
	cmd_obj(KITE_CMD_DEREG_MR, (fkey & ~0xffu) | 0x42, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of the fast-reg MR with a third tag -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, fkey, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the fast-reg MR by its allocation key after REG_MR retagged it");
	cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR again by its current key -> E_OBJECT");
}

static void g_rc(void)
{
	static uint8_t want[6000];
	struct kite_wqe_sge g[3];
	struct kite_cqe c;
	struct kite_cmd_modify_qp o;
	struct rcpair P;
	struct res r;
	uint16_t idx;
	bool ok;

	eng_setup();
	rc_keys();
	rc_pair(&P, MAC, 14, 7, 6);

	/* SEND, one packet. */
	fill_pattern(SRC, 100, 0x10, want);
	g[0] = sge(200, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED | KITE_WQE_F_SOLICITED, 0, 0,
		      0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0),
	    "RC SEND 100 bytes over loopback: REQ CQE after the ACK");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 100 &&
		 c.wqe_idx == 0 && c.flags == KITE_CQE_F_SOLICITED,
		 "RC receive CQE: RESP_SEND, byte_len 100, SOLICITED, no GRH"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 100), "RC SEND payload byte for byte");

	/* SEND 5000 bytes from 3 SGEs into 2: five packets at MTU 1024. */
	fill_pattern(SRC, 5000, 0x22, want);
	g[0] = sge(3000, E.lkey, RBUF);
	g[1] = sge(3000, E.lkey, RBUF + 4000);
	post_recv(&P.b, g, 2);
	g[0] = sge(1000, E.lkey, SRC);
	g[1] = sge(2500, E.lkey, SRC + 1000);
	g[2] = sge(1500, E.lkey, SRC + 3500);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 3);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "RC SEND 5000 bytes: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 5000 &&
		 c.wqe_idx == 1, "RC multi-packet SEND: one receive CQE, byte_len 5000"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 3000) && mem_eq(RBUF + 4000, want + 3000, 2000),
	    "5000-byte SEND scattered byte for byte across the two receive SGEs");
	need(query_qp(P.a.qpn, &o, &r), &r, "QUERY_QP A");
	tap(o.sq_psn == ((T_RC_PSN + 6) & 0xffffff),
	    "A's SQ PSN advanced by 1 + 5 packets, wrapping at 2^24 (0x%x)", o.sq_psn);

	/* SEND_WITH_IMM, inline-free, zero SGEs beyond one. */
	fill_pattern(SRC, 1500, 0x33, want);
	g[0] = sge(2048, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_IMM | KITE_WQE_F_SIGNALED, 0xdeadbeef, 0, 0, 0, 0,
		      g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0), "RC SEND_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, P.b.qpn, 0) && c.byte_len == 1500 &&
		 c.imm_data == 0xdeadbeef && (c.flags & KITE_CQE_F_IMM),
		 "RC SEND_IMM (2 packets): RESP_SEND_IMM, byte_len 1500, imm, IMM flag"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 1500), "SEND_IMM payload intact");

	/* RDMA WRITE, 3000 bytes: no receive CQE. */
	fill_pattern(SRC, 3000, 0x44, want);
	g[0] = sge(3000, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, DST, R.rkey, 0, 0,
		      g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0), "RC WRITE 3000: REQ CQE");
	tap(mem_eq(DST, want, 3000), "RC WRITE: 3000 bytes at the remote address");
	tap(tcq_drain(&P.rcq) == 0, "RC WRITE: no receive CQE");

	/* RDMA WRITE_WITH_IMM consumes an RQ WQE. */
	fill_pattern(SRC, 2100, 0x55, want);
	g[0] = sge(16, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(2100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE_IMM | KITE_WQE_F_SIGNALED, 0x01020304,
		      DST + 100, R.rkey, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0),
	    "RC WRITE_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, P.b.qpn, 0) &&
		 c.byte_len == 2100 && c.imm_data == 0x01020304 && (c.flags & KITE_CQE_F_IMM),
		 "RC WRITE_IMM: RESP_WRITE_IMM, byte_len 2100, imm"))
		cqe_diag("recv", &c);
	tap(mem_eq(DST + 100, want, 2100), "RC WRITE_IMM data at the remote address");

	/* RDMA READ, 4000 bytes into two SGEs. */
	fill_pattern(DST, 4000, 0x66, want);
	g[0] = sge(1500, E.lkey, RBUF);
	g[1] = sge(2500, E.lkey, RBUF + 2000);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_READ, 0, DST, R.rkey, 0, 0, g, 2);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_READ | KITE_WQE_F_SIGNALED, 0, DST, R.rkey, 0, 0,
		      g, 2);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_READ, 4000),
	    "RC READ 4000 (twice, first unsignaled): one REQ CQE, byte_len 4000");
	tap(mem_eq(RBUF, want, 1500) && mem_eq(RBUF + 2000, want + 1500, 2500),
	    "RC READ: data byte for byte in the local SGEs");

	/* Atomics. */
	set64(DST + 8, 0x1111111111111111ULL);
	set64(RBUF, 0);
	g[0] = sge(8, E.lkey, RBUF);
	idx = post_rc(&P.a, KITE_WQE_OP_ATOMIC_CS | KITE_WQE_F_SIGNALED, 0, DST + 8, R.rkey,
		      0x2222222222222222ULL, 0x1111111111111111ULL, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_CS, 8), "CMP_SWP: REQ CQE, byte_len 8");
	tap(mem64(DST + 8) == 0x2222222222222222ULL && mem64(RBUF) == 0x1111111111111111ULL,
	    "CMP_SWP equal: swapped, original returned");
	idx = post_rc(&P.a, KITE_WQE_OP_ATOMIC_CS | KITE_WQE_F_SIGNALED, 0, DST + 8, R.rkey,
		      0x3333333333333333ULL, 0x1111111111111111ULL, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_CS, 8) &&
	    mem64(DST + 8) == 0x2222222222222222ULL && mem64(RBUF) == 0x2222222222222222ULL,
	    "CMP_SWP not equal: unchanged, original returned");
	idx = post_rc(&P.a, KITE_WQE_OP_ATOMIC_FA | KITE_WQE_F_SIGNALED, 0, DST + 8, R.rkey,
		      5, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_ATOMIC_FA, 8) &&
	    mem64(DST + 8) == 0x2222222222222227ULL && mem64(RBUF) == 0x2222222222222222ULL,
	    "FETCH_ADD 5: added, original returned");

	/* RNR: no RQ WQE, then one posted; min_rnr_timer 12 = 0.64 ms. */
	fill_pattern(SRC, 64, 0x77, want);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	clock_step(100000);
	tap(tcq_drain(&P.scq) == 0 && qp_state(P.a.qpn) == KITE_QPS_RTS,
	    "SEND without an RQ WQE: RNR NAK, no CQE yet, A still RTS");
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	run_for(1000000);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0),
	    "RQ WQE posted: the SEND completes after the RNR retry");
	ok = tcq_next(&P.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 64 &&
	    mem_eq(RBUF, want, 64), "RNR-retried SEND delivered");

	rc_fast_reg(&P);
}

/* Requester errors: a fresh pair each, A and B to ERR, flushes. */
static void rc_access_err(const char *what, uint64_t va, uint32_t rkey, unsigned op)
{
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx, idx2;
	bool ok;

	rc_pair(&P, MAC, 14, 7, 6);
	g[0] = sge(op == KITE_WQE_OP_ATOMIC_FA ? 8 : 2000, E.lkey, SRC);
	idx = post_rc(&P.a, op | KITE_WQE_F_SIGNALED, 0, va, rkey, 1, 0, g, 1);
	idx2 = post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_REMOTE_ACCESS) &&
		 c.wqe_idx == idx && c.wqe_opcode == op,
		 "%s: requester REQ_ERR REMOTE_ACCESS", what))
		cqe_diag("send", &c);
	ok = tcq_next(&P.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_WR_FLUSH) && c.wqe_idx == idx2,
	    "%s: the next WQE flushed", what);
	tap(qp_state(P.a.qpn) == KITE_QPS_ERR && qp_state(P.b.qpn) == KITE_QPS_ERR,
	    "%s: requester and responder QPs in ERR", what);
}

static void g_rc_err(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx, idx2;
	bool ok;

	eng_setup();
	rc_keys();
	rc_access_err("WRITE with a bad R_Key", DST, R.rkey ^ 0x80, KITE_WQE_OP_RDMA_WRITE);
	rc_access_err("WRITE past the MR's end", T_IOVA + T_MR_LEN - 1000, R.rkey,
		      KITE_WQE_OP_RDMA_WRITE);
	rc_access_err("WRITE to an MR without REMOTE_WRITE", DST, R.rkey_nw,
		      KITE_WQE_OP_RDMA_WRITE);
	rc_access_err("READ with a bad R_Key", DST, R.rkey ^ 0x100, KITE_WQE_OP_RDMA_READ);
	rc_access_err("FETCH_ADD without REMOTE_ATOMIC", DST, R.rkey_nw, KITE_WQE_OP_ATOMIC_FA);

	/* A receive WQE too small: invalid request for the requester. */
	rc_pair(&P, MAC, 14, 7, 6);
	g[0] = sge(100, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_REMOTE_INVAL_REQ) &&
		 c.wqe_idx == idx, "SEND 1500 into a 100-byte RQ WQE: REQ_ERR REMOTE_INVAL_REQ"))
		cqe_diag("send", &c);
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, P.b.qpn, KITE_SYND_LOCAL_LENGTH) &&
		 c.wqe_idx == 0, "responder: RESP_ERR LOCAL_LENGTH for the RQ WQE"))
		cqe_diag("recv", &c);
	tap(qp_state(P.a.qpn) == KITE_QPS_ERR && qp_state(P.b.qpn) == KITE_QPS_ERR,
	    "too-small RQ WQE: both QPs in ERR");

	/* RNR retries exhausted: rnr_retry 1. */
	rc_pair(&P, MAC, 14, 7, 1);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(5000000);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_RNR_RETRY_EXC) &&
		 c.wqe_idx == idx, "RNR retry 1, no RQ WQE: RNR_RETRY_EXC"))
		cqe_diag("send", &c);
	tap(qp_state(P.a.qpn) == KITE_QPS_ERR && qp_state(P.b.qpn) == KITE_QPS_RTS,
	    "RNR_RETRY_EXC: requester in ERR, responder unaffected");

	/* Link down, peer MAC: nothing answers; timeout 8 (1 ms), retry 2. */
	rc_pair(&P, peer, 8, 2, 6);
	qmp_connect();
	tap(qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":false}}", NULL),
	    "QMP set_link k down");
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	idx2 = post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	tap(tcq_drain(&P.scq) == 0, "link down: no CQE after 2 ms (2 of 3 tries)");
	run_for(3000000);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_RETRY_EXC) &&
		 c.wqe_idx == idx, "link down: RETRY_EXC after 1 + 2 tries"))
		cqe_diag("send", &c);
	ok = tcq_next(&P.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.a.qpn, KITE_SYND_WR_FLUSH) &&
	    c.wqe_idx == idx2 && qp_state(P.a.qpn) == KITE_QPS_ERR,
	    "link down: the next WQE flushed, QP in ERR");
	qmp("{\"execute\":\"set_link\",\"arguments\":{\"name\":\"k\",\"up\":true}}", NULL);
}

/* The wire: QP A talks to the test's socket (QPN 0x77 at the peer MAC). */
#define W_PEER_QPN	0x77

/*
 * Ethernet on, two CQs and RC QP @q in RTS facing the test wire's peer
 * (W_PEER_QPN at @peer), timeout 14, retry 7, rnr_retry 6.
 */
static void rc_wire_qp(struct tqp *q, struct tcq *scq, struct tcq *rcq, const uint8_t *peer)
{
	struct res r;

	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	tcq_make(scq, 6);
	tcq_make(rcq, 6);
	need(tqp_create(q, KITE_QPT_RC, fx_pd, scq->c.cqn, rcq->c.cqn, 0, &r), &r, "CREATE_QP RC");
	rc_rts(q, W_PEER_QPN, peer, 14, 7, 6);
}

/* Build an IPv4 RoCEv2 RC frame from the peer to us; returns its length. */
static size_t w_frame(uint8_t *f, uint8_t opcode, uint32_t dqpn, uint32_t psn, bool ackreq,
		      const uint8_t *ext, size_t ext_len, const uint8_t *pl, size_t len)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	size_t pad = -len & 3, iblen = 12 + ext_len + len + pad + 4, n;
	uint32_t ic;


	memset(f, 0, 14 + 28 + iblen);
	memcpy(f, MAC, 6);
	memcpy(f + 6, peer, 6);
	put16(f + 12, 0x0800);
	f[14] = 0x45;
	put16(f + 16, (uint16_t)(20 + 8 + iblen));
	put16(f + 20, 0x4000);
	f[22] = 64;
	f[23] = 17;
	put32(f + 26, 0x0a000002);
	put32(f + 30, 0x0a000001);
	put16(f + 24, t_csum(0, f + 14, 20));
	put16(f + 34, 0xc123);
	put16(f + 36, 4791);
	put16(f + 38, (uint16_t)(8 + iblen));
	f[42] = opcode;
	f[43] = (uint8_t)(pad << 4);
	put16(f + 44, 0xffff);
	put32(f + 46, dqpn);
	put32(f + 50, (psn & 0xffffff) | (ackreq ? 0x80000000u : 0));
	memcpy(f + 54, ext, ext_len);
	memcpy(f + 54 + ext_len, pl, len);
	n = 54 + ext_len + len + pad;
	ic = t_icrc(f + 14, n - 14, false);
	memcpy(f + n, &ic, 4);
	return n + 4;
}

/* Frame @f of @n bytes is IPv4 RoCEv2 (UDP destination port 4791). */
static bool w_roce(const uint8_t *f, ssize_t n)
{
	return n >= 54 && be16(f + 12) == 0x0800 && be16(f + 36) == 4791;
}

/* The next RoCEv2 frame from QEMU: its BTH offset is 42 (IPv4, no VLAN). */
static ssize_t w_next(uint8_t *f, size_t len)
{
	ssize_t n;

	do {
		n = wire_recv(f, len);
	} while (n > 0 && !w_roce(f, n));
	return n;
}

/*
 * Random RC packets with valid ICRCs at QP @q (requests and responses,
 * PSNs around the expected one, RETHs and AtomicETHs that sometimes name
 * real memory), with the QP brought back to RTS whenever it fails: the
 * model must neither crash nor stop answering.
 */
static void rc_wire_fuzz(struct tqp *q)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[2048], pl[1100];
	uint64_t x = 0x6b697465ULL;
	uint8_t ext[32];
	struct kite_wqe_sge g[1];
	unsigned i, j, resets = 0, sent = 0;
	size_t m;

	for (i = 0; i < 400; i++) {
		uint8_t op;
		uint32_t psn, len;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 40 == 0) {
			if (qp_state(q->qpn) != KITE_QPS_RTS) {
				tap(tqp_to(q, KITE_QPS_RESET) == KITE_CMD_OK,
				    "fuzz: QP %u back to RESET", q->qpn);
				q->spi = q->rpi = 0;
				rc_rts(q, W_PEER_QPN, peer, 14, 7, 6);
				resets++;
			}
			g[0] = sge(3000, E.lkey, RBUF);
			post_recv(q, g, 1);
		}
		op = (uint8_t)(x % 0x18);
		psn = T_RC_PSN + (uint32_t)((x >> 8) % 8);
		len = (uint32_t)((x >> 16) % 1100);
		for (j = 0; j < sizeof(ext); j++)
			ext[j] = (uint8_t)(x >> (j % 8 * 8)) ^ (uint8_t)j;
		if (x & (1ULL << 40)) {
			put32(ext, (uint32_t)(DST >> 32));
			put32(ext + 4, (uint32_t)DST + (uint32_t)((x >> 41) % 64) * 8);
			put32(ext + 8, R.rkey);
			put32(ext + 12, (uint32_t)((x >> 48) % 5000));
		}
		if (op == 0x0c || op == 0x11 || op == 0x12 || op == 0x13 || op == 0x14)
			len = 0;
		m = w_frame(f, op, q->qpn, psn, x & (1ULL << 50), ext,
			    (size_t)((x >> 52) % 33), pl, len);
		wire_send(f, m);
		sent++;
		if (i % 20 == 19) {
			wire_settle();
			while (recv(wire_fd, f, sizeof(f), MSG_DONTWAIT) > 0)
				;
		}
	}
	wire_settle();
	while (recv(wire_fd, f, sizeof(f), MSG_DONTWAIT) > 0)
		;
	tap(sent == 400 && qp_state(q->qpn) >= KITE_QPS_RESET,
	    "RC fuzz: 400 random RC packets (%u QP recoveries), the model still answers", resets);
}

static void g_rc_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[3000], f[2048], inj[2048], ext[32];
	struct kite_wqe_sge g[2];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a, b;
	struct res r;
	unsigned mark;
	uint32_t psn = T_RC_PSN, epsn = T_RC_PSN;
	uint16_t idx;
	ssize_t n;
	size_t m;
	int i;
	bool ok;

	eng_setup();
	rc_keys();
	rc_wire_qp(&a, &scq, &rcq, peer);

	/* WRITE 2500 bytes: FIRST (RETH), MIDDLE, LAST with AckReq. */
	fill_pattern(SRC, 2500, 0x5c, want);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, 0x123456789abcULL,
		      0xabcd01, 0, 0, g, 1);
	for (i = 0; i < 3; i++) {
		static const uint8_t ops[3] = { 0x06, 0x07, 0x08 };
		static const size_t lens[3] = { 1024, 1024, 452 };
		size_t hl = i ? 0 : 16;

		n = w_next(f, sizeof(f));
		if (!tap(n == (ssize_t)(54 + hl + lens[i] + 4),
			 "WRITE packet %d on the wire (%zd bytes)", i, n))
			return;
		tap(f[42] == ops[i] && be24(f + 47) == W_PEER_QPN &&
		    be24(f + 51) == ((psn + i) & 0xffffff) && !!(f[50] & 0x80) == (i == 2),
		    "WRITE packet %d: BTH opcode 0x%02x, dest QP, PSN 0x%x, AckReq %s", i, f[42],
		    be24(f + 51), i == 2 ? "set" : "clear");
		if (i == 0)
			tap(be32(f + 54) == 0x1234 && be32(f + 58) == 0x56789abc &&
			    be32(f + 62) == 0xabcd01 && be32(f + 66) == 2500,
			    "WRITE FIRST: RETH va 0x123456789abc, rkey 0xabcd01, DMA length 2500");
		tap(!memcmp(f + 54 + hl, want + 1024 * i, lens[i]) &&
		    (uint32_t)(f[n - 4] | f[n - 3] << 8 | f[n - 2] << 16 |
			       (uint32_t)f[n - 1] << 24) == t_icrc(f + 14, (size_t)n - 18, false),
		    "WRITE packet %d: payload and ICRC", i);
	}
	clock_step(POLL_STEP_NS);
	tap(tcq_drain(&scq) == 0, "WRITE not complete before its ACK");
	put32(ext, 0x1f000001);
	m = w_frame(inj, 0x11, a.qpn, psn + 2, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0),
	    "ACK (AETH 0x1f) for the last PSN from the wire: WRITE completes");
	psn += 3;

	/* READ 1500 bytes: one READ request with RETH; two responses. */
	fill_pattern(DST, 1500, 0x6d, want);
	memset(f, 0, 1500);
	memwrite(t_bus(RBUF), f, 1500);
	g[0] = sge(1500, E.lkey, RBUF);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_READ | KITE_WQE_F_SIGNALED, 0, 0x1000, 0x77aa01, 0, 0,
		      g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 16 + 4 && f[42] == 0x0c && be24(f + 51) == (psn & 0xffffff) &&
	    (f[50] & 0x80) && be32(f + 58) == 0x1000 && be32(f + 62) == 0x77aa01 &&
	    be32(f + 66) == 1500,
	    "READ request on the wire: opcode 0x0c, PSN, AckReq, RETH (va, rkey, 1500)");
	m = w_frame(inj, 0x0d, a.qpn, psn, false, ext, 4, want, 1024);
	wire_send(inj, m);
	m = w_frame(inj, 0x0f, a.qpn, psn + 1, false, ext, 4, want + 1024, 476);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_READ, 1500) && mem_eq(RBUF, want, 1500),
	    "READ responses FIRST + LAST from the wire: READ completes, 1500 bytes placed");
	psn += 2;

	/* No ACK: after the local ACK timeout (67 ms) the WRITE is sent again. */
	fill_pattern(SRC, 1500, 0x4b, want);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, 0x2000, 0xabcd01, 0, 0,
		      g, 1);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 16 + 1024 + 4 && f[42] == 0x06;
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 476 + 4 && f[42] == 0x08 && be24(f + 51) == ((psn + 1) & 0xffffff),
	    "WRITE 1500: FIRST and LAST sent");
	clock_step(70000000);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 16 + 1024 + 4 && f[42] == 0x06 && be24(f + 51) == (psn & 0xffffff);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 476 + 4 && f[42] == 0x08 && be24(f + 51) == ((psn + 1) & 0xffffff) &&
	    !memcmp(f + 54, want + 1024, 476),
	    "ACK timeout: the whole WRITE retransmitted from its first PSN (go-back-N)");
	/* A sequence NAK for PSN + 1: only the LAST packet again. */
	put32(ext, 0x60000000);
	m = w_frame(inj, 0x11, a.qpn, psn + 1, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 476 + 4 && f[42] == 0x08 && be24(f + 51) == ((psn + 1) & 0xffffff) &&
	    (f[50] & 0x80), "NAK sequence error for PSN + 1: retransmission from PSN + 1 only");
	tap(tcq_drain(&scq) == 0, "not complete after the NAK");
	put32(ext, 0x1f000003);
	m = w_frame(inj, 0x11, a.qpn, psn + 1, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0),
	    "ACK after the retransmissions: WRITE completes");
	psn += 2;

	/* RTS to SQD with a WRITE in flight: drained when it is acknowledged. */
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, 0x3000, 0xabcd01, 0, 0,
		      g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 16 + 100 + 4 && f[42] == 0x0a && (f[50] & 0x80),
	    "WRITE 100: RDMA WRITE ONLY (RETH) with AckReq");
	eq_drain(&eq0);
	mark = neqlog;
	tap(tqp_to(&a, KITE_QPS_SQD) == KITE_CMD_OK, "RTS to SQD with the WRITE in flight");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_SQ_DRAINED, a.qpn), "SQD: not drained before the ACK");
	put32(ext, 0x1f000004);
	m = w_frame(inj, 0x11, a.qpn, psn, false, ext, 4, NULL, 0);
	wire_send(inj, m);
	wire_settle();
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0), "SQD: the WRITE completes on its ACK");
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_SQ_DRAINED, a.qpn) != NULL,
	    "SQ_DRAINED (obj QPN) posted when the message in flight completes");
	tap(tqp_to(&a, KITE_QPS_RTS) == KITE_CMD_OK, "SQD to RTS");
	psn += 1;
	put32(ext, 0x1f000001);

	/* Responder: a SEND with a PSN gap gets a sequence NAK for the expected PSN. */
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);
	m = w_frame(inj, 0x04, a.qpn, epsn + 2, true, NULL, 0, (const uint8_t *)"gap", 3);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x60 && be24(f + 47) == W_PEER_QPN,
	    "SEND with a PSN gap: NAK (AETH 0x60, PSN sequence error) for the expected PSN");
	tap(tcq_drain(&rcq) == 0, "the out-of-order SEND is not delivered");
	/* The expected PSN: delivered and ACKed. */
	m = w_frame(inj, 0x04, a.qpn, epsn, true, NULL, 0, (const uint8_t *)"in order", 8);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x1f && be24(f + 55) == 1,
	    "SEND with the expected PSN: ACK (AETH 0x1f, MSN 1) for its PSN");
	ok = tcq_next(&rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, a.qpn, 0) && c.byte_len == 8,
	    "in-order SEND delivered (byte_len 8)");
	/* A duplicate: re-ACKed, not delivered again. */
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == (epsn & 0xffffff) && f[54] == 0x1f,
	    "duplicate SEND: ACKed again");
	tap(tcq_drain(&rcq) == 0, "duplicate SEND: not delivered twice");
	epsn++;

	/* Responder READ from the wire: 1500 bytes -> FIRST + LAST with AETH. */
	fill_pattern(DST, 1500, 0x7e, want);
	put32(ext, 0);
	put32(ext + 4, (uint32_t)((DST) >> 32));
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 8, R.rkey);
	put32(ext + 12, 1500);
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x1f && !memcmp(f + 58, want, 1024),
	    "READ request from the wire: READ_RESP_FIRST (AETH) with 1024 bytes");
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 476 + 4 && f[42] == 0x0f && be24(f + 51) == ((epsn + 1) & 0xffffff) &&
	    !memcmp(f + 58, want + 1024, 476),
	    "READ_RESP_LAST (AETH) with the remaining 476 bytes at PSN + 1");
	/* The same READ again (a duplicate): executed again. */
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == (epsn & 0xffffff);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f &&
	    be24(f + 51) == ((epsn + 1) & 0xffffff) && !memcmp(f + 58, want + 1024, 476),
	    "duplicate READ request: the responses are sent again");
	/* A requester that lost only the LAST re-requests from there on. */
	put32(ext + 4, (uint32_t)DST + 1024);
	put32(ext + 12, 476);
	m = w_frame(inj, 0x0c, a.qpn, epsn + 1, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 476 + 4 && f[42] == 0x10 && be24(f + 51) == ((epsn + 1) & 0xffffff) &&
	    !memcmp(f + 58, want + 1024, 476),
	    "duplicate READ from the middle (PSN + 1, RETH + 1024): READ_RESP_ONLY, 476 bytes");
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 12, 1500);
	epsn += 2;

	/* Two READ requests back to back: both answered, in order. */
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	put32(ext + 12, 100);
	m = w_frame(inj, 0x0c, a.qpn, epsn + 2, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == (epsn & 0xffffff);
	n = w_next(f, sizeof(f));
	ok = ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f;
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 100 + 4 && f[42] == 0x10 &&
	    be24(f + 51) == ((epsn + 2) & 0xffffff) && !memcmp(f + 58, want, 100),
	    "two READs back to back: FIRST, LAST, then READ_RESP_ONLY (100 bytes) at PSN + 2");
	epsn += 3;

	/* FETCH_ADD, then its duplicate: answered from the result cache. */
	set64(DST + 16, 100);
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)(DST + 16));
	put32(ext + 8, R.rkey);
	put32(ext + 12, 0);
	put32(ext + 16, 5);
	put32(ext + 20, 0);
	put32(ext + 24, 0);
	m = w_frame(inj, 0x14, a.qpn, epsn, true, ext, 28, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 12 + 4 && f[42] == 0x12 && be24(f + 51) == (epsn & 0xffffff) &&
	    f[54] == 0x1f && be32(f + 58) == 0 && be32(f + 62) == 100 && mem64(DST + 16) == 105,
	    "FETCH_ADD from the wire: ATOMIC ACK with the original 100, memory 105");
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 100 && mem64(DST + 16) == 105,
	    "duplicate FETCH_ADD: replayed from the cache (original 100), not added again");
	epsn++;

	/* A READ with a bad R_Key: NAK remote access error. */
	eq_drain(&eq0);
	mark = neqlog;
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 8, R.rkey ^ 0x80);
	put32(ext + 12, 1500);
	m = w_frame(inj, 0x0c, a.qpn, epsn, true, ext, 16, NULL, 0);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x62,
	    "READ with a bad R_Key: NAK remote access error (AETH 0x62)");
	tap(qp_state(a.qpn) == KITE_QPS_ERR, "responder access error: QP in ERR");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_ACCESS_ERR, a.qpn) != NULL,
	    "responder access error: QP_ACCESS_ERR (obj QPN) on EQ0");

	/* A QP in RTR: the first packet posts COMM_EST, and is ACKed. */
	need(tqp_create(&b, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (RTR only)");
	{
		struct kite_cmd_modify_qp at = attrs_valid(b.qpn);

		at.dest_qpn = W_PEER_QPN;
		memcpy(at.dmac, peer, 6);
		at.rq_psn = at.sq_psn = T_RC_PSN;
		need(modify_qp(&at, 0x0001d, KITE_QPS_INIT, &r), &r, "RC RESET to INIT");
		need(modify_qp(&at, 0x1a8c1, KITE_QPS_RTR, &r), &r, "RC INIT to RTR");
	}
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&b, g, 1);
	eq_drain(&eq0);
	mark = neqlog;
	m = w_frame(inj, 0x04, b.qpn, T_RC_PSN, true, NULL, 0, (const uint8_t *)"rtr", 3);
	wire_send(inj, m);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && be24(f + 51) == T_RC_PSN && f[54] == 0x1f,
	    "QP in RTR: SEND delivered and ACKed");
	clock_step(POLL_STEP_NS);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_COMM_EST, b.qpn) != NULL,
	    "first packet in RTR: QP_COMM_EST (obj QPN) on EQ0");
	ok = tcq_next(&rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, b.qpn, 0) && c.byte_len == 3,
	    "RTR QP: RESP_SEND byte_len 3");

	rc_wire_fuzz(&b);
}

/* ------------------------------------------------------------------ */
/* RC requester pipelining                                             */
/* ------------------------------------------------------------------ */

#define W_NONE	0xffffffffu

/* A RoCEv2 frame QEMU sent (IPv4, no VLAN: the BTH is at offset 42). */
struct wpkt {
	uint8_t op;
	uint32_t dqpn, psn;
	bool ackreq, dropped;
	uint8_t aeth;			/* ACKs and READ responses but MIDDLE */
	size_t len;
	uint8_t fr[1200];
};

static struct wpkt wlog[64];

/*
 * The frames QEMU sends until the wire has been quiet for a while, logged
 * in wlog[] (at most 64). With @relay the test is a switch between two
 * QPs of the model: every frame goes back to the model, addressed to its
 * own MAC, but the first one for QPN @drop_qpn with PSN @drop_psn.
 */
/* Record frame @f of @len bytes as wlog[@n]. */
static struct wpkt *wlog_add(unsigned n, const uint8_t *f, ssize_t len)
{
	struct wpkt *k = &wlog[n];

	memset(k, 0, sizeof(*k));
	k->op = f[42];
	k->dqpn = be24(f + 47);
	k->psn = be24(f + 51);
	k->ackreq = f[50] & 0x80;
	if (k->op == 0x11 || k->op == 0x12 || (k->op >= 0x0d && k->op <= 0x10 && k->op != 0x0e))
		k->aeth = f[54];
	k->len = (size_t)len;
	memcpy(k->fr, f, (size_t)len < sizeof(k->fr) ? (size_t)len : sizeof(k->fr));
	return k;
}

static unsigned w_collect(bool relay, uint32_t drop_qpn, uint32_t drop_psn)
{
	static uint8_t f[2048];
	unsigned n = 0;
	ssize_t len;

	while (n < ARRAY_SIZE(wlog) && (len = w_next(f, sizeof(f))) > 0) {
		struct wpkt *k = wlog_add(n++, f, len);

		if (!relay)
			continue;
		if (k->dqpn == drop_qpn && k->psn == drop_psn) {
			k->dropped = true;
			drop_psn = W_NONE;
			continue;
		}
		memcpy(f, MAC, 6);
		wire_send(f, (size_t)len);
	}
	return n;
}

static void wlog_diag(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		diag("frame %u: opcode 0x%02x QP 0x%x PSN 0x%06x%s aeth 0x%02x len %zu%s", i,
		     wlog[i].op, wlog[i].dqpn, wlog[i].psn, wlog[i].ackreq ? " AckReq" : "",
		     wlog[i].aeth, wlog[i].len, wlog[i].dropped ? " (dropped)" : "");
}

/* Check wlog[from..] against @n (opcode, PSN offset from @psn, AckReq) triples. */
static bool wlog_is(unsigned from, unsigned got, uint32_t psn, const uint8_t (*want)[3], unsigned n)
{
	unsigned i;

	if (got != from + n)
		return false;
	for (i = 0; i < n; i++) {
		const struct wpkt *k = &wlog[from + i];

		if (k->op != want[i][0] || k->psn != ((psn + want[i][1]) & 0xffffff) ||
		    k->ackreq != !!want[i][2] || k->dqpn != W_PEER_QPN)
			return false;
	}
	return true;
}

/* An ACK (AETH syndrome @synd) from the peer for @psn of QP @qpn. */
static void w_ack(uint32_t qpn, uint32_t psn, uint8_t synd)
{
	static uint8_t f[128];
	uint8_t ext[4];

	put32(ext, (uint32_t)synd << 24 | 1);
	wire_send(f, w_frame(f, 0x11, qpn, psn, false, ext, 4, NULL, 0));
	wire_settle();
}

/* A READ response (@op) or atomic ACK (@op 0x12, @pl the original value). */
static void w_resp(uint32_t qpn, uint8_t op, uint32_t psn, const uint8_t *pl, size_t len)
{
	static uint8_t f[2048];
	uint8_t ext[12];

	put32(ext, 0x1f000001);
	if (op == 0x12) {
		memcpy(ext + 4, pl, 8);
		wire_send(f, w_frame(f, op, qpn, psn, false, ext, 12, NULL, 0));
	} else {
		wire_send(f, w_frame(f, op, qpn, psn, false, ext, 4, pl, len));
	}
	wire_settle();
}

static bool req_err(struct tcq *q, uint32_t qpn, uint16_t idx, unsigned synd)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c) && cqe_is(&c, KITE_CQE_OP_REQ_ERR, qpn, synd) &&
		  c.wqe_idx == idx;

	if (!ok)
		cqe_diag("send", &c);
	return ok;
}

#define WR	(KITE_WQE_OP_RDMA_WRITE)
#define SIG	(KITE_WQE_F_SIGNALED)

/* Several messages in flight against the test as the peer. */
static void rc_pipe_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t batch[6][3] = {
		{ 0x06, 0, 0 }, { 0x08, 1, 1 }, { 0x0a, 2, 1 },
		{ 0x06, 3, 0 }, { 0x07, 4, 0 }, { 0x08, 5, 1 },
	};
	static const uint8_t nak[4][3] = {
		{ 0x07, 1, 0 }, { 0x08, 2, 1 }, { 0x06, 3, 0 }, { 0x08, 4, 1 },
	};
	static const uint8_t rd1[2][3] = { { 0x0c, 0, 1 }, { 0x14, 1, 1 } };
	static const uint8_t rd2[2][3] = { { 0x0c, 2, 1 }, { 0x04, 3, 1 } };
	static const uint8_t fence1[3][3] = { { 0x0a, 0, 1 }, { 0x0c, 1, 1 }, { 0x0a, 2, 1 } };
	static const uint8_t fence2[1][3] = { { 0x0a, 3, 1 } };
	static const uint8_t to[5][3] = {
		{ 0x06, 0, 0 }, { 0x08, 1, 1 }, { 0x0a, 2, 1 }, { 0x0a, 3, 1 }, { 0x04, 4, 1 },
	};
	static uint8_t want[3000];
	struct kite_wqe_sge g[1];
	struct tcq scq, rcq;
	struct tqp a, a2, a3;
	struct res r;
	uint32_t psn = T_RC_PSN;
	uint16_t i1, i2, i3, i4, i5;
	uint8_t orig[8];
	unsigned n;

	rc_wire_qp(&a, &scq, &rcq, peer);

	/* Three WRITEs posted at once: 2 + 1 + 3 packets, the second unsignaled. */
	fill_pattern(SRC, 2500, 0x3c, want);
	g[0] = sge(1500, E.lkey, SRC);
	i1 = write_rc(&a, WR | SIG, 0, 0x10000, 0xabcd01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i2 = write_rc(&a, WR, 0, 0x20000, 0xabcd01, 0, 0, g, 1);
	g[0] = sge(2500, E.lkey, SRC);
	i3 = write_rc(&a, WR | SIG, 0, 0x30000, 0xabcd01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, batch, 6),
		 "three WRITEs posted at once: all 6 packets of the 3 messages before any ACK, "
		 "consecutive PSNs, AckReq on each LAST/ONLY"))
		wlog_diag(n);
	tap(tcq_drain(&scq) == 0, "pipelined WRITEs: no completion before an ACK");
	w_ack(a.qpn, psn + 5, 0x1f);
	tap(req_ok(&scq, a.qpn, i1, WR, 0) && req_ok(&scq, a.qpn, i3, WR, 0) &&
	    tcq_drain(&scq) == 0,
	    "one ACK for the last PSN completes all three in order: CQE %u, CQE %u (%u unsignaled)",
	    i1, i3, i2);
	psn += 6;

	/* A sequence NAK in the middle of the first of two messages. */
	g[0] = sge(2500, E.lkey, SRC);
	i1 = write_rc(&a, WR | SIG, 0, 0x40000, 0xabcd01, 0, 0, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	i2 = write_rc(&a, WR | SIG, 0, 0x50000, 0xabcd01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	tap(n == 5, "WRITE 2500 + WRITE 1500: 5 packets in flight (%u)", n);
	w_ack(a.qpn, psn + 1, 0x60);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, nak, 4) && !memcmp(wlog[0].fr + 54, want + 1024, 1024) &&
		 !memcmp(wlog[2].fr + 54 + 16, want, 1024),
		 "NAK sequence error for PSN + 1: resent from there (MIDDLE, LAST), then the "
		 "second WRITE in full, payloads right"))
		wlog_diag(n);
	tap(tcq_drain(&scq) == 0, "after the NAK: nothing complete");
	w_ack(a.qpn, psn + 3, 0x1f);
	tap(req_ok(&scq, a.qpn, i1, WR, 0) && tcq_drain(&scq) == 0,
	    "ACK in the middle of the second WRITE: only the first completes");
	w_ack(a.qpn, psn + 4, 0x1f);
	tap(req_ok(&scq, a.qpn, i2, WR, 0), "ACK for its last PSN: the second completes");
	tap(w_collect(false, 0, W_NONE) == 0, "no retransmission after the ACKs");
	psn += 5;

	/* 80 packets (8 SGEs of 10 KiB): the 64-PSN window, AckReq every 32nd. */
	{
		struct kite_wqe_sge g8[8];
		unsigned k, bad = 0;

		for (k = 0; k < 8; k++)
			g8[k] = sge(10240, E.lkey, SRC);
		i1 = write_rc(&a, WR | SIG, 0, 0x100000, 0xabcd01, 0, 0, g8, 8);
		ring_sq(&a);
		n = w_collect(false, 0, W_NONE);
		for (k = 0; k < n; k++)
			bad += wlog[k].psn != ((psn + k) & 0xffffff) ||
			       wlog[k].ackreq != (k % 32 == 31);
		if (!tap(n == 64 && !bad,
			 "WRITE of 80 packets: 64 sent (the window), AckReq on the 32nd and 64th"))
			wlog_diag(n);
		w_ack(a.qpn, psn + 31, 0x1f);
		n = w_collect(false, 0, W_NONE);
		bad = 0;
		for (k = 0; k < n; k++)
			bad += wlog[k].psn != ((psn + 64 + k) & 0xffffff) ||
			       wlog[k].ackreq != (k == 15);
		if (!tap(n == 16 && !bad && wlog[15].op == 0x08 && tcq_drain(&scq) == 0,
			 "ACK for the 32nd: the window moves, the last 16 go out, AckReq on the LAST"))
			wlog_diag(n);
		w_ack(a.qpn, psn + 79, 0x1f);
		tap(req_ok(&scq, a.qpn, i1, WR, 0), "ACK for the last PSN: the WRITE completes");
		psn += 80;
	}

	/* max_rd_atomic 2: a READ and an atomic in flight, the next READ waits. */
	need(tqp_create(&a2, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (max_rd_atomic 2)");
	rc_rts_rd(&a2, W_PEER_QPN, peer, 14, 7, 6, 2);
	psn = T_RC_PSN;
	memzero(t_bus(RBUF), 512);
	g[0] = sge(100, E.lkey, RBUF);
	i1 = write_rc(&a2, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(8, E.lkey, RBUF + 200);
	i2 = write_rc(&a2, KITE_WQE_OP_ATOMIC_FA | SIG, 0, 0x2000, 0x77aa01, 1, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF + 300);
	i3 = write_rc(&a2, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x3000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(10, E.lkey, SRC);
	i4 = write_rc(&a2, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	ring_sq(&a2);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, rd1, 2),
		 "max_rd_atomic 2: READ and FETCH_ADD sent; the second READ and the SEND after it wait"))
		wlog_diag(n);
	w_resp(a2.qpn, 0x10, psn, want, 100);
	tap(req_ok(&scq, a2.qpn, i1, KITE_WQE_OP_RDMA_READ, 100) && mem_eq(RBUF, want, 100),
	    "READ response: the first READ completes");
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, rd2, 2),
		 "one READ/atomic slot free: the second READ is sent, then the SEND"))
		wlog_diag(n);
	memset(orig, 0, 8);
	orig[7] = 42;
	w_resp(a2.qpn, 0x12, psn + 1, orig, 8);
	w_resp(a2.qpn, 0x10, psn + 2, want + 100, 100);
	w_ack(a2.qpn, psn + 3, 0x1f);
	tap(req_ok(&scq, a2.qpn, i2, KITE_WQE_OP_ATOMIC_FA, 8) &&
	    req_ok(&scq, a2.qpn, i3, KITE_WQE_OP_RDMA_READ, 100) &&
	    req_ok(&scq, a2.qpn, i4, KITE_WQE_OP_SEND, 0) && mem64(RBUF + 200) == 42 &&
	    mem_eq(RBUF + 300, want + 100, 100),
	    "atomic ACK, READ response, ACK: FETCH_ADD, READ and SEND complete in order");
	psn += 4;

	/* Fence: a WRITE passes an outstanding READ, a fenced one does not. */
	g[0] = sge(100, E.lkey, SRC);
	i1 = write_rc(&a2, WR | SIG, 0, 0x4000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF);
	i2 = write_rc(&a2, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x5000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i3 = write_rc(&a2, WR, 0, 0x6000, 0x77aa01, 0, 0, g, 1);
	i4 = write_rc(&a2, WR | SIG | KITE_WQE_F_FENCE, 0, 0x7000, 0x77aa01, 0, 0, g, 1);
	ring_sq(&a2);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, fence1, 3),
		 "WRITE, READ, WRITE sent; the fenced WRITE waits for the READ"))
		wlog_diag(n);
	w_resp(a2.qpn, 0x10, psn + 1, want, 100);
	tap(req_ok(&scq, a2.qpn, i1, WR, 0) && req_ok(&scq, a2.qpn, i2, KITE_WQE_OP_RDMA_READ, 100),
	    "the READ response implicitly acknowledges the WRITE before it: both complete");
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, fence2, 1), "READ complete: the fenced WRITE is sent"))
		wlog_diag(n);
	w_ack(a2.qpn, psn + 3, 0x1f);
	tap(req_ok(&scq, a2.qpn, i4, WR, 0) && tcq_drain(&scq) == 0,
	    "ACK: the unsignaled WRITE and the fenced one complete (%u silent)", i3);

	/* ACK timeout with four WQEs outstanding; retry_cnt 1. */
	need(tqp_create(&a3, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (timeout 10, retry 1)");
	rc_rts(&a3, W_PEER_QPN, peer, 10, 1, 6);
	psn = T_RC_PSN;
	g[0] = sge(1500, E.lkey, SRC);
	i1 = write_rc(&a3, WR | SIG, 0, 0x8000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i2 = write_rc(&a3, WR, 0, 0x9000, 0x77aa01, 0, 0, g, 1);
	i3 = write_rc(&a3, WR | SIG, 0, 0xa000, 0x77aa01, 0, 0, g, 1);
	i4 = write_rc(&a3, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	ring_sq(&a3);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, to, 5), "four WQEs in flight (5 packets), no ACK"))
		wlog_diag(n);
	run_for(4000000);
	n = w_collect(false, 0, W_NONE);
	if (!tap(wlog_is(0, n, psn, to, 5),
		 "ACK timeout (4.2 ms): every outstanding WQE resent from the oldest PSN"))
		wlog_diag(n);
	run_for(5000000);
	tap(req_err(&scq, a3.qpn, i1, KITE_SYND_RETRY_EXC) &&
	    req_err(&scq, a3.qpn, i2, KITE_SYND_WR_FLUSH) &&
	    req_err(&scq, a3.qpn, i3, KITE_SYND_WR_FLUSH) &&
	    req_err(&scq, a3.qpn, i4, KITE_SYND_WR_FLUSH) && qp_state(a3.qpn) == KITE_QPS_ERR,
	    "retries exhausted: RETRY_EXC for the oldest, the three after it flushed, QP in ERR");
	i5 = post_rc(&a3, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	tap(req_err(&scq, a3.qpn, i5, KITE_SYND_WR_FLUSH), "a WQE posted in ERR is flushed");
}

/* Two QPs of the model through the test as a lossy switch. */
static void rc_pipe_relay(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[5000];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	struct res r;
	unsigned n, i, nak = 0, from_a = 0, resent_at = 0;
	uint32_t psn = T_RC_PSN;
	uint16_t i1, i2;
	bool ok, seen_nak = false, first_again = false;

	tcq_make(&P.scq, 6);
	tcq_make(&P.rcq, 6);
	need(tqp_create(&P.a, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create(&P.b, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC B");
	rc_rts(&P.a, P.b.qpn, peer, 14, 7, 6);
	rc_rts(&P.b, P.a.qpn, peer, 14, 7, 6);

	fill_pattern(SRC, 4500, 0x2d, want);
	g[0] = sge(3000, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(3000, E.lkey, RBUF + 4000);
	post_recv(&P.b, g, 1);
	g[0] = sge(2500, E.lkey, SRC);
	i1 = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	g[0] = sge(2000, E.lkey, SRC + 2500);
	i2 = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	ring_sq(&P.a);
	/* Lose the SEND MIDDLE (PSN + 1) of the first message. */
	n = w_collect(true, P.b.qpn, (psn + 1) & 0xffffff);
	for (i = 0; i < n; i++) {
		const struct wpkt *k = &wlog[i];

		if (k->dqpn == P.a.qpn && k->op == 0x11 && k->aeth == 0x60 &&
		    k->psn == ((psn + 1) & 0xffffff)) {
			nak++;
			seen_nak = true;
			continue;
		}
		if (k->dqpn != P.b.qpn)
			continue;
		from_a++;
		if (seen_nak && !resent_at)
			resent_at = i;
		if (seen_nak && k->psn == (psn & 0xffffff))
			first_again = true;
	}
	ok = nak == 1 && from_a == 9 && resent_at && wlog[resent_at].op == 0x01 &&
	     wlog[resent_at].psn == ((psn + 1) & 0xffffff) && !first_again;
	if (!tap(ok, "lost SEND MIDDLE: one sequence NAK from B, A resends from that PSN "
		 "(not the message's first), 5 + 4 packets in all"))
		wlog_diag(n);
	tap(req_ok(&P.scq, P.a.qpn, i1, KITE_WQE_OP_SEND, 0) &&
	    req_ok(&P.scq, P.a.qpn, i2, KITE_WQE_OP_SEND, 0), "both SENDs complete, in order");
	ok = tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
	     c.byte_len == 2500 && c.wqe_idx == 0;
	ok = ok && tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
	     c.byte_len == 2000 && c.wqe_idx == 1;
	tap(ok && tcq_drain(&P.rcq) == 0 && mem_eq(RBUF, want, 2500) &&
	    mem_eq(RBUF + 4000, want + 2500, 2000),
	    "B: each message delivered once, byte for byte");
}

/* Over loopback: unsignaled WQEs in a batch, and an RNR NAK in the middle of one. */
static void rc_pipe_loop(void)
{
	static uint8_t want[8 * 700];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx[8];
	unsigned i;
	bool ok = true;

	rc_pair(&P, MAC, 14, 7, 7);
	fill_pattern(SRC, sizeof(want), 0x4e, want);
	for (i = 0; i < 8; i++) {
		g[0] = sge(1024, E.lkey, RBUF + 1024 * i);
		post_recv(&P.b, g, 1);
	}
	for (i = 0; i < 8; i++) {
		g[0] = sge(700, E.lkey, SRC + 700 * i);
		idx[i] = write_rc(&P.a, KITE_WQE_OP_SEND | (i % 3 == 2 ? SIG : 0), 0, 0, 0, 0, 0,
				  g, 1);
	}
	ring_sq(&P.a);
	for (i = 2; i < 8; i += 3)
		ok = ok && req_ok(&P.scq, P.a.qpn, idx[i], KITE_WQE_OP_SEND, 0);
	tap(ok && tcq_drain(&P.scq) == 0,
	    "8 SENDs at once, every third signaled: exactly the CQEs for %u and %u, in order",
	    idx[2], idx[5]);
	for (i = 0; i < 8; i++) {
		ok = tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
		     c.byte_len == 700 && c.wqe_idx == i && mem_eq(RBUF + 1024 * i, want + 700 * i, 700);
		if (!ok)
			break;
	}
	tap(ok, "8 receive CQEs in order, each message byte for byte");
	/* The SQ consumer moved past the unsignaled ones: 16 more fit the 16-deep SQ. */
	for (i = 0; i < 16; i++) {
		g[0] = sge(16, E.lkey, SRC);
		idx[i % 8] = write_rc(&P.a, WR | (i == 15 ? SIG : 0), 0, DST, R.rkey, 0, 0, g, 1);
	}
	ring_sq(&P.a);
	tap(req_ok(&P.scq, P.a.qpn, idx[7], WR, 0) && tcq_drain(&P.scq) == 0,
	    "16 WRITEs filling the SQ, only the last signaled: one CQE");

	/* Three SENDs, no RQ WQE: RNR NAK for the first, none is lost. */
	for (i = 0; i < 3; i++) {
		g[0] = sge(700, E.lkey, SRC + 700 * i);
		idx[i] = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	}
	ring_sq(&P.a);
	clock_step(100000);
	tap(tcq_drain(&P.scq) == 0 && qp_state(P.a.qpn) == KITE_QPS_RTS,
	    "pipelined SENDs without RQ WQEs: RNR NAK, nothing completes, A still RTS");
	for (i = 0; i < 3; i++) {
		g[0] = sge(1024, E.lkey, RBUF + 1024 * i);
		post_recv(&P.b, g, 1);
	}
	run_for(2000000);
	ok = true;
	for (i = 0; i < 3; i++)
		ok = ok && req_ok(&P.scq, P.a.qpn, idx[i], KITE_WQE_OP_SEND, 0);
	tap(ok, "RQ WQEs posted: the three SENDs complete in order after the RNR back-off");
	for (i = 0; i < 3; i++) {
		ok = ok && tcq_next(&P.rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) &&
		     c.byte_len == 700 && mem_eq(RBUF + 1024 * i, want + 700 * i, 700);
	}
	tap(ok && tcq_drain(&P.rcq) == 0, "each delivered once, in order");
}

static void g_rc_pipe(void)
{
	eng_setup();
	rc_keys();
	rc_pipe_loop();
	rc_pipe_wire();
	rc_pipe_relay();
}

/* ------------------------------------------------------------------ */
/* RC under loss: duplicates, stale responses, loss on demand          */
/* ------------------------------------------------------------------ */

/* The counter @key of the string property @prop ("key=N ..."), or ~0. */
static uint64_t qom_count(const char *prop, const char *key)
{
	char buf[512], pat[64];
	const char *p;

	if (!qom_get(prop, buf, sizeof(buf)))
		return ~0ULL;
	snprintf(pat, sizeof(pat), "%s=", key);
	for (p = buf; (p = strstr(p, pat)) != NULL; p++)
		if (p == buf || p[-1] == ' ' || p[-1] == '"')
			return strtoull(p + strlen(pat), NULL, 10);
	return ~0ULL;
}

static void qom_diag(const char *prop)
{
	char buf[512];

	if (qom_get(prop, buf, sizeof(buf)))
		diag("%s: %s", prop, buf);
}

static bool qom_set_u(const char *prop, unsigned v)
{
	char s[32];

	snprintf(s, sizeof(s), "%u", v);
	return qom_set(prop, s, NULL);
}

/* A READ request (RETH) from the peer to QP @qpn. */
static void w_read_req(uint32_t qpn, uint32_t psn, uint64_t va, uint32_t key, uint32_t len)
{
	static uint8_t f[256];
	uint8_t ext[16];

	put32(ext, (uint32_t)(va >> 32));
	put32(ext + 4, (uint32_t)va);
	put32(ext + 8, key);
	put32(ext + 12, len);
	wire_send(f, w_frame(f, 0x0c, qpn, psn, true, ext, 16, NULL, 0));
}

/* A FETCH_ADD from the peer. */
static void w_fadd(uint32_t qpn, uint32_t psn, uint64_t va, uint32_t key, uint64_t add)
{
	static uint8_t f[256];
	uint8_t ext[28];

	memset(ext, 0, sizeof(ext));
	put32(ext, (uint32_t)(va >> 32));
	put32(ext + 4, (uint32_t)va);
	put32(ext + 8, key);
	put32(ext + 12, (uint32_t)(add >> 32));
	put32(ext + 16, (uint32_t)add);
	wire_send(f, w_frame(f, 0x14, qpn, psn, true, ext, 28, NULL, 0));
}

/* A READ response MIDDLE (no AETH) from the peer. */
static void w_mid(uint32_t qpn, uint32_t psn, const uint8_t *pl, size_t len)
{
	static uint8_t f[2048];

	wire_send(f, w_frame(f, 0x0e, qpn, psn, false, NULL, 0, pl, len));
	wire_settle();
}

#define F_VA	0x5000000000ULL
/* The E.mr offset where F_VA maps (its page 0), as an iova of E.mr. */
#define F_IOVA(off)	(T_IOVA - 0x100 + (off))

/* The model as the responder: duplicates after invalidation. */
static void rc_loss_responder(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[1500], f[2048], pl[128];
	const uint32_t acc = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			     KITE_ACCESS_REMOTE_READ;
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a;
	struct res r;
	uint32_t epsn = T_RC_PSN, fkey, key, key2;
	uint64_t d0, rp0;
	uint8_t ext[20];
	uint16_t idx;
	ssize_t n;
	bool ok;

	rc_wire_qp(&a, &scq, &rcq, peer);
	fkey = need(alloc_mr(fx_pd, 16, 0x10, &r), &r, "ALLOC_MR (16 pages)");
	key = (fkey & ~0xffu) | 0x9a;
	idx = post_reg_mr(&a, F_VA, 8 * 4096, key, acc, E.mr.pbl.addr, 8);
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_REG_MR, 0), "REG_MR WQE: fast-registered key");

	/* A READ of 1500 bytes through the fast-registered key. */
	fill_pattern(F_IOVA(6 * 4096), 1500, 0x31, want);
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 1500);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && !memcmp(f + 58, want, 1024);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f && !memcmp(f + 58, want + 1024, 476),
	    "READ through a fast-registered key: FIRST + LAST, data right");

	/* SEND with invalidate from the peer: the key is invalid now. */
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);
	put32(ext, key);
	wire_send(f, w_frame(f, 0x17, a.qpn, epsn + 2, true, ext, 4, (const uint8_t *)"inv", 3));
	n = w_next(f, sizeof(f));
	ok = tcq_next(&rcq, &c);
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f && ok &&
	    cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, a.qpn, 0) && c.inv_rkey == key,
	    "SEND_ONLY_INV for the key: ACKed, RESP_SEND_INV");

	/* The READ again (the requester went back): answered, the key is not re-checked. */
	d0 = qom_count("rc-counts", "dup-replays");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 1500);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 1024 + 4 && f[42] == 0x0d && be24(f + 51) == epsn &&
	     !memcmp(f + 58, want, 1024);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 4 + 476 + 4 && f[42] == 0x0f && !memcmp(f + 58, want + 1024, 476) &&
	    qp_state(a.qpn) == KITE_QPS_RTS,
	    "duplicate READ after the key was invalidated: answered again (no NAK), QP RTS");
	w_read_req(a.qpn, (epsn + 1) & 0xffffff, F_VA + 6 * 4096 + 1024, key, 476);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 476 + 4 && f[42] == 0x10 && be24(f + 51) == ((epsn + 1) & 0xffffff) &&
	    !memcmp(f + 58, want + 1024, 476),
	    "duplicate READ from its middle after invalidation: READ_RESP_ONLY, 476 bytes");
	tap(qom_count("rc-counts", "dup-replays") == d0 + 2, "rc-counts: 2 duplicate READs replayed");

	/* Duplicates that do not match the accepted READ: dropped, never NAKed. */
	d0 = qom_count("rc-counts", "dup-dropped");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key ^ 0x100, 1500);
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 2000);
	w_read_req(a.qpn, epsn, F_VA + 5 * 4096, key, 1500);
	tap(w_next(f, sizeof(f)) < 0 && qp_state(a.qpn) == KITE_QPS_RTS &&
	    qom_count("rc-counts", "dup-dropped") == d0 + 3,
	    "duplicate READ with another key, a longer or another range: dropped, no NAK, QP RTS");

	/* The MR registered again: a duplicate of the old READ is no longer answered. */
	key2 = (fkey & ~0xffu) | 0x9b;
	idx = post_reg_mr(&a, F_VA, 8 * 4096, key2, acc, E.mr.pbl.addr, 8);
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_REG_MR, 0), "REG_MR WQE again (tag 0x9b)");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key, 1500);
	tap(w_next(f, sizeof(f)) < 0 && qp_state(a.qpn) == KITE_QPS_RTS,
	    "duplicate READ of a key whose MR was registered again: not answered, QP RTS");
	epsn = (epsn + 3) & 0xffffff;

	/* WRITE with immediate, its key invalidated, then a duplicate of it. */
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	memset(pl, 0x5e, sizeof(pl));
	put32(ext, (uint32_t)(F_VA >> 32));
	put32(ext + 4, (uint32_t)F_VA + 7 * 4096);
	put32(ext + 8, key2);
	put32(ext + 12, 100);
	put32(ext + 16, 0x1234abcd);
	wire_send(f, w_frame(f, 0x0b, a.qpn, epsn, true, ext, 20, pl, 100));
	n = w_next(f, sizeof(f));
	ok = tcq_next(&rcq, &c);
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f && ok &&
	    cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, a.qpn, 0) && mem_eq(F_IOVA(7 * 4096), pl, 100),
	    "WRITE_ONLY_IMM through the new key: ACK, RESP_WRITE_IMM, data");
	put32(ext, key2);
	wire_send(f, w_frame(f, 0x17, a.qpn, epsn + 1, true, ext, 4, (const uint8_t *)"inv", 3));
	n = w_next(f, sizeof(f));
	ok = tcq_next(&rcq, &c);
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, a.qpn, 0),
	    "SEND_ONLY_INV invalidates it");
	put32(ext, (uint32_t)(F_VA >> 32));
	put32(ext + 4, (uint32_t)F_VA + 7 * 4096);
	put32(ext + 8, key2);
	memset(pl, 0xa1, sizeof(pl));
	wire_send(f, w_frame(f, 0x0b, a.qpn, epsn, true, ext, 20, pl, 100));
	n = w_next(f, sizeof(f));
	memset(pl, 0x5e, sizeof(pl));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f &&
	    be24(f + 51) == ((epsn + 1) & 0xffffff) && tcq_drain(&rcq) == 0 &&
	    mem_eq(F_IOVA(7 * 4096), pl, 100) && qp_state(a.qpn) == KITE_QPS_RTS,
	    "duplicate WRITE_ONLY_IMM after invalidation: ACK of the last PSN, no CQE, "
	    "not written again, QP RTS");
	epsn = (epsn + 2) & 0xffffff;

	/* Two atomics, then duplicates of both (the older one too). */
	set64(DST + 64, 10);
	w_fadd(a.qpn, epsn, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 10;
	w_fadd(a.qpn, epsn + 1, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 11 && mem64(DST + 64) == 12,
	    "two FETCH_ADDs: originals 10 and 11, memory 12");
	w_fadd(a.qpn, epsn, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	ok = n == 54 + 12 + 4 && f[42] == 0x12 && be24(f + 51) == epsn && be32(f + 62) == 10;
	w_fadd(a.qpn, epsn + 1, DST + 64, R.rkey, 1);
	n = w_next(f, sizeof(f));
	tap(ok && n == 54 + 12 + 4 && f[42] == 0x12 && be32(f + 62) == 11 && mem64(DST + 64) == 12,
	    "duplicates of both (the older first): originals 10 and 11 replayed, not executed");
	epsn = (epsn + 2) & 0xffffff;

	/* A new READ through the invalidated key is still an access error. */
	rp0 = qom_count("rc-counts", "dup-requests");
	w_read_req(a.qpn, epsn, F_VA + 6 * 4096, key2, 100);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x62 && qp_state(a.qpn) == KITE_QPS_ERR &&
	    qom_count("rc-counts", "dup-requests") == rp0,
	    "a new READ through the invalidated key: NAK remote access error, QP in ERR");
}

/*
 * CQs @scq and @rcq and RC QP @a at RTS towards the wire's peer, the model
 * as requester: local ACK timeout @timeout, retry_cnt @retry.
 */
static void rc_req_qp(struct tqp *a, struct tcq *scq, struct tcq *rcq, uint8_t timeout,
		      uint8_t retry, const char *what)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	struct res r;

	tcq_make(scq, 6);
	tcq_make(rcq, 6);
	need(tqp_create(a, KITE_QPT_RC, fx_pd, scq->c.cqn, rcq->c.cqn, 0, &r), &r, what);
	rc_rts_rd(a, W_PEER_QPN, peer, timeout, retry, 6, 4);
}

/* The model as the requester: gaps, stale responses, reordered ACKs. */
static void rc_loss_requester(void)
{
	static uint8_t want[4000];
	struct kite_wqe_sge g[1];
	struct tcq scq, rcq;
	struct tqp a;
	uint32_t psn = T_RC_PSN;
	uint64_t t0, e0, s0;
	uint16_t i1, i2, i3;
	unsigned n, k;
	bool ok;

	rc_req_qp(&a, &scq, &rcq, 14, 1, "CREATE_QP RC (retry_cnt 1)");

	/* A READ of 4 responses; the second is lost. */
	fill_pattern(DST, 4000, 0x47, want);
	memzero(t_bus(RBUF), 4000);
	g[0] = sge(4000, E.lkey, RBUF);
	i1 = post_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x9000, 0x77aa01, 0, 0, g, 1);
	n = w_collect(false, 0, W_NONE);
	tap(n == 1 && wlog[0].op == 0x0c && wlog[0].psn == psn, "READ 4000: one READ request");
	t0 = qom_count("rc-counts", "timeouts");
	e0 = qom_count("rc-counts", "early-retries");
	w_resp(a.qpn, 0x0d, psn, want, 1024);
	w_mid(a.qpn, psn + 2, want + 2048, 1024);
	w_resp(a.qpn, 0x0f, psn + 3, want + 3072, 928);
	n = w_collect(false, 0, W_NONE);
	ok = n == 1 && wlog[0].op == 0x0c && wlog[0].psn == ((psn + 1) & 0xffffff) &&
	     be32(wlog[0].fr + 58) == 0x9000 + 1024 && be32(wlog[0].fr + 66) == 2976;
	if (!tap(ok && qom_count("rc-counts", "timeouts") == t0 &&
		 qom_count("rc-counts", "early-retries") == e0 + 1,
		 "gap in the READ responses: asked again at once from the first missing PSN "
		 "(PSN + 1, va + 1024, 2976 bytes), one retry, no timeout"))
		wlog_diag(n);
	w_mid(a.qpn, psn + 1, want + 1024, 1024);
	w_mid(a.qpn, psn + 2, want + 2048, 1024);
	w_resp(a.qpn, 0x0f, psn + 3, want + 3072, 928);
	tap(req_ok(&scq, a.qpn, i1, KITE_WQE_OP_RDMA_READ, 4000) && mem_eq(RBUF, want, 4000),
	    "the rest of the READ: completes, 4000 bytes right");

	/* Stale responses and ACKs for it: dropped without effect. */
	s0 = qom_count("rc-counts", "stale");
	w_resp(a.qpn, 0x0d, psn, want, 1024);
	w_mid(a.qpn, psn + 2, want + 2048, 1024);
	w_ack(a.qpn, psn + 3, 0x1f);
	w_ack(a.qpn, psn + 1, 0x60);
	n = w_collect(false, 0, W_NONE);
	tap(n == 0 && tcq_drain(&scq) == 0 && qp_state(a.qpn) == KITE_QPS_RTS &&
	    qom_count("rc-counts", "stale") == s0 + 4,
	    "stale READ responses, ACK and NAK after completion: ignored (4 stale), nothing sent");
	psn += 4;

	/* Three READs; the first answer is lost: one go-back, not three (retry_cnt 1). */
	g[0] = sge(100, E.lkey, RBUF);
	i1 = write_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF + 100);
	i2 = write_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1100, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, RBUF + 200);
	i3 = write_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x1200, 0x77aa01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	tap(n == 3, "three READs in flight (%u requests)", n);
	w_resp(a.qpn, 0x10, psn + 1, want + 100, 100);
	w_resp(a.qpn, 0x10, psn + 2, want + 200, 100);
	n = w_collect(false, 0, W_NONE);
	ok = n == 3;
	for (k = 0; ok && k < 3; k++)
		ok = wlog[k].op == 0x0c && wlog[k].psn == ((psn + k) & 0xffffff);
	if (!tap(ok && qp_state(a.qpn) == KITE_QPS_RTS,
		 "answers to the 2nd and 3rd READ, the 1st lost: the three asked again once, "
		 "QP RTS with retry_cnt 1"))
		wlog_diag(n);
	w_resp(a.qpn, 0x10, psn, want, 100);
	w_resp(a.qpn, 0x10, psn + 1, want + 100, 100);
	w_resp(a.qpn, 0x10, psn + 2, want + 200, 100);
	tap(req_ok(&scq, a.qpn, i1, KITE_WQE_OP_RDMA_READ, 100) &&
	    req_ok(&scq, a.qpn, i2, KITE_WQE_OP_RDMA_READ, 100) &&
	    req_ok(&scq, a.qpn, i3, KITE_WQE_OP_RDMA_READ, 100) && mem_eq(RBUF, want, 300),
	    "answered again: the three complete in order, data right");
	psn += 3;

	/* Three WRITEs (2 + 1 + 3 packets); ACKs reordered, a stale NAK. */
	g[0] = sge(1500, E.lkey, SRC);
	i1 = write_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	i2 = write_rc(&a, WR | SIG, 0, 0x20000, 0x77aa01, 0, 0, g, 1);
	g[0] = sge(2500, E.lkey, SRC);
	i3 = write_rc(&a, WR | SIG, 0, 0x30000, 0x77aa01, 0, 0, g, 1);
	ring_sq(&a);
	n = w_collect(false, 0, W_NONE);
	tap(n == 6, "three WRITEs: 6 packets (%u)", n);
	w_ack(a.qpn, psn + 2, 0x1f);
	w_ack(a.qpn, psn + 1, 0x1f);
	tap(req_ok(&scq, a.qpn, i1, WR, 0) && req_ok(&scq, a.qpn, i2, WR, 0) &&
	    tcq_drain(&scq) == 0, "ACK for PSN + 2, then a reordered older ACK: two complete, once");
	w_ack(a.qpn, psn + 5, 0x1f);
	w_ack(a.qpn, psn + 3, 0x1f);
	w_ack(a.qpn, psn + 4, 0x60);
	n = w_collect(false, 0, W_NONE);
	tap(req_ok(&scq, a.qpn, i3, WR, 0) && tcq_drain(&scq) == 0 && n == 0 &&
	    qp_state(a.qpn) == KITE_QPS_RTS,
	    "ACK for the last PSN, then an older ACK and a NAK: the third completes, nothing resent");
}

/*
 * Take the RoCEv2 frames the model sends into wlog[@n...]: until at least
 * @want have come (or 5 s of real time passed) and then none for @idle_ms.
 * Virtual time does not move. Returns the new count.
 */
static unsigned w_drain(unsigned n, unsigned want, unsigned idle_ms)
{
	static uint8_t f[2048];
	unsigned idle = 0, waited = 0;
	ssize_t len;

	while ((n < want && waited < 5000) || idle < idle_ms) {
		usleep(1000);
		waited++;
		idle++;
		while ((len = recv(wire_fd, f, sizeof(f), MSG_DONTWAIT)) > 0) {
			if (!w_roce(f, len))
				continue;
			if (n < ARRAY_SIZE(wlog))
				wlog_add(n, f, len);
			n++;
			idle = 0;
		}
	}
	return n;
}

/*
 * The RoCEv2 frames the model sends while virtual time moves on by @ns in
 * steps of @step (0: now only), logged in wlog. Unlike w_collect(), the
 * clock moves by the steps alone: after each, the frames are taken until
 * none came for 10 ms of real time.
 */
static unsigned w_collect_for(uint64_t ns, uint64_t step)
{
	unsigned n = 0;
	uint64_t t = 0;

	for (;;) {
		n = w_drain(n, 0, 10);
		if (t >= ns)
			return n;
		clock_step(step);
		t += step;
	}
}

/*
 * The responder's queue of responses owed is a ring of 257 entries: its
 * head and count must wrap at 257, not at 256. Bursts of three READ
 * requests of 16 packets keep responses queued while the head goes round
 * the ring twice; the responses must leave in PSN order, each from its
 * own request.
 */
static void rc_loss_rsp_ring(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[16384];
	struct tcq scq, rcq;
	struct tqp a;
	uint32_t epsn = T_RC_PSN, bad_psn = 0;
	unsigned burst, k, n = 0, bad = 0;

	rc_wire_qp(&a, &scq, &rcq, peer);
	fill_pattern(DST, sizeof(want), 0x5d, want);
	for (burst = 0; burst < 180 && !bad; burst++) {
		for (k = 0; k < 3; k++)
			w_read_req(a.qpn, (epsn + 16 * k) & 0xffffff, DST, R.rkey, sizeof(want));
		n = w_drain(0, 48, 10);
		for (k = 0; k < 48 && !bad; k++) {
			if (n != 48 || wlog[k].psn != ((epsn + k) & 0xffffff) ||
			    memcmp(wlog[k].fr + 54 + (k % 16 == 0 || k % 16 == 15 ? 4 : 0),
				   want + (k % 16) * 1024, 64)) {
				bad = burst * 48 + k + 1;
				bad_psn = k < n ? wlog[k].psn : 0;
			}
		}
		epsn = (epsn + 48) & 0xffffff;
	}
	if (!tap(!bad && qp_state(a.qpn) == KITE_QPS_RTS,
		 "540 READ requests of 16 KiB in bursts of 3 (the response ring wraps twice): "
		 "answered in PSN order with the right data (first wrong: frame #%u, PSN 0x%06x, "
		 "%u frames in its burst)", bad, bad_psn, n))
		wlog_diag(n < 64 ? n : 64);
}

/*
 * Adaptive retransmission (prm_qp.rst): a lost packet is probed for after
 * max(2 ms, SRTT + 4 RTTVAR), twice as long for each further probe, without
 * counting a retry; the local ACK timeout (4.3 s here, retry_cnt 0) still
 * ends a QP whose peer stopped answering. With "rc-rto-adaptive" off only
 * the timeout retransmits.
 */
static void rc_loss_probe(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[100];
	struct kite_wqe_sge g[1];
	struct tcq scq, rcq;
	struct tqp a, b;
	struct res r;
	uint32_t psn = T_RC_PSN;
	uint64_t p0, t0, r0;
	unsigned n, n2, n3, k;
	uint16_t idx;
	bool ok;

	rc_req_qp(&a, &scq, &rcq, 20, 0, "CREATE_QP RC (local ACK timeout 4.3 s, retry_cnt 0)");
	g[0] = sge(100, E.lkey, SRC);

	/* The first round trip: a WRITE acknowledged after 100 us. */
	idx = post_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	clock_step(100000);
	w_ack(a.qpn, psn, 0x1f);
	tap(n == 1 && req_ok(&scq, a.qpn, idx, WR, 0),
	    "probe: a WRITE acknowledged after 100 us completes (round trip measured)");
	psn = (psn + 1) & 0xffffff;

	/* The next one is lost: probed after 2 ms, not after 4.3 s. */
	p0 = qom_count("rc-counts", "probes");
	t0 = qom_count("rc-counts", "timeouts");
	r0 = qom_count("rc-counts", "retries");
	idx = post_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	n2 = w_collect_for(1500000, 500000);
	n3 = w_collect_for(1000000, 500000);
	ok = n == 1 && n2 == 0 && n3 == 1 && wlog[0].psn == psn && wlog[0].op == 0x0a;
	if (!tap(ok && qom_count("rc-counts", "probes") == p0 + 1 &&
		 qom_count("rc-counts", "retries") == r0 &&
		 qom_count("rc-counts", "timeouts") == t0,
		 "probe: a lost WRITE is sent again 2 ms later (not at 1.5 ms), counted as a "
		 "probe, no retry or timeout counted (%u, %u, %u frames)", n, n2, n3))
		wlog_diag(n3);
	/* Lost again: the second probe waits twice as long. */
	n2 = w_collect_for(3000000, 500000);
	n3 = w_collect_for(1000000, 500000);
	tap(n2 == 0 && n3 == 1 && wlog[0].psn == psn &&
	    qom_count("rc-counts", "probes") == p0 + 2,
	    "probe: lost again, the second probe comes 4 ms later (%u, %u frames)", n2, n3);
	w_ack(a.qpn, psn, 0x1f);
	tap(req_ok(&scq, a.qpn, idx, WR, 0) && qp_state(a.qpn) == KITE_QPS_RTS,
	    "probe: acknowledged, the WRITE completes with retry_cnt 0: probes are no retries");
	psn = (psn + 1) & 0xffffff;

	/* A lost READ request: probed, answered, completes. */
	fill_pattern(DST, 100, 0x52, want);
	memzero(t_bus(RBUF), 100);
	g[0] = sge(100, E.lkey, RBUF);
	idx = post_rc(&a, KITE_WQE_OP_RDMA_READ | SIG, 0, 0x9000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	n3 = w_collect_for(5000000, 500000);
	ok = n == 1 && n3 == 1 && wlog[0].op == 0x0c && wlog[0].psn == psn;
	w_resp(a.qpn, 0x10, psn, want, 100);
	if (!tap(ok && req_ok(&scq, a.qpn, idx, KITE_WQE_OP_RDMA_READ, 100) &&
		 mem_eq(RBUF, want, 100),
		 "probe: a lost READ request is asked again within 5 ms; answered, the READ "
		 "completes (%u, %u frames)", n, n3))
		wlog_diag(n3);
	psn = (psn + 1) & 0xffffff;

	/* A peer that stopped answering: 8 probes, then RETRY_EXC at the timeout. */
	p0 = qom_count("rc-counts", "probes");
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
	n = w_collect_for(0, 0);
	n2 = w_collect_for(4000000000ULL, 10000000);
	ok = tcq_drain(&scq) == 0;
	n3 = w_collect_for(400000000ULL, 10000000);
	tap(n == 1 && n2 == 8 && ok && qom_count("rc-counts", "probes") == p0 + 8 &&
	    req_err(&scq, a.qpn, idx, KITE_SYND_RETRY_EXC) && qp_state(a.qpn) == KITE_QPS_ERR,
	    "probe: no answer at all: 8 probes, nothing completes before the 4.3 s timeout, "
	    "then RETRY_EXC with retry_cnt 0 (%u probes, %u frames after 4 s)", n2, n3);

	/* rc-rto-adaptive off: only the local ACK timer retransmits. */
	need(tqp_create(&b, KITE_QPT_RC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC (local ACK timeout 67 ms)");
	rc_rts_rd(&b, W_PEER_QPN, peer, 14, 1, 6, 4);
	psn = T_RC_PSN;
	ok = qom_set("rc-rto-adaptive", "false", NULL);
	for (k = 0; k < 2; k++) {
		idx = post_rc(&b, WR | SIG, 0, 0x10000, 0x77aa01, 0, 0, g, 1);
		n = w_collect_for(0, 0);
		if (k)
			n2 = w_collect_for(60000000, 1000000);
		n3 = w_collect_for(10000000, 1000000);
		w_ack(b.qpn, psn, 0x1f);
		ok = ok && n == 1 && req_ok(&scq, b.qpn, idx, WR, 0);
		psn = (psn + 1) & 0xffffff;
	}
	tap(ok && n2 == 0 && n3 == 1,
	    "probe: rc-rto-adaptive off: a lost WRITE is sent again only at the 67 ms timeout "
	    "(%u frames before, %u after)", n2, n3);
	qom_set("rc-rto-adaptive", "true", NULL);
}

/* The loss properties on the wire paths, deterministic settings. */
static void rc_loss_props(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t f[2048];
	static const uint8_t swapped[3][3] = { { 0x07, 1, 0 }, { 0x06, 0, 0 }, { 0x08, 2, 1 } };
	const char *reply = "";
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a;
	uint32_t epsn = T_RC_PSN;
	uint16_t idx;
	ssize_t n;
	unsigned k;
	bool ok;

	tap(!qom_set("loss-rx-drop", "1001", &reply) && strstr(reply, "per mille"),
	    "loss-rx-drop=1001: refused (per mille)");
	tap(qom_set_u("loss-seed", 7) && qom_count("loss-counts", "rx-dropped") == 0,
	    "loss-seed set; loss-counts readable, all 0");
	rc_wire_qp(&a, &scq, &rcq, peer);
	g[0] = sge(256, E.lkey, RBUF);
	post_recv(&a, g, 1);

	/* rx drop 1000: a SEND from the wire is lost. */
	qom_set_u("loss-rx-drop", 1000);
	wire_send(f, w_frame(f, 0x04, a.qpn, epsn, true, NULL, 0, (const uint8_t *)"lost", 4));
	wire_settle();
	tap(w_next(f, sizeof(f)) < 0 && qom_count("loss-counts", "rx-dropped") == 1,
	    "loss-rx-drop=1000: the SEND is lost (no ACK), rx-dropped=1");
	qom_set_u("loss-rx-drop", 0);

	/* rx dup 1000: delivered twice, executed once; the ACKs coalesce. */
	qom_set_u("loss-rx-dup", 1000);
	k = (unsigned)qom_count("rc-counts", "dup-requests");
	wire_send(f, w_frame(f, 0x04, a.qpn, epsn, true, NULL, 0, (const uint8_t *)"twice", 5));
	n = w_next(f, sizeof(f));
	ok = n == 54 + 4 + 4 && f[42] == 0x11 && f[54] == 0x1f && be24(f + 51) == epsn;
	tap(ok && tcq_next(&rcq, &c) && cqe_is(&c, KITE_CQE_OP_RESP_SEND, a.qpn, 0) &&
	    tcq_drain(&rcq) == 0 && qom_count("loss-counts", "rx-duplicated") == 1 &&
	    qom_count("rc-counts", "dup-requests") == k + 1,
	    "loss-rx-dup=1000: the SEND arrives twice: executed once (one CQE), the second a "
	    "duplicate, ACKed");
	while (w_next(f, sizeof(f)) > 0)
		;
	qom_set_u("loss-rx-dup", 0);

	/* tx reorder 1000: frames leave pairwise swapped, the last one after 100 us. */
	qom_set_u("loss-tx-reorder", 1000);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	n = w_collect(false, 0, W_NONE);
	qom_set_u("loss-tx-reorder", 0);
	if (!tap(wlog_is(0, n, T_RC_PSN, swapped, 3) &&
		 qom_count("loss-counts", "tx-reordered") == 2,
		 "loss-tx-reorder=1000: WRITE MIDDLE before FIRST, LAST released by the timer"))
		wlog_diag(n);
	w_ack(a.qpn, T_RC_PSN + 2, 0x1f);
	tap(req_ok(&scq, a.qpn, idx, WR, 0), "the WRITE completes");

	/* tx drop 1000: nothing leaves; the retransmission after it does. */
	qom_set_u("loss-tx-drop", 1000);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x1000, 0x77aa01, 0, 0, g, 1);
	n = w_collect(false, 0, W_NONE);
	ok = n == 0 && qom_count("loss-counts", "tx-dropped") == 1;
	qom_set_u("loss-tx-drop", 0);
	run_for(70000000);
	n = w_collect(false, 0, W_NONE);
	for (k = 0; k < n && wlog[k].op != 0x0a; k++)
		;
	tap(ok && k < n, "loss-tx-drop=1000: the WRITE is lost; after the timeout it is resent");
	w_ack(a.qpn, T_RC_PSN + 3, 0x1f);
	tap(req_ok(&scq, a.qpn, idx, WR, 0), "and completes");
}

/* The next @n CQEs of @q, waiting up to @max_ns of virtual time. */
static unsigned wait_cqes(struct tcq *q, struct kite_cqe *out, unsigned n, uint64_t max_ns)
{
	unsigned got = 0;
	uint64_t t = 0;

	while (got < n && t <= max_ns) {
		struct kite_cqe c = cqe_at(&q->c, q->c.b.data, q->ci);
		uint32_t want = ((q->ci >> q->c.log) & 1) ^ 1;

		if ((c.op_own & KITE_CQE_OWNER) == want &&
		    FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_INVALID) {
			q->ci++;
			setmem32(q->c.dbrec, q->ci & KITE_CQ_INDEX_MASK);
			out[got++] = c;
			continue;
		}
		clock_step(100000);
		t += 100000;
	}
	return got;
}

/*
 * Two QPs over the loopback with loss on the tx path: batches of WRITE,
 * READ (4 packets each), SEND (2) and FETCH_ADD, data compared.
 */
static void rc_loss_run(unsigned drop, unsigned dup, unsigned reorder, unsigned batches)
{
	static uint8_t wr[2][4000], rd[4000], sd[2][2000];
	struct kite_cqe cq[16];
	struct kite_wqe_sge g[1];
	struct rcpair P;
	struct res r;
	uint64_t counter = 0, r0 = qom_count("rc-counts", "retries");
	uint64_t t0 = qom_count("rc-counts", "timeouts");
	uint64_t d0 = qom_count("loss-counts", "tx-dropped");
	unsigned b, k, ok_wqes = 0, bad = 0, got;
	uint16_t idx[8];

	tcq_make(&P.scq, 6);
	tcq_make(&P.rcq, 6);
	need(tqp_create(&P.a, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create(&P.b, KITE_QPT_RC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC B");
	/* Local ACK timeout 1 ms (8), retry_cnt 7, rnr_retry 7. */
	rc_rts(&P.a, P.b.qpn, MAC, 8, 7, 7);
	rc_rts(&P.b, P.a.qpn, MAC, 8, 7, 7);
	set64(DST + 12288, 0);
	qom_set_u("loss-tx-drop", drop);
	qom_set_u("loss-tx-dup", dup);
	qom_set_u("loss-tx-reorder", reorder);
	for (b = 0; b < batches && !bad; b++) {
		fill_pattern(DST + 4096, 4000, (uint8_t)(0x61 + b), rd);
		for (k = 0; k < 2; k++) {
			fill_pattern(SRC + k * 4096, 4000, (uint8_t)(0x10 + b * 2 + k), wr[k]);
			fill_pattern(SRC + 8192 + k * 2048, 2000, (uint8_t)(0x90 + b * 2 + k), sd[k]);
			memzero(t_bus(RBUF + k * 4096), 4000);
			g[0] = sge(2048, E.lkey, RBUF + 8192 + k * 2048);
			post_recv(&P.b, g, 1);
		}
		for (k = 0; k < 2; k++) {
			g[0] = sge(4000, E.lkey, SRC + k * 4096);
			idx[4 * k] = write_rc(&P.a, WR | SIG, 0, DST + k * 8192, R.rkey, 0, 0, g, 1);
			g[0] = sge(4000, E.lkey, RBUF + k * 4096);
			idx[4 * k + 1] = write_rc(&P.a, KITE_WQE_OP_RDMA_READ | SIG, 0, DST + 4096,
						  R.rkey, 0, 0, g, 1);
			g[0] = sge(2000, E.lkey, SRC + 8192 + k * 2048);
			idx[4 * k + 2] = write_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
			g[0] = sge(8, E.lkey, SRC + 12288 + k * 8);
			idx[4 * k + 3] = write_rc(&P.a, KITE_WQE_OP_ATOMIC_FA | SIG, 0, DST + 12288,
						  R.rkey, 1, 0, g, 1);
		}
		ring_sq(&P.a);
		got = wait_cqes(&P.scq, cq, 8, 2000000000ULL);
		for (k = 0; k < got; k++) {
			if (FIELD_GET(KITE_CQE_OPCODE, cq[k].op_own) != KITE_CQE_OP_REQ ||
			    cq[k].wqe_idx != idx[k]) {
				cqe_diag("send", &cq[k]);
				bad++;
			} else {
				ok_wqes++;
			}
		}
		bad += got != 8;
		got = wait_cqes(&P.rcq, cq, 2, 100000000ULL);
		for (k = 0; k < got; k++)
			bad += FIELD_GET(KITE_CQE_OPCODE, cq[k].op_own) != KITE_CQE_OP_RESP_SEND ||
			       cq[k].byte_len != 2000;
		bad += got != 2;
		for (k = 0; k < 2 && !bad; k++) {
			bad += !mem_eq(DST + k * 8192, wr[k], 4000);
			bad += !mem_eq(RBUF + k * 4096, rd, 4000);
			bad += !mem_eq(RBUF + 8192 + k * 2048, sd[k], 2000);
			bad += mem64(SRC + 12288 + k * 8) != counter++;
		}
		if (bad)
			diag("batch %u: %u WQEs completed, %u problems", b, got, bad);
	}
	qom_set_u("loss-tx-drop", 0);
	qom_set_u("loss-tx-dup", 0);
	qom_set_u("loss-tx-reorder", 0);
	tap(!bad && mem64(DST + 12288) == counter && qp_state(P.a.qpn) == KITE_QPS_RTS &&
	    qp_state(P.b.qpn) == KITE_QPS_RTS,
	    "%u.%u%% loss (dup %u, reorder %u per mille), loopback: %u WQEs (WRITE, READ, SEND, "
	    "FETCH_ADD) complete without error, data and atomic results right, both QPs RTS",
	    drop / 10, drop % 10, dup, reorder, ok_wqes);
	diag("frames dropped %" PRIu64 ", go-back-N %" PRIu64 " (timeouts %" PRIu64 ")",
	     qom_count("loss-counts", "tx-dropped") - d0, qom_count("rc-counts", "retries") - r0,
	     qom_count("rc-counts", "timeouts") - t0);
}

static void g_rc_loss(void)
{
	eng_setup();
	rc_keys();
	rc_loss_responder();
	rc_loss_requester();
	rc_loss_probe();
	rc_loss_rsp_ring();
	rc_loss_props();
	rc_loss_run(10, 0, 0, 20);
	rc_loss_run(50, 0, 0, 20);
	rc_loss_run(100, 0, 0, 20);
	rc_loss_run(50, 20, 20, 20);
	qom_diag("loss-counts");
	qom_diag("rc-counts");
}

/* ------------------------------------------------------------------ */
/* Main                                                                */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Groups: shared receive queues                                       */
/* ------------------------------------------------------------------ */

struct tsrq {
	uint32_t srqn;
	struct qbuf q;
	unsigned log, shift;
	uint32_t pi;
};

static int srq_create_in(struct kite_cmd_create_srq *in, size_t len, struct res *r)
{
	return run(KITE_CMD_CREATE_SRQ, in, len, 0, 0, r);
}

static struct kite_cmd_create_srq srq_in(struct tsrq *q, uint32_t pdn, unsigned log,
					 unsigned shift, uint32_t limit)
{
	struct kite_cmd_create_srq in;

	memset(q, 0, sizeof(*q));
	q->log = log;
	q->shift = shift;
	q->q = qbuf_for(1ULL << (log + shift));
	memset(&in, 0, sizeof(in));
	in.pdn = pdn;
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, log) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, shift));
	in.limit = limit;
	in.pbl = q->q.pbl;
	return in;
}

static int srq_create(struct tsrq *q, uint32_t pdn, unsigned log, unsigned shift,
		      uint32_t limit, struct res *r)
{
	struct kite_cmd_create_srq in = srq_in(q, pdn, log, shift, limit);
	int c = srq_create_in(&in, sizeof(in), r);

	if (c == KITE_CMD_OK)
		q->srqn = r->result;
	return c;
}

static int srq_modify(uint32_t srqn, uint32_t mask, uint32_t limit, uint32_t rsvd,
		      struct res *r)
{
	struct kite_cmd_modify_srq in = { .srqn = srqn, .mask = mask, .limit = limit,
					  .rsvd = rsvd };

	return run(KITE_CMD_MODIFY_SRQ, &in, sizeof(in), 0, 0, r);
}

static int srq_query(uint32_t srqn, struct kite_cmd_query_srq_out *o, struct res *r)
{
	struct kite_cmd_obj in = { .obj = srqn };
	int c = run(KITE_CMD_QUERY_SRQ, &in, sizeof(in), sizeof(*o), 0, r);

	memset(o, 0, sizeof(*o));
	if (c == KITE_CMD_OK)
		memcpy(o, r->out, sizeof(*o));
	return c;
}

static uint64_t db_srq(uint32_t srqn, uint32_t pi)
{
	return db_wq(KITE_DB_TYPE_SRQ, srqn, pi);
}

/* Write an SRQ WQE with @tag and @num_sge (n segments copied); ring if @ring. */
static void srq_post_raw(struct tsrq *q, uint16_t tag, uint32_t num_sge, uint32_t rsvd,
			 const struct kite_wqe_sge *g, unsigned n, bool ring)
{
	uint8_t w[1024];
	struct kite_wqe_srq_recv h;
	uint32_t stride = 1u << q->shift;

	memset(w, 0, sizeof(w));
	memset(&h, 0, sizeof(h));
	h.num_sge = num_sge;
	h.tag = tag;
	h.rsvd[0] = rsvd;
	memcpy(w, &h, 16);
	memcpy(w + 16, g, 16 * n);
	memwrite(q->q.data + ((uint64_t)(q->pi & ((1u << q->log) - 1)) << q->shift), w, stride);
	q->pi++;
	if (ring)
		wr64(db_addr(0), db_srq(q->srqn, q->pi));
}

static void srq_post(struct tsrq *q, uint16_t tag, const struct kite_wqe_sge *g, unsigned n)
{
	srq_post_raw(q, tag, n, 0, g, n, true);
}

/* A QP (type @type) receiving from @srqn; no RQ. */
static int tqp_create_srq(struct tqp *q, uint32_t type, uint32_t pdn, uint32_t scqn,
			  uint32_t rcqn, uint32_t srqn, struct res *r)
{
	struct kite_cmd_create_qp in;
	int c;

	memset(q, 0, sizeof(*q));
	q->type = type;
	q->slog = 4;
	q->sshift = 8;
	q->sq = qbuf_for(1ULL << (q->slog + q->sshift));
	memset(&in, 0, sizeof(in));
	in.type = type;
	in.flags = KITE_QP_F_SRQ;
	in.pdn = pdn;
	in.send_cqn = scqn;
	in.recv_cqn = rcqn;
	in.sq_cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, q->slog) |
			       FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, q->sshift));
	in.sq_pbl = q->sq.pbl;
	in.srqn = srqn;
	c = run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, r);
	if (c == KITE_CMD_OK)
		q->qpn = r->result;
	return c;
}

#define SRQ_OFF(f)	offsetof(struct kite_cmd_create_srq, f)
#define CQP_OFF(f)	offsetof(struct kite_cmd_create_qp, f)

static void g_srq(void)
{
	struct kite_cmd_create_srq in;
	struct kite_cmd_create_qp qin;
	struct kite_cmd_query_srq_out o;
	struct qpspec qs;
	struct tsrq a, b, t;
	struct tqp q;
	struct res r;
	uint32_t u1, pd_u1, n;
	uint64_t bad0;

	fixture();

	/* Valid: create, query, modify, destroy. */
	need(srq_create(&a, fx_pd, 6, 6, 0, &r), &r, "CREATE_SRQ 64 x 64 bytes");
	tap(a.srqn >= 1 && a.srqn < 256, "CREATE_SRQ: SRQN %u in 1..255", a.srqn);
	srq_query(a.srqn, &o, &r);
	tap((r.status & 0xff) == KITE_CMD_OK && o.state == KITE_SRQ_STATE_OK && o.flags == 0 &&
	    o.pdn == fx_pd && o.limit == 0 && o.pi == 0 && o.ci == 0 && o.nqp == 0 &&
	    o.cfg == (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
				FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6)),
	    "QUERY_SRQ: state OK, not armed, PD, cfg, pi = ci = 0, no QP");
	need(srq_create(&b, fx_pd, 12, 10, 4096, &r), &r, "CREATE_SRQ 4096 x 1024 bytes, limit 4096");
	srq_query(b.srqn, &o, &r);
	tap(o.flags == KITE_SRQ_F_ARMED && o.limit == 4096,
	    "CREATE_SRQ with a limit: armed at creation (limit %u)", o.limit);
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 10, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ LIMIT 10");
	srq_query(a.srqn, &o, &r);
	tap(o.flags == KITE_SRQ_F_ARMED && o.limit == 10, "QUERY_SRQ: armed, limit 10");
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 0, 0, &r);
	srq_query(a.srqn, &o, &r);
	tap((r.status & 0xff) == KITE_CMD_OK && !o.flags && !o.limit, "MODIFY_SRQ LIMIT 0 disarms");
	srq_modify(a.srqn, 0, 5, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "MODIFY_SRQ with an empty mask: nothing changes");
	srq_query(a.srqn, &o, &r);
	tap(!o.flags && !o.limit, "empty mask: limit still 0");

	/* Invalid CREATE_SRQ input. */
	in = srq_in(&t, fx_pd, 6, 6, 0);
	srq_create_in(&in, sizeof(in) - 1, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_SRQ with in_len 31 -> E_LENGTH");
	in.pdn = 0;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(pdn), "CREATE_SRQ on PD 0 -> E_OBJECT");
	in.pdn = 999;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(pdn), "CREATE_SRQ on a free PDN -> E_OBJECT");
	in.pdn = 5000;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(pdn), "CREATE_SRQ on PDN 5000 -> E_OBJECT");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.uctx = 7;
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_OBJECT, SRQ_OFF(uctx), "CREATE_SRQ for a free UCTX -> E_OBJECT");
	in = srq_in(&t, fx_pd, 0, 6, 0);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ depth 2^0 -> E_PARAM");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 13) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6));
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ depth 2^13 -> E_PARAM");
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 5));
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ WQE size 32 -> E_PARAM");
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 11));
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ WQE size 2048 -> E_PARAM");
	in.cfg = (uint32_t)(FIELD_PREP(KITE_WQ_CFG_LOG_DEPTH, 6) |
			    FIELD_PREP(KITE_WQ_CFG_WQE_SHIFT, 6)) | BIT(20);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(cfg), "CREATE_SRQ with a reserved cfg bit -> E_PARAM");
	in = srq_in(&t, fx_pd, 6, 6, 65);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PARAM, SRQ_OFF(limit), "CREATE_SRQ limit 65 > depth 64 -> E_PARAM");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.pbl.cfg = pbl_cfg(0, 25);
	srq_create_in(&in, sizeof(in), &r);
	expect(&r, KITE_CMD_E_PBL, SRQ_OFF(pbl), "CREATE_SRQ with a malformed PBL -> E_PBL");
	in = srq_in(&t, fx_pd, 6, 6, 0);
	in.pbl.npages = 3;
	srq_create_in(&in, sizeof(in), &r);
	tap((r.status & 0xff) == KITE_CMD_E_PBL, "CREATE_SRQ whose PBL does not describe the ring -> E_PBL");

	/* Invalid MODIFY/QUERY/DESTROY. */
	srq_modify(0, KITE_MODIFY_SRQ_LIMIT, 1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "MODIFY_SRQ of SRQN 0 -> E_OBJECT");
	srq_modify(200, KITE_MODIFY_SRQ_LIMIT, 1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "MODIFY_SRQ of a free SRQN -> E_OBJECT");
	srq_modify(0xffffff, KITE_MODIFY_SRQ_LIMIT, 1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "MODIFY_SRQ of SRQN 0xffffff -> E_OBJECT");
	srq_modify(a.srqn, BIT(1), 1, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_modify_srq, mask),
	       "MODIFY_SRQ with an undefined mask bit -> E_PARAM");
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 65, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_modify_srq, limit),
	       "MODIFY_SRQ limit 65 > depth 64 -> E_PARAM");
	srq_modify(a.srqn, KITE_MODIFY_SRQ_LIMIT, 1, 1, &r);
	expect(&r, KITE_CMD_E_PARAM, offsetof(struct kite_cmd_modify_srq, rsvd),
	       "MODIFY_SRQ with reserved bits -> E_PARAM");
	run(KITE_CMD_MODIFY_SRQ, NULL, 8, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "MODIFY_SRQ with in_len 8 -> E_LENGTH");
	{
		struct kite_cmd_obj oin = { .obj = a.srqn };

		run(KITE_CMD_QUERY_SRQ, &oin, sizeof(oin), sizeof(o) - 1, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_SRQ with out_len 31 -> E_LENGTH");
	}
	srq_query(77, &o, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "QUERY_SRQ of a free SRQN -> E_OBJECT");
	cmd_obj(KITE_CMD_QUERY_SRQ, a.srqn, 3, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "QUERY_SRQ with uctx set -> E_PARAM");
	cmd_obj(KITE_CMD_DESTROY_SRQ, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_SRQ of SRQN 0 -> E_OBJECT");

	/* QPs on an SRQ. */
	need(tqp_create_srq(&q, KITE_QPT_RC, fx_pd, fx_cq.cqn, fx_cq.cqn, a.srqn, &r), &r,
	     "CREATE_QP RC on the SRQ");
	tap(true, "CREATE_QP RC with KITE_QP_F_SRQ and no RQ -> OK");
	srq_query(a.srqn, &o, &r);
	tap(o.nqp == 1, "QUERY_SRQ: one QP attached");
	cmd_obj(KITE_CMD_DESTROY_SRQ, a.srqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_SRQ with a QP attached -> E_BUSY");
	bad0 = stat1(KITE_STAT_BAD_DOORBELLS);
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, q.qpn, 1));
	clock_step(POLL_STEP_NS);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == bad0 + 1,
	    "RQ doorbell of a QP with an SRQ: ignored, BAD_DOORBELLS +1");
	need(tqp_create_srq(&q, KITE_QPT_UD, fx_pd, fx_cq.cqn, fx_cq.cqn,
			    a.srqn, &r), &r, "CREATE_QP UD on the SRQ");
	srq_query(a.srqn, &o, &r);
	tap(o.nqp == 2, "QUERY_SRQ: two QPs attached (RC and UD)");
	cmd_obj(KITE_CMD_DESTROY_QP, q.qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of the UD QP on the SRQ");

	qs = qps(KITE_QPT_RC, fx_pd, fx_cq.cqn, 0);
	qin = qp_in(&qs);
	qin.flags = KITE_QP_F_SRQ;
	qin.srqn = a.srqn;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(rq_cfg), "CREATE_QP with an SRQ and an RQ -> E_PARAM");
	qin.rq_cfg = 0;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PBL, CQP_OFF(rq_pbl), "CREATE_QP with an SRQ and an RQ PBL -> E_PBL");
	memset(&qin.rq_pbl, 0, sizeof(qin.rq_pbl));
	qin.srqn = 200;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn), "CREATE_QP on a free SRQN -> E_OBJECT");
	qin.srqn = 0;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn), "CREATE_QP with KITE_QP_F_SRQ on SRQN 0 -> E_OBJECT");
	qin.srqn = a.srqn;
	run(KITE_CMD_CREATE_QP, &qin, KITE_CMD_CREATE_QP_V0_LEN, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "CREATE_QP with KITE_QP_F_SRQ and in_len 64 -> E_LENGTH");
	qin.type = KITE_QPT_GSI;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(flags), "CREATE_QP GSI with an SRQ -> E_PARAM");
	qin = qp_in(&qs);
	qin.srqn = a.srqn;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(srqn), "CREATE_QP with srqn but no KITE_QP_F_SRQ -> E_PARAM");
	qin = qp_in(&qs);
	qin.rsvd[1] = 1;
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, CQP_OFF(rsvd) + 4, "CREATE_QP with reserved bits -> E_PARAM");

	/* A user context's SRQ: doorbells only in its page, QPs of that context. */
	u1 = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	pd_u1 = need(alloc_pd(u1, &r), &r, "ALLOC_PD (user)");
	in = srq_in(&t, pd_u1, 4, 6, 0);
	in.uctx = u1;
	need(srq_create_in(&in, sizeof(in), &r), &r, "CREATE_SRQ (user)");
	t.srqn = r.result;
	bad0 = stat1(KITE_STAT_BAD_DOORBELLS);
	wr64(db_addr(0), db_srq(t.srqn, 1));
	wr64(db_addr(u1 + 1), db_srq(t.srqn, 1));
	wr64(db_addr(u1), db_srq(t.srqn, 17));
	wr64(db_addr(u1), db_srq(a.srqn, 1));
	wr64(db_addr(u1), db_srq(250, 1));
	clock_step(POLL_STEP_NS);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == bad0 + 5,
	    "SRQ doorbells: another page, PI more than depth ahead, another context's SRQ, "
	    "a free SRQN -> ignored, BAD_DOORBELLS +5");
	wr64(db_addr(u1), db_srq(t.srqn, 16));
	clock_step(POLL_STEP_NS);
	srq_query(t.srqn, &o, &r);
	tap(stat1(KITE_STAT_BAD_DOORBELLS) == bad0 + 5 && o.pi == 16,
	    "SRQ doorbell in its context's page with PI = depth: accepted (pi %u)", o.pi);
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while its SRQ exists -> E_BUSY");
	qs = qps(KITE_QPT_UD, pd_u1, fx_cq.cqn, 0);
	qin = qp_in(&qs);
	qin.flags = KITE_QP_F_SRQ;
	qin.srqn = t.srqn;
	qin.rq_cfg = 0;
	memset(&qin.rq_pbl, 0, sizeof(qin.rq_pbl));
	run(KITE_CMD_CREATE_QP, &qin, sizeof(qin), 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, CQP_OFF(srqn), "kernel QP on a user context's SRQ -> E_OBJECT");
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r), &r, "DESTROY_SRQ (user)");
	cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DESTROY_SRQ twice -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd_u1, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD (user) after its SRQ is gone");
	need(cmd_obj(KITE_CMD_DEALLOC_UCTX, u1, 0, &r), &r, "DEALLOC_UCTX");

	/* PD busy while an SRQ uses it; the table fills at 255. */
	{
		uint32_t pd3 = need(alloc_pd(0, &r), &r, "ALLOC_PD 3");

		in = srq_in(&t, pd3, 1, 6, 0);
		need(srq_create_in(&in, sizeof(in), &r), &r, "CREATE_SRQ on PD 3");
		t.srqn = r.result;
		cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r);
		expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while an SRQ uses it -> E_BUSY");
		need(cmd_obj(KITE_CMD_DESTROY_SRQ, t.srqn, 0, &r), &r, "DESTROY_SRQ on PD 3");
		need(cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r), &r, "DEALLOC_PD 3");
	}
	n = 0;
	for (;;) {
		in = srq_in(&t, fx_pd, 1, 6, 0);
		if (srq_create_in(&in, sizeof(in), &r) != KITE_CMD_OK)
			break;
		if (++n > 300)
			break;
	}
	tap((r.status & 0xff) == KITE_CMD_E_NO_RESOURCES && n == 255 - 2,
	    "CREATE_SRQ until the table is full: %u more, then E_NO_RESOURCES", n);
	cmd_obj(KITE_CMD_DESTROY_QP, q.qpn, 0, &r);
}

/* The SRQ engine fixture: a UD pair and an RC pair whose B sides use one SRQ. */
static struct {
	struct tsrq s;
	struct tcq scq, rcq;
	struct tqp ua, ub, ub2, ra, rb;
} S;

static void srq_setup(unsigned log, uint32_t limit)
{
	struct res r;

	eng_setup();
	rc_keys();
	need(srq_create(&S.s, fx_pd, log, 7, limit, &r), &r, "CREATE_SRQ");
	tcq_make(&S.scq, 6);
	tcq_make(&S.rcq, 8);
	need(tqp_create(&S.ua, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD A");
	need(tqp_create_srq(&S.ub, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn, &r),
	     &r, "CREATE_QP UD B (SRQ)");
	need(tqp_create_srq(&S.ub2, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn, &r),
	     &r, "CREATE_QP UD B2 (SRQ)");
	tqp_rts(&S.ua);
	tqp_rts(&S.ub);
	tqp_rts(&S.ub2);
	need(tqp_create(&S.ra, KITE_QPT_RC, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP RC A");
	need(tqp_create_srq(&S.rb, KITE_QPT_RC, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn, &r),
	     &r, "CREATE_QP RC B (SRQ)");
	/* RNR retries without end: the SRQ runs empty on purpose. */
	rc_rts(&S.ra, S.rb.qpn, MAC, 14, 7, 7);
	rc_rts(&S.rb, S.ra.qpn, MAC, 14, 7, 7);
}

static void ud_send(struct tqp *from, uint32_t to, uint64_t src, uint32_t len)
{
	struct kite_wqe_ud av = av4(to, T_QKEY, MAC);
	struct kite_wqe_sge g = sge(len, E.lkey, src);

	post_send(from, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &g, 1, NULL, 0, true);
}

static void g_srq_engine(void)
{
	static uint8_t want[6000];
	struct kite_wqe_sge g[3];
	struct kite_cmd_query_srq_out o;
	struct kite_cqe c;
	struct res r;
	uint16_t idx;
	unsigned mark, i;
	uint64_t drops;
	bool ok;

	srq_setup(4, 0);

	/* UD into the SRQ: tags echoed, data compared, two QPs share it. */
	g[0] = sge(1000, E.lkey, RBUF);
	srq_post(&S.s, 0x1234, g, 1);
	g[0] = sge(500, E.lkey, RBUF + 2048);
	g[1] = sge(500, E.lkey, RBUF + 4096);
	srq_post(&S.s, 0x0007, g, 2);
	fill_pattern(SRC, 300, 0x41, want);
	ud_send(&S.ua, S.ub.qpn, SRC, 300);
	tap(tcq_next(&S.scq, &c) && cqe_is(&c, KITE_CQE_OP_REQ, S.ua.qpn, 0), "UD A send CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.ub.qpn, 0) && c.wqe_idx == 0x1234 &&
		 c.byte_len == 340 && c.src_qpn == S.ua.qpn,
		 "UD B on the SRQ: RESP_SEND, wqe_idx = the WQE's tag 0x1234, byte_len 40+300"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 40, want, 300), "UD SEND into the SRQ WQE: payload byte for byte");
	fill_pattern(SRC, 900, 0x52, want);
	ud_send(&S.ua, S.ub2.qpn, SRC, 900);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.ub2.qpn, 0) && c.wqe_idx == 7 &&
		 c.byte_len == 940, "UD B2 takes the next SRQ WQE: tag 7, byte_len 940"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 2048 + 40, want, 460) && mem_eq(RBUF + 4096, want + 460, 440),
	    "UD SEND scattered over the SRQ WQE's two segments byte for byte");
	srq_query(S.s.srqn, &o, &r);
	tap(o.pi == 2 && o.ci == 2 && o.nqp == 3, "QUERY_SRQ: pi 2, ci 2, 3 QPs attached");
	drops = stat1(KITE_STAT_ROCE_RX_DROPS);
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == drops + 1 && tcq_drain(&S.rcq) == 0,
	    "UD SEND to a QP whose SRQ is empty: dropped, no CQE");

	/* RC into the SRQ: one and several packets. */
	g[0] = sge(200, E.lkey, RBUF);
	srq_post(&S.s, 0x100, g, 1);
	g[0] = sge(3000, E.lkey, RBUF + 1024);
	g[1] = sge(3000, E.lkey, RBUF + 8192);
	srq_post(&S.s, 0x101, g, 2);
	fill_pattern(SRC, 100, 0x10, want);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_SEND, 0), "RC SEND to the SRQ QP: REQ CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.rb.qpn, 0) && c.wqe_idx == 0x100 &&
		 c.byte_len == 100, "RC receive CQE on the SRQ: tag 0x100, byte_len 100"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 100), "RC SEND payload byte for byte");
	fill_pattern(SRC, 5000, 0x22, want);
	g[0] = sge(5000, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_SEND, 0), "RC SEND 5000 bytes: REQ CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.rb.qpn, 0) && c.wqe_idx == 0x101 &&
		 c.byte_len == 5000, "RC 5-packet SEND on the SRQ: one CQE, tag 0x101"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF + 1024, want, 3000) && mem_eq(RBUF + 8192, want + 3000, 2000),
	    "5000 bytes scattered over the SRQ WQE byte for byte");
	/* WRITE_IMM consumes an SRQ WQE. */
	g[0] = sge(8, E.lkey, RBUF);
	srq_post(&S.s, 0x2a, g, 1);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_RDMA_WRITE_IMM | KITE_WQE_F_SIGNALED, 0xaabbccdd, DST,
		      R.rkey, 0, 0, g, 1);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0), "RC WRITE_IMM: REQ CQE");
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, S.rb.qpn, 0) && c.wqe_idx == 0x2a &&
		 c.imm_data == 0xaabbccdd, "RC WRITE_IMM on the SRQ: RESP_WRITE_IMM, tag 0x2a"))
		cqe_diag("recv", &c);
	/* RNR while the SRQ is empty, then the SEND lands once a WQE is posted. */
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	tap(tcq_drain(&S.rcq) == 0, "RC SEND with the SRQ empty: no receive CQE (RNR NAK)");
	g[0] = sge(100, E.lkey, RBUF);
	srq_post(&S.s, 0x33, g, 1);
	run_for(50000000);
	ok = tcq_next(&S.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, S.rb.qpn, 0) && c.wqe_idx == 0x33,
		 "after the RNR back-off the retried SEND takes the new SRQ WQE (tag 0x33)"))
		cqe_diag("recv", &c);
	tap(req_ok(&S.scq, S.ra.qpn, idx, KITE_WQE_OP_SEND, 0), "and the requester completes");

	/* The limit event. */
	srq_modify(S.s.srqn, KITE_MODIFY_SRQ_LIMIT, 3, 0, &r);
	for (i = 0; i < 4; i++) {
		g[0] = sge(100, E.lkey, RBUF + 256 * i);
		srq_post(&S.s, (uint16_t)(0x40 + i), g, 1);
	}
	mark = neqlog;
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_SRQ_LIMIT, S.s.srqn), "4 -> 3 WQEs with limit 3: no event");
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);
	eq_drain(&eq0);
	{
		const struct kite_eqe *e = eqe_find(mark, KITE_EQE_SRQ_LIMIT, S.s.srqn);

		tap(e && e->data == 2, "3 -> 2 WQEs: SRQ_LIMIT event (obj SRQN, data 2 left)");
	}
	srq_query(S.s.srqn, &o, &r);
	tap(!(o.flags & KITE_SRQ_F_ARMED), "QUERY_SRQ: the limit disarmed after the event");
	mark = neqlog;
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);
	eq_drain(&eq0);
	tap(!eqe_find(mark, KITE_EQE_SRQ_LIMIT, S.s.srqn), "disarmed: no second event");
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	tcq_next(&S.rcq, &c);

	/* Malformed SRQ WQEs complete in error and the receiving QP fails. */
	g[0] = sge(100, E.lkey, RBUF);
	srq_post_raw(&S.s, 0x77, 9, 0, g, 1, true);
	mark = neqlog;
	ud_send(&S.ua, S.ub.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, S.ub.qpn, KITE_SYND_LOCAL_QP_OP) &&
	    c.wqe_idx == 0x77, "SRQ WQE with num_sge 9: RESP_ERR LOCAL_QP_OP, tag 0x77");
	tap(qp_state(S.ub.qpn) == KITE_QPS_ERR, "the UD QP goes to ERR");
	run_for(1000000);
	eq_drain(&eq0);
	tap(eqe_find(mark, KITE_EQE_QP_LAST_WQE, S.ub.qpn) != NULL,
	    "a QP with an SRQ in ERR posts QP_LAST_WQE");
	srq_post_raw(&S.s, 0x78, 1, 5, g, 1, true);
	ud_send(&S.ua, S.ub2.qpn, SRC, 10);
	tcq_next(&S.scq, &c);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, S.ub2.qpn, KITE_SYND_LOCAL_QP_OP) &&
	    c.wqe_idx == 0x78, "SRQ WQE with reserved bits: RESP_ERR LOCAL_QP_OP, tag 0x78");
	g[0] = sge(100, E.lkey_ro, E.ro_iova);
	srq_post(&S.s, 0x79, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	ok = tcq_next(&S.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_ERR, S.rb.qpn, KITE_SYND_LOCAL_ACCESS) &&
	    c.wqe_idx == 0x79, "RC SEND into an SRQ WQE without LOCAL_WRITE: RESP_ERR LOCAL_ACCESS, tag 0x79");
	tap(qp_state(S.rb.qpn) == KITE_QPS_ERR, "the RC responder goes to ERR");
	tcq_drain(&S.scq);
	tcq_drain(&S.rcq);
	/* A WQE outside guest RAM: the SRQ enters its error state. */
	{
		struct tqp u3;

		need(tqp_create_srq(&u3, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, S.s.srqn,
				    &r), &r, "CREATE_QP UD 3 (SRQ)");
		tqp_rts(&u3);
		g[0] = sge(100, E.lkey, 0xfff000000000ULL);
		srq_post(&S.s, 0x7a, g, 1);
		ud_send(&S.ua, u3.qpn, SRC, 10);
		tcq_next(&S.scq, &c);
		ok = tcq_next(&S.rcq, &c);
		tap(ok && c.wqe_idx == 0x7a &&
		    FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_RESP_ERR,
		    "SRQ WQE with a segment outside the MR: RESP_ERR, tag 0x7a");
		cmd_obj(KITE_CMD_DESTROY_QP, u3.qpn, 0, &r);
	}
	/* A ring outside guest RAM: the SRQ enters its error state. */
	{
		struct kite_cmd_create_srq in;
		struct tsrq x;
		struct tqp u4;

		in = srq_in(&x, fx_pd, 4, 6, 0);
		in.pbl.addr = 0xfff000000000ULL;
		need(srq_create_in(&in, sizeof(in), &r), &r, "CREATE_SRQ with its ring outside RAM");
		x.srqn = r.result;
		need(tqp_create_srq(&u4, KITE_QPT_UD, fx_pd, S.scq.c.cqn, S.rcq.c.cqn, x.srqn,
				    &r), &r, "CREATE_QP UD 4 (bad SRQ)");
		tqp_rts(&u4);
		wr64(db_addr(0), db_srq(x.srqn, 1));
		mark = neqlog;
		drops = stat1(KITE_STAT_ROCE_RX_DROPS);
		ud_send(&S.ua, u4.qpn, SRC, 10);
		tcq_next(&S.scq, &c);
		eq_drain(&eq0);
		tap(eqe_find(mark, KITE_EQE_SRQ_ERROR, x.srqn) != NULL &&
		    stat1(KITE_STAT_ROCE_RX_DROPS) == drops + 1 && tcq_drain(&S.rcq) == 0,
		    "SRQ WQE unreachable: SRQ_ERROR event, the message dropped, no CQE");
		srq_query(x.srqn, &o, &r);
		tap(o.state == KITE_SRQ_STATE_ERROR, "QUERY_SRQ: state ERROR");
		ud_send(&S.ua, u4.qpn, SRC, 10);
		tcq_next(&S.scq, &c);
		tap(tcq_drain(&S.rcq) == 0, "an SRQ in error takes no more WQEs");
		cmd_obj(KITE_CMD_DESTROY_QP, u4.qpn, 0, &r);
		need(cmd_obj(KITE_CMD_DESTROY_SRQ, x.srqn, 0, &r), &r, "DESTROY_SRQ in error");
	}
	cmd_obj(KITE_CMD_DESTROY_SRQ, S.s.srqn, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DESTROY_SRQ while QPs use it -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, S.ub.qpn, 0, &r);
	cmd_obj(KITE_CMD_DESTROY_QP, S.ub2.qpn, 0, &r);
	cmd_obj(KITE_CMD_DESTROY_QP, S.rb.qpn, 0, &r);
	need(cmd_obj(KITE_CMD_DESTROY_SRQ, S.s.srqn, 0, &r), &r, "DESTROY_SRQ");
	tap(true, "DESTROY_SRQ after its QPs are gone -> OK");
}

/* Random SRQ WQEs and doorbells under UD and RC traffic: no crash, CQEs sane. */
static void g_srq_random(void)
{
	struct kite_wqe_sge g[KITE_MAX_SGE];
	struct kite_cqe c;
	unsigned i, j, n, cqes = 0, bad = 0;
	struct res r;

	srq_setup(6, 5);
	rng_state = 0x5eed5eedULL;
	for (i = 0; i < 300; i++) {
		unsigned k = rndn(10);

		if (k < 5) {
			n = rndn(KITE_MAX_SGE + 2);
			for (j = 0; j < KITE_MAX_SGE; j++)
				g[j] = sge(rndn(3) ? rndn(2048) : (uint32_t)rnd(),
					   rndn(4) ? E.lkey : (uint32_t)rnd(),
					   rndn(4) ? RBUF + rndn(8192) : rnd());
			srq_post_raw(&S.s, (uint16_t)rnd(), rndn(8) ? n : (uint32_t)rnd(),
				     rndn(10) ? 0 : (uint32_t)rnd(), g,
				     n > KITE_MAX_SGE ? KITE_MAX_SGE : n, rndn(6) != 0);
		} else if (k < 7) {
			wr64(db_addr(rndn(3)), db_srq(rndn(4) ? S.s.srqn : (uint32_t)rnd(),
						      rndn(3) ? S.s.pi : (uint32_t)rnd()));
		} else if (k < 9) {
			ud_send(&S.ua, rndn(2) ? S.ub.qpn : S.ub2.qpn, SRC, rndn(1500));
		} else {
			g[0] = sge(rndn(6000), E.lkey, SRC);
			post_rc(&S.ra, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
		}
		if (!rndn(20))
			srq_modify(S.s.srqn, KITE_MODIFY_SRQ_LIMIT, rndn(80), 0, &r);
		if (!rndn(8)) {
			clock_step(POLL_STEP_NS);
			while (tcq_next(&S.rcq, &c)) {
				cqes++;
				if (c.qpn != S.ub.qpn && c.qpn != S.ub2.qpn && c.qpn != S.rb.qpn)
					bad++;
			}
			tcq_drain(&S.scq);
		}
	}
	run_for(5000000);
	while (tcq_next(&S.rcq, &c))
		cqes++;
	eq_drain(&eq0);
	tap(bad == 0, "random SRQ WQEs, doorbells and traffic: %u receive CQEs, every one "
	    "for a QP on the SRQ", cqes);
	tap(nop(&r) == KITE_CMD_OK, "the device still answers commands");
}

/* ------------------------------------------------------------------ */
/* QP counter sets                                                     */
/* ------------------------------------------------------------------ */

static int cntr_query(uint32_t set, uint64_t *v, struct res *r)
{
	struct kite_cmd_obj in = { .obj = set };
	int code = run(KITE_CMD_QUERY_CNTR, &in, sizeof(in), KITE_QP_STAT_COUNT * 8, 0, r);

	if (!code)
		memcpy(v, r->out, KITE_QP_STAT_COUNT * 8);
	return code;
}

static int cntr_set_qp(uint32_t qpn, uint32_t set, struct res *r)
{
	struct kite_cmd_set_qp_cntr in = { .qpn = qpn, .cntr = set };

	return run(KITE_CMD_SET_QP_CNTR, &in, sizeof(in), 0, 0, r);
}

static uint64_t cntr1(uint32_t set, unsigned stat)
{
	uint64_t v[KITE_QP_STAT_COUNT];
	struct res r;

	need(cntr_query(set, v, &r), &r, "QUERY_CNTR");
	return v[stat];
}

static void g_cntr(void)
{
	uint64_t v[KITE_QP_STAT_COUNT], base[KITE_QP_STAT_COUNT];
	struct kite_wqe_sge g[1];
	struct kite_cmd_set_qp_cntr sq;
	struct rcpair P;
	struct res r;
	uint32_t sa, sb, set, n, i, codes = 0;
	uint16_t idx;
	bool zero = true;

	eng_setup();
	rc_keys();
	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out), 0, &r),
	     &r, "QUERY_DEVICE");
	tap(((struct kite_cmd_query_device_out *)r.out)->max_cntr == 64 &&
	    (((struct kite_cmd_query_device_out *)r.out)->features & KITE_FEAT_QP_CNTR),
	    "QUERY_DEVICE: KITE_FEAT_QP_CNTR, max_cntr 64");
	need(cntr_query(0, base, &r), &r, "QUERY_CNTR 0");
	tap(r.result == KITE_QP_STAT_COUNT, "QUERY_CNTR 0: result %u counters", r.result);

	sa = need(run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r), &r, "ALLOC_CNTR");
	sb = need(run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r), &r, "ALLOC_CNTR");
	tap(sa == 1 && sb == 2, "ALLOC_CNTR: lowest free sets 1 and 2 (%u, %u)", sa, sb);
	need(cntr_query(sa, v, &r), &r, "QUERY_CNTR new set");
	for (i = 0; i < KITE_QP_STAT_COUNT; i++)
		zero &= !v[i];
	tap(zero, "a new set's counters are zero");

	/* A 5000-byte SEND, five packets at MTU 1024, each QP in its set. */
	rc_pair(&P, MAC, 14, 7, 1);
	need(cntr_set_qp(P.a.qpn, sa, &r), &r, "SET_QP_CNTR A");
	need(cntr_set_qp(P.b.qpn, sb, &r), &r, "SET_QP_CNTR B");
	g[0] = sge(6000, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(5000, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "SEND 5000 bytes: REQ CQE");
	tcq_drain(&P.rcq);
	need(cntr_query(sa, v, &r), &r, "QUERY_CNTR A's set");
	tap(v[KITE_QP_STAT_TX_PKTS] == 5 && v[KITE_QP_STAT_TX_BYTES] > 5000,
	    "requester's set: 5 packets sent, more than 5000 bytes (%" PRIu64 ", %" PRIu64 ")",
	    v[KITE_QP_STAT_TX_PKTS], v[KITE_QP_STAT_TX_BYTES]);
	tap(v[KITE_QP_STAT_RX_PKTS] >= 1 &&
	    v[KITE_QP_STAT_RX_PKTS] == cntr1(sb, KITE_QP_STAT_TX_PKTS) &&
	    v[KITE_QP_STAT_RX_BYTES] == cntr1(sb, KITE_QP_STAT_TX_BYTES),
	    "the ACKs the responder sent are the packets the requester received (%" PRIu64 ")",
	    v[KITE_QP_STAT_RX_PKTS]);
	tap(cntr1(sb, KITE_QP_STAT_RX_PKTS) == 5 &&
	    cntr1(sb, KITE_QP_STAT_RX_BYTES) == v[KITE_QP_STAT_TX_BYTES],
	    "responder's set: the 5 packets and their bytes received");
	tap(!v[KITE_QP_STAT_RETRIES] && !v[KITE_QP_STAT_RX_DROPS],
	    "no loss: no retry, no drop");
	need(cntr_query(0, v, &r), &r, "QUERY_CNTR 0");
	tap(v[KITE_QP_STAT_TX_PKTS] == base[KITE_QP_STAT_TX_PKTS] &&
	    v[KITE_QP_STAT_RX_PKTS] == base[KITE_QP_STAT_RX_PKTS],
	    "the default set counted none of it");

	/* An RNR NAK, then RNR retry exhausted (rnr_retry 1): two NAKs. */
	g[0] = sge(64, E.lkey, SRC);
	post_rc(&P.a, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	run_for(5000000);
	tcq_drain(&P.scq);
	tap(cntr1(sb, KITE_QP_STAT_RNR_NAKS_SENT) == 2 &&
	    cntr1(sa, KITE_QP_STAT_RNR_NAKS_RCVD) == 2,
	    "rnr_retry 1, no RQ WQE: two RNR NAKs sent and received");

	/* A set in use is not freed; a QP moved away leaves its counts. */
	cmd_obj(KITE_CMD_DEALLOC_CNTR, sa, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_CNTR of a set a QP counts in: E_BUSY");
	n = (uint32_t)cntr1(sa, KITE_QP_STAT_TX_PKTS);
	need(cntr_set_qp(P.a.qpn, 0, &r), &r, "SET_QP_CNTR A back to 0");
	tap(cntr1(sa, KITE_QP_STAT_TX_PKTS) == n, "moving the QP keeps what its set counted");
	cmd_obj(KITE_CMD_DEALLOC_CNTR, sa, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_CNTR once no QP counts in it");
	cmd_obj(KITE_CMD_QUERY_CNTR, sa, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QUERY_CNTR of a freed set: E_OBJECT");
	cmd_obj(KITE_CMD_DESTROY_QP, P.b.qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of a QP counting in set %u", sb);
	cmd_obj(KITE_CMD_DEALLOC_CNTR, sb, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "a destroyed QP counts nowhere: its set is freed");

	/* Bad input. */
	cmd_obj(KITE_CMD_DEALLOC_CNTR, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DEALLOC_CNTR 0 (the default set): E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_CNTR, 64, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DEALLOC_CNTR 64 (beyond max_cntr): E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_CNTR, 7, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DEALLOC_CNTR of a set never allocated: E_OBJECT");
	cmd_obj(KITE_CMD_QUERY_CNTR, 0, 5, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "QUERY_CNTR with a user context: E_PARAM at uctx");
	cmd_obj(KITE_CMD_QUERY_CNTR, 0xffffffff, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QUERY_CNTR 0xffffffff: E_OBJECT");
	{
		struct kite_cmd_obj in = { .obj = 0 };

		run(KITE_CMD_QUERY_CNTR, &in, sizeof(in), 12, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_CNTR out_len 12 (not 8n): E_LENGTH");
		run(KITE_CMD_QUERY_CNTR, &in, sizeof(in), 16, 0, &r);
		tap(r.done && !(r.status & 0xff) && r.result == 2,
		    "QUERY_CNTR out_len 16: the first 2 counters (result %u)", r.result);
		run(KITE_CMD_QUERY_CNTR, &in, 4, 8 * KITE_QP_STAT_COUNT, 0, &r);
		expect(&r, KITE_CMD_E_LENGTH, -1, "QUERY_CNTR in_len 4: E_LENGTH");
	}
	cntr_set_qp(P.a.qpn, 9, &r);
	expect(&r, KITE_CMD_E_OBJECT, 4, "SET_QP_CNTR to an unallocated set: E_OBJECT at cntr");
	cntr_set_qp(P.a.qpn, 64, &r);
	expect(&r, KITE_CMD_E_OBJECT, 4, "SET_QP_CNTR to set 64: E_OBJECT at cntr");
	cntr_set_qp(P.b.qpn, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "SET_QP_CNTR of a destroyed QP: E_OBJECT at qpn");
	cntr_set_qp(0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "SET_QP_CNTR of QPN 0: E_OBJECT at qpn");
	sq.qpn = P.a.qpn;
	sq.cntr = 0;
	run(KITE_CMD_SET_QP_CNTR, &sq, 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "SET_QP_CNTR in_len 4: E_LENGTH");

	/* Every set but 0 can be allocated, and no more. */
	for (n = 0; n < 100; n++)
		if (run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r))
			break;
	tap(n == 63, "ALLOC_CNTR hands out sets 1 .. 63: %u allocated", n);
	expect(&r, KITE_CMD_E_NO_RESOURCES, -1, "the 64th ALLOC_CNTR: E_NO_RESOURCES");
	for (set = 1; set < 64; set++)
		cmd_obj(KITE_CMD_DEALLOC_CNTR, set, 0, &r);

	/* Random commands: each completes, with OK or an error code. */
	rng_state = 0xc0117e55ULL;
	for (i = 0; i < 400; i++) {
		uint32_t q = rndn(4) ? P.a.qpn : (uint32_t)rnd();
		uint32_t s = rndn(3) ? rndn(70) : (uint32_t)rnd();
		int code;

		switch (rndn(4)) {
		case 0:
			code = run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r);
			break;
		case 1:
			code = cmd_obj(KITE_CMD_DEALLOC_CNTR, s, rndn(8) ? 0 : (uint32_t)rnd(), &r);
			break;
		case 2:
			code = cntr_set_qp(q, s, &r);
			break;
		default: {
			uint8_t in[KITE_CMD_PAYLOAD_SIZE] = {};

			memcpy(in, &s, sizeof(s));
			code = run(KITE_CMD_QUERY_CNTR, in, rndn(4) ? 8 : rndn(300),
				   rndn(4) ? 96 : rndn(300), 0, &r);
			break;
		}
		}
		if (code < 0 || (code > KITE_CMD_E_BUSY && code != KITE_CMD_E_LENGTH))
			break;
		codes |= 1u << code;
	}
	tap(i == 400, "400 random counter commands completed with a known status (%u)", i);
	tap((codes & 1) && (codes & (1u << KITE_CMD_E_OBJECT)),
	    "the random commands both succeeded and failed (codes 0x%x)", codes);
	need(cntr_set_qp(P.a.qpn, 0, &r), &r, "SET_QP_CNTR A back to 0");
	for (set = 1, n = 0; set < 64; set++)
		n += !cmd_obj(KITE_CMD_DEALLOC_CNTR, set, 0, &r);
	for (set = 1; set < 64; set++)
		if (run(KITE_CMD_ALLOC_CNTR, NULL, 0, 0, 0, &r))
			break;
	tap(set == 64, "after the random commands every set is free again (%u freed)", n);
	tap(nop(&r) == KITE_CMD_OK, "device still answers");
}

/* ------------------------------------------------------------------ */
/* UC transport                                                        */
/* ------------------------------------------------------------------ */

#define UC_INIT_MASK	0x0001du	/* STATE, ACCESS, PKEY_INDEX, PORT */
#define UC_RTR_MASK	0x108c1u	/* STATE, AV, PATH_MTU, RQ_PSN, DEST_QPN */
#define UC_RTS_MASK	0x04001u	/* STATE, SQ_PSN */

/* Bring UC QP @q to RTS facing @dqpn at @dmac, path MTU @mtu. */
static void uc_rts(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t mtu)
{
	struct kite_cmd_modify_qp a = attrs_valid(q->qpn);
	struct res r;

	a.dest_qpn = dqpn;
	memcpy(a.dmac, dmac, 6);
	a.dgid[15] = 1;
	a.path_mtu = mtu;
	a.rq_psn = a.sq_psn = T_RC_PSN;
	need(modify_qp(&a, UC_INIT_MASK, KITE_QPS_INIT, &r), &r, "UC RESET to INIT");
	need(modify_qp(&a, UC_RTR_MASK, KITE_QPS_RTR, &r), &r, "UC INIT to RTR");
	need(modify_qp(&a, UC_RTS_MASK, KITE_QPS_RTS, &r), &r, "UC RTR to RTS");
}

static void uc_pair(struct rcpair *p, uint8_t mtu)
{
	struct res r;

	tcq_make(&p->scq, 6);
	tcq_make(&p->rcq, 6);
	need(tqp_create(&p->a, KITE_QPT_UC, fx_pd, p->scq.c.cqn, p->rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UC A");
	need(tqp_create(&p->b, KITE_QPT_UC, fx_pd, p->scq.c.cqn, p->rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UC B");
	uc_rts(&p->a, p->b.qpn, MAC, mtu);
	uc_rts(&p->b, p->a.qpn, MAC, mtu);
}

/* A receive CQE of @qpn: @op, @len bytes, RQ WQE @idx. */
static bool recv_is(struct tcq *q, uint32_t qpn, unsigned op, uint32_t len, uint16_t idx)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c) && cqe_is(&c, op, qpn, 0) && c.byte_len == len &&
		  c.wqe_idx == idx;

	if (!ok)
		cqe_diag("recv", &c);
	return ok;
}

/* UC over loopback: every opcode, data compared; the ones UC refuses. */
static void g_uc(void)
{
	static uint8_t want[24000];
	struct kite_wqe_sge g[3];
	struct kite_cqe c;
	struct kite_cmd_modify_qp a, o;
	struct rcpair P, Q;
	struct res r;
	uint64_t d0;
	uint16_t idx;
	bool ok;

	eng_setup();
	rc_keys();
	uc_pair(&P, KITE_MTU_1024);

	/* SEND, one packet; 5000 bytes from 3 SGEs into 2 (5 packets). */
	fill_pattern(SRC, 100, 0x10, want);
	g[0] = sge(200, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG | KITE_WQE_F_SOLICITED, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "UC SEND 100 bytes: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, P.b.qpn, 0) && c.byte_len == 100 &&
		 c.wqe_idx == 0 && c.flags == KITE_CQE_F_SOLICITED,
		 "UC receive CQE: RESP_SEND, byte_len 100, SOLICITED"))
		cqe_diag("recv", &c);
	tap(mem_eq(RBUF, want, 100), "UC SEND payload byte for byte");

	fill_pattern(SRC, 5000, 0x22, want);
	g[0] = sge(3000, E.lkey, RBUF);
	g[1] = sge(3000, E.lkey, RBUF + 4000);
	post_recv(&P.b, g, 2);
	g[0] = sge(1000, E.lkey, SRC);
	g[1] = sge(2500, E.lkey, SRC + 1000);
	g[2] = sge(1500, E.lkey, SRC + 3500);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 3);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0), "UC SEND 5000 bytes: REQ CQE");
	tap(recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 5000, 1) &&
	    mem_eq(RBUF, want, 3000) && mem_eq(RBUF + 4000, want + 3000, 2000),
	    "UC 5-packet SEND: one receive CQE, byte_len 5000, data byte for byte");
	need(query_qp(P.a.qpn, &o, &r), &r, "QUERY_QP A");
	tap(o.sq_psn == ((T_RC_PSN + 6) & 0xffffff),
	    "UC SQ PSN advanced by 1 + 5 packets, wrapping at 2^24 (0x%x)", o.sq_psn);

	/* SEND with immediate, two packets. */
	fill_pattern(SRC, 1500, 0x33, want);
	g[0] = sge(2048, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(1500, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_IMM | SIG, 0xdeadbeef, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0), "UC SEND_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, P.b.qpn, 0) && c.byte_len == 1500 &&
		 c.imm_data == 0xdeadbeef && (c.flags & KITE_CQE_F_IMM) && mem_eq(RBUF, want, 1500),
		 "UC SEND_IMM (2 packets): RESP_SEND_IMM, byte_len 1500, imm, data"))
		cqe_diag("recv", &c);

	/* RDMA WRITE: no receive CQE; WRITE with immediate consumes an RQ WQE. */
	fill_pattern(SRC, 3000, 0x44, want);
	g[0] = sge(3000, E.lkey, SRC);
	idx = post_rc(&P.a, WR | SIG, 0, DST, R.rkey, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, WR, 0) && mem_eq(DST, want, 3000) &&
	    tcq_drain(&P.rcq) == 0,
	    "UC WRITE 3000: REQ CQE, data at the remote address, no receive CQE");
	fill_pattern(SRC, 2100, 0x55, want);
	g[0] = sge(16, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(2100, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE_IMM | SIG, 0x01020304, DST + 100, R.rkey, 0,
		      0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE_IMM, 0),
	    "UC WRITE_IMM: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, P.b.qpn, 0) &&
		 c.byte_len == 2100 && c.imm_data == 0x01020304 && c.wqe_idx == 3 &&
		 mem_eq(DST + 100, want, 2100),
		 "UC WRITE_IMM: RESP_WRITE_IMM, byte_len 2100, imm, data"))
		cqe_diag("recv", &c);

	/* No RQ WQE: the SEND completes at the requester, the responder drops it. */
	d0 = qom_count("rc-counts", "uc-dropped");
	fill_pattern(SRC, 64, 0x77, want);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0) && tcq_drain(&P.rcq) == 0 &&
	    qp_state(P.a.qpn) == KITE_QPS_RTS && qp_state(P.b.qpn) == KITE_QPS_RTS &&
	    qom_count("rc-counts", "uc-dropped") == d0 + 1,
	    "UC SEND without an RQ WQE: REQ CQE at once (no RNR), dropped by B, both RTS");
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	tcq_drain(&P.scq);
	tap(recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 64, 4) && mem_eq(RBUF, want, 64),
	    "the next SEND lands in the RQ WQE posted since");

	/* WRITE to a bad rkey, or without REMOTE_WRITE: dropped silently. */
	memset(want, 0xee, 512);
	memwrite(t_bus(DST), want, 512);
	g[0] = sge(512, E.lkey, SRC);
	post_rc(&P.a, WR, 0, DST, R.rkey ^ 0x100, 0, 0, g, 1);
	post_rc(&P.a, WR, 0, DST, R.rkey_nw, 0, 0, g, 1);
	idx = post_rc(&P.a, WR | SIG, 0, DST + 1ULL * T_MR_LEN, R.rkey, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, WR, 0) && mem_eq(DST, want, 512) &&
	    qp_state(P.b.qpn) == KITE_QPS_RTS && tcq_drain(&P.rcq) == 0 &&
	    qom_count("rc-counts", "uc-dropped") == d0 + 4,
	    "UC WRITEs to a bad rkey, a key without REMOTE_WRITE, out of bounds: complete at A, "
	    "memory untouched, B still RTS, no CQE");

	/* A receive WQE too small: the message is dropped, the WQE reused. */
	fill_pattern(SRC, 300, 0x5a, want);
	g[0] = sge(100, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(300, E.lkey, SRC);
	post_rc(&P.a, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
	g[0] = sge(80, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0) &&
	    recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 80, 5) && mem_eq(RBUF, want, 80) &&
	    qp_state(P.b.qpn) == KITE_QPS_RTS,
	    "UC SEND of 300 into a 100-byte RQ WQE dropped; the next SEND (80) in the same WQE");

	/* READ, atomics and SEND with invalidate are not UC operations. */
	{
		static const struct { unsigned op; const char *name; } bad[] = {
			{ KITE_WQE_OP_RDMA_READ, "RDMA READ" },
			{ KITE_WQE_OP_ATOMIC_CS, "CMP_SWAP" },
			{ KITE_WQE_OP_ATOMIC_FA, "FETCH_ADD" },
			{ KITE_WQE_OP_SEND_INV, "SEND_INV" },
		};
		unsigned i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			g[0] = sge(8, E.lkey, RBUF);
			idx = post_rc(&P.a, bad[i].op, 0, DST, R.rkey, 0, 0, g, 1);
			post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
			ok = req_err(&P.scq, P.a.qpn, idx, KITE_SYND_LOCAL_QP_OP) &&
			     req_err(&P.scq, P.a.qpn, (uint16_t)(idx + 1), KITE_SYND_WR_FLUSH) &&
			     qp_state(P.a.qpn) == KITE_QPS_SQE;
			tap(ok, "UC %s WQE: REQ_ERR LOCAL_QP_OP, the next flushed, QP in SQE",
			    bad[i].name);
			if (i == 0) {
				/* In SQE the QP still receives (B sends to A). */
				g[0] = sge(64, E.lkey, RBUF + 8192);
				post_recv(&P.a, g, 1);
				g[0] = sge(64, E.lkey, SRC);
				post_rc(&P.b, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
				tap(recv_is(&P.rcq, P.a.qpn, KITE_CQE_OP_RESP_SEND, 64, 0),
				    "UC QP in SQE: receives go on");
			}
			a = attrs_valid(P.a.qpn);
			need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_RTS, &r), &r,
			     "UC SQE to RTS");
		}
		g[0] = sge(64, E.lkey, RBUF);
		post_recv(&P.b, g, 1);
		g[0] = sge(64, E.lkey, SRC);
		idx = post_rc(&P.a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
		tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND, 0) &&
		    recv_is(&P.rcq, P.b.qpn, KITE_CQE_OP_RESP_SEND, 64, 6),
		    "UC SQE to RTS: SENDs work again");
	}

	/* 20000 bytes at MTU 256: 79 packets, beyond RC's 64-PSN window, no ACKs. */
	uc_pair(&Q, KITE_MTU_256);
	fill_pattern(SRC, 20000, 0x66, want);
	g[0] = sge(20000, E.lkey, SRC);
	idx = post_rc(&Q.a, WR | SIG, 0, RBUF, R.rkey, 0, 0, g, 1);
	run_for(2000000);
	tap(req_ok(&Q.scq, Q.a.qpn, idx, WR, 0) && mem_eq(RBUF, want, 20000),
	    "UC WRITE 20000 bytes at MTU 256 (79 packets): completes, data byte for byte");
	g[0] = sge(20000, E.lkey, RBUF);
	post_recv(&Q.b, g, 1);
	fill_pattern(SRC, 20000, 0x67, want);
	g[0] = sge(20000, E.lkey, SRC);
	idx = post_rc(&Q.a, KITE_WQE_OP_SEND_IMM | SIG, 0x0badcafe, 0, 0, 0, 0, g, 1);
	run_for(2000000);
	tap(req_ok(&Q.scq, Q.a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0) &&
	    recv_is(&Q.rcq, Q.b.qpn, KITE_CQE_OP_RESP_SEND_IMM, 20000, 0) &&
	    mem_eq(RBUF, want, 20000),
	    "UC SEND_IMM 20000 bytes at MTU 256: one receive CQE, data byte for byte");

	/* A UC QP on an SRQ, connected to itself: the SRQ WQE's tag, reuse. */
	{
		struct tsrq sq;
		struct tqp u;

		need(srq_create(&sq, fx_pd, 4, 6, 0, &r), &r, "CREATE_SRQ");
		need(tqp_create_srq(&u, KITE_QPT_UC, fx_pd, P.scq.c.cqn, P.rcq.c.cqn,
				    sq.srqn, &r), &r, "CREATE_QP UC on the SRQ");
		uc_rts(&u, u.qpn, MAC, KITE_MTU_1024);
		fill_pattern(SRC, 2000, 0x71, want);
		g[0] = sge(4000, E.lkey, RBUF);
		srq_post(&sq, 0x1234, g, 1);
		g[0] = sge(2000, E.lkey, SRC);
		idx = post_rc(&u, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
		tap(req_ok(&P.scq, u.qpn, idx, KITE_WQE_OP_SEND, 0) &&
		    recv_is(&P.rcq, u.qpn, KITE_CQE_OP_RESP_SEND, 2000, 0x1234) &&
		    mem_eq(RBUF, want, 2000),
		    "UC on an SRQ (to itself): SEND 2000 in the SRQ WQE tagged 0x1234, data");
		g[0] = sge(100, E.lkey, RBUF);
		srq_post(&sq, 0x2345, g, 1);
		g[0] = sge(300, E.lkey, SRC);
		post_rc(&u, KITE_WQE_OP_SEND, 0, 0, 0, 0, 0, g, 1);
		fill_pattern(SRC, 90, 0x72, want);
		g[0] = sge(90, E.lkey, SRC);
		idx = post_rc(&u, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
		tap(req_ok(&P.scq, u.qpn, idx, KITE_WQE_OP_SEND, 0) &&
		    recv_is(&P.rcq, u.qpn, KITE_CQE_OP_RESP_SEND, 90, 0x2345) &&
		    mem_eq(RBUF, want, 90) && qp_state(u.qpn) == KITE_QPS_RTS,
		    "UC on an SRQ: a SEND too long for the SRQ WQE dropped, the WQE (0x2345) "
		    "takes the next one");
	}

	/* SQD: drained at once once the message in progress is sent. */
	a = attrs_valid(P.a.qpn);
	d0 = neqlog;
	need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_SQD, &r), &r, "UC RTS to SQD");
	eq_drain(&eq0);
	tap(eqe_find((unsigned)d0, KITE_EQE_SQ_DRAINED, P.a.qpn) != NULL,
	    "UC RTS to SQD with nothing outstanding: SQ_DRAINED event");
}

/* A UC frame from the wire's peer to QP @qpn. */
static void w_uc(uint32_t qpn, uint8_t op, uint32_t psn, bool ackreq, const uint8_t *ext,
		 size_t ext_len, const uint8_t *pl, size_t len)
{
	static uint8_t f[2048];

	wire_send(f, w_frame(f, op, qpn, psn, ackreq, ext, ext_len, pl, len));
}

/* RoCE frames QEMU sent since the last call (none expected from a UC responder). */
static unsigned w_quiet(void)
{
	static uint8_t f[2048];
	unsigned n = 0;
	ssize_t len;

	wire_settle();
	while ((len = recv(wire_fd, f, sizeof(f), MSG_DONTWAIT)) > 0)
		if (len >= 54 && be16(f + 36) == 4791)
			n++;
	return n;
}

/* UC against the test wire: the packets, the receive PSN rule, no answers. */
static void g_uc_wire(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static uint8_t want[4096], f[2048], ext[32];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct tcq scq, rcq;
	struct tqp a;
	struct res r;
	uint32_t psn = T_RC_PSN;
	uint64_t d0, x = 0x75632d77ULL;
	uint16_t idx;
	unsigned i;
	ssize_t n;
	bool ok;

	eng_setup();
	rc_keys();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	tcq_make(&scq, 6);
	tcq_make(&rcq, 6);
	need(tqp_create(&a, KITE_QPT_UC, fx_pd, scq.c.cqn, rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UC");
	uc_rts(&a, W_PEER_QPN, peer, KITE_MTU_1024);

	/* Requester: SEND 2500 = FIRST, MIDDLE, LAST (0x20-0x22), no AckReq. */
	fill_pattern(SRC, 2500, 0x5c, want);
	g[0] = sge(2500, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_SEND_IMM | SIG, 0x11223344, 0, 0, 0, 0, g, 1);
	for (i = 0; i < 3; i++) {
		static const uint8_t ops[3] = { 0x20, 0x21, 0x23 };
		static const size_t lens[3] = { 1024, 1024, 452 };
		size_t hl = i == 2 ? 4 : 0;

		n = w_next(f, sizeof(f));
		if (!tap(n == (ssize_t)(54 + hl + lens[i] + 4),
			 "UC SEND_IMM packet %u on the wire (%zd bytes)", i, n))
			return;
		tap(f[42] == ops[i] && be24(f + 47) == W_PEER_QPN &&
		    be24(f + 51) == ((psn + i) & 0xffffff) && !(f[50] & 0x80) &&
		    !memcmp(f + 54 + hl, want + 1024 * i, lens[i]) &&
		    (i < 2 || be32(f + 54) == 0x44332211),
		    "UC SEND_IMM packet %u: opcode 0x%02x, PSN 0x%x, no AckReq, payload%s", i,
		    f[42], be24(f + 51), i == 2 ? ", ImmDt" : "");
	}
	tap(req_ok(&scq, a.qpn, idx, KITE_WQE_OP_SEND_IMM, 0),
	    "UC SEND completes once sent, without any ACK");
	psn += 3;
	/* WRITE_ONLY with RETH (0x2a). */
	g[0] = sge(100, E.lkey, SRC);
	idx = post_rc(&a, WR | SIG, 0, 0x123456789abcULL, 0xabcd01, 0, 0, g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 16 + 100 + 4 && f[42] == 0x2a && be24(f + 51) == (psn & 0xffffff) &&
	    !(f[50] & 0x80) && be32(f + 58) == 0x56789abc && be32(f + 62) == 0xabcd01 &&
	    be32(f + 66) == 100 && req_ok(&scq, a.qpn, idx, WR, 0),
	    "UC WRITE_ONLY 0x2a: RETH, no AckReq, completes once sent");
	tap(w_quiet() == 0, "nothing else on the wire");

	/* Responder: FIRST, MIDDLE, LAST at the expected PSNs, AckReq set: no ACK. */
	psn = T_RC_PSN;
	fill_pattern(SRC, 3000, 0x21, want);
	g[0] = sge(4000, E.lkey, RBUF);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	post_recv(&a, g, 1);
	w_uc(a.qpn, 0x20, psn, true, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x21, psn + 1, true, NULL, 0, want + 1024, 1024);
	w_uc(a.qpn, 0x22, psn + 2, true, NULL, 0, want + 2048, 952);
	wire_settle();
	tap(recv_is(&rcq, a.qpn, KITE_CQE_OP_RESP_SEND, 3000, 0) && mem_eq(RBUF, want, 3000),
	    "UC responder: SEND FIRST/MIDDLE/LAST received, data byte for byte");
	tap(w_quiet() == 0, "UC responder: no ACK even with AckReq set");
	psn += 3;

	/* A lost MIDDLE: the LAST is dropped, the next message received. */
	d0 = qom_count("rc-counts", "uc-dropped");
	fill_pattern(SRC, 3000, 0x31, want);
	w_uc(a.qpn, 0x20, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn + 2, false, NULL, 0, want + 2048, 952);
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 1,
	    "UC: MIDDLE lost, LAST (PSN gap) dropped, no CQE");
	w_uc(a.qpn, 0x21, psn + 1, false, NULL, 0, want + 1024, 1024);
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 2,
	    "UC: the lost MIDDLE arriving late is dropped too (the message is abandoned)");
	fill_pattern(SRC, 700, 0x32, want);
	w_uc(a.qpn, 0x04, psn + 3, false, NULL, 0, want, 700);
	w_uc(a.qpn, 0x24, psn + 3, false, NULL, 0, want, 700);
	wire_settle();
	tap(recv_is(&rcq, a.qpn, KITE_CQE_OP_RESP_SEND, 700, 1) && mem_eq(RBUF, want, 700) &&
	    tcq_drain(&rcq) == 0,
	    "UC: the next message (SEND_ONLY) is received in the RQ WQE the cut one had; "
	    "an RC opcode to the UC QP ignored");
	psn += 4;

	/* A gap before a message's first packet: it starts the message anyway. */
	fill_pattern(SRC, 1500, 0x33, want);
	put32(ext, 0xcafef00d);
	w_uc(a.qpn, 0x20, psn + 10, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x23, psn + 11, false, ext, 4, want + 1024, 476);
	wire_settle();
	ok = tcq_next(&rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_IMM, a.qpn, 0) && c.byte_len == 1500 &&
		 c.imm_data == 0x0df0feca && c.wqe_idx == 2 && mem_eq(RBUF, want, 1500),
		 "UC: FIRST after a PSN gap of 10 accepted (PSNs resync), SEND_LAST_IMM completes"))
		cqe_diag("recv", &c);
	psn += 12;

	/* FIRST, then FIRST again (the LAST lost): the second message wins. */
	g[0] = sge(4000, E.lkey, RBUF);
	post_recv(&a, g, 1);
	fill_pattern(SRC, 2000, 0x34, want);
	w_uc(a.qpn, 0x20, psn, false, NULL, 0, want + 1000, 1024);
	w_uc(a.qpn, 0x20, psn + 1, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn + 2, false, NULL, 0, want + 1024, 976);
	wire_settle();
	tap(recv_is(&rcq, a.qpn, KITE_CQE_OP_RESP_SEND, 2000, 3) && mem_eq(RBUF, want, 2000),
	    "UC: a FIRST inside a SEND abandons it; the new message fills the WQE from its start");
	psn += 3;

	/* Out-of-sequence opcodes and PSNs: MIDDLE/LAST outside a message. */
	d0 = qom_count("rc-counts", "uc-dropped");
	w_uc(a.qpn, 0x21, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn, false, NULL, 0, want, 10);
	w_uc(a.qpn, 0x27, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x28, psn, false, NULL, 0, want, 10);
	w_uc(a.qpn, 0x2c, psn, false, ext, 16, NULL, 0);	/* "UC READ": not parsed */
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 4 &&
	    qp_state(a.qpn) == KITE_QPS_RTS,
	    "UC: MIDDLE and LAST of SEND and WRITE outside a message dropped, opcode 0x2c "
	    "ignored, QP RTS");
	/* A WRITE whose MIDDLE is in a SEND: dropped. */
	g[0] = sge(4000, E.lkey, RBUF);
	post_recv(&a, g, 1);
	w_uc(a.qpn, 0x20, psn, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x27, psn + 1, false, NULL, 0, want, 1024);
	w_uc(a.qpn, 0x22, psn + 2, false, NULL, 0, want, 10);
	wire_settle();
	tap(tcq_drain(&rcq) == 0 && qom_count("rc-counts", "uc-dropped") == d0 + 6,
	    "UC: WRITE MIDDLE inside a SEND drops the SEND (and its LAST)");
	psn += 3;

	/* WRITE to a bad rkey: silently dropped, no NAK, QP still RTS. */
	memset(want, 0xee, 512);
	memwrite(t_bus(DST), want, 512);
	put32(ext, (uint32_t)(DST >> 32));
	put32(ext + 4, (uint32_t)DST);
	put32(ext + 8, R.rkey ^ 0x100);
	put32(ext + 12, 200);
	w_uc(a.qpn, 0x2a, psn, true, ext, 16, f, 200);
	put32(ext + 8, R.rkey_nw);
	w_uc(a.qpn, 0x2a, psn + 1, true, ext, 16, f, 200);
	wire_settle();
	tap(mem_eq(DST, want, 512) && qp_state(a.qpn) == KITE_QPS_RTS && w_quiet() == 0,
	    "UC WRITE to a bad rkey, to a key without REMOTE_WRITE: dropped, no NAK, QP RTS");
	/* A good WRITE_ONLY_IMM then. */
	fill_pattern(SRC, 200, 0x35, want);
	put32(ext + 8, R.rkey);
	put32(ext + 16, 0x01020304);
	w_uc(a.qpn, 0x2b, psn + 2, false, ext, 20, want, 200);
	wire_settle();
	ok = tcq_next(&rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_WRITE_IMM, a.qpn, 0) && c.byte_len == 200 &&
		 c.imm_data == 0x04030201 && c.wqe_idx == 4 && mem_eq(DST, want, 200),
		 "UC WRITE_ONLY_IMM: RESP_WRITE_IMM, imm, data at the remote address, in the "
		 "RQ WQE the dropped SEND had taken"))
		cqe_diag("recv", &c);
	psn += 3;

	/* Random UC packets: no crash, no answer, the QP goes on. */
	for (i = 0; i < 300; i++) {
		uint8_t op;
		uint32_t len;
		unsigned j;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 30 == 0) {
			g[0] = sge(3000, E.lkey, RBUF);
			post_recv(&a, g, 1);
		}
		op = (uint8_t)(0x20 + x % 0x10);
		len = (uint32_t)((x >> 16) % 1100);
		for (j = 0; j < sizeof(ext); j++)
			ext[j] = (uint8_t)(x >> (j % 8 * 8)) ^ (uint8_t)j;
		if (x & (1ULL << 40)) {
			put32(ext, (uint32_t)(DST >> 32));
			put32(ext + 4, (uint32_t)DST + (uint32_t)((x >> 41) % 64) * 8);
			put32(ext + 8, R.rkey);
			put32(ext + 12, (uint32_t)((x >> 48) % 5000));
		}
		w_uc(a.qpn, op, psn + (uint32_t)((x >> 8) % 4), x & (1ULL << 50), ext,
		     (size_t)((x >> 52) % 21), f, len);
		if (i % 20 == 19)
			wire_settle();
		psn += (uint32_t)((x >> 12) & 1);
	}
	tcq_drain(&rcq);
	tap(w_quiet() == 0 && (qp_state(a.qpn) == KITE_QPS_RTS || qp_state(a.qpn) == KITE_QPS_ERR),
	    "UC fuzz: 300 random UC packets, nothing sent back, QP %s",
	    st_name((unsigned)qp_state(a.qpn)));
	fill_pattern(SRC, 64, 0x36, want);
	if (qp_state(a.qpn) != KITE_QPS_RTS) {
		tqp_to(&a, KITE_QPS_RESET);
		a.spi = a.rpi = 0;
		uc_rts(&a, W_PEER_QPN, peer, KITE_MTU_1024);
		psn = T_RC_PSN;
	}
	g[0] = sge(64, E.lkey, SRC);
	idx = post_rc(&a, KITE_WQE_OP_SEND | SIG, 0, 0, 0, 0, 0, g, 1);
	n = w_next(f, sizeof(f));
	tap(n == 54 + 64 + 4 && f[42] == 0x24 && req_ok(&scq, a.qpn, idx, KITE_WQE_OP_SEND, 0),
	    "UC after the fuzz: a SEND_ONLY goes out and completes");
}

/* ------------------------------------------------------------------ */
/* UD multicast                                                        */
/* ------------------------------------------------------------------ */

#define MC_GID_OFF	offsetof(struct kite_cmd_mcast, gid)
#define MC_RSVD_OFF	offsetof(struct kite_cmd_mcast, rsvd)

static int mcast_raw(uint32_t op, uint32_t qpn, const uint8_t *gid, uint32_t rsvd, size_t len,
		     struct res *r)
{
	struct kite_cmd_mcast in;

	memset(&in, 0, sizeof(in));
	in.qpn = qpn;
	in.rsvd = rsvd;
	memcpy(in.gid, gid, 16);
	return run(op, &in, len, 0, 0, r);
}

static int mc_attach(uint32_t qpn, const uint8_t *gid, struct res *r)
{
	return mcast_raw(KITE_CMD_ATTACH_MCAST, qpn, gid, 0, sizeof(struct kite_cmd_mcast), r);
}

static int mc_detach(uint32_t qpn, const uint8_t *gid, struct res *r)
{
	return mcast_raw(KITE_CMD_DETACH_MCAST, qpn, gid, 0, sizeof(struct kite_cmd_mcast), r);
}

/* ::ffff:a.b.c.d */
static void gid4(uint8_t *gid, uint32_t ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	put32(gid + 12, ip);
}

/* ff0e::low */
static void gid6(uint8_t *gid, uint32_t low)
{
	memset(gid, 0, 16);
	gid[0] = 0xff;
	gid[1] = 0x0e;
	put32(gid + 12, low);
}

static void mc_mac(const uint8_t *gid, uint8_t *mac)
{
	if (gid[0] == 0xff) {
		mac[0] = mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	} else {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
	}
}

/* The address vector of a UD send to group @gid (GID 0 or 1 as source). */
static struct kite_wqe_ud av_mc(const uint8_t *gid, uint32_t qkey)
{
	struct kite_wqe_ud a;
	uint8_t mac[6];

	mc_mac(gid, mac);
	if (gid[0] == 0xff) {
		a = av6(KITE_MCAST_QPN, qkey, mac);
	} else {
		a = av4(KITE_MCAST_QPN, qkey, mac);
	}
	memcpy(a.dgid, gid, 16);
	return a;
}

/* A UD QP in RTS with Q_Key @qkey, receive CQ E.rcq. */
static void mc_qp(struct tqp *q, uint32_t qkey)
{
	struct kite_cmd_modify_qp a;
	struct res r;

	need(tqp_create(q, KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r,
	     "CREATE_QP UD");
	a = attrs_valid(q->qpn);
	a.qkey = qkey;
	need(modify_qp(&a, 0x39, KITE_QPS_INIT, &r), &r, "UD RESET to INIT");
	need(modify_qp(&a, KITE_QP_ATTR_STATE, KITE_QPS_RTR, &r), &r, "UD INIT to RTR");
	need(modify_qp(&a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN, KITE_QPS_RTS, &r), &r,
	     "UD RTR to RTS");
}

static void g_mcast(void)
{
	struct qpspec sp = qps(KITE_QPT_UD, 0, 0, 0);
	uint8_t g1[16], g6[16], gx[16];
	struct tqp u1, u2, rc, uc, gsi;
	uint32_t many[33], i, n, qpn;
	struct kite_cmd_query_device_out d;
	struct res r;
	int c = 0;

	fixture();
	need(run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(d), 0, &r), &r, "QUERY_DEVICE");
	memcpy(&d, r.out, sizeof(d));
	tap((d.features & KITE_FEAT_MCAST) && d.max_mcast_grp == 64 &&
	    d.max_mcast_qp_attach == 32 && d.max_mcast_total_attach == 512,
	    "QUERY_DEVICE: KITE_FEAT_MCAST, 64 groups, 32 QPs a group, 512 attachments");
	need(tqp_create(&u1, KITE_QPT_UD, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "UD 1");
	need(tqp_create(&u2, KITE_QPT_UD, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "UD 2");
	need(tqp_create(&rc, KITE_QPT_RC, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "RC");
	need(tqp_create(&uc, KITE_QPT_UC, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "UC");
	need(tqp_create(&gsi, KITE_QPT_GSI, fx_pd, fx_cq.cqn, fx_cq.cqn, 0, &r), &r, "GSI");
	gid4(g1, 0xef010101);
	gid6(g6, 0x1234);

	mc_attach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "ATTACH_MCAST UD QP to ::ffff:239.1.1.1");
	mc_attach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_E_STATE, MC_GID_OFF, "the same attach again: E_STATE (already attached)");
	mc_attach(u2.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "a second UD QP to the same group");
	mc_attach(u1.qpn, g6, &r);
	expect(&r, KITE_CMD_OK, -1, "ATTACH_MCAST UD QP to ff0e::1234 (a second group)");
	/* A QP in RESET may be attached: the table is independent of states. */
	tap(qp_state(u1.qpn) == KITE_QPS_RESET, "(the QPs are in RESET)");

	mc_attach(rc.qpn, g1, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "RC QP: E_PARAM at qpn");
	mc_attach(uc.qpn, g1, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "UC QP: E_PARAM at qpn");
	mc_attach(gsi.qpn, g1, &r);
	expect(&r, KITE_CMD_E_PARAM, 0, "GSI QP: E_PARAM at qpn");
	mc_attach(0, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN 0: E_OBJECT");
	mc_attach(1023, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN 1023 (no such QP): E_OBJECT");
	mc_attach(0x1000000 | u1.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN with bits above 23: E_OBJECT");
	mc_attach(0xffffffff, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "QPN 0xffffffff: E_OBJECT");
	gid4(gx, 0x0a000001);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "unicast ::ffff:10.0.0.1: E_PARAM at gid");
	gid4(gx, 0xf0000001);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "::ffff:240.0.0.1 (class E, not multicast): E_PARAM");
	gid4(gx, 0xdfffffff);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "::ffff:223.255.255.255: E_PARAM");
	memset(gx, 0, 16);
	gx[0] = 0xfe;
	gx[1] = 0x80;
	gx[15] = 1;
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "unicast fe80::1: E_PARAM");
	memset(gx, 0, 16);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "the zero GID: E_PARAM");
	memcpy(gx, g1, 16);
	gx[9] = 1;			/* ::1:ffff:239.1.1.1 is not IPv4-mapped */
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "almost IPv4-mapped multicast: E_PARAM");
	mcast_raw(KITE_CMD_ATTACH_MCAST, u1.qpn, g1, 1, sizeof(struct kite_cmd_mcast), &r);
	expect(&r, KITE_CMD_E_PARAM, MC_RSVD_OFF, "reserved word set: E_PARAM at rsvd");
	mcast_raw(KITE_CMD_DETACH_MCAST, u1.qpn, g1, 0x80000000, sizeof(struct kite_cmd_mcast), &r);
	expect(&r, KITE_CMD_E_PARAM, MC_RSVD_OFF, "DETACH_MCAST reserved word set: E_PARAM");
	mcast_raw(KITE_CMD_ATTACH_MCAST, u1.qpn, g1, 0, sizeof(struct kite_cmd_mcast) - 1, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "ATTACH_MCAST in_len 23: E_LENGTH");
	mcast_raw(KITE_CMD_DETACH_MCAST, u1.qpn, g1, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "DETACH_MCAST in_len 0: E_LENGTH");

	gid4(gx, 0xef090909);
	mc_detach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_OBJECT, MC_GID_OFF, "DETACH_MCAST from a group nobody joined: E_OBJECT at gid");
	mc_detach(rc.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DETACH_MCAST of a QP not attached (RC): E_OBJECT at qpn");
	mc_detach(999, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "DETACH_MCAST of no QP: E_OBJECT at qpn");
	gid4(gx, 0x0a000001);
	mc_detach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_E_PARAM, MC_GID_OFF, "DETACH_MCAST of a unicast GID: E_PARAM");
	mc_detach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "DETACH_MCAST UD 1 from 239.1.1.1");
	mc_detach(u1.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "the same detach again: E_OBJECT at qpn (UD 2 keeps the group)");
	mc_detach(u2.qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "DETACH_MCAST the last QP: the group is gone");
	mc_detach(u2.qpn, g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, MC_GID_OFF, "detach from the gone group: E_OBJECT at gid");
	mc_detach(u1.qpn, g6, &r);
	expect(&r, KITE_CMD_OK, -1, "DETACH_MCAST UD 1 from ff0e::1234");

	/* Limits: 32 QPs a group, 64 groups, 512 attachments. */
	sp.pdn = fx_pd;
	sp.scqn = sp.rcqn = fx_cq.cqn;
	sp.slog = sp.rlog = 1;
	for (n = 0; n < 33; n++)
		many[n] = need(create_qp(&sp, &r), &r, "CREATE_QP UD (limits)");
	for (i = 0; i < 32 && c == KITE_CMD_OK; i++)
		c = mc_attach(many[i], g1, &r);
	tap(i == 32 && c == KITE_CMD_OK, "32 QPs attached to one group (%u)", i);
	mc_attach(many[32], g1, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, 0, "a 33rd QP in the group: E_NO_RESOURCES at qpn");
	for (i = 1; i < 64 && c == KITE_CMD_OK; i++) {
		gid4(gx, 0xef020000 + i);
		c = mc_attach(many[0], gx, &r);
	}
	tap(i == 64 && c == KITE_CMD_OK, "64 groups in use (%u)", i);
	gid6(gx, 0xabcd);
	mc_attach(many[0], gx, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, MC_GID_OFF, "a 65th group: E_NO_RESOURCES at gid");
	/* 32 + 63 attachments so far: 417 more reach 512. */
	n = 0;
	for (i = 1; i < 64 && c == KITE_CMD_OK; i++) {
		uint32_t j;

		gid4(gx, 0xef020000 + i);
		/* many[0] is in the group: 31 more fill it. */
		for (j = 1; j < 32 && c == KITE_CMD_OK; j++) {
			c = mc_attach(many[j], gx, &r);
			if (c == KITE_CMD_OK)
				n++;
		}
	}
	tap(n == 417 && c == KITE_CMD_E_NO_RESOURCES && FIELD_GET(KITE_CMD_STATUS_SYNDROME, r.status) == 0,
	    "the 513th attachment: E_NO_RESOURCES (%u more attached, code %d)", n, c);
	mc_detach(many[5], g1, &r);
	expect(&r, KITE_CMD_OK, -1, "one detach frees an attachment");
	qpn = many[32];
	mc_attach(qpn, g1, &r);
	expect(&r, KITE_CMD_OK, -1, "... which the next attach takes");
	mc_attach(many[5], g1, &r);
	expect(&r, KITE_CMD_E_NO_RESOURCES, -1, "then the table is full again");
	/* DESTROY_QP detaches: many[0] was in all 64 groups. */
	need(cmd_obj(KITE_CMD_DESTROY_QP, many[0], 0, &r), &r, "DESTROY_QP (attached to 64 groups)");
	mc_attach(many[5], g1, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of an attached QP freed its attachments");
	mc_detach(many[0], g1, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "the destroyed QP is no longer attached (E_OBJECT)");
	for (i = 1; i < 33; i++)
		need(cmd_obj(KITE_CMD_DESTROY_QP, many[i], 0, &r), &r, "DESTROY_QP");
	gid6(gx, 0xabcd);
	mc_attach(u1.qpn, gx, &r);
	expect(&r, KITE_CMD_OK, -1, "every QP destroyed: the groups are free again");
}

#define MC_RB(i)	(T_IOVA + 0x8000 + (uint64_t)(i) * 0x800)

/* Post one 256-byte receive buffer on multicast test QP @i. */
static void mc_post(struct tqp *q, unsigned i)
{
	struct kite_wqe_sge g = sge(256, E.lkey, MC_RB(i));

	post_recv(q, &g, 1);
}

/* Receive CQEs until none comes: a bit per QP index of @q that got one. */
static unsigned mc_collect(struct tqp *q, unsigned nq, uint32_t len, unsigned *bad)
{
	struct kite_cqe c;
	unsigned got = 0, i;

	clock_step(POLL_STEP_NS);
	while (tcq_next(&E.rcq, &c)) {
		for (i = 0; i < nq; i++)
			if (c.qpn == q[i].qpn)
				break;
		if (i == nq || FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_RESP_SEND ||
		    c.byte_len != 40 + len || (got & (1u << i))) {
			cqe_diag("unexpected", &c);
			(*bad)++;
			continue;
		}
		got |= 1u << i;
	}
	return got;
}

static void g_mcast_engine(void)
{
	static const uint8_t peer[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t g1[16], g2[16], g6[16], f[2048], f1[2048], inj[2048], want[64], got[128];
	struct kite_wqe_ud av;
	struct kite_wqe_sge sg;
	struct tqp m[4];
	struct kite_cqe c;
	struct res r;
	unsigned bad = 0, rx, i;
	uint64_t d0, src = T_IOVA + 3 * 4096;
	ssize_t n;
	bool ok;

	eng_setup();
	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	gid4(g1, 0xef010203);
	gid4(g2, 0xef010204);
	gid6(g6, 0x1234);
	for (i = 0; i < 4; i++)
		mc_qp(&m[i], i == 2 ? 0x33333333 : T_QKEY);
	for (i = 0; i < 3; i++)
		need(mc_attach(m[i].qpn, g1, &r), &r, "ATTACH_MCAST");
	for (i = 0; i < 4; i++)
		mc_post(&m[i], i);

	/* Loopback and the wire: QPs 0 and 1 receive, 2 has another Q_Key. */
	fill_pattern(src, 37, 0x33, want);
	av = av_mc(g1, T_QKEY);
	sg = sge(37, E.lkey, src);
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	n = wire_recv(f, sizeof(f));
	if (n > 0)
		memcpy(f1, f, (size_t)n);
	ok = tcq_next(&E.scq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_REQ, E.b.qpn, 0), "UD SEND to a multicast group completes");
	tap(n == 106 && f[0] == 0x01 && f[1] == 0 && f[2] == 0x5e && f[3] == 0x01 && f[4] == 2 &&
	    f[5] == 3 && be32(f + 30) == 0xef010203 && be24(f + 42 + 5) == KITE_MCAST_QPN &&
	    be32(f + 42 + 12) == T_QKEY,
	    "on the wire: MAC 01:00:5e:01:02:03, IPv4 239.1.2.3, DestQP 0xFFFFFF, Q_Key (%zd bytes)", n);
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 3 && !bad, "loopback: the two attached QPs with the Q_Key receive it (mask 0x%x)", rx);
	tap(stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1, "the QP with another Q_Key drops it (+1 drop)");
	memread(t_bus(MC_RB(1)), got, 40 + 37);
	tap(!memcmp(got + 40, want, 37) && be32(got + 20 + 16) == 0xef010203,
	    "QP 1's buffer: GRH area with the IPv4 header to 239.1.2.3, payload intact");
	memread(t_bus(MC_RB(0)), got, 40 + 37);
	tap(!memcmp(got + 40, want, 37), "QP 0's buffer: payload intact");
	mc_post(&m[0], 0);
	mc_post(&m[1], 1);

	/* The same frame from the wire (another station sent it). */
	memcpy(inj, f, (size_t)n);
	memcpy(inj + 6, peer, 6);
	wire_send(inj, (size_t)n);
	wire_settle();
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 3 && !bad, "from the wire: the attached QPs with the Q_Key receive it (0x%x)", rx);
	mc_post(&m[0], 0);
	mc_post(&m[1], 1);

	/* Malformed multicast from the wire: dropped, no CQE. */
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	memcpy(inj, MAC, 6);
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1,
	    "DestQP 0xFFFFFF to our unicast MAC: dropped");
	memcpy(inj, f, 6);
	put32(inj + 42 + 4, m[0].qpn);
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 2,
	    "a multicast address with a unicast DestQP: dropped");
	put32(inj + 42 + 4, KITE_MCAST_QPN);
	put32(inj + 30, 0xef010204);
	inj[5] = 4;
	put16(inj + 24, 0);
	put16(inj + 24, t_csum(0, inj + 14, 20));
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 3,
	    "a group no QP joined (239.1.2.4): dropped");
	need(mc_attach(m[3].qpn, g2, &r), &r, "ATTACH_MCAST 239.1.2.4");
	wire_send(inj, (size_t)n);
	wire_settle();
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 8 && !bad, "after QP 3 joins 239.1.2.4, the same frame reaches QP 3 only (0x%x)", rx);
	mc_post(&m[3], 3);
	put32(inj + 30, 0x0a000001);
	put16(inj + 24, 0);
	put16(inj + 24, t_csum(0, inj + 14, 20));
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);

		memcpy(inj + n - 4, &ic, 4);
	}
	d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
	wire_send(inj, (size_t)n);
	wire_settle();
	tap(mc_collect(m, 4, 37, &bad) == 0 && !bad && stat1(KITE_STAT_ROCE_RX_DROPS) == d0 + 1,
	    "DestQP 0xFFFFFF to a unicast IP address: dropped");


	/* IPv6: ff0e::1234, MAC 33:33:00:00:12:34. */
	need(mc_attach(m[1].qpn, g6, &r), &r, "ATTACH_MCAST ff0e::1234");
	av = av_mc(g6, T_QKEY);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	n = wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	tap(n > 0 && f[0] == 0x33 && f[1] == 0x33 && be32(f + 2) == 0x1234 && f[14 + 24] == 0xff &&
	    f[14 + 25] == 0x0e && be24(f + 62 + 5) == KITE_MCAST_QPN,
	    "IPv6 on the wire: MAC 33:33:00:00:12:34, to ff0e::1234, DestQP 0xFFFFFF");
	ok = tcq_next(&E.rcq, &c);
	tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND, m[1].qpn, 0) &&
	    FIELD_GET(KITE_CQE_F_L3, c.flags) == KITE_NET_ROCE_V2_IPV6 && c.src_qpn == E.b.qpn &&
	    tcq_drain(&E.rcq) == 0, "IPv6 loopback: only QP 1 receives, L3 IPv6, source QPN");
	mc_post(&m[1], 1);

	/* Detach, destroy: delivery follows the table. */
	need(mc_detach(m[1].qpn, g1, &r), &r, "DETACH_MCAST QP 1");
	av = av_mc(g1, T_QKEY);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	rx = mc_collect(m, 4, 37, &bad);
	tap(rx == 1 && !bad, "after QP 1 detaches, only QP 0 receives (0x%x)", rx);
	mc_post(&m[0], 0);
	need(cmd_obj(KITE_CMD_DESTROY_QP, m[0].qpn, 0, &r), &r, "DESTROY_QP 0");
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	rx = mc_collect(m + 1, 3, 37, &bad);
	tap(rx == 0 && !bad, "QP 0 destroyed: nobody with the Q_Key receives (0x%x)", rx);

	/* The sender's own QP receives its multicast when attached. */
	need(mc_attach(E.b.qpn, g2, &r), &r, "ATTACH_MCAST QP B to 239.1.2.4");
	sg = sge(256, E.lkey, MC_RB(5));
	post_recv(&E.b, &sg, 1);
	av = av_mc(g2, T_QKEY);
	sg = sge(37, E.lkey, src);
	post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0, true);
	wire_recv(f, sizeof(f));
	tcq_next(&E.scq, &c);
	{
		struct tqp two[2] = { E.b, m[3] };

		rx = mc_collect(two, 2, 37, &bad);
	}
	tap(rx == 3 && !bad, "a QP attached to the group it sends to receives its own packet, "
	    "as do the others (0x%x)", rx);

	/* Two UD QPs on one SRQ, both in a group: each takes its own WQE. */
	{
		struct tsrq sq;
		struct tqp s2[2];
		uint8_t g3[16];
		unsigned qps = 0, tags = 0;

		gid4(g3, 0xef010205);
		need(srq_create(&sq, fx_pd, 4, 6, 0, &r), &r, "CREATE_SRQ");
		for (i = 0; i < 2; i++) {
			need(tqp_create_srq(&s2[i], KITE_QPT_UD, fx_pd, E.scq.c.cqn, E.rcq.c.cqn,
					    sq.srqn, &r), &r, "CREATE_QP UD on the SRQ");
			tqp_rts(&s2[i]);
			need(mc_attach(s2[i].qpn, g3, &r), &r, "ATTACH_MCAST (SRQ QP)");
			sg = sge(256, E.lkey, MC_RB(6 + i));
			srq_post(&sq, (uint16_t)(0x70 + i), &sg, 1);
		}
		av = av_mc(g3, T_QKEY);
		sg = sge(37, E.lkey, src);
		post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0,
			  true);
		wire_recv(f, sizeof(f));
		tcq_next(&E.scq, &c);
		for (i = 0; i < 2 && tcq_next(&E.rcq, &c); i++) {
			if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_RESP_SEND ||
			    c.byte_len != 77)
				qps |= 4;
			qps |= c.qpn == s2[0].qpn ? 1 : c.qpn == s2[1].qpn ? 2 : 4;
			tags |= c.wqe_idx == 0x70 ? 1 : c.wqe_idx == 0x71 ? 2 : 4;
		}
		tap(qps == 3 && tags == 3 && tcq_drain(&E.rcq) == 0,
		    "two QPs on one SRQ in a group: each receives, each with its own SRQ WQE "
		    "(QPs 0x%x, tags 0x%x)", qps, tags);
	}

	/* Send-side checks of the address vector. */
	av = av_mc(g1, T_QKEY);
	av.remote_qpn = m[1].qpn;
	send_fails(&E.b, "multicast GID with a unicast DestQP", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av4(KITE_MCAST_QPN, T_QKEY, peer);
	send_fails(&E.b, "DestQP 0xFFFFFF to a unicast GID", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av_mc(g1, T_QKEY);
	av.dmac[5] ^= 1;
	send_fails(&E.b, "multicast GID with another group's MAC", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av_mc(g1, T_QKEY);
	memcpy(av.dmac, peer, 6);
	send_fails(&E.b, "multicast GID with a unicast MAC", KITE_WQE_OP_SEND, &av, NULL, 0,
		   KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	av = av_mc(g1, T_QKEY);
	av.sgid_index = 1;
	av.net_type = KITE_NET_ROCE_V2_IPV6;
	send_fails(&E.b, "IPv4-mapped multicast GID from an IPv6 source", KITE_WQE_OP_SEND, &av,
		   NULL, 0, KITE_SYND_LOCAL_QP_OP, KITE_QPS_SQE);
	/*
	 * A frame to 239.1.2.3 (only QP 2, with another Q_Key, is still in
	 * it) truncated and with bytes mangled in turn: dropped, or (a byte
	 * outside the checked fields) received as any packet; never a
	 * crash, and the device still answers.
	 */
	n = 106;
	memcpy(inj, f1, (size_t)n);
	memcpy(inj + 6, peer, 6);
	put32(inj + 30, 0xef010203);
	put16(inj + 24, 0);
	put16(inj + 24, t_csum(0, inj + 14, 20));
	{
		uint32_t ic = t_icrc(inj + 14, 20 + 8 + (size_t)n - 42 - 4, false);
		size_t k;

		memcpy(inj + n - 4, &ic, 4);
		d0 = stat1(KITE_STAT_ROCE_RX_DROPS);
		for (k = 1; k < (size_t)n; k += 3) {
			wire_send(inj, k);
			inj[k] ^= 0xa5;
			wire_send(inj, (size_t)n);
			inj[k] ^= 0xa5;
			if ((k & 15) == 15)
				wire_settle();
		}
		wire_settle();
	}
	tap(nop(&r) == KITE_CMD_OK && stat1(KITE_STAT_ROCE_RX_DROPS) > d0 &&
	    (mc_collect(m + 1, 3, 37, &bad), !bad),
	    "truncated and mangled multicast frames: dropped (+%" PRIu64 "), "
	    "device alive", stat1(KITE_STAT_ROCE_RX_DROPS) - d0);
	tap(nop(&r) == KITE_CMD_OK, "the device still answers commands");
}

/* Random commands and traffic against the test's own copy of the table. */
static void g_mcast_random(void)
{
	enum { NQ = 4, NG = 6 };
	uint8_t gid[NG][16], bogus[16];
	bool in[NQ][NG];
	uint32_t qkey[NQ];
	struct tqp m[NQ], rc;
	struct kite_wqe_ud av;
	struct kite_wqe_sge sg;
	struct kite_cqe c;
	struct res r;
	unsigned i, j, k, bad = 0, wrong = 0, cmds = 0, sends = 0, cqes = 0;

	eng_setup();
	rng_state = 0x3ca57ULL;
	for (j = 0; j < NG; j++) {
		if (j & 1)
			gid6(gid[j], 0x100 + j);
		else
			gid4(gid[j], 0xe0000000 + j * 0x01010101);
	}
	for (i = 0; i < NQ; i++) {
		qkey[i] = i == 3 ? 0x44444444 : T_QKEY;
		mc_qp(&m[i], qkey[i]);
		mc_post(&m[i], i);
	}
	need(tqp_create(&rc, KITE_QPT_RC, fx_pd, E.scq.c.cqn, E.rcq.c.cqn, 0, &r), &r, "RC");
	memset(in, 0, sizeof(in));
	for (k = 0; k < 400; k++) {
		unsigned op = rndn(10), qi = rndn(NQ + 2), gi = rndn(NG + 1);
		bool attach = rndn(2);
		/* QPs of the table, the RC QP, a QPN no QP has. */
		uint32_t qpn = qi < NQ ? m[qi].qpn : qi == NQ ? rc.qpn : (uint32_t)rnd() | 0x400;
		const uint8_t *g = gi < NG ? gid[gi] : bogus;
		unsigned want, cc, rx = 0;

		if (op < 6) {
			size_t len = rndn(12) ? sizeof(struct kite_cmd_mcast) : rndn(24);
			uint32_t rsvd = rndn(12) ? 0 : (uint32_t)rnd() | 1;

			for (j = 0; j < 16; j++)
				bogus[j] = (uint8_t)rnd();
			bogus[0] = 0xfe;	/* never multicast */
			if (len < sizeof(struct kite_cmd_mcast))
				want = KITE_CMD_E_LENGTH;
			else if (rsvd)
				want = KITE_CMD_E_PARAM;
			else if (qi > NQ)
				want = KITE_CMD_E_OBJECT;
			else if (gi == NG)
				want = KITE_CMD_E_PARAM;
			else if (attach)
				want = qi == NQ ? KITE_CMD_E_PARAM :
				       in[qi][gi] ? KITE_CMD_E_STATE : KITE_CMD_OK;
			else
				want = qi < NQ && in[qi][gi] ? KITE_CMD_OK : KITE_CMD_E_OBJECT;
			cc = mcast_raw(attach ? KITE_CMD_ATTACH_MCAST : KITE_CMD_DETACH_MCAST, qpn,
				       g, rsvd, len, &r);
			cmds++;
			if (cc != want) {
				diag("%s qp %u group %u: code %u, expected %u",
				     attach ? "attach" : "detach", qi, gi, cc, want);
				wrong++;
			}
			if (cc == KITE_CMD_OK && qi < NQ)
				in[qi][gi] = attach;
			continue;
		}
		/* A send to a random group from QP B (not attached). */
		gi = rndn(NG);
		av = av_mc(gid[gi], T_QKEY);
		sg = sge(rndn(200), E.lkey, T_IOVA + 3 * 4096);
		post_send(&E.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &sg, 1, NULL, 0,
			  true);
		sends++;
		clock_step(POLL_STEP_NS);
		tcq_drain(&E.scq);
		while (tcq_next(&E.rcq, &c)) {
			for (i = 0; i < NQ && c.qpn != m[i].qpn; i++)
				;
			if (i == NQ || !in[i][gi] || qkey[i] != T_QKEY || (rx & (1u << i))) {
				cqe_diag("unexpected", &c);
				bad++;
			} else {
				rx |= 1u << i;
				mc_post(&m[i], i);
			}
			cqes++;
		}
		for (i = 0; i < NQ; i++)
			if (in[i][gi] && qkey[i] == T_QKEY && !(rx & (1u << i))) {
				diag("send %u to group %u: QP %u attached, no CQE", sends, gi, i);
				bad++;
			}
	}
	tap(wrong == 0, "random ATTACH/DETACH_MCAST (%u commands): every status as the table predicts",
	    cmds);
	tap(bad == 0, "random multicast sends (%u): %u receive CQEs, exactly the attached QPs "
	    "with the Q_Key", sends, cqes);
	tap(nop(&r) == KITE_CMD_OK, "the device still answers commands");
}

/* ------------------------------------------------------------------ */
/* Memory windows                                                      */
/* ------------------------------------------------------------------ */

#define T_WIN		(T_IOVA + 0x1000)	/* the windows' range in W.mr */
#define T_WIN_LEN	0x2000u
#define LW		KITE_ACCESS_LOCAL_WRITE
#define RWR		KITE_ACCESS_REMOTE_WRITE
#define RRD		KITE_ACCESS_REMOTE_READ
#define RAT		KITE_ACCESS_REMOTE_ATOMIC
#define MWB		KITE_ACCESS_MW_BIND

static struct {
	uint32_t mr;		/* LOCAL_WRITE | MW_BIND over E.mr's pages */
	uint32_t nobind;	/* LOCAL_WRITE, no MW_BIND */
	uint32_t nolw;		/* MW_BIND and REMOTE_READ, no LOCAL_WRITE */
	uint32_t pd2;		/* LOCAL_WRITE | MW_BIND, in PD 2 */
} W;

static uint32_t retag(uint32_t key, uint8_t tag)
{
	return (key & ~0xffu) | tag;
}

/* A BIND_MW WQE on @q, doorbell rung; returns its wqe_idx. */
static uint16_t post_bind_raw(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t addr,
			      uint64_t len, uint32_t mw_key, uint32_t mr_key, uint32_t access,
			      uint32_t flags)
{
	uint8_t w[256];
	struct kite_wqe_ctrl c;
	struct kite_wqe_bind_mw b;
	uint16_t idx = (uint16_t)q->spi;

	memset(w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.opcode = KITE_WQE_OP_BIND_MW | opw;
	c.imm_data = imm;
	c.wqe_idx = idx;
	memset(&b, 0, sizeof(b));
	b.addr = addr;
	b.length = len;
	b.mw_key = mw_key;
	b.mr_key = mr_key;
	b.access = access;
	b.flags = flags;
	memcpy(w, &c, 16);
	memcpy(w + 16, &b, sizeof(b));
	memwrite(q->sq.data + ((uint64_t)(q->spi & ((1u << q->slog) - 1)) << q->sshift),
		 w, 1u << q->sshift);
	q->spi++;
	ring_sq(q);
	return idx;
}

/* A signaled LOCAL_INV of @key on @q; returns its wqe_idx. */
static uint16_t post_local_inv(struct tqp *q, uint32_t key)
{
	return post_rc(q, KITE_WQE_OP_LOCAL_INV | KITE_WQE_F_SIGNALED, key, 0, 0, 0, 0, NULL, 0);
}

/* Bind on @q of pair @P, expected to succeed; returns the window's new key. */
static uint32_t bind_ok(struct rcpair *P, struct tqp *q, const char *what, uint64_t addr,
			uint64_t len, uint32_t mw_key, uint32_t mr_key, uint32_t access, uint8_t tag)
{
	uint16_t idx = post_bind_raw(q, KITE_WQE_F_SIGNALED, 0, addr, len, mw_key, mr_key,
				     access, tag);

	tap(req_ok(&P->scq, q->qpn, idx, KITE_WQE_OP_BIND_MW, 0),
	    "%s: REQ CQE, wqe_opcode BIND_MW", what);
	return retag(mw_key, tag);
}

/*
 * A bind on QP B of a new RC pair, expected to fail with @synd: its
 * REQ_ERR CQE names the BIND_MW WQE, B goes to ERR and its next WQE is
 * flushed.
 */
static void bind_fails(const char *what, unsigned synd, uint32_t opw, uint32_t imm,
		       uint64_t addr, uint64_t len, uint32_t mw_key, uint32_t mr_key,
		       uint32_t access, uint32_t flags)
{
	struct kite_wqe_sge g[1] = { sge(8, E.lkey, SRC) };
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx, idx2;
	bool ok;

	rc_pair(&P, MAC, 14, 7, 6);
	idx = post_bind_raw(&P.b, opw | KITE_WQE_F_SIGNALED, imm, addr, len, mw_key, mr_key,
			    access, flags);
	idx2 = post_rc(&P.b, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, 0, 0, 0, 0, g, 1);
	ok = tcq_next(&P.scq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_REQ_ERR, P.b.qpn, synd) && c.wqe_idx == idx &&
		 c.wqe_opcode == KITE_WQE_OP_BIND_MW,
		 "bind %s: REQ_ERR %s", what,
		 synd == KITE_SYND_MW_BIND ? "MW_BIND" : "LOCAL_QP_OP"))
		cqe_diag("send", &c);
	tap(req_err(&P.scq, P.b.qpn, idx2, KITE_SYND_WR_FLUSH) &&
	    qp_state(P.b.qpn) == KITE_QPS_ERR, "bind %s: QP in ERR, the next WQE flushed", what);
}

/*
 * An RDMA operation from A to B of @P through @rkey at @va: 0 when it
 * completed and the data is right (WRITE: at @va; READ: into RBUF; FETCH_ADD
 * of 5: the word and the original value), else the error syndrome (0xff:
 * no CQE, 0xfe: wrong data).
 */
static unsigned mw_op(struct rcpair *P, unsigned op, uint64_t va, uint32_t rkey, uint32_t len,
		      uint8_t seed)
{
	static uint8_t want[4096];
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	uint64_t orig = 0;
	uint16_t idx;

	if (op == KITE_WQE_OP_RDMA_WRITE) {
		fill_pattern(SRC, len, seed, want);
		g[0] = sge(len, E.lkey, SRC);
	} else if (op == KITE_WQE_OP_RDMA_READ) {
		fill_pattern(va, len, seed, want);
		g[0] = sge(len, E.lkey, RBUF);
	} else {
		orig = 0x1000ULL * seed + 7;
		set64(va, orig);
		g[0] = sge(8, E.lkey, RBUF);
		len = 8;
	}
	idx = post_rc(&P->a, op | KITE_WQE_F_SIGNALED, 0, va, rkey, 5, 0, g, 1);
	if (!tcq_next(&P->scq, &c) || c.qpn != P->a.qpn || c.wqe_idx != idx) {
		cqe_diag("send", &c);
		return 0xff;
	}
	if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_REQ)
		return FIELD_GET(KITE_CQE_SYNDROME, c.syndrome);
	if (op == KITE_WQE_OP_RDMA_WRITE)
		return mem_eq(va, want, len) ? 0 : 0xfe;
	if (op == KITE_WQE_OP_RDMA_READ)
		return mem_eq(RBUF, want, len) ? 0 : 0xfe;
	return mem64(va) == orig + 5 && mem64(RBUF) == orig ? 0 : 0xfe;
}

/* @op through @rkey fails with REMOTE_ACCESS, on a new pair; both QPs to ERR. */
static void mw_op_fails(const char *what, unsigned op, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct rcpair P;
	unsigned synd;

	rc_pair(&P, MAC, 14, 7, 6);
	synd = mw_op(&P, op, va, rkey, len, 0x44);
	tap(synd == KITE_SYND_REMOTE_ACCESS && qp_state(P.a.qpn) == KITE_QPS_ERR &&
	    qp_state(P.b.qpn) == KITE_QPS_ERR,
	    "%s: REMOTE_ACCESS, both QPs in ERR (syndrome 0x%x)", what, synd);
}

/* ALLOC_MW and DEALLOC_MW, valid and not. */
static void mw_commands(uint32_t *w1, uint32_t *w2)
{
	struct kite_cmd_alloc_mw in;
	struct res r;
	uint32_t k, pd3, u, pdu;

	*w1 = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x71, 0, &r), &r, "ALLOC_MW type 1");
	tap(FIELD_GET(KITE_KEY_INDEX, *w1) && FIELD_GET(KITE_KEY_TAG, *w1) == 0x71,
	    "ALLOC_MW: key 0x%x, an index and the tag given", *w1);
	*w2 = need(alloc_mw(fx_pd, KITE_MW_TYPE_2, 0x72, 0, &r), &r, "ALLOC_MW type 2");
	tap(FIELD_GET(KITE_KEY_INDEX, *w2) != FIELD_GET(KITE_KEY_INDEX, *w1),
	    "ALLOC_MW: each window its own index of the translation table");

	alloc_mw(fx_pd, 0, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "ALLOC_MW type 0 -> E_PARAM at type");
	alloc_mw(fx_pd, 3, 0, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "ALLOC_MW type 3 -> E_PARAM at type");
	alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x100, 0, &r);
	expect(&r, KITE_CMD_E_PARAM, 8, "ALLOC_MW with a reserved flags bit -> E_PARAM at flags");
	alloc_mw(0, KITE_MW_TYPE_1, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW in PD 0 -> E_OBJECT at pdn");
	alloc_mw(777, KITE_MW_TYPE_2, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW in a PD that does not exist -> E_OBJECT");
	alloc_mw(fx_pd, KITE_MW_TYPE_1, 0, 33, &r);
	expect(&r, KITE_CMD_E_OBJECT, 12, "ALLOC_MW for a user context not allocated -> E_OBJECT at uctx");
	u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	alloc_mw(fx_pd, KITE_MW_TYPE_1, 0, u, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW for a user context in the kernel's PD -> E_OBJECT");
	pdu = need(alloc_pd(u, &r), &r, "ALLOC_PD of the user context");
	alloc_mw(pdu, KITE_MW_TYPE_2, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, 0, "ALLOC_MW for the kernel in a user PD -> E_OBJECT");
	k = need(alloc_mw(pdu, KITE_MW_TYPE_2, 0, u, &r), &r, "ALLOC_MW in the user PD");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_UCTX while its window exists -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW of the user window");
	cmd_obj(KITE_CMD_DEALLOC_PD, pdu, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_PD of the user PD");
	cmd_obj(KITE_CMD_DEALLOC_UCTX, u, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_UCTX");
	memset(&in, 0, sizeof(in));
	in.pdn = fx_pd;
	in.type = KITE_MW_TYPE_1;
	run(KITE_CMD_ALLOC_MW, &in, sizeof(in) - 4, 0, 0, &r);
	expect(&r, KITE_CMD_E_LENGTH, -1, "ALLOC_MW with 12 bytes of input -> E_LENGTH");

	cmd_obj(KITE_CMD_DEALLOC_MW, W.mr, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW of an MR's key -> E_OBJECT");
	cmd_obj(KITE_CMD_DEREG_MR, *w1, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEREG_MR of a window's key -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_MW, retag(*w1, 0x99), 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW with another tag -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_MW, *w1, 1, &r);
	expect(&r, KITE_CMD_E_PARAM, 4, "DEALLOC_MW with uctx set -> E_PARAM");
	cmd_obj(KITE_CMD_DEALLOC_MW, 0, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW of key 0 -> E_OBJECT");

	pd3 = need(alloc_pd(0, &r), &r, "ALLOC_PD 3");
	k = need(alloc_mw(pd3, KITE_MW_TYPE_1, 0, 0, &r), &r, "ALLOC_MW in PD 3");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEALLOC_PD while a window of it exists -> E_BUSY");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_E_OBJECT, -1, "DEALLOC_MW again -> E_OBJECT");
	cmd_obj(KITE_CMD_DEALLOC_PD, pd3, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "then DEALLOC_PD");
}

/* Type 1: bind, use, rebind (from any QP of the PD), unbind, refusals. */
static void mw_type1(uint32_t w1)
{
	struct rcpair P;
	struct res r;
	uint32_t k1, k1b, k1c, tmp;

	rc_pair(&P, MAC, 14, 7, 6);
	k1 = bind_ok(&P, &P.b, "type 1", T_WIN, T_WIN_LEN, w1, W.mr, RWR | RRD, 0x81);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + 100, k1, 3000, 0x31) == 0,
	    "WRITE 3000 bytes through the type 1 window: the data at the address");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN + T_WIN_LEN - 2000, k1, 2000, 0x32) == 0,
	    "READ the window's last 2000 bytes through its key");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k1, 1, 0x33) == 0 &&
	    mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + T_WIN_LEN - 1, k1, 1, 0x34) == 0,
	    "WRITE the window's first and last byte");
	/* The MR's own key has no remote rights: the window gives them. */
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, R.rkey, 64, 0x35) == 0,
	    "an MR key in the same pages still works beside the window");
	k1b = bind_ok(&P, &P.a, "type 1 rebound by the other QP of the PD", T_WIN, 4096, k1,
		      W.mr, RWR | RAT, 0x82);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + 4000, k1b, 96, 0x36) == 0,
	    "WRITE through the rebound window's new key");
	tap(mw_op(&P, KITE_WQE_OP_ATOMIC_FA, T_WIN + 8, k1b, 8, 3) == 0,
	    "FETCH_ADD through the window: the word and its original value");
	mw_op_fails("WRITE through the type 1 window's previous key", KITE_WQE_OP_RDMA_WRITE,
		    T_WIN, k1, 64);
	mw_op_fails("WRITE across the window's end (still in the MR)", KITE_WQE_OP_RDMA_WRITE,
		    T_WIN + 4096 - 32, k1b, 64);
	mw_op_fails("WRITE below the window's start", KITE_WQE_OP_RDMA_WRITE, T_WIN - 8, k1b, 16);
	mw_op_fails("READ through a window without REMOTE_READ", KITE_WQE_OP_RDMA_READ, T_WIN,
		    k1b, 64);
	mw_op_fails("WRITE through the window with the index of another", KITE_WQE_OP_RDMA_WRITE,
		    T_WIN, k1b + 0x100, 64);

	/* Unbind: length 0, a new tag; nothing works with either key. */
	rc_pair(&P, MAC, 14, 7, 6);
	k1c = bind_ok(&P, &P.b, "type 1 unbind (length 0)", 0, 0, k1b, 0, 0, 0x83);
	mw_op_fails("WRITE through the unbound window's new key", KITE_WQE_OP_RDMA_WRITE, T_WIN,
		    k1c, 64);
	mw_op_fails("WRITE through the unbound window's old key", KITE_WQE_OP_RDMA_WRITE, T_WIN,
		    k1b, 64);

	/* An MR with a window bound is not deregistered. */
	tmp = need(reg_mr(fx_pd, LW | MWB, 0x65, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, to deregister)");
	rc_pair(&P, MAC, 14, 7, 6);
	k1 = bind_ok(&P, &P.b, "type 1 bound to the MR to deregister", T_WIN, 64, k1c, tmp, RRD,
		     0x84);
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEREG_MR of an MR with a window bound -> E_BUSY");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k1, 64, 0x37) == 0,
	    "the window still works after the refused DEREG_MR");
	k1 = bind_ok(&P, &P.b, "type 1 rebound to another MR", T_WIN, 64, k1, W.mr, RRD, 0x85);
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR once the window left it");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k1, 64, 0x38) == 0,
	    "READ through the window on its new MR");
	k1 = bind_ok(&P, &P.b, "type 1 unbound again", 0, 0, k1, 0, 0, 0x86);
	(void)k1;
}

/* Type 2: bound to one QP, invalidated locally and remotely, freed with its QP. */
static void mw_type2(uint32_t w2, uint32_t w1_key)
{
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P, Q;
	struct res r;
	uint32_t k2, tmp;
	uint16_t idx;
	bool ok;

	rc_pair(&P, MAC, 14, 7, 6);
	/* An unbound type 2 window has no usable key: its tag is not checked. */
	k2 = bind_ok(&P, &P.b, "type 2 on QP B, named with another tag", T_WIN, T_WIN_LEN,
		     retag(w2, 0x55), W.mr, RWR | RRD, 0x91);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN + 10, k2, 2500, 0x41) == 0,
	    "WRITE through the type 2 window to its QP: the data at the address");
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN + 10, k2, 2500, 0x42) == 0,
	    "READ through the type 2 window from its QP");
	mw_op_fails("WRITE through a type 2 window to another QP of the PD",
		    KITE_WQE_OP_RDMA_WRITE, T_WIN, k2, 64);
	bind_fails("of a bound type 2 window again (o10-37.2.30)", KITE_SYND_MW_BIND, 0, 0, T_WIN,
		   64, k2, W.mr, RRD, 0x92);

	/* LOCAL_INV: only the window's QP, only type 2, only its key. */
	rc_pair(&Q, MAC, 14, 7, 6);
	idx = post_local_inv(&Q.a, k2);
	tap(req_err(&Q.scq, Q.a.qpn, idx, KITE_SYND_LOCAL_PROT),
	    "LOCAL_INV of a type 2 window by another QP of the PD: LOCAL_PROT");
	rc_pair(&Q, MAC, 14, 7, 6);
	idx = post_local_inv(&Q.a, w1_key);
	tap(req_err(&Q.scq, Q.a.qpn, idx, KITE_SYND_LOCAL_PROT),
	    "LOCAL_INV of a type 1 window (o10-37.2.26): LOCAL_PROT");
	idx = post_local_inv(&P.b, k2);
	tap(req_ok(&P.scq, P.b.qpn, idx, KITE_WQE_OP_LOCAL_INV, 0),
	    "LOCAL_INV of the type 2 window on its QP: REQ CQE");
	ok = mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k2, 64, 0x43) == KITE_SYND_REMOTE_ACCESS;
	tap(ok, "WRITE through the invalidated type 2 window: REMOTE_ACCESS");

	/* Free again: bound anew on another QP, then SEND_WITH_INV from the peer. */
	rc_pair(&P, MAC, 14, 7, 6);
	k2 = bind_ok(&P, &P.b, "type 2 bound again after LOCAL_INV", T_WIN, 64, k2, W.mr, RWR,
		     0x93);
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(16, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_INV | KITE_WQE_F_SIGNALED, k2, 0, 0, 0, 0, g, 1);
	tap(req_ok(&P.scq, P.a.qpn, idx, KITE_WQE_OP_SEND_INV, 0),
	    "SEND_WITH_INV of the type 2 window's key: REQ CQE");
	ok = tcq_next(&P.rcq, &c);
	if (!tap(ok && cqe_is(&c, KITE_CQE_OP_RESP_SEND_INV, P.b.qpn, 0) && c.byte_len == 16 &&
		 c.inv_rkey == k2 && (c.flags & KITE_CQE_F_INV),
		 "SEND_WITH_INV: RESP_SEND_INV with the window's key and the INV flag"))
		cqe_diag("recv", &c);
	ok = mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k2, 16, 0x44) == KITE_SYND_REMOTE_ACCESS;
	tap(ok, "WRITE through the remotely invalidated window: REMOTE_ACCESS");

	/* SEND_WITH_INV of a type 1 window's key: the responder refuses it. */
	rc_pair(&P, MAC, 14, 7, 6);
	g[0] = sge(64, E.lkey, RBUF);
	post_recv(&P.b, g, 1);
	g[0] = sge(16, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_SEND_INV | KITE_WQE_F_SIGNALED, w1_key, 0, 0, 0, 0, g, 1);
	tap(req_err(&P.scq, P.a.qpn, idx, KITE_SYND_REMOTE_INVAL_REQ),
	    "SEND_WITH_INV of a type 1 window's key: REMOTE_INVAL_REQ");

	/* Destroying the QP invalidates its type 2 windows and frees the MR. */
	tmp = need(reg_mr(fx_pd, LW | MWB, 0x66, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, for the QP's window)");
	rc_pair(&P, MAC, 14, 7, 6);
	k2 = bind_ok(&P, &P.b, "type 2 on a QP to destroy", T_WIN, 64, k2, tmp, RRD, 0x94);
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_E_BUSY, -1, "DEREG_MR under a type 2 window -> E_BUSY");
	cmd_obj(KITE_CMD_DESTROY_QP, P.b.qpn, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DESTROY_QP of the window's QP");
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR once the window's QP is gone");
	rc_pair(&P, MAC, 14, 7, 6);
	k2 = bind_ok(&P, &P.b, "type 2 free again after its QP's destruction", T_WIN, 64, k2,
		     W.mr, RRD, 0x95);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k2, 64, 0x45) == 0,
	    "READ through it on the new QP");
	/* DEALLOC_MW unbinds. */
	tmp = need(reg_mr(fx_pd, LW | MWB, 0x67, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, for DEALLOC_MW)");
	idx = post_local_inv(&P.b, k2);
	tap(req_ok(&P.scq, P.b.qpn, idx, KITE_WQE_OP_LOCAL_INV, 0), "LOCAL_INV again");
	k2 = bind_ok(&P, &P.b, "type 2 on the MR for DEALLOC_MW", T_WIN, 64, k2, tmp, RRD, 0x96);
	cmd_obj(KITE_CMD_DEALLOC_MW, w2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW of a bound window by its allocation key");
	cmd_obj(KITE_CMD_DEREG_MR, tmp, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of its MR afterwards");
	mw_op_fails("WRITE through a deallocated window's key", KITE_WQE_OP_RDMA_WRITE, T_WIN,
		    k2, 16);
}

/* UC: a type 2 window bound on a UC QP, written through, invalidated. */
static void mw_uc(void)
{
	static uint8_t want[3000];
	struct kite_wqe_sge g[1];
	struct rcpair U;
	struct res r;
	uint32_t w, k;
	uint16_t idx;

	w = need(alloc_mw(fx_pd, KITE_MW_TYPE_2, 0x30, 0, &r), &r, "ALLOC_MW type 2 (UC)");
	uc_pair(&U, KITE_MTU_1024);
	k = bind_ok(&U, &U.b, "type 2 on a UC QP", T_WIN, T_WIN_LEN, w, W.mr, RWR, 0x31);
	fill_pattern(SRC, 3000, 0x51, want);
	g[0] = sge(3000, E.lkey, SRC);
	idx = post_rc(&U.a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, T_WIN + 7, k, 0, 0,
		      g, 1);
	tap(req_ok(&U.scq, U.a.qpn, idx, KITE_WQE_OP_RDMA_WRITE, 0), "UC WRITE through the window");
	run_for(1000000);
	tap(mem_eq(T_WIN + 7, want, 3000), "UC WRITE through the window: the data at the address");
	idx = post_local_inv(&U.b, k);
	tap(req_ok(&U.scq, U.b.qpn, idx, KITE_WQE_OP_LOCAL_INV, 0),
	    "UC LOCAL_INV of the type 2 window");
	cmd_obj(KITE_CMD_DEALLOC_MW, k, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW by its current key");
}

/* Every way a bind is refused; the window is unchanged afterwards. */
static void mw_bind_errors(uint32_t wpd2)
{
	struct rcpair P;
	struct res r;
	uint32_t we, wt2, wro, k;
	struct tqp *ud = &E.b;
	uint16_t idx;

	we = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x20, 0, &r), &r, "ALLOC_MW type 1 (errors)");
	wt2 = need(alloc_mw(fx_pd, KITE_MW_TYPE_2, 0x21, 0, &r), &r, "ALLOC_MW type 2 (errors)");
	bind_fails("to an MR without MW_BIND (C10-73)", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we,
		   W.nobind, RRD, 1);
	bind_fails("writable, to an MR without LOCAL_WRITE (C10-74)", KITE_SYND_MW_BIND, 0, 0, T_WIN,
		   64, we, W.nolw, RWR, 1);
	bind_fails("atomic, to an MR without LOCAL_WRITE (C10-74)", KITE_SYND_MW_BIND, 0, 0, T_WIN,
		   64, we, W.nolw, RAT, 1);
	bind_fails("starting below the MR (C10-75)", KITE_SYND_MW_BIND, 0, 0, T_IOVA - 1, 64, we,
		   W.mr, RRD, 1);
	bind_fails("ending past the MR (C10-75)", KITE_SYND_MW_BIND, 0, 0, T_IOVA + T_MR_LEN - 63,
		   64, we, W.mr, RRD, 1);
	bind_fails("longer than the MR", KITE_SYND_MW_BIND, 0, 0, T_IOVA, T_MR_LEN + 1, we, W.mr,
		   RRD, 1);
	bind_fails("with a wrapping range", KITE_SYND_MW_BIND, 0, 0, ~0ULL - 8, 64, we, W.mr, RRD,
		   1);
	bind_fails("of a window of another PD", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, wpd2, W.mr,
		   RRD, 1);
	bind_fails("to an MR of another PD", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we, W.pd2, RRD,
		   1);
	bind_fails("of a type 1 window by a stale key", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   retag(we, 0x19), W.mr, RRD, 1);
	bind_fails("of a type 2 window with length 0 (o10-37.2.40)", KITE_SYND_MW_BIND, 0, 0,
		   T_WIN, 0, wt2, W.mr, RRD, 1);
	bind_fails("with LOCAL_WRITE in the window's rights", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   we, W.mr, RRD | LW, 1);
	bind_fails("with MW_BIND in the window's rights", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we,
		   W.mr, MWB, 1);
	bind_fails("to a window's key as the MR", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we, wt2, RRD,
		   1);
	bind_fails("of an MR's key as the window", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, W.mr, W.mr,
		   RRD, 1);
	bind_fails("of key 0", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, 0, W.mr, RRD, 1);
	bind_fails("of a key index past the table", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64,
		   0xffffff00u, W.mr, RRD, 1);
	bind_fails("to an MR by a stale key", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we,
		   W.mr ^ 0x80, RRD, 1);
	bind_fails("to the DMA MR", KITE_SYND_MW_BIND, 0, 0, T_WIN, 64, we, E.lkey_phys, RRD, 1);
	bind_fails("with a reserved flags bit", KITE_SYND_LOCAL_QP_OP, 0, 0, T_WIN, 64, we, W.mr,
		   RRD, 0x100);
	bind_fails("with a reserved access bit", KITE_SYND_LOCAL_QP_OP, 0, 0, T_WIN, 64, we, W.mr,
		   RRD | BIT(5), 1);
	bind_fails("with an SGE count", KITE_SYND_LOCAL_QP_OP,
		   (uint32_t)FIELD_PREP(KITE_WQE_NUM_SGE, 1), 0, T_WIN, 64, we, W.mr, RRD, 1);
	bind_fails("with inline data", KITE_SYND_LOCAL_QP_OP, KITE_WQE_F_INLINE, 0, T_WIN, 64, we,
		   W.mr, RRD, 1);
	bind_fails("with immediate data", KITE_SYND_LOCAL_QP_OP, 0, 0x1234, T_WIN, 64, we, W.mr,
		   RRD, 1);

	/* A UD QP has no BIND_MW. */
	idx = post_bind_raw(ud, KITE_WQE_F_SIGNALED, 0, T_WIN, 64, we, W.mr, RRD, 1);
	tap(req_err(&E.scq, ud->qpn, idx, KITE_SYND_LOCAL_QP_OP) &&
	    qp_state(ud->qpn) == KITE_QPS_SQE, "bind on a UD QP: REQ_ERR LOCAL_QP_OP, QP in SQE");
	tap(tqp_to(ud, KITE_QPS_RTS) == KITE_CMD_OK, "UD QP: SQE to RTS");

	/* The refused binds changed nothing: the windows bind as allocated. */
	rc_pair(&P, MAC, 14, 7, 6);
	k = bind_ok(&P, &P.b, "type 1 after every refusal, by its allocation key", T_WIN, 64, we,
		    W.mr, RRD, 0x22);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k, 64, 0x61) == 0, "and it reads");
	/* REMOTE_READ needs no LOCAL_WRITE. */
	wro = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x23, 0, &r), &r, "ALLOC_MW type 1 (read only)");
	k = bind_ok(&P, &P.b, "read-only window on an MR without LOCAL_WRITE", T_WIN, 64, wro,
		    W.nolw, RRD, 0x24);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, T_WIN, k, 64, 0x62) == 0,
	    "READ through the window on the MR without LOCAL_WRITE");
	k = bind_ok(&P, &P.b, "type 2 after the refusals", T_WIN, 64, wt2, W.mr, RWR, 0x25);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, T_WIN, k, 64, 0x63) == 0, "and it writes");
	cmd_obj(KITE_CMD_DEALLOC_MW, we, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW type 1 (errors)");
	cmd_obj(KITE_CMD_DEALLOC_MW, wt2, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW type 2 (errors)");
	cmd_obj(KITE_CMD_DEALLOC_MW, wro, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEALLOC_MW type 1 (read only)");
}

/*
 * Random binds and invalidations on a UC QP (an error moves it to SQE,
 * from which it returns to RTS): every WQE completes, successfully or
 * with a bind, QP operation or protection error, and afterwards every
 * window deallocates and every MR deregisters (the device's count of
 * bound windows is consistent).
 */
static void mw_random(void)
{
	const char *seed = getenv("KITE_SEED");
	struct rcpair U;
	struct res r;
	struct kite_cqe c;
	uint32_t mrs[3], mws[4], keys[12], mw_key, mr_key, access, flags;
	unsigned i, n = 300, ok = 0, err = 0, bad = 0, busy = 0, nkeys;
	uint64_t addr, len;
	uint16_t idx;

	rng_state = seed ? strtoull(seed, NULL, 0) * 31 + 11 : 0x6d77ULL;
	diag("seed 0x%" PRIx64, rng_state);
	mrs[0] = need(reg_mr(fx_pd, LW | MWB, 0x01, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR r0");
	mrs[1] = need(reg_mr(fx_pd, MWB | RRD, 0x02, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR r1");
	mrs[2] = need(reg_mr(fx_pd, LW, 0x03, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR r2");
	for (i = 0; i < 4; i++)
		mws[i] = need(alloc_mw(fx_pd, 1 + i % 2, 0x10 + i, 0, &r), &r, "ALLOC_MW random");
	uc_pair(&U, KITE_MTU_1024);
	for (i = 0; i < n; i++) {
		nkeys = 0;
		memcpy(keys, mrs, sizeof(mrs));
		memcpy(keys + 3, mws, sizeof(mws));
		nkeys = 7;
		keys[nkeys++] = (uint32_t)rnd();
		keys[nkeys++] = retag(mws[rndn(4)], (uint8_t)rnd());
		/* Mostly plausible: windows, MRs that allow binding, small ranges. */
		mw_key = rndn(3) ? mws[rndn(4)] : keys[rndn(nkeys)];
		mr_key = rndn(3) ? mrs[rndn(2)] : keys[rndn(nkeys)];
		addr = rndn(4) ? T_IOVA + rndn(T_MR_LEN - 8192) : rnd();
		len = rndn(4) ? rndn(8192) : (rndn(2) ? 0 : rnd());
		access = rndn(8) ? (uint32_t)rndn(16) & ~LW : (uint32_t)rndn(64);
		flags = rndn(16) ? (uint32_t)rndn(256) : (uint32_t)rnd();
		if (rndn(5)) {
			idx = post_bind_raw(&U.b, KITE_WQE_F_SIGNALED, rndn(32) ? 0 : 1, addr, len,
					    mw_key, mr_key, access, flags);
		} else {
			idx = post_local_inv(&U.b, rndn(2) ? retag(mw_key, (uint8_t)flags) : mw_key);
		}
		if (!tcq_next(&U.scq, &c) || c.qpn != U.b.qpn || c.wqe_idx != idx) {
			bad++;
			cqe_diag("random", &c);
			break;
		}
		if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) == KITE_CQE_OP_REQ) {
			ok++;
			/* Bound windows: remember their keys for the next ones. */
			if (c.wqe_opcode == KITE_WQE_OP_BIND_MW) {
				unsigned j;

				for (j = 0; j < 4; j++)
					if (FIELD_GET(KITE_KEY_INDEX, mws[j]) ==
					    FIELD_GET(KITE_KEY_INDEX, mw_key))
						mws[j] = retag(mw_key, (uint8_t)flags);
			}
			continue;
		}
		err++;
		switch (FIELD_GET(KITE_CQE_SYNDROME, c.syndrome)) {
		case KITE_SYND_MW_BIND:
		case KITE_SYND_LOCAL_QP_OP:
		case KITE_SYND_LOCAL_PROT:
			break;
		default:
			bad++;
			cqe_diag("random", &c);
		}
		if (qp_state(U.b.qpn) != KITE_QPS_SQE || tqp_to(&U.b, KITE_QPS_RTS) != KITE_CMD_OK) {
			bad++;
			diag("random: QP not in SQE after an error, or not back to RTS");
			break;
		}
	}
	tap(!bad && ok + err == n && ok && err,
	    "%u random binds and invalidations: %u completed, %u refused (bind, QP operation or protection errors), none else",
	    n, ok, err);
	for (i = 0; i < 3; i++) {
		cmd_obj(KITE_CMD_DEREG_MR, mrs[i], 0, &r);
		if (r.done && FIELD_GET(KITE_CMD_STATUS_CODE, r.status) == KITE_CMD_E_BUSY)
			busy++;
		else if (!r.done || FIELD_GET(KITE_CMD_STATUS_CODE, r.status) != KITE_CMD_OK)
			bad++;
		else
			mrs[i] = 0;
	}
	for (i = 0; i < 4; i++) {
		/* A window's allocation key always works. */
		cmd_obj(KITE_CMD_DEALLOC_MW, retag(mws[i], 0x10 + i), 0, &r);
		if (!r.done || FIELD_GET(KITE_CMD_STATUS_CODE, r.status) != KITE_CMD_OK)
			bad++;
	}
	for (i = 0; i < 3; i++) {
		if (!mrs[i])
			continue;
		cmd_obj(KITE_CMD_DEREG_MR, mrs[i], 0, &r);
		if (!r.done || FIELD_GET(KITE_CMD_STATUS_CODE, r.status) != KITE_CMD_OK)
			bad++;
	}
	tap(!bad, "afterwards every window deallocates and every MR deregisters (%u were busy with windows)",
	    busy);
}

static void g_mw(void)
{
	struct res r;
	uint32_t w1, w2, wpd2;

	eng_setup();
	rc_keys();
	W.mr = need(reg_mr(fx_pd, LW | MWB, 0x61, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		    "REG_MR with MW_BIND");
	W.nobind = need(reg_mr(fx_pd, LW | RWR | RRD, 0x62, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r),
			&r, "REG_MR without MW_BIND");
	W.nolw = need(reg_mr(fx_pd, MWB | RRD, 0x63, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		      "REG_MR with MW_BIND, no LOCAL_WRITE");
	W.pd2 = need(reg_mr(E.pd2, LW | MWB, 0x64, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		     "REG_MR with MW_BIND in PD 2");
	wpd2 = need(alloc_mw(E.pd2, KITE_MW_TYPE_1, 0x70, 0, &r), &r, "ALLOC_MW in PD 2");

	mw_commands(&w1, &w2);
	mw_type1(w1);
	/* mw_type1() leaves w1 unbound with the tag 0x86. */
	mw_type2(w2, retag(w1, 0x86));
	mw_uc();
	mw_bind_errors(wpd2);
	mw_random();
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "after the windows: the channel answers");
}

/* ------------------------------------------------------------------ */
/* REREG_MR                                                           */
/* ------------------------------------------------------------------ */

#define T_IOVA2		0x710000000200ULL	/* a reregistered MR's new range */
#define RR_OFF(f)	((int)offsetof(struct kite_cmd_rereg_mr, f))

/*
 * RDMA WRITE @len bytes of a pattern from SRC to @va through @rkey on a new
 * pair; the requester's syndrome (0: success, 0xff: no CQE). The pattern
 * in @want.
 */
static unsigned rr_write(uint64_t va, uint32_t rkey, uint32_t len, uint8_t seed, uint8_t *want)
{
	struct kite_wqe_sge g[1];
	struct kite_cqe c;
	struct rcpair P;
	uint16_t idx;

	rc_pair(&P, MAC, 14, 7, 6);
	fill_pattern(SRC, len, seed, want);
	g[0] = sge(len, E.lkey, SRC);
	idx = post_rc(&P.a, KITE_WQE_OP_RDMA_WRITE | KITE_WQE_F_SIGNALED, 0, va, rkey, 0, 0, g,
		      1);
	if (!tcq_next(&P.scq, &c) || c.qpn != P.a.qpn || c.wqe_idx != idx) {
		cqe_diag("rereg write", &c);
		return 0xff;
	}
	if (FIELD_GET(KITE_CQE_OPCODE, c.op_own) != KITE_CQE_OP_REQ)
		return FIELD_GET(KITE_CQE_SYNDROME, c.syndrome);
	return 0;
}

/* Access, PD and translation changed in place; the key keeps working. */
static void rereg_valid(uint32_t k)
{
	static uint8_t want[4096], got[4096];
	struct rcpair P;
	struct qbuf b2;
	struct res r;

	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, k, 256, 0x51) == 0,
	    "WRITE through the MR's key before REREG_MR");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, LW | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR ACCESS: REMOTE_WRITE taken away");
	tap(r.result == 0, "REREG_MR: result 0 (the key is unchanged)");
	mw_op_fails("WRITE through the same key without REMOTE_WRITE", KITE_WQE_OP_RDMA_WRITE,
		    DST, k, 256);
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_READ, DST, k, 256, 0x52) == 0,
	    "READ through the same key: REMOTE_READ kept");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, LW | RWR | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR ACCESS: REMOTE_WRITE given back");
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, k, 256, 0x53) == 0,
	    "WRITE through the same key again: the data at the address");

	rereg_mr(k, KITE_REREG_F_PD, E.pd2, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR PD: into PD 2");
	mw_op_fails("WRITE through the key of an MR now in another PD than the QP's",
		    KITE_WQE_OP_RDMA_WRITE, DST, k, 64);
	rereg_mr(k, KITE_REREG_F_PD, fx_pd, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR PD: back into the QP's PD");
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST, k, 64, 0x54) == 0,
	    "WRITE through the key in its PD again");

	b2 = mkbuf(KITE_PBL_LEVEL_1, 12, 2, false);
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA2, 2 * 4096 - 0x200, &b2.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR TRANS: two new pages at a new iova");
	tap(rr_write(T_IOVA2 + 4000, k, 1000, 0x55, want) == 0,
	    "WRITE 1000 bytes across the new pages through the same key");
	memread(b2.data + 0x200 + 4000, got, 1000);
	tap(!memcmp(got, want, 1000), "the data is in the new pages, at the new iova's offset");
	tap(rr_write(DST, k, 64, 0x56, want) == KITE_SYND_REMOTE_ACCESS,
	    "WRITE to the old range through the key: REMOTE_ACCESS");
	tap(rr_write(T_IOVA2 + 2 * 4096 - 0x200 - 8, k, 16, 0x57, want) == KITE_SYND_REMOTE_ACCESS,
	    "WRITE across the new length's end: REMOTE_ACCESS");

	rereg_mr(k, KITE_REREG_F_TRANS | KITE_REREG_F_PD | KITE_REREG_F_ACCESS, fx_pd,
		 LW | RWR, T_IOVA, T_MR_LEN, &E.mr.pbl, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR of all three at once: back to the first pages");
	rc_pair(&P, MAC, 14, 7, 6);
	tap(mw_op(&P, KITE_WQE_OP_RDMA_WRITE, DST + 512, k, 2048, 0x58) == 0,
	    "WRITE through the key into the first pages again");
}

/* Bad input: each error leaves the MR as it was. */
static void rereg_errors(uint32_t k)
{
	static uint8_t want[64];
	uint32_t fast, w, u, pdu, key;
	struct kite_pbl bad;
	struct rcpair P;
	struct res r;

	rereg_mr(0, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR key 0 -> E_OBJECT");
	rereg_mr(retag(k, 0x99), KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR with a stale tag -> E_OBJECT");
	rereg_mr(0xffffff00u | (k & 0xff), KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR index beyond the table -> E_OBJECT");
	fast = need(alloc_mr(fx_pd, 4, 0x41, &r), &r, "ALLOC_MR (fast)");
	rereg_mr(fast, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR of a fast-registration MR -> E_OBJECT");
	w = need(alloc_mw(fx_pd, KITE_MW_TYPE_1, 0x42, 0, &r), &r, "ALLOC_MW");
	rereg_mr(w, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(key), "REREG_MR of a window's key -> E_OBJECT");
	rereg_mr(E.lkey_phys, KITE_REREG_F_ACCESS, 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_STATE, RR_OFF(key), "REREG_MR of a DMA MR -> E_STATE");
	rereg_mr(k, 0, 0, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(flags), "REREG_MR with no flag -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_ACCESS | BIT(3), 0, LW, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(flags), "REREG_MR with a reserved flag -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_PD, 999, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(pdn), "REREG_MR into no such PD -> E_OBJECT");
	u = need(run(KITE_CMD_ALLOC_UCTX, NULL, 0, 0, 0, &r), &r, "ALLOC_UCTX");
	pdu = need(alloc_pd(u, &r), &r, "ALLOC_PD of the user context");
	rereg_mr(k, KITE_REREG_F_PD, pdu, 0, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(pdn),
	       "REREG_MR of a kernel MR into a user context's PD -> E_OBJECT");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, LW | BIT(5), 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(access), "REREG_MR access with a reserved bit -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_ACCESS, 0, RWR | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(access),
	       "REREG_MR REMOTE_WRITE without LOCAL_WRITE -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA, 0, &E.mr.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(length), "REREG_MR TRANS length 0 -> E_PARAM");
	rereg_mr(k, KITE_REREG_F_TRANS | KITE_REREG_F_ACCESS, 0, LW, T_IOVA, T_MR_LEN + 1,
		 &E.mr.pbl, &r);
	expect(&r, KITE_CMD_E_PARAM, RR_OFF(length),
	       "REREG_MR TRANS beyond its pages (with ACCESS) -> E_PARAM");
	bad = E.mr.pbl;
	bad.npages = 0;
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA, 4096, &bad, &r);
	expect2(&r, KITE_CMD_E_PBL, KITE_CMD_E_PARAM, "REREG_MR TRANS with a PBL of no page");
	bad = E.mr.pbl;
	bad.addr = 0xfff0000000000000ULL;
	rereg_mr(k, KITE_REREG_F_TRANS, 0, 0, T_IOVA, 4096, &bad, &r);
	expect2(&r, KITE_CMD_E_DMA, KITE_CMD_E_PBL, "REREG_MR TRANS with a PBL outside RAM");
	rereg_mr(k, KITE_REREG_F_PD | KITE_REREG_F_TRANS, 999, 0, T_IOVA2, 4096, &E.mr.pbl, &r);
	expect(&r, KITE_CMD_E_OBJECT, RR_OFF(pdn), "REREG_MR TRANS into no such PD -> E_OBJECT");
	tap(rr_write(DST, k, 64, 0x61, want) == 0 && mem_eq(DST, want, 64),
	    "after the refused commands the MR is as it was: WRITE through its key works");

	/* Windows bound to the MR: not reregistered (as DEREG_MR). */
	key = need(reg_mr(fx_pd, LW | MWB, 0x67, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		   "REG_MR (MW_BIND, to reregister)");
	rc_pair(&P, MAC, 14, 7, 6);
	w = bind_ok(&P, &P.b, "type 1 bound to the MR to reregister", T_WIN, 64, w, key, RRD,
		    0x43);
	rereg_mr(key, KITE_REREG_F_ACCESS, 0, LW | MWB | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_E_BUSY, RR_OFF(key), "REREG_MR of an MR with a window bound -> E_BUSY");
	w = bind_ok(&P, &P.b, "the window unbound", 0, 0, w, 0, 0, 0x44);
	rereg_mr(key, KITE_REREG_F_ACCESS, 0, LW | MWB | RRD, 0, 0, NULL, &r);
	expect(&r, KITE_CMD_OK, -1, "REREG_MR once the window left it");
	cmd_obj(KITE_CMD_DEREG_MR, key, 0, &r);
	expect(&r, KITE_CMD_OK, -1, "DEREG_MR of the reregistered MR by its key");
	(void)w;
}

/* Random REREG_MR commands: each one answered, the device whole after. */
static void rereg_random(void)
{
	const char *seed = getenv("KITE_SEED");
	uint32_t keys[4], key, flags, access, pdn;
	unsigned i, n = 400, ok = 0, refused = 0, bad = 0;
	uint64_t iova, len;
	struct kite_pbl pbl;
	struct res r;

	rng_state = seed ? strtoull(seed, NULL, 0) * 37 + 5 : 0x7272ULL;
	diag("seed 0x%" PRIx64, rng_state);
	for (i = 0; i < 3; i++)
		keys[i] = need(reg_mr(fx_pd, LW, 0x20 + i, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r),
			       &r, "REG_MR random");
	keys[3] = E.lkey_phys;
	for (i = 0; i < n; i++) {
		key = rndn(4) ? keys[rndn(4)] : (uint32_t)rnd();
		flags = rndn(8) ? 1 + rndn(7) : (uint32_t)rnd();
		pdn = rndn(4) ? (rndn(2) ? fx_pd : E.pd2) : (uint32_t)rnd();
		access = rndn(4) ? (uint32_t)rndn(32) : (uint32_t)rnd();
		iova = rndn(2) ? T_IOVA + rndn(4096) : rnd();
		len = rndn(4) ? 1 + rndn(T_MR_LEN) : rnd();
		pbl = E.mr.pbl;
		if (!rndn(4))
			pbl.npages = (uint32_t)rnd();
		if (!rndn(8))
			pbl.addr = rnd();
		if (!rndn(8))
			pbl.cfg = (uint32_t)rnd();
		rereg_mr(key, flags, pdn, access, iova, len, &pbl, &r);
		if (!r.done)
			bad++;
		else if ((r.status & 0xff) == KITE_CMD_OK)
			ok++;
		else
			refused++;
		if (bad)
			break;
	}
	tap(!bad && ok + refused == n, "%u random REREG_MR: every one answered (%u done, %u refused)",
	    n, ok, refused);
	tap(ok > 0 && refused > 0, "random REREG_MR: both outcomes seen");
	for (i = 0; i < 3; i++) {
		rereg_mr(keys[i], KITE_REREG_F_TRANS | KITE_REREG_F_PD | KITE_REREG_F_ACCESS, fx_pd,
			 LW, T_IOVA, T_MR_LEN, &E.mr.pbl, &r);
		expect(&r, KITE_CMD_OK, -1, "after the random ones: REREG_MR %u restores it", i);
		cmd_obj(KITE_CMD_DEREG_MR, keys[i], 0, &r);
		expect(&r, KITE_CMD_OK, -1, "after the random ones: DEREG_MR %u", i);
	}
}

static void g_rereg(void)
{
	struct res r;
	uint32_t k;

	eng_setup();
	rc_keys();
	k = need(reg_mr(fx_pd, LW | RWR | RRD, 0x66, 0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
		 "REG_MR (to reregister)");
	rereg_valid(k);
	rereg_errors(k);
	rereg_random();
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "after REREG_MR: the channel answers");
}

/* ------------------------------------------------------------------ */
/* Trace events                                                        */
/* ------------------------------------------------------------------ */

/* The -D log of the running QEMU has a line containing @needle. */
static bool log_has(const char *needle)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(log_path, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * QEMU runs with -trace enable=kite_* (run_group()): a command, doorbells,
 * a WQE, a CQE, a DMA error and a guest error each leave their trace event
 * in the log (QEMU's log backend; flushed per message).
 */
static void g_trace(void)
{
	static const char *const want[] = {
		"kite_mmio_write ", "kite_mmio_read ", "kite_cmdq_cfg ",
		"kite_db_cmdq ", "kite_cmd_submit ", "kite_cmd_complete ",
		"kite_eqe_post ", "kite_db ", "kite_sq_wqe ", "kite_cqe_write ",
		"kite_qp_state ", "kite_err_dma ", "kite_err_guest ",
	};
	struct kite_wqe_sge g;
	struct kite_wqe_ud av;
	struct kite_cqe sc;
	struct res r;
	unsigned i;

	eng_setup();
	av = av4(E.b.qpn, T_QKEY, MAC);
	g = sge(64, E.lkey, T_IOVA);
	post_send(&E.gsi, KITE_WQE_OP_SEND | KITE_WQE_F_SIGNALED, 0, &av, &g, 1,
		  NULL, 0, true);
	tap(tcq_next(&E.scq, &sc) && cqe_is(&sc, KITE_CQE_OP_REQ, 1, 0),
	    "a signaled SEND completes");
	run(KITE_CMD_QUERY_DEVICE, NULL, 0, sizeof(struct kite_cmd_query_device_out),
	    NOT_RAM, &r);
	expect(&r, KITE_CMD_E_DMA, -1, "out_addr outside guest RAM -> E_DMA");
	/* An SQ doorbell of a QP that does not exist: a guest error. */
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, 500, 1));
	nop(&r);
	expect(&r, KITE_CMD_OK, -1, "NOP after a bad doorbell");
	for (i = 0; i < ARRAY_SIZE(want); i++)
		tap(log_has(want[i]), "trace event %sfires", want[i]);
	tap(log_has("kite_cmd_submit ") && log_has(" NOP cookie "),
	    "kite_cmd_submit names the opcode (NOP)");
	tap(log_has("kite_err_dma command output: addr 0x8000000000 "),
	    "kite_err_dma names the access and its address");
	tap(log_has("kite_err_guest kite k: doorbell "),
	    "kite_err_guest carries the guest-error message");
}

static const struct group {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{ "cmdq", g_cmdq },
	{ "eq0", g_eq0 },
	{ "query", g_query },
	{ "uctx_pd", g_uctx_pd },
	{ "eq", g_eq },
	{ "cq", g_cq },
	{ "cq_arm", g_cq_arm },
	{ "cq_events", g_cq_events },
	{ "link", g_link },
	{ "qp_create", g_qp_create },
	{ "qp_modify", g_qp_modify },
	{ "mr", g_mr },
	{ "gid", g_gid },
	{ "doorbell", g_doorbell },
	{ "limits", g_limits },
	{ "fault", g_fault },
	{ "devfuzz", g_devfuzz },
	{ "reset", g_reset },
	{ "robust", g_robust },
	{ "fuzz", g_fuzz },
	{ "engine_tx", g_engine_tx },
	{ "engine", g_engine },
	{ "engine_rx", g_engine_rx },
	{ "engine_wire", g_engine_wire },
	{ "rc", g_rc },
	{ "rc_err", g_rc_err },
	{ "rc_wire", g_rc_wire },
	{ "rc_pipe", g_rc_pipe },
	{ "rc_loss", g_rc_loss },
	{ "uc", g_uc },
	{ "uc_wire", g_uc_wire },
	{ "srq", g_srq },
	{ "srq_engine", g_srq_engine },
	{ "srq_random", g_srq_random },
	{ "mcast", g_mcast },
	{ "mcast_engine", g_mcast_engine },
	{ "mcast_random", g_mcast_random },
	{ "cntr", g_cntr },
	{ "mw", g_mw },
	{ "rereg", g_rereg },
	{ "trace", g_trace },
};

static void run_group(const struct group *g)
{
	bool clean;

	cur_group = g->name;
	printf("# group %s\n", g->name);
	fflush(stdout);
	memset(&cmdq, 0, sizeof(cmdq));
	memset(&eq0, 0, sizeof(eq0));
	memset(&eq1, 0, sizeof(eq1));
	stats_buf = 0;
	trace_pattern = g->fn == g_trace ? "kite_*" : NULL;
	/* Wire groups give QEMU a dgram netdev whose other end is wire_fd. */
	if ((g->fn == g_engine_tx || g->fn == g_engine_wire || g->fn == g_rc_wire ||
	     g->fn == g_rc_pipe || g->fn == g_rc_loss || g->fn == g_uc_wire ||
	     g->fn == g_mcast_engine) &&
	    !wire_open())
		tap(false, "wire socket: %s", strerror(errno));
	if (setjmp(abort_jmp) == 0) {
		alarm(GROUP_TIMEOUT_S);
		qemu_start();
		dev_init();
		g->fn();
	} else {
		tap(false, "group aborted: %s", abort_msg);
	}
	alarm(0);
	clean = qemu_stop();
	tap(clean, "QEMU exited cleanly (no crash, no sanitizer report)");
	if (wire_fd >= 0)
		close(wire_fd);
	wire_fd = -1;
	wire_qemu_port = wire_test_port = 0;
}

int main(int argc, char **argv)
{
	unsigned i;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: %s QEMU_BINARY [GROUP...]\n", argv[0]);
		return 2;
	}
	qemu_bin = argv[1];
	if (access(qemu_bin, X_OK)) {
		printf("Bail out! no QEMU binary at %s\n", qemu_bin);
		return 1;
	}
	ib = malloc(IBSZ);
	if (!ib)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, alarm_handler);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		bool want = argc == 2;

		for (a = 2; a < argc; a++)
			want |= !strcmp(argv[a], groups[i].name);
		if (want)
			run_group(&groups[i]);
	}
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}
