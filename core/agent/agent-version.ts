// The agent's own version: the `version` of the package it was built from.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findVersion(): string {
  // Sources live at core/agent/, the build at dist/core/agent/: walk up to the package.json.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
      if (pkg.version) return pkg.version;
    } catch {
      // not here; go up
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

export const AGENT_VERSION = findVersion();
