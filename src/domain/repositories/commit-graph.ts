/**
 * The lanes of a commit graph for a list of commits (the commits page): each commit on a lane
 * (a column), lines to the lanes of its parents, computed from the parents alone as `git log
 * --graph` does in spirit — a commit takes the lane that waits for it (else the first free one),
 * its first parent inherits the lane, further parents (a merge) take the lane already waiting
 * for them or a free one, and lanes that waited for the same commit (branches forking from it)
 * end in it. Lanes keep their column while they run, so every line is straight or one diagonal.
 */

/** A line of one row, between a lane at the top, middle (the commit) or bottom of the row. */
export interface GraphLine {
  /** Lane (0-based column) where the line starts, and at which height: 0 top, 1 middle. */
  fromLane: number;
  fromY: 0 | 1;
  /** Lane where it ends, and at which height: 1 middle, 2 bottom. */
  toLane: number;
  toY: 1 | 2;
}

/** The graph of one commit's row. */
export interface GraphRow {
  /** The commit's lane. */
  lane: number;
  /** Lanes the row spans (its widest line + 1). */
  width: number;
  lines: GraphLine[];
}

/**
 * The graph rows of commits listed newest first (as `git log` lists them).
 *
 * @param commits hashes with their parents, first parent first.
 * @returns one row per commit, in order; parents outside the list leave their lane open at the bottom.
 */
export function commitGraph(commits: readonly { hash: string; parents: readonly string[] }[]): GraphRow[] {
  const lanes: (string | null)[] = [];
  const rows: GraphRow[] = [];
  const free = () => {
    const at = lanes.indexOf(null);
    return at < 0 ? lanes.push(null) - 1 : at;
  };
  for (const commit of commits) {
    const before = [...lanes];
    let lane = lanes.indexOf(commit.hash);
    if (lane < 0) lane = free();
    const lines: GraphLine[] = [];
    before.forEach((waiting, i) => {
      if (waiting === null) return;
      if (waiting === commit.hash) {
        lines.push({ fromLane: i, fromY: 0, toLane: lane, toY: 1 });
        lanes[i] = null;
      } else lines.push({ fromLane: i, fromY: 0, toLane: i, toY: 2 });
    });
    lanes[lane] = commit.parents[0] ?? null;
    if (lanes[lane] !== null) lines.push({ fromLane: lane, fromY: 1, toLane: lane, toY: 2 });
    for (const parent of commit.parents.slice(1)) {
      let to = lanes.indexOf(parent);
      if (to < 0) {
        to = free();
        lanes[to] = parent;
      }
      lines.push({ fromLane: lane, fromY: 1, toLane: to, toY: 2 });
    }
    while (lanes.length > 0 && lanes[lanes.length - 1] === null) lanes.pop();
    const width = Math.max(lane, ...lines.map((l) => Math.max(l.fromLane, l.toLane))) + 1;
    rows.push({ lane, width, lines });
  }
  return rows;
}
