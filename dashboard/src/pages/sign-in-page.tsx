import { useState } from 'preact/hooks';
import { signIn, type Session } from '../api-client.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [credential, setCredential] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(credential.trim()));
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="sign-in">
      <h1>gw dashboard</h1>
      <form onSubmit={submit}>
        <label for="credential">Master credential or org-admin key</label>
        <input id="credential" name="credential" type="password" autoComplete="current-password" required value={credential} onInput={(event) => setCredential(event.currentTarget.value)} />
        <button type="submit" disabled={busy || !credential.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <p class="status error" role="alert">
            {error}
          </p>
        )}
      </form>
      <p class="hint">The master credential is printed on the gateway's first start. An org admin sees only its own organization.</p>
    </main>
  );
}
