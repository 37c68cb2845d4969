// A data dir written before ML training moved into the cloud's tables (issue 33) kept its jobs, models
// and scripts as files under <data-dir>/mltraining/: jobs/<id>.json and <id>.logs.jsonl,
// models/<org>/<artefact id>/{manifest.json,files/}, registry/<org>/<item>/<version>/{manifest.json,
// package/}. The embedded default imports them once at start: rows into the tables, files and script
// packages (packed again as tar.gz) into the blob store. Each folder is then moved to
// <data-dir>/mltraining/imported/, not deleted, so an import that went wrong loses nothing; an item
// whose row exists already (an import cut short) is skipped.
import { mkdir, readdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { c as createTar } from 'tar';
import type { StoreWithBlobs } from '../store/tabular.js';
import { insertModelRow, type ModelArtefact } from './model-artefacts.js';
import { insertJobRow } from './job-store.js';
import type { TrainingScript } from './script-registry.js';
import { trainingBlobPrefix } from './training-tables.js';
import type { TrainingJob, TrainingLogEntry } from './training-job.js';

export interface LegacyImportReport {
  jobs: number;
  models: number;
  scripts: number;
  /** Files that could not be read, with why (they stay in the moved folder). */
  skipped: string[];
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
const list = (path: string) => readdir(path).catch(() => [] as string[]);

async function importJobs(store: StoreWithBlobs, folder: string, report: LegacyImportReport): Promise<void> {
  for (const name of (await list(folder)).filter((n) => n.endsWith('.json'))) {
    let job: TrainingJob;
    try {
      job = JSON.parse(await readFile(join(folder, name), 'utf8')) as TrainingJob;
    } catch (err) {
      report.skipped.push(`jobs/${name}: ${(err as Error).message}`);
      continue;
    }
    const entries: TrainingLogEntry[] = [];
    const log = await readFile(join(folder, `${job.id}.logs.jsonl`), 'utf8').catch(() => '');
    for (const line of log.split('\n')) {
      try {
        if (line) entries.push(JSON.parse(line) as TrainingLogEntry);
      } catch {
        // A torn last line after a crash: the entries before it are intact.
      }
    }
    const imported = await store.transact(async (tx) => {
      if ((await tx.query('SELECT 1 FROM training_jobs WHERE id = ?', [job.id])).length) return false;
      await insertJobRow(tx, job);
      for (const [position, e] of entries.entries()) {
        await tx.execute('INSERT INTO training_job_logs VALUES (?, ?, ?, ?, ?)', [job.id, position, e.level, e.time, e.message]);
      }
      return true;
    });
    if (imported) report.jobs++;
  }
}

/** Every regular file under folder, as '/'-separated paths relative to it. */
async function filesUnder(folder: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory()) found.push(...(await filesUnder(join(folder, entry.name), `${prefix}${entry.name}/`)));
    else if (entry.isFile()) found.push(`${prefix}${entry.name}`);
  }
  return found;
}

async function importModels(store: StoreWithBlobs, folder: string, report: LegacyImportReport): Promise<void> {
  for (const org of await list(folder)) {
    if (org.startsWith('.')) continue; // .staging: never reported as stored
    for (const id of await list(join(folder, org))) {
      const text = await readFile(join(folder, org, id, 'manifest.json'), 'utf8').catch(() => undefined);
      if (!text) continue; // an artefact whose manifest never landed was not reported as stored
      const artefact = JSON.parse(text) as ModelArtefact;
      if ((await store.query('SELECT 1 FROM training_models WHERE id = ?', [artefact.id])).length) continue;
      for (const file of await filesUnder(join(folder, org, id, 'files'))) {
        await store.blobs.put(
          `${trainingBlobPrefix}models/${artefact.organizationId}/${artefact.id}/${file}`,
          await readFile(join(folder, org, id, 'files', file)),
        );
      }
      await insertModelRow(store, artefact);
      report.models++;
    }
  }
}

async function importScripts(store: StoreWithBlobs, folder: string, report: LegacyImportReport): Promise<void> {
  for (const org of await list(folder)) {
    if (org.startsWith('.')) continue;
    for (const item of await list(join(folder, org))) {
      for (const version of await list(join(folder, org, item))) {
        const base = join(folder, org, item, version);
        const text = await readFile(join(base, 'manifest.json'), 'utf8').catch(() => undefined);
        if (!text) continue;
        const script = JSON.parse(text) as TrainingScript;
        const ref = [script.organizationId, script.registryItemId, script.version];
        if ((await store.query('SELECT 1 FROM training_scripts WHERE organization_id = ? AND registry_item_id = ? AND version = ?', ref)).length) continue;
        const files = await filesUnder(join(base, 'package'));
        const chunks: Buffer[] = [];
        const packed = createTar({ gzip: true, cwd: join(base, 'package'), portable: true }, files);
        for await (const chunk of packed) chunks.push(chunk as Buffer);
        const key = `${trainingBlobPrefix}scripts/${script.organizationId}/${script.registryItemId}/${script.version}/imported.tar`;
        await store.blobs.put(key, Buffer.concat(chunks));
        await store.execute('INSERT INTO training_scripts VALUES (?, ?, ?, ?, ?, ?, ?)', [
          ...ref,
          new Date(script.createdOn),
          script.unpackedBytes ?? script.packageSizeBytes,
          key,
          JSON.stringify(script),
        ]);
        report.scripts++;
      }
    }
  }
}

/** Imports what root holds in the file layout of before, then moves those folders to root/imported/. */
export async function importLegacyFiles(store: StoreWithBlobs, root: string): Promise<LegacyImportReport | undefined> {
  const folders = { jobs: join(root, 'jobs'), models: join(root, 'models'), registry: join(root, 'registry') };
  const present = await Promise.all(Object.values(folders).map(exists));
  if (!present.some(Boolean)) return undefined;
  const report: LegacyImportReport = { jobs: 0, models: 0, scripts: 0, skipped: [] };
  await importModels(store, folders.models, report);
  await importScripts(store, folders.registry, report);
  await importJobs(store, folders.jobs, report);
  const done = join(root, 'imported');
  await mkdir(done, { recursive: true });
  for (const [name, path] of Object.entries(folders)) {
    if (await exists(path)) await rename(path, join(done, `${name}-${Date.now()}`));
  }
  return report;
}
