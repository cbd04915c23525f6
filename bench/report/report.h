/*
 * The driver's outputs (report/): the table for people (table.c), CSV and
 * JSON for machines (csv.c, json.c, with the fields they share in
 * fields.c), the charts (plot.c) and the words every output uses
 * (describe.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdio.h>

#include "../driver.h"

/* table.c, csv.c, json.c: the whole run, with the machine, the command
 * line and every parameter. */
void report_table(FILE *out, const struct run_info *info,
                  const struct row *rows, size_t count);
void report_csv(FILE *out, const struct run_info *info, const struct row *rows,
                size_t count);
void report_json(FILE *out, const struct run_info *info, const struct row *rows,
                 size_t count);
const char *row_status_name(enum row_status status);
/* The parameters of a row's workload, in words, e.g. "pool 1024 x 1024 B". */
void row_describe(const struct row *row, char *buf, size_t size);

/* plot.c: PNG charts into dir with gnuplot.  Returns 0, or -1 after
 * printing the reason. */
int plot_all(const char *dir, const struct run_info *info,
             const struct row *rows, size_t count);

/* replot.c: --plot-from: the charts of an earlier run's --csv file into
 * dir, running nothing.  Returns 0, or -1 after printing the reason. */
int plot_from_csv(const char *csv, const char *dir);

/* describe.c: the list's values with separator between them. */
void format_list(const struct size_list *list, const char *separator, char *buf,
                 size_t size);
/* describe.c: the case's order, "random" or its list. */
void format_order(const struct bench_case *c, char *buf, size_t size);
/* describe.c, mixed: what a set's classes hand out over what was asked
 * for, or 0. */
double mixed_rounding(const struct row *row);
/* describe.c: value, or otherwise when it is 0. */
void print_size_or(FILE *out, size_t value, const char *otherwise);

/* describe.c: a rate, e.g. 46.9M, 812k. */
void format_rate(double per_second, char *buf, size_t size);
/* describe.c: ns with three significant digits. */
void format_ns(double ns, char *buf, size_t size);
/* describe.c: a ratio, "-" for none. */
void format_ratio(double ratio, char *buf, size_t size);
/* describe.c: the % of the row's allocations the fallback served. */
double fallback_share(const struct row *row);
/* describe.c: the pool's modes and the sets, which report fallbacks. */
int is_pool(enum allocator allocator);

#endif /* BENCH_REPORT_H */
