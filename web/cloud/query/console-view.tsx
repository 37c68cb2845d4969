// The SQL and MQL consoles (DataService TabularDataBySQL / TabularDataByMQL): a query in, its rows out
// as a table and a chart. The cloud answers with BSON documents; errors show as the cloud worded them.
import { deserialize } from 'bson';
import { useState } from 'preact/hooks';
import { queryApi } from '../api/query.js';
import type { ViewProps } from '../views.js';
import { Results } from './results.js';
import { parseStages } from './mql-stages.js';
import { tableOf, type Table } from './rows.js';

export type Language = 'sql' | 'mql';

const EXAMPLES: Record<Language, string> = {
  sql: 'SELECT time_received, component_name, data FROM readings ORDER BY time_received DESC LIMIT 100',
  mql: '[{"$match": {"component_name": "thermometer"}}, {"$sort": {"time_received": -1}}, {"$limit": 100}]',
};

const decode = (raw: Uint8Array[]): Table =>
  tableOf(raw.map((bytes) => deserialize(bytes, { promoteLongs: true, promoteValues: true }) as Record<string, unknown>));

export function QueryConsole(props: ViewProps & { language: Language }) {
  const { language } = props;
  const [text, setText] = useState(EXAMPLES[language]);
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
      <form onSubmit={run}>
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
