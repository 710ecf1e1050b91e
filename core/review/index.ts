export * from './actions';
export * from './ranking';
