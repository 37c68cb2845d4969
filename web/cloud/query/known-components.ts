// The components that have readings in the organisation, for the filters' suggestions: one small SQL
// query (names, types and counts) through the same TabularDataBySQL the console uses.
import { deserialize } from 'bson';
import { queryApi } from '../api/query.js';
import type { ViewProps } from '../views.js';

export interface KnownComponent {
  name: string;
  type: string;
  rows: number;
}

const SQL = 'SELECT component_name, component_type, count(*)::INTEGER AS n FROM readings GROUP BY ALL ORDER BY component_name, component_type LIMIT 500';

export async function knownComponents(props: Pick<ViewProps, 'api' | 'orgId'>): Promise<KnownComponent[]> {
  const reply = await props.api.call(queryApi.tabularDataBySql, { organizationId: props.orgId, sqlQuery: SQL });
  return reply.rawData.map((bytes) => {
    const row = deserialize(bytes, { promoteValues: true }) as Record<string, unknown>;
    return { name: String(row.component_name ?? ''), type: String(row.component_type ?? ''), rows: Number(row.n ?? 0) };
  });
}

/** The distinct types, each in the short form (`sensor`) and the API form (`core:component:sensor`) when known. */
export function typeSuggestions(components: KnownComponent[]): string[] {
  const out = new Set<string>();
  for (const { type } of components) {
    if (!type) continue;
    out.add(type.split(':').at(-1)!);
    out.add(type.includes(':') ? type : `core:component:${type}`);
  }
  return [...out].sort();
}
