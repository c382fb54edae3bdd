# SPDX-License-Identifier: GPL-2.0-only
# ptebatch: `make` builds the tool and the library, `make check` runs every
# test, `make bench` measures the seed tables (into $(BUILD)/bench/),
# `make figures` redraws docs/' figures from its committed rows, `make
# clean` removes build output.
#
#   make CC=clang            build with clang instead of gcc
#   make SAN=asan check      AddressSanitizer + UBSan build in build-asan/
#   make SAN=tsan check      ThreadSanitizer build in build-tsan/
#   make ARCH=arm64-4k       the model built for another architecture, in
#                            $(BUILD)/arm64-4k/ (also arm64-16k, arm64-64k,
#                            x86-pae);
#                            `ptebatch --arch` runs that build

CC      ?= cc
SAN     ?=
ifeq ($(SAN),)
BUILD   ?= build
OPT     ?= -O2
SANFLAGS :=
else ifeq ($(SAN),asan)
BUILD   ?= build-asan
OPT     ?= -O1
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SAN),tsan)
BUILD   ?= build-tsan
OPT     ?= -O1
SANFLAGS := -fsanitize=thread
else
$(error SAN must be asan or tsan)
endif

# The model is compiled per architecture and page size, as the kernel is.
ARCH    ?= x86_64
ARCHES  := x86_64 x86-pae arm64-4k arm64-16k arm64-64k
ifeq ($(ARCH),x86_64)
ARCHFLAGS :=
else ifeq ($(ARCH),x86-pae)
# x86-64's encoding with a 32-bit CPU's PTE reads: two halves that a
# concurrent store can tear (CONFIG_GUP_GET_PXX_LOW_HIGH, mm/pgtable.h).
ARCHFLAGS := -DCONFIG_X86_PAE
else ifeq ($(ARCH),arm64-4k)
ARCHFLAGS := -DCONFIG_ARM64 -DCONFIG_ARM64_PAGE_SHIFT=12
else ifeq ($(ARCH),arm64-16k)
ARCHFLAGS := -DCONFIG_ARM64 -DCONFIG_ARM64_PAGE_SHIFT=14
else ifeq ($(ARCH),arm64-64k)
ARCHFLAGS := -DCONFIG_ARM64 -DCONFIG_ARM64_PAGE_SHIFT=16
else
$(error ARCH must be one of: $(ARCHES))
endif
ifneq ($(ARCH),x86_64)
override BUILD := $(BUILD)/$(ARCH)
endif

# The static aarch64 ptebatch of the arm64 guests (`make cross-arm64`
# runs this makefile again with CROSS=arm64 for each granule): Debian's
# cross compiler, and the arm64 headers and static libraries that
# scripts/arm64-sysroot unpacks from Debian's packages into the cache.
CROSS   ?=
PTEBATCH_CACHE ?= $(HOME)/.cache/ptebatch
ARM64_SYSROOT  := $(PTEBATCH_CACHE)/sysroot-arm64
ARM64_CC       ?= aarch64-linux-gnu-gcc
ARM64_GRANULES := arm64-4k arm64-16k arm64-64k
SYSROOT_FLAGS  :=
ifeq ($(CROSS),arm64)
ifeq ($(filter $(ARCH),$(ARM64_GRANULES)),)
$(error CROSS=arm64 builds one of: $(ARM64_GRANULES))
endif
ifneq ($(SAN),)
$(error CROSS=arm64 is not built with sanitizers)
endif
SYSROOT_FLAGS := --sysroot=$(ARM64_SYSROOT)
else ifneq ($(CROSS),)
$(error CROSS must be arm64 or empty)
endif

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  ?= $(OPT) -g
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) $(ARCHFLAGS) -D_GNU_SOURCE \
	-Iinclude -I. -MMD -MP
LDLIBS  := -lurcu -luring -lz -ltracefs -ltraceevent -lgsl -lgslcblas \
	-ljansson -lpthread -lm
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS)
ifeq ($(CROSS),arm64)
# Static, for an initramfs that holds nothing else.
ALL_CFLAGS  += $(SYSROOT_FLAGS)
ALL_LDFLAGS += $(SYSROOT_FLAGS) -static
endif

# What the build needs from Debian, each package by a header it installs
# (scripts/install-deps installs them all).  Checked once per make, before
# anything compiles, so a missing one is named instead of a compiler error
# about its header; `make clean` needs none of them.
# libtracefs's header includes libtraceevent's by its bare name.
TRACE_CFLAGS := -I$(if $(CROSS),$(ARM64_SYSROOT))/usr/include/traceevent \
	-I$(if $(CROSS),$(ARM64_SYSROOT))/usr/include/tracefs
