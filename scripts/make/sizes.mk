# Small files with one job each (HACKING.md, "Habits"): `make` fails when a
# .c or .h under user/ passes USER_FILE_MAX_LINES lines. A file that grows
# past it holds more than one job: split it by job, into files whose names
# say what they hold (user/fleetd/apply_selection.c beside
# user/fleetd/selections.c, not worker2.c), not by raising the limit.
USER_FILE_MAX_LINES := 600
SIZES_SRCS := $(shell find user -name '*.[ch]' -type f 2>/dev/null | LC_ALL=C sort)

$(BUILD)/.sizes-ok: $(SIZES_SRCS) scripts/make/sizes.mk
	@mkdir -p $(@D)
	@bad=$$(find user -name '*.[ch]' -type f -exec wc -l {} + | \
		awk -v max=$(USER_FILE_MAX_LINES) '$$2 != "total" && $$1 > max { print $$2 ": " $$1 " lines" }' | \
		LC_ALL=C sort); \
	if [ -n "$$bad" ]; then \
		echo "sizes: a user/ source file has more than $(USER_FILE_MAX_LINES) lines; split it by job (scripts/make/sizes.mk):" >&2; \
		echo "$$bad" | sed 's/^/  /' >&2; exit 1; \
	fi
	@touch $@

.PHONY: check-sizes
check-sizes: $(BUILD)/.sizes-ok
all: $(BUILD)/.sizes-ok
