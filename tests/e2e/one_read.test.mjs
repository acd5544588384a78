// Browser half: a drop reads each input byte once. Every `Blob.slice` a worker makes
// is counted per file (the worker script is served with a counter in front of it), over a
// drop of the level1 `rank0_ascend_pt` folder (memory + anomaly on one rank): each file read
// is sliced exactly its size in total (the page used to run the two analyses as separate jobs
// and read `trace_view.json` twice), and the exports afterwards (memory CSV, anomaly JSON,
// both the CLI's bytes) slice nothing. The second test drops both rank folders of level1 on a
// pool of two workers (`navigator.hardwareConcurrency` set to 2): the side files are read by
// the first worker only (the others get their bytes), every file is sliced exactly its size,
// and the exports, gathered from the two workers' parts, slice nothing and are the CLI's bytes.
// The first test runs twice: with JSPI (each analysis worker reads through a reader worker that
// slices ahead, web/worker_loader.js) and with JSPI hidden (synchronous reads, the fallback).
// The third drops PyTorch profiler traces (HTA's two gzip ranks and one inflated copy): the
// inventory reads each trace's head, the run only the rest (the head comes from the bytes the
// inventory kept, or that the first worker sent), so each trace is still sliced exactly its size.
//
// Run: `bash scripts/build-release.sh && node --test tests/e2e/one_read.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { REPO, OUT, serveStatic, launch, ProflensPage, countingPage } from './lib.mjs';

const LEVEL1 = path.join(REPO,
  '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');
const RANK0 = path.join(LEVEL1, 'rank0_ascend_pt');


