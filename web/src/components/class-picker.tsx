import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';

export interface OntologyClass {
  id: number;
  name: string;
  l0: string;
  l1: string;
  retired: boolean;
}

/** Classes whose name, l1 or l0 contains every typed word; names that start with the query first. */
export function searchClasses(classes: OntologyClass[], query: string, limit = 12): OntologyClass[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const q = query.trim().toLowerCase();
  return classes
    .filter((c) => !c.retired)
    .filter((c) => words.every((w) => `${c.name} ${c.l1} ${c.l0}`.toLowerCase().includes(w)))
    .sort((a, b) => rank(a, q) - rank(b, q) || a.name.localeCompare(b.name))
    .slice(0, limit);
}

const rank = (c: OntologyClass, q: string) => (c.name === q ? 0 : c.name.startsWith(q) ? 1 : 2);

/**
 * Type-to-search over the ontology, keyboard only: type, ↑/↓ to move, Enter to choose, Esc to
 * leave. Each choice shows its l0 and l1.
 */
export function ClassPicker(props: {
  classes: OntologyClass[];
  onPick: (name: string) => void;
  onCancel: () => void;
}) {
  const [query, setQuery] = useState('');
  const [at, setAt] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const matches = useMemo(() => searchClasses(props.classes, query), [props.classes, query]);
  // Focus before the browser handles the next key: a reviewer types the class right after C, and
  // a key that arrives before an effect would run is lost (or worse, Enter picks from no query).
  useLayoutEffect(() => input.current?.focus(), []);
  useEffect(() => setAt(0), [query]);

  return (
    <div class="picker" role="dialog" aria-label="Choose a class">
      <input
        ref={input}
        placeholder="Type a class…"
        aria-label="Class search"
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'ArrowDown') setAt((i) => Math.min(matches.length - 1, i + 1));
          else if (e.key === 'ArrowUp') setAt((i) => Math.max(0, i - 1));
          else if (e.key === 'Enter') {
            // What the field holds now, not the last render's matches: typing and Enter can
            // arrive within one frame.
            const now = searchClasses(props.classes, e.currentTarget.value);
            const chosen = e.currentTarget.value === query ? now[at] : now[0];
            if (chosen) props.onPick(chosen.name);
          } else if (e.key === 'Escape') props.onCancel();
          else return;
          e.preventDefault();
        }}
      />
      <ul role="listbox">
        {matches.map((c, i) => (
          <li key={c.id} role="option" aria-selected={i === at} class={i === at ? 'on' : undefined}>
            <span class="name">{c.name}</span>
            <span class="tax">
              {c.l0} · {c.l1}
            </span>
          </li>
        ))}
        {matches.length === 0 && <li class="none">No class matches “{query}”.</li>}
      </ul>
    </div>
  );
}
