# The fleet's signed documents (docs/fleet.md): the CLI test through the
# real execgate-issue. Included by the Makefile; $(BUILD) and $(BINS) are
# defined by then.

.PHONY: test-fleet-cli

# No root: everything happens under a temporary directory.
test-fleet-cli: $(BINS)
	BUILD=$(BUILD) ./scripts/test-fleet-cli.sh

CHECK_EXTRA += test-fleet-cli
