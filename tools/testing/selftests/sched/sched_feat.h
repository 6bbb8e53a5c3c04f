/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the sched_feat selftests: flag access through
 * /sys/kernel/debug/sched/features, the feat_stats event counters,
 * schedstats, CPU capacities, NUMA nodes and affinity.
 *
 * Include instead of kselftest_harness.h.  Call sf_init() from main() before
 * test_harness_run(): it skips the whole binary when the prerequisites are
 * missing and saves the features line and sched_schedstats so that
 * sf_restore() can put back every flag a test touched.  sf_restore() is
 * run at exit and on fatal signals of the harness process, and should be
 * called from every FIXTURE_SETUP() (to start from the saved state even
 * after a timed-out test) and FIXTURE_TEARDOWN().  From a signal handler
 * it is a best effort: it formats and parses with stdio and reads /proc,
 * which are not async-signal-safe.
 */
#ifndef __SCHED_FEAT_H
#define __SCHED_FEAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "../kselftest_harness.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define SF_DEBUGFS		"/sys/kernel/debug"
#define SF_FEATURES		SF_DEBUGFS "/sched/features"
#define SF_FEAT_STATS		SF_DEBUGFS "/sched/feat_stats"
#define SF_DOMAINS		SF_DEBUGFS "/sched/domains"
#define SF_SCHEDSTATS		"/proc/sys/kernel/sched_schedstats"
#define SF_BASE_SLICE		SF_DEBUGFS "/sched/base_slice_ns"
#define SF_TUNABLE_SCALING	SF_DEBUGFS "/sched/tunable_scaling"
#define SF_LINE_MAX		4096
#define SF_MAX_CPUS		256

static char sf_saved[SF_LINE_MAX];
static bool sf_saved_valid;
static int sf_schedstats_saved = -1;
static long sf_slice_saved = -1;
static pid_t sf_owner;
static bool sf_mounted_debugfs;

static inline pid_t sf_gettid(void)
{
	return syscall(SYS_gettid);
}

static inline uint64_t sf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline uint64_t sf_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The period of the scheduler tick in ns (TICK_NSEC, 1 s / CONFIG_HZ
 * rounded to the nearest ns): the resolution the kernel reports for its
 * coarse clocks.  0 if unknown.
 */
static inline unsigned long sf_tick_ns(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts))
		return 0;
	return ts.tv_sec * 1000000000UL + ts.tv_nsec;
}

static inline void sf_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec		= ms / 1000,
		.tv_nsec	= (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Read a whole (small) file, NUL-terminated.  Returns length or -errno. */
static inline int sf_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, off = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)off < len - 1) {
		n = read(fd, buf + off, len - 1 - off);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		off += n;
	}
	buf[off] = '\0';
	close(fd);
	return off;
}

/* One write(2) of exactly @len bytes.  Returns 0 or -errno. */
static inline int sf_write_buf(const char *path, const char *buf, size_t len)
{
	ssize_t n;
	int fd, ret;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	ret = n < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static inline int sf_write_str(const char *path, const char *s)
{
	return sf_write_buf(path, s, strlen(s));
}

/*
 * Next whitespace separated token of @s at or after *@pos.  Returns its
 * start and stores its length in *@len, NULL at the end.
 */
static inline const char *sf_token(const char *s, size_t *pos, size_t *len)
{
	size_t i = *pos, start;

	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	if (!s[i])
		return NULL;
	start = i;
	while (s[i] && !isspace((unsigned char)s[i]))
		i++;
	*pos = i;
	*len = i - start;
	return s + start;
}

/* 1: @name on in @line, 0: off ("NO_" + @name), -ENOENT: not listed. */
static inline int sf_state_in(const char *line, const char *name)
{
	size_t pos = 0, len, nlen = strlen(name);
	const char *tok;

	while ((tok = sf_token(line, &pos, &len))) {
		if (len == nlen && !strncmp(tok, name, nlen))
			return 1;
		if (len == nlen + 3 && !strncmp(tok, "NO_", 3) &&
		    !strncmp(tok + 3, name, nlen))
			return 0;
	}
	return -ENOENT;
}

static inline int sf_read_features(char *buf, size_t len)
{
	int ret = sf_read_file(SF_FEATURES, buf, len);

	return ret < 0 ? ret : 0;
}

/* 1 on, 0 off, -ENOENT no such flag, other -errno on read errors. */
static inline int sf_get(const char *name)
{
	char line[SF_LINE_MAX];
	int ret;

	ret = sf_read_features(line, sizeof(line));
	if (ret)
		return ret;
	return sf_state_in(line, name);
}

/* Parse a cpulist such as "0-3,6" into @set. */
static inline int sf_parse_cpulist(const char *s, cpu_set_t *set)
{
	unsigned long a, b;
	char *end;

	CPU_ZERO(set);
	while (*s && *s != '\n') {
		a = strtoul(s, &end, 10);
		if (end == s)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s)
				return -EINVAL;
		}
		for (; a <= b && a < SF_MAX_CPUS; a++)
			CPU_SET(a, set);
		s = end;
		if (*s == ',')
			s++;
	}
	return 0;
}

