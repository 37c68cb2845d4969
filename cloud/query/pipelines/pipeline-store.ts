// Data pipelines, their runs and their sinks in the cloud's tables, on either TabularStore backend
// (DuckDB: the tables below, made on first use; PostgreSQL: migration 0013-data-pipelines in
// cloud/store/pg-schema.ts). A run's sink documents, its run record and the pipeline's progress are
// written in one transaction, so a crash never half-writes a window.
import { randomUUID } from 'node:crypto';
import { EJSON } from 'bson';
import { alreadyExists, invalidArgument, notFound } from '../../../core/serving/status-error.js';
import type { TabularStore } from '../../store/tabular.js';
import { checkStages, type Stage } from '../mql/stages.js';
import { checkOrganizationId } from '../sql/readings-view.js';
import { checkSchedule, previousTick } from './schedule.js';

export const PIPELINE_DDL = [
  `CREATE TABLE IF NOT EXISTS query_data_pipelines (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, name VARCHAR NOT NULL, mql VARCHAR NOT NULL,
     schedule VARCHAR NOT NULL, source_type VARCHAR NOT NULL, enabled BOOLEAN NOT NULL,
     time_created TIMESTAMPTZ NOT NULL, time_modified TIMESTAMPTZ NOT NULL, window_end TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS query_data_pipeline_runs (
     id VARCHAR NOT NULL, pipeline_id VARCHAR NOT NULL, status VARCHAR NOT NULL, data_start TIMESTAMPTZ NOT NULL,
     data_end TIMESTAMPTZ NOT NULL, start_time TIMESTAMPTZ NOT NULL, end_time TIMESTAMPTZ NOT NULL,
     documents INTEGER NOT NULL, error_message VARCHAR NOT NULL)`,
  // doc is relaxed extended JSON, so dates and other BSON types survive the round trip.
  `CREATE TABLE IF NOT EXISTS query_data_pipeline_sink (
     pipeline_id VARCHAR NOT NULL, run_id VARCHAR NOT NULL, data_end TIMESTAMPTZ NOT NULL, position INTEGER NOT NULL, doc VARCHAR NOT NULL)`,
  // A window whose last attempt failed and that will be tried again (pipeline-scheduler.ts): how many
  // attempts it has had and when the next may start.
  `CREATE TABLE IF NOT EXISTS query_data_pipeline_retries (
     pipeline_id VARCHAR NOT NULL, data_start TIMESTAMPTZ NOT NULL, data_end TIMESTAMPTZ NOT NULL,
     attempts INTEGER NOT NULL, next_attempt TIMESTAMPTZ NOT NULL)`,
];

/** A failed window waiting for its next attempt. */
export interface PendingRetry {
  dataStart: Date;
  dataEnd: Date;
  /** Attempts so far (the first run included). */
  attempts: number;
  nextAttempt: Date;
}

export type PipelineSourceType = 'STANDARD' | 'HOT_STORAGE';

export interface DataPipeline {
  id: string;
  organizationId: string;
  name: string;
  stages: Stage[];
  schedule: string;
  sourceType: PipelineSourceType;
  enabled: boolean;
  timeCreated: Date;
  timeModified: Date;
  /** The end of the last window processed (or the scheduled time before creation). */
  windowEnd: Date;
  /** Set when the stored stages cannot be read back: each run then fails with this, recorded in the run history. */
  unreadableStages?: string;
}

export type RunStatus = 'COMPLETED' | 'FAILED';

export interface PipelineRun {
  id: string;
  pipelineId: string;
  status: RunStatus;
  dataStart: Date;
  dataEnd: Date;
  startTime: Date;
  endTime: Date;
  documents: number;
  errorMessage: string;
}

export interface NewPipeline {
  organizationId: string;
  name: string;
  stages: unknown;
  schedule: string;
  sourceType?: PipelineSourceType;
}

export class PipelineStore {
  constructor(private readonly store: TabularStore) {}

  /** Makes the tables on DuckDB; on PostgreSQL the migrations made them. */
  async init(): Promise<void> {
    if (this.store.dialect !== 'duckdb') return;
    for (const sql of PIPELINE_DDL) await this.store.execute(sql);
  }

