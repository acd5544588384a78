// Timeline of one drop: every message between the page and its workers, in ms from the drop
// (a diagnostic, not a test): node tests/e2e/probe_timeline.mjs FOLDER [SETTLE_MS]
import { ENVELOPE_JS, serveStatic, launch, ProflensPage } from './lib.mjs';
const input = process.argv[2];
const settle = Number(process.argv[3] || 3000);
const server = await serveStatic();
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const page = await context.newPage();
const lines = [];
page.on('console', (m) => { const s = m.text(); if (s.startsWith('probe ')) lines.push(s.slice(6)); });
await page.addInitScript(ENVELOPE_JS + `(() => {
  const t = () => Math.round(performance.timeOrigin + performance.now());
  const kind = (d, names) => (proflensEnvelope(d, names) || { name: '?' }).name;
  const W = self.Worker;
  let n = 0;
  self.Worker = function (url, opts) {
    const w = new W(url, opts); const id = n++;
    console.debug('probe ' + t() + ' w' + id + ' new ' + url);
    const post = w.postMessage.bind(w);
    w.postMessage = (m, tr) => { console.debug('probe ' + t() + ' w' + id + ' in ' + kind(m, PROFLENS_REQUESTS)); return post(m, tr); };
    w.addEventListener('message', (e) => { const k = kind(e.data, PROFLENS_RESPONSES); if (k !== 'Progress') console.debug('probe ' + t() + ' w' + id + ' out ' + k); });
    return w;
  };
  self.Worker.prototype = W.prototype;
})();`);
const p = new ProflensPage(page, server.url);
const tl = Date.now();
await p.open();
await page.waitForTimeout(settle);
const t0 = Date.now();
await p.openFolder(input);
await p.waitDone(600000);
const t1 = Date.now();
await page.waitForTimeout(500);
console.log('page load at', tl - t0, 'drop at 0, done at', t1 - t0);
for (const l of lines) { const [ts, ...rest] = l.split(' '); console.log(String(Number(ts) - t0).padStart(7), rest.join(' ')); }
await browser.close(); server.close();
