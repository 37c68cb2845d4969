// Test fixture: binary data rows of two organizations in a TabularStore (either backend), with the
// principals that read and change them, for the BinaryDataStore tests run on both backends
// (cloud/data/binary-data-*.test.ts). Rows are inserted directly, each field chosen, so that every
// filter field has rows it must match and rows it must not.
import type { Filter } from '../../gen/platform/app/data/v1/data.js';
import { createKey, createLocation, createMachine, createOrganization } from '../admin/tenancy.js';
import { Authorizer } from '../auth/authorizer.js';
import type { KeyPrincipal, Role, ScopeType } from '../auth/principal.js';
import { TokenSigner } from '../auth/token.js';
import { BinaryDataStore } from '../data/binary-data.js';
import type { StoreWithBlobs } from '../store/tabular.js';

export interface BinaryRowSpec {
  id: string;
  org?: 'A' | 'B';
  /** rover (org A, location `lab`), arm (org A, location `field`) or other (org B). */
  machine?: 'rover' | 'arm' | 'other';
  componentType?: string;
  componentName?: string;
  method?: string;
  mime?: string;
  tags?: string[];
  datasets?: string[];
  /** time_requested as text with microseconds, e.g. 2026-11-27T00:00:00.000001Z. */
  time: string;
  seq: number;
  /** Content put in the blob store under the row's blob key. */
  content?: string | Uint8Array;
  internal?: boolean;
}

/** An empty filter: every field unset, as the generated code's defaults. */
export function emptyFilter(fields: Partial<Filter> = {}): Filter {
  return {
    componentName: '',
    componentType: '',
    method: '',
    robotName: '',
    robotId: '',
    partName: '',
    partId: '',
    locationIds: [],
    organizationIds: [],
    mimeType: [],
    interval: undefined,
    tagsFilter: undefined,
    bboxLabels: [],
    datasetId: '',
    ...fields,
  } as Filter;
}

export async function binaryFixture(store: StoreWithBlobs) {
  const orgA = (await createOrganization(store, { name: 'A' })).id;
  const orgB = (await createOrganization(store, { name: 'B' })).id;
  const lab = (await createLocation(store, { org: orgA, name: 'lab' })).id;
  const field = (await createLocation(store, { org: orgA, name: 'field' })).id;
  const machines = {
    rover: await createMachine(store, { org: orgA, name: 'rover', location: lab }),
    arm: await createMachine(store, { org: orgA, name: 'arm', location: field }),
    other: await createMachine(store, { org: orgB, name: 'other' }),
  };
  const tokens = new TokenSigner(Buffer.alloc(32, 7));
  const authorizer = new Authorizer(store, tokens);
  const principal = async (org: string, role: Role, scope: { location?: string; machine?: string } = {}): Promise<KeyPrincipal> => {
    const key = await createKey(store, { org, role, ...scope });
    const type: ScopeType = scope.location ? 'location' : scope.machine ? 'machine' : 'organization';
    return { kind: 'api-key', keyId: key.id, organizationId: org, scope: { type, id: scope.location ?? scope.machine ?? org }, role };
  };
  const keys = {
    ownerA: await principal(orgA, 'owner'),
    operatorA: await principal(orgA, 'operator'),
    ownerField: await principal(orgA, 'owner', { location: field }),
    ownerB: await principal(orgB, 'owner'),
  };
  const blobKey = (id: string) => `blobs/${id}`;
  const insert = async (rows: BinaryRowSpec[]) => {
    for (const r of rows) {
      const org = r.org === 'B' ? orgB : orgA;
      const name = r.machine ?? (r.org === 'B' ? 'other' : 'rover');
      const m = machines[name];
      if (r.content !== undefined) await store.blobs.put(blobKey(r.id), Buffer.from(r.content));
      await store.execute(
        `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, robot_name, part_id, part_name,
           component_type, component_name, method_name, file_ext, mime_type, tags, dataset_ids, time_requested, time_received,
           file_size_bytes, blob_key, internal)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '.bin', ?, CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS TIMESTAMPTZ), ?, ?, ?, ?)`,
        [
          r.seq,
          r.id,
          org,
          m.location_id,
          m.machine_id,
          name,
          m.part_id,
          `${name}-main`,
          r.componentType ?? 'rdk:component:camera',
          r.componentName ?? 'cam',
          r.method ?? 'GetImages',
          r.mime ?? 'image/jpeg',
          r.tags ?? [],
          r.datasets ?? [],
          r.time,
          new Date('2026-11-27T12:00:00Z'),
          typeof r.content === 'string' ? Buffer.byteLength(r.content) : (r.content?.length ?? 0),
          blobKey(r.id),
          r.internal ?? false,
        ],
      );
    }
  };
  const dataset = async (id: string, org = orgA) => {
    await store.execute('INSERT INTO datasets VALUES (?, ?, ?, ?)', [id, id, org, new Date()]);
  };
  /** The stored tags, dataset ids and internal flag of a row. */
  const stored = async (id: string) => {
    const [row] = await store.query('SELECT tags, dataset_ids, internal FROM binary_data WHERE binary_data_id = ?', [id]);
    return row ? { tags: row.tags, datasets: row.dataset_ids, internal: row.internal } : undefined;
  };
  return { orgA, orgB, field, machines, keys, tokens, authorizer, binary: new BinaryDataStore(store, authorizer), insert, dataset, stored, blobKey };
}

export type BinaryFixture = Awaited<ReturnType<typeof binaryFixture>>;
