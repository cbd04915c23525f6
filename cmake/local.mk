# cmake/: the CMake package, installed by `make install` beside the
# library, and the tests of what an installed tree gives its users.
# Included by the top-level Makefile.am: this directory is %reldir%, other
# paths (the tests) are from the top of the tree; the installed package's
# directory, $(libdir)/cmake/shiftpool, is no path of the tree.
#
#	tests/cmake.sh       a CMake project builds and runs against the
#	                     installed tree with find_package(shiftpool 0.1)
#	                     and with pkg_check_modules(IMPORTED_TARGET),
#	                     refuses a version it cannot give, and finds the
#	                     tree again after it moved; SKIP without cmake
#	tests/consumers.sh   the installed header compiles clean as C++11,
#	                     C++17 (SKIP without g++), C99 and C11 with
#	                     -pedantic; a program linked with
#	                     `pkg-config --static --libs` against the static
#	                     library alone runs

cmakeconfigdir = $(libdir)/cmake/shiftpool
nodist_cmakeconfig_DATA = \
	%reldir%/shiftpoolConfig.cmake \
	%reldir%/shiftpoolConfigVersion.cmake
CLEANFILES += $(nodist_cmakeconfig_DATA)
EXTRA_DIST += \
	%reldir%/shiftpoolConfig.cmake.in \
	%reldir%/shiftpoolConfigVersion.cmake.in

# The paths in the package are relative to its own directory: computed
# here, where make knows the final libdir and includedir, so that
# `make install prefix=...` and a moved tree both work.  The pointer size
# is the compiler's, for the version file's check.
cmake_generate = $(MKDIR_P) %reldir% && \
	rel_include=`realpath -s -m --relative-to='$(cmakeconfigdir)' '$(includedir)'` && \
	rel_lib=`realpath -s -m --relative-to='$(cmakeconfigdir)' '$(libdir)'` && \
	pointer=`echo __SIZEOF_POINTER__ | $(CPP) $(CPPFLAGS) -P - | tr -d ' '` && \
	$(SED) -e "s|[@]RELATIVE_INCLUDEDIR[@]|$$rel_include|g" \
	       -e "s|[@]RELATIVE_LIBDIR[@]|$$rel_lib|g" \
	       -e "s|[@]SIZEOF_VOID_P[@]|$$pointer|g" \
	       -e 's|[@]PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	       -e 's|[@]SHIFTPOOL_VERSION_MAJOR[@]|$(SHIFTPOOL_VERSION_MAJOR)|g' \
	       -e 's|[@]SHIFTPOOL_VERSION_MINOR[@]|$(SHIFTPOOL_VERSION_MINOR)|g'

%reldir%/shiftpoolConfig.cmake: \
		$(srcdir)/%reldir%/shiftpoolConfig.cmake.in Makefile
	$(AM_V_GEN)$(cmake_generate) \
	  $(srcdir)/%reldir%/shiftpoolConfig.cmake.in >$@.tmp && mv $@.tmp $@

%reldir%/shiftpoolConfigVersion.cmake: \
		$(srcdir)/%reldir%/shiftpoolConfigVersion.cmake.in Makefile
	$(AM_V_GEN)$(cmake_generate) \
	  $(srcdir)/%reldir%/shiftpoolConfigVersion.cmake.in \
	  >$@.tmp && mv $@.tmp $@

TESTS += tests/cmake.sh tests/consumers.sh
dist_noinst_SCRIPTS += tests/cmake.sh tests/consumers.sh
EXTRA_DIST += \
	tests/install-common.sh \
	tests/cmake/find-package/CMakeLists.txt \
	tests/cmake/pkg-config/CMakeLists.txt \
	tests/consumer-header.c \
	tests/consumer-header.cc

AM_TESTS_ENVIRONMENT += prefix='$(prefix)'; export prefix;
