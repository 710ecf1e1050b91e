/** Cloud GPU session workflows (stub: being built for issue 15). */
export async function cloudSessionWorkflow(): Promise<void> {
  return Promise.resolve();
}
