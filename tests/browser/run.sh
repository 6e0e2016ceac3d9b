#!/usr/bin/env bash
# The browser test (CTest): writes reports with the built clustersim, then opens them in headless
# Chromium (tests/browser/check_report.mjs). Exits 77 (CTest: skipped) only where Chromium, Node.js
# or playwright-core is missing; scripts/deps.sh installs all three.
#   run.sh CLUSTERSIM_BINARY SOURCE_DIR OUT_DIR     (screenshots and reports are kept in OUT_DIR)
set -euo pipefail
bin=$1 src=$2 out=$3
chromium=${CLUSTERSIM_CHROMIUM:-/usr/bin/chromium}
skip() { echo "SKIP: $* (scripts/deps.sh installs it)" >&2; exit 77; }
[ -x "$chromium" ] || skip "no Chromium at $chromium"
command -v node >/dev/null || skip "no Node.js"
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || skip "Node.js $(node --version) is older than 20, which playwright-core needs"
[ -f "$src/tests/browser/node_modules/playwright-core/package.json" ] ||
  skip "no playwright-core in tests/browser/node_modules"
rm -rf "$out" && mkdir -p "$out"
check="node $src/tests/browser/check_report.mjs --chromium $chromium --shots $out"

# The default scenario (an ops workload), and DeepSeek-V3's pretraining step on 2048 GPUs, the
# latter through a saved result and `clustersim report`.
"$bin" run "$src/scenarios/gemm-a2a-overlap-h800.yaml" --report "$out/gemm-a2a-overlap-h800.html" >/dev/null
"$bin" run "$src/scenarios/deepseek-v3-pretrain-h800.yaml" --format json --out "$out/deepseek.json" 2>/dev/null
"$bin" report "$out/deepseek.json" -o "$out/deepseek-v3-pretrain-h800.html"
$check "$out/gemm-a2a-overlap-h800.html" "$out/deepseek-v3-pretrain-h800.html"

# A result holding a sweep renders its chart: `clustersim sweep --report`, and a saved result with
# a measured curve added (the line chart's second series).
"$bin" sweep "$src/scenarios/gemm-a2a-overlap-h800.yaml" --comm-sms 0:48:8 --report "$out/sm-sweep.html" >/dev/null
"$bin" run "$src/scenarios/gemm-a2a-overlap-h800.yaml" --format json --out "$out/plain.json"
node -e '
  const fs = require("fs"); const r = JSON.parse(fs.readFileSync(process.argv[1]));
  r.report.sweep = {title: "SMs for communication", x_label: "comm SMs", y_label: "step (ms)",
    points: [{x: 8, predicted: 14.2, measured: 14.9}, {x: 16, predicted: 12.4}, {x: 20, predicted: 11.9, measured: 12.3},
             {x: 32, predicted: 12.8}]};
  fs.writeFileSync(process.argv[2], JSON.stringify(r));' "$out/plain.json" "$out/sweep.json"
"$bin" report "$out/sweep.json" -o "$out/sweep.html"
$check --sweep "$out/sm-sweep.html" "$out/sweep.html"

# A scenario whose strings are markup meant to run shows them as text, and nothing runs.
name='<script>window.__clustersim_pwned=1;alert(1)</script>'
sed -e "s|^name: .*|name: '$name'|" \
    -e "s|^description: .*|description: '<img src=x onerror=\"window.__clustersim_pwned=1;alert(2)\">'|" \
    "$src/scenarios/gemm-a2a-overlap-h800.yaml" > "$out/escaped.yaml"
grep -q "^name: '<script>" "$out/escaped.yaml"
"$bin" run "$out/escaped.yaml" --report "$out/escaped.html" >/dev/null 2>&1
$check --escaped "$name" "$out/escaped.html"

# The checks can fail: broken copies of a good report must be caught.
$check --self-test "$out/gemm-a2a-overlap-h800.html"
