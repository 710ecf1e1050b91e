import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient, Session } from './api';

export interface AppContext {
  api: ApiClient;
  session: Session;
}

export const Ctx = createContext<AppContext | null>(null);

/** The API client and the signed-in session, for views under the shell. */
export function useApp(): AppContext {
  const ctx = useContext(Ctx);
  if (!ctx) throw new Error('useApp outside a signed-in shell');
  return ctx;
}
