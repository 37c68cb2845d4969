// The fields of an MQL reading document and the tabular_data column each one comes from. Every document
// has every field (SQL NULL becomes null), which is what lets $match/$exists/$project push down exactly.

export type FieldKind = 'string' | 'date' | 'tags' | 'json' | 'id';

export const READING_FIELDS: Readonly<Record<string, { column: string; kind: FieldKind }>> = {
  _id: { column: 'seq', kind: 'id' },
  organization_id: { column: 'organization_id', kind: 'string' },
  location_id: { column: 'location_id', kind: 'string' },
  robot_id: { column: 'robot_id', kind: 'string' },
  robot_name: { column: 'robot_name', kind: 'string' },
  part_id: { column: 'part_id', kind: 'string' },
  part_name: { column: 'part_name', kind: 'string' },
  component_type: { column: 'component_type', kind: 'string' },
  component_name: { column: 'component_name', kind: 'string' },
  method_name: { column: 'method_name', kind: 'string' },
  time_requested: { column: 'time_requested', kind: 'date' },
  time_received: { column: 'time_received', kind: 'date' },
  time_synced: { column: 'time_synced', kind: 'date' },
  tags: { column: 'tags', kind: 'tags' },
  additional_parameters: { column: 'method_parameters', kind: 'json' },
  data: { column: 'data', kind: 'json' },
};

export const FIELD_NAMES = Object.keys(READING_FIELDS);
