// Organizations, locations, machines, parts and API keys, and what reads them (AuthService's
// authenticate, the Authorizer, the part directory, the places a user browses, part configs), on both
// TabularStore backends: the embedded DuckDB store and PostgreSQL (issue 33).
import { Metadata, status } from '@grpc/grpc-js';
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { authenticate, credentialTypes, HashSlots, type AuthDeps } from '../auth/auth-service.js';
import { Authorizer, KEY_FRESHNESS_MS } from '../auth/authorizer.js';
import { LoginBackoff } from '../auth/login-backoff.js';
import { TokenSigner } from '../auth/token.js';
import { PartDirectory } from '../data/parts.js';
import { authorizeMachine } from '../parts/part-access.js';
import { findPart, latestPartConfig, mainPartOf, partConfigHistory, savePartConfig } from '../parts/part-configs.js';
import { listLocations, listOrganizations as browseOrganizations } from '../parts/places.js';
import type { TabularStore } from '../store/tabular.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf as codeOf } from '../testing/tenancy-fixture.js';
import { listKeys, revokeKey, rotateKey } from './api-keys.js';
import { createKey, createLocation, createMachine, createOrganization, listOrganizations } from './tenancy.js';

const backends = tabularBackends(test);

function deps(store: TabularStore): AuthDeps {
  return { store, tokens: new TokenSigner(randomBytes(32)), gate: new LoginBackoff(), hashes: new HashSlots() };
}

const login = (d: AuthDeps, entity: string, payload: string, type: string = credentialTypes.apiKey) =>
  authenticate(d, { entity, credentials: { type, payload } });

const bearer = (token: string) => {
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
};