DEP_HEADERS := urcu.h:liburcu-dev liburing.h:liburing-dev zlib.h:zlib1g-dev \
	tracefs/tracefs.h:libtracefs-dev traceevent/event-parse.h:libtraceevent-dev \
	gsl/gsl_multifit.h:libgsl-dev jansson.h:libjansson-dev
ifneq ($(filter-out clean clean-fuzz cross-arm64,$(or $(MAKECMDGOALS),all)),)
ifeq ($(shell command -v $(CC) 2>/dev/null),)
ifeq ($(CROSS),)
$(error the compiler '$(CC)' is not installed: run 'scripts/install-deps' as root (Debian package $(if $(filter clang%,$(CC)),clang,gcc)))
else
$(error the cross compiler '$(CC)' is not installed (Debian package gcc-aarch64-linux-gnu))
endif
endif
MISSING_DEPS := $(strip $(foreach d,$(DEP_HEADERS),$(if $(shell printf '\043include <%s>\n' \
	$(word 1,$(subst :, ,$d)) | $(CC) $(SYSROOT_FLAGS) $(TRACE_CFLAGS) -E -x c - >/dev/null 2>&1 && echo y),,$(word 2,$(subst :, ,$d)))))
ifneq ($(MISSING_DEPS),)
ifeq ($(CROSS),)
$(error missing Debian package(s): $(MISSING_DEPS): run 'scripts/install-deps' as root)
else
$(error missing in $(ARM64_SYSROOT): $(MISSING_DEPS) (arm64): run 'scripts/arm64-sysroot --force')
endif
endif
endif

