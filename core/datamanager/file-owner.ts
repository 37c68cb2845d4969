// Who writes a capture file: the owner is encoded in the file's name, `<time>-<sequence>-<random>-p<pid>s<start>`,
// where <start> is the process' start time (field 22 of /proc/<pid>/stat, in clock ticks since boot; `x` where
// there is no /proc). At start, recovery closes a `.prog` file only when its owner is gone.
//
// Why per-file owners rather than one lock on the whole capture_dir: two runtimes on one capture_dir (npm start
// and platform-micro-server, both into ~/.platform/capture) can then both capture, and the files a kill -9 left
// are still recovered by the next start even while another runtime runs there. A lock would need a stale-lock
// takeover that two starting runtimes could race; a name needs no takeover, it is written once with the file.
//
// Why the start time: pids are reused (pid_max may be 32768), so a live pid alone could be another process that
// now has a dead runtime's pid, and its files would stay open forever. A pid whose start time differs from the
// one in the name is a new process: the owner is gone. Without /proc (not Linux) only the pid is checked.
import { readProcStat } from '../serving/proc-stat.js';

/** Field 22 (starttime) of /proc/<pid>/stat, or undefined where it cannot be read (no such process, no /proc). */
export function processStartTime(pid: number): string | undefined {
  return readProcStat(pid)?.startTime;
}

let ownTag: string | undefined;

/** This process' owner tag, appended to the names of the capture files it creates. */
export function ownerTag(): string {
  ownTag ??= `p${process.pid}s${processStartTime(process.pid) ?? 'x'}`;
  return ownTag;
}

const TAG = /-p(\d+)s(\d+|x)$/;

/** Whether a live process other than this one owns the capture file `base` (its path without the suffix). */
export function ownedByOtherLiveProcess(base: string): { pid: number } | undefined {
  const match = TAG.exec(base);
  // Files of runtimes from before owner tags: recovered as before.
  if (!match) return undefined;
  const pid = Number(match[1]);
  // This process: the data manager that wrote it has stopped or crashed (a process runs one data manager
  // per capture_dir, rebuilt only after the old one ended), or the tag is a dead process' with our pid.
  if (pid === process.pid) return undefined;
  if (!pidExists(pid)) return undefined;
  const start = match[2];
  const now = processStartTime(pid);
  // A different start time: the pid was reused by another process. Without /proc: the pid check only.
  if (start !== 'x' && now !== undefined && now !== start) return undefined;
  return { pid };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
