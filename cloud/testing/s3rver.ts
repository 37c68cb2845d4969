// Test helper: s3rver, an S3 fake on the local file system, as a child process on a free port in a
// temp dir. Fast (well under a second to start), for the S3 blob store's tests; the same tests also run
// against Ceph's radosgw (radosgw.ts), a real S3 implementation.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServing } from '../../core/serving/testing/spawn-serving.js';

/** An S3 service for tests: where it is and the credentials it takes. */
export interface S3Service {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** What it printed (for a test's failure message). */
  output(): string;
  stop(): Promise<void>;
}

const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');

export async function startS3rver(): Promise<S3Service> {
  const dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  try {
    const program = await spawnServing(bin, ['--directory', dir, '--address', '127.0.0.1', '--port', '0', '--silent'], {
      name: 's3rver',
      servingLine: /S3rver listening on (\S+)/,
      timeoutMs: 60_000,
    });
    return {
      endpoint: `http://${program.address}`,
      // s3rver checks signatures against this fixed key pair.
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      output: program.output,
      stop: async () => {
        await program.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
