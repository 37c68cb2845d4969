// The one error-to-status mapping, used by the runtime's and the cloud's servers.
import test from 'ava';
import { status } from '@grpc/grpc-js';
import { DriverError } from '../../plugins/errors.js';
import { ConfigError } from '../../plugins/validation.js';
import { invalidArgument, toServiceError, toStatusError } from './status-error.js';

test('a StatusError keeps its code and message', (t) => {
  const err = invalidArgument('name: is required');
  t.is(toStatusError(err), err);
  t.like(toServiceError(err), { code: status.INVALID_ARGUMENT, details: 'name: is required' });
});

test("a DriverError's code name becomes that status, also after crossing a thread as a plain object", (t) => {
  t.like(toStatusError(new DriverError('OUT_OF_RANGE', 'pin 99: must be 0..40')), { code: status.OUT_OF_RANGE, message: 'pin 99: must be 0..40' });
  t.like(toStatusError(Object.assign(new Error('resource "m" is not ready'), { code: 'UNAVAILABLE' })), { code: status.UNAVAILABLE });
});

test('a ConfigError is INVALID_ARGUMENT, naming the path and the rule', (t) => {
  t.like(toStatusError(new ConfigError('attributes.board', 'must be a string')), {
    code: status.INVALID_ARGUMENT,
    message: 'attributes.board: must be a string',
  });
});

test("a downstream call's numeric status passes through; anything else is INTERNAL", (t) => {
  t.like(toStatusError(Object.assign(new Error('deadline'), { code: status.DEADLINE_EXCEEDED })), { code: status.DEADLINE_EXCEEDED });
  t.like(toStatusError(Object.assign(new Error('no such file'), { code: 'ENOENT' })), { code: status.INTERNAL, message: 'no such file' });
  t.like(toServiceError('boom'), { code: status.INTERNAL, details: 'boom' });
});
