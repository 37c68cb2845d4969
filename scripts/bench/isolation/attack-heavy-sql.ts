// The attacker keeps HEAVY heavy SQL queries running at once, each restarted as soon as it ends or is
// refused: a cross join that DuckDB cannot finish within the statement timeout.
import type { Attack } from './harness.js';

const HEAVY = Number(process.env.BENCH_HEAVY ?? 8);

export const heavySql: Attack = {
  name: 'heavy-sql',
  finding: 'wave 2 (admission)',
  describe: `${HEAVY} concurrent heavy SQL queries (SELECT count(*) FROM range(1e6) a, range(1e6) b)`,
  async start({ attacker }) {
    let stop = false;
    const outcomes = new Map<string, number>();
    const loop = async () => {
      while (!stop) {
        try {
          await attacker.client.dataClient.tabularDataBySQL(attacker.orgId, 'SELECT count(*) FROM range(1000000) a, range(1000000) b');
          outcomes.set('answered', (outcomes.get('answered') ?? 0) + 1);
        } catch (err) {
          const code = String((err as { code?: number }).code);
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
        }
      }
    };
    const loops = Array.from({ length: HEAVY }, loop);
    return async () => {
      stop = true;
      await Promise.all(loops);
      return `outcomes (gRPC code: count) ${JSON.stringify(Object.fromEntries(outcomes))}`;
    };
  },
};
