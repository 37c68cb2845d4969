// Test fixture: a real platform-cloud (spawned on a free port) with an organization, an org-level
// owner key, an operator key and a machine, reached through the real TypeScript client
// (createCloudClient: dataClient + mlTrainingClient).
import { createCloudClient, type CloudClient } from '../../client/cloud-client.js';
import type { MLTrainingClient } from '../../client/ml-training-client.js';
import { adminJson, spawnCloud, tempDataDir, type SpawnedCloud } from '../../testing/spawn-cloud.js';
import type { ShapeImage } from './shapes.js';

export interface CloudFixture {
  cloud: SpawnedCloud;
  orgId: string;
  partId: string;
  /** The machine part's secret: a machine runs online with it (core/online/README.md). */
  partSecret: string;
  /** The owner key itself, for clients other than the TypeScript client (e.g. part config). */
  ownerKey: { id: string; key: string };
  owner: CloudClient;
  operator: CloudClient;
  /** An owner key scoped to one location (not organization-level). */
  locationOwner: CloudClient;
  /** The owner's mlTrainingClient. */
  training: MLTrainingClient;
  restart(how: 'stop' | 'kill9'): Promise<void>;
  /** Uploads images (tagged with their labels), boxes every shape and puts them all in a new dataset. */
  uploadDataset(name: string, images: ShapeImage[]): Promise<{ datasetId: string; binaryDataIds: string[] }>;
  close(): Promise<void>;
}

export async function cloudFixture(): Promise<CloudFixture> {
  const dataDir = tempDataDir();
  let cloud = await spawnCloud(dataDir);
  const { id: orgId } = await adminJson(dataDir, ['org', 'create', 'shapes-inc']);
  const ownerKey = await adminJson(dataDir, ['key', 'create', '--org', orgId, '--role', 'owner']);
  const operatorKey = await adminJson(dataDir, ['key', 'create', '--org', orgId, '--role', 'operator']);
  const machine = await adminJson(dataDir, ['machine', 'create', '--org', orgId, '--name', 'camera-bot']);
  const locationKey = await adminJson(dataDir, ['key', 'create', '--org', orgId, '--location', machine.location_id, '--role', 'owner']);
  const connect = (key: Record<string, string>) =>
    createCloudClient({ serviceHost: `http://${cloud.address}`, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  const fixture: CloudFixture = {
    cloud,
    orgId,
    partId: machine.part_id,
    partSecret: machine.part_secret,
    ownerKey: { id: ownerKey.id, key: ownerKey.key },
    owner: connect(ownerKey),
    operator: connect(operatorKey),
    locationOwner: connect(locationKey),
    get training() {
      return fixture.owner.mlTrainingClient;
    },
    async restart(how) {
      await (how === 'stop' ? cloud.stop() : cloud.kill9());
      fixture.owner.close();
      fixture.operator.close();
      fixture.locationOwner.close();
      cloud = fixture.cloud = await spawnCloud(dataDir);
      fixture.owner = connect(ownerKey);
      fixture.operator = connect(operatorKey);
      fixture.locationOwner = connect(locationKey);
    },
    async uploadDataset(name, images) {
      const data = fixture.owner.dataClient;
      const datasetId = await data.createDataset(name, orgId);
      const binaryDataIds: string[] = [];
      for (const image of images) {
        const now = new Date();
        const id = await data.binaryDataCaptureUpload(image.png, machine.part_id, 'camera', 'cam', 'ReadImage', '.png', [now, now], image.labels);
        binaryDataIds.push(id);
        for (const o of image.objects) await data.addBoundingBoxToImageById(id, o.label, ...o.box);
      }
      await data.addBinaryDataToDatasetByIds(binaryDataIds, datasetId);
      return { datasetId, binaryDataIds };
    },
    async close() {
      fixture.owner.close();
      fixture.operator.close();
      fixture.locationOwner.close();
      await cloud.stop();
    },
  };
  return fixture;
}
