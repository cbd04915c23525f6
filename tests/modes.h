/*
 * The name of a pool mode, for failure messages: shared by the Check
 * suites (tests/testutil.c) and the stress programs (tests/concurrency.c),
 * so it needs neither Check nor threads.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_MODES_H
#define SHIFTPOOL_MODES_H

#include "shiftpool.h"

/* "single", "locked", "per-thread", or "invalid": flags' mode bits. */
const char *mode_name(int flags);

#endif /* SHIFTPOOL_MODES_H */
