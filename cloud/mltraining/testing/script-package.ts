// Builds a training-script package (tar.gz) from a map of file name to content, for tests.
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { c as createTar } from 'tar';

export async function scriptPackage(files: Record<string, string | { content: string; mode: number }>): Promise<Buffer> {
  const folder = await mkdtemp(join(tmpdir(), 'script-package-'));
  try {
    const src = join(folder, 'src');
    for (const [name, file] of Object.entries(files)) {
      await mkdir(dirname(join(src, name)), { recursive: true });
      const { content, mode } = typeof file === 'string' ? { content: file, mode: 0o644 } : file;
      await writeFile(join(src, name), content, { mode });
    }
    const archive = join(folder, 'package.tar.gz');
    await createTar({ gzip: true, cwd: src, file: archive, portable: true }, Object.keys(files));
    return await readFile(archive);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
