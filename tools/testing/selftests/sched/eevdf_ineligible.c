// SPDX-License-Identifier: GPL-2.0
/*
 * RESCHED_INELIGIBLE: EEVDF ends the slice protection of the current task
 * once it has become ineligible and has run for the minimum quantum, so
 * that it is rescheduled at the next tick or wakeup.
 *
 * Everything runs on one CPU: three CPU hogs at nice -5, 0 and 5 plus a
 * periodic waker that sleeps 1 or 2 ms with clock_nanosleep() and measures
 * how late it runs, as cyclictest does.
 *
 * counters: per flag setting, with NO_RUN_TO_PARITY and RUN_TO_PARITY.
 * With the flag off the resched_ineligible counter must not move at all;
 * with it on and RUN_TO_PARITY, which protects a whole slice of equal
 * slices, it must rise.  With it on and NO_RUN_TO_PARITY the count is
 * reported and the case skips: there mainline protects a current (with
 * PREEMPT_SHORT, the default) up to where, as computed at its pick, it
 * would turn ineligible, so the flag acts only where the average moved
 * since the pick, which this load does not control.
 *
 * cut.ineligible_current_at_tick: the mechanism, where mainline keeps an
 * ineligible current running (see the fixture).
 *
 * latency: with RUN_TO_PARITY, where the flag acts, phases with the flag
 * off and on alternate; the waker's worst delay must not grow by more
 * than a base slice with the flag on.
 */
#include <pthread.h>
#include <sys/time.h>
#include <sys/resource.h>
#include "sched_feat.h"

#define PHASE_MS	2000
#define LAT_PAIRS	5
/*
 * The flag ends a current's protection earlier; it must not make the
 * waker wait a slice longer.  The check fails when each flag-on phase's
 * worst delay exceeds the largest flag-off one by more than the base
 * slice.  The phases alternate in one boot (off, on, on, off, ...): with
 * no effect of the flag they are exchangeable, and all LAT_PAIRS flag-on
 * ones ranking above all flag-off ones has probability
 * 1 / C(2 * LAT_PAIRS, LAT_PAIRS), 1/252, whatever the noise; the base
 * slice of margin makes a false failure rarer still.  So it catches only
 * a flag that raises every phase's worst delay by more than a base slice
 * plus the range of the worst delays across all phases (a few ms on an
 * idle host, tens of ms on a busy one, where vCPU stalls of 20-45 ms set
 * them); smaller effects show in the medians, which are reported.
 */
static const char *const needed_flags[] = {
	"RESCHED_INELIGIBLE", "RUN_TO_PARITY", "HRTICK", NULL,
};

static const int hog_nice[] = { -5, 0, 5 };

struct load {
	int cpu;
	uint64_t t_stop;
	bool failed;
	/* waker results */
	uint64_t n, sum_ns, max_ns;
};

struct hog_arg {
	struct load *l;
	int nice;
};

static void *hog(void *arg)
{
	struct hog_arg *h = arg;
	struct load *l = h->l;

	if (sf_pin_self(l->cpu) ||
	    setpriority(PRIO_PROCESS, sf_gettid(), h->nice)) {
		l->failed = true;
		return NULL;
	}
	while (sf_now_ns() < l->t_stop)
		;
	return NULL;
}

static void *waker(void *arg)
{
	struct load *l = arg;
	struct timespec ts;
	uint64_t target, now, lat;
	unsigned int i;

	if (sf_pin_self(l->cpu) || setpriority(PRIO_PROCESS, sf_gettid(), 0)) {
		l->failed = true;
		return NULL;
	}
	/* Let the hogs build up runtime and lag first. */
	sf_sleep_ms(50);
	for (i = 0; ; i++) {
		target = sf_now_ns() + (1 + (i & 1)) * 1000000ULL;
		if (target >= l->t_stop)
			break;
		ts.tv_sec = target / 1000000000ULL;
		ts.tv_nsec = target % 1000000000ULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = sf_now_ns();
		lat = now > target ? now - target : 0;
		l->n++;
		l->sum_ns += lat;
		if (lat > l->max_ns)
			l->max_ns = lat;
	}
	return NULL;
}

