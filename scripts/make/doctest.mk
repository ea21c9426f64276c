# Docs that run (scripts/doc-test.py). The blocks of README.md and
# docs/operators.md run in make test-system's VM, the only place their
# commands may act (they load execgate at the cgroup root); here, on the
# host and without root, doc-test-check makes sure every fenced block of
# both files carries a doc-test marker that parses (an unmarked block fails,
# so new docs cannot escape the VM run) and runs the runner's self-test
# (tests/doctest/: blocks that must pass, and blocks that must fail naming
# their file and line).
DOC_TEST_FILES := README.md docs/operators.md

.PHONY: doc-test-check
doc-test-check: | $(DEPS_STAMP)
	python3 scripts/doc-test.py check $(DOC_TEST_FILES)
	python3 scripts/doc-test.py selftest

CHECK_EXTRA += doc-test-check
