// SPDX-License-Identifier: GPL-2.0
/*
 * Workload helpers for the make ab guests and the shape scripts of
 * bench/guest/, built static per arch.
 *
 *   schedbench lu [-S] [-t THREADS] [-n ITERS] [-w WORK_US] [-s SAMPLE_MS]
 *                 [-p PID,...]
 *	A stand-in for NPB lu.C (not in Debian): THREADS workers each burn
 *	WORK_US of their own CPU time, then meet at a pthread barrier (with
 *	-S a spinning one, as OpenMP threads spin while they wait), ITERS
 *	times.  The main thread samples, every SAMPLE_MS, the CPU each worker
 *	(and each single-threaded PID given with -p) last ran on and counts
 *	them per NUMA node, as the 2019 thread's "ps numa hist" did.  Prints
 *	one line: time, iterations per second, the average per node and how
 *	often, from one sample to the next, a worker or a PID changed node.
 *
 *   schedbench hog [-a ALIGN_MS]
 *	Spin until killed; with -a, from the next multiple of ALIGN_MS of
 *	CLOCK_MONOTONIC on.
 *
 *   schedbench align MS
 *	Sleep until the next multiple of MS of CLOCK_MONOTONIC.
 *
 *   schedbench watch [-i MS] -b CPULIST [-P PID,...] PID...
 *	Sample, every MS, where the running thread of each PID is, until
 *	every PID has exited.  Per PID it prints the samples in which the
 *	task was running, how many of them were on a CPU in CPULIST (the big
 *	CPUs) and its exit time.  Once the pinned PIDs given with -P have all
 *	exited the bigs are free: the misfit migration latency is the time
 *	from then until every PID still alive then has been seen running on
 *	a big CPU ("none" if one never was; "moved" counts those that were).
 *
 *   schedbench runlen [-n HOGS] [-d SECS] [-g GAP_US] [-c CPU] [-a ALIGN_MS]
 *	The "steady state" of equal CPU hogs on one CPU: HOGS threads at
 *	nice 0, pinned to CPU (default: the last one allowed), start on a
 *	multiple of ALIGN_MS (default 100; 0: at once) of CLOCK_MONOTONIC and
 *	spin for SECS reading CLOCK_MONOTONIC.  A step of more than GAP_US
 *	(default 150, more than a tick's interrupt and less than another hog's
 *	run) between two reads is time off the CPU, so the time between two such
 *	gaps is one run.  Prints the number of runs, context switches per
 *	second (runs over all hogs per second), mean, 10th, 50th and 90th
 *	percentile and the longest run in us, the percentage of runs of 1 ms
 *	or less, and a histogram of run lengths
 *	(le_<N>us buckets).  Runs cut by the start and the end are dropped.
 *
 * Output lines are "key=value" words, for the report's awk.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS	256
#define MAX_NODES	16
#define MAX_PIDS	64

static int cpu_node[MAX_CPUS];
static int nr_nodes = 1;

static void die(const char *msg)
{
	fprintf(stderr, "schedbench: %s%s%s\n", msg, errno ? ": " : "",
		errno ? strerror(errno) : "");
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Parse "0-3,6" into a mask of MAX_CPUS bools. */
static void parse_cpulist(const char *s, bool *mask)
{
	char *end;
	long a, b;

	while (*s) {
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (end == s || a < 0 || b >= MAX_CPUS || a > b) {
			errno = 0;
			die("bad CPU list");
		}
		while (a <= b)
			mask[a++] = true;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			errno = 0;
			die("bad CPU list");
		}
	}
}

