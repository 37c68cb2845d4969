// Every write the agent reports as done survives a power cut: temp file, fsync, rename, fsync the folder.
import { open, rename, mkdir, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';

export async function writeFileDurable(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fh = await open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dirname(path));
}

/** fsyncs a folder so that a rename in it is durable; not possible on Windows, where rename is enough. */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
