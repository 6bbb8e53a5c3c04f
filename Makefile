# SPDX-License-Identifier: GPL-2.0
#
# Entry points of the harness.  `make help` lists them.  Every target runs a
# script in scripts/ that prints its own usage with -h.

SHELL := /bin/bash
GUESTS ?= x86_64-numa arm64-juno arm64-dynamiq

.PHONY: help test test-large ci tree kernels checkpatch build-each-patch clang export patches applies selftests \
	kselftest-tarball lava lava-lab lava-lab-stop lava-images shellcheck stress bench steady ab rootfs clean check bisect \
	shell

help:
	@echo "make test          the main job: base + series, kernels, guests, selftests, summary"
	@echo "                   (GUESTS=\"...\", TESTS=\"misfit ...\": only those tests, V=1: stream"
	@echo "                   each guest's console; KERNEL=IMAGE [KCONFIG=FILE]: boot a kernel you"
	@echo "                   built, in the guests of its arch, its config checked first)"
	@echo "make test-large    make test in the large shapes only (guests with LARGE_SHAPE=1:"
	@echo "                   $(LARGE_GUESTS)), which make test and CI leave out"
	@echo "make shell         GUEST=NAME: a shell in that shape (KERNEL=IMAGE as for make test;"
	@echo "                   commands on standard input instead of a terminal; SHELL_OPTS:"
	@echo "                   scripts/shell.sh -h)"
	@echo "make ci            everything CI checks (what .ci/run runs)"
	@echo "make tree          unpack the base (or use KSRC=) and apply patches/ with quilt"
	@echo "make kernels       build the guest kernels (x86_64, arm64)"
	@echo "make checkpatch    checkpatch.pl --strict on every patch"
	@echo "make build-each-patch"
	@echo "                   build after every patch (ARCHS=x86_64 by default; also arm64, i386;"
	@echo "                   VARIANTS=\"default nostats nodebugfs\")"
	@echo "make clang         kernel/sched/ with clang-19, W=1 and -Wconditional-uninitialized"
	@echo "                   on the base and after every patch; a warning the base lacks fails"
	@echo "make export        write export/: the series for git am, with a cover letter"
	@echo "                   (SIGNOFF=\"Name <mail>\": you are the author and sign off; without"
	@echo "                   it the patches carry no person's sign-off and must not be sent)"
	@echo "make patches       write the files the series adds (patches/new-files, edited here"
	@echo "                   as plain files) into their patches: quilt push -a of patches/"
	@echo "                   alone then gives the whole tree (CI checks it)"
	@echo "make applies       does the series apply (and build, APPLIES_OPTS=-b) on newer"
	@echo "                   Debian linux-source packages and KSRC? (scripts/check-applies.sh -h)"
	@echo "make selftests     build the selftests with kbuild (gen_tar) into build/selftests"
	@echo "make kselftest-tarball"
	@echo "                   results/kselftest-{x86_64,arm64}.tar.gz, for run_kselftest.sh -c sched -S sched:cs_prctl_test"
	@echo "make lava          the x86_64 kselftest tarball as a LAVA job, run by lava-run (root;"
	@echo "                   installs lava-dispatcher); LAVA_OPTS=-n: validate only, no boot"
	@echo "make lava-lab      the x86_64 job and an arm64 one (arm64-juno, big.LITTLE) through a"
	@echo "                   LAVA lab on this machine (LAVA_ARCHS=\"x86_64 arm64\", results in"
	@echo "                   LAVA_LAB_OUT/ARCH, default results/lava-lab-STAMP; lava-server,"
	@echo "                   PostgreSQL, scheduler, worker in a chroot, root): submitted with"
	@echo "                   lavacli, results read back from the server (LAVA_LAB_OPTS:"
	@echo "                   lava/lava-lab.sh -h); the lab stays up for the next run.  With"
	@echo "                   LAVA_URI=https://server/RPC2 (and LAVA_USER, LAVA_TOKEN_FILE, ...):"
	@echo "                   no lab here, the jobs go to that server"
	@echo "make lava-lab-stop stop the lab: no process of it is left"
	@echo "make lava-images   the files of the LAVA jobs: the kernels (in their build directories),"
	@echo "                   ramdisks, kselftest tarballs and arm64's DTB (under SCHED_CACHE/lava)"
	@echo "make shellcheck    shellcheck every script"
	@echo "make stress        debug kernels under flag flips, hotplug, cgroups (STRESS_OPTS=-q:"
	@echo "                   1 min on arm64-dynamiq; -T: the test kernels; stress/stress.sh -h)"
	@echo "make bench         the seed experiments, flags A/B in one boot, results/bench-*/summary.md"
	@echo "                   (BENCH_OPTS=-q: quick mode, as CI runs it; -e BOOTS: some of"
	@echo "                   dynamiq juno numa cost icount-eevdf; bench/bench.sh -h)"
	@echo "make steady        RESCHED_INELIGIBLE's steady state on one instruction-counted vCPU"
	@echo "                   (STEADY_OPTS: bench/steady-state.sh -h)"
	@echo "make ab            A/B a feature around a command in one boot, with a verdict:"
	@echo "                   FEATURES=NO_RUN_TO_PARITY CMD=\"hackbench -g 2 -l 100\" [GUEST=x86_64-icount"
	@echo "                   REPS=4 SEEDS=1,2,3,4 VARS=\"n=2,4\" AB_BIN=dir]; or two kernels in alternating"
	@echo "                   boots: KERNEL_B=base|IMAGE CMD=... (bench/ab.sh -h); AB_OPTS: more"
	@echo "                   bench/ab.sh options; AB_KERNEL=IMAGE: boot that image as A"
	@echo "make rootfs        the Debian tool root per arch (perf, rt-tests, rt-app, sysbench, stress-ng)"
	@echo "make clean         remove build/ and export/ (results/ and SCHED_CACHE are kept)"
	@echo "Variables: KSRC=/path/to/kernel (instead of linux-source-7.3),"
	@echo "           GUESTS=\"$(GUESTS)\", SCHED_CACHE=/var/cache/schedseries,"
	@echo "           JOBS=N (parallel kernel build jobs, default nproc),"
	@echo "           QEMU_SUITE=bookworm-backports (the Debian suite whose QEMU the guests"
	@echo "           run, fetched under SCHED_CACHE; empty: the host's own QEMU)"
	@echo "Guest kernel parameters (scripts/guest/init.sh): schedseries.shell=1 leaves"
	@echo "           a shell on the console at the end (make shell sets it); leaving it"
	@echo "           powers off"

