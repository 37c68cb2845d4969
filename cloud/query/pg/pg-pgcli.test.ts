// pgcli (Debian's pgcli 3.5, on psycopg 3 and pgspecial) against a live endpoint, driven through its
// standard input: its connect-time catalog queries, a query, \dt, \df and a refused catalogue relation.
// Another organisation's data and other catalogue entries stay invisible.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PASSWORD_A, SECRET_OF_B, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

let te: TestEndpoint;
let home: string;

test.before(async () => {
  te = await startTestEndpoint();
  home = mkdtempSync(join(tmpdir(), 'pgcli-home-')); // pgcli writes its config, history and log under HOME
});
test.after.always(async () => {
  await te?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Runs pgcli with `input` on its standard input and returns everything it printed. */
function pgcli(input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('pgcli', ['-h', '127.0.0.1', '-p', String(te.port), '-u', USER_A, '-d', 'sensorData', '--less-chatty', '--row-limit', '0'], {
      env: { ...process.env, HOME: home, PGPASSWORD: PASSWORD_A, TERM: 'dumb', PAGER: 'cat' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out.replace(/\r/g, ''));
    });
    child.stdin.end(input);
  });
}

test('pgcli connects, runs a query, \\dt and \\df, and refuses other catalogue relations naming the rule', async (t) => {
  const out = await pgcli(
    [
      'SELECT component_name, count(*) FROM readings GROUP BY 1 ORDER BY 1;',
      '\\dt',
      '\\df',
      'SELECT count(*) AS seen FROM readings WHERE component_name = ' + `'${SECRET_OF_B}';`,
      'SELECT * FROM pg_stat_activity;',
      '',
    ].join('\n'),
  );
  // The query: count(*) is headed count, with org-a's rows.
  t.regex(out, /\|\s*component_name\s*\|\s*count\s*\|/);
  t.regex(out, /\|\s*hygro\s*\|\s*1\s*\|/);
  t.regex(out, /\|\s*thermo\s*\|\s*2\s*\|/);
  // \dt lists exactly readings, owned by the organisation's user.
  t.regex(out, new RegExp(`\\|\\s*public\\s*\\|\\s*readings\\s*\\|\\s*table\\s*\\|\\s*${USER_A}\\s*\\|`));
  // \df answers (no functions) instead of failing.
  t.notRegex(out, /pg_get_function_arguments\(\) is refused/);
  // Another organisation's rows are not there, and its component is counted 0.
  t.regex(out, /\|\s*seen\s*\|[\s\S]*?\|\s*0\s*\|/);
  t.notRegex(out, new RegExp(`\\|\\s*${SECRET_OF_B}\\s*\\|`));
  // Its background catalog queries (completion refresh: schemas, tables, columns, functions, types) all answer.
  t.notRegex(out, /Traceback/);
  // Another catalogue relation is refused with the sandbox's rule.
  t.regex(out, /table "pg_stat_activity": only "readings" and your own CTEs can be read/);
});
