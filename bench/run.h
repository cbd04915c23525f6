/*
 * How the driver runs its rows (run.c): each run of each row in a worker
 * process of its own, the allocators of a case interleaved.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_RUN_H
#define BENCH_RUN_H

#include <stddef.h>

#include "driver.h"

/* Runs the warm-up and counted runs of every row, found in directory,
 * taking each run's results into its row. */
void measure(const struct options *o, const char *directory, struct row *rows,
             size_t count);

#endif /* BENCH_RUN_H */
