/**
 * The page frame: `<html>` with a real `<title>`, the header (Gitloom, Projects, Pull requests,
 * Builds, Issues, the search box, the inbox link with its unread count, user menu or sign-in
 * link), a skip link and `<main>` holding the page.
 */
import type { ComponentChildren } from 'preact';
import { assetUrl } from '../assets.js';
import type { PageContext } from '../page.js';
import { Avatar } from './avatar.js';
import { PostForm } from './forms.js';

export interface LayoutProps {
  page: PageContext;
  /** The page's own title; the document title is `<title> · Gitloom`. */
  title: string;
  /** Client modules of src/web/assets to load (`copy.js`, …), as `<script type="module">`. */
  scripts?: string[];
  /** More stylesheets of src/web/assets (`settings.css`, `admin.css`), linked after site.css. */
  styles?: string[];
  children: ComponentChildren;
}

/** The navigation entries of the header, with the path prefix marking the current section. */
const NAV = [
  { href: '/~projects', label: 'Projects' },
  { href: '/~pulls', label: 'Pull requests' },
  { href: '/~builds', label: 'Builds' },
  { href: '/~issues', label: 'Issues' },
];

/** The header's link to the inbox with the unread count (docs/compatibility.md#notification-inbox). */
function InboxLink({ unread }: { unread: number }) {
  return (
    <a class="inbox-link" href="/~inbox">
      Inbox
      {unread > 0 && (
        <>
          {' '}
          <span class="inbox-count">{unread > 99 ? '99+' : String(unread)}</span>
          <span class="visually-hidden"> unread</span>
        </>
      )}
    </a>
  );
}

/** A full page: use as the root element a page handler returns. */
export function Layout({ page, title, scripts = [], styles = [], children }: LayoutProps) {
  const here = page.request.url.split('?')[0];
  const signInHref = `/~login?${new URLSearchParams({ redirect: page.request.url })}`;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>{`${title} · Gitloom`}</title>
        <link rel="stylesheet" href={assetUrl('site.css')} />
        {styles.map((name) => (
          <link rel="stylesheet" href={assetUrl(name)} key={name} />
        ))}
        {['search.js', ...scripts].map((name) => (
          <script type="module" src={assetUrl(name)} key={name} />
        ))}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <nav aria-label="Main">
            <a class="brand" href="/">
              Gitloom
            </a>
            <ul>
              {NAV.map((item) => (
                <li key={item.href}>
                  <a href={item.href} aria-current={here.startsWith(item.href) ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <form class="header-search" method="get" action="/~search" role="search">
            <input type="search" name="q" aria-label="Search (press /)" placeholder="Search (/)" maxLength={200} />
          </form>
          <div class="user">
            {page.user?.unreadNotifications !== undefined && <InboxLink unread={page.user.unreadNotifications} />}
            {page.user ? (
              <details class="menu">
                <summary>
                  <Avatar userId={page.user.id} version={page.user.avatarVersion} /> {page.user.name}
                </summary>
                <ul>
                  <li>
                    <a href={`/~users/${page.user.id}`}>My profile</a>
                  </li>
                  <li>
                    <a href="/~my">My settings</a>
                  </li>
                  {page.user.isAdmin && (
                    <li>
                      <a href="/~administration">Administration</a>
                    </li>
                  )}
                  <li>
                    <PostForm page={page} action="/~logout">
                      <button type="submit" class="link">
                        Sign out
                      </button>
                    </PostForm>
                  </li>
                </ul>
              </details>
            ) : (
              here !== '/~login' && <a href={signInHref}>Sign in</a>
            )}
          </div>
        </header>
        <main id="main">{children}</main>
      </body>
    </html>
  );
}
