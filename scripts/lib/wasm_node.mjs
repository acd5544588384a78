// Shared by the scripts that run an example compiled to wasm32 in node's V8 (wasm_snap.mjs,
// wasm_session.mjs).

// A fresh instance of `mod` (new memory, as a page worker starts): the examples import nothing
// they call, so every import is a function that fails loudly if called.
export async function instantiate(mod) {
  const imports = {};
  for (const i of WebAssembly.Module.imports(mod)) {
    imports[i.module] ??= {};
    imports[i.module][i.name] = () => { throw new Error(`import ${i.module}.${i.name} called`); };
  }
  return (await WebAssembly.instantiate(mod, imports)).exports;
}

// One JSON line of a timed run: wall and CPU ms since `t0` / `c0`, MB/s over `bytes`, the
// module's memory, and `extra` fields first.
export function report(extra, bytes, t0, c0, exports) {
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({
    ...extra, ms: +ms.toFixed(1), cpu_ms: +((c.user + c.system) / 1000).toFixed(1),
    mb_s: +(bytes / 1e6 / (ms / 1000)).toFixed(1),
    memory_mb: +(exports.memory.buffer.byteLength / 1e6).toFixed(1),
  }));
}
