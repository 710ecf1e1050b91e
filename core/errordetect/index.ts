export * from './detect';
export * from './inject';
export * from './match';
export * from './synthetic';
