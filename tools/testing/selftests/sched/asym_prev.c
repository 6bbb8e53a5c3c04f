// SPDX-License-Identifier: GPL-2.0
/*
 * SIS_ASYM_PREV: on an asymmetric-capacity system the wakeup path tries
 * the target, previous and recently used CPUs before scanning with
 * select_idle_capacity().  Two unpinned threads ping-pong a byte over two
 * pipes (the pattern of "perf bench sched pipe -T"); with the shortcut
 * they stay put, without it the scan moves them around.
 *
 * Migrations are noisy under QEMU TCG: a probe saw 2, 2, 0 migrations per
 * 20000 round trips with the shortcut and 242, 414, 12 without, and on a
 * busy host only 300-500 round trips a second get done, so a few stray
 * migrations already make 2-4 per 1000 with the shortcut.  No absolute
 * threshold is therefore used: runs alternate between the settings and
 * the median migration rate without the shortcut must exceed the one
 * with it.  The deterministic part is checked on the sis_asym_* counters:
 * with NO_SIS_ASYM_PREV no shortcut may be taken at all, with
 * SIS_ASYM_PREV the ping-pong wakeups must take some, in every run.  A run
 * that behaved as the other setting (with the flag: no shortcut but
 * scans; without it: more shortcuts than scans) looks like a flag write
 * that did not take effect: it fails the test, and the log says which run
 * and what the features file read after it.
 */
#include <pthread.h>
#include "sched_feat.h"

/*
 * A run ends after ROUND_TRIPS or RUN_LIMIT_MS, whichever comes first.
 * On the arm64 QEMU guests of the harness 10000 round trips took 0.6 to
 * 2 s, with 0-0.1 migrations per 1000 round trips with the shortcut
 * against 1983-1995 without; a slower machine stops at the limit with
 * fewer round trips, whose rates still tell the two apart.  The limit
 * bounds no behaviour (nothing is asserted on time): it keeps the
 * 2 * PAIRS runs within about half of TIMEOUT_S (the clock is read every
 * 256 round trips), the other half left for the flag writes, their
 * grace periods and the thread setup.
 */
#define ROUND_TRIPS	10000
#define PAIRS		5
#define TIMEOUT_S	90
#define RUN_LIMIT_MS	(TIMEOUT_S * 1000 / 2 / (2 * PAIRS))

static const char *const needed_flags[] = { "SIS_ASYM_PREV", NULL };

static const char *const shortcut_stats[] = {
	"sis_asym_target", "sis_asym_prev", "sis_asym_kthread",
	"sis_asym_recent", NULL,
};

static const char *const scan_stats[] = { "sis_asym_scan", NULL };

struct pingpong {
	int a2b[2], b2a[2];
	long mig_b;
	bool ok_b;
};

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	long m0;
	char c;

	if (sf_allow_all(0))
		return NULL;
	m0 = sf_self_nr_migrations();
	for (;;) {
		if (read(pp->a2b[0], &c, 1) != 1)
			return NULL;
		if (c == 'q')
			break;
		if (write(pp->b2a[1], &c, 1) != 1)
			return NULL;
	}
	pp->mig_b = sf_self_nr_migrations() - m0;
	pp->ok_b = m0 >= 0;
	return pp;
}

struct run {
	long trips;
	long migrations;
	double per_k;
	uint64_t ms;
};

/* Runs in a thread of its own so that both ends are fresh, unpinned threads. */
static void *ping(void *arg)
{
	struct pingpong pp = { 0 };
	struct run *r = arg;
	uint64_t t0, limit;
	pthread_t th;
	void *ret;
	long m0;
	char c = 'x';

	if (sf_allow_all(0) || pipe(pp.a2b) || pipe(pp.b2a))
		return NULL;
	if (pthread_create(&th, NULL, pong, &pp))
		return NULL;
	m0 = sf_self_nr_migrations();
	t0 = sf_now_ns();
	limit = t0 + RUN_LIMIT_MS * 1000000ULL;
	for (r->trips = 0; r->trips < ROUND_TRIPS; r->trips++) {
		if (write(pp.a2b[1], &c, 1) != 1 || read(pp.b2a[0], &c, 1) != 1)
			break;
		if (!(r->trips & 255) && sf_now_ns() > limit)
			break;
	}
	r->ms = (sf_now_ns() - t0) / 1000000;
	r->migrations = sf_self_nr_migrations() - m0;
	c = 'q';
	if (write(pp.a2b[1], &c, 1) != 1 || pthread_join(th, &ret) || ret != &pp)
		return NULL;
	close(pp.a2b[0]);
	close(pp.a2b[1]);
	close(pp.b2a[0]);
	close(pp.b2a[1]);
	if (m0 < 0 || !pp.ok_b)
		return NULL;
	r->migrations += pp.mig_b;
	r->per_k = r->trips ? 1000.0 * r->migrations / r->trips : 0;
	return r;
}

