/** Form components: every state-changing form is a `<PostForm>`, which carries the CSRF token. */
import type { ComponentChildren } from 'preact';
import type { PageContext } from '../page.js';
import { CSRF_FIELD } from '../session.js';

export interface PostFormProps {
  page: PageContext;
  /** The URL the form posts to. */
  action: string;
  class?: string;
  /** Accessible name of the form, when the page has several. */
  label?: string;
  /** `multipart/form-data` for a form sending a file. */
  enctype?: 'multipart/form-data';
  children: ComponentChildren;
}

/** A `<form method="post">` with the hidden `_csrf` field the web plugin checks on every POST. */
export function PostForm({ page, action, class: className, label, enctype, children }: PostFormProps) {
  return (
    <form method="post" action={action} class={className} aria-label={label} enctype={enctype}>
      <input type="hidden" name={CSRF_FIELD} value={page.csrfToken} />
      {children}
    </form>
  );
}

/** A labelled text input (`<label>` bound by id: `id`, default `field-<name>`; pass `id` when a page has several forms with the same field). */
export function Field(props: {
  name: string;
  label: string;
  id?: string;
  type?: 'text' | 'password' | 'email' | 'search';
  value?: string;
  required?: boolean;
  autocomplete?: string;
  autofocus?: boolean;
}) {
  const id = props.id ?? `field-${props.name}`;
  return (
    <p class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        required={props.required}
        autocomplete={props.autocomplete}
        autofocus={props.autofocus}
      />
    </p>
  );
}

/** Hidden inputs, one per entry of `fields` (name → value), in their order. */
export function HiddenFields({ fields }: { fields: Record<string, string> }) {
  return (
    <>
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
    </>
  );
}

/**
 * A one-button form within a line (`class="inline"`: remove, revoke, watch, …): posts the hidden
 * `fields` to `action`; the button shows `children`, with `buttonClass` (`danger`, `link`) and
 * `buttonLabel` as its accessible name when the text alone is ambiguous.
 */
export function InlineForm({
  page,
  action,
  label,
  fields = {},
  buttonClass,
  buttonLabel,
  children,
}: {
  page: PageContext;
  action: string;
  label: string;
  fields?: Record<string, string>;
  buttonClass?: string;
  buttonLabel?: string;
  children: ComponentChildren;
}) {
  return (
    <PostForm page={page} action={action} class="inline" label={label}>
      <HiddenFields fields={fields} />
      <button type="submit" class={buttonClass} aria-label={buttonLabel}>
        {children}
      </button>
    </PostForm>
  );
}