/* One phase of hogs plus waker on @cpu for PHASE_MS.  0 or -1. */
static int run_phase(int cpu, struct load *l)
{
	struct hog_arg args[ARRAY_SIZE(hog_nice)];
	pthread_t th[ARRAY_SIZE(hog_nice) + 1];
	unsigned int i;

	memset(l, 0, sizeof(*l));
	l->cpu = cpu;
	l->t_stop = sf_now_ns() + PHASE_MS * 1000000ULL;
	for (i = 0; i < ARRAY_SIZE(hog_nice); i++) {
		args[i].l = l;
		args[i].nice = hog_nice[i];
		if (pthread_create(&th[i], NULL, hog, &args[i]))
			return -1;
	}
	if (pthread_create(&th[i], NULL, waker, l))
		return -1;
	for (i = 0; i < ARRAY_SIZE(th); i++)
		pthread_join(th[i], NULL);
	return l->failed || !l->n ? -1 : 0;
}

static const char *const ri_stat[] = { "resched_ineligible", NULL };

FIXTURE(ineligible) {
	int cpu;
	bool stats;
	unsigned long quantum;
};

FIXTURE_VARIANT(ineligible) {
	bool ri;
	bool parity;
};

FIXTURE_VARIANT_ADD(ineligible, on_no_parity) {
	.ri	= true,
	.parity	= false,
};

FIXTURE_VARIANT_ADD(ineligible, off_no_parity) {
	.ri	= false,
	.parity	= false,
};

FIXTURE_VARIANT_ADD(ineligible, on_parity) {
	.ri	= true,
	.parity	= true,
};

FIXTURE_VARIANT_ADD(ineligible, off_parity) {
	.ri	= false,
	.parity	= true,
};

FIXTURE_SETUP(ineligible)
{
	cpu_set_t online;
	uint64_t v;

	sf_restore();
	ASSERT_EQ(0, sf_online_cpus(&online));
	self->cpu = sf_last_cpu(&online);
	ASSERT_EQ(0, sf_pin_self(self->cpu));
	ASSERT_EQ(0, sf_set("RUN_TO_PARITY", variant->parity));
	self->stats = sf_stats_available() && !sf_schedstats_enable() &&
		      !sf_stat_sum(ri_stat, &v);
	self->quantum = sf_quantum_ns();
}

FIXTURE_TEARDOWN(ineligible)
{
	sf_restore();
}

TEST_F(ineligible, counters)
{
	uint64_t r0, r1;
	struct load l;

	if (!self->stats)
		SKIP(return, "no %s or schedstats: counters unavailable",
		     SF_FEAT_STATS);
	/*
	 * The flag lets a current run a quantum, the unscaled base slice
	 * (sf_quantum_ns()); where the base slice is no longer (one CPU
	 * online, or tunable_scaling none) a slice is the quantum, and there
	 * is nothing to cut.
	 */
	if (variant->ri && variant->parity && !self->quantum)
		SKIP(return, "no %s: the quantum is unknown", SF_TUNABLE_SCALING);
	if (variant->ri && variant->parity && sf_base_slice() <= self->quantum)
		SKIP(return,
		     "base slice %lu ns is the quantum: nothing for RESCHED_INELIGIBLE to cut",
		     sf_base_slice());
	ASSERT_EQ(0, sf_set("RESCHED_INELIGIBLE", variant->ri));
	ASSERT_EQ(0, sf_stat_sum(ri_stat, &r0));
	ASSERT_EQ(0, run_phase(self->cpu, &l))
		TH_LOG("hog/waker setup failed on cpu%d", self->cpu);
	ASSERT_EQ(0, sf_stat_sum(ri_stat, &r1));
	TH_LOG("%sRESCHED_INELIGIBLE %sRUN_TO_PARITY on cpu%d: resched_ineligible +%llu",
	       variant->ri ? "" : "NO_", variant->parity ? "" : "NO_", self->cpu,
	       (unsigned long long)(r1 - r0));
	TH_LOG("waker: %llu wakeups, avg %llu us, max %llu us",
	       (unsigned long long)l.n,
	       (unsigned long long)(l.sum_ns / l.n / 1000),
	       (unsigned long long)(l.max_ns / 1000));
	if (!variant->ri) {
		EXPECT_EQ(0ULL, r1 - r0);
	} else if (variant->parity) {
		EXPECT_LT(0ULL, r1 - r0)
			TH_LOG("an ineligible current was never rescheduled");
	} else {
		SKIP(return,
		     "NO_RUN_TO_PARITY: +%llu reported, not asserted (the protection ends where, as computed at the pick, the current would turn ineligible)",
		     (unsigned long long)(r1 - r0));
	}
}

