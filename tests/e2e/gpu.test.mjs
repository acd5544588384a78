// End-to-end test of GPU ranks (issue 10): PyTorch profiler (Kineto) traces dropped as folders.
// 1. The rl_insight torch_profile folder (real NVIDIA L20 Ray workers; HTA fails on them): every
//    role and rank in the inventory with the device and CUDA version, the Steps & bubbles tab
//    with every rank, each a host-only trace with the reason.
// 2. An HTA trace with kernels (nccl_parser_config): steps, a bubble selected, its panel says
//    whether the next kernel's launch came late (host-bound) or early.
// Screenshots go to test-output/.
//
// Run: scripts/build-release.sh, then `cd tests/e2e && node --test gpu.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const RLI = path.join(REPO, '../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile');
const NCCL = path.join(REPO, '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config');

let server;
let browser;

before(async () => {
  for (const d of [RLI, NCCL]) assert.ok(fs.existsSync(d), `fixture missing: ${d}`);
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
  await p.screenshot('gpu-01-rl-insight-inventory');
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=anomaly-no-kernels-row]').length === 6);
  const empty = page.getByTestId('anomaly-no-kernels');
  await empty.waitFor();
  const text = await empty.innerText();
  assert.match(text, /host-only/);
  assert.match(text, /ProfilerActivity\.CUDA/);
  assert.doesNotMatch(text, /torch_npu/);
  await p.screenshot('gpu-02-rl-insight-steps');
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});

test('HTA nccl trace: steps, a bubble selected with its next-kernel launch timing', async () => {
  const p = await openPage(NCCL);
  const page = p.page;
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  await page.getByTestId('step-row').first().waitFor();
  assert.equal(await page.getByTestId('step-row').count(), 3);
  assert.match(await page.getByTestId('card-steps').innerText(), /^3 \(marker\)$/);
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
  await page.waitForTimeout(300);
  await p.screenshot('gpu-03-nccl-bubble');
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});
