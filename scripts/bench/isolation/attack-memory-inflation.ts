// Issue 27 #8: after the cloud's memory was inflated, RSS does not come back, and the memory guard used to
// stop every query that ran while RSS was over its limit, so every organization's small queries failed
// from then on. Which inflation gets there depends on the other findings (a 1 GiB gRPC-Web body, 16M-point
// uploads), which are being closed one by one; so the bench starts the cloud in that state directly: its
// guard limit (BENCH_RSS_LIMIT_MB, 200) is below the RSS the cloud holds when idle, as after an inflation
// that did not come back. The attacker then runs a runaway 20M-row sort, which the guard must still stop,
// and the quiet organization's small query (a count over 5M generated rows: tiny in memory, and long
// enough for the guard, which samples every 10 ms, to see it) is probed over TabularDataBySQL and the
// PostgreSQL endpoint, beside the harness's gRPC calls.
import { readFileSync } from 'node:fs';
import { pct, type Attack } from './harness.js';
import { probePg, withDatabaseUser } from './pg-probe.js';

const LIMIT_MB = Number(process.env.BENCH_RSS_LIMIT_MB ?? 200);
// All 20M rows must be sorted before the first is returned; TabularDataBySQL would refuse the result past
// its row limit anyway, so the attacker never receives it.
const SORT = 'SELECT md5(a.i::VARCHAR) || md5(b.i::VARCHAR) AS s FROM range(20000) a(i), range(1000) b(i) ORDER BY s';
const SMALL = 'SELECT count(*) AS n FROM range(5000000)';

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

export const memoryInflation: Attack = {
  name: 'memory-inflation',
  finding: 'issue 27 #8',
  describe: `the guard's limit (${LIMIT_MB} MiB) is below the idle cloud's RSS, as after an inflation; a runaway 20M-row sort; the quiet organization's small queries`,
  cloudEnv: { PLATFORM_QUERY_RSS_LIMIT_MB: String(LIMIT_MB) },
  async start({ attacker, quiet, pgPort, pid }) {
    await withDatabaseUser(quiet);
    const before = rssMb(pid);
    let sort = 'answered';
    try {
      await attacker.client.dataClient.tabularDataBySQL(attacker.orgId, SORT);
    } catch (err) {
      sort = `gRPC code ${(err as { code?: number }).code}: ${(err as Error).message.slice(0, 120)}`;
    }
    const probe = probePg(quiet, pgPort, SMALL);
    let stopped = false;
    const grpc: number[] = [];
    const grpcFailures = new Map<string, number>();
    const grpcLoop = (async () => {
      while (!stopped) {
        const t = process.hrtime.bigint();
        try {
          await quiet.client.dataClient.tabularDataBySQL(quiet.orgId, SMALL);
          grpc.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch (err) {
          const code = String((err as { code?: number }).code);
          grpcFailures.set(code, (grpcFailures.get(code) ?? 0) + 1);
        }
      }
    })();
    return async () => {
      stopped = true;
      await grpcLoop;
      const pgLine = await probe.stop();
      return (
        `RSS ${before.toFixed(0)} MB against the ${LIMIT_MB} MiB guard limit; the attacker's sort: ${sort}; quiet org small query over TabularDataBySQL ` +
        `p50 ${pct(grpc, 0.5).toFixed(1)} ms p99 ${pct(grpc, 0.99).toFixed(1)} ms (${grpc.length} answered), failures ${JSON.stringify(Object.fromEntries(grpcFailures))}; ${pgLine}`
      );
    };
  },
};
