# Read after the build tree's Makefile by debian/rules: the files that
# `make install` installs, from automake's own lists, so that a library,
# program, header or page Makefile.am adds is built and installed without
# a change here.  install-exec and install-data are automake's install
# targets minus their dependency on `all`.
.PHONY: debian-ship debian-install
debian-ship: $(lib_LTLIBRARIES) $(bin_PROGRAMS) $(HEADERS) $(DATA) $(MANS)
debian-install: debian-ship
	$(MAKE) $(AM_MAKEFLAGS) install-exec install-data
