/* SPDX-License-Identifier: Apache-2.0 */
/* struct eg_audit (execgate/admin.h) inside the library: the aggregate and
 * the lock that its feeder and its readers share. */
#ifndef EXECGATE_LIB_AUDIT_H
#define EXECGATE_LIB_AUDIT_H

#include <pthread.h>
#include "core/audit_agg.h"

struct eg_audit {
	pthread_mutex_t mu;
	struct eg_audit_agg agg;
};

#endif
