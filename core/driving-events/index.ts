export * from './taxonomy';
export * from './rules';
