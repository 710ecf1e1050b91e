/** PromotionWorkflow: the champion/challenger gate (stub: being built for issue 15). */
export async function promotionWorkflow(): Promise<void> {
  return Promise.resolve();
}