static inline int sf_online_cpus(cpu_set_t *set)
{
	char buf[256];
	int ret;

	ret = sf_read_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (ret < 0)
		return ret;
	return sf_parse_cpulist(buf, set);
}

/*
 * Wait until every scheduling decision that may have read a flag before
 * its write is complete, and counted in feat_stats: a balance pass, a
 * wakeup's CPU selection, a tick.  Each runs under rcu_read_lock() or
 * with preemption or interrupts disabled, so an RCU grace period covers
 * it, and membarrier(MEMBARRIER_CMD_GLOBAL) waits for one.  Without it
 * (CONFIG_MEMBARRIER=n, or -EINVAL under nohz_full) the caller runs once
 * on each online CPU it can reach: on !PREEMPT_RT each of those runs
 * non-preemptibly (the tick in hardirq, SCHED_SOFTIRQ, under p->pi_lock
 * or the rq lock), so a CPU that switched to the caller has left it.
 * Returns the number of online CPUs not covered (outside the caller's
 * cpuset), 0 when all were, or -errno.
 */
static inline int sf_quiesce(void)
{
	cpu_set_t saved, online, one;
	int cpu, ret, missed = 0;

	if (!syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		return 0;
	if (sched_getaffinity(0, sizeof(saved), &saved))
		return -errno;
	ret = sf_online_cpus(&online);
	if (ret)
		return ret;
	for (cpu = 0; cpu < SF_MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &online))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			missed++;
	}
	if (sched_setaffinity(0, sizeof(saved), &saved))
		return -errno;
	return missed;
}

/*
 * Set one flag and read it back, then wait for the decisions taken under
 * the old setting (sf_quiesce(); CPUs it cannot reach are not waited
 * for).  Returns 0, -EIO if the flag did not stick, or sf_quiesce()'s
 * -errno.
 */
static inline int sf_set(const char *name, bool on)
{
	char cmd[128];
	int ret;

	snprintf(cmd, sizeof(cmd), "%s%s", on ? "" : "NO_", name);
	ret = sf_write_str(SF_FEATURES, cmd);
	if (ret)
		return ret;
	ret = sf_get(name);
	if (ret < 0)
		return ret;
	if (ret != on)
		return -EIO;
	ret = sf_quiesce();
	if (ret > 0)
		ksft_print_msg("%s: %d online CPUs outside our cpuset not waited for\n",
			       cmd, ret);
	return ret < 0 ? ret : 0;
}

/* Write back every flag whose state differs from the saved line. */
static inline void sf_restore(void)
{
	char cur[SF_LINE_MAX], cmd[128], val[24];
	size_t pos = 0, len;
	const char *tok;
	int n;

	if (sf_schedstats_saved >= 0 &&
	    sf_read_file(SF_SCHEDSTATS, val, sizeof(val)) > 0 &&
	    atoi(val) != sf_schedstats_saved) {
		val[0] = '0' + sf_schedstats_saved;
		val[1] = '\0';
		sf_write_str(SF_SCHEDSTATS, val);
	}

	if (sf_slice_saved >= 0 &&
	    sf_read_file(SF_BASE_SLICE, val, sizeof(val)) > 0 &&
	    atol(val) != sf_slice_saved) {
		snprintf(val, sizeof(val), "%ld", sf_slice_saved);
		sf_write_str(SF_BASE_SLICE, val);
	}

	if (!sf_saved_valid || sf_read_features(cur, sizeof(cur)))
		return;
	while ((tok = sf_token(sf_saved, &pos, &len))) {
		if (len >= sizeof(cmd))
			continue;
		memcpy(cmd, tok, len);
		cmd[len] = '\0';
		n = strncmp(cmd, "NO_", 3) ? 0 : 3;
		if (sf_state_in(cur, cmd + n) != !n)
			sf_write_str(SF_FEATURES, cmd);
	}
}

