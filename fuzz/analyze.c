/*
 * The fuzz target of shiftpool-analyze: any bytes, read as a trace, go
 * through the parser, the model, every report and the plot's data and
 * script (gnuplot is not run); none may crash, leak or run into undefined
 * behaviour.  The options follow from the input's
 * length, so that short lists, --strict and a small plot window are tried
 * too without taking bytes from the trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analyze.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void)
{
	static FILE *null;
	if (null == NULL)
		null = fopen("/dev/null", "w");
	return null;
}

static struct options options_for(size_t size)
{
	return (struct options){
	    .strict = (int)(size & 1),
	    .limit = size % 5 == 0 ? SIZE_MAX : size % 5,
	    .top = size % 3,
	    .file = "fuzz",
	    .plot = "fuzz.png",
	    .plot_data = "-",
	    .plot_window = 1 + size % 7,
	    /* A small window, so that it fills and moves on. */
	    .window = size % 11,
	};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct analysis a;
	struct options opt = options_for(size);
	FILE *o = sink();

	analysis_init(&a, &opt);
	analysis_feed(&a, (const char *)data, size);
	analysis_finish(&a);
	text_report(&a, o);
	json_report(&a, o);
	plot_data_write(&a, o);
	plot_script_write(&a, o);
	total_problems(&a);
	analysis_free(&a);
	return 0;
}
