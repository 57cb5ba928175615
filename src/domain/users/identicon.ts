/**
 * The generated avatar of a user without an uploaded one: a 5×5 identicon, mirrored left to right
 * like GitHub's, its cells and colour taken from the SHA-256 of the user's id — the same picture
 * for the same user whatever their name becomes, a different one for almost every other user.
 */
import { createHash } from 'node:crypto';

/** Cells per side of the identicon. */
const CELLS = 5;

/**
 * The identicon of user `userId` as an SVG document (a few hundred bytes, no script, no external
 * reference): a light background and the filled cells as one path, in a colour of the hash.
 */
export function identiconSvg(userId: number): string {
  const hash = createHash('sha256').update(`gitloom-identicon:${userId}`).digest();
  const hue = ((hash[15] << 8) | hash[16]) % 360;
  const half = Math.ceil(CELLS / 2);
  const cells: string[] = [];
  for (let row = 0; row < CELLS; row++) {
    for (let column = 0; column < half; column++) {
      if ((hash[row * half + column] & 1) === 0) continue;
      for (const x of new Set([column, CELLS - 1 - column])) cells.push(`M${x} ${row}h1v1h-1z`);
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="-0.5 -0.5 ${CELLS + 1} ${CELLS + 1}" width="256" height="256" shape-rendering="crispEdges">` +
    `<rect x="-0.5" y="-0.5" width="${CELLS + 1}" height="${CELLS + 1}" fill="#f0f0f0"/>` +
    `<path fill="hsl(${hue}, 55%, 45%)" d="${cells.join('')}"/></svg>`
  );
}
