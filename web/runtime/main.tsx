// The runtime control page: the machine's state and resources (polled, since the runtime has no status
// stream), a control panel per API, DoCommand for every resource, and a StopAll button that never scrolls
// away. The page holds a session, so what it commanded stops when the tab closes and heartbeats cease.
// Served by the machine, it calls the machine's web port (gRPC-Web); served by the cloud for a machine part
// (/control/?part=<id>, from the Machines view), it first connects to the machine over WebRTC through the
// cloud's signaling and makes every call on that data channel (through-cloud.ts, loaded only then).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ResourceName } from '../../gen/platform/robot/v1/common.js';
import { MachineState, ResourceState, type GetMachineStatusResponse, type GetVersionResponse } from '../../gen/platform/robot/v1/robot.js';
import { doCommand, encoderApi, robotApi } from './api.js';
import { Failure, useAction } from './action.js';
import { BoardPanel } from './board-panel.js';
import { MotorPanel } from './motor-panel.js';
import { SensorPanel } from './sensor-panel.js';
import { useSession } from '../shared/grpc-web-client.js';
import { CameraView } from './camera-view.js';
import { ConfigView } from './config-view.js';
import { LogsView } from './logs-view.js';
import { usePoll } from './poll.js';

const label = (state: number, names: Record<number, string>, prefix: string) => (names[state] ?? String(state)).replace(prefix, '').toLowerCase();
const keyOf = (n: ResourceName) => `${n.namespace}:${n.type}:${n.subtype}/${n.name}`;

function EncoderPanel({ name }: { name: string }) {
  const position = usePoll((signal) => encoderApi.getPosition({ name }, signal), [name]);
  const [error, act] = useAction();
  return (
    <div>
      <p>
        position {position.value?.value ?? '…'} <button onClick={() => act(() => encoderApi.resetPosition({ name }))}>Reset</button>
      </p>
      <Failure text={error || position.error} />
    </div>
  );
}

function DoCommandPanel({ resource }: { resource: ResourceName }) {
  const [text, setText] = useState('{}');
  const [result, setResult] = useState('');
  const [error, act] = useAction();
  const send = () =>
    act(async () => {
      let command: unknown;
      try {
        command = JSON.parse(text);
      } catch (err) {
        throw new Error(`command: not JSON (${(err as Error).message})`, { cause: err });
      }
      if (command === null || typeof command !== 'object' || Array.isArray(command)) throw new Error('command: must be a JSON object');
      const reply = await doCommand(resource.type, resource.subtype, resource.name, command as Record<string, unknown>);
      setResult(JSON.stringify(reply.result ?? {}));
    });
  return (
    <details>
      <summary>DoCommand</summary>
      <textarea aria-label={`command for ${resource.name}`} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      <button onClick={send}>Send</button>
      <pre>{result}</pre>
      <Failure text={error} />
    </details>
  );
}

/** What a panel may need to know besides its resource's name: the ready vision services, for overlays. */
interface PanelProps {
  name: string;
  visions: string[];
}

const PANELS: Partial<Record<string, (p: PanelProps) => preact.JSX.Element>> = {
  sensor: SensorPanel,
  motor: MotorPanel,
  board: BoardPanel,
  encoder: EncoderPanel,
  camera: CameraView,
};

function ResourceCard({ status, visions }: { status: GetMachineStatusResponse['resources'][number]; visions: string[] }) {
  const name = status.name!;
  const Panel = PANELS[name.subtype];
  const ready = status.state === ResourceState.RESOURCE_STATE_READY;
  return (
    <section class="card" data-resource={name.name}>
      <h2>
        {name.name}{' '}
        <small>
          {name.namespace}:{name.type}:{name.subtype} · {status.model}
        </small>
      </h2>
      <p>
        <span class={`state ${label(status.state, ResourceState, 'RESOURCE_STATE_')}`}>{label(status.state, ResourceState, 'RESOURCE_STATE_')}</span> · revision{' '}
        {status.revision}
      </p>
      <Failure text={status.error} />
      {Panel && ready ? <Panel name={name.name} visions={visions} /> : null}
      <DoCommandPanel resource={name} />
    </section>
  );
}

/** Starts a session and keeps it alive; calls made meanwhile carry its id. */
function useHeldSession(): { id: string; error: string } {
  const [held, setHeld] = useState({ id: '', error: '' });
  useEffect(() => {
    let timer: ReturnType<typeof setInterval>;
    robotApi
      .startSession({ resume: '' })
      .then((session) => {
        useSession(session.id);
        setHeld({ id: session.id, error: '' });
        const windowMs = (session.heartbeatWindow?.seconds ?? 2) * 1000 + (session.heartbeatWindow?.nanos ?? 0) / 1e6;
        // Several heartbeats per window, so one slow call does not end the session.
        timer = setInterval(
          () => {
            robotApi.sendSessionHeartbeat({ id: session.id }).catch((err: Error) => setHeld({ id: '', error: `session lost: ${err.message}` }));
          },
          Math.max(50, windowMs / 4),
        );
      })
      .catch((err: Error) => setHeld({ id: '', error: `no session: ${err.message}` }));
    return () => clearInterval(timer);
  }, []);
  return held;
}

