/*
 * examples/adapters: the test program built in place of an adapter's test
 * when configure did not find the library it adapts, so that make check
 * says SKIP rather than passing in silence.  MISSING names the library
 * and the package that brings it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>

int main(void)
{
	printf("not built: configure did not find %s (install it and re-run "
	       "configure); skipped\n",
	       MISSING);
	return 77;
}
