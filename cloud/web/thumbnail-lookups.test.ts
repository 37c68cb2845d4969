// Hostile-tenant suite, issue 27 finding 7 (thumbnails): one organization's flood of thumbnail requests
// must not hold the store's reader connections that every organization's reads share (in
// bench:isolation huge-thumbnails, another organization's 1-row read waited up to 525 ms for a reader).
// The route over a store that holds each lookup until the test releases it, so what runs at once is seen
// without any timing; and the lookup turns on their own.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metadata } from '@grpc/grpc-js';
import type { Authorizer } from '../auth/authorizer.js';
import type { KeyPrincipal } from '../auth/principal.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { ThumbnailError } from './thumbnail-error.js';
import { concurrentLookupsFromEnv, ThumbnailLookups } from './thumbnail-lookups.js';
import { ThumbnailRoute } from './thumbnails.js';

const principal = (org: string): KeyPrincipal => ({
  kind: 'api-key',
  keyId: `key-${org}`,
  organizationId: org,
  scope: { type: 'organization', id: org },
  role: 'owner',
});

/** A store whose lookups wait until released, recording which datum each was for and how many ran at once. */
function heldStore() {
  const started: string[] = [];
  const releases: (() => void)[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const store = {
    dialect: 'duckdb',
    async query(_sql: string, params: unknown[]) {
      const id = String(params[0]);
      started.push(id);
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      // Each datum is 100 MiB: refused from its row, as in the attack, so no image is ever decoded.
      const org = id.split('.')[0];
      return [
        {
          binary_data_id: id,
          organization_id: org,
          location_id: 'loc',
          robot_id: 'robot',
          mime_type: 'image/png',
          file_size_bytes: 100 * 1024 * 1024,
          blob_key: id,
        },
      ];
    },
    blobs: { get: async () => undefined },
  } as unknown as StoreWithBlobs;
  return { store, started, releases, mostAtOnce: () => mostAtOnce };
}

async function serve(route: ThumbnailRoute): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => void route.handle(req, res, new URL(req.url!, 'http://localhost')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test("one organization's twelve thumbnail requests hold one store reader at a time, and another organization's request is looked up next", async (t) => {
  const held = heldStore();
  let authenticated = 0;
  const authorizer = {
    async authenticate(metadata: Metadata) {
      authenticated++;
      return principal(String(metadata.get('authorization')[0]).replace('Bearer ', ''));
    },
    check() {},
  } as unknown as Authorizer;
  const route = new ThumbnailRoute(held.store, authorizer);
  const { server, url } = await serve(route);
  t.teardown(() => {
    route.close();
    server.close();
  });
  const get = async (org: string, n: number) => {
    // "org.n" names the datum and its organization.
    const response = await fetch(`${url}/thumbnails/${org}.${n}`, { headers: { authorization: `Bearer ${org}` } });
    return { status: response.status, body: await response.text() };
  };
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise((resolve) => setImmediate(resolve));
  };

  const burst = Array.from({ length: 12 }, (_, i) => get('org-a', i));
  await until(() => authenticated === 12 && held.started.length >= 1);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(held.started.length, 1, `lookups under way at once: ${held.started.join(', ')}`);

  const quiet = get('org-b', 0);
  await until(() => authenticated === 13);
  await new Promise((resolve) => setImmediate(resolve));
  // Release each lookup as it starts: org-b's comes right after the one org-a had running.
  for (let released = 0; released < 13; released++) {
    await until(() => held.releases.length > released);
    held.releases[released]();
  }
  const answers = await Promise.all([...burst, quiet]);
  t.is(held.started[1], 'org-b.0', `lookup order: ${held.started.join(', ')}`);
  t.is(held.mostAtOnce(), 1);
  for (const a of answers) {
    t.is(a.status, 422, a.body);
    t.regex(a.body, /larger than the \d+-byte limit for thumbnails \(PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES\)/);
  }
});

test('an organization with PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG lookups waiting is refused with 429 naming the limit; another is not', async (t) => {
  const lookups = new ThumbnailLookups(1, 2);
  let release!: () => void;
  const running = lookups.run('org-a', () => new Promise<string>((resolve) => (release = () => resolve('a0'))));
  const waiting = [lookups.run('org-a', async () => 'a1'), lookups.run('org-a', async () => 'a2')];
  const refused = await t.throwsAsync(
    lookups.run('org-a', async () => 'a3'),
    { instanceOf: ThumbnailError },
  );
  t.is(refused.httpStatus, 429);
  t.is(refused.message, 'organization org-a already has 2 thumbnails waiting, the limit (PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG); retry shortly');
  const other = lookups.run('org-b', async () => 'b0');
  t.is(lookups.waiting, 3);
  release();
  t.deepEqual(await Promise.all([running, ...waiting, other]), ['a0', 'a1', 'a2', 'b0']);
  // Once its lookups ran, the organization may ask again.
  t.is(await lookups.run('org-a', async () => 'a4'), 'a4');
});

test('PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS: default 1, a whole number of at least 1, and a bad value names the variable', (t) => {
  t.is(concurrentLookupsFromEnv({}), 1);
  t.is(concurrentLookupsFromEnv({ PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS: '3' }), 3);
  for (const bad of ['0', '-1', '1.5', 'many']) {
    t.throws(() => concurrentLookupsFromEnv({ PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS: bad }), {
      message: `PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS must be a whole number of at least 1, got "${bad}"`,
    });
  }
});

test('with PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS at 2, two lookups run at once', async (t) => {
  const lookups = new ThumbnailLookups(2, 32);
  let running = 0;
  let most = 0;
  const releases: (() => void)[] = [];
  const lookup = () =>
    new Promise<void>((resolve) => {
      running++;
      most = Math.max(most, running);
      releases.push(() => {
        running--;
        resolve();
      });
    });
  const all = Array.from({ length: 5 }, (_, i) => lookups.run(i % 2 ? 'org-a' : 'org-b', lookup));
  for (let released = 0; released < 5; released++) {
    while (releases.length <= released) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    t.true(running <= 2);
    releases[released]();
  }
  await Promise.all(all);
  t.is(most, 2);
});
