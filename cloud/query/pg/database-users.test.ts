// The organization's database user (SCRAM verifiers only) on both TabularStore backends (issue 33).
import test from 'ava';
import { tabularBackends } from '../../testing/tabular-backends.js';
import { databaseUsername, DatabaseUsers } from './database-users.js';

for (const backend of tabularBackends(test)) {
  test(`${backend.name}: a database user is made, its password reset, looked up by name; bad passwords are refused`, async (t) => {
    const store = await backend.open(t);
    const users = new DatabaseUsers(store);
    await users.init();
    t.false(await users.has('org-1'));
    await users.configure('org-1', 'first password');
    const first = (await users.lookup(databaseUsername('org-1')))!;
    await users.configure('org-1', 'second password');
    const second = (await users.lookup(databaseUsername('org-1')))!;
    t.is(second.organizationId, 'org-1');
    t.is(second.scram.iterations, 4096);
    t.not(second.scram.storedKey, first.scram.storedKey, 'the reset replaced the verifier');
    t.true(await users.has('org-1'));
    t.is((await store.query('SELECT count(*) AS n FROM query_database_users'))[0].n, 1n);
    t.is(await users.lookup('db-user-nobody'), null);
    await t.throwsAsync(users.configure('org-1', 'short'), { message: /at least 8 characters/ });
  });
}
