export * from './checks';
export * from './gate';
