/* SPDX-License-Identifier: Apache-2.0 */
/* Text forms of identifiers and the shared identity flags. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include "frontend/identity_opts.h"
#include "core/ids.h"
#include "core/vsock_cid.h"
#include "execgate/verdict.h"
#include "helpers.h"

Test(ids, uuid_parse_and_format)
{
	uint8_t id[EG_ID_BYTES];
	char text[EG_UUID_TEXT_LEN];

	cr_assert_eq(eg_uuid_parse("5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7", id), 0);
	cr_assert_arr_eq(id, SANDBOX_S, EG_ID_BYTES);
	cr_assert_eq(eg_uuid_parse("5F0C1A2B-3C4D-4E5F-8091-A2B3C4D5E6F7", id), 0);
	eg_uuid_format(id, text);
	cr_assert_str_eq(text, "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7");

	static const char *const bad[] = {
	    "",
	    "5f0c1a2b3c4d4e5f8091a2b3c4d5e6f7",
	    "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f",
	    "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f77",
	    "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6fg",
	    "5f0c1a2b-3c4d-4e5f-8091_a2b3c4d5e6f7",
	    "{5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f}",
	    " 5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f",
	    "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(eg_uuid_parse(bad[i], id), -EINVAL, "'%s'", bad[i]);
}

Test(ids, key_id_text)
{
	uint8_t kid[EG_KEY_ID_LEN] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}, back[8];
	char text[EG_KID_TEXT_LEN];

	eg_key_id_format(kid, text);
	cr_assert_str_eq(text, "0123456789abcdef");
	cr_assert_eq(eg_key_id_parse(text, back), 0);
	cr_assert_arr_eq(back, kid, 8);
	cr_assert_eq(eg_key_id_parse("0123456789abcde", back), -EINVAL);
	cr_assert_eq(eg_key_id_parse("0123456789abcdeg", back), -EINVAL);
}

Test(ids, scope_lists)
{
	uint32_t s;
	char text[128];

	cr_assert_eq(eg_scope_parse("file.read", &s), 0);
	cr_assert_eq(s, EG_SCOPE_FILE_READ);
	cr_assert_eq(
	    eg_scope_parse("file.read,file.write,exec,terminal,watch,control,serviceport", &s), 0);
	cr_assert_eq(s, EG_SCOPE_ALL);
	eg_scope_format(s, text, sizeof(text));
	cr_assert_str_eq(text, "file.read,file.write,exec,terminal,watch,control,serviceport");
	cr_assert_eq(eg_scope_parse("exec,exec", &s), 0);
	cr_assert_eq(s, EG_SCOPE_EXEC);
	static const char *const bad[] = {
	    "", ",", "exec,", ",exec", "Exec", "exec ,file.read", "file", "file.readx", "all"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(eg_scope_parse(bad[i], &s), -EINVAL, "'%s'", bad[i]);
	cr_assert_eq(eg_scope_format(EG_SCOPE_EXEC | 0x100, text, sizeof(text)),
		     (int)strlen("exec,reserved:0x100"));
	cr_assert_str_eq(text, "exec,reserved:0x100");
	/* Truncates safely and still reports the full length. */
	cr_assert_eq(eg_scope_format(EG_SCOPE_ALL, text, 5),
		     (int)strlen("file.read,file.write,exec,terminal,watch,control,serviceport"));
	cr_assert_str_eq(text, "file");
}

