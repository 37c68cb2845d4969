// Hostile-tenant suite, issue 27 finding 4: calls that arrive together share one read of their key or
// part. One machine part opening 2000 upload streams at once made 2000 identical reads of its row before
// the first answer was cached, and another organization's 1-row read waited 7 s behind them for the
// store's readers. Against a real store of each backend (DuckDB, PostgreSQL), counting the reads that reach it.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { Authorizer, KEY_FRESHNESS_MS } from './authorizer.js';
import { TokenSigner } from './token.js';

for (const backend of tabularBackends(test))
  test(`${backend.name}: 500 calls at once of one part, and of one key, each make one read of its row; a later call of the key reads it afresh`, async (t) => {
    const store = await backend.open(t);
    const org = await createOrganization(store, { name: 'crowd' });
    const machine = await createMachine(store, { org: org.id, name: 'rover' });
    const key = await createKey(store, { org: org.id, role: 'owner' });
    const reads: string[] = [];
    const query = store.query.bind(store);
    store.query = (sql, params) => {
      reads.push(sql.includes('machine_parts') ? 'part' : sql.includes('api_keys') ? 'key' : 'other');
      return query(sql, params);
    };
    const authorizer = new Authorizer(store, new TokenSigner(randomBytes(32)));

    const parts = await Promise.all(Array.from({ length: 500 }, () => authorizer.partPrincipal(machine.part_id)));
    t.true(parts.every((p) => p?.organizationId === org.id));
    const keys = await Promise.all(Array.from({ length: 500 }, () => authorizer.keyPrincipal(key.id)));
    t.true(keys.every((k) => k?.role === 'owner'));
    t.deepEqual(reads, ['part', 'key']);

    // The shared read is no cache of its own: once it is older than KEY_FRESHNESS_MS, the key is read again.
    await new Promise((resolve) => setTimeout(resolve, KEY_FRESHNESS_MS + 10));
    await Promise.all([authorizer.keyPrincipal(key.id), authorizer.keyPrincipal(key.id), authorizer.partPrincipal(machine.part_id)]);
    t.deepEqual(reads, ['part', 'key', 'key']);
  });
