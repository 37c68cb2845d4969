// A module that ships the .proto of its own API: platform-server serves the service, forwards calls to
// the module's driver worker, and lists the service through reflection. The example is
// plugins/examples/widget, called here with a client built from its own widget.proto.
import test from 'ava';
import { credentials, loadPackageDefinition, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { listServices } from '../server/testing/reflection.js';
import { eventually, spawnRuntime } from '../server/testing/spawn-runtime.js';

const WIDGET = fileURLToPath(new URL('../../plugins/examples/widget/', import.meta.url));

type Unary = (request: object, callback: (err: ServiceError | null, response: Record<string, unknown>) => void) => void;
type WidgetClient = Client & { Spin: Unary; GetState: Unary; Stop: Unary };

function widgetClient(address: string): WidgetClient {
  const definition = loadSync(join(WIDGET, 'widget.proto'), { keepCase: false, longs: Number, defaults: true });
  const pkg = loadPackageDefinition(definition) as never as { acme: { widget: { v1: { WidgetService: new (a: string, c: unknown) => WidgetClient } } } };
  return new pkg.acme.widget.v1.WidgetService(address, credentials.createInsecure());
}

const ask = (method: Unary, client: WidgetClient, request: object) =>
  new Promise<Record<string, unknown>>((resolve, reject) => method.call(client, request, (err, res) => (err ? reject(err) : resolve(res))));

test('a module-defined API is served, forwarded to the driver, stopped by StopAll, and listed by reflection', async (t) => {
  const plugins = mkdtempSync(join(tmpdir(), 'plugins-'));
  cpSync(WIDGET, join(plugins, 'widget'), { recursive: true });
  const runtime = await spawnRuntime(
    {
      modules: [{ module_id: 'acme:widget', version: '0.1.0' }],
      components: [
        { name: 'w1', api: 'acme:component:widget', model: 'acme:widget:spinner', attributes: { color: 'blue' } },
        { name: 'w2', api: 'acme:component:widget', model: 'acme:widget:spinner' },
        { name: 'thermo', api: 'core:component:sensor', model: 'fake' },
      ],
    },
    { env: { PLATFORM_PLUGINS_DIR: plugins } },
  );
  t.teardown(() => runtime.stop());
  const client = widgetClient(runtime.address);
  t.teardown(() => client.close());

  // The resources are built by the module's worker; the first calls may find them still configuring.
  await eventually(
    () => ask(client.Spin, client, { name: 'w1', turns: 3 }),
    (r) => r.totalTurns === 3,
  );
  t.deepEqual(await ask(client.Spin, client, { name: 'w1', turns: 4 }), { totalTurns: 7 });
  t.deepEqual(await ask(client.GetState, client, { name: 'w1' }), { totalTurns: 7, color: 'blue', spinning: true });
  // Each resource has its own driver.
  t.deepEqual(await ask(client.GetState, client, { name: 'w2' }), { totalTurns: 0, color: 'red', spinning: false });
  // module.json declares Stop: StopAll reaches the module's actuator too.
  await new Promise<void>((resolve, reject) =>
    new RobotServiceClient(runtime.address, credentials.createInsecure()).stopAll({}, (err) => (err ? reject(err) : resolve())),
  );
  t.false((await ask(client.GetState, client, { name: 'w1' })).spinning);

  const bad = (await t.throwsAsync(ask(client.Spin, client, { name: 'w1', turns: -1 }))) as ServiceError;
  t.is(bad.code, status.INVALID_ARGUMENT);
  t.regex(bad.details, /turns -1: must be a whole number, at least 0/);
  const missing = (await t.throwsAsync(ask(client.Spin, client, { name: 'nope', turns: 1 }))) as ServiceError;
  t.is(missing.code, status.NOT_FOUND);
  const wrongApi = (await t.throwsAsync(ask(client.Spin, client, { name: 'thermo', turns: 1 }))) as ServiceError;
  t.regex(wrongApi.details, /resource "thermo" is a core:component:sensor, not a acme:component:widget/);

  const services = await listServices(runtime.address);
  t.true(services.includes('acme.widget.v1.WidgetService'), services.join(', '));
  t.true(services.includes('platform.robot.v1.RobotService'));
});
