/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kite device model test (kite-model-test.c): the qtest and QMP plumbing,
 * TAP, guest memory, device bring-up, the command queue and its builders,
 * and the set-up the groups share: CQs, QPs and WQEs of the data engine,
 * the engine and RC fixtures, the wire socket and its packet log.
 *
 * Copyright (c) 2026 Kite
 */

#include "kite-model-test-common.h"

/* ------------------------------------------------------------------ */
/* Test machine layout                                                 */
/* ------------------------------------------------------------------ */

#define SLOT		3

#define BAR2_ADDR	0xe0400000ULL	/* 1 MiB, naturally aligned */
#define MSI_BASE	0x00200000ULL	/* MSI-X messages land in RAM here */
#define MSI_DATA(v)	(0x4b4d0000u | (v))
#define HEAP_START	0x01000000ULL
#define HEAP_END	0x0f000000ULL	/* -m 256M */

#define MAC_STR		"52:54:00:12:34:56"

#define MSIX_CAP	0xc0

const uint8_t MAC[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

/* ------------------------------------------------------------------ */
/* TAP                                                                 */
/* ------------------------------------------------------------------ */

int tap_n, tap_failed;
const char *cur_group = "";

void diag(const char *fmt, ...)
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

bool tap(bool pass, const char *fmt, ...)
{
	va_list ap;
	bool r;

	va_start(ap, fmt);
	r = vtap(pass, fmt, ap);
	va_end(ap);
	return r;
}

void skip(const char *why, const char *fmt, ...)
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
jmp_buf abort_jmp;
char abort_msg[512];

void fatal(const char *fmt, ...)
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

const char *qemu_bin;
static char workdir[64];
char qt_path[128], qmp_path[128], err_path[128], log_path[128];
static volatile pid_t qemu_pid;
static int qt_fd = -1, qmp_fd = -1;

char *ib;
static size_t ib_start, ib_end;
static char qmp_buf[65536];
static size_t qmp_len;

/*
 * QEMU's -trace enable= pattern: the trace group's own, else KITE_QEMU_TRACE
 * (with the log backend, events go to the -D log, guest.log).
 */
const char *trace_pattern;

/* Groups with a network wire: QEMU's dgram port, the test's port. */
unsigned wire_qemu_port, wire_test_port;
int wire_fd = -1;

void alarm_handler(int sig)
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

uint32_t rd32(uint64_t a) { return (uint32_t)qt_val(qt("readl 0x%" PRIx64, a)); }
uint64_t rd64(uint64_t a) { return qt_val(qt("readq 0x%" PRIx64, a)); }
void wr32(uint64_t a, uint32_t v) { qt("writel 0x%" PRIx64 " 0x%x", a, v); }
void wr64(uint64_t a, uint64_t v) { qt("writeq 0x%" PRIx64 " 0x%" PRIx64, a, v); }
uint32_t reg(uint32_t off) { return rd32(BAR0_ADDR + off); }
void wreg(uint32_t off, uint32_t v) { wr32(BAR0_ADDR + off, v); }
void clock_step(uint64_t ns) { qt("clock_step %" PRIu64, ns); }

void memwrite(uint64_t addr, const void *buf, size_t len)
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

void memread(uint64_t addr, void *buf, size_t len)
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

void memzero(uint64_t addr, uint64_t len)
{
	qt("memset 0x%" PRIx64 " 0x%" PRIx64 " 0", addr, len);
}

static uint32_t mem32(uint64_t addr)
{
	uint32_t v;

	memread(addr, &v, 4);
	return v;
}

void setmem32(uint64_t addr, uint32_t v)
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

void cfg_wr16(unsigned off, uint16_t v)
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
bool qmp(const char *json, const char **reply)
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

void qmp_connect(void)
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
bool qom_get(const char *prop, char *out, size_t len)
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
bool qom_set(const char *prop, const char *value, const char **reply)
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

void qemu_start(void)
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
bool qemu_stop(void)
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
uint64_t galloc(uint64_t size, uint64_t align)
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

bool have_bar2;

void dev_init(void)
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
	cfg_wr32(0x20, (uint32_t)BAR4_ADDR);
	cfg_wr32(0x24, 0);
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
bool msi_take(unsigned v)
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

uint32_t pbl_cfg(unsigned level, unsigned shift)
{
	return (uint32_t)(FIELD_PREP(KITE_PBL_CFG_LEVEL, level) |
			  FIELD_PREP(KITE_PBL_CFG_PAGE_SHIFT, shift));
}

/*
 * npages data pages of 2^shift bytes described by a level 0/1/2 PBL. Queue
 * PBLs carry LAST / NEXT_TO_LAST on the last two PTEs.
 */
struct qbuf mkbuf(unsigned level, unsigned shift, uint32_t npages, bool queue)
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
struct qbuf qbuf_for(uint64_t bytes)
{
	uint32_t np;

	if (bytes <= KITE_PBL_PAGE_SIZE)
		return mkbuf(0, 12, 1, true);
	np = (uint32_t)(bytes / KITE_PBL_PAGE_SIZE);
	return mkbuf(np <= KITE_PBL_ENTRIES ? 1 : 2, 12, np, true);
}

uint64_t pte_get(const struct qbuf *b, uint32_t i)
{
	uint64_t v;

	memread(b->ptes + 8 * i, &v, 8);
	return v;
}

void pte_set(const struct qbuf *b, uint32_t i, uint64_t v)
{
	memwrite(b->ptes + 8 * i, &v, 8);
}

/* ------------------------------------------------------------------ */
/* Command queue                                                       */
/* ------------------------------------------------------------------ */

struct cmdq_state cmdq;

static uint32_t cookie_seq = 0xc0de0000;

struct eqs eq0;

struct kite_eqe eqlog[EQLOG];
unsigned neqlog;

uint64_t db_addr(unsigned page)
{
	return BAR2_ADDR + ((uint64_t)page << KITE_DB_PAGE_SHIFT) + KITE_DB_OFFSET;
}

uint64_t db_eq(uint32_t eqn, uint32_t ci, bool arm)
{
	return FIELD_PREP(KITE_DB_OBJ, eqn) |
	       FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_EQ) |
	       FIELD_PREP(KITE_DB_EQ_CI, ci & 0xffff) |
	       (arm ? KITE_DB_EQ_ARM : 0);
}

