// A module's validator or implicitDependencies that throws becomes a ConfigError of that resource.
import test from 'ava';
import * as z from 'zod';
import { defineModel, validateAttributes } from '../contract.js';
import { guardModel } from './guarded-model.js';

const driver = new URL('./fixtures/flaky/driver.js', import.meta.url);

test('a throwing attribute validator becomes a config error naming the model', (t) => {
  const model = guardModel(
    defineModel({
      api: 'core:component:sensor',
      model: 'acme:bad:schema',
      attributes: z.strictObject({
        x: z.number().refine(() => {
          throw new TypeError('oops');
        }),
      }),
      driver,
    }),
  );
  const error = t.throws(() => validateAttributes(model, { x: 1 }, 'components[0].attributes'), { name: 'ConfigError' });
  t.regex(error!.message, /^components\[0\]\.attributes \{"x":1\}: the attribute validator of acme:bad:schema threw: oops$/);
  // Ordinary validation errors are unchanged.
  t.throws(() => validateAttributes(model, { x: 'one' }, 'components[0].attributes'), { message: /components\[0\]\.attributes\.x "one"/ });
});

test('throwing or malformed implicitDependencies become config errors naming the model', (t) => {
  const base = { api: 'core:component:sensor', attributes: z.strictObject({ uses: z.string().optional() }), driver };
  const throwing = guardModel(
    defineModel({
      ...base,
      model: 'acme:bad:deps',
      implicitDependencies: () => {
        throw new Error('no deps today');
      },
    }),
  );
  t.throws(() => validateAttributes(throwing, {}, 'components[0].attributes'), {
    name: 'ConfigError',
    message: 'model acme:bad:deps: its implicitDependencies threw: no deps today',
  });
  const malformed = guardModel(defineModel({ ...base, model: 'acme:bad:shape', implicitDependencies: () => 'board' as never }));
  t.throws(() => validateAttributes(malformed, {}, 'x'), { message: 'model acme:bad:shape: its implicitDependencies must return an array of resource names' });
  const fine = guardModel(defineModel({ ...base, model: 'acme:good:deps', implicitDependencies: (a) => (a.uses ? [a.uses] : []) }));
  t.deepEqual(validateAttributes(fine, { uses: 'board' }, 'x').implicitDependencies, ['board']);
});
