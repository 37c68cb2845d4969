// Hostile-tenant suite, issue 27 finding 7 (thumbnails): an image in a local file is read by the
// thumbnail child itself, never by the cloud's main process (each large image it read and copied to the
// child grew the main heap's external memory, and the full garbage collections that followed stopped
// every tenant's calls for 10 to 120 ms). The route over a store whose main-process read fails, so a
// read there fails the test; and the child's own reading rules: missing, too large, unreadable.
import test from 'ava';
import { decode as decodeJpeg } from 'jpeg-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Authorizer } from '../auth/authorizer.js';
import type { KeyPrincipal } from '../auth/principal.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { noisyPng } from './testing-images.js';
import { ThumbnailError } from './thumbnail-error.js';
import { ThumbnailProcess } from './thumbnail-process.js';
import { ThumbnailRoute } from './thumbnails.js';

const owner: KeyPrincipal = { kind: 'api-key', keyId: 'key-a', organizationId: 'org-a', scope: { type: 'organization', id: 'org-a' }, role: 'owner' };

function folder(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'thumbnail-content-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("the route has a local file's image read by the thumbnail child: the main process never reads it", async (t) => {
  const dir = folder(t);
  const png = noisyPng(800, 600, 7);
  writeFileSync(join(dir, 'img-1'), png);
  let mainReads = 0;
  const store = {
    dialect: 'duckdb',
    query: async () => [
      {
        binary_data_id: 'img-1',
        organization_id: 'org-a',
        location_id: 'loc',
        robot_id: 'robot',
        mime_type: 'image/png',
        file_size_bytes: png.length,
        blob_key: 'img-1',
      },
    ],
    blobs: {
      localPath: (key: string) => join(dir, key),
      get: async () => {
        mainReads++;
        throw new Error('the main process read the content');
      },
    },
  } as unknown as StoreWithBlobs;
  const authorizer = { authenticate: async () => owner, check() {} } as unknown as Authorizer;
  const route = new ThumbnailRoute(store, authorizer);
  const server = createServer((req, res) => {
    route.handle(req, res, new URL(req.url!, 'http://localhost')).catch((err: Error) => res.writeHead(500).end(err.message));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    route.close();
    server.close();
  });
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/thumbnails/img-1?size=80`, {
    headers: { authorization: 'Bearer x' },
  });
  const body = Buffer.from(await response.arrayBuffer());
  t.is(response.status, 200, body.toString());
  const jpeg = decodeJpeg(body, { useTArray: true });
  t.deepEqual([jpeg.width, jpeg.height], [80, 60]);
  t.is(mainReads, 0);
});

test('the child reads a content file: a missing one is 404, one over the limit 422 naming PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES, an unreadable one 500', async (t) => {
  const dir = folder(t);
  const maker = new ThumbnailProcess();
  t.teardown(() => maker.close());
  const png = noisyPng(64, 48, 3);
  writeFileSync(join(dir, 'ok'), png);
  const ok = await maker.make({ path: join(dir, 'ok'), maxBytes: png.length, name: 'binary data ok' }, 'image/png', 32, 'org-a');
  t.deepEqual([...ok.subarray(0, 2)], [0xff, 0xd8], 'a JPEG');

  const missing = await t.throwsAsync(maker.make({ path: join(dir, 'gone'), maxBytes: 1024, name: 'binary data gone' }, 'image/png', 32), {
    instanceOf: ThumbnailError,
  });
  t.is(missing.httpStatus, 404);
  t.is(missing.message, 'the content of binary data gone is missing');

  // The file grew past the limit after its metadata was checked: refused before it is read.
  const big = await t.throwsAsync(maker.make({ path: join(dir, 'ok'), maxBytes: png.length - 1, name: 'binary data ok' }, 'image/png', 32), {
    instanceOf: ThumbnailError,
  });
  t.is(big.httpStatus, 422);
  t.is(big.message, `binary data ok is ${png.length} bytes, larger than the ${png.length - 1}-byte limit for thumbnails (PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES)`);

  const unreadable = await t.throwsAsync(maker.make({ path: dir, maxBytes: 1 << 30, name: 'binary data dir' }, 'image/png', 32), {
    instanceOf: ThumbnailError,
  });
  t.is(unreadable.httpStatus, 500);
  // Its code, not the path of the cloud's own file.
  t.is(unreadable.message, 'the content of binary data dir cannot be read (EISDIR)');

  // The child still serves the next image after each refusal.
  t.deepEqual([...(await maker.make(png, 'image/png', 16)).subarray(0, 2)], [0xff, 0xd8]);
});
