/** The error page (404, 403, domain errors) inside the normal layout. */
import type { PageContext } from '../page.js';
import { Layout } from './layout.js';

/** A page stating an HTTP status and the message (the domain error's own text). */
export function ErrorPage({ page, status, title, message }: { page: PageContext; status: number; title: string; message: string }) {
  return (
    <Layout page={page} title={title}>
      <section class="error">
        <h1>{title}</h1>
        <p class="status">{`Error ${status}`}</p>
        <p>{message}</p>
        <p>
          <a href="/">Go to the dashboard</a>
        </p>
      </section>
    </Layout>
  );
}
