export * from './targets';
export * from './latency';
export * from './audit';
export * from './budgets';
export * from './pareto';
export * from './prune';