/*
 * cut: the mechanism itself.  CUT_HOGS equal nice-0 hogs on one CPU under
 * RUN_TO_PARITY and HRTICK, with a base slice of CUT_QUANTA quanta (2.8 ms
 * for the default 0.7 ms quantum, the value of 8 CPUs).  No task sleeps,
 * so on a quiet machine only the tick can end a run early.
 * Mainline protects the whole slice of an equal-slice current, ineligible
 * or not, and HRTICK ends it on time: every run lasts the slice.  With the
 * flag on, a current that has run the quantum and is ineligible at
 * a tick is rescheduled at that tick, so a share of the runs ends between
 * the quantum and the slice.  HRTICK is set because without it (the
 * default where the hrtimer rearm is not deferred, arm64 here) runs start
 * on the 4 ms tick of HZ=250 and the 2.8 ms slice ends before the next
 * one: no tick falls inside the slice, and there is nothing to cut.  If
 * the slice still does not end on time, the test skips.
 *
 * A run is what the kernel gave a hog between two context switches: its
 * thread CPU time between two changes of its getrusage() switch counts.
 * A host stall of a TCG vCPU makes the run it falls in look longer (and
 * can end it early, which the check below allows for).
 */
#define CUT_HOGS	4
#define CUT_QUANTA	4
#define CUT_PHASE_MS	2000
#define CUT_PAIRS	2
#define CUT_MAX_RUNS	4096
/*
 * A run shorter than the slice less one quantum ended before its slice:
 * cut short.  A cut comes after at least a quantum, so cut runs last from
 * one quantum to the slice; the quantum of margin below the slice keeps
 * a run that the slice's own hrtick ended late or early by less than
 * that out of the count.
 */
/*
 * What share of the runs the flag cuts follows, roughly, from the tick.
 * In a round of CUT_HOGS equal hogs that never sleep, the k-th one picked
 * has k others a slice ahead of it; avg_vruntime() counts the current, so
 * it turns ineligible after k * slice / (CUT_HOGS - 1) of its run.  With
 * the flag it is rescheduled at the first tick after that and after a
 * quantum q, and the run counts as cut when that tick comes before
 * slice - q: windows of 2q, 5q/3, q/3 and 0 for four hogs and a slice of
 * 4q.  A tick of period T, at a phase independent of the run's start,
 * falls in a window w with probability min(1, w / T), so to first order
 * a request is cut with the mean of those, p (17.5% for q = 0.7 ms at
 * HZ=250, 7% at HZ=100).  Each cut makes two short runs, the cut one and
 * the rest of its request (which the hrtick ends at its deadline), so a
 * share 2p / (1 + p) of the runs is short.  The run after a cut starts on
 * a tick, and cuts narrow the hogs' spread: that share is reported, not
 * asserted.  Asserted: the flag cuts more of the runs than mainline by at
 * least CUT_MIN_Z standard errors of the difference (four, not three: the
 * runs are not independent).
 *
 * Without the flag, the runs that end early are ended by something other
 * than the tick: a kworker, an interrupt, or a host that stalls a TCG
 * vCPU, whose charged stall pushes a current past its deadline.  On an
 * idle host they are 0.3-5% of the runs; with both host CPUs busy beside
 * the guest, 25-30%.  They dilute the flag's share by their own.  Where a
 * difference of the predicted size, so diluted, would not clear
 * CUT_MIN_Z + CUT_POWER_Z standard errors, it would pass the assertion
 * with less than about 98% probability: the test cannot resolve the flag
 * there, and skips.
 */
