// End-to-end test of the memory-snapshot tab on the trunk-built page (dist/) in
// Debian's Chromium: drop a fixture pickle through the "Open files" input, see the curves,
// click a point of the curve, see its live set, change the settings, download the report
// (compared byte for byte with `proflens snapshot`). Screenshots go to test-output/.
//
// Run: scripts/test.sh, or `node --test tests/e2e/snapshot.test.mjs` after scripts/build-release.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const FIXTURES = path.join(REPO, '../shared/fixtures/torch_snapshots');
const ZIDONG = path.join(FIXTURES, 'ZidongLiu_DeComFL__memory.pickle');
const CRANBERRII = path.join(FIXTURES, 'cranberrii_ftcourse__memory_snapshot.pickle');
const EXPECTED = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'EXPECTED.json'), 'utf8'));

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(ZIDONG), `fixture missing: ${ZIDONG}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, acceptDownloads: true });
  return new ProflensPage(await context.newPage(), server.url);
}

// The newest CLI binary built from this tree (`cargo test` builds the debug one).
function proflensBin() {
  const bins = ['target/release/proflens', 'target/debug/proflens']
    .map((b) => path.join(REPO, b))
    .filter((b) => fs.existsSync(b));
  bins.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return bins[0];
}

test('landing page mentions snapshots', async () => {
  const p = await newPage();
  await p.open();
  assert.match(await p.page.getByTestId('landing-snapshots').innerText(), /snapshot pickles/);
  await p.page.context().close();
});

test('drop two snapshots, click the curve, see the live set, pick a peak, see a stack', async () => {
  const p = await newPage();
  await p.open();
  await p.page.getByTestId('open-files').setInputFiles([ZIDONG, CRANBERRII]);
  assert.equal(await p.waitDone(), 'Done');
  // Only snapshots were dropped: the snapshot tab opens by itself, one line per file.
  await p.page.getByTestId('snapshot-view').waitFor();
  const files = p.page.getByTestId('snap-file');
  assert.equal(await files.count(), 2);
  const names = await files.allInnerTexts();
  assert.ok(names.some((t) => t.includes('cranberrii')) && names.some((t) => t.includes('ZidongLiu')));

  // Select ZidongLiu. Its peak active = EXPECTED.json memoryviz_like.max_bytes (baseline 0).
  await files.filter({ hasText: 'ZidongLiu' }).click();
  const want = EXPECTED['ZidongLiu_DeComFL__memory.pickle'].device_traces[0].memoryviz_like.max_bytes;
  assert.equal(want, 1783664516);
  await p.page.getByTestId('snap-peak-active').filter({ hasText: 'entry 11205' }).waitFor();
  // The global peak's live set shows without a click: 1.66 GiB (1,783,664,516 bytes).
  const title = p.page.getByTestId('snap-live-title');
  await title.filter({ hasText: 'entry 11205' }).waitFor();
  assert.match(await title.innerText(), /Live at entry 11205 .*: 1\.66 GiB in \d+ tensors/);
  assert.ok(await p.page.getByTestId('snap-contributor').count() > 0);
  assert.ok(await p.page.getByTestId('snap-ice').count() > 1);
  await p.page.waitForTimeout(400); // let the chart draw
  await p.screenshot('snapshot-01-peak');

  // Click a point of the curve (a quarter of the way in): a different entry and its live set.
  const chart = p.page.getByTestId('snap-chart');
  const box = await chart.boundingBox();
  await p.page.mouse.click(box.x + 64 + (box.width - 76) * 0.25, box.y + box.height / 2);
  await p.page.waitForFunction(() => {
    const t = document.querySelector('[data-testid=snap-live-title]')?.innerText || '';
    return /Live at entry \d+/.test(t) && !t.includes('entry 11205');
  });
  const clicked = await title.innerText();
  const index = Number(clicked.match(/entry (\d+)/)[1]);
  assert.ok(index > 0 && index < 23105, clicked);

  // The peak list selects the global peak again.
  await p.page.getByTestId('snap-peak').first().click();
  await title.filter({ hasText: 'entry 11205' }).waitFor();
  // Its tensors, sorted by bytes, and the stack of the largest one.
  const tensors = p.page.getByTestId('snap-tensor');
  assert.ok(await tensors.count() > 0);
  await tensors.first().locator('td').first().click(); // not the site link: it opens the editor
  await p.page.locator('[data-testid=snap-stack] ol.frames li').first().waitFor();
  await p.screenshot('snapshot-02-clicked');

  // The report and the JSON download from the worker holding this snapshot, with the same
  // bytes as `proflens snapshot --report/--json` (default settings).
  const cliMd = path.join(os.tmpdir(), 'proflens-e2e-zidong.md');
  const cliJson = path.join(os.tmpdir(), 'proflens-e2e-zidong.json');
  execFileSync(proflensBin(), ['snapshot', ZIDONG, '--report', cliMd, '--json', cliJson], { stdio: 'ignore' });
  for (const [button, cli, ext] of [['snap-export-md', cliMd, 'md'], ['snap-export-json', cliJson, 'json']]) {
    const [download] = await Promise.all([
      p.page.waitForEvent('download', { timeout: 60_000 }),
      p.page.getByTestId(button).click(),
    ]);
    const file = path.join(REPO, 'test-output', `snapshot-export-zidong.${ext}`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await download.saveAs(file);
    const web = fs.readFileSync(file);
    assert.ok(web.length > 1000, `${ext}: empty download`);
    assert.ok(web.equals(fs.readFileSync(cli)), `${ext}: the page's export (${web.length} B) differs from the CLI's`);
  }

  // The chart keys: W zooms in (fewer entries in view), D pans, 0 shows everything again.
  const inView = async () => Number((await p.page.getByTestId('snap-in-view').innerText()).match(/^(\d+) entries/)[1]);
  assert.equal(await inView(), 23105);
  await chart.focus();
  await p.page.keyboard.press('w');
  await p.page.waitForFunction(() => /^\d+ entries/.test(document.querySelector('[data-testid=snap-in-view]')?.innerText || '')
    && !document.querySelector('[data-testid=snap-in-view]').innerText.startsWith('23105 '));
  const zoomed = await inView();
  assert.ok(zoomed < 23105 && zoomed > 23105 * 0.6, `after W: ${zoomed} entries in view`);
  await p.page.keyboard.press('0');
  await p.page.waitForFunction(() => document.querySelector('[data-testid=snap-in-view]')?.innerText.startsWith('23105 '));

  // Settings: link style none and 3 peaks; the report is re-computed and equals the CLI's
  // with `--link-style none --top-n 3`.
  await p.page.locator('[data-testid=snap-settings] > summary').click();
  await p.page.getByTestId('snap-link-style').selectOption('none');
  await p.page.getByTestId('snap-top-n').fill('3');
  await p.page.getByTestId('snap-apply-settings').click();
  await p.page.waitForFunction(() => /Settings applied/.test(document.querySelector('.status-line')?.innerText || ''));
  execFileSync(proflensBin(), ['snapshot', ZIDONG, '--report', cliMd, '--link-style', 'none', '--top-n', '3'], { stdio: 'ignore' });
  const [download] = await Promise.all([
    p.page.waitForEvent('download', { timeout: 60_000 }),
    p.page.getByTestId('snap-export-md').click(),
  ]);
  const file = path.join(REPO, 'test-output', 'snapshot-export-zidong-settings.md');
  await download.saveAs(file);
  const web = fs.readFileSync(file);
  assert.ok(web.equals(fs.readFileSync(cliMd)), `settings: the page's report (${web.length} B) differs from the CLI's`);
  assert.ok(!web.toString().includes('vscode://'), 'link style none still wrote vscode links');
  await p.screenshot('snapshot-03-settings');
  assert.deepEqual(p.consoleErrors, []);
  assert.deepEqual(p.offOrigin, []);
  await p.page.context().close();
});

test('a segments-only snapshot and a bad file', async () => {
  const p = await newPage();
  await p.open();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-snap-'));
  const bad = path.join(tmp, 'broken.pickle');
  fs.writeFileSync(bad, Buffer.from([0x80, 0x04, 0x95, 0x10, 0x00])); // truncated
  const list = path.join(FIXTURES, 'Muduard_LayoutEditing__memory_snapshot.pkl');
  await p.page.getByTestId('open-files').setInputFiles([list, bad]);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('snapshot-view').waitFor();
  const files = p.page.getByTestId('snap-file');
  await files.filter({ hasText: 'broken' }).click();
  await p.page.getByTestId('snap-failed').waitFor();
  assert.match(await p.page.getByTestId('snap-failed').innerText(), /broken\.pickle: The file ends before the pickle is complete/);
  await files.filter({ hasText: 'Muduard' }).click();
  // No trace: the end state's blocks are the live set (device 1).
  await p.page.getByTestId('snap-live-title').waitFor();
  assert.match(await p.page.getByTestId('snap-live-title').innerText(), /Live at the end state: .* in 1938 tensors/);
  await p.screenshot('snapshot-04-segments-only');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('C++-only sites read as their autograd node, the full label in the title', async () => {
  // The silmont2000 training snapshot's backward pass records C++ frames only: its sites are
  // autograd nodes (torch-snapshot.md §7.5), whose labels are whole C++ signatures. The page
  // shows `DivBackward0 (autograd)`; the title keeps the label the exports carry.
  const p = await newPage();
  await p.open();
  await p.page.getByTestId('open-files').setInputFiles(path.join(FIXTURES, 'silmont2000_assignment2-systems__mem_snapshot.pickle'));
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('snapshot-view').waitFor();
  const live = p.page.getByTestId('snap-contributors');
  await live.getByTestId('snap-contributor').first().waitFor();
  const sites = await live.getByTestId('snap-contributor').locator('td.site [data-testid=snap-site]').evaluateAll(
    (els) => els.map((e) => [e.innerText, e.title.split('\n')[0]]));
  const div = sites.find(([text]) => text === 'DivBackward0 (autograd)');
  assert.ok(div, `DivBackward0 among ${JSON.stringify(sites.map((s) => s[0]))}`);
  assert.equal(div[1], 'torch::autograd::generated::DivBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&) @ ??:0');
  for (const [text] of sites) assert.doesNotMatch(text, /\(std::|@ \?\?:0/);
  // Their call chains (C++ frames only) read the same way, each frame's label in its title.
  const chains = await live.getByTestId('snap-contributor').locator('td.chain').allInnerTexts();
  assert.ok(chains.some((c) => c.startsWith('DivBackward0 (autograd)')), JSON.stringify(chains.slice(0, 3)));
  for (const c of chains) assert.doesNotMatch(c, /\(std::|@ \?\?:0/);
  // The peaks table's largest site too.
  const peakSites = await p.page.getByTestId('snap-peak-site').evaluateAll((els) => els.map((e) => [e.innerText, e.title]));
  assert.ok(peakSites.length > 0);
  for (const [text, title] of peakSites) {
    assert.doesNotMatch(text, /\(std::|@ \?\?:0/);
    if (title.includes('.py:')) assert.equal(text, title);
  }
  // The stacked timeline's tooltip names a band's site the same way.
  await p.page.getByTestId('bands-canvas').scrollIntoViewIfNeeded();
  const box = await p.page.getByTestId('bands-canvas').boundingBox();
  const tips = [];
  // On the time axis the recording's allocations sit in its last 20 %, the peak at 98 %.
  sweep: for (const fx of [0.981, 0.985, 0.99, 0.975, 0.97, 0.96, 0.95, 0.93, 0.9]) {
    for (let dy = 30; dy < box.height - 14; dy += 3) {
      await p.page.mouse.move(box.x + 60 + (box.width - 72) * fx, box.y + box.height - dy);
      const tip = p.page.getByTestId('band-tooltip');
      if (await tip.count() === 0) continue;
      const text = await tip.innerText();
      if (!/\(\d+ bytes\)/.test(text)) continue;
      tips.push(text);
      if (text.includes('(autograd)')) break sweep;
    }
  }
  assert.ok(tips.some((t) => t.includes("(autograd)")), `an autograd band among ${tips.length} tooltips: ${JSON.stringify(tips.map((t) => t.split("\n").slice(0, 4)))}`);
  for (const t of tips) assert.doesNotMatch(t, /\(std::|@ \?\?:0/);
  await p.page.waitForTimeout(400);
  await p.screenshot('snapshot-05-cpp-sites');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});
