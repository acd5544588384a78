// End-to-end test of the Compare tab on the trunk-built page (dist/) in Debian's
// Chromium: open a first input, "compare with…" a second one, see the figures, the overlaid
// curves and the delta tables, sort and filter (an empty result says so), reload with the
// link, and download the exports (byte-equal to `proflens diff A B --json/--md` run from the
// inputs' folder, so the side names agree). Two real snapshots, the HTA trace_diff pair, the
// level1 run on two pool workers, and level1's two ranks with every `Blob.slice` counted (B
// read once, A not again, the exports read nothing), and the controls (step 2 of the HTA pair:
// `--step 2` bytes; the time axis of the snapshot pair). Screenshots go to test-output/compare-*.png.
//
// Run: `node --test tests/e2e/compare.test.mjs` after scripts/build-release.sh (and `cargo
// build --bin proflens`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, serveStatic, launch, ProflensPage, countingPage } from './lib.mjs';

const SNAPS = path.join(REPO, '../shared/fixtures/torch_snapshots');
const SNAP_A = 'silmont2000_assignment2-systems__mem_snapshot.pickle';
const SNAP_B = 'silmont2000_assignment2-systems__memory_forward_bf16_128.pickle';
const HTA = path.join(REPO, '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_diff');

let server;
let browser;

