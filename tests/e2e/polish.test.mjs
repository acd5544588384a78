// What a new user sees ("Wrong or misleading" and "Units, numbers and words"): one
// curve, peak and live set per allocator pool on level2; no negative zero, no spec section
// number and no decimal-MB/KB unit in any tab after dropping each real fixture folder and
// snapshot; honest empty states on a folder without kernels; the sample shows steps, bubbles
// and a snapshot; reload after a snapshot source link, then Load sample; no deprecated
// wasm-bindgen init warning. Needs dist/ (scripts/build-release.sh). Screenshots:
// test-output/polish-*.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const FIX = path.join(REPO, '../shared/fixtures');
const MSI = path.join(FIX, 'ascend/Ascend__msinsight');
const LEVEL2 = path.join(MSI, 'test/data/pytorch/text/level2');
const RLI_MEMORY = path.join(FIX, 'rl_insight/data/recipe/memory_data');
const FOLDERS = [
  path.join(MSI, 'test/data/pytorch/text/level0'),
  path.join(MSI, 'test/data/pytorch/text/level1'),
  LEVEL2,
  path.join(MSI, 'test/st/level2'),
  path.join(MSI, 'server/src/test/test_data'),
  RLI_MEMORY,
  // A GPU (Kineto) trace: its notes and tooltips follow the same rules.
  path.join(FIX, 'ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config'),
];
const SNAPSHOTS = fs.readdirSync(path.join(FIX, 'torch_snapshots'))
  .filter((f) => /\.(pickle|pkl)$/.test(f))
  .map((f) => path.join(FIX, 'torch_snapshots', f));
const SNAPSHOT = path.join(FIX, 'torch_snapshots/Yiyi-philosophy_LLM-inference__1.3b_snapshot.pickle');

let server;
let browser;

