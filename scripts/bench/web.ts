// npm run bench:web — for each web page: the gzip size of the JavaScript its first view loads, and the
// time from navigation to interactive (the resource table rendered from live gRPC-Web answers) over
// loopback in headless Chromium, against the targets (300 KB gzip, 1 s), measured in this run.
// The page is served by the real platform-server from dist/ (npm run build first), 10 resources.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchChromium, webUrlOf } from '../../core/shared/testing/chromium.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TARGET_KB = 300;
const TARGET_S = 1;
const MAIN = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-web-'));
const components = [
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  ...Array.from({ length: 4 }, (_, i) => ({
    name: `m${i}`,
    api: 'core:component:motor',
    model: 'gpio',
    attributes: { board: 'b', pins: { pwm: String(10 + 2 * i), dir: String(11 + 2 * i) }, max_rpm: 100 },
  })),
  ...Array.from({ length: 5 }, (_, i) => ({ name: `s${i}`, api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: i } } })),
];
writeFileSync(join(dir, 'config.json'), JSON.stringify({ network: { bind_address: 'localhost:0' }, components }));
const server = spawn(process.execPath, [MAIN, '-config', join(dir, 'config.json'), '-ftdc=false'], { stdio: ['ignore', 'pipe', 'inherit'] });
let output = '';
const url = await new Promise<string>((resolve, reject) => {
  server.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
    if (/web page on \S+\n/.test(output)) resolve(webUrlOf(output));
  });
  server.once('exit', (code) => reject(new Error(`platform-server exited with ${code}:\n${output}`)));
});

const browser = await launchChromium();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
try {
  const times: number[] = [];
  const calls: { start: number; duration: number }[] = [];
  let gzipBytes = 0;
  let rawBytes = 0;
  for (let run = 0; run < RUNS; run++) {
    // A fresh context each time: nothing cached.
    const context = await browser.newContext();
    const page = await context.newPage();
    const scripts: Promise<Buffer>[] = [];
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.push(response.body());
    });
    await page.goto(url);
    await page.locator('html[data-ready="1"]').waitFor();
    // Navigation start to the resource table showing live statuses, by the page's own clock.
    // (Expressions as strings: this file is type-checked without the DOM library.)
    times.push((await page.evaluate<number>("performance.getEntriesByName('platform-interactive')[0].startTime")) / 1000);
    // Where the time goes: the first status call's round trip through the web port and the runtime.
    const first = await page.evaluate<{ start: number; duration: number } | undefined>(
      "(() => { const c = performance.getEntriesByType('resource').find((e) => e.name.endsWith('/GetMachineStatus')); return c && { start: c.startTime, duration: c.duration }; })()",
    );
    if (first) calls.push(first);
    const bodies = await Promise.all(scripts);
    gzipBytes = bodies.reduce((sum, b) => sum + gzipSync(b, { level: 9 }).length, 0);
    rawBytes = bodies.reduce((sum, b) => sum + b.length, 0);
    await context.close();
  }
  const m = median(times);
  console.log(`web pages over loopback, headless Chromium, ${RUNS} cold loads each; targets ${TARGET_KB} KB gzip JavaScript, ${TARGET_S} s to interactive`);
  console.log(
    `runtime control page  JavaScript ${(gzipBytes / 1024).toFixed(1)} KB gzip (${(rawBytes / 1024).toFixed(1)} KB raw), ratio to target ${(gzipBytes / 1024 / TARGET_KB).toFixed(2)}x  ` +
      `load to interactive median ${m.toFixed(3)} s (min ${Math.min(...times).toFixed(3)}, max ${Math.max(...times).toFixed(3)}), ratio to target ${(m / TARGET_S).toFixed(2)}x`,
  );
  console.log(
    `  first GetMachineStatus: sent at median ${median(calls.map((c) => c.start)).toFixed(0)} ms, round trip median ${median(calls.map((c) => c.duration)).toFixed(0)} ms`,
  );
  console.log('cloud data browser    not built yet (see core/web/README.md)');
} finally {
  await browser.close();
  server.kill('SIGTERM');
}
