// The machine config file given with -config: read, validated, and watched for saved changes.
//
// Saves usually replace the file by rename (editors, `sed -i`, SaveConfig): a watch on the file itself
// follows the old inode and was lost after two quick saves. So the folder is watched and its events
// filtered on the file's name, and every event, and a poll once a second, compare a hash of the file's
// content with the last one reported: a save is reported once, whatever the watcher did (a folder watch
// that errors is armed again; the poll covers the moments in between and file systems without events).
import { createHash } from 'node:crypto';
import { readFileSync, watch as watchFolder, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { InvalidConfigError, parseMachineConfigText, type MachineConfig } from './machine-config.js';
import { ConfigError } from '../../plugins/validation.js';
import type { ConfigOrigin } from './config-edit.js';

/** How often the file's content is compared without an event: the latest a missed save is seen. */
export const CONFIG_POLL_MS = 1000;
/** A save is often several writes; those within this many ms are one change. */
const SETTLE_MS = 25;

export interface LoadedConfig {
  config: MachineConfig;
  /** The JSON as written, for diffs. */
  raw: unknown;
  text: string;
}

export class ConfigFile {
  readonly path: string;
  private watcher?: FSWatcher;
  private poll?: NodeJS.Timeout;
  private settle?: NodeJS.Timeout;
  private rearm?: NodeJS.Timeout;
  private closed = false;
  /** The hash of the content last reported (or found when the watch started); undefined: unreadable. */
  private seen?: string;

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

  /** The hash of the file's content, or undefined while it cannot be read (between an unlink and a rename). */
  private contentHash(): string | undefined {
    try {
      return createHash('sha256').update(readFileSync(this.path)).digest('hex');
    } catch {
      return undefined;
    }
  }

  /**
   * Calls `onChange` after each save that changed the content, however it was written. Resolves once the
   * watch is in place: a save before that moment is not seen, so callers re-read once afterwards.
   */
  watch(onChange: () => void): Promise<void> {
    this.seen = this.contentHash();
    const compare = () => {
      if (this.closed) return;
      const now = this.contentHash();
      // A file that cannot be read is mid-save (or gone): the rename that follows brings an event.
      if (now === undefined || now === this.seen) return;
      this.seen = now;
      onChange();
    };
    const changed = () => {
      clearTimeout(this.settle);
      this.settle = setTimeout(compare, SETTLE_MS);
    };
    this.armFolderWatch(changed);
    this.poll = setInterval(compare, CONFIG_POLL_MS);
    this.poll.unref();
    return Promise.resolve();
  }

  /** Watches the file's folder (survives renames over the file); armed again after an error. */
  private armFolderWatch(changed: () => void): void {
    if (this.closed) return;
    const name = basename(this.path);
    try {
      const watcher = watchFolder(dirname(this.path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) changed();
      });
      watcher.on('error', () => {
        watcher.close();
        if (this.watcher === watcher) this.watcher = undefined;
        this.rearmLater(changed);
      });
      this.watcher = watcher;
    } catch {
      // The folder is missing for now: the poll goes on, and the watch is tried again.
      this.rearmLater(changed);
    }
  }

  private rearmLater(changed: () => void): void {
    clearTimeout(this.rearm);
    this.rearm = setTimeout(() => this.armFolderWatch(changed), CONFIG_POLL_MS);
    this.rearm.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poll);
    clearTimeout(this.settle);
    clearTimeout(this.rearm);
    this.watcher?.close();
  }
}