static void sf_atexit(void)
{
	if (getpid() != sf_owner)
		return;
	sf_restore();
	if (sf_mounted_debugfs)
		umount(SF_DEBUGFS);
}

/*
 * Kill the process group of every child of ours: the harness runs each
 * test in a forked child that leads its own process group.
 */
static void sf_kill_children(void)
{
	char path[300], buf[512], *p;
	struct dirent *de;
	int fd, ppid;
	ssize_t n;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* pid (comm) state ppid: comm may hold spaces and ')'. */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1 || ppid != getpid())
			continue;
		kill(-atoi(de->d_name), SIGKILL);
		kill(atoi(de->d_name), SIGKILL);
	}
	closedir(d);
}

static void sf_signal(int sig)
{
	if (getpid() == sf_owner) {
		/* Stop the running test first so it cannot flip flags again. */
		sf_kill_children();
		sf_restore();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Skip the whole binary, undoing our debugfs mount. */
#define sf_skip(...) do {				\
	if (sf_mounted_debugfs)				\
		umount(SF_DEBUGFS);			\
	ksft_exit_skip(__VA_ARGS__);			\
} while (0)

/*
 * Check the prerequisites of a test binary, exit with KSFT_SKIP naming the
 * first one missing, and arm the restore-on-exit machinery.  @flags is a
 * NULL terminated list of sched_feat names the binary needs.
 */
static inline void sf_init(const char *const *flags)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	char val[16];
	unsigned int i;
	int ret;

	if (geteuid())
		ksft_exit_skip("must be run as root\n");
	if (access(SF_FEATURES, F_OK)) {
		if (!mount("debugfs", SF_DEBUGFS, "debugfs", 0, NULL))
			sf_mounted_debugfs = true;
		if (access(SF_FEATURES, F_OK))
			sf_skip("no %s: debugfs not mountable or CONFIG_DEBUG_FS off\n",
				SF_FEATURES);
	}
	ret = sf_read_features(sf_saved, sizeof(sf_saved));
	if (ret)
		sf_skip("cannot read %s: %s\n", SF_FEATURES, strerror(-ret));
	for (; *flags; flags++) {
		if (sf_state_in(sf_saved, *flags) < 0)
			sf_skip("kernel has no sched_feat %s (not a kernel with the series?)\n",
				*flags);
	}
	if (sf_read_file(SF_SCHEDSTATS, val, sizeof(val)) > 0)
		sf_schedstats_saved = atoi(val) ? 1 : 0;
	if (sf_read_file(SF_BASE_SLICE, val, sizeof(val)) > 0 && atol(val) > 0)
		sf_slice_saved = atol(val);
	sf_saved_valid = true;
	sf_owner = getpid();
	atexit(sf_atexit);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], sf_signal);
}

