// Runs examples/wasm_snap.rs (the worker's snapshot path compiled to wasm32) in node's V8:
// one JSON line per run with wall and CPU ms, MB/s and the module's memory at the end.
//   node scripts/wasm_snap.mjs WASM FILE [RUNS=3] [CHUNK=8388608] [MODE=0: decode + analysis, 1: decode]
// Every run instantiates the module afresh (new memory, as a worker does); the first run
// includes V8's compilation and tier-up, so compare the later ones. Build: see the example.
import fs from 'node:fs';
import { instantiate, report } from './lib/wasm_node.mjs';

const [wasmPath, file, runsArg, chunkArg, modeArg] = process.argv.slice(2);
if (!wasmPath || !file) {
  console.error('usage: node scripts/wasm_snap.mjs WASM FILE [RUNS] [CHUNK] [MODE]');
  process.exit(2);
}
const runs = Number(runsArg || 3);
const chunk = Number(chunkArg || 8 << 20);
const mode = Number(modeArg || 0);
const bytes = fs.readFileSync(file);
const mod = await WebAssembly.compile(fs.readFileSync(wasmPath));
for (let r = 0; r < runs; r++) {
  const exports = await instantiate(mod);
  const p = exports.buf(bytes.length);
  new Uint8Array(exports.memory.buffer, p, bytes.length).set(bytes);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const entries = exports.run(chunk, mode);
  report({ run: r, entries }, bytes.length, t0, c0, exports);
}
