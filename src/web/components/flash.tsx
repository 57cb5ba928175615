/** The messages a page shows above its content after a form: a refusal or a notice. */

/** A refused action's message (the domain's), announced as an alert; nothing without one. */
export function Flash({ error }: { error?: string | null }) {
  return error ? (
    <p class="flash error" role="alert">
      {error}
    </p>
  ) : null;
}

/** What a done action changed (`Password changed.`), announced as a status; nothing without one. */
export function Notice({ notice }: { notice?: string | null }) {
  return notice ? (
    <p class="flash notice" role="status">
      {notice}
    </p>
  ) : null;
}