/* The base slice in ns from debugfs, 0 if unknown. */
static inline unsigned long sf_base_slice(void)
{
	char buf[24];

	if (sf_read_file(SF_BASE_SLICE, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

/*
 * Set the base slice; sf_restore(), which also runs at exit, puts back the
 * value sf_init() saw.  0 or -errno.
 */
static inline int sf_set_base_slice(unsigned long ns)
{
	char buf[24];

	if (sf_slice_saved < 0)
		return -ENOENT;
	snprintf(buf, sizeof(buf), "%lu", ns);
	if (sf_write_str(SF_BASE_SLICE, buf))
		return -EIO;
	return sf_base_slice() == ns ? 0 : -EIO;
}

/* Save sched_schedstats (once) and turn it on.  -errno if unavailable. */
static inline int sf_schedstats_enable(void)
{
	char val[16];
	int ret;

	ret = sf_read_file(SF_SCHEDSTATS, val, sizeof(val));
	if (ret < 0)
		return ret;
	if (sf_schedstats_saved < 0)
		sf_schedstats_saved = atoi(val) ? 1 : 0;
	return sf_write_str(SF_SCHEDSTATS, "1");
}

static inline bool sf_stats_available(void)
{
	return !access(SF_FEAT_STATS, R_OK) && !access(SF_SCHEDSTATS, W_OK);
}

/* Counter @name from feat_stats.  0, -ENOENT no file, -ESRCH no such line. */
static inline int sf_stat(const char *name, uint64_t *val)
{
	char buf[SF_LINE_MAX], *line, *save = NULL;
	size_t nlen = strlen(name);
	int ret;

	ret = sf_read_file(SF_FEAT_STATS, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, name, nlen) && line[nlen] == ' ') {
			*val = strtoull(line + nlen + 1, NULL, 10);
			return 0;
		}
	}
	return -ESRCH;
}

/* Sum of several counters; -errno if any is missing. */
static inline int sf_stat_sum(const char *const *names, uint64_t *sum)
{
	uint64_t v;
	int ret;

	*sum = 0;
	for (; *names; names++) {
		ret = sf_stat(*names, &v);
		if (ret)
			return ret;
		*sum += v;
	}
	return 0;
}

/*
 * The unscaled base slice in ns (normalized_sysctl_sched_base_slice), the
 * quantum of RESCHED_INELIGIBLE and of the slice protection without
 * RUN_TO_PARITY; 0 if unknown.  A write of tunable_scaling makes the
 * kernel set it to the base slice over the scaling factor
 * (sched_update_scaling()), the factor following the mode over
 * min(online CPUs, 8): 1 for none (0), 1 + ilog2(cpus) for log (1), cpus
 * for linear (2).  So this writes tunable_scaling its own value and
 * computes that quotient: exact even after a write of base_slice_ns,
 * which leaves the unscaled value alone.  Where the two agreed (no such
 * write since boot or the last hotplug) the write changes nothing; where
 * they did not, the unscaled value becomes the one the base slice
 * implies, and stays so.  Call it with the base slice as sf_init() saw
 * it (sf_restore() puts that back) and no CPU going on or offline.
 */
static inline unsigned long sf_quantum_ns(void)
{
	unsigned long factor, base = sf_base_slice();
	cpu_set_t online;
	char buf[16];
	int cpus, mode;

	if (!base || sf_read_file(SF_TUNABLE_SCALING, buf, sizeof(buf)) <= 0)
		return 0;
	mode = atoi(buf);
	if (sf_write_str(SF_TUNABLE_SCALING, buf) || sf_online_cpus(&online))
		return 0;
	cpus = CPU_COUNT(&online);
	if (cpus > 8)
		cpus = 8;
	switch (mode) {
	case 0:
		factor = 1;
		break;
	case 1:
		for (factor = 1; cpus > 1; cpus >>= 1)
			factor++;
		break;
	case 2:
		factor = cpus > 0 ? cpus : 1;
		break;
	default:
		return 0;
	}
	return base / factor;
}

/*
 * Online CPUs split by cpu_capacity: @big gets those with the highest
 * capacity, @little all others.  Returns the number of distinct
 * capacities seen (1: symmetric), or -errno.
 */
static inline int sf_capacities(cpu_set_t *big, cpu_set_t *little,
				unsigned long *big_cap, unsigned long *little_cap)
{
	unsigned long cap[SF_MAX_CPUS] = { 0 }, max = 0, min = ~0UL;
	char path[96], buf[32];
	cpu_set_t online;
	int cpu, ret;

	ret = sf_online_cpus(&online);
	if (ret)
		return ret;
	CPU_ZERO(big);
	CPU_ZERO(little);
	for (cpu = 0; cpu < SF_MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &online))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu);
		if (sf_read_file(path, buf, sizeof(buf)) <= 0)
			return 1;
		cap[cpu] = strtoul(buf, NULL, 10);
		if (cap[cpu] > max)
			max = cap[cpu];
		if (cap[cpu] < min)
			min = cap[cpu];
	}
	for (cpu = 0; cpu < SF_MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &online))
			continue;
		if (cap[cpu] == max)
			CPU_SET(cpu, big);
		else
			CPU_SET(cpu, little);
	}
	if (big_cap)
		*big_cap = max;
	if (little_cap)
		*little_cap = min;
	return max == min ? 1 : 2;
}

/* Skip reason if the system has no asymmetric CPU capacity, else NULL. */
static inline const char *sf_no_asym_reason(void)
{
	cpu_set_t big, little;
	int ret;

	ret = sf_capacities(&big, &little, NULL, NULL);
	if (ret < 0)
		return "cannot read online CPUs";
	if (ret < 2 || !CPU_COUNT(&big) || !CPU_COUNT(&little))
		return "no asymmetric CPU capacity (cpu_capacity all equal or missing)";
	return NULL;
}

/*
 * NUMA node of each online CPU in @node_of (-1 when unknown).  Returns the
 * number of nodes that have CPUs.
 */
