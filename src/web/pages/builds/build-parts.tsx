/**
 * Pieces the build pages share: the status badge, dates and durations, the ref of a build and
 * the builds table of the lists (`/<project>/~builds`, `/~builds`).
 */
import type { queryBuilds } from '../../../domain/builds/index.js';

/** A build row as the domain's queries return it. */
export type Build = Awaited<ReturnType<typeof queryBuilds>>[number];

/** Whether a status is final (docs/compatibility.md#builds-lifecycle). */
export function isFinished(status: Build['status']): boolean {
  return status === 'SUCCESSFUL' || status === 'FAILED' || status === 'CANCELLED' || status === 'TIMED_OUT';
}

const STATUS_LABELS: Record<Build['status'], string> = {
  WAITING: 'Waiting',
  PENDING: 'Pending',
  RUNNING: 'Running',
  SUCCESSFUL: 'Successful',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
  TIMED_OUT: 'Timed out',
};

/** The status as a word in a badge (colour is never the only signal). */
export function StatusBadge({ status }: { status: Build['status'] }) {
  return <span class={`badge status-${status.toLowerCase().replace('_', '-')}`}>{STATUS_LABELS[status]}</span>;
}

/** An epoch-ms instant as `YYYY-MM-DD HH:MM UTC` in a `<time>`. */
export function DateTime({ ms }: { ms: number }) {
  const iso = new Date(ms).toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

/** Milliseconds as `1h 2m`, `3m 4s` or `5s`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

/** How long a build ran: running → finish (or now while running); null before it ran. */
export function runTime(build: Build, now: number): string | null {
  if (build.runningDate === null) return null;
  return duration((build.finishDate ?? now) - build.runningDate);
}

/** A build's ref as a person reads it and where it leads: branch, tag or pull request. */
export function refOf(build: Build, projectPath: string): { label: string; href: string | null } {
  const base = `/${projectPath}`;
  if (build.refName.startsWith('refs/heads/')) {
    const branch = build.refName.slice('refs/heads/'.length);
    return { label: branch, href: `${base}/~files/${encodeURIComponent(branch)}` };
  }
  if (build.refName.startsWith('refs/tags/')) {
    const tag = build.refName.slice('refs/tags/'.length);
    return { label: `tag ${tag}`, href: `${base}/~files/${encodeURIComponent(tag)}` };
  }
  const pull = /^refs\/pulls\/(\d+)\//.exec(build.refName);
  if (pull) return { label: `pull request #${pull[1]}`, href: `${base}/~pulls/${pull[1]}` };
  return { label: build.refName, href: null };
}

/** The builds of a list page as a table; `paths` adds a project column (lists across projects). */
export function BuildTable({
  builds,
  projectPath,
  paths,
  now,
}: {
  builds: Build[];
  /** The project of a project's list. */
  projectPath?: string;
  /** Project paths by id, for a list across projects. */
  paths?: Map<number, string>;
  now: number;
}) {
  return (
    <div class="table-scroll">
      <table class="builds">
        <thead>
          <tr>
            <th scope="col">Build</th>
            {paths && <th scope="col">Project</th>}
            <th scope="col">Job</th>
            <th scope="col">Status</th>
            <th scope="col">Ref</th>
            <th scope="col">Commit</th>
            <th scope="col">Submitted</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {builds.map((build) => {
            const path = projectPath ?? paths?.get(build.projectId) ?? '';
            const ref = refOf(build, path);
            return (
              <tr key={build.id}>
                <td>
                  <a href={`/${path}/~builds/${build.number}`}>{`#${build.number}`}</a>
                </td>
                {paths && (
                  <td>
                    <a href={`/${path}`}>{path}</a>
                  </td>
                )}
                <td>
                  {build.jobName}
                  {build.version && <span class="meta">{` ${build.version}`}</span>}
                </td>
                <td>
                  <StatusBadge status={build.status} />
                </td>
                <td>{ref.href ? <a href={ref.href}>{ref.label}</a> : ref.label}</td>
                <td>
                  <a class="hash" href={`/${path}/~commits/${build.commitHash}`}>
                    {build.commitHash.slice(0, 8)}
                  </a>
                </td>
                <td>
                  <DateTime ms={build.submitDate} />
                </td>
                <td>{runTime(build, now) ?? '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