TESTS ?=
V ?= 0
test:
	scripts/run-tests.sh $(if $(filter 1,$(V)),-v) $(if $(strip $(TESTS)),-T "$(TESTS)") $(GUESTS)

# The large shapes (LARGE_SHAPE=1 in guests/*.conf) boot only when named.
LARGE_GUESTS = $(sort $(basename $(notdir $(shell grep -l '^LARGE_SHAPE=1$$' guests/*.conf))))
test-large:
	scripts/run-tests.sh $(if $(filter 1,$(V)),-v) $(if $(strip $(TESTS)),-T "$(TESTS)") $(LARGE_GUESTS)

ci:
	scripts/ci.sh

tree:
	scripts/prepare-tree.sh

kernels: tree
	scripts/build-kernel.sh x86_64
	scripts/build-kernel.sh arm64

checkpatch:
	scripts/check-series.sh -c

ARCHS ?= x86_64
VARIANTS ?= default nostats nodebugfs
build-each-patch:
	scripts/check-series.sh $(addprefix -a ,$(ARCHS)) $(addprefix -v ,$(VARIANTS))

clang:
	scripts/check-series.sh -C

export:
	scripts/export-series.sh export

patches:
	scripts/export-series.sh -u

APPLIES_OPTS ?=
applies:
	scripts/check-applies.sh $(APPLIES_OPTS)

selftests:
	scripts/kselftest-tarball.sh -g -o build/selftests

kselftest-tarball:
	scripts/kselftest-tarball.sh

# LAVA: lava/ holds the job, the device and the helpers (see lava/lava-run.sh -h).
LAVA_DIR = $${SCHED_CACHE:-/var/cache/schedseries}/lava
# The kernels' build directories (with KSRC, that tree's: lib.sh's out_root).
LAVA_OUT = $$(bash -c '. scripts/lib.sh && out_root')
LAVA_IMAGES = "$(LAVA_OUT)/x86_64/arch/x86/boot/bzImage" \
	"$(LAVA_DIR)/lava-ramdisk-x86_64.cpio.gz" "$(LAVA_DIR)/kselftest-x86_64.tar.gz"
LAVA_IMAGES_arm64 = "$(LAVA_OUT)/arm64/arch/arm64/boot/Image" \
	"$(LAVA_DIR)/lava-ramdisk-arm64.cpio.gz" "$(LAVA_DIR)/kselftest-arm64.tar.gz" \
	"$(LAVA_DIR)/arm64-juno.dtb"
LAVA_IMAGES_x86_64 = $(LAVA_IMAGES)
# The lab's jobs: x86_64 on x86_64-numa, arm64 on arm64-juno.
LAVA_ARCHS ?= x86_64 arm64
lava-images:
	bash -c '. scripts/lib.sh && need_pkgs busybox-static cpio'
	$(if $(filter x86_64,$(LAVA_ARCHS)),scripts/build-kernel.sh x86_64)
	$(if $(filter x86_64,$(LAVA_ARCHS)),scripts/kselftest-tarball.sh -o "$(LAVA_DIR)" x86_64)
	$(if $(filter x86_64,$(LAVA_ARCHS)),lava/mk-lava-ramdisk.sh "$(LAVA_DIR)/lava-ramdisk-x86_64.cpio.gz")
	$(if $(filter arm64,$(LAVA_ARCHS)),scripts/build-kernel.sh arm64)
	$(if $(filter arm64,$(LAVA_ARCHS)),scripts/kselftest-tarball.sh -g -o "$(LAVA_DIR)" arm64)
	$(if $(filter arm64,$(LAVA_ARCHS)),lava/mk-lava-ramdisk.sh -a arm64 "$(LAVA_DIR)/lava-ramdisk-arm64.cpio.gz")
	$(if $(filter arm64,$(LAVA_ARCHS)),scripts/mk-dtb.sh arm64-juno "$(LAVA_DIR)/arm64-juno.dtb")

# lava-run has the x86_64 device only.
lava: LAVA_ARCHS = x86_64
lava: lava-images
	bash -c '. scripts/lib.sh && need_pkgs lava-dispatcher lava-common'
	lava/lava-run.sh $(LAVA_OPTS) -o results/lava-$$(date +%Y%m%d-%H%M%S) $(LAVA_IMAGES)

# The lab stays up after the run (lava-lab-stop stops it).  With LAVA_URI
# the job goes to that server instead (lava/lava-lab.sh -h): no lab is
# started here, and the images are not rebuilt (the job carries the sha256
# of the ones copied there).
LAVA_LAB_OPTS ?=
# Each arch's job runs, whatever the one before gave; results in
# LAVA_LAB_OUT/ARCH (default results/lava-lab-STAMP).
lava-lab: $(if $(LAVA_URI),,lava-images)
	$(if $(LAVA_URI),,lava/lava-lab.sh up)
	rc=0; out=$${LAVA_LAB_OUT:-results/lava-lab-$$(date +%Y%m%d-%H%M%S)}; pids=; \
	$(foreach a,$(LAVA_ARCHS),lava/lava-lab.sh run -a $(a) -o "$$out/$(a)" $(LAVA_LAB_OPTS) \
		$(LAVA_IMAGES_$(a)) & pids="$$pids $$!";) \
	for p in $$pids; do wait $$p || rc=1; done; exit $$rc

lava-lab-stop:
	lava/lava-lab.sh down

shellcheck:
	shellcheck scripts/*.sh scripts/guest/*.sh bench/*.sh bench/guest/*.sh stress/*.sh stress/guest/*.sh lava/*.sh .ci/run

# GUESTS given to make wins; otherwise -q keeps stress.sh's own choice
# (arm64-dynamiq, as CI runs it) and a full soak takes the default GUESTS.
STRESS_OPTS ?=
stress_guests = $(if $(filter command line environment,$(origin GUESTS)),$(GUESTS),$(if $(filter -q,$(STRESS_OPTS)),,$(GUESTS)))
stress:
	stress/stress.sh $(STRESS_OPTS) $(stress_guests)

BENCH_OPTS ?=
bench:
	bench/bench.sh $(BENCH_OPTS)

STEADY_OPTS ?=
steady:
	bench/steady-state.sh $(STEADY_OPTS)

# The command reaches bench/ab.sh through the environment, so that its
# quotes are the guest shell's to read, and unexpanded by make ($(value)),
# so that a cell's $NAME (VARS) reaches the guest's shell as written.
FEATURES ?=
CMD ?=
GUEST ?=
REPS ?=
SEEDS ?=
AB_BIN ?=
KERNEL_B ?=
VARS ?=
ab: export AB_CMD = $(value CMD)
ab: export AB_KB = $(KERNEL_B)
ab:
	bench/ab.sh -f "$(FEATURES)" $${AB_KB:+-k "$$AB_KB"} $(if $(GUEST),-g $(GUEST)) $(if $(REPS),-r $(REPS)) \
		$(if $(SEEDS),-S $(SEEDS)) $(foreach v,$(VARS),-V $(v)) $(if $(AB_BIN),-b $(AB_BIN)) $(AB_OPTS) -- "$$AB_CMD"

SHELL_OPTS ?=
shell:
	@test -n "$(GUEST)" || { echo "make shell needs GUEST=NAME, one of: $$(cd guests && ls *.conf | sed 's/\.conf$$//' | tr '\n' ' ')" >&2; exit 2; }
	scripts/shell.sh $(SHELL_OPTS) $(GUEST)

rootfs:
	scripts/mk-rootfs.sh x86_64
	scripts/mk-rootfs.sh arm64

clean:
	rm -rf build export

# The old names of checkpatch and build-each-patch.
check bisect:
	@echo "make $@ is now make $(if $(filter check,$@),checkpatch,build-each-patch)" >&2; exit 2
