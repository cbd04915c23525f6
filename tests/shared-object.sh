# Sourced by tests/exports.sh and tests/malloc-common.sh.  Needs
# abs_top_builddir.
#
#   find_shared_object NAME  finds the shared object that libtool built
#                            for src/NAME.la.  It sets $la to the .la
#                            file, $dlname to the shared object's file
#                            name and $shared_object to its path.  It
#                            exits 77 (skip) when the build has no shared
#                            libraries, and 99 when the .la file or the
#                            shared object it names is missing.

find_shared_object() {
	la=$abs_top_builddir/src/$1.la
	if [ ! -f "$la" ]; then
		echo "$la is not built" >&2
		exit 99
	fi
	# libtool's .la names the shared object in dlname, which is empty
	# when the build has no shared library.
	dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$la")
	if [ -z "$dlname" ]; then
		echo "shared libraries are disabled (--disable-shared); skipped"
		exit 77
	fi
	shared_object=$abs_top_builddir/src/.libs/$dlname
	if [ ! -f "$shared_object" ]; then
		echo "$shared_object, named by $la, does not exist" >&2
		exit 99
	fi
}
