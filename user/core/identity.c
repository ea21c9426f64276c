/* SPDX-License-Identifier: Apache-2.0 */
/* The identity's conversions (core/identity.h): each outside layout is
 * turned into struct eg_identity, and back, here and nowhere else. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "abi/abi.h"
#include "core/identity.h"
#include "core/ids.h"
#include "execgate/execgate.h"

_Static_assert(sizeof(((struct eg_identity *)0)->substrate) == 1,
	       "eg_identity.substrate: the codecs' one byte (core/identity.h)");
_Static_assert(sizeof(((struct eg_install_spec *)0)->substrate) ==
		   sizeof(((struct eg_identity *)0)->substrate),
	       "eg_install_spec.substrate: the internal width, nothing to refuse");

/* Both wider layouts name the same field; one check serves them. */
static int substrate_fits(uint32_t wide, const uint8_t sandbox[EG_ID_BYTES], const char *where,
			  char *err, size_t err_size)
{
	char s[EG_UUID_TEXT_LEN];

	if (wide <= UINT8_MAX)
		return 0;
	eg_uuid_format(sandbox, s);
	snprintf(err, err_size,
		 "sandbox %s: %s holds substrate %u, above %u: refused, not truncated "
		 "(core/identity.h)",
		 s, where, wide, (unsigned)UINT8_MAX);
	return -ERANGE;
}

#define IDENTITY_IN(id, src)                                                                       \
	do {                                                                                       \
		memcpy((id)->sandbox, (src)->sandbox, EG_ID_BYTES);                                \
		memcpy((id)->worker, (src)->worker, EG_ID_BYTES);                                  \
		memcpy((id)->pod_uid, (src)->pod_uid, EG_ID_BYTES);                                \
		(id)->substrate = (uint8_t)(src)->substrate;                                       \
		(id)->generation = (src)->generation;                                              \
		(id)->activation = (src)->activation;                                              \
	} while (0)
#define IDENTITY_OUT(dst, id)                                                                      \
	do {                                                                                       \
		memcpy((dst)->sandbox, (id)->sandbox, EG_ID_BYTES);                                \
		memcpy((dst)->worker, (id)->worker, EG_ID_BYTES);                                  \
		memcpy((dst)->pod_uid, (id)->pod_uid, EG_ID_BYTES);                                \
		(dst)->substrate = (id)->substrate;                                                \
		(dst)->generation = (id)->generation;                                              \
		(dst)->activation = (id)->activation;                                              \
	} while (0)

int eg_identity_from_exec(struct eg_identity *id, const struct eg_exec_record *k, char *err,
			  size_t err_size)
{
	int rc;

	memset(id, 0, sizeof(*id));
	rc = substrate_fits(k->substrate, k->sandbox, "eg_records", err, err_size);
	if (rc)
		return rc;
	IDENTITY_IN(id, k);
	return 0;
}

void eg_identity_to_exec(struct eg_exec_record *k, const struct eg_identity *id)
{
	IDENTITY_OUT(k, id);
}

int eg_identity_from_runtime(struct eg_identity *id, const struct eg_runtime_record *r, char *err,
			     size_t err_size)
{
	int rc;

	memset(id, 0, sizeof(*id));
	rc = substrate_fits(r->substrate, r->sandbox, "the runtime record", err, err_size);
	if (rc)
		return rc;
	IDENTITY_IN(id, r);
	return 0;
}

void eg_identity_to_runtime(struct eg_runtime_record *r, const struct eg_identity *id)
{
	IDENTITY_OUT(r, id);
}

void eg_identity_from_spec(struct eg_identity *id, const struct eg_install_spec *s)
{
	IDENTITY_IN(id, s);
}

void eg_identity_to_spec(struct eg_install_spec *s, const struct eg_identity *id)
{
	IDENTITY_OUT(s, id);
}
