// The parts extension of platform-cloud: each part's machine config (revisions, validation), its logs
// (30-day retention) and runtime status; AppService for users, RobotService for machines; and
//   platform-cloud part config set|get, platform-cloud part logs
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { AdminRunner, CloudExtension } from '../kit/extension-contract.js';
import type { TabularStore } from '../store/tabular.js';
import { addAppService } from './app-service.js';
import { ensurePartConfigTables, findPart, latestPartConfig, savePartConfig } from './part-configs.js';
import { checkLevels, PartLogs } from './part-logs.js';
import { PartStatusBook } from './part-status.js';
import { addRobotService } from './robot-service.js';

async function getConfig(store: TabularStore, args: Record<string, unknown>) {
  const part = await findPart(store, String(args.part ?? ''));
  const latest = await latestPartConfig(store, part.id);
  return {
    part_id: part.id,
    revision: latest?.revision ?? 0,
    time: latest?.time.toISOString() ?? null,
    saved_by: latest?.savedBy ?? null,
    config: latest?.config ?? {},
  };
}

async function setConfig(store: TabularStore, args: Record<string, unknown>) {
  const part = await findPart(store, String(args.part ?? ''));
  const saved = await savePartConfig(store, part.id, args.config, 'admin');
  return { part_id: part.id, revision: saved.revision, time: saved.time.toISOString() };
}

async function queryLogs(store: TabularStore, args: Record<string, unknown>) {
  const part = await findPart(store, String(args.part ?? ''));
  const reader = await PartLogs.open(store);
  const since = args.since ? new Date(String(args.since)) : undefined;
  if (since && Number.isNaN(since.getTime())) throw new Error(`--since "${String(args.since)}": must be a time such as 2026-01-31T12:00:00Z`);
  const levels = checkLevels(args.levels as string[] | undefined, '--level');
  const limit = Number(args.limit ?? 100);
  const page = await reader.query(part.id, { levels, start: since, filter: args.grep ? String(args.grep) : undefined, limit });
  return page.logs.reverse().map((e) => ({ time: e.time.toISOString(), level: e.level, logger_name: e.loggerName, message: e.message, fields: e.fields }));
}

function commands(program: Command, admin: AdminRunner): void {
  const part = program.command('part').description('machine parts: their saved machine config and their logs');
  const sub = (parent: Command, name: string, description: string) =>
    parent
      .command(name)
      .description(description)
      .addOption(new Option('--data-dir <dir>', 'data directory of the cloud').default(admin.defaultDataDir))
      .option('--json', 'print the result as JSON');
  const run = async (cmd: Command, action: string, args: Record<string, unknown>, print: (r: unknown) => string) => {
    let result: unknown;
    try {
      result = await admin.run(action, args, (cmd.opts() as { dataDir?: string }).dataDir);
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(1);
    }
    process.stdout.write(`${(cmd.opts() as { json?: boolean }).json ? JSON.stringify(result) : print(result)}\n`);
  };
  const config = part.command('config').description("a part's machine config (the JSON of a local config file, without cloud)");
  const set = sub(config, 'set', 'validate FILE and save it as the next revision; prints the revision')
    .requiredOption('--part <id>', 'part id')
    .argument('<file>', 'machine config JSON file')
    .action(async (file: string, o: { part: string }) => {
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(file, 'utf8'));
      } catch (err) {
        process.stderr.write(`${file}: ${(err as Error).message}\n`);
        process.exit(1);
      }
      await run(set, 'part.config.set', { part: o.part, config: doc }, (r) => String((r as { revision: number }).revision));
    });
  const get = sub(config, 'get', 'print the newest revision of the config')
    .requiredOption('--part <id>', 'part id')
    .action(async (o: { part: string }) => run(get, 'part.config.get', { part: o.part }, (r) => JSON.stringify((r as { config: unknown }).config, null, 2)));
  const logsCmd = sub(part, 'logs', "print a part's log entries (oldest first; the newest --limit)")
    .requiredOption('--part <id>', 'part id')
    .option('--level <level...>', 'only these levels: debug, info, warn, error')
    .option('--since <time>', 'only entries at or after this time (ISO 8601)')
    .option('--grep <text>', 'only entries whose message or logger name contains TEXT (any case)')
    .option('--limit <n>', 'at most this many entries', '100')
    .action(async (o: { part: string; level?: string[]; since?: string; grep?: string; limit: string }) =>
      run(logsCmd, 'part.logs', { part: o.part, levels: o.level, since: o.since, grep: o.grep, limit: Number(o.limit) }, (r) =>
        (r as { time: string; level: string; logger_name: string; message: string; fields: Record<string, unknown> }[])
          .map(
            (e) =>
              `${e.time} ${e.level.toUpperCase().padEnd(5)} ${e.logger_name} ${e.message}${Object.keys(e.fields).length ? ` ${JSON.stringify(e.fields)}` : ''}`,
          )
          .join('\n'),
      ),
    );
}

/**
 * A new parts extension: what start() opens (the log store and its sweeper) lives in this closure, not
 * in the module, so two clouds in one process (as tests start them) never share it.
 */
export function createPartsExtension(): CloudExtension {
  let logs: PartLogs | undefined;
  return {
    name: 'parts',
    async start(ctx) {
      // The cloud's tables (ctx.tables): the DuckDB Store in the embedded default, PostgreSQL in the scale-out mode.
      await ensurePartConfigTables(ctx.tables);
      logs = await PartLogs.open(ctx.tables);
      logs.startSweeping();
      const status = await PartStatusBook.open(ctx.tables);
      addAppService(ctx.server, ctx.tables, ctx.authorizer, logs, status);
      addRobotService(ctx.server, ctx.tables, ctx.authorizer, logs, status);
    },
    stop() {
      logs?.stop();
    },
    commands,
    adminActions: {
      'part.config.set': (store, args) => setConfig(store, args),
      'part.config.get': (store, args) => getConfig(store, args),
      'part.logs': (store, args) => queryLogs(store, args),
    },
  };
}
