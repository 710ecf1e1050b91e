export * from './classes';
export * from './rules';
