import { useEffect, useState } from 'preact/hooks';
import { readableError, type ApiClient } from '../api';
import { Problem } from './problem';

interface Checkpoint {
  id: string;
  name: string;
  note: string | null;
  created_at: string;
}

/**
 * A frame's checkpoints: save the frame's annotation state under a name, list the saves (newest
 * first), and (reviewer) restore one. A restore saves the state before it as a checkpoint of its
 * own, so it can be undone by restoring that one.
 */
export function CheckpointsPanel(props: {
  api: ApiClient;
  frameId: string;
  canRestore: boolean;
  /** Bumped by the editor when objects change, so the list stays current after a restore. */
  revision: number;
  onRestored: (message: string) => void;
}) {
  const { api, frameId } = props;
  const [items, setItems] = useState<Checkpoint[]>([]);
  const [name, setName] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () =>
    api
      .get<{ items: Checkpoint[] }>(`/api/frames/${frameId}/checkpoints`)
      .then((r) => setItems(r.items))
      .catch((err: unknown) => setError(readableError(err)));

  useEffect(() => void load(), [frameId, props.revision]);

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      await load();
    } catch (err) {
      setError(readableError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <details open>
      <summary>Checkpoints</summary>
      <form
        class="checkpoint-form"
        aria-label="Save a checkpoint"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            await api.post(`/api/frames/${frameId}/checkpoints`, { name, note: note || null });
            setName('');
            setNote('');
          });
        }}
      >
        <input
          aria-label="Checkpoint name"
          placeholder="Name"
          required
          maxLength={200}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <input
          aria-label="Checkpoint note"
          placeholder="Note (optional)"
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy || !name.trim()}>
          Save
        </button>
      </form>
      <Problem message={error} />
      <ul class="checkpoints" aria-label="Saved checkpoints">
        {items.map((c) => (
          <li key={c.id}>
            <span class="name">{c.name}</span>
            <time class="muted" dateTime={c.created_at}>
              {new Date(c.created_at).toLocaleString()}
            </time>
            {c.note && <span class="muted note">{c.note}</span>}
            {props.canRestore && (
              <button
                type="button"
                class="quiet"
                disabled={busy}
                aria-label={`Restore ${c.name}`}
                onClick={() =>
                  void act(async () => {
                    await api.post(`/api/checkpoints/${c.id}/restore`);
                    props.onRestored(`Restored “${c.name}”; the state before was saved as a checkpoint.`);
                  })
                }
              >
                Restore
              </button>
            )}
          </li>
        ))}
        {items.length === 0 && <li class="muted">No checkpoint saved for this frame.</li>}
      </ul>
    </details>
  );
}
