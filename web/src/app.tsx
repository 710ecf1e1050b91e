import { useEffect, useState } from 'preact/hooks';
import type { ApiClient, Session, User } from './api';
import { Ctx } from './context';
import { here, navigate, useLocation } from './router';
import { Shell } from './components/shell';
import { EditorView } from './views/editor';
import { GridView } from './views/grid';
import { QueueView } from './views/queue';
import { ReviewView } from './views/review';
import { SignInView } from './views/signin';

/** Renews the token this long before it expires (or halfway through a shorter lifetime). */
const REFRESH_AHEAD_MS = 5 * 60_000;

function useSession(api: ApiClient): [Session | null, string | null] {
  const [session, setSession] = useState(api.sessions.get());
  const [why, setWhy] = useState<string | null>(null);
  useEffect(
    () =>
      api.sessions.subscribe((s, reason) => {
        setSession(s);
        setWhy(reason ?? null);
      }),
    [api],
  );
  return [session, why];
}

export function App({ api }: { api: ApiClient }) {
  const [session, why] = useSession(api);
  const location = useLocation();

  // A stored session is checked once: the role is the API's to say, and may have changed.
  useEffect(() => {
    if (!session) return;
    api
      .get<User>('/api/users/me')
      .then((me) => {
        const s = api.sessions.get();
        if (s && s.user.role !== me.role) api.sessions.set({ ...s, user: { ...s.user, role: me.role } });
      })
      .catch(() => undefined); // a 401 has ended the session already; anything else shows on the next call
  }, [session?.token === undefined]);

  useEffect(() => {
    if (!session) return;
    const left = Date.parse(session.expiresAt) - Date.now();
    const timer = setTimeout(
      () => void api.refresh().catch(() => undefined),
      Math.max(1000, left - Math.min(REFRESH_AHEAD_MS, left / 2)),
    );
    return () => clearTimeout(timer);
  }, [session?.expiresAt]);

  const signingIn = location.path === '/signin';
  useEffect(() => {
    if (!session && !signingIn) navigate(`/signin?next=${encodeURIComponent(here())}`, { replace: true });
    if (session && signingIn) navigate(safeNext(location.query.get('next')), { replace: true });
    if (session && location.path === '/') navigate('/queue', { replace: true });
  }, [session, location.path]);

  if (!session || signingIn) return <SignInView api={api} notice={why} />;
  return (
    <Ctx.Provider value={{ api, session }}>
      <Shell>{route(location.path)}</Shell>
    </Ctx.Provider>
  );
}

function route(path: string) {
  if (path === '/queue') return <QueueView />;
  if (path === '/review') return <ReviewView />;
  if (path === '/grid') return <GridView />;
  if (path === '/editor') return <EditorView />;
  return (
    <main class="page">
      <h1>Nothing here</h1>
      <p>
        There is no page at <code>{path}</code>. <a href="/queue">Go to the review queue</a>.
      </p>
    </main>
  );
}

/** Only a path inside this app is followed after sign-in, never another origin. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && next !== '/signin' ? next : '/queue';
}
