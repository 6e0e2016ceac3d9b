#!/usr/bin/env bash
# Installs what is missing and builds clustersim (Release) into build/. Incremental when re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
cmake --build build >&2