static int parse_pids(const char *s, pid_t *pids, int max)
{
	char *end;
	int n = 0;

	while (*s && n < max) {
		pids[n++] = strtol(s, &end, 10);
		if (end == s) {
			errno = 0;
			die("bad PID list");
		}
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

static void read_nodes(void)
{
	bool mask[MAX_CPUS];
	char path[96], buf[512];
	FILE *f;
	int n, c;

	for (n = 0; n < MAX_NODES; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/cpulist", n);
		f = fopen(path, "r");
		if (!f)
			break;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		buf[strcspn(buf, "\n")] = 0;
		memset(mask, 0, sizeof(mask));
		parse_cpulist(buf, mask);
		for (c = 0; c < MAX_CPUS; c++)
			if (mask[c])
				cpu_node[c] = n;
	}
	nr_nodes = n ? n : 1;
}

/*
 * State and last CPU of one thread from /proc/PID/task/TID/stat; the
 * processor is field 39.  Returns false when the thread is gone.
 */
static bool task_cpu(pid_t pid, pid_t tid, char *state, int *cpu)
{
	char path[64], buf[1024], *p;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return false;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	*state = p[2];
	/* p + 2 is field 3 (state); walk to field 39. */
	for (field = 3, p += 2; field < 39 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return false;
	*cpu = atoi(p);
	return *cpu >= 0 && *cpu < MAX_CPUS;
}

/* ---- lu ---- */

static pthread_barrier_t lu_start, lu_barrier;
static int lu_iters = 200, lu_work_us = 3000, lu_spin, lu_threads;
static unsigned int lu_arrived, lu_gen;
static pid_t lu_tids[MAX_PIDS];

static void burn_cpu_us(int us)
{
	struct timespec ts;
	double end, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + us / 1e6;
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = ts.tv_sec + ts.tv_nsec / 1e9;
	} while (t < end);
}

static void *lu_worker(void *arg)
{
	int i;

	lu_tids[(long)arg] = gettid();
	pthread_barrier_wait(&lu_start);
	for (i = 0; i < lu_iters; i++) {
		burn_cpu_us(lu_work_us);
		if (lu_spin) {
			unsigned int gen = __atomic_load_n(&lu_gen, __ATOMIC_ACQUIRE);

			if (__atomic_add_fetch(&lu_arrived, 1, __ATOMIC_ACQ_REL) == (unsigned int)lu_threads) {
				__atomic_store_n(&lu_arrived, 0, __ATOMIC_RELAXED);
				__atomic_add_fetch(&lu_gen, 1, __ATOMIC_RELEASE);
			} else {
				while (__atomic_load_n(&lu_gen, __ATOMIC_ACQUIRE) == gen)
					;
			}
			continue;
		}
		pthread_barrier_wait(&lu_barrier);
	}
	return NULL;
}

static volatile int lu_done;

static void *lu_joiner(void *arg)
{
	pthread_t *th = arg;

	while (*th) {
		pthread_join(*th, NULL);
		th++;
	}
	lu_done = 1;
	return NULL;
}

/* One sample of a task on NODE: count it, and a change from its last node. */
static void note_node(int node, double *hist, int *last, int *moves)
{
	hist[node] += 1;
	if (*last >= 0 && *last != node)
		(*moves)++;
	*last = node;
}

static int cmd_lu(int argc, char **argv)
{
	double whist[MAX_NODES] = { 0 }, hhist[MAX_NODES] = { 0 };
	pthread_t th[MAX_PIDS + 1] = { 0 }, joiner;
	int threads = 6, sample_ms = 100, nhog = 0, nsamples = 0;
	pid_t hogs[MAX_PIDS];
	int wlast[MAX_PIDS], hlast[MAX_PIDS], wmoves = 0, hmoves = 0;
	double t0, t1;
	char state;
	int opt, cpu;
	long i;

	for (i = 0; i < MAX_PIDS; i++)
		wlast[i] = hlast[i] = -1;
	while ((opt = getopt(argc, argv, "t:n:w:s:p:S")) != -1) {
		switch (opt) {
		case 'S': lu_spin = 1; break;
		case 't': threads = atoi(optarg); break;
		case 'n': lu_iters = atoi(optarg); break;
		case 'w': lu_work_us = atoi(optarg); break;
		case 's': sample_ms = atoi(optarg); break;
		case 'p': nhog = parse_pids(optarg, hogs, MAX_PIDS); break;
		default: return 2;
		}
	}
	if (threads < 1 || threads > MAX_PIDS || lu_iters < 1 ||
	    lu_work_us < 1 || sample_ms < 1) {
		errno = 0;
		die("lu: bad arguments");
	}
	lu_threads = threads;
	read_nodes();
	/* lu_start lets the main thread start the clock with the workers. */
	if (pthread_barrier_init(&lu_start, NULL, threads + 1) ||
	    pthread_barrier_init(&lu_barrier, NULL, threads))
		die("pthread_barrier_init");
	for (i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, lu_worker, (void *)i))
			die("pthread_create");
	pthread_barrier_wait(&lu_start);
	t0 = now();
	if (pthread_create(&joiner, NULL, lu_joiner, th))
		die("pthread_create");
	while (!lu_done) {
		sleep_ms(sample_ms);
		if (lu_done)
			break;
		for (i = 0; i < threads; i++)
			if (task_cpu(getpid(), lu_tids[i], &state, &cpu))
				note_node(cpu_node[cpu], whist, &wlast[i], &wmoves);
		for (i = 0; i < nhog; i++)
			if (task_cpu(hogs[i], hogs[i], &state, &cpu))
				note_node(cpu_node[cpu], hhist, &hlast[i], &hmoves);
		nsamples++;
	}
	t1 = now();
	pthread_join(joiner, NULL);
	printf("threads=%d iters=%d work_us=%d time=%.3f ops_per_s=%.1f samples=%d",
	       threads, lu_iters, lu_work_us, t1 - t0,
	       threads * (double)lu_iters / (t1 - t0), nsamples);
	printf(" workers_per_node=");
	for (i = 0; i < nr_nodes; i++)
		printf("%s%.2f", i ? "/" : "", nsamples ? whist[i] / nsamples : 0);
	printf(" hogs_per_node=");
	for (i = 0; i < nr_nodes; i++)
		printf("%s%.2f", i ? "/" : "", nsamples ? hhist[i] / nsamples : 0);
	printf(" worker_node_moves=%d hog_node_moves=%d\n", wmoves, hmoves);
	return 0;
}

/* Sleep until the next multiple of MS ms of CLOCK_MONOTONIC. */
static void align_to(int ms)
{
	long long ns = (long long)(now() * 1e9), a = ms * 1000000LL;
	struct timespec ts;

	if (ms <= 0)
		return;
	ns = (ns / a + 1) * a;
	ts.tv_sec = ns / 1000000000LL;
	ts.tv_nsec = ns % 1000000000LL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- align ---- */

static int cmd_align(int argc, char **argv)
{
	int ms = argc == 2 ? atoi(argv[1]) : 0;

	if (ms <= 0)
		die("usage: schedbench align MS");
	align_to(ms);
	return 0;
}

/* ---- hog ---- */

static int cmd_hog(int argc, char **argv)
{
	volatile unsigned long n = 0;
	int opt;

	while ((opt = getopt(argc, argv, "a:")) != -1) {
		if (opt != 'a')
			die("usage: schedbench hog [-a ALIGN_MS]");
		align_to(atoi(optarg));
	}
	for (;;)
		n++;
	return 0;
}

/* ---- runlen ---- */

#define RUNLEN_MAX	200000

struct runlen_hog {
	int cpu;
	double t_start, t_stop, gap;
	double *runs;
	int nruns;
};

static pthread_barrier_t runlen_barrier;

static void *runlen_hog(void *arg)
{
	struct runlen_hog *h = arg;
	double t, prev, run_start = -1;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	pthread_barrier_wait(&runlen_barrier);
	prev = now();
	while ((t = now()) < h->t_stop) {
		if (t - prev > h->gap) {
			/*
			 * Off the CPU between prev and t: a run ended at prev.
			 * The first run (begun before any gap seen) and runs
			 * begun before t_start are not whole: not counted.
			 */
			if (run_start >= h->t_start && h->nruns < RUNLEN_MAX)
				h->runs[h->nruns++] = prev - run_start;
			run_start = t;
		}
		prev = t;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmd_runlen(int argc, char **argv)
{
	static const int edges_us[] = { 250, 500, 750, 1000, 1500, 2000, 3000,
					4000, 6000, 10000, 20000 };
	int nedges = sizeof(edges_us) / sizeof(edges_us[0]);
	int nhogs = 2, secs = 10, gap_us = 150, cpu = -1, opt, i, j, total = 0;
	int align_ms = 100;
	struct runlen_hog *h;
	pthread_t *th;
	double *all, t0;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:d:g:c:a:")) != -1) {
		switch (opt) {
		case 'a': align_ms = atoi(optarg); break;
		case 'n': nhogs = atoi(optarg); break;
		case 'd': secs = atoi(optarg); break;
		case 'g': gap_us = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		default: die("usage: schedbench runlen [-n HOGS] [-d SECS] [-g GAP_US] [-c CPU] [-a ALIGN_MS]");
		}
	}
	if (nhogs < 1 || nhogs > MAX_PIDS || secs < 1 || gap_us < 1)
		die("runlen: bad -n, -d or -g");
	if (cpu < 0) {
		if (sched_getaffinity(0, sizeof(set), &set))
			die("sched_getaffinity");
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				cpu = i;
	}
	h = calloc(nhogs, sizeof(*h));
	th = calloc(nhogs, sizeof(*th));
	all = malloc(sizeof(*all) * RUNLEN_MAX * nhogs);
	if (!h || !th || !all)
		die("out of memory");
	if (pthread_barrier_init(&runlen_barrier, NULL, nhogs + 1))
		die("pthread_barrier_init");
	/*
	 * Start on a multiple of ALIGN_MS of CLOCK_MONOTONIC, a whole number
	 * of ticks: equal hogs fall into one of a few periodic schedules,
	 * chosen by where in the tick period they start.
	 */
	align_to(align_ms);
	/* Half a second to settle, then SECS of measurement. */
	t0 = now();
	for (i = 0; i < nhogs; i++) {
		h[i] = (struct runlen_hog){ .cpu = cpu, .t_start = t0 + 0.5,
			.t_stop = t0 + 0.5 + secs, .gap = gap_us / 1e6 };
		h[i].runs = all + (size_t)i * RUNLEN_MAX;
		if (pthread_create(&th[i], NULL, runlen_hog, &h[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&runlen_barrier);
	for (i = 0; i < nhogs; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < nhogs; i++)
		for (j = 0; j < h[i].nruns; j++)
			all[total++] = h[i].runs[j];
	if (!total)
		die("runlen: no whole run measured");
	qsort(all, total, sizeof(*all), cmp_double);
	{
		double sum = 0;
		int le_1ms = 0;

		for (i = 0; i < total; i++) {
			sum += all[i];
			le_1ms += all[i] <= 1e-3;
		}
		printf("hogs=%d cpu=%d secs=%d runs=%d cs_per_s=%.1f mean_us=%.0f p10_us=%.0f p50_us=%.0f p90_us=%.0f max_us=%.0f le_1ms_pct=%.1f",
		       nhogs, cpu, secs, total, total / (double)secs,
		       sum / total * 1e6, all[total / 10] * 1e6,
		       all[total / 2] * 1e6, all[total * 9 / 10] * 1e6,
		       all[total - 1] * 1e6, 100.0 * le_1ms / total);
	}
	for (i = 0, j = 0; i <= nedges; i++) {
		int n = 0;

		while (j < total && (i == nedges || all[j] * 1e6 <= edges_us[i])) {
			n++;
			j++;
		}
		if (i < nedges)
			printf(" le_%dus=%d", edges_us[i], n);
		else
			printf(" gt_%dus=%d", edges_us[nedges - 1], n);
	}
	printf("\n");
	return 0;
}

/* ---- watch ---- */

struct watched {
	pid_t pid;
	int running, on_big;
	double exit_t, big_after_free;
	bool alive_at_free;
};

/* The CPU of the first running thread of PID, -1 if none, -2 if gone. */
static int running_cpu(pid_t pid)
{
	char path[64], state;
	struct dirent *d;
	int cpu, ret = -2;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -2;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (!task_cpu(pid, atoi(d->d_name), &state, &cpu))
			continue;
		if (state == 'Z' || state == 'X')
			continue;
		if (ret == -2)
			ret = -1;
		if (state == 'R') {
			ret = cpu;
			break;
		}
	}
	closedir(dir);
	return ret;
}

static int cmd_watch(int argc, char **argv)
{
	pid_t pinned[MAX_PIDS];
	struct watched w[MAX_PIDS];
	bool big[MAX_CPUS] = { false }, have_big = false;
	int interval = 5, npinned = 0, n, i, opt, cpu, alive;
	double t0, t, freed = -1, last_big = -1;
	int waiting = 0, moved = 0;

	while ((opt = getopt(argc, argv, "i:b:P:")) != -1) {
		switch (opt) {
		case 'i': interval = atoi(optarg); break;
		case 'b': parse_cpulist(optarg, big); have_big = true; break;
		case 'P': npinned = parse_pids(optarg, pinned, MAX_PIDS); break;
		default: return 2;
		}
	}
	n = argc - optind;
	if (!have_big || n < 1 || n > MAX_PIDS || interval < 1) {
		errno = 0;
		die("watch: need -b CPULIST and 1-64 PIDs");
	}
	for (i = 0; i < n; i++) {
		w[i].pid = atoi(argv[optind + i]);
		w[i].running = w[i].on_big = 0;
		w[i].exit_t = -1;
		w[i].big_after_free = -1;
		w[i].alive_at_free = false;
	}
	t0 = now();
	do {
		t = now() - t0;
		if (freed < 0 && npinned) {
			for (i = 0; i < npinned; i++)
				if (running_cpu(pinned[i]) != -2)
					break;
			if (i == npinned) {
				freed = t;
				for (i = 0; i < n; i++)
					w[i].alive_at_free = w[i].exit_t < 0;
			}
		}
		alive = 0;
		for (i = 0; i < n; i++) {
			if (w[i].exit_t >= 0)
				continue;
			cpu = running_cpu(w[i].pid);
			if (cpu == -2) {
				w[i].exit_t = t;
				continue;
			}
			alive++;
			if (cpu < 0)
				continue;
			w[i].running++;
			if (big[cpu]) {
				w[i].on_big++;
				if (freed >= 0 && w[i].big_after_free < 0)
					w[i].big_after_free = t;
			}
		}
		sleep_ms(interval);
	} while (alive);
	for (i = 0; i < n; i++)
		printf("task=%d running_samples=%d big_samples=%d big_share=%.3f exit_s=%.3f\n",
		       w[i].pid, w[i].running, w[i].on_big,
		       w[i].running ? (double)w[i].on_big / w[i].running : 0,
		       w[i].exit_t);
	for (i = 0; i < n; i++) {
		if (!w[i].alive_at_free)
			continue;
		waiting++;
		if (w[i].big_after_free < 0)
			continue;
		moved++;
		if (w[i].big_after_free > last_big)
			last_big = w[i].big_after_free;
	}
	printf("pinned_done_s=%.3f moved=%d/%d misfit_latency_ms=", freed,
	       moved, waiting);
	if (freed >= 0 && waiting && moved == waiting)
		printf("%.1f\n", (last_big - freed) * 1000);
	else
		printf("none\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: schedbench lu|hog|align|watch|runlen [options]\n");
		return 2;
	}
	if (!strcmp(argv[1], "lu"))
		return cmd_lu(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hog"))
		return cmd_hog(argc - 1, argv + 1);
	if (!strcmp(argv[1], "align"))
		return cmd_align(argc - 1, argv + 1);
	if (!strcmp(argv[1], "watch"))
		return cmd_watch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "runlen"))
		return cmd_runlen(argc - 1, argv + 1);
	fprintf(stderr, "schedbench: unknown command '%s'\n", argv[1]);
	return 2;
}
