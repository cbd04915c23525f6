/*
 * Pool mode names; see modes.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "modes.h"

const char *mode_name(int flags)
{
	switch (flags & POOL_MODE_MASK) {
	case POOL_SINGLE:
		return "single";
	case POOL_LOCKED:
		return "locked";
	case POOL_PER_THREAD:
		return "per-thread";
	default:
		return "invalid";
	}
}
