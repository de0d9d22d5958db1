# gpath - GPU shortest-path service. `make run` and `make test` install what a fresh Debian machine
# lacks (deploy/install-deps.sh), build, and run. See README.md.
#
#   make            build/gpath (CUDA backend when nvcc is found, else CPU-only, said at build)
#   make test       the whole suite (tests/run-tests.sh); GPU tests skip without a GPU
#   make test-gpu   the GPU suite on a machine with a GPU
#   make run        serve the built-in generated road graph on :8080
#   make web        fetch the API reference assets (npm, pinned) that GET /docs embeds
#   make lint       -std=c11 -Wall -Wextra -Werror, unsafe-call check, openapi lint
#   make asan       the suite under AddressSanitizer + UBSan (CPU build)
#   make ubsan      the suite under clang's UBSan incl. -fsanitize=integer,float-cast-overflow
#   make fuzz       libFuzzer on every tests/fuzz/fuzz_*.c for FUZZ_SECONDS each (default 8)
#   make bench      CPU benchmarks -> bench/results/
#   make bench-gpu  GPU benchmarks -> bench/results/ (on the GPU machine)
#   make data       the public test data sets into data/ (data/MANIFEST.tsv; a local copy first)
#
# BUILD=dir builds elsewhere (helpers and sanitizer builds use their own), NVCC= forces CPU-only.

BUILD   ?= build
CC      ?= cc
CUDA    ?= /usr/local/cuda
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { [ -x $(CUDA)/bin/nvcc ] && echo $(CUDA)/bin/nvcc; })
PKGS    := libmicrohttpd libcjson inih libpq sqlite3 zlib libxml-2.0
OPT     ?= -O2 -g
WARN    ?= -Wall -Wextra -Wno-unused-parameter
CFLAGS  += -std=c11 -D_GNU_SOURCE -I. $(OPT) $(WARN) -pthread -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lmetis -pthread -lm
SAN     ?=
CFLAGS  += $(SAN)
# The one version number: the VERSION file (`gpath --version`, /metrics, openapi.yaml's info.version
# and the image tags in Dockerfile and deploy/ are checked against it by tests/test_version.sh).
VERSION := $(strip $(shell cat VERSION 2>/dev/null))
CFLAGS  += -DGPATH_VERSION='"$(VERSION)"'
LDFLAGS += $(SAN)

