/**
 * Frames in the PII pass at once. Its models run on threads of their own (activities/pii/detector),
 * so frames overlap one another's decoding, packing and redacted copy; on two cores three in flight
 * keep both busier than two (docs/pii.md "Cost").
 */
export const PII_IN_FLIGHT = 3;

/**
 * Runs `fn` over `items`, at most `limit` at once, starting them in order. After the first
 * failure no further item starts; those running finish, then the failure is thrown, so nothing
 * keeps writing once the caller has failed (a retry or the ingest's clean-up may follow at once).
 */
export async function runInFlight<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
}
