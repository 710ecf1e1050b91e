/**
 * One page of a corpus walk that goes frame by frame in id order (a relabel, a recall run): how
 * many frames the page may take under the run's limit, the page, its work, and whether the walk
 * goes on after it. The caller continues as new from the returned cursor, so a walk's history
 * stays bounded whatever its size.
 */
export async function walkFramePage<T>(
  input: { after: string | null; limit: number | null; pageFrames: number; tally: T },
  steps: {
    /** Frames walked so far, for the limit. */
    walked(tally: T): number;
    next(after: string | null, take: number): Promise<string[]>;
    run(frameIds: string[]): Promise<T>;
    add(a: T, b: T): T;
  },
): Promise<{ next: string | null; tally: T }> {
  const room =
    input.limit === null
      ? input.pageFrames
      : Math.min(input.pageFrames, input.limit - steps.walked(input.tally));
  const page = room > 0 ? await steps.next(input.after, room) : [];
  const tally = page.length > 0 ? steps.add(input.tally, await steps.run(page)) : input.tally;
  return { next: page.length === room && room > 0 ? page.at(-1)! : null, tally };
}
