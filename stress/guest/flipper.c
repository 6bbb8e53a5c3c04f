// SPDX-License-Identifier: GPL-2.0
/*
 * flipper: flip scheduler features as fast as a user can, beside the
 * stress workloads (stress/guest/stress.sh runs it in the guest).
 *
 * Usage: flipper [-h] [-s SEED] [-g MAX_US] [-c COUNTS] STOPFILE
 *
 *   STOPFILE   stop once this file exists
 *   -s SEED    seed of the random choices (default 1); the same seed
 *              makes the same choices
 *   -g MAX_US  longest gap between two flips, in microseconds; each gap
 *              is drawn from 0..MAX_US (default 5000)
 *   -c COUNTS  file rewritten every 64 flips and at the end with
 *              "flips=N lb_classify_flips=N feat_stats_reads=N
 *              flip_write_ms=N flip_write_max_ms=N" (default
 *              /tmp/stress/count.flips); the last two are the time spent
 *              in the writes, in all and in the longest one: a write
 *              waits for CPU hotplug and patches the kernel's text
 *
 * Each flip sets one of MISFIT, LB_CLASSIFY, SIS_ASYM_PREV,
 * RESCHED_INELIGIBLE and RUN_TO_PARITY on or off, or schedstats, and
 * reads the setting back: the features file must show it.  LB_CLASSIFY
 * is drawn twice as often as the others, since a balance pass reads it
 * once into its lb_env and a flip in the middle of one is what that
 * guards against.  Every 16th flip reads all of feat_stats.  Exits 0 at
 * the stop file, 1 with "flipper: reason" on stderr at the first write
 * that fails or does not show, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FEATURES	"/sys/kernel/debug/sched/features"
#define FEAT_STATS	"/sys/kernel/debug/sched/feat_stats"
#define SCHEDSTATS	"/proc/sys/kernel/sched_schedstats"

static const char *const knobs[] = {
	"MISFIT", "LB_CLASSIFY", "SIS_ASYM_PREV", "RESCHED_INELIGIBLE",
	"RUN_TO_PARITY", "LB_CLASSIFY", "schedstats",
};
#define NR_KNOBS	(sizeof(knobs) / sizeof(knobs[0]))

static uint64_t rng_state;

/* splitmix64: the same stream from the same seed on every libc. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"Usage: flipper [-h] [-s SEED] [-g MAX_US] [-c COUNTS] STOPFILE\n");
	exit(status);
}

static void fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "flipper: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(1);
}

static int write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Read all of @path into @buf; returns the length or -errno. */
static ssize_t read_all(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			len = -errno;
			break;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* Is @word a whole space-separated word of @line? */
static bool has_word(const char *line, const char *word)
{
	size_t len = strlen(word);
	const char *p = line;

	while ((p = strstr(p, word))) {
		if ((p == line || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/* Nanoseconds of CLOCK_MONOTONIC. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t write_ns, write_max_ns;

/* write_str(), timed into write_ns and write_max_ns. */
static int timed_write(const char *path, const char *s)
{
	uint64_t t = now_ns();
	int ret = write_str(path, s);

	t = now_ns() - t;
	write_ns += t;
	if (t > write_max_ns)
		write_max_ns = t;
	return ret;
}

static void write_counts(const char *path, unsigned long flips,
			 unsigned long lb, unsigned long reads)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "flips=%lu lb_classify_flips=%lu feat_stats_reads=%lu ", flips, lb, reads);
	fprintf(f, "flip_write_ms=%llu flip_write_max_ms=%llu\n", (unsigned long long)(write_ns / 1000000),
		(unsigned long long)(write_max_ns / 1000000));
	if (fclose(f) == 0)
		rename(tmp, path);
}

int main(int argc, char **argv)
{
	const char *counts = "/tmp/stress/count.flips", *stop;
	unsigned long flips = 0, lb = 0, reads = 0;
	unsigned long max_us = 5000;
	static char buf[65536];
	char name[64], *end;
	struct timespec gap;
	int opt;

	rng_state = 1;
	while ((opt = getopt(argc, argv, "hs:g:c:")) != -1) {
		switch (opt) {
		case 'h':
			usage(0);
			break;
		case 's':
			errno = 0;
			rng_state = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg)
				usage(2);
			break;
		case 'g':
			errno = 0;
			max_us = strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg || max_us > 10000000)
				usage(2);
			break;
		case 'c':
			counts = optarg;
			break;
		default:
			usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	stop = argv[optind];

	while (access(stop, F_OK)) {
		uint64_t r = rnd();
		const char *knob = knobs[r % NR_KNOBS];
		bool on = (r >> 8) & 1;

		if (!strcmp(knob, "schedstats")) {
			if (timed_write(SCHEDSTATS, on ? "1" : "0"))
				fail("cannot write %s to %s", on ? "1" : "0", SCHEDSTATS);
			if (read_all(SCHEDSTATS, buf, sizeof(buf)) < 0 ||
			    buf[0] != (on ? '1' : '0'))
				fail("schedstats reads '%s' after writing %s",
				     buf, on ? "1" : "0");
		} else {
			snprintf(name, sizeof(name), "%s%s", on ? "" : "NO_", knob);
			if (timed_write(FEATURES, name))
				fail("cannot write %s to %s", name, FEATURES);
			if (read_all(FEATURES, buf, sizeof(buf)) < 0 ||
			    !has_word(buf, name))
				fail("%s does not show %s after the write", FEATURES, name);
			if (!strcmp(knob, "LB_CLASSIFY"))
				lb++;
		}
		flips++;
		if (!(flips % 16) && read_all(FEAT_STATS, buf, sizeof(buf)) >= 0)
			reads++;
		if (!(flips % 64))
			write_counts(counts, flips, lb, reads);
		gap.tv_sec = 0;
		gap.tv_nsec = (long)(rnd() % (max_us + 1)) * 1000;
		while (gap.tv_nsec >= 1000000000L) {
			gap.tv_sec++;
			gap.tv_nsec -= 1000000000L;
		}
		nanosleep(&gap, NULL);
	}
	write_counts(counts, flips, lb, reads);
	return 0;
}
