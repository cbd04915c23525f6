#!/bin/sh
# Generates configure and Makefile.in from a fresh checkout.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
exec autoreconf --install --force --warnings=all
