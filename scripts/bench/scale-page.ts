// bench:scale, the page part (issue 33): TabularDataByFilter's first page (limit 50, newest first, the
// organization's readings) at SCALE_PAGE_ROWS (default 1M) readings, through the scale-out reader
// (cloud/data/tabular-data.ts on a PgStore: the manifest check, the index walk), against the same SELECT
// sent raw to PostgreSQL with node-postgres, and against the embedded default (the same call on the
// DuckDB Store, its time-window reader) over the same generated rows, measured alternately in one run.
// Target: <= 20 ms. Also printed: the next page by its cursor, and a page filtered by part.
//
// The rows are generated in each database by SQL (5 UTC days of time_synced, one partition each on
// PostgreSQL; 9 in 10 rows of the measured organization). scripts/bench/scale.ts calls benchScalePage;
// run alone (npm run build first): node dist/scripts/bench/scale-page.js
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { Order, type Filter, type TabularDataByFilterRequest } from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../../cloud/auth/principal.js';
import { tabularDataByFilter } from '../../cloud/data/tabular-data.js';
import { FileBlobStore } from '../../cloud/store/blob-store.js';
import { emptyFilter } from '../../cloud/testing/binary-fixture.js';
import { ensureReadingsPartition } from '../../cloud/store/pg-readings.js';
import { PgStore } from '../../cloud/store/pg-store.js';
import { Store } from '../../cloud/store/store.js';
import type { StoreWithBlobs } from '../../cloud/store/tabular.js';
import { startPostgres } from '../../cloud/testing/postgres.js';
import { removeDataDir, tempDataDir } from '../../cloud/testing/spawn-cloud.js';

export interface ScalePageOptions {
  /** A fresh PostgreSQL database (its tables come from the migrations); default: a server of its own. */
  pgUrl?: string;
  rows?: number;
  repeats?: number;
  log?: (line: string) => void;
}

export interface ScalePageResult {
  /** p50 of the scale-out first page, in ms. */
  scaleOutMs: number;
  rawMs: number;
  embeddedMs: number;
}

const DAYS = 5;
const DAY_MS = 86_400_000;
const principal: KeyPrincipal = { kind: 'api-key', keyId: 'bench', organizationId: 'org-a', scope: { type: 'organization', id: 'org-a' }, role: 'owner' };

/** The generated rows' columns as a SELECT over g (1..rows), in the tables' column order; `day` is the row's day index. */
function generated(rows: number, now: number, day: string, g: string, timestamp: (seconds: string) => string): string {
  const start = (now - DAYS * DAY_MS) / 1000;
  return `${g}, 'u' || CAST(${g} / 1000 AS VARCHAR), CASE WHEN ${g} % 10 = 0 THEN 'org-b' ELSE 'org-a' END, 'loc', 'robot-' || CAST(${g} % 4 AS VARCHAR),
    'rover', 'part-' || CAST(${g} % 4 AS VARCHAR), 'main', 'rdk:component:sensor', 'thermo', 'Readings', NULL, ['bench'],
    ${timestamp(`${start} + ${g} * ${(DAYS * 86_400) / rows}`)}, ${timestamp(`${start} + ${g} * ${(DAYS * 86_400) / rows}`)},
    ${timestamp(`${start} + (${day} + 1) * 86400 - 60`)}, '{"readings":{"v":1}}', false, 20`;
}

const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

