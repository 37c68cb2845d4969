// The MQL console's text as aggregation stages (what TabularDataByMQL's `query` takes).
/** The MQL text as aggregation stages, or an error naming `query` and the rule. */
export function parseStages(text: string): Record<string, unknown>[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`query: not JSON (${(err as Error).message})`, { cause: err });
  }
  if (!Array.isArray(parsed) || parsed.some((s) => s === null || typeof s !== 'object' || Array.isArray(s))) {
    throw new Error('query: must be a JSON array of stages, each an object such as {"$match": {...}}');
  }
  return parsed as Record<string, unknown>[];
}
