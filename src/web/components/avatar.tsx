/**
 * A user's avatar as a small image (docs/compatibility.md#gitloom-differs-web-ui "Avatars"): the
 * versioned URL `/~avatars/<id>?v=<version>` (cached for good by the browser: a new upload is a
 * new version), decorative (`alt=""`: the name beside it says who), its size set so nothing
 * moves when it loads, and loaded lazily.
 */
import type { VNode } from 'preact';

/** The URL of version `version` of user `userId`'s avatar. */
export function avatarUrl(userId: number, version: number): string {
  return `/~avatars/${userId}?v=${version}`;
}

/** The avatar image of user `userId` at `size` CSS pixels (square). */
export function Avatar({ userId, version, size = 20 }: { userId: number; version: number; size?: number }) {
  return <img class="avatar" src={avatarUrl(userId, version)} alt="" width={size} height={size} loading="lazy" decoding="async" />;
}

/**
 * The avatars of one page's users, from their versions (`avatarVersions` of the users area, one
 * query): `avatarOf(id)` is the user's avatar followed by a space, or nothing for no user (null)
 * or one without a version (deleted).
 */
export function avatarsOf(versions: Map<number, number>, size = 20): (userId: number | null) => VNode | null {
  return (userId) => {
    const version = userId === null ? undefined : versions.get(userId);
    if (userId === null || version === undefined) return null;
    return (
      <>
        <Avatar userId={userId} version={version} size={size} />{' '}
      </>
    );
  };
}
