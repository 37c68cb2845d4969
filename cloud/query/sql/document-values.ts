// Turns DuckDB result values into plain document values that BSON can encode and the client can decode:
// JSON columns become nested documents, MAPs with text keys become documents, 64-bit integers become
// numbers when they fit (bigint otherwise, which BSON stores as Int64), and times/intervals become text.
import { DuckDBTypeId, JSDuckDBValueConverter, type DuckDBDataChunk, type DuckDBType, type DuckDBValueConverter, type JS } from '@duckdb/node-api';

const toDocumentValue: DuckDBValueConverter<JS> = (value, type, converter) => {
  if (value === null) return null;
  if (type.alias === 'JSON') return JSON.parse(String(value)) as JS;
  switch (type.typeId) {
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_NS:
    case DuckDBTypeId.TIME_TZ:
    case DuckDBTypeId.INTERVAL:
      return String(value);
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM: {
      const big = JSDuckDBValueConverter(value, type, converter) as bigint;
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
    case DuckDBTypeId.MAP: {
      const entries = JSDuckDBValueConverter(value, type, converter) as { key: JS; value: JS }[];
      if (entries.every((e) => typeof e.key === 'string')) {
        return Object.fromEntries(entries.map((e) => [e.key as string, e.value])) as JS;
      }
      return entries as unknown as JS;
    }
    default:
      return JSDuckDBValueConverter(value, type, converter);
  }
};

/** The result's column layout; JSON-ness comes from the result because chunk vectors drop type aliases. */
export interface ResultColumns {
  names: readonly string[];
  json: readonly boolean[];
}

export function resultColumns(result: { deduplicatedColumnNames(): string[]; columnTypes(): DuckDBType[] }): ResultColumns {
  return { names: result.deduplicatedColumnNames(), json: result.columnTypes().map((t) => t.alias === 'JSON') };
}

/** Converts one result chunk to documents keyed by column name. SQL NULLs stay as null fields. */
export function chunkToDocuments(chunk: DuckDBDataChunk, layout: ResultColumns): Record<string, unknown>[] {
  const columnNames = layout.names;
  const columns = chunk.convertColumns(toDocumentValue);
  layout.json.forEach((isJson, col) => {
    if (isJson) columns[col] = columns[col].map((v) => (v === null ? null : (JSON.parse(v as string) as JS)));
  });
  const docs: Record<string, unknown>[] = new Array(chunk.rowCount);
  for (let row = 0; row < chunk.rowCount; row++) {
    const doc: Record<string, unknown> = {};
    for (let col = 0; col < columnNames.length; col++) doc[columnNames[col]] = columns[col][row];
    docs[row] = doc;
  }
  return docs;
}
