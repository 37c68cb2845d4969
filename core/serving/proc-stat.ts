// One process' /proc/<pid>/stat line, read by field (proc(5)). Field 2 (comm, the command's name) is in
// parentheses and may itself hold spaces and ')', so the fields are counted after the line's last ')'.
// Used where the runtime and the cloud look at processes they did not start or may no longer own: the
// capture files' owners (core/datamanager/file-owner.ts), a trainer's process group and orphans
// (cloud/mltraining/trainer-process.ts, orphan-trainers.ts). Linux only: elsewhere there is no /proc and
// every read is undefined.
import { readFileSync } from 'node:fs';

export interface ProcStat {
  /** Field 3: R, S, D, Z (exited, not yet reaped), T, … */
  state: string;
  /** Field 4: the parent's pid. */
  parent: number;
  /** Field 5: the process group. */
  group: number;
  /** Field 22: when the process started, in clock ticks since boot (with the pid, it names one process). */
  startTime: string;
}

/** The stat line of a pid (or `self`), or undefined when there is no such process, no /proc, or an unreadable line. */
export function readProcStat(pid: number | string): ProcStat | undefined {
  let line: string;
  try {
    line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // fields[0] is field 3.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const [state, parent, group, startTime] = [fields[0], Number(fields[1]), Number(fields[2]), fields[19]];
  if (!state || !Number.isInteger(parent) || !Number.isInteger(group) || !/^\d+$/.test(startTime ?? '')) return undefined;
  return { state, parent, group, startTime };
}
