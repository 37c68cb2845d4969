// Sealing closed days of readings (issue 33's scale-out mode). tabular_data on PostgreSQL has one
// partition per UTC day of time_synced, the cloud's clock at arrival (cloud/store/pg-readings.ts), so a
// day that has ended receives no more rows. The sealer writes such a day as one Parquet object per
// organization into the blob store (content-addressed: the key holds the SHA-256 of the bytes), lists
// them in tabular_segments, marks the day in tabular_sealed_days, and drops the day's partition, the
// last three in one transaction: the rows are either in PostgreSQL or listed in the manifest, never in
// neither, and a sealer that dies midway leaves at most objects that no manifest row names (the orphan
// sweep removes them) and the day to be sealed again by the next pass.
//
// The Parquet bytes are DuckDB's own (COPY ... TO parquet) from the embedded schema's table
// (readings-rows.ts), so a query node reads the same columns and types as the embedded engine. Days are
// sealed oldest first: the tail a query reads from PostgreSQL is then every row at or after the day
// after the newest sealed one (scale-out-readings.ts). One process at a time runs it (startSealer, a
// LeaderElection); two at once would still be safe, since the commit checks the partition is unchanged.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { openBlobWriter, type BlobStore } from '../../store/blob-store.js';
import { dayOf, ensureReadingsPartition } from '../../store/pg-readings.js';
import type { PgStore } from '../../store/pg-store.js';
import { segmentKey } from '../../store/sealed-segments.js';
import { exportReadingsAsJson, readingsFromJson } from './readings-rows.js';

const DAY_MS = 86_400_000;

export interface SealerOptions {
  /** Where the day is staged and its Parquet files written before they go to the blob store. */
  workDir: string;
  /** A day is closed this long after its end (uploads stamped just before midnight may still be committing). Default 1 h. */
  graceMs?: number;
  now?: () => Date;
  /** DuckDB memory for staging a day (spills to workDir beyond it). Default 256 MB. */
  memoryMb?: number;
}

export interface SealedDay {
  day: Date;
  rows: number;
  segments: { organizationId: string; key: string; rows: number; bytes: number }[];
}

const partitionDay = (name: string): Date | undefined => {
  const m = /^tabular_data_(\d{4})(\d{2})(\d{2})$/.exec(name);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
};

