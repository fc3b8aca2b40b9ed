#!/bin/sh
# Regenerates configure and Makefile.in (needs autoconf, automake, libtool).
set -e
cd "$(dirname "$0")"
autoreconf --install --force
