// The cloud's SignalingService: machines hold an Answer stream open (as their part), callers send offers
// with Call to the machine named by `rpc-host` (a part id) and trickle candidates with CallUpdate. A caller
// must hold an API key whose scope covers the machine (its organization, location or the machine itself);
// a machine answers only as itself (its part token, or a key scoped to exactly its machine). The service
// only relays: it never sees the data channel. Everything it holds is bounded: Answer streams per part,
// offers waiting and answered calls per machine, the time an offer waits for its answer (10 s) and the
// time a call may keep trickling after it.
import { randomUUID } from 'node:crypto';
import { status, type Metadata, type sendUnaryData, type ServerDuplexStream, type ServerUnaryCall, type ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type {
  AnswerRequest,
  AnswerResponse,
  CallRequest,
  CallResponse,
  CallUpdateRequest,
  CallUpdateResponse,
  ICEServer,
  OptionalWebRTCConfigResponse,
  SignalingServiceServer,
} from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { parseDescription } from '../../core/serving/webrtc/peer.js';
import { fromWireCandidate } from '../../core/serving/webrtc/candidates.js';
import {
  deadlineExceeded,
  invalidArgument,
  notFound,
  permissionDenied,
  resourceExhausted,
  toServiceError,
  unavailable,
  StatusError,
} from '../../core/serving/status-error.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type PartPrincipal } from '../auth/principal.js';

/** An offer the machine has not answered by then fails with DEADLINE_EXCEEDED. */
export const OFFER_TIMEOUT_MS = 10_000;
/** Sent to an answerer that asked for them (`heartbeats-allowed: true`). */
export const HEARTBEAT_MS = 15_000;
/** Offers waiting on one machine at once (not answered yet); more get RESOURCE_EXHAUSTED. */
export const MAX_CALLS_PER_MACHINE = 64;
/**
 * Answered calls of one machine still relaying the caller's candidates; the oldest ends when one more is
 * answered. Without this bound, answered offers whose callers never finish (half-open) would hold the
 * machine's places for CALL_LIFETIME_MS and lock every other caller out; the machine itself holds at
 * most 128 peers (core/webrtc/answerer.ts), so older calls than these have no peer to reach.
 */
export const MAX_RELAYING_PER_MACHINE = 128;
/**
 * Answer streams held for one part at once. A machine holds one (a second while a dead one is not yet
 * noticed); the newest takes the offers, and past this the oldest is ended, so that a part's credentials
 * cannot pile up streams and heartbeat timers in the cloud.
 */
export const MAX_ANSWERERS_PER_PART = 4;
/** After the answer, how long a call may go on relaying candidates. */
export const CALL_LIFETIME_MS = 60_000;

interface Answerer {
  partId: string;
  stream: ServerDuplexStream<AnswerResponse, AnswerRequest>;
  /** Offers sent to the machine and not answered yet. */
  waiting: Set<string>;
  /** Answered calls still relaying candidates, oldest first. */
  relaying: Set<string>;
  heartbeat?: NodeJS.Timeout;
  /** Forgets the answerer and ends its stream (its calls fail UNAVAILABLE). */
  end(): void;
}

interface PendingCall {
  uuid: string;
  part: PartPrincipal;
  answerer: Answerer;
  caller: ServerWritableStream<CallRequest, CallResponse>;
  timer: NodeJS.Timeout;
  answered: boolean;
  ended: boolean;
}

const rpcHost = (md: Metadata): string => {
  const value = md.get('rpc-host')[0];
  return typeof value === 'string' ? value : '';
};

export interface Signaling {
  service: SignalingServiceServer;
  /** Machines answering now, by part id (for tests and status). */
  answering(partId: string): number;
  stop(): void;
}

export function createSignaling(authorizer: Authorizer, iceServers: ICEServer[], logger: Logger): Signaling {
  const answerers = new Map<string, Answerer[]>();
  const calls = new Map<string, PendingCall>();

  const partOf = async (host: string): Promise<PartPrincipal> => {
    if (!host) throw invalidArgument('rpc-host metadata: required, the id of the machine part to reach');
    const part = await authorizer.partPrincipal(host);
    if (!part) throw notFound(`rpc-host: machine part ${host.slice(0, 100)} does not exist`);
    return part;
  };
  const place = (part: PartPrincipal) => ({ organizationId: part.organizationId, locationId: part.locationId, machineId: part.machineId });

  const toMachine = (answerer: Answerer, request: AnswerRequest) => {
    if (!answerer.stream.cancelled && !answerer.stream.writableEnded) answerer.stream.write(request);
  };

  /** Ends the caller's Call stream (with an error, or cleanly once the machine sent all its candidates). */
  const endCaller = (call: PendingCall, error?: StatusError) => {
    if (call.caller.cancelled || call.caller.writableEnded) return;
    if (error) call.caller.emit('error', toServiceError(error));
    else call.caller.end();
  };

  /**
   * Forgets the call. The entry outlives the caller's Call stream on purpose: the caller trickles its own
   * candidates with CallUpdate after the machine has sent all of its, until it says done or the call's
   * lifetime ends. `error` is told to the caller and, unless it came from there, to the machine.
   */
  const finish = (call: PendingCall, error?: StatusError, tellMachine = true) => {
    if (call.ended) return;
    call.ended = true;
    clearTimeout(call.timer);
    calls.delete(call.uuid);
    call.answerer.waiting.delete(call.uuid);
    call.answerer.relaying.delete(call.uuid);
    endCaller(call, error);
    if (error && tellMachine) toMachine(call.answerer, { uuid: call.uuid, error: { status: { code: error.code, message: error.message } } });
  };

  const fromAnswerer = (answerer: Answerer, response: AnswerResponse) => {
    const call = calls.get(response.uuid);
    // Only the machine the offer went to may answer it.
    if (!call || call.answerer !== answerer) return;
    if (response.init && !call.answered) {
      call.answered = true;
      clearTimeout(call.timer);
      call.timer = setTimeout(() => finish(call), CALL_LIFETIME_MS);
      answerer.waiting.delete(call.uuid);
      answerer.relaying.add(call.uuid);
      if (answerer.relaying.size > MAX_RELAYING_PER_MACHINE) {
        const oldest = calls.get(answerer.relaying.values().next().value as string);
        if (oldest) finish(oldest);
      }
      if (!call.caller.cancelled) call.caller.write({ uuid: call.uuid, init: { sdp: response.init.sdp } });
    } else if (response.update?.candidate && call.answered) {
      if (!call.caller.cancelled && !call.caller.writableEnded) call.caller.write({ uuid: call.uuid, update: { candidate: response.update.candidate } });
    } else if (response.done) {
      endCaller(call);
    } else if (response.error) {
      const s = response.error.status;
      finish(call, new StatusError(s?.code ?? status.UNKNOWN, s?.message || 'the machine could not answer'), false);
    }
  };

  const service: SignalingServiceServer = {
    call: (caller: ServerWritableStream<CallRequest, CallResponse>) => {
      void (async () => {
        const principal = await authorizer.authenticate(caller.metadata);
        const part = await partOf(rpcHost(caller.metadata));
        authorizer.check(principal, place(part));
        try {
          parseDescription(caller.request.sdp, 'offer');
        } catch (err) {
          throw invalidArgument((err as Error).message);
        }
        const list = answerers.get(part.partId) ?? [];
        const answerer = list[list.length - 1];
        if (!answerer) throw unavailable(`machine part ${part.partId} is not answering: it is offline, or runs with -webrtc=false`);
        if (answerer.waiting.size >= MAX_CALLS_PER_MACHINE)
          throw resourceExhausted(`more than ${MAX_CALLS_PER_MACHINE} offers are waiting on machine part ${part.partId}`);
        const uuid = randomUUID();
        const call: PendingCall = {
          uuid,
          part,
          answerer,
          caller,
          answered: false,
          ended: false,
          timer: setTimeout(
            () => finish(call, deadlineExceeded(`machine part ${part.partId} did not answer within ${OFFER_TIMEOUT_MS / 1000} s`)),
            OFFER_TIMEOUT_MS,
          ),
        };
        calls.set(uuid, call);
        answerer.waiting.add(uuid);
        // A caller that gives up before the answer frees its place at once; after it, CallUpdate may go on.
        caller.on('cancelled', () => {
          if (!call.answered) finish(call, new StatusError(status.CANCELLED, 'the caller gave up'));
        });
        toMachine(answerer, {
          uuid,
          init: {
            sdp: caller.request.sdp,
            optionalConfig: { additionalIceServers: iceServers, disableTrickle: false },
            deadline: new Date(Date.now() + OFFER_TIMEOUT_MS),
          },
        });
      })().catch((err: unknown) => {
        if (!caller.cancelled) caller.emit('error', toServiceError(err));
      });
    },

    callUpdate: (req: ServerUnaryCall<CallUpdateRequest, CallUpdateResponse>, callback: sendUnaryData<CallUpdateResponse>) => {
      void (async () => {
        const principal = await authorizer.authenticate(req.metadata);
        const call = calls.get(req.request.uuid);
        if (!call) throw notFound(`uuid: no call ${JSON.stringify(req.request.uuid.slice(0, 64))} is being set up`);
        // The same rule as Call: a key of another organization learns nothing, not even that the call exists.
        if (principal.kind === 'part' || !authorizer.covers(principal, place(call.part))) {
          throw permissionDenied(`${describePrincipal(principal)} may not signal to machine part ${call.part.partId}`);
        }
        const { uuid } = call;
        if (req.request.candidate) {
          let candidate;
          try {
            candidate = fromWireCandidate(req.request.candidate);
          } catch (err) {
            throw invalidArgument((err as Error).message);
          }
          toMachine(call.answerer, { uuid, update: { candidate: { ...req.request.candidate, candidate: candidate.candidate } } });
        } else if (req.request.done) {
          toMachine(call.answerer, { uuid, done: {} });
          finish(call);
        } else if (req.request.error) {
          finish(call, new StatusError(status.CANCELLED, req.request.error.message || 'the caller gave up'));
        } else {
          throw invalidArgument('CallUpdateRequest: one of candidate, done or error is required');
        }
        return {};
      })().then(
        (res) => callback(null, res),
        (err: unknown) => callback(toServiceError(err)),
      );
    },

    answer: (stream: ServerDuplexStream<AnswerResponse, AnswerRequest>) => {
      void (async () => {
        const principal = await authorizer.authenticate(stream.metadata);
        const host = rpcHost(stream.metadata) || (principal.kind === 'part' ? principal.partId : '');
        const part = await partOf(host);
        const itself =
          principal.kind === 'part'
            ? principal.partId === part.partId
            : principal.organizationId === part.organizationId && principal.scope.type === 'machine' && principal.scope.id === part.machineId;
        if (!itself) throw permissionDenied(`${describePrincipal(principal)} may not answer for machine part ${part.partId}: only the part itself may`);
        // Gone while it was being checked: its 'cancelled' has fired already, nothing would ever forget it.
        if (stream.cancelled) return;
        let ended = false;
        const gone = () => {
          if (ended) return;
          ended = true;
          clearInterval(answerer.heartbeat);
          const rest = (answerers.get(part.partId) ?? []).filter((a) => a !== answerer);
          if (rest.length) answerers.set(part.partId, rest);
          else answerers.delete(part.partId);
          for (const uuid of [...answerer.waiting, ...answerer.relaying]) {
            const call = calls.get(uuid);
            if (call) finish(call, unavailable(`machine part ${part.partId} stopped answering`));
          }
          if (!stream.cancelled && !stream.writableEnded) stream.end();
        };
        const answerer: Answerer = { partId: part.partId, stream, waiting: new Set(), relaying: new Set(), end: gone };
        const list = [...(answerers.get(part.partId) ?? []), answerer];
        answerers.set(part.partId, list);
        if (list.length > MAX_ANSWERERS_PER_PART) list[0].end();
        if (stream.metadata.get('heartbeats-allowed')[0] === 'true') {
          answerer.heartbeat = setInterval(() => stream.write({ uuid: '', heartbeat: {} }), HEARTBEAT_MS);
        }
        stream.on('data', (response: AnswerResponse) => fromAnswerer(answerer, response));
        stream.on('end', gone);
        stream.on('cancelled', gone);
        stream.on('error', gone);
        logger.debug({ part: part.partId }, 'machine part answers WebRTC offers');
      })().catch((err: unknown) => {
        if (!stream.cancelled) stream.emit('error', toServiceError(err));
      });
    },

    optionalWebRtcConfig: (req: ServerUnaryCall<unknown, OptionalWebRTCConfigResponse>, callback: sendUnaryData<OptionalWebRTCConfigResponse>) => {
      // TURN credentials go to authenticated callers and machines only.
      authorizer.authenticate(req.metadata).then(
        () => callback(null, { config: { additionalIceServers: iceServers, disableTrickle: false } }),
        (err: unknown) => callback(toServiceError(err)),
      );
    },
  };

  return {
    service,
    answering: (partId) => answerers.get(partId)?.length ?? 0,
    stop: () => {
      for (const list of answerers.values()) {
        for (const a of list) {
          clearInterval(a.heartbeat);
          if (!a.stream.cancelled && !a.stream.writableEnded) a.stream.end();
        }
      }
      for (const call of [...calls.values()]) finish(call, unavailable('the cloud is stopping'));
    },
  };
}
