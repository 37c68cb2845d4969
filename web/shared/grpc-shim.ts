// The browser bundle's stand-in for @grpc/grpc-js: the generated protos import it only to build Node
// client and service classes, which the page never uses (it calls through grpc-web-client.ts).
export class Client {}
export function makeGenericClientConstructor(): typeof Client {
  return Client;
}
