// End-to-end test of GPU ranks: PyTorch profiler (Kineto) traces dropped as folders.
// 1. The rl_insight torch_profile folder (real NVIDIA L20 Ray workers; HTA fails on them): every
//    role and rank in the inventory with the device and CUDA version, the Steps & bubbles tab
//    with every rank, each a host-only trace with the reason.
// 2. An HTA trace with kernels (nccl_parser_config): steps, a bubble selected, its panel says
//    whether the next kernel's launch came late (host-bound) or early.
// 3. A long run counts its running jobs; a trace numbered by order shows the run's check.
// Screenshots go to test-output/.
//
// Run: scripts/build-release.sh, then `cd tests/e2e && node --test gpu.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const RLI = path.join(REPO, '../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile');
const NCCL = path.join(REPO, '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config');
const TF = path.join(REPO, '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter');
const TB = path.join(REPO, '../shared/fixtures/ascend/xiaobingling93-pixel__Ascend-mstt/plugins/tensorboard-plugins/tb_plugin/samples/resnet50_num_workers_0');
const H100 = path.join(REPO, '../shared/fixtures/real_world/AMD-AGI__TraceLens/tests/traces/h100');
const HTA = path.join(REPO, '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data');

let server;
let browser;

before(async () => {
  for (const d of [RLI, NCCL, TF, TB, H100]) assert.ok(fs.existsSync(d), `fixture missing: ${d}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(dir) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await p.openFolder(dir);
  assert.equal(await p.waitDone(), 'Done');
  return p;
}

test('rl_insight torch_profile: every role and rank, steps view of host-only traces', async () => {
  const p = await openPage(RLI);
  const page = p.page;
  await page.getByTestId('rank-card').first().waitFor();
  const titles = await page.locator('[data-testid=rank-card] h3').allInnerTexts();
  assert.deepEqual(titles, [
    'actor_compute_log_prob · rank 0',
    'actor_compute_log_prob · rank 1',
    'actor_update · rank 0',
    'actor_update · rank 1',
    'agent_loop_rollout_replica_0 · rank 0',
    'agent_loop_rollout_replica_0 · rank 1',
  ]);
  const card = await page.getByTestId('rank-card').first().innerText();
  assert.match(card, /NVIDIA L20/);
  assert.match(card, /CUDA 12\.8/);
  assert.match(card, /distributedInfo\.rank/);
  // A GPU rank's card lists the GPU fields only, not the Ascend ones as "—".
  const keys = await page.getByTestId('rank-card').first().locator('dl.facts dt').allInnerTexts();
  assert.deepEqual(keys, ['folder', 'rank from', 'other files', 'GPU', 'GPU runtime']);
  await p.screenshot('gpu-01-rl-insight-inventory');
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=anomaly-no-kernels-row]').length === 6);
  // Each row names the trace (not a "rank folder") with its role and rank.
  const first = await page.getByTestId('anomaly-no-kernels-row').first().locator('td').allInnerTexts();
  assert.deepEqual(first, [
    'actor_compute_log_prob',
    '0',
    'trace torch_profile/actor_compute_log_prob/prof_rank-0_031847.json.gz: cannot run, no device kernels (see below)',
  ]);
  const empty = page.getByTestId('anomaly-no-kernels');
  await empty.waitFor();
  const text = await empty.innerText();
  assert.match(text, /host-only/);
  assert.match(text, /ProfilerActivity\.CUDA/);
  assert.doesNotMatch(text, /torch_npu/);
  await p.screenshot('gpu-02-rl-insight-steps');
  // Back in the inventory, each card says why steps cannot run in GPU terms (GPU-RUN-001),
  // not the Ascend rank folder's trace_view.json / kernel_details.csv / ANOM-FILE-002.
  await page.getByTestId('tab-inventory').click();
  const caps = page.getByTestId('rank-card').first().getByTestId('capability');
  await page.waitForFunction(() => /GPU-RUN-001/.test(document.querySelector('[data-testid=rank-card]').innerText));
  const steps = (await caps.allInnerTexts()).find((t) => t.startsWith('Steps and anomalies'));
  assert.match(steps, /^Steps and anomalies: cannot run — missing device events: a host-only trace.*GPU-RUN-001/);
  assert.doesNotMatch(steps, /trace_view\.json|kernel_details|ANOM-FILE-002/);
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});

test('a real H100 trace whose deviceProperties follow the events: the card names the GPU once the run is done', async () => {
  // The inventory's head ends long before the members at the file's end, so the card's GPU
  // rows start as "—"; the run reads them and the card takes them.
  const p = await openPage(H100);
  const card = p.page.getByTestId('rank-card').first();
  await p.page.waitForFunction(() => /NVIDIA H100 80GB HBM3/.test(document.querySelector('[data-testid=rank-card]').innerText));
  const rows = await card.locator('dl.facts dd').allInnerTexts();
  assert.deepEqual(rows.slice(3), ['NVIDIA H100 80GB HBM3', 'CUDA 12.4']);
  await p.screenshot('gpu-05-h100-card');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('a long run: the status bar counts the analysis jobs running, not only those finished', async () => {
  // The H100 trace (55.6 MB uncompressed) takes seconds: while it is read, the one job of
  // its rank is running (before, the bar read "0 analysis job(s) finished" the whole time).
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await p.openFolder(H100);
  await p.page.waitForFunction(() => document.querySelector('[data-testid=run-status]')?.innerText === 'Analysing… 1 analysis job(s) running, 0 finished', null, { timeout: 60_000 });
  await p.screenshot('gpu-05b-running-jobs');
  assert.equal(await p.waitDone(), 'Done');
  // The time taken reads like a stopwatch (`341 ms`, `2.4 s`), not as a measured duration
  // (`341.100 ms`).
  assert.match(await p.page.getByTestId('run-status').innerText(), /^Done: 1 analysis job\(s\) in (\d+ ms|\d+\.\d s)$/);
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});

test('a trace numbered by order: its card shows the run\'s check of the number; a lone rank is not compared', async () => {
  // HTA's cupti_profiler trace writes distributedInfo (rank 0) after its events: the inventory
  // numbers it by order (rank 1, GPU-DISC-001); the run reads the late rank and checks it
  // (GPU-DISC-005, a warning naming both), which the card shows in place of the guess. The two
  // files are copied into a temporary folder (the folder input does not follow links).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-e2e-check-'));
  const run = path.join(dir, 'run');
  fs.mkdirSync(run);
  for (const f of ['cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz', 'execution_trace/benchmark_simple_add_trace.json.gz']) {
    fs.copyFileSync(path.join(HTA, f), path.join(run, path.basename(f)));
  }
  try {
    const p = await openPage(run);
    const page = p.page;
    const card = page.locator('[data-testid=rank-card][data-rank="1"]');
    await page.waitForFunction(() => /GPU-DISC-005/.test(document.querySelector('[data-testid=rank-card][data-rank="1"]')?.innerText || ''));
    const trace = 'run/benchmark_result_924719_1679055439_trace.json.gz';
    assert.deepEqual(await card.getByTestId('rank-note').allInnerTexts(), [
      `GPU-DISC-005: ${trace} says distributedInfo.rank 0 after its trace events (past the head the inventory reads), but it was numbered rank 1 from the order of the traces (no distributedInfo in the head, no rank in the name) before the read: this run keeps rank 1; name the file with rank0 (rank0.pt.trace.json) to number it 0`,
    ]);
    await p.screenshot('gpu-05c-rank-check-card');
    // The Steps tab compares the ranks with kernels: the simple-add trace only, not compared.
    await page.getByTestId('tab-anomaly').click();
    await page.getByTestId('anomaly-ranks').waitFor();
    assert.deepEqual(await page.getByTestId('robust-z').allInnerTexts(), ['—']);
    await p.screenshot('gpu-05d-lone-rank-robust-z');
    assert.deepEqual(p.consoleErrors, []);
    await page.context().close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('HTA nccl trace: steps, a bubble selected with its next-kernel launch timing', async () => {
  const p = await openPage(NCCL);
  const page = p.page;
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  await page.getByTestId('step-row').first().waitFor();
  assert.equal(await page.getByTestId('step-row').count(), 3);
  assert.match(await page.getByTestId('card-steps').innerText(), /^3 \(marker\)$/);
  // The timeline legend names the GPU kernel classes, not Ascend's AI_CORE / AI_CPU / HCCL.
  const legend = await page.locator('.timeline-legend').innerText();
  assert.match(legend, /kernels:\s*compute\s*communication\s*memcpy \/ memset \/ other\s*host/);
  assert.doesNotMatch(legend, /AI_CORE|AI_CPU|HCCL/);
  await page.getByTestId('bubble-scope').selectOption('global');
  const first = page.getByTestId('bubble-row').first();
  await first.waitFor();
  assert.match(await first.innerText(), /15\.719 ms/);
  await first.click();
  const panel = page.getByTestId('bubble-panel');
  await panel.getByTestId('bubble-window').waitFor();
  assert.match(await panel.getByTestId('bubble-id').innerText(), /global:global:0/);
  const panelText = await panel.innerText();
  assert.match(panelText, /launched 15\.683 ms after the device went idle: late launch \(host-bound\)/);
  // h2d_flow_count on a GPU rank: device ops launched inside the window — here the one
  // late-launched kernel that ends it (tests/gpu_anomaly.rs pins the same 1).
  assert.match(panelText, /launches inside/);
  assert.equal(await panel.getByTestId('bubble-flows').innerText(), '1');
  // The kernels around the bubble come from the trace: no "CSV line" on a GPU rank.
  assert.match(panelText, /Memcpy DtoD \(Device -> Device\) · GPU_MEMCPY · 1\.5 µs/);
  assert.doesNotMatch(panelText, /CSV line/);
  // The step's structure tree holds 322 structures (one-kernel repeated blocks): the first 40
  // are listed and the rest wait behind "show all" (the tab was 21,000 px long).
  const tree = page.getByTestId('structure-tree');
  const structures = tree.locator('[data-testid=tree-node][data-kind=structure]');
  await structures.first().waitFor();
  assert.equal(await structures.count(), 40);
  assert.match(await tree.getByTestId('tree-show-all').innerText(), /282 more — show all 322/);
  await page.waitForTimeout(300);
  await p.screenshot('gpu-03-nccl-bubble');
  assert.ok(await page.evaluate(() => document.documentElement.scrollHeight) < 6000, 'the steps tab stays a few screens long');
  await tree.getByTestId('tree-show-all').click();
  assert.equal(await structures.count(), 322);
  assert.equal(await tree.getByTestId('tree-show-all').count(), 0);
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});

// 3. The GPU panel (HTA breakdowns, kernel table, straggler view) on HTA's two-rank
//    trace_filter pair: the numbers are HTA 0.5.0's (tests/gpu_anomaly_json.rs pins them).
test('HTA trace_filter pair: GPU panel with HTA breakdowns, kernels and the straggler view', async () => {
  const p = await openPage(TF);
  const page = p.page;
  await page.getByTestId('tab-anomaly').click();
  const panel = page.getByTestId('gpu-panel');
  await panel.getByTestId('gpu-span').waitFor();
  assert.equal(await panel.getByTestId('gpu-span').getAttribute('data-us'), '600058');
  assert.equal(await panel.getByTestId('gpu-compute').getAttribute('data-us'), '106252');
  assert.equal(await panel.getByTestId('gpu-idle').getAttribute('data-us'), '321378');
  assert.match(await panel.getByTestId('gpu-window').innerText(), /HTA parity window/);
  // The categories and kernel tables cover the whole capture, unlike the HTA cards above.
  assert.equal(await panel.getByTestId('gpu-categories-note').innerText(),
    'Whole capture: all 1204 device ops (kernels, memcpy, memset) of the 2 ProfilerSteps, the last one included; the HTA figures above leave out the 602 launched in the last step.');
  assert.equal(await panel.getByTestId('gpu-idle-row').count(), 5);
  assert.equal(await panel.getByTestId('gpu-category-row').count(), 3);
  const kernels = await panel.getByTestId('gpu-kernel-row').count();
  assert.ok(kernels >= 20, `kernel rows: ${kernels}`);
  await panel.getByTestId('gpu-kernel-filter').fill('nccl');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=gpu-kernel-row] code')].every((c) => /nccl/i.test(c.textContent)));
  assert.ok(await panel.getByTestId('gpu-kernel-row').count() >= 1);
  await panel.getByTestId('gpu-kernel-filter').fill('');
  const rows = panel.getByTestId('gpu-straggler-row');
  await rows.nth(1).waitFor();
  assert.match(await rows.nth(1).innerText(), /straggler/);
  assert.doesNotMatch(await rows.nth(0).innerText(), /straggler/);
  assert.match(await rows.nth(1).innerText(), /\b8\b/);
  assert.match(await rows.nth(1).innerText(), /^trace_filter\s+1\s+10\s+10\s+8\b/); // role, rank, collectives, matched, started last
  assert.ok(await panel.getByTestId('gpu-memory-none').isVisible());
  await panel.scrollIntoViewIfNeeded();
  await p.screenshot('gpu-04-trace-filter-panel');
  await panel.screenshot({ path: path.join(REPO, 'test-output', 'gpu-05-trace-filter-panel-only.png') });
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});

// 4. The [memory] counter chart on the tb_plugin sample (profile_memory=True, 2021 trace
//    without Total Allocated: allocated = Σ Bytes since the capture started, said so).
test('tb_plugin sample: memory counter chart with its peak', async () => {
  const p = await openPage(TB);
  const page = p.page;
  await page.getByTestId('tab-anomaly').click();
  const mem = page.getByTestId('gpu-memory').first();
  await mem.waitFor();
  const text = await mem.innerText();
  assert.match(text, /peak allocated [0-9.]+ (MiB|GiB)/);
  assert.match(text, /since the capture started/);
  const painted = await page.getByTestId('gpu-memory-chart').first().evaluate((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  });
  assert.ok(painted > 1000, `chart pixels painted: ${painted}`);
  // One curve column per plot pixel: the series reaches the right end of the plot (the last
  // sample holds to the end of the window).
  const right = await page.getByTestId('gpu-memory-chart').first().evaluate((c) => {
    const dpr = window.devicePixelRatio || 1;
    const x = Math.floor((c.clientWidth - 12 - 3) * dpr);
    const d = c.getContext('2d').getImageData(x, 0, 1, c.height).data;
    let blue = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 2] > 150 && d[i] < 120) blue++;
    return blue;
  });
  assert.ok(right > 0, 'the allocated curve reaches the right edge of the plot');
  await mem.screenshot({ path: path.join(REPO, 'test-output', 'gpu-06-tb-plugin-memory.png') });
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});

// 5. A merged multi-rank trace (TraceLens' trace fusion: `args.rank`, pid = rank × 10^8 + pid,
//    only `traceEvents`): split in its one read, every rank in the Steps tab with its own id
//    and its own steps (gpu-traces.md §6; tests/merged_session.rs pins the same natively).
function mergedTrace(ranks) {
  const evs = [];
  for (const r of ranks) {
    const host = r * 100000000 + 4242;
    const dev = r * 100000000 + r;
    for (let s = 0; s < 2; s++) {
      const t = 1000 * s + 10 * r;
      evs.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${s}`, pid: host, tid: 1, ts: t, dur: 900, args: { rank: r } });
      evs.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: host, tid: 1, ts: t + 10, dur: 50, args: { 'External id': s, rank: r } });
      evs.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: host, tid: 1, ts: t + 20, dur: 5, args: { correlation: 100 * r + s, 'External id': s, rank: r } });
      evs.push({ ph: 'X', cat: 'kernel', name: 'gemm', pid: dev, tid: 7, ts: t + 40, dur: 300 + 100 * r, args: { device: r, stream: 7, correlation: 100 * r + s, 'External id': s, rank: r } });
    }
  }
  return JSON.stringify({ traceEvents: evs });
}

