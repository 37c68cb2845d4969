// The part status book on both TabularStore backends (issue 33): a report is kept in memory and in the
// store, one row per part, and a book opened later (a restarted cloud) starts from the last reports.
import test from 'ava';
import { ReportStatusRequest } from '../../gen/platform/app/v1/robot_part.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { PartStatusBook } from './part-status.js';

const report = (id: string, version: string) => ReportStatusRequest.fromPartial({ id, runtimeVersion: version, machineState: 'running', resourceCount: 3 });

for (const backend of tabularBackends(test)) {
  test(`${backend.name}: the last report of each part is kept, once, and read back by a book opened later`, async (t) => {
    const store = await backend.open(t);
    const book = await PartStatusBook.open(store);
    t.false(book.get('p1').online);
    await book.report('p1', report('p1', '1.0.0'));
    // Reports of one part at once: one row stays, holding one of them.
    await Promise.all(['1.1.0', '1.2.0', '1.3.0'].map((v) => book.report('p1', report('p1', v))));
    await book.report('p2', report('p2', '2.0.0'));
    t.true(book.get('p1').online);
    const rows = await store.query('SELECT part_id, count(*) AS n FROM part_status GROUP BY part_id ORDER BY part_id');
    t.deepEqual(
      rows.map((r) => [r.part_id, Number(r.n)]),
      [
        ['p1', 1],
        ['p2', 1],
      ],
    );
    const later = await PartStatusBook.open(store);
    t.true(['1.1.0', '1.2.0', '1.3.0'].includes(later.get('p1').report!.runtimeVersion));
    t.like(later.get('p2'), { online: true, report: { id: 'p2', runtimeVersion: '2.0.0', machineState: 'running', resourceCount: 3 } });
    t.true(later.get('p2').reportedAt instanceof Date);
  });
}
