// The machine config file given with -config: read, validated, and watched for saved changes.
import { watch, type FSWatcher } from 'chokidar';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidConfigError, parseMachineConfigText, type MachineConfig } from '../shared/machine-config.js';
import { ConfigError } from '../../plugins/validation.js';
import type { ConfigOrigin } from './config-edit.js';

export interface LoadedConfig {
  config: MachineConfig;
  /** The JSON as written, for diffs. */
  raw: unknown;
  text: string;
}

export class ConfigFile {
  readonly path: string;
  private watcher?: FSWatcher;

  constructor(path: string) {
    this.path = resolve(path);
  }

  /** Reads and validates the file; throws InvalidConfigError naming every problem. */
  read(): LoadedConfig {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      throw new InvalidConfigError([new ConfigError(this.path, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)]);
    }
    const config = parseMachineConfigText(text, this.path);
    return { config, raw: JSON.parse(text), text };
  }

  origin(): ConfigOrigin {
    return { source: 'file', path: this.path };
  }

  /**
   * Calls `onChange` after each save; editors that save by rename are handled too. Resolves once the
   * watcher is in place: a save before that moment is not seen, so callers re-read once afterwards.
   */
  watch(onChange: () => void): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    // A save is often several writes; coalesce those that land within a few milliseconds.
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(onChange, 25);
    };
    const watcher = watch(this.path, { ignoreInitial: true, atomic: 50 });
    this.watcher = watcher;
    watcher.on('change', changed).on('add', changed);
    return new Promise((resolve) => watcher.once('ready', () => resolve()));
  }

  async close(): Promise<void> {
    await this.watcher?.close();
  }
}
