// TypeScript modules: their .ts sources are transpiled (types stripped, file by file, with esbuild) into
// a cache folder that mirrors the module folder, so relative imports and `new URL('./driver.js',
// import.meta.url)` keep working. JavaScript modules are used in place.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { ModulePackage } from './manifest.js';

const TYPESCRIPT = /\.ts$/;

function walk(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) walk(full, found);
    else found.push(full);
  }
  return found;
}

export interface RunnableModule {
  /** The JavaScript entrypoint to load. */
  entrypoint: string;
  /** The folder the loaded code lives in: the module's own, or its transpiled copy. */
  root: string;
}

/** The JavaScript to load: the module's own, or a transpiled copy of its TypeScript. */
export async function runnableModule(pkg: ModulePackage, cacheRoot = join(tmpdir(), 'platform-modules')): Promise<RunnableModule> {
  if (!TYPESCRIPT.test(pkg.entrypoint)) return { entrypoint: pkg.entrypoint, root: pkg.dir };
  const files = walk(pkg.dir);
  const stamp = createHash('sha256');
  for (const file of files) stamp.update(`${file}:${statSync(file).mtimeMs}:${statSync(file).size}\n`);
  const out = join(cacheRoot, `${pkg.manifest.module_id.replace(':', '_')}-${pkg.manifest.version}-${stamp.digest('hex').slice(0, 16)}`);
  const target = join(out, relative(pkg.dir, pkg.entrypoint).replace(TYPESCRIPT, '.js'));
  if (existsSync(target)) return { entrypoint: target, root: out };
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    throw new Error('a TypeScript entrypoint needs esbuild (npm install esbuild), or ship the module as JavaScript');
  }
  const sources = files.filter((f) => TYPESCRIPT.test(f) && !f.endsWith('.d.ts'));
  for (const file of files.filter((f) => !sources.includes(f))) {
    mkdirSync(dirname(join(out, relative(pkg.dir, file))), { recursive: true });
    cpSync(file, join(out, relative(pkg.dir, file)));
  }
  await esbuild.build({
    entryPoints: sources,
    outdir: out,
    outbase: pkg.dir,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  // The transpiled files are ESM whatever the module's own package.json says.
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  return { entrypoint: target, root: out };
}
