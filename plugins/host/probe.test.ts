// Loading entrypoints: first in a throwaway worker, so that a hostile or broken entrypoint ends only that
// worker; then the declared models must match module.json.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadModuleDefinition } from './entrypoint.js';
import { readManifest } from './manifest.js';
import { probeEntrypoint } from './probe.js';
import { runnableModule } from './transpile.js';

const fixture = (name: string) => readManifest(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)));
const example = (name: string) => readManifest(fileURLToPath(new URL(`../examples/${name}`, import.meta.url)));

test('a good entrypoint passes the probe and then loads on the main thread with its models', async (t) => {
  const pkg = example('weather');
  const url = pathToFileURL(pkg.entrypoint).href;
  const probed = await probeEntrypoint(url, pkg.manifest, 60_000);
  t.deepEqual(probed.models, [
    { api: 'core:component:sensor', model: 'acme:weather:thermometer', driver: pathToFileURL(join(pkg.dir, 'thermometer.js')).href },
  ]);
  const definition = await loadModuleDefinition(`${url}?load=1`, pkg.manifest);
  t.is(definition.models[0].model, 'acme:weather:thermometer');
  t.is(definition.models[0].attributes.safeParse({}).success, true);
  t.is(definition.models[0].attributes.safeParse({ base_c: 200 }).success, false);
});

test('an entrypoint that exits, throws, or lies about its models is refused with the reason', async (t) => {
  const exits = fixture('exits');
  const ended = await t.throwsAsync(probeEntrypoint(pathToFileURL(exits.entrypoint).href, exits.manifest, 60_000), { name: 'ModuleLoadError' });
  t.regex(ended!.message, /ended the worker that loaded it/);
  t.is(process.exitCode, undefined); // this process is untouched

  const flaky = fixture('flaky');
  // The fixture refuses to load while a file named FAIL exists; here it does not, so it loads.
  t.truthy(await probeEntrypoint(pathToFileURL(flaky.entrypoint).href, flaky.manifest, 60_000));

  const liar = fixture('liar');
  const lie = await t.throwsAsync(probeEntrypoint(pathToFileURL(liar.entrypoint).href, liar.manifest, 60_000), { name: 'ModuleLoadError' });
  t.regex(lie!.message, /module\.json models: does not list acme:liar:other for core:component:sensor, which the entrypoint declares/);
});

test('a TypeScript module is transpiled into a cache folder and loads like JavaScript', async (t) => {
  const pkg = fixture('typed');
  const cache = mkdtempSync(join(tmpdir(), 'module-cache-'));
  const { entrypoint: entry, root } = await runnableModule(pkg, cache);
  t.true(entry.startsWith(root) && root.startsWith(cache) && entry.endsWith('index.js'));
  t.is((await runnableModule(pkg, cache)).entrypoint, entry, 'reused while the sources are unchanged');
  const probed = await probeEntrypoint(pathToFileURL(entry).href, pkg.manifest, 60_000);
  t.is(probed.models[0].model, 'acme:typed:gauge');
  t.true(probed.models[0].driver.startsWith(pathToFileURL(cache).href) && probed.models[0].driver.endsWith('/driver.js'));
});
