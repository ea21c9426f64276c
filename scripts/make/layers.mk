# The front ends use libexecgate's public headers (include/execgate/) and
# their own plumbing (user/frontend/), never the library's insides:
# `make` fails when user/{execgate,daemon,bridge,demo} include anything
# under user/loader or user/core. LAYERS_ALLOWED lists the includes still
# waiting for a public call, as FILE:HEADER; each is a debt to pay, not a
# pattern to copy.
LAYERS_FRONTENDS := user/execgate user/daemon user/bridge user/demo
LAYERS_ALLOWED := user/demo/frontend.c:core/capability.h user/demo/frontend.c:core/keyset.h \
	user/demo/frontend.c:core/signed_verdict.h
LAYERS_SRCS := $(wildcard $(addsuffix /*.[ch],$(LAYERS_FRONTENDS)))

$(BUILD)/.layers-ok: $(LAYERS_SRCS) scripts/make/layers.mk
	@mkdir -p $(@D)
	@bad=$$(grep -HEo '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](loader|core)/[^">]+' \
		$(LAYERS_SRCS) | sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/:/' | \
		grep -vxF $(patsubst %,-e %,$(LAYERS_ALLOWED)) || true); \
	if [ -n "$$bad" ]; then \
		echo "layers: a front end includes the library's insides (use include/execgate/):" >&2; \
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
LAYERS_LIB_SRCS := $(wildcard $(addsuffix /*.[ch],user/core user/loader user/lib))
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