  async create(p: NewPipeline, now = new Date()): Promise<DataPipeline> {
    checkOrganizationId(p.organizationId);
    const name = typeof p.name === 'string' ? p.name.trim() : '';
    if (name === '' || name.length > 100) throw invalidArgument('name: must be 1 to 100 characters');
    const stages = checkStages(p.stages);
    const schedule = checkSchedule(p.schedule);
    const sourceType = p.sourceType ?? 'STANDARD';
    if (sourceType !== 'STANDARD' && sourceType !== 'HOT_STORAGE') throw invalidArgument('data_source_type: must be STANDARD or HOT_STORAGE');
    const pipeline: DataPipeline = {
      id: randomUUID(),
      organizationId: p.organizationId,
      name,
      stages,
      schedule,
      sourceType,
      enabled: true,
      timeCreated: now,
      timeModified: now,
      windowEnd: previousTick(schedule, now),
    };
    await this.store.transact(async (tx) => {
      const clash = await tx.query('SELECT 1 FROM query_data_pipelines WHERE organization_id = ? AND name = ?', [p.organizationId, name]);
      if (clash.length > 0) throw alreadyExists(`name: a data pipeline named "${name}" already exists in this organization`);
      await tx.execute('INSERT INTO query_data_pipelines VALUES (?, ?, ?, ?, ?, ?, true, ?, ?, ?)', [
        pipeline.id,
        pipeline.organizationId,
        name,
        EJSON.stringify(stages),
        schedule,
        sourceType,
        now,
        now,
        pipeline.windowEnd,
      ]);
    });
    return pipeline;
  }

  async get(id: string): Promise<DataPipeline> {
    if (!id) throw invalidArgument('id: is required');
    const pipeline = await this.find(id);
    if (!pipeline) throw notFound(`id: no data pipeline ${id}`);
    return pipeline;
  }

  /** The pipeline, or undefined when there is none (deleted after a window of it was queued). */
  async find(id: string): Promise<DataPipeline | undefined> {
    const rows = await this.store.query('SELECT * FROM query_data_pipelines WHERE id = ?', [id]);
    return rows.length === 0 ? undefined : toPipeline(rows[0]);
  }

  async list(organizationId: string): Promise<DataPipeline[]> {
    const rows = await this.store.query('SELECT * FROM query_data_pipelines WHERE organization_id = ? ORDER BY time_created, id', [organizationId]);
    return rows.map(toPipeline);
  }

  async listEnabled(): Promise<DataPipeline[]> {
    return (await this.store.query('SELECT * FROM query_data_pipelines WHERE enabled ORDER BY time_created, id')).map(toPipeline);
  }

  async setEnabled(id: string, enabled: boolean, now = new Date()): Promise<void> {
    const p = await this.get(id);
    // Re-enabling starts from the current window: a disabled pipeline does not backfill what it missed.
    const windowEnd = enabled && !p.enabled ? previousTick(p.schedule, now) : p.windowEnd;
    await this.store.execute('UPDATE query_data_pipelines SET enabled = ?, time_modified = ?, window_end = ? WHERE id = ?', [enabled, now, windowEnd, id]);
  }

  async delete(id: string): Promise<void> {
    await this.get(id);
    await this.store.transact(async (tx) => {
      for (const table of ['query_data_pipeline_sink', 'query_data_pipeline_runs', 'query_data_pipeline_retries'])
        await tx.execute(`DELETE FROM ${table} WHERE pipeline_id = ?`, [id]);
      await tx.execute('DELETE FROM query_data_pipelines WHERE id = ?', [id]);
    });
  }

