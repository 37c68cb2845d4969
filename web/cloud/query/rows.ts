// Query results as a table: documents (decoded BSON or Structs) flattened into rows whose columns are
// dotted paths (`readings.temperature`), in first-seen order. The chart takes its series from the same
// rows: numeric columns, against a time column when there is one.

export type Cell = string | number | boolean | Date | null;
export type Row = Record<string, Cell>;

export interface Table {
  columns: string[];
  rows: Row[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || value instanceof Date || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A value that is not a plain object, as one cell: arrays and BSON types (ObjectId, Decimal128, ...) as text. */
function cellOf(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value instanceof Date) return value;
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return JSON.stringify(value);
  // BSON Long, Int32, Double and Decimal128 render their number with toString; ObjectId with its hex.
  const text = String(value);
  const asNumber = Number(text);
  return text !== '' && Number.isFinite(asNumber) && /^(Long|Int32|Double|Decimal128)$/.test((value as { _bsontype?: string })._bsontype ?? '')
    ? asNumber
    : text;
}

function flattenInto(out: Row, prefix: string, value: unknown): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [key, inner] of Object.entries(value)) flattenInto(out, prefix ? `${prefix}.${key}` : key, inner);
  } else {
    out[prefix || 'value'] = isPlainObject(value) ? '{}' : cellOf(value);
  }
}

export function flatten(document: Record<string, unknown>): Row {
  const out: Row = {};
  flattenInto(out, '', document);
  return out;
}

export function tableOf(documents: Record<string, unknown>[]): Table {
  const columns: string[] = [];
  const seen = new Set<string>();
  const rows = documents.map((d) => {
    const row = flatten(d);
    for (const c of Object.keys(row)) {
      if (!seen.has(c)) {
        seen.add(c);
        columns.push(c);
      }
    }
    return row;
  });
  return { columns, rows };
}

/** Columns whose every present value is a finite number (and at least one is present). */
export function numericColumns(table: Table): string[] {
  return table.columns.filter((c) => {
    let any = false;
    for (const r of table.rows) {
      const v = r[c];
      if (v === null || v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v)) return false;
      any = true;
    }
    return any;
  });
}

/** The time of a cell: a Date, or text in ISO 8601 form (what SQL's strftime and JSON give). */
export function timeOf(v: Cell | undefined): number | undefined {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(v)) {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/** The first column every present value of which is a time, preferring ones named like a time. */
export function timeColumn(table: Table): string | undefined {
  const candidates = table.columns.filter((c) => {
    let any = false;
    for (const r of table.rows) {
      const v = r[c];
      if (v === null || v === undefined) continue;
      if (timeOf(v) === undefined) return false;
      any = true;
    }
    return any;
  });
  return candidates.find((c) => /time|date|^t$/i.test(c)) ?? candidates[0];
}

export function formatCell(v: Cell | undefined): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

export interface Series {
  column: string;
  points: [number, number][];
}

/** Points of the chosen numeric columns against the time column (or the row number without one). */
export function seriesOf(table: Table, yColumns: string[], xColumn: string | undefined): Series[] {
  return yColumns.map((column) => ({
    column,
    points: table.rows.flatMap((r, i): [number, number][] => {
      const y = r[column];
      const x = xColumn ? timeOf(r[xColumn]) : i;
      return typeof y === 'number' && Number.isFinite(y) && x !== undefined ? [[x, y]] : [];
    }),
  }));
}