void eq_doorbell(struct eqs *q, bool arm)
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

unsigned eq_drain(struct eqs *q)
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

const struct kite_eqe *eqe_find(unsigned since, uint32_t type, uint32_t obj)
{
	unsigned i;

	for (i = since; i < neqlog; i++) {
		const struct kite_eqe *e = &eqlog[i % EQLOG];

		if (FIELD_GET(KITE_EQE_TYPE, e->type_owner) == type && e->obj == obj)
			return e;
	}
	return NULL;
}

bool cmdq_enable(unsigned log)
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

bool wait_ci(uint32_t target, int max)
{
	int i;

	for (i = 0; i < max; i++) {
		if ((int32_t)(reg(RDMA(KITE_RDMA_CMDQ_CI)) - target) >= 0)
			return true;
		clock_step(POLL_STEP_NS);
	}
	return false;
}

uint64_t slot_addr(uint32_t idx)
{
	return cmdq.base + (uint64_t)(idx & ((1u << cmdq.log) - 1)) * KITE_CMD_ENTRY_SIZE;
}

/* Write an entry at PI without ringing. */
uint32_t cmd_post(struct kite_cmd *c)
{
	c->cookie = ++cookie_seq;
	c->status = 0;
	c->result = 0;
	memwrite(slot_addr(cmdq.pi), c, sizeof(*c));
	return cmdq.pi++;
}

void cmd_collect(uint32_t idx, uint32_t cookie, struct res *r)
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

