// A real small filesystem for full-disk tests: a tmpfs of a given size on a new folder (root only), and a
// filler that takes its free space.
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallFilesystem {
  dir: string;
  unmount(): void;
}

/** Mounts a tmpfs of `size` (e.g. "1m") on a new folder; undefined where that is not allowed (not root). */
export function smallFilesystem(size: string): SmallFilesystem | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'full-disk-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the filesystem holding `path` with that one file until ENOSPC, then frees `free` bytes of it. */
export function fill(path: string, free: number): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let size = 0;
  try {
    for (;;) size += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  ftruncateSync(fd, Math.max(0, size - free));
  closeSync(fd);
}
