// Sync: uploads closed capture files (and the files of additional_sync_paths) with the part's credentials
// and deletes each only after the cloud acknowledged it. Capture files carry an upload id the cloud
// stores with the data, so a file re-sent after a crash between the acknowledgement and the delete is not
// stored twice. Failures back off exponentially (0.5 s doubling to 5 s), so a cloud that comes back is
// found within seconds; the file stays and the error is reported.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { DataType } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { CLOSED_SUFFIX, OPEN_SUFFIX, readCaptureFile } from './capture-file.js';
import type { PartCloud } from './part-cloud.js';
import { uploadRequests } from './upload-body.js';

export const INITIAL_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 5000;
/** A file in an additional sync path must be this old (unmodified) before it is uploaded: it may still be written. */
const SETTLE_MS = 1000;

export interface PendingFile {
  path: string;
  bytes: number;
  /** A capture file, or a plain file from additional_sync_paths. */
  kind: 'capture' | 'file';
}

export interface SyncStatus {
  files_waiting: number;
  bytes_waiting: number;
  last_successful_sync: string | null;
  last_error: string | null;
  uploaded_files: number;
  uploaded_items: number;
  /** Closed capture files dropped, oldest first, to keep the backlog under maximum_capture_dir_bytes; their records and bytes. */
  dropped_files: number;
  dropped_records: number;
  dropped_bytes: number;
}

/** The drops of one enforcement of the bound, for the log. */
export interface DropReport {
  files: number;
  records: number;
  bytes: number;
}

/** Every closed capture file under `dir`, oldest first within each folder. */
export function closedCaptureFiles(dir: string): PendingFile[] {
  const found: PendingFile[] = [];
  const walk = (folder: string) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(CLOSED_SUFFIX)) found.push({ path: full, bytes: statSafe(full), kind: 'capture' });
    }
  };
  walk(dir);
  return found;
}

function statSafe(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function additionalFiles(folders: string[]): PendingFile[] {
  const found: PendingFile[] = [];
  const now = Date.now();
  const walk = (folder: string) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(folder, entry.name);
      if (entry.name.startsWith('.') || entry.name.endsWith(OPEN_SUFFIX)) continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const stat = statSync(full, { throwIfNoEntry: false });
        if (stat && now - stat.mtimeMs >= SETTLE_MS) found.push({ path: full, bytes: stat.size, kind: 'file' });
      }
    }
  };
  folders.forEach(walk);
  return found;
}

export interface SyncerOptions {
  captureDir: string;
  additionalSyncPaths: string[];
  tags: string[];
  threads: number;
  cloud?: PartCloud;
  /** Why there is no cloud although the config has a cloud section (the link refused to send the secret). */
  noCloud?: string;
  log: { info(m: string, f?: Record<string, unknown>): void; warn(m: string, f?: Record<string, unknown>): void };
}

export class Syncer {
  private backoff = 0;
  private retryAt = 0;
  private running?: Promise<void>;
  readonly status: SyncStatus = {
    files_waiting: 0,
    bytes_waiting: 0,
    last_successful_sync: null,
    last_error: null,
    uploaded_files: 0,
    uploaded_items: 0,
    dropped_files: 0,
    dropped_records: 0,
    dropped_bytes: 0,
  };
  /** Files being uploaded now: never dropped, or they could reach the cloud and be counted as dropped too. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly options: SyncerOptions) {
    if (options.noCloud) this.status.last_error = options.noCloud;
  }

  /** The files waiting now (also refreshes the status' backlog figures). */
  pending(): PendingFile[] {
    const files = [...closedCaptureFiles(this.options.captureDir), ...additionalFiles(this.options.additionalSyncPaths)];
    this.status.files_waiting = files.length;
    this.status.bytes_waiting = files.reduce((sum, f) => sum + f.bytes, 0);
    return files;
  }

  /** The wait after the last failure (0 after a success). */
  get backoffMs(): number {
    return this.backoff;
  }

  /** When the next attempt may run after a failure (ms since the epoch); 0 when not backing off. */
  get nextRetryAt(): number {
    return this.retryAt;
  }