int run(uint32_t op, const void *in, size_t in_len, size_t out_len,
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

const char *code_name(unsigned c)
{
	static const char *n[] = { "OK", "E_OPCODE", "E_PARAM", "E_LENGTH",
		"E_NO_RESOURCES", "E_OBJECT", "E_STATE", "E_BUSY", "E_DMA",
		"E_PBL", "E_INTERNAL" };

	return c < ARRAY_SIZE(n) ? n[c] : "?";
}

void res_diag(const struct res *r)
{
	unsigned c = r->status & 0xff;

	diag("got status 0x%08x (%s%s, syndrome %u), result 0x%x", r->status,
	     r->done ? "" : "NOT DONE, ", code_name(c),
	     (unsigned)FIELD_GET(KITE_CMD_STATUS_SYNDROME, r->status), r->result);
}

bool expect(const struct res *r, unsigned code, int syn, const char *fmt, ...)
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

bool expect2(const struct res *r, unsigned c1, unsigned c2, const char *fmt, ...)
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
uint32_t need(int code, const struct res *r, const char *what)
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

int cmd_obj(uint32_t op, uint32_t obj, uint32_t uctx, struct res *r)
{
	struct kite_cmd_obj in = { .obj = obj, .uctx = uctx };

	return run(op, &in, sizeof(in), 0, 0, r);
}

int nop(struct res *r)
{
	return run(KITE_CMD_NOP, NULL, 0, 0, 0, r);
}

uint64_t stats_buf;

/* QUERY_STATS into *st (all KITE_STAT_COUNT counters). */
void stats(uint64_t *st)
{
	struct res r;

	if (!stats_buf)
		stats_buf = galloc(4096, 4096);
	need(run(KITE_CMD_QUERY_STATS, NULL, 0, 8 * KITE_STAT_COUNT, stats_buf, &r),
	     &r, "QUERY_STATS");
	memread(stats_buf, st, 8 * KITE_STAT_COUNT);
}

uint64_t stat1(unsigned idx)
{
	uint64_t st[KITE_STAT_COUNT];

	stats(st);
	return st[idx];
}

int create_eq_pbl(unsigned log, unsigned vec, bool ctrl,
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
int create_eq(struct eqs *q, unsigned log, unsigned vec, bool ctrl, struct res *r)
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
void std_setup(void)
{
	if (!cmdq_enable(6))
		fatal("command queue does not enable");
	setup_eq0();
}

int create_cq_full(unsigned log, uint32_t eqn, uint32_t cfg_extra, uint32_t uctx,
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

int create_cq(struct cq *q, unsigned log, uint32_t eqn, uint32_t uctx, struct res *r)
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

int query_cq(uint32_t cqn, struct kite_cmd_query_cq_out *o, struct res *r)
{
	int c = run(KITE_CMD_QUERY_CQ, &(struct kite_cmd_obj){ .obj = cqn },
		    sizeof(struct kite_cmd_obj), sizeof(*o), 0, r);

	memcpy(o, r->out, sizeof(*o));
	return c;
}

int alloc_pd(uint32_t uctx, struct res *r)
{
	return cmd_obj(KITE_CMD_ALLOC_PD, 0, uctx, r);
}

int add_gid(uint32_t index, uint32_t type, struct res *r)
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

struct kite_cmd_create_qp qp_in(const struct qpspec *s)
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

int create_qp(const struct qpspec *s, struct res *r)
{
	struct kite_cmd_create_qp in = qp_in(s);

	return run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, r);
}

struct qpspec qps(uint32_t type, uint32_t pdn, uint32_t cqn, uint32_t uctx)
{
	struct qpspec s = { .type = type, .pdn = pdn, .scqn = cqn, .rcqn = cqn,
			    .uctx = uctx, .slog = 6, .sshift = 6, .rlog = 6, .rshift = 6 };
	return s;
}

/* Attribute values valid for every transition. */
struct kite_cmd_modify_qp attrs_valid(uint32_t qpn)
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

int modify_qp(const struct kite_cmd_modify_qp *a, uint32_t mask, uint8_t state,
	      struct res *r)
{
	struct kite_cmd_modify_qp in = *a;

	in.mask = mask;
	in.state = state;
	return run(KITE_CMD_MODIFY_QP, &in, sizeof(in), 0, 0, r);
}

int query_qp(uint32_t qpn, struct kite_cmd_modify_qp *o, struct res *r)
{
	int c = run(KITE_CMD_QUERY_QP, &(struct kite_cmd_obj){ .obj = qpn },
		    sizeof(struct kite_cmd_obj), sizeof(*o), 0, r);

	memcpy(o, r->out, sizeof(*o));
	return c;
}

/* Current state, or -1. */
int qp_state(uint32_t qpn)
{
	struct kite_cmd_modify_qp o;
	struct res r;

	if (query_qp(qpn, &o, &r) != KITE_CMD_OK)
		return -1;
	return o.state;
}

int reg_mr(uint32_t pdn, uint32_t access, uint32_t flags, uint32_t uctx,
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

int rereg_mr(uint32_t key, uint32_t flags, uint32_t pdn, uint32_t access,
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

int alloc_mr(uint32_t pdn, uint32_t max_pages, uint32_t flags, struct res *r)
{
	struct kite_cmd_alloc_mr in = { .pdn = pdn, .max_pages = max_pages, .flags = flags };

	return run(KITE_CMD_ALLOC_MR, &in, sizeof(in), 0, 0, r);
}

int alloc_mw(uint32_t pdn, uint32_t type, uint32_t flags, uint32_t uctx, struct res *r)
{
	struct kite_cmd_alloc_mw in = { .pdn = pdn, .type = type, .flags = flags, .uctx = uctx };

	return run(KITE_CMD_ALLOC_MW, &in, sizeof(in), 0, 0, r);
}

/* Fixture for CQ/QP/MR groups: cmdq, EQ0, EQ1, PD, CQ on EQ1, GID 0. */
struct eqs eq1;
uint32_t fx_pd;
struct cq fx_cq;

void fixture(void)
{
	struct res r;

	std_setup();
	need(create_eq(&eq1, 6, EQ1_VEC, false, &r), &r, "CREATE_EQ (EQ1)");
	fx_pd = need(alloc_pd(0, &r), &r, "ALLOC_PD");
	need(create_cq(&fx_cq, 6, eq1.eqn, 0, &r), &r, "CREATE_CQ");
	need(add_gid(0, KITE_NET_ROCE_V2_IPV4, &r), &r, "ADD_GID 0");
}

/* ------------------------------------------------------------------ */
/* QP states                                                           */
/* ------------------------------------------------------------------ */

const char *st_name(unsigned s)
{
	static const char *n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return s < ARRAY_SIZE(n) ? n[s] : "?";
}

/* ------------------------------------------------------------------ */
/* Doorbells                                                           */
/* ------------------------------------------------------------------ */

uint64_t db_wq(uint32_t type, uint32_t qpn, uint32_t pi)
{
	return FIELD_PREP(KITE_DB_OBJ, qpn) | FIELD_PREP(KITE_DB_TYPE, type) |
	       FIELD_PREP(KITE_DB_PI, pi & 0xffff);
}

uint64_t db_cq_arm(uint32_t cqn, unsigned cmd, unsigned sn)
{
	return FIELD_PREP(KITE_DB_OBJ, cqn) | FIELD_PREP(KITE_DB_TYPE, KITE_DB_TYPE_CQ_ARM) |
	       FIELD_PREP(KITE_DB_CQ_CMD, cmd) | FIELD_PREP(KITE_DB_CQ_CMD_SN, sn);
}

void dbrec_arm(const struct cq *q, uint32_t arm_ci, unsigned cmd, unsigned sn)
{
	setmem32(q->dbrec + 4, (uint32_t)(FIELD_PREP(KITE_CQ_DB_ARM_CI, arm_ci) |
					  FIELD_PREP(KITE_CQ_DB_ARM_CMD, cmd) |
					  FIELD_PREP(KITE_CQ_DB_ARM_CMD_SN, sn)));
}

uint64_t bad_db0;

void bad_db_check(uint64_t expect_delta, const char *what)
{
	uint64_t now;

	clock_step(POLL_STEP_NS);
	now = stat1(KITE_STAT_BAD_DOORBELLS);
	tap(now - bad_db0 == expect_delta, "%s (BAD_DOORBELLS +%" PRIu64 ", expected +%" PRIu64 ")",
	    what, now - bad_db0, expect_delta);
	bad_db0 = now;
}

/* ------------------------------------------------------------------ */
/* CQ arming                                                           */
/* ------------------------------------------------------------------ */

unsigned eq1_count(uint32_t type, uint32_t obj)
{
	unsigned mark = neqlog, n = 0, i;

	eq_drain(&eq1);
	for (i = mark; i < neqlog; i++)
		if (FIELD_GET(KITE_EQE_TYPE, eqlog[i % EQLOG].type_owner) == type &&
		    eqlog[i % EQLOG].obj == obj)
			n++;
	return n;
}

/* ------------------------------------------------------------------ */
/* CQEs of the model's debug-cqe property                              */
/* ------------------------------------------------------------------ */

void dcqe(uint32_t cqn, uint32_t flags)
{
	char v[32];
	const char *reply = "";

	snprintf(v, sizeof(v), "%u", cqn | flags);
	if (!qom_set("debug-cqe", v, &reply))
		fatal("qom-set debug-cqe %s failed: %.120s", v, reply);
	clock_step(POLL_STEP_NS);
}

void arm_cq(struct cq *q, uint32_t arm_ci, unsigned cmd, unsigned sn)
{
	dbrec_arm(q, arm_ci, cmd, sn);
	wr64(db_addr(0), db_cq_arm(q->cqn, cmd, sn));
	clock_step(POLL_STEP_NS);
}

int mkcq(struct cq *q, unsigned log, uint32_t eqn, uint32_t cfg, uint16_t mc, uint16_t mp)
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

struct kite_cqe cqe_at(const struct cq *q, uint64_t base, uint32_t idx)
{
	struct kite_cqe c;

	memread(base + (uint64_t)(idx & ((1u << q->log) - 1)) * q->cqe_size, &c, sizeof(c));
	return c;
}

/* ------------------------------------------------------------------ */
/* Random numbers                                                      */
/* ------------------------------------------------------------------ */

uint64_t rng_state;

uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* ------------------------------------------------------------------ */
/* Data engine: CQs, QPs, WQEs, the engine fixture, the wire           */
/* ------------------------------------------------------------------ */

/*
 * An independent ICRC: bitwise CRC-32 (reflected 0xedb88320, initial and
 * final inversion) over 8 bytes of 0xff followed by the packet from the IP
 * header with the variant fields masked to ones (RoCEv2 annex A17.3.3).
 */
uint32_t t_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return crc;
}

uint32_t t_icrc(const uint8_t *l3, size_t len, bool v6)
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

uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
uint32_t be24(const uint8_t *p) { return (uint32_t)p[0] << 16 | p[1] << 8 | p[2]; }
uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | be24(p + 1); }
void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }

uint16_t t_csum(uint32_t sum, const uint8_t *p, size_t len)
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

void tcq_make(struct tcq *q, unsigned log)
{
	struct res r;

	memset(q, 0, sizeof(*q));
	need(create_cq(&q->c, log, eq1.eqn, 0, &r), &r, "CREATE_CQ");
}

/* The next CQE, waiting a bounded virtual time for it. */
bool tcq_next(struct tcq *q, struct kite_cqe *out)
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

unsigned tcq_drain(struct tcq *q)
{
	struct kite_cqe c;
	unsigned n = 0;

	while (n < 1000 && tcq_next(q, &c))
		n++;
	return n;
}

static int tqp_create_flags(struct tqp *q, uint32_t type, uint32_t pdn,
			    uint32_t scqn, uint32_t rcqn, uint32_t flags,
			    uint64_t dbrec, struct res *r)
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
	in.rq_dbrec_addr = dbrec;
	c = run(KITE_CMD_CREATE_QP, &in, sizeof(in), 0, 0, r);
	if (c == KITE_CMD_OK)
		q->qpn = r->result;
	return c;
}

