// Drops a user makes that are not one clean capture: a folder mixing a GPU trace and an Ascend
// rank, and files named like traces that are not (empty, not JSON, a .gz that is not gzip). The
// page says what is wrong and where, never waits forever, never hides a file. Inputs are built
// in a temp folder from the shared fixtures and from bytes written here.
// Needs dist/ (scripts/build-release.sh). Screenshots: test-output/odd-*.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const FIX = path.join(REPO, '../shared/fixtures');
const RANK0 = path.join(FIX, 'ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt');
const GPU = path.join(FIX, 'ascend/facebookresearch__HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz');
const ARCHIVE = path.join(FIX, 'real_world/facebookresearch__param/et_replay/tests/inputs/dlrm_kineto.tar.gz');

let server;
let browser;
let tmp;

before(async () => {
  for (const f of [RANK0, GPU, ARCHIVE]) assert.ok(fs.existsSync(f), `fixture missing: ${f}`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-odd-'));
  const mixed = path.join(tmp, 'mixed');
  fs.cpSync(RANK0, path.join(mixed, 'rank0_ascend_pt'), { recursive: true });
  fs.copyFileSync(GPU, path.join(mixed, 'rank0.pt.trace.json.gz'));
  const broken = path.join(tmp, 'broken');
  fs.mkdirSync(broken);
  fs.writeFileSync(path.join(broken, 'empty.pt.trace.json'), '');
  fs.writeFileSync(path.join(broken, 'notjson.pt.trace.json'), 'this is not json at all\n');
  fs.writeFileSync(path.join(broken, 'notgzip.pt.trace.json.gz'), 'not gzip\n');
  fs.copyFileSync(GPU, path.join(broken, 'good.pt.trace.json.gz'));
  const archived = path.join(tmp, 'archived');
  fs.mkdirSync(archived);
  fs.copyFileSync(ARCHIVE, path.join(archived, 'dlrm_kineto.tar.gz'));
  const rankAndArchive = path.join(tmp, 'rank-and-archive');
  fs.cpSync(RANK0, path.join(rankAndArchive, 'rank0_ascend_pt'), { recursive: true });
  fs.copyFileSync(ARCHIVE, path.join(rankAndArchive, 'dlrm_kineto.tar.gz'));
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function newPage(hash = '') {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const p = new ProflensPage(await context.newPage(), server.url + hash);
  await p.open();
  return p;
}

test('a GPU trace beside an Ascend rank: not its peer, and the memory tab on it says why instead of waiting', async () => {
  // rank 1 is the GPU trace: its role "mixed (GPU)" sorts after the Ascend rank's "mixed".
  const p = await newPage('#tab=memory&rank=1');
  await p.openFolder(path.join(tmp, 'mixed'));
  assert.equal(await p.waitDone(), 'Done');
  const pending = p.page.getByTestId('memory-pending');
  await pending.waitFor();
  assert.match(await pending.innerText(), /^This analysis does not run on the selected rank folder \(mixed\/rank0\.pt\.trace\.json\.gz: .*operator_memory\.csv.*\)\. Pick a rank folder in the list above\.$/);
  await p.screenshot('odd-mixed-memory');
  // The Ascend rank is one click away and shows its events, counted as allocations released.
  await p.page.getByTestId('rank-summary-row').first().click();
  const card = p.page.getByTestId('memory-summary');
  await card.waitFor();
  assert.match(await card.innerText(), /184 rows: 184 allocations \(size > 0\), \d+ released inside the capture/);
  await p.page.getByTestId('tab-inventory').click();
  assert.match(await p.page.locator('body').innerText(), /mixed \(GPU\)/);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('files named like traces that are not: each an error in Problems with why and where, once; the good trace runs', async () => {
  const p = await newPage();
  await p.openFolder(path.join(tmp, 'broken'));
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-problems').click();
  await p.page.getByTestId('problems').waitFor();
  const text = await p.page.getByTestId('problems').innerText();
  for (const [file, why] of [
    ['empty.pt.trace.json', /file is empty/],
    ['notjson.pt.trace.json', /\(byte 0\): expected `\[` or `\{` at the start of a trace/],
    ['notgzip.pt.trace.json.gz', /named \.gz but not gzip-compressed/],
  ]) {
    const lines = text.split('\n').filter((l) => l.includes('GPU-FILE-002') && l.includes(`broken/${file}`));
    assert.equal(lines.length, 1, `${file}:\n${text}`);
    assert.match(lines[0], why);
  }
  await p.screenshot('odd-broken-problems');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('a folder holding only an archive: the inventory says why the file was not read, without a click', async () => {
  const p = await newPage();
  await p.openFolder(path.join(tmp, 'archived'));
  assert.equal(await p.waitDone(), 'Done');
  const ignored = p.page.getByTestId('ignored-files');
  assert.equal(await ignored.evaluate((d) => d.open), true);
  assert.match(await ignored.innerText(), /archived\/dlrm_kineto\.tar\.gz — .*archive: extract it/);
  await p.screenshot('odd-archive-only');
  assert.deepEqual(p.consoleErrors, []);
  // Beside a rank folder the list stays folded: the rank is the answer to that drop.
  const q = await newPage();
  await q.openFolder(path.join(tmp, 'rank-and-archive'));
  assert.equal(await q.waitDone(), 'Done');
  assert.equal(await q.page.getByTestId('ignored-files').evaluate((d) => d.open), false);
  assert.deepEqual(q.consoleErrors, []);
  await p.page.context().close();
  await q.page.context().close();
});