  /** One pass over the backlog; concurrent calls share the pass in progress. */
  syncOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Resolves when the pass in progress (if any) ends; starts none. */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async pass(): Promise<void> {
    const cloud = this.options.cloud;
    const files = this.pending();
    if (!cloud) {
      if (files.length || this.options.noCloud)
        this.status.last_error = this.options.noCloud ?? 'no cloud configured: the config has no cloud section with id, secret and app_address';
      return;
    }
    if (files.length === 0 || Date.now() < this.retryAt) return;
    const queue = [...files];
    let failed = false;
    const worker = async () => {
      while (!failed && queue.length > 0) {
        const file = queue.shift()!;
        // Dropped to keep the backlog bounded since this pass listed it.
        if (!existsSync(file.path)) continue;
        this.inFlight.add(file.path);
        try {
          // Read the count after the await: `x += await` would add to a value read before other threads' uploads.
          const items = await this.upload(cloud, file);
          this.status.uploaded_items += items;
          unlinkSync(file.path);
          this.status.uploaded_files++;
          this.status.last_successful_sync = new Date().toISOString();
          this.backoff = 0;
          this.retryAt = 0;
        } catch (err) {
          failed = true;
          const message = `sync of ${file.path} failed: ${(err as Error).message}`;
          if (this.status.last_error !== message) this.options.log.warn(message, { file: file.path });
          this.status.last_error = message;
          this.backoff = this.backoff ? Math.min(this.backoff * 2, MAX_BACKOFF_MS) : INITIAL_BACKOFF_MS;
          this.retryAt = Date.now() + this.backoff;
        } finally {
          this.inFlight.delete(file.path);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.threads, files.length) }, worker));
    this.pending();
  }

  /**
   * Keeps the closed capture files within `maxBytes`: the oldest (by name, which starts with the UTC time
   * of creation) are deleted until the rest fit, except files being uploaded. Each dropped file's records
   * are counted first, so that what was captured is exactly what reached the cloud plus what was dropped.
   */
  enforceBound(maxBytes: number): DropReport | undefined {
    const files = closedCaptureFiles(this.options.captureDir).sort((a, b) => basename(a.path).localeCompare(basename(b.path)));
    let total = files.reduce((sum, f) => sum + f.bytes, 0);
    if (total <= maxBytes) return undefined;
    const report: DropReport = { files: 0, records: 0, bytes: 0 };
    for (const file of files) {
      if (total <= maxBytes) break;
      if (this.inFlight.has(file.path)) continue;
      let records: number;
      try {
        records = readCaptureFile(file.path).records.length;
        unlinkSync(file.path);
      } catch {
        continue; // gone meanwhile (uploaded), or unreadable: not counted as dropped
      }
      total -= file.bytes;
      report.files++;
      report.records += records;
      report.bytes += file.bytes;
    }
    this.status.dropped_files += report.files;
    this.status.dropped_records += report.records;
    this.status.dropped_bytes += report.bytes;
    return report.files ? report : undefined;
  }

  /** Uploads one file; returns the items (points, data or files) sent. Throws when the cloud refused any. */
  private async upload(cloud: PartCloud, file: PendingFile): Promise<number> {
    if (file.kind === 'file') {
      const ext = extname(file.path);
      const stat = statSync(file.path);
      // The same file (path, size, modification time) is one upload: a re-send after a crash is not stored twice.
      const uploadId = createHash('sha256').update(`${file.path}\0${stat.size}\0${stat.mtimeMs}`).digest('hex');
      await cloud.fileUpload(
        {
          partId: cloud.partId,
          componentType: '',
          componentName: '',
          methodName: '',
          type: DataType.DATA_TYPE_FILE,
          fileName: basename(file.path),
          methodParameters: undefined,
          fileExtension: ext,
          tags: this.options.tags,
          datasetIds: [],
          mimeType: '',
          uploadId,
        },
        readFileSync(file.path),
      );
      return 1;
    }
    const { header, records, torn } = readCaptureFile(file.path);
    if (torn) this.options.log.warn('a closed capture file has a corrupt tail; its whole records are synced', { file: file.path });
    let items = 0;
    for (const request of uploadRequests(header, records, cloud.partId, this.options.tags)) {
      await cloud.dataCaptureUpload(request.body);
      items += request.items;
    }
    return items;
  }
}