/*
 * A QP with an RQ doorbell record at @dbrec (KITE_QP_F_RQ_DBREC): its
 * receives write the record and ring no doorbell.
 */
int tqp_create_dbrec(struct tqp *q, uint32_t type, uint32_t pdn,
		     uint32_t scqn, uint32_t rcqn, uint64_t dbrec,
		     struct res *r)
{
	int c = tqp_create_flags(q, type, pdn, scqn, rcqn, KITE_QP_F_RQ_DBREC,
				 dbrec, r);

	q->rq_dbrec = dbrec;
	return c;
}

int tqp_create(struct tqp *q, uint32_t type, uint32_t pdn, uint32_t scqn,
	       uint32_t rcqn, uint32_t flags, struct res *r)
{
	return tqp_create_flags(q, type, pdn, scqn, rcqn, flags, 0, r);
}

void tqp_rts(struct tqp *q)
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

int tqp_to(struct tqp *q, uint8_t state)
{
	struct kite_cmd_modify_qp a = attrs_valid(q->qpn);
	struct res r;

	return modify_qp(&a, KITE_QP_ATTR_STATE, state, &r);
}

struct kite_wqe_sge sge(uint32_t len, uint32_t lkey, uint64_t addr)
{
	struct kite_wqe_sge g = { .length = len, .lkey = lkey, .addr = addr };