export class ReadingsSealer {
  private readonly graceMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly store: PgStore & { readonly blobs: BlobStore },
    private readonly options: SealerOptions,
  ) {
    this.graceMs = options.graceMs ?? 3600_000;
    this.now = options.now ?? (() => new Date());
  }

  /** The first day that is not closed yet: days before it may be sealed. */
  private cutoff(): Date {
    return dayOf(new Date(this.now().getTime() - this.graceMs)).start;
  }

  /** Seals every closed day that still has a partition, oldest first; returns what it sealed. */
  async sealClosedDays(): Promise<SealedDay[]> {
    const cutoff = this.cutoff();
    // Rows of a closed day that landed in the default partition go to their day's partition first.
    const strays = await this.store.query(
      `SELECT DISTINCT CAST(floor(extract(epoch FROM time_synced) / 86400) AS bigint) AS d FROM tabular_data_default WHERE time_synced < $1`,
      [cutoff],
    );
    for (const { d } of strays) await ensureReadingsPartition(this.store, new Date(Number(d) * DAY_MS));
    const parts = await this.store.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       WHERE p.relname = 'tabular_data'`,
    );
    const days = parts
      .map((r) => ({ name: String(r.name), day: partitionDay(String(r.name)) }))
      .filter((p): p is { name: string; day: Date } => p.day !== undefined && p.day < cutoff)
      .sort((a, b) => a.day.getTime() - b.day.getTime());
    const sealed: SealedDay[] = [];
    for (const { name, day } of days) {
      const done = await this.sealPartition(name, day);
      // A day left unsealed stops the pass: sealing a later one would hide it from queries, which read
      // from PostgreSQL only the days after the newest sealed one.
      if (!done) break;
      sealed.push(done);
    }
    return sealed;
  }

  /**
   * Seals one day's partition. Returns undefined when the partition changed while it was written (it is
   * left as it was, for the next pass).
   */
  async sealPartition(partition: string, day: Date): Promise<SealedDay | undefined> {
    const work = join(this.options.workDir, `seal-${randomUUID()}`);
    await mkdir(work, { recursive: true });
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: `${this.options.memoryMb ?? 256}MB`,
      threads: '2',
      temp_directory: join(work, 'spill'),
    });
    const conn = await instance.connect();
    try {
      // Ordered by organization, then seq: one file per organization, its rows in upload order (the
      // embedded table's natural order), which the Parquet object keeps.
      const files = await this.store.transactAt('READ COMMITTED', (tx) =>
        exportReadingsAsJson(tx, `FROM ${partition} ORDER BY organization_id, seq`, [], work),
      );
      const staged = files.reduce((n, f) => n + f.rows, 0);
      const segments = await this.writeSegments(conn, files, work, day);
      const committed = await this.store.transactAt('READ COMMITTED', async (tx) => {
        // No insert into the partition from here to the drop: then its rows are exactly the staged ones.
        await tx.execute(`LOCK TABLE ${partition} IN ACCESS EXCLUSIVE MODE`);
        const [{ n }] = await tx.query(`SELECT count(*) AS n FROM ${partition}`);
        if (Number(n) !== staged) return false;
        for (const s of segments) {
          await tx.execute(`INSERT INTO tabular_segments VALUES ($1, $2, $3, $4, $5, $6, now()) ON CONFLICT (organization_id, day, content_hash) DO NOTHING`, [
            s.organizationId,
            day,
            s.key,
            s.rows,
            s.hash,
            s.bytes,
          ]);
        }
        // A day sealed before (rows that arrived after it was sealed) counts its rows once more.
        await tx.execute(
          `INSERT INTO tabular_sealed_days VALUES ($1, $2, now())
           ON CONFLICT (day) DO UPDATE SET row_count = tabular_sealed_days.row_count + excluded.row_count, time_sealed = now()`,
          [day, staged],
        );
        await tx.execute(`ALTER TABLE tabular_data DETACH PARTITION ${partition}`);
        await tx.execute(`DROP TABLE ${partition}`);
        return true;
      });
      if (!committed) return undefined;
      return { day, rows: staged, segments: segments.map(({ organizationId, key, rows, bytes }) => ({ organizationId, key, rows, bytes })) };
    } finally {
      conn.closeSync();
      instance.closeSync();
      await rm(work, { recursive: true, force: true });
    }
  }

  /** One Parquet object per organization of the staged day, put into the blob store. */
  private async writeSegments(conn: DuckDBConnection, files: { organizationId: string | null; file: string; rows: number }[], work: string, day: Date) {
    const segments: { organizationId: string; key: string; rows: number; hash: string; bytes: number }[] = [];
    for (const [i, { organizationId, file, rows }] of files.entries()) {
      const parquet = join(work, `segment-${i}.parquet`);
      await conn.run(`COPY (${readingsFromJson(file)}) TO '${parquet}' (FORMAT parquet, COMPRESSION zstd)`);
      await rm(file, { force: true });
      const { hash, bytes } = await this.putFile(parquet, day);
      // Rows without an organization belong to no query; they are kept, under the empty name.
      segments.push({ organizationId: organizationId ?? '', key: segmentKey(day, hash), rows, hash, bytes });
      await rm(parquet, { force: true });
    }
    return segments;
  }

  private async putFile(file: string, day: Date): Promise<{ hash: string; bytes: number }> {
    const hasher = createHash('sha256');
    for await (const chunk of createReadStream(file)) hasher.update(chunk as Buffer);
    const hash = hasher.digest('hex');
    const { size } = await stat(file);
    const writer = await openBlobWriter(this.store.blobs);
    try {
      for await (const chunk of createReadStream(file, { highWaterMark: 8 * 2 ** 20 })) await writer.write(chunk as Buffer);
      await writer.commit(segmentKey(day, hash));
    } catch (err) {
      await writer.abort();
      throw err;
    }
    return { hash, bytes: size };
  }
}
