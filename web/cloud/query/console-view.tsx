// The SQL and MQL consoles (DataService TabularDataBySQL / TabularDataByMQL): a query in, its rows out
// as a table and a chart. The cloud answers with BSON documents; errors show as the cloud worded them.
import { deserialize } from 'bson';
import { useEffect, useState } from 'preact/hooks';
import { queryApi } from '../api/query.js';
import type { ViewProps } from '../views.js';
import { Results } from './results.js';
import { parseStages } from './mql-stages.js';
import { tableOf, type Table } from './rows.js';

export type Language = 'sql' | 'mql';

/** Queries to start from, by what they show; the first is the console's initial text. */
const EXAMPLES: Record<Language, [string, string][]> = {
  sql: [
    ['newest rows', 'SELECT time_received, component_name, data FROM readings ORDER BY time_received DESC LIMIT 100'],
    [
      'rows per component',
      'SELECT component_name, component_type, count(*) AS rows, max(time_received) AS newest FROM readings GROUP BY ALL ORDER BY rows DESC',
    ],
    [
      'one reading over time',
      "SELECT time_received, data.readings.temperature_c::DOUBLE AS temperature_c FROM readings WHERE component_name = 'thermometer' ORDER BY time_received DESC LIMIT 500",
    ],
    [
      'per-minute average',
      "SELECT time_bucket(INTERVAL '1 minute', time_received) AS minute, avg(data.readings.temperature_c::DOUBLE) AS avg_c FROM readings WHERE component_name = 'thermometer' GROUP BY minute ORDER BY minute",
    ],
    ['the tables', 'SHOW TABLES'],
    ['the columns of readings', 'DESCRIBE readings'],
  ],
  mql: [
    ['newest rows of a component', '[{"$match": {"component_name": "thermometer"}}, {"$sort": {"time_received": -1}}, {"$limit": 100}]'],
    ['rows per component', '[{"$group": {"_id": "$component_name", "rows": {"$sum": 1}}}, {"$sort": {"rows": -1}}]'],
  ],
};

/** The columns of readings, from DESCRIBE (answered read-only by the cloud), shown beside the SQL console. */
function SchemaList(props: ViewProps) {
  const [columns, setColumns] = useState<{ name: string; type: string }[]>([]);
  useEffect(() => {
    props.api.call(queryApi.tabularDataBySql, { organizationId: props.orgId, sqlQuery: 'DESCRIBE readings' }).then(
      (r) => setColumns(decode(r.rawData).rows.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }))),
      () => undefined,
    );
  }, [props.orgId]);
  return (
    <details class="schema" open data-testid="sql-schema">
      <summary>Tables: readings ({columns.length} columns)</summary>
      <ul>
        {columns.map((c) => (
          <li key={c.name}>
            <code>{c.name}</code> <span class="muted">{c.type}</span>
          </li>
        ))}
      </ul>
      <p class="muted">
        <code>data</code> holds each reading as JSON: reach into it with dots and a cast, e.g. <code>data.readings.temperature_c::DOUBLE</code>.
      </p>
    </details>
  );
}

const decode = (raw: Uint8Array[]): Table =>
  tableOf(raw.map((bytes) => deserialize(bytes, { promoteLongs: true, promoteValues: true }) as Record<string, unknown>));

export function QueryConsole(props: ViewProps & { language: Language }) {
  const { language } = props;
  const [text, setText] = useState(EXAMPLES[language][0][1]);
  const [table, setTable] = useState<Table | undefined>();
  const [error, setError] = useState('');
  const [running, setRunning] = useState(false);

  async function run(e: Event) {
    e.preventDefault();
    setError('');
    setRunning(true);
    try {
      const reply =
        language === 'sql'
          ? await props.api.call(queryApi.tabularDataBySql, { organizationId: props.orgId, sqlQuery: text })
          : await props.api.call(queryApi.tabularDataByMql, { organizationId: props.orgId, query: parseStages(text) });
      setTable(decode(reply.rawData));
    } catch (err) {
      setTable(undefined);
      setError((err as Error).message);
    } finally {
      setRunning(false);
    }
  }

  return (
    <div class="query-console">
      {language === 'sql' && <SchemaList {...props} />}
      <form onSubmit={run}>
        <label>
          Example queries{' '}
          <select value="" onChange={(e) => setText((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">(choose one to start from)</option>
            {EXAMPLES[language].map(([what, query]) => (
              <option key={what} value={query}>
                {what}
              </option>
            ))}
          </select>
        </label>
        <label>
          {language === 'sql' ? 'SQL query' : 'MQL pipeline (JSON array of stages)'}
          <textarea name={`${language}-query`} rows={5} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit" disabled={running}>
          {running ? 'Running…' : 'Run'}
        </button>
      </form>
      {error && (
        <p class="error" role="alert" data-testid={`${language}-error`}>
          {error}
        </p>
      )}
      {table && <Results table={table} testId={`${language}-results`} />}
    </div>
  );
}

export function SqlView(props: ViewProps) {
  return <QueryConsole {...props} language="sql" />;
}

export function MqlView(props: ViewProps) {
  return <QueryConsole {...props} language="mql" />;
}
