# ptebatch: `make` builds the tool and the library, `make check` runs every
# test, `make bench` measures the seed tables, `make clean` removes build
# output.
#
#   make CC=clang            build with clang instead of gcc
#   make SAN=asan check      AddressSanitizer + UBSan build in build-asan/
#   make SAN=tsan check      ThreadSanitizer build in build-tsan/

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

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  ?= $(OPT) -g
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -D_GNU_SOURCE \
	-Iinclude -I. -MMD -MP
LDLIBS  := -lurcu -luring -lpthread
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS)

MM_SRCS       := $(sort $(wildcard mm/*.c))
SCENARIO_SRCS := $(sort $(wildcard scenario/*.c))
BACKEND_SRCS  := $(sort $(wildcard backend/*.c))
BENCH_SRCS    := $(sort $(wildcard bench/*.c))
CLI_SRCS      := $(sort $(wildcard cli/*.c))
TEST_SRCS     := $(sort $(wildcard tests/unit/*.c))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

LIB      := $(BUILD)/libptebatch.a
APP_LIB  := $(BUILD)/libapp.a
TOOL     := $(BUILD)/ptebatch
TESTS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

.PHONY: all bench check clean tests
all: $(TOOL) $(LIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(call obj,$(MM_SRCS))
	@rm -f $@
	ar rcs $@ $^

# The scenario layer, the backends and the benchmarks, shared by the tool
# and the tests.
$(APP_LIB): $(call obj,$(SCENARIO_SRCS) $(BACKEND_SRCS) $(BENCH_SRCS))
	@rm -f $@
	ar rcs $@ $^

$(TOOL): $(call obj,$(CLI_SRCS)) $(APP_LIB) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(APP_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

tests: $(TESTS) $(TOOL)

check: tests
	@BUILD=$(BUILD) sh tests/run-all.sh

# The seed tables at the seeds' sizes: about 11 s on a 2-core machine
# (measured 2026-11-30), well under two minutes.  BENCH_SIZE=64M shrinks
# every region.
BENCH_SIZE ?=
bench: $(TOOL)
	@echo "make bench: ptebatch bench all$(if $(BENCH_SIZE), --size $(BENCH_SIZE), at the seeds' sizes): finishes in under two minutes on a 2-core machine"
	$(TOOL) bench all$(if $(BENCH_SIZE), --size $(BENCH_SIZE))

clean:
	rm -rf build build-asan build-tsan build-clang

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
