// Exactly-once uploads: a client may name each upload with an upload_id (unique per part). The id the
// cloud stores for the upload (the tabular rows' upload_id, or the binary datum's binary_data_id) is
// derived from (part, upload_id), so it is written in the same commit as the data itself: either the
// data and its id are durable together or neither is. A repeated upload id then finds its rows and is
// answered with the same ids, writing nothing; a machine that crashed between the cloud's answer and its
// local delete duplicates nothing when it re-sends.
//
// The database decides, so that this holds across processes writing one database (issue 33): the
// write itself finds an id already committed and writes nothing (binary, ingest.ts: on PostgreSQL an
// INSERT ... ON CONFLICT on the primary key binary_data_id, on DuckDB the check and the insert in one
// transaction; tabular on PostgreSQL: the upload id claimed in tabular_upload_ids by the statement that
// inserts the points, pg-tabular-ingest.ts). On DuckDB, which one process owns, the
// tabular check is a query before the write, made safe by running one attempt per id at a time here.
import { createHash } from 'node:crypto';
import { invalidArgument } from '../../core/serving/status-error.js';
import type { TabularStore } from '../store/tabular.js';

export const maxUploadIdLength = 128;

/** A UUID-shaped id derived from the part and the client's upload id (other parts' ids never collide). */
export function storedIdFor(partId: string, uploadId: string): string {
  if (uploadId.length > maxUploadIdLength) throw invalidArgument(`metadata.upload_id must be at most ${maxUploadIdLength} characters`);
  const h = createHash('sha256').update(`${partId}\0${uploadId}`).digest('hex');
  // Version nibble 8 (RFC 9562 custom UUID), variant 10xx: the shape of the random ids the cloud hands out.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export type UploadKind = 'tabular' | 'binary';

/** Whether the id is committed already: a cheap answer for a re-send before any content is written. */
const existsQuery = (kind: UploadKind) =>
  kind === 'binary' ? 'SELECT 1 FROM binary_data WHERE binary_data_id = ? LIMIT 1' : 'SELECT 1 FROM tabular_data WHERE upload_id = ? LIMIT 1';

/**
 * Runs `write` for a new stored id, or skips it when the id is already stored. `write` resolves true
 * when it committed the upload, false when it found the id committed meanwhile (by another process,
 * or another attempt) and wrote nothing. Concurrent uploads of the same id in this process (a client
 * retrying after a timeout while the first attempt still commits) share the first attempt's outcome
 * instead of writing their content twice.
 */
export class UploadDedup {
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(private readonly store: TabularStore) {}

  /** Resolves true when this call stored the upload, false when the id was already stored. */
  async once(kind: UploadKind, storedId: string, write: () => Promise<boolean>): Promise<boolean> {
    const running = this.inFlight.get(storedId);
    if (running) {
      // The first attempt's failure is not ours: then try again ourselves.
      if ((await running.catch(() => undefined)) !== undefined) return false;
      return this.once(kind, storedId, write);
    }
    const attempt = (async () => {
      // Tabular on PostgreSQL: the insert's own claim of the id is the check (pg-tabular-ingest.ts), so
      // a query first would only add a round trip to every upload to spare the rare re-send its write.
      if (kind === 'binary' || this.store.dialect !== 'postgres') {
        const rows = await this.store.query(existsQuery(kind), [storedId]);
        if (rows.length > 0) return false;
      }
      return write();
    })();
    this.inFlight.set(storedId, attempt);
    try {
      return await attempt;
    } finally {
      this.inFlight.delete(storedId);
    }
  }
}
