// The contract between the data browser's shell (main.tsx) and its views. A view is a Preact component
// plus a nav entry; the shell renders the chosen one with ViewProps. Register a view with one line in
// view-registry.ts.
import type { JSX } from 'preact';
import type { CloudApi } from './api/client.js';

export interface ViewProps {
  /** Authenticated calls (`api.call(dataApi.tagsByFilter, {...})`) and thumbnails. */
  api: CloudApi;
  /** The organization the user signed in to. */
  orgId: string;
  /** Shows an error in the shell's banner (an RpcError's text is the cloud's own wording). */
  showError(err: unknown): void;
}

export interface CloudView {
  /** The nav's anchor: #/<id>. */
  id: string;
  /** The nav's label. */
  title: string;
  render(props: ViewProps): JSX.Element;
}
