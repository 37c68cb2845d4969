// npm run bench:blobs — the blob stores, each next to a raw write of the same bytes in the same run.
//
//   streamed   MB/s of a streamed upload (BlobWriter: chunks of 64 KiB, commit) of BENCH_BLOB_MB MiB,
//              as FileUpload writes one; on S3 a multipart upload to a temp object, copied to its key;
//   raw        the same content in one write: a durable file write (temp, fsync, rename) for the file
//              store, one PutObject for S3 — the floor the streamed path is measured against;
//   get        MB/s reading it back;
//   small      puts and gets per second of 64 KiB objects (BENCH_BLOB_SMALL of them, 4 at a time).
//
// Backends: the file store (temp dir), S3 on s3rver and S3 on radosgw (a one-node Ceph cluster,
// started here: about 13 s). BENCH_BLOB_BACKENDS=file,s3rver,radosgw picks them. Every figure is
// the median of BENCH_BLOB_REPS runs, after one unmeasured round (radosgw makes its pools on first use).
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBlobWriter, FileBlobStore, type BlobStore } from '../../cloud/store/blob-store.js';
import { S3BlobStore, s3Client } from '../../cloud/store/s3-blob-store.js';
import { startRadosgw } from '../../cloud/testing/radosgw.js';
import { startS3rver, type S3Service } from '../../cloud/testing/s3rver.js';
import { writeFileDurable } from '../../core/serving/durable-file.js';

const MB = Number(process.env.BENCH_BLOB_MB ?? 64);
const REPS = Number(process.env.BENCH_BLOB_REPS ?? 3);
const SMALL = Number(process.env.BENCH_BLOB_SMALL ?? 200);
const BACKENDS = (process.env.BENCH_BLOB_BACKENDS ?? 'file,s3rver,radosgw').split(',');
const chunkBytes = 64 * 1024;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
};

interface Backend {
  store: BlobStore;
  /** The same bytes in one write, without the store's streaming. */
  raw(key: string, content: Buffer): Promise<void>;
  close(): Promise<void>;
}

async function fileBackend(): Promise<Backend> {
  const root = mkdtempSync(join(tmpdir(), 'bench-blobs-'));
  return {
    store: new FileBlobStore(root),
    raw: (key, content) => writeFileDurable(join(root, 'raw', key), content, 0o600),
    close: async () => rmSync(root, { recursive: true, force: true }),
  };
}

async function s3Backend(service: S3Service): Promise<Backend> {
  const options = { endpoint: service.endpoint, client: { credentials: service.credentials } };
  const client = s3Client(options);
  await S3BlobStore.createBucket(client, 'bench');
  const store = await S3BlobStore.open('s3://bench/blobs', options);
  return {
    store,
    raw: async (key, content) =>
      void (await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `raw/${key}`, Body: content, ContentLength: content.byteLength }))),
    close: async () => {
      store.close();
      client.destroy();
      await service.stop();
    },
  };
}

async function measure(name: string, backend: Backend): Promise<void> {
  const { store } = backend;
  const content = randomBytes(MB * 1024 * 1024);
  const small = randomBytes(64 * 1024);
  const streamed: number[] = [];
  const raw: number[] = [];
  const get: number[] = [];
  const puts: number[] = [];
  const gets: number[] = [];
  for (let rep = 0; rep <= REPS; rep++) {
    const key = `org/big-${rep}`;
    const s = await seconds(async () => {
      const writer = await openBlobWriter(store);
      for (let i = 0; i < content.byteLength; i += chunkBytes) await writer.write(content.subarray(i, i + chunkBytes));
      await writer.commit(key);
    });
    const r = await seconds(() => backend.raw(key, content));
    const g = await seconds(() => store.get(key));
    const keys = Array.from({ length: SMALL }, (_, i) => `org/small-${rep}-${i}`);
    const inFours = async (fn: (k: string) => Promise<unknown>) => {
      for (let i = 0; i < keys.length; i += 4) await Promise.all(keys.slice(i, i + 4).map(fn));
    };
    const p = await seconds(() => inFours((k) => store.put(k, small)));
    const q = await seconds(() => inFours((k) => store.get(k, small.byteLength)));
    if (rep === 0) continue;
    streamed.push(MB / s);
    raw.push(MB / r);
    get.push(MB / g);
    puts.push(SMALL / p);
    gets.push(SMALL / q);
  }
  const f = (x: number) => x.toFixed(1);
  console.log(
    `| ${name} | ${f(median(streamed))} MB/s | ${f(median(raw))} MB/s | ${f(median(streamed) / median(raw))} | ${f(median(get))} MB/s | ${Math.round(median(puts))}/s | ${Math.round(median(gets))}/s |`,
  );
}

console.log(
  `bench:blobs — ${MB} MiB streamed in 64 KiB chunks, ${SMALL} objects of 64 KiB, median of ${REPS}; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}`,
);
console.log('| store | streamed upload | raw single write | ratio | get | small puts | small gets |');
console.log('|---|---|---|---|---|---|---|');
for (const name of BACKENDS) {
  const open = { file: fileBackend, s3rver: async () => s3Backend(await startS3rver()), radosgw: async () => s3Backend(await startRadosgw()) }[name];
  if (!open) throw new Error(`BENCH_BLOB_BACKENDS: unknown backend '${name}' (file, s3rver, radosgw)`);
  const backend = await open();
  try {
    await measure(name, backend);
  } finally {
    await backend.close();
  }
}
