// Bounds what a trainer writes to its job folder in total. RLIMIT_FSIZE bounds one file, the private
// /tmp is a tmpfs of fixed size, but the job folder lives on the cloud's disk: a script writing many
// large files would fill the disk under the cloud's database. So the folder is measured every few
// seconds, and a trainer past the limit (in bytes or entries) is stopped.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface DiskLimits {
  /** Bytes the job folder may hold (the dataset copy included). */
  maxBytes: number;
  /** Files and folders it may hold; also bounds the cost of one measurement. */
  maxEntries: number;
  /** Time between measurements. Default 2 s. */
  intervalMs?: number;
}

/** Sums the folder's regular file sizes, stopping once past either limit. */
export async function folderUsage(folder: string, limits: DiskLimits): Promise<{ bytes: number; entries: number }> {
  const usage = { bytes: 0, entries: 0 };
  const pending = [folder];
  while (pending.length && usage.bytes <= limits.maxBytes && usage.entries <= limits.maxEntries) {
    const current = pending.pop()!;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      usage.entries += 1;
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) usage.bytes += (await lstat(path).catch(() => undefined))?.size ?? 0;
      if (usage.entries > limits.maxEntries) break;
    }
  }
  return usage;
}

/** Measures `folder` until stopped; calls `onExceeded` once with the reason when past a limit. */
export function watchDisk(folder: string, limits: DiskLimits, onExceeded: (why: string) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    const usage = await folderUsage(folder, limits);
    if (stopped) return;
    if (usage.bytes > limits.maxBytes) return onExceeded(`the trainer wrote more than ${limits.maxBytes} bytes to its job folder (PLATFORM_TRAINING_DISK_MB)`);
    if (usage.entries > limits.maxEntries) {
      return onExceeded(`the trainer made more than ${limits.maxEntries} files and folders in its job folder (PLATFORM_TRAINING_DISK_FILES)`);
    }
    timer = setTimeout(() => void check(), limits.intervalMs ?? 2_000);
  };
  timer = setTimeout(() => void check(), limits.intervalMs ?? 2_000);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
