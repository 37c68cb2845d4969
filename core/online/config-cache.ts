// The last config fetched from the cloud, kept on disk so that a runtime that starts while the cloud
// is unreachable serves it. Written durably (temp file, fsync, rename) before it is applied.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writeFileDurable } from '../serving/durable-file.js';

/** Folder of the online runtime's state: PLATFORM_ONLINE_DIR, or ~/.platform/online. */
export function onlineDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PLATFORM_ONLINE_DIR || join(homedir(), '.platform', 'online');
}

export interface CachedConfig {
  partId: string;
  revision: number;
  /** When the revision was saved in the cloud (ISO). */
  time?: string;
  config: Record<string, unknown>;
  /** The part's name, as the cloud gave it with the revision (the mDNS instance name). */
  partName?: string;
}

export class ConfigCache {
  readonly path: string;

  constructor(dir: string, partId: string) {
    this.path = join(dir, `config-${encodeURIComponent(partId)}.json`);
  }

  /** The cached config, or undefined when there is none (or it cannot be read: then it is refetched). */
  read(): CachedConfig | undefined {
    try {
      const cached = JSON.parse(readFileSync(this.path, 'utf8')) as CachedConfig;
      return typeof cached.revision === 'number' && cached.config && typeof cached.config === 'object' ? cached : undefined;
    } catch {
      return undefined;
    }
  }

  write(cached: CachedConfig): Promise<void> {
    // The config may hold secrets of drivers: readable by this user only.
    return writeFileDurable(this.path, `${JSON.stringify(cached)}\n`, 0o600);
  }
}
