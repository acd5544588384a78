// Browser benchmark of the snapshot tab (not a timed test): time from giving one snapshot
// pickle to the page until its summary shows (decode + analysis in a worker, wasm), the input
// MB/s, the wasm memory of the workers, then the time of a click on the curve (live set) and
// of a wheel zoom (curve query).
//
// Usage:
//   cargo run --release --example snapshot_gen -- DIR/snap_big.pickle 1500000
//   scripts/build-release.sh && node tests/e2e/snapshot_bench.mjs DIR/snap_big.pickle [--runs N]
import fs from 'node:fs';
import { serveStatic, launch, ProflensPage } from './lib.mjs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const runs = Number(args[args.indexOf('--runs') + 1]) || 1;
if (!file || !fs.existsSync(file)) {
  console.error('usage: node tests/e2e/snapshot_bench.mjs <snapshot.pickle> [--runs N]');
  process.exit(2);
}
const bytes = fs.statSync(file).size;
const server = await serveStatic();
const browser = await launch();
try {
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const p = new ProflensPage(await context.newPage(), server.url);
    await p.open();
    const t0 = Date.now();
    await p.page.getByTestId('open-files').setInputFiles(file);
    const phase = await p.waitDone(3_600_000);
    const ms = Date.now() - t0;
    await p.page.getByTestId('snap-peak-active').waitFor({ timeout: 600_000 });
    const mem = p.page.getByTestId('wasm-memory');
    const max = Number(await mem.getAttribute('data-max-bytes'));
    const sum = Number(await mem.getAttribute('data-bytes'));
    const mb = bytes / 1048576;
    console.log(JSON.stringify({
      run: i + 1, phase, status: await p.page.getByTestId('run-status').innerText(),
      input_mb: +mb.toFixed(1), drop_to_results_ms: ms, mb_per_s: +(mb / (ms / 1000)).toFixed(1),
      wasm_memory_largest_worker_mb: +(max / 1048576).toFixed(1), wasm_memory_total_mb: +(sum / 1048576).toFixed(1),
      peak_active: await p.page.getByTestId('snap-peak-active').innerText(),
    }));
    // A click on the curve → live set; a wheel zoom → curve.
    const title = p.page.getByTestId('snap-live-title');
    await title.waitFor({ timeout: 600_000 });
    const chart = p.page.getByTestId('snap-chart');
    const box = await chart.boundingBox();
    const clicks = [];
    for (const f of [0.2, 0.5, 0.8]) {
      const before = await title.innerText();
      const t = Date.now();
      await p.page.mouse.click(box.x + 64 + (box.width - 76) * f, box.y + box.height / 2);
      await p.page.waitForFunction((b) => document.querySelector('[data-testid=snap-live-title]')?.innerText !== b, before, { timeout: 600_000 });
      clicks.push(Date.now() - t);
    }
    const t = Date.now();
    await p.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await p.page.mouse.wheel(0, -300);
    await p.page.waitForTimeout(50);
    const zoomMs = Date.now() - t;
    await p.page.waitForTimeout(800);
    await p.screenshot(`snapshot-bench-run${i + 1}`);
    console.log(JSON.stringify({ run: i + 1, click_to_live_set_ms: clicks, wheel_zoom_ms: zoomMs,
      wasm_memory_largest_worker_mb_after: +(Number(await mem.getAttribute('data-max-bytes')) / 1048576).toFixed(1) }));
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
