// The floor of bench:runtime's start-up figure: a process that starts N Piscina workers with the
// runtime's pool settings, each running one empty task, and prints `ready` when all have answered.
// A resource's start cannot cost less than its worker's, so this is what N resources cost at best here.
import { Piscina } from 'piscina';

const count = Number(process.argv[2] ?? 100);
// CommonJS, like the runtime's worker host: the cheapest worker Piscina can start.
const filename = new URL('./empty-worker.cjs', import.meta.url).href;
const pools = Array.from(
  { length: count },
  () => new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, atomics: 'disabled', recordTiming: false }),
);
await Promise.all(pools.map((pool) => pool.run(null)));
process.stdout.write(`ready: ${count} workers\n`);
// Piscina unrefs its workers: keep the process (and so its workers, for an RSS reading) until SIGTERM.
const keepAlive = setInterval(() => undefined, 1 << 30);
process.on('SIGTERM', () => clearInterval(keepAlive));
process.on('SIGTERM', () => void Promise.all(pools.map((pool) => pool.destroy())).then(() => process.exit(0)));