#define CUT_MIN_Z		4.0
#define CUT_POWER_Z		2.0

struct cut_hog {
	int cpu;
	uint64_t t_start, t_stop;
	bool failed;
	unsigned int nruns;
	uint64_t runs[CUT_MAX_RUNS];
};

static void *cut_hog(void *arg)
{
	struct cut_hog *h = arg;
	uint64_t sw, last_sw, c, prev_c = 0, run_start = 0, now;
	bool started = false, counted = false;
	struct rusage ru;

	if (sf_pin_self(h->cpu) || setpriority(PRIO_PROCESS, sf_gettid(), 0) ||
	    getrusage(RUSAGE_THREAD, &ru)) {
		h->failed = true;
		return NULL;
	}
	last_sw = ru.ru_nvcsw + ru.ru_nivcsw;
	for (;;) {
		now = sf_now_ns();
		if (now >= h->t_stop)
			break;
		if (getrusage(RUSAGE_THREAD, &ru)) {
			h->failed = true;
			return NULL;
		}
		sw = ru.ru_nvcsw + ru.ru_nivcsw;
		c = sf_thread_cpu_ns();
		if (sw != last_sw) {
			/*
			 * Switched out and back in since the last read: the
			 * run that began at run_start ended at prev_c.  The
			 * first one seen began before the phase.
			 */
			if (started && counted && h->nruns < CUT_MAX_RUNS)
				h->runs[h->nruns++] = prev_c - run_start;
			started = true;
			counted = now >= h->t_start;
			run_start = c;
			last_sw = sw;
		}
		prev_c = c;
	}
	return NULL;
}

/* Square root of x >= 0 by Newton's method: no libm for one call. */
static double sqrt_pos(double x)
{
	double r = x > 1 ? x : 1;
	int i;

	for (i = 0; i < 64; i++)
		r = (r + x / r) / 2;
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One phase; stores the runs' count, how many were cut short, and the
 * 10th and 50th percentile of the run lengths.
 */
static int cut_phase(int cpu, uint64_t short_ns, unsigned int *runs,
		     unsigned int *cut, double *p10_us, double *p50_us)
{
	static struct cut_hog h[CUT_HOGS];
	static uint64_t all[CUT_HOGS * CUT_MAX_RUNS];
	pthread_t th[CUT_HOGS];
	unsigned int i, j, n = 0;
	uint64_t t0 = sf_now_ns();
	bool failed = false;

	for (i = 0; i < CUT_HOGS; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i].cpu = cpu;
		/* 200 ms to settle: runs that start earlier do not count. */
		h[i].t_start = t0 + 200000000ULL;
		h[i].t_stop = t0 + CUT_PHASE_MS * 1000000ULL;
		if (pthread_create(&th[i], NULL, cut_hog, &h[i])) {
			while (i--)
				pthread_join(th[i], NULL);
			return -1;
		}
	}
	*cut = 0;
	for (i = 0; i < CUT_HOGS; i++) {
		pthread_join(th[i], NULL);
		failed |= h[i].failed;
		for (j = 0; j < h[i].nruns; j++) {
			all[n++] = h[i].runs[j];
			*cut += h[i].runs[j] < short_ns;
		}
	}
	*runs = n;
	if (failed || !n)
		return -1;
	qsort(all, n, sizeof(all[0]), cmp_u64);
	*p10_us = all[n / 10] / 1000.0;
	*p50_us = all[n / 2] / 1000.0;
	return 0;
}

/* Pin the caller to the last online CPU, under RUN_TO_PARITY.  0 or -1. */
static int one_cpu_parity(int *cpu)
{
	cpu_set_t online;

	sf_restore();
	if (sf_online_cpus(&online))
		return -1;
	*cpu = sf_last_cpu(&online);
	return sf_pin_self(*cpu) || sf_set("RUN_TO_PARITY", true) ? -1 : 0;
}

FIXTURE(cut) {
	int cpu;
};

FIXTURE_SETUP(cut)
{
	ASSERT_EQ(0, one_cpu_parity(&self->cpu));
	ASSERT_EQ(0, sf_set("HRTICK", true));
}

