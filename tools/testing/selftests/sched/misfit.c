// SPDX-License-Identifier: GPL-2.0
/*
 * MISFIT: on an asymmetric-capacity system a CPU-bound task stuck on a
 * little CPU must be moved to an idle big CPU; with NO_MISFIT it stays.
 *
 * spinner_up: one spinner pinned to a little CPU until its utilization
 * exceeds the little's capacity, then its affinity is opened to all CPUs
 * and sched_getcpu() polling records when it first runs on a big CPU.
 *
 * seed_shape: the shape of the 2018 misfit series' test.  The big CPUs are
 * kept busy by pinned spinners for a limited time while one unpinned
 * spinner per little CPU runs; once the pinned ones end, with MISFIT an
 * unpinned one must reach a big CPU within the same bound.  With
 * NO_MISFIT the move is only reported: with more than one task on the
 * little CPUs, the balancer's "imbalanced" active balance (migrate_task
 * after cache_nice_tries + 2 failures) may move one too, just later.
 * Only the misfit_* counters tell the two apart there.
 *
 * Both run once per flag setting, so each assertion is checked against the
 * other setting.  The counters must rise with MISFIT and not move at all
 * with NO_MISFIT, when no task can be marked misfit.
 */
#include <pthread.h>
#include "sched_feat.h"

#define PIN_MS		1000
#define SEED_PIN_MS	1500
#define MIN_WINDOW_MS	2000
/*
 * A case lasts the pinned phase plus the window, the bound below plus
 * 500 ms: at most 1.5 + 2 * (25.6 + 0.02) + 0.5 = 53.2 s for SF_MAX_CPUS
 * (256) online CPUs at HZ=100.
 */
#define TIMEOUT_S	90
#define MAX_SPINNERS	SF_MAX_CPUS

static const char *const needed_flags[] = { "MISFIT", NULL };

struct spinner {
	const cpu_set_t *big;
	int pin_cpu;			/* -1: unpinned */
	uint64_t t_open;		/* spinner_up: pinned until, then opened */
	uint64_t t_end;			/* seed_shape: the pinned ones stop here */
	uint64_t t_stop;		/* everyone stops here */
	bool open_after_pin;
	/* results */
	int cpu_at_open;		/* first CPU seen at or after t_open */
	int cpu_before;			/* last CPU seen before t_open */
	bool started;
	uint64_t first_big;		/* first time on a big CPU after t_open */
	uint64_t ns_big_before, ns_all_before, ns_big_after, ns_all_after;
};

static void *spin(void *arg)
{
	struct spinner *s = arg;
	uint64_t now, prev;
	bool on_big, after;
	int cpu;

	if (s->pin_cpu >= 0 && sf_pin_self(s->pin_cpu))
		return NULL;
	if (s->pin_cpu < 0 && sf_allow_all(0))
		return NULL;
	__atomic_store_n(&s->started, true, __ATOMIC_RELEASE);
	s->cpu_at_open = -1;
	s->cpu_before = -1;
	prev = sf_now_ns();
	for (;;) {
		/*
		 * The CPU first, then the time: a CPU counts as seen before
		 * t_open only if it was read before then.  (Read the other
		 * way round, a move right at t_open, between the two reads,
		 * put the new CPU before it.)  A CPU read just before t_open
		 * may be stamped after it, which only delays what counts as
		 * after.
		 */
		cpu = sched_getcpu();
		now = sf_now_ns();
		if (now >= s->t_stop)
			break;
		if (s->open_after_pin && s->cpu_at_open < 0 && now >= s->t_open) {
			s->cpu_at_open = sched_getcpu();
			if (sf_allow_all(0))
				return NULL;
			prev = now;
		}
		on_big = cpu >= 0 && CPU_ISSET(cpu, s->big);
		after = now >= s->t_open;
		if (after && s->cpu_at_open < 0)
			s->cpu_at_open = cpu;
		if (after && on_big && !s->first_big)
			s->first_big = now;
		if (after) {
			s->ns_all_after += now - prev;
			if (on_big)
				s->ns_big_after += now - prev;
		} else {
			s->cpu_before = cpu;
			s->ns_all_before += now - prev;
			if (on_big)
				s->ns_big_before += now - prev;
		}
		prev = now;
	}
	return s;
}

FIXTURE(misfit) {
	cpu_set_t big, little;
	unsigned long big_cap, little_cap;
	unsigned long bound_ms, window_ms;
	bool stats;
	uint64_t detected, migrations;
};

FIXTURE_VARIANT(misfit) {
	bool misfit;
};

FIXTURE_VARIANT_ADD(misfit, on) {
	.misfit	= true,
};

FIXTURE_VARIANT_ADD(misfit, off) {
	.misfit	= false,
};

