// A part's logs: a page of the stored ones (GetRobotPartLogs: levels, text filter, older pages), and,
// while "Follow" is on, new ones as they arrive (TailRobotPartLogs, a server stream over gRPC-Web).
import { useEffect, useState } from 'preact/hooks';
import type { LogEntry } from '../../../gen/platform/app/v1/robot_part.js';
import { appApi } from '../api/app.js';
import { serverStream } from '../api/stream.js';
import type { ViewProps } from '../views.js';

const LEVELS = ['debug', 'info', 'warn', 'error'];
const PAGE = 200;

export const logLine = (e: LogEntry) =>
  `${e.time?.toISOString() ?? ''} ${e.level.toUpperCase().padEnd(5)} ${e.loggerName} ${e.message}${e.fields && Object.keys(e.fields).length ? ` ${JSON.stringify(e.fields)}` : ''}`;

export function PartLogs(props: ViewProps & { partId: string }) {
  const [levels, setLevels] = useState<string[]>([]);
  const [filter, setFilter] = useState('');
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [next, setNext] = useState('');
  const [follow, setFollow] = useState(false);
  const [error, setError] = useState('');
  const [version, setVersion] = useState(0);

  async function load(pageToken: string) {
    setError('');
    try {
      const page = await props.api.call(appApi.logs, { id: props.partId, levels, filter, pageToken, limit: PAGE });
      setEntries((old) => (pageToken ? [...old, ...page.logs] : page.logs));
      setNext(page.nextPageToken);
    } catch (err) {
      setError((err as Error).message);
    }
  }

  useEffect(() => void load(''), [props.partId, version]);

  useEffect(() => {
    if (!follow) return;
    const abort = new AbortController();
    const wanted = (e: LogEntry) => !filter || `${e.message} ${e.loggerName}`.toLowerCase().includes(filter.toLowerCase());
    serverStream(appApi.tailLogs, { id: props.partId, levels }, (m) => setEntries((old) => [...m.logs.filter(wanted).reverse(), ...old]), abort.signal).catch(
      (err: Error) => {
        if (err.name !== 'AbortError') setError(err.message);
      },
    );
    return () => abort.abort();
  }, [follow, props.partId, version]);

  return (
    <section class="part-logs">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setVersion((v) => v + 1);
        }}
      >
        {LEVELS.map((l) => (
          <label key={l}>
            <input
              type="checkbox"
              checked={levels.includes(l)}
              onChange={(e) => setLevels((ls) => ((e.currentTarget as HTMLInputElement).checked ? [...ls, l] : ls.filter((x) => x !== l)))}
            />
            {l}
          </label>
        ))}
        <label>
          Text <input value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit">Show logs</button>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.currentTarget as HTMLInputElement).checked)} /> Follow new entries
        </label>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <pre class="logs" data-testid="part-logs">
        {entries.length ? entries.map(logLine).join('\n') : 'No log entries.'}
      </pre>
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Older entries
        </button>
      )}
    </section>
  );
}
