// Several processes making the same pg-boss queues at one moment, as scale-out `serve` and `worker`
// processes starting together do (ensureBossQueue, pg-boss-queue.ts): every one of them goes on, and
// each queue exists once. pg-boss's own createQueue, called the same way, can fail one of them with a
// deadlock (40P01); two serve processes started together once stopped at start on it.
import test from 'ava';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { startPostgres, type PostgresServer } from '../testing/postgres.js';
import { ensureBossQueue, messageIdOf, startBoss } from './pg-boss-queue.js';

let server: PostgresServer | undefined;
const started = startPostgres().then((s) => (server = s));
started.catch(() => undefined);
test.after.always(async () => server?.stop());

async function freshDatabase(url: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return url.replace(/\/postgres$/, `/${name}`);
}

test('six pg-boss instances making the same two queues at once all succeed, and each queue is made once', async (t) => {
  const { url } = await started;
  // Rounds on fresh databases: each is a new race.
  for (let round = 0; round < 2; round++) {
    const db = await freshDatabase(url, `boss_race_${round}`);
    const bosses = Array.from({ length: 6 }, () => new PgBoss({ connectionString: db, max: 2, supervise: false, schedule: false }));
    // pg-boss reports its pool's errors as events (an EventEmitter without a listener would end the test's process).
    for (const b of bosses) b.on('error', (err: Error) => t.log(`pg-boss error event: ${err.message}`));
    try {
      await Promise.all(bosses.map((b) => b.start()));
      const results = await Promise.allSettled(
        bosses.flatMap((b, i) => (i % 2 ? ['queue-a', 'queue-b'] : ['queue-b', 'queue-a']).map((name) => ensureBossQueue(b, { name, retryLimit: 3 }))),
      );
      const failed = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      t.deepEqual(failed, [], `round ${round}`);
      const names = (await bosses[0].getQueues()).map((q) => q.name).sort();
      t.deepEqual(names, ['queue-a', 'queue-b']);
    } finally {
      await Promise.all(bosses.map((b) => b.stop({ graceful: false, wait: true }).catch(() => undefined)));
    }
  }
});

test('startBoss started three times at once makes the queue once with its options and names its connections; a message sent twice under one messageIdOf name is stored once', async (t) => {
  const { url } = await started;
  const db = await freshDatabase(url, 'boss_start');
  const options = { applicationName: 'platform-test-queue', supervise: false, maintenanceIntervalSeconds: 5, onError: (err: Error) => t.log(err.message) };
  const bosses = await Promise.all([0, 1, 2].map(() => startBoss(db, { name: 'queue-c', retryLimit: 7, retryDelay: 3 }, options)));
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    const queue = await bosses[0].getQueue('queue-c');
    t.like(queue, { name: 'queue-c', retryLimit: 7, retryDelay: 3 });
    const named = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'platform-test-queue'");
    t.true(named.rows[0].n >= 3, `${named.rows[0].n} connections named platform-test-queue`);
    // The same name gives the same UUID (in every process), another name another one.
    const id = messageIdOf('submit:job-1');
    t.regex(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    t.is(id, messageIdOf('submit:job-1'));
    t.not(id, messageIdOf('submit:job-2'));
    t.is(await bosses[0].send('queue-c', { n: 1 }, { id }), id);
    t.is(await bosses[1].send('queue-c', { n: 2 }, { id }), null, 'the second send under the same id is stored as nothing');
    t.deepEqual((await bosses[2].getJobById('queue-c', id))?.data, { n: 1 });
  } finally {
    await client.end();
    await Promise.all(bosses.map((b) => b.stop({ graceful: false, wait: true }).catch(() => undefined)));
  }
});
