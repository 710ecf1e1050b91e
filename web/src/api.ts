/**
 * The UI's only way to the platform: `/api` over HTTP with the user's bearer token. Failures
 * become ApiError with the problem+json body's words; a 401 ends the session (the app sends the
 * user to sign-in and back).
 */

export type Role = 'annotator' | 'reviewer' | 'admin';

export interface User {
  id: string;
  email: string;
  name: string | null;
  role: Role;
}

export interface Session {
  token: string;
  expiresAt: string;
  user: User;
}

/** A field the API named in a 4xx answer. */
export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly errors: FieldError[] = [],
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail || title);
    this.name = 'ApiError';
  }

  /** What a person reads: the detail, and the fields it names. */
  get readable(): string {
    const fields = this.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    return [this.detail || this.title, fields].filter(Boolean).join(' — ');
  }
}

/** Any failure as a person should read it. */
export const readableError = (err: unknown): string =>
  err instanceof ApiError ? err.readable : err instanceof Error ? err.message : String(err);

/** No answer at all: the network or the server is down. Decisions are kept and retried. */
export class OfflineError extends Error {
  override name = 'OfflineError';
}

const ROLE_RANK: Record<Role, number> = { annotator: 0, reviewer: 1, admin: 2 };
export const roleAtLeast = (role: Role, least: Role): boolean => ROLE_RANK[role] >= ROLE_RANK[least];

const STORAGE_KEY = 'drivelab.session';

type Listener = (session: Session | null, why?: string) => void;

/** The signed-in session, kept in localStorage so a reload or a second tab stays signed in. */
export class SessionStore {
  private listeners = new Set<Listener>();
  private current: Session | null;

  constructor(private storage: Storage = window.localStorage) {
    const raw = storage.getItem(STORAGE_KEY);
    this.current = raw ? (JSON.parse(raw) as Session) : null;
    if (this.current && Date.parse(this.current.expiresAt) <= Date.now()) this.current = null;
  }

  get(): Session | null {
    return this.current;
  }

  set(session: Session | null, why?: string): void {
    this.current = session;
    if (session) this.storage.setItem(STORAGE_KEY, JSON.stringify(session));
    else this.storage.removeItem(STORAGE_KEY);
    for (const l of this.listeners) l(session, why);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** How a successful answer is read: JSON (the default) or the bytes as they came (images). */
  as?: 'json' | 'blob';
  query?: Record<string, string | number | undefined | null>;
  signal?: AbortSignal;
}

export class ApiClient {
  constructor(readonly sessions: SessionStore) {}

  async request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    const url = new URL(path, window.location.origin);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { Accept: 'application/json' };
    const session = this.sessions.get();
    if (session) headers.Authorization = `Bearer ${session.token}`;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url, {
        method: opts.method ?? 'GET',
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: opts.signal,
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new OfflineError('the platform cannot be reached; check the connection');
    }
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    if (res.ok && opts.as === 'blob') return (await res.blob()) as T;
    const body = isJson ? ((await res.json()) as Record<string, unknown>) : {};
    if (!res.ok) {
      const error = new ApiError(
        res.status,
        String(body.title ?? res.statusText),
        String(body.detail ?? ''),
        Array.isArray(body.errors) ? (body.errors as FieldError[]) : [],
        body,
      );
      // A token that no longer works ends the session; sign-in itself answers 401 for a wrong password.
      if (res.status === 401 && session) this.sessions.set(null, 'Your session has ended; sign in again.');
      throw error;
    }
    return body as T;
  }

  get<T>(path: string, query?: RequestOptions['query'], signal?: AbortSignal): Promise<T> {
    return this.request<T>(path, { query, signal });
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>(path, { method: 'POST', body });
  }

  async signIn(email: string, password: string): Promise<Session> {
    return this.start(await this.post<TokenAnswer>('/api/auth/login', { email, password }));
  }

  async devSignIn(): Promise<Session> {
    return this.start(await this.post<TokenAnswer>('/api/auth/dev-login'));
  }

  signOut(): void {
    this.sessions.set(null);
  }

  /** Rolls the token; the user (and role) is read again, since the API decides roles per request. */
  async refresh(): Promise<Session> {
    const t = await this.post<TokenAnswer>('/api/auth/refresh');
    const current = this.sessions.get();
    if (!current) throw new Error('not signed in');
    const session = { ...current, token: t.token, expiresAt: t.expires_at };
    this.sessions.set(session);
    const me = await this.get<User>('/api/users/me');
    this.sessions.set({ ...session, user: pickUser(me) });
    return this.sessions.get()!;
  }

  private start(t: TokenAnswer): Session {
    if (!t.user) throw new Error('the sign-in answer named no user');
    const session = { token: t.token, expiresAt: t.expires_at, user: pickUser(t.user) };
    this.sessions.set(session);
    return session;
  }
}

interface TokenAnswer {
  token: string;
  expires_at: string;
  user?: User;
}

const pickUser = (u: User): User => ({ id: u.id, email: u.email, name: u.name, role: u.role });
