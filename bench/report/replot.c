/*
 * --plot-from=FILE: the charts of an earlier run, drawn from the CSV it
 * wrote (--csv=FILE) without running anything, so that the published
 * charts can be redrawn from the published data.  The CSV has every
 * figure the charts use; the machine (its CPU and how many CPUs, which
 * say which cases were oversubscribed) comes from the table or the JSON
 * beside it, FILE with .txt or .json for .csv, when there is one.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "fields.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 128

/* Splits a CSV line in place into its fields (RFC 4180 quoting); returns
 * how many. */
static size_t csv_split(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *p = line;

	while (n < max) {
		char *out = p, end;

		fields[n++] = out;
		if (*p == '"') {
			p++;
			for (;;) {
				if (p[0] == '"' && p[1] == '"') {
					*out++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else if (*p == '\0') {
					break;
				} else {
					*out++ = *p++;
				}
			}
		} else {
			while (*p != ',' && *p != '\0' && *p != '\n' &&
			       *p != '\r')
				*out++ = *p++;
		}
		end = *p;
		*out = '\0';
		if (end != ',')
			break;
		p++;
	}
	return n;
}

/* The columns of the file, by name. */
struct columns {
	char *names[MAX_FIELDS];
	size_t count;
};

static const char *field(const struct columns *columns, char **fields, size_t n,
                         const char *name)
{
	size_t i;

	for (i = 0; i < columns->count && i < n; i++)
		if (strcmp(columns->names[i], name) == 0)
			return fields[i];
	return "";
}

static int name_index(const char *const *names, int count, const char *name)
{
	int i;

	for (i = 0; i < count; i++)
		if (names[i] != NULL && strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* "1;2;4" (or commas) into a list. */
static void parse_list(const char *text, struct size_list *list)
{
	size_t values[LIST_MAX], n = 0;
	char *end;

	while (*text != '\0' && n < LIST_MAX) {
		values[n++] = strtoul(text, &end, 10);
		if (end == text)
			break;
		text = *end ? end + 1 : end;
	}
	list_set(list, values, n);
}

/* One CSV line into row; returns 0, or -1 for a workload or allocator
 * this bench does not know. */
static int row_from_fields(struct row *row, const struct columns *columns,
                           char **fields, size_t n)
{
	int workload = name_index(workload_names, WORKLOAD_COUNT,
	                          field(columns, fields, n, "workload"));
	int allocator = name_index(allocator_names, ALLOCATOR_COUNT,
	                           field(columns, fields, n, "allocator"));
	char key[32];
	int side, k;

#define NUMBER(name) strtod(field(columns, fields, n, name), NULL)
#define SIZE(name)   ((size_t)strtoull(field(columns, fields, n, name), NULL, 10))
	if (workload < 0 || allocator < 0)
		return -1;
	row->c.workload = (enum workload)workload;
	row->c.allocator = (enum allocator)allocator;
	snprintf(row->label, sizeof(row->label), "%s",
	         field(columns, fields, n, "case"));
	row->status = strcmp(field(columns, fields, n, "status"), "ok") == 0
	                  ? ROW_OK
	                  : ROW_FAILED;
	row->runs = SIZE("runs");
	row->median = NUMBER("ns_per_op_median");
	row->min = NUMBER("ns_per_op_min");
	row->max = NUMBER("ns_per_op_max");
	row->c.size = SIZE("size");
	row->c.block_size = SIZE("block_size");
	row->c.blocks = SIZE("blocks");
	row->c.n = SIZE("n");
	row->c.len = SIZE("len");
	row->c.threads = SIZE("threads");
	row->c.clients = SIZE("clients");
	row->c.buffers = SIZE("buffers");
	row->c.rounds = SIZE("rounds");
	row->c.rolling = (int)SIZE("rolling");
	parse_list(field(columns, fields, n, "lens"), &row->c.lens);
	for (side = 0; side < LATENCY_SIDES; side++)
		for (k = 0; k < LATENCY_POINTS; k++) {
			snprintf(key, sizeof(key), "%s_%s_ns",
			         latency_side_names[side], latency_keys[k]);
			row->latency_ns[side][k] = NUMBER(key);
		}
#undef NUMBER
#undef SIZE
	return 0;
}

/* The machine from the table beside the CSV ("machine:    CPU, N CPUs
 * online, ..."), else from the JSON beside it ("cpu": "CPU", then
 * "cpus_online": N). */
static void machine_beside(const char *csv, struct run_info *info)
{
	char path[4096], line[2048];
	size_t length = strlen(csv);
	int json;

	if (length < 4 || strcmp(csv + length - 4, ".csv") != 0 ||
	    length >= sizeof(path))
		return;
	for (json = 0; json < 2 && info->cpus == 0; json++) {
		FILE *in;
		snprintf(path, sizeof(path), "%.*s.%s", (int)(length - 4), csv,
		         json ? "json" : "txt");
		in = fopen(path, "r");
		if (in == NULL)
			continue;
		while (fgets(line, sizeof(line), in) != NULL) {
			char *cpu, *end, *cpus;
			if (!json && strncmp(line, "machine:", 8) == 0) {
				cpu = line + 8 + strspn(line + 8, " ");
				end = strstr(cpu, ", ");
				cpus = end ? end + 2 : NULL;
			} else if (json &&
			           (cpu = strstr(line, "\"cpu\": \"")) &&
			           (cpus = strstr(line, "\"cpus_online\": "))) {
				cpu += strlen("\"cpu\": \"");
				end = strchr(cpu, '"');
				cpus += strlen("\"cpus_online\": ");
			} else {
				continue;
			}
			if (end == NULL || cpus == NULL)
				break;
			*end = '\0';
			snprintf(info->cpu, sizeof(info->cpu), "%s", cpu);
			info->cpus = strtol(cpus, NULL, 10);
			break;
		}
		fclose(in);
	}
}

int plot_from_csv(const char *csv, const char *dir)
{
	struct columns columns;
	struct options options;
	struct run_info info;
	struct row *rows = NULL;
	size_t count = 0, capacity = 0, group = 0;
	char *header = NULL, *line = NULL, *fields[MAX_FIELDS];
	size_t header_size = 0, line_size = 0;
	FILE *in = fopen(csv, "r");
	int status;

	if (in == NULL) {
		fprintf(stderr, "bench: %s: %s\n", csv, strerror(errno));
		return -1;
	}
	if (getline(&header, &header_size, in) < 0) {
		fprintf(stderr, "bench: %s: empty\n", csv);
		fclose(in);
		return -1;
	}
	columns.count = csv_split(header, columns.names, MAX_FIELDS);
	options_default(&options);
	options.runs = 0;
	memset(&info, 0, sizeof(info));
	info.options = &options;
	info.command = "";
	machine_beside(csv, &info);

	while (getline(&line, &line_size, in) > 0) {
		size_t n = csv_split(line, fields, MAX_FIELDS);
		struct row *row;

		if (count == capacity) {
			struct row *grown;
			capacity = capacity ? 2 * capacity : 256;
			grown = realloc(rows, capacity * sizeof(*rows));
			if (grown == NULL) {
				fprintf(stderr, "bench: out of memory\n");
				free(rows);
				fclose(in);
				return -1;
			}
			rows = grown;
		}
		row = &rows[count];
		memset(row, 0, sizeof(*row));
		if (row_from_fields(row, &columns, fields, n) != 0)
			continue;
		/* The rows of one case are adjacent, as the driver writes
		 * them. */
		if (count > 0 &&
		    (row->c.workload != rows[count - 1].c.workload ||
		     strcmp(row->label, rows[count - 1].label) != 0))
			group++;
		row->group = group;
		if (row->runs > options.runs)
			options.runs = row->runs;
		if (row->latency_ns[LATENCY_ALLOC][0] > 0)
			info.timer.measured = 1;
		count++;
	}
	fclose(in);
	free(line);
	if (count == 0) {
		fprintf(stderr, "bench: %s: no rows\n", csv);
		free(header);
		free(rows);
		return -1;
	}
	status = plot_all(dir, &info, rows, count);
	free(header);
	free(rows);
	return status;
}