FIXTURE_TEARDOWN(cut)
{
	sf_restore();
}

TEST_F_TIMEOUT(cut, ineligible_current_at_tick, 60)
{
	unsigned int runs[2] = { 0, 0 }, cut[2] = { 0, 0 }, r, c, i;
	double p10, p50, p50_off = 0, pct[2], se;
	unsigned long quantum = sf_quantum_ns(), slice, tick = sf_tick_ns();
	uint64_t s0 = 0, s1 = 0, short_ns;
	double expect_pct, exp_runs, exp_diff, exp_pct, exp_se, w, from;
	int k;
	bool stats;
	int ri;

	stats = sf_stats_available() && !sf_schedstats_enable() &&
		!sf_stat_sum(ri_stat, &s0);

	if (!sf_base_slice())
		SKIP(return, "no %s: cannot set the base slice", SF_BASE_SLICE);
	if (!quantum)
		SKIP(return, "no %s: the quantum is unknown", SF_TUNABLE_SCALING);
	if (!tick)
		SKIP(return, "no tick period (clock_getres(CLOCK_MONOTONIC_COARSE))");
	slice = CUT_QUANTA * quantum;
	short_ns = slice - quantum;
	for (k = 0, expect_pct = 0; k < CUT_HOGS; k++) {
		from = (double)k * slice / (CUT_HOGS - 1);
		if (from < quantum)
			from = quantum;
		w = slice - quantum - from;
		if (w > 0)
			expect_pct += 100.0 / CUT_HOGS * (w < tick ? w / tick : 1);
	}
	TH_LOG("quantum %lu us (the unscaled base slice), base slice set to %lu us, tick %lu us",
	       quantum / 1000, slice / 1000, tick / 1000);
	exp_runs = 2 * expect_pct / (1 + expect_pct / 100);
	TH_LOG("to first order the flag cuts %.1f%% of the requests, %.1f%% of the runs",
	       expect_pct, exp_runs);
	ASSERT_EQ(0, sf_set_base_slice(slice));
	for (i = 0; i < 2 * CUT_PAIRS; i++) {
		/* off, on, on, off, ... */
		ri = (i & 1) ^ ((i >> 1) & 1);
		ASSERT_EQ(0, sf_set("RESCHED_INELIGIBLE", ri));
		if (stats)
			ASSERT_EQ(0, sf_stat_sum(ri_stat, &s0));
		ASSERT_EQ(0, cut_phase(self->cpu, short_ns, &r, &c, &p10, &p50))
			TH_LOG("hog setup failed on cpu%d", self->cpu);
		if (stats)
			ASSERT_EQ(0, sf_stat_sum(ri_stat, &s1));
		TH_LOG("%sRESCHED_INELIGIBLE: %u runs, %u (%.1f%%) shorter than %llu us",
		       ri ? "" : "NO_", r, c, 100.0 * c / r, (unsigned long long)short_ns / 1000);
		TH_LOG("%sRESCHED_INELIGIBLE: runs' p10/p50 %.0f/%.0f us, resched_ineligible +%llu",
		       ri ? "" : "NO_", p10, p50, (unsigned long long)(s1 - s0));
		runs[ri] += r;
		cut[ri] += c;
		if (!ri && p50 > p50_off)
			p50_off = p50;
	}
	/*
	 * Mainline's runs end at the slice; if a tick ended it, a run would
	 * last the slice plus half a tick on average: midway between is the
	 * line.
	 */
	if (p50_off > (slice + tick / 4) / 1000.0)
		SKIP(return,
		     "without the flag the median run was %.0f us for a %lu us slice: no high-resolution tick ends the slice on time, so no tick falls inside it",
		     p50_off, slice / 1000);
	for (ri = 0; ri < 2; ri++)
		pct[ri] = 100.0 * cut[ri] / runs[ri];
	/* The standard error of the difference of two shares, in points. */
	se = sqrt_pos(pct[0] * (100.0 - pct[0]) / runs[0] +
		      pct[1] * (100.0 - pct[1]) / runs[1]);
	TH_LOG("runs cut short: %.1f%% of %u without, %.1f%% of %u with RESCHED_INELIGIBLE",
	       pct[0], runs[0], pct[1], runs[1]);
	TH_LOG("difference %.1f points, standard error %.1f", pct[1] - pct[0], se);
	/*
	 * The difference expected, diluted by the runs that end early
	 * anyway, and the standard error it would come with.
	 */
	exp_diff = exp_runs * (1.0 - pct[0] / 100.0);
	exp_pct = pct[0] + exp_diff;
	exp_se = sqrt_pos(pct[0] * (100.0 - pct[0]) / runs[0] +
			  exp_pct * (100.0 - exp_pct) / runs[1]);
	if ((CUT_MIN_Z + CUT_POWER_Z) * exp_se > exp_diff)
		SKIP(return,
		     "%.1f%% of the runs ended early without the flag: the %.1f points of runs expected from it are within %.0f standard errors (%.1f)",
		     pct[0], exp_diff, CUT_MIN_Z + CUT_POWER_Z, exp_se);
	EXPECT_TRUE(pct[1] - pct[0] >= CUT_MIN_Z * se)
		TH_LOG("an ineligible current kept the CPU: %.1f%% cut, %.1f%% without",
		       pct[1], pct[0]);
}