FIXTURE_SETUP(misfit)
{
	unsigned long busy_ms = 0, tick_ms, cap_ms;
	cpu_set_t online;
	int cpu;

	sf_restore();
	ASSERT_EQ(2, sf_capacities(&self->big, &self->little,
				   &self->big_cap, &self->little_cap));
	/* Before the first change: a skipped setup skips the teardown. */
	tick_ms = (sf_tick_ns() + 999999) / 1000000;
	if (!tick_ms)
		SKIP(return, "no tick period (clock_getres(CLOCK_MONOTONIC_COARSE))");
	ASSERT_EQ(0, sf_online_cpus(&online));

	/*
	 * Bound for an idle big CPU to take a misfit task, from the kernel's
	 * parameters.  The little CPU's tick marks the task misfit once its
	 * affinity is open (one tick) and, gated on nohz.next_balance, kicks
	 * an idle CPU to balance for the idle ones (a second tick); that
	 * pass, or a big CPU's own, moves a misfit task by active balance
	 * at once.  Until such a pass: a domain's balance interval, up to
	 * max_interval (times busy_factor on a busy CPU), is what to expect
	 * and is logged; but the interval doubles up to 512 ms while passes
	 * find only pinned tasks, and every interval is clamped to
	 * max_load_balance_interval, HZ * online CPUs / 10 jiffies, at most
	 * 100 ms per online CPU.  That cap plus two ticks is the worst case.
	 * The bound doubles it: one more such period for a pass whose active
	 * balance did not happen (a big CPU busy for a moment), which also
	 * covers the vCPU stalls of QEMU TCG (3-17 ms seen).
	 */
	for (cpu = 0; cpu < SF_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &self->little) || CPU_ISSET(cpu, &self->big))
			if (sf_max_busy_interval_ms(cpu) > busy_ms)
				busy_ms = sf_max_busy_interval_ms(cpu);
	cap_ms = 100UL * CPU_COUNT(&online);
	self->bound_ms = 2 * (cap_ms + 2 * tick_ms);
	self->window_ms = self->bound_ms + 500;
	if (self->window_ms < MIN_WINDOW_MS)
		self->window_ms = MIN_WINDOW_MS;
	TH_LOG("%d big (%lu) + %d little (%lu) CPUs, tick %lu ms",
	       CPU_COUNT(&self->big), self->big_cap, CPU_COUNT(&self->little),
	       self->little_cap, tick_ms);
	TH_LOG("longest busy balance interval %lu ms, cap %lu ms: bound %lu ms, window %lu ms",
	       busy_ms, cap_ms, self->bound_ms, self->window_ms);
	ASSERT_EQ(0, sf_set("MISFIT", variant->misfit));

	self->stats = sf_stats_available() && !sf_schedstats_enable() &&
		      !sf_stat("misfit_detected", &self->detected) &&
		      !sf_stat("misfit_migrations", &self->migrations);
	if (!self->stats)
		TH_LOG("no feat_stats or schedstats: counter checks skipped");
}

FIXTURE_TEARDOWN(misfit)
{
	sf_restore();
}

static void check_counters(struct __test_metadata *_metadata,
			   FIXTURE_DATA(misfit) * self, bool misfit)
{
	uint64_t detected, migrations;

	if (!self->stats)
		return;
	ASSERT_EQ(0, sf_stat("misfit_detected", &detected));
	ASSERT_EQ(0, sf_stat("misfit_migrations", &migrations));
	detected -= self->detected;
	migrations -= self->migrations;
	TH_LOG("misfit_detected +%llu, misfit_migrations +%llu",
	       (unsigned long long)detected, (unsigned long long)migrations);
	if (misfit) {
		EXPECT_LT(0ULL, detected);
		EXPECT_LT(0ULL, migrations);
	} else {
		EXPECT_EQ(0ULL, detected);
		EXPECT_EQ(0ULL, migrations);
	}
}

TEST_F_TIMEOUT(misfit, spinner_up, TIMEOUT_S)
{
	struct spinner s = {
		.big		= &self->big,
		.pin_cpu	= sf_last_cpu(&self->little),
		.open_after_pin	= true,
	};
	uint64_t delay_ms;
	pthread_t th;
	void *ret;

	s.t_open = sf_now_ns() + PIN_MS * 1000000ULL;
	s.t_stop = s.t_open + self->window_ms * 1000000ULL;
	ASSERT_EQ(0, pthread_create(&th, NULL, spin, &s));
	ASSERT_EQ(0, pthread_join(th, &ret));
	ASSERT_EQ(&s, ret) TH_LOG("setting the spinner's affinity failed");
	ASSERT_EQ(s.pin_cpu, s.cpu_at_open)
		TH_LOG("spinner pinned to cpu%d was on cpu%d", s.pin_cpu,
		       s.cpu_at_open);

	delay_ms = s.first_big ? (s.first_big - s.t_open) / 1000000 : 0;
	if (s.first_big)
		TH_LOG("opened on little cpu%d, on a big after %llu ms, %llu%% of window on bigs",
		       s.cpu_at_open, (unsigned long long)delay_ms,
		       (unsigned long long)(100 * s.ns_big_after /
					    (s.ns_all_after ?: 1)));
	else
		TH_LOG("opened on little cpu%d, never on a big CPU in %lu ms",
		       s.cpu_at_open, self->window_ms);

	if (variant->misfit) {
		EXPECT_NE(0ULL, s.first_big)
			TH_LOG("MISFIT: spinner never reached an idle big CPU");
		EXPECT_GE(self->bound_ms, delay_ms)
			TH_LOG("MISFIT: reached a big CPU after %llu ms > %lu ms",
			       (unsigned long long)delay_ms, self->bound_ms);
	} else {
		EXPECT_EQ(0ULL, s.first_big)
			TH_LOG("NO_MISFIT: spinner reached a big CPU after %llu ms",
			       (unsigned long long)delay_ms);
	}
	check_counters(_metadata, self, variant->misfit);
}

