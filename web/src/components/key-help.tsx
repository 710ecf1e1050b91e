/** A view's key bindings as a dialog (`?` opens it, Esc or ? closes it). */
export function KeyHelp(props: {
  title: string;
  bindings: ReadonlyArray<{ command: string; keys: string[]; does: string }>;
  note?: string;
}) {
  return (
    <div class="help" role="dialog" aria-label="Keyboard shortcuts">
      <h2>{props.title}</h2>
      <table>
        <tbody>
          {props.bindings.map((k) => (
            <tr key={k.command}>
              <td>
                {k.keys.map((key) => (
                  <kbd key={key}>{key}</kbd>
                ))}
              </td>
              <td>{k.does}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">Esc or ? closes this.{props.note ? ` ${props.note}` : ''}</p>
    </div>
  );
}
