// The uploads of the differential tests (scale-out-differential.test.ts, scale-out-pg-endpoint.test.ts):
// two organizations' readings, stored the same way in the embedded DuckDB Store and in PostgreSQL, their
// rows synced on several past days (sealed by the tests) and today (the unsealed tail).
import type { PartInfo } from '../../data/parts.js';
import { insertTabular, type TabularPoint } from '../../datasync/tabular-ingest.js';
import { ensureReadingsPartition } from '../../store/pg-readings.js';
import type { PgStore } from '../../store/pg-store.js';
import type { Store } from '../../store/store.js';

export const DAY = 86_400_000;
export const today = Math.floor(Date.now() / DAY) * DAY;

const partOf = (org: string, n: number): PartInfo => ({
  kind: 'part',
  partId: `${org}-p${n}`,
  partName: `${org}-part-${n}`,
  machineId: `${org}-m${n}`,
  robotName: `robot-${n}`,
  locationId: `${org}-loc`,
  organizationId: org,
});

/** Upload u: a few points with nested, odd and missing values; its rows are synced `daysAgo` days back. */
export function upload(u: number, org: string) {
  const points: TabularPoint[] = Array.from({ length: 3 + (u % 4) }, (_, i) => ({
    timeRequested: new Date(today - 5 * DAY + u * 3_600_000 + i * 1000),
    timeReceived: new Date(today - 5 * DAY + u * 3_600_000 + i * 1000 + 7),
    data:
      i === 2
        ? { readings: { note: `it's "quoted" é ${u}`, list: [1, 'two', null] } }
        : { readings: { temperature: 20 + u + i / 4, humidity: (u * 7 + i) % 100 } },
  }));
  const capture = {
    part: partOf(org, u % 2),
    componentType: 'rdk:component:sensor',
    componentName: u % 3 === 0 ? 'thermo' : 'hygro',
    methodName: 'Readings',
    methodParameters: u % 2 ? { rate: u } : undefined,
    tags: u % 5 === 0 ? ['calibrated', 'x'] : u % 5 === 1 ? ['platform:internal'] : [],
  };
  return { capture, points, uploadId: `upload-${org}-${u}` };
}

// Days back each upload's rows are synced: 4, 3 and 1 days ago are sealed, 0 (today) stays the tail.
export const daysAgo = (u: number) => [4, 3, 1, 0][u % 4];

/** 24 uploads of each of org-a and org-b, interleaved, in the same order on both stores: seqs come out the same. */
export async function storeSameUploads(duck: Store, pg: PgStore): Promise<void> {
  for (let u = 0; u < 24; u++) {
    for (const org of ['org-a', 'org-b']) {
      const { capture, points, uploadId } = upload(u, org);
      await insertTabular(duck, capture, points, uploadId);
      await insertTabular(pg, capture, points, uploadId);
      const synced = new Date(today - daysAgo(u) * DAY + u * 60_000 + (org === 'org-b' ? 7 : 0));
      await ensureReadingsPartition(pg, synced);
      for (const store of [duck, pg] as const) await store.execute('UPDATE tabular_data SET time_synced = ? WHERE upload_id = ?', [synced, uploadId]);
    }
  }
}
