// The models platform-micro-server runs: the built-ins that make sense on a small board (issue 31),
// each with the very driver module platform-server loads into a worker, linked in here so that the
// micro-server is one bundled file. Any other model, a module's included, is an error of the resource
// that names it, saying it needs platform-server; the process never goes down for it.
import type { DriverFactory, ModelDefinition } from '../../plugins/contract.js';
import { BUILTIN_MODEL_NAMES } from '../../drivers/builtin-names.js';
import { fakeBoardModel } from '../../drivers/board/fake/model.js';
import { piBoardModel } from '../../drivers/board/pi/model.js';
import { esp32BoardModel } from '../../drivers/board/esp32/model.js';
import { gpioMotorModel } from '../../drivers/motor/gpio/model.js';
import { incrementalEncoderModel } from '../../drivers/encoder/incremental/model.js';
import { singleEncoderModel } from '../../drivers/encoder/single/model.js';
import { fakeEncoderModel } from '../../drivers/encoder/fake/model.js';
import { fakeSensorModel } from '../../drivers/sensor/fake/model.js';
import { fakeCameraModel } from '../../drivers/camera/fake/model.js';
import { dataManagerModel } from '../resource/data-manager-model.js';
import fakeBoard from '../../drivers/board/fake/driver.js';
import piBoard from '../../drivers/board/pi/driver.js';
import esp32Board from '../../drivers/board/esp32/driver.js';
import gpioMotor from '../../drivers/motor/gpio/driver.js';
import incrementalEncoder from '../../drivers/encoder/incremental/driver.js';
import singleEncoder from '../../drivers/encoder/single/driver.js';
import fakeEncoder from '../../drivers/encoder/fake/driver.js';
import fakeSensor from '../../drivers/sensor/fake/driver.js';
import fakeCamera from '../../drivers/camera/fake/driver.js';
import dataManager from '../datamanager/driver.js';
import { ModelRegistry } from '../resource/model-registry.js';

interface MicroModel {
  definition: ModelDefinition;
  factory: DriverFactory<never>;
}

export const microModels: readonly MicroModel[] = [
  { definition: fakeBoardModel, factory: fakeBoard },
  { definition: piBoardModel, factory: piBoard },
  { definition: esp32BoardModel, factory: esp32Board },
  { definition: gpioMotorModel, factory: gpioMotor },
  { definition: incrementalEncoderModel, factory: incrementalEncoder },
  { definition: singleEncoderModel, factory: singleEncoder },
  { definition: fakeEncoderModel, factory: fakeEncoder },
  { definition: fakeSensorModel, factory: fakeSensor },
  { definition: fakeCameraModel, factory: fakeCamera },
  { definition: dataManagerModel, factory: dataManager },
];

const key = (api: string, model: string) => `${api}|${model}`;
const factories = new Map(microModels.map((m) => [key(m.definition.api, m.definition.model), m.factory as DriverFactory<unknown>]));

/** The driver of a supported model (core/micro/in-process-hosting.ts). */
export function microDriver(api: string, model: string): DriverFactory<unknown> | undefined {
  return factories.get(key(api, model));
}

export function microRegistry(): ModelRegistry {
  const registry = new ModelRegistry();
  for (const { definition } of microModels) registry.register(definition);
  return registry;
}

// Names only: the attribute schemas of the models it does not run are never built here.
const fullRuntimeOnly = new Set([...BUILTIN_MODEL_NAMES.map(([api, model]) => key(api, model)), key(dataManagerModel.api, dataManagerModel.model)]);

/**
 * Why a model the micro-server lacks is missing (the kernel's missingModelExplanation): a module's
 * model, or a built-in of platform-server only. A model nobody has gets the usual "unknown model".
 */
export function explainMissingModel(api: string, model: string): string | undefined {
  const supported = microModels.map((m) => `${m.definition.api} ${m.definition.model}`).join(', ');
  if (isModuleModel(model)) {
    return `model ${JSON.stringify(model)} comes from a module, and modules need platform-server (platform-micro-server runs only built-in models: ${supported})`;
  }
  if (fullRuntimeOnly.has(key(api, model))) {
    return `model ${JSON.stringify(model)} of ${api} needs platform-server (platform-micro-server runs only: ${supported})`;
  }
  return undefined;
}

/** A module's model is a triplet `<namespace>:<module>:<model>` (plugins/names.ts); a built-in's is bare. */
function isModuleModel(model: string): boolean {
  return model.split(':').length === 3;
}
