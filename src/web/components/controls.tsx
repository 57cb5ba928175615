/**
 * Labelled form controls beside `<Field>` (forms.tsx): a text area, a select and a checkbox.
 * Each binds its `<label>` by id (`id`, default `field-<name>`): pass `id` when a page holds
 * several forms with the same field.
 */
/** A labelled `<textarea>`. */
export function TextArea(props: { name: string; label: string; id?: string; value?: string | null; rows?: number; required?: boolean }) {
  const id = props.id ?? `field-${props.name}`;
  return (
    <p class="field">
      <label for={id}>{props.label}</label>
      <textarea id={id} name={props.name} rows={props.rows ?? 3} required={props.required}>
        {props.value ?? ''}
      </textarea>
    </p>
  );
}

/** A labelled `<select>`; `options` are value/label pairs, `value` the selected one. */
export function Select(props: { name: string; label: string; id?: string; value?: string; options: { value: string; label: string }[]; required?: boolean }) {
  const id = props.id ?? `field-${props.name}`;
  return (
    <p class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} required={props.required}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value} selected={o.value === props.value}>
            {o.label}
          </option>
        ))}
      </select>
    </p>
  );
}

/** A labelled checkbox sending `on` when checked (absent when not). */
export function Checkbox(props: { name: string; label: string; id?: string; checked: boolean }) {
  const id = props.id ?? `field-${props.name}`;
  return (
    <p class="check">
      <input type="checkbox" id={id} name={props.name} value="on" checked={props.checked} />
      <label for={id}>{props.label}</label>
    </p>
  );
}
