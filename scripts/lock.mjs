#!/usr/bin/env node
// `npm run lock`: regenerates package-lock.json from package.json so that `npm ci` accepts it on any
// machine. npm leaves other platforms' optional packages (buf's, DuckDB's, esbuild's prebuilt binaries
// for macOS, Windows and arm) out of a lock that it updates beside an existing node_modules
// (npm/cli#4828), and `npm ci` elsewhere then refuses the lock as out of sync. Resolving in a temporary
// folder without node_modules records every platform's entries. The folder gets package.json and the
// current lock, so versions that the lock records stay; `npm run lock -- --fresh` resolves all anew.
//
// A registry may also lack some platforms' packages altogether (the one this project's machines reach
// answers 404 for DuckDB's and buf's macOS and Windows builds). npm then leaves them out of the lock
// silently, yet `npm ci` still refuses a lock that lacks an entry for any optional dependency. So every
// optional dependency that the lock names but does not record gets an entry from its name: version, os,
// cpu and libc (`@duckdb/node-bindings-darwin-arm64` is darwin/arm64). npm ci skips it on other
// platforms, as it skips any optional package built for another platform, and never fetches it.
// Only Node built-ins are used, so this runs without node_modules.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const OS = { darwin: 'darwin', linux: 'linux', win32: 'win32', windows: 'win32', freebsd: 'freebsd', android: 'android' };
const CPU = { x64: 'x64', amd64: 'x64', arm64: 'arm64', aarch64: 'arm64', armv7: 'arm', arm: 'arm', ia32: 'ia32', x86: 'ia32', ppc64: 'ppc64', s390x: 's390x' };

/** The platform fields of a package named after its platform, e.g. `foo-linux-arm64-musl`. */
export function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.map((part) => OS[part]).find(Boolean);
  const cpu = parts.map((part) => CPU[part]).find(Boolean);
  if (!os || !cpu) return undefined;
  const fields = { cpu: [cpu], os: [os] };
  if (os === 'linux') fields.libc = [parts.includes('musl') ? 'musl' : 'glibc'];
  return fields;
}

/** Adds an entry for each optional dependency the lock names but lacks; returns their names. */
function recordUnfetchedPlatforms(lock) {
  const added = [];
  for (const entry of Object.values(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const key = `node_modules/${name}`;
      if (lock.packages[key]) continue;
      const platform = platformOf(name);
      if (!platform) throw new Error(`lock: ${name}@${version} is missing from the lock and its name names no platform; install it by hand`);
      lock.packages[key] = { version, ...platform, optional: true };
      added.push(name);
    }
  }
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  return added;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'platform-lock-'));
try {
  copyFileSync(join(root, 'package.json'), join(work, 'package.json'));
  if (existsSync(join(root, '.npmrc'))) copyFileSync(join(root, '.npmrc'), join(work, '.npmrc'));
  // The current lock keeps every version it records; --fresh resolves everything anew.
  if (!process.argv.includes('--fresh') && existsSync(join(root, 'package-lock.json')))
    copyFileSync(join(root, 'package-lock.json'), join(work, 'package-lock.json'));
  execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: work, stdio: 'inherit' });
  const lock = JSON.parse(readFileSync(join(work, 'package-lock.json'), 'utf8'));
  const added = recordUnfetchedPlatforms(lock);
  writeFileSync(join(root, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  if (added.length) console.log(`lock: recorded from their names (not on this registry): ${added.join(', ')}`);
  console.log('lock: package-lock.json regenerated; check it with `npm ci` in a fresh clone');
} finally {
  rmSync(work, { recursive: true, force: true });
}
