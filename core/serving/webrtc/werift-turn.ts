// Repairs to werift 0.24.4's TURN client (TurnProtocol), applied once when werift-loader.ts loads (with werift, on the first peer connection). Written against
// that version's code (lib/index.mjs); re-check them when werift is upgraded (scripts/e2e/werift-turn.test.ts fails
// if the faults come back). Three faults, each of which kept a process alive or held a relay:
//  1. A closed allocation keeps refreshing: its refresh loop sleeps 5/6 of the allocation's lifetime
//     (500 s for coturn's 600 s) in a timer that is neither cancelled by close nor unref'd, so a client
//     that used a relay could not exit for over 8 minutes after closing, and every closed connection of a
//     machine held that timer. Here the refresh is a timer of our own, unref'd, cleared on close.
//  2. A failed allocation (wrong credentials, no server) leaves its UDP socket (and, after werift's TCP
//     fallback, its TCP socket) open for ever. Here the transport is closed when the allocation fails.
//  3. Close never deallocates, so the TURN server holds the relay port until the lifetime ends (600 s):
//     a few hundred dials exhaust a small relay range. Here close first sends a REFRESH with lifetime 0
//     (RFC 8656 §7), once and without waiting for its answer.
import type { Socket } from 'node:dgram';
import { Message, TurnProtocol, classes, methods } from 'werift';

/** What is reached of a TurnProtocol beyond its public type (all of it plain fields in 0.24.4). */
interface TurnState {
  server: readonly [string, number];
  transport: { type: string; closed: boolean; close(): Promise<void>; socket?: Socket };
  integrityKey?: Buffer;
  nonce?: Buffer;
  relayedAddress?: unknown;
  request(request: Message, addr: readonly [string, number], integrityKey?: Buffer, options?: { signal?: AbortSignal }): Promise<[Message, unknown]>;
  send(data: Buffer, addr: readonly [string, number]): Promise<void>;
  /** werift's own refresh loop, an instance field: replaced before the allocation starts it. */
  refresh: (lifetime: number) => void;
  platformRefreshTimer?: NodeJS.Timeout;
  platformRefreshAbort?: AbortController;
  platformClosed?: boolean;
}

/** STUN error 438: the nonce went stale; the answer carries the new one. */
const STALE_NONCE = 438;

const errorCode = (err: unknown): number | undefined => {
  const response = (err as { response?: Message } | undefined)?.response;
  const value = response?.getAttributeValue?.('ERROR-CODE') as [number, string] | undefined;
  return value?.[0];
};

/** One REFRESH with `lifetime` seconds, retried once on a stale nonce; resolves with the lifetime granted. */
async function refreshOnce(turn: TurnState, lifetime: number, signal: AbortSignal): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const request = new Message(methods.REFRESH, classes.REQUEST).setAttribute('LIFETIME', lifetime);
    try {
      const [response] = await turn.request(request, turn.server, undefined, { signal });
      return (response.getAttributeValue('LIFETIME') as number | undefined) ?? lifetime;
    } catch (err) {
      if (attempt > 0 || errorCode(err) !== STALE_NONCE) throw err;
      turn.nonce = (err as { response: Message }).response.getAttributeValue('NONCE') as Buffer;
    }
  }
}

/** Keeps the allocation alive at 5/6 of its lifetime (as werift did), in a timer that close clears. */
function scheduleRefresh(turn: TurnState, lifetime: number): void {
  if (turn.platformClosed) return;
  clearTimeout(turn.platformRefreshTimer);
  turn.platformRefreshTimer = setTimeout(
    () => {
      turn.platformRefreshAbort = new AbortController();
      refreshOnce(turn, lifetime, turn.platformRefreshAbort.signal).then(
        (granted) => scheduleRefresh(turn, granted),
        // A refresh that failed is tried again at the next interval; the server ends the allocation if
        // none gets through before it expires, and ICE consent then fails the connection.
        () => scheduleRefresh(turn, lifetime),
      );
    },
    (5 / 6) * lifetime * 1000,
  );
  // The relay's socket keeps the process alive while it is open; the refresh timer alone must not.
  turn.platformRefreshTimer.unref();
}

/** Sends one deallocation (REFRESH, lifetime 0) without waiting: the server frees the relay at once. */
async function deallocate(turn: TurnState): Promise<void> {
  if (!turn.relayedAddress || !turn.integrityKey || !turn.nonce || turn.transport.closed) return;
  const request = new Message(methods.REFRESH, classes.REQUEST)
    .setAttribute('LIFETIME', 0)
    .setAttribute('USERNAME', (turn as unknown as { username: string }).username)
    .setAttribute('REALM', (turn as unknown as { realm: string }).realm)
    .setAttribute('NONCE', turn.nonce)
    .addMessageIntegrity(turn.integrityKey)
    .addFingerprint();
  const { socket } = turn.transport;
  if (turn.transport.type === 'udp' && socket) {
    // werift's UDP send takes no callback for an IP address, and a socket closed right after it drops the
    // datagram: wait for this one to be handed to the kernel.
    await new Promise<void>((resolve) => socket.send(request.bytes, turn.server[1], turn.server[0], () => resolve()));
  } else {
    await turn.send(request.bytes, turn.server).catch(() => undefined);
  }
}

let applied = false;

export function repairWeriftTurn(): void {
  if (applied) return;
  applied = true;
  const proto = TurnProtocol.prototype as unknown as TurnState & { connectionMade(): Promise<void>; close(): Promise<void> };
  const connectionMade = proto.connectionMade;
  const close = proto.close;
  if (typeof connectionMade !== 'function' || typeof close !== 'function') {
    throw new Error('werift: TurnProtocol has no connectionMade/close to repair; check core/serving/webrtc/werift-turn.ts against this werift version');
  }
  proto.connectionMade = async function (this: TurnState) {
    this.refresh = (lifetime) => scheduleRefresh(this, lifetime);
    try {
      await connectionMade.call(this);
    } catch (err) {
      await this.transport.close().catch(() => undefined);
      throw err;
    }
  };
  proto.close = async function (this: TurnState) {
    if (!this.platformClosed) {
      this.platformClosed = true;
      clearTimeout(this.platformRefreshTimer);
      this.platformRefreshAbort?.abort();
      await deallocate(this);
    }
    return close.call(this);
  };
}
