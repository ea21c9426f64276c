# The ABI of libexecgate.so, checked in (abi/libexecgate.abi) and compared
# with the library just built: any change to an exported function or to a
# type it reaches fails `make abi-check` (part of `make check`). To change
# the ABI on purpose: move the soname (SOMAJOR, and the version script's
# node) for an incompatible change, say why in docs/CHANGELOG.md, and run
# `make abi-dump` (docs/api.md, "ABI stability").
#
# abidw reads the .so's DWARF and keeps only the types the installed
# headers define (the opaque handles stay declarations): the headers are
# copied to a directory of their own, so that the kernel layout
# (bpf/abi/), which is not installed, counts as private.
ABI_DUMP := abi/libexecgate.abi
ABI_HEADERS := $(BUILD)/abi-headers/execgate
ABIDW_FLAGS := --drop-private-types --no-corpus-path --no-comp-dir-path --short-locs \
	--type-id-style hash
.PHONY: abi-check abi-dump test-abi

# The library abi-check compares: the one just built, or (scripts/
# test-abi-check.sh) a changed copy that must fail.
ABI_SOLIB ?= $(SOLIB)

$(ABI_HEADERS)/.stamp: $(PUBLIC_HEADERS)
	rm -rf $(@D)
	mkdir -p $(@D)
	cp $(PUBLIC_HEADERS) $(@D)/
	@touch $@

abi-dump: $(SOLIB) $(ABI_HEADERS)/.stamp | $(DEPS_STAMP)
	@mkdir -p $(dir $(ABI_DUMP))
	abidw --hd $(ABI_HEADERS) $(ABIDW_FLAGS) --out-file $(ABI_DUMP) $(SOLIB)

# abidiff's exit status is a bit mask; any bit (an error, a change, an
# incompatible change) fails the check.
abi-check: $(ABI_SOLIB) $(ABI_HEADERS)/.stamp | $(DEPS_STAMP)
	@! grep -nE '^#include .*(abi\.h|<linux/|<asm/)' $(PUBLIC_HEADERS) || { \
		echo "abi-check: a public header includes the maps' layout or a kernel header" >&2; \
		exit 1; }
	@abidiff --hd2 $(ABI_HEADERS) --drop-private-types $(ABI_DUMP) $(ABI_SOLIB) || { \
		echo "abi-check: $(ABI_SOLIB) differs from $(ABI_DUMP) (above). An intended" \
		     "change: see docs/api.md, \"ABI stability\"." >&2; exit 1; }
	@echo "abi-check: $(notdir $(ABI_SOLIB)) matches $(ABI_DUMP)"

# abi-check must be able to fail: a library with one exported call more,
# and one whose public struct grew, are each refused (and the library as
# built passes). Part of `make check`.
test-abi: $(SOLIB) $(CORE_OBJS) $(LOADER_OBJS) $(WORKER_OBJS) $(ABI_HEADERS)/.stamp | $(DEPS_STAMP)
	BUILD='$(BUILD)' CC='$(CC)' CFLAGS='$(CFLAGS)' CPPFLAGS='$(CPPFLAGS)' LDLIBS='$(LDLIBS)' \
		SOMAJOR='$(SOMAJOR)' SOLIB='$(SOLIB)' \
		LIB_OBJS='$(CORE_OBJS) $(LOADER_OBJS) $(WORKER_OBJS)' scripts/test-abi-check.sh