for (const backend of backends) {
  test(`${backend.name}: organizations, locations, machines and keys are made, listed and checked`, async (t) => {
    const store = await backend.open(t);
    const org = await createOrganization(store, { name: 'acme' });
    const other = await createOrganization(store, { name: 'other' });
    t.deepEqual(await listOrganizations(store), [
      { id: org.id, name: 'acme' },
      { id: other.id, name: 'other' },
    ]);
    // A machine without a location goes to the organization's "Default" one, made on demand, once.
    const m1 = await createMachine(store, { org: org.id, name: 'rover' });
    const m2 = await createMachine(store, { org: org.id, name: 'arm' });
    t.is(m1.location_id, m2.location_id);
    const lab = await createLocation(store, { org: org.id, name: 'lab' });
    const m3 = await createMachine(store, { org: org.id, name: 'cart', location: lab.id });
    t.is(m3.location_id, lab.id);
    t.deepEqual(await findPart(store, m1.part_id), {
      id: m1.part_id,
      name: 'rover-main',
      machineId: m1.machine_id,
      locationId: m1.location_id,
      organizationId: org.id,
      mainPart: true,
    });
    t.is((await mainPartOf(store, m3.machine_id)).id, m3.part_id);
    t.like(await new PartDirectory(store).require(m3.part_id), { partName: 'cart-main', robotName: 'cart', locationId: lab.id, organizationId: org.id });

    t.is(await codeOf(createOrganization(store, { name: ' ' })), status.INVALID_ARGUMENT);
    t.is(await codeOf(createLocation(store, { org: 'nope', name: 'x' })), status.NOT_FOUND);
    t.is(await codeOf(createMachine(store, { org: other.id, name: 'x', location: lab.id })), status.INVALID_ARGUMENT, "another organization's location");
    t.is(await codeOf(createKey(store, { org: org.id, role: 'admin' })), status.INVALID_ARGUMENT);
    t.is(await codeOf(createKey(store, { org: org.id, role: 'owner', location: lab.id, machine: m3.machine_id })), status.INVALID_ARGUMENT);
    t.is(await codeOf(findPart(store, 'nope')), status.NOT_FOUND);
    t.is(await codeOf(new PartDirectory(store).require('nope')), status.NOT_FOUND);

    const key = await createKey(store, { org: org.id, role: 'operator', location: lab.id });
    const [listed] = await listKeys(store, { org: org.id });
    t.like(listed, {
      id: key.id,
      organization_id: org.id,
      scope: `location:${lab.id}`,
      role: 'operator',
      status: 'active',
      revoked_at: null,
      rotated_at: null,
    });
    t.regex(listed.time_created, /^\d{4}-\d\d-\d\dT/);
    t.false(JSON.stringify(listed).includes(key.key));
  });

  test(`${backend.name}: a key logs in until revoked; a rotated key logs in with its new secret only`, async (t) => {
    const store = await backend.open(t);
    const org = await createOrganization(store, { name: 'keys' });
    const machine = await createMachine(store, { org: org.id, name: 'rover' });
    const key = await createKey(store, { org: org.id, role: 'owner' });
    const d = deps(store);
    const authorizer = new Authorizer(store, d.tokens);
    const { accessToken } = await login(d, key.id, key.key);
    t.like(await authorizer.authenticate(bearer(accessToken)), { kind: 'api-key', keyId: key.id, organizationId: org.id, role: 'owner' });
    t.is(await codeOf(login(d, key.id, 'wrong')), status.UNAUTHENTICATED);
    t.is(await codeOf(login(d, 'unknown-id', key.key)), status.UNAUTHENTICATED);
    // The part logs in with its secret, and its token speaks for it on the machine API.
    const part = await login(d, machine.part_id, machine.part_secret, credentialTypes.partSecret);
    t.like(await authorizeMachine(store, authorizer, bearer(part.accessToken), machine.part_id, 'write'), { speaksForPart: true });

    const rotated = await rotateKey(store, { id: key.id });
    t.is(await codeOf(login(d, key.id, key.key)), status.UNAUTHENTICATED, 'the old secret');
    await login(d, key.id, rotated.key);
    t.like((await listKeys(store, { org: org.id }))[0], { status: 'active' });
    t.true((await listKeys(store, { org: org.id }))[0].rotated_at !== null);

    await revokeKey(store, { id: key.id });
    t.is(await codeOf(revokeKey(store, { id: key.id })), status.INVALID_ARGUMENT, 'already revoked');
    t.is(await codeOf(rotateKey(store, { id: 'nope' })), status.NOT_FOUND);
    t.is(await codeOf(login(d, key.id, rotated.key)), status.UNAUTHENTICATED);
    await new Promise((resolve) => setTimeout(resolve, KEY_FRESHNESS_MS + 10));
    t.is(await authorizer.keyPrincipal(key.id), undefined, 'the Authorizer reads the revocation');
    t.like((await listKeys(store, { org: org.id }))[0], { status: 'revoked' });
  });

  test(`${backend.name}: a location key browses its organization and its own location only`, async (t) => {
    const store = await backend.open(t);
    const org = await createOrganization(store, { name: 'browse' });
    const lab = await createLocation(store, { org: org.id, name: 'lab' });
    await createLocation(store, { org: org.id, name: 'yard' });
    const key = await createKey(store, { org: org.id, role: 'operator', location: lab.id });
    const d = deps(store);
    const authorizer = new Authorizer(store, d.tokens);
    const md = bearer((await login(d, key.id, key.key)).accessToken);
    t.deepEqual(await browseOrganizations(store, authorizer, md), [{ id: org.id, name: 'browse' }]);
    t.deepEqual(await listLocations(store, authorizer, md, org.id), [{ id: lab.id, name: 'lab', organizationId: org.id }]);
  });

  test(`${backend.name}: part config revisions are numbered, kept and listed newest first`, async (t) => {
    const store = await backend.open(t);
    const org = await createOrganization(store, { name: 'configs' });
    const machine = await createMachine(store, { org: org.id, name: 'rover' });
    t.is(await latestPartConfig(store, machine.part_id), undefined);
    const saved = await Promise.all([1, 2, 3].map((n) => savePartConfig(store, machine.part_id, { components: [] }, `user ${n}`)));
    t.deepEqual(saved.map((s) => s.revision).sort(), [1, 2, 3], 'saves at once each get their own revision');
    const history = await partConfigHistory(store, machine.part_id);
    t.deepEqual(
      history.map((h) => [h.revision, h.savedBy]),
      [3, 2, 1].map((r) => [r, saved.find((s) => s.revision === r)!.savedBy]),
    );
    const latest = (await latestPartConfig(store, machine.part_id))!;
    t.is(latest.revision, 3);
    t.true(latest.time instanceof Date);
    t.deepEqual(latest.config, { components: [] });
    t.is(await codeOf(savePartConfig(store, machine.part_id, { components: 'no' }, 'x')), status.INVALID_ARGUMENT);
    t.is((await partConfigHistory(store, machine.part_id)).length, 3, 'nothing saved for an invalid config');
  });
}