before(async () => {
  for (const f of [...FOLDERS, SNAPSHOT]) assert.ok(fs.existsSync(f), `fixture missing: ${f}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function newPage(opts = {}) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, ...opts });
  const p = new ProflensPage(await context.newPage(), server.url);
  p.warnings = [];
  p.page.on('console', (m) => { if (m.type() === 'warning') p.warnings.push(m.text()); });
  return p;
}

/** Every tab button the page offers, in order. */
async function tabs(page) {
  return page.$$eval('[role=tab]', (els) => els.filter((e) => !e.disabled).map((e) => e.dataset.testid));
}

/** The texts a person reads that break the rules: negative zero, spec section numbers, decimal
 * size units, raw epoch µs (16 digits) outside tooltips. `quotesInput`: the Problems tab quotes
 * input values (a kernel's raw end time) to find the row, so raw µs are allowed there. */
function offences(text, quotesInput = false) {
  const found = [];
  for (const [what, re] of [
    ['negative zero', /(^|[^\w.])-0(\.0+)?(?![\d.])/m],
    ['section sign', /§/],
    ['decimal size unit', /\d\s?(MB|KB|GB)\b/],
    ...(quotesInput ? [] : [['raw epoch µs', /\b1[67]\d{14}(\.\d+)?\b/]]),
  ]) {
    const m = text.match(re);
    if (m) found.push(`${what}: …${text.slice(Math.max(0, m.index - 60), m.index + 60)}…`);
  }
  return found;
}

/** Visits every tab and returns the rule breaks found in each. */
async function checkEveryTab(p, label) {
  const bad = [];
  for (const t of await tabs(p.page)) {
    await p.page.getByTestId(t).click();
    await p.page.waitForTimeout(400);
    const text = await p.page.locator('#tab-panel').innerText();
    for (const o of offences(text, t === 'tab-problems')) bad.push(`${label} / ${t}: ${o}`);
  }
  return bad;
}

test('level2: one curve, peak and live set per allocator pool, labelled', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(LEVEL2);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('pool-row').first().waitFor();
  const pools = await p.page.$$eval('[data-testid=pool-row]', (rows) => rows.map((r) => ({
    pool: r.dataset.pool,
    peak: r.querySelector('[data-testid=pool-peak]').innerText.replace(/ at .*/, ''),
    live: r.querySelector('[data-testid=pool-live]').innerText,
  })));
  // Golden values of tests/memory_golden.rs (every_fixture_has_one_series_peak_and_live_set…).
  assert.deepEqual(pools, [
    { pool: 'PTA', peak: '1.16 GiB', live: '41 rows, 486.6 MiB' },
    { pool: 'GE', peak: '73.1 MiB', live: '3 rows, 73.0 MiB' },
    { pool: 'OTHER', peak: '1.05 GiB', live: '1 row, 5.28 MiB' },
  ]);
  assert.match(await p.page.getByTestId('pool-note').innerText(), /cann:: to the CANN graph engine workspace \(GE\)/);
  // The chart shows the PTA pool first, then the GE pool on a click.
  const legend = () => p.page.getByTestId('chart-legend').innerText();
  await p.page.waitForFunction(() => /PTA allocated/.test(document.querySelector('[data-testid=chart-legend]')?.innerText));
  assert.match(await legend(), /PTA allocated.*PTA reserved.*PTA active.*PTA live/s);
  await p.screenshot('polish-01-level2-pta');
  await p.page.locator('[data-testid=pool-row][data-pool=GE]').click();
  await p.page.waitForFunction(() => /GE allocated/.test(document.querySelector('[data-testid=chart-legend]')?.innerText));
  await p.page.waitForFunction(() => /mem\.pool=GE/.test(location.hash));
  // The GE curve never reaches the PTA level: its axis tops out under 100 MiB.
  await p.page.waitForTimeout(300);
  await p.screenshot('polish-02-level2-ge');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('every fixture folder and snapshot: no -0, no §, no MB/KB, no raw epoch µs in any tab', async () => {
  const bad = [];
  for (const f of FOLDERS) {
    const p = await newPage();
    await p.open();
    await p.openFolder(f);
    assert.equal(await p.waitDone(), 'Done', f);
    bad.push(...await checkEveryTab(p, path.relative(FIX, f)));
    assert.deepEqual(p.consoleErrors, [], f);
    await p.page.context().close();
  }
  for (const f of SNAPSHOTS) {
    const p = await newPage();
    await p.open();
    await p.page.getByTestId('open-files').setInputFiles([f]);
    assert.equal(await p.waitDone(), 'Done', f);
    bad.push(...await checkEveryTab(p, path.basename(f)));
    await p.page.context().close();
  }
  assert.deepEqual(bad, []);
});

test('a folder without kernels: steps tab explains, Problems lists it, Inventory says cannot run', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(RLI_MEMORY);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-anomaly').click();
  const empty = p.page.getByTestId('anomaly-no-kernels');
  await empty.waitFor();
  assert.match(await empty.innerText(), /cannot run on this rank folder/);
  assert.match(await empty.innerText(), /ProfilerActivity\.NPU/);
  assert.equal(await p.page.getByTestId('steps-table').count(), 0);
  await p.screenshot('polish-03-no-kernels');
  await p.page.getByTestId('tab-problems').click();
  assert.match(await p.page.getByTestId('problems').innerText(), /ANOM-FILE-002[^\n]*trace_view\.json/);
  await p.page.getByTestId('tab-inventory').click();
  const caps = await p.page.getByTestId('capability').allInnerTexts();
  assert.ok(caps.some((c) => /^Steps and anomalies: cannot run — missing device kernels/.test(c)), caps.join('\n'));
  // 49 of 49 rows matched an op with a stack: no "no call stacks" contradiction.
  assert.ok(!caps.some((c) => /trace_view\.json has no call stacks/.test(c)), caps.join('\n'));
  await p.screenshot('polish-04-inventory-no-kernels');
  await p.page.context().close();
});

test('Load sample shows steps, bubbles, two pools and a snapshot', async () => {
  const p = await newPage();
  await p.open();
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.getByTestId('tab-anomaly').click();
  await p.page.getByTestId('card-steps').waitFor();
  assert.equal(await p.page.getByTestId('card-steps').innerText(), '3 (marker)');
  await p.page.getByTestId('bubble-row').first().waitFor();
  assert.ok(await p.page.getByTestId('bubble-row').count() > 0);
  await p.page.getByTestId('bubble-row').first().click();
  const win = await p.page.getByTestId('bubble-window').innerText();
  assert.match(win, /^\+\d/);
  assert.deepEqual(offences(win), []);
  await p.screenshot('polish-05-sample-steps');
  await p.page.getByTestId('tab-memory').click();
  assert.deepEqual(await p.page.$$eval('[data-testid=pool-row]', (r) => r.map((x) => x.dataset.pool)), ['PTA', 'GE']);
  await p.page.getByTestId('tab-snapshot').click();
  await p.page.getByTestId('snapshot-view').waitFor();
  await p.page.getByTestId('tab-inventory').click();
  assert.match(await p.page.getByTestId('inventory-summary').innerText(), /2 rank folder\(s\), 1 snapshot pickle\(s\)/);
  assert.match(await p.page.getByTestId('snapshot-inventory').innerText(), /memory_snapshot\.pickle.*device 0: 20 entries/s);
  assert.deepEqual(p.consoleErrors, []);
  assert.deepEqual(p.warnings.filter((w) => /deprecated/.test(w)), []);
  await p.page.context().close();
});

test('snapshot → source link → reload → Load sample still finishes', async () => {
  const p = await newPage();
  await p.open();
  await p.page.getByTestId('open-files').setInputFiles([SNAPSHOT]);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('snapshot-view').waitFor();
  const link = p.page.locator('a.src-link').first();
  await link.waitFor({ timeout: 30_000 });
  // A link to an editor (vscode://…): the browser hands it to another program.
  await link.click({ noWaitAfter: true }).catch(() => {});
  await p.page.waitForTimeout(500);
  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.getByTestId('tab-memory').click();
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['27', '27']);
  await p.screenshot('polish-06-reload-then-sample');
  await p.page.context().close();
});

test('units: binary sizes in the memory tab and filters; an empty filter says so', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(LEVEL2);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('event-row').first().waitFor();
  const text = await p.page.locator('#tab-panel').innerText();
  assert.match(text, /MiB/);
  assert.deepEqual(offences(text), []);
  assert.equal(await p.page.getByTestId('min-kb').getAttribute('placeholder'), 'KiB');
  await p.page.getByTestId('row-filter').fill('no-such-op-anywhere');
  await p.page.getByTestId('row-filter-empty').waitFor();
  assert.match(await p.page.getByTestId('row-filter-empty').innerText(), /No row matches this filter \(of 184 rows\)/);
  await p.screenshot('polish-07-empty-filter');
  await p.page.context().close();
});

test('two rank cards side by side keep their file tables inside the card (the read column in view)', async () => {
  // st/level2's file names (`ASCEND_PROFILER_OUTPUT/communication_matrix.json`) are long: as
  // unbreakable words they pushed the read column past the card's edge, behind a scroll bar.
  const p = await newPage({ viewport: { width: 1400, height: 1000 } });
  await p.open();
  await p.openFolder(path.join(MSI, 'test/st/level2'));
  assert.equal(await p.waitDone(), 'Done');
  const cards = p.page.getByTestId('rank-card');
  assert.equal(await cards.count(), 3);
  const fits = await cards.evaluateAll((cs) => cs.map((c) => {
    const table = c.querySelector('table.files');
    const card = c.getBoundingClientRect();
    return { overflow: c.scrollWidth - c.clientWidth, tableRight: table.getBoundingClientRect().right - card.right };
  }));
  for (const f of fits) {
    assert.ok(f.overflow <= 0, `card scrolls by ${f.overflow} px`);
    assert.ok(f.tableRight <= 0, `table ends ${f.tableRight} px past the card`);
  }
  await p.screenshot('polish-rank-cards-fit');
  await p.page.context().close();
});