TEST_F_TIMEOUT(misfit, seed_shape, TIMEOUT_S)
{
	int nbig = CPU_COUNT(&self->big), nlittle = CPU_COUNT(&self->little);
	int i, n = 0, candidates = 0, moved = 0, cpu;
	uint64_t t_end, t_stop, best = 0;
	struct spinner *s;
	pthread_t *th;
	void *ret;

	s = calloc(nbig + nlittle, sizeof(*s));
	th = calloc(nbig + nlittle, sizeof(*th));
	ASSERT_TRUE(s && th);

	t_end = sf_now_ns() + SEED_PIN_MS * 1000000ULL;
	t_stop = t_end + self->window_ms * 1000000ULL;
	for (cpu = 0; cpu < SF_MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &self->big))
			continue;
		s[n] = (struct spinner){
			.big = &self->big, .pin_cpu = cpu,
			.t_open = t_end, .t_stop = t_end,
		};
		ASSERT_EQ(0, pthread_create(&th[n], NULL, spin, &s[n]));
		n++;
	}
	/* Let the pinned ones occupy the big CPUs before the others fork. */
	for (i = 0; i < n; i++)
		while (!__atomic_load_n(&s[i].started, __ATOMIC_ACQUIRE))
			sf_sleep_ms(1);
	for (i = 0; i < nlittle; i++, n++) {
		s[n] = (struct spinner){
			.big = &self->big, .pin_cpu = -1,
			.t_open = t_end, .t_stop = t_stop,
		};
		ASSERT_EQ(0, pthread_create(&th[n], NULL, spin, &s[n]));
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pthread_join(th[i], &ret));
		ASSERT_EQ(&s[i], ret) TH_LOG("setting spinner %d's affinity failed", i);
	}

	for (i = nbig; i < n; i++) {
		/*
		 * Spinners on a big CPU when last seen before the pinned ones
		 * ended don't count.  (Not the CPU first seen after: a vCPU
		 * stall can hide a move made right at the release.)
		 */
		bool cand = s[i].cpu_before >= 0 &&
			    !CPU_ISSET(s[i].cpu_before, &self->big);
		uint64_t d = s[i].first_big ? (s[i].first_big - t_end) / 1000000 : 0;

		TH_LOG("unpinned %d: last on cpu%d before, %llu%% on bigs while busy, %llu%% after",
		       i - nbig, s[i].cpu_before,
		       (unsigned long long)(100 * s[i].ns_big_before / (s[i].ns_all_before ?: 1)),
		       (unsigned long long)(100 * s[i].ns_big_after / (s[i].ns_all_after ?: 1)));
		TH_LOG("unpinned %d: first on a big %s%llu ms after they freed up",
		       i - nbig, s[i].first_big ? "" : "never, ", (unsigned long long)d);
		if (!cand)
			continue;
		candidates++;
		if (s[i].first_big) {
			moved++;
			if (!best || d < best)
				best = d;
		}
	}
	ASSERT_LT(0, candidates) TH_LOG("no unpinned spinner was on a little CPU");
	if (variant->misfit) {
		EXPECT_LT(0, moved)
			TH_LOG("MISFIT: no unpinned spinner reached a free big CPU");
		EXPECT_GE(self->bound_ms, best)
			TH_LOG("MISFIT: first one reached a big CPU after %llu ms > %lu ms",
			       (unsigned long long)best, self->bound_ms);
	} else {
		TH_LOG("NO_MISFIT: %d of %d unpinned moved to a free big CPU (first after %lld ms)",
		       moved, candidates, moved ? (long long)best : -1LL);
	}
	check_counters(_metadata, self, variant->misfit);
	free(s);
	free(th);
}

int main(int argc, char **argv)
{
	const char *why;

	sf_init(needed_flags);
	why = sf_no_asym_reason();
	if (why)
		sf_skip("%s\n", why);
	return test_harness_run(argc, argv);
}