	return g;
}

/* Write a receive WQE (num_sge n) and ring the RQ doorbell. */
void post_recv_raw(struct tqp *q, uint32_t num_sge, const struct kite_wqe_sge *g,
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
	if (q->rq_dbrec)
		wr32(q->rq_dbrec, FIELD_PREP(KITE_RQ_DB_PI, q->rpi & 0xffff));
	else
		wr64(db_addr(0), db_wq(KITE_DB_TYPE_RQ, q->qpn, q->rpi));
}

void post_recv(struct tqp *q, const struct kite_wqe_sge *g, unsigned n)
{
	post_recv_raw(q, n, g, n);
}

/* A send WQE; returns its wqe_idx. @opw holds opcode and flags. */
uint16_t post_send(struct tqp *q, uint32_t opw, uint32_t imm_be,
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

struct kite_wqe_ud av4(uint32_t rqpn, uint32_t qkey, const uint8_t *dmac)
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

struct kite_wqe_ud av6(uint32_t rqpn, uint32_t qkey, const uint8_t *dmac)
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

struct eng_fixture E;

uint64_t t_bus(uint64_t iova)
{
	return E.mr.data + 0x100 + (iova - T_IOVA);
}

void eng_setup(void)
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

void fill_pattern(uint64_t iova, uint32_t len, uint8_t seed, uint8_t *copy)
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

bool cqe_is(const struct kite_cqe *c, unsigned op, uint32_t qpn, unsigned synd)
{
	return FIELD_GET(KITE_CQE_OPCODE, c->op_own) == op && c->qpn == qpn &&
	       FIELD_GET(KITE_CQE_SYNDROME, c->syndrome) == synd;
}

void cqe_diag(const char *what, const struct kite_cqe *c)
{
	diag("%s CQE: op 0x%x qpn %u byte_len %u wqe_idx %u flags 0x%x src_qpn %u "
	     "syndrome 0x%x wqe_opcode %u", what,
	     (unsigned)FIELD_GET(KITE_CQE_OPCODE, c->op_own), c->qpn, c->byte_len,
	     c->wqe_idx, c->flags, c->src_qpn, c->syndrome, c->wqe_opcode);
}

/* Post one send on @q expected to fail with @synd, then check SQE + flush. */
void send_fails(struct tqp *q, const char *what, uint32_t opw,
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

bool wire_open(void)
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
ssize_t wire_recv(uint8_t *buf, size_t len)
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

void wire_send(const uint8_t *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)wire_qemu_port);
	if (sendto(wire_fd, buf, len, 0, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len)
		diag("sendto: %s", strerror(errno));
}

/* Wait until QEMU has taken a frame off the wire. */
void wire_settle(void)
{
	int i;

	for (i = 0; i < 10; i++) {
		usleep(5000);
		clock_step(POLL_STEP_NS);
	}
}

/* ------------------------------------------------------------------ */
/* RC transport: QP pairs, WQEs, memory                                */
/* ------------------------------------------------------------------ */

struct rc_fixture R;

void rc_keys(void)
{
	struct res r;

	R.rkey = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			     KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC |
			     KITE_ACCESS_FLUSH_GLOBAL, 0x44, 0,
			     T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r, "REG_MR (remote access)");
	R.rkey_nw = need(reg_mr(fx_pd, KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ, 0x45,
				0, T_IOVA, T_MR_LEN, &E.mr.pbl, &r), &r,
			 "REG_MR (no REMOTE_WRITE)");
}

