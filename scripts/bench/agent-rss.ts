// Idle memory of platform-agent. Runs the built agent (dist/) in dev mode with a fake runtime, waits
// until the runtime serves, lets the agent idle, and samples its resident set size from /proc:
//   - offline (a machine config with an `agent` object) and online (cloud credentials; the cloud is
//     unreachable, so the agent idles between update checks with gRPC loaded),
//   - as the installed service runs it (node with AGENT_NODE_FLAGS, see service-install.ts) and with
//     plain node.
// Prints each figure, its ratio to the 60 MB target of issue 9, and the ratio to a bare Node process
// measured in the same run (the floor every Node program pays).
// Run: npm run bench:agent-rss   (PLATFORM_AGENT_BENCH_IDLE_SECONDS, default 15)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { AGENT_NODE_FLAGS } from '../../core/agent/service-install.js';

const TARGET_MB = 60;
const idleSeconds = Number(process.env.PLATFORM_AGENT_BENCH_IDLE_SECONDS ?? 15);
const agentMain = fileURLToPath(new URL('../../core/agent/main.js', import.meta.url));

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function idleRss(child: ChildProcess, ready: RegExp): Promise<{ max: number; last: number }> {
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
  let max = 0;
  let last = 0;
  for (let i = 0; i < idleSeconds * 4; i++) {
    last = rssMb(child.pid!);
    max = Math.max(max, last);
    await sleep(250);
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { max, last };
}

const dir = mkdtempSync(join(tmpdir(), 'platform-agent-bench-'));
try {
  const runtime = join(dir, 'runtime.sh');
  writeFileSync(runtime, '#!/bin/sh\necho "serving on 127.0.0.1:1"\ntrap \'kill $!; exit 0\' TERM\nsleep 600 & wait $!\n');
  chmodSync(runtime, 0o755);
  const offline = join(dir, 'machine.json');
  writeFileSync(offline, JSON.stringify({ agent: { version_control: { 'platform-server': pathToFileURL(runtime).href } } }));
  const online = join(dir, 'credentials.json');
  writeFileSync(online, JSON.stringify({ cloud: { app_address: 'http://127.0.0.1:1', id: 'part', api_key: { id: 'k', key: 's' } } }));
  const env = { ...process.env, PLATFORM_AGENT_HOME: join(dir, 'home') };

  const bare = await idleRss(
    spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("ready")'], { stdio: ['ignore', 'pipe', 'inherit'] }),
    /ready/,
  );
  console.log(`bare Node process (anchor): ${bare.last.toFixed(1)} MB`);
  // The offline runs install the runtime that the online runs then start from the cache.
  for (const [mode, config] of [
    ['offline', offline],
    ['online', online],
  ] as const) {
    for (const [label, flags] of [
      ['as installed (node ' + AGENT_NODE_FLAGS.join(' ') + ')', AGENT_NODE_FLAGS],
      ['plain node', []],
    ] as const) {
      const child = spawn(process.execPath, [...flags, agentMain, '--dev-mode', '-c', config], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      const r = await idleRss(child, /platform-server is serving/);
      console.log(
        `platform-agent idle RSS, ${mode}, ${label}: ${r.last.toFixed(1)} MB (max ${r.max.toFixed(1)} MB over ${idleSeconds} s); ` +
          `target ${TARGET_MB} MB: ratio ${(r.max / TARGET_MB).toFixed(2)} ${r.max <= TARGET_MB ? 'met' : 'NOT met'}; vs bare Node ${(r.last / bare.last).toFixed(2)}x`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