let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(RANK0), `fixture missing: ${RANK0}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Relative path (from the folder's parent, as webkitRelativePath) → size of every file. */
function sizes(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(path.dirname(dir), p), fs.statSync(p).size);
    }
  };
  walk(dir);
  return out;
}

for (const jspi of [true, false]) {
test(`a drop slices each input byte once; exports slice nothing (${jspi ? 'reader worker, JSPI' : 'no JSPI: synchronous reads'})`, async () => {
  const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block' });
  const { page, seen } = await countingPage(context, { jspi });
  const { sliced } = seen;
  const p = new ProflensPage(page, server.url);
  await p.open();
  await p.openFolder(RANK0);
  assert.equal(await p.waitDone(), 'Done');
  const size = sizes(RANK0);
  assert.ok(sliced.size > 0, 'the counter saw no slice: was the worker script patched?');
  for (const [name, n] of sliced) {
    assert.ok(size.has(name), `sliced a file that is not in the drop: ${name}`);
    assert.equal(n, size.get(name), `${name}: ${n} bytes sliced for a file of ${size.get(name)} B`);
  }
  for (const must of ['trace_view.json', 'operator_memory.csv', 'kernel_details.csv',
    'communication.json', 'step_trace_time.csv']) {
    assert.ok([...sliced.keys()].some((k) => k.endsWith('/' + must)), `${must} not read: ${[...sliced.keys()]}`);
  }
  const afterDrop = JSON.stringify([...sliced]);

  // Exports: the CLI's bytes, written from the results the worker holds.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-one-read-'));
  const cli = (...args) => execFileSync('cargo', ['run', '--quiet', '--bin', 'proflens', '--', ...args],
    { cwd: REPO, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  const csv = cli('memory', RANK0, '--format', 'csv', '--quiet');
  cli('anomaly', RANK0, '--out', path.join(dir, 'cli.json'));
  const download = async (button) => {
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }),
      page.getByTestId(button).click()]);
    fs.mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `one-read-${d.suggestedFilename()}`);
    await d.saveAs(file);
    return fs.readFileSync(file);
  };
  await page.getByTestId('tab-memory').click();
  const webCsv = await download('export-csv');
  assert.ok(csv.length > 1000 && webCsv.equals(csv), `memory CSV: page ${webCsv.length} B, CLI ${csv.length} B`);
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  const webJson = await download('anom-export-json');
  const cliJson = fs.readFileSync(path.join(dir, 'cli.json'));
  assert.ok(webJson.equals(cliJson), `anomaly JSON: page ${webJson.length} B, CLI ${cliJson.length} B`);
  assert.equal(JSON.stringify([...sliced]), afterDrop, 'exports read no file');
  // The page starts its warm workers when it opens (src/ui/client.rs, WARM_WORKERS), so the
  // count is the pool's, not the drop's: one reader worker per analysis worker with JSPI.
  assert.ok(seen.workers >= 1, 'an analysis worker started');
  assert.equal(seen.readers, jspi ? seen.workers : 0, 'reader workers started');
  // With JSPI the reader workers did read (a loader that does not find the suspending import
  // in wasm-bindgen's import object falls back to synchronous reads silently: wasm-bindgen
  // 0.2.108 renamed the import module from `wbg` to `./worker_bg.js`).
  if (jspi) assert.ok(seen.readerBytes > 0, 'the reader workers sliced nothing: JSPI reads not used');
  else assert.equal(seen.readerBytes, 0, 'a reader worker sliced without JSPI');
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
}


test('two rank folders on two workers: each byte sliced once, gathered exports slice nothing', async () => {
  const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block' });
  await context.addInitScript(() => {
    Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => 2 });
  });
  const { page, seen } = await countingPage(context);
  const p = new ProflensPage(page, server.url);
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  assert.equal(seen.workers, 2, 'a pool of two workers');
  // Chromium has JSPI (137+): each analysis worker reads through its own reader worker, which
  // slices ahead of the parser (web/worker_loader.js), and the counts below still hold.
  assert.equal(seen.readers, 2, 'each analysis worker started one reader worker');
  assert.ok(seen.readerBytes > 0, 'the reader workers sliced nothing: JSPI reads not used');
  const size = sizes(LEVEL1);
  for (const [name, n] of seen.sliced) {
    assert.ok(size.has(name), `sliced a file that is not in the drop: ${name}`);
    assert.equal(n, size.get(name), `${name}: ${n} bytes sliced for a file of ${size.get(name)} B`);
  }
  for (const rank of ['rank0_ascend_pt', 'rank1_ascend_pt']) {
    for (const must of ['trace_view.json', 'operator_memory.csv', 'kernel_details.csv',
      'communication.json', 'step_trace_time.csv', 'profiler_metadata.json']) {
      assert.ok(seen.sliced.has(`level1/${rank}/${must}`) || seen.sliced.has(`level1/${rank}/ASCEND_PROFILER_OUTPUT/${must}`),
        `${rank}/${must} not read: ${[...seen.sliced.keys()]}`);
    }
  }
  const afterDrop = JSON.stringify([...seen.sliced]);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-one-read-'));
  const cli = (...args) => execFileSync('cargo', ['run', '--quiet', '--bin', 'proflens', '--', ...args],
    { cwd: REPO, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  const download = async (button) => {
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }),
      page.getByTestId(button).click()]);
    fs.mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `one-read-2w-${d.suggestedFilename()}`);
    await d.saveAs(file);
    return { name: d.suggestedFilename(), bytes: fs.readFileSync(file) };
  };
  await page.getByTestId('tab-memory').click();
  for (const [button, fmt] of [['export-csv', 'csv'], ['export-json', 'json'], ['export-md', 'md']]) {
    const want = cli('memory', LEVEL1, '--format', fmt, '--quiet');
    const got = await download(button);
    assert.ok(want.length > 1000 && got.bytes.equals(want),
      `memory ${fmt}: page ${got.bytes.length} B, CLI ${want.length} B`);
  }
  cli('anomaly', LEVEL1, '--out', path.join(dir, 'cli.json'), '--report-dir', path.join(dir, 'reports'));
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  const json = await download('anom-export-json');
  assert.equal(json.name, 'anomaly_level1.json');
  const cliJson = fs.readFileSync(path.join(dir, 'cli.json'));
  assert.ok(json.bytes.equals(cliJson), `anomaly JSON: page ${json.bytes.length} B, CLI ${cliJson.length} B`);
  // The report of the rank shown needs the cross-rank table of both workers' ranks.
  const report = await download('anom-export-report');
  assert.equal(report.name, 'anomaly_report_level1_rank0.md');
  const cliReport = fs.readFileSync(path.join(dir, 'reports', report.name));
  assert.ok(report.bytes.equals(cliReport), `report: page ${report.bytes.length} B, CLI ${cliReport.length} B`);
  assert.equal(JSON.stringify([...seen.sliced]), afterDrop, 'exports read no file');
  assert.equal(seen.workers, 2, 'no export worker was started');
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const HTA_FILTER = path.join(REPO,
  '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter');

for (const jspi of [true, false]) {
test(`GPU traces: the head read by the inventory is not read again (${jspi ? 'two workers, JSPI' : 'one worker, no JSPI'})`, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-one-read-gpu-'));
  const dir = path.join(root, 'gpu_run');
  fs.mkdirSync(path.join(dir, 'gz'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'plain'), { recursive: true });
  for (const n of ['sampled_rank-0.json.gz', 'sampled_rank-1.json.gz']) {
    fs.copyFileSync(path.join(HTA_FILTER, n), path.join(dir, 'gz', n));
  }
  fs.writeFileSync(path.join(dir, 'plain', 'rank2.pt.trace.json'),
    zlib.gunzipSync(fs.readFileSync(path.join(HTA_FILTER, 'sampled_rank-0.json.gz'))));
  const context = await browser.newContext({ serviceWorkers: 'block' });
  const workers = jspi ? 2 : 1;
  await context.addInitScript((n) => {
    Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => n });
  }, workers);
  const { page, seen } = await countingPage(context, { jspi });
  const p = new ProflensPage(page, server.url);
  await p.open();
  await p.openFolder(dir);
  assert.equal(await p.waitDone(), 'Done');
  assert.equal(seen.workers, workers);
  if (jspi) assert.ok(seen.readerBytes > 0, 'the reader workers sliced nothing: JSPI reads not used');
  const size = sizes(dir);
  assert.equal(size.size, 3);
  for (const [name, n] of size) {
    assert.equal(seen.sliced.get(name), n, `${name}: ${seen.sliced.get(name)} bytes sliced for a file of ${n} B`);
  }
  assert.equal(seen.sliced.size, 3, `sliced: ${[...seen.sliced.keys()]}`);
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
  fs.rmSync(root, { recursive: true, force: true });
});
}
