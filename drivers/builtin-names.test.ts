// The names list must name exactly the built-in models, in the same order.
import test from 'ava';
import { BUILTIN_MODEL_NAMES } from './builtin-names.js';
import { builtinModels } from './index.js';

test('BUILTIN_MODEL_NAMES names every built-in model and nothing else', (t) => {
  t.deepEqual(
    BUILTIN_MODEL_NAMES.map(([api, model]) => `${api} ${model}`),
    builtinModels.map((m) => `${m.api} ${m.model}`),
  );
});
