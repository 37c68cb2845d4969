// The DuckDB instance's resource settings, from the environment of the process that opens the store.
// DuckDB holds them per instance (per database file in this process), not per query: memory_limit bounds
// the buffer pool that every query, ingest and data API call shares; sorts, joins and aggregates past it
// spill to temp_directory, and what cannot spill fails with an Out of Memory error.
//   PLATFORM_DUCKDB_MEMORY_MB     memory_limit (default 768)
//   PLATFORM_DUCKDB_THREADS       worker threads (default: half the CPU cores, at least 1)
//   PLATFORM_DUCKDB_TEMP_MAX_MB   max_temp_directory_size, the spill space (default 4096)
import { cpus } from 'node:os';
import { join } from 'node:path';

function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

export interface DuckDBResourceSettings {
  memoryMb: number;
  threads: number;
  tempMaxMb: number;
  tempDirectory: string;
}

export function duckdbResourceSettings(dataDir: string, env: NodeJS.ProcessEnv = process.env): DuckDBResourceSettings {
  return {
    memoryMb: envInt(env, 'PLATFORM_DUCKDB_MEMORY_MB', 768),
    threads: envInt(env, 'PLATFORM_DUCKDB_THREADS', Math.max(1, Math.floor(cpus().length / 2))),
    tempMaxMb: envInt(env, 'PLATFORM_DUCKDB_TEMP_MAX_MB', 4096),
    tempDirectory: join(dataDir, 'duckdb-tmp'),
  };
}

/** The instance configuration for DuckDBInstance.create. */
export function duckdbConfig(s: DuckDBResourceSettings): Record<string, string> {
  return {
    memory_limit: `${s.memoryMb}MB`,
    threads: String(s.threads),
    temp_directory: s.tempDirectory,
    max_temp_directory_size: `${s.tempMaxMb}MB`,
    // Give freed memory back to the system instead of keeping it in the allocator's caches: without
    // this the RSS stays at its peak after a big query, and the memory guard would see that as in use.
    allocator_flush_threshold: '32MB',
    allocator_background_threads: 'true',
  };
}
