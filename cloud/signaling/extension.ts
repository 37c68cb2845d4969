// The signaling extension of platform-cloud: SignalingService (gRPC, and gRPC-Web through the web port
// like every service of the cloud), with the ICE servers of the setting PLATFORM_WEBRTC_ICE_SERVERS.
import type { CloudExtension } from '../kit/extension-contract.js';
import { SignalingServiceService } from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { iceServersFromEnv } from './ice-servers.js';
import { createSignaling, type Signaling } from './signaling-service.js';

export function createSignalingExtension(env: NodeJS.ProcessEnv = process.env): CloudExtension {
  let signaling: Signaling | undefined;
  return {
    name: 'signaling',
    start(ctx) {
      // A malformed setting stops the cloud at start with the setting's name, not the first caller.
      signaling = createSignaling(ctx.authorizer, iceServersFromEnv(env), ctx.logger);
      ctx.server.addService(SignalingServiceService, signaling.service);
    },
    stop() {
      signaling?.stop();
    },
  };
}
