# Sourced by the tests of an installed tree (pkgconfig.sh, cmake.sh,
# consumers.sh).  Needs abs_top_builddir, abs_top_srcdir, libdir,
# includedir, pkgconfigdir; MAKE and PKG_CONFIG may name the programs.
# Only the build tree and a temporary directory are written, so this works
# under `make distcheck` too.
#
#   fail MESSAGE            print FAIL: MESSAGE and exit 1
#   $tmp                    a temporary directory, removed at exit
#   install_into DESTDIR    make install DESTDIR=DESTDIR, checked
#   use_pkgconfig DESTDIR   make pkg-config see the DESTDIR's module only
#   shared_dlname           the shared library's file name, empty without
#   run_consumer PROGRAM LIBDIR
#                           run a build of tests/pkgconfig-consumer.c, check
#                           what it prints, and that it loaded the shared
#                           library from LIBDIR (when there is one)

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
: "${libdir:?}" "${includedir:?}" "${pkgconfigdir:?}" "${PACKAGE_VERSION:?}"
MAKE=${MAKE:-make}

fail() {
	echo "FAIL: $*"
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-install.XXXXXX") || exit 99
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

install_into() {
	# The jobserver of an outer `make -j` is not ours to use.
	if ! (unset MAKEFLAGS MFLAGS; $MAKE -C "$abs_top_builddir" install \
		DESTDIR="$1") >"$tmp/install.log" 2>&1; then
		cat "$tmp/install.log"
		fail "make install DESTDIR=$1"
	fi
	for f in "$includedir/shiftpool.h" "$includedir/shiftpool/inline.h" \
	    "$pkgconfigdir/shiftpool.pc"; do
		[ -f "$1$f" ] || fail "make install did not install $f"
	done
}

# Only the DESTDIR's .pc file is visible, and its paths are taken as
# relative to the DESTDIR.  The ALLOW_SYSTEM variables keep -I/-L flags
# pkg-config would otherwise drop for a prefix of /usr.
use_pkgconfig() {
	PKG_CONFIG_PATH=$1$pkgconfigdir
	PKG_CONFIG_LIBDIR=$1$pkgconfigdir
	PKG_CONFIG_SYSROOT_DIR=$1
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1
	PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
	export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
	export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS PKG_CONFIG_ALLOW_SYSTEM_LIBS
}

shared_dlname() {
	sed -n "s/^dlname='\(.*\)'\$/\1/p" "$abs_top_builddir/src/libshiftpool.la"
}

run_consumer() {
	dlname=$(shared_dlname)
	# With glibc's loader, make sure the installed copy is the one
	# loaded, not one in the build tree or the system.
	if [ -n "$dlname" ]; then
		loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$1" 2>/dev/null |
			grep "$dlname" || :)
		case "$loaded" in
		"" | *"$2/$dlname"*) ;;
		*) fail "$1 loads '$loaded', not $2/$dlname" ;;
		esac
	fi
	"$1" >"$tmp/output" 2>&1
	status=$?
	if [ $status -ne 0 ]; then
		cat "$tmp/output"
		fail "$1 exited with status $status"
	fi
	cat >"$tmp/expected" <<EOT
version $PACKAGE_VERSION $PACKAGE_VERSION
calloc owned 1 zeroed 1
block_size 64 block_count 4 in_use 1 allocs 1
in_use 0 frees 1
EOT
	if ! cmp -s "$tmp/expected" "$tmp/output"; then
		echo "$1 printed:"
		cat "$tmp/output"
		echo "expected:"
		cat "$tmp/expected"
		fail "wrong output from $1"
	fi
}
