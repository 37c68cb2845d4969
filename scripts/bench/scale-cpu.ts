// CPU time of the processes in bench:scale's ingest part, read from Linux /proc (100 ticks a second):
// where a reading's CPU goes (the bench process as the client, the cloud, the PostgreSQL server), so the
// figures say whether a run was bound by the 2 cores it shares.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TICK_MS = 10;

/** utime, stime, cutime, cstime of a process, in milliseconds. */
function times(pid: number): number[] {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return [fields[11], fields[12], fields[13], fields[14]].map((f) => Number(f) * TICK_MS);
}

/** user + system CPU milliseconds of a process so far. */
export function processCpuMs(pid: number): number {
  const [user, system] = times(pid);
  return user + system;
}

/** This process's CPU milliseconds so far. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * A PostgreSQL server's CPU milliseconds so far: the postmaster's own and that of its children that
 * ended (reaped, so counted in its cutime/cstime), plus every live child's (backends, WAL writer,
 * checkpointer).
 */
export function postgresCpuMs(serverDir: string): number {
  const postmaster = Number(readFileSync(join(serverDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = times(postmaster).reduce((a, b) => a + b, 0);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.replace(/^.*\) /, '').split(' ')[1]) === postmaster) total += processCpuMs(Number(entry));
    } catch {
      // The process ended between the listing and the read: its time is in the postmaster's cutime.
    }
  }
  return total;
}
