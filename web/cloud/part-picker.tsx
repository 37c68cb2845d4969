// The part chooser that the upload panel and the deploy panel share: the organization's machines are
// listed once per organization, the first part is chosen until the user picks one, and the choice is a
// <select> of "machine / part" under the name the page's tests and forms use.
import { useEffect, useState } from 'preact/hooks';
import type { Machine } from '../../gen/platform/app/v1/robot_part.js';
import { appApi } from './api/app.js';
import type { CloudApi } from './api/client.js';

/** The organization's machines and the chosen part's id ('' while there is none). */
export function usePartChoice(api: CloudApi, orgId: string, showError: (err: unknown) => void): [Machine[], string, (partId: string) => void] {
  const [machines, setMachines] = useState<Machine[]>([]);
  const [partId, setPartId] = useState('');
  useEffect(() => {
    api.call(appApi.listMachines, { organizationId: orgId, locationId: '' }).then((r) => {
      setMachines(r.machines);
      setPartId((old) => old || (r.machines.flatMap((m) => m.parts)[0]?.id ?? ''));
    }, showError);
  }, [orgId]);
  return [machines, partId, setPartId];
}

export function PartPicker(props: { name: string; machines: Machine[]; partId: string; onChange(partId: string): void }) {
  return (
    <label>
      part
      <select name={props.name} value={props.partId} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.machines.flatMap((m) =>
          m.parts.map((p) => (
            <option key={p.id} value={p.id}>
              {m.name} / {p.name}
            </option>
          )),
        )}
      </select>
    </label>
  );
}
