// End-to-end test of the "Steps & bubbles" tab on the real msinsight level1 folder:
// both ranks analysed, the step table with the §13.1 values, a bubble selected and its detail
// panel, the structure tree, the cross-rank table, and exports equal to `proflens anomaly`.
// Screenshots go to test-output/.
//
// Run: scripts/build-release.sh, then `cd tests/e2e && node --test anomaly.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, OUT, serveStatic, launch, ProflensPage } from './lib.mjs';

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

async function level1Page() {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, acceptDownloads: true });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-anomaly').click();
  await p.page.getByTestId('anomaly-view').waitFor();
  return p;
}

test('steps view of level1: both ranks, one step with the §13.1 values, a bubble selected', async () => {
  const p = await level1Page();
  const page = p.page;
  // Cross-rank table: one row per rank, nobody slow (two ranks: robust z = ±0.67).
  const ranks = page.getByTestId('anomaly-rank-row');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=anomaly-rank-row]').length === 2);
  assert.equal(await ranks.count(), 2);
  assert.deepEqual(await page.getByTestId('slow-flag').allInnerTexts(), ['', '']);
  // Rank 0 (selected first): summary cards and the step table.
  await page.getByTestId('step-row').first().waitFor();
  assert.equal(await page.getByTestId('step-row').count(), 1);
  assert.match(await page.getByTestId('card-steps').innerText(), /^1 \(marker\)$/);
  assert.equal(await page.getByTestId('card-service').innerText(), '154.484 ms'); // §13.1 154.48350
  assert.equal(await page.getByTestId('card-underfeed').innerText(), '28.3 %'); // 0.282533
  assert.equal(await page.getByTestId('card-pattern').innerText(), 'internal_bubble');
  assert.equal(await page.getByTestId('step-bubbles').innerText(), '90');
  const tags = await page.getByTestId('anomaly-tag').allInnerTexts();
  assert.ok(tags.some((t) => t.startsWith('PRELAUNCH_GAP_HEAVY')), tags.join(' | '));
  assert.ok(tags.some((t) => t.startsWith('DEVICE_IDLE_GAP_HEAVY')), tags.join(' | '));
  assert.match(await page.getByTestId('anomaly-notes').innerText(), /One step only/);
  // Bubble list sorted by duration: the largest window is the 17.903 ms prelaunch (§13.1).
  await page.getByTestId('bubble-row').first().waitFor();
  assert.match(await page.getByTestId('bubble-count').innerText(), /of 56 \(56 emitted\)/);
  // Paging (regression: a `>=` inside the "next" button's attribute closure ended the tag,
  // leaving no button and the closure's text on the page).
  assert.equal(await page.locator('[data-testid=bubble-list]').getByText('offset.set').count(), 0);
  await page.getByTestId('bubble-next').click();
  await page.waitForFunction(() => /^51–56 of 56/.test(document.querySelector('[data-testid=bubble-count]')?.innerText || ''));
  assert.equal(await page.getByTestId('bubble-row').count(), 6);
  assert.ok(await page.getByTestId('bubble-next').isDisabled());
  await page.getByTestId('bubble-prev').click();
  await page.waitForFunction(() => /^1–50 of 56/.test(document.querySelector('[data-testid=bubble-count]')?.innerText || ''));
  const pre = (await page.getByTestId('bubble-row').first().innerText()).split('\t');
  // Columns: #, scope, start (from the capture start: the steps tab's one time origin, the
  // same as the timeline's), duration, host, sync, comm, step, labels.
  assert.equal(pre[1], 'prelaunch');
  // The window opens at the marker, the earliest time of the capture: +0 ms; the first kernel
  // runs 17.9025 ms later (the duration; display rounding .902/.903).
  assert.equal(pre[2], '+0 ms');
  assert.equal(pre[3], '17.903 ms');
  assert.equal(pre[7], 'ProfilerStep#50');
  // Global windows only: the largest is the §13.2 gap of 1.31875 ms; select it.
  await page.getByTestId('bubble-scope').selectOption('global');
  await page.waitForFunction(() => /of 5 \(56 emitted\)/.test(document.querySelector('[data-testid=bubble-count]')?.innerText || ''));
  const first = page.getByTestId('bubble-row').first();
  assert.match(await first.innerText(), /1\.319 ms/);
  await first.click();
  const panel = page.getByTestId('bubble-panel');
  await panel.getByTestId('bubble-window').waitFor();
  assert.match(await panel.getByTestId('bubble-window').innerText(), /1\.319 ms/);
  assert.match(await panel.getByTestId('bubble-id').innerText(), /global:global:0/);
  const panelText = await panel.innerText();
  assert.match(panelText, /aclnnMaxPool2dWithMask_TransDataSpecial_TransData/); // §5.6 "before" (reference script)
  assert.match(panelText, /trans_TransData_6/); // §5.6 "after"
  assert.ok((await panel.getByTestId('bubble-labels').locator('li').count()) >= 1);
  // Structure tree: the step node with the §13.2 four perspectives.
  const root = page.locator('[data-testid=tree-node][data-kind=step] > .anom-tree-row').first();
  await root.waitFor();
  const rootText = await root.innerText();
  assert.doesNotMatch(await page.locator('body').innerText(), /offset\.set|on:click/);
  for (const v of ['136.581 ms', '110.837 ms', '114.866 ms', '215.986 ms']) assert.ok(rootText.includes(v), `${v} in ${rootText}`);
  // Filter by label: every row carries the label.
  await page.getByTestId('bubble-scope').selectOption('');
  // The option says how many windows carry the label; the filtered list must match it.
  const opt = await page.locator('[data-testid=bubble-label] option[value=possible_host_launch_lag]').innerText();
  const n = Number(/\((\d+)\)/.exec(opt)[1]);
  assert.ok(n > 0 && n <= 56, opt);
  await page.getByTestId('bubble-label').selectOption('possible_host_launch_lag');
  await page.waitForFunction((n) => new RegExp(`of ${n} \\(56 emitted\\)`).test(document.querySelector('[data-testid=bubble-count]')?.innerText || ''), n);
  for (const t of await page.getByTestId('bubble-row').allInnerTexts()) assert.match(t, /possible_host_launch_lag/);
  await page.getByTestId('bubble-label').selectOption('');
  // Wait anchors: the two §13.2 false hotspots are flagged.
  await page.getByTestId('wait-anchor-row').first().waitFor();
  const flagged = await page.locator('[data-testid=wait-anchor-row].flagged').allInnerTexts();
  assert.equal(flagged.length, 2);
  assert.match(flagged[0], /aclnnInplaceFillScalar_FillAiCore_Fill/);
  await page.getByTestId('bubble-row').nth(3).click();
  await page.waitForTimeout(300);
  await p.screenshot('anomaly-01-level1-rank0');
  // Rank 1: 152.346 ms (§13.1 152.34575).
  await ranks.nth(1).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=card-service]')?.innerText === '152.346 ms');
  await page.getByTestId('step-row').first().waitFor();
  assert.equal(await page.getByTestId('card-pattern').innerText(), 'mixed'); // §13.3 rulebook (0.766)
  const tags1 = await page.getByTestId('anomaly-tag').allInnerTexts();
  assert.ok(!tags1.some((t) => t.startsWith('COMM_SYNC_RISK')), tags1.join(' | ')); // wait ratio 0.132
  // No component source text leaks into the page (a `>` inside an attribute closure once did).
  assert.doesNotMatch(await page.locator('body').innerText(), /offset\.set|on:click/);
  await p.screenshot('anomaly-02-level1-rank1');
  assert.deepEqual(p.consoleErrors, []);
  await page.context().close();
});

