// Where module folders are looked for, and what is found there.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { MANIFEST_FILE, readManifest, type ModulePackage } from './manifest.js';

export interface PluginsFolderSource {
  /** $PLATFORM_PLUGINS_DIR. */
  env?: string;
  /** The config's module_dir; a relative path is relative to the config file's folder. */
  moduleDir?: string;
  configPath?: string;
  home?: string;
}

/** $PLATFORM_PLUGINS_DIR, else the config's module_dir, else ~/.platform/plugins. */
export function pluginsFolder(source: PluginsFolderSource): { path: string; from: 'PLATFORM_PLUGINS_DIR' | 'module_dir' | 'default' } {
  if (source.env) return { path: resolve(source.env), from: 'PLATFORM_PLUGINS_DIR' };
  if (source.moduleDir) return { path: resolve(source.configPath ? dirname(source.configPath) : process.cwd(), source.moduleDir), from: 'module_dir' };
  return { path: join(source.home ?? homedir(), '.platform', 'plugins'), from: 'default' };
}

export type FoundFolder = { dir: string; package: ModulePackage } | { dir: string; error: Error };

/** Every sub-folder holding a module.json, read and validated; a broken one carries its error. */
export function scanPluginsFolder(folder: string): FoundFolder[] {
  if (!existsSync(folder)) return [];
  let entries: string[];
  try {
    entries = readdirSync(folder).sort();
  } catch (err) {
    throw new Error(`cannot read the plugins folder ${folder}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const found: FoundFolder[] = [];
  for (const entry of entries) {
    if (entry.startsWith('.')) continue;
    const dir = join(folder, entry);
    try {
      if (!statSync(dir).isDirectory() || !existsSync(join(dir, MANIFEST_FILE))) continue;
      found.push({ dir, package: readManifest(dir) });
    } catch (err) {
      found.push({ dir, error: err as Error });
    }
  }
  return found;
}
