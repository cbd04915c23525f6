/*
 * Command-line pieces bench/httpd and its test client,
 * bench/tests/httpd-client, share.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_HTTPD_UTIL_H
#define BENCH_HTTPD_UTIL_H

#include <getopt.h>
#include <stdio.h>

/* Prints a program's usage to stream. */
typedef void usage_fn(FILE *stream);

/*
 * getopt_long() for a program that takes long options only.  It answers
 * --help itself (the option whose value is 'h': usage on stdout, exit 0)
 * and reports an unknown option or a missing value (usage on stderr,
 * returns '?').  Returns -1 after the last option.
 */
int next_option(int argc, char **argv, const struct option *options,
                usage_fn *usage);

/* Reports optarg as a value the option just read does not take ("PROGRAM:
 * invalid value 'VALUE'", then the usage on stderr); returns -1. */
int invalid_value(const char *program, usage_fn *usage);

/* Parses a decimal number in [min, max], the whole of text; returns 0 and
 * sets *out, or -1. */
int parse_number(const char *text, long long min, long long max,
                 long long *out);

#endif
