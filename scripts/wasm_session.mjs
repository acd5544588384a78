// Runs examples/wasm_session.rs (the worker's whole drop: Open, then Run of every analysis over
// every target) compiled to wasm32, in node's V8: one JSON line per run with wall and CPU ms,
// MB/s and the module's memory at the end.
//   node scripts/wasm_session.mjs WASM DIR [RUNS=3]
// Every run instantiates the module afresh (new memory, as a worker does) and writes the
// folder's files into it before the clock starts; the first run includes V8's compilation
// and tier-up, so compare the later ones. Build: see the example.
import fs from 'node:fs';
import path from 'node:path';
import { instantiate, report } from './lib/wasm_node.mjs';

const [wasmPath, dir, runsArg] = process.argv.slice(2);
if (!wasmPath || !dir) {
  console.error('usage: node scripts/wasm_session.mjs WASM DIR [RUNS]');
  process.exit(2);
}
const runs = Number(runsArg || 3);
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.isFile()) files.push(p);
  }
})(dir);
files.sort();
const root = path.dirname(path.resolve(dir));
const inputs = files.map((f) => ({ rel: path.relative(root, path.resolve(f)).split(path.sep).join('/'), bytes: fs.readFileSync(f) }));
const total = inputs.reduce((s, f) => s + f.bytes.length, 0);
const mod = await WebAssembly.compile(fs.readFileSync(wasmPath));
for (let r = 0; r < runs; r++) {
  const exports = await instantiate(mod);
  for (const f of inputs) {
    const name = Buffer.from(f.rel);
    // Each call may grow the memory (a new buffer): take the buffer after it.
    const at = exports.path(name.length);
    new Uint8Array(exports.memory.buffer, at, name.length).set(name);
    const p = exports.file(f.bytes.length);
    new Uint8Array(exports.memory.buffer, p, f.bytes.length).set(f.bytes);
  }
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const answer = exports.run();
  report({ run: r, done: Math.floor(answer / 1000), failed: answer % 1000 }, total, t0, c0, exports);
  if (answer % 1000) {
    const at = exports.failed();
    console.error(Buffer.from(new Uint8Array(exports.memory.buffer, at, exports.failed_len())).toString());
  }
}
