#!/usr/bin/env bash
# Installs the Debian packages clustersim needs, and only those missing: a second run does nothing.
#   scripts/deps.sh          build and test dependencies
#   scripts/deps.sh fuzz     plus clang and its sanitizer runtimes (the fuzzing step of .ci/run)
set -euo pipefail
want=(cmake ninja-build g++ git libyaml-cpp-dev libcli11-dev catch2 libeigen3-dev libboost-graph-dev
      nlohmann-json3-dev libfmt-dev)
if [ "${1:-}" = fuzz ]; then
  want+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
