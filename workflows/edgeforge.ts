/** EdgeForgeWorkflow: compile, benchmark, cooptimize, thermal (stub: being built for issue 15). */
export async function edgeForgeWorkflow(): Promise<void> {
  return Promise.resolve();
}
