// Test preload (NODE_OPTIONS=--import=<this file>, with MODULE_WATCH_FILE set): appends to that file the
// path of every module the process (and its worker threads) loads from an @opentelemetry package, for
// ES modules through a resolve hook and for CommonJS through Module._load, so a test can tell that a
// program with telemetry off loaded none.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.MODULE_WATCH_FILE;
if (file) {
  const note = (what) => {
    if (String(what).includes('@opentelemetry')) appendFileSync(file, `${what}\n`);
  };
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    note(request);
    return load.call(this, request, parent, isMain);
  };
  const hook = `
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      if (result.url.includes('@opentelemetry')) appendFileSync(${JSON.stringify(file)}, result.url + '\\n');
      return result;
    }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
}
