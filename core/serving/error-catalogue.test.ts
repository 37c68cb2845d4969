// The catalogue mechanism: a class per entry with its stable code, its message from the template, the
// fields it keeps, instanceof and a stack; codes are checked for shape and uniqueness.
import test from 'ava';
import { catalogueCodes, defineError, errorCodeOf } from './error-catalogue.js';

const WidgetError = defineError(
  'CORE_ERR_TEST_WIDGET',
  'WidgetError',
  (field: string, rule: string) => `${field}: ${rule}`,
  (field, rule) => ({ field, rule }),
);

test('an entry makes a class: its code, its name, the message from the template and the fields it keeps', (t) => {
  const err = new WidgetError('widgets[2].size', 'must be at most 10');
  t.true(err instanceof WidgetError);
  t.true(err instanceof Error);
  t.is(err.errorCode, 'CORE_ERR_TEST_WIDGET');
  t.is(WidgetError.errorCode, 'CORE_ERR_TEST_WIDGET');
  t.is(errorCodeOf(err), 'CORE_ERR_TEST_WIDGET');
  t.is(err.name, 'WidgetError');
  t.is(WidgetError.name, 'WidgetError');
  t.is(err.message, 'widgets[2].size: must be at most 10');
  t.is(err.field, 'widgets[2].size');
  t.is(err.rule, 'must be at most 10');
  t.regex(err.stack ?? '', /WidgetError: widgets\[2\]\.size/);
});

test('a class extends like any other: a subclass keeps the code and adds methods', (t) => {
  class Reported extends WidgetError {
    report(): string {
      return `refused: ${this.message}`;
    }
  }
  const err = new Reported('a', 'b');
  t.true(err instanceof WidgetError);
  t.is(err.errorCode, 'CORE_ERR_TEST_WIDGET');
  t.is(err.report(), 'refused: a: b');
});

test('a code must say its side and be upper case; a catalogue declares each code once', (t) => {
  t.throws(() => defineError('WIDGET', 'X', () => ''), { message: /must match/ });
  t.throws(() => defineError('core_err_widget', 'X', () => ''), { message: /must match/ });
  const Again = defineError('CORE_ERR_TEST_WIDGET', 'Again', () => '');
  t.throws(() => catalogueCodes([WidgetError, Again]), { message: /CORE_ERR_TEST_WIDGET is declared twice \(WidgetError and Again\)/ });
  t.deepEqual(catalogueCodes([WidgetError]), ['CORE_ERR_TEST_WIDGET']);
  t.is(errorCodeOf(new Error('plain')), undefined);
  t.is(errorCodeOf(undefined), undefined);
});
