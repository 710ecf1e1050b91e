/** TrainingSweepWorkflow: a hyperparameter grid as child training workflows (stub: being built for issue 15). */
export async function trainingSweepWorkflow(): Promise<void> {
  return Promise.resolve();
}
