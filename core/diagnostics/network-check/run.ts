// Runs a plan of network checks one after another (each is short and bounded) and prints one line per
// check, so that the output reads as a checklist on a robot's console.
import { performance } from 'node:perf_hooks';
import type { NetworkCheck, NetworkCheckPlan } from './plan.js';

export interface NetworkCheckResult {
  check: NetworkCheck;
  ok: boolean;
  latencyMs: number;
  detail: string;
}

export function formatResult(r: NetworkCheckResult): string {
  const name = `${r.check.kind} ${r.check.target}`;
  return `${r.ok ? 'ok    ' : 'FAILED'}  ${name.padEnd(36)} ${`${r.latencyMs.toFixed(1)} ms`.padStart(10)}  ${r.check.purpose}: ${r.detail}`;
}

async function runOne(check: NetworkCheck): Promise<NetworkCheckResult> {
  const started = performance.now();
  try {
    const detail = await check.run();
    return { check, ok: true, latencyMs: performance.now() - started, detail };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { check, ok: false, latencyMs: performance.now() - started, detail: e.message ?? String(err) };
  }
}

/** Prints each result as it comes and the skipped checks; resolves true when every check passed. */
export async function runNetworkChecks(plan: NetworkCheckPlan, print: (line: string) => void): Promise<boolean> {
  let ok = true;
  for (const check of plan.checks) {
    const result = await runOne(check);
    ok &&= result.ok;
    print(formatResult(result));
  }
  for (const reason of plan.skipped) print(`skipped ${reason}`);
  print(ok ? 'network check passed' : 'network check FAILED');
  return ok;
}
