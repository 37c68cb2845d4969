// Live logs: the runtime's recent lines, then each new one (RobotService.StreamLogs over gRPC-Web), with a
// level filter. The stream is followed again after it breaks (a runtime restart, a dropped connection),
// without showing a line twice: the backlog of the new stream is trimmed to what came after the last line
// shown. The filter works on the lines held, so changing it shows hidden lines again at once.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { LogLine } from '../../gen/platform/robot/v1/robot.js';
import { streamLogs } from './api.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];
/** Lines kept in the page; older ones scroll away. */
const KEEP = 1000;
/** Recent lines asked for at each (re)connection. */
const BACKLOG = 300;
const RETRY_MS = 1000;

const rank = (level: string) => LEVELS.indexOf(level as Level);
const keyOf = (l: LogLine) => `${l.time?.getTime()}|${l.loggerName}|${l.message}`;
/** A stable element key per line (two lines may say the same thing in the same millisecond). */
const ids = new WeakMap<LogLine, number>();
let nextId = 0;
const idOf = (l: LogLine) => ids.get(l) ?? (ids.set(l, ++nextId), nextId);

/** Lines of a new stream that the page has not shown yet (a reconnection's backlog repeats old ones). */
export function newLines(held: LogLine[], incoming: LogLine[]): LogLine[] {
  const last = held[held.length - 1]?.time?.getTime() ?? -Infinity;
  const seen = new Set(held.filter((l) => (l.time?.getTime() ?? 0) >= last).map(keyOf));
  return incoming.filter((l) => (l.time?.getTime() ?? 0) > last || ((l.time?.getTime() ?? 0) === last && !seen.has(keyOf(l))));
}

export function LogsView() {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [level, setLevel] = useState<Level>('info');
  const [link, setLink] = useState('connecting…');
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout>;
    const follow = () => {
      setLink('connecting…');
      streamLogs(
        { minLevel: 'debug', backlog: BACKLOG },
        (batch) => {
          setLink('live');
          setLines((held) => {
            const fresh = newLines(held, batch);
            return fresh.length ? [...held, ...fresh].slice(-KEEP) : held;
          });
        },
        abort.signal,
      )
        .then(
          () => setLink('the runtime ended the stream; reconnecting…'),
          (err: Error) => setLink(`disconnected (${err.message}); reconnecting…`),
        )
        .finally(() => {
          if (!abort.signal.aborted) timer = setTimeout(follow, RETRY_MS);
        });
    };
    follow();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, []);
  const shown = lines.filter((l) => rank(l.level) >= rank(level));
  const box = useRef<HTMLDivElement>(null);
  const [pinned, setPinned] = useState(true);
  // Follows the newest line unless the reader scrolled up to read an older one.
  useLayoutEffect(() => {
    if (pinned && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [shown.length, pinned]);
  return (
    <section class="card" data-testid="logs">
      <h2>
        Logs <small data-testid="logs-link">{link}</small>
      </h2>
      <div class="row">
        <label>
          level{' '}
          <select aria-label="log level" value={level} onChange={(e) => setLevel((e.target as HTMLSelectElement).value as Level)}>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l} and above
              </option>
            ))}
          </select>
        </label>
        <span>
          {shown.length} of {lines.length} lines
        </span>
        <button onClick={() => setLines([])}>Clear</button>
      </div>
      <div
        class="logs"
        role="log"
        ref={box}
        onScroll={(e) => {
          const el = e.currentTarget;
          setPinned(el.scrollTop + el.clientHeight >= el.scrollHeight - 4);
        }}
      >
        {shown.map((l) => (
          <div key={idOf(l)} class={`log ${l.level}`}>
            <time>{l.time?.toISOString().slice(11, 23)}</time> <b>{l.level}</b> <i>{l.loggerName}</i> {l.message}
            {l.fields && Object.keys(l.fields).length ? <span class="fields"> {JSON.stringify(l.fields)}</span> : null}
          </div>
        ))}
      </div>
    </section>
  );
}
