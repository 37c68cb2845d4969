import test from 'ava';
import { status } from '@grpc/grpc-js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError } from '../../../core/serving/status-error.js';
import { interruptible } from './limited-run.js';

/**
 * A stand-in for a DuckDB connection whose statements run until interrupted. Like DuckDB's, an interrupt
 * reaches only the statement running at that instant: one sent between statements is lost.
 */
function fakeConnection() {
  let running: ((err: Error) => void) | undefined;
  const conn = {
    interrupts: 0,
    interrupt() {
      conn.interrupts++;
      running?.(new Error('INTERRUPT Error: Interrupted!'));
    },
    /** A statement that only an interrupt ends. */
    statement(): Promise<void> {
      return new Promise((_resolve, reject) => {
        running = (err) => {
          running = undefined;
          reject(err);
        };
      });
    },
  };
  return conn;
}

test('a time limit that passes between two statements still stops the next one', async (t) => {
  const conn = fakeConnection();
  const err = await t.throwsAsync(
    interruptible(conn as unknown as DuckDBConnection, { timeoutMs: 5 }, 'sql_query', async () => {
      await sleep(100); // the inspection: the limit passes here, while no statement runs
      await conn.statement(); // the query itself: would run forever if the interrupt were lost
    }),
    { instanceOf: StatusError },
  );
  t.is(err!.code, status.DEADLINE_EXCEEDED);
  t.regex(err!.message, /sql_query: the query ran longer than the 5 ms time limit/);
  t.true(conn.interrupts >= 2, 'interrupted again after the first interrupt was lost');
});

test('a query that ends in time is not interrupted', async (t) => {
  const conn = fakeConnection();
  t.is(await interruptible(conn as unknown as DuckDBConnection, { timeoutMs: 60_000 }, 'sql_query', async () => 42), 42);
  t.is(conn.interrupts, 0);
});
