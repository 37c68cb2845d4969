// A query's result: a table of the rows and a chart of the numeric columns the user picks (against the
// time column when there is one, else the row number).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { LineChart } from './line-chart.js';
import { formatCell, numericColumns, seriesOf, timeColumn, type Table } from './rows.js';

export function ResultTable(props: { table: Table; testId?: string }) {
  const { columns, rows } = props.table;
  if (rows.length === 0) return <p class="muted">No rows.</p>;
  return (
    <div class="table-scroll">
      <table class="results" data-testid={props.testId}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c}>{formatCell(r[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Results(props: { table: Table; testId: string }) {
  const numeric = useMemo(() => numericColumns(props.table), [props.table]);
  const xColumn = useMemo(() => timeColumn(props.table), [props.table]);
  const [picked, setPicked] = useState<string[]>([]);
  // A new result picks its first few numeric columns again.
  useEffect(() => setPicked(numeric.slice(0, 3)), [numeric]);
  const [view, setView] = useState<'table' | 'chart'>('table');
  return (
    <section class="results-block">
      <div class="toolbar">
        <span data-testid={`${props.testId}-count`}>{props.table.rows.length} rows</span>
        <button type="button" aria-pressed={view === 'table'} onClick={() => setView('table')}>
          Table
        </button>
        <button type="button" aria-pressed={view === 'chart'} onClick={() => setView('chart')}>
          Chart
        </button>
      </div>
      {view === 'table' ? (
        <ResultTable table={props.table} testId={`${props.testId}-table`} />
      ) : (
        <>
          <fieldset class="columns">
            <legend>Numeric columns{xColumn ? ` (x: ${xColumn})` : ' (x: row number)'}</legend>
            {numeric.length === 0 && <span class="muted">none</span>}
            {numeric.map((c) => (
              <label key={c}>
                <input
                  type="checkbox"
                  checked={picked.includes(c)}
                  onChange={(e) => setPicked((p) => ((e.currentTarget as HTMLInputElement).checked ? [...p, c] : p.filter((x) => x !== c)))}
                />
                {c}
              </label>
            ))}
          </fieldset>
          <LineChart
            series={seriesOf(props.table, picked, xColumn)}
            timeX={xColumn !== undefined}
            xLabel={xColumn ?? 'row number'}
            testId={`${props.testId}-chart`}
          />
        </>
      )}
    </section>
  );
}
