/*
 * The fields CSV and JSON share (fields.c): each is written by one
 * function, which CSV separates with a comma and JSON with its key.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_REPORT_FIELDS_H
#define BENCH_REPORT_FIELDS_H

#include <stdio.h>

#include "report.h"

enum format { FORMAT_CSV, FORMAT_JSON };

/* The keys of the latency points, in latency_quantiles order. */
extern const char *const latency_keys[LATENCY_POINTS];

/* A CSV cell, quoted when it must be. */
void csv_string(FILE *out, const char *s);
/* A JSON string, escaped. */
void json_string(FILE *out, const char *s);
/* A JSON array of the list's values. */
void json_list(FILE *out, const struct size_list *list);
/* A positive value, else null. */
void json_number(FILE *out, double value);
/* Before a field: CSV a comma, JSON ", " and the key; the first of a
 * group has no separator. */
void field_key(FILE *out, enum format f, const char *key, int first);
void field_text(FILE *out, enum format f, const char *key, int first,
                const char *value);
void field_size(FILE *out, enum format f, const char *key, size_t value);
/* JSON true or false, CSV 1 or 0. */
void field_bool(FILE *out, enum format f, const char *key, int value);
/* The row's workload, case, allocator, status, message and note. */
void row_identity(FILE *out, enum format f, const struct row *row);
/* Where the row's allocation functions came from. */
void row_source_fields(FILE *out, enum format f, const struct row *row);
/* Every parameter of the row's case. */
void case_fields(FILE *out, enum format f, const struct bench_case *c);
/* The counted runs' ns per operation, separator between them. */
void print_samples(FILE *out, const struct row *row, const char *separator);

#endif /* BENCH_REPORT_FIELDS_H */
