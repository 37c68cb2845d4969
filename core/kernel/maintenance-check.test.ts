import test from 'ava';
import { DriverError } from '../../plugins/errors.js';
import { checkMaintenance } from './maintenance-check.js';

const window = { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'ok' };
const access = (read: () => Record<string, unknown>) => ({
  resource: (name: string, api: string) => {
    if (name !== 'gate' || api !== 'core:component:sensor') throw new DriverError('NOT_FOUND', `no resource named "${name}"`);
    return { getReadings: async () => read() } as never;
  },
});

test('true allows and false blocks', async (t) => {
  t.true(
    (
      await checkMaintenance(
        access(() => ({ ok: true })),
        window,
      )
    ).allowed,
  );
  const blocked = await checkMaintenance(
    access(() => ({ ok: false })),
    window,
  );
  t.false(blocked.allowed);
  t.is(blocked.reason, 'maintenance sensor reading ok is false');
});

test('a missing or non-boolean key allows maintenance', async (t) => {
  t.true(
    (
      await checkMaintenance(
        access(() => ({})),
        window,
      )
    ).allowed,
  );
  t.true(
    (
      await checkMaintenance(
        access(() => ({ ok: 'yes' })),
        window,
      )
    ).allowed,
  );
});

test('a read error blocks maintenance and says why', async (t) => {
  const failing = await checkMaintenance(
    access(() => {
      throw new Error('i2c timeout');
    }),
    window,
  );
  t.false(failing.allowed);
  t.is(failing.reason, 'maintenance sensor core:component:sensor/gate could not be read: i2c timeout');
  const absent = await checkMaintenance(
    access(() => ({})),
    { ...window, sensor_name: 'core:component:sensor/other' },
  );
  t.false(absent.allowed);
  t.regex(absent.reason, /could not be read: no resource named "other"/);
});
