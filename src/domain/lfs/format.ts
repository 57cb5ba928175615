/** `1 Git LFS file`, `2 Git LFS files`: a count with the word it counts. */
export function formatCount(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
