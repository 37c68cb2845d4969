// TabularDataByMQL: checks the stages, pushes the leading ones into DuckDB SQL over the organisation's
// readings, and evaluates the rest with mingo in a worker thread, all under one timeout.
import { status } from '@grpc/grpc-js';
import { calculateObjectSize } from 'bson';
import { checkResultSize } from '../result-size.js';
import { invalidArgument, StatusError } from '../../../core/serving/status-error.js';
import type { QueryAdmission } from '../admission.js';
import type { TabularDataSourceTypeName } from '../../kit/query-engine-slot.js';
import { timeoutError } from '../sql/limited-run.js';
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '../sql/limits.js';
import { readingsScope } from '../sql/readings-view.js';
import type { ConnectionSource } from '../sql/sql-sandbox.js';
import { dateFieldsOf, documentSelect, parseBatches, scanBatches } from './document-scan.js';
import type { MingoTask } from './mingo-worker.js';
import { MingoPool } from './mingo-pool.js';
import { planPushdown, type PushdownPlan } from './pushdown.js';
import { checkStages, type Stage } from './stages.js';
import { inSpan } from '../../../core/serving/telemetry/tracing.js';

export interface MqlSource {
  sourceType: TabularDataSourceTypeName;
  pipelineId?: string;
}

/** Reads a data pipeline's sink for an organisation; NOT_FOUND when the pipeline is not the org's. */
export type SinkReader = (organizationId: string, pipelineId: string) => Promise<Record<string, unknown>[]>;

export interface MqlOptions {
  limits?: Partial<QueryLimits>;
  /** HOT_STORAGE serves data received within this window. Default 24 hours. */
  hotStorageMs?: number;
  /** At most this many documents are read from DuckDB for one query (they are held in memory). Default 2M. */
  maxScanRows?: number;
  now?: () => Date;
  /** Turns among running queries; none in unit tests. */
  admission?: QueryAdmission;
}

export class MqlRunner {
  readonly limits: QueryLimits;
  private readonly hotStorageMs: number;
  private readonly maxScanRows: number;
  private readonly now: () => Date;
  private readonly admission?: QueryAdmission;

  constructor(
    private readonly connect: ConnectionSource,
    private readonly pool: Pick<MingoPool, 'run'>,
    private readonly sink: SinkReader,
    options: MqlOptions = {},
  ) {
    this.limits = { ...DEFAULT_QUERY_LIMITS, ...options.limits };
    this.hotStorageMs = options.hotStorageMs ?? 24 * 3600_000;
    this.maxScanRows = options.maxScanRows ?? 2_000_000;
    this.now = options.now ?? (() => new Date());
    this.admission = options.admission;
  }

  async run(organizationId: string, rawStages: unknown, source: MqlSource): Promise<Record<string, unknown>[]> {
    const stages = checkStages(rawStages);
    if (calculateObjectSize({ stages }) > this.limits.maxTextBytes) {
      throw invalidArgument(`query: the stages are larger than the ${this.limits.maxTextBytes}-byte limit (PLATFORM_QUERY_MAX_TEXT_BYTES)`);
    }
    // A span when tracing is on (--otlp-endpoint), the wait for a turn included.
    return inSpan('mql query', {}, () =>
      this.admission
        ? this.admission.run(organizationId, () => this.runAdmitted(organizationId, stages, source))
        : this.runAdmitted(organizationId, stages, source),
    );
  }

  private async runAdmitted(organizationId: string, stages: Stage[], source: MqlSource): Promise<Record<string, unknown>[]> {
    const deadline = Date.now() + this.limits.timeoutMs;
    let out: Record<string, unknown>[];
    if (source.sourceType === 'PIPELINE_SINK') {
      if (!source.pipelineId) throw invalidArgument('pipeline_id: is required with TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK');
      out = await this.evaluate({ docs: await this.sink(organizationId, source.pipelineId), stages, resultLimits: this.resultLimits() }, deadline);
    } else {
      const since = source.sourceType === 'HOT_STORAGE' ? new Date(this.now().getTime() - this.hotStorageMs) : undefined;
      const geo = '$geoNear' in stages[0];
      const plan = geo ? planPushdown([]) : planPushdown(stages);
      const residual = geo ? stages : plan.residual;
      const dateFields = plan.group ? [] : dateFieldsOf(plan.fields);
      const { batches } = await this.scan(organizationId, readingsSql(plan, readingsScope(organizationId, since)), deadline);
      out =
        residual.length === 0
          ? parseBatches(batches, dateFields)
          : await this.evaluate({ batches, dateFields, stages: residual, resultLimits: this.resultLimits() }, deadline);
    }
    this.checkResult(out);
    return out;
  }

  private async scan(organizationId: string, sql: string, deadline: number) {
    const conn = await this.connect(organizationId);
    try {
      return await scanBatches(conn, sql, { timeoutMs: Math.max(1, deadline - Date.now()), maxRows: this.maxScanRows, memory: this.limits.memory });
    } catch (err) {
      // The scan had what was left of the query's time; the error names the query's whole limit.
      if (err instanceof StatusError && err.code === status.DEADLINE_EXCEEDED) throw timeoutError(this.limits, 'query');
      throw err;
    } finally {
      conn.closeSync();
    }
  }

  private async evaluate(task: MingoTask, deadline: number): Promise<Record<string, unknown>[]> {
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    try {
      return await this.pool.run(task, signal);
    } catch (err) {
      if (signal.aborted) throw timeoutError(this.limits, 'query');
      if (err instanceof StatusError) throw err;
      throw invalidArgument(`query: ${(err as Error).message}`);
    }
  }

  private resultLimits() {
    return { maxRows: this.limits.maxRows, maxBytes: this.limits.maxBytes };
  }

  private checkResult(docs: Record<string, unknown>[]): void {
    checkResultSize(docs, this.limits, 'query');
  }
}

export function readingsSql(plan: PushdownPlan, scope: string[]): string {
  const where = [...scope, ...plan.where.map((w) => `(${w})`)].join(' AND ');
  if (plan.group) {
    // HAVING: MongoDB emits no group at all for no input, even for _id: null.
    const groupBy = plan.group.groupBy ? ` GROUP BY ${plan.group.groupBy}` : '';
    return `SELECT ${plan.group.select} FROM main.tabular_data WHERE ${where}${groupBy} HAVING count(*) > 0 ORDER BY min(seq)`;
  }
  const order = [...plan.orderBy, 'seq ASC'].join(', ');
  const limit = plan.limit === null ? '' : ` LIMIT ${plan.limit}`;
  const offset = plan.offset > 0 ? ` OFFSET ${plan.offset}` : '';
  return `SELECT ${documentSelect(plan.fields)} FROM main.tabular_data WHERE ${where} ORDER BY ${order}${limit}${offset}`;
}
