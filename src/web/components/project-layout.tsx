/**
 * The frame of every page under `/<project>`: the project's path as breadcrumbs, and the
 * project's tabs (code, commits, branches, tags, pull requests, builds, issues, settings for
 * managers) with the current one marked. Wraps `<Layout>`.
 */
import type { ComponentChildren } from 'preact';
import type { ProjectPageContext } from '../page.js';
import { Layout } from './layout.js';

/** The tabs of a project; `tab` of {@link ProjectLayout} names one of them. */
export type ProjectTab = 'code' | 'commits' | 'branches' | 'tags' | 'pulls' | 'builds' | 'issues' | 'settings';

const TABS: { tab: ProjectTab; label: string; path: string; shown(page: ProjectPageContext): boolean }[] = [
  { tab: 'code', label: 'Code', path: '', shown: (p) => p.permissions.readCode },
  { tab: 'commits', label: 'Commits', path: '/~commits', shown: (p) => p.permissions.readCode },
  { tab: 'branches', label: 'Branches', path: '/~branches', shown: (p) => p.permissions.readCode },
  { tab: 'tags', label: 'Tags', path: '/~tags', shown: (p) => p.permissions.readCode },
  { tab: 'pulls', label: 'Pull requests', path: '/~pulls', shown: (p) => p.permissions.readCode },
  { tab: 'builds', label: 'Builds', path: '/~builds', shown: () => true },
  { tab: 'issues', label: 'Issues', path: '/~issues', shown: (p) => p.project.issueManagement === 1 },
  { tab: 'settings', label: 'Settings', path: '/~settings', shown: (p) => p.permissions.manage },
];

export interface ProjectLayoutProps {
  page: ProjectPageContext;
  /** The page title before the project path: `Files` gives `Files · group/app · Gitloom`; omit for the project home. */
  title?: string;
  tab: ProjectTab;
  scripts?: string[];
  styles?: string[];
  children: ComponentChildren;
}

/** A page of a project: breadcrumbs to the project (and its ancestors), the tabs, the content. */
export function ProjectLayout({ page, title, tab, scripts, styles, children }: ProjectLayoutProps) {
  const segments = page.project.path.split('/');
  const base = `/${page.project.path}`;
  return (
    <Layout page={page} title={title ? `${title} · ${page.project.path}` : page.project.path} scripts={scripts} styles={styles}>
      <nav aria-label="Project" class="project-nav">
        <p class="crumbs">
          {segments.map((name, i) => (
            <span key={i}>
              {i > 0 && ' / '}
              <a href={`/${segments.slice(0, i + 1).join('/')}`}>{name}</a>
            </span>
          ))}
        </p>
        <ul class="tabs">
          {TABS.filter((t) => t.shown(page)).map((t) => (
            <li key={t.tab}>
              <a href={`${base}${t.path}`} aria-current={t.tab === tab ? 'page' : undefined}>
                {t.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {children}
    </Layout>
  );
}
