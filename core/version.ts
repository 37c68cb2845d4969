// The platform's semantic version: the package.json version, found from source (core/) or dist/core/.
import { existsSync, readFileSync } from 'node:fs';

export function platformVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    const url = new URL(relative, import.meta.url);
    if (!existsSync(url)) continue;
    const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'platform' && pkg.version) return pkg.version;
  }
  throw new Error('cannot find the platform package.json');
}
