// The fields of a submit request and their rules (INVALID_ARGUMENT naming the field and the rule),
// checked before anything is read or stored.
import { invalidArgument } from '../../core/serving/status-error.js';
import { modelTypes, type ModelType } from './training-job.js';

export interface SubmitTrainingJob {
  organizationId: string;
  datasetId: string;
  /** A version of the dataset; 0 or absent: a version is made for the job. */
  datasetVersion?: number;
  modelName: string;
  modelVersion: string;
  modelType: ModelType;
  tags: string[];
  arguments?: Record<string, string>;
}

export interface SubmitCustomTrainingJob {
  organizationId: string;
  datasetId: string;
  /** A version of the dataset; 0 or absent: a version is made for the job. */
  datasetVersion?: number;
  registryItemId: string;
  registryItemVersion: string;
  modelName: string;
  modelVersion: string;
  arguments?: Record<string, string>;
}

const nameRule = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const idRule = /^[A-Za-z0-9_-]{1,128}$/;

function requireText(field: string, value: string, rule: RegExp, what: string): void {
  if (!value) throw invalidArgument(`${field} is required`);
  if (!rule.test(value)) throw invalidArgument(`${field} '${value}' must be ${what}`);
}

export function checkOrganizationId(value: string, field = 'organization_id'): void {
  requireText(field, value, idRule, '1-128 letters, digits, - or _');
}

/** The fields every submit carries (the dataset's owner is checked against the data source after). */
export function checkCommonFields(request: { organizationId: string; datasetId: string; modelName: string; modelVersion: string }): void {
  checkOrganizationId(request.organizationId);
  requireText('dataset_id', request.datasetId, idRule, '1-128 letters, digits, - or _');
  requireText('model_name', request.modelName, nameRule, "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit");
  requireText('model_version', request.modelVersion, nameRule, "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit");
}

/** A built-in job's model type and tags. */
export function checkBuiltinRequest(request: SubmitTrainingJob): void {
  if (!modelTypes.includes(request.modelType)) {
    throw invalidArgument(`model_type must be one of ${modelTypes.map((t) => `MODEL_TYPE_${t}`).join(', ')}`);
  }
  if (request.tags.length === 0) throw invalidArgument('tags must name at least one label to train on');
  if (request.modelType === 'SINGLE_LABEL_CLASSIFICATION' && new Set(request.tags).size < 2) {
    throw invalidArgument('tags must name at least two labels for single-label classification');
  }
  for (const tag of request.tags) {
    if (!tag || tag.includes(',') || tag.length > 256) throw invalidArgument(`tags entry '${tag}' must be 1-256 characters without commas`);
  }
}
