#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rewrites tests/golden/ from the current btsdump output on the fixtures.
# Review `git diff tests/golden` before committing.  Usage: update-golden.sh BUILD_DIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/test-btsdump.py" "${1:-build}/tools/btsdump" --update-golden
