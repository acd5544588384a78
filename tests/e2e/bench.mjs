// Browser benchmark (not a timed test): time from giving a folder to the page until every
// rank is analysed, the input bytes per second, and the wasm memory of the workers.
//
// Usage: trunk build --release && node tests/e2e/bench.mjs <folder> [--runs N]
// The folder is typically made by the project's generator (see README / ARCHITECTURE.md).
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic, launch, ProflensPage, folderBytes } from './lib.mjs';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const runs = Number(args[args.indexOf('--runs') + 1]) || 1;
if (!folder || !fs.existsSync(folder)) {
  console.error('usage: node tests/e2e/bench.mjs <folder> [--runs N]');
  process.exit(2);
}


const bytes = folderBytes(folder);
const server = await serveStatic();
const browser = await launch();
try {
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const p = new ProflensPage(await context.newPage(), server.url);
    await p.open();
    const t0 = Date.now();
    await p.openFolder(folder);
    await p.page.getByTestId('rank-card').first().waitFor({ timeout: 600_000 });
    const tInventory = Date.now() - t0;
    const phase = await p.waitDone(3_600_000);
    const ms = Date.now() - t0;
    const mem = p.page.getByTestId('wasm-memory');
    const sum = Number(await mem.getAttribute('data-bytes'));
    const max = Number(await mem.getAttribute('data-max-bytes'));
    const status = await p.page.getByTestId('run-status').innerText();
    const mb = bytes / 1048576;
    console.log(JSON.stringify({
      run: i + 1, phase, status, input_mb: +mb.toFixed(1), inventory_ms: tInventory, drop_to_results_ms: ms,
      mb_per_s: +(mb / (ms / 1000)).toFixed(1), wasm_memory_total_mb: +(sum / 1048576).toFixed(1),
      wasm_memory_largest_worker_mb: +(max / 1048576).toFixed(1),
    }));
    // The views on the result: table page, sort over all rows, scroll to the middle, chart zoom.
    const timed = async (label, action, until) => {
      const t = Date.now();
      await action();
      await p.page.waitForFunction(until, null, { timeout: 600_000 });
      return [label, Date.now() - t];
    };
    const views = [];
    views.push(await timed('memory tab first page', () => p.page.getByTestId('tab-memory').click(),
      () => document.querySelectorAll('[data-testid=event-row]').length > 0));
    const rowCount = await p.page.getByTestId('row-count').innerText();
    views.push(await timed('sort by size (all rows)', () => p.page.locator('.vt-head[data-col=SizeKb]').click(),
      () => document.querySelector('.vt-head[data-col=SizeKb]')?.innerText.includes('▼')
        && document.querySelector('[data-testid=event-row] .num:nth-child(3)') !== null));
    await p.page.waitForTimeout(500);
    views.push(await timed('scroll to the middle', () => p.page.locator('.vt-viewport').evaluate((el) => { el.scrollTop = el.scrollHeight / 2; }),
      () => Number(document.querySelector('[data-testid=event-row] .num')?.innerText) > 1000));
    views.push(await timed('text filter', () => p.page.getByTestId('row-filter').fill('forward'),
      () => !/^(\d+) of \1 rows$/.test(document.querySelector('[data-testid=row-count]')?.innerText || '')));
    const box = await p.page.getByTestId('memory-chart').boundingBox();
    views.push(await timed('chart wheel zoom', async () => {
      await p.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await p.page.mouse.wheel(0, -300);
    }, () => true));
    await p.page.waitForTimeout(1000);
    await p.screenshot(`bench-run${i + 1}`);
    console.log(JSON.stringify({ run: i + 1, rows: rowCount, view_ms: Object.fromEntries(views) }));
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
