// SQL literals for values taken from a caller's MQL. Only these helpers turn caller values into SQL text.
import { sqlString } from '../sql/readings-view.js';

export { sqlString };

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date) && Object.getPrototypeOf(v) === Object.prototype;

export const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export const isValidDate = (v: unknown): v is Date => v instanceof Date && Number.isFinite(v.getTime());

export const sqlNumber = (n: number) => `(${String(n)})::DOUBLE`;

export const sqlTimestamp = (d: Date) => `${sqlString(d.toISOString())}::TIMESTAMPTZ`;

export const sqlStringList = (values: string[]) => `[${values.map(sqlString).join(', ')}]::VARCHAR[]`;
