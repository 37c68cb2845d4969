// Where the real point clouds live: ../shared/data/pcd beside the repository (the Kinect-class clouds
// that the segmenter, the PCD reader and the obstacles benchmark are checked on), or the folder named
// by PLATFORM_PCD_DIR. It sits in drivers/ so that driver tests may use it (drivers import only their
// own files and plugins/); core's tests and the benchmarks may import drivers/.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest folder above this file with a package.json (from source or dist/). */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

/** The folder of the real PCD files; `file`, when given, is joined to it. */
export function pcdDataPath(file = '', env: NodeJS.ProcessEnv = process.env): string {
  const folder = env.PLATFORM_PCD_DIR ? resolve(env.PLATFORM_PCD_DIR) : join(repositoryRoot(), '..', 'shared', 'data', 'pcd');
  return join(folder, file);
}
