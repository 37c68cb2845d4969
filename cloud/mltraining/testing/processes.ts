// Process checks for tests: a zombie (exited, not yet reaped by PID 1) counts as gone.
import { readdirSync, readFileSync } from 'node:fs';
import { readProcStat } from '../../../core/serving/proc-stat.js';

export function isRunning(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/**
 * Host pids of the live processes that belong to a training job (they carry PLATFORM_TRAINING_JOB_ID),
 * optionally only those running `command`. Trainers run in a pid namespace, so a pid a script sees is
 * not the host's; tests find the host pids here instead.
 */
export function jobProcesses(jobId: string, command?: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`PLATFORM_TRAINING_JOB_ID=${jobId}`)) continue;
      if (command && readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== command) continue;
      if (isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
