// A page of TabularDataByFilter as a table (the tabular view's table and chart both read it).
import type { TabularDataByFilterResponse } from '../../../gen/platform/app/data/v1/data.js';
import { flatten, type Row, type Table } from './rows.js';

/** One page of points as a table: time, where it came from, then the payload's dotted paths. */
export function pageTable(reply: TabularDataByFilterResponse): Table {
  const columns = ['time_received', 'component_name', 'component_type', 'robot_name'];
  const seen = new Set(columns);
  const rows = reply.data.map((point): Row => {
    const meta = reply.metadata[point.metadataIndex];
    const payload = flatten(point.data ?? {});
    for (const c of Object.keys(payload)) {
      if (!seen.has(c)) {
        seen.add(c);
        columns.push(c);
      }
    }
    return {
      time_received: point.timeReceived ?? null,
      component_name: meta?.componentName ?? null,
      component_type: meta?.componentType ?? null,
      robot_name: meta?.robotName ?? null,
      ...payload,
    };
  });
  return { columns, rows };
}
