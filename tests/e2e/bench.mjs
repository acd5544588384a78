// Browser benchmark (not a timed test): time from giving a folder to the page until every
// rank is analysed, the input bytes per second, and the wasm memory of the workers.
//
// Usage: trunk build --release && node tests/e2e/bench.mjs <folder> [--runs N]
// The folder is typically made by the project's generator (see README / ARCHITECTURE.md).
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic, launch, ProflensPage } from './lib.mjs';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const runs = Number(args[args.indexOf('--runs') + 1]) || 1;
if (!folder || !fs.existsSync(folder)) {
  console.error('usage: node tests/e2e/bench.mjs <folder> [--runs N]');
  process.exit(2);
}

function folderBytes(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? folderBytes(p) : fs.statSync(p).size;
  }
  return total;
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
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
