// Writes that are reported as done survive a crash or power cut: temp file, fsync, rename, fsync of the
// folder. Shared by the agent (installed binaries, credentials, units) and the cloud (jobs, artefacts).
import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeFileDurable(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const folder = dirname(path);
  await mkdir(folder, { recursive: true });
  // A unique temp name: two writers of the same file never share a temp file.
  const temp = join(folder, `.${basename(path)}.${randomUUID()}.tmp`);
  const file = await open(temp, 'w', mode);
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDir(folder);
}

/** fsyncs a folder so that a rename in it is durable; not possible on Windows, where rename is enough. */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
