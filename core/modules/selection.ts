// Which module folder each config `modules` entry selects: the folder whose module.json has the entry's
// module_id and a version equal to (or, for a range, satisfying) the pinned version. A missing module
// or another version is a problem of that module alone, worded for the resources that use it.
import semver from 'semver';
import type { ModuleEntry } from '../config/machine-config.js';
import type { ModulePackage } from '../../plugins/host/manifest.js';
import type { FoundFolder } from '../../plugins/host/plugins-folder.js';

export interface ModuleSelection {
  moduleId: string;
  entry: ModuleEntry;
  /** `modules[i]` in the config. */
  path: string;
  package?: ModulePackage;
  /** Why no folder is selected. */
  problem?: string;
}

function matches(pinned: string, version: string): boolean {
  return semver.valid(pinned) ? semver.eq(pinned, version) : semver.satisfies(version, pinned);
}

export function selectModules(entries: readonly ModuleEntry[], found: readonly FoundFolder[], folder: string): ModuleSelection[] {
  const packages = found.flatMap((f) => ('package' in f ? [f.package] : []));
  const broken = found.filter((f): f is { dir: string; error: Error } => 'error' in f);
  const seen = new Set<string>();
  const selections: ModuleSelection[] = [];
  entries.forEach((entry, i) => {
    const path = `modules[${i}]`;
    if (seen.has(entry.module_id)) return; // the config schema rejects duplicates; the first entry wins
    seen.add(entry.module_id);
    const candidates = packages.filter((p) => p.manifest.module_id === entry.module_id);
    if (candidates.length === 0) {
      const others = broken.length ? `; ${broken.length} folder(s) there have an invalid module.json, e.g. ${broken[0].error.message}` : '';
      selections.push({
        moduleId: entry.module_id,
        entry,
        path,
        problem: `module ${entry.module_id} is not installed in the plugins folder ${folder}${others}`,
      });
      return;
    }
    const fitting = candidates
      .filter((p) => matches(entry.version, p.manifest.version))
      .sort((a, b) => semver.rcompare(a.manifest.version, b.manifest.version));
    if (fitting.length === 0) {
      const have = candidates.map((p) => `${p.manifest.version} (${p.dir})`).join(', ');
      selections.push({
        moduleId: entry.module_id,
        entry,
        path,
        problem: `module ${entry.module_id} version ${entry.version} is required by ${path}.version, but the plugins folder has ${have}`,
      });
      return;
    }
    selections.push({ moduleId: entry.module_id, entry, path, package: fitting[0] });
  });
  return selections;
}
