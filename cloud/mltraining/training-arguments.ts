// Rules for the arguments map: the built-in trainer's known hyperparameters, and the free-form
// --key=value arguments of custom scripts.
import { invalidArgument } from '../../core/serving/status-error.js';

interface NumberRule {
  integer: boolean;
  min: number;
  max: number;
  /** Exclusive lower bound. */
  above?: boolean;
  multipleOf?: number;
}

export const builtinArgumentRules: Record<string, NumberRule> = {
  epochs: { integer: true, min: 1, max: 1000 },
  batch_size: { integer: true, min: 1, max: 1024 },
  learning_rate: { integer: false, min: 0, max: 1, above: true },
  image_size: { integer: true, min: 16, max: 512, multipleOf: 8 },
  validation_fraction: { integer: false, min: 0.05, max: 0.5 },
  seed: { integer: true, min: 0, max: 2 ** 31 - 1 },
  target_metric: { integer: false, min: 0, max: 1, above: true },
  evaluations_per_epoch: { integer: true, min: 1, max: 100 },
  early_stopping_patience: { integer: true, min: 0, max: 1000 },
};

export function checkBuiltinArguments(args: Record<string, string>): void {
  for (const [key, raw] of Object.entries(args)) {
    const rule = builtinArgumentRules[key];
    if (!rule) {
      throw invalidArgument(`arguments.${key} is not an argument of the built-in trainer (known: ${Object.keys(builtinArgumentRules).join(', ')})`);
    }
    const value = Number(raw);
    const range = `${rule.above ? '>' : '>='} ${rule.min} and <= ${rule.max}`;
    if (raw.trim() === '' || !Number.isFinite(value) || (rule.integer && !Number.isInteger(value))) {
      throw invalidArgument(`arguments.${key} must be ${rule.integer ? 'an integer' : 'a number'}, got '${raw}'`);
    }
    if (value < rule.min || value > rule.max || (rule.above && value === rule.min)) {
      throw invalidArgument(`arguments.${key} must be ${range}, got ${raw}`);
    }
    if (rule.multipleOf && value % rule.multipleOf !== 0) {
      throw invalidArgument(`arguments.${key} must be a multiple of ${rule.multipleOf}, got ${raw}`);
    }
  }
}

const keyRule = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
/** The service sets these itself. */
export const reservedArguments = new Set(['dataset_file', 'model_output_directory', 'model_type', 'labels']);

export function checkCustomArguments(args: Record<string, string>): void {
  for (const [key, value] of Object.entries(args)) {
    if (!keyRule.test(key)) throw invalidArgument(`arguments key '${key}' must match ${keyRule.source}`);
    if (reservedArguments.has(key)) throw invalidArgument(`arguments.${key} is set by the service and cannot be given`);
    if (value.length > 4096 || value.includes('\0')) throw invalidArgument(`arguments.${key} must be at most 4096 characters without NUL`);
  }
}