before(async () => {
  for (const f of [path.join(SNAPS, SNAP_A), path.join(SNAPS, SNAP_B), path.join(HTA, 'control')]) {
    assert.ok(fs.existsSync(f), `fixture missing: ${f}`);
  }
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
  return new ProflensPage(await context.newPage(), server.url);
}

// The newest CLI binary built from this tree.
function proflensBin() {
  const bins = ['target/release/proflens', 'target/debug/proflens']
    .map((b) => path.join(REPO, b))
    .filter((b) => fs.existsSync(b));
  bins.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  assert.ok(bins.length, 'build the CLI first: cargo build --bin proflens');
  return bins[0];
}

/** `proflens diff a b --json J --md M EXTRA…` run in `cwd`: { json, md } file paths. */
function cliDiff(cwd, a, b, tag, extra = []) {
  const json = path.join(os.tmpdir(), `proflens-e2e-compare-${tag}.json`);
  const md = path.join(os.tmpdir(), `proflens-e2e-compare-${tag}.md`);
  execFileSync(proflensBin(), ['diff', a, b, '--json', json, '--md', md, ...extra], { cwd, stdio: 'ignore' });
  return { json, md };
}

/** Clicks export `button`, saves the download under test-output/, asserts it equals `cli`. */
async function checkExport(p, button, cli, name) {
  const [download] = await Promise.all([
    p.page.waitForEvent('download', { timeout: 60_000 }),
    p.page.getByTestId(button).click(),
  ]);
  const file = path.join(REPO, 'test-output', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await download.saveAs(file);
  const web = fs.readFileSync(file);
  assert.ok(web.length > 200, `${name}: empty download`);
  assert.ok(web.equals(fs.readFileSync(cli)), `${name}: the page's export (${web.length} B) differs from the CLI's`);
  return download.suggestedFilename();
}

/** Rows of the shown delta table as arrays of cell texts. */
async function rows(p) {
  return p.page.getByTestId('compare-table').locator('tbody tr').evaluateAll(
    (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.innerText)));
}

test('compare two snapshots: figures, overlaid curves, delta table, sort, filter, link, exports', async () => {
  const p = await newPage();
  await p.open();
  await p.page.getByTestId('open-files').setInputFiles(path.join(SNAPS, SNAP_A));
  assert.equal(await p.waitDone(), 'Done');
  // A first input is open: the run bar offers "Compare with…", which opens the Compare tab
  // and its drop target.
  await p.page.getByTestId('compare-with').click();
  await p.page.getByTestId('compare-drop').waitFor();
  await p.screenshot('compare-01-open');
  await p.page.getByTestId('compare-files').setInputFiles(path.join(SNAPS, SNAP_B));
  await p.page.getByTestId('compare-title').waitFor({ timeout: 60_000 });
  assert.match(await p.page.getByTestId('compare-title').innerText(), /mem_snapshot\.pickle.*\(A\) with .*memory_forward_bf16_128\.pickle.*\(B\)/);

  // The figures are the CLI's: global peak 3.03 GiB → 743.7 MiB, end 30.3 → 499.5 MiB.
  const facts = await p.page.getByTestId('compare-fact').allInnerTexts();
  assert.equal(facts.length, 2);
  assert.match(facts[0], /device 0: global peak\s+3\.03 GiB\s+743\.7 MiB\s+−2\.30 GiB/);
  assert.match(facts[1], /device 0: end\s+30\.3 MiB\s+499\.5 MiB\s+\+469\.3 MiB/);
  const cli = cliDiff(SNAPS, SNAP_A, SNAP_B, 'snap');
  const doc = JSON.parse(fs.readFileSync(cli.json, 'utf8'));
  assert.equal(doc.devices[0].peak.delta_bytes, -2469306376);
  const exactPeak = await p.page.getByTestId('compare-fact').first().locator('td').nth(2).getAttribute('title');
  assert.equal(exactPeak, '-2469306376');

  // The overlaid curves: both sides drawn on one canvas (A in chart colour 1, B in 2).
  const canvas = p.page.getByTestId('compare-overlay-canvas');
  await canvas.scrollIntoViewIfNeeded();
  await p.page.waitForTimeout(300);
  const colours = await canvas.evaluate((c) => {
    const ctx = c.getContext('2d');
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const css = getComputedStyle(document.documentElement);
    const hex = (v) => v.trim().match(/^#(..)(..)(..)$/).slice(1).map((x) => parseInt(x, 16));
    const want = [hex(css.getPropertyValue('--chart-1')), hex(css.getPropertyValue('--chart-2'))];
    const seen = [0, 0];
    for (let i = 0; i < d.length; i += 4) {
      want.forEach((w, k) => {
        if (Math.abs(d[i] - w[0]) < 8 && Math.abs(d[i + 1] - w[1]) < 8 && Math.abs(d[i + 2] - w[2]) < 8) seen[k] += 1;
      });
    }
    return seen;
  });
  assert.ok(colours[0] > 50 && colours[1] > 50, `both sides drawn: ${colours}`);

  // The delta table: live bytes per site at each side's global peak, the CLI's rows in order.
  const table = p.page.getByTestId('compare-table');
  assert.equal(await table.getAttribute('data-table'), 'dev0.sites_at_peak');
  const sites = doc.devices[0].sites_at_peak;
  let shown = await rows(p);
  assert.equal(shown.length, sites.length);
  assert.equal(shown.length, 20); // the backward pass under DivBackward0 and BmmBackward0 (torch-snapshot.md §7.5)
  for (let i = 0; i < sites.length; i++) {
    assert.equal(shown[i][4], sites[i].change);
  }
  // A site cell reads short (a C++-only site as its autograd node or ATen operator,
  // torch-snapshot.md §7.5); its title keeps the export's full label.
  const siteTitles = await table.locator('tbody tr td:nth-child(1)').evaluateAll((tds) => tds.map((td) => td.title));
  assert.deepEqual(siteTitles, sites.map((s) => s.site));
  const div = sites.findIndex((s) => s.site.startsWith('torch::autograd::generated::DivBackward0::apply('));
  const bmm = sites.findIndex((s) => s.site.startsWith('torch::autograd::generated::BmmBackward0::apply('));
  assert.ok(div >= 0 && bmm >= 0, 'the pair has its DivBackward0 and BmmBackward0 sites');
  assert.equal(shown[div][0], 'DivBackward0 (autograd)');
  assert.equal(shown[bmm][0], 'BmmBackward0 (autograd)');
  for (let i = 0; i < sites.length; i++) {
    assert.doesNotMatch(shown[i][0], /\(std::|@ \?\?:0/, `row ${i}: ${shown[i][0]}`);
    if (sites[i].site.includes('.py:')) assert.equal(shown[i][0], sites[i].site);
  }
  const deltaCells = await table.locator('tbody tr td:nth-child(4)').evaluateAll((tds) => tds.map((td) => Number(td.title)));
  assert.deepEqual(deltaCells, sites.map((s) => s.delta_bytes));
  await p.screenshot('compare-02-snapshots');

  // Sort by Δ (descending, then ascending): the exact values follow.
  const header = p.page.getByTestId('compare-th').filter({ hasText: 'Δ B − A' });
  await header.click();
  let sorted = await table.locator('tbody tr td:nth-child(4)').evaluateAll((tds) => tds.map((td) => Number(td.title)));
  assert.deepEqual(sorted, [...deltaCells].sort((a, b) => b - a));
  await header.click();
  sorted = await table.locator('tbody tr td:nth-child(4)').evaluateAll((tds) => tds.map((td) => Number(td.title)));
  assert.deepEqual(sorted, [...deltaCells].sort((a, b) => a - b));

  // Filter: the rows whose text holds the word; nothing matching says so.
  const word = 'swiglu';
  const filter = p.page.getByTestId('compare-filter');
  await filter.fill(word);
  shown = await rows(p);
  const matching = sites.filter((s) => s.site.toLowerCase().includes(word) || s.change.includes(word));
  assert.equal(matching.length, 3); // swiglu.py:32, :33, :34 (new in B)
  assert.deepEqual(shown.map((r) => r[0]), matching.map((s) => s.site));
  await filter.fill('no such site anywhere');
  assert.equal((await rows(p)).length, 0);
  assert.match(await p.page.getByTestId('compare-table-footer').innerText(), /No row matches “no such site anywhere” \(of 20\)/);
  await filter.fill('');

  // Another table: the end state.
  await p.page.getByTestId('compare-table-pick').filter({ hasText: 'sites at end' }).click();
  assert.equal(await table.getAttribute('data-table'), 'dev0.sites_at_end');
  assert.equal((await rows(p)).length, doc.devices[0].sites_at_end.length);

  // The exports are the CLI's bytes.
  assert.equal(await checkExport(p, 'compare-export-json', cli.json, 'compare-snapshots.json'),
    `diff_${SNAP_A}_vs_${SNAP_B}.json`);
  await checkExport(p, 'compare-export-md', cli.md, 'compare-snapshots.md');

  // The link records both sides and the table: after a reload and the same first file, the
  // page names side B; opening it again restores the table.
  await p.page.waitForTimeout(400);
  const url = p.page.url();
  assert.match(url, /tab=compare/);
  assert.match(url, /cmp\.a=silmont2000/);
  assert.match(url, /cmp\.b=silmont2000_assignment2-systems__memory_forward_bf16_128\.pickle/);
  assert.match(url, /cmp\.t=dev0\.sites_at_end/);
  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  await p.page.getByTestId('open-files').setInputFiles(path.join(SNAPS, SNAP_A));
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('compare-link-hint').waitFor();
  assert.match(await p.page.getByTestId('compare-link-hint').innerText(), /memory_forward_bf16_128\.pickle/);
  await p.page.getByTestId('compare-files').setInputFiles(path.join(SNAPS, SNAP_B));
  await p.page.getByTestId('compare-title').waitFor({ timeout: 60_000 });
  assert.equal(await p.page.getByTestId('compare-table').getAttribute('data-table'), 'dev0.sites_at_end');
  assert.deepEqual(p.consoleErrors, []);
  assert.deepEqual(p.offOrigin, []);
  await p.page.context().close();
});

test('compare the HTA trace pair: ops per name as HTA, steps side by side, exports', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(path.join(HTA, 'control'));
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('compare-with').click();
  await p.page.getByTestId('compare-folder').setInputFiles(path.join(HTA, 'test'));
  await p.page.getByTestId('compare-title').waitFor({ timeout: 120_000 });
  assert.match(await p.page.getByTestId('compare-title').innerText(), /control.*\(A\) with .*test.*\(B\)/);
  const cli = cliDiff(HTA, 'control', 'test', 'hta');
  const doc = JSON.parse(fs.readFileSync(cli.json, 'utf8'));
  assert.equal(doc.ops.length, 432);

  // Ops per name (HTA's TraceDiff rule): 432 names; the spec's cudaMemcpyAsync 38 → 802.
  const table = p.page.getByTestId('compare-table');
  assert.equal(await table.getAttribute('data-table'), 'ops');
  assert.match(await p.page.getByTestId('compare-table-title').innerText(), /HTA TraceDiff rule/);
  assert.match(await p.page.getByTestId('compare-table-footer').innerText(), /432 rows/);
  await p.page.getByTestId('compare-filter').fill('cudaMemcpyAsync');
  const memcpy = (await rows(p)).find((r) => r[0] === 'cudaMemcpyAsync');
  assert.deepEqual(memcpy.slice(1, 3), ['38', '802']);
  await p.page.getByTestId('compare-filter').fill('');
  await p.screenshot('compare-03-trace-ops');

  // The steps side by side, equal to the document's.
  await p.page.getByTestId('compare-table-pick').filter({ hasText: 'steps' }).first().click();
  assert.equal(await table.getAttribute('data-table'), 'steps');
  const steps = await rows(p);
  assert.equal(steps.length, doc.steps.length);
  const service = await table.locator('tbody tr td:nth-child(3)').evaluateAll((tds) => tds.map((td) => td.title));
  assert.deepEqual(service, doc.steps.map((s) => (s.a_service_ms === null ? 'null' : String(s.a_service_ms))));
  await p.screenshot('compare-04-trace-steps');

  await checkExport(p, 'compare-export-json', cli.json, 'compare-trace.json');
  await checkExport(p, 'compare-export-md', cli.md, 'compare-trace.md');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('compare controls: another step of the HTA pair and the time axis of two snapshots, as the CLI with the same flags', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(path.join(HTA, 'control'));
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('compare-with').click();
  await p.page.getByTestId('compare-folder').setInputFiles(path.join(HTA, 'test'));
  await p.page.getByTestId('compare-title').waitFor({ timeout: 120_000 });
  // Step 2's ops: the worker computes again from both stores (`--step 2`).
  const cli = cliDiff(HTA, 'control', 'test', 'hta-step2', ['--step', '2']);
  const doc = JSON.parse(fs.readFileSync(cli.json, 'utf8'));
  const before = await p.page.getByTestId('compare-table-footer').innerText();
  await p.page.getByTestId('compare-step').selectOption('2');
  // The new view writes its options into the link once it is shown.
  await p.page.waitForFunction(() => location.href.includes('cmp.step=2'), null, { timeout: 60_000 });
  assert.equal(await p.page.getByTestId('compare-step').inputValue(), '2');
  const shown = await rows(p);
  assert.equal(shown.length, doc.ops.length);
  assert.deepEqual(shown.map((r) => r[0]), doc.ops.map((o) => o.name));
  assert.match(await p.page.getByTestId('compare-table-footer').innerText(), new RegExp(`${doc.ops.length} rows`));
  assert.notEqual(before, '');
  await checkExport(p, 'compare-export-json', cli.json, 'compare-trace-step2.json');
  await checkExport(p, 'compare-export-md', cli.md, 'compare-trace-step2.md');
  await p.screenshot('compare-07-trace-step2');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();

  // Two snapshots on the time axis: the overlay is redrawn in ms; the exports stay the CLI's.
  const q = await newPage();
  await q.open();
  await q.page.getByTestId('open-files').setInputFiles(path.join(SNAPS, SNAP_A));
  assert.equal(await q.waitDone(), 'Done');
  await q.page.getByTestId('compare-with').click();
  await q.page.getByTestId('compare-files').setInputFiles(path.join(SNAPS, SNAP_B));
  await q.page.getByTestId('compare-title').waitFor({ timeout: 60_000 });
  assert.match(await q.page.getByTestId('compare-overlay').locator('figcaption').innerText(), /entry index/);
  await q.page.getByTestId('compare-axis').selectOption('time');
  await q.page.getByTestId('compare-overlay').locator('figcaption').filter({ hasText: 'ms since the first entry' }).waitFor({ timeout: 60_000 });
  const snap = cliDiff(SNAPS, SNAP_A, SNAP_B, 'snap-time');
  await checkExport(q, 'compare-export-json', snap.json, 'compare-snapshots-time.json');
  await q.page.waitForTimeout(400);
  assert.match(q.page.url(), /cmp\.time=/);
  await q.page.getByTestId('compare-overlay-canvas').scrollIntoViewIfNeeded();
  await q.screenshot('compare-08-snapshots-time-axis');
  assert.deepEqual(q.consoleErrors, []);
  await q.page.context().close();
});

test('compare a two-rank run spread over two workers: the rank table from both workers, memory per pool, exports', async () => {
  // level1's two ranks go to two pool workers (hardwareConcurrency ≥ 2): the comparison runs in
  // the worker holding rank 0 and takes rank 1's figures from its worker's summaries; nothing
  // of A is read again, and the documents equal the CLI's on the whole run.
  const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');
  const p = await newPage();
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  const workers = await p.page.getByTestId('wasm-memory').innerText();
  await p.page.getByTestId('compare-with').click();
  await p.page.getByTestId('compare-folder').setInputFiles(LEVEL1);
  await p.page.getByTestId('compare-title').waitFor({ timeout: 120_000 });
  const cli = cliDiff(path.dirname(LEVEL1), 'level1', 'level1', 'level1');
  const doc = JSON.parse(fs.readFileSync(cli.json, 'utf8'));
  assert.equal(doc.ranks.length, 2);
  await p.page.getByTestId('compare-table-pick').filter({ hasText: /^ranks/ }).click();
  const table = p.page.getByTestId('compare-table');
  assert.equal(await table.getAttribute('data-table'), 'ranks');
  const shown = await rows(p);
  assert.deepEqual(shown.map((r) => r[0]), ['0', '1']);
  const service = await table.locator('tbody tr td:nth-child(4)').evaluateAll((tds) => tds.map((td) => Number(td.title)));
  assert.deepEqual(service, doc.ranks.map((r) => r.a.service_ms_avg));
  await p.page.getByTestId('compare-table-pick').filter({ hasText: /^memory/ }).first().click();
  assert.equal((await rows(p)).length, doc.memory.length);
  await p.screenshot('compare-05-run-memory');
  await p.page.getByTestId('compare-table-pick').filter({ hasText: /^ranks/ }).click();
  await p.screenshot('compare-06-run-ranks');
  await checkExport(p, 'compare-export-json', cli.json, 'compare-run.json');
  await checkExport(p, 'compare-export-md', cli.md, 'compare-run.md');
  console.log(`level1 drop: ${workers}`);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

// `countingPage` (lib.mjs) counts every `Blob.slice` a worker makes, so the bytes each file
// gives are counted.
test('compare with reads side B once and side A not again; the exports read nothing', async () => {
  const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');
  const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block' });
  const { page, seen: { sliced } } = await countingPage(context);
  const p = new ProflensPage(page, server.url);
  await p.open();
  await p.openFolder(path.join(LEVEL1, 'rank0_ascend_pt'));
  assert.equal(await p.waitDone(), 'Done');
  assert.ok([...sliced.keys()].some((k) => k.startsWith('rank0_ascend_pt/')), 'the counter saw no slice');
  const afterA = new Map(sliced);
  await p.page.getByTestId('compare-with').click();
  await p.page.getByTestId('compare-folder').setInputFiles(path.join(LEVEL1, 'rank1_ascend_pt'));
  await p.page.getByTestId('compare-title').waitFor({ timeout: 120_000 });
  // Side A: not one more byte.
  for (const [name, n] of sliced) {
    if (name.startsWith('rank0_ascend_pt/')) assert.equal(n, afterA.get(name), `${name} read again`);
  }
  // Side B: each file it read, exactly its size.
  const bRead = [...sliced].filter(([name]) => name.startsWith('rank1_ascend_pt/'));
  for (const must of ['trace_view.json', 'operator_memory.csv', 'kernel_details.csv']) {
    assert.ok(bRead.some(([k]) => k.endsWith('/' + must)), `${must} of B not read: ${bRead.map((x) => x[0])}`);
  }
  for (const [name, n] of bRead) {
    const size = fs.statSync(path.join(LEVEL1, name)).size;
    assert.equal(n, size, `${name}: ${n} bytes sliced for a file of ${size} B`);
  }
  const afterB = JSON.stringify([...sliced]);
  const cli = cliDiff(LEVEL1, 'rank0_ascend_pt', 'rank1_ascend_pt', 'ranks01');
  await checkExport(p, 'compare-export-json', cli.json, 'compare-ranks01.json');
  await checkExport(p, 'compare-export-md', cli.md, 'compare-ranks01.md');
  assert.equal(JSON.stringify([...sliced]), afterB, 'the exports read no file');
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});
