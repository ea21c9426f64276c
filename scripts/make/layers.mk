# Imports point one way (HACKING.md, "The layers"): front ends -> lib ->
# loader -> core -> public headers. `make` fails when a file includes a
# header of a layer it may not use:
#  - the front ends (user/{execgate,daemon,bridge,demo}) use libexecgate's
#    public headers (include/execgate/) and their own plumbing
#    (user/frontend/), never the library's insides (user/loader, user/core);
#  - user/loader is below the library: never user/lib, user/frontend,
#    user/client or a front end's header;
#  - user/core is pure logic below both: never user/loader, user/lib,
#    user/frontend or user/client.
# LAYERS_RULES: DIR=REGEX, the include prefixes DIR's files may not use.
# LAYERS_ALLOWED: FILE:HEADER includes that are allowed all the same, each
# with its reason in HACKING.md ("Exceptions"):
#  - user/demo/frontend.c plays the control plane in the two-worker demo:
#    it signs capabilities and key sets and verifies signed verdicts with
#    the core codecs the control plane's own tools use, because
#    libexecgate is the worker's library and has (on purpose) no call that
#    signs anything.
# user/issue (execgate-issue) is not a front end of the library: it is the
# control plane's signer, the one program that holds a secret key, and it
# links only core/ and frontend/, never libexecgate, so it is not listed.
LAYERS_FRONTENDS := user/execgate user/daemon user/bridge user/demo
LAYERS_RULES := $(addsuffix =(loader|core)/,$(LAYERS_FRONTENDS)) \
	user/loader=(lib|frontend|client|daemon|bridge|demo|issue)/ \
	user/core=(loader|lib|frontend|client|daemon|bridge|demo|issue)/
LAYERS_ALLOWED := user/demo/frontend.c:core/capability.h user/demo/frontend.c:core/keyset.h \
	user/demo/frontend.c:core/signed_verdict.h
LAYERS_DIRS := $(foreach r,$(LAYERS_RULES),$(firstword $(subst =, ,$(r))))
LAYERS_SRCS := $(wildcard $(addsuffix /*.[ch],$(LAYERS_DIRS)))

$(BUILD)/.layers-ok: $(LAYERS_SRCS) scripts/make/layers.mk
	@mkdir -p $(@D)
	@bad=$$(for r in $(foreach r,$(LAYERS_RULES),'$(r)'); do \
		d=$${r%%=*}; re=$${r#*=}; \
		grep -HEo "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]$$re[^\">]+" \
			$$d/*.[ch] 2>/dev/null; \
	done | sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/:/' | \
		grep -vxF $(patsubst %,-e %,$(LAYERS_ALLOWED)) || true); \
	if [ -n "$$bad" ]; then \
		echo "layers: an include points against the layers (HACKING.md, \"The layers\"):" >&2; \
		echo "$$bad" | sed 's/^/  /' >&2; exit 1; \
	fi
	@touch $@

.PHONY: check-layers
check-layers: $(BUILD)/.layers-ok
all: $(BUILD)/.layers-ok
