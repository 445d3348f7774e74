#!/bin/sh
# The documented long commands (```sh runnable=long blocks of README.md
# and docs/*.md), run as written by suites/cli/doctest.sh: make
# check-long's part of the doc-test; make check runs the others.
EG_CHECK_LONG=only
export EG_CHECK_LONG
exec sh "${EG_SRCDIR:-.}/suites/cli/doctest.sh"
