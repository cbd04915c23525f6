/*
 * Command-line pieces of bench/httpd and its test client; see httpd-util.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "httpd-util.h"

#include <errno.h>
#include <stdlib.h>

int next_option(int argc, char **argv, const struct option *options,
                usage_fn *usage)
{
	int c = getopt_long(argc, argv, "", options, NULL);
	if (c == 'h') {
		usage(stdout);
		exit(0);
	}
	if (c == '?' || c == ':')
		usage(stderr);
	return c;
}

int invalid_value(const char *program, usage_fn *usage)
{
	fprintf(stderr, "%s: invalid value '%s'\n", program, optarg);
	usage(stderr);
	return -1;
}

int parse_number(const char *text, long long min, long long max, long long *out)
{
	char *end;
	errno = 0;
	long long value = strtoll(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < min ||
	    value > max)
		return -1;
	*out = value;
	return 0;
}
