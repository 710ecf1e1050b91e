import { useState } from 'preact/hooks';
import { readableError, type ApiClient } from '../api';
import { Problem } from '../components/problem';

/** The platform serves this meta tag only in a local environment, where dev-login exists. */
const devLoginOffered = () =>
  document.querySelector('meta[name="drivelab-dev-login"]')?.getAttribute('content') === 'true';

export function SignInView({ api, notice }: { api: ApiClient; notice: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const attempt = async (signIn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await signIn(); // the app moves on when the session changes
    } catch (err) {
      setError(readableError(err));
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          void attempt(() => api.signIn(email, password));
        }}
      >
        <h1>Sign in to drivelab review</h1>
        {notice && <p class="notice">{notice}</p>}
        <label>
          E-mail
          <input
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <Problem message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {devLoginOffered() && (
          <button
            type="button"
            class="quiet"
            disabled={busy}
            onClick={() => void attempt(() => api.devSignIn())}
          >
            Sign in as the local developer (admin)
          </button>
        )}
      </form>
    </main>
  );
}
