// Registration of cloud extensions: a duplicate name or a colliding admin action throws before any
// extension starts, naming both owners; distinct ones are all registered after the core's actions.
import test from 'ava';
import { coreAdminActions } from '../admin/actions.js';
import { registerExtensions, type CloudExtension } from './extension-contract.js';

const noop = async () => 'ok';
const ext = (name: string, actions: string[] = []): CloudExtension => ({
  name,
  start: () => undefined,
  adminActions: Object.fromEntries(actions.map((a) => [a, noop])),
});

test('distinct extensions register every admin action after the core ones', (t) => {
  const actions = registerExtensions([ext('a', ['a.one']), ext('b', ['b.one', 'b.two'])], coreAdminActions);
  t.deepEqual(Object.keys(actions), [...Object.keys(coreAdminActions), 'a.one', 'b.one', 'b.two']);
  t.is(actions['b.two'], noop);
});

test('a duplicate extension name is rejected at registration', (t) => {
  const error = t.throws(() => registerExtensions([ext('query'), ext('query')], {}));
  t.is(error?.message, 'cloud extension query: the name is already registered; extension names must be unique');
});

test('an admin action that another extension defines is rejected, naming both', (t) => {
  const error = t.throws(() => registerExtensions([ext('a', ['shared.action']), ext('b', ['shared.action'])], {}));
  t.is(error?.message, 'cloud extension b: admin action shared.action is already defined by extension a; admin action names must be unique');
});

test('an admin action that the core defines is rejected', (t) => {
  const core = Object.keys(coreAdminActions)[0];
  const error = t.throws(() => registerExtensions([ext('a', [core])], coreAdminActions));
  t.is(error?.message, `cloud extension a: admin action ${core} is already defined by the core admin actions; admin action names must be unique`);
});
