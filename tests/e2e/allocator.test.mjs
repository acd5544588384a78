// End-to-end tests of the allocator state view: open a snapshot, click an entry
// (the curve, the entry list, ↑/↓), see the segment map at that moment (an address-ordered
// strip per segment, blocks by state, hover = size/stream/pool/frames) and the fragmentation
// beside it; at an `oom` entry the OOM explanation ends in its verdict.
//
// Run: `node --test tests/e2e/allocator.test.mjs` after scripts/build-release.sh. The OOM
// snapshot is written by tests/reference/snapshot_oom.py (CPython's pickler).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const FIXTURES = path.join(REPO, '../shared/fixtures/torch_snapshots');
const ZIDONG = path.join(FIXTURES, 'ZidongLiu_DeComFL__memory.pickle');
const OOM = path.join(os.tmpdir(), `proflens-e2e-oom-${process.pid}.pickle`);

let server;
let browser;

before(async () => {
  execFileSync('python3', [path.join(REPO, 'tests/reference/snapshot_oom.py'), OOM]);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(files) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await p.page.getByTestId('open-files').setInputFiles(files);
  assert.equal(await p.waitDone(600_000), 'Done');
  await p.page.getByTestId('snap-alloc-title').waitFor({ timeout: 600_000 });
  return p;
}

const title = (p) => p.page.getByTestId('snap-alloc-title').innerText();
const entryOf = async (p) => Number((await title(p)).match(/after entry (\d+)/)[1]);

async function shot(p, name) {
  const el = p.page.getByTestId('snap-allocator');
  await el.scrollIntoViewIfNeeded();
  await p.page.waitForTimeout(200);
  await el.screenshot({ path: path.join(REPO, 'test-output', `${name}.png`) });
}

test('click an entry: the segment map at that moment', async () => {
  const p = await open([ZIDONG]);
  // The global peak (entry 11205, EXPECTED.json) is selected first.
  assert.equal(await entryOf(p), 11205);
  const segs = Number(await p.page.getByTestId('snap-segmap').getAttribute('data-segments'));
  assert.ok(segs > 0 && segs <= 61, `${segs} segments`);
  assert.ok(await p.page.getByTestId('snap-block').count() >= segs);
  const frag = await p.page.getByTestId('snap-fragmentation').innerText();
  assert.match(frag, /hard\s+[\d.]+ (B|KiB|MiB|GiB) free in blocks too small/);
  // Hover a block: size, stream, pool and the allocation's frames.
  const blk = p.page.locator('[data-testid=snap-block].allocated').first();
  await blk.hover();
  const info = p.page.getByTestId('snap-block-info');
  await info.filter({ hasText: 'stream · pool' }).waitFor();
  assert.match(await info.innerText(), /\(\d+ bytes\), requested \d+ bytes/);
  await p.page.waitForFunction(() => document.querySelectorAll('.snap-blockinfo .snap-frames li').length > 0);
  assert.match(await info.innerText(), /\.py:\d+/);
  await shot(p, 'allocator-01-peak-hover');
  // Click a point near the start of the curve: the map moves there (fewer segments exist).
  const chart = p.page.getByTestId('snap-chart');
  await chart.scrollIntoViewIfNeeded();
  const box = await chart.boundingBox();
  await p.page.mouse.click(box.x + 64 + (box.width - 76) * 0.1, box.y + box.height / 2);
  await p.page.waitForFunction(() => !/after entry 11205 /.test(document.querySelector('[data-testid=snap-alloc-title]')?.innerText));
  const early = await entryOf(p);
  assert.ok(early < 11205, `clicked entry ${early}`);
  const earlySegs = Number(await p.page.getByTestId('snap-segmap').getAttribute('data-segments'));
  assert.ok(earlySegs <= segs, `${earlySegs} ≤ ${segs}`);
  // The entry list: click the next row, then ArrowDown.
  const next = p.page.getByTestId('snap-entry').filter({ hasText: String(early + 1) }).first();
  await next.click();
  await p.page.waitForFunction((n) => document.querySelector('[data-testid=snap-alloc-title]')?.innerText.includes(`after entry ${n} `), early + 1);
  await p.page.getByTestId('snap-entries').focus();
  await p.page.keyboard.press('ArrowDown');
  await p.page.waitForFunction((n) => document.querySelector('[data-testid=snap-alloc-title]')?.innerText.includes(`after entry ${n} `), early + 2);
  await shot(p, 'allocator-02-early-entry');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('an oom entry: the explanation ends in its verdict', async () => {
  const p = await open([OOM]);
  await p.page.getByTestId('snap-peak').filter({ hasText: 'OOM' }).click();
  const verdict = p.page.getByTestId('snap-oom-verdict');
  await verdict.waitFor();
  assert.equal(
    await verdict.innerText(),
    "Fragmentation: the allocator's segments on this stream had 5.00 MiB free and the driver 0 B, enough for the 3.00 MiB request together, but the largest contiguous free block was 1.00 MiB.",
  );
  assert.match(await p.page.getByTestId('snap-oom').innerText(), /OOM: requested 3\.00 MiB, the driver had 0 B free/);
  assert.equal(await p.page.getByTestId('snap-segmap').getAttribute('data-segments'), '1');
  assert.equal(await p.page.locator('[data-testid=snap-block].inactive').count(), 5);
  assert.equal(await p.page.locator('[data-testid=snap-block].allocated').count(), 5);
  await shot(p, 'allocator-03-oom');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});
