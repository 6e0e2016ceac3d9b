// Opens clustersim HTML reports in headless Chromium and checks them: no console error, no page
// error, no dialog, no request beyond the file itself (the page must work offline), every section
// and its charts in the DOM. Takes a full-page screenshot and an A4 PDF print of each, and prints
// its load time.
//
//   node check_report.mjs --chromium /usr/bin/chromium --shots DIR [--escaped TEXT] [--sweep] REPORT.html...
//   node check_report.mjs --chromium /usr/bin/chromium --shots DIR --self-test REPORT.html
//
// --escaped TEXT: the scenario name is TEXT (markup meant to run): it must show as that text, and
//   no script may have set window.__clustersim_pwned.
// --self-test: shows the checks can fail: the report as given must pass, and copies of it with an
//   injected console error, a section removed, an unescaped script, a chart removed must each fail.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const SECTIONS = ['verdict', 'breakdown', 'timeline', 'memory', 'communication', 'calibration', 'topology', 'footer'];
const CHARTED = ['breakdown', 'timeline'];  // sections that always hold an SVG chart

function parseArgs(argv) {
  const o = { files: [], sweep: false, selfTest: false, escaped: null, chromium: '/usr/bin/chromium', shots: '.' };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--chromium') o.chromium = argv[++i];
    else if (a === '--shots') o.shots = argv[++i];
    else if (a === '--escaped') o.escaped = argv[++i];
    else if (a === '--sweep') o.sweep = true;
    else if (a === '--self-test') o.selfTest = true;
    else o.files.push(a);
  }
  return o;
}

// The problems found in one report; empty when it passes.
async function check(browser, file, opts, shot) {
  const problems = [];
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const url = pathToFileURL(path.resolve(file)).href;
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', async (d) => { problems.push(`a dialog opened: ${d.type()} ${d.message()}`); await d.dismiss(); });
  page.on('request', (r) => { if (r.url() !== url && !r.url().startsWith('data:')) problems.push(`request beyond the file: ${r.url()}`); });
  await page.goto(url, { waitUntil: 'load' });
  const facts = await page.evaluate(([sections, charted]) => {
    const nav = performance.getEntriesByType('navigation')[0];
    const out = { missing: [], uncharted: [], charts: document.querySelectorAll('svg.chart').length,
                  titles: document.querySelectorAll('svg.chart title').length,
                  loadMs: nav ? nav.loadEventEnd - nav.startTime : -1,
                  pwned: typeof window.__clustersim_pwned !== 'undefined',
                  scripts: document.scripts.length, h1: document.querySelector('h1')?.textContent ?? null,
                  sweep: !!document.getElementById('sweep'), text: document.body.innerText.length };
    for (const id of sections) if (!document.getElementById(id)) out.missing.push(id);
    for (const id of charted) { const s = document.getElementById(id); if (s && !s.querySelector('svg.chart')) out.uncharted.push(id); }
    return out;
  }, [SECTIONS, CHARTED]);
  if (facts.missing.length) problems.push(`missing sections: ${facts.missing.join(', ')}`);
  if (facts.uncharted.length) problems.push(`sections without their chart: ${facts.uncharted.join(', ')}`);
  if (facts.titles < facts.charts) problems.push('a chart without hover titles');
  if (facts.pwned) problems.push('a script from the scenario ran (window.__clustersim_pwned is set)');
  if (facts.scripts !== 0) problems.push(`${facts.scripts} <script> element(s) in the DOM`);
  if (opts.sweep && !facts.sweep) problems.push('no sweep section');
  if (opts.escaped != null && facts.h1 !== opts.escaped) problems.push(`the scenario name shows as ${JSON.stringify(facts.h1)}`);
  if (shot) {
    await page.screenshot({ path: shot, fullPage: true });
    // Printable: the page prints to A4 (print styles applied) without an error.
    await page.pdf({ path: shot.replace(/\.png$/, '.pdf'), format: 'A4', printBackground: true });
  }
  await page.close();
  const size = fs.statSync(file).size;
  console.log(`${path.basename(file)}: ${(size / 1e6).toFixed(2)} MB, ${facts.charts} charts, load ${facts.loadMs.toFixed(0)} ms` +
              (shot ? `, screenshot ${shot} and its PDF` : '') + (problems.length ? `, ${problems.length} problem(s)` : ', ok'));
  return problems;
}

// Writes a broken copy of `file` beside the screenshots and returns its path.
function variant(file, dir, name, edit) {
  const html = fs.readFileSync(file, 'utf8');
  const changed = edit(html);
  if (changed === html) throw new Error(`self-test variant '${name}' changed nothing`);
  const out = path.join(dir, `selftest-${name}.html`);
  fs.writeFileSync(out, changed);
  return out;
}

const opts = parseArgs(process.argv.slice(2));
fs.mkdirSync(opts.shots, { recursive: true });
const browser = await chromium.launch({ executablePath: opts.chromium, args: ['--no-sandbox', '--disable-gpu'] });
let failed = false;
try {
  if (opts.selfTest) {
    const file = opts.files[0];
    const base = await check(browser, file, opts, null);
    if (base.length) { failed = true; console.log(`self-test: the unchanged report fails: ${base.join('; ')}`); }
    const broken = {
      'console-error': (h) => h.replace('</body>', '<img src="data:," onerror="console.error(1)"></body>'),
      'missing-section': (h) => h.replace('id="memory"', 'id="memory-gone"'),
      'unescaped-script': (h) => h.replace('<h1>', '<h1><script>window.__clustersim_pwned = 1;</script>'),
      'missing-chart': (h) => h.replace(/(<section id="timeline">.*?)<svg class="chart[^]*?<\/svg>/s, '$1'),
    };
    for (const [name, edit] of Object.entries(broken)) {
      const problems = await check(browser, variant(file, opts.shots, name, edit), {}, null);
      if (problems.length === 0) { failed = true; console.log(`self-test: the '${name}' copy passed, but must fail`); }
      else console.log(`self-test: '${name}' caught: ${problems.join('; ')}`);
    }
  } else {
    for (const file of opts.files) {
      const shot = path.join(opts.shots, path.basename(file).replace(/\.html$/, '') + '.png');
      const problems = await check(browser, file, opts, shot);
      for (const p of problems) console.log(`  ${file}: ${p}`);
      if (problems.length) failed = true;
    }
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
