# libshiftpool-malloc: the malloc family from one pool set, to preload
# (LD_PRELOAD) or link.  Included by the top-level Makefile.am after the
# library's own rules: this directory is %reldir%, other paths are from
# the top of the tree.
#
# The pool library is compiled into it (its sources once more, as objects
# of this target) rather than linked as libshiftpool.so: a preloaded
# library then needs no second library found at run time, and the pool
# functions inside it stay local, apart from those of a libshiftpool.so
# the program itself may use.  Only the malloc family is exported.  The
# file has no version in its name: it is loaded by that name
# (LD_PRELOAD=libshiftpool-malloc.so), and its interface is malloc's.

lib_LTLIBRARIES += %reldir%/libshiftpool-malloc.la
%canon_reldir%_libshiftpool_malloc_la_SOURCES = \
	%reldir%/malloc.c \
	$(src_libshiftpool_la_SOURCES)
%canon_reldir%_libshiftpool_malloc_la_CFLAGS = $(AM_CFLAGS) \
	-fvisibility=hidden
%canon_reldir%_libshiftpool_malloc_la_LDFLAGS = $(AM_LDFLAGS) \
	-no-undefined -avoid-version \
	-Wl,--version-script=$(top_srcdir)/%reldir%/libshiftpool-malloc.sym
EXTRA_%canon_reldir%_libshiftpool_malloc_la_DEPENDENCIES = \
	%reldir%/libshiftpool-malloc.sym
EXTRA_DIST += %reldir%/libshiftpool-malloc.sym