Test(ids, substrate_port_number)
{
	uint8_t sub, proto;
	uint16_t port;
	uint64_t v;

	cr_assert_eq(eg_substrate_parse("firecracker-k8s", &sub), 0);
	cr_assert_eq(sub, EG_SUBSTRATE_FC_K8S);
	cr_assert_eq(eg_substrate_parse("firecracker-host", &sub), 0);
	cr_assert_eq(sub, EG_SUBSTRATE_FC_HOST);
	cr_assert_eq(eg_substrate_parse("k8s", &sub), -EINVAL);
	cr_assert_str_eq(eg_substrate_name(EG_SUBSTRATE_FC_K8S), "firecracker-k8s");
	cr_assert_str_eq(eg_substrate_name(9), "unknown");

	cr_assert_eq(eg_port_parse("8080/tcp", &port, &proto), 0);
	cr_assert_eq(port, 8080);
	cr_assert_eq(proto, EG_PROTO_TCP);
	cr_assert_eq(eg_port_parse("65535/udp", &port, &proto), 0);
	cr_assert_eq(proto, EG_PROTO_UDP);
	static const char *const bad[] = {"8080",     "0/tcp",	     "65536/tcp", "80/sctp",
					  "/tcp",     "80/",	     "+80/tcp",	  "80/TCP",
					  "080 /tcp", "1234567/tcp", "80/tcp/x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(eg_port_parse(bad[i], &port, &proto), -EINVAL, "'%s'", bad[i]);

	cr_assert_eq(eg_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(eg_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(eg_parse_u64("4294967296", UINT32_MAX, &v), -ERANGE);
	cr_assert_eq(eg_parse_u64("7", 5, &v), -ERANGE);
	cr_assert_eq(eg_parse_u64("0", 0, &v), 0);
	cr_assert_eq(eg_parse_u64("-1", UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(eg_parse_u64(" 1", UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(eg_parse_u64("1x", UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(eg_parse_u64("", UINT64_MAX, &v), -EINVAL);
}

Test(ids, identity_options)
{
	struct eg_identity_opts o;
	char err[200];

	eg_identity_opts_init(&o);
	cr_assert_eq(o.rec.id.substrate, EG_SUBSTRATE_FC_HOST);
	cr_assert_eq(eg_identity_opt(&o, "sandbox", "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7", err,
				     sizeof(err)),
		     1);
	cr_assert_eq(eg_identity_opts_finish(&o, EG_IDF_REQUIRED, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "missing --worker");
	cr_assert_eq(
	    eg_identity_opt(&o, "worker", "aaaaaaaa-0000-4000-8000-00000000000a", err, sizeof(err)),
	    1);
	cr_assert_eq(eg_identity_opt(&o, "generation", "7", err, sizeof(err)), 1);
	cr_assert_eq(eg_identity_opt(&o, "activation", "4294967295", err, sizeof(err)), 1);
	cr_assert_eq(eg_identity_opts_finish(&o, EG_IDF_REQUIRED, err, sizeof(err)), 0);
	cr_assert_arr_eq(o.rec.id.sandbox, SANDBOX_S, EG_ID_BYTES);
	cr_assert_arr_eq(o.rec.id.worker, WORKER_A, EG_ID_BYTES);
	cr_assert_eq(o.rec.id.generation, 7);
	cr_assert_eq(o.rec.id.activation, UINT32_MAX);

	cr_assert_eq(eg_identity_opt(&o, "keys", "x", err, sizeof(err)), 0);
	cr_assert_eq(eg_identity_opt(&o, "generation", "8", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--generation '8': given twice");
	cr_assert_eq(eg_identity_opt(&o, "pod-uid", "nope", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--pod-uid 'nope': not a UUID (8-4-4-4-12 hex digits)");
	cr_assert_eq(eg_identity_opt(&o, "substrate", "qemu", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(
	    err, "--substrate 'qemu': unknown substrate (firecracker-k8s, firecracker-host)");
	cr_assert_eq(eg_identity_opt(&o, "substrate", "firecracker-k8s", err, sizeof(err)), 1);
	cr_assert_eq(o.rec.id.substrate, EG_SUBSTRATE_FC_K8S);

	cr_assert_eq(eg_identity_opt(&o, "service-port", "8080/tcp", err, sizeof(err)), 1);
	cr_assert_eq(eg_identity_opt(&o, "service-port", "53/udp", err, sizeof(err)), 1);
	cr_assert_eq(eg_identity_opt(&o, "service-port", "53/udp", err, sizeof(err)), -EINVAL);
	cr_assert_eq(o.rec.nports, 2);
	cr_assert_eq(o.rec.ports[1].port, 53);
	/* One name for the ServicePort profile: the old alias is no identity option. */
	cr_assert_eq(eg_identity_opt(&o, "profile-port", "80/tcp", err, sizeof(err)), 0);
	cr_assert_eq(o.rec.nports, 2);

	cr_assert_eq(eg_identity_opt(&o, "retired-below", "8", err, sizeof(err)), 1);
	cr_assert_eq(eg_identity_opts_finish(&o, EG_IDF_REQUIRED, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--retired-below 8 is above --generation 7");

	eg_identity_opts_init(&o);
	cr_assert_eq(eg_identity_opt(&o, "sandbox", "00000000-0000-0000-0000-000000000000", err,
				     sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "--sandbox '00000000-0000-0000-0000-000000000000': must not be "
			      "all-zero");
	cr_assert_eq(eg_identity_opt(&o, "pod-uid", "00000000-0000-0000-0000-000000000000", err,
				     sizeof(err)),
		     1);
	cr_assert_eq(eg_identity_opt(&o, "activation", "4294967296", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--activation '4294967296': above 4294967295");
	cr_assert_eq(eg_identity_opt(&o, "generation", "-1", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--generation '-1': not an unsigned decimal number");
	/* The generation ceiling (EG_GENERATION_MAX, 2^53 - 1), for the
	 * generation and for the bound below which generations are retired. */
	cr_assert_eq(eg_identity_opt(&o, "generation", "9007199254740992", err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "--generation '9007199254740992': above the largest generation "
			      "9007199254740991 (2^53-1)");
	cr_assert_eq(eg_identity_opt(&o, "retired-below", "9223372036854775807", err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(eg_identity_opt(&o, "generation", "9007199254740991", err, sizeof(err)), 1);
	cr_assert_eq(o.rec.id.generation, EG_GENERATION_MAX);
}

Test(ids, vsock_cids_that_are_never_a_guest)
{
	/* The hypervisor, the host, the wildcard. */
	cr_assert(eg_vsock_cid_never_guest(0));
	cr_assert(eg_vsock_cid_never_guest(2));
	cr_assert(eg_vsock_cid_never_guest(UINT32_MAX));
	/* vsock_loopback (docs/operators.md) and guests. */
	cr_assert(!eg_vsock_cid_never_guest(1));
	cr_assert(!eg_vsock_cid_never_guest(3));
	cr_assert(!eg_vsock_cid_never_guest(UINT32_MAX - 1));
}
