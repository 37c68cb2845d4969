// The scheduling priority of the thumbnail child (thumbnail-child.ts). Decoding and scaling a large
// image keeps one core busy for up to 10 s; on a 2-core machine, at the cloud's own priority, that core
// is taken from the cloud's main thread as often as not, and another organization's 1-row read waited
// behind the image (bench:isolation huge-thumbnails: p99 9.5x idle). At niceness 10 the kernel gives the
// cloud's threads the CPU first and the child what is left; thumbnails take longer only when the
// machine is busy anyway.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

export const THUMBNAIL_NICENESS = 10;

/**
 * Lowers the priority of every thread of this process to `niceness`. On Linux a niceness belongs to a
 * thread, and the threads Node started before this call (its thread pool, the garbage collector's
 * helpers) keep theirs unless each is set; threads started later inherit it. Raising one's own niceness
 * needs no privilege; where it fails anyway, the process runs at its old priority.
 */
export function lowerOwnPriority(niceness: number): void {
  let threads: number[] = [];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // not Linux: the process as a whole
  }
  for (const id of threads.length ? threads : [0]) {
    try {
      setPriority(id, niceness);
    } catch {
      // a thread that ended meanwhile, or a system that refuses: the old priority
    }
  }
}
