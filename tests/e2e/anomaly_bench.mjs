// Browser benchmark of the steps/bubbles analysis (not a timed test): time from
// giving a generated rank folder to the page until every job is done, the input MB/s, the
// wasm memory of the workers, then the timeline at full zoom-out: the worker reply time of a
// pan (D key) and the canvas draw time of each frame (`data-draw-ms`).
//
// Usage:
//   cargo run --release --example anomaly_gen -- DIR/anom_bench 1000000 100
//   scripts/build-release.sh && node tests/e2e/anomaly_bench.mjs DIR/anom_bench
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic, launch, ProflensPage, folderBytes } from './lib.mjs';

const folder = process.argv[2];
if (!folder || !fs.existsSync(folder)) {
  console.error('usage: node tests/e2e/anomaly_bench.mjs <folder>');
  process.exit(2);
}
const bytes = folderBytes(folder);
const server = await serveStatic();
const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  const page = p.page;
  await p.open();
  const t0 = Date.now();
  await p.openFolder(folder);
  const phase = await p.waitDone(3_600_000);
  const ms = Date.now() - t0;
  const mem = page.getByTestId('wasm-memory');
  const mb = bytes / 1048576;
  console.log(JSON.stringify({
    phase, status: await page.getByTestId('run-status').innerText(), input_mb: +mb.toFixed(1),
    drop_to_results_ms: ms, mb_per_s: +(mb / (ms / 1000)).toFixed(1),
    wasm_memory_total_mb: +(Number(await mem.getAttribute('data-bytes')) / 1048576).toFixed(1),
    wasm_memory_largest_worker_mb: +(Number(await mem.getAttribute('data-max-bytes')) / 1048576).toFixed(1),
  }));
  await page.getByTestId('tab-anomaly').click();
  const canvas = page.getByTestId('timeline-canvas');
  await canvas.waitFor({ timeout: 600_000 });
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0, null, { timeout: 600_000 });
  const attrs = async () => page.evaluate(() => ({ ...document.querySelector('[data-testid=timeline-canvas]').dataset }));
  const first = await attrs();
  console.log(JSON.stringify({ lanes: first.lanes, boxes_full_zoom_out: first.boxes, draw_ms_full_zoom_out: Number(first.drawMs) }));
  await canvas.focus();
  // Zoom in to a quarter of the range so panning moves (a pan at the range's edge changes
  // nothing), then pan both ways: each press asks the worker for new boxes.
  const replies = [];
  const draws = [];
  for (const key of ['w', 'w', 'w', 'w', 'w', 'w', 'd', 'd', 'a', 'a', 'a', 'a', 'd', 'd']) {
    const before = (await attrs()).view;
    const t = Date.now();
    await page.keyboard.press(key);
    await page.waitForFunction((v) => document.querySelector('[data-testid=timeline-canvas]').dataset.view !== v, before, { timeout: 60_000 });
    // The reply has arrived when the box count is for the new window (a fresh draw after it).
    await page.waitForTimeout(50);
    replies.push(Date.now() - t);
    draws.push(Number((await attrs()).drawMs));
  }
  const sorted = [...draws].sort((a, b) => a - b);
  console.log(JSON.stringify({
    lanes: first.lanes, boxes_full_zoom_out: first.boxes, draw_ms_full_zoom_out: Number(first.drawMs),
    key_to_new_view_ms: replies, draw_ms: draws, draw_ms_median: sorted[Math.floor(sorted.length / 2)],
    draw_ms_max: sorted[sorted.length - 1],
  }));
  await p.screenshot('bench-anomaly-timeline');
  await context.close();
} finally {
  await browser.close();
  await server.close();
}
