// DriverError carries the resource name across threads: the worker host names the resource in every
// error its driver throws, unless the error already names one.
import test from 'ava';
import { deserializeError, DriverError, serializeError } from './errors.js';

test('a driver error thrown in a worker comes back naming its resource', (t) => {
  const back = deserializeError(serializeError(new DriverError('OUT_OF_RANGE', 'pin 99: must be 0..40'), 'motor1'));
  t.true(back instanceof DriverError);
  t.like(back, { code: 'OUT_OF_RANGE', message: 'pin 99: must be 0..40', resource: 'motor1' });
});

test('a plain error gets the resource too; an error that names one keeps it', (t) => {
  t.like(serializeError(new Error('boom'), 'cam'), { code: 'INTERNAL', message: 'boom', resource: 'cam' });
  t.is(serializeError(new DriverError('UNAVAILABLE', 'not ready', 'board1'), 'motor1').resource, 'board1');
  t.is(serializeError(new Error('boom')).resource, undefined);
});
