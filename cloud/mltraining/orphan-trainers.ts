// Finds and ends what a crashed cloud left running for a job: its trainer's process group.
//
// The group leader is not a reliable witness. After a kill -9 of the cloud the leader (the trainer,
// whose command line names the job) often exits on its own (the Python watchdog sees its parent go), while
// the children it started stay in its group with command lines of their own (`sleep`, a data loader).
// So every process carries the job's marks that children inherit: its working folder (work/<job id>) and
// the PLATFORM_TRAINING_JOB_ID variable; the command line is checked too.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readProcStat } from '../../core/serving/proc-stat.js';

/** The variable every trainer (and so every child it starts) gets, naming its job. */
export const jobIdVariable = 'PLATFORM_TRAINING_JOB_ID';

/**
 * Ends (SIGKILL) the process groups of every process that carries the job's marks, never the group of
 * this process or of one of its ancestors: whatever started the cloud (a shell whose working folder is
 * the job's, a supervisor, a CI run) is not the trainer's, even where it carries a mark. `recordedPid`, the
 * trainer's pid saved in the job, also names a group: it is ended when its leader is gone (Linux does
 * not hand out a pid again while a group of that id exists, so the group is the trainer's) or carries
 * the marks. Without /proc only the recorded group can be ended.
 */
export function killOrphans(jobId: string, recordedPid: number | undefined): number[] {
  const groups = new Set<number>();
  const spared = ancestorGroups();
  let entries: string[] | undefined;
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    if (recordedPid) groups.add(recordedPid);
  }
  for (const entry of entries ?? []) {
    if (!carriesJob(entry, jobId)) continue;
    const group = readProcStat(entry)?.group;
    if (group !== undefined) groups.add(group);
  }
  if (recordedPid && entries && (!isAlive(recordedPid) || carriesJob(String(recordedPid), jobId))) groups.add(recordedPid);
  const killed: number[] = [];
  for (const group of groups) {
    if (group <= 1 || spared.has(group)) continue;
    try {
      process.kill(-group, 'SIGKILL');
      killed.push(group);
    } catch {
      // ESRCH: nothing left in that group
    }
  }
  return killed;
}

function carriesJob(entry: string, jobId: string): boolean {
  return (
    read(() => readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(jobId)) ||
    read(() => readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`${jobIdVariable}=${jobId}`)) ||
    read(() => readlinkSync(`/proc/${entry}/cwd`).split('/').includes(jobId))
  );
}

/** Reads one /proc fact; a process that ended meanwhile or is not ours to read carries nothing. */
function read(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

/** A process that exists and has not exited (a zombie has). */
function isAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** The process groups of this process and of every ancestor up to PID 1, from /proc's stat lines. */
function ancestorGroups(): Set<number> {
  const groups = new Set<number>();
  let entry: number | string = 'self';
  for (let hops = 0; hops < 4096; hops++) {
    const stat = readProcStat(entry);
    if (!stat) break;
    groups.add(stat.group);
    if (stat.parent <= 1) break;
    entry = stat.parent;
  }
  return groups;
}