static inline int sf_cpu_nodes(int *node_of, int ncpu)
{
	char path[96], buf[1024];
	int node, cpu, nodes = 0;
	cpu_set_t set;
	DIR *dir;
	struct dirent *de;

	for (cpu = 0; cpu < ncpu; cpu++)
		node_of[cpu] = -1;
	dir = opendir("/sys/devices/system/node");
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "node", 4) || !isdigit(de->d_name[4]))
			continue;
		node = atoi(de->d_name + 4);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/cpulist", node);
		if (sf_read_file(path, buf, sizeof(buf)) <= 0 ||
		    sf_parse_cpulist(buf, &set) || !CPU_COUNT(&set))
			continue;
		nodes++;
		for (cpu = 0; cpu < ncpu; cpu++)
			if (CPU_ISSET(cpu, &set))
				node_of[cpu] = node;
	}
	closedir(dir);
	return nodes;
}

static inline int sf_pin_tid(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set) ? -errno : 0;
}

static inline int sf_pin_self(int cpu)
{
	return sf_pin_tid(0, cpu);
}

static inline int sf_allow_set(pid_t tid, const cpu_set_t *set)
{
	return sched_setaffinity(tid, sizeof(*set), set) ? -errno : 0;
}

/* Open the affinity of @tid (0: caller) to all online CPUs. */
static inline int sf_allow_all(pid_t tid)
{
	cpu_set_t set;
	int ret;

	ret = sf_online_cpus(&set);
	if (ret)
		return ret;
	return sf_allow_set(tid, &set);
}

/*
 * The CPUs a test can load and the balancer can move tasks to: all
 * online CPUs, less those outside our cpuset or affinity, and less the
 * isolated ones (isolcpus=domain CPUs are in no sched domain).  Opens the
 * caller's affinity to all online CPUs first.  0 or -errno.
 */
static inline int sf_usable_cpus(cpu_set_t *set)
{
	cpu_set_t iso;
	char buf[1024];
	int cpu, ret;

	ret = sf_allow_all(0);
	if (ret)
		return ret;
	if (sched_getaffinity(0, sizeof(*set), set))
		return -errno;
	if (sf_read_file("/sys/devices/system/cpu/isolated", buf, sizeof(buf)) > 0 &&
	    !sf_parse_cpulist(buf, &iso)) {
		for (cpu = 0; cpu < SF_MAX_CPUS; cpu++)
			if (CPU_ISSET(cpu, &iso))
				CPU_CLR(cpu, set);
	}
	return 0;
}

static inline int sf_first_cpu(const cpu_set_t *set)
{
	int cpu;

	for (cpu = 0; cpu < SF_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, set))
			return cpu;
	return -1;
}

static inline int sf_last_cpu(const cpu_set_t *set)
{
	int cpu;

	for (cpu = SF_MAX_CPUS - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, set))
			return cpu;
	return -1;
}

/* Field 39 (processor) of /proc/self/task/<tid>/stat, or /proc/<pid>/stat. */
static inline int sf_task_cpu(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;
	int field;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (sf_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* comm may hold spaces: count fields after its closing ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (field = 2; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	return *p ? atoi(p) : -1;
}

/* se.nr_migrations of the calling thread, -1 if not available. */
static inline long sf_self_nr_migrations(void)
{
	char buf[8192], *p;

	if (sf_read_file("/proc/thread-self/sched", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "se.nr_migrations");
	if (!p)
		return -1;
	p = strchr(p, ':');
	return p ? strtol(p + 1, NULL, 10) : -1;
}

/*
 * Largest (max_interval * busy_factor) in ms over the sched domains of
 * @cpu, from debugfs; 0 if not available.
 */
static inline unsigned long sf_max_busy_interval_ms(int cpu)
{
	unsigned long best = 0, maxi, bf;
	char path[128], buf[32];
	int d;

	for (d = 0; d < 8; d++) {
		snprintf(path, sizeof(path), SF_DOMAINS "/cpu%d/domain%d/max_interval",
			 cpu, d);
		if (sf_read_file(path, buf, sizeof(buf)) <= 0)
			break;
		maxi = strtoul(buf, NULL, 10);
		snprintf(path, sizeof(path), SF_DOMAINS "/cpu%d/domain%d/busy_factor",
			 cpu, d);
		bf = sf_read_file(path, buf, sizeof(buf)) > 0 ?
		     strtoul(buf, NULL, 10) : 16;
		if (maxi * bf > best)
			best = maxi * bf;
	}
	return best;
}

/* Kill the caller with SIGKILL when its parent goes away. */
static inline void sf_die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
}

static int sf_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @n values (sorts @v). */
static inline double sf_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), sf_cmp_double);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* __SCHED_FEAT_H */
