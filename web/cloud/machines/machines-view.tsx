// Organizations, locations, machines and parts (AppService ListOrganizations / ListLocations /
// ListMachines), each part with its online status; the chosen part's status, logs and config editor.
import { useEffect, useState } from 'preact/hooks';
import type { Location, Machine, Organization, RobotPart } from '../../../gen/platform/app/v1/robot_part.js';
import { appApi } from '../api/app.js';
import type { ViewProps } from '../views.js';
import { ConfigEditor } from './config-editor.js';
import { PartLogs } from './part-logs.js';

const REFRESH_MS = 5000;

function Online(props: { online: boolean }) {
  return <span class={props.online ? 'online' : 'offline'}>{props.online ? '● online' : '○ offline'}</span>;
}

/**
 * The part's control page, served by the cloud (/control/?part=<id>) and connected to the machine over
 * WebRTC through the cloud's signaling, so it works wherever the machine is. A new tab with this one as
 * its opener, so that it starts with a copy of this tab's sessionStorage: the signed-in key it signals with.
 */
function ControlPageLink(props: { partId: string; name: string }) {
  return (
    <a
      href={`control/?part=${encodeURIComponent(props.partId)}`}
      target="_blank"
      rel="opener"
      aria-label={`control page of ${props.name}`}
      data-control={props.partId}
    >
      control page
    </a>
  );
}

function PartDetail(props: ViewProps & { partId: string }) {
  const [part, setPart] = useState<RobotPart | undefined>();
  const [tab, setTab] = useState<'config' | 'logs'>('config');
  useEffect(() => {
    props.api.call(appApi.getRobotPart, { id: props.partId }).then((r) => setPart(r.part), props.showError);
  }, [props.partId]);
  if (!part) return <p class="muted">Loading part…</p>;
  const s = part.lastStatus;
  return (
    <section class="part-detail" data-testid="part-detail">
      <h3>
        {part.name} <Online online={part.online} />
      </h3>
      <p>
        runtime {part.runtimeVersion || 'unknown'}
        {part.lastAccess && `, last call ${part.lastAccess.toISOString().slice(0, 19).replace('T', ' ')}`}
        {s && `, state ${s.machineState}, ${s.resourceCount} resources, config revision ${s.configRevision} running`}
      </p>
      {s?.configError && <p class="error">The machine rejected its config: {s.configError}</p>}
      {s && s.notReady.length > 0 && (
        <ul>
          {s.notReady.map((r) => (
            <li key={r.name}>
              {r.name}: {r.state}
              {r.error && ` (${r.error})`}
            </li>
          ))}
        </ul>
      )}
      <div class="tabs">
        <button type="button" aria-pressed={tab === 'config'} onClick={() => setTab('config')}>
          Config
        </button>
        <button type="button" aria-pressed={tab === 'logs'} onClick={() => setTab('logs')}>
          Logs
        </button>
      </div>
      {tab === 'config' ? <ConfigEditor key={part.id} {...props} part={part} onSaved={setPart} /> : <PartLogs key={part.id} {...props} partId={part.id} />}
    </section>
  );
}

export function MachinesView(props: ViewProps) {
  const [orgs, setOrgs] = useState<Organization[]>([]);
  const [locations, setLocations] = useState<Location[]>([]);
  const [location, setLocation] = useState('');
  const [machines, setMachines] = useState<Machine[]>([]);
  const [partId, setPartId] = useState<string | undefined>();

  useEffect(() => {
    props.api.call(appApi.listOrganizations, {}).then((r) => setOrgs(r.organizations), props.showError);
    props.api.call(appApi.listLocations, { organizationId: props.orgId }).then((r) => setLocations(r.locations), props.showError);
  }, [props.orgId]);

  // Online status changes on its own: the list is read again every few seconds.
  useEffect(() => {
    let live = true;
    const load = () =>
      props.api.call(appApi.listMachines, { organizationId: props.orgId, locationId: location }).then(
        (r) => live && setMachines(r.machines),
        (err: Error) => live && props.showError(err),
      );
    void load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [props.orgId, location]);

  const locationName = (id: string) => locations.find((l) => l.id === id)?.name ?? id;
  return (
    <div class="machines-view">
      <p>
        Organization: <strong>{orgs.find((o) => o.id === props.orgId)?.name ?? props.orgId}</strong>{' '}
        <label>
          Location
          <select value={location} onChange={(e) => setLocation((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">all</option>
            {locations.map((l) => (
              <option key={l.id} value={l.id}>
                {l.name}
              </option>
            ))}
          </select>
        </label>
      </p>
      <table class="results" data-testid="machines">
        <thead>
          <tr>
            <th>machine</th>
            <th>location</th>
            <th>parts</th>
          </tr>
        </thead>
        <tbody>
          {machines.map((m) => (
            <tr key={m.id}>
              <td>{m.name}</td>
              <td>{locationName(m.locationId)}</td>
              <td>
                {m.parts.map((p) => (
                  <span key={p.id} class="part">
                    <button type="button" class={p.id === partId ? 'selected' : ''} onClick={() => setPartId(p.id)} data-part={p.id}>
                      {p.name} <Online online={p.online} />
                      {p.runtimeVersion && ` ${p.runtimeVersion}`}
                    </button>{' '}
                    <ControlPageLink partId={p.id} name={`${m.name} ${p.name}`} />
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {partId && <PartDetail key={partId} {...props} partId={partId} />}
    </div>
  );
}