FIXTURE(latency) {
	int cpu;
};

FIXTURE_SETUP(latency)
{
	ASSERT_EQ(0, one_cpu_parity(&self->cpu));
}

FIXTURE_TEARDOWN(latency)
{
	sf_restore();
}

TEST_F_TIMEOUT(latency, worst_delay_parity, 60)
{
	double on[LAT_PAIRS], off[LAT_PAIRS], avg_on[LAT_PAIRS], avg_off[LAT_PAIRS];
	double med_on, med_off, max_off, min_on, slice_us;
	int i, n_on = 0, n_off = 0;
	struct load l;
	bool ri;

	slice_us = sf_base_slice() / 1000.0;
	if (!slice_us)
		SKIP(return, "no %s: no margin for the worst delays", SF_BASE_SLICE);
	for (i = 0; i < 2 * LAT_PAIRS; i++) {
		/* off, on, on, off, ... */
		ri = (i & 1) ^ ((i >> 1) & 1);
		ASSERT_EQ(0, sf_set("RESCHED_INELIGIBLE", ri));
		ASSERT_EQ(0, run_phase(self->cpu, &l))
			TH_LOG("hog/waker setup failed on cpu%d", self->cpu);
		TH_LOG("%sRESCHED_INELIGIBLE: %llu wakeups, avg %llu us, max %llu us",
		       ri ? "" : "NO_", (unsigned long long)l.n,
		       (unsigned long long)(l.sum_ns / l.n / 1000),
		       (unsigned long long)(l.max_ns / 1000));
		if (ri) {
			on[n_on] = l.max_ns / 1000.0;
			avg_on[n_on++] = l.sum_ns / 1000.0 / l.n;
		} else {
			off[n_off] = l.max_ns / 1000.0;
			avg_off[n_off++] = l.sum_ns / 1000.0 / l.n;
		}
	}
	TH_LOG("median average delay: %.0f us with, %.0f us without RESCHED_INELIGIBLE",
	       sf_median(avg_on, n_on), sf_median(avg_off, n_off));
	med_on = sf_median(on, n_on);
	med_off = sf_median(off, n_off);
	TH_LOG("median worst delay: %.0f us with, %.0f us without RESCHED_INELIGIBLE",
	       med_on, med_off);
	max_off = off[0];
	min_on = on[0];
	for (i = 1; i < LAT_PAIRS; i++) {
		if (off[i] > max_off)
			max_off = off[i];
		if (on[i] < min_on)
			min_on = on[i];
	}
	TH_LOG("worst delay: smallest %.0f us with, largest %.0f us without; base slice %.0f us",
	       min_on, max_off, slice_us);
	EXPECT_FALSE(min_on > max_off + slice_us)
		TH_LOG("worst delay grew: each flag-on phase above %.0f + %.0f us (least %.0f us)",
		       max_off, slice_us, min_on);
}

int main(int argc, char **argv)
{
	sf_init(needed_flags);
	return test_harness_run(argc, argv);
}
