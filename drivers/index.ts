// The built-in models. Each is registered by (api, model) through the same contract modules use.
import type { ModelDefinition } from '../plugins/contract.js';
import { fakeBoardModel } from './board/fake/model.js';
import { fakeSensorModel } from './sensor/fake/model.js';

export const builtinModels: readonly ModelDefinition[] = [fakeBoardModel, fakeSensorModel];
