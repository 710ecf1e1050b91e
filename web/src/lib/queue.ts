import type { ApiClient } from '../api';
import { useLocation } from '../router';

/** One object of GET /api/triage. */
export interface QueueItem {
  object_id: string;
  frame_id: string;
  session_id: string;
  class_name: string;
  l1: string;
  conf: number | null;
  state: string;
  source: string;
  version: number;
  score: number;
  uncertainty: number;
  rarity: number;
  paths: string[] | null;
}

export interface QueuePage {
  items: QueueItem[];
  next_cursor: string | null;
}

/** Every state an object can be in (spec, States and transitions), in the order the UI lists them. */
export const OBJECT_STATES = [
  'review',
  'submitted',
  'annotate',
  'auto_accept',
  'accepted',
  'rejected',
] as const;

export const DEFAULT_STATES = 'review,submitted';

/** The queue's filters, as the URL holds them (so a queue can be bookmarked and shared). */
export type QueueFilters = {
  session_id: string;
  class_name: string;
  state: string;
};

export function useQueueFilters(): QueueFilters {
  const { query } = useLocation();
  return {
    session_id: query.get('session_id') ?? '',
    class_name: query.get('class_name') ?? '',
    state: query.get('state') ?? DEFAULT_STATES,
  };
}

export const fetchQueuePage = (
  api: ApiClient,
  filters: QueueFilters,
  cursor: string | null,
  limit: number,
  signal?: AbortSignal,
) => api.get<QueuePage>('/api/triage', { ...filters, cursor, limit }, signal);