/* Bring RC QP @q to RTS connected to @dqpn at @dmac, with max_rd_atomic @rd. */
void rc_rts_rd(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t timeout,
	       uint8_t retry, uint8_t rnr_retry, uint8_t rd)
{
	struct kite_cmd_modify_qp a = attrs_valid(q->qpn);
	struct res r;

	a.max_rd_atomic = rd;
	a.access |= KITE_ACCESS_REMOTE_ATOMIC | KITE_ACCESS_FLUSH_GLOBAL;
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

void rc_rts(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t timeout,
	    uint8_t retry, uint8_t rnr_retry)
{
	rc_rts_rd(q, dqpn, dmac, timeout, retry, rnr_retry, 4);
}

void rc_pair(struct rcpair *p, const uint8_t *dmac, uint8_t timeout, uint8_t retry,
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
uint16_t write_rc(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t va, uint32_t rkey,
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

/*
 * A WQE of the control segment @c (its wqe_idx set here), the remote
 * address @va/@rkey and @seg (@seg_len bytes) after it, at the SQ's
 * producer index; rings the doorbell when @ring.
 */
static uint16_t put_raddr_wqe(struct tqp *q, struct kite_wqe_ctrl *c, uint64_t va,
			      uint32_t rkey, const void *seg, size_t seg_len, bool ring)
{
	struct kite_wqe_raddr ra = { .remote_addr = va, .rkey = rkey };
	uint16_t idx = (uint16_t)q->spi;
	uint8_t w[256];

	memset(w, 0, sizeof(w));
	c->wqe_idx = idx;
	memcpy(w, c, 16);
	memcpy(w + 16, &ra, 16);
	memcpy(w + 32, seg, seg_len);
	memwrite(q->sq.data + ((uint64_t)(q->spi & ((1u << q->slog) - 1)) << q->sshift),
		 w, 1u << q->sshift);
	q->spi++;
	if (ring)
		ring_sq(q);
	return idx;
}

/*
 * An ATOMIC WRITE WQE of @val (raw @opw: flags, or a malformed variant
 * through @ilen and @inl) to @va/@rkey; rings the doorbell when @ring.
 */
uint16_t write_awrite(struct tqp *q, uint32_t opw, uint64_t va, uint32_t rkey,
		      uint64_t val, bool inl, unsigned ilen, bool ring)
{
	struct kite_wqe_ctrl c;

	memset(&c, 0, sizeof(c));
	c.opcode = KITE_WQE_OP_ATOMIC_WRITE | opw | (inl ? KITE_WQE_F_INLINE : 0);
	c.inline_len = (uint16_t)ilen;
	return put_raddr_wqe(q, &c, va, rkey, &val, sizeof(val), ring);
}

/*
 * A FLUSH WQE (raw @opw: flags, or a malformed NUM_SGE or INLINE) for
 * @len bytes at @va/@rkey with the FETH @feth and the reserved word @rsvd;
 * rings the doorbell when @ring.
 */
uint16_t write_flush(struct tqp *q, uint32_t opw, uint64_t va, uint32_t rkey, uint32_t len,
		     uint32_t feth, uint64_t rsvd, bool ring)
{
	struct kite_wqe_flush fl = { .length = len, .feth = feth, .rsvd = rsvd };
	struct kite_wqe_ctrl c;

	memset(&c, 0, sizeof(c));
	c.opcode = KITE_WQE_OP_FLUSH | opw;
	return put_raddr_wqe(q, &c, va, rkey, &fl, sizeof(fl), ring);
}

void ring_sq(struct tqp *q)
{
	wr64(db_addr(0), db_wq(KITE_DB_TYPE_SQ, q->qpn, q->spi));
}

/* An RC send WQE, doorbell rung; returns its wqe_idx. */
uint16_t post_rc(struct tqp *q, uint32_t opw, uint32_t imm, uint64_t va, uint32_t rkey,
		 uint64_t swap, uint64_t cmp, const struct kite_wqe_sge *g, unsigned n)
{
	uint16_t idx = write_rc(q, opw, imm, va, rkey, swap, cmp, g, n);

	ring_sq(q);
	return idx;
}

/* Let @ns of virtual time pass in steps, so timers and bottom halves alternate. */
void run_for(uint64_t ns)
{
	uint64_t t;

	for (t = 0; t < ns; t += 100000)
		clock_step(100000);
}

bool mem_eq(uint64_t iova, const uint8_t *want, uint32_t len)
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

uint64_t mem64(uint64_t iova)
{
	uint64_t v;

	memread(t_bus(iova), &v, 8);
	return v;
}

void set64(uint64_t iova, uint64_t v)
{
	memwrite(t_bus(iova), &v, 8);
}

bool req_ok(struct tcq *q, uint32_t qpn, uint16_t idx, unsigned op, uint32_t len)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c) && cqe_is(&c, KITE_CQE_OP_REQ, qpn, 0) && c.wqe_idx == idx &&
		  c.wqe_opcode == op && c.byte_len == len;

	if (!ok)
		cqe_diag("send", &c);
	return ok;
}

/* A REG_MR WQE; returns its wqe_idx. */
uint16_t post_reg_mr(struct tqp *q, uint64_t iova, uint64_t len, uint32_t key,
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
 * Ethernet on, two CQs and RC QP @q in RTS facing the test wire's peer
 * (W_PEER_QPN at @peer), timeout 14, retry 7, rnr_retry 6.
 */
void rc_wire_qp(struct tqp *q, struct tcq *scq, struct tcq *rcq, const uint8_t *peer)
{
	struct res r;

	wreg(KITE_REG_ETH_CTRL, KITE_ETH_CTRL_ENABLE);
	tcq_make(scq, 6);
	tcq_make(rcq, 6);
	need(tqp_create(q, KITE_QPT_RC, fx_pd, scq->c.cqn, rcq->c.cqn, 0, &r), &r, "CREATE_QP RC");
	rc_rts(q, W_PEER_QPN, peer, 14, 7, 6);
}

/* Build an IPv4 RoCEv2 RC frame from the peer to us; returns its length. */
size_t w_frame(uint8_t *f, uint8_t opcode, uint32_t dqpn, uint32_t psn, bool ackreq,
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
bool w_roce(const uint8_t *f, ssize_t n)
{
	return n >= 54 && be16(f + 12) == 0x0800 && be16(f + 36) == 4791;
}

/* The next RoCEv2 frame from QEMU: its BTH offset is 42 (IPv4, no VLAN). */
ssize_t w_next(uint8_t *f, size_t len)
{
	ssize_t n;

	do {
		n = wire_recv(f, len);
	} while (n > 0 && !w_roce(f, n));
	return n;
}

/* ------------------------------------------------------------------ */
/* The wire log: RC packets the device sent                            */
/* ------------------------------------------------------------------ */

struct wpkt wlog[64];

/*
 * The frames QEMU sends until the wire has been quiet for a while, logged
 * in wlog[] (at most 64). With @relay the test is a switch between two
 * QPs of the model: every frame goes back to the model, addressed to its
 * own MAC, but the first one for QPN @drop_qpn with PSN @drop_psn.
 */
/* Record frame @f of @len bytes as wlog[@n]. */
struct wpkt *wlog_add(unsigned n, const uint8_t *f, ssize_t len)
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

unsigned w_collect(bool relay, uint32_t drop_qpn, uint32_t drop_psn)
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

void wlog_diag(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		diag("frame %u: opcode 0x%02x QP 0x%x PSN 0x%06x%s aeth 0x%02x len %zu%s", i,
		     wlog[i].op, wlog[i].dqpn, wlog[i].psn, wlog[i].ackreq ? " AckReq" : "",
		     wlog[i].aeth, wlog[i].len, wlog[i].dropped ? " (dropped)" : "");
}

/* Check wlog[from..] against @n (opcode, PSN offset from @psn, AckReq) triples. */
bool wlog_is(unsigned from, unsigned got, uint32_t psn, const uint8_t (*want)[3], unsigned n)
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
void w_ack(uint32_t qpn, uint32_t psn, uint8_t synd)
{
	static uint8_t f[128];
	uint8_t ext[4];

	put32(ext, (uint32_t)synd << 24 | 1);
	wire_send(f, w_frame(f, 0x11, qpn, psn, false, ext, 4, NULL, 0));
	wire_settle();
}

/* A READ response (@op) or atomic ACK (@op 0x12, @pl the original value). */
void w_resp(uint32_t qpn, uint8_t op, uint32_t psn, const uint8_t *pl, size_t len)
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

bool req_err(struct tcq *q, uint32_t qpn, uint16_t idx, unsigned synd)
{
	struct kite_cqe c;
	bool ok = tcq_next(q, &c) && cqe_is(&c, KITE_CQE_OP_REQ_ERR, qpn, synd) &&
		  c.wqe_idx == idx;

	if (!ok)
		cqe_diag("send", &c);
	return ok;
}

/* ------------------------------------------------------------------ */
/* QOM counters                                                        */
/* ------------------------------------------------------------------ */

/* The counter @key of the string property @prop ("key=N ..."), or ~0. */
uint64_t qom_count(const char *prop, const char *key)
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

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */
/* ------------------------------------------------------------------ */

int srq_create_in(struct kite_cmd_create_srq *in, size_t len, struct res *r)
{
	return run(KITE_CMD_CREATE_SRQ, in, len, 0, 0, r);
}

struct kite_cmd_create_srq srq_in(struct tsrq *q, uint32_t pdn, unsigned log,
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

int srq_create(struct tsrq *q, uint32_t pdn, unsigned log, unsigned shift,
	       uint32_t limit, struct res *r)
{
	struct kite_cmd_create_srq in = srq_in(q, pdn, log, shift, limit);
	int c = srq_create_in(&in, sizeof(in), r);

	if (c == KITE_CMD_OK)
		q->srqn = r->result;
	return c;
}

uint64_t db_srq(uint32_t srqn, uint32_t pi)
{
	return db_wq(KITE_DB_TYPE_SRQ, srqn, pi);
}

/* Write an SRQ WQE with @tag and @num_sge (n segments copied); ring if @ring. */
void srq_post_raw(struct tsrq *q, uint16_t tag, uint32_t num_sge, uint32_t rsvd,
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

void srq_post(struct tsrq *q, uint16_t tag, const struct kite_wqe_sge *g, unsigned n)
{
	srq_post_raw(q, tag, n, 0, g, n, true);
}

/* A QP (type @type) receiving from @srqn; no RQ. */
int tqp_create_srq(struct tqp *q, uint32_t type, uint32_t pdn, uint32_t scqn,
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

/* ------------------------------------------------------------------ */
/* UC QP pairs                                                         */
/* ------------------------------------------------------------------ */

/* Bring UC QP @q to RTS facing @dqpn at @dmac, path MTU @mtu. */
void uc_rts(struct tqp *q, uint32_t dqpn, const uint8_t *dmac, uint8_t mtu)
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

void uc_pair(struct rcpair *p, uint8_t mtu)
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
