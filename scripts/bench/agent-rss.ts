// Idle memory of platform-agent: runs the built agent (dist/) in dev mode with an offline config and a
// fake runtime, waits until the runtime serves, lets the agent idle, and samples its resident set size
// from /proc. Prints the figure, the ratio to the 60 MB target (issue 9), and the ratio to a bare Node
// process measured in the same run (the floor any Node program pays).
// Run: npm run bench:agent-rss   (PLATFORM_AGENT_BENCH_IDLE_SECONDS, default 20)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const TARGET_MB = 60;
const idleSeconds = Number(process.env.PLATFORM_AGENT_BENCH_IDLE_SECONDS ?? 20);
const agentMain = fileURLToPath(new URL('../../core/agent/main.js', import.meta.url));

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]);
  return kb / 1024;
}

async function sample(pid: number, seconds: number): Promise<{ max: number; last: number }> {
  let max = 0;
  let last = 0;
  for (let i = 0; i < seconds * 4; i++) {
    last = rssMb(pid);
    max = Math.max(max, last);
    await sleep(250);
  }
  return { max, last };
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (pattern.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'platform-agent-bench-'));
try {
  const runtime = join(dir, 'runtime.sh');
  writeFileSync(runtime, '#!/bin/sh\necho "serving on 127.0.0.1:1"\ntrap "exit 0" TERM\nsleep 100000 & wait $!\n');
  chmodSync(runtime, 0o755);
  const config = join(dir, 'machine.json');
  writeFileSync(config, JSON.stringify({ agent: { version_control: { 'platform-server': pathToFileURL(runtime).href } } }));

  const baseline = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("ready")'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await waitForLine(baseline, /ready/);
  const agent = spawn(process.execPath, [agentMain, '--dev-mode', '-c', config], {
    env: { ...process.env, PLATFORM_AGENT_HOME: join(dir, 'home') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(agent, /platform-server is serving/);
  const [a, b] = await Promise.all([sample(agent.pid!, idleSeconds), sample(baseline.pid!, idleSeconds)]);
  agent.kill('SIGTERM');
  baseline.kill('SIGTERM');
  console.log(`platform-agent idle RSS after ${idleSeconds} s: ${a.last.toFixed(1)} MB (max ${a.max.toFixed(1)} MB)`);
  console.log(`target: <= ${TARGET_MB} MB; ratio to target: ${(a.max / TARGET_MB).toFixed(2)} ${a.max <= TARGET_MB ? '(met)' : '(NOT met)'}`);
  console.log(`bare Node process (anchor, same run): ${b.last.toFixed(1)} MB; agent / bare Node: ${(a.last / b.last).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
