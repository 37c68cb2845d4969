// What the cloud knows about a part's runtime: when it last called, the version it runs and its last
// status report. Kept in memory (a status arrives every 10 s, a call far more often) and written to
// DuckDB with each status report, so that a restarted cloud still shows the last one.
import type { ReportStatusRequest } from '../../gen/platform/app/v1/robot_part.js';
import type { TabularStore } from '../store/tabular.js';

/** A runtime that has not reported for this long counts as offline (it reports every 10 s). */
export const ONLINE_WINDOW_MS = 30_000;

export const partStatusTables = [
  `CREATE TABLE IF NOT EXISTS part_status (
     part_id VARCHAR NOT NULL, time_reported TIMESTAMPTZ NOT NULL, status VARCHAR NOT NULL)`,
];

export interface PartStatus {
  lastAccess?: Date;
  reportedAt?: Date;
  report?: ReportStatusRequest;
}

export class PartStatusBook {
  private readonly parts = new Map<string, PartStatus>();

  constructor(private readonly store: TabularStore) {}

  static async open(store: TabularStore): Promise<PartStatusBook> {
    // On PostgreSQL the table comes from the schema's migrations (cloud/store/pg-schema.ts).
    if (store.dialect === 'duckdb') for (const sql of partStatusTables) await store.execute(sql);
    const book = new PartStatusBook(store);
    for (const row of await store.query('SELECT part_id, time_reported, status FROM part_status')) {
      book.parts.set(String(row.part_id), {
        lastAccess: row.time_reported as Date,
        reportedAt: row.time_reported as Date,
        report: JSON.parse(String(row.status)) as ReportStatusRequest,
      });
    }
    return book;
  }

  touch(partId: string): void {
    const s = this.parts.get(partId) ?? {};
    s.lastAccess = new Date();
    this.parts.set(partId, s);
  }

  async report(partId: string, report: ReportStatusRequest): Promise<void> {
    const now = new Date();
    this.parts.set(partId, { lastAccess: now, reportedAt: now, report });
    await this.store.transact(async (tx) => {
      await tx.execute('DELETE FROM part_status WHERE part_id = ?', [partId]);
      await tx.execute('INSERT INTO part_status VALUES (?, ?, ?)', [partId, now, JSON.stringify(report)]);
    });
  }

  get(partId: string): PartStatus & { online: boolean } {
    const s = this.parts.get(partId) ?? {};
    return { ...s, online: !!s.reportedAt && Date.now() - s.reportedAt.getTime() < ONLINE_WINDOW_MS };
  }
}
