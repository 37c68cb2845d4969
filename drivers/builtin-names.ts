// The (api, model) of every built-in model, without its definition: platform-micro-server says that a
// model is platform-server's from this list, without loading the attribute schemas of models it does not
// run (core/micro/micro-models.ts). drivers/builtin-names.test.ts keeps it equal to builtinModels.
export const BUILTIN_MODEL_NAMES: readonly (readonly [api: string, model: string])[] = [
  ['core:component:board', 'fake'],
  ['core:component:motor', 'gpio'],
  ['core:component:encoder', 'incremental'],
  ['core:component:encoder', 'single'],
  ['core:component:encoder', 'fake'],
  ['core:component:board', 'pi'],
  ['core:component:board', 'esp32'],
  ['core:component:sensor', 'fake'],
  ['core:component:camera', 'fake'],
  ['core:component:camera', 'pcd_file'],
  ['core:component:camera', 'image_file'],
  ['core:service:vision', 'obstacles_depth'],
  ['core:service:mlmodel', 'onnx_cpu'],
  ['core:service:vision', 'mlmodel'],
];
