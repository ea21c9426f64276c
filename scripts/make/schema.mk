# One JSON schema (docs/schema/): what the tests of test-kernel and
# test-daemon received (their JSON logs, tests/kernel/json_log.h) and every
# ```json example in the docs, checked against it. Included by the
# Makefile; $(BUILD) and $(JSON_LOG_DIR) are defined by then.
#
# test-schema runs after both suites in the same make (it depends on
# them); `make json-schema-check` checks the logs an earlier run left, and
# `make docs-json-check` only the docs' examples against the schemas.

SCHEMA_DOCS := README.md HACKING.md $(wildcard docs/*.md)
SCHEMA_CHECK := python3 scripts/json-schema-check.py --schemas docs/schema --docs $(SCHEMA_DOCS)

.PHONY: test-schema json-schema-check docs-json-check

test-schema: test-kernel test-daemon
	$(MAKE) --no-print-directory BUILD=$(BUILD) json-schema-check

json-schema-check: | $(DEPS_STAMP)
	$(SCHEMA_CHECK) -- $(JSON_LOG_DIR)/kernel.jsonl $(JSON_LOG_DIR)/daemon.jsonl

docs-json-check: | $(DEPS_STAMP)
	$(SCHEMA_CHECK)

CHECK_EXTRA += test-schema
