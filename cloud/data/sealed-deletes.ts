// DeleteTabularData's share of sealed days on PostgreSQL (issue 33). A sealed day of an organization
// is a Parquet segment in the blob store (cloud/query/sealed/sealer.ts), which never changes: deleting
// rows from it writes a new segment without them (or none, when no row is left) and, in one
// transaction, puts it in the manifest in place of the old one, which the orphan sweep removes later
// (cloud/store/blob-orphans.ts). The transaction checks that the old segment is still listed, so a
// segment that another process rewrote meanwhile is rewritten again from the new one, and readers
// (sealed-readings.ts) see a day either before the delete or after it, never half.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unavailable } from '../../core/serving/status-error.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { sealedSegmentFilesOf, segmentKey } from '../store/sealed-segments.js';
import type { SqlValue, StoreWithBlobs } from '../store/tabular.js';
import { scopeWhere } from './filter.js';
import { segmentReaderOf } from './sealed-readings.js';

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** Rounds of rewriting while other processes keep changing the same segments. */
const MAX_ROUNDS = 5;

/**
 * Deletes the caller's sealed rows captured before `before` (all of them without it); returns how many.
 * Only on PostgreSQL; on DuckDB every row is in tabular_data.
 */
export async function deleteSealedReadings(store: StoreWithBlobs, principal: KeyPrincipal, before: Date | undefined): Promise<number> {
  if (store.dialect !== 'postgres') return 0;
  const scope = scopeWhere(principal);
  const cond = `(${scope.sql}${before ? ' AND time_requested < ?' : ''})`;
  const params: SqlValue[] = [...scope.params, ...(before ? [before] : [])];
  let deleted = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const segments = await store.query(
      'SELECT day, object_key, content_hash, bytes, row_count FROM tabular_segments WHERE organization_id = ? ORDER BY day, content_hash',
      [principal.organizationId],
    );
    if (segments.length === 0) return deleted;
    const files = sealedSegmentFilesOf(store);
    if (!files) throw unavailable('this platform-cloud has sealed readings but no segment cache (the cloud/query extension is missing)');
    const reader = segmentReaderOf(files);
    let changedMeanwhile = false;
    for (const s of segments) {
      const segment = { key: String(s.object_key), hash: String(s.content_hash), bytes: Number(s.bytes) };
      const day = s.day as Date;
      const { paths, release } = await files.pin([segment]);
      const work = await mkdtemp(join(tmpdir(), 'sealed-delete-'));
      try {
        const from = reader.relation(paths);
        const [{ n }] = await reader.query(`SELECT count(*) AS n FROM ${from} WHERE ${cond}`, params);
        const matching = Number(n);
        if (matching === 0) continue;
        const left = Number(s.row_count) - matching;
        let replacement: { key: string; hash: string; bytes: number } | undefined;
        if (left > 0) {
          // The rows that stay, in their order; `IS NOT TRUE` keeps rows whose test is NULL (no location, say).
          const file = join(work, `${randomUUID()}.parquet`);
          await reader.query(`COPY (SELECT * FROM ${from} WHERE ${cond} IS NOT TRUE) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd)`, params);
          const content = await readFile(file);
          const hash = createHash('sha256').update(content).digest('hex');
          const key = segmentKey(day, hash);
          await store.blobs.put(key, content);
          replacement = { key, hash, bytes: content.byteLength };
        }
        const replaced = await store.transact(async (tx) => {
          const gone = await tx.execute('DELETE FROM tabular_segments WHERE organization_id = ? AND day = ? AND content_hash = ?', [
            principal.organizationId,
            day,
            segment.hash,
          ]);
          if (gone !== 1) return false;
          if (replacement) {
            await tx.execute('INSERT INTO tabular_segments VALUES (?, ?, ?, ?, ?, ?, now()) ON CONFLICT (organization_id, day, content_hash) DO NOTHING', [
              principal.organizationId,
              day,
              replacement.key,
              left,
              replacement.hash,
              replacement.bytes,
            ]);
          }
          await tx.execute('UPDATE tabular_sealed_days SET row_count = row_count - ? WHERE day = ?', [matching, day]);
          return true;
        });
        if (replaced) deleted += matching;
        else changedMeanwhile = true;
      } finally {
        release();
        await rm(work, { recursive: true, force: true });
      }
    }
    if (!changedMeanwhile) return deleted;
  }
  throw unavailable('sealed readings kept changing while they were deleted; try again');
}
