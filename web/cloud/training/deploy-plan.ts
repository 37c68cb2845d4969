// "Deploy to machine": the config a part gets when a trained model is deployed to it. Three entries are
// added (or brought to this model version when they are already there): the model's `ml_model`
// package, an `onnx_cpu` ML model service reading the package's model.onnx (and labels.txt), and an
// `mlmodel` vision service over it (on a chosen camera). The rest of the config is kept as it is; the
// page shows the change as a diff before anything is saved (line-diff.ts).

export interface DeployRequest {
  orgId: string;
  modelName: string;
  modelVersion: string;
  /** The artefact's file names: label_path is set only when labels.txt is among them. */
  files: string[];
  /** The package's name in the config; the vision service has this name, the ML model service `<name>-model`. */
  name: string;
  /** The vision service's camera_name; empty: none. */
  cameraName: string;
}

type Entry = Record<string, unknown>;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A package name made from a model name (the config allows 1-64 of [A-Za-z0-9_-]). */
export function packageNameOf(modelName: string): string {
  return (modelName.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'model').slice(0, 58);
}

const list = (config: Entry, key: string): Entry[] => {
  const value = config[key];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error(`robot_config.${key}: must be a list to deploy into`);
  return value as Entry[];
};

/** Puts `entry` in place of the entry named like it (which must be the same kind), or at the end. */
function upsert(entries: Entry[], key: string, entry: Entry, same: (old: Entry) => boolean): Entry[] {
  const at = entries.findIndex((e) => e?.name === entry.name);
  if (at < 0) return [...entries, entry];
  if (!same(entries[at])) {
    throw new Error(
      `name: ${key}[${at}] is already called "${String(entry.name)}" and is something else (${JSON.stringify(entries[at]).slice(0, 120)}); choose another name`,
    );
  }
  return entries.map((e, i) => (i === at ? entry : e));
}

/** The part's config with the model deployed; throws an error naming the field when it cannot be done. */
export function deployedConfig(config: Entry, r: DeployRequest): Entry {
  if (!NAME.test(r.name)) throw new Error(`name "${r.name}": must be 1-64 of the letters A-Z, a-z, digits, _ and -`);
  if (!r.files.includes('model.onnx')) {
    throw new Error(`model ${r.modelName} ${r.modelVersion}: has no model.onnx (files: ${r.files.join(', ') || 'none'}); only ONNX models run in onnx_cpu`);
  }
  const modelService = `${r.name}-model`;
  const pkg = { name: r.name, package: `${r.orgId}/${r.modelName}`, version: r.modelVersion, type: 'ml_model' };
  const attributes: Entry = { model_path: `\${packages.${r.name}}/model.onnx` };
  if (r.files.includes('labels.txt')) attributes.label_path = `\${packages.${r.name}}/labels.txt`;
  const mlmodel = { name: modelService, api: 'core:service:mlmodel', model: 'onnx_cpu', attributes };
  const vision = {
    name: r.name,
    api: 'core:service:vision',
    model: 'mlmodel',
    attributes: { mlmodel_name: modelService, ...(r.cameraName ? { camera_name: r.cameraName } : {}) },
  };
  const sameService = (api: string, model: string) => (old: Entry) => old.api === api && old.model === model;
  let services = upsert(list(config, 'services'), 'services', mlmodel, sameService(mlmodel.api, mlmodel.model));
  services = upsert(services, 'services', vision, sameService(vision.api, vision.model));
  const packages = upsert(list(config, 'packages'), 'packages', pkg, (old) => old.type === 'ml_model');
  return { ...config, packages, services };
}

/** The cameras a part's config lists, for the vision service's camera_name. */
export function camerasOf(config: Entry): string[] {
  const components = Array.isArray(config.components) ? (config.components as Entry[]) : [];
  return components.filter((c) => typeof c?.api === 'string' && /(^|:)camera$/.test(c.api) && typeof c.name === 'string').map((c) => c.name as string);
}