FIXTURE(asym_prev) {
	bool stats;
};

FIXTURE_SETUP(asym_prev)
{
	uint64_t v;

	sf_restore();
	self->stats = sf_stats_available() && !sf_schedstats_enable() &&
		      !sf_stat_sum(shortcut_stats, &v) && !sf_stat_sum(scan_stats, &v);
	if (!self->stats)
		TH_LOG("no feat_stats or schedstats: counter checks skipped");
}

FIXTURE_TEARDOWN(asym_prev)
{
	sf_restore();
}

/* Did a run at @prev take the counters of the other setting? */
static bool ran_as_other(bool prev, uint64_t shortcuts, uint64_t scans)
{
	return prev ? !shortcuts && scans : shortcuts > scans;
}

TEST_F_TIMEOUT(asym_prev, pipe_pingpong, TIMEOUT_S)
{
	double on[PAIRS], off[PAIRS], med_on, med_off;
	uint64_t s0 = 0, s1 = 0, c0 = 0, c1 = 0;
	int i, n_on = 0, n_off = 0;
	struct run r;
	pthread_t th;
	bool prev;
	void *ret;

	for (i = 0; i < 2 * PAIRS; i++) {
		prev = !(i & 1);
		ASSERT_EQ(0, sf_set("SIS_ASYM_PREV", prev));
		if (self->stats) {
			ASSERT_EQ(0, sf_stat_sum(shortcut_stats, &s0));
			ASSERT_EQ(0, sf_stat_sum(scan_stats, &c0));
		}
		memset(&r, 0, sizeof(r));
		ASSERT_EQ(0, pthread_create(&th, NULL, ping, &r));
		ASSERT_EQ(0, pthread_join(th, &ret));
		ASSERT_EQ(&r, ret)
			TH_LOG("ping-pong failed (pipes, affinity, sched file)");
		ASSERT_LT(0, r.trips);
		if (self->stats) {
			ASSERT_EQ(0, sf_stat_sum(shortcut_stats, &s1));
			ASSERT_EQ(0, sf_stat_sum(scan_stats, &c1));
		}
		TH_LOG("%sSIS_ASYM_PREV: %ld trips, %llu ms, %ld migrations (%.2f/1000)",
		       prev ? "" : "NO_", r.trips, (unsigned long long)r.ms,
		       r.migrations, r.per_k);
		TH_LOG("%sSIS_ASYM_PREV: shortcuts +%llu, scans +%llu",
		       prev ? "" : "NO_", (unsigned long long)(s1 - s0),
		       (unsigned long long)(c1 - c0));
		/* With the flag as the features file shows it after the run. */
		if (self->stats && ran_as_other(prev, s1 - s0, c1 - c0))
			TH_LOG("%sSIS_ASYM_PREV: run %d behaved as the other setting (file: %d)",
			       prev ? "" : "NO_", i + 1, sf_get("SIS_ASYM_PREV"));
		if (prev)
			on[n_on++] = r.per_k;
		else
			off[n_off++] = r.per_k;
		if (!self->stats)
			continue;
		if (prev) {
			EXPECT_LT(0ULL, s1 - s0)
				TH_LOG("SIS_ASYM_PREV: no target/prev/recent shortcut taken");
		} else {
			EXPECT_EQ(0ULL, s1 - s0)
				TH_LOG("NO_SIS_ASYM_PREV: shortcuts were still taken");
			EXPECT_LT(0ULL, c1 - c0)
				TH_LOG("NO_SIS_ASYM_PREV: select_idle_capacity() never scanned");
		}
	}
	med_on = sf_median(on, n_on);
	med_off = sf_median(off, n_off);
	TH_LOG("median migrations per 1000 round trips: %.2f with, %.2f without the shortcut",
	       med_on, med_off);
	EXPECT_TRUE(med_on < med_off)
		TH_LOG("NO_SIS_ASYM_PREV did not migrate more than SIS_ASYM_PREV");
}

int main(int argc, char **argv)
{
	cpu_set_t usable;
	const char *why;
	int ret;

	sf_init(needed_flags);
	why = sf_no_asym_reason();
	if (why)
		sf_skip("%s\n", why);
	/*
	 * The pair occupies at most two CPUs, and at a wakeup the CPU it
	 * left is idle, so the scan finds it again unless a third CPU is
	 * idle: with fewer usable CPUs the shortcut saves no migration.
	 */
	ret = sf_usable_cpus(&usable);
	if (ret)
		sf_skip("cannot read the CPUs this test may use: %s\n", strerror(-ret));
	if (CPU_COUNT(&usable) < 3)
		sf_skip("%d usable CPUs: no idle CPU beside the pair's two for the scan\n",
			CPU_COUNT(&usable));
	return test_harness_run(argc, argv);
}
