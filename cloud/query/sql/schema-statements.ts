// `SHOW TABLES` and `DESCRIBE readings`, which people type first in a SQL console, are not SELECTs and the
// sandbox refuses every other statement. They are recognised here as whole texts (never parsed further or
// passed on) and answered by fixed, read-only statements over the organisation's own `readings` view, so
// they show exactly what a query can read: one table and its columns.
import { invalidArgument } from '../../../core/serving/status-error.js';
import { READINGS } from './statement-inspector.js';

const SHOW_TABLES = /^(?:show\s+(?:all\s+)?tables|show\s+databases)$/i;
const DESCRIBE = /^(?:describe|desc|show(?:\s+columns\s+from)?)\s+(?:(?:"?main"?|"?memory"?)\.)?("?)([A-Za-z_][\w]*)\1$/i;

/**
 * The trusted SQL that answers a schema statement, or undefined when `sql` is not one (it then goes through
 * the sandbox as usual). DESCRIBE of any table but readings is refused naming the one table there is.
 */
export function schemaStatement(sql: string): string | undefined {
  const text = sql.trim().replace(/;\s*$/, '').trim().replace(/\s+/g, ' ');
  if (SHOW_TABLES.test(text)) return `SELECT '${READINGS}' AS name`;
  if (/^(describe|desc)$/i.test(text)) return `SELECT column_name, column_type FROM (DESCRIBE ${READINGS})`;
  const match = DESCRIBE.exec(text);
  if (!match) return undefined;
  // SHOW <word> is also how settings are read (SHOW timezone): only a table name is answered here.
  if (match[2].toLowerCase() !== READINGS) {
    if (/^show /i.test(text) && !/^show columns/i.test(text)) return undefined;
    throw invalidArgument(`sql_query: there is no table ${JSON.stringify(match[2])}; the one table is ${READINGS} (SHOW TABLES, DESCRIBE ${READINGS})`);
  }
  return `SELECT column_name, column_type FROM (DESCRIBE ${READINGS})`;
}
