#!/usr/bin/env bash
# Checks that every C++ and CUDA file of the product, its tests and tools is as clang-format
# (the version pinned below, for stable output) and .clang-format would write it.
# Kernels that are test or example inputs are left as written: their line numbers are what
# the tests and the docs quote.
#   scripts/check_format.sh        check, listing the files that differ (exit 1 if any)
#   scripts/check_format.sh --fix  rewrite them
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
clang_format=${CLANG_FORMAT:-clang-format-14}
command -v "$clang_format" >/dev/null || { echo "check_format: $clang_format not found (scripts/dev.sh setup installs it)" >&2; exit 2; }
cd "$root"
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' |
  grep -vE '^(tests/.*\.cuh?$|examples/kernels/|examples/autotune-kernel/kernels/|benchmarks/kernels/|measurements/|scripts/device/kernels/)')
if [ "${1:-}" = --fix ]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
# One process for every file: clang-format reports each difference as "FILE:LINE:COL: error".
mapfile -t differ < <("$clang_format" --dry-run -Werror "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error.*/\1/p' | sort -u)
if ((${#differ[@]})); then
  printf 'check_format: %d file(s) differ from .clang-format (scripts/check_format.sh --fix rewrites them):\n' "${#differ[@]}" >&2
  printf '  %s\n' "${differ[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
