#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints the help2man include of a hand-written page, docs/man/NAME.h2m.
# The source is a man page of its own, so that `man -l docs/man/NAME.h2m`
# renders it; help2man wants "[=SECTION]" lines where the page has
# ".SH SECTION" (the .TH and comments before the first one it ignores).
# usage: man-h2m.sh SOURCE
set -eu
src=${1:?usage: man-h2m.sh SOURCE}
sed -E 's/^\.SH +"?([^"]*[^" ])"? *$/[=\1]/' "$src"
