/*
 * The fields CSV and JSON share, each written by one function: CSV puts
 * a comma between them, JSON its key.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "fields.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The fields CSV and JSON share are written by one function each: CSV
 * puts a comma between them, JSON its key. */

void csv_string(FILE *out, const char *s)
{
	if (strpbrk(s, ",\"\n") == NULL) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

void json_list(FILE *out, const struct size_list *list)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i < list->count; i++)
		fprintf(out, "%s%zu", i ? ", " : "", list->value[i]);
	fputc(']', out);
}

void json_number(FILE *out, double value)
{
	if (value > 0)
		fprintf(out, "%.4f", value);
	else
		fputs("null", out);
}

/* Before a field: CSV a comma, JSON ", " and the key; the first of a
 * group has no separator. */
void field_key(FILE *out, enum format f, const char *key, int first)
{
	if (f == FORMAT_JSON)
		fprintf(out, "%s\"%s\": ", first ? "" : ", ", key);
	else if (!first)
		fputc(',', out);
}

void field_text(FILE *out, enum format f, const char *key, int first,
                const char *value)
{
	field_key(out, f, key, first);
	if (f == FORMAT_JSON)
		json_string(out, value);
	else
		csv_string(out, value);
}

void field_size(FILE *out, enum format f, const char *key, size_t value)
{
	field_key(out, f, key, 0);
	fprintf(out, "%zu", value);
}

/* JSON true or false, CSV 1 or 0. */
void field_bool(FILE *out, enum format f, const char *key, int value)
{
	field_key(out, f, key, 0);
	if (f == FORMAT_JSON)
		fputs(value ? "true" : "false", out);
	else
		fprintf(out, "%d", value ? 1 : 0);
}

/* The row's workload, case, allocator, status, message and note. */
void row_identity(FILE *out, enum format f, const struct row *row)
{
	field_text(out, f, "workload", 1, workload_names[row->c.workload]);
	field_text(out, f, "case", 0, row->label);
	field_text(out, f, "allocator", 0, allocator_names[row->c.allocator]);
	field_text(out, f, "status", 0, row_status_name(row->status));
	field_text(out, f, "message", 0, row->message);
	field_text(out, f, "note", 0, row->note ? row->note : "");
}

/* Where the row's allocation functions came from. */
static const struct {
	const char *key;
	size_t offset;
} row_sources[] = {
    {"symbol", offsetof(struct row, symbol)},
    {"source", offsetof(struct row, source)},
    {"free_symbol", offsetof(struct row, free_symbol)},
    {"free_source", offsetof(struct row, free_source)},
    {"fallback_symbol", offsetof(struct row, fallback_symbol)},
    {"fallback_source", offsetof(struct row, fallback_source)},
    {"version", offsetof(struct row, version)},
};

void row_source_fields(FILE *out, enum format f, const struct row *row)
{
	size_t k;

	for (k = 0; k < sizeof(row_sources) / sizeof(row_sources[0]); k++)
		field_text(out, f, row_sources[k].key, k == 0,
		           (const char *)row + row_sources[k].offset);
}

/* Every parameter of the row's case. */
void case_fields(FILE *out, enum format f, const struct bench_case *c)
{
	char text[LIST_MAX * 24];
	size_t k;

	field_key(out, f, "seed", 1);
	fprintf(out, "%" PRIu64, c->seed);
	field_size(out, f, "size", c->size);
	field_size(out, f, "block_size", c->block_size);
	field_size(out, f, "blocks", c->blocks);
	field_size(out, f, "n", c->n);
	field_size(out, f, "len", c->len);
	field_key(out, f, "lens", 0);
	if (f == FORMAT_JSON) {
		json_list(out, &c->lens);
	} else {
		format_list(&c->lens, ";", text, sizeof(text));
		fputs(text, out);
	}
	field_size(out, f, "threads", c->threads);
	field_size(out, f, "clients", c->clients);
	field_size(out, f, "buffers", c->buffers);
	field_size(out, f, "rounds", c->rounds);
	if (c->workload == WORKLOAD_LIGHTTPD)
		format_order(c, text, sizeof(text));
	else
		text[0] = '\0';
	if (f == FORMAT_CSV)
		for (k = 0; text[k]; k++)
			if (text[k] == ',')
				text[k] = ';';
	field_text(out, f, "order", 0, text);
	field_bool(out, f, "rolling", c->rolling);
	field_size(out, f, "queue_depth", c->queue_depth);
	field_size(out, f, "repeat", c->repeat);
	field_key(out, f, "duration_s", 0);
	fprintf(out, "%g", c->duration);
	field_bool(out, f, "cold", c->cold);
}

/* The counted runs' ns per operation. */
void print_samples(FILE *out, const struct row *row, const char *separator)
{
	size_t k;

	for (k = 0; k < row->runs; k++)
		fprintf(out, "%s%.3f", k ? separator : "", row->ns_per_op[k]);
}

/* The keys of the latency points in CSV and JSON. */
const char *const latency_keys[LATENCY_POINTS] = {"p50", "p99", "p999", "p9999",
                                                  "max"};