  /**
   * Records one window's run, its sink documents, the pipeline's progress and the window's retry (the next
   * attempt of a failed window, or none), atomically. A retried window is older than the progress, which
   * therefore never moves back. With `attempt` (the scheduler's), the run is recorded only if the window
   * is still at that attempt: a first attempt of a window that has a run already, or a retry whose
   * attempt another process already recorded, is dropped (returns false), so two schedulers that
   * overlap briefly (a leader that lost its lead without knowing it yet), or two workers given the same
   * queued window (scale-out), record each window once. The first attempt is checked against the
   * window's own runs, not against the progress: in the scale-out mode workers run a pipeline's queued
   * windows in parallel, and a later window may be recorded (moving the progress past) before an
   * earlier one. Transactions are serializable (pg-store.ts), so two that check at once record once.
   */
  async recordRun(run: PipelineRun, docs: Record<string, unknown>[], retry?: { attempts: number; nextAttempt: Date }, attempt?: number): Promise<boolean> {
    return this.store.transact(async (tx) => {
      const still = await tx.query('SELECT window_end FROM query_data_pipelines WHERE id = ?', [run.pipelineId]);
      if (still.length === 0) return false; // deleted while it ran
      const window = [run.pipelineId, run.dataStart, run.dataEnd];
      if (attempt === 1) {
        const sql = 'SELECT 1 FROM query_data_pipeline_runs WHERE pipeline_id = ? AND data_end = ? AND data_start = ? LIMIT 1';
        if ((await tx.query(sql, [run.pipelineId, run.dataEnd, run.dataStart])).length > 0) return false;
      }
      if (attempt !== undefined && attempt > 1) {
        const pending = await tx.query('SELECT attempts FROM query_data_pipeline_retries WHERE pipeline_id = ? AND data_start = ? AND data_end = ?', window);
        if (pending.length === 0 || Number(pending[0].attempts) !== attempt - 1) return false;
      }
      await tx.execute('INSERT INTO query_data_pipeline_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        run.id,
        run.pipelineId,
        run.status,
        run.dataStart,
        run.dataEnd,
        run.startTime,
        run.endTime,
        run.documents,
        run.errorMessage,
      ]);
      if (docs.length > 0) {
        await tx.execute(
          `INSERT INTO query_data_pipeline_sink SELECT ?, ?, ?, CAST(ordinality AS INTEGER), doc
           FROM unnest(CAST(? AS VARCHAR[])) WITH ORDINALITY AS t(doc, ordinality)`,
          [run.pipelineId, run.id, run.dataEnd, docs.map((d) => EJSON.stringify(d, { relaxed: true }))],
        );
      }
      await tx.execute('UPDATE query_data_pipelines SET window_end = greatest(window_end, ?) WHERE id = ?', [run.dataEnd, run.pipelineId]);
      await tx.execute('DELETE FROM query_data_pipeline_retries WHERE pipeline_id = ? AND data_start = ? AND data_end = ?', window);
      if (retry) await tx.execute('INSERT INTO query_data_pipeline_retries VALUES (?, ?, ?, ?, ?)', [...window, retry.attempts, retry.nextAttempt]);
      return true;
    });
  }

  /** The pipeline's failed windows whose next attempt is due at `now`, oldest window first. */
  async dueRetries(pipelineId: string, now: Date, limit: number): Promise<PendingRetry[]> {
    const rows = await this.store.query('SELECT * FROM query_data_pipeline_retries WHERE pipeline_id = ? AND next_attempt <= ? ORDER BY data_start LIMIT ?', [
      pipelineId,
      now,
      limit,
    ]);
    return rows.map((r) => ({
      dataStart: r.data_start as Date,
      dataEnd: r.data_end as Date,
      attempts: Number(r.attempts),
      nextAttempt: r.next_attempt as Date,
    }));
  }

  async runs(pipelineId: string): Promise<PipelineRun[]> {
    const rows = await this.store.query('SELECT * FROM query_data_pipeline_runs WHERE pipeline_id = ? ORDER BY data_end DESC', [pipelineId]);
    return rows.map((r) => ({
      id: String(r.id),
      pipelineId: String(r.pipeline_id),
      status: r.status as RunStatus,
      dataStart: r.data_start as Date,
      dataEnd: r.data_end as Date,
      startTime: r.start_time as Date,
      endTime: r.end_time as Date,
      documents: Number(r.documents),
      errorMessage: String(r.error_message),
    }));
  }

  /** The sink's documents, oldest window first; NOT_FOUND unless the pipeline belongs to the organisation. */
  async readSink(organizationId: string, pipelineId: string): Promise<Record<string, unknown>[]> {
    const owner = await this.store.query('SELECT organization_id FROM query_data_pipelines WHERE id = ?', [pipelineId]);
    if (owner.length === 0 || owner[0].organization_id !== organizationId) {
      throw notFound(`pipeline_id: no data pipeline ${pipelineId} in organization ${organizationId}`);
    }
    const rows = await this.store.query('SELECT doc FROM query_data_pipeline_sink WHERE pipeline_id = ? ORDER BY data_end, position', [pipelineId]);
    return rows.map((r) => EJSON.parse(String(r.doc), { relaxed: true }) as Record<string, unknown>);
  }
}

function toPipeline(r: Record<string, unknown>): DataPipeline {
  let stages: Stage[] = [];
  let unreadableStages: string | undefined;
  try {
    stages = EJSON.parse(String(r.mql), { relaxed: true }) as Stage[];
  } catch (err) {
    unreadableStages = `the stored stages cannot be read: ${(err as Error).message}`;
  }
  return {
    id: String(r.id),
    organizationId: String(r.organization_id),
    name: String(r.name),
    stages,
    ...(unreadableStages ? { unreadableStages } : {}),
    schedule: String(r.schedule),
    sourceType: r.source_type as PipelineSourceType,
    enabled: Boolean(r.enabled),
    timeCreated: r.time_created as Date,
    timeModified: r.time_modified as Date,
    windowEnd: r.window_end as Date,
  };
}