export async function benchScalePage(options: ScalePageOptions = {}): Promise<ScalePageResult> {
  const rows = options.rows ?? Number(process.env.SCALE_PAGE_ROWS ?? 1_000_000);
  const repeats = options.repeats ?? 40;
  const log = options.log ?? ((line: string) => console.log(line));
  const own = options.pgUrl ? undefined : await startPostgres();
  const url = options.pgUrl ?? own!.url;
  const blobDir = tempDataDir();
  const duckDir = tempDataDir();
  const pgStore = await PgStore.open(url, { blobs: new FileBlobStore(blobDir) });
  let duck: Store | undefined;
  const raw = new pg.Client({ connectionString: url });
  try {
    const now = Date.now();
    for (let d = 0; d < DAYS; d++) await ensureReadingsPartition(pgStore, new Date(now - (DAYS - 1 - d) * DAY_MS));
    const t0 = performance.now();
    const dayOf = (g: string) => `floor((${g} - 1) * ${DAYS} / ${rows})`;
    await pgStore.execute(
      `INSERT INTO tabular_data SELECT ${generated(rows, now, dayOf('g'), 'g', (s) => `to_timestamp(${s})`).replace("['bench']", "ARRAY['bench']::varchar[]")}
       FROM generate_series(1, ${rows}) AS g`,
    );
    await pgStore.execute('ANALYZE tabular_data');
    log(`generated ${rows} readings in PostgreSQL in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const t1 = performance.now();
    const loading = await Store.open(duckDir);
    await loading.execute(
      `INSERT INTO tabular_data SELECT ${generated(rows, now, dayOf('g'), 'g', (s) => `to_timestamp(${s})`)} FROM range(1, ${rows + 1}) AS r(g)`,
    );
    await loading.close();
    // Reopened, so that the Store knows the table's last seq (its newest-first page starts from it).
    duck = await Store.open(duckDir);
    log(`generated ${rows} readings in the embedded DuckDB in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    await raw.connect();

    const request = (filter: Partial<Filter>, last = '') =>
      ({
        dataRequest: { filter: { ...emptyFilter(), ...filter }, limit: 50, last, sortOrder: Order.ORDER_UNSPECIFIED },
        countOnly: false,
        includeInternalData: false,
      }) as TabularDataByFilterRequest;
    const first = (store: StoreWithBlobs) => () => tabularDataByFilter(store, principal, request({}));
    const rawFirst = () =>
      raw.query(
        `SELECT seq, CAST(extract(epoch FROM time_requested) * 1000000 AS bigint) AS t_us, organization_id, location_id, robot_id, robot_name, part_id,
           part_name, component_type, component_name, method_name, method_parameters, tags, time_requested, time_received, time_synced, data, size_bytes
         FROM tabular_data WHERE organization_id = $1 AND NOT internal ORDER BY time_requested DESC, seq DESC LIMIT 50`,
        ['org-a'],
      );
    const pgCursor = (await first(pgStore)()).last;
    const duckStore = duck;
    const duckCursor = (await first(duckStore)()).last;
    const cases: [string, () => Promise<unknown>][] = [
      ['scale-out first page (TabularDataByFilter on PgStore)', first(pgStore)],
      ['raw PostgreSQL, the same SELECT (node-postgres)', rawFirst],
      ['embedded first page (TabularDataByFilter on the DuckDB Store)', first(duckStore)],
      ['scale-out next page by cursor', () => tabularDataByFilter(pgStore, principal, request({}, pgCursor))],
      ['embedded next page by cursor', () => tabularDataByFilter(duckStore, principal, request({}, duckCursor))],
      ['scale-out first page filtered by part', () => tabularDataByFilter(pgStore, principal, request({ partId: 'part-1' }))],
      ['embedded first page filtered by part', () => tabularDataByFilter(duckStore, principal, request({ partId: 'part-1' }))],
    ];
    const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
    for (const [, run] of cases) for (let i = 0; i < 3; i++) await run();
    // Alternately, so that a noisy moment of the shared machine falls on every case alike.
    for (let r = 0; r < repeats; r++) {
      for (const [name, run] of cases) {
        const start = performance.now();
        await run();
        times.get(name)!.push(performance.now() - start);
      }
    }
    for (const [name] of cases) {
      const xs = times.get(name)!;
      log(`${name.padEnd(64)} p50 ${p(xs, 0.5).toFixed(2)} ms, p95 ${p(xs, 0.95).toFixed(2)} ms`);
    }
    return { scaleOutMs: p(times.get(cases[0][0])!, 0.5), rawMs: p(times.get(cases[1][0])!, 0.5), embeddedMs: p(times.get(cases[2][0])!, 0.5) };
  } finally {
    await raw.end().catch(() => undefined);
    await pgStore.close();
    await duck?.close();
    await own?.stop();
    removeDataDir(blobDir);
    removeDataDir(duckDir);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await benchScalePage();
  console.log(`target <= 20 ms (scale-out p50 ${r.scaleOutMs.toFixed(2)} ms): ${r.scaleOutMs <= 20 ? 'met' : 'MISSED'}`);
}