test('merged trace of three ranks: every rank in the Steps tab with its own steps', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-merged-e2e-'));
  fs.writeFileSync(path.join(dir, 'merged_trace.json'), mergedTrace([0, 1, 2]));
  try {
    const p = await openPage(dir);
    const page = p.page;
    await page.getByTestId('tab-anomaly').click();
    await page.getByTestId('anomaly-view').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=anomaly-rank-row]').length === 3);
    const ids = await page.getByTestId('anomaly-rank-row').evaluateAll((rows) => rows.map((r) => r.querySelectorAll('td')[1].textContent));
    assert.deepEqual(ids, ['0', '1', '2']);
    // Rank 2: its own two steps, its own kernels (500 µs each, rank 0's are 300 µs).
    await page.getByTestId('anomaly-rank-row').nth(2).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=step-row]').length === 2);
    assert.match(await page.getByTestId('card-steps').innerText(), /^2 \(marker\)$/);
    await page.waitForTimeout(300);
    await p.screenshot('gpu-07-merged-trace-ranks');
    // The split is said once, in the problems.
    await page.getByTestId('tab-problems').click();
    await page.waitForFunction(() => /GPU-TV-020/.test(document.body.innerText));
    assert.match(await page.locator('body').innerText(), /split into its 3 ranks/);
    assert.deepEqual(p.consoleErrors, []);
    await page.context().close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
