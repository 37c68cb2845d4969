// Test helper for issue 33's scale-out mode: one PostgreSQL and one S3 service (s3rver, or Ceph's
// radosgw), shared by any number of platform-cloud processes, as a deployment shares them. start()
// makes a fresh database and bucket and returns what a cloud process is given: the two store URIs,
// the S3 endpoint, and the S3 credentials as the environment variables of the AWS SDK's standard
// chain (the cloud reads no credential flags). openTables() opens the same database and bucket in the
// test's own process, to set up tenants or to look at what the clouds wrote. spawnScaleOutCloud runs a
// platform-cloud process on them.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgStore } from '../store/pg-store.js';
import { S3BlobStore, s3Client } from '../store/s3-blob-store.js';
import { startPostgres, type PostgresServer } from './postgres.js';
import { startRadosgw } from './radosgw.js';
import { startS3rver, type S3Service } from './s3rver.js';
import { spawnCloud, tempDataDir, type SpawnedCloud } from './spawn-cloud.js';

export interface ScaleOutBackends {
  postgres: PostgresServer;
  s3: S3Service;
  /** postgres://... of this harness' own database. */
  backendStoreUri: string;
  /** s3://<bucket>/<prefix>, the bucket made by start(). */
  artifactsDestination: string;
  /** The serve/worker flags naming these stores. */
  args: string[];
  /** The S3 credentials and region as the AWS SDK's environment variables, for a cloud process. */
  env: Record<string, string>;
  /** A PgStore on the database with an S3BlobStore on the destination, closed by stop(). */
  openTables(): Promise<PgStore>;
  stop(): Promise<void>;
}

export interface ScaleOutOptions {
  /** Which S3 service: the fast fake (default) or a real one (about 15 s to start). */
  s3?: 's3rver' | 'radosgw';
}

export async function startScaleOutBackends(options: ScaleOutOptions = {}): Promise<ScaleOutBackends> {
  const [postgres, s3] = await Promise.all([startPostgres(), options.s3 === 'radosgw' ? startRadosgw() : startS3rver()]);
  const opened: PgStore[] = [];
  try {
    const database = `cloud_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
    const backendStoreUri = postgres.url.replace(/\/postgres$/, `/${database}`);
    const bucket = 'platform-scale-out';
    const client = s3Client({ endpoint: s3.endpoint, client: { credentials: s3.credentials } });
    try {
      await S3BlobStore.createBucket(client, bucket);
    } finally {
      client.destroy();
    }
    const artifactsDestination = `s3://${bucket}/cloud`;
    return {
      postgres,
      s3,
      backendStoreUri,
      artifactsDestination,
      args: ['--backend-store-uri', backendStoreUri, '--artifacts-destination', artifactsDestination, '--s3-endpoint', s3.endpoint],
      env: { AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey, AWS_REGION: 'us-east-1' },
      async openTables() {
        const blobs = await S3BlobStore.open(artifactsDestination, { endpoint: s3.endpoint, client: { credentials: s3.credentials } });
        const store = await PgStore.open(backendStoreUri, { blobs, poolSize: 4 });
        opened.push(store);
        return store;
      },
      async stop() {
        for (const store of opened.splice(0)) {
          await store.close();
          (store.blobs as S3BlobStore).close();
        }
        await Promise.all([postgres.stop(), s3.stop()]);
      },
    };
  } catch (err) {
    await Promise.all([postgres.stop(), s3.stop()]).catch(() => undefined);
    throw err;
  }
}

/**
 * A platform-cloud process (the real program, from source) in the scale-out mode on these backends: a
 * data dir of its own for what is per node, the flags, and the S3 credentials in its environment only.
 */
export function spawnScaleOutCloud(backends: ScaleOutBackends, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SpawnedCloud> {
  return spawnCloud(tempDataDir(), [...backends.args, ...extraArgs], { ...backends.env, ...env });
}
