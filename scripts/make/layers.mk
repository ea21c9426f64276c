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
