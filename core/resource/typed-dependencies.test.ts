// The typed dependency seam at config time: a dependency that a model declares with its API must name
// a resource of that API, or the config is an error of the dependent resource that names the field and
// the rule; a bare (untyped) dependency accepts any API.
import test from 'ava';
import * as z from 'zod';
import { BOARD_API } from '../../plugins/apis/board.js';
import { CAMERA_API } from '../../plugins/apis/camera.js';
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import { defineModel } from '../../plugins/contract.js';
import { parseResourceEntries } from '../config/resource-entry.js';
import { ModelRegistry } from './model-registry.js';
import { resolveResources } from './resolve-resources.js';

const driver = new URL('./nowhere.js', import.meta.url);
const registry = new ModelRegistry();
registry.register(defineModel({ api: BOARD_API, model: 'b', attributes: z.object({}), driver }));
registry.register(defineModel({ api: SENSOR_API, model: 's', attributes: z.object({}), driver }));
registry.register(defineModel({ api: CAMERA_API, model: 'c', attributes: z.object({}), driver }));
registry.register(
  defineModel({
    api: 'core:component:motor',
    model: 'typed',
    attributes: z.object({ board: z.string() }),
    implicitDependencies: (a) => [{ name: a.board, api: BOARD_API, field: 'board' }],
    driver,
  }),
);
registry.register(
  defineModel({ api: 'core:component:motor', model: 'untyped', attributes: z.object({ board: z.string() }), implicitDependencies: (a) => [a.board], driver }),
);

function resolve(components: unknown[]) {
  return new Map(resolveResources(parseResourceEntries(components, []), registry).map((r) => [r.key, r]));
}

const base = [
  { name: 'board1', api: BOARD_API, model: 'b' },
  { name: 'thermo', api: SENSOR_API, model: 's' },
];

test('a dependency of the declared API resolves, with the name among the dependencies', (t) => {
  const motor = resolve([...base, { name: 'm', api: 'core:component:motor', model: 'typed', attributes: { board: 'board1' } }]).get('m')!;
  t.is(motor.error, undefined);
  t.deepEqual(motor.dependencies, ['board1']);
});

test('a motor whose board names a sensor is a config error of the motor naming the field and the rule', (t) => {
  const resolved = resolve([...base, { name: 'm', api: 'core:component:motor', model: 'typed', attributes: { board: 'thermo' } }]);
  t.is(resolved.get('m')!.error, 'components[2].attributes.board: must name a core:component:board; "thermo" is a core:component:sensor');
  t.is(resolved.get('thermo')!.error, undefined, 'the sensor itself is fine');
});

test('an untyped dependency accepts any API, as before', (t) => {
  const motor = resolve([...base, { name: 'm', api: 'core:component:motor', model: 'untyped', attributes: { board: 'thermo' } }]).get('m')!;
  t.is(motor.error, undefined);
});
