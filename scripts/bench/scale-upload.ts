// bench:scale's end-to-end ingest: readings uploaded to a running `platform-cloud serve` over gRPC, as a
// machine's data manager sends them, in the scale-out mode (PostgreSQL + S3 on s3rver) and in the
// embedded default (no flags). Each cloud is the real program from dist/, spawned with a data dir of its
// own; the organization and the machine come from the admin CLI; the uploads go through the part's
// CloudLink (core/datamanager/part-cloud.ts: robot-secret login, then a bearer token per call) as
// DataCaptureUpload requests built by core/datamanager/upload-body.ts from records framed as the capture
// loop frames them (core/datamanager/tabular-record.ts). Capture-time encoding is done before the clock
// starts, as a machine does it when it captures, not when it syncs; the clock covers what a sync pass
// does: building each request from its records, sending it and waiting for the acknowledgement.
// Afterwards the stored row count is checked through the cloud (TabularDataByFilter, count only) and,
// in the scale-out mode, straight in PostgreSQL.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { S3BlobStore, s3Client } from '../../cloud/store/s3-blob-store.js';
import { startS3rver, type S3Service } from '../../cloud/testing/s3rver.js';
import { removeDataDir, tempDataDir } from '../../cloud/testing/spawn-cloud.js';
import type { CaptureFileHeader } from '../../core/datamanager/capture-file.js';
import { connectPartCloud } from '../../core/datamanager/part-cloud.js';
import { framedTabularRecord } from '../../core/datamanager/tabular-record.js';
import { uploadRequests } from '../../core/datamanager/upload-body.js';
import { spawnServing, type ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { ownCpuMs, processCpuMs } from './scale-cpu.js';

const main = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const run = promisify(execFile);
const FRAME_HEAD = 8;

export interface UploadBenchOptions {
  uploads: number;
  points: number;
  concurrency: number;
  /**
   * Node flags for the spawned cloud (BENCH_SCALE_CLOUD_NODE_FLAGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`):
   * a profile of where the cloud's time goes.
   */
  cloudNodeFlags: string[];
}

export interface UploadCloud {
  /** `serve` flags beyond --data-dir and --port. */
  args: string[];
  env: Record<string, string>;
  /** postgres://… of the cloud's database, to count the rows there too (scale-out only). */
  pgUrl?: string;
}

/** An S3 service (s3rver) with the cloud's bucket, and the flags and credentials that name it. */
export async function scaleOutCloud(pgUrl: string): Promise<UploadCloud & { s3: S3Service }> {
  const s3 = await startS3rver();
  const bucket = 'platform-bench';
  const client = s3Client({ endpoint: s3.endpoint, client: { credentials: s3.credentials } });
  try {
    await S3BlobStore.createBucket(client, bucket);
  } finally {
    client.destroy();
  }
  return {
    s3,
    pgUrl,
    args: ['--backend-store-uri', pgUrl, '--artifacts-destination', `s3://${bucket}/cloud`, '--s3-endpoint', s3.endpoint],
    env: { AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey, AWS_REGION: 'us-east-1' },
  };
}

const admin = async (dataDir: string, args: string[]): Promise<Record<string, string>> => {
  const { stdout } = await run(process.execPath, [main, ...args, '--data-dir', dataDir, '--json']);
  return JSON.parse(stdout) as Record<string, string>;
};

/** One upload's records, framed as the capture loop frames them: a reading a millisecond apart. */
function recordsOf(upload: number, points: number): Buffer[] {
  const base = Date.parse('2026-11-01T00:00:00Z') + upload * points;
  return Array.from({ length: points }, (_, i) =>
    framedTabularRecord(base + i, base + i + 1, { readings: { temperature: 20 + ((upload + i) % 100) / 10, humidity: (upload * 7 + i) % 100 } }).subarray(
      FRAME_HEAD,
    ),
  );
}

const headerOf = (): CaptureFileHeader => ({
  upload_id: randomUUID(),
  component_type: 'rdk:component:sensor',
  component_name: 'thermometer',
  method_name: 'Readings',
  method_parameters: {},
  tags: ['bench'],
  kind: 'tabular',
});

export interface UploadResult {
  /** Readings per second of each round. */
  rounds: number[];
  best: number;
  rows: number;
  /** CPU milliseconds per 1,000 readings over all rounds: the cloud process's, and this process's (the client's). */
  cloudCpuMs: number;
  clientCpuMs: number;
}

/** A running cloud with its machine: rounds of uploads, then the check and the figures. */
export interface UploadBench {
  /** Sends every upload once more (fresh upload ids) and returns readings per second. */
  round(): Promise<number>;
  /** Checks the stored rows and returns the figures; stops the cloud (also on failure). */
  finish(): Promise<UploadResult>;
  /** Stops the cloud without checking (after a failure elsewhere); does nothing once stopped. */
  stop(): Promise<void>;
}

/**
 * Spawns the cloud and makes an organization and a machine with the admin CLI; each round sends
 * `uploads` uploads of `points` readings, `concurrency` at a time; finish() checks that every reading
 * was stored. Rounds of several clouds (and the raw anchor) can be interleaved, so that the load of a
 * shared machine falls on each.
 */
export async function startUploadBench(cloud: UploadCloud, options: UploadBenchOptions): Promise<UploadBench> {
  const dataDir = tempDataDir();
  const profileDir = options.cloudNodeFlags.some((f) => f.includes('{dir}')) ? mkdtempSync(join(tmpdir(), 'bench-scale-prof-')) : '';
  const nodeFlags = options.cloudNodeFlags.map((f) => f.replace('{dir}', profileDir));
  let program: ServingProgram | undefined;
  let part: ReturnType<typeof connectPartCloud> | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    part?.close();
    await program?.stop();
    if (nodeFlags.length) console.log(`  (the ${cloud.args.length ? 'scale-out' : 'embedded'} cloud ran with ${nodeFlags.join(' ')})`);
    removeDataDir(dataDir);
  };
  try {
    program = await spawnServing(main, ['serve', '--data-dir', dataDir, '--port', '0', ...cloud.args], {
      name: 'platform-cloud',
      env: { ...process.env, ...cloud.env },
      nodeFlags,
      timeoutMs: 180_000,
    });
    const address = program.address;
    const org = await admin(dataDir, ['org', 'create', 'bench']);
    const machine = await admin(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
    const key = await admin(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
    const link = (part = connectPartCloud({
      partId: machine.part_id,
      appAddress: address,
      credentials: { type: 'robot-secret', entity: machine.part_id, payload: machine.part_secret },
      allowInsecure: false,
    }));
    const records = Array.from({ length: options.uploads }, (_, u) => recordsOf(u, options.points));
    const send = (u: number) => Promise.all(uploadRequests(headerOf(), records[u], link.partId, []).map((r) => link.dataCaptureUpload(r.body)));
    // One upload before the clock (login, channel, the day's partition), counted in the rows.
    await send(0);
    const pid = program.child.pid!;
    const rounds: number[] = [];
    let cpu = { cloud: 0, client: 0 };
    return {
      stop,
      async round() {
        const before = { cloud: processCpuMs(pid), client: ownCpuMs() };
        let next = 0;
        const start = performance.now();
        await Promise.all(
          Array.from({ length: options.concurrency }, async () => {
            while (next < options.uploads) await send(next++);
          }),
        );
        const rate = (options.uploads * options.points) / ((performance.now() - start) / 1000);
        cpu = { cloud: cpu.cloud + processCpuMs(pid) - before.cloud, client: cpu.client + ownCpuMs() - before.client };
        rounds.push(rate);
        return rate;
      },
      async finish() {
        try {
          const readings = rounds.length * options.uploads * options.points;
          const expected = readings + options.points;
          const client = createCloudClient({ serviceHost: address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
          try {
            const { count } = await client.dataClient.tabularDataByFilter({}, { countOnly: true });
            if (count !== expected) throw new Error(`the cloud counts ${count} readings, expected ${expected}`);
          } finally {
            client.close();
          }
          if (cloud.pgUrl) {
            const db = new pg.Client({ connectionString: cloud.pgUrl });
            await db.connect();
            try {
              const [{ n }] = (await db.query<{ n: string }>('SELECT count(*) AS n FROM tabular_data WHERE organization_id = $1', [org.id])).rows;
              if (Number(n) !== expected) throw new Error(`PostgreSQL holds ${n} readings, expected ${expected}`);
            } finally {
              await db.end();
            }
          }
          return {
            rounds,
            best: Math.max(...rounds),
            rows: expected,
            cloudCpuMs: (cpu.cloud * 1000) / readings,
            clientCpuMs: (cpu.client * 1000) / readings,
          };
        } finally {
          await stop();
        }
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
