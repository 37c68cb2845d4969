// Spans of the PostgreSQL endpoint, while platform-cloud traces (--otlp-endpoint): each frontend message
// that runs a statement is a SERVER span that starts its own trace (a PostgreSQL client sends no trace
// context): `pg Query` (the simple protocol: prepare and run), `pg Parse` (prepare), `pg Describe` (may
// start a portal's result) and `pg Execute` (run). Its DuckDB work is in children: `duckdb prepare`
// (classifying, inspecting and preparing, admission waits included) and `duckdb execute` (starting the
// result and streaming its rows). The session is an async generator resumed by the socket's reader, not
// one async context, so parents are passed explicitly. A failed statement is an ERROR span carrying its
// SQLSTATE (`db.response.status_code`).
import type { Span } from '@opentelemetry/api';
import { childSpanOf, rootSpan } from '../../../core/serving/telemetry/tracing.js';
import { errorParts } from './session-model.js';

const SPAN_KIND_SERVER = 1;
const STATEMENT_MESSAGES: Record<string, string> = { Q: 'pg Query', P: 'pg Parse', D: 'pg Describe', E: 'pg Execute' };

/** The span of one frontend message (undefined for the others, or while tracing is off). */
export function startMessageSpan(type: string, o: { database: string; backendPid: number }): Span | undefined {
  const name = STATEMENT_MESSAGES[type];
  if (!name) return undefined;
  return rootSpan(name, {
    kind: SPAN_KIND_SERVER,
    attributes: { 'db.system': 'postgresql', 'db.namespace': o.database, 'platform.pg.backend_pid': o.backendPid },
  });
}

/** A child of the message's span for a piece of DuckDB work. */
export function startWorkSpan(parent: Span | undefined, name: 'duckdb prepare' | 'duckdb execute'): Span | undefined {
  return childSpanOf(parent, name, { 'db.system': 'duckdb' });
}

/** The statement's first keyword (SELECT, SHOW, SET, …), as `db.operation.name`. */
export function operationOf(sql: string): string | undefined {
  return /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
}

/** Marks a span failed with the SQLSTATE and message the client is answered with. */
export function failSpan(span: Span | undefined, err: unknown): void {
  if (!span) return;
  const { code, message } = errorParts(err);
  span.setAttribute('db.response.status_code', code);
  span.setStatus({ code: 2, message });
}

/** Ends a span if there is one. */
export function endSpanOf(span: Span | undefined): void {
  span?.end();
}
