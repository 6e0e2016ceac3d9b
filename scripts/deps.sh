#!/usr/bin/env bash
# Installs the Debian packages clustersim needs, and only those missing: a second run does nothing.
# The browser test's playwright-core comes from the npm registry, pinned by
# tests/browser/package-lock.json, into tests/browser/node_modules (git-ignored).
#   scripts/deps.sh          build and test dependencies
#   scripts/deps.sh fuzz     plus clang and its sanitizer runtimes (the fuzzing step of .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
want=(cmake ninja-build g++ git libyaml-cpp-dev libcli11-dev catch2 libeigen3-dev libboost-graph-dev
      nlohmann-json3-dev libfmt-dev chromium libopenmpi-dev openmpi-bin)
command -v npm >/dev/null || want+=(nodejs npm)
if [ "${1:-}" = fuzz ]; then
  want+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  echo "deps: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Without it the browser test is skipped (it says so), so a failed download does not stop the build.
if [ ! -f tests/browser/node_modules/playwright-core/package.json ]; then
  echo "deps: installing playwright-core for the browser test (tests/browser)" >&2
  (cd tests/browser && npm ci --no-audit --no-fund --ignore-scripts >&2) ||
    echo "deps: warning: npm ci failed in tests/browser; the browser test will be skipped" >&2
fi
