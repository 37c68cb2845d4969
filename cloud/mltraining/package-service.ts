// platform.app.packages.v1.PackageService: every stored model artefact as an `ml_model` package named
// `<organization id>/<model name>`, version = model_version. Machines download the packages their config
// lists with their part credentials (robot-secret token); an API key of the organization may too. A
// caller sees only its own organization: another organization's package is NOT_FOUND, as if absent, so
// a hostile tenant cannot even learn which model names exist elsewhere.
import type { Metadata, Server } from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import { PackageServiceService, type PackageFile, type PackageServiceServer } from '../../gen/platform/app/packages/v1/packages.js';
import type { Authorizer } from '../auth/authorizer.js';
import { serverStream, unary } from '../kit/handlers.js';
import { writeStream } from '../kit/stream-write.js';
import type { ModelArtefact, ModelArtefactStore } from './model-artefacts.js';

export const ML_MODEL_PACKAGE = 'ml_model';
const chunkBytes = 256 * 1024;

/** The organization a caller may read packages of: a machine part's or an API key's own. */
export interface PackageAuth {
  organizationOf(metadata: Metadata): Promise<string>;
}

export function authorizerPackageAuth(authorizer: Authorizer): PackageAuth {
  return { organizationOf: async (metadata) => (await authorizer.authenticate(metadata)).organizationId };
}

interface PackageName {
  organizationId: string;
  modelName: string;
  label: string;
}

function parsePackageId(packageId: string, field: string): PackageName {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(packageId);
  if (!m) throw invalidArgument(`${field} must be <organization id>/<model name>, got ${JSON.stringify(packageId)}`);
  return { organizationId: m[1], modelName: m[2], label: `package ${packageId}` };
}

export class PackageCatalog {
  /** sha256 per artefact file: artefacts never change once stored, so each file is hashed once. */
  private readonly digests = new Map<string, Promise<string>>();

  constructor(private readonly artefacts: ModelArtefactStore) {}

  /** The artefact of a package version in the caller's organization; NOT_FOUND names the package and what is missing. */
  async find(callerOrg: string, name: PackageName, version: string): Promise<ModelArtefact> {
    // Another organization's package looks exactly like one that does not exist.
    const versions = name.organizationId === callerOrg ? await this.artefacts.list(name.organizationId, name.modelName) : [];
    if (versions.length === 0) throw notFound(`${name.label}: no such package in organization ${callerOrg}`);
    if (!version || version === 'latest') return versions[versions.length - 1];
    const found = versions.find((a) => a.modelVersion === version);
    if (!found) throw notFound(`${name.label}: no version ${version} (versions: ${versions.map((a) => a.modelVersion).join(', ')})`);
    return found;
  }

  async files(artefact: ModelArtefact): Promise<PackageFile[]> {
    return Promise.all(artefact.files.map(async (f) => ({ name: f.name, sha256: await this.digest(artefact, f.name), sizeBytes: f.sizeBytes })));
  }

  /** A file's content, read from the blob store as it is consumed. */
  stream(artefact: ModelArtefact, fileName: string): Promise<Readable> {
    return this.artefacts.stream(artefact, fileName);
  }

  private digest(artefact: ModelArtefact, fileName: string): Promise<string> {
    const key = `${artefact.id}/${fileName}`;
    let digest = this.digests.get(key);
    if (!digest) {
      digest = (async () => {
        // Hashed as it is read: the digest of a large model costs a chunk of memory, not the file's size.
        const hash = createHash('sha256');
        for await (const chunk of await this.stream(artefact, fileName)) hash.update(chunk as Buffer);
        return hash.digest('hex');
      })();
      // A failed read is not remembered: the next call tries again.
      digest.catch(() => this.digests.delete(key));
      this.digests.set(key, digest);
    }
    return digest;
  }
}

export function packageHandlers(catalog: PackageCatalog, auth: PackageAuth): PackageServiceServer {
  return {
    getPackage: unary(async (req, md) => {
      const org = await auth.organizationOf(md);
      const name = parsePackageId(req.packageId, 'package_id');
      if (req.type && req.type !== ML_MODEL_PACKAGE)
        throw invalidArgument(`${name.label}: type must be "${ML_MODEL_PACKAGE}", got ${JSON.stringify(req.type)}`);
      const artefact = await catalog.find(org, name, req.version);
      return { package: { packageId: req.packageId, type: ML_MODEL_PACKAGE, version: artefact.modelVersion, files: await catalog.files(artefact) } };
    }),
    downloadPackageFile: serverStream(async (call) => {
      const req = call.request;
      const org = await auth.organizationOf(call.metadata);
      const name = parsePackageId(req.packageId, 'package_id');
      if (!req.version || req.version === 'latest') throw invalidArgument(`${name.label}: version must be a concrete version, as GetPackage answered it`);
      if (!req.fileName) throw invalidArgument(`${name.label}: file_name is required`);
      const artefact = await catalog.find(org, name, req.version);
      if (!artefact.files.some((f) => f.name === req.fileName)) {
        throw notFound(`${name.label}@${req.version}: no file ${JSON.stringify(req.fileName)} (files: ${artefact.files.map((f) => f.name).join(', ')})`);
      }
      await writeStream(call, await catalog.stream(artefact, req.fileName), (chunk) => ({ chunk }), chunkBytes);
    }),
  };
}

export function addPackageService(server: Server, artefacts: ModelArtefactStore, auth: PackageAuth): void {
  server.addService(PackageServiceService, packageHandlers(new PackageCatalog(artefacts), auth));
}
