import type { ComponentChildren } from 'preact';

/** One side's facts, as label and value. */
export type ConflictFacts = Array<[label: string, value: ComponentChildren]>;

/**
 * What a 409 opens: my version and theirs side by side, nothing written until the person chooses
 * with one key (`choices` says which).
 */
export function ConflictDialog(props: {
  mine: ConflictFacts;
  theirs: ConflictFacts;
  choices: ComponentChildren;
}) {
  return (
    <div class="conflict" role="dialog" aria-label="Someone else changed this object">
      <h2>Someone else changed this object meanwhile</h2>
      <p class="muted">Nothing was overwritten. Choose with one key.</p>
      <div class="sides">
        <Side label="Yours" facts={props.mine} />
        <Side label="Theirs (now)" facts={props.theirs} />
      </div>
      <p class="choices">{props.choices}</p>
    </div>
  );
}

function Side({ label, facts }: { label: string; facts: ConflictFacts }) {
  return (
    <section aria-label={label}>
      <h3>{label}</h3>
      <dl class="facts">
        {facts.map(([name, value]) => [
          <dt key={`${name}-t`}>{name}</dt>,
          <dd key={`${name}-d`}>{value}</dd>,
        ])}
      </dl>
    </section>
  );
}