MM_SRCS       := $(sort $(wildcard mm/*.c))
# arm64's contiguous-PTE layer (mm/arch/contpte.h) has an out-of-line half.
ifneq ($(filter arm64-%,$(ARCH)),)
MM_SRCS       += mm/arch/contpte.c
endif
SCENARIO_SRCS := $(sort $(wildcard scenario/*.c))
BACKEND_SRCS  := $(sort $(wildcard backend/*.c))
RECORD_SRCS   := $(sort $(wildcard record/*.c))
CALIB_SRCS    := $(sort $(wildcard calibrate/*.c))
BENCH_SRCS    := $(sort $(wildcard bench/*.c))
DIFF_SRCS     := $(sort $(wildcard diff/*.c))
CLI_SRCS      := $(sort $(wildcard cli/*.c))
LIBDIR_SRCS   := $(sort $(wildcard lib/*.c))
VM_SRCS       := $(sort $(wildcard vm/*.c))
TEST_SRCS     := $(sort $(wildcard tests/unit/*.c))
HOOK_TEST_SRCS := $(sort $(wildcard tests/hooks/*.c))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

LIB      := $(BUILD)/libptebatch.a
APP_LIB  := $(BUILD)/libapp.a
TOOL     := $(BUILD)/ptebatch
# The same model with the test-only hooks of mm/hooks.h compiled in, for
# the race-injection and stress tests; every other program links LIB.
HOOK_LIB := $(BUILD)/hooks/libptebatch.a
TESTS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS)) \
	    $(patsubst tests/hooks/%.c,$(BUILD)/tests/%,$(HOOK_TEST_SRCS))

.PHONY: all bench check clean figures tests
all: $(TOOL) $(LIB)

# Objects reached only through a pattern chain (a test's .o) would be
# deleted as intermediates at the end of the first build - printed after
# `make check`'s summary - and rebuilt by the next one: keep them.
.SECONDARY:

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# A text as one shell word whatever it holds (a file name, a checkout's
# directory, a variable given on the command line), and as a C string.
shq = '$(subst ','\'',$(1))'
cstr = "$(subst ",\",$(subst \,\\,$(1)))"

$(BUILD)/record/trace.o: ALL_CFLAGS += $(TRACE_CFLAGS)
# Where the default calibration files are (calibrate/calib.c).
$(BUILD)/calibrate/calib.o: ALL_CFLAGS += -DPB_SRCDIR=$(call shq,$(call cstr,$(CURDIR)))

$(BUILD)/hooks/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DCONFIG_PB_HOOKS -c $< -o $@

$(HOOK_LIB): $(patsubst %.c,$(BUILD)/hooks/%.o,$(MM_SRCS))
	@rm -f $@
	ar rcs $@ $^

$(LIB): $(call obj,$(MM_SRCS))
	@rm -f $@
	ar rcs $@ $^

# The shared file helpers (lib/), the scenario layer, the backends, the benchmarks, the diff engine,
# the recorder and the calibration, shared by the tool and the tests.
$(APP_LIB): $(call obj,$(LIBDIR_SRCS) $(VM_SRCS) $(SCENARIO_SRCS) $(BACKEND_SRCS) $(BENCH_SRCS) \
	$(DIFF_SRCS) $(RECORD_SRCS) $(CALIB_SRCS))
	@rm -f $@
	ar rcs $@ $^

# The fuzz harnesses (fuzz/) again, entry points renamed, linked into the
# tool: `ptebatch run --fuzz NAME FILE` replays one input
# (cli/fuzz_input.c).
FUZZ_NAMES     := scenario ops events calib
TOOL_FUZZ_OBJS := $(patsubst %,$(BUILD)/cli-fuzz/fuzz_%.o,$(FUZZ_NAMES))

$(TOOL): $(call obj,$(CLI_SRCS)) $(TOOL_FUZZ_OBJS) $(APP_LIB) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(APP_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/hooks/tests/hooks/%.o $(HOOK_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

tests: $(TESTS) $(TOOL) $(BUILD)/record/known

# The recorder's test program (tests/record.sh): static, so that its
# trace holds no dynamic loader, and never sanitized (nor is what a user
# records).
$(BUILD)/record/known: tests/record/known.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -static -o $@ $< 2>/dev/null || $(CC) -O2 -o $@ $<

# Every other architecture gets the checks that say batching changes
# nothing but cost there too - the equivalence test, the contpte test,
# the stress test and explore - the placement test (each architecture's
# address space ends elsewhere), and x86-pae its torn-read test (torn
# reads exist only there).  tests/run-all.sh runs them from
# $(BUILD)/ARCH/.
ARCH_CHECKS := tests/test_equivalence tests/test_contpte tests/test_stress \
	       tests/test_place ptebatch
ifeq ($(ARCH),x86_64)
.PHONY: arch-checks
arch-checks:
	@for a in $(filter-out x86_64,$(ARCHES)); do \
		$(MAKE) -s ARCH=$$a BUILD=$(BUILD) \
			$(addprefix $(BUILD)/$$a/,$(ARCH_CHECKS)) || exit 1; \
	done
	$(MAKE) -s ARCH=x86-pae BUILD=$(BUILD) $(BUILD)/x86-pae/tests/test_torn_read
tests: arch-checks
endif

check: tests
	@BUILD=$(BUILD) SAN=$(SAN) sh tests/run-all.sh

# The arm64 guests' ptebatch: static aarch64 binaries, one per granule,
# since a guest's kernel has one page size and the model is built for it:
# $(BUILD)/cross/arm64-4k/ptebatch, arm64-16k, arm64-64k.  The tool only,
# none of the tests (tests/cross-arm64.sh runs the 4K one under
# qemu-aarch64-static), and the guests' root file systems:
# scripts/arm64-initramfs puts each in an initramfs in the cache.
# The first run fetches the sysroot (scripts/arm64-sysroot: the network).
# The link warns that libtraceevent's plugin loader calls dlopen, which
# a static binary can do only with the glibc it was linked with: the
# guest has no plugins to load, and record reads the events without.
.PHONY: cross-arm64
cross-arm64: $(ARM64_SYSROOT)/.ptebatch-packages
	@for a in $(ARM64_GRANULES); do \
		$(MAKE) CROSS=arm64 ARCH=$$a BUILD=$(call shq,$(BUILD)/cross) \
			CC=$(call shq,$(ARM64_CC)) \
			$(call shq,$(BUILD)/cross)/$$a/ptebatch || exit 1; \
		BUILD=$(call shq,$(BUILD)) \
		PTEBATCH_CACHE=$(call shq,$(PTEBATCH_CACHE)) \
			scripts/arm64-initramfs $$a >/dev/null || exit 1; \
	done

# The script decides whether there is anything to fetch; the stamp is
# touched so that an edit of the script is not asked about again.
$(ARM64_SYSROOT)/.ptebatch-packages: scripts/arm64-sysroot
	PTEBATCH_CACHE=$(call shq,$(PTEBATCH_CACHE)) scripts/arm64-sysroot >/dev/null
	@touch $(call shq,$@)

# The seed tables at the seeds' sizes: about 11 s on a 2-core machine
# (measured 2026-11-30), well under two minutes.  BENCH_SIZE=64M shrinks
# every region.  Then every recorded trace (examples/traces/*.scn, and
# .scn.gz) replayed under each folio size and preset: 6 runs (a first, 5
# reps) of each of 4 presets x 5 folio sizes, and of each folio size on
# the kernel; the four shipped traces take about 25 s (2026-12-02).
# Each writes its tables, its rows and its figures (bench/figure.h) into
# $(BENCH_OUT), $(BUILD)/bench/ by default: bench-output.txt,
# bench-results.json, bench-gup.svg, -cow, -mprotect (and -predicted with
# the kernel columns), replay-*.  Never into docs/: the checkout stays as
# it is (the figure tests plot docs/' committed rows), and `make figures`
# alone redraws docs/.  As root, so the kernel columns run; BENCH_OUT=DIR
# writes elsewhere.  A table file is replaced only when its run succeeds.
BENCH_SIZE ?=
BENCH_OUT ?= $(BUILD)/bench
BENCH_TRACES := $(sort $(wildcard examples/traces/*.scn examples/traces/*.scn.gz))
BENCH_TRACES_SH := $(foreach t,$(BENCH_TRACES),$(call shq,$(t)))
bench: $(TOOL)
	@echo "make bench: ptebatch bench all$(if $(BENCH_SIZE), --size $(BENCH_SIZE), at the seeds' sizes): finishes in under two minutes on a 2-core machine; results in $(BENCH_OUT)/"
	@mkdir -p $(BENCH_OUT)
	$(TOOL) bench all$(if $(BENCH_SIZE), --size $(BENCH_SIZE)) --json $(BENCH_OUT)/bench-results.json --plot $(BENCH_OUT)/bench.svg > $(BENCH_OUT)/.bench-output.txt || { rm -f $(BENCH_OUT)/.bench-output.txt; exit 1; }
	mv $(BENCH_OUT)/.bench-output.txt $(BENCH_OUT)/bench-output.txt
	cat $(BENCH_OUT)/bench-output.txt
	$(if $(BENCH_TRACES),$(TOOL) bench replay $(BENCH_TRACES_SH) --json $(BENCH_OUT)/replay-results.json --plot $(BENCH_OUT)/replay.svg > $(BENCH_OUT)/.replay-output.txt || { rm -f $(BENCH_OUT)/.replay-output.txt; exit 1; })
	$(if $(BENCH_TRACES),mv $(BENCH_OUT)/.replay-output.txt $(BENCH_OUT)/replay-output.txt)
	$(if $(BENCH_TRACES),cat $(BENCH_OUT)/replay-output.txt)

# Kernels of our own (vm/, docs/VM.md): `make kernel` builds one into
# ~/.cache/ptebatch/kernels/NAME (scripts/kernel-build: Debian's
# linux-source-7.3, kernel/config/, ccache; 20+ minutes the first time).
# KERNEL_ARCH=arm64 KERNEL_GRANULE=16k, KERNEL_PATCHES=DIR choose another.
# `make check-vm` builds what is missing and runs tests/vm.sh with the
# whole suite diffed in a guest (CI's `make check` skips those tests
# when no kernel is in the cache); KERNEL_ARCH=arm64 also builds the
# guest's ptebatch (cross-arm64) and the model of that granule.
KERNEL_ARCH ?= x86_64
KERNEL_GRANULE ?= 4k
KERNEL_PATCHES ?=
.PHONY: kernel check-vm
kernel:
	scripts/kernel-build --arch $(call shq,$(KERNEL_ARCH)) --granule $(call shq,$(KERNEL_GRANULE))$(if $(KERNEL_PATCHES), --patches $(call shq,$(KERNEL_PATCHES)))
check-vm: $(TOOL) kernel $(if $(filter arm64,$(KERNEL_ARCH)),cross-arm64)
ifeq ($(KERNEL_ARCH),arm64)
	@$(MAKE) -s ARCH=arm64-$(KERNEL_GRANULE) BUILD=$(call shq,$(BUILD))
endif
	@BUILD=$(BUILD) VM_FULL=1 sh tests/vm.sh

# The figures in docs/ drawn again from the rows committed beside them,
# without measuring (`ptebatch plot`, seconds): what docs/RESULTS.md
# shows.  Those rows were written before rows named their machine, so
# FIGURES_MACHINE names it (the machine of docs/RESULTS.md).  The
# predicted figure takes the recounted predictions (RESULTS section 6)
# first, the kernel's times from the run they were made beside.
FIGURES_MACHINE ?= AMD EPYC, 2 vCPUs (Firecracker guest), Linux 6.18.44
figures: $(TOOL)
	$(TOOL) plot --out docs/bench.svg --machine $(call shq,$(FIGURES_MACHINE)) docs/bench-results.json
	$(TOOL) plot --out docs/replay.svg --machine $(call shq,$(FIGURES_MACHINE)) docs/replay-results.json
	$(TOOL) plot --out docs/predicted.svg --only predicted --machine $(call shq,$(FIGURES_MACHINE)) docs/predicted-recount-results.json docs/predicted-replay-recount-results.json docs/predicted-results.json docs/predicted-replay-results.json
	$(TOOL) plot --out docs/mprotect-arm64.svg --only mprotect docs/mprotect-arm64-results.json
	$(TOOL) plot --out docs/seeds-cow-kernels.svg --only kernels-cow docs/vm-runs/cow-*.json docs/bench-results.json

# Bounded exhaustive equivalence: `ptebatch explore` (explore/explore.c)
# runs every sequence of up to K operations under baseline and seeds.
# `make check` runs it at depth 4, and 3 with the THP region
# (tests/explore-smoke.sh, about a minute with its four-shard checks);
# `make explore` goes one deeper:
# depth 5 is 800559 sequences, 254997 states, 39-50 s (5.8 min of CPU
# before the checkpoints of issue 16; measured 2026-12-02), and --thp depth 4 is
# 61351 sequences, 23649 states, 40 s before them (2026-11-30; both on
# the 2-core machine, wall time more when it is shared).  Deeper: --shard I/N over cores or hosts (README).
EXPLORE_SRCS      := $(sort $(wildcard explore/*.c))
EXPLORE_DEPTH     ?= 5
EXPLORE_THP_DEPTH ?= 4
$(APP_LIB): $(call obj,$(EXPLORE_SRCS))

# The concurrent stress test, long (make check runs it with 3 short
# rounds): GUP-fast pinners against munmap, mprotect, split, fork/exit,
# dontneed and faults, checked at every quiescent point.  With SAN=tsan
# it runs under ThreadSanitizer.
STRESS_ROUNDS ?= 100
STRESS_ITERS  ?= 3000
.PHONY: stress
stress: $(BUILD)/tests/test_stress
	STRESS_ROUNDS=$(STRESS_ROUNDS) STRESS_ITERS=$(STRESS_ITERS) $(BUILD)/tests/test_stress

.PHONY: explore
explore: $(TOOL)
	$(TOOL) explore --depth $(EXPLORE_DEPTH)
	$(TOOL) explore --thp --depth $(EXPLORE_THP_DEPTH)

# Fuzzing (fuzz/README.md).  `make fuzz` builds the libFuzzer harnesses
# with clang, AddressSanitizer and UBSan in build-fuzz/ and runs each for
# FUZZ_TIME seconds (fuzz/run.sh); a crash lands in build-fuzz/crashes/
# and fails the target.  `make check` replays the committed corpus and
# regressions with the normal build ($(BUILD)/tests/fuzz_replay_*).
FUZZ_TIME    ?= 60
FUZZ_CC      ?= clang
FUZZ_BUILD   := build-fuzz
FUZZ_SAN     := -fsanitize=fuzzer-no-link,address,undefined \
		-fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_REPLAYS := $(patsubst %,$(BUILD)/tests/fuzz_replay_%,$(FUZZ_NAMES))
$(BUILD)/cli-fuzz/fuzz_%.o: fuzz/fuzz_%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DLLVMFuzzerTestOneInput=pb_fuzz_$*_one \
		-Dfuzz_harness_name=pb_fuzz_$*_name -c $< -o $@

FUZZ_BINS    := $(patsubst %,$(BUILD)/fuzz_%,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-bins clean-fuzz
$(FUZZ_REPLAYS): $(BUILD)/tests/fuzz_replay_%: $(BUILD)/fuzz/replay.o \
		$(BUILD)/fuzz/fuzz_%.o $(APP_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

tests: $(FUZZ_REPLAYS)

# Made by `make fuzz` in BUILD=$(FUZZ_BUILD): libFuzzer brings main().
$(FUZZ_BINS): $(BUILD)/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(APP_LIB) $(LIB)
	$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-bins: $(FUZZ_BINS)

fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 SANFLAGS='$(FUZZ_SAN)' fuzz-bins
	FUZZ_TIME=$(FUZZ_TIME) FUZZ_BUILD=$(FUZZ_BUILD) sh fuzz/run.sh $(FUZZ_NAMES)

clean: clean-fuzz
clean-fuzz:
	rm -rf $(FUZZ_BUILD)

clean:
	rm -rf build build-asan build-tsan build-clang

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
