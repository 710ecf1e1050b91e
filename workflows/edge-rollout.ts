/** RolloutWorkflow (`rollout-<id>`) (stub: being built for issue 15). */
export async function rolloutWorkflow(): Promise<void> {
  return Promise.resolve();
}
