// platform-cloud's data browser: sign in with an API key, then the views of view-registry.ts in a nav.
// The key and its token live only in sessionStorage (session.ts); every call is gRPC-Web to the cloud's
// own services with the token as bearer, so the page can do exactly what the key may do, no more.
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { CloudApi } from './api/client.js';
import { markInteractive } from './ready.js';
import { clearSession, loadSession, renewSession, signIn, type Session } from './session.js';
import { views } from './view-registry.js';

function SignIn({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [keyId, setKeyId] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(markInteractive, []);
  const submit = (event: Event) => {
    event.preventDefault();
    setError('');
    setBusy(true);
    signIn(keyId.trim(), key.trim()).then(onSignedIn, (err: Error) => {
      setError(err.message);
      setBusy(false);
    });
  };
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>platform-cloud</h1>
      <label>
        API key id
        <input value={keyId} onInput={(e) => setKeyId(e.currentTarget.value)} required autocomplete="username" />
      </label>
      <label>
        API key
        <input type="password" value={key} onInput={(e) => setKey(e.currentTarget.value)} required autocomplete="current-password" />
      </label>
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

const viewOfHash = () => views.find((v) => `#/${v.id}` === location.hash) ?? views[0];

function Shell({ session, onSignOut }: { session: Session; onSignOut(): void }) {
  const [view, setView] = useState(viewOfHash);
  const [error, setError] = useState('');
  const api = useMemo(
    () =>
      new CloudApi(session, async (s) => {
        try {
          return await renewSession(s);
        } catch (err) {
          // The key itself was refused (revoked, rotated): back to the form.
          onSignOut();
          throw err;
        }
      }),
    [session],
  );
  useEffect(() => {
    const follow = () => {
      setView(viewOfHash());
      setError('');
    };
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return (
    <>
      <header>
        <strong>platform-cloud</strong>
        <nav>
          {views.map((v) => (
            <a key={v.id} href={`#/${v.id}`} aria-current={v.id === view.id ? 'page' : undefined}>
              {v.title}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="signed-in">
          key {session.keyId} · org {session.orgId}
        </span>
        <button onClick={onSignOut}>Sign out</button>
      </header>
      {error && (
        <p class="error banner" role="alert">
          {error}{' '}
          <button class="link" onClick={() => setError('')}>
            dismiss
          </button>
        </p>
      )}
      <main>{view.render({ api, orgId: session.orgId, showError: (err) => setError(err instanceof Error ? err.message : String(err)) })}</main>
    </>
  );
}

function App() {
  const [session, setSession] = useState(loadSession);
  if (!session) return <SignIn onSignedIn={setSession} />;
  return (
    <Shell
      key={session.token}
      session={session}
      onSignOut={() => {
        clearSession();
        setSession(undefined);
      }}
    />
  );
}

render(<App />, document.getElementById('app')!);
