// End-to-end tests of the trunk-built page (dist/) in Debian's Chromium: the real level1
// fixture through the folder input, the built-in sample, exports against the CLI, and the
// "no network request" promise. Screenshots go to test-output/.
//
// Run: scripts/test.sh (builds dist/ first), or `node --test tests/e2e/` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, OUT, DIST, serveStatic, launch, ProflensPage } from './lib.mjs';

const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(LEVEL1), `fixture missing: ${LEVEL1}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function newPage(opts = {}) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, acceptDownloads: true, ...opts });
  const page = await context.newPage();
  return new ProflensPage(page, server.url);
}

test('landing page states that files never leave the browser', async () => {
  const p = await newPage();
  await p.open();
  const text = await p.page.getByTestId('privacy-statement').innerText();
  assert.match(text, /never leave this browser/);
  await p.screenshot('01-landing');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('level1 folder: 2 ranks, 184 rows each, matched call stacks, no network', async () => {
  const p = await newPage();
  await p.open();
  const before = server.requests.length;
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');

  // Inventory: both rank folders, with their files and readiness.
  const cards = p.page.getByTestId('rank-card');
  assert.equal(await cards.count(), 2);
  const cardText = await cards.first().innerText();
  assert.match(cardText, /level1 · rank 0/);
  assert.match(cardText, /Level1/);
  assert.match(cardText, /operator_memory\.csv/);
  await p.screenshot('02-inventory-level1');

  // Memory tab: one overview line per rank, 184 events each.
  await p.page.getByTestId('tab-memory').click();
  const rows = p.page.getByTestId('rank-summary-row');
  assert.equal(await rows.count(), 2);
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['184', '184']);
  await p.page.getByTestId('event-row').first().waitFor();
  assert.match(await p.page.getByTestId('row-count').innerText(), /^184 of 184 rows$/);
  await p.page.waitForTimeout(300); // let the chart draw
  await p.screenshot('03-memory-rank0');

  // A matched call stack: filter on the user frame, open the first row's stack.
  await p.page.getByTestId('row-filter').fill('main.py(354)');
  await p.page.waitForFunction(() => /^\d+ of 184 rows$/.test(document.querySelector('[data-testid=row-count]')?.innerText || '')
    && !/^184 of/.test(document.querySelector('[data-testid=row-count]').innerText));
  const firstRow = p.page.getByTestId('event-row').first();
  assert.match(await firstRow.innerText(), /main\.py\(354\): train/);
  await firstRow.click();
  const userFrame = p.page.locator('[data-testid=stack-panel] li.user');
  await userFrame.waitFor();
  assert.match(await userFrame.innerText(), /imagenet_script\/main\.py\(354\): train$/);
  const frames = await p.page.locator('[data-testid=stack-panel] ol.frames li').count();
  assert.ok(frames > 5, `full stack, one frame per line (got ${frames})`);
  await p.screenshot('04-memory-stack');

  // Rank 1 through the selector.
  await rows.nth(1).click();
  await p.page.getByTestId('event-row').first().waitFor();
  assert.match(await p.page.getByTestId('row-count').innerText(), /184 of 184 rows/);

  // Nothing but the page's own files was requested: no other origin, and after the page
  // loaded only files of this build (each new worker loads its script and wasm; the service
  // worker of the release build precaches the build's files once).
  assert.deepEqual(p.offOrigin, []);
  const own = new Set(['/', ...fs.readdirSync(DIST).map((f) => `/${f}`)]);
  const after = [...new Set(server.requests.slice(before))].sort();
  assert.deepEqual(after.filter((r) => !own.has(r)), [], `requests after the page loaded: ${after}`);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('load sample: two synthetic ranks analysed', async () => {
  const p = await newPage({ colorScheme: 'dark' });
  await p.open();
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.getByTestId('tab-memory').click();
  assert.equal(await p.page.getByTestId('rank-summary-row').count(), 2);
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['27', '27']);
  await p.page.getByTestId('event-row').first().waitFor();
  await p.page.waitForTimeout(300);
  await p.screenshot('05-sample-dark');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('exports download the same bytes as `proflens memory`', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  for (const [button, format] of [['export-csv', 'csv'], ['export-json', 'json'], ['export-md', 'md']]) {
    const [download] = await Promise.all([
      p.page.waitForEvent('download', { timeout: 60_000 }),
      p.page.getByTestId(button).click(),
    ]);
    const file = path.join(OUT, `export-level1.${format}`);
    fs.mkdirSync(OUT, { recursive: true });
    await download.saveAs(file);
    const cli = execFileSync('cargo', ['run', '--quiet', '--bin', 'proflens', '--', 'memory', LEVEL1,
      '--format', format, '--quiet'], { cwd: REPO, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
    const web = fs.readFileSync(file);
    assert.ok(cli.length > 1000, `CLI ${format} output is empty`);
    assert.ok(web.equals(cli), `${format}: the page's export (${web.length} B) differs from the CLI (${cli.length} B)`);
  }
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('an unrelated folder gets a clear message, nothing crashes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-unrelated-'));
  fs.mkdirSync(path.join(dir, 'notes'));
  fs.writeFileSync(path.join(dir, 'notes', 'readme.txt'), 'not a profile\n');
  fs.writeFileSync(path.join(dir, 'notes', 'data.csv'), 'a,b\n1,2\n');
  const p = await newPage();
  await p.open();
  await p.openFolder(path.join(dir, 'notes'));
  assert.equal(await p.waitDone(), 'Done');
  assert.equal(await p.page.getByTestId('rank-card').count(), 0);
  assert.match(await p.page.getByTestId('inventory-summary').innerText(), /0 rank folder\(s\), 0 snapshot pickle\(s\), 2 file\(s\).*2 file\(s\) outside any rank folder/);
  assert.match(await p.page.locator('body').innerText(), /MEM-DISC-001/);
  await p.screenshot('06-unrelated-folder');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('cancel stops a long run at once and keeps the page usable', async () => {
  // A rank folder with a large trace (≈ 300 MB of cpu_op events) so the run is still going.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-cancel-'));
  const out = path.join(dir, 'big', 'rank0_ascend_pt', 'ASCEND_PROFILER_OUTPUT');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(dir, 'big', 'rank0_ascend_pt', 'profiler_info_0.json'), '{"rank_id": 0}');
  fs.writeFileSync(path.join(out, 'operator_memory.csv'),
    'Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Device Type\n'
    + 'aten::empty,1.0,1000.0,,,1.0,2.0,1.0,NPU:0\n');
  const fd = fs.openSync(path.join(out, 'trace_view.json'), 'w');
  const ev = (i) => `{"ph":"X","name":"aten::op${i % 97}","pid":1,"tid":1,"ts":"${1000 + i}.000","dur":1.0,"cat":"cpu_op","args":{"Call stack":"/home/u/a.py(${i % 500}): f;\\r\\n<string>(1): <module>"}}`;
  fs.writeSync(fd, '[');
  const batch = [];
  for (let i = 0; i < 2_000_000; i++) {
    batch.push(ev(i));
    if (batch.length === 10_000) { fs.writeSync(fd, (i >= 10_000 ? ',' : '') + batch.join(',')); batch.length = 0; }
  }
  fs.writeSync(fd, ']');
  fs.closeSync(fd);

  const p = await newPage();
  await p.open();
  await p.openFolder(path.join(dir, 'big'));
  // Cancel while trace_view.json is being read (its progress bar has appeared).
  await p.page.locator('tr[data-kind="trace_view.json"] [data-testid=file-progress]').waitFor({ timeout: 60_000 });
  await p.page.getByTestId('cancel').click();
  assert.equal(await p.waitDone(5_000), 'Cancelled');
  await p.screenshot('07-cancelled');
  // The page still works: load the sample afterwards.
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('bad rows and a truncated trace are listed with positions; the other rank is intact', async () => {
  const sample = path.join(REPO, 'fixtures/sample/sample_run');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-bad-'));
  fs.cpSync(sample, path.join(dir, 'bad'), { recursive: true });
  const out0 = path.join(dir, 'bad/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT');
  const csv = fs.readFileSync(path.join(out0, 'operator_memory.csv'), 'utf8').split('\r\n');
  csv[2] = csv[2].replace(/^([^,]*),[^,]*,/, '$1,abc,'); // line 3: Size(KB) not a number
  csv[4] = csv[4].split(',').slice(0, 5).join(',');         // line 5: short row
  fs.writeFileSync(path.join(out0, 'operator_memory.csv'), csv.join('\r\n'));
  const trace = fs.readFileSync(path.join(out0, 'trace_view.json'));
  fs.writeFileSync(path.join(out0, 'trace_view.json'), trace.subarray(0, Math.floor(trace.length / 2)));

  const p = await newPage();
  await p.open();
  await p.openFolder(path.join(dir, 'bad'));
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  // 27 rows per rank in the sample; rank 0 loses its two bad rows, rank 1 keeps all.
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['25', '27']);
  await p.page.getByTestId('tab-problems').click();
  const text = await p.page.getByTestId('problems').innerText();
  assert.match(text, /MEM-CSV-003[^\n]*operator_memory\.csv[^\n]*line 3/);
  assert.match(text, /MEM-CSV-004[^\n]*operator_memory\.csv[^\n]*line 5/);
  assert.match(text, /MEM-TV-002[^\n]*trace_view\.json[^\n]*byte \d+/);
  await p.screenshot('08-problems');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
  fs.rmSync(dir, { recursive: true, force: true });
});