test('anomaly exports download the CLI bytes', async () => {
  const p = await level1Page();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-anom-e2e-'));
  execFileSync('cargo', ['run', '--quiet', '--bin', 'proflens', '--', 'anomaly', LEVEL1,
    '--out', path.join(dir, 'cli.json'), '--report-dir', dir], { cwd: REPO, stdio: 'ignore' });
  fs.mkdirSync(OUT, { recursive: true });
  for (const [button, cliFile] of [
    ['anom-export-json', 'cli.json'],
    ['anom-export-report', 'anomaly_report_level1_rank0.md'],
    ['anom-export-arch', 'model_architecture_report_level1_rank0.md'],
    ['anom-export-steps', null],
    ['anom-export-bubbles', null],
  ]) {
    const [download] = await Promise.all([
      p.page.waitForEvent('download', { timeout: 60_000 }),
      p.page.getByTestId(button).click(),
    ]);
    const file = path.join(OUT, `anomaly-${download.suggestedFilename()}`);
    await download.saveAs(file);
    const web = fs.readFileSync(file);
    if (cliFile) {
      const cli = fs.readFileSync(path.join(dir, cliFile));
      assert.ok(web.equals(cli), `${button}: the page's export (${web.length} B) differs from the CLI (${cli.length} B)`);
    } else {
      const lines = web.toString('utf8').trim().split('\n');
      // Steps: header + one step per rank; bubbles: header + 56 windows per rank.
      assert.equal(lines.length, button === 'anom-export-steps' ? 3 : 113, button);
    }
  }
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
  fs.rmSync(dir, { recursive: true, force: true });
});
