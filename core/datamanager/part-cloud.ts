// The data manager's one way to the cloud: it authenticates as the machine part (AuthService/Authenticate
// with entity = part id and credentials type `robot-secret`, or an API key) and uploads through
// DataSyncService. Everything the data manager knows of the cloud is this interface and CloudAccess (from
// the config's `cloud` section), so the online mode of the runtime only has to supply those.
import { ChannelCredentials, Client, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { DataCaptureUploadResponse, FileUploadRequest, type UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import type { CloudAccess } from '../shared/data-manager-attributes.js';

export interface PartCloud {
  readonly partId: string;
  /** Sends one encoded DataCaptureUploadRequest; resolves when the cloud acknowledged (committed) it. */
  dataCaptureUpload(body: Buffer): Promise<void>;
  /** Sends a file as a FileUpload stream; resolves when the cloud acknowledged it. */
  fileUpload(metadata: UploadMetadata, data: Buffer): Promise<void>;
  close(): void;
}

const UPLOAD_PATH = '/platform.app.datasync.v1.DataSyncService/DataCaptureUpload';
const FILE_UPLOAD_PATH = '/platform.app.datasync.v1.DataSyncService/FileUpload';
const CALL_DEADLINE_MS = 60_000;
const CHUNK = 64 * 1024;

/** `https://host[:port]` is TLS (port 443 by default); `http://host[:port]` and a bare `host:port` are plaintext. */
export function channelTarget(appAddress: string): { target: string; credentials: ChannelCredentials } {
  const url = /^(https?):\/\/([^/]+)\/?$/.exec(appAddress);
  if (!url) return { target: appAddress, credentials: ChannelCredentials.createInsecure() };
  const tls = url[1] === 'https';
  const target = /:\d+$/.test(url[2]) ? url[2] : `${url[2]}:${tls ? 443 : 80}`;
  return { target, credentials: tls ? ChannelCredentials.createSsl() : ChannelCredentials.createInsecure() };
}

const channelOptions = {
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  // Reconnect attempts stay frequent, so a cloud that comes back is found within seconds.
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 2000,
};

export function connectPartCloud(access: CloudAccess): PartCloud {
  const { target, credentials } = channelTarget(access.appAddress);
  let client: Client | undefined;
  let auth: AuthServiceClient | undefined;
  let token: { value: string; expiresAt: number } | undefined;

  const clients = () => {
    client ??= new Client(target, credentials, channelOptions);
    auth ??= new AuthServiceClient(target, credentials, channelOptions);
    return { client, auth };
  };
  /** After an unreachable cloud, start from fresh channels rather than waiting on a channel's own backoff. */
  const reset = () => {
    client?.close();
    auth?.close();
    client = auth = undefined;
  };

  const authenticate = async (): Promise<string> => {
    if (token && Date.now() < token.expiresAt) return token.value;
    const response = await new Promise<{ accessToken: string; expiresInSeconds: number }>((resolve, reject) =>
      clients().auth.authenticate(
        { entity: access.credentials.entity, credentials: { type: access.credentials.type, payload: access.credentials.payload } },
        new Metadata(),
        { deadline: Date.now() + CALL_DEADLINE_MS },
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    // Renew a minute early (or halfway through a short lifetime) so a token never expires mid-upload.
    const ttlMs = response.expiresInSeconds * 1000;
    token = { value: response.accessToken, expiresAt: Date.now() + Math.max(ttlMs - 60_000, ttlMs / 2) };
    return token.value;
  };

  /** Runs a call with the token; an expired token is renewed once, an unreachable cloud resets the channels. */
  const withToken = async (run: (md: Metadata) => Promise<void>): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const md = new Metadata();
        md.set('authorization', `Bearer ${await authenticate()}`);
        await run(md);
        return;
      } catch (err) {
        const code = (err as ServiceError).code;
        if (code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED) reset();
        if (code === status.UNAUTHENTICATED && attempt === 0 && token) {
          token = undefined;
          continue;
        }
        throw err;
      }
    }
  };

  return {
    partId: access.partId,
    dataCaptureUpload: (body) =>
      withToken(
        (md) =>
          new Promise<void>((resolve, reject) => {
            clients().client.makeUnaryRequest(
              UPLOAD_PATH,
              (b: Buffer) => b,
              (b: Buffer) => DataCaptureUploadResponse.decode(b),
              body,
              md,
              { deadline: Date.now() + CALL_DEADLINE_MS },
              (err) => (err ? reject(err) : resolve()),
            );
          }),
      ),
    fileUpload: (metadata, data) =>
      withToken(
        (md) =>
          new Promise<void>((resolve, reject) => {
            const stream = clients().client.makeClientStreamRequest(
              FILE_UPLOAD_PATH,
              (m: FileUploadRequest) => Buffer.from(FileUploadRequest.encode(m).finish()),
              (b: Buffer) => b,
              md,
              { deadline: Date.now() + CALL_DEADLINE_MS },
              (err) => (err ? reject(err) : resolve()),
            );
            stream.write({ metadata });
            for (let offset = 0; offset < data.byteLength; offset += CHUNK) stream.write({ fileContents: { data: data.subarray(offset, offset + CHUNK) } });
            stream.end();
          }),
      ),
    close: reset,
  };
}
