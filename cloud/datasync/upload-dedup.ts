// Exactly-once uploads: a client may name each upload with an upload_id (unique per part). The id the
// cloud stores for the upload (the tabular rows' upload_id, or the binary datum's binary_data_id) is
// derived from (part, upload_id), so it is written in the same commit as the data itself: either the
// data and its id are durable together or neither is. A repeated upload id then finds its rows and is
// answered with the same ids, writing nothing; a machine that crashed between the cloud's answer and its
// local delete duplicates nothing when it re-sends.
import { createHash } from 'node:crypto';
import { invalidArgument } from '../../core/serving/status-error.js';
import type { Store } from '../store/store.js';

export const maxUploadIdLength = 128;

/** A UUID-shaped id derived from the part and the client's upload id (other parts' ids never collide). */
export function storedIdFor(partId: string, uploadId: string): string {
  if (uploadId.length > maxUploadIdLength) throw invalidArgument(`metadata.upload_id must be at most ${maxUploadIdLength} characters`);
  const h = createHash('sha256').update(`${partId}\0${uploadId}`).digest('hex');
  // Version nibble 8 (RFC 9562 custom UUID), variant 10xx: the shape of the random ids the cloud hands out.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export type UploadKind = 'tabular' | 'binary';

const existsQuery: Record<UploadKind, string> = {
  tabular: 'SELECT 1 FROM tabular_data WHERE upload_id = ? LIMIT 1',
  binary: 'SELECT 1 FROM binary_data WHERE binary_data_id = ? LIMIT 1',
};

/**
 * Runs `write` for a new stored id, or skips it when the id is already stored. Concurrent uploads of
 * the same id (a client retrying after a timeout while the first attempt still commits) share the first
 * attempt's outcome instead of racing to insert twice.
 */
export class UploadDedup {
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(private readonly store: Store) {}

  /** Resolves true when `write` ran (a new upload), false when the id was already stored. */
  async once(kind: UploadKind, storedId: string, write: () => Promise<unknown>): Promise<boolean> {
    const running = this.inFlight.get(storedId);
    if (running) {
      // The first attempt's failure is not ours: then try again ourselves.
      if ((await running.catch(() => undefined)) !== undefined) return false;
      return this.once(kind, storedId, write);
    }
    const attempt = (async () => {
      const rows = await this.store.query(existsQuery[kind], [storedId]);
      if (rows.length > 0) return false;
      await write();
      return true;
    })();
    this.inFlight.set(storedId, attempt);
    try {
      return await attempt;
    } finally {
      this.inFlight.delete(storedId);
    }
  }
}