LIB_SRC := $(wildcard graph/*.c engine/*.c storage/*.c server/*.c server/*/*.c cli/*.c)
LIB_SRC := $(filter-out cli/main.c,$(LIB_SRC))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
# graph/*.cpp: C++ behind plain-C headers (graph/osm_read.cpp: libosmium, header-only).
CXX      ?= g++
CXXFLAGS += -std=c++17 -I. $(OPT) $(WARN) -pthread -MMD -MP $(SAN)
LIB_OBJ  += $(patsubst %.cpp,$(BUILD)/%.o,$(wildcard graph/*.cpp))
LDLIBS   += -lexpat -lbz2 -lz -lstdc++
# migrations/*/*.sql are compiled into the binary (storage/migrate.h): one generated C file.
MIG_SQL := $(sort $(wildcard migrations/sqlite/*.sql)) $(sort $(wildcard migrations/postgres/*.sql))
LIB_OBJ += $(BUILD)/gen/migrations.o
# openapi.yaml, web/docs.html and the API reference assets `make web` fetched are compiled into
# the binary too (web/embed-assets.sh, server/assets.h); the list is re-checked every run.
WEB_DIST := $(BUILD)/web/dist
WEB_MAP := $(BUILD)/web/map
ASSETS  := openapi.yaml web/docs.html $(sort $(wildcard $(WEB_DIST)/*.js $(WEB_DIST)/*.css)) \
           $(sort $(wildcard $(WEB_MAP)/*))
LIB_OBJ += $(BUILD)/gen/assets.o
# The commit stamped into gpath_build_info (server/metrics.c); "unknown" outside a git checkout.
GIT_COMMIT := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CU_SRC  := $(wildcard kernels/*.cu)

ifneq ($(strip $(NVCC)),)
  # sm_90a SASS for the H100/H200 plus PTX so newer GPUs JIT it.
  NVCCFLAGS ?= -O3 -std=c++17 -lineinfo -Xcompiler -fPIC \
               -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_90,code=compute_90
  CFLAGS  += -DGP_HAVE_CUDA -I$(CUDA)/include
  CU_OBJ  := $(CU_SRC:%.cu=$(BUILD)/%.o)
  LDLIBS  += -L$(CUDA)/lib64 -lcudart_static -ldl -lrt -lstdc++
  BUILD_KIND := cuda
else
  CU_OBJ  :=
  BUILD_KIND := cpu-only
endif

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_LIBS := -lcmocka -lcurl
# bench/*.c: benchmark programs; bench/*.cu: kernel-lab programs (CUDA builds only). Both link
# libgpath so they can validate against the CPU backend.
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
ifneq ($(strip $(NVCC)),)
  BENCH_BIN += $(patsubst bench/%.cu,$(BUILD)/bench/%,$(wildcard bench/*.cu))
endif

.PHONY: default all deps deps-run test test-gpu run lint asan ubsan fuzz fuzz-build bench bench-gpu clean format web FORCE data
# `make` alone: the web assets first (their files are listed when the Makefile is read), then
# everything else, so the binary serves /docs and the map page as `make run` does
.DEFAULT_GOAL := default
default:
	@$(MAKE) --no-print-directory web
	@$(MAKE) --no-print-directory all

all: $(BUILD)/gpath $(TEST_BIN) $(BENCH_BIN)

$(BUILD)/gpath: $(BUILD)/cli/main.o $(BUILD)/libgpath.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	@echo "built $@ ($(BUILD_KIND)$(if $(CU_OBJ),, build: nvcc not found, the CUDA backend is not compiled))"

$(LIB_OBJ) $(BUILD)/cli/main.o: VERSION

$(BUILD)/libgpath.a: $(LIB_OBJ) $(CU_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<

$(BUILD)/gen/migrations.c: $(MIG_SQL) storage/embed-migrations.sh
	@mkdir -p $(dir $@)
	sh storage/embed-migrations.sh $(MIG_SQL) >$@.tmp && mv $@.tmp $@

$(BUILD)/gen/migrations.o: $(BUILD)/gen/migrations.c
	$(CC) $(CFLAGS) -I. -c -o $@ $<

$(BUILD)/gen/assets.c: $(ASSETS) web/embed-assets.sh $(BUILD)/gen/assets.list
	sh web/embed-assets.sh $(ASSETS) >$@.tmp && mv $@.tmp $@

$(BUILD)/gen/assets.o: $(BUILD)/gen/assets.c
	$(CC) $(CFLAGS) -I. -c -o $@ $<

# rewritten only when the text changes, so dependants rebuild exactly then
$(BUILD)/gen/assets.list $(BUILD)/gen/commit.txt: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' $(if $(findstring assets,$@),$(ASSETS),'$(GIT_COMMIT)') | cmp -s - $@ || \
	  printf '%s\n' $(if $(findstring assets,$@),$(ASSETS),'$(GIT_COMMIT)') >$@

$(BUILD)/server/metrics.o: CFLAGS += -DGPATH_COMMIT='"$(GIT_COMMIT)"'
$(BUILD)/server/metrics.o: $(BUILD)/gen/commit.txt

# the API reference page's assets (swagger-ui-dist) and the map pages (MapLibre GL JS and
# osrm-text-instructions for /, Leaflet and Leaflet Routing Machine for /lrm), pinned in
# web/package-lock.json, via npm; all are embedded into the binary
web:
	@bash web/fetch-assets.sh $(WEB_DIST)
	@bash web/bundle-map.sh $(WEB_MAP)

# map matching's searches must give the host's doubles bit for bit: no fused multiply-adds
$(BUILD)/kernels/match.o: NVCCFLAGS += -fmad=false
$(BUILD)/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I. -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(BUILD)/libgpath.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libgpath.a $(TEST_LIBS) $(LDLIBS)

# METIS (libmetis-dev) is in LDLIBS: the CCH order (engine/cch.c) and the road-likeness measures

$(BUILD)/bench/%: bench/%.c $(BUILD)/libgpath.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libgpath.a $(LDLIBS)
# the OSM reader comparison also links readosm (libreadosm-dev)
$(BUILD)/bench/osm_readers: LDLIBS += -lreadosm

$(BUILD)/bench/%: bench/%.cu $(BUILD)/libgpath.a
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I. -o $@ $< $(BUILD)/libgpath.a $(filter-out -pthread,$(LDLIBS)) -lpthread

# The test data (data/MANIFEST.tsv): copied from GPATH_DATA or ../shared/data when there, else
# downloaded from the publishers; every file checked against its sha256.
data:
	@bash data/fetch.sh

deps:
	@bash deploy/install-deps.sh test
deps-run:
	@bash deploy/install-deps.sh run

test: deps
	@$(MAKE) --no-print-directory web
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bash tests/run-tests.sh

test-gpu:
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) GPATH_REQUIRE_GPU=1 bash tests/run-tests.sh gpu

# make run: loopback only and no cross-origin callers unless told (RUN_LISTEN=0.0.0.0,
# RUN_CORS='*'); ARGS come last and override both
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
RUN_LISTEN ?= 127.0.0.1
RUN_CORS ?=
run: deps-run
	@$(MAKE) --no-print-directory web
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/gpath
	$(BUILD)/gpath serve --listen '$(RUN_LISTEN)' --cors-origins '$(RUN_CORS)' $(ARGS)

lint: deps
	@$(MAKE) --no-print-directory BUILD=build-lint WARN="-Wall -Wextra -Werror" all
	@bash tests/lint.sh

asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan NVCC= OPT="-O1 -g -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" all
	@BUILD=build-asan ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  bash tests/run-tests.sh

# The second sanitizer job: clang's UBSan with the integer checks (unsigned wrap, lossy implicit
# conversions) and float-cast-overflow, every report fatal. Intended wraps (hashes, generators) are
# listed, each with its reason, in tests/ubsan.ignorelist.
# (vptr and function are off: the programs link through the C driver, without the C++ UBSan
# runtime those two C++-only checks need; graph/osm_read.cpp gets every other check.)
UBSAN_FLAGS := -fsanitize=undefined,float-cast-overflow,integer -fno-sanitize=vptr,function \
               -fno-sanitize-recover=all -fsanitize-ignorelist=tests/ubsan.ignorelist
ubsan: deps
	@$(MAKE) --no-print-directory BUILD=build-ubsan NVCC= CC=clang CXX=clang++ \
	  OPT="-O1 -g -fno-omit-frame-pointer" SAN="$(UBSAN_FLAGS)" all
	@BUILD=build-ubsan UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 bash tests/run-tests.sh

# libFuzzer: every tests/fuzz/fuzz_*.c (picked up by wildcard; the loaders' harnesses and the HTTP
# request one) against a libgpath built for coverage, each run FUZZ_SECONDS on a copy of its
# committed corpus tests/fuzz/corpus/NAME/; any crash, leak or UB report fails. A longer hunt:
# make fuzz FUZZ_SECONDS=600.
FUZZ_SECONDS ?= 8
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr,function \
            -fno-sanitize-recover=undefined
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build-fuzz NVCC= CC=clang CXX=clang++ \
	  OPT="-O1 -g -fno-omit-frame-pointer" SAN="$(FUZZ_SAN)" fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh build-fuzz
fuzz-build: $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/libgpath.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< $(BUILD)/libgpath.a $(LDLIBS)

bench: deps
	@$(MAKE) --no-print-directory OPT="-O3 -g" all
	@BUILD=$(BUILD) bash bench/run-cpu.sh

bench-gpu:
	@$(MAKE) --no-print-directory OPT="-O3 -g" all
	@BUILD=$(BUILD) bash bench/run-gpu.sh

# every C, C++ and CUDA file git tracks, in the layout of .clang-format (make lint checks it)
format:
	git ls-files -z '*.c' '*.h' '*.cu' '*.cuh' '*.cpp' | xargs -0 clang-format -i

clean:
	rm -rf build build-*

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
