# man/: the manual, installed by `make install` and linted by `make check`.
# Included by the top-level Makefile.am: this directory is %reldir%, other
# paths (the tests) are from the top of the tree.  A page per function or
# family; the other functions of a family are one-line .so links to it, so
# that `man pool_free` finds pool_malloc(3).
#
#	tests/man-lint.sh    mandoc -Tlint (or groff -ww) finds nothing to say
#	                     about any page; every .so link has its target;
#	                     every page under man/ is installed
#	tests/man-names.sh   every function the shared library exports is
#	                     named in some page's NAME section, and man finds
#	                     each name there
#	tests/man-examples.sh  the program of every page's EXAMPLES compiles
#	                     clean and runs (pages whose functions are not
#	                     exported yet are skipped, and named)

MAN_SECTION1 = %reldir%/man1/shiftpool-analyze.1

MAN_SECTION3 = \
	%reldir%/man3/pool_init.3 \
	%reldir%/man3/pool_destroy.3 \
	%reldir%/man3/pool_malloc.3 \
	%reldir%/man3/pool_calloc.3 \
	%reldir%/man3/pool_realloc.3 \
	%reldir%/man3/pool_strdup.3 \
	%reldir%/man3/pool_free.3 \
	%reldir%/man3/pool_stats.3 \
	%reldir%/man3/pool_stats_print.3 \
	%reldir%/man3/pool_set_error_handler.3 \
	%reldir%/man3/pool_error_string.3 \
	%reldir%/man3/pool_owns.3 \
	%reldir%/man3/pool_block_size.3 \
	%reldir%/man3/pool_malloc_bulk.3 \
	%reldir%/man3/pool_free_bulk.3 \
	%reldir%/man3/pool_trim.3 \
	%reldir%/man3/pool_set_init.3 \
	%reldir%/man3/pool_set_destroy.3 \
	%reldir%/man3/pool_set_malloc.3 \
	%reldir%/man3/pool_set_calloc.3 \
	%reldir%/man3/pool_set_realloc.3 \
	%reldir%/man3/pool_set_strdup.3 \
	%reldir%/man3/pool_set_free.3 \
	%reldir%/man3/pool_set_stats.3 \
	%reldir%/man3/pool_set_stats_print.3 \
	%reldir%/man3/pool_usable_size.3 \
	%reldir%/man3/pool_set_usable_size.3 \
	%reldir%/man3/pool_set_owns.3 \
	%reldir%/man3/pool_set_class_size.3 \
	%reldir%/man3/pool_set_trim.3 \
	%reldir%/man3/pool_init_with.3 \
	%reldir%/man3/pool_set_init_with.3 \
	%reldir%/man3/pool_get_error_handler.3 \
	%reldir%/man3/shiftpool_version.3 \
	%reldir%/man3/shiftpool_inline.3 \
	%reldir%/man3/shiftpool_inline_malloc_3.3 \
	%reldir%/man3/shiftpool_inline_calloc_3.3 \
	%reldir%/man3/shiftpool_inline_free_3.3

MAN_SECTION7 = %reldir%/man7/shiftpool.7 %reldir%/man7/shiftpool-malloc.7

dist_man_MANS = $(MAN_SECTION1) $(MAN_SECTION3) $(MAN_SECTION7)

AM_TESTS_ENVIRONMENT += MAN_PAGES='$(dist_man_MANS)'; export MAN_PAGES;
TESTS += tests/man-lint.sh tests/man-names.sh tests/man-examples.sh
dist_noinst_SCRIPTS += tests/man-lint.sh tests/man-names.sh \
	tests/man-examples.sh
EXTRA_DIST += tests/exports.sh tests/man-names.awk
