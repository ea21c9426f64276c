/* SPDX-License-Identifier: Apache-2.0 */
/* One parser for the identity flags, so that issue, check and install spell,
 * validate and default them the same way. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "frontend/identity_opts.h"
#include "core/identity.h"
#include "core/ids.h"
#include "execgate/verdict.h"

void eg_identity_opts_init(struct eg_identity_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rec.id.substrate = EG_SUBSTRATE_FC_HOST;
}

static const struct {
	const char *name;
	unsigned flag;
} flags[] = {
    {"sandbox", EG_IDF_SANDBOX},
    {"worker", EG_IDF_WORKER},
    {"generation", EG_IDF_GENERATION},
    {"activation", EG_IDF_ACTIVATION},
    {"pod-uid", EG_IDF_POD_UID},
    {"substrate", EG_IDF_SUBSTRATE},
    {"retired-below", EG_IDF_RETIRED_BELOW},
    {"service-port", EG_IDF_SERVICE_PORT},
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static int bad(char *err, size_t err_size, const char *name, const char *value, const char *why)
{
	snprintf(err, err_size, "--%s '%s': %s", name, value, why);
	return -EINVAL;
}

static int parse_uuid(const char *name, const char *value, uint8_t out[EG_ID_BYTES], bool nonzero,
		      char *err, size_t err_size)
{
	if (eg_uuid_parse(value, out) != 0)
		return bad(err, err_size, name, value, "not a UUID (8-4-4-4-12 hex digits)");
	if (nonzero && eg_id_is_zero(out))
		return bad(err, err_size, name, value, "must not be all-zero");
	return 0;
}

static int parse_num(const char *name, const char *value, uint64_t max, uint64_t *out, char *err,
		     size_t err_size)
{
	char why[128];
	int ret = eg_parse_u64(value, max, out);

	if (ret == -ERANGE) {
		snprintf(why, sizeof(why),
			 max == EG_GENERATION_MAX ? "above the largest generation %llu (2^53-1)"
						  : "above %llu",
			 (unsigned long long)max);
		return bad(err, err_size, name, value, why);
	}
	if (ret != 0)
		return bad(err, err_size, name, value, "not an unsigned decimal number");
	return 0;
}

int eg_identity_opt(struct eg_identity_opts *o, const char *name, const char *value, char *err,
		    size_t err_size)
{
	struct eg_record *r = &o->rec;
	unsigned flag = 0;
	uint64_t v;
	int ret = 0;

	for (size_t i = 0; i < NFLAGS; i++)
		if (!strcmp(name, flags[i].name))
			flag = flags[i].flag;
	if (!flag)
		return 0;
	if (!value)
		value = "";
	if ((o->seen & flag) && flag != EG_IDF_SERVICE_PORT)
		return bad(err, err_size, name, value, "given twice");

	switch (flag) {
	case EG_IDF_SANDBOX:
		ret = parse_uuid(name, value, r->id.sandbox, true, err, err_size);
		break;
	case EG_IDF_WORKER:
		ret = parse_uuid(name, value, r->id.worker, true, err, err_size);
		break;
	case EG_IDF_POD_UID:
		ret = parse_uuid(name, value, r->id.pod_uid, false, err, err_size);
		break;
	case EG_IDF_GENERATION:
		ret = parse_num(name, value, EG_GENERATION_MAX, &r->id.generation, err, err_size);
		break;
	case EG_IDF_ACTIVATION:
		ret = parse_num(name, value, UINT32_MAX, &v, err, err_size);
		if (!ret)
			r->id.activation = (uint32_t)v;
		break;
	case EG_IDF_RETIRED_BELOW:
		ret = parse_num(name, value, EG_GENERATION_MAX, &r->retired_below, err, err_size);
		break;
	case EG_IDF_SUBSTRATE:
		if (eg_substrate_parse(value, &r->id.substrate) != 0)
			ret = bad(err, err_size, name, value,
				  "unknown substrate (firecracker-k8s, firecracker-host)");
		break;
	case EG_IDF_SERVICE_PORT: {
		uint16_t port;
		uint8_t proto;

		if (eg_port_parse(value, &port, &proto) != 0)
			return bad(err, err_size, name, value, "not PORT/tcp or PORT/udp");
		for (unsigned i = 0; i < r->nports; i++)
			if (r->ports[i].port == port && r->ports[i].proto == proto)
				return bad(err, err_size, name, value, "given twice");
		if (r->nports >= EG_RECORD_MAX_PORTS) {
			char why[64];

			snprintf(why, sizeof(why), "too many ports (at most %d)",
				 EG_RECORD_MAX_PORTS);
			return bad(err, err_size, name, value, why);
		}
		r->ports[r->nports].port = port;
		r->ports[r->nports].proto = proto;
		r->nports++;
		break;
	}
	}
	if (ret)
		return ret;
	o->seen |= flag;
	return 1;
}

int eg_identity_opts_finish(const struct eg_identity_opts *o, unsigned required, char *err,
			    size_t err_size)
{
	for (size_t i = 0; i < NFLAGS; i++) {
		if ((required & flags[i].flag) && !(o->seen & flags[i].flag)) {
			snprintf(err, err_size, "missing --%s", flags[i].name);
			return -EINVAL;
		}
	}
	if ((o->seen & EG_IDF_GENERATION) && o->rec.retired_below > o->rec.id.generation) {
		snprintf(err, err_size, "--retired-below %llu is above --generation %llu",
			 (unsigned long long)o->rec.retired_below,
			 (unsigned long long)o->rec.id.generation);
		return -EINVAL;
	}
	return 0;
}

void eg_identity_opts_spec(const struct eg_identity_opts *o, struct eg_install_spec *spec)
{
	eg_identity_to_spec(spec, &o->rec.id);
	EG_PORTS_COPY(spec->ports, spec->n_ports, o->rec.ports, o->rec.nports);
}
