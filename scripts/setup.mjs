#!/usr/bin/env node
// Makes a fresh checkout runnable, so that `npm start` and `npm test` are the only two commands a
// newcomer needs. It installs the npm packages when package-lock.json changed since the last install,
// regenerates the protos and rebuilds dist/. With --system it also installs the Debian packages listed
// in .ci/apt-packages.txt (when running as root and they are missing), which some tests need.
// Only Node built-ins are used here: this runs before node_modules exists.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

function ensureSystemPackages() {
  const list = join(root, '.ci', 'apt-packages.txt');
  if (!existsSync(list)) return;
  const wanted = readFileSync(list, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  const missing = wanted.filter((pkg) => {
    try {
      execFileSync('dpkg', ['-s', pkg], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    console.warn(`setup: these Debian packages are missing and only root can install them: ${missing.join(' ')}`);
    return;
  }
  console.log(`setup: installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
}

function ensureNodeModules() {
  const lock = readFileSync(join(root, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex');
  const stamp = join(root, 'node_modules', '.platform-lock-sha256');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) {
    run('npm', ['run', '--silent', 'gen']);
    run('npm', ['run', '--silent', 'build']);
    return;
  }
  // package-lock.json records every platform's optional packages (`npm run lock`, scripts/lock.mjs), so
  // `npm ci` accepts it on any machine; prepare generates and builds.
  run('npm', ['ci', '--no-audit', '--no-fund']);
  writeFileSync(stamp, digest);
}

if (process.argv.includes('--system')) ensureSystemPackages();
ensureNodeModules();
