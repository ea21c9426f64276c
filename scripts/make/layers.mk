# Imports point one way (HACKING.md, "The layers"): front ends -> lib ->
# loader -> core -> public headers. `make` fails when a file includes a
# header of a layer it may not use:
#  - the front ends (user/{execgate,daemon,bridge,demo}) use libexecgate's
#    public headers (include/execgate/) and their own plumbing
#    (user/frontend/), never the library's insides (user/loader, user/core,
#    user/lib) nor the kernel layout (bpf/abi/, included as abi/). Of
#    user/lib they may include one header, lib/json.h, the one JSON writer
#    of the CLI's --json and of execgated's answers (LAYERS_FRONTEND_LIB):
#    it is written for them, in public types only. Beyond this grep, the
#    front ends compile without bpf/ on their include path (KABI_CPPFLAGS,
#    Makefile), so the kernel layout reached through any header fails too;
#  - user/loader is below the library: never user/lib, user/frontend,
#    user/client or a front end's header;
#  - user/core is pure logic below both: never user/loader, user/lib,
#    user/frontend or user/client;
#  - user/frontend (the programs' shared plumbing) and user/client (a
#    front end's route cache) sit on core and the public headers only, and
#    so does user/issue (below).
# LAYERS_RULES: DIR=REGEX, the include prefixes DIR's files may not use.
# LAYERS_ALLOWED: FILE:HEADER includes allowed all the same, each with its
# reason here and in HACKING.md. There are none: the demo's front end
# (user/demo/frontend.c) reaches capabilities and node keys only through
# the client library's calls (user/client/route_cache.h).
# user/issue (execgate-issue) may include core/, unlike a front end, on purpose: it
# is not a client of libexecgate but the control plane's signer, the one
# program that holds a secret key. It signs capabilities, selections and
# key sets with the core codecs (user/core/) that the workers decode with,
# so that both sides share one encoder/decoder pair, and it links only
# libexecgate-core.a and user/frontend/, never libexecgate, which has (on
# purpose) no call that signs anything.
LAYERS_FRONTENDS := user/execgate user/daemon user/bridge user/demo
LAYERS_FRONTEND_LIB := lib/json.h
LAYERS_NOTHING :=
LAYERS_SPACE := $(LAYERS_NOTHING) $(LAYERS_NOTHING)
LAYERS_FRONTENDS_RE := $(subst $(LAYERS_SPACE),|,$(LAYERS_FRONTENDS))
LAYERS_FRONTEND_LIB_RE := $(subst .,\.,$(subst $(LAYERS_SPACE),|,$(LAYERS_FRONTEND_LIB)))
LAYERS_RULES := $(addsuffix =(loader|core|lib|abi)/,$(LAYERS_FRONTENDS)) \
	user/loader=(lib|frontend|client|daemon|bridge|demo|issue)/ \
	user/core=(loader|lib|frontend|client|daemon|bridge|demo|issue)/ \
	user/frontend=(loader|lib|client)/ user/client=(loader|lib|frontend)/ \
	user/issue=(loader|lib|client)/
LAYERS_ALLOWED :=
LAYERS_DIRS := $(foreach r,$(LAYERS_RULES),$(firstword $(subst =, ,$(r))))
# A layer's files include those of its rooms (user/loader/tiers/, ...):
# every .c and .h under the directory, at any depth, so a file moved into
# a new subdirectory is still checked.
layers_files = $(shell find $(1) -name '*.[ch]' -type f 2>/dev/null | LC_ALL=C sort)
LAYERS_SRCS := $(call layers_files,$(LAYERS_DIRS))

# The front ends' objects: no kernel layout on their include path.
$(addsuffix /%.o,$(patsubst user/%,$(BUILD)/obj/%,$(LAYERS_FRONTENDS))): KABI_CPPFLAGS :=

$(BUILD)/.layers-ok: $(LAYERS_SRCS) scripts/make/layers.mk
	@mkdir -p $(@D)
	@bad=$$(for r in $(foreach r,$(LAYERS_RULES),'$(r)'); do \
		d=$${r%%=*}; re=$${r#*=}; \
		grep -rHEo --include='*.[ch]' \
			"^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]$$re[^\">]+" $$d; \
	done | sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/:/' | \
		grep -vxF -e '#none#' $(patsubst %,-e %,$(LAYERS_ALLOWED)) | \
		grep -vE '^($(LAYERS_FRONTENDS_RE))/[^/:]+:($(LAYERS_FRONTEND_LIB_RE))$$' || true); \
	if [ -n "$$bad" ]; then \
		echo "layers: an include points against the layers (HACKING.md, \"The layers\"):" >&2; \
		echo "$$bad" | sed 's/^/  /' >&2; exit 1; \
	fi
	@touch $@

.PHONY: check-layers
check-layers: $(BUILD)/.layers-ok
all: $(BUILD)/.layers-ok

# The fleet layer (user/fleet/: the etcd client and the ack rule) sits
# beside the library, not inside it: libcurl never reaches libexecgate.
# So nothing of libexecgate (user/core, user/loader, user/lib) includes
# fleet/, and user/fleet includes nothing of execgate's but its own headers
# (it must build and link on its own, into libexecgate-fleet.a).
LAYERS_LIB_SRCS := $(call layers_files,user/core user/loader user/lib)
LAYERS_FLEET_SRCS := $(wildcard user/fleet/*.[ch])

$(BUILD)/.layers-fleet-ok: $(LAYERS_LIB_SRCS) $(LAYERS_FLEET_SRCS) scripts/make/layers.mk
	@mkdir -p $(@D)
	@bad=$$(grep -HE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]fleet/' $(LAYERS_LIB_SRCS) || true); \
	if [ -n "$$bad" ]; then \
		echo "layers: libexecgate includes the fleet layer (libcurl stays out of it):" >&2; \
		echo "$$bad" | sed 's/^/  /' >&2; exit 1; \
	fi
	@bad=$$(grep -HEo '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' $(LAYERS_FLEET_SRCS) | \
		grep -vE '"fleet/[^"]+"$$' || true); \
	if [ -n "$$bad" ]; then \
		echo "layers: user/fleet includes beyond its own headers:" >&2; \
		echo "$$bad" | sed 's/^/  /' >&2; exit 1; \
	fi
	@touch $@

check-layers: $(BUILD)/.layers-fleet-ok
all: $(BUILD)/.layers-fleet-ok