function App({ via }: { via?: string }) {
  const session = useHeldSession();
  const status = usePoll((signal) => robotApi.getMachineStatus({}, signal), []);
  const [version, setVersion] = useState<GetVersionResponse>();
  const [stopError, act] = useAction();
  const [stopped, setStopped] = useState(0);
  useEffect(() => void robotApi.getVersion({}).then(setVersion, () => undefined), []);
  const machine = status.value;
  const visions = (machine?.resources ?? [])
    .filter((r) => r.name?.subtype === 'vision' && r.state === ResourceState.RESOURCE_STATE_READY)
    .map((r) => r.name!.name)
    .join('\n');
  useEffect(() => {
    // The first view is usable once live statuses are shown (bench:web reads this mark).
    if (machine && performance.getEntriesByName('platform-interactive').length === 0) {
      performance.mark('platform-interactive');
      document.documentElement.setAttribute('data-ready', '1');
    }
  }, [machine]);
  return (
    <>
      <header>
        <strong>platform-server</strong>
        {via ? <span data-testid="transport">{via}</span> : null}
        <span data-testid="machine-state">{machine ? label(machine.state, MachineState, 'MACHINE_STATE_') : 'connecting…'}</span>
        <span>{version ? `${version.platform} ${version.version} (API ${version.apiVersion})` : ''}</span>
        <span title="the page's session: closing the tab stops what it commanded">{session.id ? `session ${session.id.slice(0, 8)}` : session.error}</span>
        <button
          class="stop-all"
          onClick={() =>
            act(async () => {
              await robotApi.stopAll({});
              setStopped((n) => n + 1);
            })
          }
        >
          StopAll
        </button>
        {stopped > 0 ? <span>stopped ×{stopped}</span> : null}
      </header>
      <main>
        <Failure text={stopError || status.error} />
        {machine?.configError ? (
          <p class="error" role="alert">
            config rejected: {machine.configError}
          </p>
        ) : null}
        {machine?.pendingConfig ? (
          <p>
            config revision {machine.pendingConfig.revision} waits: {machine.pendingConfig.reason}
          </p>
        ) : null}
        {machine ? (
          <table data-testid="resources">
            <thead>
              <tr>
                <th>resource</th>
                <th>API</th>
                <th>state</th>
                <th>revision</th>
                <th>error</th>
              </tr>
            </thead>
            <tbody>
              {machine.resources.map((r) => (
                <tr key={keyOf(r.name!)}>
                  <td>{r.name!.name}</td>
                  <td>
                    {r.name!.namespace}:{r.name!.type}:{r.name!.subtype}
                  </td>
                  <td>{label(r.state, ResourceState, 'RESOURCE_STATE_')}</td>
                  <td>{r.revision}</td>
                  <td>{r.error}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {session.id ? machine?.resources.map((r) => <ResourceCard key={keyOf(r.name!)} status={r} visions={visions ? visions.split('\n') : []} />) : null}
        {/* After the first status, so that their calls do not delay the first view. */}
        {machine ? <LogsView /> : null}
        {machine ? <ConfigView /> : null}
      </main>
    </>
  );
}

/** The page reached through the cloud: connects first, and offers to connect again when the channel closes. */
function ThroughCloud({ partId }: { partId: string }) {
  const [attempt, setAttempt] = useState(0);
  const [link, setLink] = useState<{ open: boolean; ever: boolean; error: string }>({ open: false, ever: false, error: '' });
  useEffect(() => {
    let live = true;
    let close: (() => void) | undefined;
    setLink((l) => ({ ...l, error: '' }));
    import('./through-cloud.js')
      .then((m) => m.connectThroughCloud(partId))
      .then(
        (connection) => {
          close = connection.close;
          if (!live) return connection.close();
          setLink({ open: true, ever: true, error: '' });
          connection.transport.onClose(() => live && setLink((l) => ({ ...l, open: false, error: 'the connection to the machine through the cloud closed' })));
        },
        (err: Error) => live && setLink((l) => ({ ...l, error: `cannot reach machine part ${partId} through the cloud: ${err.message}` })),
      );
    return () => {
      live = false;
      close?.();
    };
  }, [attempt]);
  return (
    <>
      {link.error ? (
        <p class="error" role="alert">
          {link.error} <button onClick={() => setAttempt((n) => n + 1)}>Reconnect</button>
        </p>
      ) : null}
      {!link.open && !link.error ? <p data-testid="connecting">connecting to machine part {partId} through the cloud (WebRTC)…</p> : null}
      {link.ever ? <App via="WebRTC through the cloud" /> : null}
    </>
  );
}

const partId = new URLSearchParams(location.search).get('part');
render(partId ? <ThroughCloud partId={partId} /> : <App />, document.getElementById('app')!);
