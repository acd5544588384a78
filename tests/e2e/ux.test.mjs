// Looks and habits (issue "Delivery" items 4 and 5): the view in the URL hash survives a reload
// + re-drop and a pasted link, recently opened folder names, dark/light themes with the toggle
// (canvas included), the `?` help overlay and Esc, a keyboard-only walkthrough, and the layout
// at 1366×768 with 125% zoom. Needs dist/ (scripts/build-release.sh). Screenshots: test-output/ux-*.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

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
  return new ProflensPage(await context.newPage(), server.url);
}

/** The fragment as key → value (decoded), read from the address bar. */
async function hashParams(page) {
  const h = await page.evaluate(() => location.hash);
  return Object.fromEntries(new URLSearchParams(h.replace(/^#/, '')));
}

/** Waits until the address bar's fragment has every `want` key with that value. */
async function waitHash(page, want) {
  await page.waitForFunction((want) => {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    return Object.entries(want).every(([k, v]) => p.get(k) === v);
  }, want, { timeout: 10_000 });
}

/** What the memory view shows: tab, selected rank, filter, rows, chart window, selected row. */
async function memoryView(page) {
  return page.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const chart = q('[data-testid=memory-chart]');
    return {
      tab: q('[role=tab][aria-selected=true]')?.dataset.testid,
      rank: q('[data-testid=rank-summary-row][aria-selected=true]')?.dataset.rankIndex,
      filter: q('[data-testid=row-filter]')?.value,
      minKb: q('[data-testid=min-kb]')?.value,
      rows: q('[data-testid=row-count]')?.innerText,
      x0: chart?.dataset.x0,
      x1: chart?.dataset.x1,
      zoomed: chart?.dataset.zoomed,
      selectedRow: q('[data-testid=event-row].selected')?.firstElementChild?.innerText,
      userFrame: q('[data-testid=stack-panel] li.user')?.innerText,
    };
  });
}

/** Sets up a view on level1: rank index 1, a filter, a size filter, a zoom (keys), a row. */
async function makeView(p) {
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('rank-summary-row').nth(1).click();
  await p.page.locator('[data-testid=rank-summary-row][aria-selected=true][data-rank-index="1"]').waitFor();
  await p.page.getByTestId('event-row').first().waitFor();
  await p.page.getByTestId('row-filter').fill('main.py(354)');
  await p.page.getByTestId('min-kb').fill('1');
  await p.page.waitForFunction(() => /^\d+ of 184 rows$/.test(document.querySelector('[data-testid=row-count]')?.innerText || '')
    && !/^184 of/.test(document.querySelector('[data-testid=row-count]').innerText));
  const chart = p.page.getByTestId('memory-chart');
  const full = await chart.getAttribute('data-x1');
  await chart.focus();
  await p.page.keyboard.press('w');
  await p.page.keyboard.press('w');
  await p.page.keyboard.press('d');
  await p.page.waitForFunction((full) => {
    const c = document.querySelector('[data-testid=memory-chart]');
    return c.dataset.zoomed === 'true' && c.dataset.x1 !== full;
  }, full);
  await p.page.getByTestId('event-row').nth(2).click();
  await p.page.locator('[data-testid=stack-panel] li.user').waitFor();
  await waitHash(p.page, { tab: 'memory', rank: '1', 'mem.q': 'main.py(354)', 'mem.kmin': '1' });
  await p.page.waitForFunction(() => /mem\.x=[^&]+,/.test(location.hash) && /mem\.row=\d+/.test(location.hash));
  // Let the zoomed curve arrive before reading the chart's window.
  await p.page.waitForTimeout(300);
  return memoryView(p.page);
}

test('URL hash: reload + re-drop the same folder returns to the same view; a pasted link too', async () => {
  const p = await newPage();
  await p.open();
  const view = await makeView(p);
  assert.equal(view.tab, 'tab-memory');
  assert.equal(view.rank, '1');
  assert.equal(view.filter, 'main.py(354)');
  assert.equal(view.zoomed, 'true');
  assert.match(view.userFrame, /main\.py\(354\): train$/);
  const params = await hashParams(p.page);
  // anom.rank: the steps & bubbles view's rank (its first analysed rank), kept beside.
  assert.deepEqual(Object.keys(params).sort(), ['anom.rank', 'mem.kmin', 'mem.q', 'mem.row', 'mem.x', 'rank', 'tab']);
  const [a, b] = params['mem.x'].split(',').map(Number);
  assert.ok(a < b && String(a) === view.x0 && String(b) === view.x1, `mem.x ${params['mem.x']} = chart window ${view.x0},${view.x1}`);
  assert.equal(params['mem.row'], view.selectedRow);
  const hash = await p.page.evaluate(() => location.hash);

  // Reload: the landing page keeps the link while it waits for the folder.
  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  await p.page.waitForTimeout(600);
  assert.equal(await p.page.evaluate(() => location.hash), hash);
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.locator('[data-testid=stack-panel] li.user').waitFor();
  await p.page.waitForTimeout(300);
  assert.deepEqual(await memoryView(p.page), view);
  assert.equal(await p.page.evaluate(() => location.hash), hash);
  await p.screenshot('ux-01-restored-view');

  // A colleague: a fresh browser profile opens the pasted link and drops the same folder.
  const q = await newPage();
  await q.page.goto(server.url + hash);
  await q.page.getByTestId('drop-zone').waitFor();
  await q.openFolder(LEVEL1);
  assert.equal(await q.waitDone(), 'Done');
  await q.page.locator('[data-testid=stack-panel] li.user').waitFor();
  await q.page.waitForTimeout(300);
  assert.deepEqual(await memoryView(q.page), view);

  // Another rank starts fresh: the memory keys are dropped from the hash.
  await q.page.getByTestId('rank-summary-row').nth(0).click();
  await waitHash(q.page, { tab: 'memory', rank: '0' });
  await q.page.waitForTimeout(400);
  assert.deepEqual(Object.keys(await hashParams(q.page)).sort(), ['anom.rank', 'rank', 'tab']);
  assert.deepEqual(p.consoleErrors, []);
  assert.deepEqual(q.consoleErrors, []);
  await p.page.context().close();
  await q.page.context().close();
});

test('URL hash: the steps & bubbles selection (rank, bubble, timeline zoom) comes back after reload + re-drop', async () => {
  const p = await newPage();
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-anomaly').click();
  await p.page.getByTestId('anomaly-rank-row').nth(1).click();
  await p.page.getByTestId('bubble-row').nth(3).waitFor();
  await p.page.getByTestId('bubble-row').nth(3).click();
  // Zoom the timeline of that rank with the keys.
  const canvas = p.page.getByTestId('timeline-canvas');
  await p.page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
  const fullView = await canvas.getAttribute('data-view');
  await canvas.focus();
  await p.page.keyboard.press('w');
  await p.page.keyboard.press('w');
  await p.page.keyboard.press('d');
  assert.notEqual(await canvas.getAttribute('data-view'), fullView);
  const read = () => p.page.evaluate(() => ({
    timeline: document.querySelector('[data-testid=timeline-canvas]')?.dataset.view,
    tab: document.querySelector('[role=tab][aria-selected=true]')?.dataset.testid,
    rank: [...document.querySelectorAll('[data-testid=anomaly-rank-row]')].findIndex((r) => r.classList.contains('selected')),
    bubble: document.querySelector('[data-testid=bubble-row].selected')?.firstElementChild?.innerText,
    window: document.querySelector('[data-testid=bubble-panel] [data-testid=bubble-window]')?.innerText,
  }));
  await p.page.locator('[data-testid=bubble-panel] [data-testid=bubble-window]').waitFor();
  const before = await read();
  assert.equal(before.tab, 'tab-anomaly');
  assert.equal(before.rank, 1);
  await waitHash(p.page, { tab: 'anomaly', 'anom.rank': '1', 'anom.bubble': before.bubble });
  await p.page.waitForFunction(() => /tl\.x=1:[^&]+,/.test(location.hash));
  const hash = await p.page.evaluate(() => location.hash);
  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.locator('[data-testid=bubble-panel] [data-testid=bubble-window]').waitFor();
  await p.page.locator('[data-testid=bubble-row].selected').waitFor();
  await p.page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
  assert.deepEqual(await read(), before);
  await p.page.waitForTimeout(400);
  assert.equal(await p.page.evaluate(() => location.hash), hash);
  await p.screenshot('ux-10-restored-anomaly');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('URL hash: malformed and unknown keys never break the page', async () => {
  const p = await newPage();
  await p.page.goto(server.url + '#tab=nosuchtab&rank=abc&mem.x=5,1&mem.row=999999&%ZZ&&=&future.key=kept&mem.q=%E2%9C%93');
  await p.page.getByTestId('drop-zone').waitFor();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  // The unknown tab and the bad rank are ignored: the inventory and the first rank show.
  assert.equal(await p.page.locator('[role=tab][aria-selected=true]').getAttribute('data-testid'), 'tab-inventory');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('row-count').filter({ hasText: /^0 of 184 rows$/ }).waitFor();
  assert.equal(await p.page.getByTestId('row-filter').inputValue(), '✓');
  assert.equal(await p.page.getByTestId('memory-chart').getAttribute('data-zoomed'), 'false');
  await waitHash(p.page, { tab: 'memory', 'future.key': 'kept' });
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

/** Every file below `dir`: count and total bytes (what the recent list must show). */
function folderStats(dir) {
  let files = 0;
  let bytes = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) {
      files += 1;
      bytes += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size;
    }
  }
  return { files, bytes };
}

test('recent folders: names only, listed after a drop, survive a reload, forget', async () => {
  const p = await newPage({ viewport: { width: 1366, height: 768 } });
  await p.open();
  assert.equal(await p.page.getByTestId('recent').count(), 0);
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.goto(server.url);
  await p.page.getByTestId('recent').waitFor();
  assert.deepEqual(await p.page.getByTestId('recent-name').allInnerTexts(), ['sample_run/', 'level1/']);
  const { files, bytes } = folderStats(LEVEL1);
  const row = await p.page.getByTestId('recent-row').nth(1).innerText();
  assert.match(row, new RegExp(`${files} file\\(s\\)`));
  const mib = bytes / 1024 / 1024; // base::format: two decimals below 10 of the unit
  assert.match(row, new RegExp(`${mib.toFixed(mib < 9.995 ? 2 : 1)} MiB`));
  // Stored: names, counts, sizes and times only.
  const stored = JSON.parse(await p.page.evaluate(() => localStorage.getItem('proflens.recent')));
  assert.equal(stored.length, 2);
  for (const e of stored) assert.deepEqual(Object.keys(e).sort(), ['bytes', 'files', 'name', 'when_ms']);
  assert.deepEqual(stored[1], { ...stored[1], name: 'level1/', files, bytes });
  await p.screenshot('ux-02-recent-folders');

  await p.page.reload();
  await p.page.getByTestId('recent').waitFor();
  assert.equal(await p.page.getByTestId('recent-row').count(), 2);
  await p.page.getByTestId('recent-forget').first().click();
  assert.deepEqual(await p.page.getByTestId('recent-name').allInnerTexts(), ['level1/']);
  await p.page.getByTestId('recent-forget-all').click();
  assert.equal(await p.page.getByTestId('recent').count(), 0);
  assert.equal(await p.page.evaluate(() => localStorage.getItem('proflens.recent')), null);
  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  assert.equal(await p.page.getByTestId('recent').count(), 0);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

/** Pixels of the memory chart close to `rgb` (canvas drawn with the theme's variables). */
async function chartPixels(page, rgb) {
  return page.evaluate((rgb) => {
    const c = document.querySelector('[data-testid=memory-chart]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) + Math.abs(d[i + 1] - rgb[1]) + Math.abs(d[i + 2] - rgb[2]) < 24) n++;
    }
    return n;
  }, rgb);
}

test('themes: dark follows the system, the toggle forces light or dark and is remembered', async () => {
  const p = await newPage({ colorScheme: 'dark' });
  await p.open();
  const root = () => p.page.evaluate(() => ({
    resolved: document.documentElement.dataset.themeResolved,
    forced: document.documentElement.dataset.theme ?? null,
    bg: getComputedStyle(document.body).backgroundColor,
  }));
  assert.deepEqual(await root(), { resolved: 'dark', forced: null, bg: 'rgb(20, 23, 29)' });
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('event-row').first().waitFor();
  await p.page.waitForTimeout(400);
  const DARK_1 = [107, 156, 245];
  const LIGHT_1 = [47, 111, 222];
  assert.ok(await chartPixels(p.page, DARK_1) > 50, 'dark series colour on the canvas');
  assert.equal(await chartPixels(p.page, LIGHT_1), 0, 'no light series colour on the dark canvas');
  await p.screenshot('ux-03-dark-system');

  await p.page.getByTestId('theme').selectOption('light');
  assert.deepEqual(await root(), { resolved: 'light', forced: 'light', bg: 'rgb(251, 251, 252)' });
  await p.page.waitForTimeout(200);
  assert.ok(await chartPixels(p.page, LIGHT_1) > 50, 'the canvas redrew in the light palette');
  assert.equal(await chartPixels(p.page, DARK_1), 0);
  await p.screenshot('ux-04-light-forced');
  assert.equal(await p.page.evaluate(() => localStorage.getItem('proflens.theme')), 'light');

  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  assert.equal(await p.page.getByTestId('theme').inputValue(), 'light');
  assert.equal((await root()).resolved, 'light');
  await p.page.getByTestId('theme').selectOption('dark');
  assert.deepEqual(await root(), { resolved: 'dark', forced: 'dark', bg: 'rgb(20, 23, 29)' });
  await p.page.getByTestId('theme').selectOption('system');
  assert.deepEqual(await root(), { resolved: 'dark', forced: null, bg: 'rgb(20, 23, 29)' });
  assert.equal(await p.page.evaluate(() => localStorage.getItem('proflens.theme')), null);
  // The system switching to light is followed at once.
  await p.page.emulateMedia({ colorScheme: 'light' });
  await p.page.waitForFunction(() => document.documentElement.dataset.themeResolved === 'light');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('help overlay: ? opens it, Esc closes it and returns focus; ? in a text field types', async () => {
  const p = await newPage();
  await p.open();
  await p.page.getByTestId('load-sample').focus();
  await p.page.keyboard.press('?');
  const overlay = p.page.getByTestId('help-overlay');
  await overlay.waitFor();
  assert.equal(await overlay.getAttribute('role'), 'dialog');
  assert.match(await overlay.innerText(), /W or ↑, S or ↓[\s\S]*Zoom in/);
  assert.equal(await p.page.evaluate(() => document.activeElement.dataset.testid), 'help-close');
  await p.screenshot('ux-05-help-overlay');
  await p.page.keyboard.press('Escape');
  await overlay.waitFor({ state: 'detached' });
  assert.equal(await p.page.evaluate(() => document.activeElement.dataset.testid), 'load-sample');

  // Esc also closes the call-stack panel's row; `?` typed in the filter stays text.
  await p.page.keyboard.press('Enter');
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('event-row').first().click();
  await p.page.locator('[data-testid=stack-panel] ol.frames').waitFor();
  await p.page.getByTestId('row-filter').fill('');
  await p.page.getByTestId('row-filter').type('?');
  assert.equal(await overlay.count(), 0);
  assert.equal(await p.page.getByTestId('row-filter').inputValue(), '?');
  await p.page.getByTestId('row-filter').fill('');
  await p.page.getByTestId('help-button').click();
  await overlay.waitFor();
  await p.page.keyboard.press('Escape');
  await overlay.waitFor({ state: 'detached' });
  assert.equal(await p.page.locator('[data-testid=stack-panel] ol.frames').count(), 1, 'the first Esc only closed the overlay');
  await p.page.keyboard.press('Escape');
  await p.page.locator('[data-testid=stack-panel] ol.frames').waitFor({ state: 'detached' });
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

/** Presses Tab until the focused element matches `testid` (at most `max` presses); returns
 * the focus stops passed, each with whether it showed a focus ring. */
async function tabTo(page, testid, max = 40, key = 'Tab') {
  const stops = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const s = await page.evaluate(() => {
      const el = document.activeElement;
      const ring = (e) => e && getComputedStyle(e).outlineStyle !== 'none' && parseFloat(getComputedStyle(e).outlineWidth) >= 2;
      return {
        id: el.dataset.testid || el.tagName.toLowerCase(),
        ring: ring(el) || (el.classList.contains('visually-hidden') && ring(el.parentElement)),
      };
    });
    stops.push(s);
    if (s.id === testid) return stops;
  }
  throw new Error(`${testid} not reached by ${key}: ${stops.map((s) => s.id).join(' → ')}`);
}

test('keyboard only: landing → sample → tabs → memory chart keys → exports', async () => {
  const p = await newPage();
  await p.open();
  const stops = [];
  stops.push(...await tabTo(p.page, 'load-sample'));
  await p.page.keyboard.press('Enter');
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  stops.push(...await tabTo(p.page, 'tab-inventory'));
  // Arrow keys move between tabs; Enter on a tab selects it.
  await p.page.keyboard.press('ArrowRight');
  assert.equal(await p.page.evaluate(() => document.activeElement.dataset.testid), 'tab-memory');
  assert.equal(await p.page.getByTestId('tab-memory').getAttribute('aria-selected'), 'true');
  await p.page.keyboard.press('ArrowRight');
  await p.page.keyboard.press('ArrowLeft');
  await p.page.keyboard.press('Enter');
  assert.equal(await p.page.getByTestId('tab-memory').getAttribute('aria-selected'), 'true');
  await p.page.getByTestId('memory-chart').waitFor();
  // Second rank through the keyboard.
  stops.push(...await tabTo(p.page, 'rank-summary-row'));
  await p.page.keyboard.press('Tab');
  await p.page.keyboard.press('Enter');
  await p.page.locator('[data-testid=rank-summary-row][aria-selected=true][data-rank-index="1"]').waitFor();
  await p.page.waitForTimeout(300);
  stops.push(...await tabTo(p.page, 'memory-chart'));
  const chart = p.page.getByTestId('memory-chart');
  const w = async () => {
    const [x0, x1, z] = await Promise.all(['data-x0', 'data-x1', 'data-zoomed'].map((a) => chart.getAttribute(a)));
    return { x0: Number(x0), x1: Number(x1), zoomed: z };
  };
  const full = await w();
  assert.equal(full.zoomed, 'false');
  const waitChange = async (prev) => {
    await p.page.waitForFunction((prev) => {
      const c = document.querySelector('[data-testid=memory-chart]');
      return Number(c.dataset.x0) !== prev.x0 || Number(c.dataset.x1) !== prev.x1;
    }, prev);
    return w();
  };
  await p.page.keyboard.press('w');
  const zin = await waitChange(full);
  const span = (v) => v.x1 - v.x0;
  assert.equal(zin.zoomed, 'true');
  assert.ok(Math.abs(span(zin) - 0.8 * span(full)) < 1e-4 * span(full), `W zooms to 80%: ${span(zin)} vs ${span(full)}`);
  await p.page.keyboard.press('ArrowUp');
  const zin2 = await waitChange(zin);
  assert.ok(Math.abs(span(zin2) - 0.64 * span(full)) < 1e-4 * span(full));
  await p.page.keyboard.press('d');
  const right = await waitChange(zin2);
  assert.ok(right.x0 > zin2.x0 && Math.abs(span(right) - span(zin2)) < 1e-4 * span(full), 'D pans right, same width');
  await p.page.keyboard.press('ArrowLeft');
  const left = await waitChange(right);
  assert.ok(left.x0 < right.x0);
  await p.page.keyboard.press('s');
  const zout = await waitChange(left);
  assert.ok(span(zout) > span(left));
  await p.page.keyboard.press('0');
  const reset = await waitChange(zout);
  assert.deepEqual(reset, full);
  // Page did not scroll on the arrow keys (the chart took them).
  await p.screenshot('ux-06-keyboard-chart');
  // Back to the exports with Shift+Tab; Enter downloads the Markdown summary.
  stops.push(...await tabTo(p.page, 'export-md', 40, 'Shift+Tab'));
  const [download] = await Promise.all([p.page.waitForEvent('download', { timeout: 60_000 }), p.page.keyboard.press('Enter')]);
  assert.match(download.suggestedFilename(), /\.md$/);
  const noRing = stops.filter((s) => !s.ring);
  assert.deepEqual(noRing, [], 'every focus stop shows a focus ring');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('keyboard only: open a folder with Enter, Steps & bubbles tab, timeline keys', async () => {
  const p = await newPage();
  await p.open();
  const stops = [];
  // Listen for the file chooser before any key is pressed: Playwright turns on
  // Chromium's file-chooser interception when the first listener is added, and a
  // chooser opened before that round trip ends is never reported (a CI flake under load).
  const chooserOpened = p.page.waitForEvent('filechooser', { timeout: 60_000 });
  await p.page.waitForTimeout(200);
  stops.push(...await tabTo(p.page, 'open-folder'));
  await p.page.keyboard.press('Enter');
  const chooser = await chooserOpened;
  await chooser.setFiles(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  stops.push(...await tabTo(p.page, 'tab-inventory'));
  for (let i = 0; i < 3; i++) await p.page.keyboard.press('ArrowRight');
  assert.equal(await p.page.evaluate(() => document.activeElement.dataset.testid), 'tab-anomaly');
  await p.page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
  // The second rank of the cross-rank table with Enter.
  stops.push(...await tabTo(p.page, 'anomaly-rank-row'));
  await p.page.keyboard.press('Tab');
  await p.page.keyboard.press('Enter');
  await p.page.locator('[data-testid=anomaly-rank-row].selected').nth(0).waitFor();
  assert.equal(await p.page.locator('[data-testid=anomaly-rank-row]').nth(1).getAttribute('class').then((c) => /selected/.test(c)), true);
  await p.page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
  stops.push(...await tabTo(p.page, 'timeline-canvas', 60));
  const tl = p.page.getByTestId('timeline-canvas');
  const view = async () => (await tl.getAttribute('data-view')).split(',').map(Number);
  const before = await view();
  await p.page.keyboard.press('w');
  await p.page.keyboard.press('ArrowUp');
  const zoomed = await view();
  assert.ok(Math.abs((zoomed[1] - zoomed[0]) - 0.64 * (before[1] - before[0])) < 1e-4, `W, ↑ zoom the timeline: ${before} → ${zoomed}`);
  await p.page.keyboard.press('d');
  const panned = await view();
  assert.ok(panned[0] > zoomed[0]);
  await p.screenshot('ux-11-keyboard-timeline');
  // A bubble row with Enter selects the bubble (the panel shows it).
  stops.push(...await tabTo(p.page, 'bubble-row', 80));
  await p.page.keyboard.press('Enter');
  await p.page.locator('[data-testid=bubble-panel] [data-testid=bubble-window]').waitFor();
  const noRing = stops.filter((s) => !s.ring);
  assert.deepEqual(noRing, [], 'every focus stop shows a focus ring');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('1366×768 at 125% zoom: no horizontal scrolling, the table and the stack panel fit', async () => {
  // 125% on a 1366×768 screen: a 1093×614 CSS-pixel viewport at device scale 1.25.
  const p = await newPage({ viewport: { width: 1093, height: 614 }, deviceScaleFactor: 1.25 });
  await p.open();
  await p.screenshot('ux-07-landing-1366x768-125');
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.screenshot('ux-08-inventory-1366x768-125');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('event-row').nth(3).click();
  await p.page.locator('[data-testid=stack-panel] li.user').waitFor();
  await p.page.waitForTimeout(300);
  const layout = await p.page.evaluate(() => {
    const r = (s) => document.querySelector(s).getBoundingClientRect();
    return {
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      header: Math.max(...[...document.querySelectorAll('.top > *')].map((e) => e.getBoundingClientRect().right)),
      table: r('[data-testid=events-table]'),
      stack: r('[data-testid=stack-panel]'),
      chart: r('[data-testid=memory-chart]'),
      font: parseFloat(getComputedStyle(document.querySelector('.vt-cell')).fontSize),
    };
  });
  assert.ok(layout.overflow <= 0, `page scrolls sideways by ${layout.overflow}px`);
  assert.ok(layout.header <= 1093, `header wider than the window: ${layout.header}`);
  assert.ok(layout.stack.top >= layout.table.bottom - 1, 'the stack panel goes below the table on a narrow window');
  assert.ok(layout.chart.width > 900, `chart width ${layout.chart.width}`);
  assert.ok(layout.font >= 12, 'table text at least 12 px');
  await p.screenshot('ux-09-memory-1366x768-125');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});
