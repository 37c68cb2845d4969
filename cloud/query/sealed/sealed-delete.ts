// DeleteTabularData in issue 33's scale-out mode: rows of sealed days are in Parquet segments, not in
// PostgreSQL, so deleting them means rewriting the organization's segments without them. For each
// segment holding rows to delete, DuckDB writes the remaining rows to a new Parquet object
// (content-addressed, as the sealer's), and one transaction replaces the manifest row (or removes it
// when nothing remains). The old object is then named by no row and the orphan-blob sweep removes it
// (a query that listed it a moment before still reads its local copy).
import { DuckDBInstance } from '@duckdb/node-api';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '../../store/blob-store.js';
import type { PgStore } from '../../store/pg-store.js';
import type { SqlValue } from '../../store/tabular.js';
import { segmentKey } from './sealer.js';

export interface SealedDeleteScope {
  organizationId: string;
  /** Only rows with this location or machine (robot_id), when the caller's key is scoped to one. */
  locationId?: string;
  robotId?: string;
  /** Only rows captured (time_requested) before this; all when absent. */
  before?: Date;
}

/**
 * Deletes the scope's rows from the organization's sealed segments; returns how many it deleted. The
 * rows still in PostgreSQL are the caller's to delete (DELETE FROM tabular_data ...), in either order.
 */
export async function deleteSealedReadings(store: PgStore & { readonly blobs: BlobStore }, scope: SealedDeleteScope, workDir: string): Promise<number> {
  const segments = await store.query('SELECT day, object_key, content_hash, row_count FROM tabular_segments WHERE organization_id = $1 ORDER BY day', [
    scope.organizationId,
  ]);
  if (segments.length === 0) return 0;
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (scope.locationId !== undefined) {
    where.push('location_id = ?');
    params.push(scope.locationId);
  }
  if (scope.robotId !== undefined) {
    where.push('robot_id = ?');
    params.push(scope.robotId);
  }
  if (scope.before) {
    where.push('time_requested < CAST(? AS TIMESTAMPTZ)');
    params.push(scope.before.toISOString());
  }
  const doomed = where.length > 0 ? where.join(' AND ') : 'true';
  const work = join(workDir, `delete-${randomUUID()}`);
  await mkdir(work, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' });
  const conn = await instance.connect();
  let deleted = 0;
  try {
    for (const s of segments) {
      const content = await store.blobs.get(String(s.object_key));
      if (!content) throw new Error(`sealed readings segment ${String(s.object_key)} is missing from the blob store`);
      const source = join(work, 'source.parquet');
      await writeFile(source, content);
      const counted = await conn.runAndReadAll(`SELECT count(*) FILTER (WHERE ${doomed}) AS gone, count(*) AS n FROM read_parquet('${source}')`, [
        ...(params as string[]),
      ]);
      const [gone, total] = counted.getRows()[0].map(Number);
      if (gone === 0) continue;
      const day = s.day as Date;
      let replacement: { key: string; hash: string; rows: number; bytes: number } | undefined;
      if (gone < total) {
        const target = join(work, 'target.parquet');
        // Same order and types as the sealer wrote: a plain filtered scan keeps the file's row order.
        await conn.run(`COPY (SELECT * FROM read_parquet('${source}') WHERE NOT (${doomed})) TO '${target}' (FORMAT parquet, COMPRESSION zstd)`, [
          ...(params as string[]),
        ]);
        const bytes = await readFile(target);
        const hash = createHash('sha256').update(bytes).digest('hex');
        const key = segmentKey(day, hash);
        await store.blobs.put(key, bytes);
        replacement = { key, hash, rows: total - gone, bytes: bytes.byteLength };
      }
      await store.transact(async (tx) => {
        await tx.execute('DELETE FROM tabular_segments WHERE organization_id = $1 AND day = $2 AND content_hash = $3', [
          scope.organizationId,
          day,
          String(s.content_hash),
        ]);
        if (replacement) {
          await tx.execute('INSERT INTO tabular_segments VALUES ($1, $2, $3, $4, $5, $6, now()) ON CONFLICT (organization_id, day, content_hash) DO NOTHING', [
            scope.organizationId,
            day,
            replacement.key,
            replacement.rows,
            replacement.hash,
            replacement.bytes,
          ]);
        }
        await tx.execute('UPDATE tabular_sealed_days SET row_count = row_count - $2 WHERE day = $1', [day, gone]);
      });
      deleted += gone;
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
    await rm(work, { recursive: true, force: true });
  }
  return deleted;
}
