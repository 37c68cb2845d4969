// npm run bench:isolation — does one tenant's attack slow another tenant down, or take the cloud down?
//
// For each attack in scripts/bench/isolation/attacks.ts, a fresh platform-cloud (from dist/, default
// limits plus the attack's own settings) and three organizations. The quiet organization measures two
// calls, one at a time: `filter`, TabularDataByFilter for 1 row, and `upload`, a 10-point tabular
// DataCaptureUpload, from a process of its own. First on the idle cloud (the anchor, same run), then
// beside a third organization that makes the same two calls back to back (the floor: what any busy,
// harmless neighbour costs on this machine), then while the attacking organization runs the attack.
// Printed per attack: p50 and p99 of each call, the p99 ratio to idle (target: p99 <= 250 ms and <= 5x
// idle) and to the floor (where idle p99 is a few ms, 5x idle can be below what a harmless neighbour
// already costs), and the cloud's peak RSS while the attack ran against its documented cap
// (cloud/query/LIMITS.md: 1536 MB; target: under the cap, never killed).
//
// BENCH_ATTACKS=a,b runs only those attacks; BENCH_SAMPLES sets the samples per call (default 200);
// BENCH_CLOUD_NODE_ARGS passes node flags to the clouds, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof' to see
// where a cloud spends its time under an attack.
import { cpus, loadavg } from 'node:os';
import { attacks } from './isolation/attacks.js';
import { pct, runAttack, type AttackResult } from './isolation/harness.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const CAP_MB = Number(process.env.BENCH_RSS_CAP_MB ?? 1536);
const only = process.env.BENCH_ATTACKS?.split(',').filter(Boolean);

function report(r: AttackResult): boolean {
  let met = !r.killed && r.peakRssMb < CAP_MB;
  console.log(`\n${r.attack.name} (${r.attack.finding}): ${r.attack.describe}`);
  console.log(`  attacker: ${r.summary}`);
  for (const call of ['filter', 'upload'] as const) {
    const [i50, i99, l50, l99] = [pct(r.idle[call], 0.5), pct(r.idle[call], 0.99), pct(r.loaded[call], 0.5), pct(r.loaded[call], 0.99)];
    const f99 = pct(r.floor[call], 0.99);
    const ok = r.loaded[call].length > 0 && l99 <= 250 && l99 <= 5 * i99;
    met &&= ok;
    console.log(
      `  ${call.padEnd(7)} idle p50 ${i50.toFixed(1)} ms p99 ${i99.toFixed(1)} ms | floor p99 ${f99.toFixed(1)} ms | under attack p50 ${l50.toFixed(1)} ms p99 ${l99.toFixed(1)} ms` +
        ` (${r.loaded[call].length} samples) | p99 ratio ${(l99 / i99).toFixed(2)}x of idle (target <= 250 ms and <= 5x) ${ok ? 'MET' : 'NOT MET'}, ${(l99 / f99).toFixed(2)}x of the floor`,
    );
  }
  console.log(
    `  cloud RSS before ${r.baseRssMb.toFixed(0)} MB, peak ${r.peakRssMb.toFixed(0)} MB (cap ${CAP_MB} MB, ${((100 * r.peakRssMb) / CAP_MB).toFixed(0)} %)` +
      ` | cloud CPU ${r.cloudCpuMs.toFixed(0)} ms in the attack's ${r.attackMs} ms | ${r.killed ? 'KILLED' : 'alive'} | ${met ? 'MET' : 'NOT MET'}`,
  );
  return met;
}

console.log(
  `bench:isolation  ${cpus().length} cores, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}, ${SAMPLES} samples per call`,
);
let allMet = true;
for (const attack of attacks.filter((a) => !only || only.includes(a.name))) {
  allMet = report(await runAttack(attack, SAMPLES)) && allMet;
}
console.log(`\n${allMet ? 'all targets MET' : 'some targets NOT MET'}`);
