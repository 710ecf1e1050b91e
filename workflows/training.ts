/** TrainingWorkflow (`training-<job_id>`) (stub: being built for issue 15). */
export async function trainingWorkflow(): Promise<void> {
  return Promise.resolve();
}
