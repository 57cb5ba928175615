/**
 * `/~administration/ssh`: git over SSH as it runs (docs/compatibility.md#git-over-ssh) — port,
 * interface, root of SSH clone URLs, the host keys' fingerprints as `ssh-keygen -l` prints them
 * (what users compare when their client first asks) and public keys (what a `known_hosts` file
 * takes), and the limits. Read only: SSH is configured through `GITLOOM_SSH_*`.
 */
import { sshStatus } from '../../../domain/ssh/index.js';
import { settingsRoute, SettingsLayout } from '../../components/settings.js';
import type { PageContext, PageModule, PageResult } from '../../page.js';

async function sshPage(page: PageContext): Promise<PageResult> {
  const status = await sshStatus(page.ctx);
  const minutes = status.limits.idleTimeoutMs / 60_000;
  return (
    <SettingsLayout page={page} area="administration" section="ssh" title="SSH">
      {status.port === null ? (
        <p class="empty">Git over SSH is off (GITLOOM_SSH_PORT=0).</p>
      ) : (
        <>
          <dl class="facts" aria-label="SSH server">
            <dt>Port</dt>
            <dd>{status.port}</dd>
            <dt>Interface</dt>
            <dd>{status.host}</dd>
            <dt>Clone URL root</dt>
            <dd>
              <code>{status.rootUrl}</code>
            </dd>
            <dt>Limits</dt>
            <dd>
              {status.limits.sessionsPerUser} git commands per user at once; idle connections closed after{' '}
              {status.limits.idleTimeoutMs === 0 ? 'never' : `${Number(minutes.toFixed(1))} min`}; {status.limits.unauthenticated} connections authenticating at
              once
            </dd>
          </dl>
          <h2>Host keys</h2>
          <ul class="list" aria-label="Host keys">
            {status.hostKeys.map((key) => (
              <li key={key.type} class="row">
                <p>
                  <code>
                    {key.bits} {key.fingerprint} ({key.label})
                  </code>
                </p>
                <p>
                  <code class="public-key">{key.publicKey}</code>
                </p>
              </li>
            ))}
          </ul>
        </>
      )}
      {status.port === null && status.rootUrl !== null && (
        <p>
          Clone URLs still name <code>{status.rootUrl}</code> (GITLOOM_SSH_ROOT_URL).
        </p>
      )}
    </SettingsLayout>
  );
}

export const sshAdministrationPages: PageModule = {
  pages: [settingsRoute('administration', 'GET', '/ssh', (page) => sshPage(page))],
};
